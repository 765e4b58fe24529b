"""The vLLM sampling path of preflight and inspect. vLLM and a GPU cannot exist on this machine, so a STAND-IN
`vllm` module (an object with vLLM's offline API: LLM.generate, SamplingParams) replaces it here; the test
checks what our code asks of it and what it does with the answers."""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass

import pytest

from grpo_rlvr import sampling


@dataclass
class _Completion:
    token_ids: list
    finish_reason: str


@dataclass
class _Output:
    outputs: list


def stand_in_vllm(tokenizer, calls: list):
    mod = types.ModuleType("vllm")

    class SamplingParams:  # noqa: D401 - stand-in
        def __init__(self, **kw):
            self.kw = kw

    class LLM:
        def __init__(self, model, **kw):
            calls.append(("LLM", model, kw))

        def generate(self, prompts, sampling_params, use_tqdm=True):
            calls.append(("generate", len(prompts), sampling_params.kw))
            n = sampling_params.kw["n"]
            good = tokenizer("<answer>7</answer>", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
            bad = tokenizer("<answer>7", add_special_tokens=False)["input_ids"]
            return [_Output([_Completion(good if j % 2 else bad, "stop" if j % 2 else "length") for j in range(n)])
                    for _ in prompts]

    mod.LLM, mod.SamplingParams = LLM, SamplingParams
    return mod


@pytest.fixture
def fake_vllm(monkeypatch, tiny_model_dir):
    from transformers import AutoTokenizer

    calls: list = []
    monkeypatch.setitem(sys.modules, "vllm", stand_in_vllm(AutoTokenizer.from_pretrained(tiny_model_dir), calls))
    monkeypatch.setattr(sampling, "vllm_available", lambda: True)
    return calls


def test_inspect_samples_with_vllm_when_available(workspace, fake_vllm):
    from grpo_rlvr.inspection import inspect_rewards, load_artifact

    res = inspect_rewards(workspace / "brief.yaml", samples=50)
    art = load_artifact(res.dir)
    assert art.manifest["sampling"]["engine"] == "vllm"
    kind, n_prompts, kw = fake_vllm[1]
    assert kind == "generate" and n_prompts == 48
    assert kw["temperature"] == 1.0 and kw["max_tokens"] == 24 and kw["n"] == art.manifest["sampling"]["candidates_per_prompt"]
    completions = {s["completion"] for s in art.samples}
    assert completions == {"<answer>7</answer>", "<answer>7"}
    assert any(s["truncated"] for s in art.samples) and not all(s["truncated"] for s in art.samples)


def test_preflight_with_vllm(workspace, fake_vllm):
    from grpo_rlvr.success_rate import preflight

    res = preflight(workspace / "brief.yaml", prompts=10, k=8)
    assert fake_vllm[1][2]["n"] == 8
    assert res.truncation_rate == pytest.approx(0.5)
    assert json.dumps(res.to_dict())
