"""Sampled subtrees: the sparse kernels behind the Monte Carlo estimators.

A sampling scheme walks the tree level by level from the root and, at every node,
either *enumerates* all children or *samples* one of them. The nodes it reaches
form a sampled subtree ``S`` that is stored with a fixed capacity per level
(:class:`SamplePlan.capacity`), so its passes cost ``O(|S|)`` gathers and scatters
instead of the exact estimator's two dense passes over all ``N`` nodes:

* chance sampling: decision nodes enumerated, one outcome per chance node;
* external sampling (traverser ``i``): ``i``'s decisions enumerated, chance and the
  other players sampled from their probabilities;
* outcome sampling: one child everywhere (``i``'s decisions from an
  ``epsilon``-uniform mixture of the strategy): one trajectory.

The capacity of level ``d`` is the most level-``d`` nodes any sample can reach
(computed once on the host: enumerated children add up, sampled ones take the
widest), so a sample never overflows and shapes never change. Every level costs a
prefix sum, a ``searchsorted`` and a few gathers over its capacity; a scheme's
per-iteration cost is ``O(sum of capacities)`` plus ``O(I * A)`` for the tables.

Which nodes enumerate and how a sampling node weighs its children is the scheme's: the
kernels take a :class:`Scheme` object (the Monte Carlo estimators of
:mod:`jaxcfr.solvers.monte_carlo` are schemes) and never learn a scheme's name, so a new
scheme is one class that implements the protocol.

Per node of ``S`` the builder records the edge into it: the target probability
``p`` (strategy or chance) and the sampling probability ``q`` (1 for enumerated
edges). The estimators (:mod:`jaxcfr.solvers.estimators`) then run a reach pass
(own reaches and the sample reach ``Q``), a value pass with importance weights
``p / q``, and scatter counterfactual values onto the touched rows.

Shapes: ``N`` nodes, ``D`` levels, ``C_d`` the capacity of level ``d``, ``K`` the
widest node that may be sampled, ``P`` players.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.passes import gather as take
from jaxcfr.tensors import PADDING, GameTensors, LoweredGame

__all__ = ["Scheme", "SampleTables", "SamplePlan", "Subtree", "Paths", "child_tables",
           "make_plan", "build_subtree", "sample_paths"]


class Scheme(Protocol):
    """What the sampling kernels (here and :mod:`jaxcfr.kernels.counts`) ask of a scheme.

    Every method works on NumPy arrays (host tables) and on JAX arrays (device passes)
    alike; ``traverser`` is the updating player (an int, a traced int), or ``None`` when
    one sample updates every player at once (chance sampling).
    """

    def enumerates(self, kind, owner, traverser):
        """``[M]`` bool: which of these nodes (their ``kind`` and acting ``owner``, ``[M]``)
        the scheme enumerates; the others sample one child."""

    def may_sample(self, kind):
        """``[M]`` bool: the nodes that sample for some traverser (host: the plan's ``K``)."""

    def proposal(self, p, present, count, kind, owner, traverser, exploration):
        """``q [M, K]``: the probabilities a sampling node draws its children with, from
        their target probabilities ``p [M, K]`` (strategy x chance; ``present [M, K]``
        marks the real children, ``count [M]`` counts them; ``kind`` / ``owner`` ``[M]``;
        ``exploration [M, 1]``: outcome sampling's epsilon of each node's member)."""

    def average_target(self, player, num_players: int):
        """The player whose strategy sums an update of ``player`` feeds (the depth-first
        walk records only its nodes and the traverser's: :func:`jaxcfr.kernels.walk.recorded`)."""

    #: The scheme samples per traverser (a simultaneous update walks once per player);
    #: else one walk (``traverser=None``) updates every player.
    per_traverser: bool


class SampleTables(NamedTuple):
    """Where each node's children are (they are contiguous in the next level), and the
    two facts of an edge a draw reads, padded by ``K`` so that a node's children are one
    window ``first_child[n]:first_child[n] + K`` (one index per node, not one per child)."""
    first_child: np.ndarray    # [N] int32  index of the first child (0 for a leaf)
    num_children: np.ndarray   # [N] int32  number of children
    edge_slot: np.ndarray      # [N + K] int32  action slot of the edge into the node
    chance: np.ndarray         # [N + K] float  chance probability of that edge (1: a decision)


class SamplePlan(NamedTuple):
    """Static shape facts of a scheme on one game (hashable: compiled code depends on it)."""
    capacity: tuple[int, ...]  # [D] most nodes of each level in one sampled subtree
    max_children: int          # K: the widest node the scheme may sample from
    samples: int = 1           # subtrees sampled (and averaged) per traverser and iteration


class Subtree(NamedTuple):
    """Sampled subtrees of ``B`` batch members x ``samples`` draws, levels concatenated.

    Level ``d`` is ``offset[d]:offset[d + 1]`` with ``offset`` from :func:`level_offsets`;
    inside a level, member ``b`` owns the block ``b * W_d:(b + 1) * W_d`` (``W_d`` =
    samples x capacity of level ``d``), its draws packed one after another. Every array
    has one flat slot axis ``C``, so each pass is a plain gather or scatter.
    """
    node: jax.Array     # [C] int32  global node index (0 in unused slots)
    valid: jax.Array    # [C] bool   slot holds a node of a sample
    parent: jax.Array   # [C] int32  slot of the parent (0 at a root)
    p: jax.Array        # [C] float  probability of the edge into the node (strategy x chance)
    q: jax.Array        # [C] float  probability that the scheme took that edge (1: enumerated)
    member: jax.Array   # [C] int32  batch member of the slot
    sigma: jax.Array    # [C, A] float the current strategy at the slot's row (sink: [1, 0..])


class Paths(NamedTuple):
    """Sampled trajectories (outcome sampling) of ``G = B x samples`` groups, level-major:
    ``[D, G]`` with group ``g = b * samples + k`` (member ``b``, draw ``k``). Level ``d``
    holds each trajectory's node at depth ``d``; past its leaf a trajectory is invalid."""
    node: jax.Array     # [D, G] int32  global node index (0 past the leaf)
    valid: jax.Array    # [D, G] bool   the trajectory reaches depth d
    p: jax.Array        # [D, G] float  probability of the edge into the node (root: 1)
    q: jax.Array        # [D, G] float  probability the trajectory took it (root: 1)
    sigma: jax.Array    # [D, G, A] float the current strategy at the node's row
    member: jax.Array   # [G] int32    batch member of the group


# -- host: tables and plans --------------------------------------------------------------
def child_tables(t: GameTensors, pad: int | None = None) -> SampleTables:
    """Child ranges of one game's tensors (``[N]``), or of a stack's (``[B, N]``); the edge
    tables padded by ``pad`` (default: the widest node's children)."""
    parent = np.asarray(t.parent)
    if parent.ndim == 2:
        games = [GameTensors(*(np.asarray(x)[b] for x in t)) for b in range(parent.shape[0])]
        widest = max(int(child_tables(g, 0).num_children.max()) for g in games)
        parts = [child_tables(g, widest if pad is None else pad) for g in games]
        return SampleTables(*(np.stack(cols) for cols in zip(*parts)))
    n = parent.shape[0]
    # a stack's padding nodes hang under real nodes, after their real children: not children
    child = np.flatnonzero((parent >= 0) & (np.asarray(t.node_kind) != PADDING))
    num = np.bincount(parent[child], minlength=n).astype(np.int32)
    first = np.full(n, n, dtype=np.int64)
    np.minimum.at(first, parent[child], child)
    first = np.where(num > 0, first, 0).astype(np.int32)
    pad = int(num.max()) if pad is None else pad
    actions = np.asarray(t.legal_mask).shape[-1]
    slot = np.pad(np.asarray(t.edge_index) % actions, (0, pad)).astype(np.int32)
    chance = np.pad(np.asarray(t.chance_prob), (0, pad))
    return SampleTables(first, num, slot, chance)


def _window(x: jax.Array, start: jax.Array, k: int) -> jax.Array:
    """``x[start + j]`` for ``j < k``: ``[M, k]`` from ``start [M]`` (``x`` padded by ``k``)."""
    return jax.vmap(lambda s: jax.lax.dynamic_slice_in_dim(x, s, k))(start)


def _enumerated(t: GameTensors, scheme: Scheme, traverser: int) -> np.ndarray:
    """``[N]`` bool: which nodes the scheme enumerates when ``traverser`` updates."""
    return np.asarray(scheme.enumerates(np.asarray(t.node_kind), np.asarray(t.node_player),
                                        traverser))


def _capacities(t: GameTensors, tables: SampleTables, levels: tuple[int, ...],
                enumerated: np.ndarray) -> list[int]:
    """Per level, the most nodes one sample can reach (sum over enumerated, max over sampled)."""
    num = np.asarray(tables.num_children)
    parent = np.asarray(t.parent)
    depth = len(levels) - 1
    out = [1]
    for target in range(1, depth):
        lo, hi = levels[target], levels[target + 1]
        count = np.ones(hi - lo, dtype=np.int64)          # each node of the target level: 1
        for d in range(target - 1, -1, -1):
            a, b = levels[d], levels[d + 1]
            kids = parent[levels[d + 1]:levels[d + 2]] - a       # children's local parents
            summed = np.bincount(kids, weights=count, minlength=b - a)
            widest = np.zeros(b - a)
            np.maximum.at(widest, kids, count)
            count = np.where(enumerated[a:b], summed, widest)
            count = np.where(num[a:b] > 0, count, 0).astype(np.int64)
        out.append(max(1, int(count[0])))
    return out


def make_plan(lowered: LoweredGame, scheme: Scheme, tables: SampleTables,
              samples: int = 1) -> SamplePlan:
    """The capacities of ``scheme`` on ``lowered`` (a stack: the most over its members)."""
    t = lowered.tensors
    members = ([GameTensors(*(np.asarray(x)[b] for x in t)) for b in range(lowered.batch_size)]
               if lowered.batch_size is not None else [t])
    member_tables = ([SampleTables(*(np.asarray(x)[b] for x in tables))
                      for b in range(lowered.batch_size)]
                     if lowered.batch_size is not None else [tables])
    levels = lowered.level_start
    capacity = np.ones(len(levels) - 1, dtype=np.int64)
    widest = 1
    for tm, tab in zip(members, member_tables):
        kind = np.asarray(tm.node_kind)
        num = np.asarray(tab.num_children)
        caps = np.max([_capacities(tm, tab, levels, _enumerated(tm, scheme, i))
                       for i in range(lowered.num_players)], axis=0)
        capacity = np.maximum(capacity, caps)
        may_sample = np.asarray(scheme.may_sample(kind))
        if may_sample.any():
            widest = max(widest, int(num[may_sample].max()))
    return SamplePlan(tuple(int(c) for c in capacity), widest, int(samples))


# -- device: sampled subtrees ---------------------------------------------------------------
def build_subtree(t: GameTensors, tables: SampleTables, plan: SamplePlan, scheme: Scheme,
                  policy, members: int, uniforms: jax.Array, traverser,
                  exploration: jax.Array) -> Subtree:
    """Sample ``plan.samples`` subtrees of ``t`` for each of ``members`` batch members.

    Args:
      scheme: which nodes enumerate, how the others draw (:class:`Scheme`).
      policy: ``policy(rows [M], member [M]) -> [M, A]``: the current strategy of the
        given rows (read lazily: only visited rows are ever regret-matched).
      uniforms: ``[B, samples * sum(capacity)]`` uniform numbers, one per slot (a member's
        numbers alone decide its samples, so a member equals its separate run).
      traverser: the updating player (a traced int), or ``None`` (chance sampling of every
        player at once).
      exploration: ``[B]`` outcome sampling's epsilon at the traverser's decisions.
    """
    actions = t.legal_mask.shape[1]
    num, first = tables.num_children, tables.first_child
    k = plan.max_children
    # every (member, draw) is a group with its own capacity per level: prefix sums run
    # over one draw's level (short), never over the whole forest's
    groups = members * plan.samples
    width = plan.capacity                                        # per group and level
    starts = level_offsets(plan)                                 # one member's slots
    member = jnp.repeat(jnp.arange(members, dtype=jnp.int32), plan.samples * width[0])
    node = jnp.zeros(groups * width[0], jnp.int32)
    valid = jnp.ones(groups * width[0], bool)
    p = q = jnp.ones(groups * width[0], uniforms.dtype)
    parent = jnp.zeros_like(node)
    levels = []
    start = 0                                                    # slot of level d's first node
    for d in range(len(width)):
        sigma = policy(take(t.node_infoset, node), member)                     # [M_d, A]
        levels.append((node, valid, parent, p, q, member, sigma))
        if d == len(width) - 1:
            break
        here, below = width[d], width[d + 1]
        kind = take(t.node_kind, node)
        owner = take(t.node_player, node)
        nk = jnp.where(valid, take(num, node), 0)
        enum = scheme.enumerates(kind, owner, traverser)
        count = jnp.where(enum, nk, jnp.minimum(nk, 1)).reshape(groups, here)
        within = _prefix(jnp.add, count, axis=1) - count               # [G, C_d]
        target = (within + jnp.arange(groups)[:, None] * below).reshape(-1)
        total = count.sum(axis=1)                                      # [G]
        # the parent of each slot: mark where each parent's children start, carry forward
        slot = jnp.arange(groups * below, dtype=jnp.int32)
        marks = jnp.zeros(groups * below, jnp.int32).at[target].max(
            jnp.where(count.reshape(-1) > 0, jnp.arange(groups * here, dtype=jnp.int32), 0),
            mode="drop")
        at = _prefix(jnp.maximum, marks.reshape(groups, below), axis=1).reshape(-1)
        next_group = slot // below
        next_valid = slot - next_group * below < take(total, next_group)
        next_member = next_group // plan.samples
        # one child per sampling node: inverse CDF over its (at most K) children
        starts_at = take(first, node)
        present = jnp.arange(k)[None, :] < nk[:, None]
        sigma_flat = sigma.reshape(-1)                                  # [M_d * A]
        p_kids = jnp.where(present, jnp.take_along_axis(
            sigma, _window(tables.edge_slot, starts_at, k), axis=1)
            * _window(tables.chance, starts_at, k).astype(sigma.dtype), 0)
        q_kids = scheme.proposal(p_kids, present, nk, kind, owner, traverser,
                                 take(exploration, member)[:, None])
        u = uniforms[:, starts[d]:starts[d + 1]].reshape(-1)
        pick = _inverse_cdf(q_kids, u)
        local = jnp.where(take(enum, at), slot - take(target, at), take(pick, at))
        child = jnp.where(next_valid, take(first, take(node, at)) + local, 0).astype(jnp.int32)
        p_child = (take(sigma_flat, at * actions + take(tables.edge_slot, child))
                   * take(tables.chance, child).astype(sigma.dtype))
        q_pick = jnp.where(jnp.arange(k)[None, :] == pick[:, None], q_kids, 0).sum(axis=1)
        q_child = jnp.where(take(enum, at), 1, take(q_pick, at)).astype(uniforms.dtype)
        parent = (start + at).astype(jnp.int32)
        p = jnp.where(next_valid, p_child, 0)
        q = jnp.where(next_valid, q_child, 1)
        start += groups * here
        node, valid, member = child, next_valid, next_member
    return Subtree(*(jnp.concatenate(cols) for cols in zip(*levels)))


def sample_paths(t: GameTensors, tables: SampleTables, plan: SamplePlan, scheme: Scheme,
                 policy, members: int, uniforms: jax.Array, traverser,
                 exploration: jax.Array) -> Paths:
    """The trajectories of a scheme that enumerates nothing (outcome sampling):
    ``plan.samples`` per member, one child everywhere, drawn with ``scheme.proposal``
    (outcome sampling: the traverser's from the ``exploration``-uniform mix of its
    strategy, the others' and chance's from their probabilities).

    The same draws as :func:`build_subtree` of such a plan (every capacity is 1, so a
    trajectory needs no compaction): one ``lax.scan`` over the depth whose body is
    compiled once, ``O(D * G * K)`` work, no prefix sums or scatters.

    Args:
      policy: ``policy(rows [G], member [G]) -> [G, A]``, the current strategy, read lazily.
      uniforms: ``[B, D * samples]``, member ``b``'s numbers level-major (level ``d``, draw
        ``k`` at ``d * samples + k``), as :func:`build_subtree` reads them.
      traverser: the updating player (a traced int).
      exploration: ``[B]`` epsilon at the traverser's decisions.
    """
    depth, k = len(plan.capacity), plan.max_children
    groups = members * plan.samples
    num, first = tables.num_children, tables.first_child
    member = jnp.repeat(jnp.arange(members, dtype=jnp.int32), plan.samples)       # [G]
    eps = take(exploration, member)[:, None]                                       # [G, 1]
    u = uniforms.reshape(members, depth, plan.samples).transpose(1, 0, 2).reshape(
        depth, groups)                                                             # [D, G]

    def step(carry, u_d):
        node, valid = carry                                                        # [G]
        sigma = policy(take(t.node_infoset, node), member)                         # [G, A]
        kind, owner = take(t.node_kind, node), take(t.node_player, node)
        nk = jnp.where(valid, take(num, node), 0)
        starts_at = take(first, node)
        present = jnp.arange(k)[None, :] < nk[:, None]                             # [G, K]
        p_kids = jnp.where(present, jnp.take_along_axis(
            sigma, _window(tables.edge_slot, starts_at, k), axis=1)
            * _window(tables.chance, starts_at, k).astype(sigma.dtype), 0)
        q_kids = scheme.proposal(p_kids, present, nk, kind, owner, traverser, eps)
        pick = _inverse_cdf(q_kids, u_d)                                           # [G]
        chosen = jnp.arange(k)[None, :] == pick[:, None]
        more = nk > 0
        child = jnp.where(more, take(first, node) + pick, 0).astype(jnp.int32)
        p_child = jnp.where(more, jnp.where(chosen, p_kids, 0).sum(axis=1), 0)
        q_child = jnp.where(more, jnp.where(chosen, q_kids, 0).sum(axis=1), 1)
        return (child, more), (node, valid, sigma, p_child, q_child)

    start = (jnp.zeros(groups, jnp.int32), jnp.ones(groups, bool))
    _, (node, valid, sigma, p_next, q_next) = jax.lax.scan(step, start, u)
    one = jnp.ones((1, groups), uniforms.dtype)
    p = jnp.concatenate([one, p_next[:-1].astype(uniforms.dtype)])
    q = jnp.concatenate([one, q_next[:-1].astype(uniforms.dtype)])
    return Paths(node, valid, p, q, sigma, member)


def _inverse_cdf(weights: jax.Array, u: jax.Array) -> jax.Array:
    """``[M]`` the first index whose cumulative weight exceeds ``u * total`` (``weights``
    ``[M, K]`` non-negative, ``u`` in ``[0, 1)``): a draw proportional to ``weights`` that
    never picks a zero weight, also when ``u`` is 0 or ``u * total`` rounds up to the total
    (then the last positive weight is taken)."""
    cdf = _prefix(jnp.add, weights, axis=1)
    over = cdf > (u * cdf[:, -1])[:, None]                 # monotone: False... then True...
    index = jnp.arange(weights.shape[1])[None, :]
    last = jnp.where(weights > 0, index, 0).max(axis=1)
    return jnp.where(over[:, -1], (~over).sum(axis=1), last)


def _prefix(op, x: jax.Array, axis: int = 0) -> jax.Array:
    """Inclusive prefix reduction: XLA's cumulative op (a reduce-window, quadratic in the
    length on CPU) for short axes, an associative scan (more operations) for long ones."""
    if x.shape[axis] <= 32:
        return jnp.cumsum(x, axis=axis) if op is jnp.add else jax.lax.cummax(x, axis=axis)
    return jax.lax.associative_scan(op, x, axis=axis)


def level_offsets(plan: SamplePlan, members: int = 1) -> tuple[int, ...]:
    """``[D + 1]`` start of each level in a :class:`Subtree` of ``members`` batch members."""
    scale = members * plan.samples
    return tuple(int(x) * scale for x in np.concatenate([[0], np.cumsum(plan.capacity)]))
