"""Preflight and inspect sample with a real vLLM engine when the brief asks for it (``sampling.engine: vllm``):
one engine for both within a process, sized from the brief, and named in ``--json`` and the inspection manifest."""

from __future__ import annotations

import json

import pytest

from vllm_lane.conftest import make_workspace


@pytest.fixture(scope="module")
def ws(tmp_path_factory, warm_model_dir):
    return make_workspace(tmp_path_factory.mktemp("sampling"), warm_model_dir, sampling={"engine": "vllm"})


@pytest.mark.e2e
def test_preflight_and_inspect_share_one_engine_sized_from_the_brief(ws):
    from grpo_rlvr.inspection import load_artifact
    from grpo_rlvr.inspection.run import inspect_rewards
    from grpo_rlvr.preflight.success_rate import preflight
    from grpo_rlvr.rollout import vllm_engine
    from grpo_rlvr.runtime.vllm_cpu import vllm_platform

    built = vllm_engine.builds
    pre = preflight(ws / "brief.yaml", prompts=16, k=8)
    assert pre.engine["name"] == "vllm" and pre.engine["platform"] == vllm_platform()
    assert pre.engine["package"].startswith(("vllm ", "vllm-cpu "))
    # the demo model's context is 256 tokens: prompt (≤ 10) + 24 completion tokens rounds up to it
    assert pre.engine["max_model_len"] == 256
    if vllm_platform() == "cpu":  # 256 sequences × 256 tokens × 4 layers × 2 × 128 × 4 bytes (float32)
        assert pre.engine["kv_cache_memory_bytes"] == 256 * 256 * 4 * 2 * 128 * 4
    assert 0 < pre.pass_at_1 < 1, "the warmed-up model succeeds sometimes, whichever engine samples it"

    res = inspect_rewards(ws / "brief.yaml", samples=50)
    manifest = load_artifact(res.dir).manifest
    assert manifest["sampling"]["engine"] == "vllm" and res.engine["name"] == "vllm"
    assert manifest["sampling"]["engine_settings"] == {k: v for k, v in pre.engine.items() if k != "name"}
    assert vllm_engine.builds == built + 1, "inspect started a second engine instead of reusing preflight's"


@pytest.mark.e2e
def test_samples_are_distinct_per_prompt_and_carry_stop_reasons(ws):
    """Through the kept engine: n seeded samples per prompt differ; truncation and token counts match vLLM's."""
    from transformers import AutoTokenizer

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rollout.sampling import SamplingParams, draw

    brief = load_brief(ws / "brief.yaml")
    tok = AutoTokenizer.from_pretrained(ws / "model")
    prompts = [[{"role": "user", "content": f"{a}+{b}="}] for a, b in ((1, 2), (3, 4), (5, 6))]
    samples, engine, _ = draw(brief, prompts, 8, SamplingParams(temperature=1.0, max_completion_length=6, seed=1),
                              tokenizer=tok)
    assert engine.name == "vllm" and len(samples) == 24
    assert [s.prompt_index for s in samples] == [i for i in range(3) for _ in range(8)]
    for i in range(3):
        assert len({s.completion for s in samples if s.prompt_index == i}) > 1
    assert all(s.num_tokens <= 6 for s in samples) and all(s.num_tokens == 6 for s in samples if s.truncated)
    assert any(s.truncated for s in samples), "6 tokens cannot hold '<answer>N</answer>': some must be cut"


@pytest.mark.e2e
def test_cli_json_names_the_engine_and_stdout_holds_only_json(ws, capfd):
    """`grpo-rlvr preflight --json`, in this process so it reuses the kept engine (one engine start saved); capfd
    reads the file descriptors, so output from vLLM's engine process would show too."""
    from grpo_rlvr.cli.main import main
    from grpo_rlvr.rollout import vllm_engine

    built, kept = vllm_engine.builds, vllm_engine.kept_spec() is not None
    code = main(["preflight", str(ws / "brief.yaml"), "--json", "--prompts", "8"])
    out, err = capfd.readouterr()
    assert code in (0, 1), err[-3000:]
    parsed = json.loads(out)  # vLLM's own logging goes to stderr
    assert parsed["engine"]["name"] == "vllm" and parsed["engine"]["max_model_len"] == 256
    assert vllm_engine.builds == built + (not kept), "the CLI started an engine beside the kept one"


def test_sleep_mode_refusal_is_what_validate_says(tiny_model_dir):
    """vLLM's CPU platform refuses sleep mode when the engine is configured; validate and the rendered train.py
    name that refusal and its fix."""
    import vllm

    from grpo_rlvr.runtime.vllm_cpu import refusal_message, vllm_platform

    if vllm_platform() != "cpu":
        pytest.skip("vLLM's CPU platform only: GPUs support sleep mode")
    with pytest.raises(ValueError) as err:
        vllm.EngineArgs(model=str(tiny_model_dir), enable_sleep_mode=True).create_model_config()
    message, code = refusal_message(err.value)
    assert "vllm_enable_sleep_mode: false" in message and code == 2
