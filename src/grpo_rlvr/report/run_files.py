"""Where a run's files are, found from the folder a person names: the run folder ``grpo-rlvr render`` wrote (its
``brief.lock.json``), or its output folder, or a plain TRL output folder (its logs; nothing known of what trained).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.records.crash_record import output_dir

LOCK = "brief.lock.json"
_LOGS = ("metrics.jsonl", "trainer_state.json", "completions", "crash.json", "watch.jsonl")


@dataclass(frozen=True)
class RunFiles:
    run: Path                 # the run folder (for a plain TRL output folder, that folder)
    output: Path              # where training writes, and where the report goes
    lock: dict | None         # brief.lock.json: what was rendered, gated and started (None: not a grpo-rlvr run)

    @property
    def inspection(self) -> Path | None:
        """The inspection the run is gated on, as its lock names it."""
        named = (self.lock or {}).get("inspection")
        return Path(named) if isinstance(named, str) and named else None

    @property
    def brief_name(self) -> str:
        resolved = (self.lock or {}).get("resolved") or {}
        return str(resolved.get("name") or Path(str((self.lock or {}).get("brief") or self.run)).stem)


def read_json(path: Path) -> dict | None:
    """A JSON object from ``path``; None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def find_run(target) -> RunFiles:
    """The run at ``target``: a run folder, its output folder, or a TRL output folder.

    Raises:
        InputFileError: ``target`` is missing, not a folder, or holds neither a run's lock nor any training log.
    """
    p = Path(target)
    if not p.exists():
        raise InputFileError(f"{p}: not found; pass the run folder `grpo-rlvr render` wrote (or its output folder)")
    if not p.is_dir():
        raise InputFileError(f"{p}: not a folder; pass the run folder `grpo-rlvr render` wrote (or its output "
                             "folder)")
    if (p / LOCK).is_file():
        return RunFiles(p, output_dir(p), read_json(p / LOCK))
    if (p.parent / LOCK).is_file() and output_dir(p.parent).resolve() == p.resolve():
        return RunFiles(p.parent, p, read_json(p.parent / LOCK))
    if any((p / name).exists() for name in _LOGS):
        return RunFiles(p, p, None)
    raise InputFileError(f"{p}: neither a run folder (no {LOCK}) nor a training's output folder (no metrics.jsonl, "
                         "trainer_state.json or completions/); pass the folder `grpo-rlvr render` wrote")
