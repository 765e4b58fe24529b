"""The wire format for values that cross out of the untrusted process.

The untrusted process encodes a value as tagged JSON made only of builtin types (``encode``); the parent
decodes it with a validating decoder (``decode``) that never imports, unpickles or calls anything: what comes
out is made of builtin types only (a subclass of ``int`` is not plain data at all), so the parent compares the
values with Python's own ``==`` and no method of the program's runs there.

Decoding is bounded, since the bytes come from model code: nesting (``MAX_DEPTH``), nodes
(``MAX_NODES``), CPU time of this thread (``MAX_DECODE_CPU_S``), and hash flooding (a set or dict whose
members share one hash, which would make building it quadratic: more than ``MAX_SAME_HASH`` alike).
Past a bound, ``decode`` raises ``ValueLimit``: that test fails, with the bound in the reason.

In the sandbox, ``encode_as_python`` sends a value as the built-in it behaves as when Python compares it: a
``Counter``, ``defaultdict`` or ``OrderedDict`` as a dict, a ``namedtuple`` as a tuple, a subclass of ``int``,
``str``, ``list``... as its built-in value (read with the built-in type's own methods, so the subclass's own
``__eq__``, ``__iter__`` or ``items`` decides nothing), a numpy scalar by its ``.item()``, a dict's keys or items
view as the set it compares as, and the built-in types themselves (``type(x) == list``). The type's name goes
along: ``["@", name, value]`` for a real subclass of the built-in (``isinstance(x, dict)`` holds), ``["~", name,
value]`` for a value that only compares as one (a numpy scalar, a keys view); ``decode`` returns the plain value,
and the parent compares only that (``crossed_as`` says how it crossed, for ``type`` and ``isinstance``).
``Fraction``, ``Decimal`` and ``bytearray`` cross as themselves (read through their own type's accessors), and
the ``math.nan`` object as the parent's ``math.nan``: Python compares a list holding it with another by identity
first (``[math.nan] == [math.nan]``), so its identity is part of its value.
Covered: None, bool, int, float, complex, str, bytes, bytearray, Fraction, Decimal, list, tuple, dict, set,
frozenset, nested up to ``MAX_DEPTH``, and the kinds above. Not covered: any other type (a numpy array, a
``deque``, user classes): such a value is "not plain data", and a test comparing it fails.
"""

from __future__ import annotations

import math
import re
import sys
import time

from .budget import quadratic, spend

MAX_DEPTH = 100
MAX_NODES = 1_000_000
MAX_DECODE_CPU_S = 1.0
MAX_SAME_HASH = 8

_SCALARS = {
    "n": type(None),
    "b": bool,
    "i": int,
    "f": float,
    "c": complex,
    "s": str,
    "y": bytes,
}
_SEQUENCES = {"l": list, "t": tuple, "S": set, "F": frozenset}
# Built-ins a test may apply to a program value, that the sandbox applies there (``judging.parent_expr._consumer``,
# ``isolation.child.REAL``): the value itself may not cross (a generator, a ``map``, a class with ``__len__``).
CONSUMERS = frozenset({
    "list", "tuple", "sorted", "sum", "len", "min", "max", "set", "frozenset", "dict", "any", "all", "zip",
    "enumerate", "reversed", "map", "filter", "next", "iter", "str", "repr", "int", "float", "bool", "abs", "round",
    "isinstance", "type", "divmod", "bytes", "ord", "chr", "hex", "bin", "oct", "hash", "range",
})
# The built-in types a value may be, and a test may compare a type with (``type(f(x)) is list``), by name.
PLAIN_TYPES = {t.__name__: t for t in (type(None), bool, int, float, complex, str, bytes, bytearray, list, tuple, dict,
                                        set, frozenset)}
# Standard-library number types that cross as themselves, by (module, name): looked up where they are loaded, so
# the sandbox's template never imports them (a program that returns one has).
_STDLIB_NUMBERS = {"q": ("fractions", "Fraction"), "D": ("decimal", "Decimal")}


class NotPlainData(TypeError):
    """The value holds something other than builtin plain data."""


