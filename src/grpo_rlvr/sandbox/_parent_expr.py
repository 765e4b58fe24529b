"""Asserts judged in the parent: which parts of a condition the sandbox evaluates, and the rest, done here.

A condition is *strong* when the parent compares plain data that the program returned against a value the
parent computed from the test text alone. ``plan_condition`` splits the condition into **leaves** - calls
into the program (``candidate(3)``, ``Solution().two_sum([2, 7], 9)``, a name the program defined) - which
the sandbox evaluates and returns as plain data, and everything around them, which this process evaluates
on those values with its own builtins: comparisons (``==`` strict on types, ``in``, ``<``...), arithmetic,
``not``/``and``/``or``, subscripts, displays, the builtins in ``FUNCTIONS`` (``len``, ``sorted``, ``abs``,
``set``...), ``math`` functions (``math.isclose``...) and the methods of plain ``str``/``list``/``dict``/... in
``METHODS`` (``shout('abc').startswith('ABC')``: the program returns the string, the parent calls
``startswith``; a value that is not a plain ``str`` fails there, while for names a class of the program may
define - ``get``, ``count``, ``keys``... - the program's own method ran in the sandbox and that test is weak). Parts without a leaf are the test's own values: literals, names the test bound to
them, and expressions of those and the standard library (``2.0 / 3.0``, ``math.sqrt(2)``, ``sum([i ** 2 for
i in lst])``), evaluated here once when the plan is made. Every comparison must have such a side: ``f(3) ==
g(3)`` compares the program with itself. Anything else - a helper the test defines (the program could patch
what it calls), a method of a value that is not plain data, a builtin not listed here, a comprehension over
program values - makes the condition weak (``Unplannable``): it then runs whole in the sandbox, counted and
labelled as weak. Evaluation here is bounded: sizes of products, powers and repeats are checked first, and a
set is never built from values that mostly hash alike.
Covered: the shapes above. Not covered: short-circuiting (every leaf of a condition is evaluated, left to
right, before the parent decides), exceptions as expected outcomes (``pytest.raises`` stays weak).
"""

from __future__ import annotations

import ast
import builtins
import cmath
import copy
import math
import operator
import random
import string
from dataclasses import dataclass

from ._plaindata import NotPlainData, _no_flooding, encode, short_repr, strict_equal

MAX_SIZE = 10_000_000  # elements (or characters) a parent-side operation may build
MAX_INT_BITS = 1_000_000  # bits of an int a parent-side operation may build
_PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset)

# Trusted constant folding of the test's own expressions: what the test text may use there.
_FOLD_BUILTINS = {name: getattr(builtins, name) for name in (
    "abs", "all", "any", "bin", "bool", "bytes", "chr", "complex", "dict", "divmod", "enumerate", "filter", "float",
    "frozenset", "hex", "int", "isinstance", "len", "list", "map", "max", "min", "oct", "ord", "pow", "range",
    "reversed", "round", "set", "sorted", "str", "sum", "tuple", "type", "zip", "True", "False", "None")}
STDLIB = {"math": math, "cmath": cmath, "string": string, "random": random, "operator": operator}


class Unplannable(Exception):
    """The condition cannot be judged here; the message says why (it runs in the sandbox, weak)."""


# --- what the parent applies to program values ---------------------------------------------------------------


def _seq_len(x) -> int:
    return len(x) if isinstance(x, (str, bytes, list, tuple)) else 0


def _mul(a, b):
    for seq, n in ((a, b), (b, a)):
        if _seq_len(seq) and type(n) is int and _seq_len(seq) * max(n, 0) > MAX_SIZE:
            raise OverflowError("the result would be too large to build")
    if type(a) is int and type(b) is int and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise OverflowError("the product would be too large")
    return a * b


def _pow(a, b, mod=None):
    if type(b) is int and b > 0 and type(a) is int and mod is None and abs(a) > 1 and a.bit_length() * b > MAX_INT_BITS:
        raise OverflowError("the power would be too large")
    return pow(a, b, mod) if mod is not None else a ** b


