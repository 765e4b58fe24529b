"""The vLLM engine's choice and sizing from the brief, and what a CPU brief with vLLM renders and refuses. Pure
parts only: no engine starts here (tests/vllm_lane runs real ones), and this lane has no vLLM installed."""

from __future__ import annotations

import json

import pytest

from briefs import write_brief
from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import ConfigError, MachineError
from grpo_rlvr.rollout import vllm_engine


def test_max_model_len_rounds_up_and_stops_at_the_context():
    assert vllm_engine.max_model_len(10, 24, context_length=256) == 256
    assert vllm_engine.max_model_len(300, 256, context_length=None) == 768
    assert vllm_engine.max_model_len(300, 256, context_length=512) == 512


def test_an_engine_serves_what_needs_no_more_than_it_has():
    base = vllm_engine.EngineSpec(model="m", identity="a", platform="cpu", max_model_len=512, kv_cache_memory_bytes=1)
    shorter = vllm_engine.EngineSpec(model="m", identity="a", platform="cpu", max_model_len=256,
                                     kv_cache_memory_bytes=2)
    assert base.serves(shorter) and not shorter.serves(base)
    retrained = vllm_engine.EngineSpec(model="m", identity="b", platform="cpu", max_model_len=256)
    assert not base.serves(retrained), "new weights under the same path need a new engine"
    assert "kv_cache_memory_bytes" in base.llm_kwargs() and "gpu_memory_utilization" not in base.llm_kwargs()


def test_engine_spec_on_cpu_is_sized_from_the_model_config(workspace):
    brief = load_brief(workspace / "brief.yaml")
    spec = vllm_engine.engine_spec(brief, prompt_tokens_max=9, platform="cpu")
    # the demo model: context 256, 4 layers × K and V × 4 heads × 32 dims × 4 bytes (float32) per token
    assert spec.max_model_len == 256 and spec.quantization is None and spec.gpu_memory_utilization is None
    assert spec.kv_cache_memory_bytes == vllm_engine.SEQS_IN_FLIGHT * 256 * (4 * 2 * 4 * 32 * 4)
    assert spec.llm_kwargs()["max_num_seqs"] == vllm_engine.SEQS_IN_FLIGHT


def test_asking_for_vllm_where_it_is_missing_names_the_fix():
    with pytest.raises(MachineError, match="sampling.engine: 'vllm', but vLLM is not installed here"):
        vllm_engine.choose_engine("vllm")
    assert vllm_engine.choose_engine("auto") == "transformers"
    assert vllm_engine.choose_engine("vllm", model_given=True) == "transformers"


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
    # 64 completions per rank × 256 tokens × 4 KiB per token = 64 MiB: the 1 GiB floor
    assert "prepare_colocate(kv_cache_gib=1)" in train_py
    assert "with refusals_explained():" in train_py and 'if __name__ == "__main__":' in train_py
    assert json.loads((run / "brief.lock.json").read_text())["launch"]["mode"] == "colocate"
    compile(train_py, "train.py", "exec")


def test_plain_cpu_run_renders_no_vllm_setup(workspace):
    from grpo_rlvr.run.render import render

    train_py = (render(workspace / "brief.yaml").dir / "train.py").read_text()
    assert "prepare_colocate" not in train_py and "refusals_explained" not in train_py


def test_refusals_become_messages_with_the_fix():
    from grpo_rlvr.runtime.vllm_cpu import refusal_message

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
