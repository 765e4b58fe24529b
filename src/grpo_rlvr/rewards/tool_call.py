"""``tool_call``: does the completion call the expected function with arguments valid against its schema?

Ground truth (the ``tool`` column, an object or a JSON string): ``{"name": ..., "parameters": <JSON Schema of
the arguments>}``, or OpenAI's ``{"type": "function", "function": {...}}``; no ``parameters`` means any
object. The call is read from the first ``<tool_call>…</tool_call>`` (an unclosed tag runs to the end), else
from a fenced block or the prose (``_json_extract``), as ``{"name": ..., "arguments": {...}}``: ``parameters``
is accepted for ``arguments``, arguments may be a JSON string (as OpenAI emits), an OpenAI
``{"function": …}`` wrapper and a list of calls (the first is scored) are unwrapped, and missing arguments
count as ``{}``. Scores: 0 without a parseable call; ``partial_credit_name`` for the wrong function;
``partial_credit_args`` for the right function with invalid arguments; 1.0 when valid. Limits: one call is
scored (parallel calls are not). Store tools as JSON strings (see ``json_schema`` for why).
"""

from __future__ import annotations

import math
import re

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._json_extract import (
    extract_json,
    load_json_column,
    parse_json,
    schema_validator,
    short,
    validation_problem,
)
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, source_fingerprint

NAME = "tool_call"
_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)


def _expected_tool(value: object, column: str) -> tuple[str, object]:
    """(function name, arguments schema) from a ground-truth ``tool`` value. Bad data raise RewardError."""
    tool = load_json_column(value, NAME, column)
    if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
        tool = tool["function"]
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
        raise RewardError(f"reward {NAME!r}: the dataset column {column!r} holds {short(tool, 80)!r}; store "
                          '{"name": <function>, "parameters": <JSON Schema of its arguments>} there')
    return tool["name"], tool.get("parameters", {"type": "object"})


def _call_of(value: object) -> dict | None:
    """The call object in a parsed completion value, or None when it holds no call."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict) and "name" not in value and isinstance(value.get("function"), dict):
        value = value["function"]
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        return value
    return None


def tool_call_reward(tool_column: str = "tool", partial_credit_name: float = 0.25,
                     partial_credit_args: float = 0.5) -> Reward:
    """Build the tool-call correctness reward.

    Args:
        tool_column: the dataset column holding the expected tool (an object or a JSON string).
        partial_credit_name: the score of a parseable call to the wrong function.
        partial_credit_args: the score of a call to the right function with invalid arguments.
            Requires 0 ≤ partial_credit_name < partial_credit_args < 1, so each step closer scores higher.
    Raises:
        RewardError: bad parameters; at scoring time, a missing column or a malformed tool in the dataset.
    """
    if not isinstance(tool_column, str) or not tool_column:
        raise RewardError(f"reward {NAME!r}: params.tool_column is {tool_column!r}; name the dataset column "
                          "holding the expected tool (default 'tool')")
    credits = (("partial_credit_name", partial_credit_name), ("partial_credit_args", partial_credit_args))
    for key, v in credits:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise RewardError(f"reward {NAME!r}: params.{key} is {v!r}; use a number in [0, 1)")
    if not 0 <= partial_credit_name < partial_credit_args < 1:
        raise RewardError(f"reward {NAME!r}: params.partial_credit_name={partial_credit_name!r} and "
                          f"partial_credit_args={partial_credit_args!r} must satisfy 0 ≤ name < args < 1, so "
                          "a right-name call outscores a wrong-name one and a valid call outscores both")
    credit_name, credit_args = float(partial_credit_name), float(partial_credit_args)

    def score(text: str, row: dict) -> Scored:
        if tool_column not in row:
            raise RewardError(f"reward {NAME!r} needs the dataset column {tool_column!r}; map it under "
                              f"dataset.columns in the brief (available: {sorted(row)})")
        want, params_schema = _expected_tool(row[tool_column], tool_column)
        validator = schema_validator(params_schema, NAME, f"{tool_column}.parameters")
        tag = _TAG.search(text)
        found = extract_json(tag.group(1) if tag else text)
        if not found.ok:
            return Scored(0.0, found.problem if found.problem != "no JSON found" else "no tool call found")
        call = _call_of(found.value)
        if call is None:
            return Scored(0.0, f"no tool call: JSON {short(found.value)} has no \"name\"")
        if call["name"] != want:
            return Scored(credit_name, f"called {short(call['name'])}, expected {want}")
        args = call.get("arguments", call.get("parameters", {}))
        if isinstance(args, str):
            ok, parsed = parse_json(args)
            if not ok:
                return Scored(credit_args, f"arguments string invalid: {parsed}")
            args = parsed
        problem = validation_problem(validator, args, NAME, f"{tool_column}.parameters")
        if problem is not None:
            return Scored(credit_args, f"arguments invalid {problem}")
        return Scored(1.0, f"called {want} with valid arguments")

    params = {"tool_column": tool_column, "partial_credit_name": credit_name,
              "partial_credit_args": credit_args}
    return Reward(NAME, "correctness", params, per_item(score),
                  source_fingerprint(tool_call_reward, extract_json, extra=params), columns=(tool_column,))
