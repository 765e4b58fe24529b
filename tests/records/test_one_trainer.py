"""One trainer per run folder: the trainer process holds the run's lock, a second start is refused while it lives
(by `grpo-rlvr train`, exit 2, and by the rendered train.py itself, exit 1), the lock goes with the process however
it dies, and `diagnose` names the starts of a run two trainers wrote at once. (The real orphan after `kill -9` of
the launcher: tests/run/test_launch_stop.py.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from grpo_rlvr.records import one_trainer
from grpo_rlvr.records.one_trainer import LOCK_NAME, hold, holder, in_use, overlapping_trainers, release
from histories import HEALTHY, history
from paths import CLI

HOLDER = """
import sys, time
from grpo_rlvr.records.one_trainer import hold
assert hold(sys.argv[1], "python train.py", resume=None) is None
print("held", flush=True)
time.sleep(600)
"""


@pytest.fixture
def a_trainer(tmp_path):
    """Another process holding ``tmp_path``'s trainer lock, as a training train.py does; killed at the end."""
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    yield p
    p.kill()
    p.wait()


def test_a_live_trainer_is_named_and_its_lock_goes_with_it(tmp_path, a_trainer):
    info = holder(tmp_path)
    assert info["pid"] == a_trainer.pid and info["door"] == "python train.py"
    said = in_use(tmp_path)
    assert f"trainer pid {a_trainer.pid}" in said and f"kill -INT {a_trainer.pid}" in said
    assert f"grpo-rlvr watch {tmp_path}" in said and f"grpo-rlvr train {tmp_path} --resume" in said
    assert hold(tmp_path, "grpo-rlvr train") == said   # this process may not take it
    os.kill(a_trainer.pid, signal.SIGKILL)             # however it dies, the kernel drops its flock
    a_trainer.wait()
    assert holder(tmp_path) is None and in_use(tmp_path) is None
    assert (tmp_path / LOCK_NAME).is_file()             # the record stays; nobody holds it


