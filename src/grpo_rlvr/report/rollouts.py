"""A few of training's own rollouts, at the start, the middle and the end of the run, shown as ``review`` shows a
sample: every turn of the prompt and the completion with control characters escaped, each reward's score and the
weighted total; and the advantage training gave it.

Read from what TRL logged (``completions/*.parquet``: step, prompt, completion, one column per reward, advantage;
held-out ones are not among them). At each of the three logged steps, the rollouts with the highest, the middle and
the lowest total, so the page shows what the reward paid for and what it did not. TRL keeps no reason per score, so
none is shown.
"""

from __future__ import annotations

import math

from grpo_rlvr.review.session import inert
from grpo_rlvr.rollout.trajectory import turns

PER_STEP = 3
_NOT_REWARDS = {"step", "prompt", "completion", "advantage", "images", "image"}


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def reward_columns(rows: list[dict]) -> list[str]:
    """The reward columns TRL logged (numbers, not the step or the advantage), in their logged order."""
    seen: dict[str, None] = {}
    for r in rows[:64]:
        for k, v in r.items():
            if k not in _NOT_REWARDS and (v is None or isinstance(v, (int, float))):
                seen.setdefault(k, None)
    return list(seen)


def _total(row: dict, names: list[str], weights: dict[str, float]) -> float | None:
    scores = [(_number(row.get(n)), weights.get(n, 1.0)) for n in names]
    if not scores or all(s is None for s, _ in scores):
        return None   # no reward scored it (left out of training)
    return sum(s * w for s, w in scores if s is not None)


def _shown(row: dict, names: list[str], weights: dict[str, float]) -> dict:
    return {"prompt": [(inert(label), inert(text)) for label, text in turns(row.get("prompt"))],
            "completion": [(inert(label), inert(text)) for label, text in turns(row.get("completion"))],
            "scores": {n: _number(row.get(n)) for n in names}, "total": _total(row, names, weights),
            "advantage": _number(row.get("advantage"))}


def picked_rollouts(rows: list[dict], weights: dict[str, float]) -> list[dict]:
    """For the first, middle and last logged step: the highest-, middle- and lowest-scored rollouts."""
    steps = sorted({r["step"] for r in rows if isinstance(r.get("step"), int)})
    if not steps:
        return []
    names = reward_columns(rows)
    at = dict.fromkeys([steps[0], steps[len(steps) // 2], steps[-1]])
    labels = dict(zip(at, ("start", "middle", "end") if len(at) == 3 else ("start", "end") if len(at) == 2
                       else ("the one logged step",), strict=False))
    out = []
    for step in at:
        here = [r for r in rows if r.get("step") == step]
        ranked = sorted(here, key=lambda r: -(_total(r, names, weights) if _total(r, names, weights) is not None
                                              else -math.inf))
        pick = dict.fromkeys([0, len(ranked) // 2, len(ranked) - 1][:min(PER_STEP, len(ranked))])
        out.append({"step": step, "when": labels[step], "logged": len(here), "rewards": names,
                    "rollouts": [_shown(ranked[i], names, weights) for i in pick]})
    return out
