"""Stacks of boards: one spot on many boards, to solve in one compiled step.

``jaxcfr.solve_public`` takes a list of public-tree games and solves them as a stack
(``jaxcfr.lowering.public_stack``); these helpers make the lists a poker user asks
for: every river card of a turn board as its own river spot, every turn card of a flop,
or a sample of random boards, with one set of spot parameters.

Example::

    >>> import jaxcfr
    >>> spots = board_spots(river_boards("Td9d6h5c"), pot=100, stack=200)   # 48 river spots
    >>> result = jaxcfr.solve_public(spots, "postflop-dcfr", 100)
    >>> result.final["exploitability_pot_percent"]                           # [48]
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS, HoldemError, board_str, parse_board
from .spot import HoldemSpot

__all__ = ["next_boards", "river_boards", "turn_boards", "random_boards", "board_spots"]


def next_boards(board) -> list[str]:
    """The boards one card later: ``board`` plus each card it does not hold, in card
    order (``"Td9d6h5c"`` -> 48 river boards ``"Td9d6h5c2c"``, ...)."""
    cards = parse_board(board)
    if len(cards) == 5:
        raise HoldemError(f"board {board_str(cards)} is a river board: no card comes next")
    return [board_str(cards + (c,)) for c in range(NUM_CARDS) if c not in cards]


def river_boards(turn_board) -> list[str]:
    """Every river board of a turn board (48)."""
    if len(parse_board(turn_board)) != 4:
        raise HoldemError(f"river_boards() takes a turn board of 4 cards, got {turn_board!r}")
    return next_boards(turn_board)


def turn_boards(flop) -> list[str]:
    """Every turn board of a flop (49)."""
    if len(parse_board(flop)) != 3:
        raise HoldemError(f"turn_boards() takes a flop of 3 cards, got {flop!r}")
    return next_boards(flop)


def random_boards(count: int, cards: int = 5, seed: int = 0) -> list[str]:
    """``count`` distinct boards of ``cards`` cards (3, 4 or 5) drawn uniformly with
    ``numpy.random.default_rng(seed)``, each written with its cards in the order drawn."""
    if cards not in (3, 4, 5):
        raise HoldemError(f"a board has 3, 4 or 5 cards, got {cards!r}")
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise HoldemError(f"count must be a positive int, got {count!r}")
    rng = np.random.default_rng(seed)
    seen: set = set()
    out = []
    while len(out) < count:
        drawn = tuple(int(c) for c in rng.choice(NUM_CARDS, cards, replace=False))
        if frozenset(drawn) not in seen:
            seen.add(frozenset(drawn))
            out.append(board_str(drawn))
    return out


def board_spots(boards, **spot) -> list[HoldemSpot]:
    """One :class:`~.spot.HoldemSpot` per board, each with the parameters ``spot``
    (``ranges``, ``pot``, ``stack``, ``bets``, ...): a list for ``jaxcfr.solve_public``."""
    boards = list(boards)
    if not boards:
        raise HoldemError("board_spots() needs at least one board")
    return [HoldemSpot(board=b, **spot) for b in boards]
