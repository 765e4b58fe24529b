"""``report.html``: the inspection as a page a person can read (rendered from a Jinja2 template file)."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.files import write_text_atomic
from grpo_rlvr.inspection.artifact import REPORT
from grpo_rlvr.rollout.trajectory import turns
from grpo_rlvr.templating import environment


def render_report(directory: Path, manifest: dict, samples: list[dict], final_dir: Path | None = None) -> Path:
    """Write ``directory/report.html``. ``final_dir`` is where the folder will live when ``directory`` is a
    temporary one being built (the page names it in the command to run)."""
    env = environment(autoescape=True)
    view = [{**s, "prompt_turns": turns(s["prompt"]), "completion_turns": turns(s["completion"])} for s in samples]
    html = env.get_template("report.html.j2").render(
        manifest=manifest, samples=view, dir_name=str(final_dir or directory),
        reviewed=sum(1 for s in samples if s.get("verdict")),
        disagreements=sum(1 for s in samples if (s.get("verdict") or {}).get("verdict") == "disagree"))
    write_text_atomic(Path(directory) / REPORT, html)
    return Path(directory) / REPORT
