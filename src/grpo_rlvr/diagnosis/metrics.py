"""Reading what a run logged: the metric history (``metrics.jsonl`` or ``trainer_state.json``), the held-out
evaluations (``eval_*`` records, when the brief set ``dataset.eval_path``) and the logged training completions
(``completions/*.parquet``; held-out ones are under ``completions/eval/``), from a run folder, its output
folder, or a file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.jsonl import read_jsonl


@dataclass
class RunLogs:
    source: Path
    history: list[dict]            # training log records with "step", in order, no eval/summary records
    completions: list[dict]        # rows of the training completions parquet files (may be empty)
    brief_lock: dict | None
    eval_history: list[dict] = field(default_factory=list)  # held-out evaluations ("eval_reward", …), in order

    def series(self, key: str) -> list[tuple[int, float]]:
        return _series(self.history, key)

    @cached_property
    def completion_windows(self):
        """Early and late logged completions (``completions.windows``), computed once per diagnosis."""
        from grpo_rlvr.diagnosis.completions import windows

        return windows(self.completions)

    def eval_series(self, key: str) -> list[tuple[int, float]]:
        """A held-out metric by its training name (``rewards/exact_match/mean`` reads ``eval_rewards/…``)."""
        return _series(self.eval_history, f"eval_{key}")


def _series(records: list[dict], key: str) -> list[tuple[int, float]]:
    return [(r["step"], float(r[key])) for r in records
            if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]


def _history_from_state(path: Path) -> list[dict]:
    state = json.loads(path.read_text())
    return [r for r in state.get("log_history", []) if "step" in r]


def _history_from_jsonl(path: Path) -> list[dict]:
    rows = read_jsonl(path, "metrics")
    by_step: dict[tuple[int, str], dict] = {}
    for r in rows:  # a resumed run may re-log steps: keep the last record of each kind for each step
        by_step[(r["step"], _kind(r))] = r
    return [by_step[k] for k in sorted(by_step)]


def _kind(record: dict) -> str:
    if "train_runtime" in record:
        return "summary"
    return "eval" if any(k.startswith("eval_") for k in record) else "train"


def load_run_logs(target) -> RunLogs:
    """Find and read the logs of a run. Raises InputFileError when there are none."""
    p = Path(target)
    if not p.exists():
        raise InputFileError(f"{p}: not found; pass a run folder, its output folder or a trainer_state.json")
    lock = None
    if p.is_dir():
        out = p / "output" if (p / "output").is_dir() else p
        run = out.parent if out.name == "output" else out
        if (run / "brief.lock.json").is_file():
            lock = json.loads((run / "brief.lock.json").read_text())
        candidates = [out / "metrics.jsonl", out / "trainer_state.json"]
        ckpts = sorted(out.glob("checkpoint-*/trainer_state.json"), key=lambda q: int(q.parent.name.split("-")[-1]))
        candidates += ckpts[::-1]
        src = next((c for c in candidates if c.is_file()), None)
        if src is None:
            raise InputFileError(f"{p}: no metrics.jsonl or trainer_state.json; has the run logged anything?")
        comp_dir = out / "completions"
    else:
        src, comp_dir = p, p.parent / "completions"
    try:
        history = _history_from_jsonl(src) if src.suffix == ".jsonl" else _history_from_state(src)
    except (OSError, json.JSONDecodeError, KeyError) as e:
        raise InputFileError(f"{src}: unreadable metrics ({e})") from None
    eval_history = [r for r in history if "eval_reward" in r]
    history = [r for r in history if ("reward" in r or "loss" in r) and "train_runtime" not in r]
    completions = []
    files = sorted(comp_dir.glob("*.parquet")) if comp_dir.is_dir() else []
    if files:
        import pyarrow.parquet as pq

        for f in files:
            completions.extend(pq.read_table(f).to_pylist())
    return RunLogs(src, history, completions, lock, eval_history)
