"""Test classes and hooks as pytest and unittest run them: a pytest class keeping state on ``self``, ``setUp`` /
``setup_method`` / ``setUpClass`` / ``setup_class`` and their tear-downs, ``setup_function`` / ``setup_module``,
class constants. Each shape: the right program scores 1.0 and strong; an object that says yes to everything
(``__eq__`` always true, any method returns one) scores 0, since ``self.s = Stack()`` makes ``self.s`` the
program's, so ``self.s.peek()`` crosses as plain data; a wrong program scores less. The class's constants and the
values its set-up gives never reach the sandbox.
"""

from __future__ import annotations

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging.make_plan import make_plan

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
STACK = ("class Stack:\n    def __init__(self):\n        self.xs = []\n    def push(self, x):\n        self.xs.append(x)\n"
         "    def pop(self):\n        return self.xs.pop()\n    def peek(self):\n        return self.xs[-1]\n"
         "    def size(self):\n        return len(self.xs)\n")
WRONG = STACK.replace("return self.xs[-1]", "return self.xs[0]").replace("return len(self.xs)", "return len(self.xs) + 1")
YES = ("class Yes:\n    def __eq__(self, other):\n        return True\n    def __bool__(self):\n        return True\n"
       "    def __getattr__(self, name):\n        return lambda *a, **k: Yes()\nclass Stack(Yes):\n    pass\n")
