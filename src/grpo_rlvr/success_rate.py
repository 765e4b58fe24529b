"""``grpo-rlvr preflight``: does the model already succeed *sometimes*? RL amplifies, it does not install.

Samples k completions (k = num_generations) per prompt with the training sampler, scores them, and reports
pass@1, unbiased pass@k, the share of prompts never / always solved, the forecast share of zero-signal groups
(what TRL will log as ``frac_reward_zero_std``), the truncation rate and prompt lengths against the model's
context. Verdict: ``sft-first`` (no correct sample at all), ``too-easy`` (≥ 90% of prompts always solved),
or ``grpo``. ``--filter OUT`` writes the learnable subset (prompts solved sometimes, plus a share of the rest).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset_io import load_rows, reward_columns
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.rewards import build_reward, combine
from grpo_rlvr.sampling import SamplingParams, draw, encode_prompts

TOO_EASY_SHARE = 0.9


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
    truncation_rate: float
    prompt_tokens_max: int
    prompt_tokens_mean: float
    context_length: int | None
    evidence: list[str] = field(default_factory=list)
    filtered: dict | None = None
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
                 f"  truncated {self.truncation_rate:.0%}; prompt tokens max {self.prompt_tokens_max}, mean "
                 f"{self.prompt_tokens_mean:.1f}" + (f" (context {self.context_length})" if self.context_length else "")]
        if self.engine:
            lines.append(f"  sampled with {_engine_text(self.engine)}")
        lines += [f"  - {e}" for e in self.evidence]
        if self.filtered:
            lines.append(f"  wrote {self.filtered['rows']} learnable rows to {self.filtered['path']}")
        return "\n".join(lines)


def preflight(brief_path, prompts: int | None = None, k: int | None = None, filter_out=None, keep_share: float = 0.1,
              model=None, tokenizer=None, progress=None, batch_size: int = 64) -> PreflightResult:
    """Measure the base success rate and route to SFT or GRPO. See the module docstring.

    Raises:
        ConfigError: bad ``prompts`` / ``k`` / ``keep_share``, or the brief has no correctness reward.
    """
    t0 = time.monotonic()
    brief = load_brief(brief_path)
    k = k or brief.preflight_k
    if k < 2:
        raise ConfigError(f"--k: {k}; need at least 2 samples per prompt to see variance")
    if not 0 <= keep_share <= 1:
        raise ConfigError(f"--keep-share: {keep_share} is outside [0, 1]")
    rows = load_rows(brief)
    rng = random.Random(brief.preflight_seed)
    if filter_out:
        chosen = list(range(len(rows)))     # filtering needs every prompt
    else:
        n = prompts or brief.preflight_prompts
        if n < 1:
            raise ConfigError(f"--prompts: {n}; need at least 1")
        chosen = rng.sample(range(len(rows)), min(n, len(rows)))
    rewards = [build_reward(r.name, dict(r.params), base_dir=brief.base_dir, kind=r.kind) for r in brief.rewards]
    correctness = [r.name for r in rewards if r.kind in ("correctness", "judge")]
    if not correctness:
        raise ConfigError("rewards: preflight needs a correctness reward (kind 'correctness', e.g. exact_match) to "
                          "measure success")
    s = brief.sampling()
    params = SamplingParams(temperature=s["temperature"], top_p=s["top_p"],
                            max_completion_length=s["max_completion_length"], seed=brief.preflight_seed,
                            batch_size=batch_size)
    prompt_list = [rows[i]["prompt"] for i in chosen]
    drawn, engine, tokenizer = draw(brief, prompt_list, k, params, model, tokenizer, progress)
    cand = [rows[chosen[d.prompt_index]] for d in drawn]
    scored = combine(rewards, brief.reward_weights, [d.completion for d in drawn],
                     prompts=[r["prompt"] for r in cand], **reward_columns(cand))
    solved = [all((res["scores"][c].score or 0) >= 1.0 - 1e-9 for c in correctness) for res in scored]
    per_prompt = [solved[i * k:(i + 1) * k] for i in range(len(chosen))]
    totals = [[res["total"] for res in scored[i * k:(i + 1) * k]] for i in range(len(chosen))]
    counts = [sum(g) for g in per_prompt]
    n_p = len(chosen)
    p1 = sum(counts) / (n_p * k)
    pk = sum(pass_at_k(k, c, k) for c in counts) / n_p
    never = sum(c == 0 for c in counts) / n_p
    always = sum(c == k for c in counts) / n_p
    zero_sig = sum(max(t) - min(t) < 1e-9 for t in totals) / n_p
    trunc = sum(d.truncated for d in drawn) / len(drawn)
    lengths = [len(x) for x in encode_prompts(tokenizer, prompt_list)]
    evidence = []
    if p1 == 0:
        verdict = "sft-first"
        evidence.append(f"0 of {n_p * k} samples solved the task at temperature {s['temperature']}: GRPO would see "
                        "zero advantage everywhere. Teach the task with SFT first, then come back.")
    elif always >= TOO_EASY_SHARE:
        verdict = "too-easy"
        evidence.append(f"{always:.0%} of prompts are solved by every sample: little left to learn; use harder "
                        "prompts or `--filter` to keep the learnable ones")
    else:
        verdict = "grpo"
        evidence.append(f"the model succeeds sometimes (pass@1 {p1:.3f}); {1 - zero_sig:.0%} of groups will carry "
                        "a learning signal")
    ctx = brief.model.context_length
    if ctx and max(lengths) + s["max_completion_length"] > ctx:
        evidence.append(f"the longest prompt ({max(lengths)} tokens) plus max_completion_length "
                        f"({s['max_completion_length']}) exceeds the context ({ctx}); TRL never truncates prompts")
    if trunc >= 0.2:
        evidence.append(f"{trunc:.0%} of samples hit max_completion_length: raise it or the reward will punish "
                        "unfinished answers")
    filtered = None
    if filter_out:
        frng = random.Random(brief.preflight_seed + 1)
        keep = [chosen[i] for i, c in enumerate(counts) if 0 < c < k or frng.random() < keep_share]
        raw = [_unmapped(rows[i], brief) for i in keep]
        write_jsonl_atomic(Path(filter_out), raw)
        filtered = {"path": str(filter_out), "rows": len(raw), "of": len(rows)}
    return PreflightResult(verdict, n_p, k, p1, pk, never, always, zero_sig, trunc, max(lengths),
                           sum(lengths) / len(lengths), ctx, evidence, filtered, time.monotonic() - t0,
                           engine.to_dict())


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
