"""The example contract: answers written the way the brief's prompt asks, ranked by the brief's own rewards.

A brief may carry ``prompt.examples``: for a row of its data, three completions written in the format its system
prompt asks for: ``correct``, ``wrong`` (well-formed but wrong) and ``malformed`` (the right answer without the
required wrapper). They are never shown to the model. ``validate`` scores each with the brief's rewards, combined
with their weights as TRL combines them, and fails unless correct > wrong > malformed: a prompt and rewards that
disagree (a format that refuses the reasoning the prompt asks for, a correctness reward that pays for the answer
outside the tag, code that is not found where the prompt puts it) show up before any sampling. An example's
``row`` is the row as the dataset holds it (its own column names; ``dataset.columns`` and ``prompt.template``
apply) or, for a local dataset, the index of a row there. Judge rewards (``rubric_judge``) are left out: they
need a served model. Limits: the ranking is checked on the examples given, not on every answer a model may write.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import GrpoRlvrError

KINDS = ("correct", "wrong", "malformed")


@dataclass(frozen=True)
class ContractResult:
    """One example's totals (``kind -> total``), per-reward scores and reasons, and what is wrong, if anything."""

    index: int
    totals: dict
    scores: dict  # kind -> {reward name: (score, reason)}
    problem: str | None

    def to_dict(self) -> dict:
        return {"index": self.index, "totals": self.totals,
                "scores": {k: {n: {"score": s, "reason": r} for n, (s, r) in v.items()} for k, v in self.scores.items()},
                "problem": self.problem}


def _row(brief, i: int, ex: dict, local_rows: list | None) -> tuple[dict | None, str | None]:
    raw = ex.get("row")
    if isinstance(raw, dict):
        return raw, None
    if not brief.dataset.is_local:
        return None, (f"prompt.examples[{i}].row: {raw!r} is not a row; the dataset is on the hub, so give the row "
                      "itself (its columns as the dataset names them)")
    if raw is None:
        raw = 0
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(local_rows or []):
        return None, (f"prompt.examples[{i}].row: {raw!r} is not a row index of {Path(brief.dataset.resolved).name} "
                      f"({len(local_rows or [])} rows); give an index or the row itself")
    return local_rows[raw], None


def _describe(scores: dict) -> str:
    return ", ".join(f"{n} {s if s is None else round(s, 3)} ({r[:60]})" for n, (s, r) in scores.items())


def _problem(i: int, totals: dict, scores: dict) -> str | None:
    c, w, m = (totals[k] for k in KINDS)
    if c > w > m:
        return None
    if not c > w:
        why = (f"the correct example scores {c:.3f}, not above the wrong one's {w:.3f} ({_describe(scores['correct'])}): "
               "the rewards do not read the answer where the prompt asks the model to put it")
    else:
        why = (f"the malformed example scores {m:.3f}, not below the wrong one's {w:.3f} "
               f"({_describe(scores['malformed'])}): correctness pays for an answer without the required wrapper, "
               "or the format weight is too small")
    return (f"prompt.examples[{i}]: the brief's rewards do not rank correct > wrong > malformed: {why}. Fix the "
            "side that is wrong: the format reward (its tag; allow_text_before when the prompt asks for reasoning "
            "first), the correctness reward's params, or the prompt, or the example if it does not follow the "
            "prompt")


def check_contract(brief) -> list[ContractResult] | list[str]:
    """Score every ``prompt.examples`` entry of ``brief`` (a loaded ``Brief``) with its rewards.

    Returns:
        One ``ContractResult`` per example, or the problems that stop the check (rows that cannot be found),
        as strings naming the field.
    Raises:
        GrpoRlvrError: a reward fails on the example's data (a missing column, bad ground truth).
    """
    from grpo_rlvr.dataset.rows import load_rows, map_columns, reward_columns
    from grpo_rlvr.rewards import combine, from_brief

    examples = list(brief.prompt_examples)
    if not examples:
        return []
    needs_local = brief.dataset.is_local and any(not isinstance(ex.get("row"), dict) for ex in examples)
    local_rows = load_rows(brief) if needs_local else None  # mapped: prompt built, columns renamed
    specs = [r for r in brief.rewards if (r.kind or "") != "judge" and r.name != "rubric_judge"]
    rewards = from_brief(brief, specs)
    rows, problems = [], []
    for i, ex in enumerate(examples):
        raw, problem = _row(brief, i, ex, local_rows)
        if problem:
            problems.append(problem)
        elif isinstance(ex.get("row"), dict):
            rows.append((i, ex, map_columns(raw, brief.dataset.prompt_column, dict(brief.dataset.columns),
                                            dict(brief.dataset.prompt), where=f"prompt.examples[{i}].row")))
        else:
            rows.append((i, ex, raw))
    if problems:
        return problems
    out = []
    for i, ex, row in rows:
        texts = [ex[k] for k in KINDS]
        cols = reward_columns([row] * len(texts))
        try:
            res = combine(rewards, [r.weight for r in specs], texts, prompts=[row.get("prompt")] * len(texts), **cols)
        except GrpoRlvrError as e:
            raise type(e)(f"prompt.examples[{i}]: {e}") from None
        totals = {k: round(r["total"], 6) for k, r in zip(KINDS, res, strict=True)}
        scores = {k: {n: (s.score, s.reason) for n, s in r["scores"].items()} for k, r in zip(KINDS, res, strict=True)}
        out.append(ContractResult(i, totals, scores, _problem(i, totals, scores)))
    return out


def contract_problems(brief) -> tuple[list[ContractResult], list[str]]:
    """The contract's results and its problems (``prompt.examples[i]: …``), for ``validate``."""
    got = check_contract(brief)
    if got and isinstance(got[0], str):
        return [], list(got)  # type: ignore[arg-type]
    results: list[ContractResult] = got  # type: ignore[assignment]
    return results, [r.problem for r in results if r.problem]
