"""Monte Carlo CFR on the lowered tree: chance, external and outcome sampling
(:class:`MonteCarlo` and its schemes; what each estimates is tabled in
:mod:`jaxcfr.solvers.estimators`).

A scheme's ``samples`` traversals of a half-step run one by one (a fixed-capacity sampled
forest or, for outcome sampling, trajectories: a sparse :class:`RowEstimate`) or, with
``counts=True``, as counts in one pass over the whole tree
(:mod:`jaxcfr.kernels.counts`: a dense :class:`DenseEstimate`, the same expectation).

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players, ``B`` batch members,
``C`` slots of a sampled forest, ``D`` levels, ``G`` trajectories, ``*b`` trailing batch
axes.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.arguments import ArgumentError, positive_int
from jaxcfr.kernels import passes, sequence
from jaxcfr.kernels.counts import (MAX_SAMPLES, CountTables, count_tables, node_uniforms,
                                   siblings, split_bounds, traversal_counts)
from jaxcfr.kernels.keys import fold, uniform
from jaxcfr.kernels.numerics import exploration_mix, instantaneous_regret, trail
from jaxcfr.kernels.passes import gather as take
from jaxcfr.kernels.subtree import (Paths, SamplePlan, Subtree, build_subtree, child_tables,
                                    level_offsets, make_plan, sample_paths)
from jaxcfr.kernels.walk import Walked, WalkPlan, make_walk_plan, pool_size, pooled, walk
from jaxcfr.solvers.estimator_protocol import (CappedEstimate, DenseEstimate, Estimator,
                                               LazyStrategy, RowEstimate, players_of, rows_of)
from jaxcfr.solvers.parameters import parameter
from jaxcfr.tensors import CHANCE_NODE, DECISION, GameTensors

__all__ = ["MonteCarlo", "ChanceSampling", "ExternalSampling", "OutcomeSampling",
           "MAX_SAMPLES", "WALKS", "check_counted_samples"]

#: How traversals one by one run (:attr:`MonteCarlo.walk`): ``"depth"``, depth first, one
#: lane per traversal (:mod:`jaxcfr.kernels.walk`); ``"levels"``, level by level into a
#: fixed-capacity forest (:func:`jaxcfr.kernels.subtree.build_subtree`, outcome sampling's
#: :func:`~jaxcfr.kernels.subtree.sample_paths`).
WALKS = ("depth", "levels")


def check_counted_samples(samples: int, counts: bool, spell=str) -> int:
    """``samples`` (a positive integer), or :class:`ArgumentError` where ``counts`` would
    carry more traversals than :data:`MAX_SAMPLES`; the arguments named as ``spell``
    renders them (``--samples``, ``solver.samples``)."""
    if counts and samples > MAX_SAMPLES:
        raise ArgumentError(f"{spell('samples')} must be at most {MAX_SAMPLES:,} with "
                            f"{spell('counts')} (counts are exact integers in float32), "
                            f"got {samples:,}", argument=spell("samples"))
    return samples


@dataclasses.dataclass(frozen=True)
class MonteCarlo(Estimator):
    """A sampling scheme over the lowered tree (Lanctot et al. 2009): each batch member
    draws ``samples`` subtrees per traverser and iteration from its own key and gets their
    mean (less variance for more work per iteration).

    The ``samples`` traversals run one of two ways:

    * one by one (the default): nothing per iteration is ``O(N)`` or ``O(I * A)``: the
      subtrees of every member are built level by level into one fixed-capacity forest
      (:func:`jaxcfr.kernels.subtree.build_subtree`, ``C = B * samples * sum(capacity)``
      slots), every pass over it is a plain gather or segment sum, only visited rows are
      regret-matched, and the result lists the touched rows (a sparse estimator). The
      draws are independent.
    * ``counts=True``: one pass over the whole tree carries how many of the traversals
      reach each node (:mod:`jaxcfr.kernels.counts`, a systematic split at every sampling
      node), and the estimate is computed from the counts over whole tables (a dense
      estimator): ``O(N)`` per iteration whatever ``samples`` is. Same expectation as
      ``samples`` independent traversals; the draws are coupled (less variance).

    A scheme is one subclass: its ``name``, :meth:`enumerates` (which nodes enumerate;
    the others sample one child) and, where it differs, :meth:`may_sample`,
    :meth:`proposal`, :meth:`average_target`, :meth:`average_weight`. The kernels take
    the scheme object itself (:class:`jaxcfr.kernels.subtree.Scheme`), never its name.

    Attributes:
      samples: traversals (subtrees) per traverser and iteration.
      counts: run them as counts over the whole tree (see above).
      walk: how traversals one by one run (:data:`WALKS`).
      pool: depth first: the output slots the lanes of a step share after their walks
        (:func:`jaxcfr.kernels.walk.pool_size`), on average per lane; ``None`` (the
        default): from a probe of random walks on the game; ``0``: the static bound (one
        lane's most, for every lane). The estimate and its scatters run over the pool; a
        step whose walks finished more recorded nodes than it holds estimates and
        scatters the rest in further chunks of the pool's size, in order (a ``while``
        loop): the same tables, bit for bit, whatever the pool.
      plan: the static capacities on one game (:meth:`prepare` fills it in; one by one).
      width: the most children of a node of the game (:meth:`prepare`; counts).
    """
    samples: int = 1
    counts: bool = False
    walk: str = "levels"
    pool: int | None = None
    plan: SamplePlan | None = None
    bounds: WalkPlan | None = None
    width: int | None = None
    seeded: ClassVar[bool] = True

    def __post_init__(self):
        check_counted_samples(positive_int("samples", self.samples), self.counts)
        if self.walk not in WALKS:
            raise ArgumentError(f"walk must be one of {', '.join(WALKS)}, got {self.walk!r}",
                                argument="walk")
        if self.pool is not None and (isinstance(self.pool, bool)
                                      or not isinstance(self.pool, int) or self.pool < 0):
            raise ArgumentError(f"pool must be None or a whole number of slots >= 0, got "
                                f"{self.pool!r}", argument="pool")

    @property
    def dense(self) -> bool:
        """Counts are estimated over whole tables; traversals one by one list their rows."""
        return self.counts

    def prepare(self, lowered):
        if self.counts:
            return (dataclasses.replace(self, width=siblings(lowered)),
                    count_tables(lowered, self))
        tables = child_tables(lowered.tensors)
        if self.walk == "depth":
            return (dataclasses.replace(self, bounds=make_walk_plan(lowered, self, tables,
                                                                    self.samples)), tables)
        plan = make_plan(lowered, self, tables, self.samples)
        return dataclasses.replace(self, plan=plan), tables

    def describe(self) -> str:
        k = f" x{self.samples}" if self.samples > 1 else ""
        how = " (counts)" if self.counts else (" depth-first" if self.walk == "depth" else "")
        return self.name + k + how

    # -- the scheme: what the kernels ask (jaxcfr.kernels.subtree.Scheme) -----------------
    def enumerates(self, kind, owner, traverser):
        """``[M]`` bool: the nodes whose children this scheme enumerates when ``traverser``
        updates (``None``: every player at once); the others sample one child. NumPy in,
        NumPy out (host tables); JAX arrays alike (device passes)."""
        raise NotImplementedError

    def may_sample(self, kind):
        """``[M]`` bool: the nodes that may sample one child (chance and decisions)."""
        return (kind == CHANCE_NODE) | (kind == DECISION)

    def proposal(self, p, present, count, kind, owner, traverser, exploration):
        """``q [M, K]``: a sampling node draws its children on their probabilities ``p``
        (:class:`OutcomeSampling` mixes exploration in at the traverser's decisions)."""
        return p

    def average_target(self, player, num_players: int):
        """The player whose strategy sums a half-step of ``player`` feeds."""
        return player

    def average_weight(self, own: jax.Array, sample_reach: jax.Array) -> jax.Array:
        """``[C]``: the averaging weight of each sampled node (own reach, sample reach)."""
        raise NotImplementedError

    def estimate(self, t, s, current, player, keys, hp, arrays):
        if self.counts:
            return self._count_estimate(t, s, current, player, keys, hp, arrays)
        keys = jnp.asarray(keys).reshape(-1)
        eps = jnp.broadcast_to(jnp.reshape(self.epsilon(hp), -1).astype(current.regret.dtype),
                               (current.members,))
        if player is not None or not self.per_traverser:
            return self._traverse(t, s, current, player, keys, eps, arrays)
        players = np.arange(s.num_players, dtype=np.int32)      # a constant, not an iota kernel
        if self.walk == "depth":
            # simultaneous, depth first: every traverser's lanes under one loop (a vmap
            # over the traverser would batch the loop's predicate, and every step would
            # select between each traverser's whole old and new state), traverser-major
            # like the vmap below; each traverser's numbers from its own folded keys
            dtype = current.regret.dtype
            uniforms = jax.vmap(lambda i: self.uniforms(fold(keys, i), dtype))(players)
            return self.from_walks(t, s, current, players, uniforms, eps, arrays)
        # simultaneous external / outcome sampling: one traversal per player, vmapped over
        # the traverser (one compiled traversal, not one per player), traverser-major
        parts = jax.vmap(lambda i: self._traverse(t, s, current, i, fold(keys, i), eps,
                                                  arrays))(players)
        return RowEstimate(*(x.reshape((-1,) + x.shape[2:]) for x in parts))

    def epsilon(self, hp) -> jax.Array:
        """The exploration mixed into the traverser's sampling (a scheme that mixes none:
        0; :class:`OutcomeSampling`'s is its parameter ``exploration``)."""
        return jnp.zeros(())

    #: The scheme samples per traverser (external, outcome): a simultaneous update runs
    #: one traversal per player; chance sampling updates every player from one subtree.
    per_traverser: ClassVar[bool] = True

    def uniforms(self, keys: jax.Array, dtype) -> jax.Array:
        """``[B, U]``: every uniform number a half-step of member ``b`` draws, from its key
        alone (so a member equals its separate run). Depth first: draw ``k``'s block of
        ``U`` numbers (:class:`~jaxcfr.kernels.walk.WalkPlan`), draw after draw; level by
        level: level ``d``'s numbers are a block of ``samples x capacity[d]``, draw after
        draw (:func:`level_offsets`)."""
        if self.walk == "depth":
            total = self.bounds.samples * self.bounds.draws
        else:
            total = level_offsets(self.plan)[-1]
        return uniform(keys, (total,), dtype)

    def _traverse(self, t, s, policy: LazyStrategy, player, keys, eps, tables) -> RowEstimate:
        how = self.from_walks if self.walk == "depth" else self.from_uniforms
        return how(t, s, policy, player, self.uniforms(keys, policy.regret.dtype), eps, tables)

    def from_walks(self, t, s, policy: LazyStrategy, player, uniforms, eps, tables
                   ) -> RowEstimate | CappedEstimate:
        """Walk every member's ``samples`` traversals for ``player`` (``None``: all players,
        chance sampling; ``[T]``: each of ``T`` traversers, ``uniforms [T, B, ...]``
        theirs, the estimates traverser-major) depth first from ``uniforms``
        (:meth:`uniforms`; :func:`jaxcfr.kernels.walk.walk`: one lane per traversal, all
        under one loop, each step one node reached); estimate the regrets and averaging
        contributions at the finished decision nodes with the formulas of
        :meth:`from_uniforms`. The draws are independent, each from its own block of
        numbers, and the estimate is their mean. The finished nodes are estimated in chunks
        of a pool's size (:attr:`pool`) where it holds fewer slots than the bound: a
        :class:`~jaxcfr.solvers.estimator_protocol.CappedEstimate`."""
        w = walk(t, tables, self.bounds, self, policy.rows, uniforms.shape[-2], uniforms,
                 player, eps, s.num_players)

        def estimate(v: Walked) -> RowEstimate:
            return self._slot_estimate(t, s.num_players, v.traverser, v.node, v.valid,
                                       v.member, v.x, v.sigma, v.reach, v.sample_reach,
                                       self.bounds.samples)
        traversals = math.prod(uniforms.shape[:-1]) * self.bounds.samples
        size = pool_size(self.bounds, traversals, self.pool)
        if size >= w.node.shape[0]:
            return estimate(w)
        more = jnp.maximum((jnp.sum(w.count) + size - 1) // size - 1, 0)
        return CappedEstimate(estimate(pooled(w, size)), more,
                              lambda i: estimate(pooled(w, size, i * size)))

    def from_uniforms(self, t, s, policy: LazyStrategy, player, uniforms, eps, tables
                      ) -> RowEstimate:
        """Sample every member's subtrees for ``player`` (``None``: all players, chance
        sampling) from ``uniforms`` (:meth:`uniforms`); estimate the regrets and averaging
        contributions at the visited rows. The ``samples`` draws of a member are
        independent, each from its own block of numbers, and the estimate is their mean."""
        plan = self.plan
        num = s.num_players
        rows, actions = t.legal_mask.shape
        members = uniforms.shape[0]
        sub = build_subtree(t, tables, plan, self, policy.rows, members, uniforms, player, eps)
        offsets = level_offsets(plan, members)
        reach, sample_reach = _reach(t, sub, offsets, num)              # [C, P + 1], [C]
        values = _values(t, sub, offsets)                                # [C, P]
        slots = sub.node.shape[0]
        # x(h, a) = v(ha) / q(ha) for the sampled children of each slot h, by the child's owner
        owner = take(t.edge_owner, sub.node)
        child_value = passes.pick_player(values, jnp.minimum(owner, num - 1)) / sub.q
        is_child = sub.valid & (jnp.arange(slots) >= offsets[1])
        slot_of_edge = take(t.edge_index, sub.node) % actions
        x = passes.segment_sum(jnp.where(is_child, child_value, 0), sub.parent * actions
                               + slot_of_edge, slots * actions).reshape(slots, actions)
        return self._slot_estimate(t, num, player, sub.node, sub.valid, sub.member, x,
                                   sub.sigma, reach, sample_reach, plan.samples)

    def _slot_estimate(self, t, num: int, player, node, valid, member, x, sigma, reach,
                       sample_reach, samples: int) -> RowEstimate:
        """The regrets and averaging contributions of sampled nodes, slot by slot (``[M]``):
        ``node``, ``valid``, ``member``, ``x [M, A]`` (``v(ha) / q(ha)`` at the sampled
        children), ``sigma [M, A]``, own ``reach [M, P + 1]``, ``sample_reach [M]``; the
        mean over ``samples`` draws. ``player``: the updating player, ``None`` (chance
        sampling) or ``[M]``, each slot's traverser (a simultaneous depth-first walk)."""
        rows = t.legal_mask.shape[0]
        # regret at the updated player's slots: W(h) (x(h, .) - sigma(h) . x(h, .))
        # the slots' kind, player and row in one gather (one kernel to compile, not three)
        facts = take(jnp.stack([t.node_kind.astype(jnp.int32), t.node_player.astype(jnp.int32),
                                t.node_infoset.astype(jnp.int32)], axis=1), node)   # [M, 3]
        kind, acting, row = facts[:, 0], facts[:, 1], facts[:, 2]
        decision = valid & (kind == DECISION)
        mine = decision & ((acting < num) if player is None else (acting == player))
        safe = jnp.where(decision, sample_reach, 1)
        seat = jnp.clip(acting, 0, num - 1)
        weight = passes.select_player(passes.opponent_reach(reach), seat)
        weight = jnp.where(mine, weight / safe, 0) / samples
        mask = take(t.legal_mask, row)
        baseline = (sigma * x).sum(axis=1, keepdims=True)
        regret = jnp.where(mask, weight[:, None] * (x - baseline), 0)
        sink = rows - 1
        regret_row = jnp.where(mine, row, sink)
        # averaging: the rows this scheme's half-step owns, weighted per sampled member
        if player is None:
            target_here = decision
        else:
            target_here = decision & (acting == self.average_target(player, num))
        own = passes.select_player(reach, seat)
        w = jnp.where(target_here, self.average_weight(own, safe), 0) / samples
        average_row = jnp.where(target_here, row, sink)
        return RowEstimate(member, regret_row.astype(jnp.int32), regret,
                           average_row.astype(jnp.int32), w[:, None] * sigma)


    # -- counts: every traversal of a half-step in one pass over the whole tree -----------
    #: The scheme enumerates the other players' decisions (chance sampling): their reach
    #: weighs the values.
    enumerates_others: ClassVar[bool] = False
    #: The traverser samples its own decisions (outcome sampling): one over its sampling
    #: reach weighs the values.
    traverser_samples: ClassVar[bool] = False

    def sampling_table(self, current: jax.Array, legal: jax.Array, eps) -> jax.Array:
        """``[I, A, *b]``: how the traverser samples at its rows (outcome sampling mixes
        its strategy with the uniform one; the others sample on the strategy itself)."""
        return current

    def _count_estimate(self, t, s, current, player, keys, hp, tables: CountTables
                        ) -> DenseEstimate:
        """The mean of ``samples`` traversals per traverser, from their counts (dense).
        What every traverser shares (:class:`_Shared`: the edge probabilities, the sampling
        table, the own reach and with it the averaging contributions) is computed once;
        the count pass and the regrets, per traverser."""
        eps = jnp.broadcast_to(jnp.asarray(self.epsilon(hp), current.dtype), current.shape[2:])
        shared = self._shared(t, s, current, eps)

        def regret(i, key):
            n = self._count_pass(t, shared, i, key, tables)
            return instantaneous_regret(self._count_values(t, s, current, shared, i, n),
                                        current, t.legal_mask)
        if player is None and self.per_traverser:
            # simultaneous: one count pass per traverser, one after another in a loop (one
            # compiled pass: vmapped, its gathers compiled half as slowly again), each giving
            # its own rows' regrets
            players = jnp.arange(s.num_players, dtype=jnp.int32)
            parts = jax.lax.map(lambda i: regret(i, fold(keys, i)), players)   # [P, I, A, *b]
            mine = trail(t.infoset_player[None, :] == players[:, None], current.ndim + 1)
            estimate = jnp.where(mine, parts, 0).sum(axis=0)
        else:
            estimate = regret(player, keys)
        return DenseEstimate(estimate, shared.own[:, None] * current, rows_of(t, player))

    def _shared(self, t, s, current, eps) -> "_Shared":
        """What the count passes of one half-step share, whoever traverses."""
        p = passes.edge_probabilities(t, current)                              # [N, *b]
        table = self.sampling_table(current, t.legal_mask, eps)
        seq = self.values.sequences(t)
        if seq is None:
            own = passes.own_reach_at_rows(t, passes.reach_pass(t, s, p))
            return _Shared(p, table, own, None, None)
        own, x = sequence.sequence_weights(seq, current)
        xq = sequence.sequence_weights(seq, table)[1] if self.traverser_samples else None
        return _Shared(p, table, own, x, xq)

    def _count_pass(self, t, shared: "_Shared", player, keys, tables) -> jax.Array:
        """``[N, *b]``: how many of the ``samples`` traversals of ``player`` (``None``:
        chance sampling of everyone) reach each node."""
        weight = self.node_weights(t, shared.p, shared.table, player)
        enum = self.enumerates(t.node_kind, t.node_player, player)                   # [N]
        return traversal_counts(t, tables, split_bounds(tables, self.width, weight), enum,
                                self.samples,
                                node_uniforms(keys, tables, player, shared.p.dtype))

    def node_weights(self, t, p, table, player) -> jax.Array:
        """``[N, *b]``: the probability that a sampling node takes the edge into each node
        (``p``: the strategy's edge probabilities; ``table``: :meth:`sampling_table`)."""
        if not self.traverser_samples:
            return p
        own = trail(t.edge_owner == player, p.ndim)
        return jnp.where(own, passes.edge_probabilities(t, table), p)

    def from_counts(self, t, s, current, player, n, eps) -> DenseEstimate:
        """The mean of the traversals of ``player`` (``None``: chance sampling of everyone)
        whose counts are ``n`` ``[N, *b]`` (how many reach each node; ``samples`` at the
        root), over whole tables; ``eps`` ``[*b]``: outcome sampling's exploration.

        A traversal's sampled value of a node ``g`` is its payoff plus ``(p / q) v`` of each
        child it takes (``p`` the target, ``q`` the sampling probability, 1 where it
        enumerates), and its regret estimate at ``(I, a)`` sums ``W(h) (v(ha) / q(ha) - sum_b
        sigma_b v(hb) / q(hb))`` over ``h`` in ``I`` with ``W(h) = pi_-i(h) / Q(h)``
        (:meth:`from_uniforms`). Summed over the traversals and regrouped by leaf, that is
        the exact counterfactual value with ``pi_-i(z)`` replaced by ``pi_-i(z) n(z) /
        (samples Q(z))``: ``n(z) / samples`` under external sampling, times the others'
        reach without chance under chance sampling, over the traverser's sampling reach
        under outcome sampling. The sequence form (where :attr:`values` is it) sums it over
        leaves and rows; the node passes otherwise. Averaging: counts reach every row, so the
        strategy sums take the exact own reach (CFR's average), as the exact estimator does.
        """
        shared = self._shared(t, s, current, eps)
        regret = instantaneous_regret(self._count_values(t, s, current, shared, player, n),
                                      current, t.legal_mask)
        return DenseEstimate(regret, shared.own[:, None] * current, rows_of(t, player))

    def _count_values(self, t, s, current, shared: "_Shared", player, n) -> jax.Array:
        """``q [I, A, *b]``, the counted traversals' action values (:meth:`from_counts`):
        by sequences where the value kernel reads them, else by node passes."""
        players = players_of(s, player)
        seq = self.values.sequences(t)
        if seq is None:
            return self._node_values(t, s, shared, player, players, n)
        ndim = current.ndim

        def leaf_weights(i):
            node = jax.lax.dynamic_index_in_dim(seq.leaf_node, i, keepdims=False)     # [T]
            own = jax.lax.dynamic_index_in_dim(seq.leaf_own, i, keepdims=False)
            payoff = take(t.payoff, node)[:, i]        # [T] (the empty sequence: dropped)
            w = trail(payoff.astype(current.dtype), ndim - 1) * take(n, node) / self.samples
            if self.enumerates_others:
                w = sequence.times_others(seq, shared.x, i, s.num_players, w)
            if self.traverser_samples:
                w = w / take(shared.xq, own)              # the traverser's sampling reach
            return w
        return sequence.sequence_values(seq, current, players, leaf_weights)

    def _node_values(self, t, s, shared: "_Shared", player, players, n):
        """``q [I, A, *b]`` by node passes: ``V(g) = n(g) u(g) + sum_c (p / q)(c) V(c)``, then
        ``q(I, a) = sum over h in I of W(h) V(ha) / q(ha)`` / samples."""
        rows, actions = t.legal_mask.shape
        p = shared.p                                                           # [N, *b]
        ndim = p.ndim
        has_parent = t.parent >= 0
        up = jnp.maximum(t.parent, 0)
        enum = self.enumerates(t.node_kind, t.node_player, player)                   # [N]
        weight = self.node_weights(t, p, shared.table, player)
        q = jnp.where(trail(take(enum, up) | ~has_parent, ndim), 1, weight)    # edge's prob.
        taken = q > 0
        ratio = jnp.where(taken, p / jnp.where(taken, q, 1), 0)
        inverse_q = jnp.where(taken, 1 / jnp.where(taken, q, 1), 0)
        who = jnp.asarray(players)                                                    # [k]
        owner_is = trail(t.edge_owner[:, None] == who[None, :], ndim + 1)       # [N, k, 1..]
        payoff = trail(jnp.take(t.payoff, who, axis=1), ndim + 1).astype(p.dtype)
        values = passes.bottom_up(payoff * n[:, None], ratio, t.parent, s.level_start)
        w = 1
        if self.enumerates_others or self.traverser_samples:
            # W(h): the others' p / q (their reach where they are enumerated, 1 where
            # sampled on their probabilities) and one over the traverser's q, above h
            factor = jnp.where(owner_is, inverse_q[:, None], ratio[:, None])  # [N, k, *b]
            w = take(passes.path_product(t, s, factor), up)
        x = jnp.where(owner_is & trail(has_parent, ndim + 1),
                      w * values * inverse_q[:, None], 0).sum(axis=1)               # [N, *b]
        qhat = passes.segment_sum(x, t.edge_index, rows * actions)
        return qhat.reshape((rows, actions) + x.shape[1:]) / self.samples


class _Shared(NamedTuple):
    """What every traverser's count pass of one half-step reads (computed once)."""
    p: jax.Array             # [N, *b]     edge probabilities of the current strategy
    table: jax.Array         # [I, A, *b]  how the traverser samples (sampling_table)
    own: jax.Array           # [I, *b]     each row owner's reach (realisation weight)
    x: jax.Array | None      # [I * A, *b] sequence weights of the strategy (sequence form)
    xq: jax.Array | None     # [I * A, *b] ... of the sampling table (outcome; sequence form)


@dataclasses.dataclass(frozen=True)
class ChanceSampling(MonteCarlo):
    """Chance sampling: one outcome per chance node, every decision enumerated."""
    name: ClassVar[str] = "chance"
    per_traverser: ClassVar[bool] = False

    enumerates_others: ClassVar[bool] = True

    def enumerates(self, kind, owner, traverser):
        return kind == DECISION

    def may_sample(self, kind):
        return kind == CHANCE_NODE

    def average_weight(self, own, sample_reach):
        return own


@dataclasses.dataclass(frozen=True)
class ExternalSampling(MonteCarlo):
    """External sampling: the traverser enumerates, chance and the others are sampled."""
    name: ClassVar[str] = "external"

    def enumerates(self, kind, owner, traverser):
        return (kind == DECISION) & (owner == traverser)

    def average_target(self, player, num_players):
        following = player + 1
        if isinstance(following, jax.Array):
            # a traced player in [0, P): a select, not the signed remainder of `%`, whose
            # sixteen operations XLA inlines into every kernel that reads it
            return jnp.where(following < num_players, following, 0)
        return following % num_players

    def average_weight(self, own, sample_reach):
        return jnp.ones_like(own)


@dataclasses.dataclass(frozen=True)
class OutcomeSampling(MonteCarlo):
    """Outcome sampling: one trajectory; the traverser samples from an epsilon-uniform mix
    of its strategy (epsilon: its parameter ``exploration``, 0.6 as in Lanctot et al. 2009
    and OpenSpiel)."""
    exploration: float = parameter(0.6, "outcome sampling's epsilon: the traverser samples "
                                        "from this mix of uniform and its strategy",
                                   check=arguments.exploration)
    name: ClassVar[str] = "outcome"

    def epsilon(self, hp):
        return hp.exploration

    def enumerates(self, kind, owner, traverser):
        return (kind == DECISION) & False

    def proposal(self, p, present, count, kind, owner, traverser, exploration):
        explore = ((kind == DECISION) & (owner == traverser))[:, None]
        return jnp.where(explore, exploration_mix(p, present, count, exploration), p)

    def average_weight(self, own, sample_reach):
        return own / sample_reach

    traverser_samples: ClassVar[bool] = True

    def sampling_table(self, current, legal, eps):
        return exploration_mix(current, trail(legal, current.ndim),
                               trail(legal.sum(axis=1), current.ndim - 1), eps)

    def from_uniforms(self, t, s, policy: LazyStrategy, player, uniforms, eps, tables
                      ) -> RowEstimate:
        """Trajectories instead of a subtree: the same draws and estimates as
        :meth:`MonteCarlo.from_uniforms` on an outcome plan (capacity 1 at every level),
        from :func:`~jaxcfr.kernels.subtree.sample_paths` (one scanned level body) and
        cumulative products along each path (``M = D x B x samples`` slots)."""
        plan, num = self.plan, s.num_players
        rows, actions = t.legal_mask.shape
        members = uniforms.shape[0]
        path = sample_paths(t, tables, plan, self, policy.rows, members, uniforms, player, eps)
        return _path_estimate(t, path, player, num, rows, actions, plan.samples)


def _path_estimate(t: GameTensors, path: Paths, player, num: int, rows: int, actions: int,
                   samples: int) -> RowEstimate:
    """Outcome sampling's regrets and averaging contributions along trajectories ``[D, G]``
    (the formulas of :meth:`MonteCarlo._traverse` with one child per node)."""
    valid = path.valid
    # own reach of every player and chance, and the sample reach, at each depth: [D, G, P+1]
    owner = take(t.edge_owner, path.node)
    factor = jnp.where(owner[..., None] == jnp.arange(num + 1), path.p[..., None], 1)
    reach = jnp.cumprod(factor, axis=0)
    sample_reach = jnp.cumprod(path.q, axis=0)                                   # [D, G]
    # importance-weighted values, bottom-up: v_d = u(h_d) + (p / q)_{d+1} v_{d+1}
    payoff = jnp.where(valid[..., None], take(t.payoff, path.node), 0).astype(path.p.dtype)
    ratio = jnp.where(valid, path.p / path.q, 0)

    def up(below, xs):
        pay, r = xs
        v = pay + r[:, None] * below
        return v, v
    below_ratio = jnp.concatenate([ratio[1:], jnp.zeros_like(ratio[:1])])
    _, values = jax.lax.scan(up, jnp.zeros_like(payoff[0]), (payoff, below_ratio),
                             reverse=True)                                       # [D, G, P]
    # x(h_d, a) = v(h_{d+1}) / q_{d+1} at the sampled action a, for the acting player
    kind, acting = take(t.node_kind, path.node), take(t.node_player, path.node)
    seat = jnp.clip(acting, 0, num - 1)
    child_value = jnp.take_along_axis(values[1:], seat[:-1, :, None], axis=2)[..., 0]
    child_value = jnp.where(valid[1:], child_value / path.q[1:], 0)              # [D-1, G]
    chosen = take(t.edge_index, path.node[1:]) % actions
    x = jnp.where(jnp.arange(actions) == chosen[..., None], child_value[..., None], 0)
    x = jnp.concatenate([x, jnp.zeros_like(x[:1])])                              # [D, G, A]
    decision = valid & (kind == DECISION)
    mine = decision & (acting == player)
    others = jnp.prod(jnp.where(jnp.arange(num + 1) == seat[..., None], 1, reach), axis=2)
    weight = jnp.where(mine, others / sample_reach, 0) / samples
    row = take(t.node_infoset, path.node)
    mask = take(t.legal_mask, row)
    baseline = (path.sigma * x).sum(axis=2, keepdims=True)
    regret = jnp.where(mask, weight[..., None] * (x - baseline), 0)
    own = jnp.take_along_axis(reach, seat[..., None], axis=2)[..., 0]
    w = jnp.where(mine, own / sample_reach, 0) / samples
    sink = rows - 1
    member = jnp.broadcast_to(path.member, valid.shape)
    flat = lambda a: a.reshape((-1,) + a.shape[2:])                               # noqa: E731
    return RowEstimate(flat(member), flat(jnp.where(mine, row, sink).astype(jnp.int32)),
                       flat(regret), flat(jnp.where(mine, row, sink).astype(jnp.int32)),
                       flat(w[..., None] * path.sigma))


# -- sampled-forest passes ------------------------------------------------------------------
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
