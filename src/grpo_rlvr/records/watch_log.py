"""Reading what the watchdog (``diagnosis/watchdog.py``) and the metrics callback wrote while a run trains, without
importing the training stack: ``output/watch.jsonl`` (findings, and the stop), ``output/plan.json`` (the steps this
start of the trainer runs to, ``--max-steps`` included) and any JSONL file read as it grows (``JsonlTail``: only the
complete lines added since the last read)."""

from __future__ import annotations

import json
from pathlib import Path

WATCH_LOG = "watch.jsonl"
PLAN = "plan.json"


def write_plan(output: Path, max_steps: int) -> None:
    """Record the step the trainer runs to, as it starts (TRL's ``state.max_steps``: the brief's, or
    ``train --max-steps``)."""
    from grpo_rlvr.files import write_json_atomic

    write_json_atomic(Path(output) / PLAN, {"max_steps": max_steps})


def read_plan(output: Path) -> int | None:
    """The step the run's trainer runs to, when it recorded one."""
    try:
        steps = json.loads((Path(output) / PLAN).read_text()).get("max_steps")
    except (OSError, ValueError, AttributeError):
        return None
    return steps if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0 else None


class JsonlTail:
    """A JSONL file read as it grows: each ``read()`` returns the objects on the complete lines written since the
    previous one (a line still being written waits for its newline; a line that is not JSON is skipped)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.offset = 0
        self.skipped = 0

    def read(self) -> list:
        try:
            with self.path.open("rb") as fh:
                if fh.seek(0, 2) < self.offset:   # the file was replaced by a shorter one: start again
                    self.offset = 0
                fh.seek(self.offset)
                chunk = fh.read()
        except OSError:
            return []
        end = chunk.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        out = []
        for line in chunk[:end].splitlines():
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                self.skipped += 1
        return out


def stop_event(output: Path, since: float | None = None) -> dict | None:
    """The watchdog's last stop event in ``output/watch.jsonl`` (written at or after ``since``), or None."""
    events = JsonlTail(Path(output) / WATCH_LOG).read()
    stops = [e for e in events if isinstance(e, dict) and e.get("event") == "stop"
             and (since is None or (isinstance(e.get("time"), (int, float)) and e["time"] >= since - 1.0))]
    return stops[-1] if stops else None
