"""The review the run was gated on, and what it measured about the reward: who read how many samples, when, for
how long, whether the review is signed, and each reward's error rate by that person's own verdicts.

A reward's error rate is the share of reviewed samples whose verdict disagrees with it (a disagreement that names
rewards blames those; one that names none blames every reward), with a 95% Wilson score interval: a review of 64
samples with no disagreement says the reward is wrong on at most 5.7% of such samples, not that it is never wrong.
The gate lets a run start only with no disagreement, so a trained run's point estimate is 0 and the interval's
upper end is the number to read; the disagreements a review still holds are shown (a few, whole).

Not covered: verdicts replaced during the review are counted as they stand (each keeps its history in
``samples.jsonl``); an earlier inspection moved aside by ``inspect --force`` is not read.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from grpo_rlvr.errors import ReviewError
from grpo_rlvr.inspection.artifact import MANIFEST, SAMPLES
from grpo_rlvr.inspection.signature import SIGNATURE, signature_problems
from grpo_rlvr.jsonl import read_jsonl
from grpo_rlvr.records.unscorable import wilson_interval
from grpo_rlvr.report.run_files import read_json
from grpo_rlvr.review.session import inert
from grpo_rlvr.rollout.trajectory import turns

SHOWN_DISAGREEMENTS = 5


def error_rate(wrong: int, reviewed: int) -> dict:
    """``wrong`` of ``reviewed`` as a share with its 95% Wilson interval."""
    low, high = wilson_interval(wrong / reviewed if reviewed else 0.0, reviewed)
    return {"wrong": wrong, "reviewed": reviewed, "share": wrong / reviewed if reviewed else None,
            "low": round(low, 4), "high": round(high, 4), "method": "Wilson score interval, 95%"}


def _verdict(sample: dict) -> dict:
    v = sample.get("verdict")
    return v if isinstance(v, dict) else {}


def error_rates(samples: list[dict], reward_names: list[str]) -> dict:
    """Per reward, and for the reward as a whole (any disagreement), the disagreement share of reviewed samples."""
    reviewed = [s for s in samples if _verdict(s).get("verdict") in ("agree", "disagree")]
    against = [_verdict(s) for s in reviewed if _verdict(s).get("verdict") == "disagree"]
    out = {"any": error_rate(len(against), len(reviewed))}
    for name in reward_names:
        blamed = sum(1 for v in against if not v.get("rewards") or name in v.get("rewards"))
        out[name] = error_rate(blamed, len(reviewed))
    return out


def shown_sample(sample: dict) -> dict:
    """A sample as ``grpo-rlvr review`` shows it: every turn of prompt and completion with control characters
    escaped, each reward's score and reason, the total, the verdict and its note."""
    v = _verdict(sample)
    return {"id": sample.get("id"), "outcome": sample.get("outcome"), "truncated": bool(sample.get("truncated")),
            "prompt": [(inert(label), inert(text)) for label, text in turns(sample.get("prompt"))],
            "completion": [(inert(label), inert(text)) for label, text in turns(sample.get("completion"))],
            "columns": {inert(k): inert(val) for k, val in (sample.get("columns") or {}).items()},
            "scores": {inert(n): {"score": (sc or {}).get("score"), "reason": inert((sc or {}).get("reason", ""))}
                       for n, sc in (sample.get("scores") or {}).items()},
            "total": sample.get("total"), "verdict": v.get("verdict"), "note": inert(v.get("note") or ""),
            "blamed": [inert(r) for r in v.get("rewards") or []], "reviewer": inert(v.get("reviewer") or "")}


def _signature(directory: Path, manifest: dict, samples: list[dict]) -> dict:
    """Whether ``review.sig`` is there, and whether it verifies against every allowed-signers file the manifest
    recorded when inspect ran (the files that made signing required)."""
    signing = manifest.get("signing") if isinstance(manifest.get("signing"), dict) else {}
    recorded = [e for e in signing.get("allowed_signers") or [] if isinstance(e, dict) and e.get("path")]
    out = {"present": (directory / SIGNATURE).is_file(), "required": bool(signing.get("required")),
           "allowed_signers": [{"path": e["path"], "principals": e.get("principals") or []} for e in recorded],
           "verified": None, "problems": []}
    if out["present"] and recorded:
        try:
            problems = [p for e in recorded for p in signature_problems(directory, manifest, samples, Path(e["path"]))]
        except (OSError, ReviewError) as e:   # no ssh-keygen here: say so, do not guess
            problems = [f"cannot verify here: {e}"]
        out.update(verified=not problems, problems=problems)
    return out


def review_facts(inspection: Path | None) -> dict | None:
    """What the review behind the run says (None when the run names no inspection or it cannot be read)."""
    if inspection is None:
        return None
    if not inspection.exists():   # an unreviewed smoke test's, or a folder removed since: nothing to read
        return {"inspection": str(inspection), "absent": True}
    manifest = read_json(inspection / MANIFEST)
    try:
        samples = read_jsonl(inspection / SAMPLES, "inspection samples")
    except Exception as e:  # noqa: BLE001 - a report says what it could not read, it does not fail
        return {"inspection": str(inspection), "unreadable": f"{inspection / SAMPLES}: {e}"}
    if manifest is None:
        return {"inspection": str(inspection), "unreadable": f"{inspection / MANIFEST}: missing or not JSON"}
    names = [str(r.get("name")) for r in manifest.get("rewards") or [] if isinstance(r, dict)]
    verdicts = [_verdict(s) for s in samples if _verdict(s)]
    seconds = [v["seconds"] for v in verdicts if isinstance(v.get("seconds"), (int, float))]
    times = sorted(str(v["time"]) for v in verdicts if v.get("time"))
    disagreements = [s for s in samples if _verdict(s).get("verdict") == "disagree"]
    return {
        "inspection": str(inspection), "created": manifest.get("created"), "tool": manifest.get("tool"),
        "samples": len(samples), "prompts": manifest.get("prompt_count"), "reviewed": len(verdicts),
        "reviewers": sorted({f"{v.get('reviewer')} ({v.get('reviewer_kind', 'human')})" for v in verdicts
                             if v.get("reviewer")}),
        "first_verdict": times[0] if times else None, "last_verdict": times[-1] if times else None,
        "median_seconds": round(statistics.median(seconds), 2) if seconds else None,
        "sampling": manifest.get("sampling"),
        "signature": _signature(inspection, manifest, samples),
        "error_rates": error_rates(samples, names),
        "disagreements": len(disagreements),
        "shown": [shown_sample(s) for s in disagreements[:SHOWN_DISAGREEMENTS]],
    }
