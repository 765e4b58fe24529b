"""Whether a run's outputs come from trainings that passed the run check: its start records (``provenance``) and
each checkpoint's proof (``checkpoint_ledger``) read together. ``diagnose`` reports what this finds."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.records import run_key
from grpo_rlvr.records.checkpoint_ledger import LEDGER, entry_problem, read_ledger
from grpo_rlvr.records.provenance import PROVENANCE, lock_change, valid_starts
from grpo_rlvr.records.run_outputs import prior_outputs


def audit(output: Path) -> list[str]:
    """Why this run's outputs are not proven to come from trainings that passed the run check (empty when they
    are, or when ``output`` holds no training's outputs): no valid start, or a checkpoint / ``final`` without a
    valid proof bound to one, or changed since it was saved."""
    output = Path(output)
    if not prior_outputs(output):
        return []
    try:
        key = run_key.load_key()
    except run_key.RunKeyError as e:
        return [f"the run's proofs cannot be checked: {e}"]
    starts = valid_starts(output, key)
    out = []
    if not starts:
        out.append(f"{output / PROVENANCE} holds no valid start: no training of this run passed the run check of "
                   "the rendered train.py (a script that skipped or replaced the guard, or records written by "
                   "hand); do not count this run: train it again with `grpo-rlvr train RUN`")
    ledger = read_ledger(output)
    saved = sorted(p.name for p in output.iterdir() if p.is_dir() and (p.name.startswith("checkpoint-")
                                                                          or p.name == "final"))
    for name in saved:
        entry = ledger.get(name)
        problem = entry_problem(output, name, entry, starts, key)
        if problem:
            out.append(f"{output / name}: {problem} (see {LEDGER})")
        elif (changed := lock_change(starts[entry["run_id"]], output.parent)) is not None:
            out.append(f"{output / name}: saved by a training under another lock than the run folder's now "
                       f"({changed}): the folder was rendered again for another brief or review, so these outputs "
                       "are another run's; do not count them as this run's: train the new run in its own folder")
    return out


__all__ = ["audit"]