def _lshift(a, b):
    if type(b) is int and b > MAX_INT_BITS:
        raise OverflowError("the shift would be too large")
    return a << b


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow, ast.LShift: _lshift,
           ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}


def _check_mod(a, b):
    if isinstance(a, (str, bytes)):
        raise TypeError("string formatting with % is not judged in the parent")
    return operator.mod(a, b)


_BINOPS[ast.Mod] = _check_mod


def _hashable_members(values) -> list:
    values = list(values)
    _no_flooding(values)
    return values


def _isclose(a, b, rel_tol=1e-9, abs_tol=0.0) -> bool:
    """``math.isclose`` for int/float only (never bool), without overflow: a huge int is never close."""
    for x in (a, b):
        if type(x) not in (int, float):
            raise TypeError(f"isclose of a {type(x).__name__}")
    try:
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    except OverflowError:
        return False


def _fabs(x):
    if type(x) not in (int, float):
        raise TypeError(f"fabs of a {type(x).__name__}")
    try:
        return math.fabs(x)
    except OverflowError:
        return math.inf


def _sorted(x, reverse=False):
    return sorted(x, reverse=reverse)


# Builtins the parent applies to program values: bounded by the size of their input.
FUNCTIONS = {
    "abs": abs, "all": all, "any": any, "bool": bool, "float": float, "int": int, "len": len, "max": max,
    "min": min, "round": round, "sorted": _sorted, "sum": sum, "str": str, "repr": repr,
    "list": list, "tuple": tuple, "set": lambda x=(): set(_hashable_members(x)),
    "frozenset": lambda x=(): frozenset(_hashable_members(x)), "isinstance": isinstance, "type": type,
    "reversed": lambda x: list(reversed(x)), "enumerate": lambda x: list(enumerate(x)),
    "dict": lambda x=(): dict(_hashable_members(x) if not isinstance(x, dict) else x),
}
MATH = {"isclose": _isclose, "fabs": _fabs, "sqrt": math.sqrt, "floor": math.floor, "ceil": math.ceil,
        "trunc": math.trunc, "isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite, "log": math.log,
        "log2": math.log2, "log10": math.log10, "exp": math.exp, "sin": math.sin, "cos": math.cos,
        "tan": math.tan, "atan": math.atan, "atan2": math.atan2, "hypot": math.hypot, "gcd": math.gcd,
        "fsum": math.fsum, "copysign": math.copysign, "degrees": math.degrees, "radians": math.radians}
# Methods of plain data the parent calls itself (none mutates, none grows its result past its input's size
# times a constant of the test's).
METHODS = {
    str: {"startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines",
          "count", "find", "rfind", "index", "rindex", "isdigit", "isalpha", "isalnum", "isspace", "islower",
          "isupper", "istitle", "isdecimal", "isnumeric", "casefold", "title", "capitalize", "swapcase", "replace",
          "join", "partition", "rpartition"},
    bytes: {"startswith", "endswith", "lower", "upper", "strip", "split", "count", "find", "decode"},
    list: {"count", "index"}, tuple: {"count", "index"},
    dict: {"keys", "values", "items", "get"},
    set: {"issubset", "issuperset", "isdisjoint", "union", "intersection", "difference", "symmetric_difference"},
    frozenset: {"issubset", "issuperset", "isdisjoint", "union", "intersection", "difference",
                "symmetric_difference"},
}
_METHOD_NAMES = set().union(*METHODS.values())
# Methods only text has: the test expects the program to return a str (or bytes). A value of another type
# (a str subclass with its own ``startswith``) fails. Other names (``get``, ``count``, ``keys``) may be the
# program's own class's API under test: on such a value its method's result counts, as a weak test.
TEXT_ONLY_METHODS = (METHODS[str] | METHODS[bytes]) - METHODS[list] - METHODS[dict] - METHODS[set]
_SINGLETONS = (None, True, False)


