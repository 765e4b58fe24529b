"""``grpo-rlvr memory``: the shell around ``grpo_rlvr.memory``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from grpo_rlvr.cli.json_stdout import document
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
    if args.json:
        print(json.dumps({**report, "exit_code": code}, indent=2, default=str), file=document())
    else:
        print(format_memory_report(report))
    return code
