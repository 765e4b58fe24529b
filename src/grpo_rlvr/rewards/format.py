"""``format``: does the completion have the required structure (by default ``<answer>…</answer>``)?

Score 1.0 when the whole completion matches ``pattern`` (a regular expression, matched with ``fullmatch``
after stripping surrounding whitespace, DOTALL), else 0.0, with a reason naming what is missing.
"""

from __future__ import annotations

import re

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, source_fingerprint

DEFAULT_PATTERN = r"(?:<think>.*?</think>\s*)?<answer>.*?</answer>"


def format_reward(pattern: str = DEFAULT_PATTERN, tag: str = "answer") -> Reward:
    """Build the format reward.

    Args:
        pattern: regular expression the stripped completion must fully match.
        tag: the answer tag, named in reasons ("no <answer> tag").
    Raises:
        RewardError: the pattern does not compile.
    """
    try:
        rx = re.compile(pattern, re.DOTALL)
    except (re.error, TypeError) as e:
        raise RewardError(f"reward 'format': params.pattern {pattern!r} is not a valid regular expression ({e}); "
                          "fix the pattern in the brief") from e
    open_t, close_t = f"<{tag}>", f"</{tag}>"

    def score(text: str, row: dict) -> Scored:
        body = text.strip()
        if open_t not in body:
            return Scored(0.0, f"no {open_t} tag")
        if close_t not in body:
            return Scored(0.0, f"no {close_t} closing tag")
        if body.count(open_t) > 1:  # checked before the pattern: a lazy .*? would span two answers
            return Scored(0.0, f"{body.count(open_t)} {open_t} tags, expected one")
        if rx.fullmatch(body):
            return Scored(1.0, "well-formed")
        return Scored(0.0, "text outside the required structure")

    params = {"pattern": pattern, "tag": tag}
    return Reward("format", "format", params, per_item(score), source_fingerprint(format_reward, extra=params))
