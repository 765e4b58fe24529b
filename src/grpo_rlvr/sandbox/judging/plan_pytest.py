"""pytest's collection, planned as pytest collects and runs it: ``parametrize`` (ids, stacked, ``pytest.param``,
``indirect``), fixtures (the built-in ``tmp_path``, ``tmp_path_factory``, ``capsys``, ``capfd``, ``monkeypatch`` and
``request``; the test module's own, with ``yield``, ``params``, ``autouse``, ``scope``, ``name``, depending on each
other; a test class's own), and marks (``skip``, ``skipif``, ``xfail``, ``usefixtures``, ``pytestmark``; any other
mark is ignored, as pytest ignores an unregistered one).

Each parameter set of a test function (or method) is one test, in a body of its own. A parametrize value the test
gives is the test's own (kept here: asserts against it are strong); one that names the program is evaluated in the
sandbox. A fixture of the test's own that only computes the test's values (``return [1, 2, 3]``, a dict of cases) is
computed here too; any other runs in the sandbox, as written, and its value is the program's from then on (a leaf).
A ``yield`` fixture's code after the ``yield`` runs after the test (a failure there fails the test, as pytest's
"error"). A skipped test, and an ``xfail`` one (pytest counts its outcome as neither a pass nor a failure), is no
test; a test whose fixture pytest does not have is a ``ValueError`` naming it.
Not covered: other built-in fixtures (``caplog``, ``recwarn``...), ``pytest.skip()`` called inside a test, async
tests, a fixture's ``ids`` (its labels only), and strict ``xfail`` (no test either).
"""

from __future__ import annotations

import ast
import os
import platform
import sys
from dataclasses import dataclass, field

from .expected_values import Unplannable
from .plain_ops import literal_source

FX = "__import__('grpo_rlvr.sandbox.isolation.fixtures', fromlist=['Request'])"  # isolation.fixtures, in the sandbox
BUILTIN = {
    "tmp_path": (f"{FX}.tmp_path()", None),
    "tmp_path_factory": (f"{FX}.TempPathFactory()", None),
    "capsys": (f"{FX}.Capture(False)", "{name}.close()"),
    "capfd": (f"{FX}.Capture(True)", "{name}.close()"),
    "capsysbinary": None, "capfdbinary": None,
    "monkeypatch": (f"{FX}.MonkeyPatch()", "{name}.undo()"),
}
MAX_CASES = 1000  # parameter sets of one test function
_NOTSET = object()


