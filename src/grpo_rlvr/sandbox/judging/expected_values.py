"""What each name of a test means where an assert stands, and keeping the test's own values out of the sandbox.

``Env`` follows the test's statements (in the planner process, ``judging.planner``, never in the trainer): names
bound to values computed from the test text alone,
names bound to a program value, and the test's own helpers. A statement of the test that reads only the test's
own values (``expected[1][1] = 1``, ``expected.append(4)``, ``base[0] = 9`` after ``expected = base``, a loop
that fills a list, a ``setUp`` that fills ``self.expected``) is executed by Python itself (``run_here``), on
the test's real objects, so mutation and aliasing mean what they mean in Python: no second evaluator (the test is
trusted data). A mutable value of the test that code touching the program reads (``rotate(nums, 2)``,
``f(data)``) is handed to the sandbox (``handover_source``: aliases kept) and is the program's from then on: an
assert reads it back as plain data observed after the call. ``inline_constants`` writes the parent's other values
into the code sent to the sandbox as literals, so they are never names there that a program could read from its
caller's frame.
Covered: assignments (tuples, ``self.x``, augmented, subscripts, slices), mutating calls and ``del`` on the
test's values, ``for``/``if`` over them, imports, definitions, code the sandbox runs. Not covered: ``while`` and
``try`` in the test's own computations (sent to the sandbox: what they bind is the sandbox's, judged weakly).
"""

from __future__ import annotations

import ast
import builtins
import cmath
import copy
import decimal
import fractions
import importlib
import math
import operator
import random
import string
import types

from .numpy_ops import is_array
from .plain_ops import is_plain, literal_source

_FOLD_BUILTINS = {name: getattr(builtins, name) for name in (
    "abs", "all", "any", "bin", "bool", "bytearray", "bytes", "chr", "complex", "dict", "divmod", "enumerate", "filter", "float",
    "frozenset", "hex", "int", "isinstance", "len", "list", "map", "max", "min", "oct", "ord", "pow", "range",
    "reversed", "round", "set", "sorted", "str", "sum", "tuple", "type", "zip", "True", "False", "None")}
STDLIB = {"math": math, "cmath": cmath, "string": string, "random": random, "operator": operator,
          "fractions": fractions, "decimal": decimal}
# Modules the parent may use when the test imports them (never a default for an unbound name): numpy's arrays cross
# as plain data, and its comparisons are applied here (``judging.numpy_ops``).
OPTIONAL = ("numpy", "numpy.testing")


def _optional(name: str):
    """The optional module ``name`` (imported here on first use), or None when it is not one or not installed."""
    if name not in OPTIONAL:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class Unplannable(Exception):
    """The condition cannot be judged here; the message says why (it runs in the sandbox, weak)."""


# --- the environment: what a name means at a point of the test code -----------------------------------------


