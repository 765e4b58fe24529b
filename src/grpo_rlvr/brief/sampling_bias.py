"""A warning for a biased importance-sampling correction: TRL's ``vllm_importance_sampling_correction`` (on by
default in TRL 1.16) reweights each vLLM-generated completion by the trainer's probability over vLLM's, and that
ratio does not account for truncated sampling. With ``top_p`` < 1, ``top_k`` > 0 or ``min_p`` > 0 (in ``grpo:``
or in ``grpo.generation_kwargs``) the completions come from the truncated distribution, and the correction is
biased (huggingface/trl#6789)."""

from __future__ import annotations

import json

TRL_IS_CORRECTION_DEFAULT = True   # GRPOConfig.vllm_importance_sampling_correction in TRL 1.16


def _generation_kwargs(g: dict) -> dict:
    kw = g.get("generation_kwargs")
    if isinstance(kw, str):   # TRL accepts a JSON string
        try:
            kw = json.loads(kw)
        except ValueError:
            return {}
    return kw if isinstance(kw, dict) else {}


def _truncations(g: dict) -> list[str]:
    """``field: value`` of each setting that truncates sampling (generation_kwargs win over grpo's own)."""
    out = []
    for key, source in [(k, g.get(k)) for k in ("top_p", "top_k", "min_p")]:
        where, value = f"grpo.{key}", source
        extra = _generation_kwargs(g)
        if key in extra:
            where, value = f"grpo.generation_kwargs.{key}", extra[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        if (key == "top_p" and value < 1) or (key != "top_p" and value > 0):
            out.append(f"{where}: {value}")
    return out


def truncated_sampling_warnings(g: dict) -> list[str]:
    """One warning when vLLM generates, its importance-sampling correction is on and sampling is truncated."""
    if not g.get("use_vllm") or not g.get("vllm_importance_sampling_correction", TRL_IS_CORRECTION_DEFAULT):
        return []
    found = _truncations(g)
    if not found:
        return []
    return [f"{', '.join(found)}: truncated sampling while vLLM's importance-sampling correction is on "
            "(grpo.vllm_importance_sampling_correction, TRL's default true): the completions come from the "
            "truncated distribution, which the correction's ratio does not account for, so it is biased "
            "(huggingface/trl#6789). Fix: sample untruncated (top_p: 1.0, top_k: 0, min_p unset, here and in "
            "generation_kwargs), or set grpo.vllm_importance_sampling_correction: false to train without the "
            "correction"]
