"""What the parent does to plain values a program returned: the operators, builtins, ``math`` functions and
``str``/``list``/``dict``/``set`` methods a strong assert may apply (``judging.parent_expr``), each bounded so that no
value can make the parent build something huge or stall: sizes of products, powers, shifts, repeats and
replacements are checked first, ``//``, ``%`` and ``gcd`` of ints too large to judge quickly are refused, ``sum``
of lists is linear, every step spends from the sample's CPU budget (``judging.budget``), and a set or dict is
never built from values that mostly hash alike.
Comparisons are Python's own on plain data (``True == 1``, ``1 == 1.0``, ``1 != True`` is False): the values
crossed as plain data, so no ``__eq__`` of the program's runs here.
Covered: the operations listed here, on plain data. Not covered: anything else (``judging.parent_expr`` sends it to
the sandbox, as a weak test).
"""

from __future__ import annotations

import ast
import math
import operator

from . import numpy_ops
from .budget import quadratic, spend
from .leaf_values import Crossed, ForeignType, NotPlain, read
from .numpy_ops import is_array
from .plaindata import PLAIN_TYPES, NotPlainData, _no_flooding, encode, stdlib_type

MAX_SIZE = 10_000_000  # elements (or characters) a parent-side operation may build
MAX_INT_BITS = 1_000_000  # bits of an int a parent-side operation may build
_PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset)

# Trusted constant folding of the test's own expressions: what the test text may use there.
# --- what the parent applies to program values ---------------------------------------------------------------


def _seq_len(x) -> int:
    return len(x) if isinstance(x, (str, bytes, bytearray, list, tuple)) else 0


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


BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow, ast.LShift: _lshift,
           ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_, ast.Invert: operator.invert}


def _check_mod(a, b):
    if isinstance(a, (str, bytes)):
        raise TypeError("string formatting with % is not judged in the parent")
    quadratic(a, b, "%")
    return operator.mod(a, b)


def _floordiv(a, b):
    quadratic(a, b, "//")
    return operator.floordiv(a, b)


BINOPS[ast.Mod] = _check_mod
BINOPS[ast.FloorDiv] = _floordiv


def _hashable_members(values) -> list:
    values = list(values)
    _no_flooding(values)
    return values


def isclose_number(a, b, rel_tol=1e-9, abs_tol=0.0) -> bool:
    """``math.isclose`` as Python has it (``bool`` is an ``int``), without overflow: a huge int is never close."""
    for x in (a, b):
        if type(x) not in (bool, int, float):
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


def _sum(values, start=0):
    """``sum``, in linear time for lists and tuples too (``sum(list_of_lists, [])`` builds a new list per item)."""
    if type(start) not in (list, tuple):
        return sum(values, start)
    out = list(start)
    for value in values:
        if type(value) is not type(start):
            raise TypeError(f'can only concatenate {type(start).__name__} (not "{type(value).__name__}") to '
                            f"{type(start).__name__}")
        out.extend(value)
        if len(out) > MAX_SIZE:
            raise OverflowError("the result would be too large to build")
    return out if type(start) is list else tuple(out)


def _gcd(*values):
    """``math.gcd``, refusing ints too large to judge: its cost grows with the product of the two largest sizes
    (the first step reduces the largest modulo the next)."""
    ints = sorted((v for v in values if type(v) is int), key=int.bit_length)
    if len(ints) >= 2:
        quadratic(ints[-1], ints[-2], "gcd")
    return math.gcd(*values)


# Named functions, not lambdas: a plan crosses from the planner process by pickle.
def _set(x=()):
    return set(_hashable_members(x))


def _frozenset(x=()):
    return frozenset(_hashable_members(x))


def _reversed(x):
    return list(reversed(x))


def _enumerate(x):
    return list(enumerate(x))


def _dict(x=()):
    return dict(_hashable_members(x) if not isinstance(x, dict) else x)


