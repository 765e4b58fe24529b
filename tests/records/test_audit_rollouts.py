"""The audit's record of one rollout, the same for an inspection's candidate and a training rollout."""

from __future__ import annotations

import math

from grpo_rlvr.records.audit_rollouts import prompt_digest, rollout_record, tool_call_count


def test_a_prompt_read_by_datasets_and_by_json_has_one_digest():
    """``datasets`` gives every message the keys any message of the column has (None where absent)."""
    from_json = [{"role": "user", "content": "3+4="}]
    from_datasets = [{"role": "user", "content": "3+4=", "name": None, "tool_calls": None}]
    assert prompt_digest(from_json) == prompt_digest(from_datasets)
    assert prompt_digest(from_json) != prompt_digest([{"role": "user", "content": "3+5="}])
    assert len(prompt_digest("text prompt")) == 16


def test_tool_calls_are_counted_in_every_assistant_message():
    completion = [{"role": "assistant", "tool_calls": [{"function": {"name": "add"}}] * 2},
                  {"role": "tool", "content": "5"}, {"role": "assistant", "tool_calls": [{"function": {}}]}]
    assert tool_call_count(completion) == 3 and tool_call_count("plain text") == 0


def test_the_record_leaves_tool_output_out_of_the_length_and_reads_nan_as_no_score():
    rec = rollout_record(3, "1+1=", 5, "<answer>2</answer>", [7, 8, 9, 10], [1, 0, 0, 1], False,
                         {"format": 1.0, "judge": math.nan, "other": None}, tools=True)
    assert rec["length"] == 2 and rec["scores"] == {"format": 1.0, "judge": None, "other": None}
    assert rec["tool_calls"] == 0 and rec["group"] == 3 and rec["prompt_tokens"] == 5
    assert rollout_record(0, "p", 1, "c", [1], None, True, {}, tools=False)["tool_calls"] is None
