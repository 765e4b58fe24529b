"""Planning test classes and the pytest/unittest hooks around tests, as pytest and unittest run them.

A test class (a ``unittest.TestCase`` subclass, or a pytest ``class Test*``) is defined in the sandbox at its place
in the module, with its own helpers and class attributes, but without its tests' bodies and without the class
constants they compare against (those stay here, known as ``self.NAME``; a helper that reads one gets it too, and
the tests comparing with it are then weak; a class attribute its functions assign through the class, ``cls.n += 1``,
``type(self).n = 0``, or change in place through ``self``, ``self.seen.append(x)``, is state and is sent). Each test
method is one test in a body of its own (``judging.plan.Plan.deliveries``): ``self`` is a real, fresh instance of
the class (``Cls('test_x')`` or ``Cls()``), then the set-up (``setUp``/``setup_method``), the method's statements and
the tear-down (``tearDown``/``teardown_method``) follow, each hook's statements planned as the test's own (so
``self.sol = Solution()`` makes ``self.sol`` the program's, and ``self.expected = [...]`` stays here) where its body
can run statement by statement, and called whole otherwise. The class set-up (``setUpClass``/``setup_class``) runs
once per class, before its first test, in the process that runs the class's tests, as unittest and pytest run it:
what it sets on the class (``cls.db = Solution()``) is one object for every test of the class, and a value of the
test's (``cls.expected = 4``) stays here. It is planned once and placed before each test of the class as a
``once`` scope (``judging.plan.Plan.once``): a body runner that already ran it answers with what it gave then, so a
set-up that raised fails every test of the class (unittest's error for the class); a fresh body runner (after a
body ended the last one, or the runner retired) runs it again before the next test of the class, since the class's
state was lost with the old runner. The class tear-down (``tearDownClass``/``teardown_class``) is called once after
the class's last test; it fails nothing. Module hooks: ``setup_module``/``setUpModule`` run once before every test
body, ``setup_function``/``teardown_function`` around each test function, ``teardown_module``/``tearDownModule``
once at the end. A set-up or tear-down that raises fails the tests it wraps (unittest's "error"); one at the end
fails nothing.
A pytest class's methods may take fixtures (the module's or the class's own) and be parametrized
(``judging.plan_pytest``).
Not covered: test methods inherited from a base class, test methods with other decorators (run whole: weak); a
class attribute that the class's set-up gives as a value and that a test changes in place otherwise than as above
(each test gets the set-up's value afresh).
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from .expected_values import read_names
from .plan import GLOBAL, PlanBuilder, assigned_names, flattenable, is_docstring
from .plan_pytest import (
    Case,
    Collection,
    call_args,
    case_label,
    decorated_as_test,
    fixtures_of,
    is_fixture,
    plan_case,
    stripped,
)

MODULE_SETUP = ("setup_module", "setUpModule")
MODULE_TEARDOWN = ("teardown_module", "tearDownModule")
FUNCTION_HOOKS = ("setup_function", "teardown_function")
CLASS_SETUP = ("setUpClass", "setup_class")
CLASS_TEARDOWN = ("tearDownClass", "teardown_class")
TEST_SETUP = ("setUp", "setup_method")
TEST_TEARDOWN = ("tearDown", "teardown_method")
HOOKS = MODULE_SETUP + MODULE_TEARDOWN + FUNCTION_HOOKS


def module_hooks(body: list[ast.stmt]) -> dict[str, ast.FunctionDef]:
    """The module-level hook functions of a test module, by name."""
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef) and n.name in HOOKS}


def call(name: str, fn: ast.FunctionDef, arg: str = "None", receiver: str = "") -> str:
    """Source calling hook ``fn`` as pytest does: with one argument (the module, function or method; ``arg``) when
    it takes one beyond ``self``/``cls``, else with none."""
    bound = 1 if receiver else 0
    takes = len(fn.args.args) - bound > 0 or fn.args.vararg is not None
    return f"{receiver}{name}({arg if takes else ''})"


def setup_module(b: PlanBuilder, hooks: dict) -> None:
    for name in MODULE_SETUP:
        if name in hooks:
            b.setup(call(name, hooks[name]), label=f"{name}()")
            _rebound(b, hooks[name], GLOBAL)


def _rebound(b: PlanBuilder, fn: ast.FunctionDef, scope: int) -> None:
    """The module globals a hook called in the sandbox rebinds (``global s; s = Stack()``) are the sandbox's from
    then on: values made by running code there, read as the program's (a comparison of two of them is weak)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Global):
            for name in node.names:
                b.env(scope).mark_program(name)


