"""Where a run's report is, and the line ``watch`` and ``diagnose`` print about it. On the ground floor: it imports
nothing of grpo_rlvr, so the rooms that name the report (watch, diagnosis) neither load what makes it nor import
the report's room, which reads diagnose's findings."""

from __future__ import annotations

from pathlib import Path

REPORT_HTML, REPORT_JSON = "report.html", "report.json"


def report_path(output: Path) -> Path:
    """Where a run's report is (``OUTPUT/report.html``), whether or not it was written yet."""
    return Path(output) / REPORT_HTML


def report_line(run: Path, output: Path | None = None) -> str:
    """``report: PATH`` when the report is there, else the command that writes it. ``output``: the run's output
    folder (default: ``RUN/output`` when there is one, else ``RUN`` itself)."""
    if output is None:
        output = Path(run) / "output" if (Path(run) / "output").is_dir() else Path(run)
    path = report_path(output)
    if path.is_file():
        return f"report: {path}"
    return f"report: none yet (`grpo-rlvr report {run}` writes {path}; training writes it when it ends)"
