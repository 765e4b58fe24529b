"""The inspection artifact on disk: ``manifest.json``, ``samples.jsonl``, ``report.html`` (DESIGN.md §6).

Writes are atomic (temp file + rename), so a crash mid-review never corrupts what is there. Each sample's
immutable part (id, prompt, completion, ground-truth columns) is hashed into the manifest's
``samples_digest``, so removing, adding or editing a sample is detected by the gate.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import GateError
from grpo_rlvr.files import write_json_atomic, write_jsonl_atomic
from grpo_rlvr.jsonl import read_jsonl

FORMAT_VERSION = 1
MANIFEST, SAMPLES, REPORT = "manifest.json", "samples.jsonl", "report.html"
VERDICTS = ("agree", "disagree")


def sample_digest(samples: list[dict]) -> str:
    h = hashlib.sha256()
    for s in samples:
        core = {k: s.get(k) for k in ("id", "prompt", "completion", "columns")}
        h.update(json.dumps(core, sort_keys=True, ensure_ascii=False, default=str).encode())
    return h.hexdigest()


@dataclass
class Artifact:
    dir: Path
    manifest: dict
    samples: list[dict]

    def save_samples(self) -> None:
        write_jsonl_atomic(self.dir / SAMPLES, self.samples)

    def save_manifest(self) -> None:
        write_json_atomic(self.dir / MANIFEST, self.manifest)


def load_artifact(directory: str | Path) -> Artifact:
    """Read an inspection folder. Raises GateError (unusable input) naming the file and the problem."""
    d = Path(directory)
    if not d.is_dir():
        raise GateError(f"inspection folder {d}: not found; run `grpo-rlvr inspect BRIEF` first")
    try:
        manifest = json.loads((d / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GateError(f"{d / MANIFEST}: missing; this is not an inspection folder (run `grpo-rlvr inspect`)") \
            from None
    except (OSError, json.JSONDecodeError) as e:
        raise GateError(f"{d / MANIFEST}: unreadable ({e}); re-run `grpo-rlvr inspect`") from None
    if not isinstance(manifest, dict):
        raise GateError(f"{d / MANIFEST}: expected a JSON object; re-run `grpo-rlvr inspect`")
    samples = read_jsonl(d / SAMPLES, "samples", GateError, "re-run `grpo-rlvr inspect`")
    return Artifact(d, manifest, samples)
