"""A run with tools logs its completions to parquet as TRL does, whatever types the parser gave each call's
arguments (``trainers._arguments_as_json``): pyarrow refuses one column with two types, which killed a tool run at
its first log."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pytest

from grpo_rlvr.trainer.trainers import _arguments_as_json


def _call(a, b) -> list[dict]:
    return [{"role": "assistant", "content": "",
             "tool_calls": [{"type": "function", "function": {"name": "add", "arguments": {"a": a, "b": b}}}]},
            {"role": "tool", "name": "add", "content": "3"}, {"role": "assistant", "content": "<answer>3</answer>"}]


def test_calls_typed_differently_write_one_parquet_file(tmp_path):
    logged = [_call(1, 2), _call("12x", 2), [{"role": "assistant", "content": "<answer>3</answer>"}]]
    with pytest.raises(pa.ArrowInvalid):   # what TRL 1.16 writes as it stands
        pd.DataFrame({"completion": logged}).to_parquet(tmp_path / "raw.parquet")
    pd.DataFrame({"completion": [_arguments_as_json(c) for c in logged]}).to_parquet(tmp_path / "kept.parquet")
    back = pd.read_parquet(tmp_path / "kept.parquet")["completion"]
    args = [json.loads(c[0]["tool_calls"][0]["function"]["arguments"]) for c in back[:2]]
    assert args == [{"a": 1, "b": 2}, {"a": "12x", "b": 2}]


def test_the_logged_message_is_a_copy_and_text_passes_through():
    original = _call(1, 2)
    changed = _arguments_as_json(original)
    assert original[0]["tool_calls"][0]["function"]["arguments"] == {"a": 1, "b": 2}   # the rollout's own list
    assert changed[1:] == original[1:] and changed[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 1, "b": 2}'
    assert _arguments_as_json("plain text") == "plain text"
