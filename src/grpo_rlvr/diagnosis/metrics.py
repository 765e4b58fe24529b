"""Reading what a run logged: the metric history (``metrics.jsonl`` or ``trainer_state.json``, the newest of the
top-level one and those in ``checkpoint-*/``), the held-out evaluations (``eval_*`` records) and the logged
training completions (``completions/*.parquet``, as TRL writes them; held-out ones are under
``completions/eval/``), from a run folder, a plain TRL output folder, or a file.

Records are kept column by column (a step array and, per metric, the record indexes and float values that
have it), so a long run costs 16 bytes a logged number, not a Python dict per record. Non-numeric values
(strings, lists, nested objects) are ignored; ``null`` values are counted, since TRL writes ``null`` for a
reward that returned None for every completion. Entries that are not records (not an object, no integer
``step``) are skipped and counted in ``notes``.

Limits: TensorBoard event files are not read (no TensorBoard reader is installed in this stack); a folder
holding only them gets an error saying so and what to log instead.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from pathlib import Path

from grpo_rlvr.diagnosis.log_reader import jsonl_records, peek_global_step, state_records
from grpo_rlvr.errors import InputFileError

SERIES_CACHE_MAX = 50_000


class MetricTable:
    """Log records column by column: ``steps[i]`` is record i's step; ``columns[key]`` holds the (record index,
    value) pairs of the records that logged ``key`` as a number, NaN and inf included."""

    def __init__(self, steps: array, columns: dict[str, tuple[array, array]], nulls: dict[str, tuple[int, int]]):
        self.steps = steps
        self.columns = columns
        self.nulls = nulls          # key → (how many records logged it as null, first such step)
        self._series: dict[str, list[tuple[int, float]]] = {}

    def __len__(self) -> int:
        return len(self.steps)

    def keys(self) -> set[str]:
        return set(self.columns)

    def series(self, key: str) -> list[tuple[int, float]]:
        """(step, value) of the records that logged ``key`` as a finite number, in step order (kept for short
        runs: the detectors ask for the same few keys many times)."""
        if key in self._series:
            return self._series[key]
        col = self.columns.get(key)
        steps = self.steps
        out = [(steps[i], v) for i, v in zip(*col, strict=True) if math.isfinite(v)] if col else []
        if len(out) <= SERIES_CACHE_MAX:   # a long run's series (~100 bytes a point) is rebuilt, not kept
            self._series[key] = out
        return out

    def non_finite(self, key: str) -> list[tuple[int, float]]:
        col = self.columns.get(key)
        if not col or all(map(math.isfinite, col[1])):
            return []
        return [(self.steps[i], v) for i, v in zip(*col, strict=True) if not math.isfinite(v)]


class _TableBuilder:
    """Collects records in file order; ``build`` keeps the last record of each kind for each step (a resumed
    run re-logs the steps after its checkpoint) and sorts them by step."""

    def __init__(self):
        self.steps, self.kinds = array("q"), []
        self.shapes: dict[tuple[str, ...], tuple[array, array]] = {}   # keys → (record indexes, flat rows)
        self.odd_cols: dict[str, tuple[array, array]] = {}             # values of records that are not all numbers
        self.nulls: dict[str, list[int]] = {}

    def add(self, step: int, kind: str, record: dict) -> None:
        i = len(self.steps)
        self.steps.append(step)
        self.kinds.append(kind)
        vals = list(record.values())
        try:  # the usual record, all numbers: one row of a flat array per key set, at C speed
            if any(map(isinstance, vals, _BOOL)):
                raise TypeError
            row = array("d", vals)
        except (TypeError, OverflowError):
            self._add_slowly(i, record)
            return
        shape = self.shapes.get(keys := tuple(record))
        if shape is None:
            shape = self.shapes[tuple(sys.intern(k) for k in keys)] = (array("q"), array("d"))
        shape[0].append(i)
        shape[1].extend(row)

    def _add_slowly(self, i: int, record: dict) -> None:
        for k, v in record.items():
            t = type(v)
            if t is float or (t is int and k != "step"):
                col = self.odd_cols.get(k)
                if col is None:
                    col = self.odd_cols[sys.intern(k)] = (array("q"), array("d"))
                col[0].append(i)
                col[1].append(v if t is float else _as_float(v))
            elif v is None:
                self.nulls.setdefault(sys.intern(k), []).append(i)

    @cached_property
    def cols(self) -> dict[str, tuple[array, array]]:
        """key → (record indexes, values), in file order."""
        parts: dict[str, list[tuple[array, array]]] = {}
        for keys, (idx, flat) in self.shapes.items():
            n = len(keys)
            for j, k in enumerate(keys):
                if k != "step":
                    parts.setdefault(k, []).append((idx, flat[j::n]))
        for k, col in self.odd_cols.items():
            parts.setdefault(k, []).append(col)
        out = {}
        for k, cols in parts.items():
            if len(cols) == 1:
                out[k] = cols[0]
            else:
                pairs = sorted((i, v) for idx, vals in cols for i, v in zip(idx, vals, strict=True))
                out[k] = (array("q", (i for i, _ in pairs)), array("d", (v for _, v in pairs)))
        return out

    def build(self, kind: str) -> MetricTable:
        last: dict[int, int] = {}
        for i, (s, k) in enumerate(zip(self.steps, self.kinds, strict=True)):
            if k == kind:
                last[s] = i
        order = sorted(last.values(), key=lambda i: (self.steps[i], i))
        if len(order) == len(self.steps) and order == list(range(len(order))):
            # One kind, in order, no step logged twice (most logs): the columns are already right.
            nulls = {k: (len(idx), self.steps[idx[0]]) for k, idx in self.nulls.items()}
            return MetricTable(self.steps, self.cols, nulls)
        pos = {old: new for new, old in enumerate(order)}
        steps = array("q", (self.steps[i] for i in order))
        columns = {}
        for key, (idx, vals) in self.cols.items():
            pairs = sorted((pos[i], v) for i, v in zip(idx, vals, strict=True) if i in pos)
            if pairs:
                columns[key] = (array("q", (p for p, _ in pairs)), array("d", (v for _, v in pairs)))
        nulls = {}
        for key, idx in self.nulls.items():
            kept = sorted(pos[i] for i in idx if i in pos)
            if kept:
                nulls[key] = (len(kept), steps[kept[0]])
        return MetricTable(steps, columns, nulls)


def _as_float(v: int) -> float:
    return float(v) if abs(v) < 1e308 else math.copysign(math.inf, v)


_BOOL = repeat(bool)
_NUMBER = (int, float)


def _kind(record: dict) -> str:
    trained = type(record.get("loss")) in _NUMBER or type(record.get("reward")) in _NUMBER
    if "train_runtime" in record and not trained:
        return "summary"
    if trained:   # TRL's end-of-training record carries the steps logged since the last log (a run shorter than
        return "train"   # logging_steps logs only there)
    if any(k.startswith("eval_") for k in record):
        return "eval" if type(record.get("eval_reward")) in _NUMBER else "other_eval"
    return "other"


def read_tables(records: Iterable[object], notes: list[str]) -> tuple[MetricTable, MetricTable]:
    """Training and held-out evaluation tables from raw log entries."""
    b = _TableBuilder()
    odd: list[str] = []
    n_odd = 0
    for r in records:
        step = r.get("step") if isinstance(r, dict) else None
        if not isinstance(step, int) or isinstance(step, bool):
            n_odd += 1
            if len(odd) < 3:
                odd.append(repr(r)[:40])
            continue
        b.add(step, _kind(r), r)
    if n_odd:
        notes.append(f"{n_odd} log entr{'y is' if n_odd == 1 else 'ies are'} not a record with an integer step "
                     f"(e.g. {', '.join(odd)}): skipped")
    return b.build("train"), b.build("eval")


class GrowingTables:
    """Log records added one at a time as a run logs them (the watchdog inside training, ``grpo-rlvr watch``):
    each record is appended to flat arrays once; ``tables()`` rebuilds the columns from them at C speed, so no
    file is read twice."""

    def __init__(self):
        self._b = _TableBuilder()
        self.skipped = 0

    def __len__(self) -> int:
        return len(self._b.steps)

    def add(self, record: object) -> None:
        step = record.get("step") if isinstance(record, dict) else None
        if not isinstance(step, int) or isinstance(step, bool):
            self.skipped += 1
            return
        self._b.add(step, _kind(record), record)
        self._b.__dict__.pop("cols", None)   # the cached columns are stale

    def tables(self) -> tuple[MetricTable, MetricTable]:
        """Training and held-out tables of the records so far (fresh objects; later records do not change them
        in place)."""
        train, held = self._b.build("train"), self._b.build("eval")
        if train.steps is self._b.steps:    # the fast path shares the builder's step array: copy it
            train.steps = array("q", train.steps)
        return train, held


@dataclass
class RunLogs:
    source: Path                   # the metric log read (or the completions folder when there is none)
    history: MetricTable           # training log records, in step order, no eval/summary records
    completions: list[dict]        # rows of the training completions parquet files (may be empty)
    brief_lock: dict | None
    eval_history: MetricTable      # held-out evaluations ("eval_reward", …), in order
    notes: list[str] = field(default_factory=list)   # what was skipped or chosen while reading
    roles: dict = field(default_factory=dict)        # reward name → roles.Role, set by diagnose
    unscorable: dict | None = None   # output/unscorable.json: the samples training left unscored (records/unscorable)
    max_unscorable: float | None = None   # the watchdog's limit on their share (None: the brief lock's, or default)
    crash: dict | None = None        # output/crash.json: how the run died (records/crash_record), when it did
    review_audit: dict | None = None  # output/review_audit.json: training's first rollouts against the review

    def series(self, key: str) -> list[tuple[int, float]]:
        return self.history.series(key)

    @property
    def review_audit_stopped(self) -> bool:
        return isinstance(self.review_audit, dict) and self.review_audit.get("stopped") is not None

    def eval_series(self, key: str) -> list[tuple[int, float]]:
        """A held-out metric by its training name (``rewards/exact_match/mean`` reads ``eval_rewards/…``)."""
        return self.eval_history.series(f"eval_{key}")

    @cached_property
    def completion_windows(self):
        """Early and late logged completions (``completions.windows``), computed once per diagnosis."""
        from grpo_rlvr.diagnosis.completions import windows

        return windows(self.completions)


def _newest_state(out: Path, notes: list[str]) -> Path | None:
    """The trainer_state.json with the highest global_step among OUT's and its checkpoint-*/ ones (ties: the
    top-level one, which ``save_state`` writes at the end)."""
    found = [out / "trainer_state.json"] if (out / "trainer_state.json").is_file() else []
    found += [c for c in out.glob("checkpoint-*/trainer_state.json") if c.parent.name.split("-")[-1].isdigit()]
    if not found:
        return None

    def rank(p: Path):
        step = peek_global_step(p)
        if step is None and p.parent != out:
            step = int(p.parent.name.split("-")[-1])
        return (step if step is not None else -1, p.parent == out)

    best = max(found, key=rank)
    if len(found) > 1:
        notes.append(f"read {best.relative_to(out)}, the newest of {len(found)} trainer_state.json files "
                     f"(global_step {rank(best)[0]})")
    return best


_TB_GLOB = "**/events.out.tfevents.*"


def _locate(p: Path, notes: list[str]) -> tuple[Path | None, Path, Path]:
    """(metric log or None, completions folder, the output folder) for a target path."""
    if p.is_file():
        if p.suffix == ".parquet":
            return None, p.parent, p.parent
        if p.name.startswith("events.out.tfevents"):
            raise _tensorboard_error(p)
        return p, p.parent / "completions", p.parent
    out = p / "output" if (p / "output").is_dir() else p
    if out.name == "completions" and any(out.glob("*.parquet")):
        return None, out, out.parent
    jsonl = out / "metrics.jsonl"
    src = jsonl if jsonl.is_file() else _newest_state(out, notes)
    comp = out / "completions"
    if src is None and not (comp.is_dir() and any(comp.glob("*.parquet"))):
        if next(iter(out.glob(_TB_GLOB)), None) is not None:
            raise _tensorboard_error(out)
        raise InputFileError(f"{p}: no metrics.jsonl or trainer_state.json (nor in checkpoint-*/), and no "
                             "completions/*.parquet; has the run logged anything? Point at the run's output_dir")
    return src, comp, out


def _tensorboard_error(p: Path) -> InputFileError:
    return InputFileError(f"{p}: only TensorBoard event files here, and no TensorBoard reader is installed with "
                          "grpo-rlvr. Diagnose the run's trainer_state.json instead (the Trainer writes one into "
                          "each checkpoint-*/ folder; trainer.save_state() writes one into output_dir)")


def load_run_logs(target) -> RunLogs:
    """Find and read the logs of a run.

    Raises:
        InputFileError: nothing to read (no log, no completions, no crash record), or a log file that is damaged
            beyond its last line.
    """
    p = Path(target)
    if not p.exists():
        raise InputFileError(f"{p}: not found; pass a run folder, a TRL output_dir, a trainer_state.json or a "
                             "metrics.jsonl")
    notes: list[str] = []
    from grpo_rlvr.audit.live import read_audit
    from grpo_rlvr.records.crash_record import read_crash
    from grpo_rlvr.records.unscorable import read_tally

    try:
        src, comp_dir, out = _locate(p, notes)
    except InputFileError:   # nothing logged: a run that died (or the review audit stopped) before its first log
        out = p / "output" if (p / "output").is_dir() else p
        crash = read_crash(out) if p.is_dir() else None
        audit = read_audit(out) if p.is_dir() else None
        if crash is None and (audit is None or audit.get("status") != "diverged"):
            raise
        history, eval_history = read_tables([], notes)
        return RunLogs(out / "metrics.jsonl", history, [], _brief_lock(out, notes), eval_history, notes,
                       unscorable=read_tally(out), crash=crash, review_audit=audit)
    lock = _brief_lock(out, notes)
    if src is None:
        history, eval_history = read_tables([], notes)
        notes.append("no metric log (metrics.jsonl or trainer_state.json): only the logged completions are read")
    else:
        reader = jsonl_records if src.suffix == ".jsonl" else state_records
        history, eval_history = read_tables(reader(src, notes), notes)
    completions = []
    files = _completion_files(comp_dir, notes)
    if files:
        import pyarrow as pa
        import pyarrow.parquet as pq

        for f in files:
            try:
                completions.extend(pq.read_table(f).to_pylist())
            except (OSError, pa.ArrowException) as e:
                notes.append(f"{f.name}: unreadable parquet ({e}): skipped")
        completions = [r for r in completions if isinstance(r.get("step"), int) and "completion" in r]
    return RunLogs(src or comp_dir, history, completions, lock, eval_history, notes, unscorable=read_tally(out),
                   crash=read_crash(out), review_audit=read_audit(out))


MAX_COMPLETION_FILES = (100, 300)   # a long run's first and last completions files; the middle adds no evidence


def _completion_files(comp_dir: Path, notes: list[str]) -> list[Path]:
    """TRL's completions_<step>.parquet files in step order (numerically: step 100000 comes after 99999); of a
    run with more than 400, the first 100 and the last 300."""
    if not comp_dir.is_dir():
        return []

    def step(f: Path) -> tuple[int, str]:
        tail = f.stem.rsplit("_", 1)[-1]
        return (int(tail) if tail.isdigit() else -1, f.name)

    files = sorted(comp_dir.glob("*.parquet"), key=step)
    first, last = MAX_COMPLETION_FILES
    if len(files) > first + last:
        notes.append(f"read {first + last} of {len(files)} completions files (the first {first} and the last {last})")
        files = files[:first] + files[-last:]
    return files


def _brief_lock(out: Path, notes: list[str]) -> dict | None:
    import json

    run = out.parent if out.name == "output" else out
    f = run / "brief.lock.json"
    if not f.is_file():
        return None
    try:
        lock = json.loads(f.read_text())
    except (OSError, ValueError) as e:
        notes.append(f"{f}: unreadable ({e}): read as a run without a brief lock")
        return None
    return lock if isinstance(lock, dict) else None
