"""The randomized fuzz sweep: every property-based test, with N times its CI case count, drawn at random.

Run (before a release; outside CI, CPU-heavy): ``python benchmarks/fuzz_sweep.py [--factor 20] [--seed S]``

CI runs each hypothesis test derandomized (``tests/fuzz_profile.py``): the same cases on every machine, so a red
run means a change. This sweep looks further: ``GRPO_RLVR_FUZZ_SWEEP=N`` multiplies every test's case count by N
and draws the cases from ``--seed`` (random unless given, and printed). Printed: one row per test (cases run,
result) and the total. A failure prints hypothesis's falsifying example; keep it as an ``@example`` on the test
once fixed, so CI runs it from then on. Replay a sweep with the same ``--seed`` and ``--factor``.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"


def property_test_files() -> list[Path]:
    """Test files with at least one ``@given`` test."""
    return sorted(p for p in TESTS.rglob("test_*.py") if _given_tests(p))


def _given_tests(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", None) == "given" for d in node.decorator_list):
            out.append(node.name)
    return out


# hypothesis's --hypothesis-show-statistics, per test:
#   tests/test_x.py::test_y:
#     - during generate phase (1.23 seconds):
#       - Typical runtimes: …
#       - 300 passing, 0 failing, and 43 invalid test cases
_TEST = re.compile(r"^(tests/\S+::\S+):$")
_COUNTS = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid test cases")


def parse_statistics(text: str) -> dict[str, dict[str, int]]:
    """test id → cases passed / failed / invalid, summed over hypothesis's phases."""
    stats: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = _TEST.match(line.strip())
        if m:
            current = m.group(1)
            stats.setdefault(current, {"passing": 0, "failing": 0, "invalid": 0})
            continue
        m = _COUNTS.search(line)
        if m and current:
            for key, value in zip(("passing", "failing", "invalid"), m.groups(), strict=True):
                stats[current][key] += int(value)
    return stats


def outcomes(junit: Path) -> dict[str, str]:
    """test id → passed / failed / error / skipped, from pytest's JUnit XML."""
    import xml.etree.ElementTree as ET

    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
        out[f"{path}::{case.get('name')}"] = state
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factor", type=int, default=20, help="cases per test, as a multiple of its CI count")
    ap.add_argument("--seed", type=int, default=None, help="hypothesis seed (random and printed by default)")
    ap.add_argument("-k", default=None, help="only the tests pytest -k selects among them")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    files = property_test_files()
    given = sorted(f"{p.relative_to(REPO)}::{name}" for p in files for name in _given_tests(p))
    junit = Path(os.environ.get("TMPDIR", "/tmp")) / f"fuzz-sweep-{os.getpid()}.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
           f"--hypothesis-seed={seed}", f"--junitxml={junit}", "-o", "addopts=",
           *(["-k", args.k] if args.k else []), *given]
    env = {**os.environ, "GRPO_RLVR_FUZZ_SWEEP": str(args.factor), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false"}
    print(f"fuzz sweep: factor {args.factor}, seed {seed}, {len(given)} property tests in {len(files)} files",
          flush=True)
    t0 = time.monotonic()
    run = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    stats = parse_statistics(run.stdout)
    states = outcomes(junit) if junit.is_file() else {}
    junit.unlink(missing_ok=True)
    total = 0
    print(f"\n{'test':<100} {'cases':>7}  result")
    for test in given:
        counts = next((v for k, v in stats.items() if k == test or k.startswith(test + "[")), None)
        cases = counts["passing"] + counts["failing"] if counts else 0
        total += cases
        state = next((v for k, v in states.items() if k == test or k.startswith(test + "[")), "not run")
        print(f"{test:<100} {cases:>7}  {state}")
    failed = [t for t, s in states.items() if s in ("failed", "error") and t.split("[")[0] in given]
    print(f"\n{total:,} cases in {len(given)} property tests, {wall:.0f} s; seed {seed}, factor {args.factor}: "
          + (f"{len(failed)} FAILED" if failed else "all passed"))
    if run.returncode != 0:
        print(run.stdout[-6000:], run.stderr[-3000:], sep="\n")
    return 0 if run.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
