"""Reading the brief's dataset and mapping its columns to the names rewards and TRL expect.

The brief's ``dataset.columns`` maps a reward argument to a dataset column (``answer: solution``); the prompt
column becomes ``prompt``. The same mapping is applied in sampling, scoring and the rendered ``train.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from grpo_rlvr.jsonl import read_jsonl


def load_rows(brief) -> list[dict]:
    """All rows of the brief's dataset, with columns mapped (``prompt`` + reward argument names)."""
    spec = brief.dataset
    if not spec.is_local:
        from datasets import load_dataset

        raw = [dict(r) for r in load_dataset(spec.resolved, split=spec.split)]
    else:
        p = Path(spec.resolved)
        if p.suffix == ".jsonl":
            raw = read_jsonl(p, "dataset")
        elif p.suffix == ".json":
            data = json.loads(p.read_text(encoding="utf-8"))
            raw = data if isinstance(data, list) else data.get("data", [])
        else:
            from datasets import load_dataset

            raw = [dict(r) for r in load_dataset(p.suffix.lstrip("."), data_files=str(p), split="train")]
    return [map_columns(r, spec.prompt_column, dict(spec.columns)) for r in raw]


def map_columns(row: dict, prompt_column: str, columns: dict) -> dict:
    out = dict(row)
    if prompt_column != "prompt" and prompt_column in out:
        out["prompt"] = out.pop(prompt_column)
    for arg, col in columns.items():
        if col in row:
            out[arg] = row[col]
    return out


def reward_columns(rows: list[dict]) -> dict[str, list]:
    """Column-major view of rows for reward calls (one value per completion), without the prompt."""
    keys = {k for r in rows for k in r} - {"prompt", "completion"}
    return {k: [r.get(k) for r in rows] for k in sorted(keys)}
