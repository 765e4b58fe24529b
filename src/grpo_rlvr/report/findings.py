"""What happened to the run, as numbered findings, each with its evidence and its fix, and the run's state.

Two sources, merged by finding id: the watchdog's events during training (``output/watch.jsonl``: each finding from
the step it appeared to the step it cleared, and the stop, which another check such as the live review audit may
write too), and ``diagnose``'s detectors run now on the whole log (which also name a death from
``output/crash.json``). A finding both found keeps the watchdog's steps and diagnose's judgement of the whole run.
The state says how training ended: died (a crash record), stopped by the watchdog, finished (TRL's summary
record), or still going (or ended without a word: none of those).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from grpo_rlvr.records.crash_record import last_record
from grpo_rlvr.records.watch_log import WATCH_LOG, JsonlTail

SEVERITY = {"critical": 0, "warning": 1, "info": 2}
AUDIT_ID = "review_audit"   # the live review audit's stop (and would-stop) in watch.jsonl; every other is the watchdog's


def stopper(event: dict) -> str:
    """Who wrote a stop (or would-stop) event: the review audit, or the watchdog."""
    return "review audit" if event.get("id") == AUDIT_ID else "watchdog"


def _new(e: dict, source: str) -> dict:
    return {"id": str(e.get("id")), "title": str(e.get("title") or e.get("id")), "severity": e.get("severity") or
            "warning", "evidence": [str(x) for x in e.get("evidence") or []],
            "recommendation": str(e.get("recommendation") or ""), "variant": e.get("variant"),
            "brief_change": e.get("brief_change") if isinstance(e.get("brief_change"), dict) else {},
            "sources": [source], "spans": [], "stop_step": None, "run_wide": False}


def watchdog_log(output: Path) -> dict:
    """The watchdog's record of the run: its findings (``spans``: [first step, step it cleared or None]), its stop
    (or would-stop) event and its cost."""
    found: dict[str, dict] = {}
    open_: set[str] = set()
    stop = cost = None
    for e in JsonlTail(Path(output) / WATCH_LOG).read():
        if not isinstance(e, dict):
            continue
        kind, fid, step = e.get("event"), str(e.get("id")), e.get("step")
        if kind == "finding":
            f = found.setdefault(fid, _new(e, "watchdog"))
            if SEVERITY.get(e.get("severity"), 2) <= SEVERITY.get(f["severity"], 2):
                f.update({k: v for k, v in _new(e, "watchdog").items() if k in ("title", "severity", "evidence",
                                                                                 "recommendation", "variant",
                                                                                 "brief_change")})
            if fid not in open_:
                f["spans"].append([step, None])
                open_.add(fid)
        elif kind == "cleared" and fid in open_:
            found[fid]["spans"][-1][1] = step
            open_.discard(fid)
        elif kind in ("stop", "would_stop"):
            stop = e
        elif kind == "cost":
            cost = e
    return {"findings": found, "stop": stop, "cost": cost}


def merged(watch: dict, diagnosed: list) -> list[dict]:
    """The watchdog's findings and diagnose's (``Finding`` objects), one entry per id, numbered from 1: the stop's
    finding first, then those present when training ended, then those that cleared; each by severity and the step
    it first appeared."""
    by_id = {k: dict(v) for k, v in watch["findings"].items()}
    stop = watch["stop"]
    if stop is not None:
        f = by_id.setdefault(str(stop.get("id")), _new(stop, stopper(stop)))
        f["stop_step"] = stop.get("step")
        f["stopped"] = stop.get("event") == "stop"
        f["checkpoint"] = stop.get("checkpoint")
    for d in diagnosed:
        d = asdict(d) if not isinstance(d, dict) else d
        f = by_id.get(d["id"])
        if f is None:
            by_id[d["id"]] = f = _new(d, "diagnose")
        else:   # diagnose judged the whole run: its words are the ones that stand now
            f["sources"].append("diagnose")
            f.update({k: d[k] for k in ("title", "severity", "evidence", "recommendation") if d.get(k)})
            f["variant"] = d.get("variant") or f["variant"]
            f["brief_change"] = d.get("brief_change") or f["brief_change"]
        f["run_wide"] = True

    for f in by_id.values():   # present when training ended: found on the whole log, the stop, or never cleared
        f["present"] = f["run_wide"] or f["stop_step"] is not None or any(end is None for _, end in f["spans"])

    def order(f: dict):
        first = f["spans"][0][0] if f["spans"] else float("inf")
        return (f["stop_step"] is None, not f["present"], SEVERITY.get(f["severity"], 2),
                first if first is not None else 0)

    out = sorted(by_id.values(), key=order)
    for n, f in enumerate(out, 1):
        f["number"] = n
    return out


def summary_record(output: Path) -> dict | None:
    """TRL's summary record (``train_runtime``) at the end of ``metrics.jsonl``: training ended."""
    return last_record(output, lambda r: "train_runtime" in r)


def run_state(crash: dict | None, stop: dict | None, summary: dict | None, last_step, smoke: bool) -> dict:
    """How the run stands: ``state`` (died, stopped, finished, running, not started) and a sentence."""
    if crash is not None:
        what = f"{crash['exception']}: {crash.get('message')}" if crash.get("exception") else crash.get("message")
        step = crash.get("last_step")
        when = f"after step {step}" if step is not None else "before its first logged step"
        state = {"state": "died", "text": f"died {when}: {str(what)[:300]}"}
    elif stop is not None and stop.get("event") == "stop":
        state = {"state": "stopped", "text": f"stopped by the {stopper(stop)} at step {stop.get('step')}"
                 + (", before the optimizer stepped" if stop.get("id") == AUDIT_ID else "") + f": {stop.get('title')}"
                 + (f"; checkpoint {stop['checkpoint']}" if stop.get("checkpoint") else "")}
    elif summary is not None:
        # TRL's train_runtime times its training loop alone; `grpo-rlvr train` says the launch's wall time, loading
        # included ("after 24s" beside "in 4 s" read as a contradiction): each is named for what it counts
        runtime = summary.get("train_runtime")
        state = {"state": "finished", "text": f"finished at step {summary.get('step')}"
                 + (f"; training loop {runtime:.0f} s (TRL's train_runtime: loading the model and data not counted)"
                    if isinstance(runtime, (int, float)) else "")}
    elif last_step is not None:
        state = {"state": "running", "text": f"in progress at step {last_step} (or ended without a summary, a stop "
                 "or a crash record)"}
    else:
        state = {"state": "not started", "text": "nothing logged yet"}
    if smoke:
        state["text"] = ("UNREVIEWED SMOKE TEST (the gate was skipped; nothing here is a trained model): "
                         + state["text"])
    return state
