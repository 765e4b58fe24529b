"""Finding the final answer in a completion, shared by ``exact_match`` and ``math``.

``extract`` modes: ``auto`` (the default: where models write it, below), ``tag`` (inside the last
``<tag>…</tag>``), ``boxed`` (the last ``\\boxed{…}``), ``last_number``, ``full`` (the whole stripped text).

``auto`` looks for the final answer each marker states: the last ``<tag>…</tag>`` (``<answer>`` by default); the
last ``\\boxed{…}`` (or ``\\fbox{…}``), with the boxes just before it that only "and", "or", commas or "x ="
part from it ("the roots are \\boxed{5} and \\boxed{-2}" gives ``5, -2``; ``boxes: last`` takes the last box
alone); the last ``#### …`` line (GSM8K); the last "final answer" / "the answer is" / "Answer:" phrase, up to the
end of its sentence (a math span right after the phrase is taken whole: "The final answer is $17$. I hope it is
correct." gives ``17``). When markers state different answers ("#### 120" and then "The answer is 121"), the one
written last counts (``several: last``: models restate and correct themselves, and only one answer is ever paid,
so hedging gains nothing); ``several: priority`` takes the first present in the order above, ``several: all``
pays only when every one is right. Without any marker: the last inline math (``$…$``, ``$$…$$``, ``\\(…\\)``,
``\\[…\\]``) and, for a one-line completion, the whole line.
Markdown bold and final periods are dropped ("**12**." gives ``12``). When the brief's ``format`` reward defines
an answer tag, the reward sees only the text inside that tag of a well-formed completion (``_inside_tag``), and
these rules find the answer there. Limits: an answer that runs over several sentences is cut at the first sentence end.

Every search here takes time linear in the completion's length (brace matching in one pass, inline math and
fences scanned once, no regular expression that backtracks over a run of spaces or letters), so a degenerate
completion (a loop of ``\\boxed{``, ``\\(`` or spaces, tens of thousands of characters) is read in
milliseconds: this runs in the trainer's process, where no timer guards it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EXTRACT_MODES = ("auto", "tag", "boxed", "last_number", "full")

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HASHES = re.compile(r"^[ \t]*####(.*)$", re.MULTILINE)
_PHRASE = re.compile(r"(?:\bfinal\s+answer\s*(?:is|:|：)|\bthe\s+answer\s+is\b\s*:?|\banswer\s*[:：])[ \t]*",
                     re.IGNORECASE)
# inline math: an opener and, for each, where its closer is looked for (``_inline_maths``)
_MATH_OPEN = re.compile(r"\$\$|\\\[|\\\(|(?<![\\$])\$(?!\$)")
_MATH_CLOSE = {"$$": re.compile(r"\$\$"), "\\[": re.compile(r"\\\]"), "\\(": re.compile(r"\\\)"),
               "$": re.compile(r"(?<!\\)\$")}
_SENTENCE_END = re.compile(r"\.(?=\s|$)|\n|;|!|\?(?=\s|$)")
# what may stand between boxes that state one answer together: "\boxed{5} and $x = \boxed{-2}$",
# "\boxed{5}\text{ or }\boxed{-2}" (a hedge against a one-value ground truth then reads as the set it is). A plain
# repeat, not a possessive one (``*+``): Python 3.11 before 3.11.5 mis-matches those (``\text{ or }`` was no gap on
# 3.11.2, so a hedge was paid). A gap is at most ``_MAX_GAP`` characters, so backtracking over it is bounded.
_GAP = r"(?:[\s$,;&]|\\[,;:! ]|\\q?quad\b)*"
_BETWEEN_BOXES = re.compile(rf"{_GAP}(?:(?:and|or|\\text\s*\{{\s*(?:and|or)\s*\}}|\\(?:lor|vee)\b){_GAP})?"
                            r"(?:[A-Za-z]\w*\s*=\s*)?", re.IGNORECASE)
_MAX_GAP = 48  # characters between two boxes of one answer; a longer gap is prose

SEVERAL = ("last", "priority", "all")
_MAX_ANSWER = 4096  # characters read after "the answer is": a final answer is far shorter
BOXES = ("join", "last")


@dataclass(frozen=True)
class Answer:
    """An extracted answer: its text and where it was found (named in reasons)."""

    text: str
    where: str


def _closers(text: str) -> dict[int, int]:
    """For each ``{`` of ``text`` that closes, the index of its ``}`` (one pass; a stray ``}`` is skipped)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    return pairs


def _braced(text: str, open_end: int, pairs: dict[int, int] | None = None) -> str | None:
    """The content of the brace group whose ``{`` ends at ``open_end``, or None when it never closes.
    ``pairs``: ``_closers(text)``, when the caller reads several groups of one text."""
    close = (pairs if pairs is not None else _closers(text)).get(open_end - 1)
    return None if close is None else text[open_end:close]


def _boxes(text: str) -> list[tuple[int, int, str]]:
    """Every closed ``\\boxed{…}``: (start, end, content)."""
    out = []
    pairs = _closers(text) if "\\" in text else {}
    for m in _BOXED.finditer(text):
        got = _braced(text, m.end(), pairs)
        if got is not None:
            out.append((m.start(), m.end() + len(got) + 1, got))
    return out


def _inline_maths(text: str) -> list[str]:
    """The content of every inline math span (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``), left to right; an
    opener without a closer is skipped, and once a kind of closer is missing no later opener of that kind is
    tried (so a run of unclosed openers is read in linear time)."""
    out: list[str] = []
    missing: set[str] = set()
    pos = 0
    while (m := _MATH_OPEN.search(text, pos)) is not None:
        kind = m.group()
        close = None if kind in missing else _MATH_CLOSE[kind].search(text, m.end() + 1)
        if close is None:
            missing.add(kind)
            pos = m.start() + 1
            continue
        out.append(text[m.end():close.start()])
        pos = close.end()
    return out


