"""``grpo-rlvr preflight``: does the model already succeed *sometimes*? RL amplifies, it does not install.

Samples k completions (k = num_generations) per prompt with the training sampler, scores them, and reports
pass@1, unbiased pass@k, the share of prompts never / always solved, the forecast share of zero-signal groups
(what TRL will log as ``frac_reward_zero_std``), the truncation rate and prompt lengths against the model's
context. A group's signal is split by where it comes from: ``correctness_signal`` (the correctness rewards
differ within the group: some samples right, some wrong) and ``format_only_signal`` (the total varies, the
correctness does not: only format or shaping rewards move, which teaches the format, not the task).

The temperature ladder. When the brief's temperature is outside the GRPO band (no correct sample, or ≥ 90% of
prompts solved by every sample), preflight samples the same prompts with the same seed at other temperatures
before it says so: first the far rung (``LOW_TEMPERATURE`` when nothing was correct: is the skill there at all,
under the sampling noise?; ``HIGH_TEMPERATURE`` when too easy), then, when the far rung is not the same failure,
the midpoint between the brief's temperature and the nearest rung known not to fail that way, halving towards
the brief's temperature. At most ``LADDER_PASSES`` passes past the first, each ``prompts × k`` samples, so
preflight draws at most ``(1 + LADDER_PASSES) × prompts × k`` samples. A rung is in the band when its own
verdict would be ``grpo`` (some sample correct, fewer than 90% of prompts always solved); the recommendation is
the measured in-band rung nearest the brief's temperature, never a rung measured too easy or without a correct
sample, and running preflight again at it draws the same samples (same prompts, seed and temperature).

Verdict: ``grpo`` (in the band at the brief's temperature); ``lower-temperature`` (nothing correct at the brief's
temperature, correct answers lower down: it names the in-band temperature it measured, or says that none it
tried is in the band); ``sft-first`` (no correct sample at any temperature tried); ``too-easy`` (≥ 90% of prompts
always solved; it names a higher in-band temperature it measured, up to ``HIGH_TEMPERATURE``, or says none is).
``--filter OUT`` writes the learnable subset (prompts solved sometimes, plus a share of the rest).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.cpu_time import check_sampling_time
from grpo_rlvr.dataset.rows import load_rows
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.protected_targets import refuse_target
from grpo_rlvr.rewards import from_brief
from grpo_rlvr.rollout.road import roll_out
from grpo_rlvr.rollout.scoring import score_trajectories

TOO_EASY_SHARE = 0.9
LOW_TEMPERATURE = 0.3   # the far rung when nothing is correct at the brief's temperature
HIGH_TEMPERATURE = 1.0  # the far rung when too easy: above 1 a sample takes tokens the model itself deems unlikely
LADDER_PASSES = 3       # sampling passes past the first at most: the far rung, then two halvings


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n samples with c correct (Chen et al., 2021): 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


@dataclass
class PreflightResult:
    verdict: str
    prompts: int
    k: int
    pass_at_1: float
    pass_at_k: float
    never_solved: float
    always_solved: float
    zero_signal_groups: float
    correctness_signal: float        # share of groups whose correctness rewards differ within the group
    format_only_signal: float        # share of groups whose total varies while correctness does not
    truncation_rate: float
    prompt_tokens_max: int
    prompt_tokens_mean: float
    context_length: int | None
    evidence: list[str] = field(default_factory=list)
    filtered: dict | None = None
    temperature: float | None = None      # the brief's, at which the measures above were taken
    ladder: list[dict] = field(default_factory=list)   # each further pass, in order (Rung.to_dict())
    recommended_temperature: float | None = None       # a ladder rung measured in the band; None if none was
    seconds: float = 0.0
    engine: dict = field(default_factory=dict)   # the engine that sampled: name, package, device, settings
    tool_use: dict | None = None   # a brief with tools: the share of samples that called one, and calls a sample

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def format(self) -> str:
        lines = [f"Preflight verdict: {self.verdict.upper()}",
                 f"  {self.prompts} prompts × {self.k} samples: pass@1 {self.pass_at_1:.3f}, pass@{self.k} "
                 f"{self.pass_at_k:.3f}",
                 f"  never solved {self.never_solved:.0%}, always solved {self.always_solved:.0%}, "
                 f"zero-signal groups (forecast frac_reward_zero_std) {self.zero_signal_groups:.0%}",
                 f"  groups with a correctness signal {self.correctness_signal:.0%}, with a format-only signal "
                 f"{self.format_only_signal:.0%}",
                 f"  truncated {self.truncation_rate:.0%}; prompt tokens max {self.prompt_tokens_max}, mean "
                 f"{self.prompt_tokens_mean:.1f}" + (f" (context {self.context_length})" if self.context_length else "")]
        for rung in self.ladder:
            lines.append(f"  at temperature {rung['temperature']:g}: {_rung_text(rung, self.prompts)}")
        if self.engine:
            lines.append(f"  sampled with {_engine_text(self.engine)}")
        if self.tool_use is not None:
            lines.append(f"  tool calls: {self.tool_use['rate']:.0%} of samples called a tool "
                         f"({self.tool_use['calls_per_sample']:.2f} calls a sample)")
        lines += [f"  - {e}" for e in self.evidence]
        if self.filtered:
            lines.append(f"  wrote {self.filtered['rows']} learnable rows to {self.filtered['path']}")
        return "\n".join(lines)


@dataclass
class _Pass:
    """One sampling pass, scored: per prompt, the k samples' solved flags, totals and correctness sums."""

    solved: list[list[bool]]
    totals: list[list[float]]
    correct: list[list[float]]
    truncation_rate: float
    prompt_lengths: list[int]   # each prompt's tokens as the trainer rendered it (chat template, system message)
    engine: dict            # the engine that sampled (rollout.road.Engine.to_dict())
    tool_calls: list[int] = field(default_factory=list)   # each sample's tool calls

    @property
    def counts(self) -> list[int]:
        return [sum(g) for g in self.solved]

    def pass_at_1(self, k: int) -> float:
        return sum(self.counts) / (len(self.solved) * k)


