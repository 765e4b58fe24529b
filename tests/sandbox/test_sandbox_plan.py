"""Planning tests: what goes to the sandbox (never an expected value) and what the parent keeps."""

from __future__ import annotations

import ast
import json

import pytest

from grpo_rlvr.sandbox.judging.make_plan import make_plan
from grpo_rlvr.sandbox.judging.plan import judge_value


def leaves(plan, i=0):
    """What probe ``i`` sends to the sandbox: the sources of its leaves (strong) or its whole condition."""
    kind, payload, _ = plan.probes[i]
    return [_source(spec) for spec in payload] if kind == "leaves" else payload


def _source(spec) -> str:
    """A leaf spec written back as Python: an expression, a method of an earlier leaf, or a consuming built-in."""
    if spec[0] in ("e", "b"):
        return spec[1]
    if spec[0] == "m":
        return f"{spec[1]}.{spec[2]}"
    args = [_source(a) for a in spec[2]] + [f"{k}={_source(a)}" for k, a in spec[3]]
    if spec[1] == "str.join":
        return f"{args[0]}.join({args[1]})"
    return f"{spec[1]}({', '.join(args)})"


def test_equality_assert_sends_only_the_call():
    plan = make_plan(["assert add(1, 2) == 918273", "assert 55555 == add(2, 3)"])
    assert plan.mode == "eval"
    assert [leaves(plan, 0), leaves(plan, 1)] == [["add(1, 2)"], ["add(2, 3)"]]
    assert [c.kind for c in plan.checks] == ["expr", "expr"]
    assert "918273" not in json.dumps(plan.probes) and "55555" not in json.dumps(plan.probes)


def test_assert_message_is_dropped():
    plan = make_plan(["assert f(1) == 424242, 'expected 424242'"])
    assert "424242" not in json.dumps(plan.probes)


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("assert f(1) != 3", ["f(1)"]),
        ("assert f(1) is None", ["f(1)"]),
        ("assert f(1) is not False", ["f(1)"]),
        ("assert is_prime(7)", ["is_prime(7)"]),
        ("assert not is_prime(8)", ["is_prime(8)"]),
        ("assert math.isclose(area(2), 12.566, rel_tol=1e-3)", ["area(2)"]),
        ("assert set(f(3)) == set([1, 2])", ["set(f(3))"]),
        ("assert f(1) > 3", ["f(1)"]),
        ("assert abs(f(1.33) - 0.33) < 1e-06", ["f(1.33)"]),
        ("assert sorted(f(3)) == [1, 2] and len(f(4)) == 3", ["sorted(f(3))", "len(f(4))"]),
        ("assert list(gen(3)) == [0, 1, 2]", ["list(gen(3))"]),
        ("assert ' '.join(words('a b')) == 'A B'", ["' '.join(words('a b'))"]),
        ("assert sum(map(f, [1, 2])) == 6", ["sum(map(f, [1, 2]))"]),
        ("assert f([3, 5, 7]) == (3 + 5 + 7, 3 * 5 * 7)", ["f([3, 5, 7])"]),
        ("assert shout('abc').startswith('ABC')", ["shout('abc')", "0.startswith"]),
        ("assert Solution().two_sum([2, 7], 9) == [0, 1]", ["Solution().two_sum([2, 7], 9)"]),
        ("assert f(2) == math.sqrt(2)", ["f(2)"]),
        # all/any/bool/isinstance are decided here: over the test's values, one call each crosses
        ("assert all(f(x) > 0 for x in (1, 2))", ["f(1)", "f(2)"]),
        ("assert all(map(is_prime, [2, 3]))", ["is_prime(2)", "is_prime(3)"]),
        ("assert not any(map(lambda n: f(n) == n, [4, 6]))", ["f(4)", "f(6)"]),
        ("assert [f(x) for x in range(3)] == [0, 1, 4]", ["f(0)", "f(1)", "f(2)"]),
        ("assert all(gen(3))", ["list(gen(3))"]),  # the program's own iterable: its elements cross
        ("assert bool(f(3))", ["f(3)"]),
        ("assert isinstance(f(3), int)", ["f(3)"]),
    ],
)
def test_strong_forms_send_only_the_calls_into_the_program(text, sent):
    plan = make_plan([text])
    assert plan.checks[0].kind == "expr"
    assert leaves(plan) == sent


@pytest.mark.parametrize(
    "text",
    [
        "assert f(1) == g(1)",  # the program compared with itself
        "assert math.isclose(f(1), g(1))",
        "assert helper(f(1))",  # a test helper runs in the sandbox: the program may patch what it calls
        "assert all(f(x) > 0 for x in g(2))",  # a comprehension over program values
        "assert print(f(1)) is None",  # a builtin the parent does not apply
    ],
)
def test_weak_forms_run_whole_in_the_sandbox(text):
    plan = make_plan(["def helper(x):\n    return x", text])
    check = plan.checks[-1]
    assert check.kind == "weak" and check.why
    assert plan.probes[-1] == ("eval", ast.unparse(ast.parse(text).body[0].test), -1)


