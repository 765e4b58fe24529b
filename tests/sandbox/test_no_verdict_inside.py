"""Nothing inside the program's process decides a verdict. What a test applies to program values - ``all``, ``any``,
``bool``, ``isinstance``, unittest's ``assert*`` methods, ``pytest.raises``/``approx``, numpy's comparisons - is
computed in the parent from the plain values that crossed; the sandbox only ever sends values. A program that
rewrites the sandbox's own tables, probes or helpers in its process (``child.REAL``, ``_probe``, ``_leaves``,
``encode_as_python``), or the test frameworks, can then forge values and nothing more: it scores what an honest
program returning those values would, which on these balanced suites is what a constant function scores.

Each suite is first run in plain Python or plain pytest: the right program passes every test there, the constant
programs do not.
"""

from __future__ import annotations

import functools

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests

from .plain_runs import assert_outcomes, check_outcome, pytest_outcomes

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
CHILD = "sys.modules['grpo_rlvr.sandbox.isolation.child']"

RIGHT = "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))\n"
CONSTANTS = {"true": "def is_prime(n):\n    return True\n", "false": "def is_prime(n):\n    return False\n",
             "none": "def is_prime(n):\n    return None\n"}
# Rewrites of the sandbox's own process a program can make (each above a constant is_prime).
PATCHES = {
    "REAL": f"import sys\nR = {CHILD}.REAL\nR['all'] = lambda *a, **k: True\nR['any'] = lambda *a, **k: False\n"
            "R['bool'] = lambda *a: True\nR['isinstance'] = lambda *a: True\nR['list'] = lambda *a: []\n",
    "every REAL": f"import sys\nR = {CHILD}.REAL\nfor k in list(R):\n    R[k] = lambda *a, **k: True\n",
    "_probe": (f"import sys\nc = {CHILD}\nreal = c._probe\n"
               "def forged(i, kind, source, where):\n"
               "    if kind == 'leaves':\n        return {'k': 'r', 'i': i, 'v': [['b', True] for _ in source]}\n"
               "    if kind == 'eval':\n        return {'k': 'r', 'i': i, 'v': ['b', True]}\n"
               "    return real(i, kind, source, where)\n"
               "c._probe = forged\n"),
    "_leaves": f"import sys\nc = {CHILD}\nc._leaves = lambda specs, i, where: [['l', []] for _ in specs]\n",
    "encode": (f"import sys\nc = {CHILD}\nc.encode_as_python = lambda v, depth=0: ['b', True]\n"
               "c._encode_or_mark = lambda v: ['b', True]\n"),
}
LINES = ["assert all(map(is_prime, [2, 3, 5, 7]))", "assert not any(map(is_prime, [1, 4, 6, 9]))",
         "assert bool(is_prime(13))", "assert not bool(is_prime(15))", "assert isinstance(is_prime(3), bool)",
         "assert all(is_prime(p) for p in [11, 17])", "assert not any([is_prime(8), is_prime(10)])",
         "assert any(is_prime(n) for n in range(24, 30))", "assert list(map(is_prime, [4, 5])) == [False, True]"]


def _formats() -> dict:
    check = "def check(candidate):\n" + "".join(f"    {line.replace('is_prime', 'candidate')}\n" for line in LINES)
    functions = "".join(f"def test_{i}():\n    {line}\n" for i, line in enumerate(LINES))
    return {"asserts": (LINES, None), "check": (check, "is_prime"), "pytest": (functions, None)}


FORMATS = _formats()


@functools.cache
def _score(program: str, fmt: str) -> tuple[int, int, int]:
    tests, entry_point = FORMATS[fmt]
    verdict = run_unit_tests(program, tests, entry_point=entry_point, limits=LIMITS)
    return verdict.passed, verdict.total, verdict.weak