def call_method(receiver, name: str, args: tuple):
    """``receiver.name(*args)`` for plain data and a listed method (TypeError otherwise)."""
    kind = type(receiver)
    if name not in METHODS.get(kind, ()):
        raise TypeError(f"{kind.__name__}.{name} is not judged in the parent")
    if name == "replace" and len(args) >= 2 and _seq_len(args[0]) < _seq_len(args[1]):
        if _seq_len(receiver) * _seq_len(args[1]) > MAX_SIZE:
            raise OverflowError("the result would be too large to build")
    if name == "join":
        args = (list(args[0]),)
    result = getattr(receiver, name)(*args)
    if name in ("keys", "values", "items"):
        return list(result)
    return result


def is_plain(value) -> bool:
    if isinstance(value, type) and value in _PLAIN_TYPES:
        return True
    try:
        encode(value)
    except (NotPlainData, RecursionError):
        return False
    return True


def literal_source(value) -> str:
    """Python source that builds the plain ``value`` (for the sandbox: loop values, method arguments)."""
    t = type(value)
    if t is float and not math.isfinite(value):
        return f"float({str(value)!r})"
    if t is complex:
        return f"complex({literal_source(value.real)}, {literal_source(value.imag)})"
    if t in (list, tuple):
        inner = ", ".join(literal_source(v) for v in value)
        return f"[{inner}]" if t is list else f"({inner}{',' if len(value) == 1 else ''})"
    if t in (set, frozenset):
        inner = "{" + ", ".join(literal_source(v) for v in value) + "}" if value else "()"
        return f"{t.__name__}({inner})"
    if t is dict:
        return "{" + ", ".join(f"{literal_source(k)}: {literal_source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, type):
        return value.__name__ if value is not type(None) else "type(None)"
    return repr(value)


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
                if alias.name in STDLIB and alias.asname is None or alias.asname and alias.name in STDLIB:
                    self.modules[name] = STDLIB[alias.name]
                else:
                    self.helpers.add(name)
        elif isinstance(node, ast.ImportFrom):
            module = STDLIB.get(node.module or "")
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
            name = _target_name(node.target)
            if name is not None:
                value = ast.BinOp(ast.Name(name, ast.Load()) if "." not in name else node.target, node.op, node.value)
                self._assign(node.target, ast.fix_missing_locations(ast.copy_location(value, node)))

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            try:
                values = list(self.fold(value))
            except Unplannable:
                values = None
            for i, element in enumerate(target.elts):
                name = _target_name(element)
                if name is None:
                    continue
                self._forget(name)
                if values is not None and len(values) == len(target.elts):
                    self.consts[name] = values[i]
                else:
                    self.helpers.add(name)
            return
        name = _target_name(target)
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
        """A call into the program, a program name, or an attribute/subscript of one."""
        while isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)):
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
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in bound:
                name = sub.id
                if name in self.consts or self.module(name) is not None or name in self.functions:
                    continue
                if name in _FOLD_BUILTINS and not self.known(name):
                    continue
                return False
        return True

    def fold(self, node: ast.expr):
        """The plain value of a leaf-free expression of the test's (trusted text, evaluated here)."""
        if not self.leaf_free(node):
            raise Unplannable(f"{_short(node)} depends on the program or on the test's helpers")
        defaults = {name: module for name, module in STDLIB.items() if not self.known(name)}
        scope = {"__builtins__": _FOLD_BUILTINS, **defaults, **self.modules, **self.functions, **self.consts}
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(body=node)), "<test>", "eval")
            value = eval(code, scope)  # noqa: S307 - the test's own text, trusted like the dataset
        except Exception as e:  # noqa: BLE001 - any failure: not a value the parent can compute
            raise Unplannable(f"{_short(node)} cannot be computed from the test alone ({type(e).__name__})") from e
        if not is_plain(value):
            raise Unplannable(f"{_short(node)} is not plain data")
        return value

    def module_of(self, node: ast.expr):
        """The standard module ``node`` names (``math``, or ``__import__('math')``), else None."""
        if isinstance(node, ast.Name):
            return self.module(node.id)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__"
                and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)):
            return STDLIB.get(node.args[0].value)
        return None


