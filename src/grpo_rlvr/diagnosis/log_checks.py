"""Checks of the log itself, run before the failure-mode detectors: a log with no records, too few to judge a
trend, non-finite (NaN, inf) or null metrics, or without the metrics the detectors need is a finding, never
"healthy"."""

from __future__ import annotations

from grpo_rlvr.diagnosis.detectors import MIN_RECORDS_FOR_TREND, Finding, _length_series, nothing_scored
from grpo_rlvr.diagnosis.metrics import RunLogs

# Non-finite values in these mean the optimisation itself broke, not one reward.
TRAINING_KEYS = ("loss", "grad_norm", "reward", "reward_std", "entropy", "kl")

# Metric → the detectors that cannot run without it.
KEY_METRICS = {
    "reward": "every trend of the total reward (entropy collapse, KL blow-up when no correctness reward)",
    "entropy": "entropy collapse",
    "completions/mean_length": "length–reward coupling",
    "frac_reward_zero_std": "no learning signal (nor logged completions to recount it from)",
}


def _logging_hint(logs: RunLogs) -> str:
    steps = ((logs.brief_lock or {}).get("grpo_config") or {}).get("logging_steps")
    return f" (this run logged every {steps} steps)" if isinstance(steps, int) else ""


def crashed(logs: RunLogs) -> Finding | None:
    """The run died (``output/crash.json``, ``records/crash_record.py``): the exception, its last frame in the
    user's or grpo-rlvr's code, and the fix. Whatever the logs say, a run that died is not healthy."""
    if logs.crash is None:
        return None
    from grpo_rlvr.records.crash_record import TAIL, crash_lines

    c = logs.crash
    lines = crash_lines(c)
    if c.get("kind") == "stopped":   # not a death: the person stopped it, and its logs are judged as they stand
        return Finding("stopped", f"The run was stopped ({c.get('message')}) before it finished", "warning", lines[:1],
                       f"resume it: `{c['resume']}`" if c.get("resume") else str(c.get("fix")))
    evidence = lines[:-1]
    tail = [x for x in str(c.get("stderr_tail") or "").splitlines() if x.strip()]
    if tail and not c.get("exception"):
        evidence += [f"stderr: {x[:200]}" for x in tail[-3:]]
    elif c.get("exception"):
        evidence.append(f"the traceback and the stderr before it: output/{TAIL}, output/crash.json")
    return Finding("crashed", f"The run died: {c.get('exception') or c.get('signal') or 'exit ' + str(c.get('exit_code'))}",
                   "critical", evidence, str(c.get("fix")))


def review_audit(logs: RunLogs) -> Finding | None:
    """Training's own first rollouts differed from what the person reviewed (``output/review_audit.json``,
    ``audit/live.py``): the run was stopped before its optimizer stepped on them, or, with ``audit.stop_on:
    never``, trained on anyway."""
    a = logs.review_audit
    if not isinstance(a, dict) or a.get("status") != "diverged":
        return None
    from grpo_rlvr.audit.live import TITLE, AuditSettings, what_to_do

    check = next((c for c in reversed(a.get("checks") or []) if c.get("verdict") == "diverged"), {})
    evidence = [t.get("summary", "") for t in check.get("tests") or () if t.get("diverged")]
    ref = a.get("reference") or {}
    evidence.append(f"{check.get('rollouts')} training rollouts of {check.get('prompts')} prompts at step "
                    f"{check.get('step')} against the {ref.get('rollouts')} the inspection sampled; family-wise alpha "
                    f"{check.get('alpha')}")
    stopped = a.get("stopped") is not None
    title = f"{TITLE}: " + ("the run was stopped before its optimizer stepped" if stopped else
                            "the run trained on anyway (audit.stop_on: never)")
    return Finding("review_audit", title, "critical", evidence,
                   what_to_do(AuditSettings.from_dict({k: v for k, v in (a.get("settings") or {}).items()
                                                       if k in ("alpha", "stop_on", "batches", "origin")})))


def no_records(logs: RunLogs) -> Finding | None:
    if len(logs.history) or logs.crash is not None or logs.review_audit_stopped:   # their own findings say why
        return None
    evidence = [f"{logs.source}: no training log records (objects with a step and a loss or reward)"] + logs.notes
    return Finding("no_records", "The log has no training records: nothing to judge", "critical", evidence,
                   "The run logged nothing: it may have stopped before its first logging step (read its stderr), "
                   "or this is not the run's output folder. Rerun it, or point diagnose at the folder that holds "
                   "its trainer_state.json or metrics.jsonl.")


