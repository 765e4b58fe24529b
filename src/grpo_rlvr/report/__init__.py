"""``grpo-rlvr report RUN``: the run on one page a person can trust. What trained, by identity (model, data,
rewards, tools, settings) and whether the run is proven to be the one its gate let start; the review it was gated
on and what that review measured (each reward's error rate with a confidence interval, the disagreements); the live
review audit; what happened (the watchdog's and diagnose's findings, each with its fix, and a death); the curves as
pictures with those findings marked; and a few of training's own rollouts at the start, middle and end.

Written as ``output/report.html`` (one self-contained page: images inlined as data URIs, no script, no server, no
external asset; reads on a laptop and in print) and ``output/report.json`` (the same facts, without the pictures).
The rendered ``train.py`` writes it when training ends, is stopped by the watchdog, or dies (``report.at_end``); the
command writes it for a run in progress, or one trained before reports existed, with what its files say. It reads
files only, and never changes what it reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.report_location import REPORT_HTML, REPORT_JSON, report_line, report_path

__all__ = ["REPORT_HTML", "REPORT_JSON", "ReportResult", "report_line", "report_path", "write_report"]


@dataclass
class ReportResult:
    html: Path
    json: Path
    facts: dict
    seconds: float       # wall time to make both files
    cpu_seconds: float   # this process's CPU time for it

    @property
    def bytes(self) -> int:
        return self.html.stat().st_size

    def to_dict(self) -> dict:
        return {"run": self.facts["run"], "html": str(self.html), "json": str(self.json),
                "state": self.facts["state"]["state"], "findings": len(self.facts["findings"]),
                "html_bytes": self.bytes, "seconds": round(self.seconds, 3), "cpu_seconds": round(self.cpu_seconds, 3)}

    def format(self) -> str:
        f = self.facts
        lines = [f"Report of {f['run']}: {f['state']['text']}",
                 f"  {sum(1 for x in f['findings'] if x['present'])} finding(s) at the end, "
                 f"{sum(1 for x in f['findings'] if not x['present'])} cleared during training; review: "
                 f"{_review_line(f.get('review'))}",
                 f"  live review audit: {f['audit']['sentence'] if f['audit']['recorded'] else f['audit']['note']}",
                 f"  written: {self.html} ({self.bytes / 1024:.0f} KiB, made in {self.seconds:.2f} s) and "
                 f"{self.json.name}; open it in a browser"]
        return "\n".join(lines)


def _review_line(review: dict | None) -> str:
    if not review:
        return "none recorded"
    if review.get("absent"):
        return f"none (no inspection at {review['inspection']})"
    if review.get("unreadable"):
        return f"unreadable ({review['unreadable']})"
    if not review["reviewed"]:
        return f"not reviewed (0 of {review['samples']} samples read)"
    rate = review["error_rates"]["any"]
    return (f"{review['reviewed']} of {review['samples']} samples read by {', '.join(review['reviewers']) or 'nobody'}"
            f"; the reward was wrong on {rate['wrong']} (95% interval {100 * rate['low']:.1f}–"
            f"{100 * rate['high']:.1f}%)")


def write_report(target, out=None) -> ReportResult:
    """Write ``report.html`` and ``report.json`` for the run at ``target`` (its run folder or output folder; a plain
    TRL output folder gets the curves, findings and rollouts) into ``out`` (default: the run's output folder).

    Raises:
        InputFileError: ``target`` is not a run. ConfigError: ``out`` is a place no command writes (a review, a
            run's records, a trust anchor).
    """
    from grpo_rlvr.files import write_json_atomic, write_text_atomic
    from grpo_rlvr.protected_targets import refuse_target
    from grpo_rlvr.report.facts import gather
    from grpo_rlvr.report.page import render_page
    from grpo_rlvr.report.run_files import find_run

    t0, c0 = time.perf_counter(), time.process_time()
    if out is not None:
        refuse_target(out, "--out")
    files = find_run(target)
    facts, logs, roles = gather(files)
    from grpo_rlvr.report.curves import curves

    panels = curves(logs, roles, facts["findings"], facts["crash"])
    facts["curves"] = [{k: p[k] for k in ("key", "title", "findings", "lines")} for p in panels]
    facts["made_in_s"] = round(time.perf_counter() - t0, 2)   # as the page says it: the writes are not in it
    html = render_page(facts, panels)
    dest = Path(out) if out is not None else files.output
    write_json_atomic(dest / REPORT_JSON, facts)
    write_text_atomic(dest / REPORT_HTML, html)
    return ReportResult(dest / REPORT_HTML, dest / REPORT_JSON, facts, time.perf_counter() - t0,
                        time.process_time() - c0)
