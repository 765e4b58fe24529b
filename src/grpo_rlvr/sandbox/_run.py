"""The public entry points: plan the tests, extract the code, run in the pool, decide the verdicts here.

Covered: validation of every job before anything runs, order-preserving parallel batches, "no code found"
without starting a process, each reply judged as soon as it arrives (the parent holds at most one reply per
worker). Not covered: per-job limits within one batch (one ``SandboxLimits`` for all).
"""

from __future__ import annotations

import base64
import functools
import os
from dataclasses import dataclass

from ..errors import SandboxError
from .isolation.limits import SandboxLimits
from .isolation.pool import Pool, shared_pool
from .judging.budget import OverBudget
from .judging.extract import extract_program
from .judging.make_plan import make_plan
from .judging.plan import Plan
from .judging.planner import plan_elsewhere
from .judging.verdict import (
    UnitTestVerdict,
    death_reason,
    decide,
    no_code_verdict,
    ordered_layers,
    unjudged_verdict,
)

_DEFAULT_LIMITS = SandboxLimits()


def run_unit_tests(program: str, tests, *, entry_point: str | None = None,
                   limits: SandboxLimits = _DEFAULT_LIMITS, allow_degraded_isolation: bool = False) -> UnitTestVerdict:
    """Run a model's completion against ``tests`` in the sandbox and judge it outside the sandbox.

    Args:
        program: the raw completion text; the last fenced Python block is run (else the whole text).
        tests: a list of assert strings; a list of ``{"input": str, "output": str}`` stdin/stdout cases;
            a JSON string of either; or a string of test code (a script, pytest ``test_*`` functions, a
            ``unittest.TestCase``, HumanEval's ``check(candidate)``; see ``judging.plan_code``).
        entry_point: for ``check(candidate)`` test code, the name of the function it checks.
        limits: resource limits of each execution and of the sample.
        allow_degraded_isolation: score even where the sandbox lacks the layers ``isolation.policy`` requires.

    Returns:
        The verdict: passed/total, a one-line reason, per-test details, the isolation layers in effect.

    Raises:
        ValueError: ``tests`` (or ``limits``) is malformed. Bad model code is never an error: it scores 0.
        SandboxError: the sandbox itself is broken, or cannot isolate programs here (and that is not accepted).
    """
    return run_unit_tests_batch([(program, tests, entry_point)], limits=limits, workers=1,
                                allow_degraded_isolation=allow_degraded_isolation)[0]


def run_unit_tests_batch(
    jobs: list[tuple[str, object]], *, limits: SandboxLimits = _DEFAULT_LIMITS, workers: int | None = None,
    allow_degraded_isolation: bool = False,
) -> list[UnitTestVerdict]:
    """``run_unit_tests`` over many ``(program, tests)`` pairs, in parallel; verdicts in input order.

    Args:
        jobs: ``(completion text, tests)`` pairs or ``(completion text, tests, entry_point)`` triples, as
            for ``run_unit_tests``.
        limits: resource limits of each execution and of each sample.
        workers: programs run at once (one warm supervisor each); default: the number of CPUs.
        allow_degraded_isolation: score even where the sandbox lacks the layers ``isolation.policy`` requires.

    Raises:
        ValueError: a job is malformed; the message names its index. Nothing has run then.
        SandboxError: the sandbox itself is broken, or cannot isolate programs here (and that is not accepted).
    """
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    return run_batch(jobs, limits, workers, shared_pool(workers), allow_degraded_isolation)


def run_batch(jobs, limits: SandboxLimits, workers: int, pool: Pool,
              allow_degraded: bool = False) -> list[UnitTestVerdict]:
    """``run_unit_tests_batch`` on a given pool (tests use their own pools)."""
    if not isinstance(limits, SandboxLimits):
        raise ValueError(f"limits must be a SandboxLimits, got {type(limits).__name__}")
    plans, programs = [], []
    for i, job in enumerate(jobs):
        if not isinstance(job, (tuple, list)) or len(job) not in (2, 3):
            raise ValueError(f"jobs[{i}] must be a (program, tests) pair, got {type(job).__name__}")
        try:
            plans.append(plan_tests(job[1], job[2] if len(job) == 3 else None))
        except ValueError as e:
            raise ValueError(f"jobs[{i}]: {e}") from e
        programs.append(extract_program(job[0]))
    todo = [i for i, code in enumerate(programs) if code]

    def one(i: int) -> UnitTestVerdict:
        reply = pool.run(_message(plans[i], programs[i], limits), allow_degraded)
        if "lost" in reply:
            return unjudged_verdict(plans[i], reply["lost"])
        try:
            return decide(plans[i], reply["reports"], limits)
        except (KeyError, TypeError) as e:  # our own supervisor's report: not something a program writes
            raise SandboxError(f"the sandbox sent a malformed report: {type(e).__name__}: {e}") from e
        except OverBudget as e:  # the sample's values cost the trainer too much to judge: 0, with the reason
            return unjudged_verdict(plans[i], str(e))
        except (ArithmeticError, RecursionError, MemoryError, ValueError) as e:  # a value no bound foresaw
            return unjudged_verdict(plans[i], f"{type(e).__name__}: {e}")

    verdicts = [no_code_verdict(plan) for plan in plans]
    for i, verdict in zip(todo, pool.map(one, todo, workers), strict=True):
        verdicts[i] = verdict
    return verdicts