def teardown_module(b: PlanBuilder, hooks: dict) -> None:
    for name in MODULE_TEARDOWN:
        if name in hooks:
            b.setup(call(name, hooks[name]), label=f"{name}()", optional=True)


def around_function(b: PlanBuilder, hooks: dict, which: str, scope: int) -> None:
    if which in hooks:
        b.setup(call(which, hooks[which]), scope, label=f"{which}()")
        _rebound(b, hooks[which], scope)


@dataclass
class Defined:
    """A test class as the sandbox got it (``define_class``), and what planning its tests needs."""

    cls: ast.ClassDef
    hooks: dict  # its set-up and tear-down hooks, by name
    flat: dict  # those planned statement by statement
    tests: set  # its test methods planned statement by statement
    consts: dict  # its class attributes the test gives as values (``expected = [1, 2]``)
    kept: set  # those sent all the same: read by code run in the sandbox, or state its methods change
    read_inside: set  # names read by its methods and hooks run whole in the sandbox


def define_class(b: PlanBuilder, cls: ast.ClassDef, methods: list[ast.FunctionDef]) -> Defined:
    """Send the class's definition (at its place in the module, as Python runs the module's statements before any
    test): test bodies (of ``methods``, its tests) and planned hooks emptied, constants withheld (module docstring)."""
    hooks = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)
             and n.name in CLASS_SETUP + CLASS_TEARDOWN + TEST_SETUP + TEST_TEARDOWN}
    flat = {name: fn for name, fn in hooks.items() if name not in CLASS_TEARDOWN and _flat_hook(fn)}
    tests = {m.name for m in methods if _flat_test(m)}
    consts = _class_constants(b, cls)
    sent_whole = [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and n.name not in flat and n.name not in tests
                  and n.name not in CLASS_TEARDOWN]  # it runs after the tests and fails nothing: it weakens none
    read_inside = set().union(*(read_names(n) for n in sent_whole)) if sent_whole else set()
    read_inside |= {f"self.{name[4:]}" for name in read_inside if name.startswith("cls.")}
    kept = {name for name in consts if f"self.{name}" in read_inside or f"{cls.name}.{name}" in read_inside}
    # a class attribute the tests change is state, not a given value
    kept |= set(consts) & (_class_state(cls, CLASS_TEARDOWN) | _mutated(cls))
    b.setup(ast.unparse(_sent_class(cls, flat, tests, set(consts) - kept)), label=f"class {cls.name}")
    return Defined(cls, hooks, flat, tests, consts, kept, read_inside)


def plan_class(b: PlanBuilder, d: Defined, methods: list[ast.FunctionDef], unittest_style: bool, scope: int,
               collection: Collection | None = None) -> int:
    """Plan one test class's tests (module docstring); returns the next free scope. ``collection``: the module as
    pytest collects it, for a pytest class's methods that take fixtures or are parametrized (``judging.plan_pytest``).
    The class's set-up is planned once, in a scope of its own (``self`` there is the class), and placed before each
    of its tests as a ``once`` scope: the process that runs the tests runs it before the first one only, as unittest
    and pytest do, and a fresh body runner (after a body ended the last one) runs it again, the class's state being
    lost with that runner. Its tear-down runs once after the last test."""
    cls = d.cls
    class_scope, scope = scope, scope + 1
    block = _class_setup(b, d, class_scope, unittest_style)
    fixtures = {**collection.fixtures, **fixtures_of(cls.body, owner=cls.name)} if collection else {}
    last = None
    for m in methods:
        if unittest_style or collection is None:
            if len(m.args.args) > 1 or m.args.vararg or m.args.kwonlyargs or m.args.kwarg:
                raise ValueError(f"tests: {cls.name}.{m.name}() takes arguments beyond self (a unittest method "
                                 "takes none); write the values inside the test method")
            cases, needed = [Case()], []
        else:
            marks = collection.module_marks + list(cls.decorator_list) + list(m.decorator_list)
            cases = collection.cases(m, fixtures, list(cls.decorator_list))
            needed = collection.needed(m, fixtures, marks) if cases else []
        for case in cases:
            if block is not None:
                b.repeat(block, scope)
            b.envs[scope] = b.env(class_scope).copy()
            _plan_method(b, d, m, case, needed, fixtures, unittest_style, scope)
            last, scope = scope, scope + 1
    for name in CLASS_TEARDOWN:
        if name in d.hooks and last is not None:
            b.setup(_class_call(name, d.hooks[name], cls.name, unittest_style), last,
                    label=f"{cls.name}.{name}()", optional=True)
    return scope


