"""unittest's assert methods and pytest's approx, as decided in the parent (``judging.assert_methods``), agree with the
libraries themselves on the same plain values; and through the sandbox, programs are judged as unittest and pytest
judge them (a list equals a tuple under ``assertSequenceEqual``, ``assertAlmostEqual`` takes complex numbers)."""

from __future__ import annotations

import math
import unittest
from decimal import Decimal
from fractions import Fraction

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging import assert_methods as am

from .plain_runs import assert_outcomes, pytest_outcomes

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
NAN = math.nan
PAIRS = [
    ([1, 2], (1, 2)), ([1, 2], [1, 2]), ((1, 2), (1, 2, 3)), ([1, 2], [2, 1]), ("ab", "ab"), ("ab", ["a", "b"]),
    ([NAN], [NAN]), ([float("nan")], [float("nan")]), ({1: 2}, {1: 2}), ({1: 2}, {1: 3}), ({1, 2}, {2, 1}),
    ({1, 2}, frozenset({1, 2})), ({1}, [1]), ([[1], [2]], [[2], [1]]), ([[1], [1]], [[1], [2]]), (1, 1.0),
    ([1, 1, 2], [2, 1, 1]), ([1, 2, 2], [1, 1, 2]), ("line\n", "line\n"), ("abc", "abd"), ([], ()),
    (Fraction(1, 3), Fraction(2, 6)), (Decimal("1.0"), Decimal("1.00")), (bytearray(b"ab"), b"ab"),
]
METHODS = {"assertSequenceEqual": am.sequence_equal, "assertListEqual": am.list_equal,
           "assertTupleEqual": am.tuple_equal, "assertDictEqual": am.dict_equal, "assertSetEqual": am.set_equal,
           "assertMultiLineEqual": am.multiline_equal, "assertCountEqual": am.count_equal}


def _unittest_says(method: str, *args, **kwargs):
    """True (holds), False (AssertionError) or the exception type unittest raised instead."""
    try:
        getattr(unittest.TestCase(), method)(*args, **kwargs)
    except AssertionError:
        return False
    except Exception as e:  # noqa: BLE001 - unittest refused the values: so must we
        return type(e)
    return True


