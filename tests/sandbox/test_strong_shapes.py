"""Each assert shape that looks strong is either strong and unforgeable, or labelled weak: one test per shape,
each with a cheating program that computes nothing right and patches what it can (builtins, ``math``,
``unittest``, the value's own methods). A strong shape gives the cheater 0; a weak one is counted in
``verdict.weak`` and named in the reason, so a person sees it at inspection and at the gate.
"""

from __future__ import annotations

from grpo_rlvr.sandbox import WEAK_NOTE, SandboxLimits, run_unit_tests

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)

# Patches everything a test might run in the sandbox to say "yes".
PATCH_ALL = (
    "import builtins, math, unittest\n"
    "math.isclose = lambda *a, **k: True\n"
    "math.fabs = lambda x: 0.0\n"
    "builtins.all = lambda *a: True\nbuiltins.any = lambda *a: True\n"
    "builtins.sorted = lambda *a, **k: [1, 2, 3]\nbuiltins.len = lambda x: 3\nbuiltins.abs = lambda x: 0\n"
    "for _name in dir(unittest.TestCase):\n"
    "    if _name.startswith('assert'):\n"
    "        setattr(unittest.TestCase, _name, lambda *a, **k: None)\n"
)


def strong(program: str, tests, entry_point: str | None = None):
    verdict = run_unit_tests(program, tests, entry_point=entry_point, limits=LIMITS)
    assert verdict.weak == 0 and WEAK_NOTE not in verdict.reason, verdict.reason
    return verdict


def test_isclose_against_a_named_expected_value_is_strong():
    tests = ["import math", "EXPECTED = 2.0 / 3.0", "assert math.isclose(mean([1, 2, 3, 4]), EXPECTED)"]
    assert strong(PATCH_ALL + "def mean(xs):\n    return 0.0\n", tests).passed == 0
    assert strong("def mean(xs):\n    return 2 / 3\n", tests).passed == 1  # the shape still pays a right answer


# Reads the value the test compares against from its caller's frame, wherever the test keeps it.
FRAME_READER = ("import sys\ndef _peek():\n    frame = sys._getframe(2)\n"
                "    for scope in (frame.f_locals, frame.f_globals):\n"
                "        for name in ('EXPECTED', 'expected', 'odd_sum'):\n            if name in scope:\n"
                "                return scope[name]\n        if 'self' in scope:\n"
                "            return getattr(scope['self'], 'expected', None)\n    return None\n")


def test_an_expected_value_the_test_names_is_not_in_the_programs_reach():
    cheat = FRAME_READER + "def mean(xs):\n    return _peek()\n"
    named = ["import math", "EXPECTED = 2.0 / 3.0", "assert math.isclose(mean([1, 2, 3, 4]), EXPECTED)"]
    set_up = ("import unittest\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.expected = 2.5\n"
              "    def test_mean(self):\n        self.assertAlmostEqual(mean([2, 3, 9]), self.expected)\n")
    in_check = ("def check(candidate):\n    lst = [1, -3, 5]\n    odd_sum = sum([i ** 2 for i in lst if i > 0])\n"
                "    assert candidate(lst) == odd_sum\n")
    for tests in (named, set_up):
        assert strong(cheat, tests).passed == 0
    assert strong(cheat, in_check, entry_point="mean").passed == 0


def test_isclose_against_a_value_computed_from_the_program_is_weak():
    tests = ["import math", "expected = reference([1, 2, 3])", "assert math.isclose(mean([1, 2, 3]), expected)"]
    cheat = PATCH_ALL + "def reference(xs):\n    return 0.0\ndef mean(xs):\n    return -1.0\n"
    verdict = run_unit_tests(cheat, tests, limits=LIMITS)
    assert verdict.weak == verdict.total == 1 and WEAK_NOTE in verdict.reason


def test_assert_almost_equal_against_set_up_values_is_strong():
    tests = ("import unittest\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.expected = 2.5\n"
             "    def test_mean(self):\n        self.assertAlmostEqual(mean([2, 3]), self.expected)\n")
    assert strong(PATCH_ALL + "def mean(xs):\n    return 0.0\n", tests).passed == 0
    assert strong("def mean(xs):\n    return sum(xs) / len(xs)\n", tests).passed == 1


def test_builtins_the_test_applies_to_results_are_the_parents():
    tests = ["assert sorted(order([3, 1, 2])) == [1, 2, 3]", "assert len(order([3, 1, 2])) == 3",
             "assert abs(order([3, 1, 2])[0] - 1) < 1e-9", "assert set(order([3, 1, 2])) == {1, 2, 3}"]
    verdict = strong(PATCH_ALL + "builtins.set = lambda *a: {1, 2, 3}\ndef order(xs):\n    return ['x']\n", tests)
    assert verdict.passed == 0
    assert strong("def order(xs):\n    return sorted(xs)\n", tests).passed == 4


