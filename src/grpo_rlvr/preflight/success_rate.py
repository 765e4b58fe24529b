"""``grpo-rlvr preflight``: does the model already succeed *sometimes*? RL amplifies, it does not install.

Samples k completions (k = num_generations) per prompt with the training sampler, scores them, and reports
pass@1, unbiased pass@k, the share of prompts never / always solved, the forecast share of zero-signal groups
(what TRL will log as ``frac_reward_zero_std``), the truncation rate and prompt lengths against the model's
context. A group's signal is split by where it comes from: ``correctness_signal`` (the correctness rewards
differ within the group: some samples right, some wrong) and ``format_only_signal`` (the total varies, the
correctness does not: only format or shaping rewards move, which teaches the format, not the task).

When no sample is correct at the brief's temperature, a second pass samples the same prompts at
``LOW_TEMPERATURE`` before anything says SFT: a model whose right answer is its most likely one, buried under
sampling noise, needs a lower temperature, not demonstrations.

Verdict: ``sft-first`` (no correct sample, at the brief's temperature nor at the low one), ``lower-temperature``
(correct only at the low temperature), ``too-easy`` (≥ 90% of prompts always solved), or ``grpo``.
``--filter OUT`` writes the learnable subset (prompts solved sometimes, plus a share of the rest).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.cpu_time import check_sampling_time
from grpo_rlvr.dataset.rows import load_rows
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.rewards import from_brief
from grpo_rlvr.rollout.road import roll_out
from grpo_rlvr.rollout.scoring import score_trajectories

TOO_EASY_SHARE = 0.9
LOW_TEMPERATURE = 0.3  # the second pass when nothing is correct at the brief's temperature


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
    low_temperature: dict | None = None   # the second pass, when it ran: temperature, pass@1, prompts solved
    seconds: float = 0.0
    engine: dict = field(default_factory=dict)   # the engine that sampled: name, package, device, settings

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
        if self.low_temperature:
            lo = self.low_temperature
            lines.append(f"  at temperature {lo['temperature']:g}: pass@1 {lo['pass_at_1']:.3f}, "
                         f"{lo['prompts_solved']} of {self.prompts} prompts solved at least once")
        if self.engine:
            lines.append(f"  sampled with {_engine_text(self.engine)}")
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
                 drawn.engine.to_dict())


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
    low_pass = temperature > LOW_TEMPERATURE
    check_sampling_time(brief, len(chosen) * k * (2 if low_pass else 1), allow_cpu, "preflight")

    def sample(at: float | None) -> _Pass:
        return _sample_and_score(brief, rows, chosen, k, at, rewards, correctness, progress, batch_size)

    first = sample(None)
    lengths = first.prompt_lengths
    low = None
    if first.pass_at_1(k) == 0 and low_pass:  # before saying SFT: is the answer there, under the sampling noise?
        second = sample(LOW_TEMPERATURE)
        low = {"temperature": LOW_TEMPERATURE, "pass_at_1": second.pass_at_1(k),
               "prompts_solved": sum(c > 0 for c in second.counts)}
    result = _measured(first, k, lengths, brief.model.context_length, low)
    result.verdict, result.evidence = _verdict(result, brief.sampling())
    if filter_out:
        result.filtered = _write_learnable(brief, rows, chosen, first.counts, k, keep_share, filter_out)
    result.seconds = time.monotonic() - t0
    return result


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

def _measured(first: _Pass, k: int, lengths: list[int], context_length: int | None,
              low: dict | None) -> PreflightResult:
    """The result's measures, before the verdict, the evidence and the filter."""
    counts, n_p = first.counts, len(first.solved)
    zero_sig, corr_sig, format_only = signal_shares(first.totals, first.correct)
    return PreflightResult("", n_p, k, first.pass_at_1(k), sum(pass_at_k(k, c, k) for c in counts) / n_p,
                           sum(c == 0 for c in counts) / n_p, sum(c == k for c in counts) / n_p, zero_sig, corr_sig,
                           format_only, first.truncation_rate, max(lengths), sum(lengths) / len(lengths),
                           context_length, low_temperature=low, engine=first.engine)


def _lower_temperature(r: PreflightResult, s: dict) -> str | None:
    low = r.low_temperature
    if r.pass_at_1 == 0 and low and low["pass_at_1"] > 0:
        return (f"0 of {r.prompts * r.k} samples solved the task at temperature {s['temperature']:g}, but "
                f"{low['prompts_solved']} of {r.prompts} prompts were solved at temperature {LOW_TEMPERATURE:g} "
                f"(pass@1 {low['pass_at_1']:.3f}): the skill is there, buried under sampling noise. Set "
                f"grpo.temperature near {LOW_TEMPERATURE:g} in the brief and run preflight again")
    return None


def _sft_first(r: PreflightResult, s: dict) -> str | None:
    if r.pass_at_1 != 0:
        return None
    tried = f"temperature {s['temperature']:g}" + (f", and none of {r.prompts * r.k} at {LOW_TEMPERATURE:g}"
                                                   if r.low_temperature else "")
    return (f"0 of {r.prompts * r.k} samples solved the task at {tried}: GRPO would see zero advantage from "
            "correctness everywhere. Teach the task with SFT first, then come back.")


def _too_easy(r: PreflightResult, s: dict) -> str | None:
    if r.always_solved < TOO_EASY_SHARE:
        return None
    return (f"{r.always_solved:.0%} of prompts are solved by every sample: little left to learn; use harder "
            "prompts or `--filter` to keep the learnable ones")


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
NOTES = (_format_only_at_zero, _prompt_overflows_context, _truncated)


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
