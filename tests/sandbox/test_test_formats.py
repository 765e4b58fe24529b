"""Test code in the shapes public datasets use, counted for real: each shape scores a right program 1.0 and a
``return None`` program 0.0, and code that defines tests but runs none is a configuration error."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards import build_reward
from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging.make_plan import make_plan

FAST = SandboxLimits(timeout_s=5.0, cpu_s=5.0)
RIGHT = "def add(a, b):\n    return a + b\n"
NONE = "def add(a, b):\n    return None\n"

HUMANEVAL = '''
METADATA = {"author": "x"}


def check(candidate):
    assert candidate(2, 3) == 5
    assert candidate(-1, 1) == 0, "negatives"
    assert True, "This prints if this assert fails (good for debugging!)"
    import math
    assert math.isclose(candidate(0.5, 0.25), 0.75)
'''
PYTEST = '''
import math


def helper(x):
    return x * 2


def test_small():
    assert add(1, 2) == 3
    total = add(helper(1), 1)
    assert total == 3


def test_zero():
    assert add(0, 0) == 0
'''
UNITTEST = '''
import unittest


class TestAdd(unittest.TestCase):
    def setUp(self):
        self.base = 10

    def test_base(self):
        self.assertEqual(add(self.base, 1), 11)

    def test_floats(self):
        self.assertAlmostEqual(add(0.1, 0.2), 0.3)
        self.assertTrue(add(1, 1) == 2)

    def test_raises(self):
        with self.assertRaises(TypeError):
            add(1, "x")

    def test_sum_of_pairs(self):
        pairs = [(1, 2), (3, 4)]
        total = 0
        while pairs:
            a, b = pairs.pop()
            total += add(a, b)
        self.assertEqual(total, 10)


if __name__ == "__main__":
    unittest.main()
'''


def score(program, tests, entry_point=None):
    return run_unit_tests(program, tests, entry_point=entry_point, limits=FAST)


@pytest.mark.parametrize(
    ("tests", "entry_point", "total", "weak"),
    [
        (HUMANEVAL, "add", 3, 0),  # per assert; `assert True` is no test; `import math` is setup
        (PYTEST, None, 2, 0),  # one test per function
        (UNITTEST, None, 4, 1),  # one test per method; the `while` loop's test runs in the sandbox
        (["import math", "x = 3", "assert add(x, 1) == 4"], None, 1, 0),  # setup lines are not tests
        ("r = add(2, 2)\nif r != 4:\n    raise SystemExit(1)\n", None, 1, 1),  # a plain script: one weak test
    ],
    ids=["humaneval", "pytest", "unittest", "assert-list-with-setup", "script"],
)
def test_right_scores_one_and_return_none_scores_zero(tests, entry_point, total, weak):
    right = score(RIGHT, tests, entry_point)
    assert (right.passed, right.total, right.weak) == (total, total, weak), right.reason
    assert ("(weak: test code ran in the sandbox" in right.reason) == (weak > 0)
    wrong = score(NONE, tests, entry_point)
    assert wrong.total == total and wrong.passed < total and wrong.score < 1.0, wrong.reason


def test_expected_values_of_check_and_test_functions_stay_in_the_parent():
    for tests, entry_point in ((HUMANEVAL, "add"), (PYTEST, None)):
        sent = json.dumps(make_plan(tests, entry_point).probes)
        assert "== 5" not in sent and "0.75" not in sent and "== 3" not in sent


def test_another_problems_solution_fails_on_the_missing_entry_point():
    verdict = score("def mul(a, b):\n    return a * b\n", HUMANEVAL, "add")
    assert verdict.passed == 0 and "entry_point 'add'" in verdict.reason and "NameError" in verdict.reason


def test_a_failing_test_function_fails_only_itself():
    program = "def add(a, b):\n    return 0 if a == b == 0 else a - b\n"
    verdict = score(program, PYTEST)
    assert (verdict.passed, verdict.total) == (1, 2)
    assert verdict.details[0].startswith("test 1 failed: add(1, 2) returned -1, expected 3")


@pytest.mark.parametrize(
    ("tests", "needle"),
    [
        (HUMANEVAL, "'entry_point' column"),
        ("def helper():\n    assert add(1, 2) == 3\n", "defines tests but runs none"),
        ("import math\nX = 3\n", "defines tests but runs none"),
        ("def test_a(data):\n    assert add(1, 2) == 3\n", "asks for the fixture 'data'"),
        ("def test_a(caplog):\n    assert add(1, 2) == 3\n", "asks for the fixture 'caplog'"),
        ("import pytest\n@pytest.mark.parametrize('a', [1])\ndef test_a():\n    assert add(1, 2) == 3\n",
         "an argument it does not take"),
        ("import pytest\n@pytest.mark.skip\ndef test_a():\n    assert add(1, 2) == 3\n", "holds no test"),
        (["import math", "assert True"], "holds no test"),
    ],
)
def test_tests_that_run_nothing_are_a_configuration_error(tests, needle):
    with pytest.raises(ValueError) as info:
        score(RIGHT, tests)
    assert needle in str(info.value)


def test_reward_reads_entry_point_and_refuses_checkless_rows():
    reward = build_reward("unit_tests", {"timeout_s": 5})
    scored = reward.explain([RIGHT, NONE], tests=[HUMANEVAL, HUMANEVAL], entry_point=["add", "add"])
    assert [s.score for s in scored] == [1.0, 0.0]
    with pytest.raises(RewardError) as info:
        reward.explain([RIGHT], tests=[HUMANEVAL])
    assert "'tests'" in str(info.value) and "entry_point" in str(info.value)


def test_reward_counts_weakly_scored_samples():
    reward = build_reward("unit_tests", {"timeout_s": 5})
    reward.explain([RIGHT, RIGHT], tests=[UNITTEST, PYTEST])
    assert reward.notes["samples"] == 2 and reward.notes["weak_samples"] == 1


def test_inspect_and_gate_show_how_many_samples_were_scored_weakly(tmp_path):
    for module in ("yaml", "jsonschema", "jinja2"):  # the gate's imports (absent from the plain-user test venv)
        pytest.importorskip(module)
    from grpo_rlvr.gate.check import GateResult
    from grpo_rlvr.inspection.run import InspectResult
    from grpo_rlvr.sandbox import weak_sample_counts

    reasons = [score(RIGHT, UNITTEST).reason, score(RIGHT, PYTEST).reason, score(NONE, UNITTEST).reason]
    samples = [{"scores": {"unit_tests": {"score": 1.0, "reason": r}, "format": {"score": 1.0, "reason": "ok"}}}
               for r in reasons]
    counts = weak_sample_counts(samples)
    assert counts == {"unit_tests": 2}
    gate = GateResult(tmp_path, [], {}, counts)
    assert "Scored weakly by unit_tests (test code ran in the sandbox): 2 samples" in gate.format()
    assert gate.to_dict()["weak_samples"] == {"unit_tests": 2}
    inspected = InspectResult(tmp_path, 3, 1, {"correct": 3}, 1.0, counts)
    assert "Scored weakly by unit_tests (test code ran in the sandbox): 2 of 3 samples" in inspected.format()


def test_pytest_module_without_pytest_installed_and_approx():
    tests = ("import pytest\nimport no_such_framework\n\n\ndef test_approx():\n"
             "    assert add(0.1, 0.2) == pytest.approx(0.3)\n\n\ndef test_plain():\n    assert add(1, 2) == 3\n")
    plan = make_plan(tests)
    assert [c.kind for c in plan.checks if c.test is not None] == ["expr", "expr"]
    assert "0.3" not in json.dumps(plan.probes)
    assert score(RIGHT, tests).passed == 2  # the failed imports fail no test that does not use them
    assert score(NONE, tests).passed == 0


def test_unittest_setup_calling_super():
    tests = ("import unittest\nclass T(unittest.TestCase):\n    def setUp(self):\n        super().setUp()\n"
             "        self.x = 1\n    def test_a(self):\n        self.assertEqual(add(self.x, 1), 2)\n")
    assert score(RIGHT, tests).passed == 1
