"""Writing a diagnosis: ``diagnosis.json``, ``diagnosis.md`` and PNG plots linked from the markdown."""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.diagnosis.metrics import RunLogs
from grpo_rlvr.diagnosis.roles import reward_names
from grpo_rlvr.files import write_text_atomic

PLOTS = {
    "rewards.png": ("reward per function", None),
    "entropy.png": ("entropy", "entropy"),
    "length.png": ("mean completion length (tokens)", "completions/mean_length"),
    "clipped_ratio.png": ("truncated share (clipped_ratio)", "completions/clipped_ratio"),
    "zero_std.png": ("share of groups with zero reward std", "frac_reward_zero_std"),
}


MAX_POINTS = 2000   # a longer series is drawn as the means of this many bins (a 300k-step log plots in seconds)


def binned(series: list[tuple[int, float]], points: int = MAX_POINTS) -> tuple[list[float], list[float]]:
    """A series as x and y lists to plot: as it is up to ``points`` points, else the means of that many bins."""
    if len(series) <= points:
        return [x for x, _ in series], [y for _, y in series]
    size = len(series) / points
    bins = [series[int(b * size):int((b + 1) * size)] for b in range(points)]
    return ([sum(x for x, _ in b) / len(b) for b in bins if b], [sum(y for _, y in b) / len(b) for b in bins if b])


def write_plots(logs: RunLogs, out: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for name, (title, key) in PLOTS.items():
        fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
        if key is None:
            for r in reward_names(logs):
                ax.plot(*binned(logs.series(f"rewards/{r}/mean")), label=r)
            ax.plot(*binned(logs.series("reward")), label="total", color="black", linewidth=2)
            for r in reward_names(logs):  # held-out evaluations (dataset.eval_path), dashed with markers
                s = logs.eval_series(f"rewards/{r}/mean")
                if s:
                    ax.plot(*binned(s), "--o", markersize=3, label=f"{r} (held-out)")
            ax.legend(fontsize=8)
        else:
            s = logs.series(key)
            if not s:
                plt.close(fig)
                continue
            ax.plot(*binned(s))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step")
        fig.tight_layout()
        tmp = out / f".{name}.tmp.png"
        fig.savefig(tmp)
        plt.close(fig)
        tmp.replace(out / name)
        written.append(name)
    return written


def markdown(data: dict, plots: list[str]) -> str:
    lines = [f"# Diagnosis of {data['run']}", "",
             f"{data['records']} log records"
             + (f", steps {data['first_step']}–{data['last_step']}. " if data["records"] else ". ")
             + f"Reward {shown(data['reward_start'])} → {shown(data['reward_end'])}.", ""]
    if data.get("notes"):
        lines += ["Reading the logs:", ""] + [f"- {n}" for n in data["notes"]] + [""]
    if data.get("roles"):
        lines += ["| reward | role | how |", "|---|---|---|"]
        lines += [f"| {n} | {r['role']} | {r['how']} |" for n, r in data["roles"].items()] + [""]
    held = data.get("held_out")
    if held:
        lines += [f"Held-out evaluations: {held['evaluations']}, steps {held['first_step']}–{held['last_step']}.", "",
                  "| metric | first | last |", "|---|---|---|"]
        lines += [f"| {k} | {v['first']} | {v['last']} |" for k, v in held.items() if isinstance(v, dict)]
        lines.append("")
    if not data["findings"]:
        lines += ["**Healthy: no failure mode detected.** Keep the base recipe; no variant is called for.", ""]
    for f in data["findings"]:
        lines += [f"## {f['title']} ({f['severity']})", ""]
        lines += [f"- {e}" for e in f["evidence"]]
        lines += ["", f"**Recommendation:** {f['recommendation']}", ""]
        if f["brief_change"]:
            lines += ["Brief change:", "", "```yaml", _yaml(f["brief_change"]).rstrip(), "```", ""]
    if data.get("recommended_variant"):
        lines += [f"Recommended variant: **{data['recommended_variant']}** "
                  f"(`grpo-rlvr diagnose RUN --apply NEW_BRIEF.yaml` writes the brief).", ""]
    if data.get("recommended_dynamic_sampling"):
        lines += ["Recommended brief change: `" + _yaml({"dynamic_sampling": data["recommended_dynamic_sampling"]},
                                                       flow=True).strip()
                  + "` (`grpo-rlvr diagnose RUN --apply NEW_BRIEF.yaml` writes the brief).", ""]
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    return "\n".join(lines)


def shown(value) -> str:
    """A logged number as the summaries show it: ``n/a`` where the log holds none."""
    return "n/a" if value is None else str(value)


def _yaml(d: dict, flow: bool = False) -> str:
    import yaml

    return yaml.safe_dump(d, sort_keys=False, default_flow_style=None if flow else False, width=200)


def write_markdown(out: Path, data: dict, plots: list[str]) -> None:
    write_text_atomic(out / "diagnosis.md", markdown(data, plots))
