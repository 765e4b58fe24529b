"""Reading what a run logged: the metric history (``metrics.jsonl`` or ``trainer_state.json``) and the
logged completions (``completions/*.parquet``), from a run folder, its output folder, or a file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import InputFileError


@dataclass
class RunLogs:
    source: Path
    history: list[dict]            # training log records with "step", in order, no eval/summary records
    completions: list[dict]        # rows of the completions parquet files (may be empty)
    brief_lock: dict | None

    def series(self, key: str) -> list[tuple[int, float]]:
        return [(r["step"], float(r[key])) for r in self.history if isinstance(r.get(key), (int, float))]


def _history_from_state(path: Path) -> list[dict]:
    state = json.loads(path.read_text())
    return [r for r in state.get("log_history", []) if "step" in r]


def _history_from_jsonl(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    by_step: dict[int, dict] = {}
    for r in rows:  # a resumed run may re-log steps: keep the last record for each step
        by_step[r["step"]] = r
    return [by_step[s] for s in sorted(by_step)]


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
    history = [r for r in history if "reward" in r or "loss" in r]
    history = [r for r in history if "train_runtime" not in r]
    completions = []
    files = sorted(comp_dir.glob("*.parquet")) if comp_dir.is_dir() else []
    if files:
        import pyarrow.parquet as pq

        for f in files:
            completions.extend(pq.read_table(f).to_pylist())
    return RunLogs(src, history, completions, lock)
