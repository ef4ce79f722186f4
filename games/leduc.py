"""Leduc hold'em (2 players), with OpenSpiel's ``leduc_poker`` rules and a configurable deck.

Example::

    >>> import jaxcfr, games
    >>> game = jaxcfr.load_game("leduc_poker(ranks=4)")
    >>> len(game.chance_outcomes())
    8
"""

from __future__ import annotations

from jaxcfr import CHANCE, TERMINAL, Game, GameError, register

__all__ = ["LeducPoker"]

FOLD = "fold"
CALL = "call"
RAISE = "raise"
_LETTER = {FOLD: "f", CALL: "c", RAISE: "r"}
_RANK_NAMES = "23456789TJQKA"
_SUIT_NAMES = "shdc"
_MAX_RAISES = 2

# Legal-action lists by (facing a bet, raises left); the order is fold, call, raise.
_LEGAL = {
    (True, True): (FOLD, CALL, RAISE),
    (True, False): (FOLD, CALL),
    (False, True): (CALL, RAISE),
    (False, False): (CALL,),
}


class _Rules:
    """Per-game constants shared by every state of one game (never mutated)."""

    def __init__(self, ranks: int, suits: int, raise_sizes: tuple[int, int]):
        self.ranks = ranks
        self.suits = suits
        self.deck = ranks * suits
        self.raise_sizes = raise_sizes
        # Card c has rank c // suits (OpenSpiel: 0,1 = J; 2,3 = Q; 4,5 = K).
        self.rank = tuple(c // suits for c in range(self.deck))
        if ranks <= len(_RANK_NAMES) and suits <= len(_SUIT_NAMES):
            rank_names = _RANK_NAMES[len(_RANK_NAMES) - ranks:]
            self.label = tuple(rank_names[c // suits] + _SUIT_NAMES[c % suits]
                               for c in range(self.deck))
        else:
            self.label = tuple(f"{c // suits}.{c % suits}" for c in range(self.deck))
        # infoset-key prefix per (player, card); card == deck stands for "not dealt yet".
        self.prefix = tuple(tuple(f"{p}|{self.label[c]}|" for c in range(self.deck))
                            + (f"{p}|?|",) for p in range(2))
        self.outcomes: dict[tuple, tuple] = {}

    def chance(self, dealt: tuple) -> tuple:
        entry = self.outcomes.get(dealt)
        if entry is None:
            left = [c for c in range(self.deck) if c not in dealt]
            p = 1.0 / len(left)
            entry = self.outcomes[dealt] = tuple((c, p) for c in left)
        return entry


@register("leduc_poker")
class LeducPoker(Game):
    """Leduc hold'em for two players, as OpenSpiel's ``leduc_poker`` (default parameters).

    Rules:

    * The deck holds ``ranks * suits`` cards; card ``c`` (an ``int``) has rank
      ``c // suits`` (default: 3 ranks J < Q < K, 2 suits, 6 cards). Both
      players ante 1 chip.
    * Chance deals a private card to player 0, then to player 1, then (after
      the first betting round) one public card: three chance nodes, each
      uniform over the cards left in the deck; the chance action is the card.
    * Two betting rounds, each started by player 0. Actions, in this order,
      are ``"fold"`` (legal only when facing a bet), ``"call"`` (call, or check
      when not facing a bet) and ``"raise"`` (call, then add ``raise_sizes[0]``
      = 2 chips in round 1 or ``raise_sizes[1]`` = 4 chips in round 2; at most
      two raises per round). A round ends when both players have checked, or
      when a raise has been called; a fold ends the game.
    * Showdown: a player whose private card pairs the public card's rank wins;
      otherwise the higher private rank wins; equal ranks split the pot.
      Returns are chips won minus chips put in.

    With the defaults the tree has 9,457 histories and 936 information sets,
    as OpenSpiel's. The information-set key of player ``p`` is
    ``"p|card|round-1 bets"`` and, once the public card is out,
    ``"p|card|round-1 bets|public card|round-2 bets"``, with cards written
    rank+suit (e.g. ``"Js"``) and bets as letters ``f``/``c``/``r``, e.g.
    ``"1|Qh|rc|Ks|r"``. ``nash_value()`` is ``None`` (no closed form).
    """

    __slots__ = ("_r", "_cards", "_pub", "_round", "_stakes", "_ante", "_raises", "_calls",
                 "_player", "_returns")
    num_players = 2

    def __init__(self, ranks: int = 3, suits: int = 2, raise_sizes: tuple = (2, 4)):
        if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 2:
            raise ValueError(f"leduc_poker: ranks must be an integer >= 2, got {ranks!r}")
        if isinstance(suits, bool) or not isinstance(suits, int) or suits < 1:
            raise ValueError(f"leduc_poker: suits must be an integer >= 1, got {suits!r}")
        if ranks * suits < 3:
            raise ValueError(f"leduc_poker: the deck needs at least 3 cards, "
                             f"got ranks*suits = {ranks * suits}")
        try:
            sizes = tuple(raise_sizes)
        except TypeError:
            sizes = ()
        if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                      for s in sizes):
            raise ValueError(f"leduc_poker: raise_sizes must be two positive integers, "
                             f"got {raise_sizes!r}")
        self._r = _Rules(ranks, suits, sizes)
        self._cards = ()      # (player 0 card, player 1 card, public card), as dealt
        self._pub = ""        # public key part: round-1 bets [| public card | round-2 bets]
        self._round = 0       # betting round 0 or 1
        self._stakes = 1      # contribution level to match
        self._ante = (1, 1)   # chips put in, per player
        self._raises = 0      # raises this round
        self._calls = 0       # calls since the last raise this round
        self._player = CHANCE
        self._returns = None

    def clone(self) -> "LeducPoker":
        new = _new(LeducPoker)
        new._r = self._r
        new._cards = self._cards
        new._pub = self._pub
        new._round = self._round
        new._stakes = self._stakes
        new._ante = self._ante
        new._raises = self._raises
        new._calls = self._calls
        new._player = self._player
        new._returns = self._returns
        return new

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._player == TERMINAL

    def is_chance(self) -> bool:
        return self._player == CHANCE

    def player_to_act(self) -> int:
        return self._player

    # -- moves -------------------------------------------------------------
    def chance_outcomes(self):
        if self._player == CHANCE:
            return list(self._r.chance(self._cards))
        return None

    def legal_actions(self) -> list:
        p = self._player
        if p < 0:
            return []
        return list(_LEGAL[self._stakes > self._ante[p], self._raises < _MAX_RAISES])

    def step(self, action) -> None:
        p = self._player
        if p == TERMINAL:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if p == CHANCE:
            self._deal(action)
            return
        letter = _LETTER.get(action) if isinstance(action, str) else None
        facing = self._stakes > self._ante[p]
        if letter is None or action not in _LEGAL[facing, self._raises < _MAX_RAISES]:
            raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                            rule="illegal-action")
        self._pub += letter
        if letter == "f":
            self._returns = (-float(self._ante[0]), float(self._ante[0])) if p == 0 else \
                (float(self._ante[1]), -float(self._ante[1]))
            self._player = TERMINAL
            return
        ante = list(self._ante)
        if letter == "c":
            ante[p] = self._stakes
            self._ante = (ante[0], ante[1])
            self._calls += 1
            if (self._raises == 0 and self._calls == 2) or (self._raises > 0 and self._calls == 1):
                if self._round == 0:
                    self._round = 1
                    self._raises = 0
                    self._calls = 0
                    self._player = CHANCE
                else:
                    self._showdown()
                return
        else:
            self._stakes += self._r.raise_sizes[self._round]
            ante[p] = self._stakes
            self._ante = (ante[0], ante[1])
            self._raises += 1
            self._calls = 0
        self._player = 1 - p

    def _deal(self, card) -> None:
        if not any(card == c for c, _ in self._r.chance(self._cards)):
            raise GameError(f"{card!r} is not a card left in the deck (dealt: {list(self._cards)})",
                            rule="illegal-action")
        self._cards = self._cards + (card,)
        if len(self._cards) == 2:
            self._player = 0
        elif len(self._cards) == 3:
            self._pub += "|" + self._r.label[card] + "|"
            self._player = 0

    def _showdown(self) -> None:
        rank = self._r.rank
        public = rank[self._cards[2]]
        r0, r1 = rank[self._cards[0]], rank[self._cards[1]]
        s0 = (r0 == public, r0)
        s1 = (r1 == public, r1)
        win = float(self._ante[0])  # both contributed the same at a showdown
        if s0 > s1:
            self._returns = (win, -win)
        elif s1 > s0:
            self._returns = (-win, win)
        else:
            self._returns = (0.0, 0.0)
        self._player = TERMINAL

    def terminal_returns(self) -> tuple:
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        cards = self._cards
        card = cards[player] if player < len(cards) else self._r.deck
        return self._r.prefix[player][card] + self._pub

    def __repr__(self) -> str:
        return f"LeducPoker(cards={self._cards}, bets={self._pub!r})"


_new = object.__new__
