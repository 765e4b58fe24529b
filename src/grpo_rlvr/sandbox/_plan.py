"""Turning a ``tests`` value into a plan: what the untrusted process evaluates, and what the parent checks.

A plan is a sequence of probes (a piece of test code for the sandbox, run in order, each in a scope: the
program's module namespace, or a per-test copy of it standing in for a test function's locals) and, per
probe, a ``Check`` kept in this process. Probes belong to tests: a test passes when every probe of it
passes; a setup probe (an import, an assignment) is counted in no test, but its failure fails every test of
its scope. The shapes of ``tests`` and how they are counted (``_plan_code`` handles test-code strings):

- a list of assert strings (or a JSON string of one): each assert one test; lines without an assert
  (``import math``, ``x = 3``) are setup, run where they stand, not counted;
- stdin/stdout cases ``{"input", "output"}``: each case one test;
- a string of test code: see ``_plan_code`` (plain script, pytest ``test_*``, ``unittest.TestCase``,
  HumanEval ``check(candidate)`` with the row's ``entry_point``).

For ``assert CALL == EXPECTED`` (also ``!=``, ``is``/``is not`` a singleton, ``math.isclose(CALL,
EXPECTED)``, ``assert CALL``, ``assert not CALL``) only ``CALL`` is sent to the sandbox; ``EXPECTED`` stays
here and is compared here, so the program never sees it. Covered forms of EXPECTED: Python literals and
``set/frozenset/tuple/list/float`` of a literal. Other asserts (both sides computed) and test code that is
not an assert (loops, ``with pytest.raises``) run inside the sandbox and are *weak*: the program could read
or subvert them; verdicts say how many tests were weak. Asserts of a constant (``assert True``) are no test.
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass

from ._plaindata import short_repr, strict_equal

GLOBAL = -1  # the scope of module-level probes: the program's own namespace
_CONVERTERS = {"set": set, "frozenset": frozenset, "tuple": tuple, "list": list, "float": float}
_SINGLETONS = (None, True, False)
SETUP_NODES = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.FunctionDef,
               ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)
WEAK_KINDS = ("weak", "ran")


@dataclass(frozen=True)
class Check:
    """How the parent judges one probe. ``kind``: eq, ne, isclose, truthy, falsy (strong: judged here on a
    returned value), weak (a whole condition evaluated in the sandbox), ran (code run in the sandbox: no
    exception passes), setup (not counted; an exception fails the tests of its scope). ``test``: the index
    of the test the probe belongs to (None for setup)."""

    kind: str
    expected: object = None
    rel_tol: float = 1e-9
    abs_tol: float = 0.0
    label: str = ""  # what was evaluated, for reasons: "add(2, 2)"
    test: int | None = None
    scope: int = GLOBAL
    optional: bool = False  # a setup import: when it fails, only the tests that use the name fail


@dataclass(frozen=True)
class Plan:
    """What to run. ``probes`` go to the sandbox (kind, source, scope); ``checks`` stay here, one per probe;
    ``tests`` name the counted tests."""

    mode: str
    probes: tuple[tuple[str, str, int], ...] = ()
    checks: tuple[Check, ...] = ()
    tests: tuple[str, ...] = ()
    cases: tuple[tuple[str, str], ...] = ()  # stdio mode: (stdin, expected stdout)

    @property
    def total(self) -> int:
        return len(self.cases) if self.mode == "stdio" else len(self.tests)


class PlanBuilder:
    """Collects probes and tests in order (used by ``_plan_code`` too)."""

    def __init__(self) -> None:
        self.probes: list[tuple[str, str, int]] = []
        self.checks: list[Check] = []
        self.tests: list[str] = []

    def new_test(self, label: str) -> int:
        self.tests.append(label[:80])
        return len(self.tests) - 1

    def setup(self, source: str, scope: int = GLOBAL, label: str = "") -> None:
        self.probes.append(("exec", source, scope))
        optional = _only_imports(source)
        self.checks.append(Check("setup", label=label or _one_line(source), scope=scope, optional=optional))

    def ran(self, source: str, test: int, scope: int = GLOBAL) -> None:
        self.probes.append(("exec", source, scope))
        self.checks.append(Check("ran", label=_one_line(source), test=test, scope=scope))

    def assertion(self, node: ast.Assert, test: int, scope: int = GLOBAL) -> None:
        expr, check = split_assert(node.test)
        self.probes.append(("eval", ast.unparse(expr), scope))
        self.checks.append(Check(check.kind, check.expected, check.rel_tol, check.abs_tol, check.label, test, scope))

    def statement(self, node: ast.stmt, test: int, scope: int) -> None:
        """One statement of a test's body: an assert is judged, setup is run, anything else runs weakly."""
        if isinstance(node, ast.Assert):
            if not is_constant_assert(node):
                self.assertion(node, test, scope)
        elif isinstance(node, SETUP_NODES) or is_docstring(node):
            self.setup(ast.unparse(node), scope)
        else:
            self.ran(ast.unparse(node), test, scope)

    def build(self, what: str) -> Plan:
        if not self.tests:
            raise ValueError(f"{what} holds no test: no assert that checks the program")
        return Plan(mode="eval", probes=tuple(self.probes), checks=tuple(self.checks), tests=tuple(self.tests))


