"""The user's grpo-rlvr cache folder: ``$GRPO_RLVR_CACHE``, else ``~/.cache/grpo-rlvr``.

It holds what is expensive to redo and safe to lose: the demo's tiny models and the content hashes of model and
data files (``identity/hash_cache.py``). Deleting it costs time, never correctness.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("GRPO_RLVR_CACHE") or Path.home() / ".cache" / "grpo-rlvr")
