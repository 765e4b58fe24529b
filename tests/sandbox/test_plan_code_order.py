"""The order the test bodies run in (``judging.plan_code``): pytest's. A module's test functions and classes as
written, interleaved; a pytest class's methods as written, a ``TestCase``'s by name; one body runner for them all
(no module-level step between two bodies), so module state carries from each test to the next as under plain
pytest. Each suite is run by plain pytest first; the sandbox must agree test by test, for a right program and a
wrong one."""

from __future__ import annotations

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging.make_plan import make_plan

from .plain_runs import pytest_tests

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
RIGHT = "calls = []\n\ndef record(x):\n    calls.append(x)\n    return list(calls)\n"
WRONG = "def record(x):\n    return [x]\n"  # remembers nothing
# Each test checks what the tests before it left in the program: the calls it has recorded, in order.
INTERLEAVED = """import unittest


def test_first():
    assert record("first") == ["first"]


class TestMiddle:
    def test_z_written_first(self):
        assert record("z") == ["first", "z"]

    def test_a_written_second(self):
        assert record("a") == ["first", "z", "a"]


def test_after_the_class():
    assert record("after") == ["first", "z", "a", "after"]


class TestLater(unittest.TestCase):
    def test_y(self):
        self.assertEqual(record("y"), ["first", "z", "a", "after", "x", "y"])

    def test_x(self):
        self.assertEqual(record("x"), ["first", "z", "a", "after", "x"])


def test_last():
    assert record("last")[-3:] == ["x", "y", "last"]
"""


def _per_test(program: str, tests: str) -> dict[str, bool]:
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    return {label: detail.startswith(f"test {i + 1} passed")
            for i, (label, detail) in enumerate(zip(make_plan(tests).tests, verdict.details, strict=True))}


@pytest.mark.parametrize("program", [RIGHT, WRONG], ids=["right", "wrong"])
def test_tests_run_in_the_files_order_as_under_pytest(program, tmp_path):
    plain = pytest_tests({"c": (program, INTERLEAVED)}, tmp_path)["c"]
    assert len(plain) == 7 and sum(plain.values()) == (7 if program is RIGHT else 1), plain
    assert _per_test(program, INTERLEAVED) == plain


def test_the_plan_runs_every_body_in_one_runner_in_file_order():
    plan = make_plan(INTERLEAVED)
    assert plan.tests == ("test_first", "TestMiddle.test_z_written_first", "TestMiddle.test_a_written_second",
                          "test_after_the_class", "TestLater.test_x", "TestLater.test_y", "test_last")
    units = [unit for unit, _, _ in plan.deliveries]
    assert units == [0, 1, 2, 3, 4, 5, 6, 7], units  # module-level statements once, then the bodies: no step between


def test_a_test_defined_twice_is_one_test_as_its_last_definition(tmp_path):
    tests = "def test_twice():\n    assert record('a') == ['a', 'a']\n\n\ndef test_other():\n    assert True\n\n\n" \
            "def test_twice():\n    assert record('a') == ['a']\n"
    plain = pytest_tests({"c": (RIGHT, tests)}, tmp_path)["c"]
    assert plain == {"test_twice": True, "test_other": True}, plain
    assert _per_test(RIGHT, tests) == plain


def test_a_value_of_the_test_modules_own_that_a_test_changes_in_place_does_not_carry_to_the_next(tmp_path):
    # Not covered (sandbox docs): the test module's own values (``seen = []`` at module level) are computed here, each
    # body from the module's value, so what one test appends the next does not see; plain pytest passes both. The
    # program's own module state carries (test_tests_run_in_the_files_order_as_under_pytest).
    tests = "seen = []\n\n\ndef test_a():\n    seen.append(1)\n    assert record('a') == ['a']\n\n\n" \
            "def test_b():\n    assert seen == [1]\n"
    plain = pytest_tests({"c": (RIGHT, tests)}, tmp_path)["c"]
    assert plain == {"test_a": True, "test_b": True}, plain
    assert _per_test(RIGHT, tests) == {"test_a": True, "test_b": False}
