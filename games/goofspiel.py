"""Goofspiel with hidden bids (2 players), the simultaneous bids played in turn.

Example::

    >>> import jaxcfr, games
    >>> game = jaxcfr.load_game("goofspiel(cards=4)")
    >>> game.legal_actions()
    [1, 2, 3, 4]
"""

from __future__ import annotations

from jaxcfr import TERMINAL, Game, GameError, register

__all__ = ["Goofspiel"]

# What each player learns after a round, from their own point of view.
_WON, _LOST, _TIE = ">", "<", "="


@register("goofspiel")
class Goofspiel(Game):
    """Imperfect-information goofspiel, turn-based: OpenSpiel's ``goofspiel`` with
    ``imp_info=True, points_order="descending", returns_type="win_loss"`` under
    ``convert_to_turn_based`` (same histories, information sets and returns).

    Rules:

    * Each player holds the cards ``1..cards`` (``2 <= cards <= 13``). The
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

    __slots__ = ("_cards", "_hands", "_obs", "_bid", "_round", "_points", "_player")
    num_players = 2

    def __init__(self, cards: int = 4):
        if isinstance(cards, bool) or not isinstance(cards, int) or not 2 <= cards <= 13:
            raise ValueError(f"goofspiel: cards must be an integer in 2..13, got {cards!r}")
        self._cards = cards
        full = tuple(range(1, cards + 1))
        self._hands = (full, full)   # cards left in hand, ascending
        self._obs = ("0|", "1|")     # infoset keys
        self._bid = 0                # player 0's bid this round (0 before it is made)
        self._round = 0              # rounds completed
        self._points = 0             # player 0's points minus player 1's
        self._player = 0

    def clone(self) -> "Goofspiel":
        new = _new(Goofspiel)
        new._cards = self._cards
        new._hands = self._hands
        new._obs = self._obs
        new._bid = self._bid
        new._round = self._round
        new._points = self._points
        new._player = self._player
        return new

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._player == TERMINAL

    def is_chance(self) -> bool:
        return False

    def player_to_act(self) -> int:
        return self._player

    def prize(self) -> int:
        """The prize card of the current round (0 once the game is over)."""
        return max(self._cards - self._round, 0)

    # -- moves -------------------------------------------------------------
    def legal_actions(self) -> list:
        p = self._player
        return [] if p < 0 else list(self._hands[p])

    def step(self, action) -> None:
        p = self._player
        if p < 0:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        hand = self._hands[p]
        if isinstance(action, bool) or not isinstance(action, int) or action not in hand:
            raise GameError(f"illegal action {action!r}; legal: {list(hand)}",
                            rule="illegal-action")
        i = hand.index(action)
        hand = hand[:i] + hand[i + 1:]
        if p == 0:
            self._hands = (hand, self._hands[1])
            self._obs = (f"{self._obs[0]}{action}", self._obs[1])
            self._bid = action
            self._player = 1
            return
        self._hands = (self._hands[0], hand)
        o0, o1 = self._resolve(self._bid, action)
        obs0 = f"{self._obs[0]}{o0}"
        obs1 = f"{self._obs[1]}{action}{o1}"
        self._bid = 0
        if len(hand) == 1:
            # One card each left: the last round plays itself, as in OpenSpiel.
            last0, last1 = self._hands[0][0], hand[0]
            o0, o1 = self._resolve(last0, last1)
            obs0 = f"{obs0} {last0}{o0}"
            obs1 = f"{obs1} {last1}{o1}"
            self._hands = ((), ())
            self._player = TERMINAL
        else:
            obs0 += " "
            obs1 += " "
            self._player = 0
        self._obs = (obs0, obs1)

    def _resolve(self, bid0: int, bid1: int) -> tuple:
        """Score a round; return what each player learns."""
        prize = self._cards - self._round
        self._round += 1
        if bid0 > bid1:
            self._points += prize
            return _WON, _LOST
        if bid0 < bid1:
            self._points -= prize
            return _LOST, _WON
        return _TIE, _TIE

    def terminal_returns(self) -> tuple:
        if self._player != TERMINAL:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        d = self._points
        return (1.0, -1.0) if d > 0 else (-1.0, 1.0) if d < 0 else (0.0, 0.0)

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        return self._obs[player]

    def nash_value(self):
        return (0.0, 0.0)

    def __repr__(self) -> str:
        return (f"Goofspiel(cards={self._cards}, round={self._round}, "
                f"keys={self._obs})")


_new = object.__new__
