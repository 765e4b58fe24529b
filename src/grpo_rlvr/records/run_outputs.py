"""A run folder holds one run: what in ``RUN/output`` is an earlier training's outputs, and the refusal to start a
second training into them.

Training again into an output folder that holds a run (after a re-render with the same lock, say) would start
from the base model, put its checkpoints beside the old ones, append to the same ``metrics.jsonl``, replace
``final/`` and ``train_summary.json``, and leave ``diagnose`` reading a mix. ``grpo-rlvr train`` refuses it (exit
2) before anything starts, and the rendered ``train.py`` refuses it too when started by hand (exit 1, with the
gate's other reasons). Continuing the run (``--resume``, from a checkpoint this run saved) is what such a folder
is for. An unreviewed smoke test's outputs are not a run: a gated run moves them aside (``run.guard``).
"""

from __future__ import annotations

from pathlib import Path

# What a training (TRL and our callbacks) or its diagnosis writes into the output folder.
OUTPUT_NAMES = ("metrics.jsonl", "train_summary.json", "checkpoints.json", "final", "completions",
                "unscorable.json", "diagnosis.json", "diagnosis.md")
SMOKE_MARKER = "UNREVIEWED_SMOKE_TEST.json"


def prior_outputs(output: Path) -> list[str]:
    """The names in ``output`` that an earlier training wrote (sorted; empty when there are none, and for the
    outputs of an unreviewed smoke test, which a gated run moves aside)."""
    output = Path(output)
    if not output.is_dir() or (output / SMOKE_MARKER).is_file():
        return []
    found = sorted(p.name for p in output.iterdir()
                   if p.name in OUTPUT_NAMES or (p.name.startswith("checkpoint-") and p.is_dir()))
    # a diagnosis alone is of a run that died before it trained (its crash record): nothing to mix with
    return [] if set(found) <= {"diagnosis.json", "diagnosis.md"} else found


def second_run_problem(output: Path, run: Path, resuming: bool) -> str | None:
    """Why a training may not start into ``output`` (None when it may). ``resuming``: it continues a checkpoint
    of this run (``--resume`` found one), which is the one way to train on into a folder that holds a run."""
    found = prior_outputs(output)
    if not found or resuming:
        return None
    shown = ", ".join(found[:6]) + (", …" if len(found) > 6 else "")
    fresh = (f"start a fresh run in a new folder: `grpo-rlvr render BRIEF --out NEW_RUN`, then `grpo-rlvr train "
             f"NEW_RUN` (or move {output} aside yourself)")
    if any(n.startswith("checkpoint-") for n in found):
        return (f"{output} already holds a run's outputs ({shown}); training again here would mix two runs "
                f"(new checkpoints beside the old, one metrics.jsonl, final/ and train_summary.json replaced). "
                f"Continue that run with `grpo-rlvr train {run} --resume`, or {fresh}")
    return (f"{output} already holds a run's outputs ({shown}) and no checkpoint to continue from, so `--resume` "
            f"cannot continue it and training again here would mix two runs; {fresh}")


def is_smoke_output(output: Path) -> bool:
    """True when ``output`` holds an unreviewed smoke test (what ``diagnose`` flags)."""
    return (Path(output) / SMOKE_MARKER).is_file()
