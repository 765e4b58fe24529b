"""Which door started each training of a run: ``output/provenance.json``, written only behind a passing run check.

The rendered ``train.py`` asks for the run check (``run.guard.refuse_unless_gated``) with the door it was started
through (``grpo-rlvr train``, ``launch.sh``, ``accelerate launch``/``torchrun``, ``python train.py``, the demo).
When the check passes, the check itself (in the clean interpreter) makes a *start* record: a fresh ``run_id``,
the output folder, the lock's SHA-256, fingerprint, brief and inspection, the door, the process it passed for (pid and its start
time in ``/proc``), the host and time, and the checkpoint it resumes; it signs it with the user's run key
(``run_key``), and ``train.py`` appends it to ``output/provenance.json`` once the output folder is ready. Each
checkpoint the trainer saves, and ``final/``, is then listed in ``checkpoints.json`` with a proof bound to that
``run_id`` (``checkpoint_ledger``), made only in the process the start names.

So a training started any other way (a script that replaces the guard and runs ``train.py``, a ledger written by
hand, a checkpoint or ledger copied from another run) has no valid start or no valid proof, and
``output_audit.audit`` (``grpo-rlvr diagnose``) and the ``--resume`` check (``checkpoint_ledger.resume_problems``) say so.

What the door field proves: nothing by itself (it is what the starting process reports about how it was
started). What a valid start proves: the run check passed, for this output folder and lock, for the process it
names, as this user. Its limit is the key's: code running as this user can read the key and sign a start itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import time
from pathlib import Path

from grpo_rlvr.records import run_key

PROVENANCE = "provenance.json"
STARTED_BY = "GRPO_RLVR_STARTED_BY"   # set by `grpo-rlvr train` and launch.sh: the door, as they report it


def door() -> str:
    """How this ``train.py`` process says it was started (reported, not proven)."""
    said = os.environ.get(STARTED_BY, "").strip()
    if said:
        return said[:80]
    if any(k in os.environ for k in ("TORCHELASTIC_RUN_ID", "LOCAL_RANK", "ACCELERATE_PROCESS_ID")):
        return "accelerate launch / torchrun train.py"
    return "python train.py"


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, ``/proc/PID/stat`` field 22), so a pid reused later
    is not the same process; None where ``/proc`` is not there."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        return text[text.rindex(")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        return None


def new_start(run: Path, lock: dict, started_by: str, trainer_pid: int, resume: str | None) -> dict:
    """A signed start record for ``run``'s output folder (made by the run check when it passes)."""
    run = Path(run).resolve()
    record = {"kind": "start", "run_id": secrets.token_hex(16), "output": str(run / "output"),
              "lock_sha256": lock_sha256(run), "fingerprint": lock.get("fingerprint"), "brief": lock.get("brief"),
              "inspection": lock.get("inspection"), "door": str(started_by)[:80],
              "trainer_pid": trainer_pid, "trainer_started": process_start(trainer_pid),
              "host": socket.gethostname(), "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "resume": resume}
    return {**record, "proof": run_key.sign(record)}


def lock_sha256(run: Path) -> str | None:
    """The SHA-256 of ``run/brief.lock.json`` as it is now (None when it cannot be read)."""
    try:
        return hashlib.sha256((Path(run) / "brief.lock.json").read_bytes()).hexdigest()
    except OSError:
        return None


def lock_change(start: dict, run: Path) -> str | None:
    """What changed between the lock ``start`` trained under and ``run``'s lock now (None when it is the same
    lock): the brief, the inspection it was gated on, the brief's fingerprint, or the rendered files."""
    now = lock_sha256(run)
    if start.get("lock_sha256") == now:
        return None
    try:
        lock = json.loads((Path(run) / "brief.lock.json").read_text())
    except (OSError, ValueError):
        lock = {}
    lock = lock if isinstance(lock, dict) else {}
    changed = [f"{label} {start.get(key)} → {lock.get(key)}" for key, label in
               (("brief", "brief"), ("inspection", "inspection"), ("fingerprint", "fingerprint"))
               if key in start and start.get(key) != lock.get(key)]
    if not changed:
        changed = ["the rendered files or settings"]
    was, is_now = str(start.get("lock_sha256"))[:12], str(now)[:12]
    return f"brief.lock.json {was} → {is_now}: {'; '.join(changed)}"


def _unsigned(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "proof"}


def read_starts(output: Path) -> list:
    try:
        data = json.loads((Path(output) / PROVENANCE).read_text())
    except (OSError, ValueError):
        return []
    starts = data.get("starts") if isinstance(data, dict) else None
    return starts if isinstance(starts, list) else []


def append_start(output: Path, start: dict) -> None:
    """Add ``start`` to ``output/provenance.json`` (atomically)."""
    from grpo_rlvr.files import write_json_atomic

    write_json_atomic(Path(output) / PROVENANCE, {"format": 1, "starts": [*read_starts(output), start]})


def valid_starts(output: Path, key: bytes | None = None) -> dict[str, dict]:
    """``run_id -> start`` for the starts in ``output/provenance.json`` that are signed with this user's key for
    this output folder (a record copied from another run names that run's folder)."""
    here = str(Path(output).resolve())
    out = {}
    for s in read_starts(output):
        if isinstance(s, dict) and s.get("output") == here and run_key.valid(_unsigned(s), s.get("proof"), key):
            out[str(s.get("run_id"))] = s
    return out


def proven_run_id(start: dict | None) -> str | None:
    """The run id of ``start`` when it is a valid start for *this* process (the one the check passed for)."""
    if not isinstance(start, dict) or start.get("trainer_pid") != os.getpid():
        return None
    if start.get("trainer_started") != process_start(os.getpid()):
        return None
    try:
        return str(start["run_id"]) if run_key.valid(_unsigned(start), start.get("proof")) else None
    except run_key.RunKeyError:
        return None
