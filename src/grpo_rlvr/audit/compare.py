"""One comparison of training's rollouts with the reviewed inspection's, metric by metric.

The reference is every candidate the inspection sampled (its ``audit.json``), not only the samples the person read:
those were picked to spread over outcomes (``inspection.selection``), so their shares are not the policy's; the
candidates are, and the person read a draw from them (the gate checks that the samples are exactly the pick from
the candidates). Each rollout is one ``records.audit_rollouts.rollout_record``.

Metrics (``metrics``): each reward's score, the weighted total, the malformed share (a format reward at 0 or
below), the unscorable share (some reward had no score), the completion length, the truncated share, the share
that called a tool (with tools), and the prompt length (one value per prompt group, as the model read it). And
one fact, no statistics needed: training's prompts must be prompts of the reviewed data (each row's prompt digest
among the digests of every row the inspection could draw).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from grpo_rlvr.audit.two_sample import TestResult, holm, holm_threshold, permutation_test

MIN_GROUPS = 2   # a sample of fewer prompt groups than this says nothing about a metric: not tested


@dataclass(frozen=True)
class Metric:
    """What is compared: ``value`` reads it from a rollout (None: this rollout has none); ``kind`` is ``share``
    (yes/no: Fisher), ``mean`` (a score: its mean) or ``rank`` (a length: its ranks); ``per_prompt``: one value
    per prompt group."""

    name: str
    kind: str
    value: Callable[[dict], float | bool | None]
    per_prompt: bool = False


def _scored(r: dict) -> bool:
    return all(v is not None for v in r["scores"].values())


def metrics(weights: dict[str, float], kinds: dict[str, str], tools: bool) -> list[Metric]:
    """The metrics of a run with these rewards (``weights`` and ``kinds`` by name) and tools."""
    out = [Metric(f"reward {name}", "mean", lambda r, n=name: r["scores"].get(n)) for name in weights]
    out.append(Metric("total", "mean",
                      lambda r: sum(w * r["scores"][n] for n, w in weights.items()) if _scored(r) else None))
    fmt = [n for n, k in kinds.items() if k == "format"]
    if fmt:
        def malformed(r):
            got = [r["scores"].get(n) for n in fmt if r["scores"].get(n) is not None]
            return None if not got else min(got) <= 0
        out.append(Metric("malformed", "share", malformed))
    out += [Metric("unscorable", "share", lambda r: not _scored(r)),
            Metric("completion length", "rank", lambda r: r["length"]),
            Metric("truncated", "share", lambda r: r["truncated"])]
    if tools:
        out.append(Metric("called a tool", "share", lambda r: (r.get("tool_calls") or 0) > 0))
    out.append(Metric("prompt length", "rank", lambda r: r["prompt_tokens"], per_prompt=True))
    return out


def _groups(rollouts: list[dict], metric: Metric) -> list[list[float]]:
    by: dict = defaultdict(list)
    for r in rollouts:
        v = metric.value(r)
        if v is not None:
            by[_key(r["group"])].append(float(v))
    if metric.per_prompt:
        return [[sum(g) / len(g)] for g in by.values()]
    return list(by.values())


def _key(group):
    return tuple(group) if isinstance(group, list) else group


def _p(t: TestResult) -> str:
    if t.permutations and t.p <= t.floor * 1.0000001:
        return (f"p ≤ {t.p:.1g}: none of {t.permutations:,} random splits of the {sum(t.groups)} prompt groups "
                "was as far apart")
    return f"p = {t.p:.1g}" if t.p < 0.01 else f"p = {t.p:.2f}"


def _summary(metric: Metric, t: TestResult) -> tuple[str, str, str]:
    """(reviewed, training, one line) as a person reads them."""
    if metric.kind == "share":
        rev, now = f"{t.count[0]}/{t.n[0]}", f"{t.count[1]}/{t.n[1]}"
        return rev, now, f"{metric.name} {now} now, {rev} reviewed; {_p(t)}"
    unit = "prompts" if metric.per_prompt else "rollouts"
    rev, now = f"mean {t.value[0]:.3g} ({t.n[0]} {unit})", f"mean {t.value[1]:.3g} ({t.n[1]} {unit})"
    return rev, now, f"{metric.name}: {now} now, {rev} reviewed; {_p(t)}"


def rows_fact(population: set[str] | None, training: list[dict]) -> dict | None:
    """The fact that training's prompts come from the reviewed data: None when the reference has no population."""
    if population is None:
        return None
    outside = [r for r in training if r["prompt"] not in population]
    groups = {_key(r["group"]) for r in outside}
    all_groups = {_key(r["group"]) for r in training}
    summary = (f"prompts outside the reviewed data: {len(groups)} of {len(all_groups)} prompt groups "
               f"({len(outside)} of {len(training)} rollouts)")
    return {"metric": "prompt rows", "kind": "fact", "reviewed": f"{len(population)} rows",
            "training": f"{len(groups)} of {len(all_groups)} prompts outside", "p": 0.0 if outside else 1.0,
            "alpha": None, "diverged": bool(outside), "method": "each prompt's digest among the reviewed rows'",
            "summary": summary}


def reference_groups(reference: list[dict], weights: dict[str, float], kinds: dict[str, str],
                     tools: bool) -> dict[str, list[list[float]]]:
    """The reference's groups for every metric, read once (the audit prepares them before training starts)."""
    return {m.name: _groups(reference, m) for m in metrics(weights, kinds, tools)}


def compare(reference: list[dict], training: list[dict], weights: dict[str, float], kinds: dict[str, str],
            tools: bool, alpha: float, population: set[str] | None = None, prompts_only: bool = False,
            prepared: dict[str, list[list[float]]] | None = None) -> list[dict]:
    """Every metric's test (and the rows fact) of ``training`` against ``reference`` at family-wise level
    ``alpha`` (Holm over the tests); one record per test, each with ``diverged``. ``prompts_only``: only what
    does not depend on the policy (the prompts), for a run resumed after it trained. ``prepared``: the
    reference's groups as ``reference_groups`` read them."""
    chosen = [m for m in metrics(weights, kinds, tools) if not prompts_only or m.per_prompt]
    tested = []
    for m in chosen:
        ref = prepared[m.name] if prepared is not None else _groups(reference, m)
        new = _groups(training, m)
        if len(ref) < MIN_GROUPS or len(new) < MIN_GROUPS:
            continue
        tested.append((m, permutation_test(ref, new, m.kind, level=alpha / max(1, len(chosen)))))
    ps = [t.p for _, t in tested]
    rejected = holm(ps, alpha)
    out = []
    for i, ((m, t), reject) in enumerate(zip(tested, rejected, strict=True)):
        rev, now, line = _summary(m, t)
        out.append({"metric": m.name, "kind": m.kind, "reviewed": rev, "training": now, "p": t.p,
                    "alpha": holm_threshold(ps, alpha, i), "diverged": reject, "method": t.method,
                    "groups": list(t.groups), "floor": t.floor, "permutations": t.permutations, "summary": line})
    fact = rows_fact(population, training)
    if fact is not None:
        out.append(fact)
    return out
