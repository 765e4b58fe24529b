"""docs/design.md names what is there: every module file, module, function, class member and brief field it names in
a code span exists, so a move or a rename that leaves the map behind fails here. Read from the source (no module is
imported), the brief's schema and the standard library.

What counts as a name: a span ending in ``.py`` (a file: ``rollout/road.py``, ``judging/extract.py``, ``train.py``,
the rendered file from its template), a dotted name (``rollout.road.roll_out``, ``Reward.check_row``,
``tools.concurrency``, ``math.gcd``) and a bare call (``run_code()``). Other file names (``config.json``) and code
examples with arguments are not names.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import sys
from functools import cache
from pathlib import Path

import pytest

from paths import REPO

DESIGN = REPO / "docs" / "design.md"
PKG = REPO / "src" / "grpo_rlvr"
TESTS = REPO / "tests"
SOURCE_DIRS = ("src", "tests", "hooks", "scripts", "benchmarks", "examples", "bin")
NOT_NAMES = ("json", "jsonl", "yaml", "md", "sh", "html", "txt", "toml", "j2", "lock", "cfg")   # file kinds


@cache
def files() -> tuple[tuple[str, ...], ...]:
    """Every source file's path parts, a template ``train.py.j2`` also as the ``train.py`` it renders."""
    out = []
    for d in SOURCE_DIRS:
        for p in (REPO / d).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                parts = p.relative_to(REPO).parts
                out.append(parts)
                if p.suffix == ".j2":
                    out.append((*parts[:-1], p.stem))
    return tuple(out)


def file_exists(path: str) -> bool:
    """``RUN/`` is a rendered run folder: ``RUN/train.py`` is the file rendered from ``train.py.j2``."""
    parts = Path(path.removeprefix("RUN/")).parts
    return any(f[-len(parts):] == parts for f in files())


@cache
def modules() -> dict[str, Path]:
    """grpo_rlvr's modules by dotted path below the package (``rollout.road``; a package by its folder), and the
    tests' helper modules beside conftest.py by their name (``tiny_runs``)."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(PKG).with_suffix("").parts
        out[".".join(parts[:-1] if p.name == "__init__.py" else parts) or "grpo_rlvr"] = p
    out.update({p.stem: p for p in sorted(TESTS.glob("*.py")) if not p.name.startswith("test_")})
    return out


def modules_named(name: str) -> list[Path]:
    """The modules ``name`` may mean: the module of that dotted path, every module of a room (``gate``: whatever
    ``gate/`` defines), or a module by its own name (``user_imports``)."""
    mods = modules()
    return [p for key, p in mods.items() if key == name or key.startswith(name + ".") or key.split(".")[-1] == name]


@cache
def definitions(path: Path) -> dict[str, set[str] | None]:
    """A module's top-level names: each class with its members (its body's names and ``self.x``), else None."""
    out: dict[str, set[str] | None] = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = None
        elif isinstance(node, ast.ClassDef):
            members = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            members |= {t.id for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
            members |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
                        and isinstance(n.value, ast.Name) and n.value.id == "self"}
            out[node.name] = members
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    out[t.id] = None
    return out


def defined_in(paths: list[Path], rest: list[str]) -> bool:
    """``rest`` (a name, or a class and its member) is defined at the top of one of ``paths``."""
    for p in paths:
        defs = definitions(p)
        if rest[0] in defs and (len(rest) == 1 or (len(rest) == 2 and rest[1] in (defs[rest[0]] or ()))):
            return True
    return False


@cache
def brief_schema() -> dict:
    return json.loads((PKG / "brief" / "schema.json").read_text())


def brief_field(parts: list[str]) -> bool:
    """``tools.concurrency``: a section of the brief and a field in it, as the schema has them."""
    node = brief_schema()
    for part in parts:
        node = node.get("items", node)
        if part not in node.get("properties", {}):
            return False
        node = node["properties"][part]
    return True


def stdlib_name(parts: list[str]) -> bool:
    if parts[0] not in sys.stdlib_module_names:
        return False
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def resolves(name: str) -> bool:
    """A dotted name (or a bare function) names a module, something a module defines, a class member, a brief
    field or a standard library name."""
    parts = name.removesuffix("()").removeprefix("grpo_rlvr.").split(".")
    for i in range(len(parts), 0, -1):   # the longest prefix that names modules, the rest defined in one of them
        paths = modules_named(".".join(parts[:i]))
        if paths and (i == len(parts) or defined_in(paths, parts[i:])):
            return True
    everywhere = list(modules().values())
    return defined_in(everywhere, parts) or brief_field(parts) or stdlib_name(parts)


SPANS = re.findall(r"`([^`\n]+)`", DESIGN.read_text())
PY_FILES = sorted({s for s in SPANS if re.fullmatch(r"[\w./-]+\.py", s)})
NAMES = sorted({s for s in SPANS if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(\(\))?|[A-Za-z_]\w*\(\)", s)
                and s.rsplit(".", 1)[-1] not in NOT_NAMES and not s.endswith(".py")})


def test_the_design_names_files_and_names():
    """The spans below are read at all (the patterns match the document as it is written)."""
    assert {"rollout/road.py", "run/guard.py", "judging/extract.py", "train.py"} <= set(PY_FILES), PY_FILES
    assert {"rollout.road.roll_out", "Reward.check_row", "tools.concurrency", "run_code()"} <= set(NAMES), NAMES


@pytest.mark.parametrize("path", PY_FILES)
def test_every_file_the_design_names_exists(path):
    assert file_exists(path), f"docs/design.md names {path}, which is no file of the project (moved? renamed?)"


@pytest.mark.parametrize("name", NAMES)
def test_every_module_and_function_the_design_names_exists(name):
    assert resolves(name), f"docs/design.md names `{name}`, which nothing defines (moved? renamed?)"


def test_a_moved_name_is_seen():
    """So the two tests above can fail: names that were right once and are not now, beside where they went."""
    assert not resolves("dataset_io.with_row_names") and resolves("dataset.rows.with_row_names")
    assert not resolves("rollout.trajectory.final_text") and resolves("messages.final_text")
    assert not resolves("Reward.no_such_member") and not resolves("tools.no_such_field")
    assert not resolves("math.no_such_function") and not resolves("no_such_function()")
    assert not file_exists("runtime/run_guard.py") and file_exists("run/guard.py")
