"""The wire format for values that cross out of the untrusted process.

The untrusted process encodes a value as tagged JSON made only of builtin types (``encode``); the parent
decodes it with a validating decoder (``decode``) that never imports, unpickles or calls anything: what comes
out is made of builtin types only (a subclass of ``int`` is not plain data at all), so the parent compares the
values with Python's own ``==`` and no method of the program's runs there.

Decoding is bounded, since the bytes come from model code: nesting (``MAX_DEPTH``), nodes
(``MAX_NODES``), CPU time of this thread (``MAX_DECODE_CPU_S``), and hash flooding (a set or dict whose
members share one hash, which would make building it quadratic: more than ``MAX_SAME_HASH`` alike).
Past a bound, ``decode`` raises ``ValueLimit``: that test fails, with the bound in the reason.
Covered: None, bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, nested up to
``MAX_DEPTH``. Not covered: any other type (numpy scalars, user classes): such a value is "not plain data".
"""

from __future__ import annotations

import time

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
        if self.nodes % 1024 < n and time.thread_time() > self.deadline:
            raise ValueLimit(f"the returned value took more than {MAX_DECODE_CPU_S} s of CPU to read")


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
        return ["f", value.hex()]
    if t is complex:
        return ["c", value.real.hex(), value.imag.hex()]
    if t is str:
        return ["s", value]
    if t is bytes:
        return ["y", value.hex()]
    if t is dict:
        return ["d", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    for tag, seq_type in _SEQUENCES.items():
        if t is seq_type:
            return [tag, [encode(v, depth + 1) for v in value]]
    raise NotPlainData(f"a {t.__name__} object is not plain data")


# tag -> (number of text arguments, how they become the value)
_FROM_TEXT = {
    "i": (1, lambda h: int(h, 16)),
    "f": (1, float.fromhex),
    "c": (2, lambda re, im: complex(float.fromhex(re), float.fromhex(im))),
    "s": (1, lambda text: text),
    "y": (1, bytes.fromhex),
}


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
    if tag == "b" and len(args) == 1 and type(args[0]) is bool:
        return args[0]
    if tag in _FROM_TEXT and all(type(a) is str for a in args):
        budget.spend(sum(len(a) for a in args) // 4096)  # long text: one node per 4 KiB
        arity, make = _FROM_TEXT[tag]
        if len(args) == arity:
            return make(*args)
    elif len(args) == 1 and type(args[0]) is list:
        if tag == "d":
            return _decode_dict(args[0], depth, budget)
        if tag in _SEQUENCES:
            return _decode_sequence(tag, args[0], depth, budget)
    raise ValueError(f"malformed node with tag {tag!r}")


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


def short_repr(value, limit: int = 80) -> str:
    """``repr`` cut to ``limit`` characters, for reasons shown to people."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's int-to-str digit limit
        text = f"<int of {value.bit_length()} bits>" if type(value) is int else "<unprintable value>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
