"""Fold and showdown operators over hand vectors against the double loop.

Oracle: for every own hand, a plain loop over the opponent's hands that skips those
sharing a card with it or with the board and adds the reach (fold) or the signed reach by
strength (showdown). Random hand lists, boards, reach vectors (with a batch axis), the
full ranges, and hand lists that hold the same combos (the inclusion-exclusion term).
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxcfr_games.holdem import cards as C
from jaxcfr_games.holdem.showdown import HandOperators
from jaxcfr_games.holdem.strength import board_strengths


def brute(own, opp, board, reach, strengths=None):
    out = np.zeros((len(own),) + reach.shape[1:])
    board = set(board)
    for i, h in enumerate(own):
        hc = set(C.HANDS[h])
        if hc & board:
            continue
        for j, o in enumerate(opp):
            oc = set(C.HANDS[o])
            if oc & board or oc & hc:
                continue
            sign = 1.0 if strengths is None else np.sign(float(strengths[h]) - strengths[o])
            out[i] += sign * reach[j]
    return out


def _case(seed, n_own, n_opp, batch=()):
    rng = np.random.default_rng(seed)
    board = tuple(int(c) for c in rng.choice(52, 5, replace=False))
    own = np.sort(rng.choice(C.NUM_HANDS, n_own, replace=False))
    opp = np.sort(rng.choice(C.NUM_HANDS, n_opp, replace=False))
    if seed % 2:                    # many shared combos: the inclusion-exclusion term
        opp = np.union1d(opp, own[: n_own // 2])
    reach = rng.random((len(opp),) + batch)
    reach[rng.random(len(opp)) < 0.2] = 0.0
    return board, own, opp, reach


@pytest.mark.parametrize("seed", range(6))
def test_operators_match_the_double_loop(seed):
    board, own, opp, reach = _case(seed, 120, 150, batch=(3,) if seed % 3 == 0 else ())
    strengths = board_strengths(board)
    ops = HandOperators(own, opp, board, strengths)
    np.testing.assert_allclose(ops.fold(reach), brute(own, opp, board, reach), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(ops.showdown(reach), brute(own, opp, board, reach, strengths),
                               rtol=1e-12, atol=1e-12)


def test_full_ranges_on_the_river_board():
    board = C.parse_board("Td9d6h5c2s")
    live = np.flatnonzero(~C.blocked(board))
    assert len(live) == 1081
    strengths = board_strengths(board)
    rng = np.random.default_rng(7)
    reach = rng.random(C.NUM_HANDS)
    ops = HandOperators(np.arange(C.NUM_HANDS), np.arange(C.NUM_HANDS), board, strengths)
    sub = rng.choice(live, 60, replace=False)            # the loop on a sample of own hands
    np.testing.assert_allclose(ops.fold(reach)[sub], brute(sub, np.arange(C.NUM_HANDS), board,
                                                           reach), rtol=1e-12)
    np.testing.assert_allclose(ops.showdown(reach)[sub], brute(
        sub, np.arange(C.NUM_HANDS), board, reach, strengths), rtol=1e-12, atol=1e-9)
    # a uniform opponent: every live hand sees C(45, 2) = 990 compatible hands
    np.testing.assert_array_equal(ops.fold(np.ones(C.NUM_HANDS))[live], 990)
    assert (ops.fold(reach)[C.blocked(board)] == 0).all()
    # zero-sum: sum_h r0(h) n0(h) = - sum_o r1(o) n1(o) for the same pair of reaches
    r0, r1 = rng.random(C.NUM_HANDS), rng.random(C.NUM_HANDS)
    back = HandOperators(np.arange(C.NUM_HANDS), np.arange(C.NUM_HANDS), board, strengths)
    assert np.dot(r0, ops.showdown(r1)) == pytest.approx(-np.dot(r1, back.showdown(r0)))


def test_fold_on_a_turn_board_without_strengths():
    board = C.parse_board("Td9d6h5c")
    _, own, opp, reach = _case(3, 80, 90)
    ops = HandOperators(own, opp, board)
    np.testing.assert_allclose(ops.fold(reach), brute(own, opp, board, reach), rtol=1e-12)
    with pytest.raises(C.HoldemError, match="needs the hands' strengths"):
        ops.showdown(reach)


def test_bad_arguments_are_refused():
    with pytest.raises(C.HoldemError, match="indices 0..1325"):
        HandOperators([0, 1326], [0])
    with pytest.raises(C.HoldemError, match="repeat a hand"):
        HandOperators([3, 3], [0])
    with pytest.raises(C.HoldemError, match=r"reach is \[2, \*b\]"):
        HandOperators([0], [1, 2]).fold(np.ones(3))