_NOTHING = object()


# --- keeping the test's values out of the sandbox ---------------------------------------------------------------


def _bound_names(node: ast.AST) -> set[str]:
    """Every name a piece of code binds anywhere (assignments, loop and comprehension targets, parameters,
    definitions, imports): inside it such a name may mean something else than the test's constant."""
    bound: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            bound.add(sub.id)
        elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            name = _target_name(sub)
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
        name = _target_name(node)
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
    reads = {sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load)}
    reads |= {name for sub in ast.walk(node) if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load)
              and (name := _target_name(sub))}
    used = {name: env.consts[name] for name in reads if name in env.consts}
    bound = _bound_names(node)
    exposed = {name: value for name, value in used.items() if name in bound}
    inlined = {name: value for name, value in used.items() if name not in bound}
    if not inlined:
        return node, exposed
    return ast.fix_missing_locations(_Inline(inlined).visit(copy.deepcopy(node))), exposed


def _target_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


# --- the parent-side expression -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """A part the sandbox evaluates: an expression (``method`` None), or a listed method called on the value of
    an earlier leaf (``receiver``), with arguments the test gave (``args_source``, ``args``)."""

    source: str
    receiver: int = -1
    method: str = ""
    args_source: str = "()"
    args: tuple = ()


@dataclass(frozen=True)
class Strong:
    """A condition the parent judges: ``tree`` (nested tuples, see ``_evaluate``) over leaf values."""

    tree: tuple
    leaves: tuple[Leaf, ...]
    text: str

    def probe(self) -> list:
        """The sandbox's side: ``["e", source]`` or ``["m", receiver, method, args source]`` per leaf."""
        return [["e", x.source] if not x.method else ["m", x.receiver, x.method, x.args_source] for x in self.leaves]

    def judge(self, values: list) -> tuple[bool, str, bool]:
        """(passed, why not, weak) for the leaf values (plain data, or ``NOT_PLAIN`` markers)."""
        values = list(values)
        weak = False
        for i, leaf in enumerate(self.leaves):
            if leaf.method:
                receiver = values[leaf.receiver]
                if not isinstance(receiver, _NotPlain) and type(receiver) in METHODS:
                    try:
                        values[i] = call_method(receiver, leaf.method, leaf.args)
                    except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError) as e:
                        return False, f"{leaf.source} raised {type(e).__name__}: {e}", False
                elif leaf.method in TEXT_ONLY_METHODS:
                    what = receiver.what if isinstance(receiver, _NotPlain) else f"a {type(receiver).__name__}"
                    return False, f"{self.leaves[leaf.receiver].source} returned {what}, not text", False
                elif not isinstance(values[i], _NotPlain):
                    weak = True  # a method of the program's own object ran in the sandbox
        used = leaf_indices(self.tree)
        for i, leaf in enumerate(self.leaves):
            if isinstance(values[i], _NotPlain) and i in used:
                return False, f"{leaf.source} returned {values[i].what}, not plain data", weak
        try:
            ok = bool(_evaluate(self.tree, values))
        except (ArithmeticError, TypeError, ValueError, LookupError, RecursionError, MemoryError) as e:
            return False, f"assert {self.text} raised {type(e).__name__}: {e}"[:300], weak
        if ok:
            return True, "", weak
        return False, self._why(values), weak

    def _why(self, values: list) -> str:
        tree = self.tree
        if tree[0] == "cmp" and len(tree[2]) == 1 and tree[1][0] == "leaf" and tree[2][0][1][0] == "const":
            op, (_, _, expected) = tree[2][0][0], tree[2][0][1]
            got = values[tree[1][1]]
            label = self.leaves[tree[1][1]].source
            if op in ("==", "is"):
                g, w = short_repr(got), short_repr(expected)
                if g == w or type(got) is not type(expected):
                    g, w = f"{g} ({type(got).__name__})", f"{w} ({type(expected).__name__})"
                return f"{label} returned {g}, expected {w}"
            if op in ("!=", "is not"):
                return f"{label} returned {short_repr(got)}, expected anything else"
        if tree[0] == "call" and tree[1] is _isclose and tree[2][0][0] == "leaf" and tree[2][1][0] == "const":
            label = self.leaves[tree[2][0][1]].source
            return f"{label} returned {short_repr(values[tree[2][0][1]])}, expected about {tree[2][1][2]!r}"
        if tree[0] == "leaf":
            return f"{self.leaves[tree[1]].source} is {short_repr(values[tree[1]])}, expected true"
        if tree[0] == "unary" and tree[1] is operator.not_ and tree[2][0] == "leaf":
            return f"{self.leaves[tree[2][1]].source} is {short_repr(values[tree[2][1]])}, expected false"
        got = ", ".join(f"{leaf.source} returned {short_repr(values[i], 40)}" for i, leaf in enumerate(self.leaves))
        return f"assert {self.text} failed: {got}"[:300]