def _class_setup(b: PlanBuilder, d: Defined, scope: int, unittest_style: bool) -> tuple[list, list] | None:
    """The class's set-up (``setUpClass``/``setup_class``) planned in ``scope``, where ``self`` is the class; its
    probes and checks taken out (``PlanBuilder.repeat`` places them before each test), or None without one. The
    class's constants are known in ``scope``'s names, and every test's start from them."""
    env = b.envs[scope] = b.env(GLOBAL).copy()
    for name, value in d.consts.items():
        if name in d.kept:
            env.mark_helper(f"self.{name}")
        else:
            env.consts[f"self.{name}"] = value
    names = [name for name in CLASS_SETUP if name in d.hooks]
    if not names:
        return None
    start = len(b.probes)
    state = _class_state(d.cls, CLASS_SETUP + CLASS_TEARDOWN) | _mutated(d.cls)
    for name in names:
        hook = d.hooks[name]
        if name in d.flat:
            b.setup(f"self = {d.cls.name}", scope, label=f"the class {d.cls.name}")
            _flattened(b, hook, scope, None, state)
        else:
            b.setup(_class_call(name, hook, d.cls.name, unittest_style), scope, label=f"{d.cls.name}.{name}()")
            _rebound(b, hook, scope)
    b.once.add(scope)
    return b.taken(start)


def _class_call(name: str, fn: ast.FunctionDef, owner: str, unittest_style: bool) -> str:
    """Source calling a class-level hook as the framework does: unittest calls it with no argument (a classmethod);
    pytest calls a ``setup_class``/``teardown_class`` that is not a classmethod with the class."""
    decorators = [ast.unparse(d) for d in fn.decorator_list]
    if unittest_style or decorators or not fn.args.args:
        return call(name, fn, receiver=f"{owner}.")
    return f"{owner}.{name}({owner})"


def _plan_method(b: PlanBuilder, d: Defined, m: ast.FunctionDef, case: Case, needed: list, fixtures: dict,
                 unittest_style: bool, scope: int) -> None:
    """One test of a class: a fresh instance, the set-up hooks, the parameter set's values and fixtures, the body,
    the tear-downs."""
    cls = d.cls
    label = case_label(f"{cls.name}.{m.name}", case)
    test = b.new_test(label)
    b.setup(f"self = {cls.name}({m.name!r})" if unittest_style else f"self = {cls.name}()", scope,
            label=f"a {cls.name} for {m.name}")
    env = b.env(scope)
    for name in TEST_SETUP:
        if name in d.flat:
            _flattened(b, d.flat[name], scope, m.name)
        elif name in d.hooks:
            b.setup(call(name, d.hooks[name], f"{cls.name}.{m.name}", "self."), scope, label=f"{name}()")
    # what the set-up kept here but a method run in the sandbox reads (a fixture method reading ``self.start``)
    b.expose({name: value for name, value in env.consts.items() if name in d.read_inside}, scope)
    teardowns = plan_case(b, m, case, needed, fixtures, scope, label)
    if m.name in d.tests:
        b.body(m.body, test, scope)
    else:
        b.ran(f"self.{m.name}({call_args(m)})", test, scope)
    for statement in teardowns:
        b.setup(statement, scope, label=f"tear-down of {label}")
    for name in TEST_TEARDOWN:
        if name in d.flat:
            _flattened(b, d.flat[name], scope, m.name)
        elif name in d.hooks:
            b.setup(call(name, d.hooks[name], f"{cls.name}.{m.name}", "self."), scope, label=f"{name}()")


def _flat_hook(fn: ast.FunctionDef) -> bool:
    """A hook whose statements can be planned one by one: flattenable, and a plain or class method."""
    decorators = [ast.unparse(d) for d in fn.decorator_list]
    return flattenable(fn) and bool(fn.args.args) and decorators in ([], ["classmethod"])


