"""Running a program and its tests in plain Python and plain pytest, outside the sandbox: what a case means there
is what the sandbox must agree with. A case is ``(program, tests)`` with ``tests`` a list of asserts, HumanEval
``check`` code (``entry_point``), or a pytest/unittest module; pytest runs the module with the program pasted above
it, in a subprocess of its own (one for many cases)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def assert_outcomes(program: str, lines: list[str]) -> list[bool]:
    """Each line's outcome in plain Python: the program, then each line in order, in one namespace."""
    ns: dict = {"__name__": "__main__"}
    exec(compile(program, "<program>", "exec"), ns)
    out = []
    for line in lines:
        try:
            exec(compile(line, "<test>", "exec"), ns)
            out.append(True)
        except Exception:  # noqa: BLE001 - any failure fails the assert, as in Python
            out.append(False)
    return out


def check_outcome(program: str, tests: str, entry_point: str) -> bool:
    """Whether HumanEval's ``check(candidate)`` passes in plain Python."""
    ns: dict = {"__name__": "__main__"}
    exec(compile(program, "<program>", "exec"), ns)
    exec(compile(tests, "<tests>", "exec"), ns)
    try:
        ns["check"](ns[entry_point])
    except Exception:  # noqa: BLE001
        return False
    return True


def pytest_outcomes(cases: dict[str, tuple[str, str]], folder: Path) -> dict[str, tuple[int, int]]:
    """Per case, ``(passed, counted)`` as plain pytest runs ``program + tests`` as one module: passed tests, and the
    tests that count (passed or failed: skipped, xfailed and xpassed count for neither, as in a score)."""
    return {name: (sum(tests.values()), len(tests)) for name, tests in pytest_tests(cases, folder).items()}


def pytest_tests(cases: dict[str, tuple[str, str]], folder: Path) -> dict[str, dict[str, bool]]:
    """Per case, each counted test's outcome in plain pytest, by label: ``test_f[ids]``, ``Class.test_m[ids]``."""
    folder.mkdir(parents=True, exist_ok=True)
    names = {}
    for i, (name, (program, tests)) in enumerate(cases.items()):
        module = f"test_case_{i}"
        (folder / f"{module}.py").write_text(program + "\n\n" + tests)
        names[module] = name
    report = folder / "report.xml"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                    "-p", "no:xdist", f"--junitxml={report}", "-o", "junit_family=xunit2", "-o", "addopts=",
                    "--rootdir", str(folder), str(folder)],
                   cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)
    out: dict[str, dict[str, bool]] = {name: {} for name in cases}
    for case in ET.parse(report).getroot().iter("testcase"):
        module, _, cls = case.get("classname", "").partition(".")
        if module not in names:
            continue
        kinds = {child.tag for child in case}
        if "skipped" in kinds:  # skipped and xfailed (an xpassed test would count here: the suites avoid them)
            continue
        label = f"{cls}.{case.get('name')}" if cls else case.get("name")
        out[names[module]][label] = not (kinds & {"failure", "error"})
    return out