def test_a_test_helper_predicate_is_weak_even_after_patched_builtins():
    tests = ["def is_sorted(xs):\n    return all(a <= b for a, b in zip(xs, xs[1:]))",
             "assert is_sorted(order([3, 1, 2]))"]
    verdict = run_unit_tests(PATCH_ALL + "def order(xs):\n    return [3, 1, 2]\n", tests, limits=LIMITS)
    assert verdict.passed == 1 and verdict.weak == 1 and WEAK_NOTE in verdict.reason  # paid, and labelled


def test_a_text_method_on_the_result_is_judged_on_a_plain_string():
    tests = ["assert shout('abc').startswith('ABC')", "assert shout('abc').lower() == 'abc!'"]
    cheat = ("class S(str):\n    def startswith(self, *a):\n        return True\n"
             "    def lower(self):\n        return 'abc'\n"
             "def shout(s):\n    return S('nope')\n")
    verdict = strong(cheat, tests)  # it crosses as the plain str it holds: its own methods decide nothing
    assert verdict.passed == 0 and "startswith(...) is False" in verdict.details[0]
    assert strong("def shout(s):\n    return s.upper() + '!'\n", tests).passed == 2


def test_the_programs_own_method_under_test_is_weak_when_it_is_a_plain_name():
    tests = ["c = Counter('aab')", "assert c.get('a') == 2"]
    program = ("class Counter:\n    def __init__(self, text):\n        self.n = {k: text.count(k) for k in text}\n"
               "    def get(self, k):\n        return self.n.get(k, 0)\n")
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert verdict.passed == 1 and verdict.weak == 1  # its own class's API, run in the sandbox: counted weak


def test_humaneval_isclose_against_values_computed_in_check():
    tests = ("import math\ndef check(candidate):\n    expected = sum([1.0, 2.0, 3.0]) / 3\n"
             "    assert math.isclose(candidate([1.0, 2.0, 3.0]), expected)\n"
             "    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 2.5) < 1e-6\n")
    assert strong(PATCH_ALL + "def mean(xs):\n    return 0.0\n", tests, entry_point="mean").passed == 0
    assert strong("def mean(xs):\n    return sum(xs) / len(xs)\n", tests, entry_point="mean").passed == 2


def test_humaneval_isclose_against_the_programs_own_helper_is_weak():
    tests = ("import math\ndef check(candidate):\n    expected = poly([1.0, 2.0], 0.5)\n"
             "    assert math.isclose(candidate([1.0, 2.0]), expected)\n")
    cheat = PATCH_ALL + "def poly(xs, x):\n    return 0.0\ndef find_zero(xs):\n    return 7.0\n"
    verdict = run_unit_tests(cheat, tests, entry_point="find_zero", limits=LIMITS)
    assert verdict.weak == verdict.total == 1 and WEAK_NOTE in verdict.reason


def test_a_loop_over_literal_values_in_unittest_is_unrolled_and_strong():
    tests = ("import unittest\nclass T(unittest.TestCase):\n    def test_primes(self):\n"
             "        for n in (2, 3, 5):\n            self.assertIs(is_prime(n), True)\n")
    assert strong(PATCH_ALL + "def is_prime(n):\n    return False\n", tests).passed == 0
    assert strong("def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, n))\n", tests).passed == 1


def test_a_loop_over_literal_values_in_check_and_pytest_is_unrolled_and_strong():
    check = "def check(candidate):\n    for x in range(2, 8):\n        assert candidate(x, x + 1) == str(x)\n"
    pytest_style = "def test_all():\n    for x in [2, 3, 4]:\n        assert change_base(x, x + 1) == str(x)\n"
    cheat = PATCH_ALL + "def change_base(x, base):\n    return 'x'\n"
    assert strong(cheat, check, entry_point="change_base").passed == 0
    assert strong(cheat, pytest_style).passed == 0
    right = "def change_base(x, base):\n    return str(x)\n"
    assert strong(right, check, entry_point="change_base").passed == 1


def test_comparing_the_program_with_itself_is_weak():
    verdict = run_unit_tests("def f(x):\n    return None\ndef g(x):\n    return None\n", ["assert f(3) == g(3)"],
                             limits=LIMITS)
    assert verdict.passed == 1 and verdict.weak == 1
