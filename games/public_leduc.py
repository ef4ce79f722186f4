"""Leduc hold'em as a public tree: the private card is the hand, the board card public chance.

Example::

    >>> from jaxcfr_games.public_leduc import PublicLeduc
    >>> game = PublicLeduc(ranks=13)
    >>> len(game.hands(0))
    26
"""

from __future__ import annotations

from jaxcfr.game import CHANCE, TERMINAL, GameError, Fold, PublicGame, Showdown

from .leduc import Deck, _betting_tree

__all__ = ["PublicLeduc"]


class _Rules:
    """Per-game constants shared by every state (never mutated)."""

    def __init__(self, ranks: int, suits: int, raise_sizes: tuple):
        self.deck = Deck(ranks, suits)
        n = self.deck.deck
        self.cards = tuple(range(n))
        self.hand_cards = tuple((c,) for c in self.cards)
        # the betting automaton after both private cards
        self.start = _betting_tree(raise_sizes).next[None].next[None]
        p = 1.0 / (n - 2)            # a board card given two private cards
        self.outcomes = tuple((c, p) for c in self.cards)
        rank = self.deck.rank
        # strength of each private card on each board: (pairs the board, rank)
        self.strengths = tuple(tuple(float((rank[h] == rank[b]) * ranks + rank[h])
                                     for h in self.cards) for b in self.cards)
        self.showdowns: dict = {}

    def showdown(self, board: int, stake: float) -> Showdown:
        key = (board, stake)
        s = self.showdowns.get(key)
        if s is None:
            st = self.strengths[board]
            s = self.showdowns[key] = Showdown(stake, (st, st))
        return s


class PublicLeduc(PublicGame):
    """Leduc hold'em (the game of ``leduc_poker(ranks, suits, raise_sizes)``) as a public
    tree.

    Hands: the private card (``ranks * suits`` cards, uniform, the two players' cards
    distinct). Public: two betting rounds as ``leduc_poker`` (actions ``"fold"``,
    ``"call"``, ``"raise"``), between them the board card (public chance, uniform over
    the cards the hands do not hold; it blocks the hand holding it). A fold is a
    :class:`Fold`, a showdown a :class:`Showdown` of the chips each put in, a card
    pairing the board beating any unpaired card, then the higher rank.
    """

    __slots__ = ("_r", "_node", "_board")

    def __init__(self, ranks: int = 3, suits: int = 2, raise_sizes: tuple = (2, 4)):
        for name, value, least in (("ranks", ranks, 2), ("suits", suits, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"public leduc_poker: {name} must be an integer >= {least}, "
                                 f"got {value!r}")
        if ranks * suits < 3:
            raise ValueError("public leduc_poker: the deck needs at least 3 cards")
        sizes = tuple(raise_sizes) if isinstance(raise_sizes, (tuple, list)) else ()
        if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                      for s in sizes):
            raise ValueError(f"public leduc_poker: raise_sizes must be two positive integers, "
                             f"got {raise_sizes!r}")
        self._r = _Rules(ranks, suits, sizes)
        self._node = self._r.start
        self._board = -1

    def hands(self, player):
        return self._r.cards

    def hand_cards(self, player):
        return self._r.hand_cards

    def is_terminal(self):
        return self._node.player == TERMINAL

    def is_chance(self):
        return self._node.player == CHANCE

    def player_to_act(self):
        return self._node.player

    def legal_actions(self):
        return list(self._node.legal)

    def chance_outcomes(self):
        return list(self._r.outcomes) if self._node.player == CHANCE else None

    def outcome_cards(self, outcome):
        return (outcome,)

    def step(self, action):
        node = self._node
        if node.player == CHANCE:
            if isinstance(action, bool) or not isinstance(action, int) or \
                    not 0 <= action < self._r.deck.deck:
                raise GameError(f"{action!r} is not a card", rule="illegal-action")
            self._board = action
            self._node = node.next[None]
            return
        try:
            self._node = node.next[action]
        except (KeyError, TypeError):
            raise GameError(f"illegal action {action!r}; legal: {list(node.legal)}",
                            rule="illegal-action") from None

    def clone(self):
        new = PublicLeduc.__new__(PublicLeduc)
        new._r, new._node, new._board = self._r, self._node, self._board
        return new

    def terminal_value(self):
        end = self._node
        if end.folder >= 0:
            lost = float(end.ante[end.folder])
            return Fold((-lost, lost) if end.folder == 0 else (lost, -lost))
        return self._r.showdown(self._board, float(end.ante[0]))

    def __repr__(self):
        return f"PublicLeduc(board={self._board})"
