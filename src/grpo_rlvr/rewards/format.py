"""``format``: does the completion have the required structure (by default one ``<answer>…</answer>``)?

Score 1.0 when the stripped completion has the structure, else 0.0 with a reason that says what is wrong: no
``<answer>`` tag, no closing tag, several tags, text after ``</answer>``, or text before ``<answer>``. The default
structure is one ``<tag>…</tag>`` at the end, optionally after one ``<think>…</think>`` (one: a second
``</think>`` is text before the tag); with
``allow_text_before`` any text may come first (a prompt that asks to "reason step by step, then give the answer
inside <answer></answer>"), and only text after the closing tag is refused. A custom ``pattern`` (a regular
expression, matched with ``fullmatch``, DOTALL) replaces the default structure; the tag checks still run first
when the pattern contains ``<tag>`` and ``</tag>``.

The same rules decide, for every correctness reward of a brief whose ``format`` reward defines a tag, whether
the answer counts and what text it reads (``_inside_tag``): a malformed completion's answer is never paid for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, source_fingerprint

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


def _one_think(text: str) -> bool:
    """Whether ``text`` is exactly one ``<think>…</think>`` block (not "<think>a</think>b</think>")."""
    return text.count("<think>") == 1 and text.count("</think>") == 1 and _THINK.fullmatch(text) is not None


def _excerpt(text: str, n: int = 30) -> str:
    text = re.sub(r"\s+", " ", text)
    return repr(text if len(text) <= n else text[: n - 1] + "…")


@dataclass(frozen=True)
class Structure:
    """The structure a brief's ``format`` reward requires, and the answer span inside it."""

    tag: str = "answer"
    pattern: str | None = None  # a custom regular expression; None: the default structure
    allow_text_before: bool = False

    @classmethod
    def build(cls, reward: str, tag: object = "answer", pattern: object = None,
              allow_text_before: object = False) -> Structure:
        """A checked ``Structure``.

        Raises:
            RewardError: an empty or non-string tag, a pattern that does not compile, a non-boolean flag.
        """
        if not isinstance(tag, str) or not re.fullmatch(r"[A-Za-z_][\w.:-]*", tag):
            raise RewardError(f"reward {reward!r}: params.tag is {tag!r}; use a tag name such as 'answer'")
        if not isinstance(allow_text_before, bool):
            raise RewardError(f"reward {reward!r}: params.allow_text_before is {allow_text_before!r}; use true "
                              "(reasoning may come before the tag) or false")
        if pattern is not None:
            try:
                re.compile(pattern, re.DOTALL)
            except (re.error, TypeError) as e:
                raise RewardError(f"reward {reward!r}: params.pattern {pattern!r} is not a valid regular "
                                  f"expression ({e}); fix the pattern in the brief") from e
        return cls(tag, pattern, allow_text_before)

    @property
    def tagged(self) -> bool:
        """Whether the structure has an answer tag (a custom pattern may not)."""
        return self.pattern is None or (f"<{self.tag}>" in self.pattern and f"</{self.tag}>" in self.pattern)

    def params(self) -> dict:
        return {"tag": self.tag, "pattern": self.pattern, "allow_text_before": self.allow_text_before}

    def split(self, text: str) -> tuple[str | None, str | None]:
        """``(inner, problem)``: the stripped text inside the tag of a well-formed completion, or None and why
        the completion is not well-formed ("no <answer> tag", "text after </answer>: '…'")."""
        body = text.strip()
        inner = ""
        if self.tagged:
            open_t, close_t = f"<{self.tag}>", f"</{self.tag}>"
            n_open, n_close = body.count(open_t), body.count(close_t)
            if n_open == 0:
                return None, f"no {open_t} tag"
            if n_close == 0:
                return None, f"no {close_t} closing tag"
            if n_open > 1:  # a lazy .*? would span two answers
                return None, f"{n_open} {open_t} tags, expected one"
            if n_close > 1:
                return None, f"{n_close} {close_t} closing tags, expected one"
            start, end = body.index(open_t), body.index(close_t)
            if end < start:
                return None, f"{close_t} before {open_t}"
            inner = body[start + len(open_t):end].strip()
            after = body[end + len(close_t):].strip()
            if after and self.pattern is None:
                return None, f"text after {close_t}: {_excerpt(after)}"
            before = body[:start].strip()
            if before and self.pattern is None and not self.allow_text_before and not _one_think(before):
                return None, f"text before {open_t}: {_excerpt(before)}"
        if self.pattern is not None:
            rx = re.compile(("(?:.*?)" if self.allow_text_before else "") + f"(?:{self.pattern})", re.DOTALL)
            if not rx.fullmatch(body):
                return None, "does not match the format's pattern"
        return inner, None


def not_counted(problem: str, tag: str) -> str:
    """The reason a correctness reward gives when it refuses to count the answer of a malformed completion."""
    return problem if problem == f"no <{tag}> tag" else f"malformed, answer not counted: {problem}"


def format_reward(pattern: str | None = None, tag: str = "answer", allow_text_before: bool = False) -> Reward:
    """Build the format reward.

    Args:
        pattern: a regular expression the stripped completion must fully match, in place of the default
            structure (one ``<tag>…</tag>`` at the end, optionally after one ``<think>…</think>``).
        tag: the answer tag; correctness rewards of the brief read inside it.
        allow_text_before: accept any text (free reasoning) before the tag; set it when the prompt asks the
            model to reason first and then give the tagged answer. Text after the closing tag is never accepted.
    Raises:
        RewardError: a bad tag, a pattern that does not compile.
    """
    structure = Structure.build("format", tag, pattern, allow_text_before)

    def score(text: str, row: dict) -> Scored:
        _, problem = structure.split(text)
        return Scored(0.0, problem) if problem else Scored(1.0, "well-formed")

    params = structure.params()
    return Reward("format", "format", params, per_item(score), source_fingerprint(format_reward, extra=params))
