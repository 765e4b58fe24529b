"""Zero-signal groups (every completion of a prompt rewarded alike, so every advantage is zero): their share,
recounted from the logged completions, and what answers them — dynamic sampling (the brief's
``dynamic_sampling`` section, ``trainer/dynamic_sampling.py``), an offline filter, or SFT first.

The sizing rule: a round of generation keeps a share ``1 − z`` of its groups when a share ``z`` carries no signal,
so filling a batch takes ``1 / (1 − z)`` rounds on average. The recommended ``max_rounds`` (extra rounds after the
first) allows twice that, at least the section's default 3 and at most its bound 16. Above the share where even
16 extra rounds do not allow twice the need (z > 1 − 2/17 ≈ 0.88), dynamic sampling would spend more than eight
generations per trained group: filtering the data offline is then the cheaper fix.

Limits: the recount needs ``log_completions`` (TRL's ``completions/*.parquet``); without it the share is TRL's
``frac_reward_zero_std``, which misses groups of equal rewards whose float32 std is not exactly zero.
"""

from __future__ import annotations

import math

from grpo_rlvr.diagnosis import completions as comp
from grpo_rlvr.diagnosis.metrics import RunLogs

ZERO_ADVANTAGE = 0.05    # |advantage| below this for a whole group: its rewards were equal (no signal)
MIN_ROUNDS, MAX_ROUNDS = 3, 16           # the brief section's default and its schema's bound
DS_MAX_SHARE = 1 - 2 / (MAX_ROUNDS + 1)  # ≈ 0.88: above it no max_rounds allows twice the rounds needed
PREFIX = "dynamic_sampling/"


def zero_signal_by_step(logs: RunLogs) -> list[tuple[int, float]]:
    """Per logged step, the share of groups whose completions all got (near) zero advantage, from the logged
    completions. Unlike TRL 1.16's frac_reward_zero_std, this counts a group of equal rewards as equal even
    when float32 rounding leaves their std a hair above zero (eight rewards of 0.2 + 1.0 give std 1.3e-7,
    which torch.isclose does not call zero). In a run with dynamic sampling the logged completions are the
    trained batch, so this is the share of trained groups without signal (the refill's filler)."""
    by_step = comp.groups_by_step(logs.completions, _group_size(logs))
    if _SHARES[0] is by_step:   # the same grouping as the last call (the watchdog's rows have not changed)
        return list(_SHARES[1])
    out = []
    for step, groups in sorted(by_step.items()):
        flat = [_flat(g) for g in groups.values()]
        flat = [f for f in flat if f is not None]
        if flat:
            out.append((step, sum(flat) / len(flat)))
    _SHARES[:] = [by_step, out]
    return list(out)


_SHARES: list = [None, []]   # the last grouping seen and its shares


def _group_size(logs: RunLogs) -> int | None:
    """num_generations from the run's brief lock (the rendered GRPOConfig), when there is one (a plain TRL run
    has none: then a prompt's rows at one step count as one group)."""
    n = ((logs.brief_lock or {}).get("grpo_config") or {}).get("num_generations")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else None


def _flat(group: list[dict]) -> bool | None:
    adv = [r.get("advantage") for r in group]
    if len(adv) < 2 or not all(isinstance(x, (int, float)) for x in adv):
        return None
    return max(map(abs, adv)) < ZERO_ADVANTAGE


def solved_share_of_flat_groups(logs: RunLogs, reward: str) -> tuple[float, int] | None:
    """Among the logged zero-signal groups, the share whose ``reward`` column is ≥ 0.5 (all solved rather than
    all failed), and how many groups that was; None when no such group logged that reward."""
    solved = total = 0
    for groups in comp.groups_by_step(logs.completions, _group_size(logs)).values():
        for g in groups.values():
            values = [r.get(reward) for r in g]
            if _flat(g) and values and all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
                total += 1
                solved += values[0] >= 0.5
    return (solved / total, total) if total else None


def dynamic_sampling_in_run(logs: RunLogs) -> dict | None:
    """The run's dynamic sampling settings when it used it: from its brief lock (``dynamic_sampling``, written
    by ``render`` when the section is on, the DAPO variant's included), or ``{}`` when only its metrics
    (``dynamic_sampling/*``) show it (a run trained outside render). None: plain sampling."""
    lock = logs.brief_lock or {}
    ds = lock.get("dynamic_sampling") or ((lock.get("resolved") or {}).get("dynamic_sampling"))
    if isinstance(ds, dict):
        return ds
    if any(k.startswith(PREFIX) for k in logs.history.keys()):
        return {}
    return None


def max_rounds_for(share: float) -> int | None:
    """The ``max_rounds`` that allows twice the rounds a batch needs on average at zero-signal share ``share``
    (at least 3, the default); None above ``DS_MAX_SHARE``, where no allowed value does."""
    if share > DS_MAX_SHARE:
        return None
    if share <= 0:
        return MIN_ROUNDS
    return min(MAX_ROUNDS, max(MIN_ROUNDS, math.ceil(2 / (1 - share) - 1e-9) - 1))


def snippet(change: dict) -> str:
    """A brief change as the one-line YAML a person pastes: ``dynamic_sampling: {max_rounds: 4}``."""
    import yaml

    return yaml.safe_dump(change, default_flow_style=None, sort_keys=False, width=200).strip()


def dynamic_sampling_advice(share: float) -> tuple[str, dict] | None:
    """The sentence and brief change recommending dynamic sampling at zero-signal share ``share``, or None
    where it does not fit (the share is above ``DS_MAX_SHARE``)."""
    rounds = max_rounds_for(share)
    if rounds is None:
        return None
    change = {"dynamic_sampling": {"max_rounds": rounds}}
    cost = 1 / (1 - share)
    return (f"Turn on dynamic sampling, so each step trains only on groups that carry signal and refills the "
            f"rest with new prompts: add `{snippet(change)}` to the brief (at this share a step generates about "
            f"{cost:.1f}× the completions it trains on; max_rounds {rounds} allows twice that).", change)


def no_dynamic_sampling_because(share: float) -> str:
    if share >= 1:
        return ("Dynamic sampling does not fit here: no group carries signal, so no number of refill rounds fills a "
                "batch.")
    return (f"Dynamic sampling does not fit here: at a zero-signal share of {share:.2f} a step would generate about "
            f"{1 / (1 - share):.1f}× the completions it trains on, beyond what max_rounds {MAX_ROUNDS} allows twice "
            "over.")
