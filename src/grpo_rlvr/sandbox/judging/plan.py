"""Turning a ``tests`` value into a plan: what the untrusted process evaluates, and what the parent checks.

A plan is a sequence of probes (a piece of test code for the sandbox, run in order, each in a scope: the
program's module namespace, or a per-test copy of it standing in for a test function's locals) and, per
probe, a ``Check`` kept in this process. Probes belong to tests: a test passes when every probe of it
passes; a setup probe (an import, an assignment) is counted in no test, but its failure fails every test of
its scope. The shapes of ``tests`` and how they are counted (``judging.plan_code`` handles test-code strings):

- a list of assert strings (or a JSON string of one): each assert one test; lines without an assert
  (``import math``, ``x = 3``) are setup, run where they stand, not counted; a ``for`` loop over values the
  test gives is one test, unrolled;
- stdin/stdout cases ``{"input", "output"}``: each case one test;
- a string of test code: see ``judging.plan_code`` (plain script, pytest ``test_*``, ``unittest.TestCase``,
  HumanEval ``check(candidate)`` with the row's ``entry_point``).

Each assert is *strong* when ``judging.parent_expr`` can judge it here: only the calls into the program go to the
sandbox, which returns their values; the comparison and the expected values stay here, so the program never
sees them. Other asserts run whole in the sandbox and are *weak* (the program could read or subvert them);
so is test code that is not an assert (``with pytest.raises``, a loop over values the sandbox computes).
Verdicts count the weak tests. A ``for`` loop over a collection the test gives (``for n in (2, 3, 5):``,
``range(2, 8)``, a list the test assigned) is unrolled, up to ``MAX_UNROLL`` iterations: the loop variable
becomes a value known here, so the asserts in the body can be strong. Asserts of a constant (``assert True``)
are no test.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
from dataclasses import dataclass, field

from . import assert_methods
from .assert_calls import Raises, framework_assert
from .expected_values import handover_source, read_names
from .parent_expr import Env, Leaf, Strong, Unplannable, inline_constants, literal_source, plan_condition
from .plaindata import short_repr

GLOBAL = -1  # the scope of module-level probes: the program's own namespace
FIXTURES = "__import__('grpo_rlvr.sandbox.isolation.fixtures', fromlist=['warned'])"  # isolation.fixtures there
SETUP_NODES = (ast.Import, ast.ImportFrom, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Pass, ast.FunctionDef,
               ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal)
WEAK_KINDS = ("weak", "ran", "raises_weak")
MAX_UNROLL = 1000  # iterations of a test's loops (all of one loop statement together) that are unrolled


@dataclass(frozen=True)
class Check:
    """How the parent judges one probe. ``kind``: expr (strong: ``strong`` judges the values of its leaves
    here), weak (a whole condition evaluated in the sandbox: ``why`` says why it could not be judged here),
    ran (code run in the sandbox: no exception passes), part (a call a strong check reads the effects of: an
    exception fails its test, which stays strong), raises/raises_weak (an expected exception, ``raises``), setup
    (not counted; an exception fails the tests of its scope). ``test``: the index of the test the probe belongs to (None for setup)."""

    kind: str
    label: str = ""  # what was evaluated, for reasons: "add(2, 2)"
    test: int | None = None
    scope: int = GLOBAL
    optional: bool = False  # a setup import: when it fails, only the tests that use the name fail
    strong: Strong | None = field(default=None, compare=False)
    why: str = ""
    raises: tuple | None = None  # kind "raises"/"raises_weak": (exception class names, pattern or None)


@dataclass(frozen=True)
class Plan:
    """What to run. ``probes`` go to the sandbox (kind, source, scope); ``checks`` stay here, one per probe;
    ``tests`` name the counted tests; ``units``: per probe, the process that runs it (0: the loaded program
    itself; k > 0: the k-th test body, in the body runner forked from the loaded program, see ``deliveries``);
    ``once``: the scopes whose probes run once per process (a test class's set-up, repeated before each of its
    methods: a process that already ran them answers with what they gave then, see ``isolation.child``)."""

    mode: str
    probes: tuple[tuple[str, str, int], ...] = ()
    checks: tuple[Check, ...] = ()
    tests: tuple[str, ...] = ()
    cases: tuple[tuple[str, str], ...] = ()  # stdio mode: (stdin, expected stdout)
    units: tuple[int, ...] = ()
    once: tuple[int, ...] = ()

    @property
    def total(self) -> int:
        return len(self.cases) if self.mode == "stdio" else len(self.tests)

    @functools.cached_property
    def deliveries(self) -> tuple[tuple[int, tuple[int, ...], bool], ...]:
        """How the probes reach the sandbox: ``(unit, probe indices, last of its unit)`` in order, one test at a
        time. A delivery holds one test's probes and the setup before them (and, for a test body of one test, the
        tear-down after them); the sandbox gets the next one only once every probe of this one has answered, so no
        test ever runs with a later test's inputs in reach. A unit's deliveries go to one process: the loaded
        program for unit 0 (an assert list, one ``check`` body: one body in Python too, whose asserts see what
        earlier ones did), the body runner for the others (a test function or method each: run one after the
        other in a process forked once from the loaded program, as pytest runs a module's tests; a fresh fork for
        the bodies after one that ended it)."""
        out: list[tuple[int, list[int]]] = []
        last_probe = {c.test: i for i, c in enumerate(self.checks) if c.test is not None}
        tests_of: dict[int, set] = {}
        for c in self.checks:
            tests_of.setdefault(c.scope, set()).add(c.test)
        alone = {scope for scope, tests in tests_of.items() if scope != GLOBAL and len(tests - {None}) == 1}
        current: list[int] = []
        for i, unit in enumerate(self.units):
            if current and self.units[current[0]] != unit:
                out.append((self.units[current[0]], current))
                current = []
            current.append(i)
            test = self.checks[i].test
            scope = self.probes[i][2]
            tear_down = i + 1 < len(self.probes) and scope in alone and self.probes[i + 1][2] == scope
            if test is not None and last_probe[test] == i and not tear_down:
                out.append((unit, current))
                current = []
        if current:
            out.append((self.units[current[0]], current))
        return tuple((unit, tuple(idx), k + 1 == len(out) or out[k + 1][0] != unit)
                     for k, (unit, idx) in enumerate(out))


class PlanBuilder:
    """Collects probes and tests in order (used by ``judging.plan_code`` too), and what each name of the test code
    means at each point (``judging.parent_expr.Env``, one per scope)."""

    def __init__(self) -> None:
        self.probes: list[tuple[str, object, int]] = []
        self.checks: list[Check] = []
        self.tests: list[str] = []
        self.envs: dict[int, Env] = {GLOBAL: Env()}
        self.once: set[int] = set()  # scopes run once per process (``Plan.once``)
        self._unroll_budget: list[int] | None = None  # shared by the loops nested in one unrolled loop

    def env(self, scope: int) -> Env:
        if scope not in self.envs:  # the sandbox copies the module namespace when the scope is first used
            self.envs[scope] = self.envs[GLOBAL].copy()
        return self.envs[scope]

    def new_test(self, label: str) -> int:
        self.tests.append(label[:80])
        return len(self.tests) - 1

    def setup(self, source: str, scope: int = GLOBAL, label: str = "", optional: bool = False,
              keep: bool = True) -> None:
        """A setup statement (or several). One that binds values the parent computes (``x = 3``, ``EXPECTED =
        math.sqrt(2)``, even ``x = random.randint(0, 9)``) is not sent: the names stay here, and code sent to
        the sandbox gets their values as literals (``inline_constants``). ``keep`` False: sent all the same, and
        what it binds is the sandbox's (state that code there changes: ``cls.calls = 0`` for ``cls.calls += 1``)."""
        try:
            statements = ast.parse(source).body
        except SyntaxError:
            statements = []
        env = self.env(scope)
        sent, seeds = [], []
        for node in statements:
            if keep and env.run_here(node):  # withheld: only the parent knows these names
                seeds += seeding(inline_constants(node, env)[0])  # and where the program runs: its generator
                continue
            names = assigned_names(node)
            probe = env.copy()
            probe.bind(node)
            if keep and names and all(name in probe.consts for name in names):
                env.bind(node)
                continue
            self._hand_over(node, scope, sent)
            code, exposed = inline_constants(node, env)
            self._expose(exposed, scope)
            if keep:
                env.bind(node)
            else:
                env.taint(node)
            sent.append(ast.unparse(code))
        if statements and not sent and not seeds:
            return
        source = "\n".join(seeds + sent) if statements else source
        self.probes.append(("exec", source, scope))
        optional = optional or _only_imports(source) or not sent and bool(statements)
        self.checks.append(Check("setup", label=label or _one_line(source), scope=scope, optional=optional))

    def setup_before(self, scope: int, source: str, label: str) -> None:
        """A module-level setup statement that must run before test body ``scope`` starts (its process is forked
        from the loaded program then): placed before that body's first probe (its class's set-up included)."""
        start = len(self.probes)
        self.setup(source, label=label)
        first = next((i for i, (_, _, s) in enumerate(self.probes[:start]) if s == scope), None)
        while first and self.probes[first - 1][2] in self.once:
            first -= 1
        self._move(start, first)

    def define(self, source: str, label: str) -> None:
        """A module-level definition a test body needs (a fixture's function): placed before the first test body,
        with the module's other definitions, so that no module-level delivery comes between two bodies (the body
        runner would end there, and the bodies after it would lose what the earlier ones left)."""
        start = len(self.probes)
        self.setup(source, label=label)
        self._move(start, next((i for i, (_, _, s) in enumerate(self.probes[:start]) if s != GLOBAL), None))

    def _move(self, start: int, to: int | None) -> None:
        """Move the probes from ``start`` on to index ``to`` (None: leave them at the end)."""
        if to is None or len(self.probes) == start:
            return
        moved = self.probes[start:], self.checks[start:]
        del self.probes[start:], self.checks[start:]
        self.probes[to:to] = moved[0]
        self.checks[to:to] = moved[1]

    def taken(self, start: int) -> tuple[list, list]:
        """The probes and checks from ``start`` on, removed (to be placed with ``repeat``)."""
        block = self.probes[start:], self.checks[start:]
        del self.probes[start:], self.checks[start:]
        return block

    def repeat(self, block: tuple[list, list], scope: int) -> None:
        """Place ``block`` (probes of a ``once`` scope) again, its failures failing the tests of ``scope``."""
        self.probes += block[0]
        self.checks += [dataclasses.replace(c, scope=scope) for c in block[1]]

    def _hand_over(self, node: ast.AST, scope: int, sent: list | None = None) -> None:
        """The test's mutable values that ``node`` reads, where it also touches the program, go to the sandbox
        first (with their aliases): code there may change them, as Python would, and they are the program's
        values from then on (an assert reads them back after the call: ``rotate(nums, 2); assert nums == ...``).
        ``sent``: statements of a setup probe being gathered (they go before it); else a probe of their own."""
        env = self.env(scope)
        values = env.mutable_consts(read_names(node))
        if not values:
            return
        source = handover_source(values)
        if sent is not None:
            sent.append(source)
        else:
            self.probes.append(("exec", source, scope))
            self.checks.append(Check("setup", label=f"{', '.join(values)} handed to the program", scope=scope))
        for name in values:
            env.mark_program(name)

    def expose(self, values: dict, scope: int) -> None:
        """``_expose`` for the class planner: the test's values that code run in the sandbox reads."""
        self._expose(values, scope)

    def _expose(self, values: dict, scope: int) -> None:
        """Bind constants in the sandbox, for test code there that also rebinds them: they are then the
        sandbox's, no longer values the parent may compare against."""
        env = self.env(scope)
        for name, value in values.items():
            self.probes.append(("exec", f"{name} = {literal_source(value)}", scope))
            self.checks.append(Check("setup", label=f"{name} = {short_repr(value, 40)}", scope=scope))
            env.mark_helper(name)

    def ran(self, source: str, test: int, scope: int = GLOBAL) -> None:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            tree = None
        if tree is not None and len(tree.body) == 1 and self.env(scope).run_here(tree.body[0]):
            self.probes.append(("exec", "pass", scope))  # done here; the test still counts it
            self.checks.append(Check("ran", label=_one_line(source), test=test, scope=scope))
            return
        if tree is not None:
            self._hand_over(tree, scope)
            code, exposed = inline_constants(tree, self.env(scope))
            self._expose(exposed, scope)
            source = ast.unparse(code)
            self.env(scope).taint(tree)
        self.probes.append(("exec", source, scope))
        self.checks.append(Check("ran", label=_one_line(source), test=test, scope=scope))

    def assertion(self, node: ast.Assert, test: int, scope: int = GLOBAL, original: ast.stmt | None = None) -> None:
        """An assert, strong where the parent can judge it; ``original``: the statement it was written as (a
        ``self.assertEqual(...)``), which runs in the sandbox instead when it cannot be judged here (weak)."""
        env = self.env(scope)
        calls = [sub for sub in ast.walk(node.test) if isinstance(sub, ast.Call) and env.program_rooted(sub)]
        if calls:  # what the program's calls may change is read back after them, as Python reads it
            self._hand_over(ast.Module(body=[ast.Expr(c) for c in calls], type_ignores=[]), scope)
        try:
            strong = plan_condition(node.test, self.env(scope))
        except Unplannable as e:
            if original is not None:
                self.ran(ast.unparse(original), test, scope)
                return
            code, exposed = inline_constants(node.test, self.env(scope))
            self._expose(exposed, scope)
            self.probes.append(("eval", ast.unparse(code), scope))
            self.checks.append(Check("weak", label=ast.unparse(node.test), test=test, scope=scope, why=str(e)))
            return
        if original is not None:  # reasons quote the test as written
            strong = dataclasses.replace(strong, text=_one_line(ast.unparse(original)))
        self.probes.append(("leaves", strong.probe(), scope))
        one = strong.leaves[0].source if len(strong.leaves) == 1 else strong.text  # named in "X raised E"
        self.checks.append(Check("expr", label=one, test=test, scope=scope, strong=strong))

    def raises(self, spec: Raises, test: int, scope: int, original: ast.stmt) -> None:
        """An expected exception (``pytest.raises``, ``assertRaises``): one call (or a ``with`` block of one
        statement) is a leaf whose exception crosses as its class's ancestry, judged here: strong for a built-in
        class; for a class of the program's, its name crosses too (weak: the program could tell that this call is
        expected to raise). A longer block runs in the sandbox and the exception it raised is judged here (weak).
        A pattern the parent cannot compute, or a longer block expecting a class of the program's, runs the
        original statement in the sandbox (weak)."""
        env = self.env(scope)
        classes = _exception_classes(spec.expected, env)
        own_class = None if classes is not None else _program_classes(spec.expected, env)
        match = None
        if spec.match is not None:
            try:
                match = env.fold(spec.match)
            except Unplannable:
                match = None
            if not isinstance(match, str):
                classes = own_class = None
        target = spec.call
        if target is None and len(spec.body) == 1 and isinstance(spec.body[0], (ast.Expr, ast.Assign)):
            target = spec.body[0].value
        if classes is None and (own_class is None or target is None):
            self.ran(ast.unparse(original), test, scope)
            return
        names = tuple(f"{c.__module__}.{c.__qualname__}" for c in classes) if classes is not None else None
        if target is None:
            block = ast.Module(body=list(spec.body), type_ignores=[])
            self._hand_over(block, scope)
            code, exposed = inline_constants(block, env)
            self._expose(exposed, scope)
            env.taint(block)
            self.probes.append(("exec", ast.unparse(code), scope))
            self.checks.append(Check("raises_weak", label=_one_line(ast.unparse(block)), test=test, scope=scope,
                                     raises=(names, match)))
            return
        self._hand_over(ast.Module(body=[ast.Expr(target)], type_ignores=[]), scope)
        code, exposed = inline_constants(target, env)
        self._expose(exposed, scope)
        specs = [["e", ast.unparse(code)]] + ([["n", own_class]] if names is None else [])
        self.probes.append(("leaves", specs, scope))
        self.checks.append(Check("raises" if names is not None else "raises_weak", label=ast.unparse(target),
                                 test=test, scope=scope, raises=(names, match)))

    def framework(self, node: ast.stmt, test: int, scope: int) -> bool:
        """A framework assertion (``self.assertEqual``, ``pytest.raises``...) planned; False when ``node`` is none."""
        found = framework_assert(node)
        if found is None:
            return False
        kind, payload = found
        if kind == "assert":
            if not is_constant_assert(payload):
                self.assertion(payload, test, scope, original=node)
        elif kind == "warns":
            self.warns(payload, test, scope, original=node)
        else:
            self.raises(payload, test, scope, original=node)
        return True

    def warns(self, spec: Raises, test: int, scope: int, original: ast.stmt) -> None:
        """A block expected to warn (``pytest.warns``, ``assertWarns``): it runs in the sandbox with the warnings
        recorded, the records cross as values, and whether one matches is decided here; strong for one statement
        (as ``raises``), weak for a longer block."""
        env = self.env(scope)
        classes = _exception_classes(spec.expected, env)
        match = None
        if classes is not None and spec.match is not None:
            try:
                match = env.fold(spec.match)
            except Unplannable:
                classes = None
        if classes is None or (match is not None and not isinstance(match, str)):
            self.ran(ast.unparse(original), test, scope)
            return
        block = ast.Module(body=list(spec.body), type_ignores=[])
        self._hand_over(block, scope)
        code, exposed = inline_constants(block, env)
        self._expose(exposed, scope)
        env.taint(block)
        body = "\n".join("    " + line for line in ast.unparse(code).splitlines())
        warnings = "__import__('warnings')"
        self.probes.append(("exec", f"with {warnings}.catch_warnings(record=True) as __warned:\n"
                                    f"    {warnings}.simplefilter('always')\n{body}", scope))
        self.checks.append(Check("ran" if len(spec.body) > 1 else "part", label=_one_line(ast.unparse(block)),
                                 test=test, scope=scope))
        names = tuple(f"{c.__module__}.{c.__qualname__}" for c in classes)
        leaf = Leaf(f"the warnings of {_one_line(ast.unparse(block))}")
        tree = ("call", assert_methods.warned, (("leaf", 0), ("const", None, names), ("const", None, match)), ())
        strong = Strong(tree, (leaf,), _one_line(ast.unparse(original)))
        self.probes.append(("leaves", [["e", f"{FIXTURES}.warned(__warned)"]], scope))
        self.checks.append(Check("expr", label=leaf.source, test=test, scope=scope, strong=strong))

    def statement(self, node: ast.stmt, test: int, scope: int) -> None:
        """One statement of a test's body: an assert is judged, setup is run, a loop over the test's values is
        unrolled, anything else runs weakly."""
        if self.framework(node, test, scope):
            pass
        elif isinstance(node, ast.Assert):
            if not is_constant_assert(node):
                self.assertion(node, test, scope)
        elif isinstance(node, SETUP_NODES) or is_docstring(node):
            self.setup(ast.unparse(node), scope)
        elif is_no_op(node):
            pass  # a bare name or constant (HumanEval's stray ``print``): does nothing
        elif is_call(node):  # ``rotate(nums, 2)``: what it does is checked by the asserts after it
            self.setup(ast.unparse(node), scope)
        elif isinstance(node, ast.For) and self.unroll(node, test, scope):
            pass
        elif _sub_test_body(node) is not None:
            for inner in _sub_test_body(node):
                self.statement(inner, test, scope)
        else:
            self.ran(ast.unparse(node), test, scope)

    def body(self, nodes: list[ast.stmt], test: int, scope: int) -> None:
        """A test function's body in its own scope; with no judged statement at all, all of it runs weakly."""
        start = len(self.checks)
        for node in nodes:
            self.statement(node, test, scope)
        if not any(c.test == test for c in self.checks[start:]):
            for i in range(start, len(self.checks)):
                c = self.checks[i]
                self.checks[i] = type(c)("ran", label=c.label, test=test, scope=scope)
            if len(self.checks) == start:
                self.ran("pass", test, scope)  # an empty test: passes when the program loads, as pytest would

    def unroll(self, loop: ast.For, test: int, scope: int) -> bool:
        """Plan ``for TARGET in VALUES:`` as its iterations, when the test gives the values; False (nothing
        planned) when it cannot be unrolled."""
        outermost = self._unroll_budget is None
        if outermost:
            self._unroll_budget = [MAX_UNROLL]
        try:
            plan = self._iterations(loop, self.env(scope), self._unroll_budget)
            if plan is None:
                return False
            for target_source, value, body in plan:
                self.setup(f"{target_source} = {literal_source(value)}", scope)  # a value of the test's: kept here
                for node in body:
                    self.statement(node, test, scope)
            return True
        finally:
            if outermost:
                self._unroll_budget = None

    def _iterations(self, loop: ast.For, env: Env, budget: list[int]):
        if loop.orelse or not _unrollable_body(loop.body) or not _simple_target(loop.target):
            return None
        try:
            values = env.fold(ast.Call(ast.Name("list", ast.Load()), [loop.iter], []))
        except Unplannable:
            return None
        if not isinstance(values, list) or len(values) > budget[0]:
            return None
        budget[0] -= len(values)
        return [(ast.unparse(loop.target), value, loop.body) for value in values]

    def build(self, what: str) -> Plan:
        if not self.tests:
            raise ValueError(f"{what} holds no test: no assert that checks the program")
        return Plan(mode="eval", probes=tuple(self.probes), checks=tuple(self.checks), tests=tuple(self.tests),
                    units=self._units(), once=tuple(sorted(self.once)))

    def _units(self) -> tuple[int, ...]:
        """Unit 0 for module-level probes; each test body (a scope) a unit of its own, run by the sandbox's body
        runner one after the other (a body sees what earlier ones left, as under pytest); a single body runs in the
        loaded program itself (no fork). A ``once`` scope's probes (a class's set-up) go with the body after them."""
        scopes = [s for s in dict.fromkeys(scope for _, _, scope in self.probes) if s != GLOBAL and s not in self.once]
        unit_of = {scope: k + 1 for k, scope in enumerate(scopes)} if len(scopes) > 1 else {}
        units = [unit_of.get(scope, 0) for _, _, scope in self.probes]
        for i in reversed(range(len(units) - 1)):
            if self.probes[i][2] in self.once:
                units[i] = units[i + 1]
        return tuple(units)


