"""Sampling settings one engine applies and another does not: inspect refuses to sample without a setting training
samples with, rather than show the person completions training can never produce.

TRL hands ``vllm_structured_outputs_regex`` and ``generation_kwargs`` to vLLM's ``SamplingParams`` when training
generates with vLLM, and ``generation_kwargs`` to transformers' ``GenerationConfig`` otherwise. Where this machine
samples the inspection with the other engine (``rollout.road.choose_engine``: transformers where training would use
vLLM on a GPU this machine lacks), a setting the inspecting engine does not know would be dropped: a regex that
constrains every training completion, or a vLLM sampling parameter, would shape what trains and not what the person
reads. Imports transformers (and vLLM, where installed) only when asked.
"""

from __future__ import annotations

VLLM_ONLY = ("vllm_structured_outputs_regex",)   # GRPOConfig keys only vLLM's sampling applies


def _known(engine: str) -> set[str] | None:
    """The sampling parameter names ``engine`` takes (None: cannot tell here)."""
    if engine == "transformers":
        from transformers import GenerationConfig

        return set(GenerationConfig().to_dict())
    try:
        from vllm import SamplingParams
    except ImportError:
        return None
    import inspect

    return set(inspect.signature(SamplingParams).parameters) | set(getattr(SamplingParams, "__struct_fields__", ()))


def unapplied(grpo, inspect_engine: str) -> list[str]:
    """Each setting training applies and ``inspect_engine`` would not, with the fix (empty: none)."""
    training = "vllm" if grpo.get("use_vllm") else "transformers"
    if training == inspect_engine:
        return []
    fix = ("sample the inspection where training's engine runs (sampling.engine: vllm, with vLLM installed; vLLM's "
           "CPU build runs on a CPU), or remove the setting from the brief")
    problems = []
    if training == "vllm":
        problems += [f"grpo.{k}: training samples with vLLM, which applies it to every completion; inspect samples "
                     f"here with {inspect_engine}, which would drop it, so the person would read completions training "
                     f"can never produce; {fix}" for k in VLLM_ONLY if grpo.get(k)]
    kwargs = grpo.get("generation_kwargs")
    known = _known(inspect_engine)
    if isinstance(kwargs, dict) and known is not None:
        problems += [f"grpo.generation_kwargs.{k}: training's engine ({training}) applies it, {inspect_engine}, which "
                     f"samples the inspection here, has no such parameter and would drop it; {fix}"
                     for k in sorted(kwargs) if k not in known]
    return problems


__all__ = ["VLLM_ONLY", "unapplied"]
