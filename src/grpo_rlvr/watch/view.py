"""``grpo-rlvr watch RUN``: a run seen from another terminal while it trains: progress (step / max_steps, ETA),
the rewards by role, the latest held-out evaluation, and the watchdog's findings so far (``output/watch.jsonl``,
written by ``diagnosis/watchdog.py`` inside training). Refreshes as the files grow (each read takes only the lines
added since the last one) and returns when the run ends: its summary record (``train_runtime``) is logged, the
watchdog stopped it, it died (``output/crash.json``: the exception, where, the fix; exit 1), it was stopped with
Ctrl-C (the same file: the checkpoint saved and the resume command; exit 1), or no trainer holds the run's lock
(``records/one_trainer``) though it never ended (killed without a record; exit 1). Reads files only; imports no
training library.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from grpo_rlvr.errors import InputFileError
from grpo_rlvr.records.crash_record import CRASH, crash_lines, read_crash
from grpo_rlvr.records.one_trainer import LOCK_NAME, holder
from grpo_rlvr.records.unscorable import TALLY, read_tally
from grpo_rlvr.records.unscorable import summary as unscorable_summary
from grpo_rlvr.records.watch_log import WATCH_LOG, JsonlTail, read_plan
from grpo_rlvr.report_location import report_line

METRICS = "metrics.jsonl"


@dataclass
class RunView:
    """What the files of a run say so far."""

    run: Path
    output: Path
    max_steps: int | None = None
    roles: dict = field(default_factory=dict)          # reward name → role (from the brief lock, else its name)
    records: int = 0
    first: dict | None = None                          # the first training record (the base model's behaviour)
    last: dict | None = None                           # the latest training record
    held_out: dict | None = None                       # the latest evaluation record
    findings: list = field(default_factory=list)       # the watchdog's findings present now (latest event of each)
    cleared: list = field(default_factory=list)        # its "cleared" events: findings that went away
    stop: dict | None = None                           # its stop (or would_stop) event
    summary: dict | None = None                        # the run's summary record: training ended
    started: float | None = None                       # when the first record arrived (for the ETA)
    started_step: int | None = None
    unscorable: dict | None = None                     # output/unscorable.json: samples left unscored, by row
    crash: dict | None = None                          # output/crash.json: the run died or was stopped (Ctrl-C)
    gone: bool = False                                 # no trainer holds the run's lock, and it never ended
    audit: dict | None = None                          # the review audit's latest check (its "audit" event)
    audit_stop: dict | None = None                     # its stop (or would_stop) event

    @property
    def ended(self) -> bool:
        return self.summary is not None or self.crash is not None or self.gone or \
            (self.stop is not None and self.stop.get("event") == "stop")

    def to_dict(self) -> dict:
        last = self.last or {}
        return {"run": str(self.run), "step": last.get("step"), "max_steps": self.max_steps, "records": self.records,
                "reward": last.get("reward"), "reward_start": (self.first or {}).get("reward"),
                "rewards": self.rewards(), "held_out": self.held_out_rewards(), "eta_s": self.eta_s(),
                "findings": [{k: f.get(k) for k in ("step", "id", "severity", "title", "recommendation")}
                             for f in self.findings],
                "cleared": [{k: c.get(k) for k in ("step", "id", "title")} for c in self.cleared],
                "stop": self.stop, "ended": self.ended, "gone": self.gone, "crash": None if self.crash is None else {
                    k: self.crash.get(k) for k in ("kind", "exception", "message", "signal", "at", "fix", "last_step",
                                                   "checkpoint", "resume")},
                "unscorable": None if not self.unscorable else {
                    k: self.unscorable.get(k) for k in ("seen", "unscorable", "held_out_unscorable", "rows")},
                "tools": self.tool_use(), "audit": self.audit, "audit_stop": self.audit_stop}

    def tool_use(self) -> dict | None:
        """The latest tool use, as TRL logs it (and the rollouts left unscored): None in a run without tools."""
        last = self.last or {}
        keys = {"calls_per_rollout": "tools/call_frequency", "failure_share": "tools/failure_frequency",
                "unscored_rollouts": "tools/unavailable", "truncated_share": "completions/clipped_ratio"}
        if "tools/call_frequency" not in last:
            return None
        return {name: last.get(key) for name, key in keys.items()}

    def rewards(self) -> dict:
        """name → {role, first, last} of each reward's mean."""
        out = {}
        for key, v in (self.last or {}).items():
            if key.startswith("rewards/") and key.endswith("/mean") and isinstance(v, (int, float)):
                name = key[len("rewards/"):-len("/mean")]
                out[name] = {"role": self.roles.get(name, "other"), "first": (self.first or {}).get(key), "last": v}
        return out

    def held_out_rewards(self) -> dict | None:
        if not self.held_out:
            return None
        return {"step": self.held_out.get("step"), "reward": self.held_out.get("eval_reward"),
                **{k[len("eval_rewards/"):-len("/mean")]: v for k, v in self.held_out.items()
                   if k.startswith("eval_rewards/") and k.endswith("/mean")}}

    def eta_s(self) -> float | None:
        """Seconds to max_steps: TRL's step_time (seconds a step) when logged, else the rate since watching."""
        step = (self.last or {}).get("step")
        if not (self.max_steps and isinstance(step, int)) or self.ended:
            return None
        step_time = (self.last or {}).get("step_time")
        if isinstance(step_time, (int, float)) and step_time > 0:
            return step_time * (self.max_steps - step)
        if not self.started or self.started_step is None:
            return None
        done = step - self.started_step
        return (time.monotonic() - self.started) / done * (self.max_steps - step) if done > 0 else None


