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

A test that cannot run whatever the program is is the data's fault, never the model's: the row check refuses test
code that imports a module the sandbox's Python does not have (it failed for every program, or was skipped and
the test passed), and, when the row carries a reference solution (``reference_column``), every test its own
reference does not pass (a name neither the tests nor the reference define, a wrong expected value). ``validate``
names such a row by file and line; in training its samples are unscorable (None) and named, not scored 0. Without a
reference, a name the tests read that the program does not define stays the program's failure (a model that
misnames the function must not escape its 0): the reason then says the tests may be at fault.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import re

from grpo_rlvr.errors import BadColumn, RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, row_value, source_fingerprint

_NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")


def _test_sources(tests) -> list[str]:
    """The Python source pieces of a ``tests`` value (assert strings, or one string of test code; none for
    stdin/stdout cases)."""
    if isinstance(tests, str):
        try:
            parsed = json.loads(tests)
        except ValueError:
            return [tests]
        tests = parsed if isinstance(parsed, list) else [tests]
    return [t for t in tests if isinstance(t, str)] if isinstance(tests, list) else []


@functools.lru_cache(maxsize=4096)
def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_imports(tests) -> list[str]:
    """The modules the test code imports that this Python (the sandbox's: it runs this interpreter) does not have,
    in the order written. Such a test fails, or is skipped and passes, whatever the program is."""
    out: list[str] = []
    for src in _test_sources(tests):
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue   # planned later, which names a test that does not parse
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.split(".")[0]
                if top != "__future__" and not _installed(top) and top not in out:
                    out.append(top)
    return out


def unit_tests_reward(tests_column: str = "tests", timeout_s: float = 5.0, memory_mb: int = 512,
                      threshold: float | None = None, workers: int | None = None,
                      entry_point_column: str = "entry_point", sample_timeout_s: float | None = None,
                      allow_degraded_isolation: bool = False, max_output_bytes: int = 8_000_000,
                      reference_column: str | None = None) -> Reward:
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
        reference_column: the column holding each row's reference solution (a program that passes its tests);
            when a row has one, a test the reference does not pass is the data's fault: ``validate`` refuses the
            row and training leaves its samples unscored. None: no reference.
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
        """The row check: (tests, entry point) of the row, its tests planned as the batch will plan them, none
        importing a module this Python lacks, each passed by the row's reference when it has one."""
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
        if missing := missing_imports(tests):
            raise BadColumn("unit_tests", tests_column, f"reward 'unit_tests': column {tests_column!r}: the tests "
                            f"import {', '.join(map(repr, missing))}, which the sandbox's Python does not have, so "
                            "they fail (or are skipped and pass) whatever the program is: drop the import or the "
                            "row, or install the module into the environment that trains")
        reference = row.get(reference_column) if reference_column else None
        if isinstance(reference, str) and reference.strip():
            problem = reference_problem(reference, json.dumps(tests, sort_keys=True, default=str), entry_point)
            if problem:
                raise BadColumn("unit_tests", tests_column, f"reward 'unit_tests': column {tests_column!r}: the "
                                f"row's reference solution (column {reference_column!r}) {problem}: a test its own "
                                "reference cannot pass is the data's fault; fix the test or the reference, or drop "
                                "the row")
        return tests, entry_point

    @functools.lru_cache(maxsize=4096)
    def reference_problem(reference: str, tests_json: str, entry_point: str | None) -> str | None:
        """Why the reference does not pass every test (None when it does); once per row in a process."""
        verdict = run_unit_tests_batch([(reference, json.loads(tests_json), entry_point)], limits=limits, workers=1,
                                       allow_degraded_isolation=allow_degraded_isolation)[0]
        return None if verdict.total and verdict.passed == verdict.total else f"fails: {verdict.reason}"

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
            out.append(Scored(score, _with_data_hint(v.reason, reference_column)))
        return out

    if reference_column is not None and not isinstance(reference_column, str):
        raise RewardError(f"reward 'unit_tests': params.reference_column is {reference_column!r}; name a column or "
                          "use null")
    params = {"tests_column": tests_column, "timeout_s": timeout_s, "memory_mb": memory_mb, "threshold": threshold,
              "entry_point_column": entry_point_column, "sample_timeout_s": sample_timeout_s,
              "allow_degraded_isolation": allow_degraded_isolation, "max_output_bytes": max_output_bytes,
              "reference_column": reference_column}
    reward = Reward("unit_tests", "correctness", params, scorer, source_fingerprint(unit_tests_reward, extra=params),
                    columns=(tests_column,), check_row=job_of)
    reward.notes = notes
    return reward


def _with_data_hint(reason: str, reference_column: str | None) -> str:
    """A failure on a name nothing defined says that the tests may be at fault (the program is scored 0 all the
    same: without a reference nothing tells a test's missing helper from a program's missing function)."""
    m = _NAME_ERROR.search(reason)
    if not m or reference_column:
        return reason
    return (f"{reason} (nothing defines {m.group(1)!r}: if the tests should, the row is broken; with a reference "
            "solution in each row, params.reference_column, validate names such rows)")


__all__ = ["missing_imports", "unit_tests_reward"]
