"""Goofspiel with hidden bids (2 players), the simultaneous bids played in turn.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("goofspiel(cards=4)")
    >>> game.legal_actions()
    [1, 2, 3, 4]
"""

from __future__ import annotations

import functools
import math

from jaxcfr.game import LARGEST_TREE, TERMINAL, Game, GameError, too_large

__all__ = ["Goofspiel"]

# What each player learns after a round, from their own point of view.
_WON, _LOST, _TIE = ">", "<", "="


class _Tables:
    """Per-size constants shared by every goofspiel state with that many cards."""

    def __init__(self, cards: int):
        self.cards = cards
        self.bit = {c: 1 << (c - 1) for c in range(1, cards + 1)}
        self.card = {1 << (c - 1): c for c in range(1, cards + 1)}  # single-card hand -> card
        self.name = {c: str(c) for c in range(1, cards + 1)}
        # The cards in each hand (bit mask), ascending: the legal actions.
        self.hand = tuple(tuple(c for c in range(1, cards + 1) if mask >> (c - 1) & 1)
                          for mask in range(1 << cards))


@functools.lru_cache(maxsize=None)
def _tables(cards: int) -> _Tables:
    return _Tables(cards)


class Goofspiel(Game):
    """Imperfect-information goofspiel, turn-based: OpenSpiel's ``goofspiel`` with
    ``imp_info=True, points_order="descending", returns_type="win_loss"`` under
    ``convert_to_turn_based`` (same histories, information sets and returns).

    Rules:

    * Each player holds the cards ``1..cards`` (``2 <= cards <= 7``: 8 cards make
      3,040,424,649 nodes, more than :data:`jaxcfr.game.LARGEST_TREE`). The
      prize cards ``cards, cards-1, ..., 1`` come up one per round in that
      fixed descending order (there is no chance node).
    * Each round player 0 bids a card from their hand, then player 1 bids a
      card from theirs without seeing player 0's bid. Bid cards are spent.
      Legal actions are the cards still in hand, as ``int`` in ascending order.
      When each player has one card left the last round plays itself (as in
      OpenSpiel), so the game has ``cards - 1`` rounds of decisions.
    * The higher bid wins the round's prize value in points; equal bids discard
      the prize. Both players then learn only who won the round (won / lost /
      tie), never the opponent's card.
    * At the end the player with more points gets +1 and the other -1; equal
      points give 0 to both.

    The information-set key of player ``p`` is ``"p|"`` followed by one entry
    per round: their own bid and what they learnt (``>`` won, ``<`` lost,
    ``=`` tie), then their own bid in the current round if made, e.g.
    ``"1|4> 3= 1"``. The game is symmetric, so ``nash_value()`` is ``(0, 0)``.
    Tree sizes (histories / information sets): 4 cards 1,077 / 162; 5 cards
    26,931 / 2,124; 6 cards 969,523 histories (cheap to construct and step,
    too big to enumerate in a unit test).
    """

    __slots__ = ("_t", "_h0", "_h1", "_k0", "_k1", "_bid", "_points")
    num_players = 2

    def __init__(self, cards: int = 4):
        most = _most_cards()
        if isinstance(cards, bool) or not isinstance(cards, int) or not 2 <= cards <= most:
            why = ""
            if isinstance(cards, int) and cards > most:
                # (the count itself is huge for huge values: only computed where it is cheap)
                why = f": {too_large(f'{cards} cards', _tree_size(cards) if cards <= 64 else None)}"
            raise ValueError(f"goofspiel: cards must be an integer in 2..{most}, got "
                             f"{cards!r}{why}")
        self._t = _tables(cards)
        self._h0 = self._h1 = (1 << cards) - 1  # hands as bit masks: bit c-1 holds card c
        self._k0, self._k1 = "0|", "1|"        # the players' information-set keys
        self._bid = 0      # player 0's bid this round; non-zero exactly when player 1 is to act
        self._points = 0   # player 0's points minus player 1's

    def clone(self) -> "Goofspiel":
        new = _new(type(self))
        new._t = self._t
        new._h0 = self._h0
        new._h1 = self._h1
        new._k0 = self._k0
        new._k1 = self._k1
        new._bid = self._bid
        new._points = self._points
        return new

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return not self._h1

    def is_chance(self) -> bool:
        return False

    def player_to_act(self) -> int:
        if self._bid:
            return 1
        return 0 if self._h1 else TERMINAL

    def prize(self) -> int:
        """The prize card of the current round (0 once the game is over)."""
        return self._h1.bit_count()  # prizes descend with player 1's hand size

    # -- moves -------------------------------------------------------------
    def legal_actions(self) -> list:
        return list(self._t.hand[self._h1 if self._bid else self._h0])

    def step(self, action) -> None:
        t = self._t
        try:
            bit = t.bit[action] if action.__class__ is int else 0
        except KeyError:
            bit = 0
        if not self._bid:  # player 0 bids, or the game is over
            if not self._h1:
                raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
            if not self._h0 & bit:
                raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                                rule="illegal-action")
            self._h0 ^= bit
            self._k0 += t.name[action]
            self._bid = action
            return
        h1 = self._h1
        if not h1 & bit:
            raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                            rule="illegal-action")
        prize = h1.bit_count()
        bid0 = self._bid
        self._bid = 0
        h1 ^= bit
        if bid0 > action:
            self._points += prize
            o0, o1 = _WON, _LOST
        elif bid0 < action:
            self._points -= prize
            o0, o1 = _LOST, _WON
        else:
            o0 = o1 = _TIE
        if h1 & (h1 - 1):
            self._h1 = h1
            self._k0 += o0 + " "
            self._k1 += t.name[action] + o1 + " "
            return
        # One card each left: the last round (prize 1) plays itself, as in OpenSpiel.
        last0, last1 = t.card[self._h0], t.card[h1]
        if last0 > last1:
            self._points += 1
            l0, l1 = _WON, _LOST
        elif last0 < last1:
            self._points -= 1
            l0, l1 = _LOST, _WON
        else:
            l0 = l1 = _TIE
        self._k0 += f"{o0} {last0}{l0}"
        self._k1 += f"{action}{o1} {last1}{l1}"
        self._h0 = self._h1 = 0

    def terminal_returns(self) -> tuple:
        if self._h1:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        d = self._points
        return (1.0, -1.0) if d > 0 else (-1.0, 1.0) if d < 0 else (0.0, 0.0)

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        return self._k1 if player else self._k0

    def nash_value(self):
        return (0.0, 0.0)

    def tree_size(self):
        """The node count of the whole tree (at the root; ``None`` below it)."""
        cards = self._t.cards
        full = (1 << cards) - 1
        return _tree_size(cards) if self._h0 == self._h1 == full and not self._bid else None

    def __repr__(self) -> str:
        return f"Goofspiel(cards={self._t.cards}, keys=({self._k0!r}, {self._k1!r}))"


_new = object.__new__


def _tree_size(cards: int) -> int:
    """Nodes of the tree: per round with ``k`` cards in each hand, every history so far
    has player 0's node and ``k`` nodes of player 1; the last round plays itself."""
    n, nodes = cards, 0
    for k in range(n, 1, -1):
        nodes += (math.factorial(n) // math.factorial(k)) ** 2 * (1 + k)
    return nodes + math.factorial(n) ** 2


@functools.lru_cache(maxsize=None)
def _most_cards() -> int:
    """The most cards whose tree has at most ``LARGEST_TREE`` nodes."""
    n = 2
    while _tree_size(n + 1) <= LARGEST_TREE:
        n += 1
    return n
