"""Liar's dice (2 players) as a public tree: each player's dice are their private hand.

Example::

    >>> from jaxcfr_games.public_liars_dice import PublicLiarsDice
    >>> len(PublicLiarsDice(dice=1, sides=6).hands(0))
    6
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from jaxcfr.game import TERMINAL, GameError, PayoffTable, PublicGame

__all__ = ["PublicLiarsDice"]

LIAR = "liar"


class _Rules:
    def __init__(self, dice: int, sides: int):
        self.sides = sides
        total = 2 * dice
        self.bids = tuple((i // sides + 1, i % sides + 1) for i in range(total * sides))
        self.labels = tuple(f"{q}-{f}" for q, f in self.bids)
        self.index = {label: i for i, label in enumerate(self.labels)}
        self.index[LIAR] = len(self.labels)
        self.legal = (self.labels,) + tuple(self.labels[last + 1:] + (LIAR,)
                                            for last in range(len(self.labels)))
        # hands: sorted multisets of faces, weighted by their number of orderings
        rolls = list(itertools.combinations_with_replacement(range(1, sides + 1), dice))
        sep = "" if sides <= 9 else ","
        self.hands = tuple(sep.join(str(f) for f in r) for r in rolls)
        self.weights = tuple(math.factorial(dice) / math.prod(
            math.factorial(r.count(f)) for f in set(r)) for r in rolls)
        # matches[f, h]: dice of hand h counting towards face f (faces == sides are wild)
        self.matches = np.array([[sum(1 for x in r if x == f or x == sides) for r in rolls]
                                 for f in range(1, sides + 1)], np.int64)     # [S, H]
        self.tables: dict = {}

    def table(self, last: int, caller: int) -> PayoffTable:
        key = (last, caller)
        t = self.tables.get(key)
        if t is None:
            quantity, face = self.bids[last]
            m = self.matches[face - 1]
            caller_wins = (m[:, None] + m[None, :]) < quantity                 # [H0, H1]
            p0 = np.where(caller_wins == (caller == 0), 1.0, -1.0)
            t = self.tables[key] = PayoffTable(np.stack([p0, -p0]))
        return t


class PublicLiarsDice(PublicGame):
    """Liar's dice, the game of ``liars_dice(dice, sides)``, as a public tree.

    Hands: a player's dice as a sorted multiset (weighted by its orderings); the dice of
    the two players are independent (no cards). Public: the bids, as ``liars_dice``;
    ``"liar"`` ends the game with a :class:`PayoffTable` over the two hands (the bidder
    wins 1 if at least ``q`` dice show ``f``, faces equal to ``sides`` wild).
    """

    __slots__ = ("_r", "_last", "_player", "_caller")

    def __init__(self, dice: int = 1, sides: int = 6):
        for name, value, least in (("dice", dice, 1), ("sides", sides, 2)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"public liars_dice: {name} must be an integer >= {least}, "
                                 f"got {value!r}")
        if 2 * dice * sides > 24:
            raise ValueError(f"public liars_dice: dice={dice}, sides={sides} make "
                             f"{2 ** (2 * dice * sides + 1):,} public nodes; 2 * dice * sides "
                             "may be at most 24")
        self._r = _Rules(dice, sides)
        self._last = -1
        self._player = 0
        self._caller = -1

    def hands(self, player):
        return self._r.hands

    def hand_weights(self, player):
        return self._r.weights

    def is_terminal(self):
        return self._caller >= 0

    def is_chance(self):
        return False

    def player_to_act(self):
        return TERMINAL if self._caller >= 0 else self._player

    def legal_actions(self):
        return [] if self._caller >= 0 else list(self._r.legal[self._last + 1])

    def step(self, action):
        r = self._r
        i = r.index.get(action, -1) if isinstance(action, str) else -1
        if self._caller >= 0 or i <= self._last or (i == len(r.labels) and self._last < 0):
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        if i == len(r.labels):
            self._caller = self._player
        else:
            self._last = i
            self._player = 1 - self._player

    def clone(self):
        new = PublicLiarsDice.__new__(PublicLiarsDice)
        new._r, new._last, new._player, new._caller = (self._r, self._last, self._player,
                                                       self._caller)
        return new

    def terminal_value(self):
        return self._r.table(self._last, self._caller)

    def __repr__(self):
        return f"PublicLiarsDice(last={self._last}, caller={self._caller})"
