"""The run's own model card: what was trained, on what, with which rewards, behind which review, and how it did.

TRL writes a stock card (``README.md``) into the output folder at every checkpoint, "fine-tuned version of
[None]" when no hub id is set; a rendered ``train.py`` replaces it at the end with this one, in ``output/`` and
in ``output/final/`` beside the saved model: the base model (and adapter), the data (path, split, columns), the
rewards with their kinds and weights, the review the gate passed (samples, reviewers, verdicts, read from the
inspection the run's lock names), the steps trained, the last training reward and the last held-out results.
Not covered: hub metadata (tags, license): the card is for the people who read the run folder.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_rlvr.files import write_text_atomic

_KEYS = ("reward", "reward_std", "frac_reward_zero_std", "completions/mean_length")


def review_summary(inspection: Path) -> dict | None:
    """Samples, reviewers and verdicts of the inspection a run's lock names (None when it cannot be read)."""
    from grpo_rlvr.jsonl import read_jsonl

    try:
        samples = read_jsonl(Path(inspection) / "samples.jsonl", "inspection samples")
    except Exception:  # noqa: BLE001 - a card says "not recorded" rather than fail the end of a run
        return None
    verdicts: dict[str, int] = {}
    reviewers: set[str] = set()
    for s in samples:
        verdict = s.get("verdict") if isinstance(s.get("verdict"), dict) else {}
        verdicts[str(verdict.get("verdict"))] = verdicts.get(str(verdict.get("verdict")), 0) + 1
        if verdict.get("reviewer"):
            reviewers.add(f"{verdict.get('reviewer')} ({verdict.get('reviewer_kind', 'human')})")
    return {"samples": len(samples), "verdicts": verdicts, "reviewers": sorted(reviewers)}


def _last(log_history: list, prefix: str) -> dict:
    for entry in reversed(log_history):
        found = {k: v for k, v in entry.items() if k.startswith(prefix) and isinstance(v, (int, float))}
        if found:
            return {"step": entry.get("step"), **found}
    return {}


def model_card(model: str, adapter: dict | None, dataset: dict, rewards: list[dict], weights: list | None,
               review: dict | None, global_step: int, log_history: list, smoke_test: bool = False) -> str:
    """The card's Markdown. ``rewards``: as ``train.py`` builds them (name, kind); ``weights``: GRPOConfig's
    ``reward_weights`` (None: all 1.0)."""
    lines = ["---", "library_name: transformers", "tags: [trl, grpo, grpo-rlvr]", "---", "",
             f"# GRPO run on {model}", ""]
    if smoke_test:
        lines += ["**An unreviewed smoke test**: a few steps without the inspection gate; nothing here is a "
                  "trained model.", ""]
    lines += ["## Model", "", f"- base: `{model}`"]
    if adapter:
        lines.append(f"- adapter continued or merged: `{adapter.get('path', adapter)}`")
    lines += ["", "## Data", "", f"- source: `{dataset.get('path') or dataset.get('name')}`"
              + (f", split `{dataset['split']}`" if dataset.get("split") else "")]
    if dataset.get("eval"):
        lines.append(f"- held out: `{dataset['eval'].get('path') or dataset['eval'].get('name')}`")
    lines += ["", "## Rewards", "", "| reward | kind | weight |", "|---|---|---|"]
    weights = list(weights) if weights else [1.0] * len(rewards)
    lines += [f"| `{r.get('name')}` | {r.get('kind') or 'built-in'} | {w} |" for r, w in zip(rewards, weights, strict=False)]
    lines += ["", "## Review", ""]
    if review is None:
        lines.append("- not recorded" + (" (smoke test: no review)" if smoke_test else ""))
    else:
        lines.append(f"- {review['samples']} samples read; verdicts: "
                     + ", ".join(f"{k} {v}" for k, v in sorted(review["verdicts"].items())))
        lines.append(f"- reviewers: {', '.join(review['reviewers']) or 'none recorded'}")
    train = next(({"step": e.get("step"), **e} for e in reversed(log_history) if "reward" in e), {})
    held_out = _last(log_history, "eval_")
    lines += ["", "## Training", "", f"- steps: {global_step}"]
    if train:
        shown = {k: v for k, v in train.items() if k in _KEYS}
        lines.append(f"- last logged (step {train['step']}): " + json.dumps(shown))
    lines += ["", "## Held-out result", ""]
    if held_out:
        lines.append(f"- last evaluation (step {held_out['step']}): "
                     + json.dumps({k: v for k, v in held_out.items() if k != "step"}))
    else:
        lines.append("- none (the brief names no `dataset.eval_path`)")
    return "\n".join(lines) + "\n"


def write_model_card(output_dir: Path, text: str) -> list[Path]:
    """Write the card over TRL's in ``output_dir`` and in ``output_dir/final`` when it exists; the paths written."""
    written = []
    for folder in (Path(output_dir), Path(output_dir) / "final"):
        if folder.is_dir():
            write_text_atomic(folder / "README.md", text)
            written.append(folder / "README.md")
    return written
