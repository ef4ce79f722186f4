"""The sequence form computes what the node passes compute.

Oracles: :func:`jaxcfr.kernels.passes.action_values` and
:func:`jaxcfr.kernels.passes.own_reach_at_rows` (the node passes, themselves checked
against the NumPy reference CFR in
``test_solvers.py``) on random strategies: for every player alone (an alternating
update) and for all at once, on two- and three-player games, an ``.efg`` game whose
information sets span several depths, an abstracted game, a batch of strategies on a
trailing axis, and the shared-structure stack (payoffs and chance per member). Also the
tables' invariants (leaves sorted by the updating player's sequence, padding inert) and
the tie rule of :func:`jaxcfr.kernels.numerics.instantaneous_regret`.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr.solvers import estimators
from jaxcfr.kernels import numerics
from jaxcfr.kernels import passes
from jaxcfr.kernels import sequence
from jaxcfr.kernels.values import SequenceForm
from jaxcfr.lowering.stack import shared_structure
from jaxcfr.tensors import DECISION, TERMINAL_NODE, GameTensors, to_device

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C

_SLOW = pytest.mark.slow
GAMES = ["kuhn_poker"] + [pytest.param(g, marks=_SLOW) for g in (
    "different_depths", "kuhn_poker(players=3)", "leduc_poker", "matching_pennies")]
TOL = 2e-6


def _random_strategy(lowered, rng, batch=()):
    raw = rng.random(lowered.tensors.legal_mask.shape + batch).astype(np.float32)
    raw[raw < 0.3] = 0                         # some zero probabilities, as RM+ makes
    mask = lowered.tensors.legal_mask
    return passes.regret_matching(jnp.asarray(raw), jnp.asarray(mask))


@functools.partial(jax.jit, static_argnames=("s",))
def _node_values(t, s, strategy, players):
    rows, actions = t.legal_mask.shape
    edge = passes.edge_probabilities(t, strategy)
    reach = passes.reach_pass(t, s, edge)
    values = passes.value_pass(t, s, edge, players)
    q = passes.action_values(t, s, passes.opponent_reach(reach), values, rows, actions, players)
    return q, passes.own_reach_at_rows(t, reach)


def _check(lowered, tensors_host, strategy, structure):
    t = to_device(tensors_host, np.float32)
    tables = jax.tree_util.tree_map(jnp.asarray, sequence.sequence_tables(
        tensors_host, structure.level_start, structure.num_players))
    owner = np.asarray(tensors_host.infoset_player)
    scale = 1.0
    for players in [tuple(range(structure.num_players))] + [
            jnp.asarray([p]) for p in range(structure.num_players)]:
        q_nodes, own_nodes = _node_values(t, structure, strategy, players)
        q_seq, own_seq = jax.jit(lambda tab, st, pl=players: sequence.counterfactual_action_values(
            tab, st, pl, structure.num_players))(tables, strategy)
        mine = np.isin(owner, np.asarray(players))
        scale = max(scale, float(np.abs(q_nodes).max()))
        np.testing.assert_allclose(np.asarray(q_seq)[mine], np.asarray(q_nodes)[mine],
                                   rtol=TOL, atol=TOL * scale)
        # other players' rows are exactly 0 in the sequence form
        assert not np.asarray(q_seq)[~mine & (owner >= 0)].any()
        np.testing.assert_allclose(np.asarray(own_seq)[owner >= 0],
                                   np.asarray(own_nodes)[owner >= 0], rtol=TOL, atol=TOL)


@pytest.mark.parametrize("name", GAMES)
def test_sequence_form_equals_node_passes(name):
    lowered = C.lowered(name)
    rng = np.random.default_rng(7)
    # a batch of three strategies on a trailing axis shares every gather
    _check(lowered, lowered.tensors, _random_strategy(lowered, rng, (3,)), lowered.structure)


class _FirstTwo:
    """An action abstraction: keep the first two legal actions (Leduc: no raises)."""

    def actions(self, state, player):
        return list(state.legal_actions())[:2]


@pytest.mark.slow
def test_abstracted_game():
    """An abstracted game is lowered as the smaller game (subtrees below dropped actions
    are not walked: its rows hold the kept actions only)."""
    full = C.lowered("leduc_poker")
    lowered = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), abstraction=_FirstTwo())
    assert lowered.num_nodes < full.num_nodes and lowered.max_actions == 2
    rng = np.random.default_rng(11)
    _check(lowered, lowered.tensors, _random_strategy(lowered, rng), lowered.structure)


def test_shared_structure_stack_data_axes():
    """Members with their own payoffs and chance probabilities: leaf values [P, T, B]."""
    base = C.lowered("kuhn_poker")
    scaled = dataclasses.replace(base, tensors=base.tensors._replace(
        payoff=base.tensors.payoff * 3.0))
    batch = jaxcfr.stack([base, scaled])
    shared = shared_structure(batch)
    assert shared is not None and shared.payoff.shape[-1] == 2
    rng = np.random.default_rng(3)
    strategy = _random_strategy(base, rng, (2,))
    _check(base, shared, strategy, batch.structure)


def test_tables_are_sorted_and_padding_is_inert():
    lowered = C.lowered("leduc_poker")
    t = lowered.tensors
    plain = sequence.sequence_tables(t, lowered.level_start, 2)
    padded = sequence.sequence_tables(t, lowered.level_start, 2, multiple=7)
    empty = (lowered.num_rows - 1) * lowered.max_actions
    for tables in (plain, padded):
        for i in range(2):
            own = tables.leaf_own[i]
            assert (np.diff(own) >= 0).all()               # sorted: a sorted segment sum
            assert own[-1] == empty or not (own == empty).any()   # the empty sequence last
        for level in tables.level_rows:
            for i in range(2):
                assert (np.diff(tables.row_parent[level[i]]) >= 0).all()
    assert padded.leaf_own.shape[1] % 7 == 0
    assert all(level.shape[1] % 7 == 0 for level in padded.level_rows)
    # the padded tables give the same values
    rng = np.random.default_rng(1)
    strategy = _random_strategy(lowered, rng)
    values = jax.jit(lambda tab, st: sequence.counterfactual_action_values(tab, st, (0, 1), 2))
    a = values(jax.tree_util.tree_map(jnp.asarray, plain), strategy)
    b = values(jax.tree_util.tree_map(jnp.asarray, padded), strategy)
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-6, atol=1e-7)


def _reference_tables(tensors, level_start, p, dtype, multiple=1):
    """The tables built the straightforward way: every per-node quantity ``[N]``-sized in
    int64 / float64 (the tensors made dense), cast to the tables' dtypes at the end."""
    t = GameTensors(*(np.asarray(x) for x in tensors))
    n = t.parent.shape[0]
    rows, actions = t.legal_mask.shape
    sink = rows - 1
    empty = sink * actions
    last = np.full((n, p), empty, dtype=np.int64)
    own = np.zeros((n, p), dtype=np.int64)
    prob = np.asarray(t.chance_prob, dtype=np.float64)
    chance = np.ones_like(prob)
    for d in range(1, len(level_start) - 1):
        lo, hi = level_start[d], level_start[d + 1]
        par = t.parent[lo:hi]
        mine = t.edge_owner[lo:hi, None] == np.arange(p)[None, :]
        last[lo:hi] = np.where(mine, t.edge_index[lo:hi, None], last[par])
        own[lo:hi] = own[par] + mine
        chance[lo:hi] = chance[par] * prob[lo:hi]
    payoff = np.asarray(t.payoff, dtype=np.float64)
    has_payoff = (payoff != 0).reshape(n, -1).any(axis=1)
    leaves = np.flatnonzero((t.node_kind == TERMINAL_NODE) | has_payoff)
    extra = -len(leaves) % multiple
    leaf_own, leaf_others, leaf_value, leaf_node = [], [], [], []
    for i in range(p):
        order = leaves[np.argsort(last[leaves, i], kind="stable")]
        seqs = np.concatenate([last[order], np.full((extra, p), empty)])
        leaf_node.append(np.concatenate([order, np.zeros(extra, order.dtype)]))
        leaf_own.append(seqs[:, i])
        leaf_others.append(seqs[:, [j for j in range(p) if j != i]].T)
        value = numerics.trail(chance[order], payoff.ndim - 1) * payoff[order, i]
        leaf_value.append(np.concatenate([value, np.zeros((extra,) + value.shape[1:])]))
    decision = np.flatnonzero(t.node_kind == DECISION)
    owner = t.node_player[decision]
    at = t.node_infoset[decision]
    row_parent = np.full(rows, empty, dtype=np.int64)
    row_depth = np.zeros(rows, dtype=np.int64)
    row_parent[at] = last[decision, owner]
    row_depth[at] = own[decision, owner]
    depth = int(row_depth.max(initial=0))
    ancestors = np.full((rows, max(depth, 1)), empty, dtype=np.int64)
    current = row_parent
    for k in range(depth):
        ancestors[:, k] = current
        current = row_parent[current // actions]
    row_player = np.asarray(t.infoset_player)
    own_rows = [np.flatnonzero(row_player == i) for i in range(p)]
    width = max(len(r) for r in own_rows)
    width += -width % multiple
    player_rows = np.stack([np.concatenate([r, rows + np.arange(width - len(r))])
                            for r in own_rows]).astype(np.int32)
    level_rows = []
    for d in range(1, depth + 1):
        per_player = [np.flatnonzero((row_depth == d) & (row_player == i)) for i in range(p)]
        per_player = [r[np.argsort(row_parent[r], kind="stable")] for r in per_player]
        width = max(len(r) for r in per_player)
        width += -width % multiple
        level_rows.append(np.stack([np.concatenate([r, np.full(width - len(r), sink)])
                                    for r in per_player]).astype(np.int32))
    return sequence.SequenceTables(
        leaf_own=np.stack(leaf_own).astype(np.int32),
        leaf_others=np.stack(leaf_others).reshape(p, p - 1, -1).astype(np.int32),
        leaf_value=np.stack(leaf_value).astype(dtype),
        leaf_node=np.stack(leaf_node).astype(np.int32),
        row_parent=row_parent.astype(np.int32),
        row_ancestors=ancestors.astype(np.int32),
        player_rows=player_rows,
        level_rows=tuple(level_rows))


def _assert_identical(got, want):
    """Same tables to the bit: fields, dtypes, shapes and bytes."""
    assert len(got.level_rows) == len(want.level_rows)
    for name, a, b in zip(want._fields, got, want):
        for x, y in (zip(a, b) if name == "level_rows" else ((a, b),)):
            assert x.dtype == y.dtype and x.shape == y.shape, (name, x.dtype, y.dtype,
                                                                x.shape, y.shape)
            assert x.tobytes() == y.tobytes(), name


NARROW = ["kuhn_poker", "kuhn_poker(players=3)", "different_depths", "goofspiel(cards=3)",
          "liars_dice(sides=3)", "leduc_poker"]


@pytest.mark.parametrize("name", NARROW)
def test_tables_are_built_narrow_and_equal_the_wide_construction(name, monkeypatch):
    """The tables, built in their own dtypes level by level in chunks (int32 indices,
    float values in the run's dtype, a compact host ``payoff`` / ``chance_prob`` read by
    slices), are bit-identical to the straightforward int64 / float64 construction: in
    float32 and float64, padded to a multiple or not, with chunks of 5 nodes (levels split
    across chunks) and the default."""
    lowered = C.lowered(name)
    p = lowered.num_players
    for chunk in (5, sequence._CHUNK):
        monkeypatch.setattr(sequence, "_CHUNK", chunk)
        for dtype, multiple in ((np.float32, 1), (np.float64, 1), (np.float32, 7)):
            got = sequence.sequence_tables(lowered.tensors, lowered.level_start, p, dtype,
                                           multiple=multiple)
            _assert_identical(got, _reference_tables(lowered.tensors, lowered.level_start, p,
                                                     dtype, multiple))


def test_tables_with_payoffs_at_inner_nodes_equal_the_wide_construction(monkeypatch):
    """A node that is not terminal but has a payoff is a leaf too (dense ``payoff``, a
    payoff put on every third decision and chance node of Leduc): the same bits."""
    monkeypatch.setattr(sequence, "_CHUNK", 7)
    lowered = C.lowered("leduc_poker")
    t = lowered.tensors
    payoff = np.array(t.payoff, dtype=np.float32)
    inner = np.flatnonzero(np.asarray(t.node_kind) != TERMINAL_NODE)[::3]
    payoff[inner] = np.float32(0.3) * np.array([1, -1], np.float32)
    t = t._replace(payoff=payoff)
    got = sequence.sequence_tables(t, lowered.level_start, 2, np.float32)
    want = _reference_tables(t, lowered.level_start, 2, np.float32)
    _assert_identical(got, want)
    assert got.leaf_own.shape[1] > np.count_nonzero(np.asarray(t.node_kind) == TERMINAL_NODE)


def test_tables_of_a_shared_structure_stack_equal_the_wide_construction(monkeypatch):
    """Trailing data axes (payoff ``[N, P, B]``, chance ``[N, B]``): the same bits, and
    the stacked (vmapped) tables built from narrow members equal the reference's."""
    monkeypatch.setattr(sequence, "_CHUNK", 3)
    base = C.lowered("kuhn_poker")
    scaled = dataclasses.replace(base, tensors=base.tensors._replace(
        payoff=np.asarray(base.tensors.payoff) * 3.0))
    shared = shared_structure(jaxcfr.stack([base, scaled]))
    got = sequence.sequence_tables(shared, base.level_start, 2, np.float32)
    _assert_identical(got, _reference_tables(shared, base.level_start, 2, np.float32))
    stack = C.small_stack()
    got = sequence.stacked_sequence_tables(stack.tensors, stack.level_start, stack.num_players)
    for b in range(stack.tensors.parent.shape[0]):
        want = _reference_tables(GameTensors(*(np.asarray(x[b]) for x in stack.tensors)),
                                 stack.level_start, stack.num_players, np.float32)
        one = jax.tree_util.tree_map(lambda x, b=b: x[b], got)
        assert one.row_parent.tobytes() == want.row_parent.tobytes()
        for field, axis in (("leaf_own", 1), ("leaf_others", 2), ("leaf_value", 1),
                            ("leaf_node", 1)):
            mine, ref = getattr(one, field), getattr(want, field)
            head = np.take(mine, np.arange(ref.shape[axis]), axis=axis)
            assert head.dtype == ref.dtype and head.tobytes() == ref.tobytes(), field


def test_leaves_before_a_first_move_keep_the_sink_at_zero():
    """A leaf before a player's first move has its value in the tables (the evaluation
    reads it) but feeds only the empty sequence, which the update sets back to 0: the sink
    row's values stay exactly 0 (its regret too)."""
    lowered = C.lowered("different_depths")
    t = sequence.sequence_tables(lowered.tensors, lowered.level_start, 2)
    empty = (lowered.num_rows - 1) * lowered.max_actions
    assert (t.leaf_value[1][t.leaf_own[1] == empty] != 0).any()     # player 1 may never move
    strategy = _random_strategy(lowered, np.random.default_rng(2))
    tables = jax.tree_util.tree_map(jnp.asarray, t)
    for players in ((0, 1), jnp.asarray([1])):
        q, _ = jax.jit(lambda tab, st, pl=players: sequence.counterfactual_action_values(
            tab, st, pl, 2))(tables, strategy)
        assert not np.asarray(q)[-1].any()


EVALUATED = ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "different_depths",
             "rock_paper_scissors", "matching_pennies", "goofspiel(cards=3)",
             "liars_dice(sides=3)"]
