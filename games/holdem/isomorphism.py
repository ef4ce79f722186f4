"""Suit isomorphism: the turn or river cards whose subtrees are the same up to suits.

A permutation ``g`` of the four suits acts on a card (``4 * rank + suit`` ->
``4 * rank + g[suit]``) and on a hand (both cards). When ``g`` fixes the board (as a
set) and both players' range weights (``w[g(h)] == w[h]`` for every hand), the whole
spot is unchanged by ``g``: the subtree after dealing card ``g(c)`` is the subtree after
``c`` with every hand ``h`` renamed ``g(h)``. The permutations that do so form a group
``G`` (:func:`suit_symmetries`); the cards still to deal fall into its orbits
(:func:`card_classes`), and a solver that solves one representative per orbit, weighted
by the orbit's size, and reads the other members' hand values through the hand
permutation (:func:`hand_permutation`: the value of hand ``g(h)`` after ``g(c)`` is that
of ``h`` after ``c``) is exact. postflop-solver does so (its ``isomorphism`` tables).

Examples: on ``Td9d6h`` clubs and spades are interchangeable (49 turn cards in 36
classes); on the monotone ``Td9d6d`` clubs, hearts and spades are (23 classes); a
rainbow flop has none. Range strings such as ``"66+,A8s+,AJo+"`` are suit-symmetric;
single combinations (``AsKs``) or weights that differ by suit break the symmetry, and
then ``G`` is smaller or trivial, never wrong.

This module finds the classes and permutations (plain NumPy);
``holdem_spot(..., isomorphism=True)`` merges them on the public tree
(:meth:`~.spot.HoldemSpot.chance_merges`, ``PublicTensors.merge_*``; docs/holdem.md,
"Suit isomorphism").
"""

from __future__ import annotations

import itertools

import numpy as np

from .cards import HANDS, NUM_CARDS, HoldemError, hand_index

__all__ = ["suit_symmetries", "card_classes", "permute_card", "permute_hands",
           "hand_permutation"]


def permute_card(g: tuple[int, ...], c: int) -> int:
    """Card ``c`` with its suit renamed by ``g`` (``g[suit]``: the new suit)."""
    return 4 * (c // 4) + g[c % 4]


#: ``[24, 1326]``: for each of the 24 suit permutations (itertools order), the index of
#: each hand after the permutation.
_PERMUTATIONS = tuple(itertools.permutations(range(4)))
_HAND_MAPS = np.asarray([[hand_index(permute_card(g, a), permute_card(g, b))
                          for a, b in HANDS] for g in _PERMUTATIONS], np.int64)


def permute_hands(g: tuple[int, ...]) -> np.ndarray:
    """``[1326]``: the index of each hand of :data:`~.cards.HANDS` after ``g``."""
    return _HAND_MAPS[_PERMUTATIONS.index(tuple(g))]


def suit_symmetries(board, ranges) -> list[tuple[int, ...]]:
    """The suit permutations that fix ``board`` (cards, as a set) and both ``ranges``
    (each ``[1326]`` weights), identity first."""
    board = tuple(int(c) for c in board)
    weights = [np.asarray(w, np.float64) for w in ranges]
    if any(w.shape != (len(HANDS),) for w in weights):
        raise HoldemError("ranges must be [1326] weights, one array per player")
    out = []
    for g, m in zip(_PERMUTATIONS, _HAND_MAPS):
        if {permute_card(g, c) for c in board} != set(board):
            continue
        if all(np.array_equal(w[m], w) for w in weights):
            out.append(g)
    return out


def card_classes(board, symmetries) -> list[tuple[int, tuple[int, ...]]]:
    """The cards not on ``board`` in orbits of the group ``symmetries``: ``[(the
    representative (the smallest card), its members (ascending, the representative
    first))]`` in the order of the representatives. A representative stands for
    ``len(members)`` cards: its chance weight is that many times one card's."""
    shown = set(int(c) for c in board)
    seen: set[int] = set()
    out = []
    for c in range(NUM_CARDS):
        if c in shown or c in seen:
            continue
        members = tuple(sorted({permute_card(g, c) for g in symmetries}))
        seen.update(members)
        out.append((c, members))
    return out


def hand_permutation(symmetries, rep: int, member: int, hands) -> np.ndarray:
    """``[H]``: for each hand ``h`` of ``hands`` (indices into :data:`~.cards.HANDS`, a
    player's hand list, closed under ``symmetries``), the position in ``hands`` of
    ``g(h)``, for a ``g`` of ``symmetries`` taking ``rep`` to ``member``: the hand
    whose values after ``member`` are ``h``'s after ``rep``."""
    hands = np.asarray(hands, np.int64)
    where = {int(h): i for i, h in enumerate(hands)}
    for g in symmetries:
        if permute_card(g, rep) == member:
            mapped = permute_hands(g)[hands]
            if not all(int(x) in where for x in mapped):
                raise HoldemError("the hand list is not closed under the symmetry")
            return np.asarray([where[int(x)] for x in mapped], np.int64)
    raise HoldemError(f"no symmetry takes card {rep} to card {member}: not one class")
