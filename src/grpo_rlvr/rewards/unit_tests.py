"""``unit_tests``: run the completion's program against the row's tests in the sandbox; score = share passed.

Tests (the ``tests`` column) are assert strings, stdin/stdout cases, or a string of test code: a script,
pytest ``test_*`` functions, a ``unittest.TestCase``, or HumanEval's ``check(candidate)``, which checks the
function the row's ``entry_point`` column names (see ``grpo_rlvr.sandbox`` for how each is counted and
what each guarantees). Tests judged inside the sandbox are marked in the reason ("(weak: test code ran in
the sandbox)"); ``reward.notes["weak_samples"]`` counts such samples over the reward's life. With
``threshold`` set the score is binary (1.0 when at least that share passes). The sandbox's isolation layers
are recorded in ``reward.notes["isolation_layers"]``, and why any is missing in
``reward.notes["missing_layers"]`` (also logged as a warning). Where the sandbox cannot isolate programs
well enough (a container without user namespaces and without Landlock, see ``grpo_rlvr.sandbox``) it refuses
to score unless ``allow_degraded_isolation`` is true; then ``reward.notes["degraded_isolation"]`` records
what is missing, the inspection artifact keeps it and the gate shows it. A broken sandbox raises
SandboxError (never a silent 0); malformed ``tests`` data, or test code that runs no test, raise RowError
(``BadColumn``): the row check (``check_row``, also run by ``validate`` on every row) plans each row's tests exactly
as a batch does (``sandbox.plan_tests``), so a row that passes it runs.
"""

from __future__ import annotations

from grpo_rlvr.errors import BadColumn, RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, row_value, source_fingerprint


def unit_tests_reward(tests_column: str = "tests", timeout_s: float = 5.0, memory_mb: int = 512,
                      threshold: float | None = None, workers: int | None = None,
                      entry_point_column: str = "entry_point", sample_timeout_s: float | None = None,
                      allow_degraded_isolation: bool = False, max_output_bytes: int = 8_000_000) -> Reward:
    """Build the unit-test reward.

    Args:
        tests_column: the dataset column holding the tests.
        timeout_s: wall and CPU seconds per program execution (one per sample for assert tests, one per
            stdin/stdout case). Some right programs need more than the 5 s default (a correct but slow solution,
            a large input, a loaded machine): they score 0 with "timed out after 5.0 s" in the reason. Raise it
            in the brief's params (``timeout_s: 20``) or with ``--option timeout_s=20``.
        memory_mb: memory of each process, and of each execution's processes together, in MiB (≥ 128).
        threshold: None for the fraction passed; a share in (0, 1] for a binary score.
        workers: programs run at once (default: CPU count).
        entry_point_column: the column naming the function that ``check(candidate)`` test code checks
            (HumanEval's ``entry_point``); used only when a row has it.
        sample_timeout_s: wall seconds for all of one completion's executions together (default: twice
            ``timeout_s``); past it the completion scores 0.
        allow_degraded_isolation: score even where the sandbox lacks the isolation it requires (recorded).
        max_output_bytes: what one execution may print (stdout + stderr) before it is stopped; a stdin/stdout case
            always allows its expected output and 64 KiB more.
    Raises:
        RewardError: bad parameters.
    """
    from grpo_rlvr.sandbox import (
        SandboxLimits,
        isolation_problems,
        missing_layers,
        plan_tests,
        run_unit_tests_batch,
    )

    try:
        limits = SandboxLimits(timeout_s=timeout_s, cpu_s=timeout_s, memory_mb=memory_mb,
                               sample_timeout_s=sample_timeout_s, max_output_bytes=max_output_bytes)
    except ValueError as e:
        raise RewardError(f"reward 'unit_tests': {e}") from None
    if not isinstance(allow_degraded_isolation, bool):
        raise RewardError(f"reward 'unit_tests': params.allow_degraded_isolation is {allow_degraded_isolation!r}; "
                          "use true or false")
    if threshold is not None and not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
        raise RewardError(f"reward 'unit_tests': params.threshold is {threshold!r}; use a share in (0, 1] or null")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise RewardError(f"reward 'unit_tests': params.workers is {workers!r}; use a positive integer or null")
    notes: dict = {}

    def job_of(row: dict) -> tuple[object, str | None]:
        """The row check: (tests, entry point) of the row, its tests planned as the batch will plan them."""
        tests = row_value("unit_tests", row, tests_column, "tests_column")
        entry_point = row.get(entry_point_column)
        if entry_point is not None and not isinstance(entry_point, str):
            raise BadColumn("unit_tests", entry_point_column, f"reward 'unit_tests': column {entry_point_column!r} "
                            f"must hold a function name, got {type(entry_point).__name__}")
        try:
            plan_tests(tests, entry_point)
        except ValueError as e:  # malformed tests in the dataset: bad input, not model output
            raise BadColumn("unit_tests", tests_column, f"reward 'unit_tests': column {tests_column!r}: {e}") \
                from None
        return tests, entry_point

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        jobs = [(text, *job_of(row)) for text, row in zip(texts, rows, strict=True)]
        try:
            verdicts = run_unit_tests_batch(jobs, limits=limits, workers=workers,
                                            allow_degraded_isolation=allow_degraded_isolation)
        except ValueError as e:  # planned above: only a shape the row check cannot see (never seen)
            raise BadColumn("unit_tests", tests_column, f"reward 'unit_tests': column {tests_column!r}: {e}") \
                from None
        out = []
        for v in verdicts:
            if v.layers:
                notes["isolation_layers"] = list(v.layers)
                problems = isolation_problems(v.layers)
                if problems:  # only reached with allow_degraded_isolation: the sandbox refuses otherwise
                    notes["degraded_isolation"] = ("accepted by allow_degraded_isolation: " + "; ".join(problems))
            if missing_layers():
                notes["missing_layers"] = missing_layers()
            notes["samples"] = notes.get("samples", 0) + 1
            notes["weak_samples"] = notes.get("weak_samples", 0) + (v.weak > 0)
            frac = v.passed / v.total if v.total else 0.0
            score = frac if threshold is None else float(frac >= threshold - 1e-12)
            out.append(Scored(score, v.reason))
        return out

    params = {"tests_column": tests_column, "timeout_s": timeout_s, "memory_mb": memory_mb, "threshold": threshold,
              "entry_point_column": entry_point_column, "sample_timeout_s": sample_timeout_s,
              "allow_degraded_isolation": allow_degraded_isolation, "max_output_bytes": max_output_bytes}
    reward = Reward("unit_tests", "correctness", params, scorer, source_fingerprint(unit_tests_reward, extra=params),
                    columns=(tests_column,), check_row=job_of)
    reward.notes = notes
    return reward
