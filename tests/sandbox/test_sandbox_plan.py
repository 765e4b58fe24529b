"""Planning tests: what goes to the sandbox (never an expected value) and what the parent keeps."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.sandbox._plan import judge_value, make_plan


def test_equality_assert_sends_only_the_call():
    plan = make_plan(["assert add(1, 2) == 918273", "assert 55555 == add(2, 3)"])
    assert plan.mode == "eval"
    assert plan.probes == (("eval", "add(1, 2)", -1), ("eval", "add(2, 3)", -1))
    assert [c.expected for c in plan.checks] == [918273, 55555]
    assert "918273" not in json.dumps(plan.probes) and "55555" not in json.dumps(plan.probes)


def test_assert_message_is_dropped():
    plan = make_plan(["assert f(1) == 424242, 'expected 424242'"])
    assert "424242" not in json.dumps(plan.probes)


@pytest.mark.parametrize(
    ("text", "probe", "kind"),
    [
        ("assert f(1) != 3", "f(1)", "ne"),
        ("assert f(1) is None", "f(1)", "eq"),
        ("assert f(1) is not False", "f(1)", "ne"),
        ("assert is_prime(7)", "is_prime(7)", "truthy"),
        ("assert not is_prime(8)", "is_prime(8)", "falsy"),
        ("assert math.isclose(area(2), 12.566, rel_tol=1e-3)", "area(2)", "isclose"),
        ("assert set(f(3)) == set([1, 2])", "set(f(3))", "eq"),
        ("assert f(1) > 3", "f(1) > 3", "weak"),
        ("assert f(1) == g(1)", "f(1) == g(1)", "weak"),
    ],
)
def test_assert_forms(text, probe, kind):
    plan = make_plan([text])
    assert plan.probes[0][1] == probe
    assert plan.checks[0].kind == kind


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
    check = make_plan(["assert add(2, 2) == 4"]).checks[0]
    assert judge_value(check, 4) == (True, "")
    assert judge_value(check, 5) == (False, "add(2, 2) returned 5, expected 4")
    ok, why = judge_value(check, 4.0)
    assert not ok and "(float)" in why and "(int)" in why


def test_isclose_rejects_bool_and_non_numbers():
    check = make_plan(["assert math.isclose(f(1), 1.0)"]).checks[0]
    assert judge_value(check, 1.0)[0]
    assert not judge_value(check, True)[0]
    assert not judge_value(check, "1.0")[0]
