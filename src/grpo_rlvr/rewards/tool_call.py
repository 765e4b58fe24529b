"""``tool_call``: does the completion make the expected tool call(s)?

Ground truth (the ``tool`` column, or ``tool_column``; an object or a JSON string), one of:

- a schema ``{"name", "parameters"}`` (or OpenAI's ``{"type": "function", "function": {...}}``): one call of
  ``name`` whose arguments validate against ``parameters`` (none: any object) gets 1.0;
- an expected call ``{"name", "arguments"}`` (``arguments`` an object or a JSON string; an optional
  ``parameters`` schema is used to judge arguments that differ): full credit only for the same name and equal
  arguments (``_tool_calls.same_value``: key order free, types strict, 1 == 1.0, "1" ≠ 1, true ≠ 1);
- a list of expected calls (parallel calls, in any order); an empty list expects no call at all.

Scores (``n`` calls expected, ``m`` made): no parseable call 0; calls to none of the expected functions
``partial_credit_name``; otherwise each expected call is paired with the best unpaired call of the same name,
a pair scoring 1 for equal arguments, ``partial_credit_args`` for arguments that do not parse, break the schema
or repeat a key, and else ``partial_credit_args + (1 - partial_credit_args) × share`` where ``share`` is the
share of argument keys (over both sides' keys) whose values are equal; the score is the sum over pairs divided
by ``max(n, m)``, so a missing or an extra call costs its share. Against a schema, the pair scores 1 for valid
arguments. Where calls are read: ``_tool_calls``. Store tools as JSON strings (see ``json_schema`` for why).
"""

from __future__ import annotations

import math

from grpo_rlvr.errors import BadColumn, RewardError, RowError
from grpo_rlvr.rewards._json_extract import extract_json_values, schema_validator, short, validation_problem
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, row_value, source_fingerprint
from grpo_rlvr.rewards._tool_calls import Call, argument_diff, completion_calls, expected_of

NAME = "tool_call"

def tool_call_reward(tool_column: str = "tool", partial_credit_name: float = 0.25,
                     partial_credit_args: float = 0.5) -> Reward:
    """Build the tool-call correctness reward.

    Args:
        tool_column: the dataset column holding the schema, the expected call or the list of expected calls.
        partial_credit_name: the score when the completion's calls are parseable but none is to an expected
            function.
        partial_credit_args: the floor of a call to the right function with arguments that are not equal;
            differing but valid arguments earn more with the share of equal ones. Requires
            0 ≤ partial_credit_name < partial_credit_args < 1, so each step closer scores higher.
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
    schema_col = f"{tool_column}.parameters"

    def expected_for(row: dict):
        """The row check: what the row's tool value expects (its calls or its schema), every schema compiled."""
        value = row_value(NAME, row, tool_column, "tool_column")
        try:
            expected = expected_of(value, tool_column)
            for s in (expected.schemas or {}).values():
                schema_validator(s, NAME, schema_col)
        except RowError:
            raise
        except RewardError as e:
            raise BadColumn(NAME, tool_column, str(e)) from None
        return expected

    def pair(want: Call | None, got: Call, schema: object) -> Scored:
        """One call of the right function against the expected call (None: against the schema only)."""
        if got.problem:
            return Scored(credit_args, f"called {got.name}: {got.problem}")
        if schema is not None:
            try:
                problem = validation_problem(schema_validator(schema, NAME, schema_col), got.arguments, NAME,
                                             schema_col)
            except RewardError as e:   # a $ref the row's schema cannot resolve: its data, found while validating
                raise BadColumn(NAME, tool_column, str(e)) from None
            if problem is not None:
                return Scored(credit_args, f"called {got.name}: arguments invalid {problem}")
        if got.duplicates:
            return Scored(credit_args, f"called {got.name}: duplicate argument {short(got.duplicates[0])}")
        if want is None:
            return Scored(1.0, f"called {got.name} with valid arguments")
        share, diff = argument_diff(want.arguments, got.arguments)
        if not diff:
            return Scored(1.0, f"called {got.name} with the expected arguments")
        return Scored(credit_args + (1 - credit_args) * share, f"called {got.name}: arguments differ ({diff})")

    def score(text: str, row: dict) -> Scored:
        expected = expected_for(row)   # bad data raise before the output is looked at
        calls, problem = completion_calls(text)
        wants = expected.calls if expected.calls is not None else (None,)
        names = [w.name if w is not None else expected.name for w in wants]
        if not wants:
            if calls:
                return Scored(0.0, f"called {short(calls[0].name)}, expected no tool call")
            return Scored(1.0, "no tool call, as expected")
        if not calls:
            return Scored(0.0, problem)
        if not any(c.name in names for c in calls):
            return Scored(credit_name, f"called {short(calls[0].name)}, expected {', '.join(names)}")
        # Pair each expected call with the best unpaired call of its function (greedy on the pair score).
        options = sorted(((pair(w, c, (expected.schemas or {}).get(names[i])), i, j)
                          for i, w in enumerate(wants) for j, c in enumerate(calls) if c.name == names[i]),
                         key=lambda t: -(t[0].score or 0.0))
        used_w: set[int] = set()
        used_c: set[int] = set()
        picked = []
        for s, i, j in options:
            if i not in used_w and j not in used_c:
                used_w.add(i)
                used_c.add(j)
                picked.append(s)
        total = sum(s.score or 0.0 for s in picked) / max(len(wants), len(calls))
        if len(wants) == len(calls) == 1:
            return Scored(total, picked[0].reason)
        missing = [names[i] for i in range(len(wants)) if i not in used_w]
        extra = [calls[j].name for j in range(len(calls)) if j not in used_c]
        per = [s.reason for s in picked] + [f"{n} not called" for n in missing] + [f"extra call {short(n)}"
                                                                                  for n in extra]
        return Scored(total, f"{len(calls)} calls, {len(wants)} expected: {'; '.join(per)}")

    params = {"tool_column": tool_column, "partial_credit_name": credit_name,
              "partial_credit_args": credit_args}
    return Reward(NAME, "correctness", params, per_item(score),
                  source_fingerprint(tool_call_reward, completion_calls, extract_json_values, extra=params),
                  columns=(tool_column,), check_row=expected_for)