class Env:
    """What each name of the test code means where an assert stands.

    ``consts``: names bound to plain values the parent computed (``x = 3``, loop values, ``self.expected``),
    never bound in the sandbox (see ``inline_constants``);
    ``program``: names the test bound to a program value (``result = candidate(3)``): leaves;
    ``helpers``: names the test defined otherwise (functions, classes, modules not listed, tainted values);
    ``modules``: standard modules the test imported that the parent may use; ``functions``: names imported
    from them. Any other name belongs to the program (or is a builtin).
    """

    def __init__(self) -> None:
        self.consts: dict[str, object] = {}
        self.program: set[str] = set()
        self.helpers: set[str] = set()
        self.modules: dict[str, object] = {}
        self.functions: dict[str, object] = {}

    def taint(self, node: ast.AST) -> None:
        """Code of the test's ran in the sandbox: whatever it binds is no longer known here."""
        for name in _bound_names(node):
            self.mark_helper(name)

    def mark_program(self, name: str) -> None:
        """``name`` was handed to the sandbox, where code of the program may change it: a leaf from now on."""
        self._forget(name)
        self.program.add(name)

    def mark_helper(self, name: str) -> None:
        """``name`` is the sandbox's from now on (code there binds it): never a value judged against."""
        self._forget(name)
        self.helpers.add(name)

    def copy(self) -> Env:
        other = Env()
        other.consts, other.program, other.helpers = dict(self.consts), set(self.program), set(self.helpers)
        other.modules, other.functions = dict(self.modules), dict(self.functions)
        return other

    def _forget(self, name: str) -> None:
        self.consts.pop(name, None)
        self.program.discard(name)
        self.helpers.discard(name)
        self.modules.pop(name, None)
        self.functions.pop(name, None)

    def bind(self, node: ast.stmt) -> None:
        """Update for one setup statement of the test (run in the sandbox as well)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.asname or alias.name.split(".")[0]
                self._forget(name)
                optional = _optional(alias.name if alias.asname else alias.name.split(".")[0])
                if alias.name in STDLIB and alias.asname is None or alias.asname and alias.name in STDLIB:
                    self.modules[name] = STDLIB[alias.name]
                elif optional is not None:
                    self.modules[name] = optional
                else:
                    self.helpers.add(name)
        elif isinstance(node, ast.ImportFrom):
            module = STDLIB.get(node.module or "") or _optional(node.module or "")
            for alias in node.names:
                name = alias.asname or alias.name
                self._forget(name)
                value = getattr(module, alias.name, None) if module is not None else None
                if value is not None and is_plain(value):
                    self.consts[name] = value
                elif module is not None and callable(value):
                    self.functions[name] = value
                else:
                    self.helpers.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._forget(node.name)
            self.helpers.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._assign(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._assign(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            name = target_name(node.target)
            if name is not None:
                value = ast.BinOp(ast.Name(name, ast.Load()) if "." not in name else node.target, node.op, node.value)
                self._assign(node.target, ast.fix_missing_locations(ast.copy_location(value, node)))

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            try:
                values = list(self.fold(value))
            except Unplannable:
                values = None
            rooted = values is None and self.program_rooted(value)  # ``out, err = capsys.readouterr()``
            for i, element in enumerate(target.elts):
                name = target_name(element)
                if name is None:
                    continue
                self._forget(name)
                if values is not None and len(values) == len(target.elts):
                    self.consts[name] = values[i]
                elif rooted:
                    self.program.add(name)
                else:
                    self.helpers.add(name)
            return
        name = target_name(target)
        if name is None:
            return
        try:
            folded = self.fold(value)
        except Unplannable:
            folded = _NOTHING
        self._forget(name)
        if folded is not _NOTHING:
            self.consts[name] = folded
        elif self.program_rooted(value):
            self.program.add(name)
        else:
            self.helpers.add(name)

    # --- the test's own statements, run by Python here ------------------------------------------------------

    def run_here(self, node: ast.stmt) -> bool:
        """Execute a statement that reads only the test's own values, on a copy of them (aliases kept), and
        keep the result when every value is still plain data. False (nothing changed) when it reads anything
        else, is not a computation (a definition, an import, an assert, a loop without a bound), raises, or
        leaves a value that is not plain: the caller then sends it to the sandbox."""
        if not self._pure(node):
            return False
        names = [k for k in self.consts if "." not in k]
        self_attrs = [k for k in self.consts if k.startswith("self.")]
        state = copy.deepcopy(({k: self.consts[k] for k in names}, {k[5:]: self.consts[k] for k in self_attrs}))
        values, attrs = state
        defaults = {name: module for name, module in STDLIB.items() if not self.known(name)}
        scope = {"__builtins__": _FOLD_BUILTINS, **defaults, **self.modules, **self.functions, **values}
        view = types.SimpleNamespace(**attrs)
        if _reads_self(node):
            scope["self"] = view
        try:
            code = compile(ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[])), "<test>", "exec")
            exec(code, scope)  # noqa: S102 - the test's own text, trusted like the dataset; no program value in reach
        except Exception:  # noqa: BLE001 - any failure: the sandbox runs it, and fails where Python fails
            return False
        stored = _stored_names(node)
        after = {k: scope[k] for k in set(names) | stored if k in scope and k not in ("__builtins__", "self")}
        after.update({f"self.{k}": v for k, v in vars(view).items()})
        if not all(is_plain(v) for v in after.values()):
            return False
        for name in set(names) | set(self_attrs) | stored | {k for k in after if k.startswith("self.")}:
            if name in after:
                self._forget(name)
                self.consts[name] = after[name]
            elif name in self.consts:  # deleted
                self._forget(name)
        return True

    def _pure(self, node: ast.stmt) -> bool:
        """Only the test's own values, modules and builtins are read, and nothing but a computation is done."""
        if not isinstance(node, _HERE_STATEMENTS):
            return False
        stored = _stored_names(node)
        if "self" in stored:  # ``self = Cls()``: an object of the sandbox, never a value of the test's
            return False
        for sub in ast.walk(node):
            if isinstance(sub, ast.Lambda):
                stored.update(a.arg for a in sub.args.args)
        for sub in ast.walk(node):
            if isinstance(sub, _NOT_HERE):
                return False
            if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                dotted = f"self.{sub.attr}"
                if not (dotted in self.consts or isinstance(sub.ctx, ast.Store)):
                    return False
            elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in stored:
                if sub.id == "self" and _self_only_in_attributes(node):
                    continue
                if sub.id in self.consts or self.module(sub.id) is not None or sub.id in self.functions:
                    continue
                if sub.id in _FOLD_BUILTINS and not self.known(sub.id):
                    continue
                return False
        return True

    def mutable_consts(self, names) -> dict:
        """The test's values among ``names`` that code may change (they hold a list, dict or set), with every other
        value of the test that shares such an object with them (Python's aliasing, found by identity)."""
        picked = {n: self.consts[n] for n in names if n in self.consts and _mutable_ids(self.consts[n])}
        if not picked:
            return {}
        reach: set[int] = set().union(*(_mutable_ids(v) for v in picked.values()))
        grew = True
        while grew:
            grew = False
            for name, value in self.consts.items():
                if name not in picked and (ids := _mutable_ids(value)) & reach:
                    picked[name] = value
                    reach |= ids
                    grew = True
        return picked

    # --- classification ---------------------------------------------------------------------------------

    def module(self, name: str):
        """The standard module a name means: one the test imported, or a listed one the test left unbound
        (``math.isclose`` in a test that relies on the program's ``import math``: the parent uses the real one)."""
        if name in self.modules:
            return self.modules[name]
        return STDLIB.get(name) if not self.known(name) else None

    def known(self, name: str) -> bool:
        return name in self.consts or name in self.modules or name in self.functions or name in self.helpers \
            or name in self.program

    def program_rooted(self, node: ast.expr) -> bool:
        """A call into the program, a program name (``self.sol`` too, set to a program value in ``setUp``), or an
        attribute/subscript of one."""
        while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute) and target_name(node) in self.program:
                return True
            node = node.func if isinstance(node, ast.Call) else node.value
        if not isinstance(node, ast.Name):
            return False
        name = node.id
        return name in self.program or (not self.known(name) and not hasattr(builtins, name) and name not in STDLIB)

    def leaf_free(self, node: ast.expr) -> bool:
        """Every name it reads is the test's own constant, module or function, or a builtin."""
        bound = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Lambda):
                bound.update(a.arg for a in sub.args.args)
        held = {id(sub.value) for sub in ast.walk(node) if isinstance(sub, ast.Attribute)
                and target_name(sub) in self.consts}  # ``self`` of ``self.expected``, a value of the test's
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound:
                name = sub.id
                if name in self.consts or self.module(name) is not None or name in self.functions:
                    continue
                if name in _FOLD_BUILTINS and not self.known(name):
                    continue
                if name == "self" and id(sub) in held:
                    continue
                return False
        return True

    def fold_classes(self, node: ast.expr):
        """A class, or a tuple of classes, a leaf-free expression of the test's names (``isinstance``'s second
        argument: ``int``, ``(int, float)``, ``Fraction``)."""
        value = self.fold(node, classes=True)
        if not all(isinstance(c, type) for c in (value if isinstance(value, tuple) else (value,))):
            raise Unplannable(f"{short_source(node)} is not a class")
        return value

    def fold(self, node: ast.expr, classes: bool = False):
        """The plain value of a leaf-free expression of the test's (trusted text, evaluated here); ``classes``: a
        class of the standard library's (or a tuple of them) too."""
        if not self.leaf_free(node):
            raise Unplannable(f"{short_source(node)} depends on the program or on the test's helpers")
        defaults = {name: module for name, module in STDLIB.items() if not self.known(name)}
        scope = {"__builtins__": _FOLD_BUILTINS, **defaults, **self.modules, **self.functions, **self.consts}
        scope["self"] = types.SimpleNamespace(**{k[5:]: v for k, v in self.consts.items() if k.startswith("self.")})
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<test>", "eval")
            value = eval(code, scope)  # noqa: S307 - the test's own text, trusted like the dataset
        except Exception as e:  # noqa: BLE001 - any failure: not a value the parent can compute
            raise Unplannable(f"{short_source(node)} cannot be computed from the test alone ({type(e).__name__})") from e
        if not is_plain(value) and not (classes and _classes(value)):
            raise Unplannable(f"{short_source(node)} is not plain data")
        return value

    def module_of(self, node: ast.expr):
        """The standard module ``node`` names (``math``, or ``__import__('math')``), else None."""
        if isinstance(node, ast.Name):
            return self.module(node.id)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)):
            return STDLIB.get(node.args[0].value)
        return None