def _num(v) -> str:
    return f"{v:.3f}" if isinstance(v, (int, float)) else "n/a"


def format_view(v: RunView) -> str:
    d = v.to_dict()
    if not v.records and v.crash is not None:
        lines = [f"{v.run}: no training record logged"]
    elif not v.records:
        lines = [f"{v.run}: no training record logged yet ({v.output / METRICS})"]
    else:
        eta = d["eta_s"]
        lines = [f"{v.run}: step {d['step']}/{d['max_steps'] or '?'}"
                 + (f" ({100 * d['step'] / d['max_steps']:.0f}%)" if d["max_steps"] else "")
                 + (f", ETA {eta:.0f}s" if eta is not None else "")
                 + f" | reward {_num(d['reward_start'])} → {_num(d['reward'])}"]
        for name, r in sorted(d["rewards"].items(), key=lambda x: (x[1]["role"], x[0])):
            lines.append(f"  {r['role']:<11} {name}: {_num(r['first'])} → {_num(r['last'])}")
    if d["tools"]:
        t = d["tools"]
        lines.append(f"  tools: {_num(t['calls_per_rollout'])} calls a rollout, {_num(t['failure_share'])} of them "
                     f"raised, {_num(t['unscored_rollouts'])} rollouts unscored (a tool failing on its own), "
                     f"{_num(t['truncated_share'])} cut by the completion budget")
    if d["held_out"]:
        h = d["held_out"]
        lines.append(f"  held-out at step {h['step']}: " + ", ".join(f"{k} {_num(x)}" for k, x in h.items()
                                                                    if k != "step"))
    if v.unscorable and (v.unscorable.get("unscorable") or v.unscorable.get("held_out_unscorable")):
        lines += [f"  {line}" for line in unscorable_summary(v.unscorable)]
    if v.findings:
        lines.append(f"  watchdog findings ({len(v.findings)}):")
        lines += [f"    step {f.get('step')}: [{f.get('severity')}] {f.get('title')}" for f in v.findings]
    elif v.records:
        lines.append("  watchdog: no finding now")
    lines += [f"    step {c.get('step')}: cleared: {c.get('title')}" for c in v.cleared
              if c.get("id") not in {f.get("id") for f in v.findings}]
    lines += audit_lines(v)
    if v.stop is not None and v.stop is not v.audit_stop:
        word = "STOPPED the run" if v.stop.get("event") == "stop" else "would stop the run (watch.stop_on: never)"
        lines.append(f"  watchdog {word} at step {v.stop.get('step')}: {v.stop.get('title')}; "
                     f"checkpoint {v.stop.get('checkpoint')}; next: grpo-rlvr diagnose {v.run}")
    if v.summary is not None:
        lines.append(f"  training ended at step {v.summary.get('step')} (its steps took "
                     f"{_num(v.summary.get('train_runtime'))} s, TRL's train_runtime: without start-up and model "
                     f"loading); next: grpo-rlvr diagnose {v.run}")
    elif v.crash is not None:
        lines += [f"  {line}" for line in crash_lines(v.crash)]
        if v.crash.get("kind") != "stopped":   # a stop's own line says how to resume
            lines.append(f"  next: grpo-rlvr diagnose {v.run}")
    elif v.gone:
        lines.append(f"  NO TRAINER is running this run (none holds {v.output.parent / LOCK_NAME}) and it never ended: "
                     "its trainer was killed without a record (SIGKILL, a lost machine); "
                     f"`grpo-rlvr train {v.output.parent} --resume` continues from its last checkpoint")
    lines.append(f"  {report_line(v.run, v.output)}")
    return "\n".join(lines)