class _NotPlain:
    def __init__(self, what: str):
        self.what = what


def not_plain(what: str) -> _NotPlain:
    """The marker for a leaf whose value the sandbox could not send as plain data."""
    return _NotPlain(what)


def leaf_indices(tree) -> set[int]:
    """The leaves a tree reads (constants are not walked: a test's tuple may look like a node)."""
    found: set[int] = set()

    def walk(node) -> None:
        if not isinstance(node, tuple) or not node or node[0] == "const":
            return
        if node[0] == "leaf" and len(node) == 2 and type(node[1]) is int:
            found.add(node[1])
            return
        for part in node:
            if isinstance(part, tuple):
                walk(part)

    walk(tree)
    return found


_CMP_NAMES = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
              ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def _member(item, container) -> bool:
    if isinstance(container, (str, bytes)):
        if type(item) is not type(container):
            raise TypeError(f"'in <{type(container).__name__}>' requires a {type(container).__name__}")
        return item in container
    if isinstance(container, (set, frozenset, dict)):
        try:
            hash(item)
        except TypeError:
            return False
        keys = {k: k for k in container}
        return item in keys and strict_equal(keys[item], item)
    if isinstance(container, (list, tuple)):
        return any(strict_equal(item, x) for x in container)
    raise TypeError(f"'in' on a {type(container).__name__}")


def _compare(op: str, a, b) -> bool:
    if op in ("==", "!="):
        same = a is b if isinstance(a, type) or isinstance(b, type) else strict_equal(a, b)
        return same if op == "==" else not same
    if op in ("is", "is not"):
        same = a is b if isinstance(b, type) or isinstance(a, type) else strict_equal(a, b)
        return same if op == "is" else not same
    if op in ("in", "not in"):
        found = _member(a, b)
        return found if op == "in" else not found
    return {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}[op](a, b)