class ValueLimit(ValueError):
    """A returned value is past a decoding bound (size, CPU time, hash flooding): its test fails."""


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0
        self.deadline = time.thread_time() + MAX_DECODE_CPU_S

    def spend(self, n: int = 1) -> None:
        self.nodes += n
        if self.nodes > MAX_NODES:
            raise ValueLimit(f"the returned value has more than {MAX_NODES} elements")
        if self.nodes % 1024 < n:
            if time.thread_time() > self.deadline:
                raise ValueLimit(f"the returned value took more than {MAX_DECODE_CPU_S} s of CPU to read")
            spend()  # and the sample's whole budget (judging.budget)


def _no_flooding(values: list) -> None:
    """Refuse members that mostly hash alike (a set of them costs quadratic time to build)."""
    if len(values) <= MAX_SAME_HASH:
        return
    counts: dict[int, int] = {}
    for v in values:
        h = hash(v)
        counts[h] = counts.get(h, 0) + 1
        if counts[h] > MAX_SAME_HASH:
            raise ValueLimit(f"the returned set or dict has more than {MAX_SAME_HASH} members with one hash")


def encode(value, depth: int = 0):
    """Encode ``value`` as tagged JSON-ready lists. Runs inside the untrusted process.

    Raises:
        NotPlainData: the value (or something inside it) is not exactly one of the builtin types above.
    """
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    t = type(value)  # exact type: subclasses (an int with a patched __eq__) are rejected
    if value is None:
        return ["n"]
    if t is bool:
        return ["b", value]
    if t is int:
        return ["i", hex(value)]  # hex has no int-to-str digit limit
    if t is float:
        return ["N"] if value is math.nan else ["f", value.hex()]
    if t is complex:
        return ["c", value.real.hex(), value.imag.hex()]
    if t is str:
        return ["s", value]
    if t is bytes:
        return ["y", value.hex()]
    if t is bytearray:
        return ["Y", value.hex()]
    if t is dict:
        return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    for tag, seq_type in _SEQUENCES.items():
        if t is seq_type:
            return [tag, [encode(v, depth + 1) for v in value]]
    other = _other_exact(value, t, depth)
    if other is not None:
        return other
    raise NotPlainData(f"a {t.__name__} object is not plain data")


def _other_exact(value, t: type, depth: int):
    """A ``Fraction``, ``Decimal`` or numpy array of exactly its type, encoded; None for any other type."""
    number = _stdlib_number(value, t)
    if number is not None:
        return number
    numpy = sys.modules.get("numpy")
    if numpy is not None and t is numpy.ndarray:
        return _array(value, depth)
    return None


def _array(value, depth: int):
    """A numpy array of booleans or numbers: ``["A", dtype, shape, elements]`` (its own ``tolist``, C code)."""
    dtype = value.dtype
    if dtype.kind not in "biufc" or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise NotPlainData(f"a numpy array of {dtype} is not plain data")
    return ["A", str(dtype.str), [int(n) for n in value.shape], [encode(v, depth + 1) for v in value.ravel().tolist()]]


def stdlib_type(tag: str):
    """``fractions.Fraction`` ("q") or ``decimal.Decimal`` ("D") when its module is loaded here, else None."""
    module, name = _STDLIB_NUMBERS[tag]
    loaded = sys.modules.get(module)
    return getattr(loaded, name, None) if loaded is not None else None


def _stdlib_number(value, t: type):
    """A ``Fraction`` (numerator and denominator, read through ``Fraction``'s own properties) or a ``Decimal``
    (its exact text, by ``Decimal.__str__``); None for any other type."""
    if t is stdlib_type("q"):
        return ["q", hex(t.numerator.__get__(value)), hex(t.denominator.__get__(value))]
    if t is stdlib_type("D"):
        return ["D", t.__str__(value)]
    return None


