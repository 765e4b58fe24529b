"""Judging is bounded: the trainer's thread spends at most ``JUDGE_CPU_S`` of CPU judging one sample (past it the
sample scores 0, with the reason), and no single step of it is costly enough to hold the thread for long: ``//``,
``%`` and ``math.gcd`` of two huge ints are refused (their cost grows with the product of the sizes: 2-Mbit
operands cost seconds), and ``sum`` of many lists is linear (it was quadratic: 60,000 lists cost seconds)."""

from __future__ import annotations

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging import budget

LIMITS = SandboxLimits(timeout_s=20.0, cpu_s=20.0, max_output_bytes=4_000_000)
HUGE = "def f():\n    return (3 ** 1300000, 7 ** 350000)\n"  # 2.06 and 0.98 Mbit


@pytest.mark.parametrize("test", ["assert f()[0] // f()[1] == 5", "assert f()[0] % f()[1] == 5",
                                  "assert math.gcd(f()[0], f()[1]) == 1"])
def test_a_huge_quadratic_int_operation_is_refused_and_its_test_fails(test):
    verdict = run_unit_tests(HUGE, ["import math", test], limits=LIMITS)
    assert verdict.passed == 0 and "too costly to judge" in verdict.details[0], verdict.details


def test_small_int_operations_are_judged_as_python_does():
    program = "def f():\n    return (3 ** 1300000, 7)\n"
    verdict = run_unit_tests(program, ["import math", "assert f()[0] % f()[1] == pow(3, 1300000, 7)",
                                       "assert math.gcd(f()[0], 3 ** 5) == 243"], limits=LIMITS)
    assert verdict.score == 1.0, verdict.details


def test_sum_of_many_lists_is_judged_within_the_budget(monkeypatch):
    """sum(lists, []) is judged in linear time: 100,000 lists cost about 0.5 s of the trainer's CPU (1.2 s on this
    2-core machine at load 6); summed the quadratic way they cost about 9 s, so a 4 s budget tells them apart with
    room for a loaded machine (1.0 s failed CI's main lane under load). Reading the 100,000 lists back is held to
    the same room (its 1 s bound failed CI at load 15): this test is about sum, not decoding."""
    from grpo_rlvr.sandbox.judging import plaindata

    monkeypatch.setattr(budget, "JUDGE_CPU_S", 4.0)
    monkeypatch.setattr(plaindata, "MAX_DECODE_CPU_S", 4.0)
    program = "def f():\n    return [[i] for i in range(100000)]\n"
    tests = ["assert sum(f() + [[100000]], []) == list(range(100001))", "assert sum(f() + [[1]], []) == [1]"]
    verdict = run_unit_tests(program, tests, limits=SandboxLimits(timeout_s=20.0, cpu_s=20.0,
                                                                  max_output_bytes=8_000_000))
    assert verdict.details[0] == "test 1 passed", verdict.details
    assert verdict.details[1].startswith("test 2 failed: assert sum("), verdict.details


def test_a_sample_over_the_budget_scores_zero_with_the_reason(monkeypatch):
    monkeypatch.setattr(budget, "JUDGE_CPU_S", 0.0)
    verdict = run_unit_tests("def f():\n    return 1\n", ["assert f() == 1"], limits=LIMITS)
    assert verdict.score == 0.0 and "judging took more than 0 s of the trainer's CPU" in verdict.reason, verdict.reason
