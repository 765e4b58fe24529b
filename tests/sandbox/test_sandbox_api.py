"""Correct programs get credit: partial credit, stdin/stdout cases, fenced code, JSON tests, test code."""

from __future__ import annotations

import json

import pytest

import grpo_rlvr.sandbox as sandbox
from grpo_rlvr.sandbox import SandboxLimits, UnitTestVerdict, run_unit_tests, run_unit_tests_batch

ADD = "def add(a, b):\n    return a + b\n"
ADD_TESTS = ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(-1, 1) == 0"]
SHORT = SandboxLimits(timeout_s=1.0, cpu_s=2.0)  # the wall clock, not the CPU limit, fires first


def test_public_names():
    assert sorted(sandbox.__all__) == sorted(
        ["CodeRun", "SandboxLimits", "UnitTestVerdict", "degraded_isolation_notes", "isolation_layers",
         "isolation_problems", "missing_layers", "plan_tests", "run_code", "run_unit_tests", "run_unit_tests_batch",
         "weak_sample_counts"]
    )


def test_correct_program_passes_all():
    verdict = run_unit_tests(ADD, ADD_TESTS)
    assert isinstance(verdict, UnitTestVerdict)
    assert (verdict.passed, verdict.total, verdict.reason) == (3, 3, "3/3 passed")
    assert verdict.details == ("test 1 passed", "test 2 passed", "test 3 passed")
    assert not verdict.timed_out and "process" in verdict.layers


def test_partial_credit_and_reason():
    program = "def add(a, b):\n    return 5 if a == 2 else a + b\n"
    verdict = run_unit_tests(program, ["assert add(1, 2) == 3", "assert add(0, 0) == 0", "assert add(2, 2) == 4"])
    assert (verdict.passed, verdict.total) == (2, 3)
    assert verdict.reason == "2/3 passed; test 3 failed: add(2, 2) returned 5, expected 4"
    assert verdict.score == pytest.approx(2 / 3)


def test_exception_in_one_test_fails_only_that_test():
    program = "def inv(x):\n    return 1 / x\n"
    verdict = run_unit_tests(program, ["assert inv(1) == 1.0", "assert inv(0) == 0", "assert inv(2) == 0.5"])
    assert verdict.passed == 2
    assert "inv(0) raised ZeroDivisionError" in verdict.details[1]


def test_fenced_code_is_extracted():
    completion = f"Sure! Here is the code:\n\n```python\n{ADD}```\n\nIt adds `a` and `b`."
    assert run_unit_tests(completion, ADD_TESTS).passed == 3


def test_no_code_found():
    verdict = run_unit_tests("I cannot solve this.\n```text\nsorry\n```", ADD_TESTS)
    assert (verdict.passed, verdict.total, verdict.reason, verdict.layers) == (0, 3, "no code found", ())


def test_syntax_error_fails_every_test():
    verdict = run_unit_tests("def add(a, b) return a + b", ADD_TESTS)
    assert verdict.passed == 0 and "failed to load: SyntaxError" in verdict.reason


def test_json_string_tests():
    assert run_unit_tests(ADD, json.dumps(ADD_TESTS)).passed == 3