def encode_as_python(value, depth: int = 0):
    """``encode``, for every value Python compares as one of the built-ins (module docstring). Runs inside the
    untrusted process, on the program's values: its result only ever becomes plain data in the parent.

    Raises:
        NotPlainData: the value (or something inside it) has no built-in value Python would compare.
    """
    if depth > MAX_DEPTH:
        raise NotPlainData(f"nested deeper than {MAX_DEPTH} levels")
    t = type(value)
    if value is None or t in _EXACT:
        return encode(value, depth) if t not in _CONTAINERS else _container(value, t, t, depth)
    if t is type and value.__name__ in PLAIN_TYPES and PLAIN_TYPES[value.__name__] is value:
        return ["T", value.__name__]
    other = _other_exact(value, t, depth)
    if other is not None:
        return other
    name = _type_name(t)
    for base in _BASES:
        if isinstance(value, base):
            inner = _container(value, base, t, depth) if base in _CONTAINERS else encode(_BASE_VALUE[base](value))
            return ["@", name, inner]
    for tag in _STDLIB_NUMBERS:
        base = stdlib_type(tag)
        if base is not None and isinstance(value, base):  # a subclass: the value its base type's accessors read
            inner = _stdlib_number(base(value) if tag == "D" else base(base.numerator.__get__(value),
                                                                       base.denominator.__get__(value)), base)
            return ["@", name, inner]
    if isinstance(value, _VIEWS):  # an OrderedDict's views subclass these (only C types can)
        try:
            members = frozenset(value)
        except TypeError as e:  # an items view with an unhashable value: no set to compare it as
            raise NotPlainData(f"a {name} with unhashable items is not plain data") from e
        return ["~", name, ["S", [encode_as_python(v, depth + 1) for v in members]]]
    if getattr(t, "__module__", "") == "numpy" and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        return ["~", name, encode_as_python(value.item(), depth + 1)]
    raise NotPlainData(f"a {name} object is not plain data")


def _container(value, base: type, t: type, depth: int):
    """A dict, list, tuple, set or frozenset (or a subclass), read through the built-in's own methods."""
    if base is dict:
        return ["d", [[encode_as_python(k, depth + 1), encode_as_python(v, depth + 1)] for k, v in dict.items(value)]]
    tag = {list: "l", tuple: "t", set: "S", frozenset: "F"}[base]
    return [tag, [encode_as_python(v, depth + 1) for v in base.__iter__(value)]]


def _type_name(t: type) -> str:
    try:
        name, module = type.__getattribute__(t, "__qualname__"), type.__getattribute__(t, "__module__")
    except AttributeError:
        return "?"
    if not isinstance(name, str):
        return "?"
    return (f"numpy.{str.__str__(name)}" if module == "numpy" else str.__str__(name))[:60]


_EXACT = frozenset((bool, int, float, complex, str, bytes, bytearray, dict, list, tuple, set, frozenset))
_CONTAINERS = frozenset((dict, list, tuple, set, frozenset))
_BASES = (dict, list, tuple, set, frozenset, str, bytes, bytearray, int, float, complex)  # bool cannot be subclassed
_BASE_VALUE = {str: str.__str__, bytes: lambda v: bytes(memoryview(v)), bytearray: lambda v: bytearray(memoryview(v)),
               int: int.__int__, float: float.__float__,
               complex: lambda v: complex(float.__float__(complex.real.__get__(v)),
                                          float.__float__(complex.imag.__get__(v)))}
_VIEWS = (type({}.keys()), type({}.items()))


# tag -> (number of text arguments, how they become the value)
_FROM_TEXT = {
    "i": (1, lambda h: int(h, 16)),
    "f": (1, float.fromhex),
    "c": (2, lambda re, im: complex(float.fromhex(re), float.fromhex(im))),
    "s": (1, lambda text: text),
    "y": (1, bytes.fromhex),
    "Y": (1, bytearray.fromhex),
    "q": (2, lambda n, d: _fraction(int(n, 16), int(d, 16))),
    "D": (1, lambda text: _decimal(text)),
}
MAX_DECIMAL_EXPONENT = 100_000  # a Decimal's adjusted exponent, either way: int() of a larger one would be huge


def _fraction(numerator: int, denominator: int):
    from fractions import Fraction

    try:
        quadratic(numerator, denominator, "a Fraction's gcd")
    except OverflowError as e:
        raise ValueLimit(str(e)) from None
    if denominator == 0:
        raise ValueError("a Fraction with denominator 0")
    return Fraction(numerator, denominator)


def _decimal(text: str):
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(text)
    except (InvalidOperation, ValueError) as e:
        raise ValueError("malformed Decimal") from e
    if value.is_finite() and abs(value.adjusted()) > MAX_DECIMAL_EXPONENT:
        raise ValueLimit(f"the returned Decimal's exponent is beyond {MAX_DECIMAL_EXPONENT}")
    return value


