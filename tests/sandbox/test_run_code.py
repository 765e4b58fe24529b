"""``run_code``: one code string run as a script under the same isolation as the tests, its output returned and
nothing judged (what a ``python(code)`` tool for tool-use GRPO needs)."""

from __future__ import annotations

import os

import pytest

from grpo_rlvr.sandbox import SandboxLimits, isolation_layers, run_code

LIMITS = SandboxLimits(timeout_s=5.0, cpu_s=5.0)


def test_it_returns_what_the_code_printed_and_reads_stdin():
    run = run_code("import sys\nprint('hello', sys.stdin.read().strip()[::-1])\nprint(__name__)\n", "abc\n",
                   limits=LIMITS)
    assert (run.stdout, run.exit_code, run.reason, run.timed_out) == ("hello cba\n__main__\n", 0, "", False)
    assert set(run.layers) == set(isolation_layers())


def test_a_failing_program_says_why():
    run = run_code("import sys\nprint('before')\nraise ValueError('bad input')\n", limits=LIMITS)
    assert run.stdout == "before\n" and run.exit_code == 1 and "ValueError: bad input" in run.stderr
    assert "exited with code 1" in run.reason


def test_a_program_that_never_ends_is_stopped():
    run = run_code("while True:\n    pass\n", limits=SandboxLimits(timeout_s=1.0, cpu_s=1.0))
    assert run.reason and run.exit_code != 0


def test_it_is_as_isolated_as_the_tests():
    here = os.path.abspath(__file__)
    run = run_code(f"import os, socket\ntry:\n    open({here!r}).read()\n    print('read')\nexcept OSError:\n"
                   "    print('denied')\ntry:\n    socket.socket(socket.AF_INET).connect(('127.0.0.1', 1))\n"
                   "except OSError:\n    print('no network')\nprint(sorted(k for k in os.environ if 'SECRET' in k))\n",
                   limits=LIMITS)
    assert run.stdout.splitlines() == ["denied", "no network", "[]"], run


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="SandboxLimits"):
        run_code("print(1)", limits={"timeout_s": 1})
