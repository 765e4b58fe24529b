"""The on-disk cache of the demo's tiny models (untrained and warmed-up), keyed by everything that shapes them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from grpo_rlvr.user_cache import cache_root

__all__ = ["cache_key", "cache_root"]


def cache_key(**parts) -> str:
    from grpo_rlvr.demo import arithmetic_task, tiny_model, warmup

    h = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    for mod in (tiny_model, arithmetic_task, warmup):  # code changes invalidate the cache
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]
