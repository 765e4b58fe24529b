"""The shape of a written final answer, for the ``math`` rules that refuse answers which score without solving.

- ``hedge(text)``: why the answer offers several values, or None. It does when it offers alternatives ("or",
  "either", ``\\lor``, ``\\vee``, ``\\pm``: "12 (or 13)", "12 \\pm 1"), or states two different numbers: parts
  parted by a list, a relation or an arrow at the top level (``,`` ``;`` ``=`` ``\\\\`` ``&`` ``\\to``
  ``\\Rightarrow`` ``\\approx`` ``\\mid`` ``\\quad``, an en dash, "to": "12 = 13", "12 \\\\ 13", "12–13",
  "12 \\to 13") that are numbers written out and differ, or two numbers side by side ("12 13"). Two written
  numbers are the same when they differ by at most half a unit in the last written digit of either ("1/3 =
  0.333", "11.6 \\approx 12" state one value), so a working line ending in its value ("5 + 7 = 12") is one
  value. math-verify reads such answers as one of their values (often the last), so a hedge would be paid
  whenever that one is right; ``math`` pays none when the ground truth is one value.
- ``is_number(text)``: whether the answer's value (after a last ``=``: "x = 12", "5 + 7 = 12") is one number
  written out: an integer or decimal, a fraction (``3/4``, ``\\frac{3}{4}``, ``\\frac34``), a mixed number
  (``2 1/2``, ``2\\frac{1}{2}``), scientific notation (``1.5e3``, ``3 \\times 10^{5}``, ``10^{5}``), with a
  sign, a percent sign, or one pair of parentheses. Not a number: "5+7", ``2^{10}``, ``\\binom{8}{4}``,
  ``\\sqrt{144}``, ``\\max(12, 13)``.
- ``restates(answer, prompt, gold)``: whether an answer that still holds an operation ("(x+1)^2",
  ``\\sqrt{245}``, "48 + 48/2") appears word for word in the question (spaces, ``\\left``/``\\right`` and thin
  spaces aside), and is not how the ground truth itself is written. Echoing "Simplify $\\sqrt{245}$" as
  ``\\sqrt{245}`` is equal to the ground truth ``7\\sqrt{5}`` but solves nothing.

Every function here takes time linear in the answer's length.
"""

from __future__ import annotations

import itertools
import re
from fractions import Fraction

_ALTERNATIVES = re.compile(r"\b(?:or|either|otherwise|alternatively)\b|\\(?:lor|vee|pm|mp)(?![A-Za-z])|[±∓]",
                           re.IGNORECASE)
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\s*\{[A-Za-z*]*\}")
# spacing and sizing commands; a line break ``\\\\`` is matched first so its second backslash is not read as "\\ "
_THIN = re.compile(r"\\\\|\\(?:left|right|[bB]igg?[lr]?)(?![A-Za-z])|\\[,;:! ]|\$")
# brackets, and the separators that part the values an answer states (at the top level only)
_TOKENS = re.compile(r"[{}()\[\]]|\\\\|&|;|,|=|[–—→⇒≈≠]|\bto\b"
                     r"|\\(?:to|mid|q?quad|(?:long)?[rR]ightarrow|Longrightarrow|implies|iff|approx|sim|simeq|"
                     r"equiv|neq?)(?![A-Za-z])")
_BR = r"(?:\{\s*[-+]?\d+(?:\.\d+)?\s*\}|\d)"
_LITERAL = re.compile(rf"""\s*(?P<sign>[-+−]?)\s*(?:
      (?P<whole>\d+)\s+(?P<mnum>\d+)\s*/\s*(?P<mden>\d+)
    | (?P<twhole>\d+)\s*\\[dt]?frac\s*(?P<tnum>{_BR})\s*(?P<tden>{_BR})
    | \\[dt]?frac\s*(?P<fnum>{_BR})\s*(?P<fden>{_BR})
    | (?P<num>\d+(?:\.\d+)?)\s*/\s*(?P<den>\d+(?:\.\d+)?)
    | (?P<mant>\d+(?:\.\d*)?|\.\d+)
      (?:[eE](?P<e>[-+]?\d+)|\s*(?:\\times|\\cdot|[*×·])\s*10\s*\^\s*(?P<p>{_BR}))?
    | 10\s*\^\s*(?P<p10>{_BR})
    )(?:\s*(?P<pct>\\?%))?\s*""", re.VERBOSE)
# two numbers side by side ("12 13"), not a mixed number ("2 1/2") nor part of an expression
_ADJACENT = re.compile(r"(?<![\w.^_{}/\\])\d+(?:\.\d+)?[ \t]+\d+(?:\.\d+)?(?![\w./^{(\\])")
_OPERATION = re.compile(r"[-+*/^!(]|\\(?:[dt]?frac|sqrt|cdot|times|div|binom|[dt]binom|choose|log|ln|sin|cos|tan|"
                        r"sum|prod|int|max|min)(?![A-Za-z])")
