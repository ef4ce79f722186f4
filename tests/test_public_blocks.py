"""The public tree's per-player blocks (``jaxcfr.solvers.public_blocks``) are the row path.

An alternating, unlocked run on one public tree keeps its tables per player block
``[D_p, A, H_p]`` inside the compiled loop. Oracles, in float64, against the row path
(``Solver.step`` in a ``fori_loop`` on the ``[I, A]`` tables, as before the blocks):

* every preset (made alternating) on public Leduc and a hold'em river spot with ranked
  terminals, and three presets on public Kuhn, liar's dice (2 and 3 sides) and
  three-player Kuhn (``ALL_PRESETS_ON``, ``SOME_PRESETS``), by blocks of all
  ``A`` columns and (forced) of the legal columns alone: the state after every iteration (one
  compiled loop per iteration, the blocks converted at each end) and after one loop of
  all of them, and the exploitability of the average after every iteration. Bit for bit
  on the two-player card games and liar's dice 2 with every preset but postflop-dcfr; to
  1e-12 of the table's largest entry elsewhere: the two programs fuse differently, and
  XLA's CPU code contracts multiply-adds into FMAs per fusion (measured: a few units in
  the last place, e.g. 1 ulp of a hold'em regret after 4 iterations), which no change of
  ours can make the same in both;
* a Runner run resumed from its checkpoint's arrays is the uninterrupted run, bit for bit;
* the rows' order is unchanged (a checkpoint of an earlier version reads the same).
"""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.solvers import public_blocks
from jaxcfr.solvers.public import evaluate_public, public_device_tensors, public_solver
from jaxcfr_games.holdem.spot import HoldemSpot
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc
from jaxcfr_games.public_liars_dice import PublicLiarsDice

GAMES = {
    "kuhn": PublicKuhn,
    "leduc": PublicLeduc,
    "liars_dice": lambda: PublicLiarsDice(1, 2),
    "liars_dice3": lambda: PublicLiarsDice(1, 3),
    "kuhn3": lambda: PublicKuhn(players=3),
    "holdem": lambda: HoldemSpot(board="Td9d6h5c2s", ranges=("AA,T9s", "QQ,87s:0.5"), pot=10,
                                 stack=25, bets="50%, a", raises="2x", river_donk=None),
}

#: (game, preset) pairs whose tables are equal bit for bit (the others to 1e-12).
INEXACT_GAMES = {"kuhn3", "holdem", "liars_dice3"}
INEXACT_PRESETS = {"postflop-dcfr"}


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count", "blocks"))
def _loop(tensors, state, hp, *, solver, structure, count, blocks):
    """``count`` iterations in one compiled loop, by rows (``blocks`` None) or by blocks
    (``blocks``: whether they keep the legal columns alone)."""
    if blocks is not None:
        return public_blocks.iterate(solver, tensors, structure, state, hp, count, blocks)
    carry = jax.lax.fori_loop(0, count, lambda _, c: solver.step(tensors, structure, c, hp),
                              solver.start(tensors, state))
    return carry.state


def _same(a, b, exact: bool, what: str) -> None:
    assert a.arrays().keys() == b.arrays().keys(), what      # the same tables kept
    for field, x in a.arrays().items():
        x, y = np.asarray(x), np.asarray(getattr(b, field))
        if exact:
            assert np.array_equal(x, y), f"{what}: {field} differs"
        else:
            scale = max(1.0, float(np.abs(x).max(initial=0)))
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-12 * scale,
                                       err_msg=f"{what}: {field}")