def too_few_records(logs: RunLogs) -> Finding | None:
    n = len(logs.history)
    if n == 0 or n >= MIN_RECORDS_FOR_TREND:
        return None
    s = logs.history.steps
    return Finding("too_few_records", f"Too few log records to judge trends ({n}; {MIN_RECORDS_FOR_TREND} needed)",
                   "warning",
                   [f"{n} training log record{'s' if n != 1 else ''}, steps {s[0]}–{s[-1]}{_logging_hint(logs)}; "
                    f"the trend checks (entropy, length, format against correctness, KL) need at least "
                    f"{MIN_RECORDS_FOR_TREND}, so only level checks ran"],
                   f"Train longer or log more often, so the run logs at least {MIN_RECORDS_FOR_TREND} times "
                   f"(grpo.logging_steps ≤ max_steps / {MIN_RECORDS_FOR_TREND}), then diagnose again.",
                   brief_change={"grpo": {"logging_steps": f"≤ max_steps / {MIN_RECORDS_FOR_TREND}"}})


def non_finite_metrics(logs: RunLogs) -> Finding | None:
    """NaN or inf anywhere (named with the first step and how many logs), and null reward means (TRL writes null
    when a reward returned None for every completion of a step). A run that scored nothing is
    ``nothing_scored``'s: its null rewards say that, not a learning rate."""
    if nothing_scored(logs) is not None:
        return None
    evidence, broke = [], False
    for table, prefix in ((logs.history, ""), (logs.eval_history, "held-out ")):
        n = len(table)
        for key in sorted(table.keys()):
            bad = table.non_finite(key)
            if bad:
                kinds = "/".join(sorted({str(v) for _, v in bad}))
                evidence.append(f"{prefix}{key} is {kinds} from step {bad[0][0]} ({len(bad)} of {n} logs)")
                broke |= key in TRAINING_KEYS
        for key, (count, first) in sorted(table.nulls.items()):
            if key.startswith(("rewards/", "eval_rewards/")) or key in TRAINING_KEYS:
                evidence.append(f"{prefix}{key} is null from step {first} ({count} of {n} logs)")
                broke |= key in TRAINING_KEYS
    if not evidence:
        return None
    if broke:
        rec = ("Training produced non-finite numbers: lower the learning rate, train in bf16 rather than fp16, "
               "and restart from the last checkpoint before the first bad step. The trend checks ignore these "
               "values.")
    else:
        rec = ("A reward returned None or NaN for whole steps: check that it can parse every gold answer and "
               "that it returns a number for every completion. The trend checks ignore these values.")
    return Finding("non_finite_metrics", "Metrics with NaN, inf or null values", "critical" if broke else "warning",
                   evidence, rec)


def missing_key_metrics(logs: RunLogs) -> Finding | None:
    """Metrics the detectors need that the log lacks, and a run with several rewards none of which is known to
    be the correctness part."""
    if not len(logs.history):
        return None
    keys = logs.history.keys()
    evidence = []
    for key, needs in KEY_METRICS.items():
        if key == "completions/mean_length" and _length_series(logs)[0]:
            continue
        if key == "frac_reward_zero_std" and any(isinstance(r.get("advantage"), (int, float)) for r in logs.completions):
            continue
        if key == "reward" and any(k.startswith("rewards/") for k in keys):
            continue
        if key not in keys:
            evidence.append(f"{key} is not in the log: not checked: {needs}")
    roles = logs.roles
    if len(roles) >= 2 and not any(r.role == "correctness" for r in roles.values()):
        listed = ", ".join(f"{n} ({r.role})" for n, r in roles.items())
        evidence.append(f"no reward is known to be the correctness part ({listed}): reward hacking and length "
                        "coupling were not checked, and quality is the total reward")
    if not evidence:
        return None
    return Finding("missing_key_metrics", "Metrics the diagnosis needs are missing", "warning", evidence,
                   "Log them (TRL's GRPOTrainer logs all of these by default; a custom trainer or callback may "
                   "drop them), or state what a reward is with --role NAME=correctness|format|length|other.")


LOG_CHECKS = (crashed, review_audit, no_records, too_few_records, non_finite_metrics, missing_key_metrics)
