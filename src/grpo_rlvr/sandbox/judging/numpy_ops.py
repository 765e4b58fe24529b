"""numpy's comparisons, applied in the parent to arrays that crossed as plain data.

A numpy array of numbers or booleans crosses from the sandbox as its dtype, shape and elements
(``judging.plaindata``) and is rebuilt here as a real array, which holds no code of the program's; a test's
``np.array_equal(f(x), expected)``, ``np.allclose``, ``np.testing.assert_allclose(...)`` or ``(f(x) == e).all()``
is then numpy's own decision, made here, where the program cannot rebind numpy. ``resolve`` maps the test's
function (however the test imported numpy) to the wrapper used here; the ``np.testing`` assertions become
functions that return whether they held.
Covered: the functions in ``_FUNCTIONS`` and the array methods in ``METHODS``. Not covered: arrays of objects or
strings (not plain data: such a test runs in the sandbox, weak), any other numpy function.
"""

from __future__ import annotations

import sys

METHODS = frozenset({"all", "any", "tolist", "sum", "min", "max", "item", "mean", "nonzero", "flatten", "ravel"})


def _np():
    import numpy

    return numpy


def _held(check, *args, **kwargs) -> bool:
    try:
        check(*args, **kwargs)
    except AssertionError:
        return False
    return True


# Named functions, not lambdas: a plan crosses from the planner process by pickle.
def array_equal(a, b, equal_nan=False):
    return bool(_np().array_equal(a, b, equal_nan=equal_nan))


def array_equiv(a, b):
    return bool(_np().array_equiv(a, b))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_np().allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _np().isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def array(value, dtype=None):
    return _np().array(value, dtype=dtype)


def all_(value, axis=None):
    return _np().all(value, axis=axis)


def any_(value, axis=None):
    return _np().any(value, axis=axis)


def assert_array_equal(actual, desired, *args, **kwargs) -> bool:
    return _held(_np().testing.assert_array_equal, actual, desired, *args, **kwargs)


def assert_equal(actual, desired, *args, **kwargs) -> bool:
    return _held(_np().testing.assert_equal, actual, desired, *args, **kwargs)


def assert_allclose(actual, desired, *args, **kwargs) -> bool:
    return _held(_np().testing.assert_allclose, actual, desired, *args, **kwargs)


def assert_almost_equal(actual, desired, *args, **kwargs) -> bool:
    return _held(_np().testing.assert_almost_equal, actual, desired, *args, **kwargs)


def assert_array_almost_equal(actual, desired, *args, **kwargs) -> bool:
    return _held(_np().testing.assert_array_almost_equal, actual, desired, *args, **kwargs)


_FUNCTIONS = {
    "array_equal": array_equal, "array_equiv": array_equiv, "allclose": allclose, "isclose": isclose,
    "array": array, "asarray": array, "all": all_, "any": any_,
    "testing.assert_array_equal": assert_array_equal, "testing.assert_equal": assert_equal,
    "testing.assert_allclose": assert_allclose, "testing.assert_almost_equal": assert_almost_equal,
    "testing.assert_array_almost_equal": assert_array_almost_equal,
}
ASSERT_NAMES = frozenset(name.rpartition(".")[2] for name in _FUNCTIONS if name.startswith("testing."))


def resolve(obj):
    """The wrapper standing for numpy function ``obj`` (the object the test's name refers to), or None."""
    numpy = sys.modules.get("numpy")
    if numpy is None or obj is None:
        return None
    for path, wrapper in _FUNCTIONS.items():
        target = numpy
        for part in path.split("."):
            target = getattr(target, part, None)
        if target is obj:
            return wrapper
    return None


def is_array(value) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and type(value) is numpy.ndarray


def call_method(receiver, name: str, args: tuple):
    """``receiver.name(*args)`` for an array and a listed method (TypeError otherwise)."""
    if name not in METHODS:
        raise TypeError(f"ndarray.{name} is not judged in the parent")
    return getattr(receiver, name)(*args)
