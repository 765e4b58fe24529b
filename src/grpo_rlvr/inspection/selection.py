"""Choosing which scored candidates a person reads: spread across prompts and across reward outcomes.

Candidates are bucketed by outcome (malformed, well-formed but wrong, partly right, correct) and taken
round-robin over the buckets, and within a bucket round-robin over prompts, so the reader sees passes, fails
and malformed outputs from many prompts rather than 64 copies of the commonest case.
"""

from __future__ import annotations

import random
from collections import defaultdict

OUTCOMES = ("malformed", "wrong", "partial", "correct")


def outcome(scores: dict, kinds: dict[str, str]) -> str:
    """The bucket of one candidate from its per-reward scores (``{name: score}``) and reward kinds."""
    fmt = [s for n, s in scores.items() if kinds.get(n) == "format" and s is not None]
    cor = [s for n, s in scores.items() if kinds.get(n) == "correctness" and s is not None]
    if fmt and min(fmt) <= 0:
        return "malformed"
    if not cor:
        return "partial"
    if max(cor) <= 0:
        return "wrong"
    return "correct" if min(cor) >= 1 else "partial"


def select(candidates: list[dict], n: int, seed: int) -> list[dict]:
    """Pick ``n`` candidates (each has ``prompt_index`` and ``outcome``), spread as described above."""
    rng = random.Random(seed)
    buckets: dict[str, dict[int, list[dict]]] = {o: defaultdict(list) for o in OUTCOMES}
    for c in candidates:
        buckets[c["outcome"]][c["prompt_index"]].append(c)
    queues = {}
    for o, by_prompt in buckets.items():
        order = list(by_prompt)
        rng.shuffle(order)
        # interleave prompts: first candidate of each prompt, then the second of each, ...
        q, depth = [], 0
        while any(len(by_prompt[p]) > depth for p in order):
            q.extend(by_prompt[p][depth] for p in order if len(by_prompt[p]) > depth)
            depth += 1
        queues[o] = q
    chosen: list[dict] = []
    while len(chosen) < n and any(queues.values()):
        for o in OUTCOMES:
            if queues[o] and len(chosen) < n:
                chosen.append(queues[o].pop(0))
    return chosen
