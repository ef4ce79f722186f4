"""Hold'em cards, ranges and hand strength against independent oracles.

- Ranges: postflop-solver's own weights of 400 randomized range strings
  (``tests/fixtures/holdem/peer_ranges.json.gz``, from ``benchmarks/peers/``), identical,
  refusals included; combination counts by hand; errors name the bad group's position.
- Hand strength (phevaluator): the same order (wins, ties, losses) as a hand-written
  evaluator, written here from the rules of poker (best 5 of 7 by category, then kickers),
  for every hand on a sample of boards.
"""

from __future__ import annotations

import collections
import gzip
import itertools
import json
import pathlib

import numpy as np
import pytest

from jaxcfr_games.holdem import cards as C
from jaxcfr_games.holdem.ranges import parse_range, range_hands
from jaxcfr_games.holdem.strength import board_strengths, strength

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "holdem" / "peer_ranges.json.gz"


# -- cards -------------------------------------------------------------------------------------
def test_cards_and_hands_use_the_peers_numbering():
    assert C.card("2c") == 0 and C.card("As") == 51 and C.card("td") == 33
    assert C.card_str(51) == "As" and C.parse_board("Td9d6h") == (33, 29, 18)
    assert C.NUM_HANDS == 1326
    # postflop-solver's card_pair_to_index: c1 * (101 - c1) / 2 + c2 - 1 for c1 < c2
    for i, (a, b) in enumerate(C.HANDS):
        assert i == a * (101 - a) // 2 + b - 1
        assert C.hand_index(b, a) == i
    assert C.hand_str(C.hand_index(C.card("Ks"), C.card("As"))) == "AsKs"
    assert C.blocked(C.parse_board("AsKsQs5d2c")).sum() == 1326 - 1081


@pytest.mark.parametrize("board,message", [
    ("Td9d", "3, 4 or 5 cards, got 2"), ("Td9d6h6h", "repeats a card"),
    ("Td9d6", "two characters each"), ("Xd9d6h", "'Xd' is not a card")])
def test_bad_boards_are_refused(board, message):
    with pytest.raises(C.HoldemError, match=message):
        C.parse_board(board)


# -- ranges ------------------------------------------------------------------------------------
def _peer_ranges():
    with gzip.open(FIXTURE, "rt") as f:
        return json.load(f)["ranges"]


def test_ranges_match_the_peer_exactly():
    entries = _peer_ranges()
    accepted = 0
    for entry in entries:
        text, out = entry["input"], entry["output"]
        if out.startswith("ERROR"):
            with pytest.raises(C.HoldemError):
                parse_range(text)
            continue
        accepted += 1
        expected = np.zeros(C.NUM_HANDS)
        for pair in out.split():
            k, w = pair.split(":")
            expected[int(k)] = float(w)
        got = parse_range(text)
        # the peer keeps float32 weights
        np.testing.assert_array_equal(got.astype(np.float32), expected.astype(np.float32),
                                      err_msg=text)
    assert accepted >= 250


@pytest.mark.parametrize("text,combos", [
    ("66+", 54), ("A8s+", 24), ("AJo+", 36), ("QQ-22", 66), ("AQs-A2s", 44), ("AK", 16),
    ("T9s+", 20), ("KQo-JTo", 36), ("AsKs", 1), ("", 0), ("AA,AA:0.5", 6),
    ("66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s", 202)])
def test_range_combination_counts_by_hand(text, combos):
    assert (parse_range(text) > 0).sum() == combos


def test_weights_and_the_first_group_wins():
    w = parse_range("AsKs:0.5, AKs, AA:.25")
    assert w[C.hand_index(C.card("As"), C.card("Ks"))] == 0.5
    assert w[C.hand_index(C.card("Ah"), C.card("Kh"))] == 1.0
    assert sorted(set(w[w > 0])) == [0.25, 0.5, 1.0]
    # the README ranges on the river board: postflop-solver's driver reports these counts
    board = C.parse_board("Td9d6h5c2s")
    assert len(range_hands(parse_range(
        "66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s"), board)) == 175
    assert len(range_hands(parse_range(
        "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+"), board)) == 252


