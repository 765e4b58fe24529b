"""What a model is, read from its ``config.json`` without loading weights: vision-language? mixture-of-experts?

Only local model directories can be read here (no hub downloads); for a hub id the name is checked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

_VLM_NAME = re.compile(r"(-vl\b|-vl-|vision|llava|pixtral|idefics|paligemma|qwen2?\.?5?-?vl|smolvlm|internvl|"
                       r"molmo|gemma-3-\d+b-it|florence|blip)", re.IGNORECASE)
_MOE_NAME = re.compile(r"(moe|mixtral|-a\d+b|deepseek-v[23]|qwen3-\d+b-a\d+b|olmoe|dbrx|gpt-oss)", re.IGNORECASE)
_MOE_KEYS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")


def read_config(model_dir: Path) -> dict | None:
    cfg = Path(model_dir) / "config.json"
    if not cfg.is_file():
        return None
    try:
        return json.loads(cfg.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def is_vision_language(name: str, config: dict | None) -> bool:
    if config is not None:
        if "vision_config" in config or "visual" in config or "image_token_id" in config:
            return True
        archs = " ".join(config.get("architectures") or [])
        return bool(re.search(r"(VL|Vision|Llava|ImageText|ForConditionalGeneration)", archs))
    return bool(_VLM_NAME.search(name))


def is_mixture_of_experts(name: str, config: dict | None) -> bool:
    if config is not None:
        text_cfg = config.get("text_config") or config
        return any(isinstance(text_cfg.get(k), int) and text_cfg.get(k) > 1 for k in _MOE_KEYS)
    return bool(_MOE_NAME.search(name))


def context_length(config: dict | None) -> int | None:
    if not config:
        return None
    text_cfg = config.get("text_config") or config
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        if isinstance(text_cfg.get(key), int):
            return text_cfg[key]
    return None