SHAPES = {
    "pytest_setup_method": "class TestStack:\n    def setup_method(self, method):\n        self.s = Stack()\n"
                           "        self.s.push(1)\n        self.s.push(4)\n\n    def test_peek(self):\n"
                           "        assert self.s.peek() == 4\n\n    def test_push(self):\n        self.s.push(2)\n"
                           "        assert self.s.size() == 3\n",
    "pytest_state_in_the_test": "class TestStack:\n    def test_peek(self):\n        self.s = Stack()\n"
                                "        self.s.push(3)\n        self.s.push(5)\n        assert self.s.peek() == 5\n",
    "pytest_class_constant": "class TestStack:\n    items = [1, 2, 3]\n\n    def test_size(self):\n        s = Stack()\n"
                             "        for x in self.items:\n            s.push(x)\n        assert s.size() == 3\n"
                             "        assert s.peek() == self.items[-1]\n",
    "pytest_setup_class": "class TestStack:\n    @classmethod\n    def setup_class(cls):\n        cls.top = 6\n\n"
                          "    def setup_method(self):\n        self.s = Stack()\n        self.s.push(2)\n"
                          "        self.s.push(self.top)\n\n    def test_peek(self):\n        assert self.s.peek() == self.top\n\n"
                          "    def teardown_method(self):\n        self.s = None\n",
    "unittest_setUp": "import unittest\n\n\nclass T(unittest.TestCase):\n    def setUp(self):\n        super().setUp()\n"
                      "        self.s = Stack()\n        self.s.push(7)\n        self.s.push(8)\n\n    def test_peek(self):\n"
                      "        self.assertEqual(self.s.peek(), 8)\n\n    def test_size(self):\n"
                      "        self.assertEqual(self.s.size(), 2)\n\n    def tearDown(self):\n        self.s = None\n",
    "unittest_setUpClass": "import unittest\n\n\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
                           "        cls.expected = 4\n\n    def setUp(self):\n        self.s = Stack()\n        self.s.push(1)\n\n"
                           "    def test_peek(self):\n        self.s.push(4)\n        self.assertEqual(self.s.peek(), self.expected)\n",
    "setup_function": "s = None\n\n\ndef setup_function(function):\n    global s\n    s = Stack()\n    s.push(9)\n"
                      "    s.push(3)\n\n\ndef teardown_function(function):\n    global s\n    s = None\n\n\n"
                      "def test_peek():\n    assert s.peek() == 3\n\n\ndef test_pop():\n    assert s.pop() == 3\n"
                      "    assert s.size() == 1\n",
    "setup_module": "def setup_module(module):\n    global s\n    s = Stack()\n    s.push(1)\n    s.push(8)\n\n\n"
                    "def teardown_module(module):\n    pass\n\n\ndef test_peek():\n    assert s.peek() == 8\n",
    "unittest_module_hooks": "import unittest\n\n\ndef setUpModule():\n    global s\n    s = Stack()\n    s.push(2)\n"
                             "    s.push(5)\n\n\nclass T(unittest.TestCase):\n    def test_peek(self):\n"
                             "        self.assertEqual(s.peek(), 5)\n",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_right_program_scores_full_and_strong(shape):
    verdict = run_unit_tests(STACK, SHAPES[shape], limits=LIMITS)
    assert verdict.score == 1.0 and verdict.weak == 0, verdict.reason


@pytest.mark.parametrize("shape", list(SHAPES))
def test_an_object_that_says_yes_to_everything_earns_nothing(shape):
    verdict = run_unit_tests(YES, SHAPES[shape], limits=LIMITS)
    assert verdict.passed == 0, verdict.reason


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_wrong_program_scores_less(shape):
    verdict = run_unit_tests(WRONG, SHAPES[shape], limits=LIMITS)
    assert verdict.score < 1.0, verdict.reason


def test_the_classes_constants_and_its_set_up_values_stay_here():
    tests = ("import unittest\n\n\nclass T(unittest.TestCase):\n    expected = 918273\n\n    def setUp(self):\n"
             "        self.also = 554433\n\n    def test_a(self):\n        self.assertEqual(solve(1), self.expected)\n\n"
             "    def test_b(self):\n        self.assertEqual(solve(2), self.also)\n")
    sent = repr(make_plan(tests).probes)
    assert "918273" not in sent and "554433" not in sent
    assert run_unit_tests("def solve(n):\n    return [918273, 554433][n - 1]\n", tests, limits=LIMITS).score == 1.0


def test_a_helper_of_the_class_gets_the_constant_it_reads_and_the_test_is_weak():
    tests = ("class TestX:\n    base = 10\n\n    def expect(self, x):\n        return x + self.base\n\n"
             "    def test_a(self):\n        assert solve(1) == self.expect(1)\n")
    verdict = run_unit_tests("def solve(n):\n    return n + 10\n", tests, limits=LIMITS)
    assert verdict.score == 1.0 and verdict.weak == 1, verdict.reason


COUNTS_ITS_SETUPS = ("import unittest\n\n\nclass T(unittest.TestCase):\n    made = 0\n\n    @classmethod\n"
                     "    def setUpClass(cls):\n        T.made += 1\n\n    def test_a(self):\n"
                     "        self.assertEqual(add(1, 2), 3)\n\n    def test_b(self):\n"
                     "        self.assertGreaterEqual(T.made, 1)\n")


def test_a_class_attribute_the_set_up_changes_exists_in_the_sandbox():
    """``made = 0`` with ``T.made += 1`` in ``setUpClass``: state of the class, not a value to withhold (it was
    left out of the class the sandbox got, and every test failed 'setup failed: … has no attribute made')."""
    import subprocess
    import sys

    right = "def add(a, b):\n    return a + b\n"
    plain = subprocess.run([sys.executable, "-m", "unittest", "-q"], input="", capture_output=True, text=True,
                           cwd=_module_folder(right + "\n" + COUNTS_ITS_SETUPS))
    assert plain.returncode == 0, plain.stderr                      # right in plain unittest first
    verdict = run_unit_tests(right, COUNTS_ITS_SETUPS, limits=LIMITS)
    assert verdict.score == 1.0, verdict.details
    wrong = run_unit_tests("def add(a, b):\n    return a - b\n", COUNTS_ITS_SETUPS, limits=LIMITS)
    assert wrong.details[0].startswith("test 1 failed") and wrong.score < 1.0, wrong.details


def _module_folder(source: str) -> str:
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="plain-unittest-"))
    (folder / "test_it.py").write_text(source)
    return str(folder)


def test_a_test_method_that_takes_a_fixture_pytest_lacks_is_refused():
    with pytest.raises(ValueError, match="asks for the fixture 'nothing_like_it'"):
        make_plan("class TestX:\n    def test_a(self, nothing_like_it):\n        assert f() == 1\n")
    with pytest.raises(ValueError, match="a unittest method takes none"):
        make_plan("import unittest\nclass T(unittest.TestCase):\n    def test_a(self, x):\n        assert f() == 1\n")


