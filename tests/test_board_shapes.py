"""Boards of other suit patterns and their compiled programs (``jaxcfr.lowering.
public_buckets``: the board tables' padding, ``hand_buckets``; ``lower_public(
outcome_steps=)``: merged chance outcomes walked to a bucket).

Oracles: known counts of distinct program keys (``program_key``: the static structure
and every tensor's shape, nothing compiled) over boards of several suit patterns, and
the sizes each pattern lowers to (a turn's river classes: 48 without a symmetry, 35 for
a flush draw's pattern, 36 on a paired turn; blocked sets and strength tables deduped by
card removal); another suit pattern's board compiles nothing (JAX's compile events);
the walked tree solves as the merged one, float64 (profiles by key, exploitability,
values).
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.public import walked_outcomes
from jaxcfr.lowering.public_buckets import (OUTCOME_STEPS, bucket_hands, hand_buckets,
                                            program_key)

try:
    from tests.test_compile_once import _assert_nothing_compiled, count_compiles
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from test_compile_once import _assert_nothing_compiled, count_compiles

#: Small ranges and a small bet tree (tests/test_hand_buckets.py's spot).
_SPOT = ("holdem_spot(board='{}', ranges=('AA,KK,QQ,AKs', 'JJ,TT,AQs,KQs'), pot=100, "
         "stack=200, bets='60%', raises='', add_allin=0)")
#: Turns of Td9d6h of three suit patterns: a club or a spade (no symmetry: 48 river
#: cards walked), a diamond or a heart (clubs ~ spades: 35 classes), the paired 6c, 6s
#: (hearts ~ the other: 36 classes).
TURNS = ("Td9d6hAc", "Td9d6h2s", "Td9d6hTc", "Td9d6hKd", "Td9d6hQh", "Td9d6h3d",
         "Td9d6h6c", "Td9d6h6s")
#: Rivers of Td9d6h5c: rainbow, paired, flush-possible.
RIVERS = ("Td9d6h5cAs", "Td9d6h5cTs", "Td9d6h5c2d", "Td9d6h5cKh", "Td9d6h5c5d",
          "Td9d6h5cQs")


@functools.cache
def _lowered(board: str, outcome_steps: int = 0, terminals: str = "auto"):
    return jaxcfr.lower_public(jaxcfr.load_game(_SPOT.format(board)), terminals=terminals,
                               outcome_steps=outcome_steps)


def test_walked_outcomes_and_hand_buckets():
    assert [walked_outcomes(k, 48, 8) for k in (1, 13, 22, 35, 36, 37, 46, 48)] == [
        1, 13, 22, 36, 36, 40, 48, 48]
    assert walked_outcomes(35, 48, 0) == 35                  # off: the classes
    assert all(k <= walked_outcomes(k, 2 * k, 8) <= k * 9 / 8 for k in range(8, 500))
    # the smaller player by 8 steps a doubling, at most the larger's bucket
    assert hand_buckets((175, 252)) == (176, 256) and hand_buckets((252, 175)) == (256, 176)
    assert hand_buckets((178, 259)) == (192, 272) and hand_buckets((250, 251)) == (256, 256)
    assert hand_buckets((300, 300)) == (304, 304)


def test_program_keys_over_suit_patterns():
    raw = {b: _lowered(b) for b in TURNS}
    walked = {b: _lowered(b, OUTCOME_STEPS) for b in TURNS}
    # the tree is the suit pattern's: 48 river cards, 35 classes, 36 classes
    assert [raw[b].structure.widths[2] for b in TURNS] == [48] * 3 + [35] * 3 + [36] * 2
    assert [walked[b].structure.widths[2] for b in TURNS] == [48] * 3 + [36] * 5
    # 35 classes walk 36 outcomes: the paired turn's tree, node for node
    assert walked["Td9d6hKd"].level_start == raw["Td9d6h6c"].level_start
    assert len(walked["Td9d6hKd"].tensors.merge_parent) == 3 * 12
    # card removal dedups the blocked sets and strength tables: the board's sizes
    assert [raw[b].tensors.alive.shape[0] for b in TURNS] == [19, 20, 18, 14, 14, 15, 15,
                                                             15]
    assert [raw[b].tensors.strengths.shape[0] for b in TURNS] == [28, 32, 27, 23, 31, 26,
                                                                 24, 24]
    # padded: the tree's boards (one per river card walked, and the turn's)
    padded = {b: bucket_hands(walked[b]) for b in TURNS}
    assert [padded[b].tensors.alive.shape[0] for b in TURNS] == [49] * 3 + [37] * 5
    assert [padded[b].tensors.strengths.shape[0] for b in TURNS] == [48] * 3 + [36] * 5
    assert [padded[b].structure.hands for b in TURNS] == [
        (24, 16), (24, 24), (24, 16), (24, 16), (24, 16), (24, 24), (24, 24), (24, 24)]
    # programs: 7 unpadded, 5 with the hands and board tables padded, 4 with the
    # outcomes walked to a bucket too: 2 trees x 2 pairs of hand buckets
    assert len({program_key(g) for g in raw.values()}) == 7
    assert len({program_key(bucket_hands(g)) for g in raw.values()}) == 5
    keys = {program_key(g) for g in padded.values()}
    assert len(keys) == 4
    assert keys == {program_key(padded[b]) for b in ("Td9d6hAc", "Td9d6h2s", "Td9d6hKd",
                                                     "Td9d6h3d")}


def test_program_keys_over_river_suit_patterns():
    # a river has no chance node: its boards differ in hands and, ranked, in the cards
    # any hand holds (18 or 19 here), padded to 24
    raw = [_lowered(b, terminals="ranked") for b in RIVERS]
    assert [int(g.tensors.cards.shape[0]) for g in raw] == [18, 18, 19, 18, 19, 18]
    padded = [bucket_hands(g) for g in raw]
    assert {int(g.tensors.cards.shape[0]) for g in padded} == {24}
    # 4 pairs of hand counts (18 + 16 twice, 22 + 17 twice), 2 pairs of buckets
    assert len({program_key(g) for g in raw}) == 4
    assert len({program_key(g) for g in padded}) == 2            # (24, 16) and (24, 24)


def test_the_lowered_game_cache_keys_the_walked_outcomes():
    from jaxcfr.lowering.public_cache import public_identity
    text = _SPOT.format("Td9d6hKd")
    game = jaxcfr.load_game(text)
    plain = public_identity(text, game)
    assert plain is not None and "outcome_steps" not in plain      # keys as before
    assert public_identity(text, game, outcome_steps=OUTCOME_STEPS) == {
        **plain, "outcome_steps": OUTCOME_STEPS}
    assert public_identity(text, game, merges=False, outcome_steps=OUTCOME_STEPS) == \
        public_identity(text, game, merges=False)                  # nothing merged


@pytest.mark.slow
def test_another_suit_pattern_compiles_nothing():
    # the flush draw's turn (35 classes, walked 36) runs the paired turn's program (36)
    a, b = (bucket_hands(_lowered(x, OUTCOME_STEPS)) for x in ("Td9d6h6c", "Td9d6h3d"))
    assert program_key(a) == program_key(b)
    assert program_key(bucket_hands(_lowered("Td9d6h3d"))) != program_key(a)
    first = jaxcfr.Runner(a, jaxcfr.make_solver("dcfr"), chunk=4, compilation_cache=False)
    jax.block_until_ready(first.advance(first.init(), 4))
    with count_compiles() as counts:
        other = jaxcfr.Runner(b, jaxcfr.make_solver("dcfr"), chunk=4,
                              compilation_cache=False)
        jax.block_until_ready(other.advance(other.init(), 4))
    _assert_nothing_compiled(counts)


def _profiles(board: str, iterations: int, terminals: str = "auto"):
    """The float64 profiles (by key) and final metrics of the merged tree, unpadded, and
    of the walked, padded one (``solve_public``'s hand buckets)."""
    out = []
    for buckets in (False, True):
        game = jaxcfr.lower_public(jaxcfr.load_game(_SPOT.format(board)),
                                   terminals=terminals,
                                   outcome_steps=OUTCOME_STEPS if buckets else 0)
        r = jaxcfr.solve_public(game, "postflop-dcfr", iterations, precision="float64",
                                hand_buckets=buckets)
        out.append((r.profile(), r.final, r.lowered.num_nodes))
    return out


def _assert_same_profiles(a, b, atol):
    assert set(a.keys()) == set(b.keys())
    worst = max(abs(p - b[k][x]) for k in a.keys() for x, p in a[k].items())
    assert worst <= atol, worst


@pytest.mark.slow
def test_walked_outcomes_solve_as_merged_ranked():
    # ranked terminals (the README ranges'): the flush draw's turn, 35 classes merged
    # against 36 walked, hands padded 18 + 16 -> 24 + 16: by key within 1e-12 (dense
    # terminals, what "auto" takes for 24 hands, measured 1.9e-12 on the strategies, the
    # walked card's subtree summed in its own order; exploitability within 1.8e-14:
    # docs/holdem.md, not run here to spare the slow set)
    (pa, fa, na), (pb, fb, nb) = _profiles("Td9d6hKd", 20, "ranked")
    assert (na, nb) == (954, 981)
    _assert_same_profiles(pa, pb, 1e-12)
    for k in ("exploitability", "nash_conv"):
        assert abs(fa[k] - fb[k]) <= 1e-12
    np.testing.assert_allclose(fb["values"], fa["values"], rtol=0, atol=1e-12)


@pytest.mark.slow
def test_a_flop_tree_walks_its_classes_only():
    # two chance rounds: the outcomes stay merged as they were (the flop's suit pattern
    # decides its turn cards; its rivers rounded up would cost nodes for nothing)
    game = jaxcfr.load_game(_SPOT.format("Td9d6h"))
    plain = jaxcfr.lower_public(game)
    walked = jaxcfr.lower_public(game, outcome_steps=OUTCOME_STEPS)
    assert plain.num_nodes == walked.num_nodes == 71002
    np.testing.assert_array_equal(plain.tensors.merge_parent, walked.tensors.merge_parent)
