"""Every fact the report states, gathered once from the run's files into one plain dict (``report.json``): the run's
state, what trained, the review, the live audit, the findings, the headline numbers, the rollouts, the death.

The logs are read as ``diagnose`` reads them (``diagnosis.metrics.load_run_logs``) and judged by its detectors; a run
that logged nothing yet has no curves, findings from the logs or rollouts, and says so.
"""

from __future__ import annotations

import time

from grpo_rlvr import __version__
from grpo_rlvr.errors import InputFileError
from grpo_rlvr.records.crash_record import crash_lines, read_crash
from grpo_rlvr.report.findings import merged, run_state, summary_record, watchdog_log
from grpo_rlvr.report.live_audit import live_audit
from grpo_rlvr.report.review_record import review_facts
from grpo_rlvr.report.rollouts import picked_rollouts
from grpo_rlvr.report.run_files import RunFiles
from grpo_rlvr.report.trained import inspection_manifest, provenance, what_trained


def _logs(files: RunFiles):
    """The run's logs with each reward's role set (None when nothing is logged yet)."""
    from grpo_rlvr.diagnosis.metrics import load_run_logs
    from grpo_rlvr.diagnosis.roles import infer_roles

    try:
        logs = load_run_logs(files.run)
    except InputFileError:
        return None
    logs.roles = infer_roles(logs, {})
    return logs


def _first_last(series) -> dict | None:
    return {"first": round(series[0][1], 4), "last": round(series[-1][1], 4), "first_step": series[0][0],
            "last_step": series[-1][0]} if series else None


def headline(logs) -> dict:
    """Steps logged, the total reward and each correctness reward at the first and the last log, and held out."""
    if logs is None or not len(logs.history) and not len(logs.eval_history):
        return {"records": 0}
    correctness = [n for n, r in logs.roles.items() if r.role == "correctness"]
    return {"records": len(logs.history), "last_step": logs.history.steps[-1] if len(logs.history) else None,
            "reward": _first_last(logs.series("reward")),
            "correctness": {n: _first_last(logs.series(f"rewards/{n}/mean")) for n in correctness},
            "held_out": {"reward": _first_last(logs.eval_series("reward")),
                         **{n: _first_last(logs.eval_series(f"rewards/{n}/mean")) for n in correctness}}
            if len(logs.eval_history) else None}


def gather(files: RunFiles) -> tuple[dict, object, dict]:
    """The facts, the logs (for the curves) and the reward roles."""
    from grpo_rlvr.diagnosis import run_detectors
    from grpo_rlvr.diagnosis.roles import lock_weights

    logs = _logs(files)
    watch = watchdog_log(files.output)
    findings = merged(watch, run_detectors(logs) if logs is not None else [])
    crash = read_crash(files.output)
    proven = provenance(files) if files.lock is not None else None
    last = logs.history.steps[-1] if logs is not None and len(logs.history) else None
    facts = {
        "format": 1, "tool": f"grpo-rlvr {__version__}", "made_at": time.strftime("%Y-%m-%d %H:%M:%S UTC",
                                                                                   time.gmtime()),
        "run": str(files.run), "output": str(files.output), "name": files.brief_name,
        "state": run_state(crash, watch["stop"], summary_record(files.output), last,
                           bool(proven and proven["smoke_test"])),
        "trained": what_trained(files, inspection_manifest(files.inspection)),
        "provenance": proven,
        "review": review_facts(files.inspection),
        "audit": live_audit(files.output),
        "headline": headline(logs),
        "roles": {n: {"role": r.role, "how": r.how} for n, r in (logs.roles if logs is not None else {}).items()},
        "findings": findings,
        "watchdog_cost": watch["cost"],
        "crash": crash, "crash_lines": crash_lines(crash) if crash else None,
        "unscorable": (logs.unscorable if logs is not None else None),
        "notes": logs.notes if logs is not None else ["nothing logged yet: no metrics, completions or crash record"],
        "rollouts": picked_rollouts(logs.completions, lock_weights(files.lock)) if logs is not None else [],
    }
    return facts, logs, (logs.roles if logs is not None else {})
