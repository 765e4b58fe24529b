"""Colocated GRPO training with vLLM on this machine, through ``grpo-rlvr train``, as a user runs it: a brief with
``grpo: {use_vllm: true}`` renders a train.py that trains with TRL's in-process engine; TRL's vLLM metrics reach
``metrics.jsonl`` and ``diagnose`` reads them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from artifacts import make_artifact
from vllm_lane.conftest import make_workspace

STEPS = 3


@pytest.mark.e2e
def test_colocate_training_logs_the_sampler_metrics_and_diagnose_reads_them(tmp_path, warm_model_dir):
    from grpo_rlvr.run.render import render

    ws = make_workspace(tmp_path, warm_model_dir,
                        grpo={"use_vllm": True, "max_steps": STEPS, "logging_steps": 1,
                              "per_device_train_batch_size": 16, "learning_rate": 1e-3})
    validate = subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(ws / "brief.yaml"), "--json"],
                              capture_output=True, text=True)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    make_artifact(ws / "brief.yaml", ws / "out" / "inspection")
    run = render(ws / "brief.yaml").dir
    assert "'vllm_cpu_kv_cache_gib': 1" in (run / "train.py").read_text()   # the one builder prepares it

    p = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--json"], capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-4000:]
    assert json.loads(p.stdout)["global_step"] == STEPS

    records = [json.loads(line) for line in (run / "output" / "metrics.jsonl").read_text().splitlines()]
    trained = [r for r in records if "reward" in r]
    assert len(trained) == STEPS
    for r in trained:  # TRL's comparison of vLLM's log-probabilities with the trained policy's, every step
        assert 0 <= r["sampling/sampling_logp_difference/mean"] < 0.05, r
        assert 0 < r["sampling/importance_sampling_ratio/min"] <= 1 <= r["sampling/importance_sampling_ratio/max"]
    assert any(r["grad_norm"] > 0 for r in trained), "no step had signal: the weight sync went untested"

    d = subprocess.run([sys.executable, "-m", "grpo_rlvr", "diagnose", str(run), "--json"], capture_output=True,
                       text=True)
    diag = json.loads(d.stdout)   # exit 0 healthy, 1 a failure mode named: 3 steps may name one (not this one)
    assert d.returncode in (0, 1) and diag["exit_code"] == d.returncode, d.stderr[-2000:]
    logp = diag["vllm_sampler"]["logp_difference_mean"]
    assert logp["last"] == pytest.approx(trained[-1]["sampling/sampling_logp_difference/mean"], abs=1e-5)
    assert "sampler_mismatch" not in {f["id"] for f in diag["findings"]}
