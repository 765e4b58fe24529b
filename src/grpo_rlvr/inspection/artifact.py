"""The inspection artifact on disk: ``manifest.json``, ``samples.jsonl``, ``report.html`` (docs/design.md §3).

Writes are atomic (temp file + rename), so a crash mid-review never corrupts what is there. Each sample's
immutable part (id, its trajectory: prompt, completion, token ids, loss mask, stop; ground-truth columns) is hashed
into the manifest's
``samples_digest``, so removing, adding or editing a sample is detected by the gate. The whole manifest
(rewards, params, fingerprints, sampling, the samples digest) is hashed into its ``seal``, and every verdict
carries the seal it was given plus the digest of the one sample it judged (scores included), so an edited
manifest, or a verdict copied from another inspection or onto re-scored samples, is detected too.

Limits: these are plain SHA-256 digests, not signatures. They detect edits by anything that does not also
recompute them; a program written to forge them is outside what a file format can stop (the plugin's hook
keeps the agent from writing under ``inspection/`` at all). Signed reviews (``signature.py``) are the check
such a program cannot pass.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.errors import GateError, InputFileError
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.input_files import load_json
from grpo_rlvr.jsonl import read_jsonl

FORMAT_VERSION = 3   # 2: each sample is a trajectory, sampled by the trainer; 3: the audit reference and the draw
MANIFEST, SAMPLES, REPORT = "manifest.json", "samples.jsonl", "report.html"
VERDICTS = ("agree", "disagree")
# A sample's trajectory, as ``rollout.trajectory.Trajectory.to_record`` writes it: the prompt as the model saw it,
# the completion as TRL hands it to rewards, the token ids, the loss mask (tool output), and why it stopped.
TRAJECTORY = ("prompt", "completion", "prompt_ids", "completion_ids", "loss_mask", "stop", "unavailable",
              "environment_state")
# what inspect wrote for a sample and the digests cover; ``rendered``: the prompt and completion as the tokenizer's
# text of their token ids (the chat template's text, special tokens included), which review shows on request
_SAMPLED = ("id", *TRAJECTORY, "columns", "rendered")


def sample_fields(trajectory) -> dict:
    """The sample's fields for one trajectory (and ``truncated``, which the report and review show)."""
    return {**trajectory.to_record(), "truncated": trajectory.truncated}


def trajectory_of(sample: dict):
    """The stored trajectory of a sample, as the gate re-scores it."""
    from grpo_rlvr.rollout.trajectory import Trajectory

    return Trajectory.from_record(sample)


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()


def manifest_seal(manifest: dict) -> str:
    """The digest of everything inspect recorded in the manifest (all keys but the seal itself)."""
    return hashlib.sha256(_canonical({k: v for k, v in manifest.items() if k != "seal"})).hexdigest()


def judged_digest(sample: dict) -> str:
    """The digest of what a reviewer was shown for one sample: text, ground truth, scores, reasons, total."""
    core = {k: sample.get(k) for k in (*_SAMPLED, "scores", "total")}
    return hashlib.sha256(_canonical(core)).hexdigest()


def candidate_digest(sample: dict) -> str:
    """The digest of one sampled trajectory and its ground truth: the same for a candidate of the audit reference
    and for the sample the pick made of it."""
    return hashlib.sha256(_canonical({k: sample.get(k) for k in (*TRAJECTORY, "columns", "rendered")})).hexdigest()


def sample_digest(samples: list[dict]) -> str:
    h = hashlib.sha256()
    for s in samples:
        h.update(_canonical({k: s.get(k) for k in _SAMPLED}))
    return h.hexdigest()


def make_verdict(manifest: dict, sample: dict, verdict: str, reviewer: str, kind: str, seconds: float | None,
                 note: str = "", rewards: list[str] | None = None) -> dict:
    """One verdict record, bound to the manifest's seal and to the digest of the sample it judged.

    ``kind`` is ``human`` for ``grpo-rlvr review``; the demo's oracle writes ``oracle``. ``seconds`` is the time
    the sample was on screen before the key was pressed.
    """
    return {"verdict": verdict, "note": note, "rewards": list(rewards or []), "reviewer": reviewer,
            "reviewer_kind": kind, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "seconds": None if seconds is None else round(float(seconds), 3),
            "seal": manifest.get("seal"), "sample_digest": judged_digest(sample)}


@dataclass
class Artifact:
    dir: Path
    manifest: dict
    samples: list[dict]

    def save_samples(self) -> None:
        write_jsonl_atomic(self.dir / SAMPLES, self.samples)


def inspection_near(d: Path) -> tuple[str, Path] | None:
    """The inspection folder a person meant when they named a brief's output folder (it holds ``inspection/``),
    a run folder (its ``brief.lock.json`` records the inspection) or a run's ``output/``; with what ``d`` is."""
    if (d / "inspection" / MANIFEST).is_file():
        return "an output folder", d / "inspection"
    for run, what in ((d, "a run folder"), (d.parent, "a run's output folder")):
        try:
            recorded = json.loads((run / "brief.lock.json").read_text()).get("inspection")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(recorded, str) and recorded:
            return what, Path(recorded)
    return None


def load_artifact(directory: str | Path) -> Artifact:
    """Read an inspection folder. Raises GateError (unusable input) naming the file and the problem."""
    d = Path(directory)
    if not d.is_dir():
        raise GateError(f"inspection folder {d}: not found; run `grpo-rlvr inspect BRIEF` first")
    if not (d / MANIFEST).exists():
        found = inspection_near(d)
        if found is not None:
            what, folder = found
            raise GateError(f"{d} is {what}, not an inspection folder; its inspection folder is {folder}: "
                            f"`grpo-rlvr gate {folder}`")
        raise GateError(f"{d / MANIFEST}: missing; this is not an inspection folder (run `grpo-rlvr inspect`)")
    try:
        manifest = load_json(d / MANIFEST, "manifest")
    except InputFileError as e:
        raise GateError(f"{e}; re-run `grpo-rlvr inspect`") from None
    if not isinstance(manifest, dict):
        raise GateError(f"{d / MANIFEST}: expected a JSON object; re-run `grpo-rlvr inspect`")
    samples = read_jsonl(d / SAMPLES, "samples", GateError, "re-run `grpo-rlvr inspect`")
    return Artifact(d, manifest, samples)
