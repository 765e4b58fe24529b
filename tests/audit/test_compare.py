"""One comparison: the metrics a run's rewards and tools give, what is tested and what is a fact, how a person
reads each line."""

from __future__ import annotations

import random

from grpo_rlvr.audit.compare import compare, metrics
from grpo_rlvr.records.audit_rollouts import prompt_digest

WEIGHTS = {"format": 0.2, "exact_match": 1.0}
KINDS = {"format": "format", "exact_match": "correctness"}


def rollouts(groups: int, malformed: float, correct: float, seed: int, prompt=lambda g: f"{g}+1=",
             length: int = 20, tools: bool = False) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for g in range(groups):
        for _ in range(8):
            bad = rng.random() < malformed
            right = not bad and rng.random() < correct
            out.append({"group": g, "prompt": prompt_digest(prompt(g)), "prompt_tokens": 6,
                        "scores": {"format": 0.0 if bad else 1.0, "exact_match": 1.0 if right else 0.0},
                        "length": length + rng.randint(-3, 3), "truncated": False,
                        "tool_calls": (1 if rng.random() < 0.5 else 0) if tools else None})
    return out


def test_the_metrics_follow_the_rewards_and_tools():
    names = [m.name for m in metrics(WEIGHTS, KINDS, tools=True)]
    assert names == ["reward format", "reward exact_match", "total", "malformed", "unscorable", "completion length",
                     "truncated", "called a tool", "prompt length"]
    assert "malformed" not in [m.name for m in metrics({"x": 1.0}, {"x": "correctness"}, tools=False)]


def test_honest_samples_compare_clean_and_each_test_is_stated():
    ref, now = rollouts(32, 0.4, 0.3, seed=1), rollouts(8, 0.4, 0.3, seed=2)
    tests = compare(ref, now, WEIGHTS, KINDS, False, 1e-3)
    assert not any(t["diverged"] for t in tests)
    malformed = next(t for t in tests if t["metric"] == "malformed")
    assert malformed["groups"] == [32, 8] and "now," in malformed["summary"] and "reviewed" in malformed["summary"]


def test_a_forged_review_is_named_with_its_numbers():
    ref, now = rollouts(32, 0.05, 0.4, seed=1), rollouts(8, 0.85, 0.1, seed=2)
    tests = {t["metric"]: t for t in compare(ref, now, WEIGHTS, KINDS, False, 1e-3)}
    assert tests["malformed"]["diverged"] and tests["reward format"]["diverged"]
    assert tests["malformed"]["summary"].startswith("malformed ") and "p ≤" in tests["malformed"]["summary"]


def test_prompts_outside_the_reviewed_data_are_a_fact():
    ref = rollouts(32, 0.4, 0.3, seed=1)
    population = {prompt_digest(f"{g}+1=") for g in range(100)}
    inside = rollouts(8, 0.4, 0.3, seed=2, prompt=lambda g: f"{g + 50}+1=")
    outside = rollouts(8, 0.4, 0.3, seed=2, prompt=lambda g: f"{g}+1= (another task)")
    fact = [t for t in compare(ref, inside, WEIGHTS, KINDS, False, 1e-3, population) if t["kind"] == "fact"]
    assert fact and not fact[0]["diverged"]
    fact = [t for t in compare(ref, outside, WEIGHTS, KINDS, False, 1e-3, population) if t["kind"] == "fact"][0]
    assert fact["diverged"] and fact["summary"].startswith("prompts outside the reviewed data: 8 of 8")


def test_a_resumed_run_compares_only_its_prompts():
    ref, now = rollouts(32, 0.05, 0.4, seed=1), rollouts(8, 0.85, 0.1, seed=2)   # a trained policy: far apart
    tests = compare(ref, now, WEIGHTS, KINDS, False, 1e-3, prompts_only=True)
    assert [t["metric"] for t in tests] == ["prompt length"] and not tests[0]["diverged"]
