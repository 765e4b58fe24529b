"""Which checkpoints this run wrote, so ``--resume`` continues this run and nothing else.

``train.py --resume DIR`` loads DIR's weights and trains on: given an SFT checkpoint (same layout: weights,
optimizer, ``trainer_state.json``), a resume would train new weights under the old review. So the trainer records
each checkpoint it saves in ``output/checkpoints.json`` (``trainer.training_callbacks.CheckpointLedger``): the SHA-256 of every file
in it (weights, shards, configs, and the optimizer, scheduler, random and trainer state a resume loads too), and
``final/`` once saved. In a distributed run every rank has finished its part of the save (each writes its own
random state) before rank 0 records it. Each entry carries a proof: an HMAC (``run_key``) over the output folder, the checkpoint's name, its
digests and the ``run_id`` of the start the run check signed for this process (``provenance``); a process that
passed no check (a wrapper that replaced the guard) writes its entries without one. The run check
(:func:`resume_problems`) then accepts a resume only from a ``checkpoint-N`` folder of this run's output that
the ledger lists with a valid proof, bound to a valid start of this run, with the same bytes: a ledger written
by hand, or copied with its checkpoint from another run, is refused. And a resume belongs to its run: the start
that saved the checkpoint names the lock it trained under, and a run folder rendered again since (another brief,
another review) does not continue it, whatever the outputs hold.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError
from grpo_rlvr.records import run_key
from grpo_rlvr.records.checked_run import RunCheck

LEDGER = "checkpoints.json"


def checkpoint_digests(checkpoint: Path) -> dict[str, str]:
    """``relative name -> SHA-256`` of every file in ``checkpoint`` (hash cache underneath). Every file, not the
    weights alone: on resume the Trainer also loads the optimizer (its moments steer the next updates), the
    scheduler (its state carries the base learning rates), each rank's random state and ``trainer_state.json``
    (the step, and so where the schedule and the data order stand), and DeepSpeed's ``latest`` names the folder
    its engine loads. A name list of what matters would miss what the next version reads."""
    from grpo_rlvr.identity.hash_cache import sha256_files

    files = {p.relative_to(checkpoint).as_posix(): p for p in sorted(Path(checkpoint).rglob("*")) if p.is_file()}
    digests = sha256_files(list(files.values()))
    return {name: digests[p] for name, p in files.items()}


def read_ledger(output: Path) -> dict:
    try:
        data = json.loads((Path(output) / LEDGER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry_record(output: Path, name: str, files: dict, run_id) -> dict:
    return {"kind": "checkpoint", "output": str(Path(output).resolve()), "name": name, "files": files,
            "run_id": run_id}


def record(output: Path, checkpoint: Path, check: RunCheck | None) -> None:
    """Add ``checkpoint`` (a folder in ``output``: ``checkpoint-N`` or ``final``) to the ledger, atomically, with a
    proof bound to the start ``check`` (the run check this process passed, as ``run.guard.refuse_unless_gated``
    returned it) signed for this process (none without one: such an entry reads as unproven, and ``--resume``
    refuses it)."""
    from grpo_rlvr.files import write_json_atomic
    from grpo_rlvr.records.provenance import proven_run_id

    output, name = Path(output), Path(checkpoint).name
    files = checkpoint_digests(Path(checkpoint))
    run_id = proven_run_id(check.start if check is not None else None)
    entry = {"files": files, "run_id": run_id, "proof": None}
    if run_id is not None:
        entry["proof"] = run_key.sign(_entry_record(output, name, files, run_id))
    else:
        entry["unproven"] = "saved by a process that did not pass the run check of the rendered train.py"
    ledger = read_ledger(output)
    ledger[name] = entry
    write_json_atomic(output / LEDGER, ledger)


def entry_problem(output: Path, name: str, entry, starts: dict, key: bytes | None = None,
                  check_files: bool = True) -> str | None:
    """Why the ledger ``entry`` does not prove that the run saved ``output/name`` as it is now (None when it does).
    ``starts``: the run's valid starts (``provenance.valid_starts``)."""
    if not isinstance(entry, dict) or not entry:
        return (f"this run did not write that checkpoint ({Path(output) / LEDGER} does not list it), so it may hold "
                "other weights")
    files = entry.get("files")
    if not isinstance(files, dict) or not run_key.valid(_entry_record(output, name, files, entry.get("run_id")),
                                                        entry.get("proof"), key):
        return (f"its entry in {LEDGER} carries no valid proof that this run saved it (an entry written or edited by "
                "hand, copied from another run, or saved by a training that did not pass the run check of the "
                "rendered train.py)")
    if entry.get("run_id") not in starts:
        return (f"it was saved by a training start that {Path(output) / 'provenance.json'} does not hold a valid "
                "record of (a record removed, edited or copied from another run)")
    if check_files:
        now = checkpoint_digests(Path(output) / name)
        changed = sorted(n for n in set(files) | set(now) if files.get(n) != now.get(n))
        if changed:
            return f"its files changed since this run saved them ({', '.join(changed[:4])})"
    return None


def resume_problems(output: Path, resume: str | None) -> list[str]:
    """Why training may not resume from ``resume`` (empty when it may, or when there is no resume)."""
    from grpo_rlvr.records.provenance import lock_change, valid_starts

    if not resume:
        return []
    output = Path(output).resolve()
    ckpt = Path(resume).expanduser().resolve()
    if ckpt.parent != output:
        return [f"--resume {resume}: not a checkpoint of this run ({output}/checkpoint-N); resuming from another "
                "folder would train weights the review never saw. Start the run fresh, or inspect and review the "
                "model you mean to train from (point model.name_or_path at it)"]
    entry = read_ledger(output).get(ckpt.name)
    try:
        key = run_key.load_key()
    except GrpoRlvrError as e:
        return [f"--resume {resume}: its proof cannot be checked: {e}"]
    starts = valid_starts(output, key) if entry else {}
    problem = entry_problem(output, ckpt.name, entry, starts, key)
    if problem:
        return [f"--resume {resume}: {problem}; resume from a checkpoint this run saved through `grpo-rlvr train` "
                "(or train.py), untouched, or start fresh"]
    changed = lock_change(starts[entry["run_id"]], output.parent)
    if changed is not None:
        return [f"--resume {resume}: it was saved under another lock than this run folder's now ({changed}): the "
                "folder was rendered again (another brief or review), and a re-rendered folder starts a new run. "
                "Train the new run fresh in its own folder (`grpo-rlvr render BRIEF --out NEW_RUN`, then `grpo-rlvr "
                "train NEW_RUN`), or render the brief it was saved under again to continue it"]
    return []
