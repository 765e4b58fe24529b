"""The live review audit as the report shows it: ``output/review_audit.json``, where training compares its own
first rollouts with the reviewed inspection's before the optimizer steps on them (``audit.live``, format 1: status,
settings, the reviewed reference, each check with its tests, and the stop when it stopped the run).

The report reads the record, never decides: each check's verdict and each test's counts, p-value, threshold and
method are shown as recorded, with one outcome for the run: clean, stopped (before the optimizer stepped), would
have stopped (``audit.stop_on: never``: it trained on), or pending (no batch compared yet). A loosened audit says
how and by whom: the brief's ``audit`` section, which the review is bound to. A run without the file (one that
predates the audit, a smoke test, a plain TRL folder) says so; a file this reader does not know (another format, not
JSON, fields of the wrong type) is said to be unreadable, with why, instead of being half shown.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from grpo_rlvr.audit.live import DEFAULT_ALPHA, RECORD

FORMAT = 1
STATUSES = ("pending", "clean", "diverged")
NOT_RECORDED = ("no audit recorded: the run predates the review audit, or it trained without a review (a smoke "
                "test, a plain TRL run)")


def _when(t) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if isinstance(t, (int, float)) else None


def _test(t: dict) -> dict:
    return {"metric": str(t.get("metric")), "kind": t.get("kind"), "reviewed": t.get("reviewed"),
            "training": t.get("training"), "p": t.get("p"), "alpha": t.get("alpha"),
            "diverged": bool(t.get("diverged")), "method": t.get("method"), "summary": str(t.get("summary") or "")}


def _check(c: dict) -> dict:
    tests = [_test(t) for t in c.get("tests") or [] if isinstance(t, dict)]
    return {"step": c.get("step"), "batch": c.get("batch"), "rollouts": c.get("rollouts"), "prompts": c.get("prompts"),
            "time": _when(c.get("time")), "alpha": c.get("alpha"), "verdict": c.get("verdict"), "tests": tests,
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


def loosening(settings: dict) -> dict | None:
    """How the audit was made less likely to stop a run than the recipe's (``stop_on: never``, a smaller alpha),
    and by whom: the brief's ``audit`` section (the recipe never loosens it). None when it was not loosened."""
    if not settings.get("loosened"):
        return None
    how = []
    if settings.get("stop_on") == "never":
        how.append("stop_on: never (a divergence is recorded, the run trains on)")
    alpha = settings.get("alpha")
    if isinstance(alpha, (int, float)) and alpha < DEFAULT_ALPHA:
        how.append(f"alpha {alpha:g} (the recipe's is {DEFAULT_ALPHA:g}: it stops a run less often)")
    return {"by": "the brief's audit section" if settings.get("origin") == "brief" else str(settings.get("origin")),
            "how": how}


def _outcome(data: dict, checks: list[dict]) -> tuple[str, str]:
    """(outcome, one sentence with the numbers) for the run's audit as recorded."""
    ref = data["reference"]
    if data["status"] == "diverged":
        check = next((c for c in reversed(checks) if c["verdict"] == "diverged"), checks[-1] if checks else {})
        said = (f"at step {check.get('step')}, {check.get('rollouts')} training rollouts of {check.get('prompts')} "
                f"prompts against the {ref.get('rollouts')} the inspection sampled differed in "
                f"{', '.join(check.get('diverged') or ['?'])}")
        if data.get("stopped") is not None:
            return "stopped", f"STOPPED the run before the optimizer stepped: {said}"
        return "would stop", f"would have stopped the run, which trained on (stop_on: never): {said}"
    if not checks:
        return "pending", "no generation batch compared yet (the run ended or is still before its first batch)"
    last = checks[-1]
    said = (f"{last['rollouts']} training rollouts of {last['prompts']} prompts against the {ref.get('rollouts')} "
            f"the inspection sampled, {len(last['tests'])} comparisons clean at alpha {last.get('alpha')}")
    return ("clean", said) if data["status"] == "clean" else ("pending", f"clean so far: {said}")


def live_audit(output: Path) -> dict:
    """The audit of the run in ``output``: ``recorded`` False (with ``note``) when there is no record or it cannot
    be read; else its outcome and sentence, status, settings and how they were loosened, the reference, every check
    and the stop, as recorded."""
    path = Path(output) / RECORD
    if not path.is_file():
        return {"recorded": False, "note": NOT_RECORDED}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return {"recorded": False, "note": f"{path} cannot be read ({e}): the audit's record is damaged"}
    problem = _problem(data)
    if problem:
        return {"recorded": False, "note": f"{path} is not an audit this report can read: {problem}"}
    checks = [_check(c) for c in data["checks"] if isinstance(c, dict)]
    outcome, sentence = _outcome(data, checks)
    earlier = data.get("earlier_starts")
    return {
        "recorded": True, "path": str(path), "status": data["status"], "outcome": outcome, "sentence": sentence,
        "settings": data["settings"], "loosened": loosening(data["settings"]), "reference": data["reference"],
        "checks": checks, "diverged_checks": sum(1 for c in checks if c["verdict"] == "diverged"),
        "stopped": data.get("stopped"), "cost_s": data.get("cost_s"), "resumed": bool(data.get("resumed")),
        "earlier_starts": len(earlier) if isinstance(earlier, list) else 0,
    }
