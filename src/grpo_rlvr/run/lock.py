"""The run's lock, ``RUN/brief.lock.json``: written by ``render`` beside the files it rendered, read by every
check before training. It records the resolved brief and its fingerprint, the inspection the run is gated on,
the launch plan (``plan.LaunchPlan``) and the SHA-256 of every rendered file (``files``).

This module owns its name, reading (with errors that say how to fix the folder), writing, and the comparison
of the rendered files against the hashes it records.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from grpo_rlvr.errors import InputFileError

LOCK = "brief.lock.json"


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_lock(run: Path) -> dict:
    """The lock of the run folder ``run``; InputFileError naming the fix when there is none to read."""
    if Path(run).is_file():  # a brief given where its rendered run folder belongs
        what = "a brief" if Path(run).suffix in (".yaml", ".yml") else "a file"
        raise InputFileError(f"{run} is {what}, not a run folder; render it first: grpo-rlvr render {run} "
                             "(then train the run folder it writes, OUTPUT_DIR/run)")
    try:
        lock = json.loads((Path(run) / LOCK).read_text())
    except FileNotFoundError:
        raise InputFileError(f"{run}: no {LOCK}; this is not a run folder (run `grpo-rlvr render BRIEF`)") from None
    except (OSError, json.JSONDecodeError) as e:
        raise InputFileError(f"{Path(run) / LOCK}: unreadable ({e}); re-run `grpo-rlvr render`") from None
    if not isinstance(lock, dict):
        raise InputFileError(f"{Path(run) / LOCK}: expected a JSON object; re-run `grpo-rlvr render`")
    return lock


def read_lock_if_any(run: Path) -> dict | None:
    """The lock, or None when the folder has none that parses (render decides what to do about it)."""
    try:
        lock = json.loads((Path(run) / LOCK).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return lock if isinstance(lock, dict) else None


def with_hashes(lock: dict, files: dict[str, str]) -> dict:
    """``lock`` recording the SHA-256 of each rendered file's text."""
    return {**lock, "files": {name: sha256_text(text) for name, text in files.items()}}


def write_lock(run: Path, lock: dict, files: dict[str, str]) -> dict:
    """Write the lock for the rendered ``files`` (atomically); the lock as written."""
    from grpo_rlvr.files import write_json_atomic

    full = with_hashes(lock, files)
    write_json_atomic(Path(run) / LOCK, full)
    return full


def changed_files(run: Path, lock: dict) -> list[str]:
    """Problems with the rendered files: missing from the lock's record, missing on disk, or edited."""
    files = lock.get("files")
    if not isinstance(files, dict) or "train.py" not in files:
        return [f"{Path(run) / LOCK} records no hashes of the rendered files (rendered by an older grpo-rlvr); "
                "run `grpo-rlvr render` again"]
    out = []
    for name, digest in sorted(files.items()):
        p = Path(run) / name
        if not p.is_file():
            out.append(f"{p}: missing; run `grpo-rlvr render` again")
        elif sha256_file(p) != digest:
            out.append(f"{p} was changed after render (its SHA-256 is not the one in {LOCK}); change the brief and "
                       "run `grpo-rlvr render` again instead of editing rendered files")
    return out
