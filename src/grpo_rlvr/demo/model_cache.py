"""The on-disk cache of the demo's tiny models (untrained and warmed-up), keyed by everything that shapes them."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("GRPO_RLVR_CACHE", Path.home() / ".cache" / "grpo-rlvr"))


def cache_key(**parts) -> str:
    from grpo_rlvr.demo import arithmetic_task, tiny_model, warmup

    h = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
    for mod in (tiny_model, arithmetic_task, warmup):  # code changes invalidate the cache
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]