def make_plan(tests, entry_point: str | None = None) -> Plan:
    """Plan ``tests`` (a list of asserts, a list of stdin/stdout cases, JSON of either, or test code).

    ``entry_point``: the function HumanEval-style ``check(candidate)`` code is run on (the row's column).

    Raises:
        ValueError: ``tests`` has a shape this function does not accept, or defines tests but runs none;
            the message says which shapes work and what to change.
    """
    if isinstance(tests, str):
        try:
            decoded = json.loads(tests)
        except ValueError:
            decoded = None
        if isinstance(decoded, list):
            return make_plan(decoded)
        from ._plan_code import plan_code

        return plan_code(tests, entry_point)
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


def _one_line(source: str) -> str:
    first = source.strip().splitlines()[0] if source.strip() else ""
    return first[:60] + (" ..." if "\n" in source.strip() or len(first) > 60 else "")


def _only_imports(source: str) -> bool:
    """True for ``import pytest`` and the like (a test module may import a framework it does not need here)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body)


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def is_constant_assert(node: ast.Assert) -> bool:
    """``assert True, "..."`` and the like check nothing about the program."""
    return not any(isinstance(n, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) for n in ast.walk(node.test))


def _plan_stdio(cases: list[dict]) -> Plan:
    out = []
    for i, case in enumerate(cases):
        stdin, expected = case.get("input"), case.get("output")
        if not isinstance(stdin, str) or not isinstance(expected, str):
            raise ValueError(f"tests[{i}] must have string 'input' and 'output', got keys {sorted(case)}")
        out.append((stdin, expected))
    return Plan(mode="stdio", cases=tuple(out))


def _plan_asserts(asserts: list[str]) -> Plan:
    b = PlanBuilder()
    for i, text in enumerate(asserts):
        try:
            tree = ast.parse(text.strip())
        except SyntaxError as e:
            raise ValueError(f"tests[{i}] is not valid Python: {e.msg}: {text[:80]!r}") from e
        body = tree.body
        if len(body) == 1 and isinstance(body[0], ast.Assert):
            if not is_constant_assert(body[0]):
                b.assertion(body[0], b.new_test(ast.unparse(body[0].test)))
        elif all(isinstance(n, SETUP_NODES) or is_docstring(n) for n in body):
            if body:
                b.setup(text.strip())  # imports and assignments: run, not counted
        else:  # several statements, or a loop: one test, run in the sandbox (weak)
            b.ran(text.strip(), b.new_test(text.strip()))
    return b.build("tests (a list of asserts)")


def split_assert(test: ast.expr) -> tuple[ast.expr, Check]:
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
        inner, check = split_assert(test.operand)
        if check.kind in ("truthy", "falsy"):
            flipped = "falsy" if check.kind == "truthy" else "truthy"
            return inner, Check(flipped, label=check.label)
    isclose = _split_isclose(test) or _split_approx(test)
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


def _split_approx(test: ast.expr):
    """``CALL == pytest.approx(NUMBER)`` (pytest's defaults: rel 1e-6, abs 1e-12), either side."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    for probe, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        func = other.func if isinstance(other, ast.Call) else None
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "approx" and len(other.args) == 1 and not other.keywords:
            found, expected = _literal(other.args[0])
            if found and type(expected) in (int, float):
                return probe, Check("isclose", expected, rel_tol=1e-6, abs_tol=1e-12, label=ast.unparse(probe))
    return None


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


def _isclose(value, expected, rel_tol: float, abs_tol: float) -> bool:
    """``math.isclose`` that cannot overflow: a huge int is compared exactly, as a fraction would be."""
    try:
        return math.isclose(value, expected, rel_tol=rel_tol, abs_tol=abs_tol)
    except OverflowError:  # an int too large for a float: never close to a float-sized expected value
        return False


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
        if type(value) not in (int, float) or not _isclose(value, check.expected, check.rel_tol, check.abs_tol):
            return False, f"{check.label} returned {short_repr(value)}, expected about {check.expected!r}"
        return True, ""
    if check.kind in ("truthy", "weak"):
        return (True, "") if _truth(value) else (False, f"{check.label} is {short_repr(value)}, expected true")
    if check.kind == "falsy":
        return (True, "") if not _truth(value) else (False, f"{check.label} is {short_repr(value)}, expected false")
    if check.kind in ("ran", "setup"):
        return True, ""
    raise AssertionError(f"unknown check kind {check.kind!r}")


def _truth(value) -> bool:
    return bool(value)  # plain data only: no __bool__ of the program's runs here