def _final_boxes(text: str, boxes: str = "join") -> tuple[int, str] | None:
    """(position, content) of the final boxed answer: the last box, and with ``boxes="join"`` the boxes just
    before it that only separators part from it ("\\boxed{5} and \\boxed{-2}" gives "5, -2")."""
    found = _boxes(text)
    if not found:
        return None
    group = [found[-1]]
    if boxes == "join":
        for b in reversed(found[:-1]):
            gap = group[0][0] - b[1]
            if not 0 <= gap <= _MAX_GAP or not _BETWEEN_BOXES.fullmatch(text, b[1], group[0][0]):
                break
            group.insert(0, b)
    return group[0][0], ", ".join(c.strip() for _, _, c in group)


def _clean(s: str) -> str:
    """``s`` without Markdown bold, a leading "is"/":" and final periods, in any order ("**12**."); a fixed
    number of passes, so a long run of "*." is dropped in linear time."""
    s = s.lstrip("* \t\r\n")
    s = re.sub(r"^(?:is\s+|:\s*)", "", s).lstrip("* \t\r\n")
    return s.rstrip("*. \t\r\n")


def _after_phrase(rest: str) -> str:
    """The answer after "the answer is": a math span or \\boxed{} that starts it, else up to the sentence end."""
    rest = rest.lstrip(" \t*:")
    boxed = _BOXED.match(rest)
    if boxed and (got := _braced(rest, boxed.end())) is not None:
        return got
    opener = _MATH_OPEN.match(rest)
    close = _MATH_CLOSE[opener.group()].search(rest, opener.end() + 1) if opener else None
    if close is not None:
        return rest[opener.end():close.start()]
    end = _SENTENCE_END.search(rest)
    return rest[: end.start()] if end else rest


def _candidates(text: str, tag: str, boxes: str) -> list[tuple[int, Answer]]:
    """The final answer each marker states (its last one), with its position, in the order of preference:
    tag, boxed, ####, "the answer is"."""
    out = []
    tagged = list(re.finditer(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, flags=re.DOTALL))
    if tagged and tagged[-1].group(1).strip():
        out.append((tagged[-1].start(), Answer(tagged[-1].group(1).strip(), f"<{tag}>")))
    boxed = _final_boxes(text, boxes)
    if boxed is not None and boxed[1].strip():
        out.append((boxed[0], Answer(boxed[1].strip(), "\\boxed{}")))
    hashes = [m for m in _HASHES.finditer(text) if m.group(1).strip(" \t")]
    if hashes:
        out.append((hashes[-1].start(), Answer(_clean(hashes[-1].group(1)), "####")))
    for m in reversed(list(_PHRASE.finditer(text))):
        got = _clean(_after_phrase(text[m.end():m.end() + _MAX_ANSWER]))
        if got:
            out.append((m.start(), Answer(got, "'the answer is'")))
            break
    return out


def find_answers(text: str, mode: str = "auto", tag: str = "answer", several: str = "last",
                 boxes: str = "join") -> list[Answer]:
    """The final answer(s) to check, by ``mode`` (see the module docstring). In ``auto`` mode, when markers state
    different final answers, ``several`` decides: ``last`` (the one written last), ``priority`` (the first of tag,
    boxed, ####, "the answer is" that is present) or ``all`` (every one; all must be right)."""
    if mode != "auto":
        found = find_answer(text, mode, tag, boxes=boxes)
        return [] if found is None else [found]
    cands = _candidates(text, tag, boxes)
    if cands:
        if several == "last":
            return [max(cands, key=lambda c: c[0])[1]]
        if several == "priority":
            return [cands[0][1]]
        seen: dict[str, Answer] = {}
        for _, a in cands:
            seen.setdefault(a.text, a)
        return list(seen.values())
    maths = [s.strip() for s in _inline_maths(text) if s.strip()]
    if maths:
        return [Answer(maths[-1], "inline math")]
    line = text.strip()
    if line and "\n" not in line:
        return [Answer(_clean(line), "the one-line completion")]
    return []


def find_answer(text: str, mode: str, tag: str = "answer", boxes: str = "join") -> Answer | None:
    """The answer in ``text`` by ``mode`` (see the module docstring), or None when there is none; in ``auto``
    mode the final answer written last."""
    if mode == "auto":
        found = find_answers(text, "auto", tag, "last", boxes)
        return found[0] if found else None
    if mode == "tag":
        found = re.findall(rf"<{re.escape(tag)}>(.*?)</{re.escape(tag)}>", text, flags=re.DOTALL)
        return Answer(found[-1].strip(), f"<{tag}>") if found else None
    if mode == "boxed":
        got = _final_boxes(text, boxes)
        return Answer(got[1].strip(), "\\boxed{}") if got is not None else None
    if mode == "last_number":
        nums = _NUMBER.findall(text)
        return Answer(nums[-1], "last number") if nums else None
    return Answer(text.strip(), "completion")


def describe_missing(mode: str, tag: str) -> str:
    return {"auto": f"no final answer found (no <{tag}>, \\boxed{{}}, ####, 'the answer is', inline math)",
            "tag": f"no <{tag}> tag", "boxed": "no \\boxed{} answer",
            "last_number": "no number in the completion", "full": "empty completion"}[mode]
