"""``grpo-rlvr memory`` and the memory-fit check inside ``validate``: the shell around ``grpo_rlvr.memory``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from grpo_rlvr.errors import ConfigError

_PARAMS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bBmM]?)\s*$")


def model_for(size: str) -> dict:
    """MemoryInputs model kwargs from a size class, a parameter count ("7.5B", "350M", "7e9"), a model folder, or a
    hub id whose config.json is in the local Hugging Face cache."""
    from grpo_rlvr.memory import SIZE_CLASSES, shape_from_config

    if size.upper() in {k.upper() for k in SIZE_CLASSES}:
        return {"size": next(k for k in SIZE_CLASSES if k.upper() == size.upper())}
    from grpo_rlvr.brief.model_probe import cached_config_path

    folder = Path(size)
    cached = None if (folder / "config.json").is_file() else cached_config_path(size)
    if cached is not None:  # a hub id whose config.json is in the local Hugging Face cache
        folder = cached.parent
    if (folder / "config.json").is_file():
        return {"shape": shape_from_config(json.loads((folder / "config.json").read_text()),
                                           name=size if cached else folder.name)}
    m = _PARAMS.match(size)
    if m:
        value = float(m.group(1))
        unit = m.group(2).upper()
        return {"params_b": value if unit == "B" else value / 1000 if unit == "M" else value / 1e9}
    try:
        return {"params_b": float(size) / 1e9}
    except ValueError:
        raise ConfigError(f"--size {size!r}: not a size class ({', '.join(SIZE_CLASSES)}), a parameter count "
                          "(7B, 350M, 7e9) or a model folder with config.json") from None


def run_memory(args) -> int:
    from grpo_rlvr.memory import MemoryInputs, format_memory_report, memory_report

    inputs = MemoryInputs(**model_for(args.size), method=args.method, num_gpus=args.num_gpus,
                          sharding=args.sharding, max_completion_length=args.completion_length,
                          max_prompt_length=args.prompt_length, per_device_train_batch_size=args.batch_size,
                          use_vllm=args.vllm_mode != "off",
                          vllm_mode="colocate" if args.vllm_mode == "off" else args.vllm_mode)
    report = memory_report(inputs, args.gpu)
    code = 0 if report["estimate"]["fits"] else 1
    print(json.dumps({**report, "exit_code": code}, indent=2, default=str) if args.json
          else format_memory_report(report))
    return code


def brief_memory(brief) -> dict | None:
    """The memory estimate for a GPU brief with ``hardware.gpu_type`` set, sized from the model's facts
    (``config.json`` shapes; else the brief's ``model.params`` or the name's size, on a size class's shape).
    None on CPU, without a gpu_type, or when the size is unknown (``validate`` warns then)."""
    if brief.hardware.accelerator != "gpu" or not brief.hardware.gpu_type:
        return None
    from grpo_rlvr.memory import estimate_memory, fit_tactics, inputs_from_brief, shape_from_config

    facts = brief.model.facts
    if facts is None or facts.params is None:
        return None
    shape = None
    if facts.config is not None and facts.params_from.startswith("config.json"):
        shape = shape_from_config(facts.config, name=brief.model.name_or_path)
    inputs = inputs_from_brief(brief, shape=shape) if shape else inputs_from_brief(brief, params_b=facts.params / 1e9)
    est = estimate_memory(inputs, brief.hardware.gpu_type)
    out = {"gpu": brief.hardware.gpu_type, "fits": est.fits, "total_gib": round(est.total_gib, 1),
           "gpu_gib": round(est.gpu_gib, 1), "terms": {k: round(v, 2) for k, v in est.terms.items()},
           "params_b": round(facts.params / 1e9, 3), "size_from": facts.params_from,
           "shape": inputs.model_shape.name, "notes": list(est.notes)}
    if shape is None:
        out["caveat"] = (f"no config.json: sized on the {inputs.model_shape.name} shape scaled to "
                         f"{facts.params / 1e9:.3g}B" + (" (a dense stand-in for a mixture-of-experts model: activations "
                                                        "and LoRA targets are over-counted)" if facts.moe else ""))
    if not est.fits:
        tactics = fit_tactics(inputs, brief.hardware.gpu_type)
        out["tactics"] = [{"description": t.description, "changes": t.changes} for t in tactics[:3]]
    return out
