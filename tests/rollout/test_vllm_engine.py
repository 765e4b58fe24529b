"""What a CPU brief with vLLM renders and refuses, and the sampling engine the brief asks for. Pure parts only: no
engine starts here (tests/vllm_lane runs real ones), and this lane has no vLLM installed."""

from __future__ import annotations

import json

import pytest

from briefs import write_brief
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError


def test_sampling_engine_field(workspace):
    assert load_brief(write_brief(workspace, "a.yaml")).sampling_engine == "auto"
    brief = load_brief(write_brief(workspace, "b.yaml", sampling={"engine": "vllm"}))
    assert brief.sampling_engine == "vllm"
    assert any("sampling.engine: 'vllm', but vLLM is not installed here" in w for w in brief.warnings)
    with pytest.raises(ConfigError, match="sampling.engine: 'vlm' is not allowed"):
        load_brief(write_brief(workspace, "c.yaml", sampling={"engine": "vlm"}))


def test_cpu_colocate_renders_the_weight_keeping_setup(workspace):
    import yaml

    from grpo_rlvr.run.render import render

    data = yaml.safe_load((workspace / "brief.yaml").read_text())
    data["grpo"]["use_vllm"] = True
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    run = render(workspace / "brief.yaml").dir
    train_py = (run / "train.py").read_text()
    # 64 completions per rank × 256 tokens × 4 KiB per token = 64 MiB: the 1 GiB floor, prepared by build_trainer
    assert "'vllm_cpu_kv_cache_gib': 1" in train_py
    assert "refusals_explained():" in train_py and 'if __name__ == "__main__":' in train_py
    assert json.loads((run / "brief.lock.json").read_text())["launch"]["mode"] == "colocate"
    compile(train_py, "train.py", "exec")


def test_plain_cpu_run_renders_no_vllm_setup(workspace):
    from grpo_rlvr.run.render import render

    train_py = (render(workspace / "brief.yaml").dir / "train.py").read_text()
    assert "'vllm_cpu_kv_cache_gib': None" in train_py and "refusals_explained" not in train_py


def test_refusals_become_messages_with_the_fix():
    from grpo_rlvr.trainer.vllm_cpu import refusal_message

    nccl = NotImplementedError("Weight synchronization runs on vLLM's NCCL weight-transfer engine, which needs a "
                               "CUDA device, got 'cpu'. Generation through the server is unaffected.")
    message, code = refusal_message(nccl)
    assert "set grpo.vllm_mode: colocate" in message and code == 1
    message, code = refusal_message(ValueError("Sleep mode is not supported on current platform."))
    assert "vllm_enable_sleep_mode: false" in message and code == 2
    assert refusal_message(ValueError("something else")) is None
    assert refusal_message(NotImplementedError("not this one")) is None


def test_sampler_mismatch_detector(tmp_path):
    from grpo_rlvr.diagnosis import diagnose

    def run(values):
        lines = [json.dumps({"step": i + 1, "reward": 0.5, "sampling/sampling_logp_difference/mean": v,
                             "sampling/importance_sampling_ratio/min": 0.9}) for i, v in enumerate(values)]
        path = tmp_path / f"m{len(list(tmp_path.iterdir()))}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return diagnose(path, out_dir=tmp_path / "d")

    healthy = run([0.001] * 10)
    assert "sampler_mismatch" not in {f.id for f in healthy.findings}
    assert healthy.data["vllm_sampler"]["logp_difference_mean"]["last"] == 0.001
    level = {f.id: f for f in run([0.08] * 10).findings}["sampler_mismatch"]
    assert level.severity == "warning" and level.cause == "level"
    grows = {f.id: f for f in run([0.002 * 1.6 ** i for i in range(10)]).findings}["sampler_mismatch"]
    assert grows.severity == "critical" and "stale" in grows.recommendation


def test_fsdp2_on_cpu_is_said_to_run_as_ddp(workspace):
    brief = load_brief(write_brief(workspace, "f.yaml", hardware={"accelerator": "cpu", "cpu_processes": 2,
                                                                  "sharding": "fsdp2"}))
    assert any("'fsdp2' is not applied on CPU" in w for w in brief.warnings)