# --- the class set-up once per class, as unittest and pytest run it -----------------------------------------------

COUNTER = ("class Counter:\n    made = 0\n\n    def __init__(self):\n        Counter.made += 1\n        self.seen = []\n\n"
           "    def push(self, x):\n        self.seen.append(x)\n        return len(self.seen)\n")
FORGETS = COUNTER.replace("        self.seen.append(x)\n        return len(self.seen)", "        return 1")  # keeps nothing
ONCE = ("import unittest\n\n\nclass TestShared(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
        "        cls.db = Counter()\n        cls.calls = 0\n        cls.expected = 918273\n\n"
        "    def test_a_first(self):\n        type(self).calls += 1\n        self.assertEqual(self.db.push(1), 1)\n"
        "        self.assertEqual(Counter.made, 1)\n\n    def test_b_second(self):\n        TestShared.calls += 1\n"
        "        self.assertEqual(self.calls, 2)\n        self.assertEqual(self.db.push(2), 2)\n"
        "        self.assertEqual(Counter.made, 1)\n\n    def test_c_expected(self):\n"
        "        self.assertEqual(self.db.push(3) * 306091, self.expected)\n\n"
        "    @classmethod\n    def tearDownClass(cls):\n        cls.db = None\n\n\n"
        "class TestSetupClass:\n    @classmethod\n    def setup_class(cls):\n        cls.db = Counter()\n\n"
        "    def test_x(self):\n        assert self.db.push(5) == 1\n\n    def test_y(self):\n"
        "        assert self.db.push(6) == 2\n        assert Counter.made == 2\n")


def _per_test(program: str, tests: str, limits: SandboxLimits = LIMITS) -> dict[str, bool]:
    """Each test's outcome in the sandbox, by the label plain pytest gives it."""
    verdict = run_unit_tests(program, tests, limits=limits)
    labels = make_plan(tests).tests
    return {label: detail.startswith(f"test {i + 1} passed")
            for i, (label, detail) in enumerate(zip(labels, verdict.details, strict=True))}


