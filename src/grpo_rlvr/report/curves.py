"""The run's curves as pictures, with the findings marked where they happened: one small matplotlib figure per
metric (Agg's SVG backend, text kept as text), inlined in the page as a data URI, so the page needs nothing else
and prints sharp.

Panels: the reward (total and each reward), correctness (training, and held-out dashed), the held-out rewards,
completion length (mean, with the min-max band), the truncated share, KL, entropy, the clip ratio, groups without
signal, tool calls where tools are used, and the unscorable share; a panel whose metric the run never logged is left
out. Marks: a watchdog finding is a band from the step it appeared to the step it cleared (or the end) labelled
``F<number>``; a stop is a red line; a death is a black dashed line at the last logged step; a finding only
``diagnose`` made (a judgement of the whole run) is named in the panel's corner. Each finding goes on the panels of
the metric it is about (``FINDING_PANELS``), the others on the reward's.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

from grpo_rlvr.diagnosis.report import binned

POINTS = 600   # a longer series is drawn as the means of this many bins (the page stays small)
SEVERITY_COLOUR = {"critical": "#c62828", "warning": "#e67e00", "info": "#1565c0"}


@dataclass(frozen=True)
class Panel:
    key: str
    title: str
    keys: tuple[str, ...]      # the metrics drawn (training log); "{correctness}" / "{reward}" expand per reward
    from_zero: bool = False    # a share or a count: drawn from 0 (a flat 0 reads as none, not as noise round 0)


PANELS = (
    Panel("reward", "reward: total (black) and each reward", ("reward", "rewards/{reward}/mean")),
    Panel("correctness", "correctness (training; held-out dashed)", ("rewards/{correctness}/mean",)),
    Panel("held_out", "held-out rewards", ()),
    Panel("length", "completion length, tokens (mean; min-max shaded)", ("completions/mean_length",)),
    Panel("truncated", "truncated share (cut at max_completion_length)", ("completions/clipped_ratio",),
          from_zero=True),
    Panel("kl", "KL to the reference", ("kl",)),
    Panel("entropy", "entropy", ("entropy",)),
    Panel("clip", "clip ratio (updates clipped)", ("clip_ratio/region_mean",), from_zero=True),
    Panel("zero_signal", "groups without signal (all rewards equal)", ("frac_reward_zero_std",), from_zero=True),
    Panel("tools", "tool calls per rollout (and the share that failed)",
          ("tools/call_frequency", "tools/failure_frequency"), from_zero=True),
    Panel("unscorable", "unscorable share (samples no reward could score)", ("unscorable/frac",), from_zero=True),
)
FINDING_PANELS = {
    "reward_hacking": ("reward", "correctness", "held_out"), "correctness_collapsed": ("correctness",),
    "no_learning_signal": ("zero_signal", "correctness"), "refill_exhausted": ("zero_signal",),
    "entropy_collapse": ("entropy",), "kl_blowup": ("kl",), "kl_jump": ("kl",), "sampler_mismatch": ("kl",),
    "truncation": ("truncated", "length"), "degenerate_length": ("length",),
    "length_reward_coupling": ("length", "correctness"), "clipping_saturation": ("clip",),
    "unscorable_samples": ("unscorable",), "tools_never_called": ("tools",), "tools_abandoned": ("tools",),
    "tool_errors_rising": ("tools",),
}


def _lines(logs, panel: Panel, rewards: list[str], correctness: list[str]) -> list[tuple[str, list, dict]]:
    """(label, series, style) of each line the panel draws."""
    out = []
    for key in panel.keys:
        names = rewards if "{reward}" in key else correctness if "{correctness}" in key else [None]
        for n in names:
            k = key.replace("{reward}", str(n)).replace("{correctness}", str(n))
            style = {"color": "black", "linewidth": 2} if k == "reward" else {}
            out.append(("total" if k == "reward" else (n or k.rsplit("/", 1)[-1]), logs.series(k), style))
    if panel.key == "correctness":
        out += [(f"{n} (held-out)", logs.eval_series(f"rewards/{n}/mean"), {"linestyle": "--", "marker": "o",
                                                                          "markersize": 3}) for n in correctness]
    if panel.key == "held_out":
        out += [("total", logs.eval_series("reward"), {"color": "black", "marker": "o", "markersize": 3})]
        out += [(n, logs.eval_series(f"rewards/{n}/mean"), {"marker": "o", "markersize": 3}) for n in rewards]
    return [line for line in out if line[1]]


def _summary(lines) -> dict:
    return {label: {"first": round(s[0][1], 4), "last": round(s[-1][1], 4), "min": round(min(v for _, v in s), 4),
                    "max": round(max(v for _, v in s), 4), "points": len(s)} for label, s, _ in lines}


def _marks_for(findings: list[dict], drawn: list[str]) -> dict[str, list[dict]]:
    """Panel key → the findings marked on it."""
    out: dict[str, list[dict]] = {k: [] for k in drawn}
    for f in findings:
        where = [p for p in FINDING_PANELS.get(f["id"], ()) if p in out] or drawn[:1]
        for p in where:
            out[p].append(f)
    return out


def _mark(ax, f: dict, last_step) -> list[str]:
    """Draw one finding on ``ax``; returns its label when it only has a corner (a whole-run judgement)."""
    colour = SEVERITY_COLOUR.get(f["severity"], "#555555")
    label = f"F{f['number']}"
    top = ax.get_ylim()[1]
    for start, end in f["spans"]:
        if start is None:
            continue
        stop = end if end is not None else last_step if last_step is not None else start
        ax.axvspan(start, max(stop, start), color=colour, alpha=0.13, linewidth=0)
        ax.text(start, top, f" {label}", color=colour, fontsize=8, va="top", ha="left", fontweight="bold")
    if f.get("stop_step") is not None:
        ax.axvline(f["stop_step"], color="#c62828", linewidth=1.6)
        ax.text(f["stop_step"], top, f"{label} stop ", color="#c62828", fontsize=8, va="top", ha="right",
                fontweight="bold")
    if not f["spans"] and f.get("stop_step") is None:
        return [label]
    return []


def _figure(panel: Panel, lines, marks: list[dict], last_step, died_at, logs):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.6, 2.6))
    ax = fig.add_subplot()
    for label, series, style_ in lines:
        style = dict(style_)
        xs, ys = binned(series, POINTS)
        ax.plot(xs, ys, label=label, linewidth=style.pop("linewidth", 1.3), marker=style.pop("marker", "o" if
                len(xs) == 1 else None), **style)
    if panel.key == "length":
        _length_band(ax, logs)
    if panel.from_zero:
        ax.set_ylim(0, max(0.05, 1.08 * max((max(v for _, v in s) for _, s, _ in lines), default=0)))
    ax.set_title(panel.title, fontsize=9.5, loc="left")
    ax.set_xlabel("step", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.locator_params(nbins=5)   # a few ticks read as well, and draw in half the time
    ax.grid(alpha=0.25, linewidth=0.6)
    if len(lines) > 1:
        ax.legend(fontsize=7, loc="best", frameon=False)
    if died_at is not None:
        ax.axvline(died_at, color="black", linestyle="--", linewidth=1.2)
        ax.text(died_at, ax.get_ylim()[1], "died ", fontsize=8, va="top", ha="right")
    corner = [label for f in marks for label in _mark(ax, f, last_step)]
    if corner:
        ax.text(0.99, 0.03, " ".join(corner) + " (whole run)", transform=ax.transAxes, ha="right", va="bottom",
                fontsize=8, fontweight="bold", color="#444444")
    fig.subplots_adjust(left=0.1, right=0.98, top=0.88, bottom=0.17)
    return fig


def curves(logs, roles: dict, findings: list[dict], crash: dict | None) -> list[dict]:
    """Each panel the run has data for: key, title, the image as a data URI, the findings marked on it, and a
    summary of each line (first, last, min, max)."""
    if logs is None or not len(logs.history) and not len(logs.eval_history):
        return []
    import matplotlib

    rewards = sorted(k[len("rewards/"):-len("/mean")] for k in logs.history.keys()
                     if k.startswith("rewards/") and k.endswith("/mean"))
    correctness = [n for n in rewards if getattr(roles.get(n), "role", None) == "correctness"]
    drawn = [(p, lines) for p in PANELS if (lines := _lines(logs, p, rewards, correctness))]
    marks = _marks_for(findings, [p.key for p, _ in drawn])
    steps = logs.history.steps
    last_step = steps[-1] if len(steps) else None
    died_at = (crash or {}).get("last_step")
    out = []
    # text as text (small, sharp, searchable); a fixed title height (matplotlib otherwise measures every tick
    # label to place it: a quarter of the drawing time)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "grpo-rlvr-report", "axes.titley": 1.02,
                                "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False}):
        for panel, lines in drawn:
            fig = _figure(panel, lines, marks[panel.key], last_step, died_at, logs)
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            out.append({"key": panel.key, "title": panel.title,
                        "image": "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode(),
                        "findings": [f["number"] for f in marks[panel.key]], "lines": _summary(lines)})
    return out


def _length_band(ax, logs) -> None:
    """The min-max band of completion length, when TRL logged both."""
    low, high = dict(logs.series("completions/min_length")), dict(logs.series("completions/max_length"))
    steps = sorted(set(low) & set(high))
    if len(steps) > 1:
        xs, lo = binned([(s, low[s]) for s in steps], POINTS)
        _, hi = binned([(s, high[s]) for s in steps], POINTS)
        ax.fill_between(xs, lo, hi, alpha=0.15, linewidth=0)
