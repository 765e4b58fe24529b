"""What a training run is built from, as plain data: the GRPOConfig keyword arguments and the trainer's setup
(the model folder and its pinned commit, an adapter, the 4-bit base, LoRA, dynamic sampling, the CPU engine's KV
cache). ``render`` writes both into the run folder (``grpo_config.yaml`` and ``train.py``'s ``SETUP``), and the
rollout road (``rollout.road``) builds the same trainer from the same two values, so what a person reviews is
sampled by what trains. Imports no torch.
"""

from __future__ import annotations

from grpo_rlvr.brief.methods import QLORA_QUANTIZATION
from grpo_rlvr.brief.types import Brief

VLLM_PORT = 8000  # the default vllm_server_port of a server-mode run
VLLM_GROUP_PORT = 51216  # TRL 1.16's default vllm_group_port: the weight sync's rendezvous, on the main trainer


def grpo_config_dict(brief: Brief) -> dict:
    """GRPOConfig keyword arguments as ``grpo_config.yaml`` holds them (TRL's field names; ``output_dir`` relative
    to the run folder)."""
    cfg = {k: v for k, v in brief.grpo.items()}
    cfg["output_dir"] = "output"
    if brief.vllm_mode == "server":
        cfg.setdefault("vllm_server_port", VLLM_PORT)
    return cfg


def pinned_revision(brief: Brief, role: str = "model") -> str | None:
    """The commit a hub model (``role="model"``) or hub dataset resolves to in the local cache: what inspect
    read and the gate compares, so the run loads that commit's snapshot and nothing newer (for an adapter folder,
    its base's). None for a local path, and for a hub repo this machine's cache does not hold (unless the brief
    names a commit): such a run cannot pass the gate here, and the check before training asks for a render where
    the repo is cached."""
    from grpo_rlvr.identity.hub_cache import COMMIT, resolved_commit

    spec = brief.model if role == "model" else brief.dataset
    if role == "model" and spec.adapter_base:   # an adapter folder: the commit of its hub base
        spec = spec.adapter_base
    if spec.is_local:
        return None
    commit = resolved_commit(spec.resolved, spec.revision, role)
    return commit or (spec.revision if spec.revision and COMMIT.match(spec.revision) else None)


def adapter_spec(brief: Brief) -> dict | None:
    """The adapter folder when the brief's model is one: whether training continues it (lora/qlora) or merges it
    (full), and its own tokenizer when it has one."""
    if not brief.model.adapter_base:
        return None
    from grpo_rlvr.trainer.model_loading import tokenizer_source

    tok = tokenizer_source(brief.model)
    return {"path": brief.model.resolved, "continue": brief.method != "full",
            "tokenizer": tok if tok == brief.model.resolved else None}


def peft_kwargs(brief: Brief) -> dict | None:
    """peft.LoraConfig kwargs from the brief's resolved adapter settings (None for full fine-tuning, and for an
    adapter folder, which training continues with its own settings)."""
    if brief.method == "full" or brief.model.adapter_base:
        return None
    lora = dict(brief.lora)
    return {"r": lora["r"], "lora_alpha": lora["alpha"], "lora_dropout": lora["dropout"],
            "target_modules": lora["target_modules"], "task_type": "CAUSAL_LM"}


def trainer_setup(brief: Brief) -> dict:
    """Everything but the GRPOConfig that the trainer is built from (``trainer.trainer_build.build_trainer``), as
    JSON-able data: what ``train.py`` holds as ``SETUP``."""
    from grpo_rlvr.rollout.vllm_engine import colocate_kv_cache_gib

    return {
        "model": brief.model.base_path,
        "model_revision": pinned_revision(brief),   # a hub model: the commit the review read
        "adapter": adapter_spec(brief),             # the brief's model is a PEFT adapter on "model"
        "quantization": dict(QLORA_QUANTIZATION) if brief.method == "qlora" else None,
        "peft": peft_kwargs(brief),
        "dynamic_sampling": brief.dynamic_sampling.to_dict() if brief.dynamic_sampling else None,
        "vllm_cpu_kv_cache_gib": colocate_kv_cache_gib(brief),   # TRL's colocated engine on vLLM's CPU build
    }
