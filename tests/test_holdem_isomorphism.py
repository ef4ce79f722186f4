"""Suit isomorphism (``jaxcfr_games.holdem.isomorphism``).

Oracles: the classes of next cards counted by hand on a two-tone, a monotone and a
rainbow flop; the symmetry group shrinking when a single combination breaks it; and the
full (non-isomorphic) solve of a small turn spot in float64, where the strategy of hand
``g(h)`` after each river card ``g(c)`` equals that of ``h`` after the class's
representative ``c`` (CFR iterates of a suit-symmetric game stay symmetric), while the
identity map does not (the check has teeth).
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxcfr
from jaxcfr_games.holdem.cards import HoldemError, card, parse_board
from jaxcfr_games.holdem.isomorphism import card_classes, hand_permutation, \
    permute_hands, suit_symmetries
from jaxcfr_games.holdem.ranges import parse_range

SYMMETRIC = (parse_range("66+,A8s+,AJo+"), parse_range("QQ-22,AQs-A2s"))


@pytest.mark.parametrize("board, groups, classes", [
    ("Td9d6h", 2, 13 + 11 + 12),        # clubs ~ spades: 13 pairs, 11 diamonds, 12 hearts
    ("Td9d6d", 6, 13 + 10),             # clubs ~ hearts ~ spades: 13 triples, 10 diamonds
    ("Td9h6c", 1, 49),                  # rainbow: only the identity
    ("Td9d6h5c", 1, 48),                # the turn's 5c pins clubs
])
def test_classes_on_known_boards(board, groups, classes):
    cards = parse_board(board)
    g = suit_symmetries(cards, SYMMETRIC)
    assert len(g) == groups and g[0] == (0, 1, 2, 3)
    found = card_classes(cards, g)
    assert len(found) == classes
    assert sorted(c for _, members in found for c in members) == \
        sorted(set(range(52)) - set(cards))
    assert all(members[0] == rep for rep, members in found)


def test_a_single_combination_breaks_the_symmetry():
    cards = parse_board("Td9d6d")
    ranges = (parse_range("AA,AsKs"), SYMMETRIC[1])
    g = suit_symmetries(cards, ranges)
    assert sorted(g) == [(0, 1, 2, 3), (2, 1, 0, 3)]       # only clubs ~ hearts
    assert len(card_classes(cards, g)) == 13 + 10 + 13      # c/h pairs, diamonds, spades
    m = permute_hands((2, 1, 0, 3))
    assert np.array_equal(m[m], np.arange(1326))            # an involution
    with pytest.raises(HoldemError, match="not one class"):
        hand_permutation(g, card("Ac"), card("As"), [0, 1])


def _rows(result, history, player):
    low = result.lowered
    node = 0
    for x in history:
        node = next(int(c) for c in np.flatnonzero(low.tensors.parent == node)
                    if low.node_action[c] == x)
    assert int(low.tensors.node_player[node]) == player
    h = len(low.hands.labels[player])
    return result.average_strategy[int(low.tensors.node_base[node]) + np.arange(h)]


def test_isomorphic_river_cards_have_the_permuted_strategies():
    spot = jaxcfr.load_game("holdem_spot(board='Td9d6d5d', ranges=('AA,KQs,87o', 'KK,QJ'), "
                            "bets='a', raises='a', isomorphism=False)")   # every card walked
    result = jaxcfr.solve_public(spot, "cfr+", 30, precision="float64")
    board = parse_board("Td9d6d5d")
    weights = [np.zeros(1326), np.zeros(1326)]
    for p in range(2):
        weights[p][spot.hand_indices(p)] = spot.hand_weights(p)
    g = suit_symmetries(board, weights)
    assert len(g) == 6                       # clubs, hearts, spades
    classes = card_classes(board, g)
    assert len(classes) == 13 + 9
    teeth = False
    for rep, members in classes:
        base = _rows(result, ("Check", "Check", rep), 0)         # OOP's river root
        for member in members[1:]:
            perm = hand_permutation(g, rep, member, spot.hand_indices(0))
            other = _rows(result, ("Check", "Check", member), 0)
            live = base.sum(-1) > 0                              # hands the card leaves
            np.testing.assert_allclose(other[perm][live], base[live], atol=1e-9)
            teeth |= not np.allclose(other[live], base[live], atol=1e-3)
    assert teeth
