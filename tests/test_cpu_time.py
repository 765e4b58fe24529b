"""Time before cost: a CPU job estimated above the limit is refused without --allow-cpu, naming the GPU path; the
rate is measured once per machine and kept in the cache; the demo's tiny model stays under the limit without
measuring anything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr import cpu_time
from grpo_rlvr.brief import load_brief

CLI = [sys.executable, "-m", "grpo_rlvr"]
RATE = 3e10  # parameter-tokens/s, what a 2-core VM measures; written into the cache so no test depends on timing


def keep_rate(rate: float = RATE) -> None:
    """The cache as `measured_speed` leaves it for this machine."""
    path = cpu_time._cache_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"param_tokens_per_s": rate, "key": cpu_time.machine_key()}))


def no_calibration(monkeypatch):
    def refuse():
        raise AssertionError("calibrated although the cache holds this machine's rate, or the job is tiny")

    monkeypatch.setattr(cpu_time, "calibrate", refuse)


def brief_with(workspace, **sections):
    data = yaml.safe_load(example_brief_text())
    for key, value in sections.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    p = workspace / "b.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_the_rate_is_measured_once_per_machine_and_kept(monkeypatch):
    cpu_time._cache_file().unlink(missing_ok=True)
    first = cpu_time.measured_speed()                     # a real calibration on this machine
    assert first.param_tokens_per_s > 0 and first.source == str(cpu_time._cache_file())
    kept = json.loads(cpu_time._cache_file().read_text())
    assert kept["key"] == cpu_time.machine_key() and kept["param_tokens_per_s"] == first.param_tokens_per_s
    no_calibration(monkeypatch)
    assert cpu_time.measured_speed().param_tokens_per_s == first.param_tokens_per_s
    # another machine's (or another torch's) rate is not reused
    cpu_time._cache_file().write_text(json.dumps({"param_tokens_per_s": 1.0, "key": {"cpu": "elsewhere"}}))
    monkeypatch.setattr(cpu_time, "calibrate", lambda: 123.0)
    assert cpu_time.measured_speed().param_tokens_per_s == 123.0


def test_the_demo_model_stays_under_the_limit_without_measuring(workspace, monkeypatch):
    no_calibration(monkeypatch)
    brief = load_brief(workspace / "brief.yaml")
    assert brief.model.facts.params < 2e6
    assert cpu_time.check_training_time(brief, None, allow_cpu=False) is None
    assert cpu_time.check_sampling_time(brief, 3 * 64 * 8, allow_cpu=False, command="preflight") is None


def test_training_work_counts_steps_completions_and_passes():
    grpo = {"per_device_train_batch_size": 8, "gradient_accumulation_steps": 4, "max_completion_length": 256,
            "max_steps": 10, "beta": 0.0}
    steps, tokens = cpu_time.training_tokens(grpo, processes=1, rows=None)
    assert (steps, tokens) == (10, 10 * 32 * 256 * 4)            # generate + forward/backward, no reference
    steps, tokens = cpu_time.training_tokens({**grpo, "max_steps": -1, "num_train_epochs": 2, "beta": 0.01,
                                              "num_generations": 8}, processes=1, rows=100)
    assert steps == 2 * 25 and tokens == 50 * 32 * 256 * 5          # 100 prompts × 8 / 32 per step, two epochs


def test_sampling_a_big_model_on_cpu_is_refused_naming_the_gpu_path(workspace):
    """A 7.6B model named by hub id (not downloaded): preflight and inspect stop before loading anything."""
    keep_rate()
    p = brief_with(workspace, model={"name_or_path": "Qwen/Qwen2.5-7B-Instruct", "params": "7.6B"},
                   grpo={"max_completion_length": 256})
    for cmd in ("preflight", "inspect"):
        r = subprocess.run([*CLI, cmd, str(p)], capture_output=True, text=True)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
        assert f"{cmd} would sample" in r.stderr and "7.6B-parameter model" in r.stderr, r.stderr
        assert "rough estimate" in r.stderr and "h by" in r.stderr, r.stderr          # hours, said to be rough
        assert "CUDA GPU" in r.stderr and "--allow-cpu" in r.stderr, r.stderr
    allowed = subprocess.run([*CLI, "preflight", str(p), "--allow-cpu"], capture_output=True, text=True)
    # past the guard it tries to load the model, which is not here (offline): a different, plain error
    assert allowed.returncode == 2 and "pass --allow-cpu" not in allowed.stderr and "Traceback" not in allowed.stderr
    assert "going ahead (--allow-cpu)" in allowed.stderr                       # the estimate is still said
    assert "Qwen/Qwen2.5-7B-Instruct" in allowed.stderr, allowed.stderr[-2000:]


def test_an_unknown_size_on_cpu_is_refused_until_stated(workspace, monkeypatch):
    p = brief_with(workspace, model={"name_or_path": "my-org/chatbot"})
    with pytest.raises(cpu_time.CpuTimeRefused, match="size is unknown.*State model.params.*--allow-cpu"):
        cpu_time.check_sampling_time(load_brief(p), 512, allow_cpu=False, command="preflight")


def test_a_long_cpu_training_run_is_refused_and_dry_run_shows_the_estimate(workspace):
    """The tiny model for 200k steps: hours on a CPU. `train` refuses (exit 2) after the gate, before launching."""
    keep_rate()
    p = brief_with(workspace, grpo={"max_steps": 200_000})
    make_artifact(p, workspace / "out" / "inspection")
    run = json.loads(subprocess.run([*CLI, "render", str(p), "--json"], capture_output=True, text=True).stdout)["dir"]
    r = subprocess.run([*CLI, "train", run], capture_output=True, text=True)
    assert r.returncode == 2 and "training would run 200000 steps" in r.stderr, r.stderr[-2000:]
    assert "hardware.accelerator: gpu" in r.stderr and "--allow-cpu" in r.stderr
    assert not (workspace / "out" / "run" / "output" / "train_summary.json").exists()
    dry = subprocess.run([*CLI, "train", run, "--dry-run", "--json"], capture_output=True, text=True)
    doc = json.loads(dry.stdout)
    assert dry.returncode == 0 and doc["cpu_estimate_s"] > cpu_time.CPU_LIMIT_S and doc["refused"] == []


def test_dry_run_shows_the_estimate_when_the_gate_fails_and_never_claims_to_go_ahead(workspace, caplog):
    """`train RUN --dry-run`: the estimate is shown before the review too, says that --allow-cpu would be needed
    (not that training goes ahead with it), and an unreviewed smoke test is estimated at its 3 capped steps."""
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    keep_rate()
    p = brief_with(workspace, grpo={"max_steps": 200_000})
    make_artifact(p, workspace / "out" / "inspection", verdict=None)      # the gate fails: no verdicts yet
    run = render(p).dir
    with caplog.at_level("INFO", logger="grpo_rlvr"):
        res = train(run, dry_run=True)
    assert res.refused and res.cpu_estimate_s > cpu_time.CPU_LIMIT_S, res.refused
    text = res.format()
    assert "Rough time on this CPU" in text and "only with --allow-cpu" in text, text
    assert "Training would be refused now:" in text
    assert "going ahead" not in caplog.text
    smoke = train(run, dry_run=True, unreviewed_smoke_test=True)
    assert smoke.command[-3:] == ["--max-steps", "3", "--unreviewed-smoke-test"]
    assert smoke.cpu_estimate_s is None or smoke.cpu_estimate_s < res.cpu_estimate_s / 10_000   # 3 steps, not 200k
    allowed = train(run, dry_run=True, allow_cpu=True)
    assert "only with --allow-cpu" not in allowed.format()
