"""Load the brief's model and tokenizer for sampling (preflight, inspect, evaluation). Needs torch."""

from __future__ import annotations

import logging

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
