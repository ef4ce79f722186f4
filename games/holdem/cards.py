"""Cards, boards and hole-card combinations of Texas hold'em.

A card is an integer ``4 * rank + suit``: ranks ``2 3 4 5 6 7 8 9 T J Q K A`` are 0..12 and
suits ``c d h s`` 0..3 (``"2c"`` is 0, ``"As"`` is 51), the encoding of postflop-solver and
of phevaluator, so cards pass between them unchanged. A hand (hole cards) is a pair of
cards ``(low, high)`` with ``low < high``; :data:`HANDS` lists the 1,326 pairs in the order
of their index (:func:`hand_index`): ``(0, 1), (0, 2), ..., (50, 51)``.

Card sets are 64-bit masks (bit ``c`` for card ``c``) where that is handy: ``hand_masks``
and ``board_mask`` make the blocking tests one ``&``.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["RANKS", "SUITS", "NUM_CARDS", "HoldemError", "BoardError", "card", "card_str",
           "parse_board", "board_str", "HANDS", "NUM_HANDS", "hand_index", "hand_str", "HAND_MASKS",
           "board_mask", "blocked"]

RANKS = "23456789TJQKA"
SUITS = "cdhs"
NUM_CARDS = 52


class HoldemError(ValueError):
    """A hold'em spot, board, range or bet size is malformed; the message says where.

    ``position``: the 0-based character offset of the bad token in the string it came
    from, when one token is to blame (ranges, bet sizes); else ``None``.
    """

    def __init__(self, message: str, position: int | None = None):
        super().__init__(message)
        self.position = position


class BoardError(HoldemError):
    """A spot's parameters that its board rules out (a range with no hand the board
    leaves): the same parameters may fit another board."""


def card(text: str) -> int:
    """The card ``text`` names (``"As"`` -> 51; rank and suit letters in any case)."""
    if not isinstance(text, str) or len(text) != 2:
        raise HoldemError(f"a card is a rank and a suit such as 'As' or 'Td', got {text!r}")
    r, s = RANKS.find(text[0].upper()), SUITS.find(text[1].lower())
    if r < 0 or s < 0:
        raise HoldemError(f"{text!r} is not a card: ranks are {' '.join(RANKS)}, suits "
                          f"{' '.join(SUITS)}")
    return 4 * r + s


def card_str(c: int) -> str:
    """The name of card ``c`` (51 -> ``"As"``)."""
    return RANKS[c // 4] + SUITS[c % 4]


def parse_board(board) -> tuple[int, ...]:
    """The cards of a board: a string such as ``"Td9d6h"`` (spaces and commas allowed) or a
    sequence of card names or integers; 3 (flop), 4 (turn) or 5 (river) distinct cards."""
    if isinstance(board, str):
        text = board.replace(",", "").replace(" ", "")
        if len(text) % 2:
            raise HoldemError(f"board {board!r}: cards are two characters each (rank, suit)")
        cards = tuple(card(text[i:i + 2]) for i in range(0, len(text), 2))
    else:
        cards = tuple(card(c) if isinstance(c, str) else int(c) for c in board)
        if any(not 0 <= c < NUM_CARDS for c in cards):
            raise HoldemError(f"board {board!r}: card numbers are 0..51")
    if len(cards) not in (3, 4, 5):
        raise HoldemError(f"board {board!r}: a flop, turn or river board has 3, 4 or 5 cards, "
                          f"got {len(cards)}")
    if len(set(cards)) != len(cards):
        raise HoldemError(f"board {board!r} repeats a card")
    return cards


def board_str(cards) -> str:
    return "".join(card_str(c) for c in cards)


#: Every hole-card pair ``(low, high)``, in index order.
HANDS: tuple[tuple[int, int], ...] = tuple(itertools.combinations(range(NUM_CARDS), 2))
NUM_HANDS = len(HANDS)                                                  # 1326
_INDEX = {h: i for i, h in enumerate(HANDS)}
#: ``[1326]`` uint64: the card mask of each hand.
HAND_MASKS = np.asarray([(1 << a) | (1 << b) for a, b in HANDS], dtype=np.uint64)


def hand_index(a: int, b: int) -> int:
    """The index of the hand of cards ``a`` and ``b`` (either order) in :data:`HANDS`."""
    if a == b:
        raise HoldemError(f"a hand has two different cards, got {card_str(a)} twice")
    return _INDEX[(a, b) if a < b else (b, a)]


def hand_str(i: int) -> str:
    """The name of hand ``i``, high card first (``"AsKs"``), as postflop-solver prints it."""
    a, b = HANDS[i]
    return card_str(b) + card_str(a)


def board_mask(cards) -> np.uint64:
    out = 0
    for c in cards:
        out |= 1 << int(c)
    return np.uint64(out)


def blocked(cards) -> np.ndarray:
    """``[1326]`` bool: the hands that share a card with ``cards``."""
    return (HAND_MASKS & board_mask(cards)) != 0
