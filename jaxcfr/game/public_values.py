"""The terminal operators of a PublicGame: a payoff as an operator on the players' hands.

A terminal of a :class:`~jaxcfr.game.public.PublicGame` says its payoff for every pair of
hands at once: a :class:`Fold` (the same for every pair), a :class:`Showdown` (the
stronger hand wins a stake) or a :class:`PayoffTable` (any payoff, one entry per pair).
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["Fold", "Showdown", "PayoffTable", "TERMINAL_OPERATORS"]


@dataclasses.dataclass(frozen=True)
class Fold:
    """A terminal whose payoffs do not depend on the hands (a fold; any fixed outcome):
    ``payoffs[p]`` to player ``p``, whatever the (compatible) hands."""
    payoffs: tuple[float, ...]          # [P]


@dataclasses.dataclass(frozen=True)
class Showdown:
    """A ranked showdown: the hand of higher ``strength`` wins ``stake`` from the other,
    equal strengths split (0 each). ``strengths[p][h]`` is the strength of player
    ``p``'s hand ``h`` (any real numbers; only their order matters; the strength of a
    hand the board blocks is never read). Zero-sum."""
    stake: float
    strengths: tuple                    # [P][H_p] float


@dataclasses.dataclass(frozen=True)
class PayoffTable:
    """Any payoff: ``payoffs[p][h0][h1]`` to player ``p`` when player 0 holds ``h0``
    and player 1 ``h1`` (entries of incompatible or blocked pairs are never read).
    ``[P, H0, H1]``: for small hand counts (its cost is ``H0 * H1`` per terminal)."""
    payoffs: np.ndarray                 # [P, H0, H1] float


#: The terminal operators a ``terminal_value()`` may return.
TERMINAL_OPERATORS = (Fold, Showdown, PayoffTable)