def _flat_test(m: ast.FunctionDef) -> bool:
    return not decorated_as_test(m) and flattenable(m)


def _class_constants(b: PlanBuilder, cls: ast.ClassDef) -> dict:
    """Class attributes the test gives as values (``expected = [1, 2]``), folded here."""
    out = {}
    env = b.env(GLOBAL).copy()
    for node in cls.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and env.leaf_free(node.value)):
            try:
                out[node.targets[0].id] = env.fold(node.value)
            except Exception:  # noqa: BLE001 - not a value the parent can compute: it stays in the class
                continue
    return out


def _class_state(cls: ast.ClassDef, besides: tuple[str, ...]) -> set[str]:
    """Class attributes assigned through the class (``cls.made += 1``, ``T.made = []``, ``type(self).calls += 1``)
    in its functions other than ``besides``: they must exist in the sandbox, where those statements run."""
    out = set()
    for fn in cls.body:
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name in besides:
            continue
        for node in ast.walk(fn):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            out |= {t.attr for t in targets if isinstance(t, ast.Attribute) and _names_the_class(t.value, cls.name)}
    return out


def _names_the_class(node: ast.expr, name: str) -> bool:
    """``cls``, the class's own name, ``type(self)`` or ``self.__class__``."""
    if isinstance(node, ast.Name):
        return node.id in ("cls", name)
    if isinstance(node, ast.Call):
        return ast.unparse(node) == "type(self)"
    return isinstance(node, ast.Attribute) and ast.unparse(node) == "self.__class__"


_MUTATORS = {"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse", "update", "add", "discard",
             "setdefault", "popitem", "appendleft", "popleft", "extendleft", "rotate"}


def _mutated(cls: ast.ClassDef) -> set[str]:
    """Attributes the class's functions change in place through ``self`` (``self.seen.append(x)``,
    ``self.table[k] = v``): a class attribute changed so is one object for every test, as in Python, so it is state
    kept in the sandbox, not a value each test gets afresh."""
    out = set()
    for node in ast.walk(cls):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            target = node.func.value
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            target = node.value
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            out.add(target.attr)
    return out


def _sent_class(cls: ast.ClassDef, flat: dict, tests: set[str], withheld: set[str]) -> ast.ClassDef:
    """The class as the sandbox gets it: test bodies and planned hooks emptied, withheld constants left out."""
    sent = copy.deepcopy(cls)
    body = []
    for node in sent.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in withheld:
            continue
        if isinstance(node, ast.FunctionDef) and is_fixture(node):  # sent only if run there (judging.plan_pytest)
            continue
        if isinstance(node, ast.FunctionDef) and (node.name in flat or node.name in tests):
            node.body = [ast.Pass()]
        if isinstance(node, ast.FunctionDef):
            node = stripped(node)
        if not is_docstring(node):
            body.append(node)
    sent.body = body or [ast.Pass()]
    return ast.fix_missing_locations(sent)


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name):
        return ast.copy_location(ast.Name(self.new, node.ctx), node) if node.id == self.old else node


def _flattened(b: PlanBuilder, fn: ast.FunctionDef, scope: int, test_name: str | None,
               state: set = frozenset()) -> None:
    """A hook's statements planned in ``scope``, its first argument (``self``, ``cls``) read as ``self`` and its
    second (pytest's ``method``) bound to the test method (``test_name``; None for the class's set-up);
    ``super().setUp()`` and the like are dropped (the base classes' hooks do nothing a test can see). A statement
    that assigns one of the attributes in ``state`` is sent to the sandbox as it is (``PlanBuilder.setup``)."""
    first = fn.args.args[0].arg
    if len(fn.args.args) > 1:
        method = f"getattr(type(self), {test_name!r}, None)" if test_name is not None else "None"
        b.setup(f"{fn.args.args[1].arg} = {method}", scope)
    for node in fn.body:
        if is_docstring(node) or ast.unparse(node).startswith("super()"):
            continue
        node = _Rename(first, "self").visit(copy.deepcopy(node)) if first != "self" else node
        node = ast.fix_missing_locations(node)
        if state and {name[5:] for name in assigned_names(node) if name.startswith("self.")} & state:
            b.setup(ast.unparse(node), scope, keep=False)
        else:
            b.statement(node, None, scope)

