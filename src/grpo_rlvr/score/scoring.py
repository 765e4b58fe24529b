"""Scoring outside training (``grpo-rlvr score``): completions from a JSONL file, with one reward or a brief's
composite.

Input lines are ``{"prompt", "completion", ...ground-truth columns}`` (``answer``, ``schema``, ``tool``,
``tests`` by convention). Output: one result per line, ``{"index", "score", "reason"}``, plus ``parts`` (each
reward's score and reason) when scoring a brief's composite.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_rlvr.dataset.rows import map_columns, reward_columns
from grpo_rlvr.errors import ConfigError, InputFileError, MissingColumn, RewardError
from grpo_rlvr.jsonl import read_jsonl
from grpo_rlvr.rewards import Reward, build_reward, combine, from_brief


def parse_options(options: list[str]) -> dict:
    """``KEY=VALUE`` strings to a dict; values are JSON when they parse as JSON, else strings."""
    out = {}
    for opt in options:
        key, sep, value = opt.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {opt!r}: expected KEY=VALUE, e.g. --option extract=boxed")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def rewards_for(brief=None, reward: str | None = None, options: list[str] | None = None):
    """(rewards, weights, column mapping) from a brief, or one reward with options."""
    if brief is not None:
        from grpo_rlvr.brief import load_brief

        b = load_brief(brief)
        rewards = from_brief(b)
        return rewards, b.reward_weights, (b.dataset.prompt_column, dict(b.dataset.columns))
    return [build_reward(reward, parse_options(options or []), base_dir=Path.cwd())], [1.0], ("prompt", {})


def score_rows(rewards: list[Reward], weights: list[float], rows: list[dict], row_names=None) -> list[dict]:
    completions = [r.get("completion", "") for r in rows]
    results = combine(rewards, weights, completions, row_names=row_names, prompts=[r.get("prompt") for r in rows],
                      **reward_columns(rows))
    out = []
    for i, res in enumerate(results):
        scores = res["scores"]
        if len(rewards) == 1:
            only = next(iter(scores.values()))
            out.append({"index": i, "score": only.score, "reason": only.reason})
        else:
            out.append({"index": i, "score": res["total"],
                        "reason": "; ".join(f"{n}: {s.reason}" for n, s in scores.items()),
                        "parts": {n: {"score": s.score, "reason": s.reason} for n, s in scores.items()}})
    return out


def score_file(path, brief=None, reward: str | None = None, options: list[str] | None = None) -> list[dict]:
    """Score every line of ``path``. Raises InputFileError on unreadable input, RewardError on a bad reward."""
    rewards, weights, (prompt_col, columns) = rewards_for(brief, reward, options)
    rows = [map_columns(r, prompt_col, columns) for r in read_jsonl(Path(path), "input")]
    if not rows:
        raise InputFileError(f"input {path}: no lines to score")
    for n, r in enumerate(rows, 1):
        if "completion" not in r:
            raise InputFileError(f"input {path}, line {n}: no 'completion' key; each line needs "
                                 '{"prompt", "completion", ...ground-truth columns}')
    from grpo_rlvr.dataset.rows import row_sources

    try:
        return score_rows(rewards, weights, rows, row_names=row_sources(str(path), True, len(rows)))
    except MissingColumn as e:
        if brief is not None:
            raise
        raise RewardError(f"reward {e.reward!r} needs the column {e.column!r} in input {path}; name the column "
                          f"that holds it with --option {e.param}=COLUMN (columns there: {e.available})") from None
