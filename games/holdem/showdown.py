"""Fold and showdown values as operators over hand vectors, with card removal.

At a terminal of a hold'em spot player ``i``'s counterfactual value of hand ``h`` is a
sum over the opponent's hands ``o`` that share no card with ``h`` (nor with the board),
weighted by the opponent's reach ``r(o)``:

* a fold pays a constant, so it needs the *compatible mass*
  ``m(h) = sum_{o disjoint from h} r(o)``; by inclusion-exclusion over the two cards of
  ``h``, ``m(h) = R - R_a - R_b + r(h)``: ``R`` the total, ``R_c`` the mass of the hands
  holding card ``c``, and ``r(h)`` the mass of the one hand holding both (the same combo,
  subtracted twice). ``O(H + 52)``.
* a showdown pays ``+stake`` against weaker hands and ``-stake`` against stronger ones
  (ties 0), so it needs the *net mass* ``n(h) = sum_{o disjoint, weaker} r(o) -
  sum_{o disjoint, stronger} r(o)``. With the opponent's hands sorted by strength and
  running sums of the mass in total and per card, ``weaker(h) = P(<s) - P_a(<s) -
  P_b(<s)``: the combo ``h`` itself, the one hand holding both cards, ties with ``h``
  and is in neither sum. ``O(H log H + 52 H)``, the sort done once per board.

:class:`HandOperators` holds one board's preparation for a pair of hand lists (indices
into :data:`~.cards.HANDS`); its :meth:`~HandOperators.fold` and
:meth:`~HandOperators.showdown` take the opponent's reach ``[H_opp, *b]`` (any trailing
batch axes) and return ``[H_own, *b]``. Hands that touch the board count for nothing
and get 0. ``tests/test_holdem_showdown.py`` checks both against the double loop.
"""

from __future__ import annotations

import numpy as np

from .cards import HANDS, NUM_CARDS, NUM_HANDS, HoldemError, blocked

__all__ = ["HandOperators"]


class HandOperators:
    """One board's fold and showdown operators from the opponent's hands to one's own.

    Args:
      own: ``[H]`` hand indices (into :data:`~.cards.HANDS`) of the player valued.
      opp: ``[K]`` hand indices of the opponent.
      board: the board's cards (3 to 5); hands holding one are dead.
      strengths: ``[1326]`` strength of every hand on this board (a full 5-card board:
        :func:`~.strength.board_strengths`); only :meth:`showdown` needs it.
    """

    def __init__(self, own, opp, board=(), strengths=None):
        self.own = np.asarray(own, np.int64)
        self.opp = np.asarray(opp, np.int64)
        for name, h in (("own", self.own), ("opp", self.opp)):
            if h.ndim != 1 or (h.size and (h.min() < 0 or h.max() >= NUM_HANDS)):
                raise HoldemError(f"{name} hands are indices 0..1325, got {h!r}")
            if len(np.unique(h)) != len(h):
                raise HoldemError(f"{name} hands repeat a hand")
        dead = blocked(board)
        self.own_alive = ~dead[self.own]                                    # [H]
        self.opp_alive = ~dead[self.opp]                                    # [K]
        cards = np.asarray(HANDS, np.int64)
        self.own_cards = cards[self.own]                                    # [H, 2]
        self.opp_cards = cards[self.opp]                                    # [K, 2]
        # the opponent's slot of each own hand's combo (-1: not in the opponent's list)
        slot = np.full(NUM_HANDS, -1, np.int64)
        slot[self.opp] = np.arange(len(self.opp))
        self.same = slot[self.own]                                          # [H]
        self.strengths = None
        if strengths is not None:
            s = np.asarray(strengths)
            if s.shape != (NUM_HANDS,):
                raise HoldemError(f"strengths are [1326], got shape {s.shape}")
            self.strengths = s
            opp_s = s[self.opp]
            self.order = np.argsort(opp_s, kind="stable")                   # [K]
            sorted_s = opp_s[self.order]
            own_s = s[self.own]
            self.below = np.searchsorted(sorted_s, own_s, "left")           # [H]
            self.upto = np.searchsorted(sorted_s, own_s, "right")           # [H]
            self.sorted_cards = self.opp_cards[self.order]                  # [K, 2]

    def _reach(self, reach) -> np.ndarray:
        r = np.asarray(reach, np.float64)
        if r.shape[:1] != (len(self.opp),):
            raise HoldemError(f"the opponent's reach is [{len(self.opp)}, *b], got shape "
                              f"{r.shape}")
        return r * self.opp_alive.reshape((-1,) + (1,) * (r.ndim - 1))

    def _own(self, x: np.ndarray) -> np.ndarray:
        return x * self.own_alive.reshape((-1,) + (1,) * (x.ndim - 1))

    def fold(self, reach) -> np.ndarray:
        """``[H, *b]``: the opponent's reach on hands disjoint from each own hand."""
        r = self._reach(reach)
        total = r.sum(axis=0)                                               # [*b]
        per_card = np.zeros((NUM_CARDS,) + r.shape[1:])
        np.add.at(per_card, self.opp_cards[:, 0], r)
        np.add.at(per_card, self.opp_cards[:, 1], r)
        same = np.where((self.same >= 0).reshape((-1,) + (1,) * (r.ndim - 1)),
                        r[np.maximum(self.same, 0)], 0.0)
        mass = total - per_card[self.own_cards[:, 0]] - per_card[self.own_cards[:, 1]] + same
        return self._own(mass)

    def showdown(self, reach) -> np.ndarray:
        """``[H, *b]``: the opponent's disjoint reach on weaker hands less that on
        stronger ones (multiply by the stake for the value)."""
        if self.strengths is None:
            raise HoldemError("a showdown needs the hands' strengths on a full board")
        r = self._reach(reach)[self.order]                                  # [K, *b] sorted
        K = len(self.opp)
        prefix = np.zeros((K + 1,) + r.shape[1:])
        np.cumsum(r, axis=0, out=prefix[1:])                                # [K + 1, *b]
        cards = np.zeros((K, NUM_CARDS) + r.shape[1:])
        rows = np.arange(K)
        cards[rows, self.sorted_cards[:, 0]] += r
        cards[rows, self.sorted_cards[:, 1]] += r
        card_prefix = np.zeros((K + 1, NUM_CARDS) + r.shape[1:])
        np.cumsum(cards, axis=0, out=card_prefix[1:])                       # [K + 1, 52, *b]
        a, b = self.own_cards[:, 0], self.own_cards[:, 1]
        lo, hi = self.below, self.upto
        weaker = prefix[lo] - card_prefix[lo, a] - card_prefix[lo, b]
        stronger = ((prefix[K] - prefix[hi]) - (card_prefix[K, a] - card_prefix[hi, a])
                    - (card_prefix[K, b] - card_prefix[hi, b]))
        return self._own(weaker - stronger)
