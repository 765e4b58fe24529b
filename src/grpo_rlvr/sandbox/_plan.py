"""Turning a ``tests`` value into a plan: what the untrusted process evaluates, and what the parent checks.

For ``assert CALL == EXPECTED`` (also ``!=``, ``is``/``is not`` a singleton, ``math.isclose(CALL, EXPECTED)``,
``assert CALL``, ``assert not CALL``) only ``CALL`` is sent to the sandbox; ``EXPECTED`` stays in this
process and is compared here, so the program never sees it. Covered forms of EXPECTED: Python literals and
``set/frozenset/tuple/list/float`` of a literal. Any other assert (``assert f(x) > 3``, both sides computed)
falls back to evaluating the whole condition inside the sandbox and requiring a truthy plain-data result:
weaker, because the program can inspect the expression it is evaluated in. A string of arbitrary test code
is weaker still: it runs in the sandbox and "no exception" is the verdict, which a hostile program can forge
(unless the string holds nothing but asserts, which are then planned as a list).
Covered: the shapes above, with a ValueError naming the problem otherwise. Not covered: HumanEval-style
``check(candidate)`` functions as strong tests (give their asserts as a list instead).
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass

from ._plaindata import short_repr, strict_equal

MODES = ("eval", "stdio", "exec")
_CONVERTERS = {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "float": float}
_SINGLETONS = (None, True, False)


@dataclass(frozen=True)
class Check:
    """How the parent judges one probe's result. ``kind``: eq, ne, isclose, truthy, falsy, weak, ran."""

    kind: str
    expected: object = None
    rel_tol: float = 1e-9
    abs_tol: float = 0.0
    label: str = ""  # what was evaluated, for reasons: "add(2, 2)"


@dataclass(frozen=True)
class Plan:
    """What to run. ``probes`` go to the sandbox (kind, source); ``checks`` stay here, one per test."""

    mode: str
    probes: tuple[tuple[str, str], ...] = ()
    checks: tuple[Check, ...] = ()
    cases: tuple[tuple[str, str], ...] = ()  # stdio mode: (stdin, expected stdout)

    @property
    def total(self) -> int:
        return len(self.cases) if self.mode == "stdio" else len(self.checks)


def make_plan(tests) -> Plan:
    """Plan ``tests`` (a list of asserts, a list of stdin/stdout cases, JSON of either, or test code).

    Raises:
        ValueError: ``tests`` has a shape this function does not accept; the message says which shapes work.
    """
    if isinstance(tests, str):
        try:
            decoded = json.loads(tests)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            return make_plan(decoded)
        return _plan_code(tests)
    if isinstance(tests, (list, tuple)):
        if not tests:
            raise ValueError("tests is an empty list; give at least one assert string or stdin/stdout case")
        if all(isinstance(t, str) for t in tests):
            return _plan_asserts(list(tests))
        if all(isinstance(t, dict) for t in tests):
            return _plan_stdio(list(tests))
    raise ValueError(
        "tests must be a list of assert strings, a list of {'input': str, 'output': str} cases, "
        f"a JSON string of either, or a string of Python test code; got {_describe(tests)}"
    )


def _describe(tests) -> str:
    if isinstance(tests, (list, tuple)):
        kinds = sorted({type(t).__name__ for t in tests})
        return f"a {type(tests).__name__} of {'/'.join(kinds)}"
    return f"a {type(tests).__name__}"


def _plan_stdio(cases: list[dict]) -> Plan:
    out = []
    for i, case in enumerate(cases):
        stdin, expected = case.get("input"), case.get("output")
        if not isinstance(stdin, str) or not isinstance(expected, str):
            raise ValueError(f"tests[{i}] must have string 'input' and 'output', got keys {sorted(case)}")
        out.append((stdin, expected))
    return Plan(mode="stdio", cases=tuple(out))


def _plan_code(code: str) -> Plan:
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"tests is a string but not valid Python test code: {e.msg} (line {e.lineno})") from e
    if tree.body and all(isinstance(node, ast.Assert) for node in tree.body):
        return _plan_asserts([ast.unparse(node) for node in tree.body])
    check = Check("ran", label="the test code")
    return Plan(mode="exec", probes=(("exec", code),), checks=(check,))


