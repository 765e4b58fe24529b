"""Failure-mode detectors over a run's logged metrics, held-out evaluations and completions.

Each detector states its threshold and its false-alarm guard, and returns a ``Finding`` with evidence (steps,
values, trend) or nothing. Trends compare the start of the run (its first 3 log records: the base model's
behaviour) with its last quarter (at least 3 records); runs with fewer than 8 records are too short to judge
trends and only get level checks. "Quality" is the correctness reward's mean when the run has one (from the
brief lock, else by name), else the total reward: a run whose format part rises while correctness is flat has
not improved.

Brief changes are exact where the run's brief lock gives the current values (``learning_rate: 0.0003 →
0.00015``); a bare ``trainer_state.json`` gets the rule instead ("halve grpo.learning_rate").
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.diagnosis import completions as comp
from grpo_rlvr.diagnosis import zero_signal as zs
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
    cause: str = ""             # a finer label where one finding has several causes (no_learning_signal)


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


def _names(logs: RunLogs, role: str) -> list[str]:
    """Rewards of a role (``roles.infer_roles``, set on the logs by ``diagnose``), that the run logged."""
    return [n for n, r in logs.roles.items() if r.role == role and logs.series(f"rewards/{n}/mean")]


def _lock_weights(logs: RunLogs) -> dict[str, float]:
    from grpo_rlvr.diagnosis.roles import lock_weights

    return lock_weights(logs.brief_lock)


def _unpaid(logs: RunLogs, correctness: list[str]) -> list[str]:
    """The correctness rewards, when every one of them weighs 0 in the brief lock (else none)."""
    from grpo_rlvr.diagnosis.roles import lock_weights

    weights = lock_weights(logs.brief_lock)
    return list(correctness) if correctness and all(weights.get(n) == 0 for n in correctness) else []


def _quality(logs: RunLogs) -> tuple[str, list[tuple[int, float]]]:
    cor = _names(logs, "correctness")
    if cor:
        return cor[0], logs.series(f"rewards/{cor[0]}/mean")
    return "reward", logs.series("reward")


def _length_series(logs: RunLogs) -> tuple[list[tuple[int, float]], str]:
    """Mean completion length per log: TRL's completions/mean_length (tokens), else from the logged
    completions (characters)."""
    s = logs.series("completions/mean_length")
    return (s, "tokens") if s else (comp.length_by_step(logs.completions), "characters")


def _current(logs: RunLogs, key: str):
    """The value the run trained with (from its brief lock), or None."""
    return ((logs.brief_lock or {}).get("grpo_config") or {}).get(key)


def _scaled(logs: RunLogs, key: str, factor: float, rule: str) -> dict:
    cur = _current(logs, key)
    if isinstance(cur, (int, float)) and not isinstance(cur, bool) and cur > 0:
        new = float(f"{cur * factor:.3g}")
        return {"grpo": {key: int(new) if isinstance(cur, int) else new}}
    return {"grpo": {key: rule}}


def _variant_change(name: str) -> dict:
    return {"variant": {"name": name, "diagnosis": "diagnosis.json"}}


# --- detectors ------------------------------------------------------------------------------------------------

def _filter(logs: RunLogs) -> tuple[dict, str]:
    """The offline filter: the brief change pointing dataset.path at the learnable prompts, and the command that
    writes them."""
    data_path = str(((logs.brief_lock or {}).get("resolved") or {}).get("dataset", {}).get("path", "DATA.jsonl"))
    if Path(data_path).suffix in (".jsonl", ".json", ".parquet", ".csv"):
        filtered = data_path.rsplit(".", 1)[0] + ".learnable.jsonl"
    else:  # a hub dataset id: the filtered copy is a local file beside the brief
        filtered = "./" + data_path.replace("/", "_") + ".learnable.jsonl"
    return {"dataset": {"path": filtered}}, f"`grpo-rlvr preflight BRIEF --filter {filtered}`"


ZERO_RATE = 0.01   # quality at or below this at the start and at its peak: the model has no skill to sharpen


UNSCORED = 0.999   # unscorable/frac at or above this: the step scored no rollout


def unscored_logs(logs: RunLogs) -> tuple[int, int]:
    """(logs whose every rollout was left unscored, logs with ``unscorable/frac``)."""
    s = logs.series("unscorable/frac")
    return sum(v >= UNSCORED for _, v in s), len(s)


def nothing_scored(logs: RunLogs) -> Finding | None:
    """Every logged step left all its rollouts unscored (``unscorable/frac`` 1): no reward, no advantage, nothing
    learned. A reward that cannot score any row, or a tool or environment that cannot start (an environment whose
    ``reset()`` raises leaves every rollout ``tools/unavailable``). Its rewards are then null or NaN, and the
    groups all equal: those findings (non-finite metrics, no learning signal) would blame the learning rate or
    the model, so they defer to this one.
    Guard: a run that scored anything in some logged step (``unscorable_samples`` and ``tool_errors_rising``
    judge a share)."""
    unscored, n = unscored_logs(logs)
    if not n or unscored < n:
        return None
    evidence = [f"unscorable/frac is 1 in all {n} logged step{'s' if n != 1 else ''}: no rollout was scored"]
    gone = [v for _, v in logs.series("tools/unavailable")]
    if gone and max(gone) > 0:
        evidence.append(f"tools/unavailable {max(gone):g} rollouts a step: the tools or the environment could not be "
                        "reached or could not start (an environment's reset() that raises does this)")
        fix = ("Nothing was scored because the tools or the environment failed outside the model's control. Run "
               "`grpo-rlvr preflight BRIEF`: it rolls them out as training does and names the exception with its "
               "file and line. Fix it, then train again.")
    else:
        fix = ("No reward could score any rollout: read output/unscorable.json for the rows and the reason (a "
               "missing or unreadable answer column, a reward that raises), fix the data or the reward, check with "
               "`grpo-rlvr score`, then train again.")
    return Finding("nothing_scored", "No rollout was scored: training learns nothing", "critical", evidence, fix)


def no_learning_signal(logs: RunLogs) -> Finding | None:
    """Most groups (mean share ≥ 0.5 over the run) have equal rewards, so zero advantage. The share comes from
    the logged completions when there are any, else from frac_reward_zero_std. Causes, told apart by quality:
    - *saturated*: quality ≥ 0.9 at the end; too easy;
    - *collapsed*: the first log had successes and the end has none (≥ 0.8 equal-reward groups over the last
      quarter of the logs, quality below its first value), and either the first log had signal (share ≤ 0.5) or
      the total reward fell by half: training broke the policy, lower the learning rate. The end is judged over a
      quarter, as quality is: one log's share moves in steps of a group (0.25 at 4 groups), and a broken policy
      that stumbles on one well-formed completion is still broken;
    - *too hard*: quality ≤ 0.1 at the end;
    - *polarised*: in between; prompts are either always or never solved.
    The fix for saturated, too-hard and polarised runs is dynamic sampling (the brief's ``dynamic_sampling``
    section, sized from the share by ``zero_signal.max_rounds_for``), with the offline filter as the cheaper
    alternative, where it fits: the share is at most ``zero_signal.DS_MAX_SHARE`` (≈ 0.88), the run did not
    already use it, and the model has a skill to sharpen (quality above 0.01 at the start or at its peak; at a
    zero base rate the fix is SFT first: dynamic sampling keeps groups that differ, it cannot make them differ).
    A run with dynamic sampling logs its trained batch, so its recount is the refill's filler; without logged
    completions it is left to ``refill_exhausted`` (TRL's metric there counts every round sampled).
    Guard: a healthy run sits well below 0.5 (every group with a mix of outcomes contributes)."""
    signal = _zero_signal(logs)
    if signal is None or nothing_scored(logs) is not None:   # equal groups because nothing was scored at all
        return None
    return next(finding for cause in NO_SIGNAL_CAUSES if (finding := cause(signal)) is not None)


@dataclass(frozen=True)
class _ZeroSignal:
    """What the causes of ``no_learning_signal`` read: the share of equal-reward groups and the quality."""

    logs: RunLogs
    trl: list[tuple[int, float]]        # TRL's frac_reward_zero_std
    own: list[tuple[int, float]]        # recounted from the logged completions
    in_run: dict | None                 # the run's own dynamic_sampling section, if it had one
    share: list[tuple[int, float]]      # the series judged: ``own``, else ``trl`` (not with dynamic sampling)
    mean: float                         # its mean over the run
    qname: str
    q: list[tuple[int, float]]          # the quality series
    q_start: float                      # mean of the first 3 logs
    q_end: float                        # mean of the last quarter
    share_end: float                    # the share's mean over the last quarter
    q_first: float                      # the first log
    evidence: list[str]
    filter_change: dict
    filter_cmd: str

    @property
    def severity(self) -> str:
        return "critical" if self.mean >= 0.8 else "warning"


def _zero_signal(logs: RunLogs) -> _ZeroSignal | None:
    """The zero-signal share and its evidence, or None when most groups carry signal (mean share < 0.5)."""
    trl = logs.series("frac_reward_zero_std")
    own = zs.zero_signal_by_step(logs)
    in_run = zs.dynamic_sampling_in_run(logs)
    s = own or ([] if in_run is not None else trl)
    if not s:
        return None
    mean = statistics.fmean(v for _, v in s)
    if mean < 0.5:
        return None
    qname, q = _quality(logs)
    evidence = [f"{'groups with equal rewards (from the logged completions)' if own else 'frac_reward_zero_std'} "
                f"averaged {mean:.2f} over {len(s)} logs (threshold 0.5); last {s[-1][1]:.2f} at step {s[-1][0]}"]
    if own and trl and in_run is None:
        t = statistics.fmean(v for _, v in trl)
        if abs(t - mean) > 0.2:
            evidence.append(f"TRL's frac_reward_zero_std averaged {t:.2f}: it misses groups of equal rewards whose "
                            "float32 std is not exactly zero")
    q_end = _last_quarter(q) if q else 0.0
    q_start = statistics.fmean(v for _, v in q[:3]) if q else 0.0
    q_first = q[0][1] if q else 0.0
    filter_change, filter_cmd = _filter(logs)
    evidence.append(f"{qname} mean {q_start:.3f} at the start, {q_end:.3f} at the end")
    return _ZeroSignal(logs, trl, own, in_run, s, mean, qname, q, q_start, q_end, _last_quarter(s), q_first, evidence,
                       filter_change, filter_cmd)


def _last_quarter(series: list[tuple[int, float]]) -> float:
    """The mean of a series' last quarter (at least its last value): where a run ended up."""
    return statistics.fmean(v for _, v in series[-max(1, len(series) // 4):])


def _advise(z: _ZeroSignal, why: str, offline: str, skill: bool = True) -> tuple[str, dict]:
    """The recommendation: dynamic sampling first where it fits, else the offline fix with the reason."""
    if z.in_run is not None:
        return (f"{why} {offline} The run already samples dynamically: its trained batches still hold groups "
                "without signal, the refill's filler (see the refill finding).", z.filter_change)
    ds = zs.dynamic_sampling_advice(z.mean) if skill else None
    if ds is None:
        reason = zs.no_dynamic_sampling_because(z.mean) if skill else (
            "Dynamic sampling cannot help: it keeps the groups whose rewards differ, and here the model's answers "
            "are never right, so none differ in correctness.")
        return f"{why} {offline} {reason}", z.filter_change
    return f"{why} {ds[0]} The offline alternative: {offline[0].lower()}{offline[1:]}", ds[1]


def _saturated(z: _ZeroSignal) -> Finding | None:
    if z.q_end >= 0.9:
        rec, change = _advise(z, "The model already solves most of these prompts: most groups are all-correct.",
                              f"Keep only prompts it solves sometimes: {z.filter_cmd} drops the always-solved ones; "
                              "or use harder data.")
        return Finding("no_learning_signal", "No learning signal: the dataset is saturated (too easy)", "critical",
                       z.evidence, rec, brief_change=change, cause="saturated")
    return None


def _collapsed(z: _ZeroSignal) -> Finding | None:
    # The first log is the closest look at the base model: TRL's metric averages every step since the start,
    # while the logged completions are only the last step's.
    first = (z.trl or z.own)[0]
    total = z.logs.series("reward")
    total_fell = bool(total) and total[0][1] > 0 and statistics.fmean(v for _, v in total[-3:]) <= 0.5 * total[0][1]
    if z.q_first > 0 and z.q_end < z.q_first and z.share_end >= 0.8 and (first[1] <= 0.5 or total_fell):
        return Finding("no_learning_signal", "No learning signal: the run lost it (the policy collapsed)", "critical",
                       z.evidence + [f"over the last quarter of the logs the share of equal-reward groups "
                                     f"averaged {z.share_end:.2f} (collapsed at 0.8 or more)",
                                     f"at the first log (step {first[0]}) the share of equal-reward groups was "
                                     f"{first[1]:.2f} and {z.qname} {z.q_first:.3f}"
                                     + (f", the reward {total[0][1]:.3f} (now {total[-1][1]:.3f})" if total else "")
                                     + ": the model had signal, training lost it"],
                       "Training broke a policy that had signal: lower the learning rate (a tenth) and restart "
                       "from the base model or the last checkpoint before the collapse.",
                       brief_change=_scaled(z.logs, "learning_rate", 0.1, "divide grpo.learning_rate by 10"),
                       cause="collapsed")
    return None


# A learning rate at or above this breaks a language model's policy within a few steps (LoRA trains at 1e-5 to
# 2e-4, full fine-tuning at 5e-7 to 1e-5): a model that never succeeds at such a rate says nothing of its skill.
HOT_LEARNING_RATE = 1e-3


def _too_hot(z: _ZeroSignal) -> Finding | None:
    lr = _current(z.logs, "learning_rate")
    if not (isinstance(lr, (int, float)) and lr >= HOT_LEARNING_RATE and z.q_end <= 0.1):
        return None
    return Finding("no_learning_signal", f"No learning signal: the learning rate {lr:g} is too high to learn at",
                   z.severity, [*z.evidence, f"grpo.learning_rate is {lr:g}, at or above {HOT_LEARNING_RATE:g}: a rate "
                                "this high breaks the policy within a few steps, whatever the model can do"],
                   "Lower the learning rate first (the recipe: 5e-7 full fine-tuning, 1e-5 LoRA) and restart from the "
                   "base model. Only if the model still never succeeds at such a rate, filter the data to prompts it "
                   "solves sometimes or teach the task with SFT first.",
                   brief_change=_scaled(z.logs, "learning_rate", 0.001, "the recipe's rate"), cause="learning_rate")


def _too_hard(z: _ZeroSignal) -> Finding | None:
    if z.q_end <= 0.1:
        skill = z.q_start > ZERO_RATE or max((v for _, v in z.q), default=0.0) > ZERO_RATE
        rec, change = _advise(z, "The model rarely or never succeeds: most groups are all-wrong." if skill else
                              f"The model never succeeds ({z.qname} at most {ZERO_RATE} throughout): a zero base "
                              "rate.", f"Filter the dataset to prompts the model solves sometimes ({z.filter_cmd}, "
                              "then point dataset.path at it). If it never solves them, SFT first: GRPO sharpens a "
                              "skill, it does not install one.", skill=skill)
        return Finding("no_learning_signal", "No learning signal: the model rarely or never succeeds", z.severity,
                       z.evidence, rec, brief_change=change, cause="too_hard")
    return None


def _polarised(z: _ZeroSignal) -> Finding:
    rec, change = _advise(z, "Most prompts are always solved or never solved: those groups give every completion "
                          "the same reward.", f"Keep the prompts the model solves sometimes ({z.filter_cmd}, then "
                          "point dataset.path at it).")
    return Finding("no_learning_signal", "Little learning signal: most prompts are always solved or never solved",
                   z.severity, z.evidence, rec, brief_change=change, cause="polarised")


# The causes of no_learning_signal, in the order they are told apart; the first that fits names the finding, and
# ``_polarised`` always fits.
NO_SIGNAL_CAUSES = (_saturated, _collapsed, _too_hot, _too_hard, _polarised)


EXHAUSTED_SHARE = 0.5   # the refill ran short in at least this share of the logs: "most steps"


def refill_exhausted(logs: RunLogs) -> Finding | None:
    """A run with dynamic sampling whose refill ran out of rounds in most logs: ``dynamic_sampling/filler_groups``
    > 0 in ≥ half the log records (those batches still trained zero-signal groups, at advantage 0). The fix:
    more rounds, sized from the generated zero-signal share (``dynamic_sampling/zero_signal_frac``) by
    ``zero_signal.max_rounds_for``, where that raises the run's max_rounds; else a different data mix, harder
    when the zero-signal groups are mostly all-solved, easier when mostly all-failed (from the logged
    completions' correctness, else from the quality level).
    Guard: a refill that filled the batch in most logs is not flagged; an occasional short batch is normal."""
    filler = logs.series("dynamic_sampling/filler_groups")
    if not filler:
        return None
    short = sum(v > 0 for _, v in filler)
    if short / len(filler) < EXHAUSTED_SHARE:
        return None
    cur = (zs.dynamic_sampling_in_run(logs) or {}).get("max_rounds")
    evidence = [f"the refill ran out of rounds in {short} of {len(filler)} logs ({short / len(filler):.0%}; "
                f"threshold {EXHAUSTED_SHARE:.0%}): dynamic_sampling/filler_groups averaged "
                f"{statistics.fmean(v for _, v in filler):.2f} zero-signal groups per batch, trained at advantage 0"]
    rounds = logs.series("dynamic_sampling/rounds_used")
    if rounds:
        evidence.append(f"dynamic_sampling/rounds_used averaged {statistics.fmean(v for _, v in rounds):.2f} extra "
                        "rounds" + (f" (max_rounds {cur})" if isinstance(cur, int) else ""))
    gen = logs.series("dynamic_sampling/zero_signal_frac")
    z = statistics.fmean(v for _, v in gen) if gen else None
    if z is not None:
        evidence.append(f"dynamic_sampling/zero_signal_frac averaged {z:.2f}: a generation round keeps "
                        f"{1 - z:.0%} of its groups")
    qname, q = _quality(logs)
    solved = zs.solved_share_of_flat_groups(logs, qname) if qname != "reward" else None
    if solved is not None:
        easy = solved[0] >= 0.5
        evidence.append(f"of {solved[1]} zero-signal groups in the logged completions, {solved[0]:.0%} are all "
                        f"solved ({qname} ≥ 0.5)")
    else:
        easy = bool(q) and statistics.fmean(v for _, v in q[-max(1, len(q) // 4):]) >= 0.5
    filter_change, filter_cmd = _filter(logs)
    mix = (f"Change the data mix: the groups without signal are mostly {'all solved' if easy else 'all failed'}, "
           f"so {'add harder prompts' if easy else 'add easier prompts'} or drop the "
           f"{'always' if easy else 'never'}-solved ones ({filter_cmd})"
           + ("." if easy else "; if the model rarely solves any, SFT first."))
    need = zs.max_rounds_for(z) if z is not None else None
    if need is not None and (not isinstance(cur, int) or need > cur):
        change = {"dynamic_sampling": {"max_rounds": need}}
        rec = (f"Give the refill more rounds: `{zs.snippet(change)}` in the brief (at this share a batch needs about "
               f"{1 / (1 - z):.1f} rounds; {need} extra allows twice that). Or: {mix[0].lower()}{mix[1:]}")
    else:
        change = filter_change
        rec = (f"{mix} More rounds would not do: " + (zs.no_dynamic_sampling_because(z) if need is None else
               f"max_rounds {cur} already allows twice the rounds this share needs on average."))
    return Finding("refill_exhausted", "Dynamic sampling ran out of refill rounds in most steps", "warning",
                   evidence, rec, brief_change=change)


def entropy_collapse(logs: RunLogs) -> Finding | None:
    """Entropy falls below 30% of its early level while quality stalls (late-early gain < 0.05).
    Guard: entropy falling *with* rising quality is normal sharpening and is not flagged. Evidence from the
    completions: distinct completions per group, and repeated n-grams."""
    w = _windows(logs.series("entropy"))
    qname, q = _quality(logs)
    r = _windows(q)
    if not w or not r:
        return None
    _, _, e0, e1 = w
    _, _, r0, r1 = r
    if e0 <= 0 or e1 / e0 >= 0.3 or r1 - r0 >= 0.05:
        return None
    evidence = [f"entropy fell from {e0:.3f} to {e1:.3f} ({e1 / e0:.0%} of its early level; threshold 30%)",
                f"{qname} mean {r0:.3f} → {r1:.3f} (gain < 0.05)"]
    cw = logs.completion_windows
    if cw:
        early, late = cw
        evidence.append(f"distinct completions per group: {comp.distinct_share(early):.0%} → "
                        f"{comp.distinct_share(late):.0%} (steps {early.steps[0]}–{early.steps[-1]} vs "
                        f"{late.steps[0]}–{late.steps[-1]})")
        evidence.append(f"repeated {comp.REPETITION_NGRAM}-grams: {comp.mean_repetition(early):.0%} → "
                        f"{comp.mean_repetition(late):.0%} of each completion")
        if late.example:
            evidence.append(f"a late completion: {late.example[:120]!r}")
    return Finding("entropy_collapse", "Entropy collapsed while quality stalled", "critical", evidence,
                   "Switch to DAPO (clip-higher keeps low-probability tokens explorable), and lower the learning "
                   "rate: the policy stopped exploring before it learned the task.", variant="dapo",
                   brief_change={**_variant_change("dapo"), **_scaled(logs, "learning_rate", 0.5,
                                                                      "halve grpo.learning_rate")})


DEGENERATE_REPETITION = 0.3   # share of a completion's n-grams that repeat
LONG_CHARS = 200              # "long" completions: the failure is about long chains of thought ...
GROWN_CHARS = 100             # ... or completions that grew to 1.5× their early length and past this


def degenerate_length(logs: RunLogs) -> Finding | None:
    """Long completions (≥ 200 characters on average at the end, or ≥ 100 and 1.5× their early length) that
    repeat themselves (≥ 30% repeated n-grams, up ≥ 15 points from the start) while quality stalls (gain
    < 0.05).
    Guard: short answers, or repetition that came with rising quality, are not flagged."""
    cw = logs.completion_windows
    qname, q = _quality(logs)
    r = _windows(q)
    if not cw or not r:
        return None
    early, late = cw
    rep0, rep1, length = comp.mean_repetition(early), comp.mean_repetition(late), comp.mean_length(late)
    long = length >= LONG_CHARS or (length >= GROWN_CHARS and length >= 1.5 * comp.mean_length(early))
    _, _, q0, q1 = r
    if not long or rep1 < DEGENERATE_REPETITION or rep1 - rep0 < 0.15 or q1 - q0 >= 0.05:
        return None
    return Finding("degenerate_length", "Long completions degenerate into repetition", "warning",
                   [f"repeated {comp.REPETITION_NGRAM}-grams: {rep0:.0%} → {rep1:.0%} of each completion "
                    f"(threshold {DEGENERATE_REPETITION:.0%})",
                    f"mean completion length {comp.mean_length(early):.0f} → {length:.0f} characters",
                    f"{qname} mean {q0:.3f} → {q1:.3f} (gain < 0.05)",
                    f"a late completion ends: {late.example[-120:]!r}"],
                   "Switch to DAPO (token-level loss, clip-higher, truncated completions masked).", variant="dapo",
                   brief_change=_variant_change("dapo"))


def length_reward_coupling(logs: RunLogs) -> Finding | None:
    """Mean completion length grows ≥ 30% (or ≥ 15% with a within-group length–advantage correlation ≥ 0.5
    in the logged completions, or with a length reward rising ≥ 0.05) while correctness is flat (gain < 0.02).
    Guard: length growth with rising correctness is not flagged (longer reasoning can be right)."""
    length, unit = _length_series(logs)
    w = _windows(length)
    cor = _names(logs, "correctness")
    c = _windows(logs.series(f"rewards/{cor[0]}/mean")) if cor else None
    if not w or not c:
        return None
    _, _, l0, l1 = w
    _, _, c0, c1 = c
    cw = logs.completion_windows
    corr = comp.length_advantage_correlation(cw[1]) if cw else None
    pays = []
    for n in _names(logs, "length"):
        lw = _windows(logs.series(f"rewards/{n}/mean"))
        if lw and lw[3] - lw[2] >= 0.05:
            pays.append(f"{n} (a length reward) mean {lw[2]:.3f} → {lw[3]:.3f}: the run is paid for length")
    backed = (corr is not None and corr[0] >= 0.5) or bool(pays)
    grows = l0 > 0 and (l1 / l0 >= 1.3 or (l1 / l0 >= 1.15 and backed))
    if not grows or c1 - c0 >= 0.02:
        return None
    evidence = [f"mean length {l0:.1f} → {l1:.1f} {unit} (+{l1 / l0 - 1:.0%}; threshold +30%, or +15% with a "
                "length–advantage correlation ≥ 0.5 or a rising length reward)",
                f"{cor[0]} mean {c0:.3f} → {c1:.3f} (gain < 0.02)"] + pays
    if corr is not None:
        evidence.append(f"within-group correlation of length and advantage at the end: {corr[0]:+.2f} over "
                        f"{corr[1]} groups (longer completions are the ones rewarded)")
    rec = "Switch to Dr.GRPO (no length normalisation bias, no std scaling), and consider a length_penalty."
    if pays:
        rec = ("Stop paying for length: drop or cap the length reward (or make it a penalty beyond a budget, "
               "e.g. the length_penalty reward), and switch to Dr.GRPO (no length normalisation bias).")
    return Finding("length_reward_coupling", "Completions grow longer while correctness is flat", "warning",
                   evidence, rec, variant="dr_grpo", brief_change=_variant_change("dr_grpo"))


HELD_OUT_GAIN = 0.05   # a held-out correctness gain this large clears a rising format part of suspicion


def reward_hacking(logs: RunLogs) -> Finding | None:
    """Two signals. (a) The format reward rises ≥ 0.2, or ≥ 0.05 into saturation (≥ 0.95), while correctness
    barely moves: its gain is below 0.02 and below a fifth of the format's gain. (b) With held-out evaluations
    (dataset.eval_path, ≥ 3 of them): training quality rises ≥ 0.1 while held-out quality gains less than
    max(0.02, a quarter of it) from its baseline before the first step to the last quarter of the evaluations.
    Guard: (a) needs both a format and a correctness reward; format rising *with* correctness (the demo:
    format +0.53, correctness +0.23) is healthy, and so is a format that was saturated from the start, or any
    rise of held-out correctness of ≥ 0.05 (the format is then carrying real answers); (b) held-out quality
    rising along with training is healthy."""
    fmt, cor = _names(logs, "format"), _names(logs, "correctness")
    format_hack = None
    if fmt and cor:
        f, c = _windows(logs.series(f"rewards/{fmt[0]}/mean")), _windows(logs.series(f"rewards/{cor[0]}/mean"))
        if f and c:
            _, _, f0, f1 = f
            _, _, c0, c1 = c
            rises = f1 - f0 >= 0.2 or (f1 >= 0.95 and f1 - f0 >= 0.05)
            if rises and c1 - c0 < max(0.02, 0.2 * (f1 - f0)):
                format_hack = [f"{fmt[0]} mean {f0:.3f} → {f1:.3f}",
                               f"{cor[0]} mean {c0:.3f} → {c1:.3f} (gain below max(0.02, a fifth of the format's "
                               "gain))"]
    qname, q = _quality(logs)
    held = logs.eval_series(f"rewards/{qname}/mean") if qname != "reward" else logs.eval_series("reward")
    gap = None
    r = _windows(q)
    if len(held) >= 3:
        h0 = held[0][1]
        tail = held[-max(1, len(held) // 4):]
        h1 = statistics.fmean(v for _, v in tail)
        if h1 - h0 >= HELD_OUT_GAIN:
            format_hack = None  # held-out correctness rose: the format is carrying real answers, not replacing them
        t0, t1 = (r[2], r[3]) if r else (0.0, 0.0)
        if t1 - t0 >= 0.1 and h1 - h0 < max(0.02, 0.25 * (t1 - t0)):
            gap = [f"training {qname} mean {t0:.3f} → {t1:.3f}",
                   f"held-out {qname} {h0:.3f} at step {held[0][0]} → {h1:.3f} "
                   + (f"at step {tail[0][0]}" if len(tail) == 1 else f"over steps {tail[0][0]}–{tail[-1][0]}")
                   + f" ({len(held)} evaluations; gain below max(0.02, a quarter of training's))"]
    if format_hack and (unpaid := _unpaid(logs, cor)):
        # Nothing in the reward pays for correctness: the run can learn the format and nothing else. Not a
        # suspicion, and it wastes the rest of the run: critical (the watchdog stops it).
        return Finding("reward_hacking", "The format part rises while correctness does not, and nothing pays for "
                       "correctness", "critical",
                       format_hack + [f"{', '.join(unpaid)} weigh{'s' if len(unpaid) == 1 else ''} 0 in the brief: "
                                      "the run is paid for the format alone"] + (gap or []),
                       f"Give {unpaid[0]} a weight (the recipe: correctness 1.0, format 0.2), then inspect and review "
                       "again: a reward that pays only for the format teaches the format and nothing else.",
                       brief_change={"rewards": f"set {unpaid[0]}'s weight to 1.0"})
    if format_hack:
        return Finding("reward_hacking", "The format part rises while correctness does not (reward hacking "
                       "suspicion)", "warning", format_hack + (gap or []),
                       "Read the logged completions: the model may be satisfying the format without solving. Fix "
                       "the reward (lower the format weight, or make correctness require the format), then inspect "
                       "and review again. No variant fixes a broken reward; if completion length rises with the "
                       "reward, that is reported on its own (length_reward_coupling, Dr.GRPO).")
    if gap:
        return Finding("reward_hacking", "Training reward rises but held-out correctness does not", "warning", gap,
                       "The model fits the training prompts (memorises them) or exploits the reward on them. Read "
                       "the logged completions: if they are right only on training prompts, train on more and more "
                       "varied prompts; if they game the reward, fix the reward and inspect again. No variant "
                       "fixes this.", cause="held_out_gap")
    return None


def truncation(logs: RunLogs) -> Finding | None:
    """completions/clipped_ratio mean ≥ 0.2 over the last quarter: many completions hit max_completion_length.
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
                   "Raise max_completion_length if the answers need the room; if the long completions are "
                   "degenerate, DAPO masks truncated completions out of the loss.", variant="dapo",
                   brief_change={**_scaled(logs, "max_completion_length", 2, "double grpo.max_completion_length")})


def kl_blowup(logs: RunLogs) -> Finding | None:
    """kl (logged when beta > 0) ends ≥ 10× its early level, and above 1.0, or above 0.1 without a quality gain
    of ≥ 0.05.
    Guard: small absolute KL (< 0.1) is not flagged however it grows, nor a moderate one that bought a real
    gain in quality (learning a new behaviour moves the policy away from the reference)."""
    w = _windows(logs.series("kl"))
    if not w:
        return None
    _, _, k0, k1 = w
    qname, q = _quality(logs)
    r = _windows(q)
    gain = r[3] - r[2] if r else 0.0
    if k1 < 10 * max(k0, 1e-6) or k1 < 0.1 or (k1 <= 1.0 and gain >= 0.05):
        return None
    change = _scaled(logs, "learning_rate", 0.5, "halve grpo.learning_rate")
    change["grpo"].update(_scaled(logs, "beta", 2, "double grpo.beta")["grpo"])
    return Finding("kl_blowup", "KL to the reference model is blowing up", "critical",
                   [f"kl {k0:.4f} → {k1:.4f} (≥ 10×, and > 1.0 or > 0.1 without a quality gain)",
                    f"{qname} mean moved {gain:+.3f}"],
                   "Lower the learning rate and raise beta; check for a reward that pays for degenerate text.",
                   brief_change=change)


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
                   brief_change=_scaled(logs, "learning_rate", 0.5, "halve grpo.learning_rate"))


def moe_without_gspo(logs: RunLogs) -> Finding | None:
    """The run's model is mixture-of-experts and the run did not use sequence-level importance sampling."""
    lock = logs.brief_lock or {}
    cfg = lock.get("grpo_config") or {}
    model = ((lock.get("resolved") or {}).get("model") or {}).get("name_or_path", "")
    if not model:
        return None
    from grpo_rlvr.brief.model_probe import is_mixture_of_experts, read_config

    if not is_mixture_of_experts(model, read_config(Path(model))):
        return None
    if cfg.get("importance_sampling_level") == "sequence":
        return None
    return Finding("moe_without_gspo", "Mixture-of-experts model trained without GSPO", "critical",
                   [f"model {model} is MoE; importance_sampling_level is {cfg.get('importance_sampling_level', 'token')}"],
                   "Use GSPO (sequence-level importance ratios).", variant="gspo",
                   brief_change={"variant": {"name": "gspo"}})


SAMPLER_LOGP = "sampling/sampling_logp_difference/mean"   # TRL: mean |log p_vLLM - log p_policy| per token
SAMPLER_MISMATCH = 0.05       # nats per token: same weights in fp32 give ≈ 0.001, bf16 against fp32 ≈ 0.01


def sampler_mismatch(logs: RunLogs) -> Finding | None:
    """vLLM sampled from a different distribution than the policy being trained: TRL's per-token log-probability
    difference between the two (``sampling/sampling_logp_difference/mean``, logged with vLLM) averaged ≥ 0.05 over
    the last quarter of the logs, or grew ≥ 5× from its start to ≥ 0.02 (the engine keeps old weights: the weight
    sync is not reaching it).
    Guard: a small, steady difference is rounding (fp32 ≈ 0.001, bf16 against fp32 ≈ 0.01) and TRL's
    importance-sampling correction already weighs it."""
    s = logs.series(SAMPLER_LOGP)
    if not s:
        return None
    late = s[-max(1, len(s) // 4):]
    level = statistics.fmean(v for _, v in late)
    early = statistics.fmean(v for _, v in s[:3])
    grew = len(s) >= MIN_RECORDS_FOR_TREND and level >= 0.02 and level >= 5 * max(early, 1e-9)
    if level < SAMPLER_MISMATCH and not grew:
        return None
    ratio = logs.series("sampling/importance_sampling_ratio/min")
    evidence = [f"{SAMPLER_LOGP} averaged {level:.4f} over the last {len(late)} logs (threshold {SAMPLER_MISMATCH}; "
                f"{early:.4f} at the start)"]
    if ratio:
        evidence.append(f"sampling/importance_sampling_ratio/min reached {min(v for _, v in ratio):.3f} (1.0 means "
                        "the two agree)")
    cause = "growing" if grew else "level"
    return Finding("sampler_mismatch", "vLLM samples from a different policy than the one being trained",
                   "critical" if grew else "warning", evidence,
                   ("The difference grows as training moves the policy: the weight sync is not reaching vLLM (stale "
                    "weights). Check the trainer's log for sync errors, and on vLLM's CPU build that the rendered "
                    "train.py is unedited (it keeps the weights for the sync)." if grew else
                    "Make vLLM compute in the trainer's precision (model.dtype), and keep TRL's "
                    "vllm_importance_sampling_correction on (its default) so the ratio weighs the difference."),
                   cause=cause)


COLLAPSE_CHANCE = 1e-6   # how unlikely "every sample of the zero logs wrong" must be at the start's rate


def _samples_per_log(logs: RunLogs) -> int:
    """The fewest completions a training log can average over: per-device batch × accumulation × logging steps
    from the brief lock (one process: a lower bound); one group of 8 without a lock."""
    cfg = (logs.brief_lock or {}).get("grpo_config") or {}
    try:
        n = int(cfg.get("per_device_train_batch_size", 8)) * int(cfg.get("gradient_accumulation_steps", 1)) \
            * int(cfg.get("logging_steps", 1))
    except (TypeError, ValueError):
        n = 8
    return max(8, n)


def correctness_collapsed(logs: RunLogs) -> Finding | None:
    """A correctness reward that started above zero and fell to exactly zero: a destroyed policy, judged from the
    first logs (no trend window). Its first log (or the mean of its first two) is above ``ZERO_RATE`` and its last
    two or more logs are 0, and that many zeros are not chance at the starting rate: every sample of those logs
    wrong has probability ``(1 - start) ** samples`` below ``COLLAPSE_CHANCE`` (samples: the fewest the logs
    averaged, ``_samples_per_log``; for a partial-credit reward the start is a lower bound of a sample's chance of
    scoring, so the test is conservative). With a KL to the reference that rose meanwhile, the evidence says so.
    Guard: a healthy run at a low rate logs a zero now and then; two logs in a row of all-wrong samples that the
    starting rate makes unlikely are not chance. A run whose correctness started at zero is not judged here, nor a
    correctness reward that weighs 0 (nothing pays for it: its fall is the paid rewards' doing, which their own
    findings name, such as entropy_collapse for a reward that pays one answer)."""
    weights = _lock_weights(logs)
    cor = [n for n in _names(logs, "correctness") if weights.get(n, 1.0) != 0]   # what training pays for
    if not cor:
        return None
    q = logs.series(f"rewards/{cor[0]}/mean")
    if len(q) < 3:
        return None
    start = statistics.fmean(v for _, v in q[:2]) if q[1][1] > 0 else q[0][1]
    zeros = 0
    for _, v in reversed(q):
        if v > 1e-12:
            break
        zeros += 1
    if start <= ZERO_RATE or zeros < 2:
        return None
    n = _samples_per_log(logs) * zeros
    chance = (1 - min(start, 1.0)) ** n
    if chance >= COLLAPSE_CHANCE:
        return None
    first_zero = q[-zeros][0]
    evidence = [f"{cor[0]} mean {start:.3f} at the start (step {q[0][0]}), 0 in each of the last {zeros} logs "
                f"(from step {first_zero} to {q[-1][0]})",
                f"at the starting rate, at least {n} samples all wrong has probability {chance:.1e} (threshold "
                f"{COLLAPSE_CHANCE:g}): the policy lost the skill it had"]
    kl = logs.series("kl")
    if len(kl) >= 2 and kl[-1][1] > kl[0][1]:
        evidence.append(f"kl to the reference {kl[0][1]:.4f} (step {kl[0][0]}) → {kl[-1][1]:.4f} (step {kl[-1][0]})")
    fmt = _names(logs, "format")
    if fmt:
        f = logs.series(f"rewards/{fmt[0]}/mean")
        evidence.append(f"{fmt[0]} mean {f[0][1]:.3f} → {f[-1][1]:.3f} meanwhile")
    return Finding("correctness_collapsed", "Correctness fell to zero after starting above it (a destroyed policy)",
                   "critical", evidence,
                   "Training broke a policy that solved some of these: lower the learning rate (a tenth) and start "
                   "again from the base model (or a checkpoint from before the fall); more steps at this rate will "
                   "not bring it back.",
                   brief_change=_scaled(logs, "learning_rate", 0.1, "divide grpo.learning_rate by 10"))


# nats per token: far from the reference at any length of run. The demo's healthy runs (tiny model, lr 2e-4) log up
# to 0.30 at a single step and 0.14 over five; a learning rate that destroyed the policy (3e-3) logged 2.6 at its
# second step; on real models a per-token KL of 1 is a different policy.
KL_JUMP = 1.0


def kl_jump(logs: RunLogs) -> Finding | None:
    """The latest kl (logged when beta > 0) is at least ``KL_JUMP`` nats per token: the policy jumped far from the
    reference, judged from any log (``kl_blowup`` judges the trend of a longer run). A warning: the watchdog reports
    it and does not stop for it (a destroyed policy shows in its correctness: ``correctness_collapsed``).
    Guard: healthy runs, even at the demo's high learning rate, stay well below it; a finding that clears when
    the KL falls back is said to have gone."""
    kl = logs.series("kl")
    if not kl or kl[-1][1] < KL_JUMP:
        return None
    first = next(((s, v) for s, v in kl if v >= KL_JUMP), kl[-1])
    qname, q = _quality(logs)
    evidence = [f"kl {kl[-1][1]:.3f} at step {kl[-1][0]} (threshold {KL_JUMP:g} nat per token); first above it at "
                f"step {first[0]} ({first[1]:.3f}), {kl[0][1]:.4f} at the first log (step {kl[0][0]})"]
    if q:
        evidence.append(f"{qname} mean {q[0][1]:.3f} (step {q[0][0]}) → {q[-1][1]:.3f} (step {q[-1][0]})")
    change = _scaled(logs, "learning_rate", 0.1, "divide grpo.learning_rate by 10")
    return Finding("kl_jump", "KL to the reference jumped (the policy moved far in a few steps)", "warning",
                   evidence, "The learning rate moves the policy too far per step: lower it (a tenth) and start again "
                   "from the base model or a checkpoint from before the jump.", brief_change=change)


def unscorable_samples(logs: RunLogs) -> Finding | None:
    """Training left samples unscored (``records/unscorable.py``: a row whose ground-truth column is missing or bad,
    a user reward that raised on it), each left out of its step and named by dataset row in
    ``output/unscorable.json``. A warning naming the rows; critical (the watchdog stops the run) when their share
    of the samples so far is above ``watch.max_unscorable`` (default 5%) with 95% confidence, each group of
    ``num_generations`` samples counting as one draw.
    Guard: one bad row met early in a run (its whole group left out) is named, not stopped for: its share is not
    yet evidence that more than a few per cent of the data is bad."""
    from grpo_rlvr.records.unscorable import DEFAULT_MAX_UNSCORABLE, share_above, summary

    tally = logs.unscorable
    if not tally or not (tally.get("unscorable") or tally.get("held_out_unscorable")):
        return None
    limit = logs.max_unscorable
    if limit is None:
        limit = ((((logs.brief_lock or {}).get("resolved") or {}).get("watch") or {})
                 .get("max_unscorable", DEFAULT_MAX_UNSCORABLE))
    above = share_above(tally, float(limit))
    evidence = summary(tally, rows=5)
    if tally.get("held_out_unscorable"):
        evidence.append(f"{tally['held_out_unscorable']} held-out samples were left out of their evaluations too")
    if above:
        evidence.append(f"their share is above watch.max_unscorable ({float(limit):g}) with 95% confidence (each "
                        f"group of {tally.get('num_generations')} samples one draw): the run trains on what is left")
    n = tally.get("unscorable", 0)
    return Finding("unscorable_samples", f"{n} training sample{'s' if n != 1 else ''} no reward could score, left "
                   "out of their steps", "critical" if above else "warning", evidence,
                   "Fix or drop the rows named (every one, with the reason, in output/unscorable.json): `grpo-rlvr "
                   "validate BRIEF` checks every row's columns through the rewards' own checks before training; a "
                   "user reward should return None (not applicable) or 0 for what it cannot score instead of "
                   "raising. Their samples were never given a made-up score.")


# Order matters among findings of one severity: the first with a variant is recommended. Length–reward
# coupling comes before degenerate repetition, because a reward that pays for length is the cause the
# repetition is a symptom of.
def _tool_run(logs: RunLogs) -> bool:
    """The run gave the model tools: its lock names them, or TRL logged its tool metrics."""
    lock = logs.brief_lock or {}
    return bool((lock.get("resolved") or {}).get("tools")) or bool(logs.series("tools/call_frequency"))


def tools_never_called(logs: RunLogs) -> Finding | None:
    """A run with tools whose policy calls them (almost) never: tools/call_frequency (calls per rollout, TRL's) under
    0.02 over the last quarter of at least 8 logs.
    Guard: a run without tools; too few logs to judge."""
    s = logs.series("tools/call_frequency")
    if not _tool_run(logs) or len(s) < MIN_RECORDS_FOR_TREND:
        return None
    late = _last_quarter(s)
    if late >= 0.02:
        return None
    return Finding("tools_never_called", "The policy never calls its tools", "warning",
                   [f"tools/call_frequency averaged {late:.3f} calls per rollout over the last quarter of "
                    f"{len(s)} logs"],
                   "The model does not use the tools it was given, so GRPO has no tool use to reinforce: warm it up "
                   "on demonstrations that call them (SFT), check that the prompt or system message says the tools "
                   "exist, and that the chat template renders their schema (grpo-rlvr validate).")


def tools_abandoned(logs: RunLogs) -> Finding | None:
    """A run whose policy called its tools at the start and gives them up while its correctness does not rise:
    tools/call_frequency's first logs average at least 0.1 calls per rollout and its last quarter at most half of
    that (and 0.05 lower), and the paid correctness reward's last quarter is not above its first logs. The rollouts
    that call the tools earn less than those that do not, so GRPO trains the calls away: most often a format reward
    that pays a direct answer's shape as much as a tool rollout's, or tool replies the model misreads.
    Guard: a run that stops calling a tool it no longer needs (its correctness rose meanwhile); a run without tools
    or with too few logs to judge; one that never called them (tools_never_called's)."""
    if not _tool_run(logs):
        return None
    w = _windows(logs.series("tools/call_frequency"))
    if not w or w[2] < 0.1 or w[3] > w[2] / 2 or w[2] - w[3] < 0.05:
        return None
    weights = _lock_weights(logs)
    cor = [n for n in _names(logs, "correctness") if weights.get(n, 1.0) != 0]
    evidence = [f"tools/call_frequency {w[2]:.3f} → {w[3]:.3f} calls per rollout (first logs → last quarter)"]
    if cor:
        q = _windows(logs.series(f"rewards/{cor[0]}/mean"))
        if q and q[3] > q[2]:
            return None
        if q:
            evidence.append(f"{cor[0]} mean {q[2]:.3f} → {q[3]:.3f}: answering without the tools is not better")
    fmt = [n for n in _names(logs, "format") if weights.get(n, 1.0) != 0]
    if fmt:
        f = _windows(logs.series(f"rewards/{fmt[0]}/mean"))
        if f and f[3] > f[2]:
            evidence.append(f"{fmt[0]} mean {f[2]:.3f} → {f[3]:.3f} (weight {weights.get(fmt[0], 1.0):g}): the shape "
                            "of an answer is what rose")
    return Finding("tools_abandoned", "The policy stops calling its tools", "warning", evidence,
                   "Rollouts that call the tools earned less than rollouts that answer directly, so training took the "
                   "calls away. Read the tool rollouts of the inspection (grpo-rlvr review): if they fail after a "
                   "right reply (the answer miscopied, text after it), warm the model up on more demonstrations that "
                   "call the tools and answer from the reply; if direct answers are paid for their shape, lower the "
                   "format reward's weight so that only a right answer pays well.")


def tool_errors_rising(logs: RunLogs) -> Finding | None:
    """tools/failure_frequency (the share of calls that raised, TRL's) rises by ≥ 0.1 from the first logs to the last
    quarter and ends ≥ 0.2, or tools/unavailable (rollouts left unscored: a failure outside the model's control) is
    above 0 in most of the last quarter.
    Guard: a flat or falling error share (the model learning its tools' arguments); a run without tools."""
    if not _tool_run(logs):
        return None
    evidence, change = [], {}
    w = _windows(logs.series("tools/failure_frequency"))
    if w and w[3] - w[2] >= 0.1 and w[3] >= 0.2:
        evidence.append(f"tools/failure_frequency {w[2]:.2f} → {w[3]:.2f} (calls that raised, the model's errors)")
    gone = logs.series("tools/unavailable")
    late = gone[-max(3, len(gone) // 4):] if len(gone) >= MIN_RECORDS_FOR_TREND else []
    if late and sum(v > 0 for _, v in late) > len(late) / 2:
        evidence.append(f"tools/unavailable above 0 in {sum(v > 0 for _, v in late)} of the last {len(late)} logs "
                        f"(up to {max(v for _, v in late):g} rollouts a step left unscored: a tool or environment "
                        "failing outside the model's control)")
        change = {"tools": {"call_timeout_s": "raise it if the tools are slow, not down"}}
    if not evidence:
        return None
    return Finding("tool_errors_rising", "Tool errors are rising", "warning", evidence,
                   "Calls that raise are the model's mistakes fed back to it: if they rise, read the logged "
                   "completions for the arguments it sends (a schema the model misreads, a docstring that says too "
                   "little). Rollouts left unscored mean a tool or environment is failing on its own: fix the service "
                   "(or its time limit) before the share of unscored rollouts starves the groups of signal.",
                   brief_change=change)


DETECTORS = (nothing_scored, unscorable_samples, no_learning_signal, correctness_collapsed, kl_jump, refill_exhausted, entropy_collapse,
             length_reward_coupling, degenerate_length, reward_hacking, truncation, kl_blowup, clipping_saturation,
             moe_without_gspo, sampler_mismatch, tools_never_called, tools_abandoned, tool_errors_rising)
