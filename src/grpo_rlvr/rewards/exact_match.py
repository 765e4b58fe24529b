"""``exact_match``: is the extracted answer equal to the ground truth after normalization?

The answer is found as ``math`` finds it (``_answer``: ``auto`` by default; the brief's tag when its ``format``
reward defines one, a malformed completion's answer then not counted). Normalization, each part an option:
surrounding whitespace, a Markdown ``**bold**`` or ``$…$`` wrapper and a final period are always dropped; ``whitespace``
collapses runs to one space (``collapse``), removes them (``remove``) or keeps them (``keep``);
``case_sensitive`` keeps case; ``thousands`` drops separators between digit groups ("1,000", "1 000",
"1_000" → "1000"); ``numeric`` compares numbers by value, so trailing zeros and leading zeros do not matter
("7.0" == "7" == "07", "1e3" == "1000", "-0" == "0"). Numbers compare exactly, however many digits they have
(two 40-digit numbers that differ in the last digit differ), and any exponent is read without expanding it
("1e999999999" is a number, not a billion characters); an underscore counts only as a thousands separator
("1_2" is not 12). Score 1.0 or 0.0, with a reason ("answer 12 ≠ 13"). Ground truth is the
``answer`` column unless the brief maps another.
"""

from __future__ import annotations

import re
from decimal import MAX_EMAX, MIN_EMIN, Context, Decimal, DecimalException

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._answer import EXTRACT_MODES, describe_missing, find_answer
from grpo_rlvr.rewards._reward import Reward, Scored, ground_truth_check, per_item, source_fingerprint

WHITESPACE = ("collapse", "remove", "keep")
_GROUPED = re.compile(r"^[-+]?\d{1,3}(?:([,_ \u00a0\u202f])\d{3})(?:\1\d{3})*(?:\.\d+)?$")

def normalize(value: object, case_sensitive: bool = False, whitespace: str = "collapse", thousands: bool = True,
              numeric: bool = True) -> str:
    """``value`` in the form answers are compared in (see the module docstring)."""
    s = str(value).strip()
    s = re.sub(r"^\*\*(.+)\*\*$|^\$(.+)\$$", lambda m: m.group(1) or m.group(2), s, flags=re.DOTALL).strip()
    s = s.rstrip(".").strip()
    if whitespace == "collapse":
        s = re.sub(r"\s+", " ", s)
    elif whitespace == "remove":
        s = re.sub(r"\s+", "", s)
    if not case_sensitive:
        s = s.lower()
    num = s
    m = _GROUPED.match(s) if thousands else None
    if m:
        num = s.replace(m.group(1), "")
    if numeric and "_" not in num:  # Decimal reads "1_2" as 12; an underscore counts only between digit groups
        value = _number(num)
        if value is not None:
            return value
    return num


def _number(s: str) -> str | None:
    """One canonical text per number value (exact: no rounding to a context's 28 digits), or None."""
    try:
        d = Decimal(s)
        if not d.is_finite():
            return None
        if d.is_zero():
            return "0"
        # precision = the digits written, so normalize() only drops trailing zeros; no exponent is out of range
        d = d.normalize(Context(prec=max(1, len(d.as_tuple().digits)), Emax=MAX_EMAX, Emin=MIN_EMIN))
    except (DecimalException, ValueError):
        return None
    # plain digits for ordinary exponents; a huge one stays in exponent form instead of being written out
    return format(d, "f") if abs(d.as_tuple().exponent) <= 64 else str(d)


def exact_match_reward(extract: str = "auto", tag: str = "answer", case_sensitive: bool = False,
                       answer_column: str = "answer", whitespace: str = "collapse", thousands: bool = True, numeric: bool = True) -> Reward:
    """Build the exact-match correctness reward.

    Args:
        extract: where the answer is: ``auto``, ``tag``, ``boxed``, ``last_number``, ``full`` (see ``math``).
        tag: the tag name for ``extract="tag"`` (checked as the ``format`` reward checks it).
        case_sensitive: compare text answers with case.
        answer_column: the dataset column holding the ground truth.
        whitespace: ``collapse`` runs of whitespace to one space, ``remove`` them, or ``keep`` them.
        thousands: drop thousands separators between digit groups ("1,000" == "1000").
        numeric: compare numbers by value ("7.0" == "7").
    Raises:
        RewardError: an unknown ``extract`` or ``whitespace`` mode.
    """
    if extract not in EXTRACT_MODES:
        raise RewardError(f"reward 'exact_match': params.extract is {extract!r}; use one of {', '.join(EXTRACT_MODES)}")
    if whitespace not in WHITESPACE:
        raise RewardError(f"reward 'exact_match': params.whitespace is {whitespace!r}; use one of "
                          f"{', '.join(WHITESPACE)}")
    for key, v in (("case_sensitive", case_sensitive), ("thousands", thousands), ("numeric", numeric)):
        if not isinstance(v, bool):
            raise RewardError(f"reward 'exact_match': params.{key} is {v!r}; use true or false")
    norm = dict(case_sensitive=case_sensitive, whitespace=whitespace, thousands=thousands, numeric=numeric)
    truth = ground_truth_check("exact_match", answer_column)

    def score(text: str, row: dict) -> Scored:
        want = truth(row)
        found = find_answer(text, extract, tag)
        if found is None:
            return Scored(0.0, describe_missing(extract, tag))
        got = found.text
        if normalize(got, **norm) == normalize(want, **norm):
            return Scored(1.0, f"answer {got!s:.40} = {want!s:.40}")
        return Scored(0.0, f"answer {got!s:.40} ≠ {want!s:.40}")

    params = {"extract": extract, "tag": tag, "case_sensitive": case_sensitive, "answer_column": answer_column,
              **norm}
    return Reward("exact_match", "correctness", params, per_item(score),
                  source_fingerprint(exact_match_reward, normalize, find_answer, extra=params),
                  columns=(answer_column,), check_row=truth)