def _sample_and_score(brief, rows, chosen, k, temperature, rewards, correctness, progress, batch_size) -> _Pass:
    """One pass: ``k`` trajectories for each chosen prompt from the run's own trainer (``rollout.road``), at
    ``temperature`` (None: the brief's), scored as training scores them."""
    drawn = roll_out(brief, [rows[i] for i in chosen], k, brief.preflight.seed, temperature=temperature,
                     progress=progress, batch_size=batch_size, rewards=rewards)
    scored = score_trajectories(rewards, brief.reward_weights, drawn.trajectories, drawn.rows)
    solved = [all((res["scores"][c].score or 0) >= 1.0 - 1e-9 for c in correctness) for res in scored]
    correct = [sum(res["scores"][c].score or 0 for c in correctness) for res in scored]
    totals = [res["total"] for res in scored]
    lengths = [len(drawn.trajectories[i * k].prompt_ids) for i in range(len(chosen))]
    return _Pass([solved[i * k:(i + 1) * k] for i in range(len(chosen))],
                 [totals[i * k:(i + 1) * k] for i in range(len(chosen))],
                 [correct[i * k:(i + 1) * k] for i in range(len(chosen))],
                 sum(t.truncated for t in drawn.trajectories) / len(drawn.trajectories), lengths,
                 drawn.engine.to_dict(), [t.tool_calls for t in drawn.trajectories])


def _varies(values: list[float]) -> bool:
    return max(values) - min(values) >= 1e-9


def signal_shares(totals: list[list[float]], correct: list[list[float]]) -> tuple[float, float, float]:
    """(zero-signal, correctness-signal, format-only-signal) shares of groups, from each group's total rewards and
    correctness scores: no signal when the totals are all equal; a correctness signal when the correctness scores
    differ; format-only when the totals differ and the correctness scores do not."""
    n = len(totals)
    zero = sum(not _varies(t) for t in totals) / n
    corr = sum(_varies(c) for c in correct) / n
    fmt = sum(_varies(t) and not _varies(c) for t, c in zip(totals, correct, strict=True)) / n
    return zero, corr, fmt


