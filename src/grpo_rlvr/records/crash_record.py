"""How a run died, kept in its output folder for ``diagnose`` and ``grpo-rlvr watch`` to explain.

The rendered train.py runs inside :func:`recorded_crash`: its stderr is copied through a bounded tail (the last
``TAIL_BYTES``), and an exception that ends the run (or a ``GrpoRlvrError`` train.py reports and returns from,
:func:`record_crash`) is written to ``output/crash.json`` (rank 0; ``crash-rank<N>.json`` for the others) with the
exception, its frames (each marked ``user``: under the brief's folder; ``project``: grpo-rlvr or the run folder;
``library``: the rest), the last frame in user or project code, the fix (:func:`fix_for`), and the stderr tail,
also written as ``output/stderr.tail``. A trainer that dies without Python's help (killed by a signal: the kernel's
OOM killer sends SIGKILL) cannot write it; ``grpo-rlvr train`` writes the record then, from the exit status
(:func:`record_exit`). Written atomically; a later start of the run removes the record of an earlier death.

A run stopped with Ctrl-C is recorded in the same file as a stop, not a death (``"kind": "stopped"``,
:func:`record_stop`): the step, the checkpoint it saved (``training_callbacks.StopOnCtrlC`` saves one at the end of
the step on the first Ctrl-C; a second stops at once) and the command that resumes it; ``train.py`` prints those
lines instead of a traceback and exits 130.

Not covered: stderr written below Python (C libraries writing to file descriptor 2: CUDA, NCCL) is not in the
tail; a trainer started without ``grpo-rlvr train`` and killed by a signal leaves no record.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError

CRASH = "crash.json"
TAIL = "stderr.tail"
TAIL_BYTES = 32 * 1024   # of stderr kept: a traceback and the lines before it
FRAMES = 40              # frames kept, the deepest


class StderrTail(io.TextIOBase):
    """A text stream that writes through to ``stream`` and keeps the last ``TAIL_BYTES`` of what passed."""

    def __init__(self, stream):
        self.stream = stream
        self.kept = ""

    def write(self, text: str) -> int:
        self.kept = (self.kept + text)[-TAIL_BYTES:]
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def __getattr__(self, name):   # encoding, errors, buffer, ...: the stream's own
        return getattr(self.stream, name)


def output_dir(run_dir: Path) -> Path:
    """The run's output folder, as grpo_config.yaml names it (``output`` if it cannot be read)."""
    try:
        import yaml

        name = (yaml.safe_load((Path(run_dir) / "grpo_config.yaml").read_text()) or {}).get("output_dir")
    except (OSError, ValueError, AttributeError, ImportError):
        name = None
    return Path(run_dir) / (name if isinstance(name, str) and name else "output")


def _rank() -> int:
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def _owner(filename: str, brief_dir: Path | None, run_dir: Path) -> str:
    here = Path(__file__).resolve().parent.parent   # the grpo_rlvr package
    p = Path(filename)
    try:
        p = p.resolve()
    except OSError:
        return "library"
    if "site-packages" in p.parts or "dist-packages" in p.parts:
        return "project" if p.is_relative_to(here) else "library"
    if p.is_relative_to(here) or p.is_relative_to(Path(run_dir).resolve()):
        return "project"
    if brief_dir is not None and p.is_relative_to(Path(brief_dir).resolve()):
        return "user"
    return "library"


def describe(exc: BaseException, run_dir: Path, brief_dir: Path | None = None) -> dict:
    """The record of ``exc``: type, message, frames (deepest last) with their owner, the last frame in user or
    project code, and the fix."""
    frames = [{"file": f.filename, "line": f.lineno, "function": f.name, "code": (f.line or "")[:200],
               "owner": _owner(f.filename, brief_dir, run_dir)}
              for f in traceback.extract_tb(exc.__traceback__)][-FRAMES:]
    mine = [f for f in frames if f["owner"] in ("user", "project")]
    record = {"exception": type(exc).__name__, "module": type(exc).__module__, "message": str(exc)[:2000],
              "frames": frames, "at": mine[-1] if mine else (frames[-1] if frames else None),
              "traceback": "".join(traceback.format_exception(exc))[-TAIL_BYTES:]}
    record["fix"] = fix_for(record)
    return record


