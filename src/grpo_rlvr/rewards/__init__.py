"""Reward functions: a closed registry of built-ins, plus user rewards by ``module:function`` or ``.py`` path.

Every reward is a ``Reward``: callable with TRL's contract, ``explain``-able (score + reason), fingerprinted.
The registry is the one list of names: help text, docs and error suggestions come from it.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._inside_tag import ANSWER_READERS, inside_tag, take_params, with_brief_format
from grpo_rlvr.rewards._inside_tag import PARAMS as SHARED_PARAMS
from grpo_rlvr.rewards._reward import KINDS, Reward, Scored, completion_text, refuse_raised
from grpo_rlvr.rewards.exact_match import exact_match_reward
from grpo_rlvr.rewards.format import format_reward
from grpo_rlvr.rewards.json_schema import json_schema_reward
from grpo_rlvr.rewards.length_penalty import length_penalty_reward
from grpo_rlvr.rewards.math_answer import math_reward
from grpo_rlvr.rewards.rubric_judge import rubric_judge_reward
from grpo_rlvr.rewards.tool_call import tool_call_reward
from grpo_rlvr.rewards.unit_tests import unit_tests_reward
from grpo_rlvr.rewards.user import user_reward

__all__ = ["KINDS", "REGISTRY", "Reward", "RewardEntry", "Scored", "build_reward", "combine", "completion_text",
           "exact_match_reward", "format_reward", "from_brief", "json_schema_reward", "length_penalty_reward", "math_reward",
           "rubric_judge_reward", "tool_call_reward", "unit_tests_reward", "user_reward", "with_brief_format"]


@dataclass(frozen=True)
class RewardEntry:
    """A built-in: its factory, a one-line summary, and what the reference page (``reference.py``) shows."""

    factory: Callable[..., Reward]
    summary: str
    # dataset column param -> the shape of the value it holds
    columns: dict[str, str] = field(default_factory=dict)
    # every reason the reward gives, with {placeholders} for the parts that vary
    reasons: tuple[str, ...] = ()
    # params for the example brief entry on the reference page
    example: dict = field(default_factory=dict)


_STRUCTURE_REASONS = ("well-formed", "no <{tag}> tag", "no </{tag}> closing tag", "{n} <{tag}> tags, expected one",
                      "{n} </{tag}> closing tags, expected one", "</{tag}> before <{tag}>",
                      "text after </{tag}>: {excerpt}", "text before <{tag}>: {excerpt}",
                      "does not match the format's pattern")
# what every answer reader says when it refuses a completion that is not well-formed (_inside_tag)
_NOT_COUNTED = ("no <{tag}> tag", "malformed, answer not counted: {problem}")
_ANSWER_REASONS = ("answer {answer} = {expected}", "answer {answer} ≠ {expected}", *_NOT_COUNTED,
                   "no final answer found (no <{tag}>, \\boxed{}, ####, 'the answer is', inline math)",
                   "no \\boxed{} answer", "no number in the completion", "empty completion")

REGISTRY: dict[str, RewardEntry] = {
    "format": RewardEntry(
        format_reward, "required structure, e.g. <answer>…</answer> (1/0)",
        reasons=_STRUCTURE_REASONS,
        example={"tag": "answer", "allow_text_before": True}),
    "exact_match": RewardEntry(
        exact_match_reward, "extracted answer equals the ground truth, normalized (1/0)",
        columns={"answer_column": 'the ground truth, a string or a number ("7", 1250, "Paris")'},
        reasons=_ANSWER_REASONS,
        example={"case_sensitive": False, "thousands": True}),
    "math": RewardEntry(
        math_reward, "math-verify equivalence of the one final answer (1/0; a hedge between several values, "
        "an unevaluated or copied expression score 0), timeouts in any thread",
        columns={"answer_column": 'the ground truth as LaTeX or plain math ("\\frac{1}{2}", "0.5", "(1, 2]", '
                                  '"x = 3"); one that does not parse skips the sample (None)'},
        reasons=tuple(r.replace(" = ", " ≡ ") for r in _ANSWER_REASONS[:2]) + _ANSWER_REASONS[2:] + (
            "answer {answer} is not a parseable expression", "timed out checking answer {answer}",
            "ground truth {expected} does not parse; sample skipped", "could not check answer {answer}: {error}",
            "answer {answer} is cut off (it ends with {character})", "answer {answer} names no choice (A–E)",
            "answer {answer} names several choices ({letters})",
            "answer {answer} hedges ({why}); the ground truth is one value",
            "answer {answer} is not worked out to a number, and the ground truth is one",
            "answer {answer} restates an expression from the question instead of solving it",
            "no final answer found: the one-line completion is a sentence, not a bare answer"),
        example={"timeout_s": 5, "rel_tol": 1e-6}),
    "json_schema": RewardEntry(
        json_schema_reward, "JSON in the completion validates against the row's schema "
        "(unparseable 0 < invalid, duplicate keys or trailing text 0.25 < valid 1)",
        columns={"schema_column": "a JSON Schema, as an object or (better, see below) a JSON string"},
        reasons=("valid against the schema", "no JSON found", "JSON does not parse: {problem}",
                 "invalid at {path}: {message}", "duplicate key {key}: consumers disagree on which value wins",
                 "valid, but text after the JSON: {text}", *_NOT_COUNTED),
        example={"partial_credit": 0.25, "strict": True}),
    "tool_call": RewardEntry(
        tool_call_reward, "the completion makes the row's expected call(s), or a valid call of its schema "
        "(none 0 < wrong name < right name, share of equal arguments < 1)",
        columns={"tool_column": 'a schema {"name", "parameters"}, an expected call {"name", "arguments"} '
                                "(arguments an object or a JSON string; an optional parameters schema), or a "
                                "list of expected calls (an empty list: no call expected); objects or JSON strings"},
        reasons=("no tool call found", 'no tool call: JSON {json} has no "name"', "JSON does not parse: {problem}",
                 "called {name}, expected {expected}", "called {name} with valid arguments",
                 "called {name} with the expected arguments", "called {name}: arguments invalid at {path}: {message}",
                 "called {name}: arguments string invalid: {problem}", "called {name}: duplicate argument {key}",
                 "called {name}: gives both arguments and parameters (consumers read different ones)",
                 "called {name}: gives both a name and a function object (consumers read different ones)",
                 "called {name}: arguments differ ({differences})", "{m} calls, {n} expected: {per_call}",
                 "no tool call, as expected", "called {name}, expected no tool call", *_NOT_COUNTED),
        example={"partial_credit_name": 0.25, "partial_credit_args": 0.5}),
    "unit_tests": RewardEntry(
        unit_tests_reward, "share of tests the completion's program passes, in the sandbox",
        columns={"tests_column": 'a list of assert strings, a list of {"input", "output"} stdin/stdout cases, or '
                                 "test code as one string (a script, pytest-style test_* functions, a "
                                 "unittest.TestCase, or HumanEval's check(candidate) with an entry_point column)"},
        reasons=("{passed}/{total} passed", "{passed}/{total} passed; test {i} failed: {why}",
                 "{passed}/{total} passed; {what happened to the run}", *_NOT_COUNTED),
        example={"timeout_s": 5, "memory_mb": 512}),
    "length_penalty": RewardEntry(
        length_penalty_reward, "wraps a reward; subtracts a penalty beyond a length budget (linear or DAPO's "
        "soft overlong)",
        reasons=("{inner reason}; length {n} {unit} within budget", "{inner reason}; length {n} {unit} > {limit}: "
                 "−{penalty}"),
        example={"reward": "format", "budget": 512, "unit": "tokens", "mode": "soft_overlong"}),
    "rubric_judge": RewardEntry(
        rubric_judge_reward, "an LLM judge scores against a rubric over an OpenAI-compatible endpoint (e.g. vLLM); "
        "None when the judge fails",
        columns={"reference_column": "optional: a reference answer shown to the judge (a string)"},
        reasons=("judge {score}/{scale}: {rationale}", "judge failed after {n} attempts: {why}"),
        example={"base_url": "http://127.0.0.1:8000/v1", "model": "judge",
                 "rubric": "Score 10 when the answer is correct and complete, 0 when it is wrong."}),
}


# A factory with this keyword wraps another reward (length_penalty): the registry hands it ``build_reward``, so the
# wrapper need not import the registry that lists it. It is not a param a brief gives.
_BUILD = "build"


def factory_params(entry: RewardEntry) -> list[inspect.Parameter]:
    """The params a brief may give a built-in: its factory's keyword arguments, less the one the registry passes."""
    return [p for p in inspect.signature(entry.factory).parameters.values() if p.name != _BUILD]


