"""Hand strength of hold'em hands on a full board, from phevaluator.

Why phevaluator (Henry Lee's perfect-hash evaluator, Apache-2.0, on PyPI as
``phevaluator``, the ``holdem`` extra): it is maintained (0.6.0, 2026), ships wheels with
a C core (0.8 microseconds per 7-card hand here, so a river board's 1,081 hands take
about a millisecond and a turn spot's 48 rivers about 60 ms on the host), evaluates 5, 6
and 7 cards directly (no 21-subset loop) and numbers cards exactly as postflop-solver does
(``4 * rank + suit``, suits c d h s), so no translation sits between the two. treys and
deuces are pure Python (about 30 times slower) and unmaintained since 2022; eval7 is
Cython and fine but numbers cards its own way; pokerkit evaluates through objects, far
slower per hand. ``tests/test_holdem_cards.py`` checks phevaluator's order against a
hand-written evaluator on a sample of boards.

phevaluator ranks 7,462 classes of hands, 1 the best (a royal flush); :func:`strength`
turns that into ``7463 - rank`` so that a larger strength wins and 0 means "no hand".
"""

from __future__ import annotations

import numpy as np

from .cards import HANDS, NUM_HANDS, HoldemError, blocked

__all__ = ["strength", "board_strengths", "WORST", "BEST"]

#: The strength of the weakest 5-card hand (7-5-4-3-2 offsuit) and of a royal flush.
WORST, BEST = 1, 7462


def _evaluate():
    try:
        from phevaluator import evaluate_cards
    except ImportError as e:                    # pragma: no cover - the extra is missing
        raise ImportError("hold'em hand strength needs phevaluator: pip install "
                          "'jaxcfr[holdem]' (or pip install phevaluator)") from e
    return evaluate_cards


def strength(cards) -> int:
    """The strength of 5 to 7 distinct cards (ints): larger wins, equal ties."""
    cards = [int(c) for c in cards]
    if not 5 <= len(cards) <= 7 or len(set(cards)) != len(cards):
        raise HoldemError(f"a hand is 5 to 7 distinct cards, got {cards}")
    return BEST + 1 - _evaluate()(*cards)


def board_strengths(board) -> np.ndarray:
    """``[1326]`` int32: the strength of every hole-card pair with the 5-card ``board``;
    0 for the pairs that share a card with it."""
    board = [int(c) for c in board]
    if len(board) != 5 or len(set(board)) != 5:
        raise HoldemError(f"a showdown board has 5 distinct cards, got {board}")
    evaluate = _evaluate()
    out = np.zeros(NUM_HANDS, np.int32)
    dead = blocked(board)
    for i in np.flatnonzero(~dead):
        a, b = HANDS[i]
        out[i] = BEST + 1 - evaluate(a, b, *board)
    return out
