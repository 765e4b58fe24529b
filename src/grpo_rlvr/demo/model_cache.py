"""The on-disk cache of the demo's tiny models (untrained and warmed-up), keyed by everything that shapes them:
the settings, the code that builds and trains them, and the CPU kernels torch picked (AVX-512 and AVX2 kernels
round differently, and the warmup amplifies the difference, so one cache serves one capability)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from grpo_rlvr.user_cache import cache_root

__all__ = ["cache_key", "cache_root"]


def cache_key(**parts) -> str:
    import torch

    from grpo_rlvr.demo import arithmetic_task, tiny_model, tool_chat, warmup

    parts = {**parts, "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    h = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    for mod in (tiny_model, tool_chat, arithmetic_task, warmup):  # code changes invalidate the cache
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]
