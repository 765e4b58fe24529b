"""Loading what TRL does not load itself: the brief's tokenizer, an SFT adapter on its base, and the 4-bit QLoRA
base (for the trainer builder, ``trainer.trainer_build``, which both training and the rollout road use). Needs
torch; QLoRA needs bitsandbytes and a CUDA GPU, checked first with a clear error."""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

from grpo_rlvr.errors import MachineError

log = logging.getLogger(__name__)


def has_tokenizer(folder) -> bool:
    """A tokenizer was saved in ``folder`` (SFT saves one beside its adapter; it may have added tokens)."""
    return any((Path(folder) / f).is_file() for f in ("tokenizer_config.json", "tokenizer.json", "tokenizer.model"))


def tokenizer_source(spec) -> str:
    """Where the tokenizer is: the adapter folder when it holds one, else the model (or the adapter's base)."""
    if spec.adapter_base and has_tokenizer(spec.resolved):
        return spec.resolved
    return spec.base_path


def load_tokenizer(spec):
    """The brief's tokenizer (``spec`` is ``brief.model``), from ``tokenizer_source``."""
    from transformers import AutoTokenizer

    from grpo_rlvr.errors import InputFileError

    src = tokenizer_source(spec)
    try:
        return AutoTokenizer.from_pretrained(src, revision=None if src == spec.resolved and spec.adapter_base
                                             else spec.base_revision, trust_remote_code=spec.trust_remote_code)
    except (OSError, ValueError) as e:
        raise InputFileError(f"model.name_or_path: cannot load the tokenizer of {spec.name_or_path!r} from {src}: "
                             f"{e}") from None


def with_adapter(model, adapter_dir: str, trainable: bool = False, merge: bool = False):
    """``model`` with the PEFT adapter in ``adapter_dir`` applied: merged into its weights (``merge``: sampling and
    full fine-tuning see one plain model), or kept as a ``PeftModel`` (``trainable``: LoRA training continues it)."""
    from peft import PeftModel

    wrapped = PeftModel.from_pretrained(model, adapter_dir, is_trainable=trainable)
    return wrapped.merge_and_unload() if merge else wrapped



def quantization_problems() -> list[str]:
    """Why this machine cannot load a 4-bit bitsandbytes model (empty when it can)."""
    problems = []
    if importlib.util.find_spec("bitsandbytes") is None:
        problems.append("bitsandbytes is not installed here; install it on the GPU machine "
                        "(pip install 'grpo-rlvr[qlora]')")
    import torch

    if not torch.cuda.is_available():
        build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
        problems.append(f"no CUDA GPU is visible (torch {torch.__version__}, {build}); bitsandbytes 4-bit "
                        "weights need one: run on the GPU machine, or use method: lora")
    return problems


def load_quantized_for_training(model: str, quantization: dict, gradient_checkpointing: bool = True, **init):
    """The QLoRA base: ``model`` loaded with ``transformers.BitsAndBytesConfig(**quantization)`` (NF4 weights,
    bf16 compute) on this process's GPU, then ``peft.prepare_model_for_kbit_training`` (base frozen, the
    remaining bf16 weights upcast to fp32, input gradients on for checkpointing).

    Raises:
        MachineError: bitsandbytes or a CUDA GPU is missing.
    """
    problems = quantization_problems()
    if problems:
        raise MachineError("method 'qlora': " + "; ".join(problems))
    import torch
    from peft import prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    q = dict(quantization)
    q["bnb_4bit_compute_dtype"] = getattr(torch, q.get("bnb_4bit_compute_dtype", "bfloat16"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    # the 4-bit base computes in bf16 on this process's GPU, whatever model_init_kwargs say of dtype and placement
    init = {k: v for k, v in init.items() if k not in ("dtype", "torch_dtype", "device_map", "quantization_config")}
    policy = AutoModelForCausalLM.from_pretrained(model, quantization_config=BitsAndBytesConfig(**q),
                                                  dtype=torch.bfloat16, device_map={"": local_rank}, **init)
    log.info("loaded %s in 4-bit (%s) on cuda:%d", model, q.get("bnb_4bit_quant_type"), local_rank)
    return prepare_model_for_kbit_training(policy, use_gradient_checkpointing=gradient_checkpointing)


def load_adapter_for_training(base: str, adapter: dict, config, quantization: dict | None = None):
    """The policy when the brief's model is a PEFT adapter folder (an SFT output), for the rendered train.py.

    The base is loaded as TRL would load it (``config.model_init_kwargs``; 4-bit NF4 for QLoRA), then the adapter
    in ``adapter["path"]`` is applied: with ``adapter["continue"]`` (method lora/qlora) it stays a trainable
    ``PeftModel`` that training continues (TRL copies it as the reference adapter when ``beta > 0``), else
    (method full) it is merged into the base and every weight trains.
    """
    init = {"trust_remote_code": config.trust_remote_code, **(config.model_init_kwargs or {})}   # as TRL loads
    if quantization is not None:
        policy = load_quantized_for_training(base, quantization, gradient_checkpointing=config.gradient_checkpointing,
                                             **init)
    else:
        from trl.trainer.utils import create_model_from_path

        kwargs = dict(init)
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:  # as TRL does: distributed training needs device_map=None
            kwargs["device_map"] = None
        policy = create_model_from_path(base, **kwargs)
    log.info("applying the adapter %s on %s (%s)", adapter["path"], base,
             "training continues it" if adapter["continue"] else "merged: every weight trains")
    policy = with_adapter(policy, adapter["path"], trainable=adapter["continue"], merge=not adapter["continue"])
    if not adapter["continue"]:
        # PeftModel freezes the base when it wraps it, and merge_and_unload keeps those flags: full fine-tuning
        # needs every merged weight trainable again, or the loss has no gradient at all.
        policy.requires_grad_(True)
    return policy


def adapter_tokenizer(adapter: dict | None):
    """The tokenizer saved in the adapter folder, for GRPOTrainer's ``processing_class`` (None: TRL loads the
    base's)."""
    if not adapter or not adapter.get("tokenizer"):
        return None
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(adapter["tokenizer"], truncation_side="left", padding_side="left")