def test_the_suite_means_what_it_says_in_plain_python(tmp_path):
    assert all(assert_outcomes(RIGHT, LINES))
    assert check_outcome(RIGHT, FORMATS["check"][0], "is_prime")
    for constant in CONSTANTS.values():
        assert not all(assert_outcomes(constant, LINES))
        assert not check_outcome(constant, FORMATS["check"][0], "is_prime")
    cases = {"right": (RIGHT, FORMATS["pytest"][0]), **{k: (v, FORMATS["pytest"][0]) for k, v in CONSTANTS.items()}}
    outcomes = pytest_outcomes(cases, tmp_path)
    assert outcomes["right"] == (len(LINES), len(LINES))
    assert all(outcomes[k][0] < len(LINES) for k in CONSTANTS)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_the_right_program_passes_every_test_strongly(fmt):
    total = 1 if fmt == "check" else len(LINES)
    assert _score(RIGHT, fmt)[:3] in ((len(LINES), len(LINES), 0), (total, total, 0))


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("patch", list(PATCHES))
def test_rewriting_the_sandboxs_own_process_gains_nothing(patch, fmt):
    """Each rewrite above each constant program scores no more than the best constant program does honestly: what a
    rewrite can change is the values that cross, never what the test decides about them."""
    honest = max(_score(program, fmt)[0] for program in CONSTANTS.values())
    total = _score(RIGHT, fmt)[1]
    assert honest < total
    for constant in CONSTANTS.values():
        passed, _, weak = _score(PATCHES[patch] + constant, fmt)
        assert passed <= honest and weak == 0, (patch, fmt, passed, honest)


def test_the_per_assert_counts_match_plain_python_for_each_constant():
    for name, constant in CONSTANTS.items():
        verdict = run_unit_tests(constant, LINES, limits=LIMITS)
        ours = [d.startswith(f"test {i + 1} passed") for i, d in enumerate(verdict.details)]
        assert ours == assert_outcomes(constant, LINES), name


# --- the test frameworks' own helpers, rewritten by the program ----------------------------------------------------

SQRT = "def root(x):\n    if x < 0:\n        raise ValueError('negative input')\n    return x ** 0.5\n"
SQRT_WRONG = "def root(x):\n    return abs(x) ** 0.5\n"
UNITTEST = ("import unittest\n\nclass T(unittest.TestCase):\n"
            "    def test_count(self):\n        self.assertCountEqual([root(9), root(4)], [2.0, 3.0])\n"
            "    def test_raises_block(self):\n        with self.assertRaises(ValueError):\n            root(-1)\n"
            "    def test_raises_call(self):\n        self.assertRaises(ValueError, root, -4)\n"
            "    def test_regex(self):\n        self.assertRaisesRegex(ValueError, 'negative', root, -9)\n"
            "    def test_almost(self):\n        self.assertAlmostEqual(root(2), 1.41421356, places=6)\n"
            "    def test_sequence(self):\n        self.assertSequenceEqual([root(1), root(0)], (1.0, 0.0))\n"
            "    def test_true(self):\n        self.assertTrue(root(16) == 4)\n")
PYTEST = ("import pytest\n\n"
          "def test_raises_block():\n    with pytest.raises(ValueError, match='negative'):\n        root(-1)\n"
          "def test_raises_call():\n    pytest.raises(ValueError, root, -4)\n"
          "def test_approx():\n    assert root(2) == pytest.approx(1.41421356)\n"
          "def test_approx_list():\n    assert [root(2), root(3)] == pytest.approx([1.4142136, 1.7320508])\n")
FRAMEWORK_PATCHES = (
    "import unittest, contextlib\nT = unittest.TestCase\n"
    "for name in [n for n in dir(T) if n.startswith('assert') or n.startswith('fail')]:\n"
    "    setattr(T, name, lambda *a, **k: contextlib.nullcontext())\n"
    "import pytest\npytest.raises = lambda *a, **k: contextlib.suppress(BaseException)\n"
    "pytest.approx = lambda *a, **k: type('A', (), {'__eq__': lambda s, o: True, '__ne__': lambda s, o: False})()\n")
NUMPY = ("import numpy as np\nimport numpy.testing as npt\n\n"
         "def test_equal():\n    assert np.array_equal(grid(2), np.array([[0, 1], [2, 3]]))\n"
         "def test_close():\n    assert np.allclose(grid(2) / 3, [[0, 1 / 3], [2 / 3, 1]])\n"
         "def test_testing():\n    npt.assert_allclose(grid(1), [[0.0]])\n"
         "def test_array_equal():\n    np.testing.assert_array_equal(grid(2)[0], [0, 1])\n"
         "def test_all():\n    assert (grid(2) >= 0).all()\n")
