"""Which checkpoints this run wrote, so ``--resume`` continues this run and nothing else.

``train.py --resume DIR`` loads DIR's weights and trains on: given an SFT checkpoint (same layout: weights,
optimizer, ``trainer_state.json``), a resume would train new weights under the old review. So the trainer records
each checkpoint it saves in ``output/checkpoints.json`` (:class:`CheckpointLedger`): the SHA-256 of every file
that makes the model (weights, shards, configs; not the optimizer, scheduler or random state). The run check
(:func:`resume_problems`) then accepts a resume only from a ``checkpoint-N`` folder of this run's output that
the ledger lists, with the same bytes.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

LEDGER = "checkpoints.json"
# Trainer state that does not make the model: the optimizer (twice the weights), scheduler, random state, args.
_NOT_WEIGHTS = ("optimizer.*", "scheduler.*", "rng_state*", "training_args.bin", "trainer_state.json", "*optim_states*",
                "latest", "zero_to_fp32.py", "*.md")


def model_digests(checkpoint: Path) -> dict[str, str]:
    """``relative name -> SHA-256`` of the files in ``checkpoint`` that make the model (hash cache underneath)."""
    from grpo_rlvr.identity.hash_cache import sha256_files

    files = {p.relative_to(checkpoint).as_posix(): p for p in sorted(Path(checkpoint).rglob("*"))
             if p.is_file() and not any(fnmatch.fnmatch(p.name, pat) for pat in _NOT_WEIGHTS)}
    digests = sha256_files(list(files.values()))
    return {name: digests[p] for name, p in files.items()}


def read_ledger(output: Path) -> dict:
    try:
        data = json.loads((Path(output) / LEDGER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def record(output: Path, checkpoint: Path) -> None:
    """Add ``checkpoint`` (a folder in ``output``) to the ledger, atomically."""
    from grpo_rlvr.files import write_json_atomic

    ledger = read_ledger(output)
    ledger[Path(checkpoint).name] = model_digests(Path(checkpoint))
    write_json_atomic(Path(output) / LEDGER, ledger)


def resume_problems(output: Path, resume: str | None) -> list[str]:
    """Why training may not resume from ``resume`` (empty when it may, or when there is no resume)."""
    if not resume:
        return []
    output = Path(output).resolve()
    ckpt = Path(resume).expanduser().resolve()
    if ckpt.parent != output:
        return [f"--resume {resume}: not a checkpoint of this run ({output}/checkpoint-N); resuming from another "
                "folder would train weights the review never saw. Start the run fresh, or inspect and review the "
                "model you mean to train from (point model.name_or_path at it)"]
    recorded = read_ledger(output).get(ckpt.name)
    if not isinstance(recorded, dict) or not recorded:
        return [f"--resume {resume}: this run did not write that checkpoint ({output / LEDGER} does not list it), so "
                "it may hold other weights; resume from a checkpoint this run saved, or start fresh"]
    now = model_digests(ckpt)
    changed = sorted(n for n in set(recorded) | set(now) if recorded.get(n) != now.get(n))
    if changed:
        return [f"--resume {resume}: its files changed since this run saved them ({', '.join(changed[:4])}); resume "
                "from an untouched checkpoint, or start fresh"]
    return []


def ledger_callback(output: Path):
    """A TrainerCallback that records each checkpoint the trainer saves (on the main process)."""
    from transformers import TrainerCallback

    class CheckpointLedger(TrainerCallback):
        def on_save(self, args, state, control, **kwargs):
            if state.is_world_process_zero:
                ckpt = Path(args.output_dir) / f"checkpoint-{state.global_step}"
                if ckpt.is_dir():
                    record(output, ckpt)

    return CheckpointLedger()
