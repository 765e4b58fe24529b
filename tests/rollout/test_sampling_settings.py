"""Preflight and inspect sample with every setting the review is bound to that TRL samples with: top_k, min_p,
repetition_penalty, ``generation_kwargs`` over them (as TRL applies them) and ``chat_template_kwargs`` in the
chat template. Driven with the real tiny model and its tokenizer."""

from __future__ import annotations

import pytest

from briefs import brief_for
from grpo_rlvr.brief import load_brief
from grpo_rlvr.rollout.sampling import SamplingParams, encode_prompts, generate


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir), AutoTokenizer.from_pretrained(tiny_model_dir)


def test_the_sampling_params_carry_the_briefs_trl_sampling_keys(workspace):
    brief = load_brief(brief_for(workspace, "keys", {"grpo": {
        "top_k": 7, "min_p": 0.05, "repetition_penalty": 1.2, "generation_kwargs": {"temperature": 4.0},
        "chat_template_kwargs": {"enable_thinking": False}}}))
    p = SamplingParams.from_brief(brief, seed=1)
    assert (p.top_k, p.min_p, p.repetition_penalty) == (7, 0.05, 1.2)
    assert p.generation_kwargs == {"temperature": 4.0} and p.chat_template_kwargs == {"enable_thinking": False}
    plain = SamplingParams.from_brief(load_brief(workspace / "brief.yaml"), seed=1)
    assert (plain.top_k, plain.min_p, plain.repetition_penalty, plain.generation_kwargs) == (0, None, 1.0, None)


def test_generation_kwargs_override_the_other_settings_as_in_trl(tiny):
    model, tok = tiny
    prompts = ["12+30="]
    free = generate(model, tok, prompts, 2, SamplingParams(max_completion_length=6, seed=0))
    capped = generate(model, tok, prompts, 2, SamplingParams(max_completion_length=6, seed=0,
                                                             generation_kwargs={"max_new_tokens": 2}))
    assert max(s.num_tokens for s in free) > 2
    assert max(s.num_tokens for s in capped) <= 2


def test_chat_template_kwargs_reach_the_chat_template(tiny):
    _, tok = tiny
    tok.chat_template = ("{% for m in messages %}{{ m['content'] }}{% endfor %}"
                         "{% if think is defined and think %}<t>{% endif %}")
    messages = [[{"role": "user", "content": "1+1="}]]
    assert encode_prompts(tok, messages, {"think": True}) != encode_prompts(tok, messages)
