"""Dice poker with the dice rolled one at a time: enumerable chance with transpositions.

The same game as ``sampled_dice_poker`` (same rolls' distribution, betting, keys and
returns), but each die is its own enumerable chance node, so the game can be lowered
and solved exactly. Rolls are kept sorted, so histories that roll the same dice in
another order reach the same state: genuine transpositions, which the game declares
(``caches_transpositions()``) with an exact transposition key (``state_hash()``).

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("dice_poker(dice=2, sides=6)")
    >>> game.caches_transpositions()
    True
"""

from __future__ import annotations

import functools

from jaxcfr.game import CHANCE, LARGEST_TREE, Game, GameError, too_large

from .sampled_poker import SampledDicePoker

__all__ = ["DicePoker"]

#: Every betting sequence, numbered (part of the transposition key).
_BETS = ("", "k", "b", "kk", "kb", "bf", "bc", "kbf", "kbc")
_BET_INDEX = {b: i for i, b in enumerate(_BETS)}


class DicePoker(SampledDicePoker):
    """Two-player dice poker whose dice are rolled one at a time (enumerable chance).

    Rules: as ``sampled_dice_poker`` (see :class:`SampledDicePoker`), except how
    chance moves: player 0's ``dice`` dice are rolled one die per chance node (the
    action is the face, ``1..sides``, probability ``1 / sides`` each), then player
    1's. A player's roll is kept sorted, so the sorted roll a player ends with has the
    same (multinomial) probability as ``sampled_dice_poker``'s single draw, and the
    information-set keys (``"p|sorted roll|bets"``, e.g. ``"1|1236|kb"``) and returns
    are the same: a profile of one game is a profile of the other, with the same
    values and best responses. Limits: ``2 <= sides <= 9``, ``dice >= 1``, and at most
    ``LARGEST_TREE`` nodes (``sides ** (2 * dice)`` deals of 9 betting nodes each).

    Transpositions. ``caches_transpositions()`` is true and ``state_hash()`` is a
    transposition key: equal hashes mean identical subtrees. Proof: (1) a state is
    determined by the tuple ``(rolls, bets)`` (each player's sorted roll so far and
    the betting letters): ``dice`` and ``sides`` are fixed, and every other field
    (who moves, the key prefixes, the returns) is computed from these two in
    ``step``; (2) every method (``is_terminal``, ``is_chance``, ``player_to_act``,
    ``legal_actions``, ``chance_outcomes``, ``step``, ``terminal_returns``,
    ``infoset_key``) reads only ``(rolls, bets)`` and the constants, and ``step``
    maps ``(rolls, bets, action)`` to the next ``(rolls, bets)``, so two states with
    the same ``(rolls, bets)`` have the same subtree: the same actions, chance
    probabilities, information-set keys and returns at every descendant; (3)
    ``state_hash()`` is injective on ``(rolls, bets)`` (an exact integer encoding,
    not a digest: faces are digits ``1..sides`` of a base-``sides + 1`` number per
    player, the betting sequence its index in the 9 possible ones), so equal hashes
    imply equal ``(rolls, bets)``. Hence any value that depends only on the subtree
    (a fixed profile's expected values, continuation values) may be memoised on it.
    Histories that reach one state differ only in the order of dice no player has
    acted since (players act only after all dice are rolled), which is why the keys
    can forget the order without breaking perfect recall.
    """

    __slots__ = ()

    def __init__(self, dice: int = 2, sides: int = 6):
        if isinstance(sides, bool) or not isinstance(sides, int) or not 2 <= sides <= 9:
            raise ValueError(f"dice_poker: sides must be an integer in 2..9, got {sides!r}")
        most = _most_dice(sides)
        if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= most:
            why = ""
            if isinstance(dice, int) and not isinstance(dice, bool) and dice > most:
                size = _tree_size(dice, sides) if dice <= 64 else None     # (cheap only then)
                why = f": {too_large(f'{dice} dice of {sides} sides', size)}"
            raise ValueError(f"dice_poker: dice must be an integer in 1..{most} for "
                             f"{sides} sides, got {dice!r}{why}")
        super().__init__(dice, sides)

    def tree_size(self):
        """The node count of the whole tree (at the root; ``None`` below it)."""
        if self._rolls or self._bets:
            return None
        return _tree_size(self._dice, self._sides)

    # -- chance: one die at a time -------------------------------------------
    def chance_outcomes(self):
        if self._player != CHANCE:
            return None
        p = 1.0 / self._sides
        return [(face, p) for face in range(1, self._sides + 1)]

    def sample_chance(self, rng):
        if self._player != CHANCE:
            raise GameError("sample_chance() called at a node that is not a chance node",
                            rule="chance-sampling")
        return Game.sample_chance(self, rng)

    def step(self, action) -> None:
        if self._player != CHANCE:
            super().step(action)
            return
        if isinstance(action, bool) or not isinstance(action, int) or \
                not 1 <= action <= self._sides:
            raise GameError(f"{action!r} is not a face of a die with {self._sides} sides",
                            rule="illegal-action")
        rolls = self._rolls
        if not rolls or (len(rolls) == 1 and len(rolls[0]) == self._dice):
            rolls = rolls + ((action,),)                       # the next player's first die
        else:
            rolls = rolls[:-1] + (tuple(sorted(rolls[-1] + (action,))),)
        self._rolls = rolls
        seat = len(rolls) - 1
        mine = f"{seat}|{''.join(map(str, rolls[-1]))}|"
        self._prefix = (mine, self._prefix[1]) if seat == 0 else (self._prefix[0], mine)
        if seat == 1 and len(rolls[1]) == self._dice:
            self._player = 0

    # -- transpositions ------------------------------------------------------
    def state_hash(self) -> int:
        """An exact (injective) integer encoding of ``(rolls, bets)``: see the class docs."""
        base, width = self._sides + 1, (self._sides + 1) ** self._dice
        code = 0
        for seat in range(2):
            digits = 0
            for face in (self._rolls[seat] if seat < len(self._rolls) else ()):
                digits = digits * base + face
            code = code * width + digits
        return code * len(_BETS) + _BET_INDEX[self._bets]

    def caches_transpositions(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"DicePoker(rolls={self._rolls}, bets={self._bets!r})"


def _tree_size(dice: int, sides: int) -> int:
    """Chance nodes ``sides**0 + ... + sides**(2 dice - 1)``, then 9 betting nodes per deal."""
    return sum(sides ** k for k in range(2 * dice)) + 9 * sides ** (2 * dice)


@functools.lru_cache(maxsize=None)
def _most_dice(sides: int) -> int:
    """The most dice whose tree has at most ``LARGEST_TREE`` nodes."""
    n = 1
    while _tree_size(n + 1, sides) <= LARGEST_TREE:
        n += 1
    return n
