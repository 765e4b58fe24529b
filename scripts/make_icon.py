"""Draw the plugin's listing icon, ``assets/icon.png`` (square PNG, 1024 × 1024 px).

The picture is the method in one glance: a group of eight sampled completions per prompt (dots), scored
pass (filled) or fail (hollow) by a verifiable reward, above a reward curve that climbs. Drawn with matplotlib
only, from fixed numbers, so running it again gives the same image.

Run: ``python scripts/make_icon.py`` (writes ``assets/icon.png``), or ``python scripts/make_icon.py OUT.png``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Circle, FancyBboxPatch  # noqa: E402

SIZE_PX = 1024
DPI = 128                      # SIZE_PX / DPI = 8 inches
BACKGROUND = "#12233f"         # deep navy tile
PASS_COLOR = "#36d399"         # green: the reward said yes
FAIL_COLOR = "#f8b84e"         # amber outline: the reward said no
CURVE_COLOR = "#7cc4ff"
TEXT_COLOR = "#e8eef7"

# One GRPO group: 8 completions for one prompt; True = passed the verifier.
GROUP = [True, False, True, True, False, True, False, True]
# A reward curve (mean reward per logging step), rising with noise, in [0, 1].
CURVE = [0.12, 0.15, 0.14, 0.2, 0.26, 0.24, 0.33, 0.38, 0.37, 0.46, 0.52, 0.55, 0.61, 0.6, 0.68, 0.72, 0.74]


def draw(out: Path) -> Path:
    fig = plt.figure(figsize=(SIZE_PX / DPI, SIZE_PX / DPI), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    fig.patch.set_alpha(0.0)

    # Rounded tile.
    ax.add_patch(FancyBboxPatch((0.03, 0.03), 0.94, 0.94, boxstyle="round,pad=0,rounding_size=0.16",
                                facecolor=BACKGROUND, edgecolor="none"))

    # The group of eight, scored.
    y_dots, r = 0.76, 0.035
    xs = [0.17 + i * 0.094 for i in range(len(GROUP))]
    for x, ok in zip(xs, GROUP, strict=True):
        if ok:
            ax.add_patch(Circle((x, y_dots), r, facecolor=PASS_COLOR, edgecolor=PASS_COLOR, linewidth=3))
        else:
            ax.add_patch(Circle((x, y_dots), r, facecolor="none", edgecolor=FAIL_COLOR, linewidth=5))

    # The reward curve, in a box below the group.
    x0, x1, y0, y1 = 0.15, 0.85, 0.2, 0.62
    n = len(CURVE)
    px = [x0 + (x1 - x0) * i / (n - 1) for i in range(n)]
    py = [y0 + (y1 - y0) * v for v in CURVE]
    ax.fill_between(px, y0, py, color=CURVE_COLOR, alpha=0.18, linewidth=0)
    ax.plot(px, py, color=CURVE_COLOR, linewidth=9, solid_capstyle="round", solid_joinstyle="round")
    ax.plot([x0, x1], [y0, y0], color=TEXT_COLOR, alpha=0.35, linewidth=4, solid_capstyle="round")

    ax.text(0.5, 0.1, "GRPO · RLVR", ha="center", va="center", color=TEXT_COLOR, fontsize=44,
            fontweight="bold", family="DejaVu Sans")

    out.parent.mkdir(parents=True, exist_ok=True)
    # No timestamp or software tag in the file, so the bytes depend only on the drawing.
    fig.savefig(out, dpi=DPI, transparent=True, metadata={"Software": None})
    plt.close(fig)
    return out


def main(argv: list[str]) -> int:
    repo = Path(__file__).resolve().parents[1]
    out = Path(argv[0]) if argv else repo / "assets" / "icon.png"
    draw(out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
