"""Kuhn poker (2 players) as a public tree: each player's card is their private hand.

Example::

    >>> from jaxcfr_games.public_kuhn import PublicKuhn
    >>> game = PublicKuhn()
    >>> game.hands(0), game.legal_actions()
    ((0, 1, 2), ['pass', 'bet'])
"""

from __future__ import annotations

from jaxcfr.game import TERMINAL, GameError, Fold, PublicGame, Showdown

__all__ = ["PublicKuhn"]

PASS = "pass"
BET = "bet"
_LETTER = {PASS: "p", BET: "b"}
_CARDS = (0, 1, 2)
#: Final betting letters -> the terminal operator (player 0's view of the stakes).
_ENDS = {"pp": Showdown(1.0, (_CARDS, _CARDS)), "bb": Showdown(2.0, (_CARDS, _CARDS)),
         "pbb": Showdown(2.0, (_CARDS, _CARDS)), "bp": Fold((1.0, -1.0)),
         "pbp": Fold((-1.0, 1.0))}


class PublicKuhn(PublicGame):
    """Two-player Kuhn poker, the game of ``kuhn_poker`` written as a public tree.

    Hands: the cards ``0 < 1 < 2`` (one per player, never the same: ``hand_cards``),
    uniform. Betting: player 0 then player 1, ``"pass"`` / ``"bet"``; a bet is called
    by ``"bet"`` or folded by ``"pass"``. A showdown is a :class:`Showdown` of stake 1
    (checked down) or 2 (a called bet), a fold a :class:`Fold`. ``nash_value()`` is
    ``(-1/18, 1/18)``.
    """

    __slots__ = ("_hist",)

    def __init__(self):
        self._hist = ""

    def hands(self, player):
        return _CARDS

    def hand_cards(self, player):
        return tuple((c,) for c in _CARDS)

    def is_terminal(self):
        return self._hist in _ENDS

    def is_chance(self):
        return False

    def player_to_act(self):
        return TERMINAL if self._hist in _ENDS else len(self._hist) % 2

    def legal_actions(self):
        return [] if self._hist in _ENDS else [PASS, BET]

    def step(self, action):
        if self._hist in _ENDS or action not in _LETTER:
            raise GameError(f"illegal action {action!r} after {self._hist!r}",
                            rule="illegal-action")
        self._hist += _LETTER[action]

    def clone(self):
        new = PublicKuhn.__new__(PublicKuhn)
        new._hist = self._hist
        return new

    def terminal_value(self):
        return _ENDS[self._hist]

    def nash_value(self):
        return (-1.0 / 18.0, 1.0 / 18.0)

    def __repr__(self):
        return f"PublicKuhn({self._hist!r})"