def test_named_and_computed_expected_values_stay_in_the_parent():
    plan = make_plan(["import math", "EXPECTED = math.sqrt(2) * 271828", "assert math.isclose(f(2), EXPECTED)",
                      "lst = [1, -3, 5]", "odd_sum = sum([i ** 2 for i in lst if i > 0])",
                      "assert f(lst) == odd_sum"])
    assert [c.kind for c in plan.checks if c.test is not None] == ["expr", "expr"]
    sent = json.dumps(plan.probes)
    assert "EXPECTED" not in sent and "odd_sum" not in sent and "384422" not in sent  # never bound in the sandbox
    # The input list goes to the program, which may change it as Python lets it (it is the program's from then on);
    # the expected value computed from it stayed here.
    assert ("exec", "lst = [1, -3, 5]", -1) in plan.probes
    assert [leaves(plan, i) for i, c in enumerate(plan.checks) if c.kind == "expr"] == [["f(2)"], ["f(lst)"]]


def test_random_values_of_the_test_are_drawn_once_in_the_parent():
    code = ("import random\ndef check(candidate):\n    for _ in range(3):\n"
            "        x, y = random.randint(0, 10**6), random.randint(0, 10**6)\n        assert candidate(x, y) == x + y\n")
    plan = make_plan(code, "add")
    assert plan.total == 1 and [c.kind for c in plan.checks if c.test is not None] == ["expr"] * 3
    calls = [leaves(plan, i)[0] for i, c in enumerate(plan.checks) if c.kind == "expr"]
    assert all(call.startswith("candidate(") and "random" not in call and "x" not in call for call in calls)


@pytest.mark.parametrize(
    "code",
    [
        "def check(candidate):\n    for n in (2, 3, 5):\n        assert candidate(n) is True\n",
        "def test_primes():\n    for n in [2, 3, 5]:\n        assert is_prime(n)\n",
        "import unittest\nclass T(unittest.TestCase):\n    def test_primes(self):\n"
        "        for n in range(2, 4):\n            with self.subTest(n=n):\n"
        "                self.assertIs(is_prime(n), True)\n",
    ],
)
def test_loops_over_the_tests_values_are_unrolled_into_strong_asserts(code):
    plan = make_plan(code, "is_prime")
    judged = [c for c in plan.checks if c.test is not None]
    assert plan.total == 1 and judged and all(c.kind == "expr" for c in judged)


def test_a_loop_over_program_values_stays_weak():
    plan = make_plan("def check(candidate):\n    for n in candidate(3):\n        assert n > 0\n", "f")
    assert [c.kind for c in plan.checks if c.test is not None] == ["ran"]


def test_set_up_values_are_the_parents():
    code = ("import unittest\nclass T(unittest.TestCase):\n    def setUp(self):\n        self.expected = 2.5\n"
            "    def test_a(self):\n        self.assertAlmostEqual(mean([2, 3]), self.expected)\n")
    plan = make_plan(code)
    judged = [c for c in plan.checks if c.test is not None]
    assert [c.kind for c in judged] == ["expr"] and leaves(plan, plan.checks.index(judged[0])) == ["mean([2, 3])"]


def test_json_string_of_asserts_is_a_list():
    plan = make_plan(json.dumps(["assert f(1) == 2", "assert f(2) == 4"]))
    assert plan.mode == "eval" and plan.total == 2


def test_stdio_cases_and_json_string_of_them():
    cases = [{"input": "1 2\n", "output": "3\n"}, {"input": "", "output": "0"}]
    assert make_plan(cases).mode == "stdio"
    plan = make_plan(json.dumps(cases))
    assert plan.mode == "stdio" and plan.cases == (("1 2\n", "3\n"), ("", "0"))


def test_test_code_string_of_only_asserts_becomes_a_list():
    plan = make_plan("assert f(1) == 2\nassert f(2) == 4\n")
    assert plan.mode == "eval" and plan.total == 2


def test_a_plain_script_is_one_weak_test():
    plan = make_plan("r = f(1)\nif r != 2:\n    raise SystemExit(1)\n")
    assert plan.total == 1 and [c.kind for c in plan.checks] == ["ran"]


@pytest.mark.parametrize(
    ("tests", "needle"),
    [
        (42, "got a int"),
        ([], "empty list"),
        ([1, 2], "list of int"),
        (["assert f(1) == 2", {"input": "x"}], "list of dict/str"),
        ([{"input": "x"}], "tests[0] must have string 'input' and 'output'"),
        (["assert f(1 =="], "tests[0] is not valid Python"),
        ("def broken(:", "not valid Python test code"),
    ],
)
def test_malformed_tests_raise_value_error(tests, needle):
    with pytest.raises(ValueError, match=None) as info:
        make_plan(tests)
    assert needle in str(info.value)


def test_judge_reports_value_and_expected():
    strong = make_plan(["assert add(2, 2) == 4"]).checks[0].strong
    assert strong.judge([4]) == (True, "", False)
    assert strong.judge([5]) == (False, "add(2, 2) returned 5, expected 4", False)
    assert strong.judge([4.0])[0]  # Python: 4.0 == 4
    ok, why, _ = strong.judge(["4"])
    assert not ok and why == "add(2, 2) returned '4' (str), expected 4 (int)"


def test_isclose_takes_numbers_as_python_does():
    strong = make_plan(["assert math.isclose(f(1), 1.0)"]).checks[0].strong
    assert strong.judge([1.0])[0]
    assert strong.judge([True])[0]  # Python: math.isclose(True, 1.0); bool is an int
    assert not strong.judge(["1.0"])[0]


def test_weak_judge_needs_a_true_value():
    check = make_plan(["def h(x):\n    return x", "assert h(f(1))"]).checks[-1]
    assert judge_value(check, True) == (True, "")
    assert not judge_value(check, 0)[0]
