"""The plain-data wire format: values cross out of the sandbox with their exact types."""

from __future__ import annotations

import json
import math

import pytest

from grpo_rlvr.sandbox.judging.plaindata import NotPlainData, decode, encode


def strict_equal(a, b) -> bool:
    """Python ``==`` restricted to identical types at every level: a round trip keeps every type."""
    t = type(a)
    if t is not type(b):
        return False
    if t in (list, tuple):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if t is dict:
        if len(a) != len(b):
            return False
        keys = {k: k for k in a}  # maps a loosely-equal key of b back to a's own key object
        return all(k in keys and strict_equal(keys[k], k) and strict_equal(a[keys[k]], v) for k, v in b.items())
    if t in (set, frozenset):
        if len(a) != len(b):
            return False
        members = {x: x for x in a}
        return all(y in members and strict_equal(members[y], y) for y in b)
    if t not in (type(None), bool, int, float, complex, str, bytes):
        return False
    return a == b


ROUND_TRIP = [
    None, True, False, 0, -7, 10**5000, 1.5, -0.0, math.inf, 1 + 2j, "héllo\udc80", b"\x00\xff",
    [1, [2, (3,)]], (), {"a": [1, 2], 3: None, (1, "x"): frozenset({1})}, {1, 2}, frozenset(),
]  # fmt: skip


@pytest.mark.parametrize("value", ROUND_TRIP, ids=lambda v: type(v).__name__)
def test_round_trip_through_json(value):
    wire = json.loads(json.dumps(encode(value)))
    assert strict_equal(decode(wire), value)


def test_nan_round_trips_but_never_equals():
    back = decode(json.loads(json.dumps(encode(math.nan))))
    assert math.isnan(back) and not strict_equal(back, math.nan)


@pytest.mark.parametrize(
    ("a", "b"),
    [(True, 1), (1, 1.0), (0, False), ([1], (1,)), ({1: "a"}, {True: "a"}), ({1}, {1.0}), ("1", 1), (None, 0)],
    ids=repr,
)
def test_the_round_trip_check_tells_types_apart(a, b):
    assert a == b or a != b  # Python may call these equal; a round trip must keep them apart
    assert not strict_equal(a, b)


def test_subclass_of_int_is_not_plain_data():
    class Sneaky(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    with pytest.raises(NotPlainData):
        encode(Sneaky(3))
    with pytest.raises(NotPlainData):
        encode([1, {"k": Sneaky(3)}])


def test_always_equal_object_is_not_plain_data():
    class Always:
        def __eq__(self, other):
            return True

    with pytest.raises(NotPlainData):
        encode(Always())


def test_encode_refuses_deep_nesting():
    deep = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(NotPlainData):
        encode(deep)


@pytest.mark.parametrize(
    "wire",
    [["wildcard"], ["i", 5], ["b", 1], ["n", 1], "x", [], ["d", [[["l", []], ["n"]]]], ["S", [["i", "0x1"], ["i", "0x1"]]],
     ["d", [[["i", "0x1"], ["n"]], [["b", True], ["n"]]]], ["l", "notalist"], ["f", "zz"]],
    ids=repr,
)
def test_decode_rejects_malformed_wire(wire):
    with pytest.raises((ValueError, TypeError)):
        decode(wire)