def _check(game: str, name: str, iterations: int, compact: bool) -> None:
    lowered = jaxcfr.lower_public(GAMES[game]())
    s = lowered.structure
    solver = public_solver(jaxcfr.make_solver(name, alternating=True))
    exact = game not in INEXACT_GAMES and name not in INEXACT_PRESETS
    with precision.scope(np.float64):
        t = public_device_tensors(lowered, np.float64)
        hp = solver.hyperparams(np.float64)
        start = solver.init(t, dtype=np.float64)
        assert public_blocks.applies(solver, t, s)
        rows, blocks = start, start
        for k in range(iterations):
            rows = _loop(t, rows, hp, solver=solver, structure=s, count=1, blocks=None)
            blocks = _loop(t, blocks, hp, solver=solver, structure=s, count=1, blocks=compact)
            _same(rows, blocks, exact, f"{game} {name} iteration {k + 1}")
            ours = evaluate_public(lowered, blocks.strategy_sum, tensors=t)["nash_conv"]
            theirs = evaluate_public(lowered, rows.strategy_sum, tensors=t)["nash_conv"]
            assert ours == theirs if exact else abs(ours - theirs) <= 1e-12 * max(1, theirs)
        whole = _loop(t, start, hp, solver=solver, structure=s, count=iterations,
                      blocks=compact)
        _same(_loop(t, start, hp, solver=solver, structure=s, count=iterations, blocks=None),
              whole, exact, f"{game} {name}, one loop")


#: The game run with every preset: what a preset changes (its regret and average rules,
#: the tables it keeps) is the same code on every game, and what a game changes (its
#: shapes, players, ranked terminals, legal columns) the same for every preset; so every
#: preset runs on Leduc, every game with the three presets that keep the most different
#: state (plain regrets, a prediction table with discounts, the postflop solvers' average
#: resets).
ALL_PRESETS_ON = {"leduc"}
SOME_PRESETS = ("cfr", "pdcfr+", "postflop-dcfr")
#: The games whose legal-columns layout runs every one of ``SOME_PRESETS``; the others
#: run it with one (the layout converts every table alike, whatever the preset).
COMPACT_ALL_ON = {"leduc", "holdem"}


# The legal columns alone are a layout of the same tables, each converted alike: on
# Leduc and the river, the presets that keep the three kinds of state (``SOME_PRESETS``:
# compensated sums, a prediction, plain sums with resets) run in that layout, every
# preset in all columns on Leduc; the other games run the postflop solvers' there.
def _cases():
    # every case compiles four loops (10 to 45 CPU-s each, the row path's two shared by a
    # game's layouts): all are in the slow set; Kuhn adds CFR+ in all columns
    def runs(g, n, compact):
        if compact:
            return n in SOME_PRESETS and (g in COMPACT_ALL_ON or n == "postflop-dcfr")
        return g in ALL_PRESETS_ON or n in SOME_PRESETS or (g, n) == ("kuhn", "cfr+")
    return [pytest.param(g, n, c, id=f"{g}-{n}-{'compact' if c else 'blocks'}",
                         marks=pytest.mark.slow)
            for g in GAMES for n in jaxcfr.ALGORITHMS for c in (False, True) if runs(g, n, c)]


@pytest.mark.parametrize("game,name,compact", _cases())
def test_blocks_are_the_row_path(game, name, compact):
    """By blocks of all ``A`` columns, and of the legal columns alone (forced here; a run
    keeps them where the legal share is at most ``COMPACT_SHARE``)."""
    _check(game, name, 6, compact)


def test_legal_groups_count_each_decisions_legal_actions():
    lowered = jaxcfr.lower_public(PublicLiarsDice(1, 3))
    s, t = lowered.structure, lowered.tensors
    H, A = max(s.hands), t.legal_mask.shape[1]
    legal = np.asarray(t.legal_mask)[:-1].reshape(-1, H, A)[:, 0]          # [D, A]
    owner = np.asarray(t.node_player)[np.asarray(t.decision_node)]
    for p in range(2):
        counts = legal[owner == p].sum(axis=1)
        assert s.legal_groups[p] == tuple((int(k), int((counts == k).sum()))
                                          for k in np.unique(counts))
        assert sum(n for _, n in s.legal_groups[p]) == s.player_decisions[p]
    assert public_blocks.compacts(t, s)                          # liar's dice: few legal
    kuhn = jaxcfr.lower_public(PublicKuhn())
    assert not public_blocks.compacts(kuhn.tensors, kuhn.structure)   # every action legal