def is_user_ref(name: str) -> bool:
    return ":" in name or name.endswith(".py")


def build_reward(name: str, params: dict | None = None, base_dir: Path | None = None,
                 kind: str | None = None) -> Reward:
    """Build a reward by registry name, or a user reward from ``module:function`` / ``file.py[:function]``.

    Raises:
        RewardError: unknown name (with suggestions), unknown or invalid parameters.
    """
    given = dict(params or {})
    structure, params = take_params(name, given, user=is_user_ref(name))
    reward = _build(name, params, base_dir, kind)
    return reward if structure is None else inside_tag(reward, structure, given)


def from_brief(brief, specs=None) -> list[Reward]:
    """The rewards a brief names (or ``specs``, some of its ``RewardSpec``), built as training builds them:
    params, the brief's folder for user rewards, and each reward's kind.

    Raises:
        RewardError: as :func:`build_reward`.
    """
    return [build_reward(r.name, dict(r.params), base_dir=brief.base_dir, kind=r.kind)
            for r in (brief.rewards if specs is None else specs)]


def _build(name: str, params: dict, base_dir: Path | None, kind: str | None) -> Reward:
    if is_user_ref(name):
        return user_reward(name, kind=kind or "custom", params=params, base_dir=base_dir)
    entry = REGISTRY.get(name)
    if entry is None:
        close = difflib.get_close_matches(name, REGISTRY, n=2)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise RewardError(f"Unknown reward {name!r}.{hint} Available: {', '.join(REGISTRY)}; or a user reward "
                          "as 'module:function' or 'path/to/file.py:function'.")
    wraps = _BUILD in inspect.signature(entry.factory).parameters
    allowed = [*(p.name for p in factory_params(entry)), *(SHARED_PARAMS if name in ANSWER_READERS else ())]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise RewardError(f"reward {name!r}: unknown params {', '.join(unknown)}; "
                          f"allowed: {', '.join(allowed) or 'none'}")
    rubric = params.get("rubric")
    if name == "rubric_judge" and isinstance(rubric, str) and base_dir is not None and rubric.endswith((".txt", ".md")):
        path = Path(rubric)
        params["rubric"] = str(path if path.is_absolute() else Path(base_dir) / path)  # relative to the brief
    try:
        reward = entry.factory(**params, **({_BUILD: build_reward} if wraps else {}))
    except TypeError as e:
        raise RewardError(f"reward {name!r}: bad params {params}: {e}") from e
    if kind is not None and kind != reward.kind:
        reward.kind = kind
    return reward


