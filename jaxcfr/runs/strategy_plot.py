"""A strategy heat map: the action probabilities of a family of information sets of a saved
profile, one row per information set, one column per action, colour = probability.

The family is the information sets whose keys match a pattern (a glob on the key as text,
``0|??|``: player 0's first move in Leduc; or a regular expression), optionally of one
player. :func:`strategy_matrix` gives the numbers (what the picture shows),
:func:`strategy_figure` the matplotlib figure (Agg canvas: headless, no pyplot),
:func:`plot_strategy` writes it as a PNG. ``jaxcfr plot PROFILE --strategy PATTERN`` runs it.

Example::

    >>> import jaxcfr
    >>> profile = jaxcfr.solve("leduc_poker", iterations=200).profile
    >>> m = jaxcfr.strategy_matrix(profile, "0|??|")      # player 0's six first moves
    >>> m.actions, m.probs.shape
    (('call', 'raise'), (6, 2))
    >>> jaxcfr.plot_strategy(profile, "0|??|", "first-move.png")
"""

from __future__ import annotations

import fnmatch
import os
import re
import textwrap
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:                 # (read only by attribute: this module imports no JAX)
    from jaxcfr.profiles.profile import Profile

__all__ = ["StrategyMatrix", "strategy_matrix", "strategy_figure", "plot_strategy",
           "key_text", "MAX_ROWS", "KEY_WIDTH", "VALUES_UP_TO"]

#: At most this many rows are drawn unless asked (a family of thousands is no picture: the
#: error says how many matched and how to narrow the pattern).
MAX_ROWS = 100
#: Row labels (the keys) are wrapped at this many characters; the row grows to hold them.
KEY_WIDTH = 40
#: Each cell's probability is written in it when the matrix has at most this many cells.
VALUES_UP_TO = 240


class StrategyMatrix(NamedTuple):
    """What a strategy heat map shows.

    Attributes:
      rows: ``[R]`` the ``(player, key)`` of each row, in the profile's order.
      labels: ``[R]`` each row's label (``key_text``; ``p1: ...`` when players are mixed).
      actions: ``[A]`` the action labels: those of the first row with the most actions, in
        its order, then the other rows' in first-seen order.
      probs: ``[R, A]`` float64 the probability of each action at each row; NaN where the
        row's information set has no such action.
    """
    rows: tuple
    labels: tuple[str, ...]
    actions: tuple
    probs: np.ndarray


def key_text(key: Any) -> str:
    """An information-set key as the pattern sees it: a string as it is, anything else
    (a public tree's ``(hand, history)``, a tuple) as its ``repr``."""
    return key if isinstance(key, str) else repr(key)


