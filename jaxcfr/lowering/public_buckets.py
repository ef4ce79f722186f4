"""Hand buckets: a public tree's hands padded to a size that other boards share.

A hold'em spot's compiled chunk depends on its shapes, and the only board-dependent
shapes of a spot are its hand counts: card removal leaves each player a board-dependent
number of hands (the README river Td9d6h5c2s 175 + 252, Td9d6h5c3s 175 + 251; the turn
Td9d6h5c 175 + 256, Td9d6h4c 178 + 259), and with them every ``[..., H]`` tensor, the
ranked tables' ``(hand, card)`` entries ``M`` (``J = 2`` per hand) and the rows ``I``
(``sum_d H_p(d) + 1``). The tree, its levels, its legal groups, the strength tables
``S``, the blocked sets ``K``, the terminals and the cards ``C`` any hand holds are the
bet tree's and the street's. So :func:`bucket_hands` pads each player's hands to
:func:`hand_bucket` of its count, and another board of the same bet tree whose counts
fall in the same buckets lowers to the same shapes and static
:class:`~jaxcfr.tensors.PublicStructure`: its chunk is the compiled program already
in the process (the program cache) or on disk (the compilation cache).

The padding is the stack's (:mod:`jaxcfr.lowering.public_stack`, a stack of one member
padded past its own sizes): a padded hand has weight 0, is blocked everywhere (``alive``
0), has no ``(hand, card)`` entries and no compatible hand, and its rows are padding rows
(``NO_PLAYER``, slot 0 only): nothing reaches them and nothing updates them, so every
number is the unpadded run's up to float summation order (the ranked running sums are
longer; float64 within 1e-12, ``tests/test_hand_buckets.py``). The padded game keeps its
host tables (hand labels, actions): every reader names rows by ``node_base[n] + h`` over
the real hands (profiles, strategies, hand values, grids, exports, locks), so padded
hands appear in none of them. ``PublicLowered.padded_hands`` says it is padded;
``PublicLowered.structure.hands`` are the padded counts, ``tensors.hand_count`` the real.

Example::

    >>> hand_bucket(175), hand_bucket(252), hand_bucket(251), hand_bucket(259)
    (176, 256, 256, 272)
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxcfr.lowering.public import PublicLowered
from jaxcfr.lowering.public_stack import (common_sizes, member_decision_rows, merge_layout,
                                          pad_member)

__all__ = ["HAND_STEPS", "hand_bucket", "bucket_hands", "unbucketed", "real_rows"]

#: Buckets per doubling of the hand count: a count ``n`` is rounded up to a multiple of
#: ``2 ** floor(log2 n) / HAND_STEPS`` (at least 8): 128 to 256 hands by 8, 256 to 512
#: by 16, 512 to 1,024 by 32. At most ``1 / HAND_STEPS`` (6.25%) more hands, on
#: average about half that; per-iteration work grows with the hands (docs/holdem.md,
#: "Hand buckets").
HAND_STEPS = 16
#: The smallest step (a SIMD register's float32 lanes: smaller counts gain nothing).
_LEAST_STEP = 8


def hand_bucket(n: int, steps: int = HAND_STEPS) -> int:
    """``n`` hands rounded up to its bucket (see :data:`HAND_STEPS`; 0 stays 0)."""
    n = int(n)
    if n <= 0:
        return 0
    step = max(_LEAST_STEP, (1 << (n.bit_length() - 1)) // int(steps))
    return -(-n // step) * step


def bucket_hands(lowered: PublicLowered, steps: int = HAND_STEPS) -> PublicLowered:
    """``lowered`` with each player's hands padded to :func:`hand_bucket` of its count
    (see the module); returned as it is when already padded, when it has other than two
    players (the padding is the two-player stack's), or when its counts are buckets
    already."""
    if lowered.padded_hands or lowered.num_players != 2:
        return lowered
    real = tuple(len(x) for x in lowered.hands.labels)
    hands = tuple(hand_bucket(n, steps) for n in real)
    if hands == real:
        return lowered
    t = lowered.tensors
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    level_start = np.asarray(lowered.level_start, np.int64)
    sizes = common_sizes([lowered], int(level_start[-1]), lowered.ranked, [none])
    H = max(hands)
    sizes["H"] = H
    sizes["Hr"] = H if lowered.ranked else 0
    sizes["Hd"] = 0 if lowered.ranked else H
    J = int(t.pair_lo.shape[-1])
    sizes["M"] = max(sizes.get("M", 0), J * H)          # a board's (hand, card) entries
    sizes["I"] = int(member_decision_rows(lowered, hands)[-1]) + 1
    merge_start = merge_layout([lowered], len(level_start) - 1)
    tensors = pad_member(lowered, level_start, sizes, merge_start, hands, none)
    # the arrays the padding leaves as they were (the tree's: parents, children, paths,
    # payoffs; 29 of the README flop's 104 MB) are the unpadded game's, not copies of them
    tensors = tensors._replace(**{
        name: old for name, old, new in zip(t._fields, t, tensors)
        if isinstance(old, np.ndarray) and isinstance(new, np.ndarray)
        and old.dtype == new.dtype and old.shape == new.shape and np.array_equal(old, new)})
    return dataclasses.replace(lowered, tensors=tensors, padded_hands=hands,
                               unpadded=lowered)


def unbucketed(lowered, table) -> tuple:
    """``(game, table)``: a padded game's unpadded game and its ``[I, A, *b]`` table
    with the padding rows dropped (the unpadded game's rows in its order: decision by
    decision, each its player's real hands; the sink last); ``lowered`` and ``table``
    themselves when ``lowered`` is not padded."""
    table = np.asarray(table)
    if not getattr(lowered, "padded_hands", ()):                # a stack, a history tree
        return lowered, table
    return lowered.unpadded, table[real_rows(lowered)]


def real_rows(lowered: PublicLowered) -> np.ndarray:
    """``[I]`` bool: the rows of a padded game that its unpadded game has (each decision's
    real hands, the first of its rows, and the sink), in their order. A mask rather than
    the rows' indices: one copy of a table taken through it, and 1 byte a row (the
    README flop's 36.9 million rows: 37 MB, against 295 MB of int64 indices and their
    concatenation's second copy of the table)."""
    t = lowered.tensors
    start = np.asarray(t.decision_row, np.int64)[:-1]                         # [D]
    owner = np.asarray(t.decision_player, np.int64)[:-1]                      # [D]
    count = np.asarray(t.hand_count, np.int64)[owner]                         # [D]
    edge = np.zeros(int(t.row_shape[0]) + 1, np.int8)                         # [I + 1]
    np.add.at(edge, start, 1)                          # each decision's real rows begin,
    np.add.at(edge, start + count, -1)                 # and end (where the next may begin)
    keep = np.cumsum(edge[:-1], dtype=np.int8).astype(bool)                   # [I]
    keep[-1] = True                                                           # the sink
    return keep