@dataclass(frozen=True)
class CodeRun:
    """What one code string did in the sandbox (``run_code``).

    Attributes:
        stdout: what it printed (up to ``max_output_bytes``), decoded as UTF-8 with replacement.
        stderr: the end of what it wrote to stderr (``STDERR_TAIL`` bytes at most).
        exit_code: its exit code (negative: the signal that ended it), None when it could not be reaped.
        timed_out: it hit the wall-clock limit.
        reason: "" when it ran to the end and exited 0; else why not ("timed out after 5.0 s", "killed by
            SIGKILL", "the process exited with code 1 before finishing", "output limit exceeded").
        layers: the isolation layers of its run.
    """

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    reason: str
    layers: tuple[str, ...]


def run_code(code: str, stdin: str = "", *, limits: SandboxLimits = _DEFAULT_LIMITS,
             allow_degraded_isolation: bool = False) -> CodeRun:
    """Run one code string as a script (``__name__ == "__main__"``) under the same isolation as ``run_unit_tests``,
    with ``stdin`` as its standard input, and return what it printed. Nothing is judged.

    Raises:
        ValueError: ``limits`` is not a ``SandboxLimits``, or ``code``/``stdin`` not a string.
        SandboxError: the sandbox itself is broken, or cannot isolate programs here (and that is not accepted).
    """
    return run_code_in(shared_pool(1), code, stdin, limits=limits, allow_degraded_isolation=allow_degraded_isolation)


def run_code_in(pool: Pool, code: str, stdin: str = "", *, limits: SandboxLimits = _DEFAULT_LIMITS,
                allow_degraded_isolation: bool = False, request_timeout_s: float | None = None) -> CodeRun:
    """``run_code`` on a given pool (the python tool's: one supervisor per slot); ``request_timeout_s`` as
    ``Pool.run`` (counted from the program's start; past it ``isolation.pool.Overdue``)."""
    if not isinstance(limits, SandboxLimits):
        raise ValueError(f"limits must be a SandboxLimits, got {type(limits).__name__}")
    if not isinstance(code, str) or not isinstance(stdin, str):
        raise ValueError("code and stdin must be strings")
    message = {"mode": "stdio", "program": code, "probes": [], "deliveries": [], "stdin": [stdin],
               "keep_stdout": [limits.max_output_bytes], "limits": limits.as_dict()}
    reply = pool.run(message, allow_degraded_isolation, request_timeout_s)
    if "lost" in reply:
        return CodeRun("", "", None, False, reply["lost"], ())
    report = reply["reports"][0]
    finished = not report["timed_out"] and not report["output_exceeded"] and report["exit_code"] == 0 and not (
        report.get("overrun") or report.get("budget_exceeded"))
    why = "" if finished else report.get("overrun") or death_reason(report, limits.timeout_s, limits.cpu_s)
    return CodeRun(base64.b64decode(report["stdout"]).decode("utf-8", "replace"),
                   base64.b64decode(report["stderr"]).decode("utf-8", "replace"), report["exit_code"],
                   bool(report["timed_out"]), why, ordered_layers(report["layers"]))


def plan_tests(tests, entry_point: str | None = None) -> Plan:
    """The plan a batch runs ``tests`` by (``entry_point``: the function ``check(candidate)`` test code checks):
    the same function, and the same cache, ``run_unit_tests_batch`` plans with, so a row that plans here runs
    there. The ``unit_tests`` reward's row check (and so ``validate``) calls it.

    Raises:
        ValueError: ``tests`` or ``entry_point`` is malformed (what is wrong and what works).
        SandboxError: the planner process cannot be started.
    """
    if entry_point is not None and not isinstance(entry_point, str):
        raise ValueError(f"entry_point must be a function name, got {type(entry_point).__name__}")
    return _plan(tests, entry_point)


def _plan(tests, entry_point: str | None) -> Plan:
    """``make_plan``, cached for the hashable shapes: a GRPO group repeats one row's tests for every completion."""
    if isinstance(tests, str):
        return _cached_plan(tests, entry_point)
    if isinstance(tests, (list, tuple)) and all(isinstance(t, str) for t in tests):
        return _cached_plan(tuple(tests), entry_point)
    return make_plan(tests, entry_point)


@functools.lru_cache(maxsize=4096)
def _cached_plan(tests, entry_point: str | None) -> Plan:
    """Made in the planner process: the test's own values are computed there, never in this (the trainer's)."""
    return plan_elsewhere(list(tests) if isinstance(tests, tuple) else tests, entry_point)


# Bytes of stdout kept beyond the expected output's length: trailing whitespace the comparison ignores.
STDOUT_SLACK = 65536


def _message(plan: Plan, program: str, limits: SandboxLimits) -> dict:
    """What the supervisor receives. It never contains an expected value; for stdin/stdout cases it holds how
    much of each stdout to send back (the expected output's length and some slack: more is wrong anyway)."""
    sent = limits.as_dict()
    if plan.mode == "stdio":
        stdin = [case_input for case_input, _ in plan.cases]
        needed = [len(expected.encode()) + STDOUT_SLACK for _, expected in plan.cases]
        sent["max_output_bytes"] = max([limits.max_output_bytes, *needed])  # a right program's output fits
        keep = [min(sent["max_output_bytes"], n) for n in needed]
    else:
        stdin, keep = [""], [0]
    return {
        "mode": plan.mode,
        "program": program,
        "probes": [list(p) for p in plan.probes],
        "deliveries": [[unit, list(indices), last] for unit, indices, last in plan.deliveries],
        "once": list(plan.once),
        "stdin": stdin,
        "keep_stdout": keep,
        "limits": sent,
    }