def _evaluate(tree: tuple, values: list):
    kind = tree[0]
    if kind == "const":
        return tree[2]
    if kind == "leaf":
        return values[tree[1]]
    if kind == "cmp":
        left = _evaluate(tree[1], values)
        for op, right_tree in tree[2]:
            right = _evaluate(right_tree, values)
            if not _compare(op, left, right):
                return False
            left = right
        return True
    if kind == "bool":
        result = None
        for part in tree[2]:
            result = _evaluate(part, values)
            if (tree[1] == "and") != bool(result):
                return result
        return result
    if kind == "unary":
        return tree[1](_evaluate(tree[2], values))
    if kind == "bin":
        return tree[1](_evaluate(tree[2], values), _evaluate(tree[3], values))
    if kind == "if":
        return _evaluate(tree[2] if _evaluate(tree[1], values) else tree[3], values)
    if kind == "sub":
        container = _evaluate(tree[1], values)
        if not isinstance(container, (str, bytes, list, tuple, dict)):
            raise TypeError(f"a {type(container).__name__} cannot be subscripted here")
        index = _evaluate(tree[2], values)
        return container[index]
    if kind == "slice":
        parts = [None if p is None else _evaluate(p, values) for p in tree[1:]]
        return slice(*parts)
    if kind == "display":
        items = [_evaluate(x, values) for x in tree[2]]
        return {"list": list, "tuple": tuple, "set": lambda v: set(_hashable_members(v))}[tree[1]](items)
    if kind == "dict":
        keys = _hashable_members(_evaluate(k, values) for k in tree[1])
        return dict(zip(keys, (_evaluate(v, values) for v in tree[2]), strict=True))
    if kind == "call":
        args = [_evaluate(a, values) for a in tree[2]]
        kwargs = {k: _evaluate(v, values) for k, v in tree[3]}
        return tree[1](*args, **kwargs)
    if kind == "method":
        receiver = _evaluate(tree[1], values)
        return call_method(receiver, tree[2], tuple(_evaluate(a, values) for a in tree[3]))
    raise AssertionError(f"unknown node {kind!r}")