# Builtins the parent applies to program values: bounded by the size of their input.
FUNCTIONS = {
    "abs": abs, "all": all, "any": any, "bool": bool, "float": float, "int": int, "len": len, "max": max,
    "min": min, "round": round, "sorted": _sorted, "sum": _sum, "str": str, "repr": repr,
    "list": list, "tuple": tuple, "set": _set, "frozenset": _frozenset, "isinstance": isinstance, "type": type,
    "reversed": _reversed, "enumerate": _enumerate, "dict": _dict,
}
MATH = {"isclose": isclose_number, "fabs": _fabs, "sqrt": math.sqrt, "floor": math.floor, "ceil": math.ceil,
        "trunc": math.trunc, "isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite, "log": math.log,
        "log2": math.log2, "log10": math.log10, "exp": math.exp, "sin": math.sin, "cos": math.cos,
        "tan": math.tan, "atan": math.atan, "atan2": math.atan2, "hypot": math.hypot, "gcd": _gcd,
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
METHOD_NAMES = set().union(*METHODS.values())
# Methods only text has: the test expects the program to return a str (or bytes). A value of another type
# (a str subclass with its own ``startswith``) fails. Other names (``get``, ``count``, ``keys``) may be the
# program's own class's API under test: on such a value its method's result counts, as a weak test.
TEXT_ONLY_METHODS = (METHODS[str] | METHODS[bytes]) - METHODS[list] - METHODS[dict] - METHODS[set]
_SINGLETONS = (None, True, False)


def call_method(receiver, name: str, args: tuple):
    """``receiver.name(*args)`` for plain data and a listed method (TypeError otherwise)."""
    if is_array(receiver):
        return numpy_ops.call_method(receiver, name, args)
    kind = type(receiver)
    if name not in METHODS.get(kind, ()):
        raise TypeError(f"{kind.__name__}.{name} is not judged in the parent")
    if name == "replace" and len(args) >= 2 and _seq_len(args[0]) < _seq_len(args[1]):
        if _seq_len(receiver) * _seq_len(args[1]) > MAX_SIZE:
            raise OverflowError("the result would be too large to build")
    if name == "join":
        args = (list(args[0]),)
    return getattr(receiver, name)(*args)  # keys/values/items: the views, which compare as Python's do


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
    if value is math.nan:
        return "__import__('math').nan"  # the object itself: a container holding it equals another holding it
    if t is float and not math.isfinite(value):
        return f"float({str(value)!r})"
    if t is not float and t is stdlib_type("q"):
        return f"__import__('fractions').Fraction({value.numerator!r}, {value.denominator!r})"
    if t is not float and t is stdlib_type("D"):
        return f"__import__('decimal').Decimal({str(value)!r})"
    if is_array(value):
        return f"__import__('numpy').array({literal_source(value.tolist())}, dtype={str(value.dtype.str)!r})"
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


CMP_NAMES = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
              ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def _member(item, container) -> bool:
    """Python's ``in`` on plain data, refusing only a set or dict whose keys mostly hash alike (a stall)."""
    if isinstance(container, (set, frozenset, dict)):
        _no_flooding(list(container))
    return item in container


def _compare(op: str, a, b) -> bool:
    """Python's own comparison of two plain values: ``True == 1``, ``1 == 1.0``, ``1 != True`` is False. Identity
    is asked only of singletons and types (``judging.parent_expr`` sends any other ``is`` to the sandbox)."""
    if op in ("is", "is not"):
        return (a is b) if op == "is" else (a is not b)
    if op in ("in", "not in"):
        found = _member(a, b)
        return found if op == "in" else not found
    return _OPERATORS[op](a, b)


_COSTLY = frozenset({"bin", "call", "method", "cmp", "display", "dict", "allany", "isinstance"})  # what may cost more than its operands' size
_OPERATORS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge}


def evaluate(tree: tuple, values: list):
    """The value of a parent-side tree (``judging.parent_expr``) over its leaves' values (plain data or the markers of
    ``judging.leaf_values``, read only where the tree reads them, so a part Python would not evaluate never fails)."""
    kind = tree[0]
    if kind in _COSTLY:
        spend()  # the sample's CPU budget (judging.budget), before each step that may take long
    if kind == "const":
        return tree[2]
    if kind == "leaf":
        return read(values[tree[1]], tree[1])
    if kind == "cmp":  # Python's chain: ``a < b < c`` is ``a < b and b < c``; one comparison's own result
        left, result = evaluate(tree[1], values), True
        for k, (op, right_tree) in enumerate(tree[2]):
            right = evaluate(right_tree, values)
            result = _compare(op, left, right)
            if k + 1 < len(tree[2]) and not result:
                return result
            left = right
        return result
    if kind == "bool":
        result = None
        for part in tree[2]:
            result = evaluate(part, values)
            if (tree[1] == "and") != bool(result):
                return result
        return result
    if kind == "unary":
        return not truth(tree[2], values) if tree[1] is operator.not_ else tree[1](evaluate(tree[2], values))
    if kind == "bin":
        return tree[1](evaluate(tree[2], values), evaluate(tree[3], values))
    if kind == "if":
        return evaluate(tree[2] if truth(tree[1], values) else tree[3], values)
    if kind in _NODES:
        return _NODES[kind](tree, values)
    raise AssertionError(f"unknown node {kind!r}")


def truth(tree: tuple, values: list) -> bool:
    """``bool()`` of a tree, as Python takes it where it tests a condition; a leaf that is not plain data counts as
    its own ``__bool__`` made it (``assert stack``)."""
    kind = tree[0]
    if kind == "leaf":
        value = values[tree[1]]
        if type(value) is NotPlain and value.truth is not None:
            return value.truth
        return bool(read(value, tree[1]))
    if kind == "unary" and tree[1] is operator.not_:
        return not truth(tree[2], values)
    if kind == "truth":
        return truth(tree[1], values)
    if kind == "bool":
        wanted = tree[1] == "and"
        for part in tree[2]:
            if truth(part, values) != wanted:
                return not wanted
        return wanted
    if kind == "if":
        return truth(tree[2] if truth(tree[1], values) else tree[3], values)
    return bool(evaluate(tree, values))


