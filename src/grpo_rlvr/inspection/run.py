"""``grpo-rlvr inspect``: sample outputs with the training sampler, score them with every reward, write the
artifact a person then reviews (``grpo-rlvr review``) and the gate checks."""

from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr import __version__
from grpo_rlvr.brief import load_brief
from grpo_rlvr.brief.loader import dataset_identity, model_identity
from grpo_rlvr.dataset_io import load_rows, reward_columns
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import atomic_directory, write_json_atomic, write_jsonl_atomic
from grpo_rlvr.inspection.artifact import FORMAT_VERSION, MANIFEST, REPORT, SAMPLES, sample_digest
from grpo_rlvr.inspection.report import render_report
from grpo_rlvr.inspection.selection import outcome, select
from grpo_rlvr.rewards import build_reward, combine
from grpo_rlvr.sampling import SamplingParams, generate

log = logging.getLogger(__name__)
MIN_SAMPLES, MAX_SAMPLES = 50, 100


@dataclass
class InspectResult:
    dir: Path
    samples: int
    prompts: int
    outcomes: dict
    seconds: float

    def to_dict(self) -> dict:
        return {"dir": str(self.dir), "samples": self.samples, "prompts": self.prompts, "outcomes": self.outcomes,
                "seconds": round(self.seconds, 2),
                "next": f"grpo-rlvr review {self.dir}"}

    def format(self) -> str:
        mix = ", ".join(f"{k} {v}" for k, v in self.outcomes.items())
        return (f"Wrote {self.samples} scored samples from {self.prompts} prompts to {self.dir} ({mix}).\n"
                f"Read every one before training: grpo-rlvr review {self.dir}\n"
                f"Or open {self.dir / REPORT} in a browser.")


def build_rewards(brief):
    return [build_reward(r.name, dict(r.params), base_dir=brief.base_dir, kind=r.kind) for r in brief.rewards]


def inspect_rewards(brief_path, out_dir=None, samples: int | None = None, model=None, tokenizer=None,
                    progress=None) -> InspectResult:
    """Sample, score and write the inspection artifact.

    Args:
        brief_path: the brief YAML.
        out_dir: the artifact folder (default ``<output_dir>/inspection``); replaced atomically.
        samples: how many samples to keep, 50–100 (default: the brief's, 64).
        model, tokenizer: an already-loaded model (the demo passes its own); loaded from the brief otherwise.
    Raises:
        ConfigError: ``samples`` out of range.
    """
    t0 = time.monotonic()
    brief = load_brief(brief_path)
    n = samples or brief.inspection_samples
    if not MIN_SAMPLES <= n <= MAX_SAMPLES:
        raise ConfigError(f"--samples: {n} is outside {MIN_SAMPLES}–{MAX_SAMPLES}; a person reads 50 to 100 samples")
    out = Path(out_dir) if out_dir else brief.output_dir / "inspection"
    rows = load_rows(brief)
    rng = random.Random(brief.inspection_seed)
    chosen_rows = rng.sample(range(len(rows)), min(brief.inspection_prompts, len(rows)))
    per_prompt = max(2, math.ceil(3 * n / len(chosen_rows)))  # 3× candidates, so outcomes can be balanced
    if model is None:
        from grpo_rlvr.model_loading import load_model_and_tokenizer

        model, tokenizer = load_model_and_tokenizer(brief)
    s = brief.sampling()
    params = SamplingParams(temperature=s["temperature"], top_p=s["top_p"],
                            max_completion_length=s["max_completion_length"], seed=brief.inspection_seed)
    drawn = generate(model, tokenizer, [rows[i]["prompt"] for i in chosen_rows], per_prompt, params, progress)
    rewards = build_rewards(brief)
    kinds = {r.name: r.kind for r in rewards}
    cand_rows = [rows[chosen_rows[d.prompt_index]] for d in drawn]
    scored = combine(rewards, brief.reward_weights, [d.completion for d in drawn],
                     prompts=[r["prompt"] for r in cand_rows], **reward_columns(cand_rows))
    candidates = []
    for d, row, sc in zip(drawn, cand_rows, scored, strict=True):
        scores = {name: {"score": v.score, "reason": v.reason} for name, v in sc["scores"].items()}
        candidates.append({
            "prompt_index": chosen_rows[d.prompt_index], "prompt": row["prompt"], "completion": d.completion,
            "columns": {k: v for k, v in row.items() if k != "prompt"}, "truncated": d.truncated,
            "scores": scores, "total": sc["total"],
            "outcome": outcome({k: v["score"] for k, v in scores.items()}, kinds),
        })
    picked = select(candidates, n, brief.inspection_seed)
    samples_out = [{"id": f"s{i:03d}", **{k: c[k] for k in ("prompt_index", "prompt", "completion", "columns",
                                                            "truncated", "scores", "total", "outcome")},
                    "verdict": None} for i, c in enumerate(picked)]
    manifest = {
        "format_version": FORMAT_VERSION,
        "tool": f"grpo-rlvr {__version__}",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "brief": {"path": str(brief.path), "name": brief.name, "fingerprint": brief.fingerprint},
        "model": model_identity(brief.model),
        "dataset": dataset_identity(brief.dataset),
        "sampling": {**s, "seed": brief.inspection_seed, "candidates_per_prompt": per_prompt},
        "rewards": [{"name": r.name, "kind": r.kind, "weight": w, "params": r.params, "fingerprint": r.fingerprint}
                    for r, w in zip(rewards, brief.reward_weights, strict=True)],
        "sample_count": len(samples_out),
        "prompt_count": len({s["prompt_index"] for s in samples_out}),
        "samples_digest": sample_digest(samples_out),
    }
    with atomic_directory(out) as tmp:
        write_json_atomic(tmp / MANIFEST, manifest)
        write_jsonl_atomic(tmp / SAMPLES, samples_out)
        render_report(tmp, manifest, samples_out)
    mix = {o: sum(1 for s in samples_out if s["outcome"] == o) for o in ("malformed", "wrong", "partial", "correct")}
    return InspectResult(out, len(samples_out), manifest["prompt_count"], mix, time.monotonic() - t0)
