"""Loading the brief's model: for sampling (preflight, inspect, evaluation), and the 4-bit QLoRA base the rendered
train.py trains. Needs torch; QLoRA needs bitsandbytes and a CUDA GPU, checked first with a clear error."""

from __future__ import annotations

import importlib.util
import logging
import os

from grpo_rlvr.errors import MachineError

log = logging.getLogger(__name__)


def load_model_and_tokenizer(brief, device: str | None = None):
    """(model, tokenizer) on ``device`` (default: CUDA when available, else CPU), eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.errors import InputFileError

    spec = brief.model
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = {"auto": "auto", "bfloat16": torch.bfloat16, "float16": torch.float16,
             "float32": torch.float32}[spec.dtype]
    try:
        tok = AutoTokenizer.from_pretrained(spec.resolved, revision=spec.revision,
                                            trust_remote_code=spec.trust_remote_code)
        model = AutoModelForCausalLM.from_pretrained(spec.resolved, revision=spec.revision, dtype=dtype,
                                                     trust_remote_code=spec.trust_remote_code)
    except OSError as e:
        raise InputFileError(f"model.name_or_path: cannot load {spec.name_or_path!r}: {e}") from None
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    model.to(device).eval()
    return model, tok


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
    policy = AutoModelForCausalLM.from_pretrained(model, quantization_config=BitsAndBytesConfig(**q),
                                                  dtype=torch.bfloat16, device_map={"": local_rank}, **init)
    log.info("loaded %s in 4-bit (%s) on cuda:%d", model, q.get("bnb_4bit_quant_type"), local_rank)
    return prepare_model_for_kbit_training(policy, use_gradient_checkpointing=gradient_checkpointing)
