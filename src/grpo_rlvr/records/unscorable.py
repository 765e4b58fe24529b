"""Samples no reward could score, during training: left out of their step, counted, and named by dataset row.

A reward that cannot score a sample gives None for it and says why (``Reward.unscorable``: a ground-truth column
that is missing or bad on that row, or a user reward that raised). TRL 1.16 adds the rewards with ``nansum``: a
None from one reward of several counts as 0 there, which would pay the sample a made-up 0 and move its group's
baseline. So the trainer (``trainers.GRPOTrainerWithHeldOut``) sets every reward of such a sample to NaN. TRL then
treats it as it treats a sample that no reward scored: it leaves it out of its group's mean and std (``nanmean``,
``nanstd``), of the logged reward means, and gives it advantage 0 (``nan_to_num``), so it moves nothing.

The rendered train.py adds two columns to the data (``dataset.rows.load_split``): the row's index in the dataset
(``ROW_COLUMN``) and where it comes from (``SOURCE_COLUMN``: ``FILE:LINE`` for JSON Lines, ``FILE, row N`` for
other formats), so a sample is named by its dataset row, never by its position in a batch. The tally
(:class:`Tally`) is written to ``output/unscorable.json`` by rank 0 after each generation batch, once there is
something in it: the samples scored and left out so far, each row with its reason, the first ``MAX_ROWS`` rows
named. ``grpo-rlvr watch``, the watchdog and ``diagnose`` read it (``unscorable_samples`` in the detectors); the
watchdog stops the run when the share is above the brief's ``watch.max_unscorable`` (:func:`share_above`).
Imports nothing of grpo_rlvr but the ground floor (a record); torch only inside the trainer.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROW_COLUMN = "grpo_rlvr_row"          # the row's index in its dataset (as datasets indexes it)
SOURCE_COLUMN = "grpo_rlvr_source"    # FILE:LINE (JSON Lines) or "FILE, row N"
TALLY = "unscorable.json"
MAX_ROWS = 100                        # rows named in the tally; the rest are counted
SAID_ROWS = 10                        # rows named on the console as they appear; then the tally says the rest
DEFAULT_MAX_UNSCORABLE = 0.05         # the share of samples left out above which the watchdog stops a run
CONFIDENCE_Z = 1.96                   # two-sided 95%: the share must be above the limit with this confidence


class Tally:
    """What training could not score so far (rank 0)."""

    def __init__(self, num_generations: int = 1):
        self.num_generations = max(1, int(num_generations))
        self.seen = 0              # training samples scored (left out or not)
        self.unscorable = 0        # training samples left out
        self.held_out = 0          # held-out (evaluation) samples left out
        self.rows: dict[str, dict] = {}   # source -> {row, source, split, reward, why, samples, first_step, last_step}
        self.more_rows = 0         # rows left out beyond MAX_ROWS, counted only
        self.by_reward: dict[str, int] = {}

    def add(self, step: int, samples: int, records: list[dict], split: str = "train") -> list[dict]:
        """Count a generation batch of ``samples`` with the ``records`` ({row, source, reward, why}, one per reward
        and sample left out; ``sample`` its position). Returns the rows seen for the first time."""
        left_out = {r["sample"] for r in records}
        if split == "train":
            self.seen += samples
            self.unscorable += len(left_out)
        else:
            self.held_out += len(left_out)
        new = []
        for r in records:
            self.by_reward[r["reward"]] = self.by_reward.get(r["reward"], 0) + 1
            key = str(r.get("source") or f"row {r.get('row')}")
            entry = self.rows.get(key)
            if entry is None:
                if len(self.rows) >= MAX_ROWS:
                    self.more_rows += 1
                    continue
                entry = self.rows[key] = {"row": r.get("row"), "source": r.get("source"), "split": split,
                                          "reward": r["reward"], "why": r["why"], "samples": 0, "first_step": step}
                new.append(entry)
            entry["samples"] += 1
            entry["last_step"] = step
        return new

    def to_dict(self) -> dict:
        return {"seen": self.seen, "unscorable": self.unscorable, "held_out_unscorable": self.held_out,
                "num_generations": self.num_generations, "share": self.unscorable / self.seen if self.seen else 0.0,
                "by_reward": self.by_reward, "rows": list(self.rows.values()), "more_rows": self.more_rows}

    def write(self, output_dir: Path) -> None:
        from grpo_rlvr.files import write_json_atomic

        write_json_atomic(Path(output_dir) / TALLY, self.to_dict())


def row_label(row, source: str | None = None, held_out: bool = False) -> str:
    """``dataset row 12 (data/train.jsonl:13)`` (``held-out row …`` for the evaluation set), as training names a
    row."""
    return f"{'held-out' if held_out else 'dataset'} row {row}" + (f" ({source})" if source else "")


def named(entry: dict) -> str:
    """``dataset row 12 (data/train.jsonl:13), reward 'unit_tests': why`` for a tally row."""
    where = row_label(entry.get("row"), entry.get("source"), entry.get("split", "train") != "train")
    return f"{where}, reward {entry.get('reward')!r}: {entry.get('why')}"


def summary(tally: dict, rows: int = 3) -> list[str]:
    """``N samples unscorable: dataset row R (FILE:LINE), reward ...: why`` and the next rows, for watch and the
    watchdog."""
    n, seen = tally.get("unscorable", 0), tally.get("seen", 0)
    listed = tally.get("rows") or []
    share = f" of {seen} ({n / seen:.1%})" if seen else ""
    out = [f"{n} sample{'s' if n != 1 else ''}{share} unscorable, left out of their steps; "
           f"{len(listed) + tally.get('more_rows', 0)} dataset row{'s' if len(listed) != 1 else ''}:"]
    out += [f"  {named(e)} ({e.get('samples')} sample{'s' if e.get('samples') != 1 else ''}, step "
            f"{e.get('first_step')})" for e in listed[:rows]]
    if len(listed) > rows or tally.get("more_rows"):
        out.append(f"  … {len(listed) - rows + tally.get('more_rows', 0)} more in output/{TALLY}")
    return out


def read_tally(output_dir: Path) -> dict | None:
    """The tally ``output/unscorable.json`` holds, or None (nothing left out, or unreadable)."""
    import json

    try:
        data = json.loads((Path(output_dir) / TALLY).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def wilson_interval(share: float, draws: float, z: float = CONFIDENCE_Z) -> tuple[float, float]:
    """The Wilson score interval (two-sided, ``z`` = 1.96: 95%) for a share observed over ``draws`` independent
    draws: (0, 1) when nothing was drawn. Unlike the normal approximation it stays inside [0, 1] and is not empty
    at a share of 0 or 1 (0 of 64 gives 0 to 5.7%)."""
    if draws <= 0:
        return 0.0, 1.0
    z2 = z * z
    centre = share + z2 / (2 * draws)
    spread = z * math.sqrt(share * (1 - share) / draws + z2 / (4 * draws * draws))
    return max(0.0, (centre - spread) / (1 + z2 / draws)), min(1.0, (centre + spread) / (1 + z2 / draws))


def lower_bound(share: float, draws: float, z: float = CONFIDENCE_Z) -> float:
    """The Wilson score interval's lower bound for a share observed over ``draws`` independent draws."""
    return wilson_interval(share, draws, z)[0] if draws > 0 else 0.0


def share_above(tally: dict, limit: float) -> bool:
    """Whether the share of training samples left out is above ``limit`` with 95% confidence. The samples of one
    prompt share its row, so each group of ``num_generations`` counts as one draw: one bad row met early in a run
    (all 8 samples of its group) is not yet evidence that more than a few per cent of the data is bad."""
    seen = tally.get("seen") or 0
    if not seen:
        return False
    share = (tally.get("unscorable") or 0) / seen
    return lower_bound(share, seen / max(1, tally.get("num_generations") or 1)) > limit


def say_new_rows(new: list[dict], tally: Tally, stream=None) -> None:
    """One console line per newly unscorable row (the first ``SAID_ROWS``), then one pointing at the tally."""
    stream = stream or sys.stderr
    said = len(tally.rows) + tally.more_rows - len(new)
    for entry in new:
        said += 1
        if said <= SAID_ROWS:
            stream.write(f"  unscorable: {named(entry)}; its samples are left out of the step (no reward)\n")
        elif said == SAID_ROWS + 1:
            stream.write(f"  unscorable: more rows; every one in output/{TALLY}\n")
    stream.flush()
