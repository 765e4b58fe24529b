"""The one way a trainer is built: from the rendered GRPOConfig and the setup ``render`` writes into ``train.py``
(``rollout.trainer_setup.trainer_setup``). The rendered ``train.py`` builds its trainer here, and so does the rollout
road that samples for preflight and inspect, so the model load (``model_init_kwargs``: dtype, attention, remote
code; an adapter; the 4-bit base), the tokenizer and its chat template, the sampling settings and the engine (TRL's
own transformers generation or its colocated vLLM) are the trainer's on both roads by construction. Imports TRL.
"""

from __future__ import annotations

import os

from grpo_rlvr.trainer.trainers import GRPOTrainerWithDynamicSampling, GRPOTrainerWithHeldOut


def grpo_config(cfg: dict):
    """TRL's GRPOConfig from the rendered settings, in the precision they name, whatever the environment says.

    TrainingArguments takes its mixed precision from ``ACCELERATE_MIXED_PRECISION`` when the settings set neither
    ``bf16`` nor ``fp16`` (a CPU brief): set to ``bf16``, it would sample and train a reviewed fp32 run under bf16
    autocast, a setting the review is bound to that no file shows. ``accelerate launch`` sets the variable from the
    rendered accelerate.yaml, which says the same as the settings.

    Raises:
        ConfigError: TRL refuses a setting (``trainer/trl_refusals``: the field, TRL's message, the fix).
    """
    from trl import GRPOConfig

    os.environ["ACCELERATE_MIXED_PRECISION"] = "bf16" if cfg.get("bf16") else "fp16" if cfg.get("fp16") else "no"
    try:
        return GRPOConfig(**cfg)
    except (ValueError, TypeError) as e:   # a setting TRL refuses here: named, with the fix (`validate` says it too)
        from grpo_rlvr.trainer.trl_refusals import config_error

        raise config_error(cfg, e) from None


def _init_kwargs(config) -> dict:
    """from_pretrained kwargs for a model this module loads itself (an adapter's base, the 4-bit base), as TRL
    would load the model: ``model_init_kwargs`` with ``trust_remote_code`` from the config."""
    return {"trust_remote_code": config.trust_remote_code, **(config.model_init_kwargs or {})}


def load_policy(setup: dict, config):
    """The model GRPOTrainer trains: its folder, which TRL loads with ``model_init_kwargs`` (a hub model's is the
    snapshot of the pinned commit in the local Hugging Face cache, the files the gate checked); for QLoRA the base
    loaded in 4-bit NF4 and prepared for k-bit training; an SFT adapter applied on its base."""
    source = setup["model"]
    if setup.get("model_revision") is not None:
        from grpo_rlvr.identity.hub_cache import pinned_folder

        source = pinned_folder(setup["model"], setup["model_revision"])
    if setup.get("adapter") is not None:
        from grpo_rlvr.trainer.model_loading import load_adapter_for_training

        return load_adapter_for_training(source, setup["adapter"], config, setup.get("quantization"))
    if setup.get("quantization") is None:
        return source
    from grpo_rlvr.trainer.model_loading import load_quantized_for_training

    return load_quantized_for_training(source, setup["quantization"], config.gradient_checkpointing,
                                       **_init_kwargs(config))


def trainer_class(setup: dict):
    """The GRPOTrainer subclass a run trains with: DAPO's dynamic sampling when the setup has it, else the one
    that keeps held-out evaluations out of the training completions."""
    return GRPOTrainerWithDynamicSampling if setup.get("dynamic_sampling") else GRPOTrainerWithHeldOut


def build_trainer(setup: dict, config, reward_funcs: list, train_dataset, eval_dataset=None, callbacks=None,
                  cls=None, tools=None, environment_factory=None, tool_concurrency: int = 1):
    """TRL's trainer for a rendered run (``cls``: a subclass to use instead of the run's own, such as the rollout
    road's). Loads the model, the adapter's tokenizer, LoRA, and on vLLM's CPU build prepares TRL's colocated
    engine before TRL builds it. ``tools`` and ``environment_factory`` go to TRL as they are (``tools.build``);
    ``tool_concurrency``: how many rollouts' tool calls run at once in a turn (the brief's ``tools.concurrency``).

    Raises:
        InputFileError, MachineError: the model or its pinned snapshot cannot load, a 4-bit base on a machine
            without CUDA and bitsandbytes; the installed TRL lacks a private seam training relies on
            (``trl_seams``), checked before anything loads.
    """
    from grpo_rlvr.trainer import trl_seams
    from grpo_rlvr.trainer.model_loading import adapter_tokenizer

    trl_seams.check()

    peft_config = None
    if setup.get("peft") is not None:
        from peft import LoraConfig

        peft_config = LoraConfig(**setup["peft"])
    model = load_policy(setup, config)
    if config.use_vllm and config.vllm_mode == "colocate":
        from grpo_rlvr.trainer.vllm_cpu import prepare_colocate

        # vLLM's CPU build only (a no-op on GPUs): layers keep their weights so that weight sync reaches the engine
        # TRL builds in this process, and its KV cache is sized from the brief
        prepare_colocate(kv_cache_gib=setup.get("vllm_cpu_kv_cache_gib"))
    kwargs = dict(model=model, reward_funcs=reward_funcs, args=config, train_dataset=train_dataset,
                  eval_dataset=eval_dataset, peft_config=peft_config,
                  processing_class=adapter_tokenizer(setup.get("adapter")), callbacks=callbacks,
                  **({"tools": tools} if tools else {}),
                  **({"environment_factory": environment_factory} if environment_factory else {}))
    if cls is None:
        cls = trainer_class(setup)
        if cls is GRPOTrainerWithDynamicSampling:
            kwargs.update(setup["dynamic_sampling"])
    trainer = cls(**kwargs)
    trainer.tool_concurrency = tool_concurrency
    return trainer
