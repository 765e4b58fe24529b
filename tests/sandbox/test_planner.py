"""The planner: the test's own values are computed in a process of its own, bounded, never in the trainer."""

from __future__ import annotations

import os

import pytest

from grpo_rlvr.sandbox import run_unit_tests
from grpo_rlvr.sandbox._run import _cached_plan
from grpo_rlvr.sandbox.judging import planner as _planner


def test_plans_of_test_code_are_made_in_another_process():
    _cached_plan.cache_clear()
    verdict = run_unit_tests("def f():\n    return 5\n", ["import math", "assert f() == math.lcm(1, 5)"])
    assert verdict.passed == 1
    assert _planner._planner is not None and _planner._planner.proc.pid != os.getpid()
    assert _planner._planner.proc.poll() is None  # kept for the next plan


def test_a_test_value_too_costly_to_compute_is_bad_input_and_the_next_plan_works(monkeypatch):
    # 10 ** 10 ** 8 holds a CPU for seconds: in the trainer it would hold the GIL through the training step.
    monkeypatch.setattr(_planner, "PLAN_TIMEOUT_S", 1.0)
    _cached_plan.cache_clear()
    with pytest.raises(ValueError, match=r"could not be computed within 1 s .*write them as literals"):
        run_unit_tests("def f():\n    return 1\n", ["assert f() == 10 ** 10 ** 8 % 7"])
    verdict = run_unit_tests("def f():\n    return 1\n", ["assert f() == 2 ** 0"])
    assert (verdict.passed, verdict.total) == (1, 1)


def test_a_test_value_past_the_planners_memory_fails_where_python_fails():
    # 8 GB in the test's own value: the planner (2 GiB) cannot hold it, nor can the sandbox; the test fails, as it
    # would in Python on such a machine, and neither the trainer nor the planner is hurt.
    _cached_plan.cache_clear()
    verdict = run_unit_tests("def f():\n    return 1\n", ["assert f() == len([0] * (10 ** 9))"])
    assert verdict.passed == 0 and "MemoryError" in verdict.reason
    assert _planner._planner.proc.poll() is None
    assert run_unit_tests("def f():\n    return 1\n", ["assert f() == 1"]).passed == 1


def test_a_planner_that_died_is_replaced():
    _cached_plan.cache_clear()
    run_unit_tests("def f():\n    return 1\n", ["assert f() == 1"])
    _planner._planner.proc.kill()
    _planner._planner.proc.wait()
    _cached_plan.cache_clear()
    assert run_unit_tests("def f():\n    return 1\n", ["assert f() == 1 + 0"]).passed == 1
