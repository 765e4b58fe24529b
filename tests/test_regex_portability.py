"""No regular expression of the package uses a construct that Python 3.11 before 3.11.5 mis-matches: possessive
repeats (``*+``, ``++``, ``?+``, ``{m,n}+``) and atomic groups (``(?>…)``), both new in 3.11. On 3.11.2 (Debian
12's Python) ``(?:[\\s,]|\\\\[,;])*+`` followed by an optional word failed to match ``\\text{ or }``, so the
``math`` reward read a hedge between two boxed answers as its last box and paid it; the same commit scored it 0 on
3.11.7. ``pyproject.toml`` claims every 3.11, so the package avoids both constructs (a plain repeat with a
lookahead says the same: ``[a-z]*(?![a-z])``).

Checked two ways: every compiled pattern that a module of grpo_rlvr (and the plugin's hook) holds after import,
parsed by ``re``'s own parser; and every string literal handed straight to a ``re`` function in the source."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import sys

import pytest

import grpo_rlvr
from paths import REPO

try:
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:   # pragma: no cover - Python < 3.11 is not supported
    import sre_constants
    import sre_parse

UNPORTABLE = {sre_constants.OPCODES[i] for i, name in enumerate(map(str, sre_constants.OPCODES))
              if name in ("POSSESSIVE_REPEAT", "ATOMIC_GROUP")}
_RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def unportable(pattern: str | bytes, flags: int = 0) -> list[str]:
    """The constructs of ``pattern`` that 3.11.0–3.11.4 mis-match (empty when none)."""
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, sre_parse.SubPattern):
            for op, av in node.data:
                if op in UNPORTABLE:
                    found.append(str(op))
                walk(av)
        elif isinstance(node, (list, tuple)):
            for x in node:
                walk(x)

    walk(sre_parse.parse(pattern, flags))
    return found


def test_the_check_finds_each_construct():
    assert unportable(r"(?:[\s$,]|\\[,;])*+x") == ["POSSESSIVE_REPEAT"]
    assert unportable(r"a(?:b|(?>c|d)e)") == ["ATOMIC_GROUP"]
    assert unportable(r"[a-z]{2,5}+") == ["POSSESSIVE_REPEAT"]
    assert unportable(r"[A-Za-z][A-Za-z.]*(?![A-Za-z.])|c\+\+|\w+?") == []


def _modules():
    """Every module of grpo_rlvr that imports here (a torch-free lane skips those that need torch)."""
    out = []
    for info in pkgutil.walk_packages(grpo_rlvr.__path__, "grpo_rlvr."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        try:
            out.append(importlib.import_module(info.name))
        except ImportError as e:
            if (e.name or "").startswith("grpo_rlvr"):
                raise
    return out


def _patterns(value, depth: int = 0):
    if isinstance(value, re.Pattern):
        yield value
    elif depth < 3 and isinstance(value, (dict, list, tuple, set, frozenset)):
        for v in (value.values() if isinstance(value, dict) else value):
            yield from _patterns(v, depth + 1)
    elif depth < 1 and isinstance(value, type):
        for v in vars(value).values():
            yield from _patterns(v, depth + 1)


def test_no_compiled_pattern_of_the_package_uses_one():
    sys.path.insert(0, str(REPO / "hooks"))
    try:
        modules = _modules() + [importlib.import_module(m.name) for m in
                                pkgutil.walk_packages([str(REPO / "hooks" / "grpo_guard")], "grpo_guard.")]
    finally:
        sys.path.remove(str(REPO / "hooks"))
    seen, bad = set(), []
    for mod in modules:
        for name, value in vars(mod).items():
            if getattr(value, "__module__", mod.__name__) != mod.__name__ and isinstance(value, type):
                continue   # a class imported from elsewhere is checked where it is defined
            for p in _patterns(value):
                seen.add(id(p))
                if found := unportable(p.pattern, p.flags):
                    bad.append(f"{mod.__name__}.{name}: {p.pattern!r} uses {found}")
    from grpo_rlvr.rewards import _answer, _math_text

    assert {id(_answer._BETWEEN_BOXES), id(_math_text._UNITS)} <= seen   # the two that broke are among those read
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("root", ["src/grpo_rlvr", "hooks"])
def test_no_literal_pattern_in_the_source_uses_one(root):
    bad = []
    for path in sorted((REPO / root).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _RE_CALLS and node.args):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, bytes)):
                if found := unportable(arg.value):
                    bad.append(f"{path.relative_to(REPO)}:{node.lineno}: {arg.value!r} uses {found}")
    assert not bad, "\n".join(bad)
