"""Planning a ``tests`` string of Python test code, in the shapes public datasets use.

- HumanEval ``def check(candidate)`` (with the row's ``entry_point``, or a ``check(NAME)`` call at the end):
  ``candidate`` is bound to the program's function, and each assert in ``check``'s body is one test (per
  assert, not whole-check: partial credit; each assert strong when ``judging.parent_expr`` can judge it here).
  A ``for`` loop over values the test gives is one test, unrolled (its asserts can then be strong); other
  statements of the body that do work are one weak test each; imports and assignments are setup. A body
  that cannot be run statement by statement (it ``return``s) is run whole: one weak test.
- pytest-style module-level ``def test_*()``: each function one test, passing when all its asserts pass, with
  ``setup_function``/``teardown_function`` around it and ``setup_module``/``teardown_module`` once.
- ``unittest.TestCase`` subclasses (and pytest ``class Test*``): each ``test*`` method one test, on a fresh
  instance, with the class's and the test's set-up and tear-down hooks (``judging.plan_classes``);
  ``self.assertEqual`` and the other common ``assert*`` calls are judged like the matching ``assert``.
- a plain script: one test, passing when it runs to the end (weak); only asserts and setup: one test each.

Runner calls (``check(f)``, ``unittest.main()``, ``pytest.main()``, ``if __name__ == "__main__":``) are
dropped: the sandbox runs the tests itself, so patching ``unittest``, ``pytest`` or ``sys.modules``, or a
``conftest.py`` in the working directory, changes nothing. Code that defines tests but runs none (a
``check`` without an ``entry_point``; only definitions) is a ValueError that names the fix. The test functions
and methods run one after the other in one process forked from the loaded program, as pytest runs a module's tests
(``judging.plan.Plan.deliveries``), in pytest's order: the module's test functions and classes as written (a name
defined twice once, as its last definition, where it was first defined), a pytest class's methods as written and a
``TestCase``'s in name order (pytest runs a ``TestCase`` through unittest's loader, which sorts them). ``python -m
unittest`` and ``unittest.main()`` would run the ``TestCase`` classes themselves in name order: a module whose classes
carry state from one to the next may then differ.
pytest's parametrize, fixtures and marks: ``judging.plan_pytest``.
Not covered: async tests.
"""

from __future__ import annotations

import ast

from .assert_calls import framework_assert
from .plan import (
    GLOBAL,
    SETUP_NODES,
    Plan,
    PlanBuilder,
    flattenable,
    is_call,
    is_constant_assert,
    is_docstring,
    is_no_op,
)
from .plan_classes import (
    around_function,
    define_class,
    module_hooks,
    plan_class,
    setup_module,
    teardown_module,
)
from .plan_pytest import (
    Collection,
    call_args,
    case_label,
    decorated_as_test,
    is_fixture,
    is_pytest_decorator,
    plan_case,
    stripped,
)

_NO_EXPECTED_VALUE = "the test code defines tests but runs none"


def plan_code(code: str, entry_point: str | None) -> Plan:
    """Plan a string of test code (see the module docstring).

    Raises:
        ValueError: not Python; a ``check(candidate)`` without an entry point; tests that take fixtures;
            code that checks nothing.
    """
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        raise ValueError(f"tests is a string but not valid Python test code: {e.msg} (line {e.lineno})") from e
    body = tree.body
    check = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == "check"
                  and len(n.args.args) == 1), None)
    functions = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name.startswith("test") and not is_fixture(n)]
    classes = [n for n in body if isinstance(n, ast.ClassDef) and _test_methods(n)
               and (_is_testcase(n) or n.name.startswith("Test"))]
    if check is not None:
        return _plan_check(body, check, entry_point or _called_with(body))
    if functions or classes:
        return _plan_test_functions(body, functions, classes)
    return _plan_script(code, body)


def _is_runner(node: ast.stmt) -> bool:
    if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Name) and func.id == "check":
            return True
        if isinstance(func, ast.Attribute) and func.attr == "main":
            return True
    return False


def _called_with(body: list[ast.stmt]) -> str | None:
    """``NAME`` of a module-level ``check(NAME)`` call, if any."""
    for node in body:
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "check" and len(node.value.args) == 1
                and isinstance(node.value.args[0], ast.Name)):
            return node.value.args[0].id
    return None


def _module_setup(b: PlanBuilder, body: list[ast.stmt], skip: list[ast.stmt], place=None) -> None:
    """Module-level statements other than the tests themselves: setup (pytest's decorators dropped, ``pytestmark``
    read by ``judging.plan_pytest`` only); module-level asserts: tests. ``place``: called with each test of ``skip``
    where it stands (its definition, sent where Python would run it)."""
    for node in body:
        if any(node is s for s in skip):
            if place is not None:
                place(node)
            continue
        if _is_runner(node) or is_docstring(node) or _is_pytestmark(node):
            continue
        if isinstance(node, ast.FunctionDef) and is_fixture(node):  # sent only if run there (judging.plan_pytest)
            continue
        if isinstance(node, ast.Assert):
            if not is_constant_assert(node):
                b.assertion(node, b.new_test(ast.unparse(node.test)))
        elif isinstance(node, ast.FunctionDef) and any(is_pytest_decorator(d) for d in node.decorator_list):
            b.setup(ast.unparse(stripped(node)), label=f"def {node.name}")
        else:
            b.setup(ast.unparse(node))


def _is_pytestmark(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)