HOLDER_OF = """
import json, sys, time
from grpo_rlvr.records.one_trainer import hold
assert hold(sys.argv[1], "python train.py", **json.loads(sys.argv[2])) is None
print("held", flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize(("kind", "promise"), [
    ({"saves": True}, "(it saves a checkpoint and prints the resume command), then `grpo-rlvr train {run} --resume`"),
    ({"saves": False, "smoke": True}, "(an unreviewed smoke test: it saves no checkpoint, so there is nothing to "
     "resume), then start again: `grpo-rlvr train {run} --unreviewed-smoke-test`, or `grpo-rlvr train {run}` once "
     "the run is gated"),
    ({"saves": False}, "(this run saves no checkpoint, so there is nothing to resume), then move {run}/output aside "
     "and `grpo-rlvr train {run}` again (from the base model)")])
def test_the_refusal_promises_a_checkpoint_only_where_the_trainer_saves_one(tmp_path, kind, promise):
    p = subprocess.Popen([sys.executable, "-c", HOLDER_OF, str(tmp_path), json.dumps(kind)], stdout=subprocess.PIPE,
                         text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        said = in_use(tmp_path)
        assert said.endswith(f"or stop it with Ctrl-C in its terminal or `kill -INT {p.pid}` "
                             + promise.format(run=tmp_path)), said
        assert ("--resume" in said) == bool(kind["saves"])
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize(("smoke", "saves", "said"), [(True, None, "an unreviewed smoke test"),
                                                      (False, False, "this run saves no checkpoint")])
def test_train_py_records_what_its_run_saves_in_the_lock(tmp_path, smoke, saves, said):
    """refuse_unless_gated (what the rendered train.py calls, with its config's save_strategy) keeps it in the
    lock's record, which another process's refusal reads."""
    from grpo_rlvr.records.checked_run import RunCheck
    from grpo_rlvr.run.guard import demo_acceptance, refuse_unless_gated

    try:
        with demo_acceptance(lambda run, smoke, resume, start=None: RunCheck({}, [])):
            refuse_unless_gated(tmp_path, tmp_path / "output", smoke=smoke, saves=saves)
        other = subprocess.run([sys.executable, "-c", "import sys; from grpo_rlvr.records.one_trainer import "
                                "in_use; print(in_use(sys.argv[1]))", str(tmp_path)], capture_output=True, text=True)
        assert f"trainer pid {os.getpid()}" in other.stdout and said in other.stdout, other.stdout + other.stderr
        assert "--resume" not in other.stdout
    finally:
        release(tmp_path)


def test_this_process_holds_once_and_lets_go(tmp_path):
    assert hold(tmp_path, "grpo-rlvr demo") is None
    assert hold(tmp_path, "grpo-rlvr demo", resume="checkpoint-5") is None   # its own: the resume is added
    other = subprocess.run([sys.executable, "-c", "import sys; from grpo_rlvr.records.one_trainer import in_use; "
                            "print(in_use(sys.argv[1]))", str(tmp_path)], capture_output=True, text=True)
    assert f"trainer pid {os.getpid()}" in other.stdout and "resuming checkpoint-5" in other.stdout, other.stderr
    release(tmp_path)
    assert holder(tmp_path) is None and str(tmp_path.resolve()) not in one_trainer._held


def test_a_second_start_is_refused_by_train_and_by_train_py(workspace, a_trainer_of):
    """`grpo-rlvr train RUN --resume` (exit 2, before anything starts) and the rendered train.py started by hand
    (exit 1, before it imports the training stack or clears the run's records) both name the live trainer."""
    run, trainer = a_trainer_of
    (run / "output").mkdir(exist_ok=True)
    record = run / "output" / "crash.json"
    record.write_text('{"kind": "stopped"}')   # the live run's own record, which a second start must not clear
    for argv in ([*CLI, "train", str(run), "--resume"], [*CLI, "train", str(run), "--dry-run"]):
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert f"a trainer is training this run now (trainer pid {trainer.pid}" in out.stderr
    by_hand = subprocess.run([sys.executable, str(run / "train.py")], capture_output=True, text=True, timeout=120)
    assert by_hand.returncode == 1 and "Traceback" not in by_hand.stderr, by_hand.stderr
    assert f"training refused (nothing was loaded):\n- {run}: a trainer is training this run now" in by_hand.stderr
    assert record.read_text() == '{"kind": "stopped"}' and not (run / "output" / "provenance.json").exists()


@pytest.fixture
def a_trainer_of(workspace):
    from artifacts import make_artifact
    from grpo_rlvr.run.render import render

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    yield run, p
    p.kill()
    p.wait()


def _metrics(output, steps):
    output.mkdir(parents=True, exist_ok=True)
    (output / "metrics.jsonl").write_text("".join(json.dumps({"step": s, "loss": 0.1, "reward": 0.5}) + "\n"
                                                  for s in steps) + json.dumps({"step": steps[-1], "train_runtime": 9})
                                          + "\n")


def _starts(output, *starts):
    (output / "provenance.json").write_text(json.dumps({"format": 1, "starts": [
        {"kind": "start", "trainer_pid": pid, "trainer_started": "1", "host": "elsewhere", "door": door,
         "started_at": at, "resume": resume} for pid, door, at, resume in starts]}))


def test_interleaved_steps_name_both_starts(tmp_path):
    out = tmp_path / "output"
    _metrics(out, [10, 20, 30, 40, 20, 50, 30, 60, 40])   # a resume from checkpoint-10 beside the first trainer
    _starts(out, (101, "grpo-rlvr train", "2026-12-01T10:00:00Z", None),
            (202, "grpo-rlvr train", "2026-12-01T10:05:00Z", str(out / "checkpoint-10")))
    got = overlapping_trainers(out)
    assert got[0] == (f"{out / 'metrics.jsonl'}: the step goes back 3 times (20 after 40, 30 after 50, 40 after 60), "
                      "but the run has 2 starts (each resume goes back once): two trainers logged into it at once")
    assert got[1:] == ["start 1: 2026-12-01T10:00:00Z by grpo-rlvr train, pid 101 on elsewhere, from the base model",
                       f"start 2: 2026-12-01T10:05:00Z by grpo-rlvr train, pid 202 on elsewhere, resuming "
                       f"{out / 'checkpoint-10'}"]


def test_resumes_one_after_another_are_not_two_trainers(tmp_path):
    out = tmp_path / "output"
    _metrics(out, [10, 20, 30, 20, 30, 40, 40, 50])   # died after 30 (resumed from 10), then after 40 (from 30)
    _starts(out, (1, "a", "t1", None), (2, "a", "t2", "c10"), (3, "a", "t3", "c30"))
    assert overlapping_trainers(out) == []


def test_a_start_whose_trainer_still_runs_beside_a_later_one(tmp_path):
    """No interleaving yet (the second start has not logged): the first start's process is still alive here."""
    from grpo_rlvr.records.provenance import process_start

    out = tmp_path / "output"
    _metrics(out, [10, 20])
    (out / "provenance.json").write_text(json.dumps({"format": 1, "starts": [
        {"trainer_pid": os.getpid(), "trainer_started": process_start(os.getpid()), "host": os.uname().nodename,
         "door": "grpo-rlvr train", "started_at": "t1", "resume": None},
        {"trainer_pid": 1, "trainer_started": "0", "host": os.uname().nodename, "door": "python train.py",
         "started_at": "t2", "resume": "checkpoint-10"}]}))
    got = overlapping_trainers(out)
    assert got[0] == f"start 1's trainer (pid {os.getpid()}) still runs, and 1 later start(s) began beside it", got


def test_diagnose_puts_two_trainers_first(workspace, tmp_path):
    from grpo_rlvr.diagnosis import diagnose
    from grpo_rlvr.run.render import render

    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    h = history(**HEALTHY)
    steps = [r["step"] for r in h]
    interleaved = steps[:12] + [s for pair in zip(steps[12:], steps[4:12], strict=False) for s in pair]
    out.mkdir(parents=True, exist_ok=True)
    by_step = {r["step"]: r for r in h}
    (out / "metrics.jsonl").write_text("".join(json.dumps(by_step[s]) + "\n" for s in interleaved))
    _starts(out, (101, "grpo-rlvr train", "t1", None), (202, "grpo-rlvr train", "t2", "checkpoint-40"))
    res = diagnose(run, out_dir=tmp_path / "diag")
    assert res.findings[0].id == "two_trainers" and res.findings[0].severity == "critical"
    assert any("start 2: t2 by grpo-rlvr train, pid 202" in e for e in res.findings[0].evidence)
    assert res.data["recommended_variant"] is None
