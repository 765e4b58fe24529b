"""Samples no reward scored, said in grpo-rlvr's words instead of TRL's.

TRL 1.16 logs "All reward functions returned None for the following kwargs: {…}" for each batch with such a
sample: a dump of the sample's columns, a user's environment as ``<… object at 0x…>`` among them, that names
neither the dataset row nor why. The trainer (``trainers.GRPOTrainerWithHeldOut``) drops that record while TRL
scores (:func:`quiet_trl`) and says, once per run and cause, in one line, how many samples of the batch no reward
scored and why (:class:`Unscored`): their rollout met an environment that could not start or a tool that was
unavailable (``tools/unavailable``), or every reward returned None (none applies). Samples a reward could not
score because it raised or refused their row are named by row elsewhere (``records.unscorable``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

TRL_ALL_NONE = "All reward functions returned None"   # the start of TRL 1.16's warning (grpo_trainer.py)


class _DropAllNone(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            return TRL_ALL_NONE not in record.getMessage()   # accelerate may prefix it ("[RANK 0] ")
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is not TRL's warning: let it through
            return True


@contextmanager
def quiet_trl(module: str) -> Iterator[None]:
    """While inside, the logger ``module`` (TRL's trainer module) drops TRL's all-None warning; the rest passes."""
    logger, drop = logging.getLogger(module), _DropAllNone()
    logger.addFilter(drop)
    try:
        yield
    finally:
        logger.removeFilter(drop)


class Unscored:
    """What this run has said about samples no reward scored: each cause once."""

    def __init__(self) -> None:
        self.said: set[str] = set()

    def say(self, where: str, batch: int, samples: Sequence[tuple[str | None, str | None]], stream=None) -> None:
        """One line per cause not said before. ``samples``: for each sample of the ``batch`` that no reward scored
        (and that no reward named), its dataset row as training names it (or None) and why its rollout was
        unavailable (or None: every reward returned None)."""
        stream = stream or sys.stderr
        unavailable = [(row, why) for row, why in samples if why]
        rest = [row for row, why in samples if not why]
        if unavailable and "unavailable" not in self.said:
            self.said.add("unavailable")
            row, why = unavailable[0]
            stream.write(f"  not scored: {len(unavailable)} of {batch} samples {where}: their environment could not "
                         f"start or a tool was unavailable (first{_on(row)}: {why}); left out of their steps (no "
                         "reward), counted as tools/unavailable; said once\n")
        if rest and "none" not in self.said:
            self.said.add("none")
            stream.write(f"  not scored: {len(rest)} of {batch} samples {where}: every reward returned None for "
                         f"them (first{_on(rest[0])}); left out of their steps (no reward); said once\n")
        stream.flush()


def _on(row: str | None) -> str:
    return f" on {row}" if row else ""


__all__ = ["TRL_ALL_NONE", "Unscored", "quiet_trl"]