def preflight(brief_path, prompts: int | None = None, k: int | None = None, filter_out=None, keep_share: float = 0.1,
              progress=None, batch_size: int = 64, allow_cpu: bool = False) -> PreflightResult:
    """Measure the base success rate and route to SFT or GRPO. See the module docstring.

    Args:
        allow_cpu: sample on a CPU even when the estimated time is above ``cpu_time.CPU_LIMIT_S``.
    Raises:
        ConfigError: bad ``prompts`` / ``k`` / ``keep_share``, or the brief has no correctness reward.
        CpuTimeRefused: sampling the brief's model on this CPU would take too long, and ``allow_cpu`` is not set.
    """
    t0 = time.monotonic()
    if filter_out:
        refuse_target(filter_out, "--filter")   # before sampling: the subset never lands on a review or a record
    brief = load_brief(brief_path)
    k = k or brief.preflight.k
    if k < 2:
        raise ConfigError(f"--k: {k}; need at least 2 samples per prompt to see variance")
    if not 0 <= keep_share <= 1:
        raise ConfigError(f"--keep-share: {keep_share} is outside [0, 1]")
    rows = load_rows(brief)
    chosen = _choose_prompts(brief, len(rows), prompts, filter_out)
    rewards, correctness = _correctness_rewards(brief)
    temperature = brief.sampling()["temperature"]
    # the bound: the first pass and every ladder pass
    check_sampling_time(brief, len(chosen) * k * (1 + LADDER_PASSES), allow_cpu, "preflight")

    def sample(at: float | None) -> _Pass:
        return _sample_and_score(brief, rows, chosen, k, at, rewards, correctness, progress, batch_size)

    first = sample(None)
    ladder = climb(temperature, Rung.of(first, k, temperature), lambda t: Rung.of(sample(t), k, t))
    result = _measured(first, k, first.prompt_lengths, brief.model.context_length)
    result.tool_use = tool_use(first.tool_calls) if brief.tools is not None else None
    result.temperature, result.ladder = temperature, [r.to_dict() for r in ladder]
    result.recommended_temperature = recommend(temperature, ladder)
    result.verdict, result.evidence = _verdict(result, brief.sampling())
    if filter_out:
        result.filtered = _write_learnable(brief, rows, chosen, first.counts, k, keep_share, filter_out)
    result.seconds = time.monotonic() - t0
    return result


# --- the temperature ladder --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Rung:
    """One sampling pass at one temperature, as the ladder judges it."""

    temperature: float
    pass_at_1: float
    prompts_solved: int          # prompts with at least one correct sample
    always_solved: float         # share of prompts every sample solved
    correctness_signal: float    # share of groups whose correctness rewards differ
    verdict: str                 # "grpo" (in the band) | "sft-first" (no correct sample) | "too-easy"

    @classmethod
    def of(cls, measured: _Pass, k: int, temperature: float) -> Rung:
        counts, n = measured.counts, len(measured.solved)
        p1, always = measured.pass_at_1(k), sum(c == k for c in counts) / n
        verdict = "sft-first" if p1 == 0 else "too-easy" if always >= TOO_EASY_SHARE else "grpo"
        return cls(temperature, p1, sum(c > 0 for c in counts), always,
                   signal_shares(measured.totals, measured.correct)[1], verdict)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def climb(temperature: float, first: Rung, measure: Callable[[float], Rung],
          passes: int = LADDER_PASSES) -> list[Rung]:
    """The ladder's rungs past the first pass, in the order sampled (see the module docstring).

    Args:
        temperature: the brief's; ``first`` was measured at it.
        measure: samples and scores the preflight prompts at a temperature.
        passes: the most rungs to sample.
    """
    if first.verdict == "grpo":
        return []
    down = first.verdict == "sft-first"
    far = LOW_TEMPERATURE if down else HIGH_TEMPERATURE
    if (temperature <= far) if down else (temperature >= far):
        return []   # the brief's temperature is at the far rung or past it
    rungs = [measure(far)]
    if rungs[0].verdict == first.verdict:
        return rungs   # the far rung fails the same way: no temperature between helps
    # ``near`` fails as the first pass did, ``other`` does not (in the band, or the opposite failure): halve
    near, other = temperature, far
    while len(rungs) < passes:
        mid = round((near + other) / 2, 2)
        if mid in (near, other):
            break
        rungs.append(measure(mid))
        if rungs[-1].verdict == first.verdict:
            near = mid
        else:
            other = mid
    return rungs


def recommend(temperature: float, rungs: list[Rung]) -> float | None:
    """The in-band rung nearest the brief's temperature, or None when no rung measured is in the band."""
    band = [r.temperature for r in rungs if r.verdict == "grpo"]
    return min(band, key=lambda t: abs(t - temperature)) if band else None


# what a rung's verdict says about its temperature
BAND = {"grpo": "in the GRPO band", "sft-first": "no correct sample", "too-easy": "too easy"}