SEED_MODULES = {"random": "random", "np": "numpy", "numpy": "numpy", "torch": "torch"}
SEEDERS = ("seed", "manual_seed")


def seeding(node: ast.stmt) -> list[str]:
    """``random.seed(3)``, ``np.random.seed(0)``, ``torch.manual_seed(1)`` with literal arguments (the test's named
    constants already inlined), as source that runs
    on its own (``import numpy as np`` first): a test's seeding runs here for its own values and in the sandbox for
    the program's. Nothing for any other statement."""
    call = node.value if isinstance(node, ast.Expr) else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr not in SEEDERS:
        return []
    root = call.func.value
    while isinstance(root, ast.Attribute):
        root = root.value
    literal = all(isinstance(a, ast.Constant) for a in [*call.args, *(k.value for k in call.keywords)])
    if not isinstance(root, ast.Name) or root.id not in SEED_MODULES or not literal:
        return []
    return [f"import {SEED_MODULES[root.id]} as {root.id}", ast.unparse(node)]


def flattenable(fn: ast.FunctionDef) -> bool:
    """True when the body can run statement by statement outside a function (no return/yield/nonlocal)."""
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Nonlocal, ast.Global, ast.Await)):
            return False
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return True


def assigned_names(node: ast.stmt) -> list[str]:
    """The names (``x``, ``self.x``) an assignment binds; [] for anything else or other targets."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
        targets = [node.target]
    else:
        return []
    names = []
    for target in targets:
        for element in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
            if isinstance(element, ast.Name):
                names.append(element.id)
            elif (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                  and element.value.id == "self"):
                names.append(f"self.{element.attr}")
            else:
                return []
    return names


def _simple_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts)


def _unrollable_body(body: list[ast.stmt]) -> bool:
    """Only asserts, setup, nested loops and ``with self.subTest(...)``: no break, continue or return."""
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.While,
                             ast.Try, ast.If, ast.Raise, ast.Global, ast.Nonlocal)):
            return False
    return True


def is_call(node: ast.stmt) -> bool:
    """A statement that is one call (``rotate(nums, 2)``, ``expected.append(4)``): setup for the asserts after it."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)


