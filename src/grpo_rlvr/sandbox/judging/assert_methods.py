"""unittest's ``assert*`` methods and pytest's ``approx``, decided in the parent on plain data, as those libraries
decide them.

A test's ``self.assertCountEqual(f(x), [...])`` or ``f(x) == pytest.approx([...])`` is planned as a call of one of
these functions (``judging.plan_classes``, ``judging.parent_expr``): only ``f(x)`` crosses from the sandbox, and the
decision is made here, where the program cannot rebind ``unittest`` or ``pytest``. Each function returns whether
the assertion holds, or raises ``TypeError`` where the library would raise instead of failing (both fail the test).
They follow CPython 3.11-3.14's ``unittest.case`` and pytest 8-9's ``approx`` (``tests/sandbox/test_assert_methods.py``
checks each against the library on the same values). Failure messages are this project's own: the library's diffs
cost time quadratic in the values' size.
Covered: the equality family (``assertSequenceEqual`` compares items whatever the sequences' types, unless
``seq_type``), ``assertCountEqual`` (hashable or not), ``assertAlmostEqual``/``assertNotAlmostEqual`` (``places``,
``delta``, complex numbers), ``assertRegex``/``assertNotRegex``, ``approx`` of numbers, ``Decimal``, flat sequences
and mappings (``rel``, ``abs``, ``nan_ok``). Not covered: ``approx`` of numpy arrays, datetimes and nested
structures (left to the sandbox, weak); the tests of a regex against text the program wrote run Python's ``re``,
so a test's own catastrophic pattern could hold this thread.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from numbers import Complex

from .budget import spend

# --- unittest ----------------------------------------------------------------------------------------------------


def sequence_equal(first, second, seq_type=None) -> bool:
    """``assertSequenceEqual``: equal, or the same length with no item ``!=`` (a list equals a tuple here) unless
    ``seq_type`` asks both to be of it."""
    if seq_type is not None and not (isinstance(first, seq_type) and isinstance(second, seq_type)):
        return False
    try:
        len1, len2 = len(first), len(second)
    except TypeError:
        return False
    if first == second:
        return True
    if len1 != len2:
        return False
    for i in range(len1):
        spend()
        if first[i] != second[i]:
            return False
    return seq_type is None and type(first) is not type(second)


def list_equal(first, second) -> bool:
    return sequence_equal(first, second, list)


def tuple_equal(first, second) -> bool:
    return sequence_equal(first, second, tuple)


def dict_equal(first, second) -> bool:
    return isinstance(first, dict) and isinstance(second, dict) and first == second


def set_equal(first, second) -> bool:
    """``assertSetEqual``: neither has a member the other lacks (``TypeError`` past a value without ``difference``)."""
    for a, b in ((first, second), (second, first)):
        if not isinstance(a, (set, frozenset)):
            raise TypeError(f"{type(a).__name__} does not support set difference")
        if a.difference(b):
            return False
    return True


def multiline_equal(first, second) -> bool:
    return isinstance(first, str) and isinstance(second, str) and first == second


def count_equal(first, second) -> bool:
    """``assertCountEqual``: the same elements, each as many times, in any order (hashable or not)."""
    first_seq, second_seq = list(first), list(second)
    try:
        return Counter(first_seq) == Counter(second_seq)
    except TypeError:  # unhashable elements
        return not _count_diff_all_purpose(first_seq, second_seq)


def _count_diff_all_purpose(actual: list, expected: list) -> bool:
    """Whether unittest's ``_count_diff_all_purpose`` finds a difference (its quadratic walk, with ``==``)."""
    s, t = list(actual), list(expected)
    null = object()
    for i, elem in enumerate(s):
        if elem is null:
            continue
        cnt_s = cnt_t = 0
        for j in range(i, len(s)):
            spend()
            if s[j] == elem:
                cnt_s += 1
                s[j] = null
        for j, other in enumerate(t):
            if other == elem:
                cnt_t += 1
                t[j] = null
        if cnt_s != cnt_t:
            return True
    return any(elem is not null for elem in t)


def almost_equal(first, second, places=None, delta=None) -> bool:
    """``assertAlmostEqual``: equal, or their difference rounds to 0 at ``places`` (7) or is within ``delta``."""
    if first == second:
        return True
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return diff <= delta
    return round(diff, 7 if places is None else places) == 0


def not_almost_equal(first, second, places=None, delta=None) -> bool:
    if delta is not None and places is not None:
        raise TypeError("specify delta or places not both")
    diff = abs(first - second)
    if delta is not None:
        return not (first == second) and diff > delta
    return not (first == second) and round(diff, 7 if places is None else places) != 0


