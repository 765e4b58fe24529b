"""The check a rendered run makes before it trains: the gate passes and the rendered files are unchanged.

``grpo-rlvr train`` calls :func:`check_run` before launching anything; the rendered ``train.py`` calls
:func:`refuse_unless_gated` itself before any model loads: one process before torch and TRL are imported, several
after building their GRPOConfig (which starts the process group). Rank 0 runs the check and broadcasts the outcome, so every rank of ``accelerate launch``,
``launch.sh`` or ``slurm.sh`` refuses together (exit 1, the gate's reasons on stderr).

What is checked: ``brief.lock.json`` parses and records a SHA-256 of every rendered file, each file still has
that hash, every rendered file and the lock are what ``render`` makes from the brief the lock names now (so a
lock edited to name another, reviewed brief, or a train.py rewritten together with its hash, is refused), the
brief's fingerprint (which covers the model's and data's content) is the one rendered, the gate passes for the
recorded inspection, and a ``--resume`` checkpoint is one this run saved (``checkpoint_ledger``). The check is
computed in a clean interpreter (``run.clean_interpreter.run_check``: ``python -I -S``, no startup hooks run, every
byte of the model and data read again rather than taken from the hash cache), and the rendered ``train.py``
restarts itself under ``python -I`` first, so ``PYTHONPATH`` or a ``sitecustomize`` cannot patch it.

The check comes back as a value (``checked_run.RunCheck``: the lock, the problems, what it verified and the
start it signed), which :func:`refuse_unless_gated` returns to ``train.py``; nothing of it is kept in this module.
After the trainer has loaded the model, the data and the rewards, ``train.py`` passes it to
:func:`refuse_if_changed_since_check`: every file the check hashed must still be the same file (device, inode,
size, mtime, ctime, and the link itself when it is a symlink), and each reward's fingerprint the one the gate
verified. A file swapped between the check and the load is refused before the first step.

The escape hatch for smoke tests is ``--unreviewed-smoke-test`` (``train.py`` and ``grpo-rlvr train``): the
gate is skipped (the file hashes are still checked), at most ``SMOKE_MAX_STEPS`` steps run, no checkpoint and
no final model are saved, ``output/UNREVIEWED_SMOKE_TEST.json`` and ``train_summary.json`` say so, and
``diagnose`` flags the run. A later gated run moves such an output folder aside
(``output.unreviewed-smoke-<time>/``) so a smoke test can never be taken for, or mixed into, a real run.

Demo acceptance of oracle verdicts: only :func:`demo_acceptance`, entered by ``grpo-rlvr demo`` in its own
process around the in-process training call. It is process memory, so no file, environment variable or flag
can turn it on.

Limits: an agent that writes its own training script is not stopped by this file (nor by anything on the same
machine): such a run has no lock and no gate record, so it cannot pass for a reviewed one. A folder swapped for
another and swapped back within the seconds between the check and the load leaves no trace in the files' own
stamps. On several nodes with separate disks, only node 0's copy of the model and data is checked.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError
from grpo_rlvr.records.checked_run import RunCheck
from grpo_rlvr.records.run_outputs import SMOKE_MARKER, is_smoke_output, second_run_problem

SMOKE_MAX_STEPS = 3
_demo_check = None     # set only inside demo_acceptance: the demo's in-process check


@contextlib.contextmanager
def demo_acceptance(check):
    """Inside this block, in this process only, run checks are made by ``check`` (the demo's: oracle verdicts
    accepted) instead of the clean interpreter. ``grpo-rlvr demo`` enters it around its in-process training."""
    global _demo_check
    before, _demo_check = _demo_check, check
    try:
        yield
    finally:
        _demo_check = before


def check_run(run: Path, smoke: bool = False, resume: str | None = None, start: str | None = None) -> RunCheck:
    """The run check: the lock, every reason this run may not train (empty when it may) and, when it passed, what
    it verified. ``smoke`` skips the gate only; ``resume`` is the checkpoint ``train.py --resume`` names;
    ``start`` (train.py's door) asks a passing check for a signed start record of this process (``provenance``),
    carried in the result's ``start``.

    Computed in a clean interpreter (``run.clean_interpreter``: ``run.check.check_run_here`` there), so nothing
    that patched this process decides it; inside :func:`demo_acceptance`, by the demo's check in this process.

    Raises:
        InputFileError: the run folder has no readable lock.
        StartupHookError: a startup hook that names grpo_rlvr is installed.
    """
    if _demo_check is not None:
        return _demo_check(run, smoke=smoke, resume=resume, start=start)
    # the clean interpreter is asked here, when a check starts: it runs the check (``run.check``) by name, so
    # nothing above the trainer is imported when train.py imports this module
    from grpo_rlvr.run.clean_interpreter import run_check

    return RunCheck.from_dict(run_check("run", run=str(Path(run).resolve()), smoke=smoke, resume=resume,
                                        start=start))


def changed_since_check(check: RunCheck | None, rewards: list | None = None) -> list[str]:
    """Why what was loaded may not be what ``check`` verified: files replaced since, or rewards whose code is
    not the reviewed code (empty when all holds, or when no check passed: ``check`` is None or verified nothing)."""
    from grpo_rlvr.identity.hash_cache import changed_since

    verified = check.verified if check is not None else {}
    if not verified:
        return []
    out = [f"{p} changed after the gate's check and before training (it was replaced, rewritten or re-linked "
           "while the run started); start the run again, and leave the model and data alone while it loads"
           for p in changed_since(verified.get("checked") or {})]
    reviewed = verified.get("rewards") or {}
    for r in rewards or []:
        if r.name in reviewed and reviewed[r.name] != r.fingerprint:
            out.append(f"reward {r.name!r}: its code changed after the gate's check (fingerprint {r.fingerprint[:12]}, "
                       f"reviewed {str(reviewed[r.name])[:12]}); start the run again once the reward is as reviewed")
    return out


def refuse_if_changed_since_check(check: RunCheck | None, rewards: list | None = None) -> None:
    """Called by the rendered train.py once the trainer holds the model, data and rewards, with the check
    :func:`refuse_unless_gated` returned: exit 1 on every rank when :func:`changed_since_check` finds anything
    (before the first step)."""
    from accelerate import PartialState

    state = PartialState()
    outcome = [changed_since_check(check, rewards) if state.is_main_process else None]
    if state.num_processes > 1:
        from accelerate.utils import broadcast_object_list

        outcome = broadcast_object_list(outcome, from_process=0)
    if outcome[0]:
        if state.is_main_process:
            print("train.py: training refused (loaded, but not what was checked):\n"
                  + "\n".join(f"- {p}" for p in outcome[0]), file=sys.stderr, flush=True)
        sys.exit(1)



def refuse_missing_dashboards(config) -> None:
    """Every dashboard the run reports to (``report_to``) can start on this machine, asked of transformers itself:
    each integration callback the Trainer would build is built here, before the model loads, instead of failing
    with a traceback once it has.

    Raises:
        MachineError: a dashboard's package is missing (or transformers does not know its name); names it and the
            fix.
    """
    from transformers.integrations import get_reporting_integration_callbacks

    from grpo_rlvr.errors import MachineError

    try:
        callbacks = get_reporting_integration_callbacks(config.report_to)
    except (ValueError, KeyError) as e:
        raise MachineError(f"grpo.report_to: {config.report_to!r}: {e}; fix it in the brief and render again") from e
    for cls in callbacks:
        problem = _cannot_start(cls)
        if problem:
            raise MachineError(f"grpo.report_to: {cls.__name__} cannot start on this machine: {problem}. Make it "
                               "available here (install its package), or set grpo.report_to: none in the brief and "
                               "render again")


def _cannot_start(cls) -> str | None:
    """Why transformers' integration callback ``cls`` cannot be built here (None when it can). A callback that
    failed half-built complains again from its ``__del__`` (neptune, mlflow): that noise is dropped here, since the
    failure itself is what is reported."""
    import gc

    hook, sys.unraisablehook = sys.unraisablehook, lambda *_: None
    try:
        try:
            cls()
        except Exception as e:  # noqa: BLE001 - each integration refuses in its own way (RuntimeError, ValueError..)
            return str(e) or type(e).__name__
        return None
    finally:
        gc.collect()   # the half-built object goes now, while its __del__'s complaint is dropped
        sys.unraisablehook = hook


def smoke_config(cfg: dict, max_steps: int | None) -> dict:
    """GRPOConfig kwargs for an unreviewed smoke test: few steps, each logged (so ``diagnose`` and ``watch`` see the
    steps it printed), nothing saved that could pass for a model."""
    steps = min(max_steps or SMOKE_MAX_STEPS, SMOKE_MAX_STEPS)
    if max_steps is not None and max_steps > SMOKE_MAX_STEPS:
        print(f"train.py: --max-steps {max_steps} is capped at {SMOKE_MAX_STEPS}: an unreviewed smoke test runs at most "
              f"{SMOKE_MAX_STEPS} steps", file=sys.stderr, flush=True)
    return {**cfg, "max_steps": steps, "logging_steps": 1, "save_strategy": "no", "report_to": "none"}


def one_process() -> bool:
    """Whether this training is one process (no launcher set ``WORLD_SIZE`` above 1): it checks its gate before torch
    loads; several processes check once their process group has started (:func:`refuse_unless_gated`)."""
    return int(os.environ.get("WORLD_SIZE") or 1) <= 1


def refuse_unless_gated(run_dir: Path, output_dir: Path, smoke: bool = False, resume: str | None = None,
                        saves: bool | None = None) -> RunCheck | None:
    """Called by the rendered train.py before any model loads: exit 1 on every rank unless the run may train. One
    process calls it before torch loads; several call it once GRPOConfig has started their process group
    (``WORLD_SIZE`` > 1), which the outcome is broadcast over. ``saves``: whether the run saves checkpoints (its
    ``save_strategy``), kept in the run's lock record so that a second trainer's refusal promises a checkpoint only
    where there will be one.

    Returns the passing check on the main process (train.py hands it to :func:`refuse_if_changed_since_check`
    and the checkpoint ledger), None on the other ranks."""
    main, processes = True, 1
    if not one_process():
        from accelerate import PartialState

        state = PartialState()
        main, processes = state.is_main_process, state.num_processes
    outcome, check = [None], None
    if main:
        from grpo_rlvr.records.one_trainer import hold
        from grpo_rlvr.records.provenance import door

        started_by = "grpo-rlvr demo" if _demo_check else door()
        # one trainer per run: this process holds the run's lock from here until it exits (records/one_trainer)
        if busy := hold(run_dir, started_by, resume, saves=False if smoke else saves, smoke=smoke):
            outcome = [[busy]]
    if main and outcome[0] is None:
        try:
            check = check_run(run_dir, smoke=smoke, resume=resume, start=None if smoke else started_by)
            problems = list(check.problems)
        except GrpoRlvrError as e:   # no lock, or a startup hook patching grpo_rlvr: refused all the same
            problems = [str(e)]
        output = Path(output_dir)
        if smoke and output.is_dir() and any(output.iterdir()) and not is_smoke_output(output):
            problems.append(f"{output} holds the outputs of a real run; an unreviewed smoke test would mix into them. "
                            "Render a separate run folder for the smoke test (`grpo-rlvr render BRIEF --out DIR`)")
        elif not smoke and (mixed := second_run_problem(output, Path(run_dir), resuming=resume is not None)):
            problems.append(mixed)
        outcome = [problems]
        if not problems:
            _prepare_output(Path(output_dir), smoke)
            if not smoke and check.start:   # made and signed by the check that just passed
                from grpo_rlvr.records.provenance import append_start

                append_start(Path(output_dir), check.start)
    if processes > 1:
        from accelerate.utils import broadcast_object_list

        outcome = broadcast_object_list(outcome, from_process=0)
    problems = outcome[0]
    if problems:
        if main:
            print("train.py: training refused (nothing was loaded):\n" + "\n".join(f"- {p}" for p in problems),
                  file=sys.stderr, flush=True)
        sys.exit(1)
    if smoke and main:
        print(f"train.py: UNREVIEWED SMOKE TEST: the gate was skipped; at most {SMOKE_MAX_STEPS} steps, no "
              "checkpoint, no final model. This is not a training run.", file=sys.stderr, flush=True)
    return check


def _prepare_output(output: Path, smoke: bool) -> None:
    from grpo_rlvr.files import move_aside, write_json_atomic

    if (output / SMOKE_MARKER).is_file() and not smoke:
        moved = move_aside(output, "unreviewed-smoke")
        print(f"train.py: moved the earlier unreviewed smoke test's outputs to {moved}", file=sys.stderr)
    if smoke:
        write_json_atomic(output / SMOKE_MARKER, {
            "unreviewed_smoke_test": True, "max_steps": SMOKE_MAX_STEPS,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "note": "the inspection gate was skipped; this run trained nothing to keep"})


def main(argv: list[str] | None = None) -> int:
    """``python -m grpo_rlvr.run.guard RUN [train.py options]``: launch.sh's check before it starts vLLM.

    Exit 0 when the run may train, 1 with the reasons otherwise. Options other than ``--unreviewed-smoke-test``
    and ``--resume`` (those meant for train.py) are ignored.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print("usage: python -m grpo_rlvr.run.guard RUN [--unreviewed-smoke-test]", file=sys.stderr)
        return 2
    rest = args[1:]
    resume = next((a.split("=", 1)[1] for a in rest if a.startswith("--resume=")), None) or next(
        (rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "--resume"), None)
    try:
        problems = check_run(Path(args[0]), smoke="--unreviewed-smoke-test" in rest, resume=resume).problems
    except GrpoRlvrError as e:
        problems = [str(e)]
    if problems:
        print("launch.sh: training refused (no server started, nothing loaded):\n"
              + "\n".join(f"- {p}" for p in problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
