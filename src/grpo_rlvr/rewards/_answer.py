"""Finding the final answer in a completion, shared by ``exact_match`` and ``math``.

``extract`` modes: ``auto`` (the default: where models write it, below), ``tag`` (inside the last
``<tag>…</tag>``), ``boxed`` (the last ``\\boxed{…}``), ``last_number``, ``full`` (the whole stripped text).

``auto`` takes, in this order of preference: the last ``<tag>…</tag>`` (``<answer>`` by default); the last
``\\boxed{…}`` (or ``\\fbox{…}``); the last ``#### …`` line
(GSM8K); the last "final answer" / "the answer is" / "Answer:" phrase, up to the end of its sentence (a math span
right after the phrase is taken whole: "The final answer is $17$. I hope it is correct." gives ``17``); the last
inline math (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``); and, for a one-line completion, the whole line.
Markdown bold and a final period are dropped. When the brief's ``format`` reward defines an answer tag, the reward
sees only the text inside that tag of a well-formed completion (``_inside_tag``), and these rules find the answer
there. Limits: an answer that runs over several sentences is cut at the first sentence end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EXTRACT_MODES = ("auto", "tag", "boxed", "last_number", "full")

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASHES = re.compile(r"^[ \t]*####[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_PHRASE = re.compile(r"(?:\bfinal\s+answer\s*(?:is|:|：)|\bthe\s+answer\s+is\b\s*:?|\banswer\s*[:：])[ \t]*",
                     re.IGNORECASE)
_MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$", re.DOTALL)
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\n|;|!|\?(?=\s|$)")


@dataclass(frozen=True)
class Answer:
    """An extracted answer: its text and where it was found (named in reasons)."""

    text: str
    where: str


def _braced(text: str, open_end: int) -> str | None:
    """The content of the brace group whose ``{`` ends at ``open_end``, or None when it never closes."""
    depth = 0
    for j in range(open_end, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            if depth == 0:
                return text[open_end:j]
            depth -= 1
    return None


def _last_boxed(text: str) -> str | None:
    for m in reversed(list(_BOXED.finditer(text))):
        got = _braced(text, m.end())
        if got is not None:
            return got
    return None


def _clean(s: str) -> str:
    s = s.strip().strip("*").strip()
    s = re.sub(r"^(?:is\s+|:\s*)", "", s).strip().strip("*").strip()
    return s.rstrip(".").strip()


def _after_phrase(rest: str) -> str:
    """The answer after "the answer is": a math span or \\boxed{} that starts it, else up to the sentence end."""
    rest = rest.lstrip(" \t*:")
    boxed = _BOXED.match(rest)
    if boxed and (got := _braced(rest, boxed.end())) is not None:
        return got
    m = _MATH.match(rest)
    if m:
        return next(g for g in m.groups() if g is not None)
    end = _SENTENCE_END.search(rest)
    return rest[: end.start()] if end else rest


def _auto(text: str, tag: str) -> Answer | None:
    tagged = find_answer(text, "tag", tag)
    if tagged is not None and tagged.text:
        return tagged
    boxed = _last_boxed(text)
    if boxed is not None and boxed.strip():
        return Answer(boxed.strip(), "\\boxed{}")
    hashes = _HASHES.findall(text)
    if hashes:
        return Answer(_clean(hashes[-1]), "####")
    phrases = list(_PHRASE.finditer(text))
    for m in reversed(phrases):
        got = _clean(_after_phrase(text[m.end():]))
        if got:
            return Answer(got, "'the answer is'")
    maths = [next(g for g in m.groups() if g is not None) for m in _MATH.finditer(text)]
    maths = [s.strip() for s in maths if s.strip()]
    if maths:
        return Answer(maths[-1], "inline math")
    line = text.strip()
    if line and "\n" not in line:
        return Answer(_clean(line), "the one-line completion")
    return None


def find_answer(text: str, mode: str, tag: str = "answer") -> Answer | None:
    """The answer in ``text`` by ``mode`` (see the module docstring), or None when there is none."""
    if mode == "auto":
        return _auto(text, tag)
    if mode == "tag":
        found = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, flags=re.DOTALL)
        return Answer(found[-1].strip(), f"<{tag}>") if found else None
    if mode == "boxed":
        got = _last_boxed(text)
        return Answer(got.strip(), "\\boxed{}") if got is not None else None
    if mode == "last_number":
        nums = _NUMBER.findall(text)
        return Answer(nums[-1], "last number") if nums else None
    return Answer(text.strip(), "completion")


def extract_answer(text: str, mode: str, tag: str = "answer") -> str | None:
    """The answer span of ``text`` (see ``find_answer``), or None when there is none."""
    found = find_answer(text, mode, tag)
    return None if found is None else found.text


def describe_missing(mode: str, tag: str) -> str:
    return {"auto": f"no final answer found (no <{tag}>, \\boxed{{}}, ####, 'the answer is', inline math)",
            "tag": f"no <{tag}> tag", "boxed": "no \\boxed{} answer",
            "last_number": "no number in the completion", "full": "empty completion"}[mode]
