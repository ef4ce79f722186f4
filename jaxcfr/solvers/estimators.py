"""Estimators: the first part of a CFR update, counterfactual regrets and averaging weights.

An update (see :mod:`jaxcfr.solvers.solver`) is an *estimator*, a *regret rule* and an
*averaging rule*. The estimator reads the tensors and the current strategy and
returns an :class:`Estimate` for the rows it touched; the rules, which the presets
configure, fold it into the accumulated tables. Every estimator has the signature::

    estimate(tensors, structure, strategy, player, key, exploration, tables, plan) -> Estimate

``strategy`` is ``[I, A, *b]`` (trailing batch axes ``*b``: hyper-parameter
settings, seeds); ``player`` is ``None`` (update every player at once) or a traced
int scalar (one player of an alternating update); ``key`` is a PRNG key array of
shape ``[*b]`` (one per batch member; the exact estimator ignores it),
``exploration`` a scalar or ``[*b]`` float (outcome sampling's epsilon), and
``tables`` / ``plan`` the sampled schemes' child tables and static capacities
(:mod:`jaxcfr.kernels.subtree`; ``None`` for the exact estimator).

The estimators and what each pairs with:

============  ===================================  =======================================
estimator     regrets of player i's rows           averaging contributions
============  ===================================  =======================================
``none``      exact: leaves and rows, O(T + I A)   own reach x strategy, rows of i
``chance``    one outcome per chance node,         own reach x strategy at every sampled
              decisions enumerated                 member, rows of i (chance needs no
                                                   correction: its reach is constant over
                                                   iterations)
``external``  i enumerates, chance and the others  strategy at the sampled nodes of player
              sampled (Lanctot et al. 2009)         i + 1 ("simple" averaging, as OpenSpiel
                                                   and Pluribus; unbiased for 2 players)
``outcome``   one trajectory; i samples from       own reach / sample reach x strategy at
              eps-uniform mix of its strategy       i's sampled nodes ("stochastically
                                                   weighted", Lanctot 2013; as OpenSpiel)
============  ===================================  =======================================

The sampled counterfactual values are unbiased: with ``p`` the target and ``q`` the
sampling probability of each edge, ``W(h) = pi_-i(h) / Q(h)`` (``Q``: the product of
``q`` on the path, 1 on enumerated edges) and ``v(h) = sum over sampled children of
(p / q) v(child)``, so ``E[W(h) v(ha) / q(ha)] = pi_-i(h) v(ha)``. Every preset's
regret rule is a regret minimiser against arbitrary bounded utilities, so every
(preset, estimator) pairing is sound (Lanctot et al. 2009's MCCFR bound holds with
probability 1 - delta); predictive presets then predict with the last *sampled*
regret, which helps less than with exact regrets. Averaging weights need only be
right up to a constant per row (each row's average is normalised), which is why
chance sampling needs no importance weight there.

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxcfr.kernels import passes
from jaxcfr.kernels import sequence
from jaxcfr.kernels.numerics import instantaneous_regret, normalise
from jaxcfr.kernels.passes import gather as take
from jaxcfr.kernels.subtree import (SamplePlan, SampleTables, Subtree, build_subtree,
                             level_offsets)
from jaxcfr.tensors import DECISION, GameTensors, Structure

__all__ = ["Estimate", "RowEstimate", "Policy", "exact", "sampled", "densify", "players_of",
           "rows_of"]


class Estimate(NamedTuple):
    """What an estimator returns (``*b``: trailing batch axes).

    ``average_rows`` says whose strategy sums this half-step owns: the averaging rule
    decays exactly those rows and adds ``average`` to them. Over one iteration every
    owned row is in exactly one half-step's ``average_rows`` (an alternating update's
    half-steps partition the players), so every row decays once per iteration.
    """
    regret: jax.Array        # [I, A, *b] instantaneous counterfactual regret; read on the
                             #            updated player's rows only
    average: jax.Array       # [I, A, *b] contribution to the strategy sums of average_rows
    average_rows: jax.Array  # [I] bool   the rows whose strategy sums this half-step updates


def players_of(structure: Structure, player):
    """The players an update of ``player`` values: all (a static tuple) or ``player[None]``."""
    return tuple(range(structure.num_players)) if player is None else player[None]


def rows_of(t: GameTensors, player) -> jax.Array:
    """``[I]`` bool: the rows an update of ``player`` changes (every owned row for ``None``)."""
    return t.infoset_player >= 0 if player is None else t.infoset_player == player


def exact(t: GameTensors, s: Structure, strategy: jax.Array, player, key=None,
          exploration=None, tables=None, plan=None) -> Estimate:
    """Full-width CFR: exact counterfactual values of every row of the updated players.

    ``regret[I, a] = q(I, a) - sum_b strategy(I, b) q(I, b)`` with ``q`` the
    counterfactual action values (ties within rounding are exact zeros:
    :func:`jaxcfr.kernels.numerics.instantaneous_regret`); the averaging contribution of a row of
    an updated player is its owner's reach times the strategy. When ``t`` carries sequence-form
    tables (:class:`jaxcfr.kernels.sequence.SequencedTensors`, as :class:`jaxcfr.Runner` steps
    with) ``q`` comes from :func:`jaxcfr.kernels.sequence.counterfactual_values`: a pass over
    the leaves and the rows. Otherwise from the node passes (:mod:`jaxcfr.kernels.passes`): one
    reach and one value pass over all ``N`` nodes. Both give the same values up to float
    rounding.
    """
    del key, exploration, tables, plan
    rows, actions = t.legal_mask.shape
    players = players_of(s, player)
    sequence_form = getattr(t, "sequence", None)
    if sequence_form is not None:
        q, own = sequence.counterfactual_values(sequence_form, strategy, players,
                                                s.num_players)
    else:
        edge = passes.edge_probabilities(t, strategy)
        reach = passes.reach_pass(t, s, edge)
        values = passes.value_pass(t, s, edge, players)
        q = passes.action_values(t, s, passes.opponent_reach(reach), values, rows, actions,
                                 players)
        own = passes.own_reach_at_rows(t, reach)                             # [I, *b]
    regret = instantaneous_regret(q, strategy, t.legal_mask & t.abstraction_mask)
    return Estimate(regret, own[:, None] * strategy, rows_of(t, player))


class Policy(NamedTuple):
    """The current strategy of a batch of ``B`` members, read lazily, row by row.

    Sampled estimators regret-match only the rows they visit (:meth:`rows`). The tables
    are the state's ``[I, A, B]`` tables flattened (row-major, the batch axis last), so
    that reading and scattering rows never changes a layout.
    """
    regret: jax.Array       # [I * A * B] accumulated regret
    prediction: jax.Array   # [I * A * B] last instantaneous regret (added when predictive)
    legal: jax.Array        # [I, A] bool legal actions
    kept: jax.Array         # [I, A] bool actions kept by the abstraction
    members: int            # B
    predictive: bool

    def index(self, row: jax.Array, member: jax.Array) -> jax.Array:
        """Flat positions of rows ``row [M]`` of members ``member [M]``: ``[M, A]``."""
        actions = self.legal.shape[1]
        return (row[:, None] * actions + jnp.arange(actions)[None, :]) * self.members \
            + member[:, None]

    def rows(self, row: jax.Array, member: jax.Array) -> jax.Array:
        """Regret matching of rows ``row [M]`` of members ``member [M]``: ``[M, A]``."""
        index = self.index(row, member)
        regret = passes.gather(self.regret, index)
        if self.predictive:
            regret = regret + passes.gather(self.prediction, index)
        return normalise(regret, passes.gather(self.legal, row) & passes.gather(self.kept, row))


class RowEstimate(NamedTuple):
    """A sampled estimate, slot by slot: only the rows the samples touched (``M`` slots).

    A row may appear in several slots (several sampled members of an information set);
    its regret is the sum of theirs. Unused slots point at the sink row with zeros.
    """
    member: jax.Array        # [M] int32 batch member of the slot
    regret_row: jax.Array    # [M] int32 the updated player's row at the slot (sink: none)
    regret: jax.Array        # [M, A]    instantaneous regret contribution
    average_row: jax.Array   # [M] int32 the averaged player's row at the slot (sink: none)
    average: jax.Array       # [M, A]    contribution to the strategy sums


def densify(est: RowEstimate, rows: int, actions: int, members: int = 1) -> Estimate:
    """A :class:`RowEstimate` as dense ``[I, A, B]`` tables (for inspection and tests)."""
    def scatter(row, values):
        index = (row[:, None] * actions + jnp.arange(actions)[None, :]) * members \
            + est.member[:, None]
        return jnp.zeros(rows * actions * members, values.dtype).at[index].add(
            values).reshape(rows, actions, members)
    average = scatter(est.average_row, est.average)
    return Estimate(scatter(est.regret_row, est.regret), average,
                    jnp.zeros(rows, bool).at[est.average_row].set(True).at[rows - 1].set(False))


def sampled(t: GameTensors, s: Structure, policy: Policy, player, key: jax.Array,
            exploration, tables: SampleTables, plan: SamplePlan) -> RowEstimate:
    """A Monte Carlo estimate of ``plan.scheme`` (see the module docstring).

    Each batch member draws ``plan.samples`` subtrees from its own key (``key``: ``[B]``,
    consumed) and gets their mean. Nothing here is ``O(N)`` or ``O(I * A)``: the
    subtrees of every member are built level by level into one fixed-capacity forest
    (:func:`jaxcfr.kernels.subtree.build_subtree`, ``C = B * samples * sum(plan.capacity)``
    slots), every pass over it is a plain gather or segment sum, only visited rows are
    regret-matched, and the result lists the touched rows (:class:`RowEstimate`) for the
    solver to scatter onto its tables.
    """
    members = policy.members
    keys = jnp.asarray(key).reshape(-1)
    eps = jnp.broadcast_to(jnp.asarray(exploration, policy.regret.dtype), (members,))
    if player is not None or plan.scheme == "chance":
        return _traverse(t, s, policy, player, keys, eps, tables, plan)
    parts = [_traverse(t, s, policy, jnp.asarray(i), _fold(keys, i), eps, tables, plan)
             for i in range(s.num_players)]        # simultaneous external / outcome sampling
    return RowEstimate(*(jnp.concatenate(cols) for cols in zip(*parts)))


def _fold(keys: jax.Array, data) -> jax.Array:
    return jax.vmap(lambda k: jax.random.fold_in(k, data))(keys)


def _traverse(t, s, policy, player, keys, eps, tables, plan) -> RowEstimate:
    """Sample every member's subtrees for ``player`` (``None``: all players, chance
    sampling); estimate the regrets and averaging contributions at the visited rows."""
    num = s.num_players
    rows, actions = t.legal_mask.shape
    members = keys.shape[0]
    dtype = policy.regret.dtype
    total = level_offsets(plan)[-1]
    uniforms = jax.vmap(lambda k: jax.random.uniform(k, (total,), dtype))(keys)
    sub = build_subtree(t, tables, plan, policy.rows, members, uniforms, player, eps)
    offsets = level_offsets(plan, members)
    reach, sample_reach = _reach(t, sub, offsets, num)                  # [C, P + 1], [C]
    values = _values(t, sub, offsets)                                    # [C, P]
    slots = sub.node.shape[0]
    # x(h, a) = v(ha) / q(ha) for the sampled children of each slot h, by the child's owner
    owner = take(t.edge_owner, sub.node)
    child_value = passes.pick_player(values, jnp.minimum(owner, num - 1)) / sub.q
    is_child = sub.valid & (jnp.arange(slots) >= offsets[1])
    slot_of_edge = take(t.edge_index, sub.node) % actions
    x = passes.segment_sum(jnp.where(is_child, child_value, 0), sub.parent * actions
                           + slot_of_edge, slots * actions).reshape(slots, actions)
    # regret at the updated player's slots: W(h) (x(h, .) - sigma(h) . x(h, .))
    kind, acting = take(t.node_kind, sub.node), take(t.node_player, sub.node)
    decision = sub.valid & (kind == DECISION)
    mine = decision & ((acting < num) if player is None else (acting == player))
    weight = passes.pick_player(passes.opponent_reach(reach), jnp.clip(acting, 0, num - 1))
    weight = jnp.where(mine, weight / sample_reach, 0) / plan.samples
    row = take(t.node_infoset, sub.node)
    mask = take(t.legal_mask, row) & take(t.abstraction_mask, row)
    baseline = (sub.sigma * x).sum(axis=1, keepdims=True)
    regret = jnp.where(mask, weight[:, None] * (x - baseline), 0)
    sink = rows - 1
    regret_row = jnp.where(mine, row, sink)
    # averaging: the rows this scheme's half-step owns, weighted per sampled member
    if player is None:
        target_here = decision
    else:
        target = (player + 1) % num if plan.scheme == "external" else player
        target_here = decision & (acting == target)
    own = passes.pick_player(reach, jnp.clip(acting, 0, num - 1))
    w = {"chance": own, "external": jnp.ones_like(own), "outcome": own / sample_reach}[
        plan.scheme]
    w = jnp.where(target_here, w, 0) / plan.samples
    average_row = jnp.where(target_here, row, sink)
    return RowEstimate(sub.member, regret_row.astype(jnp.int32), regret,
                       average_row.astype(jnp.int32), w[:, None] * sub.sigma)


def _reach(t: GameTensors, sub: Subtree, offsets, num: int):
    """Own reach of every player and chance ``[C, P + 1]``, and the sample reach ``[C]``."""
    owner = take(t.edge_owner, sub.node)
    factor = jnp.where(owner[:, None] == jnp.arange(num + 1)[None, :], sub.p[:, None], 1)
    roots = offsets[1]
    reach = [jnp.ones((roots, num + 1), sub.p.dtype)]
    sample = [jnp.ones((roots,), sub.p.dtype)]
    for d in range(1, len(offsets) - 1):
        lo, hi = offsets[d], offsets[d + 1]
        up = sub.parent[lo:hi] - offsets[d - 1]
        reach.append(take(reach[-1], up) * factor[lo:hi])
        sample.append(take(sample[-1], up) * sub.q[lo:hi])
    return jnp.concatenate(reach), jnp.concatenate(sample)


def _values(t: GameTensors, sub: Subtree, offsets) -> jax.Array:
    """Importance-weighted values ``[C, P]``: payoff plus sum over children of (p / q) v."""
    payoff = jnp.where(sub.valid[:, None], take(t.payoff, sub.node), 0).astype(sub.p.dtype)
    return passes.bottom_up(payoff, sub.p / sub.q, sub.parent, offsets)
