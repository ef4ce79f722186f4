"""The convergence plot of a run: metric against iterations, log-log, one line per member.

Uses matplotlib's Agg canvas directly (no pyplot, no global backend switch), so it
works headless and leaves a notebook's backend alone.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

__all__ = ["plot_convergence"]


def plot_convergence(metrics: Sequence[dict[str, Any]], path, *,
                     title: str = "", members: Sequence[str] | None = None) -> bool:
    """Write a PNG to ``path`` (a path or a binary file object) from metrics records.

    Returns False (writing nothing) when there is no record to plot.

    Each record has ``iteration``, ``metric`` (a number or a list per member) and
    ``metric_name``. Non-positive values are left out (log scale). Records with
    ``estimates`` (sampled chance) also show the estimated bracket of the gap: the
    held-out lower bound and the in-sample (optimistic) estimate, shaded between.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    records = [m for m in metrics if m.get("iteration", 0) > 0]
    if not records:
        return False
    iters = np.array([m["iteration"] for m in records], dtype=float)
    columns = [m["metric"] if isinstance(m["metric"], list) else [m["metric"]] for m in records]
    width = max(len(c) for c in columns)
    values = np.full((len(records), width), np.nan)
    for i, c in enumerate(columns):
        values[i, :len(c)] = [np.nan if v is None else v for v in c]
    labels = list(members or records[-1].get("members") or [])
    if len(labels) != width:
        labels = [None] * width if width == 1 else [f"member {j}" for j in range(width)]
    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    plotted = 0
    for j in range(width):
        y = values[:, j]
        ok = np.isfinite(y) & (y > 0)
        if ok.any():
            ax.plot(iters[ok], y[ok], marker="." if ok.sum() < 30 else None, label=labels[j])
            plotted += 1
    plotted += _estimate_band(ax, records, iters)
    ax.set_xscale("log")
    if plotted:
        ax.set_yscale("log")
    ax.set_xlabel("iterations")
    ax.set_ylabel(records[-1].get("metric_name", "metric").replace("_", " "))
    if title:
        ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if any(labels) and plotted:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path if hasattr(path, "write") else os.fspath(path), format="png")
    return True


def _estimate_band(ax, records, iters) -> int:
    """Shade the gap between the held-out lower bound and the in-sample estimate of the
    exploitability (or NashConv) where the records carry estimates; 1 if drawn."""
    est = [m.get("estimates") for m in records]
    if not all(est):
        return 0
    two = est[-1].get("exploitability_lower_bound") is not None
    low = np.array([e["exploitability_lower_bound" if two else "nash_conv_lower_bound"]
                    for e in est], dtype=float)
    high = np.array([sum(e["gain_in_sample"]) / (2 if two else 1) for e in est], dtype=float)
    ok = high > 0
    if not ok.any():
        return 0
    if ax.lines:
        ax.lines[0].set_label("held-out lower bound")
    ax.plot(iters[ok], high[ok], linestyle="--", label="in-sample estimate (optimistic)")
    floor = np.where(low > 0, low, np.nan)
    ax.fill_between(iters[ok], np.fmin(floor, high)[ok], high[ok], alpha=0.2)
    ax.legend(fontsize="small", title="estimates")
    return 1
