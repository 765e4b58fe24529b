"""Pulling the final answer out of a completion, shared by ``exact_match`` and ``math``."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def extract_answer(text: str, mode: str, tag: str = "answer") -> str | None:
    """The answer span of ``text``, or None when there is none.

    mode: ``tag`` (inside the last ``<tag>…</tag>``), ``boxed`` (last ``\\boxed{…}``), ``last_number``,
    or ``full`` (the whole stripped text).
    """
    if mode == "tag":
        found = re.findall(rf"<{tag}>(.*?)</{tag}>", text, flags=re.DOTALL)
        return found[-1].strip() if found else None
    if mode == "boxed":
        start = text.rfind("\\boxed{")
        if start < 0:
            return None
        depth, i = 0, start + len("\\boxed{")
        for j in range(i, len(text)):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                if depth == 0:
                    return text[i:j].strip()
                depth -= 1
        return None
    if mode == "last_number":
        nums = _NUMBER.findall(text)
        return nums[-1] if nums else None
    return text.strip()


EXTRACT_MODES = ("tag", "boxed", "last_number", "full")


def describe_missing(mode: str, tag: str) -> str:
    return {"tag": f"no <{tag}> tag", "boxed": "no \\boxed{} answer",
            "last_number": "no number in the completion", "full": "empty completion"}[mode]