def is_no_op(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Constant))


def _sub_test_body(node: ast.stmt) -> list[ast.stmt] | None:
    """The body of ``with self.subTest(...):`` (only a label for unittest), else None."""
    if not (isinstance(node, ast.With) and len(node.items) == 1 and node.items[0].optional_vars is None):
        return None
    ctx = node.items[0].context_expr
    if (isinstance(ctx, ast.Call) and isinstance(ctx.func, ast.Attribute) and ctx.func.attr == "subTest"
            and isinstance(ctx.func.value, ast.Name) and ctx.func.value.id == "self"):
        return node.body
    return None


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
        if len(body) == 1 and framework_assert(body[0]) is not None:
            b.framework(body[0], b.new_test(text.strip()), GLOBAL)
        elif len(body) == 1 and isinstance(body[0], ast.Assert):
            if not is_constant_assert(body[0]):
                b.assertion(body[0], b.new_test(ast.unparse(body[0].test)))
        elif all(isinstance(n, SETUP_NODES) or is_docstring(n) for n in body):
            if body:
                b.setup(text.strip())  # imports and assignments: run, not counted
        elif len(body) == 1 and is_call(body[0]) and _assert_follows(asserts, i):
            b.setup(text.strip())  # an in-place call: the asserts after it check what it did
        elif len(body) == 1 and isinstance(body[0], ast.For) and b.unroll(body[0], len(b.tests), GLOBAL):
            b.new_test(text.strip())  # the unrolled loop's probes belong to this test
        else:  # several statements, or a loop the parent cannot unroll: one test, run in the sandbox (weak)
            b.ran(text.strip(), b.new_test(text.strip()))
    return b.build("tests (a list of asserts)")


