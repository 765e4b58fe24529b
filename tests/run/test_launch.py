"""``grpo-rlvr train``: refuses without a passing gate; runs the rendered train.py with TRL's GRPOTrainer;
finds the newest complete checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from artifacts import make_artifact
from grpo_rlvr.errors import RunFolderInUse
from grpo_rlvr.run.launch import GateRefused, TrainResult, newest_complete_checkpoint, train
from grpo_rlvr.run.render import render


def test_train_refuses_without_inspection(workspace):
    run = render(workspace / "brief.yaml").dir
    with pytest.raises(GateRefused, match="not found"):
        train(run)
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "training refused" in out.stderr and "grpo-rlvr inspect" in out.stderr and "Traceback" not in out.stderr


def test_train_refuses_on_failing_gate_with_reasons(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "training refused" in out.stderr and "without a verdict" in out.stderr


def test_train_refuses_when_brief_changed_since_render(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    b = workspace / "brief.yaml"
    b.write_text(b.read_text().replace("weight: 0.2", "weight: 0.25"))
    with pytest.raises(GateRefused, match="changed since this run was rendered"):
        train(run)


def test_dry_run_prints_command(workspace):
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    res = train(run, dry_run=True, max_steps=3)
    assert res.command[-3:] == [str(run / "train.py"), "--max-steps", "3"]


def _plant_a_finished_run(run, checkpoint=True):
    """What a finished training leaves in RUN/output (its files' content does not matter to the check)."""
    out = run / "output"
    if checkpoint:
        (out / "checkpoint-200").mkdir(parents=True)
        for f in ("model.safetensors", "optimizer.pt"):
            (out / "checkpoint-200" / f).write_text("x")
        (out / "checkpoint-200" / "trainer_state.json").write_text(json.dumps({"global_step": 200}))
    (out / "final").mkdir(parents=True)
    (out / "metrics.jsonl").write_text(json.dumps({"step": 200, "reward": 0.5}) + "\n")
    (out / "train_summary.json").write_text(json.dumps({"global_step": 200}))
    return {p.name: p.stat().st_mtime_ns for p in out.iterdir()}


def test_train_refuses_to_mix_a_second_run_into_a_finished_one(workspace):
    """A run folder holds one run: training again (here after a re-render with the same lock) is refused, exit 2,
    naming --resume and how to start afresh, before anything starts, dry run included; nothing is touched. (The
    rendered train.py's own refusal: tests/records/test_run_outputs.py.)"""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    before = _plant_a_finished_run(run)
    run = render(workspace / "brief.yaml").dir             # the same lock: render lets it be
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--max-steps", "3"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "already holds a run's outputs (checkpoint-200, final, metrics.jsonl, train_summary.json)" in out.stderr
    assert f"grpo-rlvr train {run} --resume" in out.stderr and "grpo-rlvr render BRIEF --out NEW_RUN" in out.stderr
    with pytest.raises(RunFolderInUse, match="already holds a run's outputs"):
        train(run, dry_run=True)
    assert {p.name: p.stat().st_mtime_ns for p in (run / "output").iterdir()} == before


def test_train_resume_without_a_checkpoint_is_refused_over_a_run(workspace):
    """--resume over outputs with no checkpoint to continue would start from the base model into the old logs."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    _plant_a_finished_run(run, checkpoint=False)
    with pytest.raises(RunFolderInUse, match="no checkpoint to continue from") as e:
        train(run, resume=True, dry_run=True)
    assert "grpo-rlvr render BRIEF --out NEW_RUN" in str(e.value)


def test_a_smoke_test_says_it_caps_max_steps(workspace):
    """`--unreviewed-smoke-test --max-steps 5` runs 3 steps: the command says 3, and the report says why."""
    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    run = render(workspace / "brief.yaml").dir
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--unreviewed-smoke-test",
                          "--max-steps", "5", "--dry-run", "--json"], capture_output=True, text=True, timeout=300)
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["command"][-3:] == ["--max-steps", "3", "--unreviewed-smoke-test"]
    assert doc["notes"] == ["Note: --max-steps 5 is capped at 3: an unreviewed smoke test runs at most 3 steps "
                            "(review the inspection to train longer)"]
    assert "--max-steps 5 is capped at 3" in out.stderr          # said before anything starts
    assert train(run, dry_run=True, unreviewed_smoke_test=True, max_steps=2).notes == []   # under the cap: as asked


def test_the_launch_says_its_wall_time_counts_loading(tmp_path):
    """train's time is the launch's wall time; the report's is TRL's training loop (report/findings.run_state):
    each says what it counts, so "after 24s" beside "in 4 s" no longer reads as a contradiction."""
    said = TrainResult(tmp_path, True, 0, ["bash", "launch.sh"], seconds=24.4, global_step=3).format()
    assert said.splitlines()[0] == f"Training finished after 24s in all (loading included) at step 3; outputs in " \
                                   f"{tmp_path / 'output'}"


def test_checkpoint_completeness(tmp_path):
    out = tmp_path / "output"
    for step, files in ((10, ["trainer_state.json", "model.safetensors", "optimizer.pt"]),
                        (20, ["model.safetensors"]),  # half-written: no state, no optimizer
                        (15, ["trainer_state.json", "model.safetensors", "optimizer.pt"])):
        d = out / f"checkpoint-{step}"
        d.mkdir(parents=True)
        for f in files:
            (d / f).write_text(json.dumps({"global_step": step}) if f == "trainer_state.json" else "x")
    assert newest_complete_checkpoint(out).name == "checkpoint-15"


@pytest.mark.e2e
def test_train_runs_rendered_files_with_grpotrainer(workspace, monkeypatch):
    """Real TRL GRPOTrainer on CPU, started from the rendered train.py, 2 steps; train.py records the start in the
    work trace (what tests/conftest.py's e2e guard reads)."""
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("disable_tqdm: true", "disable_tqdm: false"))  # TRL's default
    make_artifact(brief, workspace / "out" / "inspection")
    run = render(brief).dir
    log, trace = workspace / "train.log", workspace / "trace.jsonl"
    monkeypatch.setenv("GRPO_RLVR_TRACE", str(trace))
    with log.open("w") as fh:
        res = train(run, max_steps=2, stream=fh)
    assert res.ok and res.global_step == 2
    starts = [json.loads(x) for x in trace.read_text().splitlines() if '"training_start"' in x]
    assert [(e["kind"], e["max_steps"]) for e in starts] == [("grpo", 2)]
    out = log.read_text()
    # quiet by default: our progress line, not tqdm bars or raw log dicts
    assert "step 2/2" in out and "it/s]" not in out and "{'loss'" not in out, out[-3000:]
    metrics = [json.loads(x) for x in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    assert any("rewards/exact_match/mean" in m for m in metrics)
    assert (run / "output" / "final" / "model.safetensors").is_file()
    assert list((run / "output" / "completions").glob("*.parquet"))