def _rung_text(rung: dict, prompts: int) -> str:
    return (f"pass@1 {rung['pass_at_1']:.3f}, {rung['prompts_solved']} of {prompts} prompts solved at least once, "
            f"{rung['always_solved']:.0%} always solved, {rung['correctness_signal']:.0%} of groups with a "
            f"correctness signal: {BAND[rung['verdict']]}")


def _choose_prompts(brief, n_rows: int, prompts: int | None, filter_out) -> list[int]:
    """The row indices to sample: every row when filtering, else a seeded sample of ``prompts`` rows."""
    if filter_out:
        return list(range(n_rows))     # filtering needs every prompt
    n = prompts or brief.preflight.prompts
    if n < 1:
        raise ConfigError(f"--prompts: {n}; need at least 1")
    return random.Random(brief.preflight.seed).sample(range(n_rows), min(n, n_rows))


def _correctness_rewards(brief) -> tuple[list, list[str]]:
    """The brief's rewards, and the names of those that say whether a sample is right."""
    rewards = from_brief(brief)
    correctness = [r.name for r in rewards if r.kind in ("correctness", "judge")]
    if not correctness:
        raise ConfigError("rewards: preflight needs a correctness reward (kind 'correctness', e.g. exact_match) to "
                          "measure success")
    return rewards, correctness


def _write_learnable(brief, rows: list[dict], chosen: list[int], counts: list[int], k: int, keep_share: float,
                     filter_out) -> dict:
    """``--filter``: the prompts solved sometimes, plus ``keep_share`` of the rest, in the dataset's own columns."""
    frng = random.Random(brief.preflight.seed + 1)
    keep = [chosen[i] for i, c in enumerate(counts) if 0 < c < k or frng.random() < keep_share]
    raw = [_unmapped(rows[i], brief) for i in keep]
    write_jsonl_atomic(Path(filter_out), raw)
    return {"path": str(filter_out), "rows": len(raw), "of": len(rows)}


# --- the verdict: rules over the first pass's measures and the sampling settings ---------------------------------

def tool_use(calls: list[int]) -> dict:
    """How often the samples called a tool: the share that called one, and the calls a sample."""
    n = max(1, len(calls))
    return {"rate": sum(c > 0 for c in calls) / n, "calls_per_sample": sum(calls) / n}


def _measured(first: _Pass, k: int, lengths: list[int], context_length: int | None) -> PreflightResult:
    """The result's measures, before the verdict, the evidence and the filter."""
    counts, n_p = first.counts, len(first.solved)
    zero_sig, corr_sig, format_only = signal_shares(first.totals, first.correct)
    return PreflightResult("", n_p, k, first.pass_at_1(k), sum(pass_at_k(k, c, k) for c in counts) / n_p,
                           sum(c == 0 for c in counts) / n_p, sum(c == k for c in counts) / n_p, zero_sig, corr_sig,
                           format_only, first.truncation_rate, max(lengths), sum(lengths) / len(lengths),
                           context_length, engine=first.engine)


def _ladder_text(r: PreflightResult) -> str:
    """The rungs tried, as one clause: "at 0.3 too easy (pass@1 1.000), at 0.65 in the GRPO band (pass@1 0.125)"."""
    return ", ".join(f"at {g['temperature']:g} {BAND[g['verdict']]} (pass@1 {g['pass_at_1']:.3f})" for g in r.ladder)


def _advice(r: PreflightResult) -> str:
    """The temperature to set, or why none is named."""
    if r.recommended_temperature is not None:
        rung = next(g for g in r.ladder if g["temperature"] == r.recommended_temperature)
        return (f"set grpo.temperature to {r.recommended_temperature:g} in the brief (measured there: pass@1 "
                f"{rung['pass_at_1']:.3f}, {rung['correctness_signal']:.0%} of groups with a correctness signal)")
    first = "sft-first" if r.pass_at_1 == 0 else "too-easy"
    if all(g["verdict"] == first for g in r.ladder):
        return f"no temperature up to {HIGH_TEMPERATURE:g} is in the GRPO band"
    return ("no temperature tried is in the GRPO band: the band lies between the nearest that failed each way, "
            "narrower than the ladder's steps")


def _lower_temperature(r: PreflightResult, s: dict) -> str | None:
    if r.pass_at_1 == 0 and any(g["pass_at_1"] > 0 for g in r.ladder):
        return (f"0 of {r.prompts * r.k} samples solved the task at temperature {s['temperature']:g}, but lower "
                f"temperatures did ({_ladder_text(r)}): the skill is there, buried under sampling noise; "
                f"{_advice(r)}")
    return None