def decode(obj, depth: int = 0, budget: _Budget | None = None):
    """Decode what ``encode`` produced, validating every node. Runs in the parent.

    Raises:
        ValueError: the structure is malformed (a tampered channel).
        ValueLimit: the value is past a bound (a failed test, not tampering).
    """
    budget = budget or _Budget()
    budget.spend()
    if depth > MAX_DEPTH + 1:
        raise ValueError("nested too deep")
    if type(obj) is not list or not obj or type(obj[0]) is not str:
        raise ValueError(f"malformed node {str(obj)[:60]!r}")
    tag, args = obj[0], obj[1:]
    if tag == "n" and not args:
        return None
    if tag == "N" and not args:
        return math.nan  # the very object: a container holding it equals another holding it, as in Python
    if tag in _CROSSED and len(args) == 2 and type(args[0]) is str:  # a type's name, for reasons: the value inside
        return decode(args[1], depth, budget)
    if tag == "T" and len(args) == 1 and type(args[0]) is str and args[0] in PLAIN_TYPES:
        return PLAIN_TYPES[args[0]]
    if tag == "b" and len(args) == 1 and type(args[0]) is bool:
        return args[0]
    if tag in _FROM_TEXT and all(type(a) is str for a in args):
        budget.spend(sum(len(a) for a in args) // 4096)  # long text: one node per 4 KiB
        arity, make = _FROM_TEXT[tag]
        if len(args) == arity:
            return make(*args)
    elif tag == "A" and len(args) == 3:
        return _decode_array(*args, depth=depth, budget=budget)
    elif len(args) == 1 and type(args[0]) is list:
        if tag == "d":
            return _decode_dict(args[0], depth, budget)
        if tag in _SEQUENCES:
            return _decode_sequence(tag, args[0], depth, budget)
    raise ValueError(f"malformed node with tag {tag!r}")


_DTYPE = re.compile(r"[<>|=]?[biufc][1-9][0-9]?")


def _decode_array(dtype, shape, items, depth: int, budget: _Budget):
    """A numpy array rebuilt here from plain numbers (no code of the program's in it)."""
    if type(dtype) is not str or not _DTYPE.fullmatch(dtype) or type(shape) is not list or type(items) is not list:
        raise ValueError("malformed array")
    if len(shape) > 32 or not all(type(n) is int and 0 <= n for n in shape) or math.prod(shape) != len(items):
        raise ValueError("malformed array shape")
    values = [decode(v, depth + 1, budget) for v in items]
    if not all(type(v) in (bool, int, float, complex) for v in values):
        raise ValueError("malformed array element")
    try:
        import numpy
    except ImportError:
        raise ValueLimit("the program returned a numpy array, and numpy is not installed here") from None
    try:
        return numpy.array(values, dtype=numpy.dtype(dtype)).reshape(shape)
    except (TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"malformed array: {e}") from None


def _decode_dict(items: list, depth: int, budget: _Budget) -> dict:
    pairs = []
    for pair in items:
        if type(pair) is not list or len(pair) != 2:
            raise ValueError("malformed dict item")
        pairs.append((decode(pair[0], depth + 1, budget), decode(pair[1], depth + 1, budget)))
    _no_flooding([k for k, _ in pairs])
    out = {}
    for key, value in pairs:
        if key in out:  # 1 and True collide; a real dict cannot hold both
            raise ValueError("duplicate dict key")
        out[key] = value
    return out


def _decode_sequence(tag: str, items: list, depth: int, budget: _Budget):
    values = [decode(v, depth + 1, budget) for v in items]
    unique = tag in ("S", "F")
    if unique:
        _no_flooding(values)
    made = _SEQUENCES[tag](values)
    if unique and len(made) != len(values):
        raise ValueError("duplicate set element")
    return made


_CROSSED = ("@", "~")  # a real subclass of the built-in inside; a value that only compares as that built-in


def type_name(obj) -> str:
    """The name a value's type had in the sandbox when it crossed as another (``Counter``), else ""."""
    if type(obj) is list and len(obj) == 3 and obj[0] in _CROSSED and type(obj[1]) is str:
        return obj[1][:60]
    return ""


def crossed_as(obj) -> str:
    """How an encoded value crossed: "" as exactly its plain type, "@" as a subclass of it, "~" as a value that
    only compares as it (``type`` and ``isinstance`` of it are then not the plain type's)."""
    if type(obj) is list and len(obj) == 3 and obj[0] in _CROSSED and type(obj[1]) is str:
        return obj[0]
    return ""


def short_repr(value, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters, for reasons shown to people."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's int-to-str digit limit
        text = f"<int of {value.bit_length()} bits>" if type(value) is int else "<unprintable value>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
