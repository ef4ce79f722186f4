"""Hand buckets: a public tree's hands padded to a size that other boards share.

A hold'em spot's compiled chunk depends on its shapes and static
:class:`~jaxcfr.tensors.PublicStructure` (:func:`program_key`). Card removal leaves each
player a board-dependent number of hands (the README river Td9d6h5c2s 175 + 252,
Td9d6h5c3s 175 + 251; the turn Td9d6h5c 175 + 256, Td9d6h4c 178 + 259), and with them
every ``[..., H]`` tensor, the ranked tables' ``(hand, card)`` entries ``M`` (``J = 2``
per hand) and the rows ``I`` (``sum_d H_p(d) + 1``). So :func:`bucket_hands` pads the
hands to :func:`hand_buckets` of the counts (the larger by :data:`HAND_STEPS` a
doubling, the smaller by :data:`SMALLER_STEPS`).

Card removal also dedups: identical blocked sets ``K`` and strength tables ``S`` are one
entry and a card no hand holds is none of the cards ``C``, so on small ranges these
sizes are the board's too (a turn's 14 to 20 blocked sets, 23 to 28 strength tables; a
river's 17 or 18 cards): :func:`bucket_hands` pads them to :func:`board_sizes`, the
boards of the tree (the bet tree's and the street's). What remains board-dependent is
the tree itself where suit isomorphism merges chance outcomes (another suit pattern:
the turn Td9d6h5c walks all 48 river cards, Td9d6hKd 35 classes, Td9d6h6c 36): lowered
with ``outcome_steps=`` :data:`OUTCOME_STEPS` (what the runners do with hand buckets on),
each chance node of a tree of one chance round (a turn's; a flop's trees differ in
their turn cards anyway) walks its classes rounded up to a bucket
(:func:`~jaxcfr.lowering.public.walked_outcomes`: 35 and 36 walk 36), an exact tree.
Another board of the same bet tree whose counts fall in the same buckets and whose
classes in the same bucket lowers to the same :func:`program_key`: its chunk is the
compiled program already in the process (the program cache) or on disk (the
compilation cache).

The padding is the stack's (:mod:`jaxcfr.lowering.public_stack`, a stack of one member
padded past its own sizes): a padded hand has weight 0, is blocked everywhere (``alive``
0), has no ``(hand, card)`` entries and no compatible hand, and its rows are padding rows
(``NO_PLAYER``, slot 0 only); padded blocked sets, strength tables and cards are zeros
(no card: -1) that no node, terminal or hand points at: nothing reaches them and nothing
updates them, so every number is the unpadded run's up to float summation order (the
ranked running sums are longer; float64 within 1e-12, ``tests/test_hand_buckets.py``).
The padded game keeps its host tables (hand labels, actions): every reader names rows
by ``node_base[n] + h`` over the real hands (profiles, strategies, hand values, grids,
exports, locks), so padded hands appear in none of them. ``PublicLowered.padded_hands``
says it is padded; ``PublicLowered.structure.hands`` are the padded counts,
``tensors.hand_count`` the real.

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

__all__ = ["HAND_STEPS", "SMALLER_STEPS", "OUTCOME_STEPS", "hand_bucket", "hand_buckets",
           "bucket_hands", "board_sizes", "program_key", "unbucketed", "real_rows"]

#: Buckets per doubling of the hand count: a count ``n`` is rounded up to a multiple of
#: ``2 ** floor(log2 n) / HAND_STEPS`` (at least 8): 128 to 256 hands by 8, 256 to 512
#: by 16, 512 to 1,024 by 32. At most ``1 / HAND_STEPS`` (6.25%) more hands, on
#: average about half that; per-iteration work grows with the hands (docs/holdem.md,
#: "Hand buckets").
HAND_STEPS = 16
#: Buckets per doubling of a chance node's walked outcomes where the hand buckets are on
#: (``lower_public(outcome_steps=)``, :func:`~jaxcfr.lowering.public.walked_outcomes`):
#: a turn's river cards merged into 35 classes (a flush draw's suit pattern) or 36 (a
#: paired turn) walk 36, 37 walk 40 (at most 1/8 more nodes under the chance node).
OUTCOME_STEPS = 8
#: Buckets per doubling of the smaller player's hand count (:func:`hand_buckets`): its
#: hands make only its own rows, not the ``[N, H]`` tables, so a coarser ladder costs
#: less per hand and straddles fewer edges (docs/holdem.md, "Hand buckets").
SMALLER_STEPS = 8
#: The smallest step (a SIMD register's float32 lanes: smaller counts gain nothing).
_LEAST_STEP = 8


def hand_bucket(n: int, steps: int = HAND_STEPS) -> int:
    """``n`` hands rounded up to its bucket (see :data:`HAND_STEPS`; 0 stays 0)."""
    n = int(n)
    if n <= 0:
        return 0
    step = max(_LEAST_STEP, (1 << (n.bit_length() - 1)) // int(steps))
    return -(-n // step) * step


def hand_buckets(counts: tuple, steps: int = HAND_STEPS,
                 smaller_steps: int = SMALLER_STEPS) -> tuple[int, int]:
    """Two players' hand ``counts`` padded: the larger count (the ``H`` of every ``[N,
    H]`` table) to :func:`hand_bucket` with ``steps``, the smaller (its player's rows
    alone) with ``smaller_steps``, at most the larger's bucket (so never a larger
    ``H``); equal counts both with ``steps``.

    >>> hand_buckets((175, 252)), hand_buckets((178, 259)), hand_buckets((250, 251))
    ((176, 256), (192, 272), (256, 256))
    """
    a, b = (int(n) for n in counts)
    if a == b:
        return hand_bucket(a, steps), hand_bucket(b, steps)
    small, large = (0, 1) if a < b else (1, 0)
    out = [0, 0]
    out[large] = hand_bucket(counts[large], steps)
    out[small] = min(hand_bucket(counts[small], smaller_steps), out[large])
    return out[0], out[1]


def bucket_hands(lowered: PublicLowered, steps: int = HAND_STEPS,
                 smaller_steps: int = SMALLER_STEPS) -> PublicLowered:
    """``lowered`` with each player's hands padded to :func:`hand_bucket` of its count and
    its board-dependent tables to :func:`board_sizes` (see the module); returned as it is
    when already padded, when it has other than two players (the padding is the
    two-player stack's), or when its sizes are those already."""
    if lowered.padded_hands or lowered.num_players != 2:
        return lowered
    real = tuple(len(x) for x in lowered.hands.labels)
    hands = hand_buckets(real, steps, smaller_steps)
    t = lowered.tensors
    boards = board_sizes(lowered)
    if hands == real and all(boards[a] == n for a, n in _board_shapes(t).items()):
        return lowered
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    level_start = np.asarray(lowered.level_start, np.int64)
    sizes = common_sizes([lowered], int(level_start[-1]), lowered.ranked, [none])
    H = max(hands)
    sizes["H"] = H
    sizes["Hr"] = H if lowered.ranked else 0
    sizes["Hd"] = 0 if lowered.ranked else H
    J = int(t.pair_lo.shape[-1])
    sizes["M"] = max(sizes.get("M", 0), J * H)          # a board's (hand, card) entries
    sizes.update(boards)
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


def program_key(lowered) -> tuple:
    """The game's part of its compiled chunk's key: the static structure and every
    tensor's shape and dtype (hashable). Two games of equal keys run one compiled
    program (for one solver, chunk and precision): what :func:`bucket_hands` makes
    other boards share, cheap to compare (nothing is compiled)."""
    t = lowered.tensors
    return lowered.structure, tuple((f, np.shape(x), np.asarray(x).dtype.str)
                                    for f, x in zip(t._fields, t))


def _board_shapes(t) -> dict:
    """``{"K", "S", "C"}``: the blocked sets, strength tables and cards ``t`` holds."""
    return {"K": int(t.alive.shape[0]), "S": int(t.strengths.shape[0]),
            "C": int(t.cards.shape[0])}


def board_sizes(lowered: PublicLowered) -> dict:
    """``{"K", "S", "C"}`` the sizes :func:`bucket_hands` pads the board-dependent tables
    to, each at least the game's own: ``K`` the public boards of the tree (the root's
    and one per chance path), ``S`` the public boards at its showdowns, ``C``
    :func:`hand_bucket` of the cards its hands hold (at least 8).

    Card removal makes the game's own sizes the board's: identical blocked sets and
    strength tables are one entry (on a turn with small ranges 14 to 20 blocked sets and
    23 to 28 strength tables over the river cards), and a card no hand holds is no card
    (17 or 18 on a river). The tree's boards are the bet tree's and the street's (each
    chance node's outcomes counted as walked, so a tree of merged suit-isomorphic cards
    counts its representatives): boards of one tree get one shape.
    """
    t = lowered.tensors
    parent = np.asarray(t.parent, np.int64)                                   # [N]
    chance = np.asarray(t.edge_owner) == lowered.num_players                  # [N] (root too)
    slot = np.asarray(t.parent_slot, np.int64)
    board = np.zeros(len(parent), np.int64)                                   # [N] board ids
    known: dict = {}
    start = lowered.level_start
    for d in range(1, len(start) - 1):                         # parents before children
        n = np.arange(start[d], start[d + 1])
        board[n] = board[parent[n]]
        for m in n[chance[n]]:
            board[m] = known.setdefault((int(board[parent[m]]), int(slot[m])), len(known) + 1)
    own = _board_shapes(t)
    shown = len(np.unique(board[np.asarray(t.show_node, np.int64)]))
    return {"K": max(own["K"], len(known) + 1), "S": max(own["S"], shown),
            "C": max(own["C"], hand_bucket(own["C"]))}


def unbucketed(lowered, *tables) -> tuple:
    """``(game, *tables)``: a padded game's unpadded game and its ``[I, A, *b]`` tables
    as host arrays with the padding rows dropped (the unpadded game's rows in its order:
    decision by decision, each its player's real hands; the sink last; the rows found
    once for all the tables); ``lowered`` and the tables themselves, as given, when
    ``lowered`` is not padded."""
    if not getattr(lowered, "padded_hands", ()):                # a stack, a history tree
        return (lowered, *tables)
    keep = real_rows(lowered)                                                 # [I]
    return (lowered.unpadded, *(np.asarray(x)[keep] for x in tables))


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
