"""The JSON reader behind ``json_schema`` and ``tool_call``: nesting depth is bounded by the reader itself, the same
on every Python (3.13's json parses 5,000 nested arrays; 3.11's stops near 1,000 with a RecursionError)."""

from __future__ import annotations

from grpo_rlvr.rewards._json_extract import MAX_DEPTH, extract_json, nesting_depth, parse_json


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_past_the_bound_is_refused_before_parsing():
    for depth in (MAX_DEPTH + 1, 600, 5000):   # 600 parses on every Python; 5,000 on 3.13
        ok, problem = parse_json(nested(depth))
        assert not ok and f"deeper than {MAX_DEPTH} levels" in problem, (depth, problem)
        found = extract_json(f"```json\n{nested(depth)}\n```")
        assert not found.ok and f"deeper than {MAX_DEPTH} levels" in found.problem


def test_nesting_at_the_bound_parses():
    ok, value = parse_json(nested(MAX_DEPTH))
    assert ok and value is not None
    assert extract_json('{"a": ' + nested(MAX_DEPTH - 1) + "}").ok


def test_brackets_inside_strings_do_not_count():
    text = '{"s": "' + "[" * 5000 + '"}'
    assert nesting_depth(text) == 1
    ok, value = parse_json(text)
    assert ok and value == {"s": "[" * 5000}
