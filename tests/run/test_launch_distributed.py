"""Scale-out and crash recovery on CPU: two training processes (torch's launcher, gloo: the DDP path a
multi-GPU user takes through accelerate), and a run killed with SIGKILL after a checkpoint, then resumed."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.records.checkpoint_ledger import read_ledger
from grpo_rlvr.run.launch import is_complete_checkpoint, train
from grpo_rlvr.run.render import render


def small_brief(workspace, **grpo):
    data = yaml.safe_load(example_brief_text())
    data["grpo"].update({"per_device_train_batch_size": 16, "logging_steps": 1, "max_steps": 4, **grpo})
    data["grpo"].pop("disable_tqdm", None)
    data["watch"] = {"stop_on": "never"}   # the untrained model has no signal: the watchdog would stop it at step 8
    return data


@pytest.mark.e2e
def test_two_cpu_processes_really_train(workspace):
    data = small_brief(workspace, per_device_train_batch_size=8, max_steps=2)
    data["hardware"] = {"accelerator": "cpu", "cpu_processes": 2}
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    acc = yaml.safe_load((run / "accelerate.yaml").read_text())
    assert acc["distributed_type"] == "MULTI_CPU" and acc["num_processes"] == 2
    log = workspace / "train.log"
    with log.open("w") as fh:
        res = train(run, stream=fh)
    text = log.read_text()
    assert res.ok, text[-3000:]
    assert res.command[1:3] == ["-m", "torch.distributed.run"] and "--nproc_per_node" in res.command
    assert res.global_step == 2
    # Two ranks of one prompt × 8 generations each: TRL gathers 16 completions per step. One process
    # (what `accelerate launch` starts for a MULTI_CPU config without mpirun) would log 8.
    import pyarrow.parquet as pq

    rows = pq.read_table(run / "output" / "completions" / "completions_00002.parquet").num_rows
    assert rows == 16, rows
    state = json.loads((run / "output" / "train_summary.json").read_text())
    assert any("reward" in r for r in state["log_history"])


@pytest.mark.e2e
def test_sigkill_after_checkpoint_then_resume(workspace):
    data = small_brief(workspace, max_steps=12, save_steps=4)
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    proc = subprocess.Popen([sys.executable, "-m", "grpo_rlvr", "train", str(run)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 600
    try:
        # killed once checkpoint-8 is complete and listed in the ledger (the trainer lists it just after saving it;
        # a checkpoint killed before that is not this run's proven checkpoint, and resume rightly skips it)
        while (not (out / "checkpoint-8").is_dir() or not is_complete_checkpoint(out / "checkpoint-8")
               or "checkpoint-8" not in read_ledger(out)):
            assert proc.poll() is None, "training ended before the kill"
            assert time.monotonic() < deadline, "no checkpoint-8 in time"
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        # the trainer runs in a session of its own (the launcher passes Ctrl-C on to it) and holds the run's lock:
        # a lost machine kills it too, and a resume waits until no trainer holds the run
        from grpo_rlvr.records.one_trainer import holder

        while (info := holder(run)) is not None and time.monotonic() < deadline:
            if info.get("pid"):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(info["pid"], signal.SIGKILL)
            time.sleep(0.2)
    killed_at = max(json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines())
    assert 8 <= killed_at < 12
    # a half-written newer checkpoint must be ignored on resume
    (out / "checkpoint-11").mkdir(exist_ok=True)
    (out / "checkpoint-11" / "model.safetensors").write_text("")

    res = train(run, resume=True)
    assert res.ok and res.resumed_from.endswith("checkpoint-8") and res.global_step == 12
    steps = [json.loads(x)["step"] for x in (out / "metrics.jsonl").read_text().splitlines()
             if "reward" in json.loads(x)]
    assert sorted(set(steps)) == list(range(1, 13))          # no gap
    dupes = sorted({s for s in steps if steps.count(s) > 1})
    assert all(8 < s <= killed_at for s in dupes), dupes     # re-logged only after the last checkpoint


@pytest.mark.e2e
def test_the_watchdog_stops_every_rank_of_a_distributed_run(workspace):
    """Two training processes (gloo: the path a multi-GPU run takes, with the Trainer's logs on every rank) on the
    untrained model, which never succeeds (no_learning_signal, critical, from the first log). Rank 0 decides at
    step 8 and tells rank 1; both stop at the same step: checkpoint-8 saved, exit 1, no final model, and no rank
    left waiting at a collective (the command has a bound; a rank that trained on would hang its peer). The resume
    the stop message names continues from checkpoint-8 on both ranks."""
    from grpo_rlvr.records.checkpoint_ledger import read_ledger

    data = small_brief(workspace, per_device_train_batch_size=8, max_steps=30, logging_steps=1, save_steps=1000)
    data["hardware"] = {"accelerator": "cpu", "cpu_processes": 2}
    data["watch"] = {"stop_on": "critical"}
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    out = run / "output"
    proc = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--json"], capture_output=True,
                          text=True, timeout=900, start_new_session=True)
    assert proc.returncode == 1, proc.stderr[-4000:]
    doc = json.loads(proc.stdout)
    assert doc["watch_stop"]["id"] == "no_learning_signal" and doc["watch_stop"]["step"] == 8, doc
    assert "--nproc_per_node" in doc["command"]
    assert (out / "checkpoint-8").is_dir() and is_complete_checkpoint(out / "checkpoint-8")
    assert "checkpoint-8" in json.dumps(read_ledger(out)) and not (out / "final").exists()
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 8
    # one decision, said once (by rank 0); had rank 1 trained on, its next gradient all-reduce would have waited
    # for rank 0 until the timeout above
    assert proc.stderr.count("watch: stopping at step 8") == 1, proc.stderr[-4000:]
    stops = [json.loads(x) for x in (out / "watch.jsonl").read_text().splitlines()]
    assert [e["step"] for e in stops if e["event"] == "stop"] == [8]
    # the ledger binds every file of the checkpoint, each rank's random state included (rank 0 records it once
    # every rank has saved), and the resume the message names continues on both ranks and is stopped again
    assert {"rng_state_0.pth", "rng_state_1.pth"} <= set(read_ledger(out)["checkpoint-8"]["files"])
    again = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--resume", "--json"],
                           capture_output=True, text=True, timeout=900, start_new_session=True)
    doc = json.loads(again.stdout)
    assert again.returncode == 1 and doc["resumed_from"] == str(out / "checkpoint-8"), again.stderr[-4000:]
    assert doc["watch_stop"] and doc["watch_stop"]["step"] == 16, again.stderr[-6000:]
    assert is_complete_checkpoint(out / "checkpoint-16")
