"""The reward object every built-in and user reward is wrapped in.

A ``Reward`` is callable with TRL's contract, ``reward(prompts=..., completions=..., completion_ids=..., **columns)``
returning one ``float | None`` per completion, and also ``explain(...)`` returning a ``Scored`` (score + reason)
per completion for inspection. Model output is data: a scorer never raises on it.

A row's own data can be bad (a ground-truth column missing, tests that do not parse). A built-in reads its columns
through one function, ``check_row``, which ``validate`` also runs on every row of the data (``validate/rows.py``), so the
two cannot disagree. Outside training (``score``, ``inspect``, preflight, the gate's re-score) such a row, or a user
reward that raises, is bad input (``RewardError``, exit 2). During training (``__call__``) the samples of that row
score None with the reason kept in ``unscorable`` (by batch position), for the trainer to leave them out of the
step and name their dataset rows (``records/unscorable.py``): a reward never invents a score for them.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import BadColumn, MissingColumn, RowError
from grpo_rlvr.messages import final_text
from grpo_rlvr.tool_failures import unavailable_in

# What a reward measures. The gate's composite rule needs one "format" and one "correctness" reward.
KINDS = ("format", "correctness", "shaping", "judge", "custom")


@dataclass(frozen=True)
class Scored:
    score: float | None
    reason: str
    # Set when the reward could not score this sample: where a user reward raised (``file.py:LINE: ValueError:
    # ...``), or (training only) what is wrong with the row's column. The score is then None. Inspection and
    # ``score`` refuse such a result (exit 2, naming the sample); training leaves the sample out of its step and
    # counts it in ``rewards/<name>/unscorable``.
    raised: str | None = None
    # Set when the rollout met a tool or an environment that failed outside the model's control: why. The score is
    # then None for every reward alike, so TRL leaves the completion out of its group (``tool_failures``).
    outside: str | None = None


# A scorer takes the completion texts and, for each, its row of dataset columns, and returns one Scored each.
Scorer = Callable[[list[str], list[dict]], list[Scored]]


def completion_text(completion) -> str:
    """The text a reward reads from a completion: a string as is; for chat messages, the last assistant message
    (``messages.final_text``: with tools, the answer after the calls)."""
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
    # The reward's check of one row's columns, the function its scorer reads them with (raises RowError naming the
    # column); None: nothing to check (format, user rewards). ``validate`` runs it on every row (``validate/rows.py``).
    check_row: Callable[[dict], object] | None = field(default=None, repr=False)
    # After a training call: (batch position, why) of the samples it could not score (``records/unscorable.py``)
    unscorable: list = field(default_factory=list, repr=False)
    # Makes the reward answer afresh from now on, never from answers stored before (a judge's cache); None: it
    # stores nothing. Training and the gate's re-asks call it (``ask_live``).
    live: Callable[[], None] | None = field(default=None, repr=False)

    def warm(self, wait: bool = True) -> None:
        """Start what the reward needs before its first batch (so no item pays for a start-up)."""
        if self.warmer is not None:
            self.warmer(wait)

    def ask_live(self) -> bool:
        """Never answer from stored answers again (a judge's cache folder is neither read nor written); True when
        the reward had any to forget (it asks something outside this process: a judge)."""
        if self.live is None:
            return False
        self.live()
        return True

    def __post_init__(self):
        # TRL logs rewards/<__name__>/mean.
        self.__name__ = self.name

    def explain(self, completions: Sequence, **columns) -> list[Scored]:
        """Score with reasons. ``columns`` hold one value per completion (TRL passes them so). A completion whose
        rollout met a tool that was unavailable (``tool_unavailable``, recorded with a stored trajectory; else read
        from the completion's tool messages) is not scored: None, for every reward alike, so TRL leaves it out.

        Raises:
            RowError: a row's column is missing or bad (checked before any completion is read).
        """
        return self._outside_first(completions, columns, tolerant=False)

    def _outside_first(self, completions: Sequence, columns: dict, tolerant: bool) -> list[Scored]:
        """Rollouts a tool failed outside the model's control get ``Scored(None, why, outside=why)``; the rest are
        scored (``explain_tolerant``'s way when ``tolerant``)."""
        n = len(completions)
        unavailable = columns.get("tool_unavailable")
        if not (isinstance(unavailable, (list, tuple)) and len(unavailable) == n):   # in training: read it here
            envs = columns.get("environments")
            envs = envs if isinstance(envs, (list, tuple)) and len(envs) == n else [None] * n
            unavailable = [unavailable_in(c, e) for c, e in zip(completions, envs, strict=True)]
        if any(unavailable):
            keep = [i for i, why in enumerate(unavailable) if not why]
            rest = {k: [v[i] for i in keep] if isinstance(v, (list, tuple)) and len(v) == n else v
                    for k, v in columns.items() if k != "tool_unavailable"}
            scored = self._outside_first([completions[i] for i in keep], {**rest, "tool_unavailable": [None] * len(keep)},
                                         tolerant) if keep else []
            out = [Scored(None, f"not scored: {why} (outside the model's control)", outside=why) for why in unavailable]
            for i, s in zip(keep, scored, strict=True):
                out[i] = s
            return out
        texts, rows = self._texts_and_rows(completions, columns)
        if tolerant:
            return self._tolerant(texts, rows)
        if self.check_row is not None:
            for row in rows:
                self.check_row(row)
        return self._scored(texts, rows)

    def _scored(self, texts: list[str], rows: list[dict]) -> list[Scored]:
        out = self.scorer(texts, rows)
        if len(out) != len(texts):
            raise RuntimeError(f"reward {self.name!r} returned {len(out)} scores for {len(texts)} completions")
        return [_finite(s) for s in out]

    def _texts_and_rows(self, completions: Sequence, columns: dict) -> tuple[list[str], list[dict]]:
        """The completions' texts and, per completion, its row of dataset columns (``prompt`` and
        ``completion_ids`` included)."""
        texts = [completion_text(c) for c in completions]
        n = len(texts)
        rows = [{} for _ in range(n)]
        for key, values in columns.items():
            if key in ("trainer_state", "log_extra", "log_metric", "completion_ids", "prompts", "tool_unavailable"):
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
        return texts, rows

    def explain_tolerant(self, completions: Sequence, **columns) -> list[Scored]:
        """``explain`` as training needs it: a row whose column ``check_row`` refuses, or that the scorer refuses
        with a ``RowError``, or that a user reward raised on, gives ``Scored(None, reason, raised=why)`` for its
        samples while the rest of the batch is scored. Anything else raises as in ``explain`` (a broken sandbox,
        a reward returning the wrong number of scores). Rollouts a tool failed are left out as in ``explain``."""
        return self._outside_first(completions, columns, tolerant=True)

    def _tolerant(self, texts: list[str], rows: list[dict]) -> list[Scored]:
        out: list[Scored | None] = [None] * len(texts)
        ok = []
        for i, row in enumerate(rows):
            try:
                if self.check_row is not None:
                    self.check_row(row)
                ok.append(i)
            except RowError as e:
                out[i] = _unscorable(str(e))
        try:
            got = self._scored([texts[i] for i in ok], [rows[i] for i in ok]) if ok else []
        except RowError:   # a row the check passed and the scorer refused: score one row at a time to find it
            got = []
            for i in ok:
                try:
                    got.extend(self._scored([texts[i]], [rows[i]]))
                except RowError as e:
                    got.append(_unscorable(str(e)))
        for i, s in zip(ok, got, strict=True):
            out[i] = s
        return out  # type: ignore[return-value]

    def __call__(self, prompts=None, completions=(), **kwargs) -> list[float | None]:
        """TRL's call during training. A sample the reward cannot score (``explain_tolerant``) gets None, never a
        made-up score; ``self.unscorable`` keeps (batch position, why) for the trainer, which leaves the whole
        sample out of its step and names its dataset row, and the share of such samples in this call goes to
        TRL's logs as ``rewards/<name>/unscorable``."""
        scored = self.explain_tolerant(completions, prompts=prompts, **kwargs)
        self.unscorable = [(i, s.raised) for i, s in enumerate(scored) if s.raised]
        if callable(kwargs.get("log_metric")):
            kwargs["log_metric"](f"rewards/{self.name}/unscorable", len(self.unscorable) / max(1, len(scored)))
            if any(s.outside for s in scored) or _tool_rollouts(completions, kwargs):
                # every reward logs it alike; TRL averages them to the same value
                kwargs["log_metric"]("tools/unavailable", float(sum(bool(s.outside) for s in scored)))
        return [None if s.raised else s.score for s in scored]


def _tool_rollouts(completions: Sequence, columns: dict) -> bool:
    """The batch comes from a run with tools: TRL passed environments, or a rollout has a tool call or result."""
    if columns.get("environments") is not None:
        return True
    return any(isinstance(c, (list, tuple)) and any(isinstance(m, dict) and (m.get("role") == "tool" or m.get("tool_calls"))
                                                    for m in c) for c in completions)


def refuse_raised(name: str, scored: Sequence[Scored], completions: Sequence,
                  row_names: Sequence[str | None] | None = None) -> None:
    """Raise ``RewardError`` (exit 2) naming the first sample the reward ``name`` raised on (its index, its data row
    as training names it when ``row_names`` has it, and the start of its completion): outside training, a reward
    that raises is a bug in the reward or in the row, to fix before its scores are trusted."""
    first = next((i for i, s in enumerate(scored) if s.raised), None)
    if first is None:
        return
    from grpo_rlvr.errors import RewardError

    count = sum(bool(s.raised) for s in scored)
    text = completion_text(completions[first])
    names = list(row_names or [])[:len(scored)]
    row = names[first] if first < len(names) else None
    rows = list(dict.fromkeys(n for n, s in zip(names, scored, strict=False) if n and s.raised))
    on = f" on the data row {row}" if row else ""
    more = f"; rows: {', '.join(rows[:5])}{', …' if len(rows) > 5 else ''}" if len(rows) > 1 else ""
    raise RewardError(f"reward {name!r} raised on sample {first}{on} ({count} of {len(scored)} samples{more}), "
                      f"completion {text[:60]!r}{'…' if len(text) > 60 else ''}: {scored[first].raised}. If the row "
                      "is at fault (a column the reward reads is missing or malformed there), fix or drop the row; "
                      "if the completion is (model output is data), make the reward return 0 (or None, not "
                      "applicable) for a completion it cannot score instead of raising. During training such a "
                      f"sample is left out of its step, unscored, named by its row and counted as "
                      f"rewards/{name}/unscorable")


def row_value(reward: str, row: dict, column: str, param: str) -> object:
    """The row's value of ``column``, read by the reward ``reward`` through its parameter ``param``.

    Raises:
        MissingColumn: the row has no such column.
    """
    if column not in row:
        raise MissingColumn(reward, column, param, sorted(row))
    return row[column]


def ground_truth_check(reward: str, column: str, param: str = "answer_column") -> Callable[[dict], object]:
    """The row check of a reward that compares with a ground-truth answer (``exact_match``, ``math``): the column
    is there and holds an answer (not null, not blank). Returns the value."""

    def check(row: dict) -> object:
        value = row_value(reward, row, column, param)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise BadColumn(reward, column, f"reward {reward!r}: the dataset column {column!r} holds no answer "
                            f"({value!r}); give the row its ground truth, or drop the row")
        return value

    return check


def _unscorable(why: str) -> Scored:
    return Scored(None, f"not scored: {why}", raised=why)


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
