"""``grpo-rlvr train``: refuses without a passing gate; runs the rendered train.py with TRL's GRPOTrainer;
finds the newest complete checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from artifacts import make_artifact
from grpo_rlvr.launch import GateRefused, newest_complete_checkpoint, train
from grpo_rlvr.run_dir import render


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