def _ours(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return type(e)


@pytest.mark.parametrize("method", list(METHODS))
def test_the_equality_family_is_unittests(method):
    for first, second in PAIRS:
        theirs = _unittest_says(method, first, second)
        ours = _ours(METHODS[method], first, second)
        assert (ours is True) == (theirs is True), (method, first, second, ours, theirs)


def test_sequence_equal_with_a_seq_type_is_unittests():
    for first, second in PAIRS:
        for seq_type in (list, tuple, str):
            theirs = _unittest_says("assertSequenceEqual", first, second, seq_type=seq_type)
            assert (_ours(am.sequence_equal, first, second, seq_type) is True) == (theirs is True)


ALMOST = [(1.0, 1.0 + 1e-8), (1.0, 1.0 + 1e-6), (1 + 1j, 1 + 1j + 1e-9), (1 + 1j, 2 + 1j), (1.4142135623730951, 1.4142135),
          (0.1 + 0.2, 0.3), (10, 10.4), (Decimal("1.0000001"), Decimal("1")), (Fraction(1, 3), 0.333333333), (5, 5)]


@pytest.mark.parametrize("method, fn", [("assertAlmostEqual", am.almost_equal),
                                        ("assertNotAlmostEqual", am.not_almost_equal)])
def test_almost_equal_is_unittests_with_places_delta_and_complex_numbers(method, fn):
    for first, second in ALMOST:
        for kwargs in ({}, {"places": 3}, {"places": 10}, {"delta": 0.5}, {"delta": 1e-12}, {"places": 2, "delta": 1}):
            theirs = _unittest_says(method, first, second, **kwargs)
            ours = _ours(fn, first, second, kwargs.get("places"), kwargs.get("delta"))
            assert (ours is True) == (theirs is True), (method, first, second, kwargs, ours, theirs)


def test_regex_is_unittests():
    for text, pattern in (("hello world", "wor"), ("hello", "^ell"), ("a1", r"\d"), ("abc", "x")):
        assert am.regex(text, pattern) == (_unittest_says("assertRegex", text, pattern) is True)
        assert am.not_regex(text, pattern) == (_unittest_says("assertNotRegex", text, pattern) is True)


APPROX = [
    (0.30000000000000004, 0.3, {}), (0.3001, 0.3, {}), (0.3001, 0.3, {"rel": 1e-3}), (0.3001, 0.3, {"abs": 1e-3}),
    (1e-13, 0.0, {}), (1e-11, 0.0, {}), (NAN, NAN, {}), (NAN, NAN, {"nan_ok": True}), (math.inf, math.inf, {}),
    (1.0, math.inf, {}), (True, 1, {}), (1, True, {}), (True, True, {}), ("a", "a", {}), ([0.1 + 0.2, 1], [0.3, 1], {}),
    ([0.1, 0.2], [0.1], {}), ((1.0, 2.0), [1.0, 2.0000001], {}), ({"a": 0.1 + 0.2}, {"a": 0.3}, {}),
    ({"a": 1.0}, {"b": 1.0}, {}), (Decimal("1.0000001"), Decimal("1"), {}), (Decimal("1.1"), Decimal("1"), {}),
    (1 + 1e-7j, 1, {}), (None, None, {}), ([1, "x"], [1, "x"], {}), (5, 5.000001, {"rel": 0}),
]


def test_approx_is_pytests():
    for actual, expected, kwargs in APPROX:
        theirs = actual == pytest.approx(expected, **kwargs)
        assert am.approx_eq(actual, expected, kwargs.get("rel"), kwargs.get("abs"), kwargs.get("nan_ok", False)) \
            == theirs, (actual, expected, kwargs)


# --- through the sandbox -------------------------------------------------------------------------------------------

PROGRAM = ("from fractions import Fraction\nfrom decimal import Decimal\nimport math\n"
           "def pair(n):\n    return [n, n + 1]\ndef root(z):\n    return z ** 0.5\n"
           "def ratio(a, b):\n    return Fraction(a, b)\ndef money(s):\n    return Decimal(s) * 2\n"
           "def raw(s):\n    return bytearray(s, 'ascii')\ndef missing():\n    return [math.nan, 1]\n")
UNITTEST = ("import math, unittest\nfrom fractions import Fraction\nfrom decimal import Decimal\n\n"
            "class T(unittest.TestCase):\n"
            "    def test_list_is_tuple(self):\n        self.assertSequenceEqual(pair(1), (1, 2))\n"
            "    def test_list_is_not_tuple_for_list_equal(self):\n        self.assertNotEqual(pair(1), (1, 2))\n"
            "    def test_complex(self):\n        self.assertAlmostEqual(root(-4), 2j)\n"
            "    def test_complex_places(self):\n        self.assertAlmostEqual(root(-2), 1.41421356j, places=6)\n"
            "    def test_fraction(self):\n        self.assertEqual(ratio(2, 6), Fraction(1, 3))\n"
            "    def test_decimal(self):\n        self.assertEqual(money('0.10'), Decimal('0.20'))\n"
            "    def test_bytearray(self):\n        self.assertEqual(raw('ab'), bytearray(b'ab'))\n"
            "    def test_nan_identity(self):\n        self.assertEqual(missing(), [math.nan, 1])\n"
            "    def test_count(self):\n        self.assertCountEqual(pair(2), [3, 2])\n")
ASSERTS = ["import math", "from fractions import Fraction", "from decimal import Decimal",
           "assert missing() == [math.nan, 1]", "assert missing() != [float('nan'), 1]",
           "assert ratio(1, 2) == 0.5", "assert money('1.5') == 3", "assert raw('a') == b'a'",
           "assert isinstance(ratio(1, 3), Fraction)", "assert type(raw('x')) is bytearray"]


def test_programs_are_judged_as_unittest_and_python_judge_them(tmp_path):
    assert pytest_outcomes({"unittest": (PROGRAM, UNITTEST)}, tmp_path) == {"unittest": (9, 9)}
    verdict = run_unit_tests(PROGRAM, UNITTEST, limits=LIMITS)
    assert (verdict.passed, verdict.total, verdict.weak) == (9, 9, 0), verdict.details
    assert all(assert_outcomes(PROGRAM, ASSERTS))
    verdict = run_unit_tests(PROGRAM, ASSERTS, limits=LIMITS)
    assert (verdict.passed, verdict.total, verdict.weak) == (7, 7, 0), verdict.details
    wrong = PROGRAM.replace("return [math.nan, 1]", "return [float('nan'), 1]").replace("Fraction(a, b)", "a / b")
    verdict = run_unit_tests(wrong, ASSERTS, limits=LIMITS)
    assert [d.endswith("passed") for d in verdict.details] == [ok for line, ok in zip(
        ASSERTS, assert_outcomes(wrong, ASSERTS), strict=True) if line.startswith("assert")] == [
        False, True, True, True, True, False, True]
