"""Shared helpers for the notebooks: Ridgeline's Python package, and keeping the figures.

Every notebook asks its question through `import ridgeline` (as `rl`) and plots the dictionaries
it returns, the same documents the binary's --json prints, so the pictures always show what the
tool computes. RIDGELINE_BIN names the build's binary, whose folder holds the package in python/
(default: build/ridgeline beside this folder); RIDGELINE_FIGURES names the folder the PNG files go to.
"""
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures go to files
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BINARY = Path(os.environ.get("RIDGELINE_BIN", ROOT / "build" / "ridgeline"))
FIGURES = Path(os.environ.get("RIDGELINE_FIGURES", ROOT / "build" / "notebooks" / "figures"))
sys.path.insert(0, str(BINARY.resolve().parent / "python"))
import ridgeline as rl  # noqa: E402


def save(fig, name, caption):
    """Writes the figure as FIGURES/name.png and its caption beside it (for the report)."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(FIGURES / f"{name}.png", dpi=110)
    (FIGURES / f"{name}.txt").write_text(caption + "\n")
    plt.close(fig)
    return FIGURES / f"{name}.png"


def roofline_axes(ax, peak_flops_per_s, bandwidth_Bps, label, color):
    """Draws one roofline (memory slope, then the compute roof) over intensities 0.1 .. 10^5."""
    ridge = peak_flops_per_s / bandwidth_Bps
    xs = [0.1, ridge, 1e5]
    ys = [0.1 * bandwidth_Bps, peak_flops_per_s, peak_flops_per_s]
    ax.loglog(xs, ys, color=color, label=f"{label} (ridge {ridge:.0f} FLOP/B)")
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("attainable FLOP/s")
    return ridge


def stacked_breakdown(ax, labels, reports):
    """One stacked bar per training report: its step components in seconds."""
    names = [c["name"] for c in reports[0]["breakdown"]]
    bottoms = [0.0] * len(reports)
    for name in names:
        heights = [next(c["time_s"] for c in r["breakdown"] if c["name"] == name) for r in reports]
        if max(heights) <= 0:
            continue
        ax.bar(labels, heights, bottom=bottoms, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_ylabel("seconds per step")
    ax.legend(fontsize=7)
