"""Dice poker whose rolls are drawn, not enumerated: the reference game for sampled chance.

Example::

    >>> import random, jaxcfr
    >>> game = jaxcfr.load_game("sampled_dice_poker(dice=5, sides=6)")
    >>> game.chance_outcomes() is None
    True
    >>> roll, prob = game.sample_chance(random.Random(0))
"""

from __future__ import annotations

import math
import random
from collections import Counter

from jaxcfr.game import CHANCE, TERMINAL, Game, GameError

__all__ = ["SampledDicePoker", "hand_strength"]

CHECK, BET, FOLD, CALL = "check", "bet", "fold", "call"
_OPEN = (CHECK, BET)
_FACING = (FOLD, CALL)
_LETTER = {CHECK: "k", BET: "b", FOLD: "f", CALL: "c"}

# Betting sequences (letters) -> whether the game is over, and who acts next otherwise.
_NEXT = {"": 0, "k": 1, "b": 1, "kb": 0}
_OVER = {"kk", "bf", "bc", "kbf", "kbc"}


def hand_strength(roll: tuple) -> tuple:
    """Poker-dice strength of a roll: compare the results with ``<``.

    The pattern of equal faces ranks first (five of a kind > four of a kind >
    full house > three of a kind > two pairs > one pair > nothing, i.e. the
    multiplicities sorted descending, compared lexicographically), then the
    faces grouped by multiplicity, largest group first and higher faces first.
    """
    groups = sorted(Counter(roll).items(), key=lambda fc: (fc[1], fc[0]), reverse=True)
    return (tuple(c for _, c in groups), tuple(f for f, _ in groups))


class SampledDicePoker(Game):
    """Two-player dice poker with one non-enumerated roll per player.

    Rules:

    * Both players ante 1 chip. Chance rolls player 0's ``dice`` dice (faces
      ``1..sides``; ``1 <= dice <= 100``, ``2 <= sides <= 9``) as one chance
      event, then player 1's: the chance action is the sorted tuple of faces,
      with its exact multinomial probability
      ``dice! / prod(count_f!) / sides**dice``. Each player sees only their
      own roll. These chance nodes are not enumerated: ``chance_outcomes()``
      is ``None`` and ``sample_chance(rng)`` draws a roll directly.
    * One betting round, Kuhn-style: player 0 may ``"check"`` or ``"bet"`` 1
      chip; after a check player 1 may ``"check"`` (showdown) or ``"bet"``;
      facing a bet a player may ``"fold"`` (losing their ante) or ``"call"``.
    * Showdown: the stronger roll by :func:`hand_strength` wins the pot
      (returns are chips won minus chips put in); equal strength splits it.

    The information-set key of player ``p`` is ``"p|roll|bets"``, the roll as
    its sorted digits and bets as letters (``k`` check, ``b`` bet, ``f`` fold,
    ``c`` call), e.g. ``"1|12256|kb"``. ``nash_value()`` is ``None``.
    """

    __slots__ = ("_dice", "_sides", "_rolls", "_prefix", "_bets", "_player", "_returns")
    num_players = 2

    def __init__(self, dice: int = 5, sides: int = 6):
        if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= 100:
            raise ValueError(f"sampled_dice_poker: dice must be an integer in 1..100, got {dice!r}")
        if isinstance(sides, bool) or not isinstance(sides, int) or not 2 <= sides <= 9:
            raise ValueError(f"sampled_dice_poker: sides must be an integer in 2..9, got {sides!r}")
        self._dice = dice
        self._sides = sides
        self._rolls = ()      # sorted roll per player, as drawn
        self._prefix = ("0||", "1||")  # infoset-key prefixes "p|roll|"
        self._bets = ""
        self._player = CHANCE
        self._returns = None

    def clone(self) -> "SampledDicePoker":
        new = _new(type(self))
        new._dice = self._dice
        new._sides = self._sides
        new._rolls = self._rolls
        new._prefix = self._prefix
        new._bets = self._bets
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

    # -- chance ------------------------------------------------------------
    def chance_outcomes(self):
        return None  # too many rolls to list: drawn by sample_chance

    def roll_probability(self, roll: tuple) -> float:
        """The exact probability of rolling the sorted tuple ``roll``."""
        ways = math.factorial(self._dice)
        for c in Counter(roll).values():
            ways //= math.factorial(c)
        return ways / self._sides ** self._dice

    def sample_chance(self, rng: random.Random) -> tuple:
        if self._player != CHANCE:
            raise GameError("sample_chance() called at a node that is not a chance node",
                            rule="chance-sampling")
        roll = tuple(sorted(rng.randint(1, self._sides) for _ in range(self._dice)))
        return roll, self.roll_probability(roll)

    # -- moves -------------------------------------------------------------
    def legal_actions(self) -> list:
        if self._player < 0:
            return []
        return list(_FACING if self._bets.endswith("b") else _OPEN)

    def step(self, action) -> None:
        p = self._player
        if p == TERMINAL:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if p == CHANCE:
            if not (isinstance(action, tuple) and len(action) == self._dice
                    and all(isinstance(f, int) and 1 <= f <= self._sides for f in action)
                    and list(action) == sorted(action)):
                raise GameError(f"{action!r} is not a sorted roll of {self._dice} dice "
                                f"with faces 1..{self._sides}", rule="illegal-action")
            seat = len(self._rolls)
            self._rolls = self._rolls + (action,)
            mine = f"{seat}|{''.join(map(str, action))}|"
            self._prefix = (mine, self._prefix[1]) if seat == 0 else (self._prefix[0], mine)
            if len(self._rolls) == 2:
                self._player = 0
            return
        legal = _FACING if self._bets.endswith("b") else _OPEN
        if not isinstance(action, str) or action not in legal:
            raise GameError(f"illegal action {action!r}; legal: {list(legal)}",
                            rule="illegal-action")
        bets = self._bets = self._bets + _LETTER[action]
        if bets in _OVER:
            self._returns = self._payoff(bets)
            self._player = TERMINAL
        else:
            self._player = _NEXT[bets]

    def _payoff(self, bets: str) -> tuple:
        if bets[-1] == "f":
            folder = (len(bets) - 1) % 2      # player who folded
            return (-1.0, 1.0) if folder == 0 else (1.0, -1.0)
        stake = 2.0 if "b" in bets else 1.0
        s0, s1 = hand_strength(self._rolls[0]), hand_strength(self._rolls[1])
        if s0 > s1:
            return (stake, -stake)
        if s1 > s0:
            return (-stake, stake)
        return (0.0, 0.0)

    def terminal_returns(self) -> tuple:
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        return self._prefix[player] + self._bets

    def __repr__(self) -> str:
        return f"SampledDicePoker(rolls={self._rolls}, bets={self._bets!r})"


_new = object.__new__
