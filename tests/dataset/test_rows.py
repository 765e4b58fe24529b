"""Rows are named the same way everywhere: ``load_rows`` (preflight, inspect, validate) gives each row the source
the rendered train.py's data carries (``FILE:LINE`` of a JSON Lines file, blank lines skipped as both readers skip
them; ``PATH, row N`` otherwise)."""

from __future__ import annotations

import json

from briefs import brief_for
from grpo_rlvr.brief import load_brief
from grpo_rlvr.dataset.rows import load_rows, load_split
from grpo_rlvr.records.unscorable import SOURCE_COLUMN


def test_load_rows_and_training_name_each_row_alike(workspace):
    data = workspace / "data" / "gaps.jsonl"
    lines = [json.dumps({"prompt": [{"role": "user", "content": f"{i}+1="}], "answer": str(i + 1)}) for i in range(6)]
    data.write_text("\n".join(lines[:2]) + "\n\n\n" + "\n".join(lines[2:]) + "\n")   # blank lines after row 2
    brief = load_brief(brief_for(workspace, "gaps", {"dataset": {"path": "./data/gaps.jsonl"}}))
    rows = load_rows(brief)
    assert [r.source for r in rows] == [f"{data}:{n}" for n in (1, 2, 5, 6, 7, 8)]
    spec = {"path": brief.dataset.resolved, "local": True, "split": "train", "field": "dataset.path"}
    trained = load_split(spec, "prompt", {}, None)
    assert trained[SOURCE_COLUMN] == [r.source for r in rows]
    assert dict(rows[0]) == {"prompt": [{"role": "user", "content": "0+1="}], "answer": "1"}   # nothing else added
