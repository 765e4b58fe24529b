"""Inspect never samples without a setting training samples with: a structured-output regex or a vLLM sampling
parameter, on a machine that would sample the inspection with transformers, is refused before any model loads."""

from __future__ import annotations

import pytest

from briefs import brief_for
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.rollout.engine_fit import unapplied


def test_what_transformers_would_drop_of_a_vllm_training_is_named():
    grpo = {"use_vllm": True, "vllm_structured_outputs_regex": "<answer>\\d+</answer>",
            "generation_kwargs": {"top_k": 20, "structured_outputs": {"regex": "x"}, "logit_bias": {1: 2}}}
    problems = unapplied(grpo, "transformers")
    assert [p.split(":")[0] for p in problems] == ["grpo.vllm_structured_outputs_regex",
                                                   "grpo.generation_kwargs.logit_bias",
                                                   "grpo.generation_kwargs.structured_outputs"]
    assert all("sampling.engine: vllm" in p for p in problems)


def test_the_same_engine_on_both_sides_drops_nothing():
    assert unapplied({"use_vllm": True, "vllm_structured_outputs_regex": "x"}, "vllm") == []
    assert unapplied({"use_vllm": False, "generation_kwargs": {"top_k": 5}}, "transformers") == []


def test_inspect_of_a_gpu_brief_with_structured_outputs_is_refused_here(workspace):
    from grpo_rlvr.inspection.run import inspect_rewards

    brief = brief_for(workspace, "gpu", {"hardware": {"accelerator": "gpu", "num_gpus": 1},
                                         "grpo": {"vllm_structured_outputs_regex": "<answer>\\d+</answer>"}})
    with pytest.raises(ConfigError, match="vllm_structured_outputs_regex: training samples with vLLM"):
        inspect_rewards(brief, samples=64)
    assert not (workspace / "out" / "inspection").exists()
