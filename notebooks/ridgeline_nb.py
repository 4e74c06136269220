"""Shared helpers for the notebooks: run Ridgeline with --json, keep the figures.

Every notebook asks its question through the `ridgeline` binary and plots the JSON it prints, so
the pictures always show what the tool computes. RIDGELINE_BIN names the binary (default:
build/ridgeline beside this folder); RIDGELINE_FIGURES names the folder the PNG files go to.
"""
import json
import os
import subprocess
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: figures go to files
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BINARY = Path(os.environ.get("RIDGELINE_BIN", ROOT / "build" / "ridgeline"))
FIGURES = Path(os.environ.get("RIDGELINE_FIGURES", ROOT / "build" / "notebooks" / "figures"))


def ridgeline(*args):
    """Runs `ridgeline ARGS --json` and returns the parsed document (raises with stderr on failure)."""
    command = [str(BINARY), *[str(a) for a in args], "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


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