EFG = ["2_player_chance_nonterm_outcomes_and_missing_term_outcomes", "3_player", "cent2",
       "selten1975_fig1_horse", "reduction_generic_payoffs"]


def _random_table(mask, seed, batch=(3,)):
    """A random table over the legal actions of ``mask`` (rows not normalised)."""
    rng = np.random.default_rng(seed)
    raw = rng.random(mask.shape + batch) ** 3
    raw[rng.random(raw.shape) < 0.2] = 0                    # some zero probabilities
    return np.where(numerics.trail(mask, raw.ndim), raw, 0)


@pytest.mark.parametrize("name", EVALUATED + [f"efg:{n}" for n in EFG])
def test_best_response_values_equal_the_node_sweeps(name):
    """The evaluation on the sequence form (values and best-response values: a max in the
    row pass) equals the node passes' best-response sweeps to float64 rounding, on games
    of two and three players, with chance, information sets spanning depths, payoffs at
    inner nodes and leaves before a player's first move; for a batch of profiles."""
    lowered = (jaxcfr.lower(jaxcfr.load_game(str(C.FIXTURES_EFG / f"{name[4:]}.efg")))
               if name.startswith("efg:") else C.lowered(name))
    table = _random_table(lowered.tensors.legal_mask, 0)
    seq = jaxcfr.evaluate(lowered, table, dtype="float64", normalise=True)
    nodes = jaxcfr.evaluate(lowered, table, dtype="float64", normalise=True,
                            sequence_form=False)
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_allclose(seq[key], nodes[key], rtol=0, atol=1e-12, err_msg=key)


