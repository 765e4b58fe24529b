"""pytest's collection as the planner sees it (``judging.plan_pytest``): what each parameter set and fixture becomes,
what stays in the parent, and what pytest would refuse."""

from __future__ import annotations

import json

import pytest

from grpo_rlvr.sandbox import SandboxLimits, run_unit_tests
from grpo_rlvr.sandbox.judging.make_plan import make_plan

from .plain_runs import pytest_tests

LIMITS = SandboxLimits(timeout_s=10.0, cpu_s=10.0)
PROGRAM = "def double(x):\n    return 2 * x\n"


def test_expected_values_from_parametrize_and_fixtures_never_reach_the_sandbox():
    tests = ("import pytest\n@pytest.fixture\ndef table():\n    return {3: 918273, 4: 55555}\n"
             "@pytest.mark.parametrize('x, want', [(1, 271828), (2, 314159)])\n"
             "def test_p(x, want):\n    assert double(x) == want\n"
             "def test_f(table):\n    assert double(3) == table[3]\n")
    plan = make_plan(tests)
    sent = json.dumps(plan.probes)
    assert not any(v in sent for v in ("271828", "314159", "918273", "55555")), sent
    assert [c.kind for c in plan.checks if c.test is not None] == ["expr"] * 3
    assert plan.tests == ("test_p[1-271828]", "test_p[2-314159]", "test_f")


def test_marks_skip_xfail_skipif_and_pytestmark_leave_tests_out_and_custom_marks_are_ignored():
    tests = ("import sys, pytest\n"
             "@pytest.mark.skip\ndef test_a():\n    assert double(1) == 0\n"
             "@pytest.mark.skipif(sys.version_info > (3,), reason='py3')\ndef test_b():\n    assert double(1) == 0\n"
             "@pytest.mark.skipif(sys.version_info < (3,), reason='py2')\ndef test_c():\n    assert double(1) == 2\n"
             "@pytest.mark.xfail(reason='bug')\ndef test_d():\n    assert double(1) == 0\n"
             "@pytest.mark.slow\n@pytest.mark.whatever(3)\ndef test_e():\n    assert double(2) == 4\n"
             "@pytest.mark.parametrize('x', [1, pytest.param(2, marks=pytest.mark.skip), pytest.param(3, id='three')])\n"
             "def test_f(x):\n    assert double(x) == 2 * x\n")
    assert make_plan(tests).tests == ("test_c", "test_e", "test_f[1]", "test_f[three]")
    skipped = "import pytest\npytestmark = pytest.mark.skip\ndef test_a():\n    assert double(1) == 2\n"
    with pytest.raises(ValueError, match="holds no test"):
        make_plan(skipped)


def test_indirect_parametrize_module_scope_yield_teardown_and_fixtures_depending_on_fixtures(tmp_path):
    tests = ("import pytest\n"
             "CALLS = []\n"
             "@pytest.fixture(scope='module')\ndef counter():\n    CALLS.append(1)\n    return len(CALLS)\n"
             "@pytest.fixture\ndef base(request):\n    return request.param * 10\n"
             "@pytest.fixture\ndef doubled(base):\n    return double(base)\n"
             "@pytest.mark.parametrize('base', [1, 2], indirect=True)\n"
             "def test_indirect(doubled, base):\n    assert doubled == 2 * base\n"
             "def test_once_a(counter):\n    assert counter == 1\n"
             "def test_once_b(counter):\n    assert counter == 1\n"
             "@pytest.fixture\ndef resource():\n    yield double(5)\n    raise RuntimeError('teardown failed')\n"
             "def test_teardown_error(resource):\n    assert resource == 10\n")
    plain = pytest_tests({"p": (PROGRAM, tests)}, tmp_path)["p"]
    verdict = run_unit_tests(PROGRAM, tests, limits=LIMITS)
    ours = {label: d.startswith(f"test {i + 1} passed")
            for i, (label, d) in enumerate(zip(make_plan(tests).tests, verdict.details, strict=True))}
    assert ours == plain == {"test_indirect[1]": True, "test_indirect[2]": True, "test_once_a": True,
                             "test_once_b": True, "test_teardown_error": False}


@pytest.mark.parametrize(("tests", "needle"), [
    ("def test_a(nothing_here):\n    assert double(1) == 2\n", "asks for the fixture 'nothing_here'"),
    ("import pytest\n@pytest.fixture\ndef a(b):\n    return 1\n@pytest.fixture\ndef b(a):\n    return 2\n"
     "def test_x(a):\n    assert double(a) == 2\n", "depend on each other"),
    ("import pytest\n@pytest.mark.parametrize('x, y', [(1, 2, 3)])\ndef test_x(x, y):\n    assert double(x) == y\n",
     "does not give 2 values"),
])
def test_what_pytest_would_refuse_is_bad_input(tests, needle):
    with pytest.raises(ValueError, match=needle):
        make_plan(tests)


def test_a_module_scoped_fixture_run_in_the_sandbox_is_made_once_before_the_bodies_that_use_it(tmp_path):
    program = "MADE = []\ndef make():\n    MADE.append(1)\n    return len(MADE)\n"
    tests = ("import pytest\n@pytest.fixture(scope='module')\ndef shared():\n    return make()\n"
             "@pytest.fixture\ndef own():\n    return make()\n"
             "def test_a(shared, own):\n    assert shared == 1 and own == 2\n"
             "def test_b(shared, own):\n    assert shared == 1 and own == 2\n"
             "def test_c(shared):\n    assert shared == 1\n")
    assert pytest_tests({"p": (program, tests)}, tmp_path)["p"] == {"test_a": True, "test_b": False, "test_c": True}
    # the bodies run one after the other in one process, as under pytest: test_b's own fixture makes a third
    verdict = run_unit_tests(program, tests, limits=LIMITS)
    assert [d.endswith("passed") for d in verdict.details] == [True, False, True], verdict.details