def fix_for(record: dict) -> str:
    """What to do about a death, from its exception (or signal) and where it was raised."""
    name, msg, at = record.get("exception") or "", record.get("message") or "", record.get("at") or {}
    sig = record.get("signal")
    if sig == "SIGKILL":
        return ("the trainer was killed with SIGKILL, most often by the kernel's out-of-memory killer (`dmesg` says "
                "so): lower its memory (grpo.per_device_train_batch_size, max_completion_length, or LoRA) or give it "
                "more, then `grpo-rlvr train RUN --resume` from the last checkpoint")
    if sig in ("SIGTERM", "SIGINT", "SIGHUP"):
        return (f"the trainer was stopped from outside ({sig}: a scheduler's time limit, kill, Ctrl-C); "
                "`grpo-rlvr train RUN --resume` continues from the last checkpoint")
    if sig:
        return (f"the trainer died of {sig} (a crash below Python: a driver or a C extension); read output/"
                f"{TAIL}, and retry with `grpo-rlvr train RUN --resume`")
    if name == "OutOfMemoryError" or "out of memory" in msg.lower():
        return ("the GPU ran out of memory: lower grpo.per_device_train_batch_size (raise "
                "gradient_accumulation_steps to keep the batch), lower max_completion_length, or use LoRA or more "
                "GPUs (`grpo-rlvr memory` estimates the fit), render and train again")
    if name == "MemoryError":
        return "the host ran out of memory: lower the batch or the completion length, or use a larger machine"
    if name in ("ModuleNotFoundError", "ImportError"):
        return (f"a package is missing in the training environment ({msg}): install it there (pip install "
                "grpo-rlvr[...] with the extras the brief needs), then train again")
    if record.get("module") == "grpo_rlvr.errors":
        return "the message names what is wrong and the fix: do that, then train again"
    if at.get("owner") == "user":
        return (f"the exception was raised in your code, {at.get('file')}:{at.get('line')} in {at.get('function')}: "
                "fix it there; a reward's changed code needs a new inspection and review before the gate passes")
    where = f" (last in grpo-rlvr's code at {at.get('file')}:{at.get('line')})" if at else ""
    return (f"read output/{TAIL} and output/{CRASH}{where}; if the data or the brief is at fault, fix it and train "
            "again; if grpo-rlvr itself is, report it with those two files")


def _write(out: Path, record: dict, tail: str) -> None:
    from grpo_rlvr.files import write_json_atomic, write_text_atomic

    rank = record.get("rank", 0)
    write_json_atomic(out / (CRASH if not rank else f"crash-rank{rank}.json"), record)
    if tail and not rank:
        write_text_atomic(out / TAIL, tail)


_tail: StderrTail | None = None


def record_crash(run_dir: Path, exc: BaseException, brief_dir: Path | None = None) -> None:
    """Write the record of ``exc`` into the run's output folder (never raises: a run that died stays dead)."""
    with contextlib.suppress(Exception):
        out = output_dir(run_dir)
        record = {**describe(exc, run_dir, brief_dir), "rank": _rank(), "pid": os.getpid(), "time": time.time(),
                  "last_step": _last_step(out)}
        # what stderr showed, then the traceback Python is about to print there
        tail = ((_tail.kept if _tail is not None else "") + record["traceback"])[-TAIL_BYTES:]
        record["stderr_tail"] = tail[-4000:]
        _write(out, record, tail)


@contextlib.contextmanager
def recorded_crash(run_dir: Path, brief_dir: Path | None = None) -> Iterator[None]:
    """Run train.py's main inside: stderr's tail is kept, an exception that ends the run is recorded (and
    raised on). The record of an earlier death of this run is removed first (rank 0)."""
    global _tail
    out = output_dir(run_dir)
    if not _rank():
        for stale in [out / CRASH, out / TAIL, *out.glob("crash-rank*.json")]:
            with contextlib.suppress(OSError):
                stale.unlink()
    _tail, saved = StderrTail(sys.stderr), sys.stderr
    sys.stderr = _tail
    try:
        yield
    except KeyboardInterrupt as e:   # Ctrl-C: a stop, with what it saved and how to resume, never a traceback
        record = record_stop(run_dir, getattr(e, "checkpoint", None))
        if record is not None:
            print("\n".join(["train.py: " + line for line in crash_lines(record)]), file=saved, flush=True)
        raise SystemExit(130) from None
    except SystemExit:
        raise
    except GrpoRlvrError as e:   # bad input found by grpo-rlvr: its message names the field and the fix
        record_crash(run_dir, e, brief_dir)
        print(f"Error: {e}", file=saved, flush=True)
        raise SystemExit(e.exit_code) from None
    except BaseException as e:
        record_crash(run_dir, e, brief_dir)
        raise
    finally:
        sys.stderr, _tail = saved, None


