"""Races of the benchmark programs: timed points, and the plot of exploitability against time."""

from __future__ import annotations

import pathlib
import time
from typing import Callable

import jax


def timed(runner, state, budget: float, first: int, exploitability,
          clock: Callable[[], float] = time.perf_counter) -> list:
    """``(iterations, seconds, exploitability(state))`` points, 1.5x more iterations each
    time, until ``budget`` seconds of iterating by ``clock`` (evaluations excluded)."""
    points, spent, done, n = [], 0.0, 0, first
    while spent < budget:
        start = clock()
        state = runner.advance(state, n)
        jax.block_until_ready(state)
        spent += clock() - start
        done += n
        points.append((done, spent, exploitability(state)))
        n = int(n * 1.5)
    return points


def plot_race(points: dict[str, list], path: pathlib.Path, title: str, xlabel: str,
              ylabel: str, solid: Callable[[str], bool]) -> None:
    """``points[entry]``: ``(iterations, seconds, exploitability)`` triples; entries for
    which ``solid(entry)`` is true are drawn solid, the others dashed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 4.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for entry, series in points.items():
        _, seconds, expl = zip(*series)
        ax.plot(seconds, expl, "-" if solid(entry) else "--", marker=".", label=entry)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, format="png")
