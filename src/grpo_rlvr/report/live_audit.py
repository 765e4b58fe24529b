"""The live review audit as the report shows it: ``output/review_audit.json``, where training compares its own
rollouts with the reviewed ones at each check (format 1: status, settings, the reviewed reference, each check with
its tests, and the stop when it stopped the run).

The report reads the file, never decides: each check's verdict, each test's counts, p-value, threshold and method
are shown as recorded. A run that predates the audit has no file ("no audit recorded"); a file this reader does
not know (another format, not JSON, fields of the wrong type) is said to be unreadable, with why, instead of being
half shown.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

AUDIT = "review_audit.json"
FORMAT = 1
STATUSES = ("clean", "diverged", "pending", "off")
NOT_RECORDED = "no audit recorded (this run predates the audit)"


def _when(t) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if isinstance(t, (int, float)) else None


def _test(t: dict) -> dict:
    return {"metric": str(t.get("metric")), "kind": t.get("kind"), "reviewed": t.get("reviewed"),
            "training": t.get("training"), "p": t.get("p"), "alpha": t.get("alpha"),
            "diverged": bool(t.get("diverged")), "method": t.get("method"), "summary": t.get("summary")}


def _check(c: dict) -> dict:
    tests = [_test(t) for t in c.get("tests") or [] if isinstance(t, dict)]
    return {"step": c.get("step"), "batch": c.get("batch"), "rollouts": c.get("rollouts"), "prompts": c.get("prompts"),
            "time": _when(c.get("time")), "verdict": c.get("verdict"), "tests": tests,
            "diverged": [t["metric"] for t in tests if t["diverged"]]}


def _problem(data) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    if data.get("format") != FORMAT:
        return f"format {data.get('format')!r}, this grpo-rlvr reads format {FORMAT}: update grpo-rlvr to read it"
    if data.get("status") not in STATUSES:
        return f"status {data.get('status')!r} is not one of {', '.join(STATUSES)}"
    for key, kind in (("settings", dict), ("reference", dict), ("checks", list)):
        if not isinstance(data.get(key), kind):
            return f"`{key}` is not a{'n object' if kind is dict else ' list'}"
    if data.get("stopped") is not None and not isinstance(data.get("stopped"), dict):
        return "`stopped` is neither null nor an object"
    return None


def live_audit(output: Path) -> dict:
    """The audit of the run in ``output``: ``recorded`` False (with ``note``) when there is no file or it cannot be
    read, else its status, settings, reference, checks and stop as recorded, and how it was loosened (by the
    recipe or the brief) when it was."""
    path = Path(output) / AUDIT
    if not path.is_file():
        return {"recorded": False, "note": NOT_RECORDED}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        return {"recorded": False, "note": f"{path} cannot be read ({e}): the audit's record is damaged"}
    problem = _problem(data)
    if problem:
        return {"recorded": False, "note": f"{path} is not an audit this report can read: {problem}"}
    settings = data["settings"]
    checks = [_check(c) for c in data["checks"] if isinstance(c, dict)]
    loosened = bool(settings.get("loosened"))
    return {
        "recorded": True, "path": str(path), "status": data["status"], "settings": settings,
        "loosened_by": (("the brief" if settings.get("origin") == "brief" else "the recipe") if loosened else None),
        "reference": data["reference"], "checks": checks,
        "diverged_checks": sum(1 for c in checks if c["verdict"] == "diverged"),
        "stopped": data.get("stopped"),
    }