def test_stdin_stdout_cases_ignore_trailing_whitespace():
    program = "a, b = map(int, input().split())\nprint(a + b, '  ')\nprint()\n"
    cases = [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5", "output": "10"}, {"input": "2 2\n", "output": "5\n"}]
    verdict = run_unit_tests(program, cases)
    assert (verdict.passed, verdict.total) == (2, 3)
    assert verdict.details[2] == "test 3 failed: wrong output at line 1: got '4', expected '5'"


def test_stdin_stdout_runtime_error_and_exit_code():
    verdict = run_unit_tests("import sys\nx = int(input())\nprint(x)\nsys.exit(3 if x == 2 else 0)\n",
                             [{"input": "1", "output": "1"}, {"input": "2", "output": "2"}, {"input": "z", "output": "z"}])
    assert verdict.passed == 1
    assert verdict.details[1].startswith("test 2 failed: the process exited with code 3")
    assert "ValueError" in verdict.details[2]


def test_stdin_stdout_timeout_skips_later_cases():
    # a 3 s clock a case: the first case's start fits it on a loaded machine (at 1 s the sample's 2 s budget ran out
    # before the second case's own clock did, in CI's 3.14 lane at load 15)
    verdict = run_unit_tests("n = int(input())\nwhile n == 2: pass\nprint(n)\n",
                             [{"input": "1", "output": "1"}, {"input": "2", "output": "2"}, {"input": "3", "output": "3"}],
                             limits=SandboxLimits(timeout_s=3.0, cpu_s=6.0))
    assert verdict.passed == 1 and verdict.timed_out
    assert verdict.details[2] == "test 3 failed: not run: an earlier case timed out"


def test_json_string_stdio_cases():
    cases = json.dumps([{"input": "hi\n", "output": "hi\n"}])
    assert run_unit_tests("print(input())", cases).passed == 1


def test_check_function_called_at_the_end_is_judged_per_assert():
    code = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\ncheck(add)\n"
    verdict = run_unit_tests(ADD, code)
    assert (verdict.passed, verdict.total, verdict.weak) == (2, 2, 0)
    failing = run_unit_tests("def add(a, b):\n    return a - b\n", code)
    assert failing.passed == 1 and "candidate(2, 3) returned -1, expected 5" in failing.reason


def test_order_comparisons_are_judged_in_the_parent():
    program = "def big(n):\n    return n * 10\n"
    verdict = run_unit_tests(program, ["assert big(2) > 15", "assert big(1) > 15"])
    assert (verdict.passed, verdict.weak) == (1, 0)
    assert verdict.details == ("test 1 passed", "test 2 failed: assert big(1) > 15 failed: big(1) returned 10")


def test_asserts_the_parent_cannot_judge_run_inside_the_sandbox():
    program = "def big(n):\n    return n * 10\n"
    tests = ["def over(x, limit):\n    return x > limit", "assert over(big(2), 15)", "assert over(big(1), 15)"]
    verdict = run_unit_tests(program, tests)
    assert (verdict.passed, verdict.weak) == (1, 2)
    assert verdict.details[0] == "test 1 passed (checked inside the sandbox)"


def test_floats_and_containers_compare_as_python_does():
    # Python's own ==, !=, in and not in, on plain data: True == 1, 1 == 1.0, and so 1 != True is False.
    program = "def f(x):\n    return {'a': [x, (x, 1.5)], 'b': {x}}\n"
    verdict = run_unit_tests(program, ["assert f(2) == {'a': [2, (2, 1.5)], 'b': {2}}",
                                       "assert f(True) == {'a': [1, (1, 1.0 + 0.5)], 'b': {1.0}}",
                                       "assert f(1) != {'a': [True, (1, 1.5)], 'b': {1}}",
                                       "assert f(2) == {'a': [2, (2, 1.5)], 'b': {3}}",
                                       "assert [1] not in [f(1)['a'][:1]]",
                                       "assert f(1)['a'][0] is True"])
    assert verdict.details == (
        "test 1 passed", "test 2 passed",
        "test 3 failed: f(1) returned {'a': [1, (1, 1.5)], 'b': {1}}, expected anything else",
        "test 4 failed: f(2) returned {'a': [2, (2, 1.5)], 'b': {2}}, expected {'a': [2, (2, 1.5)], 'b': {3}}",
        "test 5 failed: assert [1] not in [f(1)['a'][:1]] failed: f(1)['a'][:1] returned [1]",
        "test 6 failed: f(1)['a'][0] returned 1 (int), expected True (bool)")
    assert verdict.weak == 0


def test_timeout_reason():
    verdict = run_unit_tests("while True:\n    pass\n", ["assert f(1) == 1"], limits=SHORT)
    assert verdict.timed_out and verdict.reason == "timed out after 1.0 s" and verdict.passed == 0


def test_batch_preserves_order_and_counts():
    jobs = [(f"def f(x):\n    return x * {k}\n", ["assert f(2) == 4", "assert f(3) == 6"]) for k in range(6)]
    jobs.append(("", ["assert f(1) == 1"]))
    verdicts = run_unit_tests_batch(jobs, workers=2)
    assert [v.passed for v in verdicts] == [0, 0, 2, 0, 0, 0, 0]
    assert verdicts[-1].reason == "no code found"


def test_batch_malformed_tests_name_the_job():
    with pytest.raises(ValueError, match=r"jobs\[1\]: tests must be"):
        run_unit_tests_batch([(ADD, ADD_TESTS), (ADD, 3)])


def test_bad_workers():
    with pytest.raises(ValueError, match="workers"):
        run_unit_tests_batch([(ADD, ADD_TESTS)], workers=0)


def test_the_docstrings_covered_weak_and_not_covered_lists_name_real_tests():
    # Each line of grpo_rlvr.sandbox's lists names the tests that show it: they must exist, and every test
    # file of the sandbox (but code extraction, another module's) must be named.
    import re
    from pathlib import Path

    here = Path(__file__).parent
    defined = {f.stem: set(re.findall(r"^def (test_\w+)", f.read_text(), re.M)) for f in here.glob("test_*.py")}
    doc = sandbox.__doc__.split("weak and not covered", 1)[1]
    named_files, last_module = set(), ""
    for ref in re.findall(r"``(test_[\w*]+(?:::test_[\w*]+)?)``", doc):
        module, _, name = ref.partition("::")
        if module in defined and not name:
            named_files.add(module)
            last_module = module
            continue
        if not name:  # a test named after the last module named on the line
            module, name = last_module, module
        assert module in defined, f"{ref}: no tests/sandbox/{module}.py"
        pattern = re.compile(name.replace("*", r"\w*") + "$")
        assert any(pattern.match(t) for t in defined[module]), f"{ref}: no such test"
        named_files.add(module)
        last_module = module
    assert set(defined) - named_files <= {"test_code_extraction"}, set(defined) - named_files
