"""The reward object every built-in and user reward is wrapped in.

A ``Reward`` is callable with TRL's contract, ``reward(prompts=..., completions=..., completion_ids=..., **columns)``
returning one ``float | None`` per completion, and also ``explain(...)`` returning a ``Scored`` (score + reason)
per completion for inspection. Model output is data: a scorer never raises on it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.rollout.trajectory import final_text

log = logging.getLogger(__name__)

# What a reward measures. The gate's composite rule needs one "format" and one "correctness" reward.
KINDS = ("format", "correctness", "shaping", "judge", "custom")


@dataclass(frozen=True)
class Scored:
    score: float | None
    reason: str
    # Set when a user reward raised on this completion: where it raised (``file.py:LINE: ValueError: ...``). The
    # score is then 0. Inspection and ``score`` refuse such a result (exit 2, naming the sample); training keeps
    # the 0 and counts it in ``rewards/<name>/raised``.
    raised: str | None = None


# A scorer takes the completion texts and, for each, its row of dataset columns, and returns one Scored each.
Scorer = Callable[[list[str], list[dict]], list[Scored]]


def completion_text(completion) -> str:
    """The text a reward reads from a completion: a string as is; for chat messages, the last assistant message
    (``rollout.trajectory.final_text``: with tools, the answer after the calls)."""
    return final_text(completion)


def source_fingerprint(*objs, extra: object = None) -> str:
    """sha256 over the source files defining ``objs`` plus the JSON of ``extra`` (the reward's params)."""
    h = hashlib.sha256(Path(__file__).read_bytes())  # the shared contract code counts too
    for obj in objs:
        path = Path(inspect.getsourcefile(obj) or "")
        h.update(path.name.encode())
        h.update(path.read_bytes() if path.is_file() else inspect.getsource(obj).encode())
    h.update(json.dumps(extra, sort_keys=True, default=str).encode())
    return h.hexdigest()


@dataclass
class Reward:
    """A named reward: TRL-callable, explainable, fingerprinted."""

    name: str
    kind: str
    params: dict
    scorer: Scorer
    fingerprint: str
    # Dataset columns this reward reads (by keyword); checked against the brief's column mapping.
    columns: tuple[str, ...] = ()
    notes: dict = field(default_factory=dict)  # JSON-able facts recorded in the inspection manifest
    # Starts helper processes (math's workers) and, with wait=True, blocks until they are ready; None: nothing
    warmer: Callable[[bool], None] | None = field(default=None, repr=False)

    def warm(self, wait: bool = True) -> None:
        """Start what the reward needs before its first batch (so no item pays for a start-up)."""
        if self.warmer is not None:
            self.warmer(wait)

    def __post_init__(self):
        # TRL logs rewards/<__name__>/mean.
        self.__name__ = self.name

    def explain(self, completions: Sequence, **columns) -> list[Scored]:
        """Score with reasons. ``columns`` hold one value per completion (TRL passes them so)."""
        texts = [completion_text(c) for c in completions]
        n = len(texts)
        rows = [{} for _ in range(n)]
        for key, values in columns.items():
            if key in ("trainer_state", "log_extra", "log_metric", "completion_ids", "prompts"):
                continue
            if isinstance(values, (list, tuple)) and len(values) == n:
                for row, v in zip(rows, values, strict=True):
                    row[key] = v
        prompts = columns.get("prompts")
        if isinstance(prompts, (list, tuple)) and len(prompts) == n:
            for row, p in zip(rows, prompts, strict=True):
                row["prompt"] = p
        ids = columns.get("completion_ids")
        if isinstance(ids, (list, tuple)) and len(ids) == n:
            for row, i in zip(rows, ids, strict=True):
                row["completion_ids"] = i
        out = self.scorer(texts, rows)
        if len(out) != n:
            raise RuntimeError(f"reward {self.name!r} returned {len(out)} scores for {n} completions")
        return [_finite(s) for s in out]

    def __call__(self, prompts=None, completions=(), **kwargs) -> list[float | None]:
        """TRL's call during training. A completion the reward raised on scores 0, with a warning naming where it
        raised, and the count goes to TRL's logs as ``rewards/<name>/raised`` (mean per reward call)."""
        scored = self.explain(completions, prompts=prompts, **kwargs)
        raised = [s.raised for s in scored if s.raised]
        if raised:
            log.warning("reward %r raised on %d of %d completions, scored 0: %s", self.name, len(raised),
                        len(scored), raised[0])
        if callable(kwargs.get("log_metric")):
            kwargs["log_metric"](f"rewards/{self.name}/raised", float(len(raised)))
        return [s.score for s in scored]


def refuse_raised(name: str, scored: Sequence[Scored], completions: Sequence) -> None:
    """Raise ``RewardError`` (exit 2) naming the first sample the reward ``name`` raised on (its index and the start
    of its completion): outside training, a reward that raises is a bug in the reward, to fix before its scores are
    trusted."""
    first = next((i for i, s in enumerate(scored) if s.raised), None)
    if first is None:
        return
    from grpo_rlvr.errors import RewardError

    count = sum(bool(s.raised) for s in scored)
    text = completion_text(completions[first])
    raise RewardError(f"reward {name!r} raised on sample {first} ({count} of {len(scored)} samples), completion "
                      f"{text[:60]!r}{'…' if len(text) > 60 else ''}: {scored[first].raised}. Model output is data: make the reward return 0 (or None, not "
                      "applicable) for a completion it cannot score instead of raising; during training such a "
                      f"completion scores 0 and is counted as rewards/{name}/raised")


def _finite(s: Scored) -> Scored:
    if s.score is None:
        return s
    x = float(s.score)
    if not math.isfinite(x):
        return Scored(0.0, f"non-finite score {x} replaced by 0; {s.reason}", s.raised)
    return Scored(x, s.reason, s.raised)


def per_item(fn: Callable[[str, dict], Scored]) -> Scorer:
    """Lift a one-completion scorer to a batch scorer."""

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        return [fn(t, r) for t, r in zip(texts, rows, strict=True)]

    return scorer
