"""``validate``'s memory of GRPO settings TRL took: importing TRL to build its GRPOConfig costs seconds (about 5 s
of CPU here, against 0.3 s for the rest of ``validate``), so settings ``trainer.trl_refusals`` found nothing in
are remembered in the user's cache (``ACCEPTED``), keyed by the settings and the installed TRL, transformers,
accelerate and torch, and an unchanged brief validates again without TRL. Settings that were refused, or that
need a package this machine lacks, are checked again every time. Losing the file costs time, never a check."""

from __future__ import annotations

import contextlib
import hashlib
import json
from importlib.metadata import PackageNotFoundError, version

from grpo_rlvr.files import write_json_atomic
from grpo_rlvr.user_cache import cache_root

ACCEPTED = "trl-accepted.json"
KEEP = 256   # settings remembered; the oldest go first


def trl_refusals_remembered(cfg: dict) -> tuple[list[str], list[str]]:
    """``trainer.trl_refusals.trl_refusals(cfg)``, or ``([], [])`` at once for settings TRL took before."""
    key = _key(cfg)
    if key in _accepted():
        return [], []
    from grpo_rlvr.trainer.trl_refusals import trl_refusals

    refused, missing = trl_refusals(cfg)
    if not refused and not missing:
        with contextlib.suppress(OSError):   # a cache that cannot be written costs time, never correctness
            write_json_atomic(cache_root() / ACCEPTED, {"accepted": [*_accepted(), key][-KEEP:]})
    return refused, missing


def _installed(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _key(cfg: dict) -> str:
    found = {n: _installed(n) for n in ("trl", "transformers", "accelerate", "torch")}
    text = json.dumps({"cfg": cfg, "versions": found}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _accepted() -> list[str]:
    try:
        keys = json.loads((cache_root() / ACCEPTED).read_text()).get("accepted")
    except (OSError, ValueError, AttributeError):
        return []
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []
