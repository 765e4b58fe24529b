"""Failure-mode detectors over a run's logged metrics and completions.

Each detector states its threshold and its false-alarm guard, and returns a ``Finding`` with evidence (steps,
values, trend) or nothing. Trends compare the start of the run (its first 3 log records: the base model's
behaviour) with its last quarter (at least 3 records); runs with fewer than 8 records are too short to judge
trends and only get level checks.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from grpo_rlvr.diagnosis.metrics import RunLogs

MIN_RECORDS_FOR_TREND = 8


@dataclass
class Finding:
    id: str
    title: str
    severity: str               # "info" | "warning" | "critical"
    evidence: list[str]
    recommendation: str
    variant: str | None = None  # the variant this finding calls for, if any
    brief_change: dict = field(default_factory=dict)


def _windows(series: list[tuple[int, float]]):
    if len(series) < MIN_RECORDS_FOR_TREND:
        return None
    q = max(3, len(series) // 4)
    early, late = series[:3], series[-q:]
    return early, late, statistics.fmean(v for _, v in early), statistics.fmean(v for _, v in late)


def _slope(series: list[tuple[int, float]]) -> float:
    xs = [s for s, _ in series]
    ys = [v for _, v in series]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def reward_names(logs: RunLogs) -> list[str]:
    keys = {k for r in logs.history for k in r}
    return sorted(k.split("/")[1] for k in keys if k.startswith("rewards/") and k.endswith("/mean"))


def _kind_names(logs: RunLogs, kind: str) -> list[str]:
    """Reward names of a kind, from the run's brief lock when present, else by name."""
    names = reward_names(logs)
    if logs.brief_lock:
        specs = (logs.brief_lock.get("resolved") or {}).get("rewards") or []
        from grpo_rlvr.rewards import build_reward

        found = []
        for s in specs:
            try:
                r = build_reward(s["name"], s.get("params") or {}, kind=s.get("kind"))
            except Exception:  # noqa: BLE001 - an unloadable user reward just isn't classified
                continue
            if r.kind == kind and r.name in names:
                found.append(r.name)
        if found:
            return found
    guess = {"format": ("format",), "correctness": ("exact_match", "math", "unit_tests", "json_schema", "tool_call")}
    return [n for n in names if n in guess.get(kind, ())]


# --- detectors ------------------------------------------------------------------------------------------------

def no_learning_signal(logs: RunLogs) -> Finding | None:
    """frac_reward_zero_std mean ≥ 0.5: most groups have identical rewards, so zero advantage.
    Guard: a healthy run sits well below 0.5 (every group with a mix of outcomes contributes)."""
    s = logs.series("frac_reward_zero_std")
    if not s:
        return None
    mean = statistics.fmean(v for _, v in s)
    if mean < 0.5:
        return None
    return Finding("no_learning_signal", "Most groups have no reward variance (no learning signal)",
                   "critical" if mean >= 0.8 else "warning",
                   [f"frac_reward_zero_std averaged {mean:.2f} over {len(s)} logs (threshold 0.5)",
                    f"last value {s[-1][1]:.2f} at step {s[-1][0]}"],
                   "Filter the dataset to prompts the model solves sometimes: `grpo-rlvr preflight BRIEF --filter "
                   "OUT.jsonl`, then point dataset.path at it. If it never solves them, SFT first.",
                   brief_change={"dataset": {"path": "<the file written by preflight --filter>"}})


def entropy_collapse(logs: RunLogs) -> Finding | None:
    """Entropy falls below 30% of its early level while the reward stalls (late-early gain < 0.05).
    Guard: entropy falling *with* rising reward is normal sharpening and is not flagged."""
    w, r = _windows(logs.series("entropy")), _windows(logs.series("reward"))
    if not w or not r:
        return None
    _, _, e0, e1 = w
    _, _, r0, r1 = r
    if e0 <= 0 or e1 / e0 >= 0.3 or r1 - r0 >= 0.05:
        return None
    return Finding("entropy_collapse", "Entropy collapsed while reward stalled", "critical",
                   [f"entropy fell from {e0:.3f} to {e1:.3f} ({e1 / e0:.0%} of its early level; threshold 30%)",
                    f"reward moved {r0:.3f} → {r1:.3f} (gain < 0.05)"],
                   "Switch to DAPO (clip-higher keeps low-probability tokens explorable), and check the learning "
                   "rate.", variant="dapo", brief_change={"variant": {"name": "dapo", "diagnosis": "diagnosis.json"}})


def length_reward_coupling(logs: RunLogs) -> Finding | None:
    """Mean completion length grows ≥ 30% while correctness is flat (gain < 0.02).
    Guard: length growth with rising correctness is not flagged (longer reasoning can be right)."""
    w = _windows(logs.series("completions/mean_length"))
    cor = _kind_names(logs, "correctness")
    c = _windows(logs.series(f"rewards/{cor[0]}/mean")) if cor else None
    if not w or not c:
        return None
    _, _, l0, l1 = w
    _, _, c0, c1 = c
    if l0 <= 0 or l1 / l0 < 1.3 or c1 - c0 >= 0.02:
        return None
    return Finding("length_reward_coupling", "Completions grow longer while correctness is flat", "warning",
                   [f"mean length {l0:.1f} → {l1:.1f} tokens (+{l1 / l0 - 1:.0%}; threshold +30%)",
                    f"{cor[0]} mean {c0:.3f} → {c1:.3f} (gain < 0.02)"],
                   "Switch to Dr.GRPO (no length normalisation bias, no std scaling), and consider a length_penalty.",
                   variant="dr_grpo", brief_change={"variant": {"name": "dr_grpo", "diagnosis": "diagnosis.json"}})


def reward_hacking(logs: RunLogs) -> Finding | None:
    """The format reward saturates (≥ 0.95) or rises ≥ 0.2 while correctness barely moves: its gain is below
    0.02 and below a fifth of the format's gain.
    Guard: needs both a format and a correctness reward; format rising *with* correctness (the demo: format
    +0.53, correctness +0.23) is healthy."""
    fmt, cor = _kind_names(logs, "format"), _kind_names(logs, "correctness")
    if not fmt or not cor:
        return None
    f, c = _windows(logs.series(f"rewards/{fmt[0]}/mean")), _windows(logs.series(f"rewards/{cor[0]}/mean"))
    if not f or not c:
        return None
    _, _, f0, f1 = f
    _, _, c0, c1 = c
    if not ((f1 >= 0.95 or f1 - f0 >= 0.2) and c1 - c0 < max(0.02, 0.2 * (f1 - f0))):
        return None
    return Finding("reward_hacking", "The format part rises while correctness does not (reward hacking suspicion)",
                   "warning",
                   [f"{fmt[0]} mean {f0:.3f} → {f1:.3f}",
                    f"{cor[0]} mean {c0:.3f} → {c1:.3f} (gain below max(0.02, a fifth of the format's gain))"],
                   "Read the logged completions: the model may be satisfying the format without solving. Lower the "
                   "format weight, or make correctness require the format; Dr.GRPO removes the length/difficulty "
                   "bias if length rises too.", variant="dr_grpo",
                   brief_change={"variant": {"name": "dr_grpo", "diagnosis": "diagnosis.json"}})


def truncation(logs: RunLogs) -> Finding | None:
    """completions/clipped_ratio mean ≥ 0.2: many completions hit max_completion_length.
    Guard: a few truncated completions (< 20%) are normal."""
    s = logs.series("completions/clipped_ratio")
    if not s:
        return None
    late = s[-max(3, len(s) // 4):]
    mean = statistics.fmean(v for _, v in late)
    if mean < 0.2:
        return None
    return Finding("truncation", "Many completions are truncated", "warning",
                   [f"clipped_ratio averaged {mean:.2f} over the last {len(late)} logs (threshold 0.2)"],
                   "Raise max_completion_length, or mask truncated completions (DAPO does).", variant="dapo",
                   brief_change={"grpo": {"mask_truncated_completions": True}})


def kl_blowup(logs: RunLogs) -> Finding | None:
    """kl (logged when beta > 0) ends ≥ 10× its early level and above 0.1.
    Guard: small absolute KL (< 0.1) is not flagged however it grows."""
    w = _windows(logs.series("kl"))
    if not w:
        return None
    _, _, k0, k1 = w
    if k1 < 0.1 or k1 < 10 * max(k0, 1e-6):
        return None
    return Finding("kl_blowup", "KL to the reference model is blowing up", "critical",
                   [f"kl {k0:.4f} → {k1:.4f} (≥ 10× and > 0.1)"],
                   "Lower the learning rate or raise beta; check for a reward that pays for degenerate text.",
                   brief_change={"grpo": {"learning_rate": "halve it"}})


def clipping_saturation(logs: RunLogs) -> Finding | None:
    """clip_ratio/region_mean ≥ 0.2: the policy moves past the trust region on many tokens.
    Guard: a few percent of clipped tokens is normal."""
    s = logs.series("clip_ratio/region_mean")
    if not s:
        return None
    mean = statistics.fmean(v for _, v in s)
    if mean < 0.2:
        return None
    return Finding("clipping_saturation", "Most updates are clipped", "warning",
                   [f"clip_ratio/region_mean averaged {mean:.2f} (threshold 0.2)"],
                   "Lower the learning rate or take fewer steps per generation.",
                   brief_change={"grpo": {"learning_rate": "halve it"}})


def moe_without_gspo(logs: RunLogs) -> Finding | None:
    """The run's model is mixture-of-experts and the run did not use sequence-level importance sampling."""
    lock = logs.brief_lock or {}
    cfg = lock.get("grpo_config") or {}
    model = ((lock.get("resolved") or {}).get("model") or {}).get("name_or_path", "")
    if not model:
        return None
    from pathlib import Path

    from grpo_rlvr.brief.model_probe import is_mixture_of_experts, read_config

    if not is_mixture_of_experts(model, read_config(Path(model))):
        return None
    if cfg.get("importance_sampling_level") == "sequence":
        return None
    return Finding("moe_without_gspo", "Mixture-of-experts model trained without GSPO", "critical",
                   [f"model {model} is MoE; importance_sampling_level is {cfg.get('importance_sampling_level', 'token')}"],
                   "Use GSPO (sequence-level importance ratios).", variant="gspo",
                   brief_change={"variant": {"name": "gspo"}})


DETECTORS = (no_learning_signal, entropy_collapse, length_reward_coupling, reward_hacking, truncation, kl_blowup,
             clipping_saturation, moe_without_gspo)