def _exception_classes(expr: ast.expr, env) -> tuple | None:
    """The built-in exception classes ``expr`` names (one, or a tuple), or None: a class of the program's or the
    test's own is not one the parent holds."""
    out = []
    for node in expr.elts if isinstance(expr, ast.Tuple) else [expr]:
        found = getattr(builtins, node.id, None) if isinstance(node, ast.Name) and not env.known(node.id) else None
        if not (isinstance(found, type) and issubclass(found, BaseException)):
            return None
        out.append(found)
    return tuple(out)


def _program_classes(expr: ast.expr, env) -> str | None:
    """Source of an exception class (or tuple of them) the program defines (``OutOfStock``, ``mod.Error``), for the
    sandbox to name; None for anything else."""
    for node in expr.elts if isinstance(expr, ast.Tuple) else [expr]:
        if not env.program_rooted(node) or isinstance(node, ast.Call):
            return None
    return ast.unparse(expr)


def _assert_follows(asserts: list[str], i: int) -> bool:
    return any(text.lstrip().startswith("assert") for text in asserts[i + 1:])


def judge_value(check: Check, value) -> tuple[bool, str]:
    """(passed, why-not) of a weak probe: the condition's plain-data value, evaluated in the sandbox."""
    if check.kind == "weak":
        return (True, "") if bool(value) else (False, f"{check.label} is {short_repr(value)}, expected true")
    if check.kind in ("ran", "setup", "part"):
        return True, ""
    raise AssertionError(f"unknown check kind {check.kind!r}")