def regex(text, expected_regex) -> bool:
    """``assertRegex``: the pattern is found anywhere in the text."""
    return _search(expected_regex, text) is not None


def not_regex(text, unexpected_regex) -> bool:
    return _search(unexpected_regex, text) is None


def _search(pattern, text):
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"expected string or bytes-like object, got '{type(text).__name__}'")
    return re.compile(pattern).search(text)


def warned(records, names: tuple, pattern=None) -> bool:
    """``pytest.warns``/``assertWarns``: a warning of one of the categories (``module.qualname``) was recorded,
    with the pattern found in its text. ``records``: ``[[ancestry names, text], ...]`` as they crossed."""
    if type(records) is not list:
        raise TypeError("the recorded warnings did not cross as a list")
    for record in records:
        if type(record) is not list or len(record) != 2 or type(record[0]) is not list or type(record[1]) is not str:
            raise TypeError("a malformed warning record")
        if any(name in record[0] for name in names) and (pattern is None or _search(pattern, record[1])):
            return True
    return False


# --- pytest.approx -----------------------------------------------------------------------------------------------


def approx_eq(actual, expected, rel=None, abs=None, nan_ok=False) -> bool:  # noqa: A002 - pytest's own names
    """``actual == pytest.approx(expected, rel=..., abs=..., nan_ok=...)``."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return False
        return all(_approx_scalar(actual[k], x, rel, abs, nan_ok) for k, x in expected.items())
    if isinstance(expected, (list, tuple)):
        if any(isinstance(x, (list, tuple, dict, set, frozenset)) for x in expected):
            raise TypeError("pytest.approx() does not support nested data structures")
        try:
            if len(actual) != len(expected):
                return False
        except TypeError:
            return False
        return all(_approx_scalar(a, x, rel, abs, nan_ok) for a, x in zip(actual, expected, strict=True))
    if isinstance(expected, (set, frozenset)):
        raise TypeError("pytest.approx() only supports ordered sequences")
    return _approx_scalar(actual, expected, rel, abs, nan_ok)


def _decimal_type():
    from decimal import Decimal

    return Decimal


def _approx_scalar(actual, expected, rel, abs_, nan_ok) -> bool:
    Decimal = _decimal_type()  # noqa: N806
    if isinstance(expected, Decimal):
        rel = Decimal.from_float(rel) if isinstance(rel, (float, int)) else rel
        abs_ = Decimal.from_float(abs_) if isinstance(abs_, (float, int)) else abs_
    if rel is not None and not isinstance(rel, (int, float, Decimal)):
        raise TypeError("relative tolerance for a scalar value must be an int, float or Decimal")
    if abs_ is not None and not isinstance(abs_, (int, float, Decimal)):
        raise TypeError("absolute tolerance for a scalar value must be an int, float or Decimal")
    if isinstance(expected, bool) and not isinstance(actual, bool):
        return False
    if actual == expected:
        return True
    numeric = (Complex, Decimal)
    if isinstance(expected, bool) or not (isinstance(expected, numeric) and isinstance(actual, numeric)):
        return False
    if _is_nan(abs(expected)):
        return bool(nan_ok) and _is_nan(abs(actual))
    if math.isinf(abs(expected)):
        return False
    return abs(expected - actual) <= _tolerance(expected, rel, abs_)


def _tolerance(expected, rel, abs_):
    Decimal = _decimal_type()  # noqa: N806
    decimal = isinstance(expected, Decimal)
    absolute = abs_ if abs_ is not None else (Decimal("1e-12") if decimal else 1e-12)
    if _is_nan(absolute):
        raise ValueError("absolute tolerance can't be NaN.")
    if absolute < 0:
        raise ValueError(f"absolute tolerance can't be negative: {absolute}")
    if rel is None and abs_ is not None:
        return absolute
    relative = (rel if rel is not None else (Decimal("1e-6") if decimal else 1e-6)) * abs(expected)
    if _is_nan(relative):
        raise ValueError("relative tolerance can't be NaN.")
    if relative < 0:
        raise ValueError(f"relative tolerance can't be negative: {relative}")
    return max(relative, absolute)


def _is_nan(value) -> bool:
    try:
        return value != value
    except TypeError:
        return False


def approx_ne(actual, expected, rel=None, abs=None, nan_ok=False) -> bool:  # noqa: A002 - pytest's own names
    return not approx_eq(actual, expected, rel, abs, nan_ok)
