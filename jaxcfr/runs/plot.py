"""The convergence plot of a run: metric against iterations, log-log, one line per member.

Uses matplotlib's Agg canvas directly (no pyplot, no global backend switch), so it
works headless and leaves a notebook's backend alone.
"""

from __future__ import annotations

import os
import textwrap
from typing import Any, Sequence

import numpy as np

__all__ = ["plot_convergence", "convergence_figure", "LEGEND_WIDTH"]

#: Legend labels (and the title) are wrapped at this many characters; a legend with a
#: label longer than :data:`INSIDE_WIDTH` or more than :data:`INSIDE_ENTRIES` entries goes
#: below the axes, and the figure grows to hold it (a game string of 115 characters
#: pushed the axes off the figure).
LEGEND_WIDTH = 60
INSIDE_WIDTH = 32
INSIDE_ENTRIES = 5
TITLE_WIDTH = 80


def plot_convergence(metrics: Sequence[dict[str, Any]], path, *,
                     title: str = "", members: Sequence[str] | None = None,
                     full_game: Sequence[float | None] | None = None) -> bool:
    """Write a PNG to ``path`` (a path or a binary file object) from metrics records.

    Returns False (writing nothing) when there is no record to plot.

    Each record has ``iteration``, ``metric`` (a number or a list per member) and
    ``metric_name``. Non-positive values are left out (log scale). Records with
    ``estimates`` (sampled chance) also show the in-sample estimate beside the held-out
    lower bound (two estimates, not a bracket: either may lie above the other).

    ``full_game`` (an abstraction run): each member's lifted profile's metric in the full
    game, at the last iteration. It leads: large markers, labelled "full game"; the
    curves are then labelled "inside the abstraction" and drawn dashed.
    """
    fig = convergence_figure(metrics, title=title, members=members, full_game=full_game)
    if fig is None:
        return False
    fig.savefig(path if hasattr(path, "write") else os.fspath(path), format="png",
                bbox_inches="tight")
    return True


def convergence_figure(metrics: Sequence[dict[str, Any]], *, title: str = "",
                       members: Sequence[str] | None = None,
                       full_game: Sequence[float | None] | None = None):
    """The ``matplotlib.figure.Figure`` :func:`plot_convergence` writes (``None``: nothing
    to plot)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    records = [m for m in metrics if m.get("iteration", 0) > 0]
    if not records:
        return None
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
    inside = full_game is not None
    for j in range(width):
        y = values[:, j]
        ok = np.isfinite(y) & (y > 0)
        name = labels[j]
        if inside:
            name = f"{name}: inside the abstraction" if name else "inside the abstraction"
        if ok.any():
            line, = ax.plot(iters[ok], y[ok], marker="." if ok.sum() < 30 else None,
                            label=_wrap(name), linestyle="--" if inside else "-",
                            alpha=0.7 if inside else 1.0)
            plotted += 1
            if inside and j < len(full_game) and full_game[j] is not None and full_game[j] > 0:
                ax.plot([iters[-1]], [full_game[j]], marker="*", markersize=14,
                        linestyle="none", color=line.get_color(),
                        label=_wrap(f"{labels[j] + ': ' if labels[j] else ''}full game "
                                    "(lifted)"))
    plotted += _estimate_band(ax, records, iters)
    from matplotlib.ticker import NullFormatter
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())     # minor labels of a log axis overlap
    if plotted:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("iterations")
    ax.set_ylabel(records[-1].get("metric_name", "metric").replace("_", " "))
    if inside:
        title = (title + "\n" if title else "") + "full game (lifted profile, the end): stars"
    if title:
        ax.set_title("\n".join(_wrap(t, TITLE_WIDTH) for t in title.split("\n")),
                     fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    if (any(labels) or inside) and plotted:
        _legend(fig, ax)
    else:
        fig.tight_layout()
    return fig


def _wrap(label: str | None, width: int = LEGEND_WIDTH) -> str | None:
    """``label`` broken into lines of at most ``width`` characters (long words too)."""
    if not label:
        return label
    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=False)) or label


def _legend(fig, ax) -> None:
    """The legend inside the axes when it is small, else below them, the figure taller by
    its height so that the axes keep their size."""
    handles, texts = ax.get_legend_handles_labels()
    old = ax.get_legend()
    title = old.get_title().get_text() or None if old is not None else None
    lines = [t.count("\n") + 1 for t in texts]
    longest = max((len(part) for t in texts for part in t.split("\n")), default=0)
    if longest <= INSIDE_WIDTH and len(texts) <= INSIDE_ENTRIES:
        ax.legend(fontsize="small", title=title)
        fig.tight_layout()
        return
    extra = 0.2 * sum(lines) + 0.3                       # inches: small text, about 0.2 a line
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + extra)
    fig.tight_layout(rect=(0, extra / (height + extra), 1, 1))
    ax.legend(handles, texts, fontsize="small", loc="upper center", frameon=False,
              title=title, bbox_to_anchor=(0.5, -0.16), bbox_transform=ax.transAxes)


def _estimate_band(ax, records, iters) -> int:
    """Where the records carry estimates (sampled chance), label the main curve as the
    held-out lower bound and add the in-sample estimate: two estimates of the gap, not a
    bracket (the in-sample one is biased upward, the held-out one downward, and either may
    lie above the other on a given run); 1 if drawn."""
    est = [m.get("estimates") for m in records]
    if not all(est):
        return 0
    two = est[-1].get("exploitability_lower_bound") is not None
    high = np.array([sum(e["gain_in_sample"]) / (2 if two else 1) for e in est], dtype=float)
    ok = high > 0
    if not ok.any():
        return 0
    if ax.lines:
        ax.lines[0].set_label("held-out estimate (a lower bound in expectation)")
    ax.plot(iters[ok], high[ok], linestyle=":", label="in-sample estimate (biased upward)")
    ax.legend(fontsize="small", title="estimates")
    return 1