def _plan_asserts(asserts: list[str]) -> Plan:
    probes, checks = [], []
    for i, text in enumerate(asserts):
        try:
            tree = ast.parse(text.strip())
        except SyntaxError as e:
            raise ValueError(f"tests[{i}] is not valid Python: {e.msg}: {text[:80]!r}") from e
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Assert):
            expr, check = _split_assert(tree.body[0].test)
            probes.append(("eval", ast.unparse(expr)))
            checks.append(check)
        else:  # a setup line or a multi-statement test: run it, "no exception" passes (weak)
            probes.append(("exec", text))
            checks.append(Check("ran", label=text.strip()[:60]))
    return Plan(mode="eval", probes=tuple(probes), checks=tuple(checks))


def _split_assert(test: ast.expr) -> tuple[ast.expr, Check]:
    """(expression for the sandbox, check kept here) for one assert condition."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        found, value = _literal(right)
        if not found:
            found, value = _literal(left)
            left = right
        if found and isinstance(op, (ast.Eq, ast.NotEq)):
            return left, Check("eq" if isinstance(op, ast.Eq) else "ne", value, label=ast.unparse(left))
        if found and isinstance(op, (ast.Is, ast.IsNot)) and any(value is s for s in _SINGLETONS):
            return left, Check("eq" if isinstance(op, ast.Is) else "ne", value, label=ast.unparse(left))
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner, check = _split_assert(test.operand)
        if check.kind in ("truthy", "falsy"):
            flipped = "falsy" if check.kind == "truthy" else "truthy"
            return inner, Check(flipped, label=check.label)
    isclose = _split_isclose(test)
    if isclose is not None:
        return isclose
    # Anything else is evaluated whole in the sandbox. It is weak when the expression holds a comparison:
    # the program could then read what it is compared against.
    kind = "weak" if any(isinstance(n, ast.Compare) for n in ast.walk(test)) else "truthy"
    return test, Check(kind, label=ast.unparse(test))


def _split_isclose(test: ast.expr):
    if not (isinstance(test, ast.Call) and len(test.args) == 2):
        return None
    func = test.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name != "isclose":
        return None
    found, expected = _literal(test.args[1])
    probe = test.args[0]
    if not found:
        found, expected = _literal(test.args[0])
        probe = test.args[1]
    tols = {}
    for kw in test.keywords:
        ok, tol = _literal(kw.value)
        if kw.arg not in ("rel_tol", "abs_tol") or not ok or type(tol) not in (int, float):
            return None
        tols[kw.arg] = float(tol)
    if not found or type(expected) not in (int, float):
        return None
    return probe, Check("isclose", expected, label=ast.unparse(probe), **tols)


def _literal(node: ast.expr) -> tuple[bool, object]:
    """(True, value) when ``node`` is a literal the parent can build without running anything."""
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CONVERTERS
        and len(node.args) <= 1
        and not node.keywords
    ):
        found, arg = _literal(node.args[0]) if node.args else (True, ())
        if found:
            try:
                return True, _CONVERTERS[node.func.id](arg)
            except (TypeError, ValueError):
                return False, None
    return False, None


def judge_value(check: Check, value) -> tuple[bool, str]:
    """(passed, why-not) for a plain-data ``value`` the sandbox returned for a probe."""
    if check.kind == "eq":
        if strict_equal(value, check.expected):
            return True, ""
        got, want = short_repr(value), short_repr(check.expected)
        if got == want or type(value) is not type(check.expected):
            got, want = f"{got} ({type(value).__name__})", f"{want} ({type(check.expected).__name__})"
        return False, f"{check.label} returned {got}, expected {want}"
    if check.kind == "ne":
        if strict_equal(value, check.expected):
            return False, f"{check.label} returned {short_repr(value)}, expected anything else"
        return True, ""
    if check.kind == "isclose":
        if type(value) not in (int, float) or not math.isclose(
            value, check.expected, rel_tol=check.rel_tol, abs_tol=check.abs_tol
        ):
            return False, f"{check.label} returned {short_repr(value)}, expected about {check.expected!r}"
        return True, ""
    if check.kind in ("truthy", "weak"):
        return (True, "") if bool(value) else (False, f"{check.label} is {short_repr(value)}, expected true")
    if check.kind == "falsy":
        return (True, "") if not value else (False, f"{check.label} is {short_repr(value)}, expected false")
    if check.kind == "ran":
        return True, ""
    raise AssertionError(f"unknown check kind {check.kind!r}")
