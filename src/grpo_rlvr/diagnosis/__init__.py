"""``grpo-rlvr diagnose``: read a run's logs (a grpo-rlvr run or any TRL run), say what each reward is (its
role), name failure modes with evidence, recommend a variant with the exact brief change. The base recipe
stays unless a finding calls for a variant. A log that cannot be judged (empty, too short, non-finite,
missing key metrics) is a finding, never "healthy"."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from grpo_rlvr.diagnosis.detectors import DETECTORS, Finding
from grpo_rlvr.diagnosis.log_checks import LOG_CHECKS
from grpo_rlvr.diagnosis.metrics import RunLogs, load_run_logs
from grpo_rlvr.diagnosis.report import shown, write_markdown, write_plots
from grpo_rlvr.diagnosis.roles import ROLES, infer_roles, parse_stated
from grpo_rlvr.diagnosis.zero_signal import snippet
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.files import write_json_atomic, write_text_atomic
from grpo_rlvr.protected_targets import refuse_target
from grpo_rlvr.report_location import report_line

__all__ = ["DETECTORS", "LOG_CHECKS", "ROLES", "DiagnosisResult", "Finding", "diagnose", "infer_roles", "load_run_logs",
           "recommended_dynamic_sampling", "recommended_variant"]

_SEVERITY = {"critical": 0, "warning": 1, "info": 2}


@dataclass
class DiagnosisResult:
    out_dir: Path
    data: dict
    findings: list[Finding]

    @property
    def healthy(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict:
        return self.data

    def format(self) -> str:
        d = self.data
        lines = [f"Diagnosis of {d['run']}: {d['records']} log records, reward {shown(d['reward_start'])} → "
                 f"{shown(d['reward_end'])}"]
        lines += [f"  note: {n}" for n in d.get("notes") or []]
        if d.get("roles"):
            lines.append("  reward roles:")
            lines += [f"    {n}: {r['role']} ({r['how']})" for n, r in d["roles"].items()]
        held = d.get("held_out")
        if held:
            parts = [f"{k.split('/')[1] if '/' in k else k} {v['first']} → {v['last']}" for k, v in held.items()
                     if isinstance(v, dict)]
            lines.append(f"  held-out ({held['evaluations']} evaluations, steps {held['first_step']}–"
                         f"{held['last_step']}): " + ", ".join(parts))
        if d.get("tools"):
            lines.append(_tool_text(d["tools"]))
        sampler = d.get("vllm_sampler")
        if sampler and "logp_difference_mean" in sampler:
            logp = sampler["logp_difference_mean"]
            lines.append(f"  vLLM sampler vs policy: log-prob difference per token {logp['first']} → {logp['last']}"
                         + (f", importance ratio min {sampler['importance_ratio_min']['worst']}"
                            if "importance_ratio_min" in sampler else ""))
        audit = d.get("review_audit")
        if audit:
            lines.append(f"  review audit: {audit['line']}")
        if self.healthy:
            lines.append("  healthy: no failure mode detected; keep the base recipe")
        for f in self.findings:
            lines.append(f"  [{f.severity}] {f.title}")
            lines += [f"      {e}" for e in f.evidence]
            lines.append(f"      → {f.recommendation}")
        if d.get("recommended_variant"):
            lines.append(f"  recommended variant: {d['recommended_variant']}")
        if d.get("recommended_dynamic_sampling"):
            lines.append("  recommended brief change: "
                         f"{snippet({'dynamic_sampling': d['recommended_dynamic_sampling']})} (--apply NEW_BRIEF.yaml "
                         "writes it)")
        lines.append(f"  written: {self.out_dir / 'diagnosis.md'}, diagnosis.json, plots")
        if d.get("applied_brief"):
            lines.append(f"  wrote the new brief {d['applied_brief']} (--apply); next: grpo-rlvr validate "
                         f"{d['applied_brief']}, then inspect, review and gate it as a new run")
        if Path(d["run"]).is_dir():   # the run's page: what trained, its review, these findings on its curves
            lines.append(f"  {report_line(Path(d['run']))}")
        return "\n".join(lines)


def run_detectors(logs: RunLogs) -> list[Finding]:
    found = [f for f in (d(logs) for d in LOG_CHECKS + DETECTORS) if f is not None]
    return sorted(found, key=lambda f: _SEVERITY[f.severity])


def recommended_variant(findings: list[Finding]) -> str | None:
    """The variant of the most severe finding that calls for one, unless the run had no learning signal at all
    (a critical no_learning_signal): then the fix is the data or the learning rate, the base recipe has not yet
    shown a failure a variant answers, and the other findings are its symptoms (a broken policy truncates); nor
    from a log too short to judge (its trend checks did not run)."""
    if any(f.id == "no_learning_signal" and f.severity == "critical" for f in findings):
        return None
    if any(f.id in ("too_few_records", "no_records") for f in findings):   # too little to judge: no variant either
        return None
    return next((f.variant for f in findings if f.variant), None)


def recommended_dynamic_sampling(findings: list[Finding]) -> dict | None:
    """The ``dynamic_sampling`` section the most severe finding that asks for one recommends (no_learning_signal
    on a run without it, refill_exhausted on a run with it), or None."""
    return next((dict(f.brief_change["dynamic_sampling"]) for f in findings if "dynamic_sampling" in f.brief_change),
                None)


def diagnose(target, apply_to=None, out_dir=None, roles: dict[str, str] | list[str] | None = None) -> DiagnosisResult:
    """Diagnose the run at ``target``: a grpo-rlvr run folder, a TRL output_dir (trainer_state.json there or in
    its newest checkpoint-*/, completions/*.parquet), or a trainer_state.json / metrics.jsonl file.

    Writes diagnosis.json, diagnosis.md and plots into ``out_dir``; by default into the folder holding the
    run's logs (RUN/output for a grpo-rlvr run, the output_dir itself for a TRL run) when ``target`` is a folder,
    and into the current folder when it is a lone file. ``roles`` states reward roles ({name: role}, or
    ``NAME=ROLE`` strings); the others are inferred. With ``apply_to``, writes a new brief with the recommended
    variant and a reference to this diagnosis, and the recommended ``dynamic_sampling`` section.
    Raises:
        InputFileError: no logs found, or a damaged log. ConfigError: a bad --role; --apply without a
        recommended variant or dynamic sampling.
    """
    stated = parse_stated(roles) if isinstance(roles, list) else dict(roles or {})
    bad = [f"--role {n}={r}: unknown role; use one of {', '.join(ROLES)}" for n, r in stated.items() if r not in ROLES]
    if bad:
        raise ConfigError(bad)
    if apply_to:
        refuse_target(apply_to, "--apply")   # before anything is read: the new brief never lands on a review
    if out_dir:
        refuse_target(out_dir, "--out")
    logs = load_run_logs(target)
    logs.roles = infer_roles(logs, stated)
    findings = run_detectors(logs)
    if out_dir:
        out = Path(out_dir)
    elif Path(target).is_dir():
        out = Path(target) / "output" if (Path(target) / "output").is_dir() else Path(target)
    else:
        out = Path.cwd()
    out.mkdir(parents=True, exist_ok=True)
    rewards = logs.series("reward")
    variant, sampling = recommended_variant(findings), recommended_dynamic_sampling(findings)
    smoke = _unreviewed_smoke_test(logs.source.parent if logs.source.is_file() else logs.source)
    if smoke is not None:  # nothing a smoke test logs is evidence about training; it recommends nothing
        findings, variant, sampling = [smoke, *findings], None, None
    elif (unproven := _unproven_run(Path(target), logs.source)) is not None:  # first: a run that skipped the guard
        findings = [unproven, *findings]   # its logs still say how it trained; any brief change is gated again
    if (two := _two_trainers(Path(target), logs.source)) is not None:   # its logs mix two trainings
        findings, variant, sampling = [two, *findings], None, None
    data = {
        "run": str(Path(target)), "log": str(logs.source), "records": len(logs.history),
        "first_step": logs.history.steps[0] if len(logs.history) else None,
        "last_step": logs.history.steps[-1] if len(logs.history) else None,
        "notes": logs.notes,
        "roles": {n: {"role": r.role, "how": r.how} for n, r in logs.roles.items()},
        "reward_start": round(rewards[0][1], 4) if rewards else None,
        "reward_end": round(rewards[-1][1], 4) if rewards else None,
        "held_out": _held_out_summary(logs),
        "vllm_sampler": _sampler_summary(logs),
        "tools": _tool_summary(logs),
        "review_audit": _audit_summary(logs),
        "healthy": not findings,
        "findings": [asdict(f) for f in findings],
        "recommended_variant": variant,
        "recommended_dynamic_sampling": sampling,
    }
    plots = write_plots(logs, out) if len(logs.history) else []
    data["plots"] = plots
    write_json_atomic(out / "diagnosis.json", data)
    write_markdown(out, data, plots)
    if apply_to:
        _apply(logs, variant, sampling, out / "diagnosis.json", Path(apply_to))
        data["applied_brief"] = str(apply_to)
    return DiagnosisResult(out, data, findings)


def _unreviewed_smoke_test(folder: Path) -> Finding | None:
    """A critical finding when the logs come from ``--unreviewed-smoke-test`` (see grpo_rlvr/run/guard.py; the marker: records/run_outputs.py)."""
    from grpo_rlvr.records.run_outputs import SMOKE_MARKER, is_smoke_output

    if not is_smoke_output(folder):
        return None
    return Finding("unreviewed_smoke_test", "UNREVIEWED SMOKE TEST: the inspection gate was skipped", "critical",
                   [f"{folder / SMOKE_MARKER} is present: these logs come from a capped smoke test that saved no "
                    "model"],
                   "this is not a training run: pass the gate (inspect, the person's review, gate) and train again")


def _unproven_run(target: Path, source: Path) -> Finding | None:
    """A critical finding when a grpo-rlvr run's outputs are not proven to come from trainings that passed the
    run check of the rendered train.py (``records/provenance.py``): no valid start, or a checkpoint or final
    model without a valid proof. Logs that are not a grpo-rlvr run's (no ``brief.lock.json`` above them) pass."""
    from grpo_rlvr.records.output_audit import audit

    output = _run_output(target, source)
    problems = audit(output) if output is not None else []
    if not problems:
        return None
    return Finding("unproven_run", "NOT PROVEN TO BE A GATED RUN: its outputs lack a valid start or proof", "critical",
                   problems, "do not count or deploy this run's model: train it again with `grpo-rlvr train RUN` "
                   "(a fresh run folder from `grpo-rlvr render BRIEF --out NEW_RUN`), behind a passing gate")


def _run_output(target: Path, source: Path) -> Path | None:
    """The output folder of the grpo-rlvr run the logs are from (None for logs that are not a run's)."""
    folders = [target / "output", target, source if source.is_dir() else source.parent]
    return next((f for f in folders if f.name == "output" and f.is_dir() and (f.parent / "brief.lock.json").is_file()),
                None)


def _two_trainers(target: Path, source: Path) -> Finding | None:
    """A critical finding when two trainers wrote the run at once (``records/one_trainer.py``), naming each start."""
    from grpo_rlvr.records.one_trainer import overlapping_trainers

    output = _run_output(target, source)
    evidence = overlapping_trainers(output) if output is not None else []
    if not evidence:
        return None
    return Finding("two_trainers", "TWO TRAINERS wrote this run at once: its logs and checkpoints mix two trainings",
                   "critical", evidence,
                   "stop every trainer of this run but one (the pids above; `grpo-rlvr train` refuses a second while "
                   "one holds the run's lock); the metrics and checkpoints written while both ran mix two runs: "
                   "start a fresh run (`grpo-rlvr render BRIEF --out NEW_RUN`, then `grpo-rlvr train NEW_RUN`)")


TOOL_METRICS = {"calls_per_rollout": "tools/call_frequency", "failing_calls": "tools/failure_frequency",
                "unscored_rollouts": "tools/unavailable"}


def _tool_summary(logs: RunLogs) -> dict | None:
    """A run that gave the model tools: the tools it offered (its lock) and TRL's tool metrics, first → last."""
    from grpo_rlvr.diagnosis.detectors import _tool_run

    if not _tool_run(logs):
        return None
    offered = ((logs.brief_lock or {}).get("resolved") or {}).get("tools")
    out: dict = {"offered": offered if isinstance(offered, dict) else None}
    for name, key in TOOL_METRICS.items():
        s = logs.series(key)
        out[name] = {"first": round(s[0][1], 4), "last": round(s[-1][1], 4)} if s else None
    return out


def _tool_text(tools: dict) -> str:
    """The summary's tools line: what was offered, and the calls a rollout and the failing share, first → last."""
    o = tools.get("offered") or {}
    names = [*o.get("functions", ()), *([o["environment"]] if o.get("environment") else []),
             *(["python"] if o.get("python") is not None else [])]
    parts = [f"{label} {v['first']} → {v['last']}" for label, v in (
        ("calls a rollout", tools.get("calls_per_rollout")), ("share of calls that failed", tools.get("failing_calls")),
        ("rollouts unscored (a tool unavailable)", tools.get("unscored_rollouts"))) if v]
    return (f"  tools ({', '.join(names) or 'offered'}): "
            + ("; ".join(parts) if parts else "TRL logged no tool metrics (tools/call_frequency)"))


def _audit_summary(logs: RunLogs) -> dict | None:
    """The review audit in one line (its findings, when it diverged, are the ``review_audit`` log check's)."""
    a = logs.review_audit
    if not isinstance(a, dict):
        return None
    checks = a.get("checks") or []
    settings = a.get("settings") or {}
    loosened = " (loosened by the brief: " + (f"stop_on {settings.get('stop_on')}, alpha {settings.get('alpha')}"
                                              ) + ")" if settings.get("loosened") else ""
    if not checks:
        line = f"{a.get('status')}: no generation batch compared yet{loosened}"
    else:
        last = checks[-1]
        line = (f"{a.get('status')} at step {last.get('step')}: {last.get('rollouts')} training rollouts against the "
                f"{(a.get('reference') or {}).get('rollouts')} the inspection sampled, {len(last.get('tests') or ())} "
                f"comparisons at alpha {last.get('alpha')}{loosened}")
    return {"status": a.get("status"), "checks": len(checks), "loosened": bool(settings.get("loosened")),
            "line": line}


def _held_out_summary(logs: RunLogs) -> dict | None:
    """Each reward's held-out mean at the first and the last evaluation, when the run evaluated."""
    ev = logs.eval_history
    if not len(ev):
        return None
    out = {"evaluations": len(ev), "first_step": ev.steps[0], "last_step": ev.steps[-1]}
    for key in sorted({k for k in ev.keys() if k.startswith("eval_rewards/") and k.endswith("/mean")}
                      | {"eval_reward"}):
        s = logs.eval_series(key.removeprefix("eval_"))
        if s:
            out[key.removeprefix("eval_")] = {"first": round(s[0][1], 4), "last": round(s[-1][1], 4)}
    return out


def _sampler_summary(logs: RunLogs) -> dict | None:
    """TRL's vLLM sampler metrics, when the run generated with vLLM: how far the engine's log-probabilities were
    from the trained policy's (per token) and the importance-sampling ratios that corrected for it."""
    keys = {"logp_difference_mean": "sampling/sampling_logp_difference/mean",
            "logp_difference_max": "sampling/sampling_logp_difference/max",
            "importance_ratio_min": "sampling/importance_sampling_ratio/min",
            "importance_ratio_mean": "sampling/importance_sampling_ratio/mean",
            "importance_ratio_max": "sampling/importance_sampling_ratio/max"}
    out = {}
    for name, key in keys.items():
        s = logs.series(key)
        if s:
            out[name] = {"first": round(s[0][1], 5), "last": round(s[-1][1], 5),
                         "worst": round(min(v for _, v in s) if name.endswith("_min") else max(v for _, v in s), 5)}
    return out or None


def _apply(logs: RunLogs, variant: str | None, sampling: dict | None, diagnosis: Path, new_brief: Path) -> None:
    if variant is None and sampling is None:
        raise ConfigError("--apply: the diagnosis recommends no variant and no dynamic sampling (the run looks "
                          "healthy or its findings call for a data or config change); nothing to apply")
    lock = logs.brief_lock
    if not lock:
        raise ConfigError(f"--apply: no brief.lock.json next to {logs.source}; diagnose a run folder written by "
                          "`grpo-rlvr render`")
    brief = dict(lock["resolved"])
    if variant is not None:
        brief["variant"] = {"name": variant, "diagnosis": str(diagnosis.resolve())}
    if sampling is not None:  # the brief's own keys (tolerance) stay; the diagnosis sets max_rounds
        brief["dynamic_sampling"] = {**(brief.get("dynamic_sampling") or {}), **sampling}
    src_dir = Path(lock["brief"]).parent
    # Keep relative paths working from the new brief's folder: anything that names a file or folder beside the
    # old brief (model, data, a reward's .py file or rubric) becomes absolute. The new run gets its own output
    # folder so it cannot overwrite the run it was diagnosed from.
    def absolute(val):
        if isinstance(val, str) and val and not Path(val).expanduser().is_absolute() and (src_dir / val).exists():
            return str((src_dir / val).resolve())
        return val

    for section, key in (("model", "name_or_path"), ("dataset", "path"), ("dataset", "eval_path")):
        if (brief.get(section) or {}).get(key):
            brief[section] = {**brief[section], key: absolute(brief[section][key])}
    brief["rewards"] = [{**r, "name": absolute(r["name"]),
                         **({"params": {k: absolute(v) for k, v in r["params"].items()}} if r.get("params") else {})}
                        for r in brief.get("rewards") or []]
    out_dir = Path(str(brief.get("output_dir") or f"./runs/{Path(lock['brief']).stem}")).expanduser()
    suffix = variant or "dynamic-sampling"
    brief["output_dir"] = str((out_dir if out_dir.is_absolute() else src_dir / out_dir).resolve()) + f"-{suffix}"
    write_text_atomic(new_brief, f"# Written by grpo-rlvr diagnose --apply from {lock['brief']}\n"
                      + yaml.safe_dump(brief, sort_keys=False))
