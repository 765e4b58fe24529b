"""A real `grpo-rlvr train` (TRL's GRPOTrainer, the tiny model, CPU) stopped as a person stops it: Ctrl-C in its
terminal (SIGINT to its whole process group), and `kill -9` of the launcher, which leaves its trainer training on.

Ctrl-C: no traceback, a checkpoint saved at the end of the step and listed, a stop record, the resume command, exit
130; `watch --once` says STOPPED at once, and `train --resume` would continue from that checkpoint. `kill -9`:
the orphaned trainer still holds the run's lock, so `train --resume` is refused naming its pid, and `watch` shows
it training; its own Ctrl-C (`kill -INT PID`) then stops it with a checkpoint."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from artifacts import make_artifact
from grpo_rlvr.records.checkpoint_ledger import read_ledger
from grpo_rlvr.records.one_trainer import holder
from grpo_rlvr.run.render import render

CLI = [sys.executable, "-m", "grpo_rlvr"]
pytestmark = pytest.mark.e2e


def _run(workspace: Path) -> Path:
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    return render(workspace / "brief.yaml").dir


def _start(run: Path, log: Path) -> subprocess.Popen:
    """`grpo-rlvr train RUN` as a terminal's foreground job: a process group of its own, so a Ctrl-C is a SIGINT
    to that group."""
    return subprocess.Popen([*CLI, "train", str(run)], stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _wait_for_a_step(run: Path, proc: subprocess.Popen, log: Path, timeout_s: float = 300) -> None:
    metrics, end = run / "output" / "metrics.jsonl", time.monotonic() + timeout_s
    while not (metrics.is_file() and '"loss"' in metrics.read_text()):
        assert proc.poll() is None, log.read_text()[-3000:]
        assert time.monotonic() < end, log.read_text()[-3000:]
        time.sleep(0.5)


def _listed_checkpoints(run: Path) -> list[str]:
    return sorted(k for k in read_ledger(run / "output") if k.startswith("checkpoint-"))


def test_ctrl_c_stops_with_a_checkpoint_and_the_resume_command(workspace):
    run, log = _run(workspace), workspace / "train.log"
    proc = _start(run, log)
    try:
        _wait_for_a_step(run, proc, log)
        os.killpg(proc.pid, signal.SIGINT)   # what the terminal sends to its foreground job
        assert proc.wait(timeout=300) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    out = log.read_text()
    assert "Traceback" not in out and "KeyboardInterrupt" not in out, out[-4000:]
    assert "train.py: Ctrl-C: stopping at the end of this step, with a checkpoint" in out, out[-3000:]
    record = json.loads((run / "output" / "crash.json").read_text())
    ckpt = record["checkpoint"]
    assert record["kind"] == "stopped" and ckpt and (run / "output" / ckpt).is_dir(), record
    assert ckpt in _listed_checkpoints(run)             # proven in the ledger: --resume accepts it
    assert f"{ckpt} saved" in out and f"resume: grpo-rlvr train {run} --resume" in out, out[-3000:]
    assert "Training STOPPED after" in out
    shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 1 and "STOPPED (stopped by Ctrl-C (SIGINT))" in shown.stdout, shown.stdout
    assert "ETA" not in shown.stdout
    again = subprocess.run([*CLI, "train", str(run), "--resume", "--dry-run", "--json"], capture_output=True,
                           text=True, timeout=300)
    assert json.loads(again.stdout)["resumed_from"] == str(run / "output" / ckpt), again.stderr[-2000:]


def test_kill_9_of_the_launcher_leaves_one_trainer_and_resume_is_refused(workspace):
    run, log = _run(workspace), workspace / "train.log"
    proc = _start(run, log)
    trainer = None
    try:
        _wait_for_a_step(run, proc, log)
        trainer = holder(run)["pid"]
        assert trainer != proc.pid   # the trainer (train.py) holds the run, not the launcher
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        time.sleep(1)
        os.kill(trainer, 0)          # still training, an orphan
        second = subprocess.run([*CLI, "train", str(run), "--resume"], capture_output=True, text=True, timeout=300)
        assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr
        assert f"a trainer is training this run now (trainer pid {trainer}" in second.stderr, second.stderr
        assert f"kill -INT {trainer}" in second.stderr
        starts = json.loads((run / "output" / "provenance.json").read_text())["starts"]
        assert len(starts) == 1      # no second start
        shown = subprocess.run([*CLI, "watch", str(run), "--once"], capture_output=True, text=True, timeout=120)
        assert shown.returncode == 0 and "/200" in shown.stdout and "NO TRAINER" not in shown.stdout, shown.stdout
        os.kill(trainer, signal.SIGINT)   # its own Ctrl-C
        end = time.monotonic() + 300
        while holder(run) is not None and time.monotonic() < end:
            time.sleep(0.5)
        assert holder(run) is None
        record = json.loads((run / "output" / "crash.json").read_text())
        assert record["kind"] == "stopped" and record["checkpoint"] in _listed_checkpoints(run)
    finally:
        if trainer:
            with contextlib.suppress(ProcessLookupError):
                os.kill(trainer, signal.SIGKILL)