@pytest.mark.parametrize("text,position,why", [
    ("66+,A8s+,AKx", 9, "expected a hand"), ("AA, KAs", 4, "first rank must be at least"),
    ("QQ, 22-KK", 4, "from high to low"), ("AKs-KQo", 0, "same suitedness"),
    ("AA:1.5", 0, "a weight is from 0 to 1"), ("AsAs", 0, "two different cards"),
    ("QQ,  T9s-86s", 5, "keeps the gap"), ("AAs", 0, "neither suited nor offsuit")])
def test_range_errors_name_the_group_and_its_position(text, position, why):
    with pytest.raises(C.HoldemError, match=why) as e:
        parse_range(text)
    assert e.value.position == position
    assert f"at position {position}" in str(e.value)


# -- hand strength -------------------------------------------------------------------------
def _rank5(cards) -> tuple:
    """The value of 5 cards by the rules: (category, ranks that break ties)."""
    ranks = sorted((c // 4 for c in cards), reverse=True)
    flush = len({c % 4 for c in cards}) == 1
    distinct = sorted(set(ranks), reverse=True)
    straight_high = None
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            straight_high = distinct[0]
        elif distinct == [12, 3, 2, 1, 0]:          # the wheel, five high
            straight_high = 3
    counts = collections.Counter(ranks)
    by_count = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if straight_high is not None and flush:
        return (8, straight_high)
    if shape == [4, 1]:
        return (7, *by_count)
    if shape == [3, 2]:
        return (6, *by_count)
    if flush:
        return (5, *ranks)
    if straight_high is not None:
        return (4, straight_high)
    if shape == [3, 1, 1]:
        return (3, *by_count)
    if shape == [2, 2, 1]:
        return (2, *by_count)
    if shape == [2, 1, 1, 1]:
        return (1, *by_count)
    return (0, *ranks)


def _rank7(cards) -> tuple:
    return max(_rank5(five) for five in itertools.combinations(cards, 5))


def _dense_order(values) -> np.ndarray:
    """Each value's place among the distinct values (ties share one)."""
    keys = sorted(set(values))
    place = {k: i for i, k in enumerate(keys)}
    return np.asarray([place[v] for v in values])


BOARDS = ["Td9d6h5c2s", "AsKsQsJs2d", "7c7d7h2s2c", "5h4h3h2hAh", "Ac2d3h4s9c", "KdKcQhQs2c",
          "9s8s7s6d2h", "AhAdAcAs3d"]


@pytest.mark.parametrize("board", BOARDS + [f"random{i}" for i in range(4)])
def test_strength_orders_hands_as_the_reference_evaluator(board):
    if board.startswith("random"):
        rng = np.random.default_rng(int(board[6:]))
        cards = tuple(int(c) for c in rng.choice(52, 5, replace=False))
    else:
        cards = C.parse_board(board)
    got = board_strengths(cards)
    live = np.flatnonzero(got > 0)
    assert len(live) == 1081 and (got[C.blocked(cards)] == 0).all()
    reference = [_rank7(C.HANDS[i] + cards) for i in live]
    np.testing.assert_array_equal(_dense_order(got[live].tolist()), _dense_order(reference))


def test_strength_by_hand():
    royal = strength([C.card(c) for c in ("As", "Ks", "Qs", "Js", "Ts")])
    assert royal == 7462
    assert strength([C.card(c) for c in ("7c", "5d", "4h", "3s", "2c")]) == 1
    wheel = strength([C.card(c) for c in ("Ac", "2d", "3h", "4s", "5c")])
    six_high = strength([C.card(c) for c in ("6c", "2d", "3h", "4s", "5c")])
    assert six_high > wheel
    with pytest.raises(C.HoldemError, match="5 to 7 distinct cards"):
        strength([0, 1, 2, 3])