def audit_lines(v: RunView) -> list[str]:
    """The review audit as watch shows it: its latest check, or what differed and what to do."""
    if v.audit_stop is not None:
        word = "STOPPED the run" if v.audit_stop.get("event") == "stop" else "would stop the run (audit.stop_on: never)"
        return ([f"  review audit {word} at step {v.audit_stop.get('step')}: {v.audit_stop.get('title')}"]
                + [f"    {e}" for e in v.audit_stop.get("evidence") or ()]
                + [f"    → {v.audit_stop.get('recommendation')}", f"    record: {v.output / 'review_audit.json'}"])
    if v.audit is not None:
        return [f"  review audit: {v.audit.get('verdict')} at step {v.audit.get('step')} "
                f"({v.audit.get('rollouts')} training rollouts against the review; "
                f"{'; '.join(v.audit.get('summary') or ())})"]
    return []


class Watcher:
    """Reads a run's files as they grow into a ``RunView``."""

    def __init__(self, run):
        run = Path(run)
        if not run.exists():
            raise InputFileError(f"{run}: not found; pass the run folder `grpo-rlvr render` wrote (or its output "
                                 "folder)")
        if not run.is_dir():
            raise InputFileError(f"{run}: not a folder; pass the run folder `grpo-rlvr render` wrote")
        output = run / "output" if (run / "output").is_dir() or (run / "brief.lock.json").is_file() else run
        lock = _read_json(run / "brief.lock.json") or _read_json(output.parent / "brief.lock.json")
        if lock is None and not (output / METRICS).exists() and not (run / "train.py").is_file():
            raise InputFileError(f"{run}: neither a run folder (no brief.lock.json) nor an output folder (no "
                                 f"{METRICS}); pass the folder `grpo-rlvr render` wrote")
        max_steps = ((lock or {}).get("grpo_config") or {}).get("max_steps")
        self.view = RunView(run, output, max_steps if isinstance(max_steps, int) and max_steps > 0 else None)
        self.lock = lock
        self.metrics, self.watch = JsonlTail(output / METRICS), JsonlTail(output / WATCH_LOG)
        self._tally_mtime: float | None = None

    def poll(self) -> bool:
        """Read what was added; True when something changed."""
        v, changed = self.view, False
        planned = read_plan(v.output)   # the trainer's own max_steps (train --max-steps included), when it started
        if planned is not None and planned != v.max_steps:
            v.max_steps, changed = planned, True
        for r in self.metrics.read():
            if not isinstance(r, dict) or not isinstance(r.get("step"), int):
                continue
            changed = True
            if "train_runtime" in r:
                v.summary = r
            elif "reward" in r or "loss" in r:
                v.records += 1
                v.first = v.first or r
                v.last = r
                self._roles(r)
            elif "eval_reward" in r:
                v.held_out = r
        if v.last is not None and v.started is None:   # the rate is measured from here (when no step_time)
            v.started, v.started_step = time.monotonic(), v.last["step"]
        for e in self.watch.read():
            if not isinstance(e, dict):
                continue
            changed = True
            if e.get("event") == "finding":
                v.findings = [f for f in v.findings if f.get("id") != e.get("id")] + [e]
            elif e.get("event") == "cleared":
                v.findings = [f for f in v.findings if f.get("id") != e.get("id")]
                v.cleared = [c for c in v.cleared if c.get("id") != e.get("id")] + [e]
            elif e.get("event") == "audit":
                v.audit = e
            elif e.get("event") in ("stop", "would_stop"):
                if e.get("id") == "review_audit":
                    v.audit_stop = e
                    if e.get("event") == "would_stop":
                        continue
                v.stop = e
        return self._read_crash() | self._read_tally() | self._read_lock() or changed

    def _read_lock(self) -> bool:
        """A run whose trainer started (its lock file is there, and its logs) but that no trainer holds now, with no
        end recorded: gone. (A trainer writes its summary, crash or stop record before it lets go of the lock.)"""
        run = self.view.output.parent
        if self.view.ended or not (run / LOCK_NAME).is_file() or not (self.view.output / METRICS).is_file():
            return False
        self.view.gone = holder(run) is None
        return self.view.gone

    def _read_crash(self) -> bool:
        if self.view.crash is None and ((self.view.output / CRASH).is_file()
                                        or any(self.view.output.glob("crash-rank*.json"))):
            self.view.crash = read_crash(self.view.output)
            return self.view.crash is not None
        return False

    def _read_tally(self) -> bool:
        """Re-read output/unscorable.json when it changed (rank 0 rewrites it after a generation batch)."""
        try:
            mtime = (self.view.output / TALLY).stat().st_mtime
        except OSError:
            return False
        if mtime == self._tally_mtime:
            return False
        self._tally_mtime = mtime
        self.view.unscorable = read_tally(self.view.output)
        return True

    def _roles(self, record: dict) -> None:
        from grpo_rlvr.diagnosis.roles import _lock_roles, role_from_name

        names = [k[len("rewards/"):-len("/mean")] for k in record if k.startswith("rewards/") and k.endswith("/mean")]
        new = [n for n in names if n not in self.view.roles]
        if new:
            found = _lock_roles(self.lock, new)
            self.view.roles.update({n: found.get(n) or role_from_name(n) or "other" for n in new})


