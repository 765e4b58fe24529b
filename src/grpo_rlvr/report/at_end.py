"""The report at the end of a training, for the rendered train.py: its main runs inside
``with report_at_end(RUN_DIR), recorded_crash(...)``, so when main returns (training finished, or the watchdog
stopped it) or an exception ends the run (after ``records.crash_record`` recorded it, so the page names the death),
rank 0 writes ``output/report.html`` and ``report.json`` (``grpo_rlvr.report.write_report``).

Only a process that began a training, or died, writes one: while it ran, its output folder got a start record
(``provenance.json``), a smoke test's marker, a log, or a crash record, written or changed (compared by inode, size
and modification time, so no clock is read). A start the gate refused writes none of them, and no report.

Never in the way of the run: this module imports only the standard library, and the report's own code (matplotlib
among it) is imported after training, never during a step. Whatever goes wrong while writing the report (an
exception, even an interrupt) is said on stderr with the command that writes it later, and changes nothing else: the
run keeps its exit code and its exception.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

# What a training (or a death) leaves in the output folder; one of them written while the process ran means it
# trained or died, not that the gate refused it.
SIGNS_OF_A_TRAINING = ("provenance.json", "UNREVIEWED_SMOKE_TEST.json", "metrics.jsonl", "crash.json")


def _main_rank() -> bool:
    try:
        return int(os.environ.get("RANK", "0") or 0) == 0
    except ValueError:
        return True


def signs(output: Path) -> dict[str, tuple[int, int, int]]:
    """The signs of a training in ``output`` as they are now: each one's (inode, size, mtime in ns)."""
    out = {}
    for name in SIGNS_OF_A_TRAINING:
        with contextlib.suppress(OSError):
            st = (Path(output) / name).stat()
            out[name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def trained_since(output: Path, before: dict) -> bool:
    """Whether a sign of a training (or a death) was written or changed in ``output`` since ``before`` (what
    :func:`signs` said then). One removed is no sign: the start of a run removes an earlier death's record."""
    now = signs(output)
    return any(before.get(name) != seen for name, seen in now.items())


def write_quietly(run_dir: Path, stream=None) -> Path | None:
    """Write the run's report; on any failure say so on ``stream`` (stderr) and return None, never raise."""
    stream = stream or sys.stderr
    try:
        from grpo_rlvr.report import write_report

        made = write_report(run_dir)
        print(f"report: {made.html} (made in {made.seconds:.1f} s, {made.cpu_seconds:.1f} s of CPU; open it in a "
              "browser)", file=stream, flush=True)
        return made.html
    except BaseException as e:  # noqa: BLE001 - the report never changes how the run ended
        with contextlib.suppress(Exception):
            print(f"report: not written ({type(e).__name__}: {e}); `grpo-rlvr report {run_dir}` writes it",
                  file=stream, flush=True)
        return None


@contextlib.contextmanager
def report_at_end(run_dir: Path, stream=None) -> Iterator[None]:
    """Run the training inside; rank 0 writes its report when the block ends, however it ends, when a training
    began (or died) in it."""
    from grpo_rlvr.records.crash_record import output_dir

    output = output_dir(Path(run_dir))   # as grpo_config.yaml names it (never raises)
    before = signs(output)
    try:
        yield
    finally:
        if _main_rank():
            with contextlib.suppress(Exception):
                if trained_since(output, before):
                    write_quietly(Path(run_dir), stream)