def test_best_response_values_of_a_stack():
    """A stack (members padded to one shape) is evaluated on its stacked tables."""
    stack = C.small_stack()
    table = _random_table(stack.tensors.legal_mask, 4, ())                   # [B, I, A]
    seq = jaxcfr.evaluate(stack, table, dtype="float64", normalise=True)
    nodes = jaxcfr.evaluate(stack, table, dtype="float64", normalise=True, sequence_form=False)
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_allclose(seq[key], nodes[key], rtol=0, atol=1e-12, err_msg=key)


def test_exact_estimator_uses_the_tables_when_present():
    """The estimator's value kernel: the node passes on plain GameTensors, the sequence
    form on SequencedTensors, with the same estimate."""
    lowered = C.lowered("different_depths")
    t = to_device(lowered.tensors, np.float32)
    tables = jax.tree_util.tree_map(jnp.asarray, sequence.sequence_tables(
        lowered.tensors, lowered.level_start, 2))
    sequenced = sequence.with_sequences(t, tables)
    assert isinstance(sequenced, GameTensors) and sequenced.parent is t.parent
    strategy = _random_strategy(lowered, np.random.default_rng(5))
    node_exact = jax.jit(
        lambda tt, st, p: estimators.Exact().estimate(tt, lowered.structure, st, p))
    for player in (None, jnp.asarray(0), jnp.asarray(1)):
        a = node_exact(t, strategy, player)
        b = jax.jit(lambda tt, st, p: estimators.Exact(values=SequenceForm()).estimate(
            tt, lowered.structure, st, p))(sequenced, strategy, player)
        rows = np.asarray(a.average_rows)
        for x, y in ((a.regret, b.regret), (a.average, b.average)):
            np.testing.assert_allclose(np.asarray(y)[rows], np.asarray(x)[rows],
                                       rtol=TOL, atol=TOL)


def test_ties_are_exact_zero_regrets():
    """Values equal up to rounding give regret exactly 0; real differences are kept."""
    q = jnp.asarray([[0.0625, 0.0625 - 7.45e-9], [0.5, 0.25], [1e-3, 1e-3 + 1e-6]],
                    jnp.float32)
    strategy = jnp.full((3, 2), 0.5, jnp.float32)
    mask = jnp.ones((3, 2), bool)
    regret = np.asarray(numerics.instantaneous_regret(q, strategy, mask))
    assert (regret[0] == 0).all()                       # a tie, within 4 ulps of 0.0625
    np.testing.assert_allclose(regret[1], [0.125, -0.125])
    assert (regret[2] != 0).all()                       # 1e-6 apart is a real difference
    masked = np.asarray(numerics.instantaneous_regret(q, strategy, mask.at[1, 1].set(False)))
    assert masked[1, 1] == 0