def _read_json(p: Path) -> dict | None:
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def watch(run, once: bool = False, as_json: bool = False, interval: float = 2.0, out=None,
          timeout: float | None = None) -> int:
    """Print frames until the run ends (or once). Returns 0 when training ended (or, with ``once``, is going
    on), 1 when the watchdog stopped it, it died or was stopped (``output/crash.json``), or no trainer holds it and
    it never ended. On a terminal each frame replaces the last; otherwise (and with ``as_json``, one JSON object a
    line) a frame is printed when something changed. ``timeout``: give up after this many seconds (exit 1, saying
    so)."""
    import sys

    out = out or sys.stdout
    w = Watcher(run)
    tty = not as_json and out.isatty()
    t0 = time.monotonic()
    first = True
    while True:
        changed = w.poll()
        if changed or first or once:
            if as_json:
                out.write(json.dumps(w.view.to_dict(), default=str) + "\n")
            else:
                out.write(("\x1b[H\x1b[2J" if tty else ("" if first else "\n")) + format_view(w.view) + "\n")
            out.flush()
            first = False
        failed = w.view.crash is not None or w.view.gone or (w.view.stop or {}).get("event") == "stop"
        if once or w.view.ended:
            return 1 if failed else 0
        if timeout is not None and time.monotonic() - t0 > timeout:
            print(f"watch: --timeout {timeout:g} s passed before the run ended; it has not ended (nothing was "
                  "stopped): watch it again, or with a longer --timeout", file=sys.stderr)
            return 1
        time.sleep(interval)
