"""``exact_match``: is the extracted answer equal to the ground truth after normalization?

Normalization: strip, collapse internal whitespace, drop a trailing period, optionally lowercase, and compare
numbers by value ("7.0" == "7", "1,000" == "1000"). Score 1.0 or 0.0, with a reason ("answer 12 ≠ 13").
Ground truth is the ``answer`` column unless the brief maps another.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._answer import EXTRACT_MODES, describe_missing, extract_answer
from grpo_rlvr.rewards._reward import Reward, Scored, per_item, source_fingerprint
from grpo_rlvr.rewards.format import default_pattern, not_counted, structure_problem


def normalize(value: object, case_sensitive: bool = False) -> str:
    s = re.sub(r"\s+", " ", str(value).strip()).rstrip(".").strip()
    if not case_sensitive:
        s = s.lower()
    num = s.replace(",", "")
    try:
        d = Decimal(num)
        if d.is_finite():
            return format(d.normalize(), "f")
    except InvalidOperation:
        pass
    return s


def exact_match_reward(extract: str = "tag", tag: str = "answer", case_sensitive: bool = False,
                       answer_column: str = "answer", require_format: bool = True) -> Reward:
    """Build the exact-match correctness reward.

    Args:
        extract: where the answer is (``tag``, ``boxed``, ``last_number``, ``full``).
        tag: the tag name for ``extract="tag"``.
        case_sensitive: compare text answers with case.
        answer_column: the dataset column holding the ground truth.
        require_format: with ``extract="tag"``, count the answer only when the completion is well-formed
            (one ``<tag>…</tag>``, nothing around it). Without this, "<answer>7</answer> garbage" earns full
            correctness and outscores a well-formed wrong answer: the composite would pay for malformed output.
    Raises:
        RewardError: an unknown ``extract`` mode.
    """
    if extract not in EXTRACT_MODES:
        raise RewardError(f"reward 'exact_match': params.extract is {extract!r}; use one of {', '.join(EXTRACT_MODES)}")

    rx = re.compile(default_pattern(tag), re.DOTALL)

    def score(text: str, row: dict) -> Scored:
        if answer_column not in row:
            raise RewardError(f"reward 'exact_match' needs the dataset column {answer_column!r}; map it under "
                              f"dataset.columns in the brief (available: {sorted(row)})")
        if require_format and extract == "tag":
            problem = structure_problem(text, rx, tag)
            if problem:
                return Scored(0.0, not_counted(problem, tag))
        got = extract_answer(text, extract, tag)
        if got is None:
            return Scored(0.0, describe_missing(extract, tag))
        want = row[answer_column]
        if normalize(got, case_sensitive) == normalize(want, case_sensitive):
            return Scored(1.0, f"answer {got} = {want}")
        return Scored(0.0, f"answer {got!s:.40} ≠ {want!s:.40}")

    params = {"extract": extract, "tag": tag, "case_sensitive": case_sensitive, "answer_column": answer_column,
              "require_format": require_format}
    return Reward("exact_match", "correctness", params, per_item(score),
                  source_fingerprint(exact_match_reward, normalize, extract_answer, extra=params),
                  columns=(answer_column,))
