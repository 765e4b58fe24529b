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
letter A–E (``C``, ``(C)``, a solution's ``\\boxed{C}``) is compared with the answer's choice label ("(C) 12",
"C.", "C"); an answer that names several choices ("(A) (B) (C) (D)", "(C) or (D)", "C. D.") counts for none, and
a label before a value ("(C) 12" against 12) is dropped. After the separators go and before the units do, the
answer's shape is read (``_answer_shape``): whether it hedges ("12 or thirteen" is not 12), whether it is one
number written out, and whether it restates an expression from the question (then it never counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grpo_rlvr.rewards._answer import find_answer
from grpo_rlvr.rewards._answer_shape import hedge, is_number, restates

_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|mathrm|mathbf|mbox|textnormal)\s*\{([^{}]*)\}")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\bdegrees?\b", re.IGNORECASE)
_GROUPED = re.compile(r"(?<![\d.])\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+(?![\d])")
_NUMBER = r"[-+]?(?:\d+\s+\d+/\d+|\d+/\d+|\d+(?:\.\d+)?)"
# a unit word ("cm^2"); the lookahead ends it only after its last letter, so a long word is never re-split (linear).
# A possessive ``*+`` would say the same, but Python 3.11 before 3.11.5 mis-matches possessive repeats.
_WORD = r"[A-Za-z][A-Za-z.]*(?![A-Za-z.])(?:\^\{?\d\}?)?"
_UNITS = re.compile(rf"^\s*({_NUMBER})\s*{_WORD}(?:\s+{_WORD}){{0,2}}\s*$")
# a line that starts like a sentence ("First, 48/2 = 24. Then 48 + 24"), not like a bare answer ("3/4", "x = 5")
_PROSE = re.compile(r"^\s*[*_]*[A-Za-z]{2,}(?![A-Za-z]*\s*[=(^_{])\W.*?\b[A-Za-z]{2,}", re.DOTALL)
_MIXED = re.compile(r"^([-+]?)(\d+)\s+(\d+)/(\d+)$")
_MIXED_TEX = re.compile(r"^([-+]?)(\d+)\s*\\[dt]?frac\s*\{(\d+)\}\s*\{(\d+)\}$")
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])")
_CUT_OFF = re.compile(r"(?:[=+\-*/^×÷·(,]|\\(?:cdot|times|div|frac|sqrt|le|ge|leq|geq))\s*$")
_CHOICE_GOLD = re.compile(r"^\s*\(?\s*([A-E])\s*\)?\.?\s*$")
_CHOICE_LABEL = re.compile(r"^\s*\(([A-E])\)\s*|^\s*([A-E])(?:[.):]\s*|\s*$)")
_LABEL_IN_TEXT = re.compile(r"\(([A-E])\)")
_MORE_LABELS = re.compile(r"(?:\s*(?:,|;|/|or|and)?\s*\(?[A-E]\)?[.:]?)+\s*")


@dataclass(frozen=True)
class Written:
    """What to check: ``text`` for math-verify, or ``choice`` (a letter, compared with the ground truth's), or
    ``problem`` when the answer does not count. ``hedge``: why the answer offers several values (it then counts
    only against a ground truth that is itself several values: a set, a list, an interval); ``number``: the
    answer's value is one number written out (``_answer_shape``)."""

    text: str = ""
    choice: str | None = None
    problem: str | None = None
    hedge: str | None = None
    number: bool = False


def gold_choice(gold: str, choices: bool) -> str | None:
    """The ground truth's choice letter, when its final answer (``C``, a solution's ``\\boxed{C}``) is one letter
    A–E and ``choices`` is on."""
    m = _CHOICE_GOLD.match(_final(str(gold))) if choices else None
    return m.group(1) if m else None


def _choice(s: str, label: re.Match | None) -> Written:
    """The choice ``s`` names (its label, or a bare letter), or why it names none or several."""
    got = (label.group(1) or label.group(2)) if label else None
    if got is None and re.fullmatch(r"[a-e]", s):
        got = s.upper()
    if got is None:
        return Written(choice="", problem=f"answer {s[:40]} names no choice (A–E)")
    rest = s[label.end():] if label else ""
    named = {got, *_LABEL_IN_TEXT.findall(rest)}
    if len(rest) <= 64 and _MORE_LABELS.fullmatch(rest):  # "C. D.", "(C) or D": only labels follow
        named |= set(re.findall(r"[A-E]", rest))
    if len(named) > 1:
        return Written(choice="", problem=f"answer {s[:40]} names several choices ({', '.join(sorted(named))})")
    return Written(choice=got)


def _final(gold: str) -> str:
    """The ground truth's final answer as written (a solution's boxed answer, the number after "####")."""
    found = find_answer(gold, "auto")
    return found.text if found is not None else gold


def written(answer: str, gold: str, *, thousands: bool = True, mixed_numbers: bool = True,
            choices: bool = True, bare: bool = False, prompt: str = "") -> Written:
    """``answer`` (an extracted final answer) as ``math`` checks it against ``gold``; see the module docstring.
    ``bare``: the answer is a whole one-line completion with no marker, which counts only when it is a bare
    answer, not a sentence. ``prompt``: the question's text, for the rule against restating it."""
    s = answer.strip()
    if bare and _PROSE.match(s) and not gold_choice(gold, choices):
        return Written(problem="no final answer found: the one-line completion is a sentence, not a bare answer")
    for _ in range(3):  # nested wrappers: \text{\textbf{5}}
        s = _WRAPPER.sub(lambda m: m.group(1), s)
    letter = gold_choice(gold, choices)
    label = _CHOICE_LABEL.match(s) if choices else None
    if letter is not None:
        return _choice(s, label)
    if label is not None and s[label.end():].strip():
        s = s[label.end():].strip()  # "(C) 12" against 12: the label goes
    bare = s.strip("$ \t\n")
    if _CUT_OFF.search(bare):
        return Written(problem=f"answer {bare[-40:]} is cut off (it ends with {bare[-1]!r})")
    s = re.sub(r"(?<!\\)%", r"\\%", s.replace("\\$", ""))  # % starts a LaTeX comment; \$ is currency
    s = _DEGREES.sub("", s).strip()
    if thousands:
        s = _GROUPED.sub(lambda m: re.sub(r"\{,\}|\\,|,", "", m.group()), s)
    offers = hedge(s)  # before the units go: "12 or thirteen" is not 12
    m = _UNITS.match(s)
    if m:
        s = m.group(1)
    number = is_number(s)
    if not number and prompt and restates(s, prompt, _final(str(gold))):
        return Written(problem=f"answer {s[:40]} restates an expression from the question instead of solving it")
    if mixed_numbers:
        mixed = _MIXED.match(s) or _MIXED_TEX.match(s)
        if mixed:
            sign, whole, num, den = mixed.groups()
            s = f"{sign}({whole} + \\frac{{{num}}}{{{den}}})"
    s = _SCIENTIFIC.sub(lambda m: f"{m.group(1)} \\times 10^{{{m.group(2)}}}", s)
    unescaped = re.search(r"(?<!\\)\$", s)
    return Written(text=s if unescaped or "\\(" in s else f"${s}$", hedge=offers, number=number)
