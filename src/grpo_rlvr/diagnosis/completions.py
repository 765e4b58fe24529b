"""Statistics of the completions a run logged (``completions/*.parquet``: step, prompt, completion, one column
per reward, advantage), used as evidence by the detectors.

A *group* is the completions of one prompt at one logged step (TRL samples ``num_generations`` per prompt).
Lengths are in characters: the parquet files hold text, not token ids. Runs that logged no completions get
``None`` from every statistic, and the detectors fall back to the metrics alone.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from functools import lru_cache

from grpo_rlvr.rewards._reward import completion_text

MIN_STEPS = 4            # logged steps needed before early and late can be told apart
REPETITION_NGRAM = 4     # n of the n-grams counted for repetition (words, or characters for short texts)
MIN_WORDS_FOR_WORD_NGRAMS = 16


# A logged completion as text, read as the rewards read it: a string as is, or the assistant turns of a
# conversational completion (one definition for rewards and diagnosis alike).
text_of = completion_text


def prompt_key(prompt) -> str:
    return prompt if isinstance(prompt, str) else json.dumps(prompt, sort_keys=True, default=str)


@dataclass
class Window:
    steps: list[int]
    groups: list[list[dict]]   # each group: the rows of one prompt at one step

    @property
    def texts(self) -> list[str]:
        return [text_of(r["completion"]) for g in self.groups for r in g]

    @property
    def example(self) -> str:
        """One completion of the window's last group, quoted as evidence ("" when there is none)."""
        return text_of(self.groups[-1][0]["completion"]) if self.groups else ""


# The last groupings made, by (the rows list, its length, group_size): the detectors group the same rows
# several times a check, and the watchdog keeps one rows list until new completions arrive. Callers only read.
_GROUPED: dict[tuple[int, int, int | None], tuple[list[dict], dict]] = {}


def groups_by_step(rows: list[dict], group_size: int | None = None) -> dict[int, dict[str, list[dict]]]:
    """step → prompt → that group's rows. With ``group_size`` (num_generations), a prompt that appears in
    several groups of one step (a duplicated prompt, or a refill that drew it again) is split, in logged row
    order, into groups of that size, keyed ``prompt#1``, ``prompt#2`` …"""
    key = (id(rows), len(rows), group_size)
    hit = _GROUPED.get(key)
    if hit is not None and hit[0] is rows:
        return hit[1]
    by_step = _group(rows, group_size)
    if len(_GROUPED) >= 4:
        _GROUPED.clear()
    _GROUPED[key] = (rows, by_step)   # holding the list keeps its id from being reused
    return by_step


def _group(rows: list[dict], group_size: int | None) -> dict[int, dict[str, list[dict]]]:
    by_step: dict[int, dict[str, list[dict]]] = {}
    for r in rows:
        by_step.setdefault(int(r["step"]), {}).setdefault(prompt_key(r["prompt"]), []).append(r)
    if group_size and group_size > 1:
        for step, groups in by_step.items():
            split = {}
            for key, g in groups.items():
                if len(g) <= group_size:
                    split[key] = g
                    continue
                for i in range(0, len(g), group_size):
                    split[f"{key}#{i // group_size + 1}"] = g[i:i + group_size]
            by_step[step] = split
    return by_step


def windows(rows: list[dict]) -> tuple[Window, Window] | None:
    """The run's early logged steps (the first 3) and its late ones (the last quarter, at least 3)."""
    by_step = groups_by_step(rows)
    steps = sorted(by_step)
    if len(steps) < MIN_STEPS:
        return None
    early, late = steps[:3], steps[-max(3, len(steps) // 4):]
    early = [s for s in early if s not in late] or early[:1]

    def window(sel):
        return Window(sel, [g for s in sel for g in by_step[s].values()])

    return window(early), window(late)


def length_by_step(rows: list[dict]) -> list[tuple[int, float]]:
    """Mean completion length in characters per logged step."""
    return [(step, statistics.fmean([len(text_of(r["completion"])) for g in groups.values() for r in g]))
            for step, groups in sorted(groups_by_step(rows).items())]


def distinct_share(w: Window) -> float:
    """Mean share of distinct completions within a group (1.0: all differ; 1/8: all eight identical)."""
    shares = [len({text_of(r["completion"]) for r in g}) / len(g) for g in w.groups if len(g) > 1]
    return statistics.fmean(shares) if shares else 1.0


@lru_cache(maxsize=1 << 16)   # the watchdog asks again, at every check, about the completions it keeps
def repetition_share(text: str) -> float:
    """Share of the text's n-grams that repeat an earlier one (0: none repeat). Words when the text has enough
    of them, else characters (models without whitespace, the tiny demo model)."""
    words = text.split()
    units = words if len(words) >= MIN_WORDS_FOR_WORD_NGRAMS else list(text)
    grams = [tuple(units[i:i + REPETITION_NGRAM]) for i in range(len(units) - REPETITION_NGRAM + 1)]
    return 1 - len(set(grams)) / len(grams) if grams else 0.0


def mean_repetition(w: Window) -> float:
    texts = w.texts
    return statistics.fmean([repetition_share(t) for t in texts]) if texts else 0.0


def mean_length(w: Window) -> float:
    texts = w.texts
    return statistics.fmean([len(t) for t in texts]) if texts else 0.0


def length_advantage_correlation(w: Window) -> tuple[float, int] | None:
    """Mean within-group Pearson correlation of completion length and advantage, over the groups where both
    vary, and how many groups that was. Advantage is the group-normalised reward, so this is the correlation
    with the reward inside each group, free of differences between prompts."""
    rs = []
    for g in w.groups:
        lengths = [len(text_of(r["completion"])) for r in g]
        adv = [r.get("advantage") for r in g]
        if any(not isinstance(a, (int, float)) for a in adv) or len(g) < 3:
            continue
        if len(set(lengths)) < 2 or len(set(adv)) < 2:
            continue
        rs.append(statistics.correlation(lengths, adv))
    return (statistics.fmean(rs), len(rs)) if rs else None
