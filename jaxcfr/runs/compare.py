"""Pictures of finished (or running) run directories: several runs on one convergence plot,
and a sweep (a batched run) as a grid of small plots, one per member.

What ``jaxcfr plot RUN [RUN...]`` draws. A run is read from its ``metrics.jsonl`` (one
record per evaluation, see :mod:`jaxcfr.runs.train`): the x axis is the iterations or the
wall seconds since the run started (``wall_seconds``, lowering and compiling included:
what its user waited); the y axis the run's metric (exploitability, or NashConv for more
than two players), log-log. Like :mod:`jaxcfr.runs.plot`, it draws on matplotlib's Agg
canvas (no pyplot, no global backend).

Example::

    >>> from jaxcfr.runs.compare import read_run, runs_figure
    >>> runs = [read_run("runs/leduc-cfr"), read_run("runs/leduc-dcfr")]
    >>> runs_figure(runs, x="seconds").savefig("compare.png")
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

__all__ = ["RunCurves", "read_run", "runs_figure", "grid_figure", "plot_runs", "X_AXES"]

#: What the x axis may show: the record's field and the axis label.
X_AXES = {"iterations": ("iteration", "iterations"),
          "seconds": ("wall_seconds", "wall seconds (lowering and compiling included)")}


class RunCurves(NamedTuple):
    """One run's curves: ``x`` per axis name, ``values`` ``[records, members]``."""
    name: str                            # the run directory's name
    x: dict[str, np.ndarray]             # "iterations" / "seconds" -> [records] float
    values: np.ndarray                   # [records, members] float (nan: no value)
    members: list[str]                   # one label per member ([] for a single run)
    metric_name: str


