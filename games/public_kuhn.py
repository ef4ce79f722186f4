"""Kuhn poker (2 to 5 players) as a public tree: each player's card is their private hand.

Example::

    >>> from jaxcfr_games.public_kuhn import PublicKuhn
    >>> game = PublicKuhn()
    >>> game.hands(0), game.legal_actions()
    ((0, 1, 2), ['pass', 'bet'])
    >>> PublicKuhn(players=3).hands(0)               # four cards, each a hand
    (0, 1, 2, 3)
"""

from __future__ import annotations

import functools

import numpy as np

from jaxcfr.game import TERMINAL, GameError, Fold, PayoffTable, PublicGame, Showdown

from .kuhn import _Rules as _KuhnRules

__all__ = ["PublicKuhn"]

#: The most players of the public Kuhn (its terminals are dense tables of
#: ``(players + 1) ** players`` entries per player).
MOST_PLAYERS = 5

PASS = "pass"
BET = "bet"
_LETTER = {PASS: "p", BET: "b"}
_CARDS = (0, 1, 2)
#: Final betting letters -> the terminal operator (player 0's view of the stakes).
_ENDS = {"pp": Showdown(1.0, (_CARDS, _CARDS)), "bb": Showdown(2.0, (_CARDS, _CARDS)),
         "pbb": Showdown(2.0, (_CARDS, _CARDS)), "bp": Fold((1.0, -1.0)),
         "pbp": Fold((-1.0, 1.0))}


@functools.lru_cache(maxsize=None)
def _ends(players: int) -> dict:
    """Final betting letters -> the terminal operator of the ``players``-player game (more
    than two): a :class:`PayoffTable` ``[P, deck, ..., deck]`` per betting sequence, the
    highest card among those still in taking the pot (``kuhn_poker``'s rules); entries of
    tuples that repeat a card are 0 (never read)."""
    rules = _KuhnRules(players)
    deck = rules.deck
    ends: dict = {}
    stack = [("", -1)]
    while stack:
        hist, first = stack.pop()
        if (first < 0 and len(hist) == players) or (first >= 0 and len(hist) == players + first):
            contenders, returns = rules.showdown(hist, first)
            table = np.zeros((players,) + (deck,) * players)
            for cards in np.ndindex(*(deck,) * players):
                if len(set(cards)) == players:
                    winner = max(contenders, key=cards.__getitem__)
                    table[(slice(None),) + cards] = returns[winner]
            ends[hist] = PayoffTable(table)
            continue
        for letter in "pb":
            bettor = len(hist) % players if letter == "b" and first < 0 else first
            stack.append((hist + letter, bettor))
    return ends


class PublicKuhn(PublicGame):
    """Kuhn poker, the game of ``kuhn_poker(players)`` written as a public tree.

    Hands: the cards ``0 < 1 < ... < players`` (one per player, never the same:
    ``hand_cards``), uniform. Betting: in seat order, ``"pass"`` / ``"bet"``; once
    somebody has bet, every other player acts once more, calling with ``"bet"`` or
    folding with ``"pass"``. Two players: a showdown is a :class:`Showdown` of stake 1
    (checked down) or 2 (a called bet), a fold a :class:`Fold`, and ``nash_value()`` is
    ``(-1/18, 1/18)``. Three to five players: every terminal is a :class:`PayoffTable`
    over the players' cards (the highest card still in takes the pot).
    """

    __slots__ = ("num_players", "_hist", "_ends")

    def __init__(self, players: int = 2):
        if isinstance(players, bool) or not isinstance(players, int) or \
                not 2 <= players <= MOST_PLAYERS:
            raise ValueError(f"public kuhn_poker: players must be an integer in "
                             f"2..{MOST_PLAYERS}, got {players!r}")
        self.num_players = players
        self._hist = ""
        self._ends = _ENDS if players == 2 else _ends(players)

    def hands(self, player):
        return _CARDS if self.num_players == 2 else tuple(range(self.num_players + 1))

    def hand_cards(self, player):
        return tuple((c,) for c in self.hands(player))

    def is_terminal(self):
        return self._hist in self._ends

    def is_chance(self):
        return False

    def player_to_act(self):
        return TERMINAL if self._hist in self._ends else len(self._hist) % self.num_players

    def legal_actions(self):
        return [] if self._hist in self._ends else [PASS, BET]

    def step(self, action):
        if self._hist in self._ends or action not in _LETTER:
            raise GameError(f"illegal action {action!r} after {self._hist!r}",
                            rule="illegal-action")
        self._hist += _LETTER[action]

    def clone(self):
        new = object.__new__(type(self))
        new.num_players = self.num_players
        new._hist = self._hist
        new._ends = self._ends
        return new

    def terminal_value(self):
        return self._ends[self._hist]

    def nash_value(self):
        return (-1.0 / 18.0, 1.0 / 18.0) if self.num_players == 2 else None

    def __repr__(self):
        players = "" if self.num_players == 2 else f"players={self.num_players}, "
        return f"PublicKuhn({players}{self._hist!r})"
