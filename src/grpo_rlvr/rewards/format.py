"""``format``: does the completion have the required structure (by default ``<answer>…</answer>``)?

Score 1.0 when the whole completion matches ``pattern`` (a regular expression, matched with ``fullmatch``
after stripping surrounding whitespace, DOTALL), else 0.0, with a reason naming what is missing.
"""

from __future__ import annotations

import re

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, source_fingerprint

DEFAULT_PATTERN = r"(?:<think>.*?</think>\s*)?<answer>.*?</answer>"


def default_pattern(tag: str) -> str:
    return DEFAULT_PATTERN.replace("answer", tag)


def structure_pattern(reward: str, tag: str, pattern: str | None) -> re.Pattern:
    """The compiled structure a correctness reward requires before counting an answer (``require_format``).

    Raises:
        RewardError: ``pattern`` does not compile.
    """
    try:
        return re.compile(default_pattern(tag) if pattern is None else pattern, re.DOTALL)
    except (re.error, TypeError) as e:
        raise RewardError(f"reward {reward!r}: params.pattern {pattern!r} is not a valid regular expression "
                          f"({e}); fix the pattern in the brief") from e


def not_counted(problem: str, tag: str) -> str:
    """The reason a correctness reward gives when it refuses to count the answer of a malformed completion."""
    return problem if problem == f"no <{tag}> tag" else f"malformed, answer not counted: {problem}"


def structure_problem(text: str, rx: re.Pattern, tag: str) -> str | None:
    """Why ``text`` is not well-formed (a reason string), or None when it is."""
    body = text.strip()
    open_t, close_t = f"<{tag}>", f"</{tag}>"
    if open_t not in body:
        return f"no {open_t} tag"
    if close_t not in body:
        return f"no {close_t} closing tag"
    if body.count(open_t) > 1:  # checked before the pattern: a lazy .*? would span two answers
        return f"{body.count(open_t)} {open_t} tags, expected one"
    if rx.fullmatch(body):
        return None
    return "text outside the required structure"


def format_reward(pattern: str | None = None, tag: str = "answer") -> Reward:
    """Build the format reward.

    Args:
        pattern: regular expression the stripped completion must fully match (default: one ``<tag>…</tag>``,
            optionally after one ``<think>…</think>``).
        tag: the answer tag, named in reasons ("no <answer> tag").
    Raises:
        RewardError: the pattern does not compile.
    """
    rx = structure_pattern("format", tag, pattern)
    pattern = rx.pattern

    def score(text: str, row: dict) -> Scored:
        problem = structure_problem(text, rx, tag)
        return Scored(0.0, problem) if problem else Scored(1.0, "well-formed")

    params = {"pattern": pattern, "tag": tag}
    return Reward("format", "format", params, per_item(score), source_fingerprint(format_reward, structure_problem, extra=params))