def read_run(path: str | os.PathLike) -> RunCurves:
    """The curves of run directory ``path`` (its ``metrics.jsonl``; bad lines skipped).

    Raises:
      FileNotFoundError: no such directory, or it has no ``metrics.jsonl``.
      ValueError: the metrics hold no evaluation after iteration 0.
    """
    path = Path(path)
    metrics = path / "metrics.jsonl"
    if not path.is_dir():
        raise FileNotFoundError(f"no run directory {path}")
    if not metrics.is_file():
        raise FileNotFoundError(f"{path} is not a run directory with metrics (it has no "
                                "metrics.jsonl)")
    records = []
    with open(metrics, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and rec.get("iteration", 0) > 0 and "metric" in rec:
                records.append(rec)
    if not records:
        raise ValueError(f"{path} has no evaluation to plot yet (metrics.jsonl is empty)")
    columns = [r["metric"] if isinstance(r["metric"], list) else [r["metric"]] for r in records]
    width = max(len(c) for c in columns)
    values = np.full((len(records), width), np.nan)
    for i, c in enumerate(columns):
        values[i, :len(c)] = [np.nan if v is None else float(v) for v in c]
    members = [str(m) for m in (records[-1].get("members") or [])]
    if width > 1 and len(members) != width:
        members = [f"member {j}" for j in range(width)]
    x = {axis: np.array([r.get(field, np.nan) if r.get(field) is not None else np.nan
                         for r in records], dtype=float)
         for axis, (field, _) in X_AXES.items()}
    name = path.resolve().name
    return RunCurves(name, x, values, members if width > 1 else [],
                     str(records[-1].get("metric_name", "metric")))


def _axes(ax, x: str, metric_name: str, label: bool = True) -> None:
    ax.set_xscale("log")            # (matplotlib labels minor ticks when the range is short)
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if label:
        ax.set_xlabel(X_AXES[x][1])
        ax.set_ylabel(metric_name.replace("_", " "))


def _draw(ax, xs: np.ndarray, ys: np.ndarray, label: str | None) -> bool:
    ok = np.isfinite(xs) & (xs > 0) & np.isfinite(ys) & (ys > 0)
    if not ok.any():
        return False
    ax.plot(xs[ok], ys[ok], marker="." if ok.sum() < 30 else None, label=label)
    return True


def runs_figure(runs: Sequence[RunCurves], *, x: str = "iterations", title: str = ""):
    """Every run on one convergence plot (a sweep's members as lines of their own,
    labelled ``run: member``); a ``matplotlib.figure.Figure``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from jaxcfr.runs.plot import _legend, _wrap
    _check_x(x)
    fig = Figure(figsize=(6.4, 4.2), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    drawn = 0
    for run in runs:
        for j in range(run.values.shape[1]):
            label = f"{run.name}: {run.members[j]}" if run.members else run.name
            drawn += _draw(ax, run.x[x], run.values[:, j], _wrap(label))
    if not drawn:
        raise ValueError(f"nothing to plot against {x}: no positive value in "
                         f"{', '.join(r.name for r in runs)}")
    _axes(ax, x, _metric_name(runs))
    if title:
        ax.set_title(_wrap(title, 80), fontsize="medium")
    _legend(fig, ax)
    return fig


def grid_figure(run: RunCurves, *, x: str = "iterations", columns: int | None = None):
    """A sweep as a grid of small plots, one per member (its label as the title), on shared
    axes so that the members compare at a glance; a ``matplotlib.figure.Figure``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from jaxcfr.runs.plot import _wrap
    _check_x(x)
    members = run.values.shape[1]
    cols = columns or max(1, math.ceil(math.sqrt(members)))
    rows = math.ceil(members / cols)
    fig = Figure(figsize=(2.6 * cols + 0.8, 2.2 * rows + 0.8), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    drawn = 0
    for j in range(rows * cols):
        ax = axes[j // cols][j % cols]
        if j >= members:
            ax.set_visible(False)
            continue
        drawn += _draw(ax, run.x[x], run.values[:, j], None)
        _axes(ax, x, run.metric_name, label=False)
        label = run.members[j] if run.members else run.name
        ax.set_title(_wrap(label, 28), fontsize="small")
        ax.tick_params(which="both", labelsize="x-small")
    if not drawn:
        raise ValueError(f"nothing to plot against {x}: no positive value in {run.name}")
    fig.supxlabel(X_AXES[x][1], fontsize="small")
    fig.supylabel(run.metric_name.replace("_", " "), fontsize="small")
    fig.suptitle(_wrap(run.name, 80), fontsize="medium")
    fig.tight_layout()
    return fig


def plot_runs(paths: Sequence[str | os.PathLike], out, *, x: str = "iterations",
              layout: str = "auto") -> str:
    """Draw the runs at ``paths`` into PNG ``out``; returns the layout drawn.

    ``layout``: ``"one"`` (every run on one plot), ``"grid"`` (one run's members as a
    grid), ``"auto"`` (a grid for one run with several members, else one plot).
    """
    _check_x(x)
    if layout not in ("auto", "one", "grid"):
        raise ValueError(f"layout must be auto, one or grid, got {layout!r}")
    runs = [read_run(p) for p in paths]
    if layout == "auto":
        layout = "grid" if len(runs) == 1 and runs[0].values.shape[1] > 1 else "one"
    if layout == "grid":
        if len(runs) != 1:
            raise ValueError(f"a grid draws one run's members; got {len(runs)} runs (draw "
                             "several runs on one plot, or one sweep at a time)")
        fig = grid_figure(runs[0], x=x)
    else:
        fig = runs_figure(runs, x=x)
    fig.savefig(out if hasattr(out, "write") else os.fspath(out), format="png",
                bbox_inches="tight")
    return layout


def _check_x(x: str) -> None:
    if x not in X_AXES:
        raise ValueError(f"the x axis is one of {', '.join(X_AXES)}, got {x!r}")


def _metric_name(runs: Sequence[RunCurves]) -> str:
    names = sorted({r.metric_name for r in runs})
    return names[0] if len(names) == 1 else " / ".join(names)