def _subscript(tree: tuple, values: list):
    container = evaluate(tree[1], values)
    if not isinstance(container, (str, bytes, bytearray, list, tuple, dict)):
        raise TypeError(f"a {type(container).__name__} cannot be subscripted here")
    return container[evaluate(tree[2], values)]


def _slice(tree: tuple, values: list):
    return slice(*[None if p is None else evaluate(p, values) for p in tree[1:]])


def _display(tree: tuple, values: list):
    items = [evaluate(x, values) for x in tree[2]]
    return {"list": list, "tuple": tuple, "set": _set, "iter": iter}[tree[1]](items)


def _dict_node(tree: tuple, values: list):
    keys = _hashable_members(evaluate(k, values) for k in tree[1])
    return dict(zip(keys, (evaluate(v, values) for v in tree[2]), strict=True))


def _call(tree: tuple, values: list):
    args = [evaluate(a, values) for a in tree[2]]
    kwargs = {k: evaluate(v, values) for k, v in tree[3]}
    return tree[1](*args, **kwargs)


def _method(tree: tuple, values: list):
    receiver = evaluate(tree[1], values)
    return call_method(receiver, tree[2], tuple(evaluate(a, values) for a in tree[3]))


def _all_any(tree: tuple, values: list) -> bool:
    """``("allany", "all"|"any", how, parts)``: ``how`` "lazy" (a generator's elements, each evaluated only until
    the answer is known, as ``all`` and ``any`` consume a generator), "eager" (a list's elements: all evaluated
    first, as Python builds the list) or "iter" (one part: an iterable value)."""
    wanted = tree[1] == "all"
    if tree[2] == "iter":
        iterable = evaluate(tree[3][0], values)
        if not isinstance(iterable, (str, bytes, bytearray, list, tuple, dict, set, frozenset)):
            raise TypeError(f"'{type(iterable).__name__}' object is not iterable")
        elements = [("const", None, x) for x in iterable]
    elif tree[2] == "eager":
        elements = [("const", None, evaluate(part, values)) for part in tree[3]]
    else:
        elements = tree[3]
    for element in elements:
        spend()
        if truth(element, values) != wanted:
            return not wanted
    return wanted


def _truth_node(tree: tuple, values: list) -> bool:
    return truth(tree[1], values)


def _isinstance(tree: tuple, values: list) -> bool:
    """``("isinstance", operand, types)``: Python's ``isinstance`` with plain built-in types (or a tuple of them). A
    leaf that crossed as a subclass is an instance of what its built-in is; one that only compares as a built-in (a
    numpy scalar, a keys view) is none of them; one that is not plain data is what the sandbox found it to be."""
    classes = evaluate(tree[2], values)
    wanted = classes if isinstance(classes, tuple) else (classes,)
    if not all(isinstance(c, type) for c in wanted):
        raise TypeError("isinstance() arg 2 must be a type or tuple of types")
    operand = tree[1]
    if operand[0] == "leaf":
        value = values[operand[1]]
        if type(value) is NotPlain:
            return any(c.__name__ in value.isa and PLAIN_TYPES.get(c.__name__) is c for c in wanted)
        if type(value) is Crossed and value.kind == "~":
            return False
    return isinstance(evaluate(operand, values), classes)


def _type(tree: tuple, values: list):
    """``("type", operand)``: the operand's type; a leaf that is not exactly a plain built-in has a type of its own
    (``ForeignType``), equal to none of them."""
    operand = tree[1]
    if operand[0] == "leaf":
        value = values[operand[1]]
        if type(value) is Crossed:
            return ForeignType(value.name)
        if type(value) is NotPlain:
            return ForeignType(value.what)
    return type(evaluate(operand, values))


def _kinstance(tree: tuple, values: list) -> bool:
    """``("kinstance", leaf)``: ``isinstance`` with a class of the program's, from the names of the value's class and
    its ancestors (``isolation.child._instance_facts``); an abstract class's own answer (the test is then weak)."""
    facts = evaluate(tree[1], values)
    if not instance_facts_ok(facts):
        raise TypeError("isinstance() could not be decided")
    if facts["abstract"]:
        return facts["result"]
    return any(name in facts["mro"] for name in facts["classes"])


def instance_facts_ok(facts) -> bool:
    return (type(facts) is dict and type(facts.get("mro")) is list and type(facts.get("classes")) is list
            and all(type(n) is str for n in facts["mro"] + facts["classes"]) and type(facts.get("abstract")) is bool
            and (facts.get("result") in (True, False) if facts["abstract"] else facts.get("result") is None))


_NODES = {"kinstance": _kinstance, "sub": _subscript, "slice": _slice, "display": _display, "dict": _dict_node, "call": _call,
          "method": _method, "allany": _all_any, "truth": _truth_node, "isinstance": _isinstance, "type": _type}
