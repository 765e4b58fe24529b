"""One trainer per run folder: the training process itself (rank 0 of the rendered ``train.py``) holds an advisory
``flock`` on ``RUN/.trainer.lock`` from its first line (before it imports the training stack, and before it clears
an earlier death's record) until it exits, and a second trainer of that folder is refused while it lives;
``grpo-rlvr watch`` reads a free lock under a run that never ended as a trainer gone without a record, and
``diagnose`` names the starts of a run that two trainers wrote at once.

The lock is the trainer's, not the launcher's: ``kill -9`` of ``grpo-rlvr train`` leaves ``train.py`` training on
(an orphan), and that process still holds the lock, so ``grpo-rlvr train RUN --resume`` is refused (exit 2) with
its pid. The kernel drops an ``flock`` when its holder dies, however it dies, so a dead trainer never blocks the
next start. The file also records who holds it (pid, host, door, since, the checkpoint it resumed).

Limits: ``flock`` is advisory and is emulated on NFS (two hosts sharing a run folder over a file system without
lock support are not kept apart: ``diagnose`` then finds the interleaved logs). A process the trainer forked holds
the lock as long as the trainer does and no longer than it keeps the file open.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

LOCK_NAME = ".trainer.lock"
_held: dict[str, int] = {}   # run folder → the descriptor this process holds its lock through (until it exits)


def _read(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096)
    try:
        info = json.loads(raw.decode()) if raw.strip() else {}
    except (UnicodeDecodeError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


def holder(run_dir: Path) -> dict | None:
    """Who trains in ``run_dir`` now (the lock file's record; ``{}`` when it holds none), or None when no trainer
    holds its lock."""
    try:
        fd = os.open(Path(run_dir) / LOCK_NAME, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ProcessLookupError, ValueError, TypeError):
        return False
    except PermissionError:
        return True
    return True


def describe(info: dict, run_dir: Path) -> str:
    """``info`` (a lock record) as a sentence: the trainer's pid, host, door and start, or what holds the lock."""
    pid, host = info.get("pid"), info.get("host")
    if pid is None:
        return f"a trainer holds {Path(run_dir) / LOCK_NAME}"
    here = host in (None, socket.gethostname())
    resumed = f", resuming {info['resume']}" if info.get("resume") else ""
    said = (f"trainer pid {pid}{'' if here else f' on {host}'}, started {info.get('since', '?')} by "
            f"{info.get('door', '?')}{resumed}")
    if here and not _alive(pid):   # forked before it died and still holding the file open
        said += (f" (pid {pid} has ended, but a process it started still holds the lock: `fuser -v "
                 f"{Path(run_dir) / LOCK_NAME}` names it)")
    return said


def in_use(run_dir: Path) -> str | None:
    """Why no trainer may start in ``run_dir`` now (None when none holds it): the refusal ``grpo-rlvr train`` gives,
    exit 2, and the rendered train.py's own."""
    info = holder(run_dir)
    if info is None:
        return None
    return (f"{run_dir}: a trainer is training this run now ({describe(info, run_dir)}); a second one would write "
            f"the same metrics.jsonl and checkpoints. Follow it with `grpo-rlvr watch {run_dir}`, or "
            f"{_stop_then(info, run_dir)}")


def _stop_then(info: dict, run_dir: Path) -> str:
    """How to stop the trainer ``info`` names and what to run after, as true for the run it trains: a checkpoint to
    resume from only where it saves one (an unreviewed smoke test saves none, nor does ``save_strategy: no``)."""
    pid = info.get("pid")
    stop = f"stop it with Ctrl-C in its terminal or `kill -INT {pid}`" if pid is not None else "stop it"
    if info.get("smoke"):
        return (f"{stop} (an unreviewed smoke test: it saves no checkpoint, so there is nothing to resume), then "
                f"start again: `grpo-rlvr train {run_dir} --unreviewed-smoke-test`, or `grpo-rlvr train {run_dir}` "
                "once the run is gated")
    if info.get("saves") is False:
        return (f"{stop} (this run saves no checkpoint, so there is nothing to resume), then move "
                f"{Path(run_dir) / 'output'} aside and `grpo-rlvr train {run_dir}` again (from the base model)")
    saves = " (it saves a checkpoint and prints the resume command)" if pid is not None else ""
    return f"{stop}{saves}, then `grpo-rlvr train {run_dir} --resume`"


def hold(run_dir: Path, door: str, resume: str | None = None, saves: bool | None = None, smoke: bool = False) \
        -> str | None:
    """Take ``run_dir``'s trainer lock for this process, kept until it exits (or :func:`release`). Returns None when
    this process holds it, else why not (another trainer holds it, or the folder cannot be written). The record
    says what a refusal of a second trainer tells: the checkpoint resumed, whether the run saves checkpoints
    (``saves``, None: not known yet) and whether it is an unreviewed smoke test."""
    key = str(Path(run_dir).resolve())
    known = {k: v for k, v in (("resume", resume), ("saves", saves), ("smoke", smoke or None)) if v is not None}
    if key in _held:   # taken at train.py's start; the run check adds the checkpoint it resumes and what it saves
        if known:
            _write(_held[key], {**_read(_held[key]), **known})
        return None
    try:
        fd = os.open(Path(key) / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        return (f"{run_dir}: cannot open {LOCK_NAME} for writing ({e.strerror}); train as a user who can write the "
                "run folder")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return in_use(run_dir) or f"{run_dir}: another trainer took its lock a moment ago; train again once it ends"
    _write(fd, {"pid": os.getpid(), "host": socket.gethostname(), "door": str(door)[:80], "resume": resume,
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **known})
    _held[key] = fd
    return None


def _write(fd: int, info: dict) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(info).encode(), 0)


def refuse_unless_alone(run_dir: Path) -> None:
    """The rendered train.py's first act, before it imports the training stack (rank 0; a launcher's other ranks
    follow it): take the run's lock for this process, or exit 1 naming the trainer that holds it."""
    if os.environ.get("RANK", "0") not in ("", "0"):
        return
    from grpo_rlvr.records.provenance import door

    if problem := hold(run_dir, door()):
        print(f"train.py: training refused (nothing was loaded):\n- {problem}", file=sys.stderr, flush=True)
        sys.exit(1)


def release(run_dir: Path) -> None:
    """Let go of ``run_dir``'s lock if this process holds it (the demo trains in its own process and goes on)."""
    fd = _held.pop(str(Path(run_dir).resolve()), None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)


# --- two trainers after the fact (diagnose) -------------------------------------------------------------------

def _training_steps(metrics: Path) -> list[int]:
    steps = []
    try:
        lines = metrics.read_text(encoding="utf-8", errors="replace").split("\n")
    except OSError:
        return steps
    for line in lines:
        with contextlib.suppress(ValueError):
            r = json.loads(line)
            if isinstance(r, dict) and isinstance(r.get("step"), int) and ("loss" in r or "reward" in r) \
                    and "train_runtime" not in r:
                steps.append(r["step"])
    return steps


def overlapping_trainers(output: Path) -> list[str]:
    """Evidence that two trainers wrote ``output`` at once (empty when none): ``metrics.jsonl`` steps that go back
    more often than the run's starts explain (each resume goes back once, to its checkpoint), or a start whose
    trainer still runs while a later start began. Each start is named (door, pid, time, resume)."""
    from grpo_rlvr.records.provenance import process_start, read_starts

    output = Path(output)
    starts = [s for s in read_starts(output) if isinstance(s, dict)]
    steps = _training_steps(output / "metrics.jsonl")
    back = [(a, b) for a, b in zip(steps, steps[1:], strict=False) if b <= a]
    evidence = []
    if len(back) > max(0, len(starts) - 1):
        shown = ", ".join(f"{b} after {a}" for a, b in back[:4]) + (", …" if len(back) > 4 else "")
        evidence.append(f"{output / 'metrics.jsonl'}: the step goes back {len(back)} times ({shown}), but the run "
                        f"has {len(starts)} start{'s' if len(starts) != 1 else ''} (each resume goes back once): "
                        "two trainers logged into it at once")
    here = socket.gethostname()
    for i, s in enumerate(starts[:-1]):
        pid = s.get("trainer_pid")
        if s.get("host") == here and isinstance(pid, int) and s.get("trainer_started") is not None \
                and process_start(pid) == s.get("trainer_started"):
            evidence.append(f"start {i + 1}'s trainer (pid {pid}) still runs, and {len(starts) - i - 1} later "
                            "start(s) began beside it")
    if evidence:
        evidence += [f"start {i + 1}: {s.get('started_at', '?')} by {s.get('door', '?')}, pid {s.get('trainer_pid')}"
                     f"{' on ' + str(s.get('host')) if s.get('host') != here else ''}"
                     + (f", resuming {s['resume']}" if s.get("resume") else ", from the base model")
                     for i, s in enumerate(starts)]
    return evidence
