"""Hand buckets (``jaxcfr.lowering.public_buckets``): a public tree's hands padded so
that other boards of the same bet tree share one compiled program.

Oracles: the ladder's known values; another board whose card removal leaves other hand
counts in the same buckets compiles nothing (JAX's compile events and the trace counts,
as ``tests/test_compile_once.py``), while without buckets it does; padded and unpadded
solves agree in float64 (average strategy, values, exploitability) within 1e-12, dense
and ranked terminals, on a river and (slow) a turn; results, profiles and grids name the
real hands only.
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.public_buckets import bucket_hands, hand_bucket, unbucketed
from jaxcfr.profiles.profile import Profile

try:
    from tests.test_compile_once import _assert_nothing_compiled, count_compiles
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from test_compile_once import _assert_nothing_compiled, count_compiles

#: Small ranges and a small bet tree; on the rivers ...As and ...Qs (turns ...Ac, ...Qc)
#: card removal leaves 18 + 16 and 19 + 15 hands: both in the buckets 24 + 16.
_SPOT = ("holdem_spot(board='{}', ranges=('AA,KK,QQ,AKs', 'JJ,TT,AQs,KQs'), pot=100, "
         "stack=200, bets='60%', raises='', add_allin=0)")
RIVERS = ("Td9d6h5cAs", "Td9d6h5cQs")
TURNS = ("Td9d6hAc", "Td9d6hQc")


@functools.cache
def _lowered(board: str, terminals: str = "auto"):
    return jaxcfr.lower_public(jaxcfr.load_game(_SPOT.format(board)), terminals=terminals)


def test_the_ladder():
    # 16 buckets a doubling, steps of at least 8: the README river's 175 + 252 hands and
    # the other board's 175 + 251 share 176 + 256; at most 1/16 more hands
    assert [hand_bucket(n) for n in (0, 1, 8, 9, 17, 128, 129, 175, 251, 252, 256, 257,
                                     1081)] == [0, 8, 8, 16, 24, 128, 136, 176, 256, 256,
                                                256, 272, 1088]
    assert all(n <= hand_bucket(n) <= n * 17 / 16 for n in range(128, 5000))
    assert hand_bucket(175, steps=8) == 176 and hand_bucket(257, steps=8) == 288


def test_buckets_pad_the_hands_and_nothing_else():
    a, b = (_lowered(x) for x in RIVERS)
    assert [len(x) for x in a.hands.labels] == [18, 16]
    assert [len(x) for x in b.hands.labels] == [19, 15]
    pa, pb = bucket_hands(a), bucket_hands(b)
    assert pa.structure == pb.structure and pa.structure.hands == (24, 16)
    assert all(np.shape(x) == np.shape(y) for x, y in zip(pa.tensors, pb.tensors))
    assert list(pa.tensors.hand_count) == [18, 16]
    # the readers' sizes are the real ones; the padded rows have no key
    assert pa.sizes()["hands"] == [18, 16] and pa.sizes()["padded_hands"] == [24, 16]
    assert pa.rows_per_player == a.rows_per_player
    assert [k for k in pa.infoset_keys if k is not None] == list(a.infoset_keys)
    assert bucket_hands(pa) is pa
    # the unpadded rows come back in the unpadded game's order
    table = np.arange(pa.num_rows, dtype=np.float64)[:, None] * np.ones(pa.max_actions)
    game, back = unbucketed(pa, table)
    assert game is a and back.shape == (a.num_rows, a.max_actions)
    rows = [r for r, k in enumerate(pa.infoset_keys) if k is not None]
    np.testing.assert_array_equal(back[:-1, 0], rows)
    assert back[-1, 0] == pa.num_rows - 1                                   # the sink last
    # the tree's arrays, which the padding leaves as they were, are the unpadded game's
    kept = [n for n, x, y in zip(a.tensors._fields, a.tensors, pa.tensors) if x is y]
    assert {"parent", "child_of", "fold_payoff"} <= set(kept)
    assert "alive" not in kept and "node_base" not in kept
    # a run's profile from the padded rows (what `jaxcfr train` writes) names the real
    # hands only, each its own row's
    profile = Profile.from_lowered(pa, table / table.sum(axis=1, keepdims=True).clip(1))
    assert list(profile.keys) == list(Profile.from_lowered(a, back).keys) == list(
        a.infoset_keys)
    np.testing.assert_array_equal(profile.table(a)[0], Profile.from_lowered(
        a, back / back.sum(axis=1, keepdims=True).clip(1)).table(a)[0])


def test_another_board_of_the_bet_tree_compiles_nothing():
    a, b = _lowered(RIVERS[0]), _lowered(RIVERS[1])
    assert a.structure != b.structure          # unpadded: another program (other hands)
    first = jaxcfr.Runner(bucket_hands(a), jaxcfr.make_solver("dcfr"), chunk=8,
                          compilation_cache=False)
    jax.block_until_ready(first.advance(first.init(), 8))
    with count_compiles() as counts:
        other = jaxcfr.Runner(bucket_hands(b), jaxcfr.make_solver("dcfr"), chunk=8,
                              compilation_cache=False)
        state = other.advance(other.init(), 8)
        jax.block_until_ready(state)
    _assert_nothing_compiled(counts)
    # the other board's own tensors were used (not the first's): its hand weights
    assert np.asarray(state.regret).shape == (other.lowered.num_rows, 2)
    assert not np.array_equal(np.asarray(first.lowered.tensors.weights),
                              np.asarray(other.lowered.tensors.weights))


@functools.cache
def _both(board: str, iterations: int):
    """``(unpadded, padded)`` float64 solves of the spot on ``board``."""
    return tuple(jaxcfr.solve_public(_SPOT.format(board), "postflop-dcfr", iterations,
                                     precision="float64", hand_buckets=b)
                 for b in (False, True))


def _assert_same(plain, padded):
    assert padded.lowered.padded_hands == () and plain.lowered.padded_hands == ()
    assert padded.average_strategy.shape == plain.average_strategy.shape
    np.testing.assert_allclose(padded.average_strategy, plain.average_strategy, rtol=0,
                               atol=1e-12)
    for k in ("exploitability", "nash_conv"):
        np.testing.assert_allclose(padded.final[k], plain.final[k], rtol=0, atol=1e-12)
    np.testing.assert_allclose(padded.final["values"], plain.final["values"], rtol=0,
                               atol=1e-12)


def test_padded_solves_equal_unpadded_on_a_river():
    _assert_same(*_both(RIVERS[0], 40))


def test_padded_public_kuhn_equals_unpadded():
    # the default set's case of the oracle: a small public tree (3 hands a player, 8
    # padded), float64, the average strategy within 1e-12 (the exploitability: the slow
    # cases below)
    from jaxcfr_games.public_kuhn import PublicKuhn
    low = jaxcfr.lower_public(PublicKuhn())
    assert bucket_hands(low).structure.hands == (8, 8)
    out = []
    for g in (low, bucket_hands(low)):
        r = jaxcfr.Runner(g, jaxcfr.make_solver("dcfr"), precision="float64", chunk=16,
                          compilation_cache=False)
        out.append(unbucketed(g, r.profile(r.advance(r.init(), 16)))[1])
    np.testing.assert_allclose(out[1], out[0], rtol=0, atol=1e-12)


def test_padded_ranked_terminals_equal_unpadded():
    # ranked terminals (a hold'em spot's of many hands: sorted running sums, longer when
    # padded), through the Runner
    low = _lowered(RIVERS[0], "ranked")
    out = []
    for g in (low, bucket_hands(low)):
        r = jaxcfr.Runner(g, jaxcfr.make_solver("postflop-dcfr"), precision="float64",
                          chunk=20, compilation_cache=False)
        state = r.advance(r.init(), 40)
        out.append((unbucketed(g, r.profile(state))[1], r.evaluate(state)))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(out[1][1]["exploitability"], out[0][1]["exploitability"],
                               rtol=0, atol=1e-12)


def test_padded_solves_equal_unpadded_on_a_turn():
    _assert_same(*_both(TURNS[0], 20))


def test_results_profiles_and_grids_show_the_real_hands_only():
    from jaxcfr_games.holdem.grid import hand_grid
    plain, padded = _both(RIVERS[0], 40)
    assert padded.profile().keys() == plain.profile().keys()
    assert padded.hand_values(())["hands"] == plain.hand_values(())["hands"]
    assert padded.strategy(0, "AhAd") == pytest.approx(plain.strategy(0, "AhAd"), abs=1e-12)
    grid, want = hand_grid(padded, ()).rows(), hand_grid(plain, ()).rows()
    assert [(r["hand"], r["cell"]) for r in grid] == [(r["hand"], r["cell"]) for r in want]
    for r, w in zip(grid, want):
        assert {k: v for k, v in r.items() if k not in ("hand", "cell")} == pytest.approx(
            {k: v for k, v in w.items() if k not in ("hand", "cell")}, abs=1e-12)
    # the run's own profile (what `jaxcfr train` writes) from the padded rows
    low = bucket_hands(_lowered(RIVERS[0]))
    runner = jaxcfr.Runner(low, jaxcfr.make_solver("postflop-dcfr"), precision="float64")
    (profile,) = runner.profiles(runner.advance(runner.init(), 40))
    assert sorted(profile.keys) == sorted(Profile.from_lowered(
        low.unpadded, plain.average_strategy).keys)
