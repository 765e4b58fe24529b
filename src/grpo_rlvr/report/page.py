"""The report as one HTML page (``templates/run_report.html.j2``): every value escaped (model output is shown, never
run), the pictures inlined, no script and no external asset, with a print style sheet."""

from __future__ import annotations

import json

from grpo_rlvr.templating import environment


def _num(v, digits: int = 3) -> str:
    if isinstance(v, bool) or v is None:
        return "n/a" if v is None else str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1e-3 and v else f"{v:.{digits}f}".rstrip("0").rstrip(".") or "0"
    return str(v)


def _pct(v) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _compact(v) -> str:
    """A setting or params value as one short line of JSON."""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str, sort_keys=True)


def _short(digest, n: int = 16) -> str:
    return str(digest)[:n] if digest else "n/a"


def render_page(facts: dict, panels: list[dict]) -> str:
    env = environment(autoescape=True)
    env.filters.update(num=_num, pct=_pct, compact=_compact, short=_short)
    return env.get_template("run_report.html.j2").render(f=facts, panels=panels)