def record_stop(run_dir: Path, checkpoint: str | None = None, signal_name: str = "SIGINT",
                by: str = "train.py") -> dict | None:
    """Record that the run was stopped by ``signal_name`` (Ctrl-C): at its last logged step, with ``checkpoint``
    (the one the stop saved), else the newest this run listed in its ledger, and the command that resumes from
    it. Rank 0 only; returns the record (None on other ranks, or when it cannot be written)."""
    if _rank():
        return None
    out = output_dir(run_dir)
    if checkpoint is None:
        from grpo_rlvr.records.checkpoint_ledger import read_ledger

        listed = sorted((int(n.split("-")[1]), n) for n in read_ledger(out)
                        if n.startswith("checkpoint-") and n.split("-")[1].isdigit() and (out / n).is_dir())
        checkpoint = listed[-1][1] if listed else None
    resume = f"grpo-rlvr train {Path(run_dir).resolve()} --resume" if checkpoint else None
    record = {"kind": "stopped", "exception": None, "signal": signal_name, "by": by, "frames": [], "at": None,
              "rank": 0, "pid": os.getpid(), "time": time.time(), "last_step": _last_step(out),
              "checkpoint": checkpoint, "resume": resume,
              "message": f"stopped by {'Ctrl-C' if signal_name == 'SIGINT' else signal_name} ({signal_name})"}
    record["fix"] = (f"`{resume}` continues from {checkpoint}" if resume else
                     f"no checkpoint was saved before the stop, so there is nothing to resume: move {out} aside and "
                     f"`grpo-rlvr train {Path(run_dir).resolve()}` again (from the base model)")
    try:
        _write(out, record, "")
    except OSError:
        return None
    return record


def record_exit(out: Path, returncode: int, since: float) -> dict | None:
    """The launcher's record of a trainer that exited with ``returncode`` (non-zero) and wrote none itself since
    ``since`` (killed by a signal, or it died before train.py could record): written and returned; None when the
    trainer's own record is there."""
    existing = read_crash(out)
    if existing is not None and (existing.get("time") or 0) >= since - 1.0:
        return None
    sig = None
    if returncode < 0:
        sig = _signal_name(-returncode)
    elif returncode > 128 and _signal_name(returncode - 128):   # a shell reports a signal death as 128 + N
        sig = _signal_name(returncode - 128)
    record = {"exception": None, "message": (f"the trainer was killed by {sig}" if sig else
                                             f"the trainer exited with status {returncode} without a record"),
              "signal": sig, "exit_code": returncode, "frames": [], "at": None, "rank": 0, "time": time.time(),
              "last_step": _last_step(out), "recorded_by": "grpo-rlvr train"}
    record["fix"] = fix_for(record) if sig else (
        f"read the trainer's output above (or output/{TAIL} if it is there); it ended before it could record why")
    with contextlib.suppress(OSError):
        _write(Path(out), record, "")
    return record


def _signal_name(n: int) -> str | None:
    try:
        return signal.Signals(n).name
    except ValueError:
        return None


def last_record(out: Path, wanted=lambda r: isinstance(r.get("step"), int)) -> dict | None:
    """The last record in ``out/metrics.jsonl`` that ``wanted`` accepts (default: any with a step), read from the
    file's end (its last 64 KiB); None when there is none."""
    try:
        with (Path(out) / "metrics.jsonl").open("rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - 65536))
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if isinstance(record, dict) and wanted(record):
                return record
    return None


def _last_step(out: Path) -> int | None:
    """The step of the last training record in ``out/metrics.jsonl`` (read from its end)."""
    record = last_record(out)
    return record["step"] if record is not None else None


def read_crash(out: Path) -> dict | None:
    """How the run in ``out`` died: rank 0's record, else the earliest other rank's; None when none is there."""
    found = []
    for f in [Path(out) / CRASH, *sorted(Path(out).glob("crash-rank*.json"))]:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(f.read_text())
            if isinstance(data, dict):
                found.append(data)
    if not found:
        return None
    first = found[0]
    if first.get("rank", 0) == 0 and first.get("exception"):
        return first   # rank 0 saw an exception of its own
    return min(found, key=lambda d: d.get("time") or 0)   # else the first death: the others followed it


def crash_lines(crash: dict) -> list[str]:
    """What died, where, and the fix, for ``watch`` and ``diagnose`` (or, for a stop, when and how to resume)."""
    if crash.get("kind") == "stopped":
        step = crash.get("last_step")
        saved = f"{crash['checkpoint']} saved" if crash.get("checkpoint") else "no checkpoint saved"
        return [f"the run was STOPPED ({crash.get('message')}) "
                f"{f'after step {step}' if step is not None else 'before its first logged step'}: {saved}",
                f"resume: {crash['resume']}" if crash.get("resume") else f"fix: {crash.get('fix')}"]
    what = f"{crash['exception']}: {crash.get('message')}" if crash.get("exception") else crash.get("message")
    step = crash.get("last_step")
    lines = [f"the run DIED{f' after step {step}' if step is not None else ' before its first logged step'}: "
             f"{str(what)[:300]}"]
    at = crash.get("at")
    if at:
        lines.append(f"at {at.get('file')}:{at.get('line')} in {at.get('function')} ({at.get('owner')} code)"
                     + (f": {at['code']}" if at.get("code") else ""))
    lines.append(f"fix: {crash.get('fix')}")
    return lines