GRID = "import numpy as np\ndef grid(n):\n    return np.arange(n * n).reshape(n, n)\n"
GRID_WRONG = "import numpy as np\ndef grid(n):\n    return -np.ones((n, n), dtype=int)\n"
NUMPY_PATCHES = ("import numpy as np, numpy.testing as npt\n"
                 "np.array_equal = np.allclose = np.array_equiv = lambda *a, **k: True\n"
                 "npt.assert_allclose = npt.assert_array_equal = npt.assert_equal = lambda *a, **k: None\n"
                 "np.ndarray.all\n")


def test_the_framework_suites_mean_what_they_say_in_plain_pytest(tmp_path):
    pytest.importorskip("numpy")
    cases = {"right unittest": (SQRT, UNITTEST), "wrong unittest": (SQRT_WRONG, UNITTEST),
             "right pytest": (SQRT, PYTEST), "wrong pytest": (SQRT_WRONG, PYTEST),
             "right numpy": (GRID, NUMPY), "wrong numpy": (GRID_WRONG, NUMPY)}
    outcomes = pytest_outcomes(cases, tmp_path / "plain")
    for name, case in {"patched unittest": (FRAMEWORK_PATCHES + SQRT_WRONG, UNITTEST),
                       "patched numpy": (NUMPY_PATCHES + GRID_WRONG, NUMPY)}.items():  # a pytest each: they patch it
        outcomes.update(pytest_outcomes({name: case}, tmp_path / name.replace(" ", "-")))
    assert outcomes["right unittest"] == (7, 7) and outcomes["right pytest"] == (4, 4)
    assert outcomes["right numpy"] == (5, 5)
    assert outcomes["wrong unittest"] == (4, 7) and outcomes["wrong pytest"] == (2, 4)  # it only never raises
    assert outcomes["wrong numpy"][0] == 0
    # in plain Python the rewrites do win: the tests ran in the program's own process there
    assert outcomes["patched unittest"][0] == 7 and outcomes["patched numpy"][0] >= 4


@pytest.mark.parametrize(("right", "wrong", "patches", "tests"), [
    (SQRT, SQRT_WRONG, FRAMEWORK_PATCHES, UNITTEST),
    (SQRT, SQRT_WRONG, FRAMEWORK_PATCHES, PYTEST),
    (GRID, GRID_WRONG, NUMPY_PATCHES, NUMPY),
], ids=["unittest", "pytest", "numpy"])
def test_rewriting_the_test_frameworks_earns_nothing(right, wrong, patches, tests):
    if "numpy" in tests:
        pytest.importorskip("numpy")
    good = run_unit_tests(right, tests, limits=LIMITS)
    assert good.score == 1.0 and good.weak == 0, good.reason
    honest = run_unit_tests(wrong, tests, limits=LIMITS)
    cheat = run_unit_tests(patches + wrong, tests, limits=LIMITS)
    assert honest.passed < honest.total and cheat.weak == 0
    assert cheat.passed == honest.passed, (cheat.details, honest.details)


ALWAYS_EQUAL = ("class Yes:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n"
                "        return False\n    __hash__ = object.__hash__\n")


@pytest.mark.parametrize(("right", "tests"), [
    ("def third(x):\n    return x / 3\n", "import pytest\ndef test_a():\n    assert third(1) == pytest.approx(0.3333333)\n"),
    ("def third(x):\n    return [x / 3, x]\n",
     "from pytest import approx\ndef test_a():\n    assert approx([0.3333333, 1.0]) == third(1)\n"),
    ("from fractions import Fraction\ndef third(x):\n    return Fraction(x, 3)\n",
     ["from fractions import Fraction", "assert third(1) == Fraction(1, 3)", "assert third(3) == 1"]),
    ("from decimal import Decimal\ndef third(x):\n    return Decimal(x) / 4\n",
     ["from decimal import Decimal", "assert third(1) == Decimal('0.25')", "assert third(2) == Decimal('0.5')"]),
], ids=["approx", "approx-sequence", "fraction", "decimal"])
def test_an_always_equal_object_earns_nothing_against_approx_fraction_or_decimal(right, tests):
    good = run_unit_tests(right, tests, limits=LIMITS)
    assert good.score == 1.0 and good.weak == 0, good.reason
    cheat = run_unit_tests(ALWAYS_EQUAL + "def third(x):\n    return Yes()\n", tests, limits=LIMITS)
    assert cheat.passed == 0 and cheat.weak == 0, cheat.details