def _plan_check(body: list[ast.stmt], check: ast.FunctionDef, entry_point: str | None) -> Plan:
    if not entry_point:
        raise ValueError(
            f"{_NO_EXPECTED_VALUE}: it defines check(candidate) (HumanEval style) but not which function to "
            "check. Add an 'entry_point' column naming the function (HumanEval has one), or end the test "
            "code with check(<function name>)"
        )
    if not entry_point.isidentifier():
        raise ValueError(f"entry_point {entry_point!r} is not a Python function name")
    b = PlanBuilder()
    _module_setup(b, body, [check])
    scope = 0
    b.setup(f"candidate = {entry_point}", scope, label=f"the entry_point {entry_point!r}")
    if not flattenable(check):
        b.setup(ast.unparse(check))
        b.ran(f"check({entry_point})", b.new_test(f"check({entry_point})"))
        return b.build("tests")
    for node in check.body:  # per assert: each one test
        if framework_assert(node) is not None:
            b.framework(node, b.new_test(ast.unparse(node).splitlines()[0]), scope)
        elif isinstance(node, ast.Assert):
            if not is_constant_assert(node):
                b.assertion(node, b.new_test(ast.unparse(node.test)), scope)
        elif isinstance(node, SETUP_NODES) or is_docstring(node):
            b.setup(ast.unparse(node), scope)
        elif is_call(node) and any(isinstance(n, ast.Assert) for n in check.body[check.body.index(node) + 1:]):
            b.setup(ast.unparse(node), scope)  # ``candidate(nums, 2)``: the asserts after it check what it did
        elif not is_no_op(node):  # a loop (unrolled when it can be), a helper call (weak): one test
            b.statement(node, b.new_test(ast.unparse(node).splitlines()[0]), scope)
    return b.build("the check(candidate) function in tests")


def _test_methods(cls: ast.ClassDef) -> list[ast.FunctionDef]:
    """A class's test methods in the order they run: a ``TestCase``'s by name (unittest's loader sorts them, under
    pytest too), a pytest class's as written. The order matters: the bodies run one after the other in one process."""
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test") and not is_fixture(n)]
    return sorted(methods, key=lambda n: n.name) if _is_testcase(cls) else methods


def _is_testcase(cls: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Name) and b.id.endswith("TestCase"))
               or (isinstance(b, ast.Attribute) and b.attr.endswith("TestCase")) for b in cls.bases)


def _plan_test_functions(body, functions, classes) -> Plan:
    """The module's statements in order (a test class's definition and a test function that runs whole defined where
    they stand), ``setup_module``, then the tests in the order pytest runs them: the module's test functions and
    classes as written (``_in_order``), each class's methods in ``_test_methods``' order."""
    b = PlanBuilder()
    defined: dict[int, object] = {}

    def place(node) -> None:
        if isinstance(node, ast.ClassDef):
            defined[id(node)] = define_class(b, node, _test_methods(node))
        elif _runs_whole(node):
            source = ast.unparse(stripped(node) if isinstance(node, ast.FunctionDef) else node)
            b.setup(source, label=f"def {node.name}")

    _module_setup(b, body, functions + classes, place)
    collection = Collection(body, b.env(GLOBAL))
    hooks = module_hooks(body)
    setup_module(b, hooks)
    scope = 0
    for node in _in_order(functions + classes):
        if isinstance(node, ast.ClassDef):
            scope = plan_class(b, defined[id(node)], _test_methods(node), _is_testcase(node), scope, collection)
        else:
            scope = _plan_test_function(b, node, collection, hooks, scope)
    teardown_module(b, hooks)
    return b.build("tests")


def _in_order(tests: list) -> list:
    """The module's test functions and classes in the order pytest collects them: the module's namespace, so as
    written, and a name defined twice only once, where it was first defined, as its last definition."""
    named: dict[str, object] = {}
    for node in sorted(tests, key=lambda n: n.lineno):
        named[node.name] = node
    return list(named.values())


def _runs_whole(fn) -> bool:
    """A test function not planned statement by statement (async, returning or yielding, or with a decorator other
    than pytest's): it is defined in the sandbox and called there."""
    return not isinstance(fn, ast.FunctionDef) or not flattenable(fn) or decorated_as_test(fn)


def _plan_test_function(b: PlanBuilder, fn, collection: Collection, hooks: dict, scope: int) -> int:
    """Each parameter set of a module-level test function one test, in a scope of its own; returns the next scope."""
    marks = collection.module_marks + list(fn.decorator_list)
    cases = collection.cases(fn, collection.fixtures)
    needed = collection.needed(fn, collection.fixtures, marks) if cases else []
    whole = _runs_whole(fn)
    for case in cases:
        label = case_label(fn.name, case)
        test = b.new_test(label)
        around_function(b, hooks, "setup_function", scope)
        teardowns = plan_case(b, fn, case, needed, collection.fixtures, scope, label)
        if whole:
            b.ran(f"{fn.name}({call_args(fn)})", test, scope)
        else:
            b.body(fn.body, test, scope)
        for statement in teardowns:
            b.setup(statement, scope, label=f"tear-down of {label}")
        around_function(b, hooks, "teardown_function", scope)
        scope += 1
    return scope


def _plan_script(code: str, body: list[ast.stmt]) -> Plan:
    if all(isinstance(n, (ast.Assert, *SETUP_NODES)) or is_docstring(n) for n in body):
        b = PlanBuilder()
        _module_setup(b, body, [])
        if b.tests:
            return b.build("tests")
        raise ValueError(
            f"{_NO_EXPECTED_VALUE}: it only defines functions and values. Add asserts, test_* functions, a "
            "unittest.TestCase, or HumanEval's check(candidate) with an 'entry_point' column"
        )
    b = PlanBuilder()
    b.ran(code, b.new_test("the test code ran to the end"))
    return b.build("tests")


__all__ = ["GLOBAL", "plan_code"]