def test_player_decisions_count_each_players_decisions():
    lowered = jaxcfr.lower_public(PublicKuhn(players=3))
    t = lowered.tensors
    owner = np.asarray(t.node_player)[np.asarray(t.decision_node)]
    assert lowered.structure.player_decisions == tuple(
        int((owner == p).sum()) for p in range(3))
    assert sum(lowered.structure.player_decisions) * max(lowered.structure.hands) + 1 == \
        lowered.num_rows


def test_what_takes_the_row_path():
    lowered = jaxcfr.lower_public(PublicKuhn())
    t, s = lowered.tensors, lowered.structure
    assert public_blocks.applies(public_solver(jaxcfr.cfr_plus()), t, s)
    assert not public_blocks.applies(public_solver(jaxcfr.cfr()), t, s)       # simultaneous
    assert not public_blocks.applies(public_solver(jaxcfr.cfr_plus()), t, s, lock=object())
    assert not public_blocks.applies(public_solver(jaxcfr.cfr_plus()), t, s._replace(
        player_decisions=()))


def test_a_resumed_runner_is_the_uninterrupted_run():
    lowered = jaxcfr.lower_public(GAMES["holdem"]())
    with jaxcfr.Runner(lowered, jaxcfr.postflop_dcfr(), precision="float64") as runner:
        assert public_blocks.applies(runner.step_solver, runner.step_tensors,
                                     runner.step_structure, runner.lock)      # by blocks
        whole = runner.advance(runner.init(), 7)
        part = runner.advance(runner.init(), 4)
        arrays = {f: np.asarray(x) for f, x in part.arrays().items()}       # a checkpoint's
        resumed = runner.advance(runner.restore(arrays), 3)
    _same(whole, resumed, True, "resumed")


@pytest.mark.slow                      # (about 50 s a case on the shared 2-core machine)
@pytest.mark.parametrize("make", [
    PublicKuhn,
    pytest.param(lambda: HoldemSpot(board="QhJd8c5s3h", ranges=("AA,AKs:0.5,72o",
                                                                "KK,QQ:0.5")), id="river"),
    pytest.param(lambda: HoldemSpot(board="Td9d6h5c", ranges=(
        "AA,KK,T9s,87s,65s,AQo:0.5", "QQ,JJ,A5s,KQs,76s,T8s")), id="turn")])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_one_table_half_step_is_the_whole_tables_bit_for_bit(make, dtype, monkeypatch):
    """A flop's half-step keeps one node table at a time (``kernels.public.
    LEAN_NODE_ENTRIES``: edges per level, both players' reach in one table, the values
    written into its buffer): forced on Kuhn, a river and a turn with a merged chance level,
    the state after 3 iterations of ``postflop-dcfr`` (blocks path) and ``cfr`` (row
    path) is the whole tables' byte for byte."""
    from jaxcfr.kernels import public as kernels
    from jaxcfr.solvers.presets import make_solver
    lowered = jaxcfr.lower_public(make())
    out = {}
    for name, least, chunk in (("whole", 1 << 62, 4), ("one table", 0, 5)):
        monkeypatch.setattr(kernels, "LEAN_NODE_ENTRIES", least)
        out[name] = []                      # (the gate is read when tracing: another chunk)
        for preset in ("postflop-dcfr", "cfr"):
            runner = jaxcfr.Runner(lowered, public_solver(make_solver(preset)),
                                   precision=dtype, chunk=chunk)
            state = runner.advance(runner.init(), 3)
            out[name] += [np.asarray(x) for x in state if x is not None]
    for a, b in zip(out["whole"], out["one table"]):
        assert a.tobytes() == b.tobytes()
    assert max(np.abs(x).max() for x in out["whole"]) > 0
