"""One rollout as the review audit reads it (``grpo_rlvr.audit``): the same record for the inspection's candidates
(written by ``inspect``) and for training's own rollouts (made by the trainer from TRL's batch), so that the two are
compared field by field.

A record: ``group`` (the rollouts of one prompt share it), ``prompt`` (the digest of the dataset row's prompt,
before the chat template: which row it came from), ``prompt_tokens`` (the prompt as the model read it, after the
template and an environment's ``reset``), ``scores`` (each reward's score, None where it could not score),
``length`` (tokens the model wrote; tool output left out), ``truncated`` (cut at ``max_completion_length``),
``tool_calls`` (calls the completion made; None without tools). Plain values only: it crosses processes as JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence


def _without_nulls(value):
    """``value`` with mapping keys whose value is None dropped, at any depth: ``datasets`` gives every message of
    a column the keys any message has (``"name": None``), a JSON reader does not; both are the same prompt."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_without_nulls(v) for v in value]
    return value


def prompt_digest(prompt) -> str:
    """A short digest of a dataset row's prompt (text, or chat messages) as the brief's mapping made it."""
    text = json.dumps(_without_nulls(prompt), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def tool_call_count(completion) -> int:
    """How many tool calls a completion (text, or the assistant's messages) makes."""
    if isinstance(completion, str) or not isinstance(completion, Sequence):
        return 0
    return sum(len(m.get("tool_calls") or ()) for m in completion if isinstance(m, dict))


def _score(value) -> float | None:
    """A score as a plain float; None for no score (TRL's NaN for a reward's None included)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def rollout_record(group, prompt, prompt_tokens: int, completion, completion_ids: Sequence[int],
                   loss_mask: Sequence[int] | None, truncated: bool, scores: dict, tools: bool) -> dict:
    """The audit's record of one rollout (see the module docstring).

    Args:
        group: the key its prompt group shares (a prompt's index, or a batch position).
        prompt: the dataset row's prompt, before the chat template.
        prompt_tokens: the prompt's token count as the model read it.
        completion: the completion as rewards receive it; completion_ids: its token ids.
        loss_mask: over ``completion_ids``, 0 for tool output (None: every token is the model's).
        truncated: whether ``max_completion_length`` cut it.
        scores: each reward's score (None: not scored).
        tools: whether the run offers tools.
    """
    written = len(completion_ids) if loss_mask is None else sum(1 for m in loss_mask[:len(completion_ids)] if m)
    return {"group": group, "prompt": prompt_digest(prompt), "prompt_tokens": int(prompt_tokens),
            "scores": {k: _score(v) for k, v in scores.items()}, "length": int(written),
            "truncated": bool(truncated), "tool_calls": tool_call_count(completion) if tools else None}


__all__ = ["prompt_digest", "rollout_record", "tool_call_count"]