class _Builder:
    def __init__(self, env: Env):
        self.env = env
        self.leaves: list[Leaf] = []

    def leaf(self, node: ast.expr) -> tuple:
        sent, exposed = inline_constants(node, self.env)
        if exposed:
            raise Unplannable(f"{_short(node)} binds a name the test also uses as a value")
        self.leaves.append(Leaf(ast.unparse(sent)))
        return ("leaf", len(self.leaves) - 1)

    def build(self, node: ast.expr) -> tuple:
        env = self.env
        dotted = _target_name(node) if isinstance(node, ast.Attribute) else None
        if dotted in env.consts:  # self.expected, set in setUp
            return ("const", None, env.consts[dotted])
        if dotted in env.program:
            return self.leaf(node)
        if env.leaf_free(node):
            return ("const", None, env.fold(node))
        if isinstance(node, ast.Call):
            return self._call(node)
        if env.program_rooted(node):
            return self.leaf(node)
        approx = self._approx(node)
        if approx is not None:
            return approx
        if isinstance(node, ast.Compare):
            return ("cmp", self.build(node.left),
                    tuple((_CMP_NAMES[type(op)], self.build(c)) for op, c in zip(node.ops, node.comparators,
                                                                                 strict=True)))
        if isinstance(node, ast.BoolOp):
            return ("bool", "and" if isinstance(node.op, ast.And) else "or", tuple(self.build(v) for v in node.values))
        if isinstance(node, ast.UnaryOp):
            return ("unary", _UNARY[type(node.op)], self.build(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return ("bin", _BINOPS[type(node.op)], self.build(node.left), self.build(node.right))
        if isinstance(node, ast.IfExp):
            return ("if", self.build(node.test), self.build(node.body), self.build(node.orelse))
        if isinstance(node, ast.Subscript):
            return ("sub", self.build(node.value), self.build(node.slice))
        if isinstance(node, ast.Slice):
            return ("slice", *(None if p is None else self.build(p) for p in (node.lower, node.upper, node.step)))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            kind = {ast.List: "list", ast.Tuple: "tuple", ast.Set: "set"}[type(node)]
            return ("display", kind, tuple(self.build(e) for e in node.elts))
        if isinstance(node, ast.Dict) and None not in node.keys:
            return ("dict", tuple(self.build(k) for k in node.keys), tuple(self.build(v) for v in node.values))
        if isinstance(node, ast.Name) and node.id in env.helpers:
            raise Unplannable(f"{node.id} is defined by the test (it runs in the sandbox)")
        raise Unplannable(f"{_short(node)} is not judged in the parent")

    def _approx(self, node: ast.expr) -> tuple | None:
        """``X == pytest.approx(NUMBER)`` (either side): ``isclose`` with pytest's tolerances (rel 1e-6, abs 1e-12)."""
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)):
            return None
        for probe, other in ((node.left, node.comparators[0]), (node.comparators[0], node.left)):
            func = other.func if isinstance(other, ast.Call) else None
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name == "approx" and len(other.args) == 1 and not other.keywords:
                expected = self.env.fold(other.args[0])
                if type(expected) not in (int, float):
                    raise Unplannable("pytest.approx of something other than a number")
                kwargs = (("rel_tol", ("const", None, 1e-6)), ("abs_tol", ("const", None, 1e-12)))
                return ("call", _isclose, (self.build(probe), ("const", None, expected)), kwargs)
        return None

    def _call(self, node: ast.Call) -> tuple:
        env, func = self.env, node.func
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unplannable(f"{_short(node)}: starred arguments")
        fn = None
        if isinstance(func, ast.Name) and func.id in FUNCTIONS and not env.known(func.id):
            fn = FUNCTIONS[func.id]
        elif isinstance(func, ast.Name) and func.id in env.functions and func.id in MATH:
            fn = MATH[func.id] if env.functions[func.id] is getattr(math, func.id, None) else None
        elif isinstance(func, ast.Attribute) and env.module_of(func.value) is math and func.attr in MATH:
            fn = MATH[func.attr]
        if fn is not None:
            args = tuple(self.build(a) for a in node.args)
            kwargs = tuple((k.arg, ("const", None, env.fold(k.value))) for k in node.keywords)
            if fn is _isclose and len(args) >= 2 and all(leaf_indices(a) for a in args[:2]):
                raise Unplannable(f"{_short(node)} compares two values of the program")
            return ("call", fn, args, kwargs)
        if isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES and env.module_of(func.value) is None:
            if node.keywords:
                raise Unplannable(f"{_short(node)}: keyword arguments of a method")
            if env.program_rooted(func.value):  # the program's value: its method is called in the sandbox too
                args = tuple(env.fold(a) for a in node.args)
                receiver = self.leaf(func.value)[1]
                self.leaves.append(Leaf(f"{self.leaves[receiver].source}.{func.attr}(...)", receiver, func.attr,
                                        literal_source(args), args))
                return ("leaf", len(self.leaves) - 1)
            return ("method", self.build(func.value), func.attr, tuple(self.build(a) for a in node.args))
        if env.program_rooted(node):
            return self.leaf(node)
        raise Unplannable(f"{_short(func)}() is not judged in the parent (it runs in the sandbox)")


def _comparisons_have_a_test_side(tree) -> bool:
    """Every comparison has a side without leaves: comparing the program with itself is no test."""
    if not isinstance(tree, tuple) or (tree and tree[0] == "const"):
        return True
    if tree and tree[0] == "cmp":
        operands = [tree[1]] + [right for _, right in tree[2]]
        for a, b in zip(operands, operands[1:], strict=False):
            if leaf_indices(a) and leaf_indices(b):
                return False
    return all(_comparisons_have_a_test_side(x) for x in tree if isinstance(x, tuple))


def plan_condition(test: ast.expr, env: Env) -> Strong:
    """Split an assert condition into leaves for the sandbox and the parent's part.

    Raises:
        Unplannable: it cannot be judged in the parent; the message says why.
    """
    builder = _Builder(env)
    tree = builder.build(test)
    if not builder.leaves:
        raise Unplannable("the assert checks nothing of the program")
    if not _comparisons_have_a_test_side(tree):
        raise Unplannable(f"{_short(test)} compares the program with itself")
    return Strong(tree, tuple(builder.leaves), _short(test))