def strategy_matrix(profile: "Profile", pattern: str, *, player: int | None = None,
                    regex: bool = False, max_rows: int | None = MAX_ROWS) -> StrategyMatrix:
    """The rows of ``profile`` whose key matches ``pattern`` (a glob, ``fnmatch`` rules
    with ``*``, ``?`` and ``[...]``, on the whole of :func:`key_text`; with ``regex``, a
    regular expression searched in it), of ``player`` only if given.

    Raises:
      ValueError: nothing matches (the message shows some keys), more than ``max_rows``
        rows match (``None``: no limit), or ``pattern`` is not a valid regular expression.
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"the pattern must be a non-empty string, got {pattern!r}")
    if regex:
        try:
            compiled = re.compile(pattern)
        except re.error as e:
            raise ValueError(f"{pattern!r} is not a regular expression: {e}") from None
        matches = lambda text: compiled.search(text) is not None    # noqa: E731
    else:
        matches = lambda text: fnmatch.fnmatchcase(text, pattern)  # noqa: E731
    picked = [r for r, (p, key) in enumerate(profile.keys)
              if (player is None or p == player) and matches(key_text(key))]
    if not picked:
        raise ValueError(_nothing_matches(profile, pattern, player, regex))
    if max_rows is not None and len(picked) > max_rows:
        raise ValueError(f"{len(picked)} information sets match {pattern!r}"
                         + (f" for player {player}" if player is not None else "")
                         + f": more than {max_rows} rows make no readable picture; narrow "
                         "the pattern (or allow more rows: --max-rows, max_rows=)")
    actions: dict[Any, int] = {}
    widest = max(picked, key=lambda r: len(profile.actions[r]))
    for r in [widest] + picked:
        for a in profile.actions[r]:
            actions.setdefault(a, len(actions))
    probs = np.full((len(picked), len(actions)), np.nan)
    for i, r in enumerate(picked):
        acts = profile.actions[r]
        probs[i, [actions[a] for a in acts]] = profile.probs[r, :len(acts)]
    rows = tuple(profile.keys[r] for r in picked)
    mixed = len({p for p, _ in rows}) > 1
    labels = tuple(f"p{p}: {key_text(k)}" if mixed else key_text(k) for p, k in rows)
    return StrategyMatrix(rows, labels, tuple(actions), probs)


def _nothing_matches(profile: "Profile", pattern: str, player: int | None, regex: bool) -> str:
    keys = [key_text(k) for p, k in profile.keys if player is None or p == player]
    who = f" of player {player}" if player is not None else ""
    if not keys:
        return (f"the profile has no information set{who} (its players: "
                f"{sorted({p for p, _ in profile.keys})})")
    shown = ", ".join(repr(k) for k in keys[:4]) + (", ..." if len(keys) > 4 else "")
    how = "regular expression" if regex else "pattern (a glob: * any text, ? one character)"
    return (f"no information set{who} of the profile matches the {how} {pattern!r}; "
            f"its {len(keys)} keys look like {shown}")


def strategy_figure(matrix: StrategyMatrix, *, title: str = "", values: bool | None = None):
    """The ``matplotlib.figure.Figure`` of ``matrix``: rows labelled by their keys (wrapped
    at :data:`KEY_WIDTH` characters), columns by the actions, colour the probability (0 to
    1; grey: the row has no such action), each cell's value written in it when
    ``values`` (default: when there are at most :data:`VALUES_UP_TO` cells)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    import matplotlib

    probs = matrix.probs
    n_rows, n_cols = probs.shape
    labels = [_wrap(text) for text in matrix.labels]
    columns = [_wrap(str(a), 16) for a in matrix.actions]
    lines = [label.count("\n") + 1 for label in labels]
    row_inches = max(0.32, 0.2 * max(lines) + 0.1)
    longest = max(len(part) for text in labels for part in text.split("\n"))
    col_inches = max(0.7, 0.09 * max(len(p) for c in columns for p in c.split("\n")) + 0.2)
    width = min(0.075 * longest, 4.0) + n_cols * col_inches + 1.6
    height = n_rows * row_inches + 1.4 + 0.2 * max(c.count("\n") for c in columns)
    fig = Figure(figsize=(max(width, 4.0), max(height, 2.5)), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d9d9d9")
    image = ax.imshow(np.ma.masked_invalid(probs), cmap=cmap, vmin=0.0, vmax=1.0,
                      aspect="auto", interpolation="nearest")
    ax.set_xticks(range(n_cols), columns)
    ax.set_yticks(range(n_rows), labels, fontsize="small")
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    if values if values is not None else probs.size <= VALUES_UP_TO:
        for i in range(n_rows):
            for j in range(n_cols):
                p = probs[i, j]
                if np.isfinite(p):
                    ax.text(j, i, f"{p:.2f}", ha="center", va="center", fontsize="small",
                            color="black" if p > 0.6 else "white")
    fig.colorbar(image, ax=ax, label="probability", fraction=0.08, pad=0.03)
    if title:
        fig.suptitle("\n".join(_wrap(t, 80) for t in title.split("\n")), fontsize="medium")
    fig.tight_layout()
    return fig


def plot_strategy(profile: "Profile", pattern: str, path, *, player: int | None = None,
                  regex: bool = False, max_rows: int | None = MAX_ROWS,
                  title: str | None = None) -> StrategyMatrix:
    """Write the heat map of :func:`strategy_matrix` ``(profile, pattern, ...)`` as a PNG
    to ``path`` (a path or a binary file object); returns the matrix drawn. ``title``:
    default the profile's game and the pattern."""
    matrix = strategy_matrix(profile, pattern, player=player, regex=regex, max_rows=max_rows)
    if title is None:
        who = f", player {player}" if player is not None else ""
        title = f"{profile.game or 'profile'}: {pattern}{who} ({len(matrix.rows)} information " \
                f"set{'s' if len(matrix.rows) != 1 else ''})"
    fig = strategy_figure(matrix, title=title)
    fig.savefig(path if hasattr(path, "write") else os.fspath(path), format="png",
                bbox_inches="tight")
    return matrix


def _wrap(text: str, width: int = KEY_WIDTH) -> str:
    """``text`` in lines of at most ``width`` characters (long words broken too)."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text
