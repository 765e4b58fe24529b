"""``json_schema``: is the completion's JSON valid against the row's JSON Schema?

Scores: 0.0 when no JSON is found or it does not parse; ``partial_credit`` when it parses but violates the
schema (the reason names the most relevant violation, jsonschema's ``best_match``, at its JSON path), when an
object gives a key twice (never full credit: consumers disagree on which value wins), or, with ``strict`` (the
default), when text other than whitespace follows the JSON or its closing fence; 1.0 when valid. Text before the
JSON ("Here it is:") is allowed. The schema (the ``schema`` column, an object or a JSON string) is checked once per distinct schema; an
invalid one is bad data and raises RewardError. Where the JSON is looked for: ``_json_extract``. Limits:
``format`` is not asserted (annotation only); remote ``$ref`` are not fetched (one that cannot be resolved
raises RewardError). Store schemas as JSON strings: a dict column loaded through ``datasets`` (Arrow) gets
every row's keys, missing ones as null, which changes the schema.
"""

from __future__ import annotations

import math

from grpo_rlvr.errors import BadColumn, RewardError, RowError
from grpo_rlvr.rewards._json_extract import (
    extract_json,
    load_json_column,
    schema_validator,
    short,
    validation_problem,
)
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, row_value, source_fingerprint

NAME = "json_schema"


def json_schema_reward(schema_column: str = "schema", partial_credit: float = 0.25, strict: bool = True) -> Reward:
    """Build the JSON-Schema correctness reward.

    Args:
        schema_column: the dataset column holding each row's JSON Schema (an object, or a JSON string).
        partial_credit: the score of JSON that parses but violates the schema, in [0, 1). Above 0 it keeps the
            composite ordering: unparseable < parseable-but-invalid < valid.
        strict: full credit only when nothing but whitespace follows the JSON (or its closing fence); with
            False, text after it is ignored.
    Raises:
        RewardError: bad parameters; at scoring time, a missing column or an invalid schema in the dataset.
    """
    if not isinstance(schema_column, str) or not schema_column:
        raise RewardError(f"reward {NAME!r}: params.schema_column is {schema_column!r}; name the dataset "
                          "column holding the JSON Schema (default 'schema')")
    if (isinstance(partial_credit, bool) or not isinstance(partial_credit, (int, float))
            or not math.isfinite(partial_credit) or not 0 <= partial_credit < 1):
        raise RewardError(f"reward {NAME!r}: params.partial_credit is {partial_credit!r}; use a number in "
                          "[0, 1) (the score of parseable JSON that violates the schema)")
    if not isinstance(strict, bool):
        raise RewardError(f"reward {NAME!r}: params.strict is {strict!r}; use true (no full credit with text "
                          "after the JSON) or false (text after it is ignored)")
    partial = float(partial_credit)

    def schema_of(row: dict):
        """The row check: the row's schema, parsed and compiled (a jsonschema validator)."""
        value = row_value(NAME, row, schema_column, "schema_column")
        try:
            return schema_validator(load_json_column(value, NAME, schema_column), NAME, schema_column)
        except RowError:
            raise
        except RewardError as e:
            raise BadColumn(NAME, schema_column, str(e)) from None

    def score(text: str, row: dict) -> Scored:
        # Bad data raise before the text is looked at, so a broken schema never hides behind bad output.
        validator = schema_of(row)
        found = extract_json(text)
        if not found.ok:
            return Scored(0.0, found.problem)
        try:
            problem = validation_problem(validator, found.value, NAME, schema_column)
        except RewardError as e:   # a $ref the schema cannot resolve: the row's data, found while validating
            raise BadColumn(NAME, schema_column, str(e)) from None
        if problem is not None:
            return Scored(partial, f"invalid {problem}")
        if found.duplicates:
            return Scored(partial, f"duplicate key {short(found.duplicates[0])!r}: consumers disagree on which "
                          "value wins")
        if strict and found.trailing:
            return Scored(partial, f"valid, but text after the JSON: {short(found.trailing)!r}")
        return Scored(1.0, "valid against the schema")

    params = {"schema_column": schema_column, "partial_credit": partial, "strict": strict}
    return Reward(NAME, "correctness", params, per_item(score),
                  source_fingerprint(json_schema_reward, extract_json, extra=params),
                  columns=(schema_column,), check_row=schema_of)
