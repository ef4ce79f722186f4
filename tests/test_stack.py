"""jaxcfr.stack: padding several lowered games to one batch is inert."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr.tensors import (CHANCE_NODE, DECISION, NO_PARENT, NO_PLAYER, PADDING, TERMINAL_NODE,
                            GameTensors)
from jaxcfr.lowering.stack import unstack_rows

MEMBERS = ["kuhn_poker", "leduc_poker(ranks=3)", "leduc_poker(ranks=4)"]
# float32 CFR+ amplifies rounding (the forest sums in another order): compare few
# iterations in float32 here, and many in float64 (test_stacked_solve_float64).
ITERATIONS = 10
TOL = 1e-5


@pytest.fixture(scope="module")
def members():
    return [jaxcfr.lower(jaxcfr.load_game(name), name=name) for name in MEMBERS]


@pytest.fixture(scope="module")
def batch(members):
    return jaxcfr.stack(members)


def member_tensors(batch, b: int) -> GameTensors:
    return GameTensors(*(np.asarray(x[b]) for x in batch.tensors))


def new_positions(member, batch) -> np.ndarray:
    """Where each node of ``member`` sits in the padded batch (levels keep their offsets)."""
    out = np.empty(member.num_nodes, dtype=np.int64)
    for d in range(len(member.level_start) - 1):
        lo, hi = member.level_start[d], member.level_start[d + 1]
        out[lo:hi] = batch.level_start[d] + np.arange(hi - lo)
    return out


# --------------------------------------------------------------------------------------------
# A NumPy reference pass over the tensors (no JAX)
# --------------------------------------------------------------------------------------------

def uniform(t: GameTensors) -> np.ndarray:
    mask = t.legal_mask.astype(np.float64)
    return mask / mask.sum(axis=1, keepdims=True)


def edge_probabilities(t: GameTensors, strategy: np.ndarray) -> np.ndarray:
    return strategy.reshape(-1)[t.edge_index] * t.chance_prob


def reference_values(t: GameTensors, levels, strategy: np.ndarray) -> np.ndarray:
    """Expected payoff of every node, bottom-up over the depth levels: ``[N, P]``."""
    edge = edge_probabilities(t, strategy)
    values = t.payoff.astype(np.float64).copy()
    for d in range(len(levels) - 2, 0, -1):
        lo, hi = levels[d], levels[d + 1]
        np.add.at(values, t.parent[lo:hi], edge[lo:hi, None] * values[lo:hi])
    return values


def reference_reach(t: GameTensors, levels, strategy: np.ndarray) -> np.ndarray:
    """Probability of reaching every node (everyone's and chance's moves): ``[N]``."""
    edge = edge_probabilities(t, strategy)
    reach = np.zeros(len(t.parent))
    reach[0] = 1.0
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        reach[lo:hi] = reach[t.parent[lo:hi]] * edge[lo:hi]
    return reach


def test_reference_pass_padded_equals_member(members, batch):
    for b, member in enumerate(members):
        t, tb = member.tensors, member_tensors(batch, b)
        values = reference_values(t, member.level_start, uniform(t))
        padded = reference_values(tb, batch.level_start, uniform(tb))
        pos = new_positions(member, batch)
        np.testing.assert_allclose(padded[pos], values, rtol=0, atol=1e-12)
        np.testing.assert_allclose(padded[0], values[0], atol=1e-12)
        reach = reference_reach(t, member.level_start, uniform(t))
        padded_reach = reference_reach(tb, batch.level_start, uniform(tb))
        np.testing.assert_allclose(padded_reach[pos], reach, atol=1e-12)
        padding = np.ones(batch.num_nodes, dtype=bool)
        padding[pos] = False
        assert (padded_reach[padding] == 0).all() and (padded[padding] == 0).all()
    # Kuhn's value under the uniform profile: player 0 gets 1/8.
    assert reference_values(members[0].tensors, members[0].level_start,
                            uniform(members[0].tensors))[0, 0] == pytest.approx(0.125)


# --------------------------------------------------------------------------------------------
# Shapes and padding
# --------------------------------------------------------------------------------------------

def test_stacked_shapes(members, batch):
    b = len(members)
    assert batch.batch_size == b and batch.members == tuple(members)
    widths = np.array([np.diff(m.level_start).tolist() + [0] * (len(batch.level_start) - 1 -
                                                               (len(m.level_start) - 1))
                       for m in members])
    assert np.diff(batch.level_start).tolist() == widths.max(axis=0).tolist()
    n, rows, a = batch.num_nodes, batch.num_rows, batch.max_actions
    assert rows == max(m.num_rows for m in members)
    assert a == max(m.max_actions for m in members)
    t = batch.tensors
    assert t.parent.shape == (b, n) and t.payoff.shape == (b, n, 2)
    assert t.legal_mask.shape == (b, rows, a) and t.infoset_player.shape == (b, rows)
    assert batch.infosets_per_player != ()
    assert batch.name.startswith("stack(")


def test_padding_is_inert_by_construction(members, batch):
    levels = batch.level_start
    for b, member in enumerate(members):
        t = member_tensors(batch, b)
        sink = member.num_rows - 1
        pos = new_positions(member, batch)
        padding = np.ones(batch.num_nodes, dtype=bool)
        padding[pos] = False
        assert (t.node_kind[padding] == PADDING).all()
        assert (t.node_kind[pos] == member.tensors.node_kind).all()
        assert (t.chance_prob[padding] == 0).all() and (t.payoff[padding] == 0).all()
        assert (t.edge_owner[padding] == member.num_players).all()
        assert (t.edge_index[padding] == sink * batch.max_actions).all()
        assert (t.node_infoset[padding] == sink).all()
        # Depth order still holds: parents in the level above, sorted.
        assert t.parent[0] == NO_PARENT
        for d in range(1, len(levels) - 1):
            par = t.parent[levels[d]:levels[d + 1]]
            assert (par >= levels[d - 1]).all() and (par < levels[d]).all()
            assert (np.diff(par) >= 0).all()
        # Padding hangs under the last node of the level above (real or padding, inert
        # either way) and only padding hangs under padding.
        assert (t.node_kind[1:][t.node_kind[t.parent[1:]] == PADDING] == PADDING).all()
        assert (t.node_kind[t.parent[pos[1:]]] != PADDING).all()
        # Real structure is kept: parents, rows, edges (re-based on the wider action axis).
        np.testing.assert_array_equal(t.parent[pos[1:]], pos[member.tensors.parent[1:]])
        np.testing.assert_array_equal(t.node_infoset[pos], member.tensors.node_infoset)
        old = member.tensors.edge_index
        np.testing.assert_array_equal(
            t.edge_index[pos],
            old // member.max_actions * batch.max_actions + old % member.max_actions)
        np.testing.assert_array_equal(t.infoset_rep[:sink], pos[member.tensors.infoset_rep[:sink]])
        # Padding rows behave like the sink: one legal slot, no owner.
        mask = t.legal_mask
        np.testing.assert_array_equal(mask[:sink + 1, :member.max_actions],
                                      member.tensors.legal_mask)
        assert not mask[:sink + 1, member.max_actions:].any()
        assert mask[sink:].sum(axis=1).tolist() == [1] * (batch.num_rows - sink)
        assert (t.infoset_player[sink:] == NO_PLAYER).all()
        assert set(np.unique(t.node_kind)) <= {DECISION, CHANCE_NODE, TERMINAL_NODE, PADDING}


def test_unstack_rows(members, batch):
    table = np.arange(batch.num_rows * 2).reshape(1, -1, 2).repeat(len(members), axis=0)
    parts = unstack_rows(batch, table)
    assert [p.shape[0] for p in parts] == [m.num_rows for m in members]


def test_stack_rejects_bad_input(members):
    three = jaxcfr.lower(jaxcfr.load_game("kuhn_poker(players=3)"))
    with pytest.raises(ValueError, match="number of players"):
        jaxcfr.stack([members[0], three])
    with pytest.raises(ValueError):
        jaxcfr.stack([])
    with pytest.raises(ValueError):
        jaxcfr.stack([jaxcfr.stack(members[:2]), members[0]])


# --------------------------------------------------------------------------------------------
# Solving a stack equals solving each member
# --------------------------------------------------------------------------------------------

def run(lowered, iterations=ITERATIONS):
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
    state = runner.advance(runner.init(), iterations)
    return runner.profile(state), runner.evaluate(state)


@pytest.fixture(scope="module")
def unbatched(members):
    return [run(m) for m in members]


def test_stacked_solve_matches_each_member(members, batch, unbatched):
    average, metrics = run(batch)
    assert average.shape == (len(members), batch.num_rows, batch.max_actions)
    for b, (member, (avg, ev)) in enumerate(zip(members, unbatched)):
        rows, a = member.num_rows, member.max_actions
        np.testing.assert_allclose(average[b, :rows, :a], avg, atol=TOL)
        assert not average[b, :rows - 1, a:].any()          # padded action slots get no mass
        for key in ("values", "best_response_values", "nash_conv"):
            np.testing.assert_allclose(metrics[key][b], ev[key], atol=TOL, err_msg=key)


def test_stacking_a_game_with_itself(members, unbatched):
    kuhn = members[0]
    pair = jaxcfr.stack([kuhn, kuhn])
    for x in pair.tensors:
        np.testing.assert_array_equal(x[0], x[1])
    runner = jaxcfr.Runner(pair, jaxcfr.cfr_plus())
    average = runner.profile(runner.advance(runner.init(), ITERATIONS))
    np.testing.assert_array_equal(average[0], average[1])
    np.testing.assert_allclose(average[0], unbatched[0][0], atol=TOL)


def test_stacked_solve_float64_matches_each_member_after_50_iterations():
    """In float64 the stack and the members agree to 1e-10 after 50 CFR+ iterations."""
    games = ["kuhn_poker", "leduc_poker(ranks=3)", "leduc_poker(ranks=4)"]
    members = [jaxcfr.lower(jaxcfr.load_game(g)) for g in games]

    def run(lowered):
        r = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), precision="float64")
        return r.profile(r.advance(r.init(), 50))
    stacked = run(jaxcfr.stack(members))
    assert stacked.dtype == np.float64
    for b, m in enumerate(members):
        diff = np.abs(stacked[b, :m.num_rows, :m.max_actions] - run(m)).max()
        assert diff < 1e-10, (games[b], diff)


@pytest.mark.parametrize("layout, copies", [("map", 1), ("forest", 6), ("shared", 16)])
def test_every_stack_layout_matches_each_member(members, unbatched, layout, copies):
    """A CPU steps a small stack member by member (``map``), a large one as one forest
    (different trees) or on a trailing axis (one shared tree): each member as if alone."""
    from jaxcfr.engine.seam import SHARED_MIN_MEMBERS, Forest, Mapped, Shared
    chosen = members if layout != "shared" else members[:1]
    games = chosen * copies
    assert (len(games) < SHARED_MIN_MEMBERS) == (layout == "map")
    runner = jaxcfr.Runner(jaxcfr.stack(games), jaxcfr.cfr_plus())
    if jax.default_backend() == "cpu":
        assert type(runner.layout) is {"map": Mapped, "forest": Forest, "shared": Shared}[layout]
    average = runner.profile(runner.advance(runner.init(), ITERATIONS))
    for b, member in enumerate(games):
        rows, a = member.num_rows, member.max_actions
        np.testing.assert_allclose(average[b, :rows, :a], unbatched[b % len(chosen)][0],
                                   atol=TOL, err_msg=f"member {b}")


@pytest.mark.parametrize("preset", ["dcfr", "pcfr_plus"])
def test_a_shared_stack_under_discounted_and_predictive_rules(members, preset):
    """On a trailing batch axis (one shared tree) each half-step re-matches only the
    updated player's rows of the strategy the loop carries (the prediction feeds it under
    PCFR+): every table of every member is the game's own run."""
    from jaxcfr.engine.seam import SHARED_MIN_MEMBERS, Shared
    game, solver = members[1], getattr(jaxcfr, preset)()
    runner = jaxcfr.Runner(jaxcfr.stack([game] * SHARED_MIN_MEMBERS), solver)
    if jax.default_backend() == "cpu":
        assert isinstance(runner.layout, Shared)
    stacked = runner.advance(runner.init(), ITERATIONS)
    alone = jaxcfr.Runner(game, solver)
    single = alone.advance(alone.init(), ITERATIONS)
    assert stacked.tables.keys() == single.tables.keys() == set(solver.tables)
    for field in single.tables:
        table = np.asarray(getattr(single, field))
        scale = float(np.abs(table).max()) or 1.0
        for b, member in enumerate(np.asarray(getattr(stacked, field))):
            np.testing.assert_allclose(member, table, rtol=TOL, atol=TOL * scale,
                                       err_msg=f"{preset} {field} member {b}")