_MAX_DIGITS = 60  # a written number longer than this is not given a value (no huge exact arithmetic)
_MAX_EXPONENT = 400


def _thin(text: str, by: str) -> str:
    """``text`` with spacing and sizing commands replaced by ``by`` (line breaks kept)."""
    return _THIN.sub(lambda m: m.group() if m.group() == "\\\\" else by, text)


def _parts(text: str) -> list[str]:
    """``text`` parted at its top-level separators (outside ``{}``, ``()``, ``[]``)."""
    depth, start, parts = 0, 0, []
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "{([":
            depth += 1
        elif tok in "})]":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[start:m.start()])
            start = m.end()
    parts.append(text[start:])
    return parts


def _unwrap(text: str) -> str:
    """``text`` without spacing commands and one pair of parentheses around it all."""
    s = _thin(text, "").strip()
    if len(s) > 1 and s[0] == "(" and s[-1] == ")" and len(_parts(s[1:-1])) == 1:
        s = s[1:-1].strip()
    return s


def _braced(group: str) -> str:
    return group.strip("{} \t")


def _number(m: re.Match) -> tuple[Fraction, Fraction] | None:
    """(value, tolerance) of a matched literal: the tolerance is half a unit in its last written digit (0 for a
    fraction); None when the number is too long to evaluate cheaply."""
    g = m.groupdict()
    digits = sum(len(v) for v in g.values() if v)
    if digits > _MAX_DIGITS:
        return None
    sign = -1 if g["sign"] in ("-", "−") else 1
    tol = Fraction(0)
    if g["whole"] is not None or g["twhole"] is not None or g["fnum"] is not None or g["num"] is not None:
        whole, num, den = ((g["whole"], g["mnum"], g["mden"]) if g["whole"] is not None else
                           (g["twhole"], g["tnum"], g["tden"]) if g["twhole"] is not None else
                           ("0", g["fnum"], g["fden"]) if g["fnum"] is not None else ("0", g["num"], g["den"]))
        if Fraction(_braced(den)) == 0:
            return None
        value = Fraction(whole) + Fraction(_braced(num)) / Fraction(_braced(den))
    else:
        mant = g["mant"] if g["mant"] is not None else "1"
        exp_text = g["e"] or (g["p"] and _braced(g["p"])) or (g["p10"] and _braced(g["p10"])) or "0"
        exp = int(exp_text)
        if abs(exp) > _MAX_EXPONENT:
            return None
        decimals = len(mant.partition(".")[2])
        value = Fraction(mant) * Fraction(10) ** exp
        tol = Fraction(1, 2) * Fraction(10) ** (exp - decimals)
    if g["pct"]:
        value, tol = value / 100, tol / 100
    return sign * value, tol


def _values(text: str) -> list[tuple[Fraction | None, Fraction | None, str]]:
    """The numbers written out as whole parts of ``text``: (value, tolerance, as written); value and tolerance
    are None for a number too long to evaluate."""
    out = []
    for part in _parts(text):
        s = _unwrap(part)
        m = _LITERAL.fullmatch(s) if s else None
        if m:
            out.append((*(_number(m) or (None, None)), s))
    return out


def _differ(x: tuple, y: tuple) -> bool:
    (a, tol_a, shown_a), (b, tol_b, shown_b) = x, y
    if a is None or b is None:
        return _plain(shown_a) != _plain(shown_b)
    return abs(a - b) > max(tol_a, tol_b)


def hedge(text: str) -> str | None:
    """Why ``text`` (a final answer, wrappers and thousands separators already dropped) offers several values, or
    None (see the module docstring)."""
    alt = _ALTERNATIVES.search(text)
    if alt:
        return f"{alt.group()!r} offers alternatives"
    flat = _thin(_ENVIRONMENT.sub(" ", text), " ")  # "12 \\; 13" are side by side too
    adjacent = _ADJACENT.search(flat)
    if adjacent:
        return f"{' and '.join(adjacent.group().split())} side by side"
    values = _values(flat)
    for prev, x in itertools.pairwise(values):  # each against the first and the one before: linear time
        for y in (values[0], prev):
            if _differ(y, x):
                return f"it states both {y[2][:20]} and {x[2][:20]}"
    return None


def is_number(text: str) -> bool:
    """Whether the value ``text`` states (after its last top-level ``=``) is one number written out."""
    parts = [p for p in _parts(text) if p.strip()]
    if not parts:
        return False
    return _LITERAL.fullmatch(_unwrap(parts[-1])) is not None


def _plain(text: str) -> str:
    return re.sub(r"\s+", "", _thin(text, "")).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")


def restates(answer: str, prompt: str, gold: str) -> bool:
    """Whether ``answer``, an expression that still holds an operation, is copied from ``prompt`` (and is not
    written as ``gold`` is)."""
    if not prompt or not _OPERATION.search(answer) or is_number(answer):
        return False
    a = _plain(answer)
    return len(a) >= 3 and a in _plain(prompt) and a != _plain(gold)
