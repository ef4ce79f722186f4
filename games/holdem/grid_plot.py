"""The picture of a :class:`~.grid.HandGrid`: 13x13 cells, one colour band per action.

The picture the poker tools show. Each cell (``AA``, ``AKs``, ``AKo``, ...) is split left to
right into one band per action, each as wide as the cell's range-weighted frequency of
that action (:attr:`HandGrid.frequencies`), in the action's colour: folds blue, checks
and calls green, bets and raises from orange to dark red as they grow, all-ins darkest. The
bands' height is the cell's range at the node as a share of every combination the cell
has (6 for a pair, 4 suited, 12 offsuit: :data:`COMBINATIONS`), so a hand half in the range
fills half the cell, from the bottom; a cell no combination reaches is left grey. The
legend gives each action's overall frequency.

matplotlib (the ``plot`` extra) draws it on an Agg canvas (headless, no pyplot); it is
imported only here, when a picture is asked for.

Example::

    >>> grid = hand_grid(result, ("Check",))
    >>> plot_grid(grid, "ip-after-check.png")            # or grid.write("….png")
"""

from __future__ import annotations

import os
import re

import numpy as np

from .cards import HoldemError

__all__ = ["grid_figure", "plot_grid", "action_colours", "cell_combinations",
           "band_rectangles", "FORMATS"]

#: The picture formats :func:`plot_grid` writes (by the path's extension).
FORMATS = (".png", ".svg", ".pdf")

_FOLD, _PASSIVE, _GREY = "#4f7fd1", "#55ad5b", "#d9d9d9"
#: bets and raises, small to large (all-ins take the last)
_AGGRESSIVE = ("#f2b134", "#ec8a2f", "#e0602a", "#cc3b28", "#a82323", "#7d1616")


def cell_combinations(row: int, column: int) -> int:
    """How many hole-card combinations a cell holds: 6 (pair), 4 (suited), 12 (offsuit)."""
    return 6 if row == column else 4 if row < column else 12


def _size(action: str) -> float:
    """The chips in ``Bet(60)``/``Raise(150)``/``AllIn(200)``, for ordering by size."""
    found = re.search(r"\(([-+0-9.eE]+)\)", action)
    return float(found.group(1)) if found else 0.0


def action_colours(actions) -> list[str]:
    """One colour per action (see the module): by the action's kind, aggressive actions
    shaded by their size among the node's bets and raises, all-ins darkest."""
    names = [str(a) for a in actions]
    kinds = ["fold" if a.lower().startswith("fold") else
             "passive" if a.lower().startswith(("check", "call")) else
             "allin" if a.lower().startswith("allin") else "aggressive" for a in names]
    sized = sorted((_size(a), k) for k, a in enumerate(names) if kinds[k] == "aggressive")
    last = len(_AGGRESSIVE) - 2                     # the darkest is the all-in's
    shade = {k: _AGGRESSIVE[min(last, round(i * last / max(1, len(sized) - 1)))
                            if len(sized) > 1 else 1] for i, (_, k) in enumerate(sized)}
    return [_FOLD if kind == "fold" else _PASSIVE if kind == "passive" else
            _AGGRESSIVE[-1] if kind == "allin" else shade[k] for k, kind in enumerate(kinds)]


def band_rectangles(grid) -> list[tuple[int, int, int, float, float, float]]:
    """The bands the picture draws: ``(row, column, action, left, width, height)`` in
    cell units (a cell is ``[0, 1] x [0, 1]``), for every cell some combination reaches
    and every action it takes with positive frequency."""
    out = []
    for i in range(grid.weights.shape[0]):
        for j in range(grid.weights.shape[1]):
            if not grid.weights[i, j] > 0:
                continue
            height = min(1.0, float(grid.weights[i, j]) / cell_combinations(i, j))
            left = 0.0
            for k, f in enumerate(np.asarray(grid.frequencies[i, j], dtype=float)):
                if f > 0:
                    out.append((i, j, k, left, float(f), height))
                    left += float(f)
    return out


def grid_figure(grid, *, title: str | None = None):
    """The matplotlib ``Figure`` of ``grid`` (see the module)."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch, Rectangle
    except ImportError as e:                      # pragma: no cover - the plot extra
        raise HoldemError("a picture of the grid needs matplotlib: "
                          "pip install 'jaxcfr[plot]'") from e
    colours = action_colours(grid.actions)
    labels = grid.cells()
    size = len(labels)
    fig = Figure(figsize=(8.4, 9.0))
    ax = fig.add_subplot()
    for i in range(size):
        for j in range(size):
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor=_GREY if grid.weights[i, j] <= 0
                                   else "#f4f4f4", edgecolor="none"))
    for i, j, k, left, width, height in band_rectangles(grid):
        ax.add_patch(Rectangle((j + left, i + 1 - height), width, height,
                               facecolor=colours[k], edgecolor="none"))
    for i in range(size):
        for j in range(size):
            ax.add_patch(Rectangle((j, i), 1, 1, facecolor="none", edgecolor="white",
                                   linewidth=1.0))
            ax.text(j + 0.06, i + 0.08, labels[i][j], ha="left", va="top",
                    fontsize=7, color="black")
    ax.set_xlim(0, size)
    ax.set_ylim(size, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.legend(handles=[Patch(facecolor=c, label=f"{a} {100 * float(f):.1f}%")
                       for a, c, f in zip(grid.actions, colours, grid.overall)],
              loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(4, len(colours)),
              frameon=False, fontsize="small")
    if title is None:
        title = grid.heading()
    fig.suptitle(title, fontsize="medium")
    fig.tight_layout()
    return fig


def plot_grid(grid, path, *, title: str | None = None) -> None:
    """Write :func:`grid_figure` to ``path`` (``.png``, ``.svg`` or ``.pdf``)."""
    path = os.fspath(path)
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise HoldemError(f"a picture of the grid is written as {', '.join(FORMATS)}, "
                          f"got {path!r}")
    grid_figure(grid, title=title).savefig(path, format=extension[1:], bbox_inches="tight")
