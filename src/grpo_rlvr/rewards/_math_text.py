"""A written final answer as ``math`` checks it: the text handed to math-verify, a multiple-choice letter, or why
the answer does not count.

In order: ``\\text{}``-like wrappers are unwrapped (``\\text{12 apples}``, ``\\textbf{5}``, ``\\mathrm{(B)}``);
escaped dollars are currency and dropped (``\\$12.50``, ``\\$1,250``); degree marks are dropped (``30^\\circ``,
``30°``, "30 degrees"); thousands separators between digit groups are dropped (``1,250``, ``1{,}250``,
``1\\,250``; with ``thousands``: a comma followed by exactly three digits inside a number, so "1, 250" with a
space stays a list); a number followed by one to three words is that number ("20 dollars", "3/4 cup",
"2 1/2 pizzas"); a mixed number reads as whole + fraction (with ``mixed_numbers``: "2 1/2" and ``2\\frac{1}{2}``
are 5/2); ``1.5e3`` is ``1.5 \\times 10^{3}``. An answer that ends
in an operator or "=" is cut off ("12 + 10 =") and never counts, nor does a one-line completion without any
marker that reads as a sentence ("First, 48/2 = 24. Then 48 + 24"): only a bare answer ("3/4", "x = 5") does. With ``choices``, a ground truth that is one
letter A–E (``C``, ``(C)``) is compared with the answer's choice label ("(C) 12", "C.", "C"), and a label before
a value ("(C) 12" against 12) is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox|textnormal)\s*\{([^{}]*)\}")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\s*\bdegrees?\b", re.IGNORECASE)
_GROUPED = re.compile(r"(?<![\d.])\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+(?![\d])")
_NUMBER = r"[-+]?(?:\d+\s+\d+/\d+|\d+/\d+|\d+(?:\.\d+)?)"
_UNITS = re.compile(rf"^\s*({_NUMBER})\s*(?:[A-Za-z][A-Za-z.]*(?:\^\{{?\d\}}?)?\s*){{1,3}}$")
# a line that starts like a sentence ("First, 48/2 = 24. Then 48 + 24"), not like a bare answer ("3/4", "x = 5")
_PROSE = re.compile(r"^\s*[*_]*[A-Za-z]{2,}(?![A-Za-z]*\s*[=(^_{])\W.*?\b[A-Za-z]{2,}", re.DOTALL)
_MIXED = re.compile(r"^([-+]?)(\d+)\s+(\d+)/(\d+)$")
_MIXED_TEX = re.compile(r"^([-+]?)(\d+)\s*\\[dt]?frac\s*\{(\d+)\}\s*\{(\d+)\}$")
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])")
_CUT_OFF = re.compile(r"(?:[=+\-*/^×÷·(,]|\\(?:cdot|times|div|frac|sqrt|le|ge|leq|geq))\s*$")
_CHOICE_GOLD = re.compile(r"^\s*\(?\s*([A-E])\s*\)?\.?\s*$")
_CHOICE_LABEL = re.compile(r"^\s*\(([A-E])\)\s*|^\s*([A-E])(?:[.):]\s*|\s*$)")


@dataclass(frozen=True)
class Written:
    """What to check: ``text`` for math-verify, or ``choice`` (a letter, compared with the ground truth's), or
    ``problem`` when the answer does not count."""

    text: str = ""
    choice: str | None = None
    problem: str | None = None


def gold_choice(gold: str, choices: bool) -> str | None:
    """The ground truth's choice letter, when it is one letter A–E and ``choices`` is on."""
    m = _CHOICE_GOLD.match(str(gold)) if choices else None
    return m.group(1) if m else None


def written(answer: str, gold: str, *, thousands: bool = True, mixed_numbers: bool = True,
            choices: bool = True, bare: bool = False) -> Written:
    """``answer`` (an extracted final answer) as ``math`` checks it against ``gold``; see the module docstring.
    ``bare``: the answer is a whole one-line completion with no marker, which counts only when it is a bare
    answer, not a sentence."""
    s = answer.strip()
    if bare and _PROSE.match(s) and not gold_choice(gold, choices):
        return Written(problem="no final answer found: the one-line completion is a sentence, not a bare answer")
    for _ in range(3):  # nested wrappers: \text{\textbf{5}}
        s = _WRAPPER.sub(lambda m: m.group(1), s)
    letter = gold_choice(gold, choices)
    label = _CHOICE_LABEL.match(s) if choices else None
    if letter is not None:
        got = (label.group(1) or label.group(2)) if label else None
        if got is None and re.fullmatch(r"[a-e]", s):
            got = s.upper()
        return Written(choice=got or "", problem=None if got else f"answer {s[:40]} names no choice (A–E)")
    if label is not None and s[label.end():].strip():
        s = s[label.end():].strip()  # "(C) 12" against 12: the label goes
    bare = s.strip("$ \t\n")
    if _CUT_OFF.search(bare):
        return Written(problem=f"answer {bare[-40:]} is cut off (it ends with {bare[-1]!r})")
    s = re.sub(r"(?<!\\)%", r"\\%", s.replace("\\$", ""))  # % starts a LaTeX comment; \$ is currency
    s = _DEGREES.sub("", s).strip()
    if thousands:
        s = _GROUPED.sub(lambda m: re.sub(r"\{,\}|\\,|,", "", m.group()), s)
    m = _UNITS.match(s)
    if m:
        s = m.group(1)
    if mixed_numbers:
        mixed = _MIXED.match(s) or _MIXED_TEX.match(s)
        if mixed:
            sign, whole, num, den = mixed.groups()
            s = f"{sign}({whole} + \\frac{{{num}}}{{{den}}})"
    s = _SCIENTIFIC.sub(lambda m: f"{m.group(1)} \\times 10^{{{m.group(2)}}}", s)
    unescaped = re.search(r"(?<!\\)\$", s)
    return Written(text=s if unescaped or "\\(" in s else f"${s}$")