def _sft_first(r: PreflightResult, s: dict) -> str | None:
    if r.pass_at_1 != 0:
        return None
    temps = ", ".join(f"{g['temperature']:g}" for g in r.ladder)
    tried = f"temperature {s['temperature']:g}" + (f", and none at {temps}" if r.ladder else "")
    return (f"0 of {r.prompts * r.k} samples solved the task at {tried}: GRPO would see zero advantage from "
            "correctness everywhere. Teach the task with SFT first, then come back.")


def _too_easy(r: PreflightResult, s: dict) -> str | None:
    if r.always_solved < TOO_EASY_SHARE:
        return None
    text = (f"{r.always_solved:.0%} of prompts are solved by every sample at temperature {s['temperature']:g}: "
            "little left to learn")
    if r.ladder:
        text += f"; higher up, {_ladder_text(r)}: {_advice(r)}"
    return text + "; or use harder prompts, or `--filter` to keep the learnable ones"


def _grpo(r: PreflightResult, s: dict) -> str:
    return (f"the model succeeds sometimes (pass@1 {r.pass_at_1:.3f}); {r.correctness_signal:.0%} of groups carry a "
            "correctness signal (some samples right, some wrong)"
            + (f", and {r.format_only_signal:.0%} more vary only in format or shaping, which teaches the format, "
               "not the task" if r.format_only_signal else ""))


# The first rule that speaks names the verdict; ``grpo`` always speaks.
VERDICTS = (("lower-temperature", _lower_temperature), ("sft-first", _sft_first), ("too-easy", _too_easy),
            ("grpo", _grpo))


def _format_only_at_zero(r: PreflightResult, s: dict) -> str | None:
    if r.pass_at_1 == 0 and r.format_only_signal:
        return (f"{r.format_only_signal:.0%} of groups vary, but only in format or shaping rewards: their advantage "
                "would teach the format, not the task")
    return None


def _prompt_overflows_context(r: PreflightResult, s: dict) -> str | None:
    ctx, budget = r.context_length, s["max_completion_length"]
    if ctx and r.prompt_tokens_max + budget > ctx:
        return (f"the longest prompt ({r.prompt_tokens_max} tokens) plus max_completion_length ({budget}) exceeds "
                f"the context ({ctx}); TRL never truncates prompts")
    return None


def _truncated(r: PreflightResult, s: dict) -> str | None:
    if r.truncation_rate >= 0.2:
        return (f"{r.truncation_rate:.0%} of samples hit max_completion_length: raise it or the reward will punish "
                "unfinished answers")
    return None


# Evidence added after the verdict's own, whatever the verdict.
# Under this many tool calls a sample the model does not use its tools (diagnose's "never calls its tools" uses it too)
RARE_TOOL_CALLS = 0.02


def _no_tool_use(r: PreflightResult, s: dict) -> str | None:
    if r.tool_use is None or r.tool_use["calls_per_sample"] >= RARE_TOOL_CALLS:
        return None
    return (f"the model offered tools called them {r.tool_use['calls_per_sample']:.2f} times a sample (under "
            f"{RARE_TOOL_CALLS}): GRPO has no tool use to reinforce; warm it up on demonstrations that call the tools "
            "(SFT) before GRPO, as it must already succeed sometimes")


NOTES = (_format_only_at_zero, _prompt_overflows_context, _truncated, _no_tool_use)


def _verdict(r: PreflightResult, s: dict) -> tuple[str, list[str]]:
    """The verdict (the first of ``VERDICTS`` whose rule speaks) and the evidence: its reason, then ``NOTES``."""
    verdict, reason = next((name, text) for name, rule in VERDICTS if (text := rule(r, s)) is not None)
    return verdict, [reason, *(text for note in NOTES if (text := note(r, s)) is not None)]


def _engine_text(engine: dict) -> str:
    where = engine.get("platform") or engine.get("device")
    return f"{engine.get('name')} ({engine.get('package')}, {where})"


def _unmapped(row: dict, brief) -> dict:
    """A mapped row back in the dataset's own column names, for the filtered file."""
    out = dict(row)
    if brief.dataset.prompt:  # the prompt was built from the row's own columns, which are still there
        out.pop("prompt")
    elif brief.dataset.prompt_column != "prompt":
        out[brief.dataset.prompt_column] = out.pop("prompt")
    for arg, col in brief.dataset.columns.items():
        if arg != col:
            out.pop(arg, None)
    return out