def combine(rewards: list[Reward], weights: list[float], completions, row_names=None, **columns) -> list[dict]:
    """Score a batch with every reward: per sample ``{"scores": {name: Scored}, "total": float}``.

    The total is the weighted sum TRL computes (None counts as absent, as in TRL's nansum). ``row_names``: each
    sample's data row as training names it (``FILE:LINE``), for the errors.
    Raises:
        RewardError: a reward raised on a sample (named, with where it raised, and its row).
        RowError: a built-in cannot score a row (named by its row when ``row_names`` has it).
    """
    per = {r.name: _explained(r, completions, row_names, columns) for r in rewards}
    for name, scored in per.items():
        refuse_raised(name, scored, completions, row_names)
    out = []
    for i in range(len(completions)):
        scores = {name: per[name][i] for name in per}
        total = sum(w * s.score for (name, s), w in zip(scores.items(), weights, strict=True) if s.score is not None)
        out.append({"scores": scores, "total": total})
    return out


def _explained(reward: Reward, completions, row_names, columns: dict) -> list:
    """``reward.explain``; a row it refuses is named by ``row_names`` (the first such row), as training names it."""
    from grpo_rlvr.errors import BadColumn, MissingColumn, RowError

    try:
        return reward.explain(completions, **columns)
    except RowError as e:
        if not row_names or reward.check_row is None or isinstance(e, MissingColumn):
            raise
        _, rows = reward._texts_and_rows(completions, columns)
        for row, where in zip(rows, row_names, strict=False):
            try:
                reward.check_row(row)
            except RowError:
                if where:
                    raise BadColumn(e.reward, e.column, f"data row {where}: {e}") from None
                break
        raise