@pytest.mark.parametrize("program", [COUNTER, FORGETS], ids=["right", "keeps-nothing"])
def test_the_class_set_up_runs_once_per_class_as_under_unittest_and_pytest(program, tmp_path):
    # setUpClass / setup_class run once, before the class's first test: what they set on the class (a Counter, a
    # count the methods carry on) is one object for all its tests. Plain pytest first, then the sandbox, test by test.
    import subprocess
    import sys

    from .plain_runs import pytest_tests

    plain = pytest_tests({"c": (program, ONCE)}, tmp_path)["c"]
    assert all(plain.values()) == (program is COUNTER), plain
    if program is COUNTER:
        unit = subprocess.run([sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True,
                              cwd=_module_folder(program + "\n" + ONCE))
        assert unit.returncode == 0 and "Ran 3 tests" in unit.stderr, unit.stderr
    assert _per_test(program, ONCE) == plain


def test_values_the_class_set_up_gives_stay_here_and_its_programs_values_cross():
    plan = make_plan(ONCE)
    assert "918273" not in repr(plan.probes)
    verdict = run_unit_tests(COUNTER, ONCE, limits=LIMITS)
    # test_c compares a program value with the set-up's value: strong; the counts through the class are state of the
    # sandbox (weak), as is everything a method run whole checks
    assert verdict.score == 1.0 and "test 3 passed" in verdict.details[2] and "inside" not in verdict.details[2], \
        verdict.details


def test_a_class_set_up_that_raises_fails_every_test_of_that_class_only(tmp_path):
    from .plain_runs import pytest_tests

    tests = ("import unittest\n\n\nclass TestBroken(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
             "        cls.db = Counter(1)\n\n    def test_a(self):\n        self.assertEqual(self.db.push(1), 1)\n\n"
             "    def test_b(self):\n        self.assertEqual(add_one(1), 2)\n\n\n"
             "class TestFine(unittest.TestCase):\n    def test_c(self):\n        self.assertEqual(add_one(2), 3)\n")
    program = COUNTER + "\n\ndef add_one(x):\n    return x + 1\n"
    plain = pytest_tests({"c": (program, tests)}, tmp_path)["c"]
    assert plain == {"TestBroken.test_a": False, "TestBroken.test_b": False, "TestFine.test_c": True}, plain
    assert _per_test(program, tests) == plain
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert all("setup failed: self.db = Counter(1) raised TypeError" in d for d in verdict.details[:2]), verdict.details


def test_a_fresh_runner_runs_the_class_set_up_again_before_the_next_test_of_the_class():
    # test_b ends the body runner (os._exit); test_c runs in a fresh runner forked from the loaded program, where the
    # class's state was never set up: the set-up runs again there (one Counter made in that runner, its count afresh).
    tests = ("import os\nimport unittest\n\n\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
             "        cls.db = Counter()\n\n    def test_a(self):\n        self.assertEqual(self.db.push(1), 1)\n\n"
             "    def test_b(self):\n        os._exit(3)\n\n    def test_c(self):\n"
             "        self.assertEqual(self.db.push(2), 1)\n        self.assertEqual(Counter.made, 1)\n")
    verdict = run_unit_tests(COUNTER, tests, limits=LIMITS)
    assert [" passed" in d for d in verdict.details] == [True, False, True], verdict.details
    assert "exited with code 3" in verdict.details[1], verdict.details


def test_the_class_tear_down_runs_once_after_the_class_s_last_test(tmp_path):
    from .plain_runs import pytest_tests

    tests = ("import unittest\n\nended = []\n\n\nclass TestFirst(unittest.TestCase):\n    @classmethod\n"
             "    def tearDownClass(cls):\n        ended.append(cls.__name__)\n\n    def test_a(self):\n"
             "        self.assertEqual(ended, [])\n\n    def test_b(self):\n        self.assertEqual(ended, [])\n\n\n"
             "class TestSecond(unittest.TestCase):\n    def test_after(self):\n        self.assertEqual(ended, ['TestFirst'])\n"
             "        self.assertEqual(Counter().push(1), 1)\n")
    plain = pytest_tests({"c": (COUNTER, tests)}, tmp_path)["c"]
    assert all(plain.values()) and len(plain) == 3, plain
    assert _per_test(COUNTER, tests) == plain


BUMPS = "class Bumps:\n    def __init__(self):\n        self.n = 0\n\n    def bump(self):\n        self.n += 1\n        return self.n\n"
CLASS_SET_UPS = {  # each passes in plain pytest only if the class set-up ran once for both tests
    "setup_class_not_a_classmethod_run_whole": "class TestA:\n    def setup_class(cls):\n        cls.c = Bumps()\n"
                                               "        return None\n\n    def test_1(self):\n"
                                               "        assert self.c.bump() == 1\n\n    def test_2(self):\n"
                                               "        assert self.c.bump() == 2\n",
    "setUpClass_run_whole": "import unittest\n\n\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n"
                            "        cls.c = Bumps()\n        if cls.c is None:\n            return\n\n    def test_1(self):\n"
                            "        self.assertEqual(self.c.bump(), 1)\n\n    def test_2(self):\n"
                            "        self.assertEqual(self.c.bump(), 2)\n",
    "a_list_changed_in_place": "class TestA:\n    @classmethod\n    def setup_class(cls):\n        cls.seen = []\n\n"
                               "    def test_1(self):\n        self.seen.append(Bumps().bump())\n"
                               "        assert len(self.seen) == 1\n\n    def test_2(self):\n"
                               "        self.seen.append(Bumps().bump())\n        assert len(self.seen) == 2\n",
}


def test_class_set_ups_run_whole_or_keeping_a_list_agree_with_plain_pytest(tmp_path):
    from .plain_runs import pytest_tests

    plain = pytest_tests({name: (BUMPS, tests) for name, tests in CLASS_SET_UPS.items()}, tmp_path)
    for name, tests in CLASS_SET_UPS.items():
        assert len(plain[name]) == 2 and all(plain[name].values()), (name, plain[name])
        assert _per_test(BUMPS, tests) == plain[name], name