def dotted(node: ast.expr) -> str:
    """``pytest.mark.parametrize`` for the decorator ``@pytest.mark.parametrize(...)`` (its call dropped)."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def mark_name(node: ast.expr) -> str | None:
    """``parametrize`` for ``pytest.mark.parametrize(...)`` or ``mark.parametrize``; None for no mark."""
    parts = dotted(node).split(".")
    return parts[-1] if len(parts) >= 2 and parts[-2] == "mark" else None


def is_fixture(fn: ast.FunctionDef) -> bool:
    return any(dotted(d).split(".")[-1] == "fixture" for d in fn.decorator_list)


def is_pytest_decorator(node: ast.expr) -> bool:
    return mark_name(node) is not None or dotted(node).split(".")[-1] == "fixture"


def stripped(fn: ast.FunctionDef) -> ast.FunctionDef:
    """``fn`` without its pytest decorators (the sandbox need not have pytest to define it)."""
    out = ast.FunctionDef(fn.name, fn.args, fn.body, [d for d in fn.decorator_list if not is_pytest_decorator(d)],
                          fn.returns, fn.type_comment, **({"type_params": []} if sys.version_info >= (3, 12) else {}))
    return ast.fix_missing_locations(ast.copy_location(out, fn))


@dataclass(frozen=True)
class Fixture:
    """A fixture of the test module's (``receiver`` "") or of a test class's (``receiver`` "self.")."""

    name: str
    fn: ast.FunctionDef
    params: ast.expr | None = None
    ids: ast.expr | None = None
    autouse: bool = False
    scope: str = "function"
    receiver: str = ""
    owner: str = ""  # the class whose fixture it is ("" for the module's)

    @property
    def yields(self) -> bool:
        return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(self.fn))

    @property
    def needs(self) -> list[str]:
        return [a.arg for a in self.fn.args.args if a.arg != "self"]


def _own_nodes(fn: ast.FunctionDef):
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))


def fixtures_of(body: list[ast.stmt], owner: str = "") -> dict[str, Fixture]:
    out = {}
    for fn in body:
        if not (isinstance(fn, ast.FunctionDef) and is_fixture(fn)):
            continue
        options = {}
        for d in fn.decorator_list:
            if dotted(d).split(".")[-1] == "fixture" and isinstance(d, ast.Call):
                options = {k.arg: k.value for k in d.keywords}
        name = options["name"].value if isinstance(options.get("name"), ast.Constant) else fn.name
        autouse = isinstance(options.get("autouse"), ast.Constant) and options["autouse"].value is True
        scope = options["scope"].value if isinstance(options.get("scope"), ast.Constant) else "function"
        out[name] = Fixture(name, fn, options.get("params"), options.get("ids"), autouse, str(scope),
                            "self." if owner else "", owner)
    return out


@dataclass
class Case:
    """One parameter set of a test: its id, its parametrize values (name -> node), the values indirect parametrize
    and parametrized fixtures hand to fixtures (``request.param``)."""

    ids: list[str] = field(default_factory=list)
    args: dict[str, ast.expr] = field(default_factory=dict)
    fixture_params: dict[str, ast.expr] = field(default_factory=dict)
    skip: bool = False


class Collection:
    """The test module as pytest collects it: its fixtures and module marks."""

    def __init__(self, body: list[ast.stmt], env):
        self.env = env  # the module's names, to fold parametrize values and conditions
        self.fixtures = fixtures_of(body)
        self.module_marks: list[ast.expr] = []
        for node in body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                    for t in node.targets):
                value = node.value
                self.module_marks += list(value.elts) if isinstance(value, (ast.List, ast.Tuple)) else [value]

    # --- which tests a function makes ------------------------------------------------------------------------------

    def cases(self, fn: ast.FunctionDef, fixtures: dict[str, Fixture], class_marks: list | None = None) -> list[Case]:
        """The parameter sets pytest runs ``fn`` with (skipped and xfail ones left out)."""
        marks = self.module_marks + list(class_marks or []) + list(fn.decorator_list)
        if any(self._skipped(m) for m in marks):
            return []
        cases = [Case()]
        for mark in reversed([m for m in fn.decorator_list if mark_name(m) == "parametrize"]):  # bottom one first
            cases = [self._joined(case, extra) for extra in self._parametrize(mark, fn) for case in cases]
            if len(cases) > MAX_CASES:
                raise ValueError(f"tests: {fn.name}() has more than {MAX_CASES} parameter sets")
        needed = self.needed(fn, fixtures, marks)
        takes = {a.arg for a in fn.args.args} | set(needed)
        for name in (n for case in cases for n in case.args):
            if name not in takes:
                raise ValueError(f"tests: {fn.name}() is parametrized with {name!r}, an argument it does not take")
        for name in needed:
            fixture = fixtures[name] if name in fixtures else None
            if fixture is not None and fixture.params is not None:  # its ids come first in the test's id, as pytest's
                cases = [self._joined(extra, case) for extra in self._fixture_params(fixture) for case in cases
                         if name not in case.fixture_params]
        return [c for c in cases if not c.skip]

    def needed(self, fn: ast.FunctionDef, fixtures: dict[str, Fixture], marks: list) -> list[str]:
        """The fixtures ``fn`` uses, each after those it needs (autouse first, as pytest orders them)."""
        wanted = [name for name, f in fixtures.items() if f.autouse]
        for mark in marks:
            if mark_name(mark) == "usefixtures" and isinstance(mark, ast.Call):
                wanted += [a.value for a in mark.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        params = {a.arg for a in fn.args.args} - {"self"}
        direct = set(self._direct_args(fn))
        wanted += [a.arg for a in fn.args.args if a.arg != "self" and a.arg not in direct]
        out: list[str] = []

        def visit(name: str, chain: tuple) -> None:
            if name in out:
                return
            if name in chain:
                raise ValueError(f"tests: the fixtures {' -> '.join((*chain, name))} depend on each other")
            if name in fixtures:
                for need in fixtures[name].needs:
                    if need != "request":
                        visit(need, (*chain, name))
            elif name not in BUILTIN and name != "request":
                raise ValueError(f"tests: {fn.name}() asks for the fixture {name!r}, which is neither pytest's "
                                 f"(tmp_path, capsys, capfd, monkeypatch, request...) nor defined in the test code")
            elif name in BUILTIN and BUILTIN[name] is None:
                raise ValueError(f"tests: {fn.name}() asks for pytest's {name!r} fixture, which the sandbox does not "
                                 "provide; use capsys or capfd")
            out.append(name)

        for name in dict.fromkeys(wanted):
            if name in params or name in fixtures or name in BUILTIN or name == "request":
                visit(name, ())
        return out

    def _direct_args(self, fn: ast.FunctionDef) -> list[str]:
        """The parametrize names that are the test's own arguments (not handed to a fixture: ``indirect``)."""
        out = []
        for mark in fn.decorator_list:
            if mark_name(mark) == "parametrize" and isinstance(mark, ast.Call) and mark.args:
                names, indirect = self._argnames(mark.args[0]), self._indirect(mark)
                out += [n for n in names if n not in indirect]
        return out

    def _skipped(self, mark: ast.expr) -> bool:
        name = mark_name(mark)
        if name == "skip":
            return True
        if name in ("skipif", "xfail"):
            if not isinstance(mark, ast.Call):
                return name == "xfail"
            condition = mark.args[0] if mark.args else next(
                (k.value for k in mark.keywords if k.arg == "condition"), None)
            return True if condition is None else bool(self._condition(condition))
        return False

    def _condition(self, node: ast.expr) -> bool:
        """A skipif/xfail condition, evaluated in this Python (the sandbox's): False when it cannot be."""
        scope = {"sys": sys, "os": os, "platform": platform, **self.env.modules, **self.env.consts}
        try:
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                return bool(eval(node.value, scope))  # noqa: S307 - the test's own text, trusted like the dataset
            return bool(eval(compile(ast.Expression(node), "<mark>", "eval"), scope))  # noqa: S307
        except Exception:  # noqa: BLE001 - a condition that needs the program: not skipped
            return False

    @staticmethod
    def _joined(case: Case, extra: Case) -> Case:
        return Case(case.ids + extra.ids, {**case.args, **extra.args}, {**case.fixture_params, **extra.fixture_params},
                    case.skip or extra.skip)

    @staticmethod
    def _argnames(node: ast.expr) -> list[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [n.strip() for n in node.value.split(",") if n.strip()]
        if isinstance(node, (ast.List, ast.Tuple)):
            return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        raise ValueError(f"tests: parametrize names {ast.unparse(node)!r} must be a string or a list of strings")

    def _indirect(self, mark: ast.Call) -> set[str]:
        node = next((k.value for k in mark.keywords if k.arg == "indirect"), None)
        if node is None:
            return set()
        if isinstance(node, ast.Constant):
            return set(self._argnames(mark.args[0])) if node.value is True else set()
        return set(self._argnames(node))

    def _parametrize(self, mark: ast.expr, fn: ast.FunctionDef) -> list[Case]:
        if not isinstance(mark, ast.Call) or len(mark.args) < 2 and not any(k.arg == "argvalues" for k in mark.keywords):
            raise ValueError(f"tests: {fn.name}()'s parametrize needs argument names and values")
        names = self._argnames(mark.args[0] if mark.args else next(k.value for k in mark.keywords if k.arg == "argnames"))
        values = mark.args[1] if len(mark.args) > 1 else next(k.value for k in mark.keywords if k.arg == "argvalues")
        ids = next((k.value for k in mark.keywords if k.arg == "ids"), None)
        indirect = self._indirect(mark)
        elements = self._elements(values, fn)
        id_list = self._ids(ids, len(elements))
        cases = []
        for i, element in enumerate(elements):
            element, own_id, skip = self._param(element)
            parts = _split(element, len(names), fn)
            case = Case(skip=skip)
            for name, part in zip(names, parts, strict=True):
                (case.fixture_params if name in indirect else case.args)[name] = part
            case.ids = [own_id or (id_list[i] if id_list else _default_id(self.env, parts, names, i))]
            cases.append(case)
        return cases

    def _elements(self, values: ast.expr, fn: ast.FunctionDef) -> list[ast.expr]:
        """The parameter sets as nodes: a list the test writes out, or one of the test's values (each a literal)."""
        if isinstance(values, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in values.elts):
            return list(values.elts)
        try:
            folded = list(self.env.fold(values))
        except (Unplannable, TypeError) as e:
            raise ValueError(f"tests: {fn.name}()'s parametrize values {ast.unparse(values)[:60]!r} are not values "
                             "the test gives; write them out as a list") from e
        return [ast.parse(literal_source(v), mode="eval").body for v in folded]

    def _ids(self, ids: ast.expr | None, n: int) -> list[str] | None:
        if ids is None:
            return None
        try:
            folded = self.env.fold(ids)
        except Unplannable:
            return None  # a function making ids: labels only
        return [str(x) for x in folded] if isinstance(folded, (list, tuple)) and len(folded) == n else None

    def _param(self, element: ast.expr) -> tuple[ast.expr, str | None, bool]:
        """``pytest.param(values..., id=..., marks=...)`` unwrapped: (values, its id, whether its marks skip it)."""
        if not (isinstance(element, ast.Call) and dotted(element).split(".")[-1] == "param"):
            return element, None, False
        keywords = {k.arg: k.value for k in element.keywords}
        own_id = keywords["id"].value if isinstance(keywords.get("id"), ast.Constant) else None
        marks = keywords.get("marks")
        marks = list(marks.elts) if isinstance(marks, (ast.List, ast.Tuple)) else [marks] if marks else []
        values = element.args[0] if len(element.args) == 1 else ast.Tuple(list(element.args), ast.Load())
        return values, own_id, any(self._skipped(m) for m in marks)

    def _fixture_params(self, fixture: Fixture) -> list[Case]:
        elements = self._elements(fixture.params, fixture.fn)
        id_list = self._ids(fixture.ids, len(elements))
        out = []
        for i, element in enumerate(elements):
            element, own_id, skip = self._param(element)
            given = own_id or (id_list[i] if id_list else _default_id(self.env, [element], [fixture.name], i))
            out.append(Case([given], {}, {fixture.name: element}, skip))
        return out


def _split(element: ast.expr, n: int, fn: ast.FunctionDef) -> list[ast.expr]:
    if n == 1:
        return [element]
    if isinstance(element, (ast.Tuple, ast.List)) and len(element.elts) == n:
        return list(element.elts)
    raise ValueError(f"tests: {fn.name}()'s parametrize value {ast.unparse(element)[:60]!r} does not give {n} values")


def _default_id(env, parts: list[ast.expr], names: list[str], i: int) -> str:
    """pytest's id of a parameter set: each value's text when it is a number, string, bool or None, else name+index."""
    out = []
    for part, name in zip(parts, names, strict=True):
        try:
            value = env.fold(part)
        except Unplannable:
            value = _NOTSET
        if value is None or isinstance(value, (bool, int, float, str)):
            out.append(str(value))
        else:
            out.append(f"{name}{i}")
    return "-".join(out)


def case_label(name: str, case: Case) -> str:
    return f"{name}[{'-'.join(case.ids)}]" if case.ids else name


def plan_case(b, fn: ast.FunctionDef, case: Case, needed: list[str], fixtures: dict[str, Fixture], scope: int,
              label: str) -> list[str]:
    """Bind one parameter set's values and fixtures in ``scope``; returns the tear-down statements, in order."""
    from .plan import GLOBAL

    env = b.env(scope)
    for name, node in case.args.items():
        b.setup(f"{name} = {ast.unparse(node)}", scope, label=f"{name} of {label}")
        if name not in env.consts:
            env.mark_program(name)
    teardowns: list[str] = []
    for name in needed:
        if name == "request":
            b.setup(f"request = {FX}.Request({label!r})", scope, label="request")
            env.mark_program("request")
            teardowns.append("request.finish()")
            continue
        if name in BUILTIN:
            make, finish = BUILTIN[name]
            b.setup(f"{name} = {make}", scope, label=name)
            env.mark_program(name)
            if finish:
                teardowns.append(finish.format(name=name))
            continue
        fixture = fixtures[name]
        param = case.fixture_params.get(name)
        if _folded(b, fixture, param, scope):
            continue
        teardowns += _called(b, fixture, param, scope if fixture.scope == "function" else GLOBAL, scope, label)
    return list(reversed(teardowns))


def _folded(b, fixture: Fixture, param: ast.expr | None, scope: int) -> bool:
    """A fixture that only computes the test's own values, computed here: its value the test's (True when done)."""
    env = b.env(scope).copy()
    fn = fixture.fn
    reads_self = any(isinstance(n, ast.Name) and n.id == "self" for n in _own_nodes(fn))
    if reads_self or any(n not in env.consts and n != "request" for n in fixture.needs):
        return False
    if "request" in fixture.needs:
        if param is None:
            return False
        try:
            env.consts[_PARAM] = env.fold(param)
        except Unplannable:
            return False
    body = [n for n in fn.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    if not body:
        return False
    *steps, last = body
    if fixture.yields:  # ``...; yield value; teardown``: the teardown of pure values does nothing to see
        at = next((k for k, n in enumerate(body) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Yield)), None)
        if at is None:
            return False
        steps, last = body[:at], ast.Return(body[at].value.value)
    if not isinstance(last, ast.Return) or last.value is None:
        return False
    renamed = [_RequestParam().visit(ast.fix_missing_locations(s)) for s in steps]
    for step in renamed:
        if not env.run_here(step):
            return False
    try:
        value = env.fold(_RequestParam().visit(last.value))
    except Unplannable:
        return False
    b.setup(f"{fixture.name} = {literal_source(value)}", scope, label=f"the fixture {fixture.name}")
    return fixture.name in b.env(scope).consts


_PARAM = "__request_param__"


class _RequestParam(ast.NodeTransformer):
    """``request.param`` as a plain name the fold knows (bound to the fixture's parameter)."""

    def visit_Attribute(self, node: ast.Attribute):
        if isinstance(node.value, ast.Name) and node.value.id == "request" and node.attr == "param":
            return ast.copy_location(ast.Name(_PARAM, node.ctx), node)
        return self.generic_visit(node)


def _called(b, fixture: Fixture, param: ast.expr | None, where: int, scope: int, label: str) -> list[str]:
    """A fixture run in the sandbox, as written: its value the program's from then on; the tear-downs it needs. A
    module-scoped one (``where`` GLOBAL) is made once, in the loaded program, before the first test body needing it
    is forked (its tear-down, at the module's end, is not run)."""
    from .plan import GLOBAL

    def emit(source: str, what: str) -> None:
        if where == GLOBAL:
            b.setup_before(scope, source, what)
        else:
            b.setup(source, scope, label=what)

    env = b.env(scope)
    name, fn = fixture.name, fixture.fn
    held = f"__fixture_{name}" if where == GLOBAL else name
    done = b.__dict__.setdefault("module_fixtures", set())
    if where != GLOBAL or name not in done:
        if where == GLOBAL:
            done.add(name)
        _define(b, fixture, scope)
        arguments, teardowns = [], []
        for need in fixture.needs:
            if need == "request":
                param_source = f", {ast.unparse(param)}" if param is not None else ""
                emit(f"__request_{name} = {FX}.Request({label!r}{param_source})", f"request for {name}")
                arguments.append(f"request=__request_{name}")
                teardowns.append(f"__request_{name}.finish()")
            else:
                arguments.append(f"{need}={need}")
        call = f"{fixture.receiver}{fn.name}({', '.join(arguments)})"
        if fixture.yields:
            emit(f"__gen_{name} = {call}\n{held} = next(__gen_{name})", f"the fixture {name}")
            teardowns.append(f"next(__gen_{name}, None)")
        else:
            emit(f"{held} = {call}", f"the fixture {name}")
    else:
        teardowns = []
    if held != name:
        b.setup(f"{name} = {held}", scope, label=f"the fixture {name}")
    env.mark_program(name)
    return teardowns if where == scope else []


def _define(b, fixture: Fixture, scope: int) -> None:
    """Send a fixture's definition to the sandbox, once, the first time a test needs it run there (a fixture computed
    here never goes: its values, often the expected ones, stay here): a module's as the function it is, a class's
    attached to its class; before the first test body (``PlanBuilder.define``)."""
    defined = b.__dict__.setdefault("defined_fixtures", set())
    key = (fixture.owner, fixture.fn.name)
    if key in defined:
        return
    defined.add(key)
    fn = stripped(fixture.fn)
    if not fixture.owner:
        b.define(ast.unparse(fn), label=f"def {fn.name}")
        return
    hidden = f"__fixture_method_{fixture.owner}_{fn.name}"
    fn.name = hidden
    b.define(f"{ast.unparse(fn)}\n{fixture.owner}.{fixture.fn.name} = {hidden}\ndel {hidden}",
             label=f"def {fixture.owner}.{fixture.fn.name}")


def decorated_as_test(fn: ast.FunctionDef) -> bool:
    """Decorators other than pytest's (a ``functools`` wrapper, ``hypothesis.given``): the test runs whole."""
    return any(not is_pytest_decorator(d) for d in fn.decorator_list)


def call_args(fn: ast.FunctionDef) -> str:
    """The keyword arguments calling ``fn`` with the names its parameters are bound to."""
    return ", ".join(f"{a.arg}={a.arg}" for a in fn.args.args if a.arg != "self")


__all__ = ["BUILTIN", "Case", "Collection", "Fixture", "call_args", "case_label", "decorated_as_test", "fixtures_of",
           "is_fixture", "is_pytest_decorator", "mark_name", "plan_case", "stripped"]