def _classes(value) -> bool:
    return all(isinstance(c, type) for c in (value if isinstance(value, tuple) else (value,)))


_NOTHING = object()
# Statements ``run_here`` may execute, and what may not occur anywhere in them.
_HERE_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Delete, ast.For, ast.If, ast.Pass)
_NOT_HERE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Global,
             ast.Nonlocal, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Return, ast.Yield,
             ast.YieldFrom, ast.Await, ast.Assert, ast.NamedExpr)
_MUTABLE = (list, dict, set, bytearray)


def _is_mutable(value) -> bool:
    """A value code may change in place: a list, dict, set, bytearray or numpy array."""
    return isinstance(value, _MUTABLE) or is_array(value)


def _stored_names(node: ast.AST) -> set[str]:
    """Plain names a statement binds or deletes (``self.x`` are read back from the view)."""
    return {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del))}


def _reads_self(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id == "self" for sub in ast.walk(node))


def _self_only_in_attributes(node: ast.AST) -> bool:
    """Every ``self`` in ``node`` is the object of an attribute (``self.expected``), never passed on bare."""
    bare = sum(isinstance(sub, ast.Name) and sub.id == "self" for sub in ast.walk(node))
    held = sum(isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self"
               for sub in ast.walk(node))
    return bare == held


def _mutable_ids(value) -> set[int]:
    """The ids of the lists, dicts and sets a plain value holds (itself included)."""
    found: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        if _is_mutable(v):
            if id(v) in found:
                continue
            found.add(id(v))
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            todo.extend(v)
    return found


def handover_source(values: dict) -> str:
    """Python source that binds each name of ``values`` in the sandbox to its value, with the objects they share
    shared there too (``expected = base`` stays one list)."""
    seen: dict[int, int] = {}
    todo = list(values.values())
    while todo:
        v = todo.pop()
        if _is_mutable(v):
            seen[id(v)] = seen.get(id(v), 0) + 1
            if seen[id(v)] > 1:
                continue
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, (list, tuple)):
            todo.extend(v)
    lines: list[str] = []
    named: dict[int, str] = {}

    def source(v) -> str:
        if id(v) in named:
            return named[id(v)]
        if type(v) is list:
            text = "[" + ", ".join(source(x) for x in v) + "]"
        elif type(v) is tuple:
            text = "(" + "".join(source(x) + ", " for x in v) + ")"
        elif type(v) is dict:
            text = "{" + ", ".join(f"{source(k)}: {source(x)}" for k, x in v.items()) + "}"
        else:
            return literal_source(v)
        if _is_mutable(v) and seen.get(id(v), 0) > 1:
            named[id(v)] = f"_shared_{len(named)}"
            lines.append(f"{named[id(v)]} = {text}")
            return named[id(v)]
        return text

    for name, value in values.items():
        lines.append(f"{name} = {source(value)}")
    if named:
        lines.append("del " + ", ".join(named.values()))
    return "\n".join(lines)


# --- keeping the test's values out of the sandbox ---------------------------------------------------------------


def _bound_names(node: ast.AST) -> set[str]:
    """Every name a piece of code binds anywhere (assignments, loop and comprehension targets, parameters,
    definitions, imports): inside it such a name may mean something else than the test's constant."""
    bound: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            bound.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            name = target_name(sub)
            if name:
                bound.add(name)
        elif isinstance(sub, ast.arg):
            bound.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in sub.names)
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            bound.update(sub.names)
    return bound


class _Inline(ast.NodeTransformer):
    def __init__(self, values: dict):
        self.values = values

    def _literal(self, node: ast.expr, name: str) -> ast.expr:
        literal = ast.parse(literal_source(self.values[name]), mode="eval").body
        return ast.copy_location(literal, node)

    def visit_Name(self, node: ast.Name):
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return self._literal(node, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute):
        name = target_name(node)
        if isinstance(node.ctx, ast.Load) and name in self.values:
            return self._literal(node, name)
        return self.generic_visit(node)


def inline_constants(node: ast.AST, env: Env) -> tuple[ast.AST, dict]:
    """``node`` with each of the test's constants it reads written as its value, and the constants it also
    binds (those must exist in the sandbox as names: returned, for the caller to send first).

    The test's constants (expected values among them) are never bound as names in the sandbox, where the
    program could read them from its caller's frame; code sent there gets them as literals, and only where
    the test's own code (a weak test) reads them.
    """
    reads = read_names(node)
    used = {name: env.consts[name] for name in reads if name in env.consts}
    bound = _bound_names(node)
    exposed = {name: value for name, value in used.items() if name in bound}
    inlined = {name: value for name, value in used.items() if name not in bound}
    if not inlined:
        return node, exposed
    return ast.fix_missing_locations(_Inline(inlined).visit(copy.deepcopy(node))), exposed


def read_names(node: ast.AST) -> set[str]:
    """The names (``x``, ``self.x``) a piece of code reads, the targets of augmented assignments included."""
    reads = set()
    for sub in ast.walk(node):
        targets = [sub.target] if isinstance(sub, ast.AugAssign) else []
        if isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load):
            targets.append(sub)
        for target in targets:
            name = target_name(target)
            if name is not None:
                reads.add(name)
    return reads


def target_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def short_source(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."
