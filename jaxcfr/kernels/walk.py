"""Depth-first walks: Monte Carlo traversals whose work follows the nodes they reach.

A sampling scheme (:class:`~jaxcfr.kernels.subtree.Scheme`: chance, external or outcome
sampling) enumerates the children of some nodes and samples one child of the others.
:func:`walk` runs each traversal as one *lane*: a ``lax.while_loop`` that walks the tree
depth first with an explicit stack of one frame per depth (``D`` frames: the tree's
depth bounds it), ``vmap``-ped over the lanes (batch members x draws). One loop step
either

* *pushes* the next child of the node on top of the stack (an enumerating node's next
  child, or the one child a sampling node draws from the next uniform number); a leaf is
  folded into its parent's frame at once, an inner node gets a frame; or
* *finishes* the node on top (every child taken): a decision node's counterfactual facts
  are written to the lane's next output slot, its value is folded into its parent's frame,
  and the frame is popped.

So a traversal costs one step per node it reaches plus one per inner node it reaches,
whatever the tree's width: no level is padded to the most any draw could reach (the
level-by-level builder of :func:`jaxcfr.kernels.subtree.build_subtree` pays for every slot
of its fixed capacity), an outcome-sampling trajectory stops where it ends, and the
program is one loop body (it compiles about as fast as the exact step, where the
level-by-level builder unrolls one body per level). Lanes run in lockstep: a batch of
lanes takes as many steps as its longest traversal.

What a frame carries for its node ``h``: the value accumulated so far
``v(h) = u(h) + sum over taken children c of (p / q)(c) v(c)`` for every player (``p``
the edge's target probability, strategy x chance; ``q`` the probability the scheme took
it, 1 where it enumerates), ``x(h, a) = v(ha)[acting player] / q(ha)`` of the taken
children, the strategy at ``h``, the own reach of every player and chance and the sample
reach ``Q(h)`` (the product of ``q`` above ``h``). A finished decision node's slot holds
those (:class:`Walked`); the estimators turn them into regrets and averaging
contributions exactly as they do a sampled subtree's nodes
(:meth:`jaxcfr.solvers.monte_carlo.MonteCarlo.from_walks`).

Randomness: lane ``l`` reads its own block of ``U`` uniform numbers, the ``k``-th draw
of its walk (in depth-first order, children in slot order) reading number ``k``. A
batch member's numbers come from its key alone, so a member equals its separate run.

Shapes: ``N`` nodes, ``A`` actions, ``P`` players, ``D`` depth levels (frames), ``L``
lanes (``B`` members x ``samples`` draws, member-major), ``S`` output slots per lane
(the most decision nodes one traversal finishes), ``U`` uniform numbers per lane (the
most draws one traversal makes), ``K`` the widest node that may sample.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.passes import gather as take
from jaxcfr.kernels.subtree import SampleTables, Scheme
from jaxcfr.kernels.subtree import _inverse_cdf as inverse_cdf
from jaxcfr.tensors import DECISION, PADDING, GameTensors, LoweredGame

__all__ = ["WalkPlan", "Walked", "make_walk_plan", "walk"]


class WalkPlan(NamedTuple):
    """Static bounds of a scheme's walks on one game (hashable: compiled code depends on
    it); a stack's are the most over its members."""
    depth: int          # D: frames (levels of the tree)
    slots: int          # S: most decision nodes one traversal finishes
    draws: int          # U: most numbers one traversal draws (at least 1)
    max_children: int   # K: the widest node the scheme may sample from
    samples: int = 1    # traversals per member (lanes per member)


class Walked(NamedTuple):
    """The decision nodes the lanes finished, ``S`` slots per lane, lane-major (``[L * S]``
    with lane ``l = b * samples + k``: member ``b``, draw ``k``); a slot past the lane's
    last finished node is invalid (node 0, zeros)."""
    node: jax.Array     # [L * S] int32  the finished decision node
    valid: jax.Array    # [L * S] bool   the slot holds one
    member: jax.Array   # [L * S] int32  batch member of the lane
    x: jax.Array        # [L * S, A] float  v(ha)[acting] / q(ha) at the taken children's slots
    sigma: jax.Array    # [L * S, A] float  the current strategy at the node
    reach: jax.Array    # [L * S, P + 1] float  own reach of every player and chance
    sample_reach: jax.Array  # [L * S] float  Q(h), the probability the walk reached it


# -- host: bounds -------------------------------------------------------------------------------
def _bounds(t: GameTensors, tables: SampleTables, levels, enumerated: np.ndarray
            ) -> tuple[int, int]:
    """The most decision nodes one traversal reaches and the most draws it makes (sum over
    enumerated children, max over sampled ones), bottom-up level by level."""
    parent = np.asarray(t.parent)
    kind = np.asarray(t.node_kind)
    inner = np.asarray(tables.num_children) > 0
    slots = (kind == DECISION).astype(np.int64)
    draws = (inner & ~enumerated).astype(np.int64)
    below_slots = np.zeros_like(slots)
    below_draws = np.zeros_like(draws)
    for d in range(len(levels) - 2, 0, -1):
        lo, hi = levels[d], levels[d + 1]
        real = kind[lo:hi] != PADDING
        up = parent[lo:hi][real]
        s, u = (slots + below_slots)[lo:hi][real], (draws + below_draws)[lo:hi][real]
        summed_s, summed_u = np.zeros_like(slots), np.zeros_like(draws)
        np.add.at(summed_s, up, s)
        np.add.at(summed_u, up, u)
        most_s, most_u = np.zeros_like(slots), np.zeros_like(draws)
        np.maximum.at(most_s, up, s)
        np.maximum.at(most_u, up, u)
        a, b = levels[d - 1], levels[d]
        below_slots[a:b] = np.where(enumerated[a:b], summed_s[a:b], most_s[a:b])
        below_draws[a:b] = np.where(enumerated[a:b], summed_u[a:b], most_u[a:b])
    return int(slots[0] + below_slots[0]), int(draws[0] + below_draws[0])


def make_walk_plan(lowered: LoweredGame, scheme: Scheme, tables: SampleTables,
                   samples: int = 1) -> WalkPlan:
    """The bounds of ``scheme``'s walks on ``lowered`` (one game or a stack; ``tables``:
    :func:`~jaxcfr.kernels.subtree.child_tables` of it), every traverser's."""
    t = lowered.tensors
    batched = lowered.batch_size is not None
    members = ([GameTensors(*(np.asarray(x)[b] for x in t)) for b in range(lowered.batch_size)]
               if batched else [t])
    member_tables = ([SampleTables(*(np.asarray(x)[b] for x in tables))
                      for b in range(lowered.batch_size)] if batched else [tables])
    slots, draws, widest = 1, 1, 1
    for tm, tab in zip(members, member_tables):
        kind, owner = np.asarray(tm.node_kind), np.asarray(tm.node_player)
        for i in range(lowered.num_players):
            enum = np.asarray(scheme.enumerates(kind, owner, i))
            s, u = _bounds(tm, tab, lowered.level_start, enum)
            slots, draws = max(slots, s), max(draws, u)
        may = np.asarray(scheme.may_sample(kind)) & (np.asarray(tab.num_children) > 0)
        if may.any():
            widest = max(widest, int(np.asarray(tab.num_children)[may].max()))
    return WalkPlan(len(lowered.level_start) - 1, slots, draws, widest, int(samples))


# -- device: the walk ------------------------------------------------------------------------
def walk(t: GameTensors, tables: SampleTables, plan: WalkPlan, scheme: Scheme, policy,
         members: int, uniforms: jax.Array, traverser, exploration: jax.Array,
         num_players: int) -> Walked:
    """Walk ``plan.samples`` traversals of each of ``members`` batch members, depth first.

    Args:
      scheme: which nodes enumerate, how the others draw (:class:`Scheme`).
      policy: ``policy(rows [M], member [M]) -> [M, A]``: the current strategy of the
        given rows (read lazily: only reached rows are ever regret-matched).
      uniforms: ``[B, samples * U]``: member ``b``'s numbers, draw ``k``'s block
        ``k * U:(k + 1) * U``.
      traverser: the updating player (a traced int), or ``None`` (chance sampling of
        every player at once).
      exploration: ``[B]`` outcome sampling's epsilon at the traverser's decisions.
      num_players: ``P``.
    """
    depth, slots, k = plan.depth, plan.slots, plan.max_children
    actions = t.legal_mask.shape[1]
    num = num_players
    dtype = uniforms.dtype
    lanes = members * plan.samples
    member = jnp.repeat(jnp.arange(members, dtype=jnp.int32), plan.samples)        # [L]
    eps = take(exploration, member).astype(dtype)                                   # [L]
    u = uniforms.reshape(lanes, plan.draws)                                          # [L, U]
    first, count = tables.first_child, tables.num_children
    players = jnp.arange(num + 1)

    def strategy(node, m):                                                  # [A]
        return policy(take(t.node_infoset, node)[None], m[None])[0].astype(dtype)

    def one(m, e, numbers):
        root = jnp.zeros((), jnp.int32)
        frames = dict(
            node=jnp.zeros(depth, jnp.int32),
            taken=jnp.zeros(depth, jnp.int32),                     # children taken so far
            value=jnp.zeros((depth, num), dtype).at[0].set(take(t.payoff, root).astype(dtype)),
            x=jnp.zeros((depth, actions), dtype),
            sigma=jnp.zeros((depth, actions), dtype).at[0].set(strategy(root, m)),
            reach=jnp.ones((depth, num + 1), dtype),
            sample_reach=jnp.ones(depth, dtype),
            ratio=jnp.ones(depth, dtype),                          # p / q of the edge in
            q=jnp.ones(depth, dtype))                              # q of the edge in
        out = dict(node=jnp.zeros(slots, jnp.int32), x=jnp.zeros((slots, actions), dtype),
                   sigma=jnp.zeros((slots, actions), dtype),
                   reach=jnp.zeros((slots, num + 1), dtype),
                   sample_reach=jnp.zeros(slots, dtype))
        start = (jnp.zeros((), jnp.int32), jnp.zeros((), bool), jnp.zeros((), jnp.int32),
                 jnp.zeros((), jnp.int32), frames, out)

        def step(carry):
            sp, _, drawn, written, f, o = carry
            h = f["node"][sp]
            kind, owner = take(t.node_kind, h), take(t.node_player, h)
            nk = take(count, h)
            enum = scheme.enumerates(kind, owner, traverser)
            j = f["taken"][sp]
            push = j < jnp.where(enum, nk, jnp.minimum(nk, 1))
            # the child: the next one, or one drawn from the scheme's proposal
            at = take(first, h)
            window = jax.lax.dynamic_slice_in_dim(tables.edge_slot, at, k)          # [K]
            present = jnp.arange(k) < nk
            sigma_h = f["sigma"][sp]
            p_kids = jnp.where(present, take(sigma_h, window) * jax.lax.dynamic_slice_in_dim(
                tables.chance, at, k).astype(dtype), 0)
            q_kids = scheme.proposal(p_kids[None], present[None], nk[None], kind[None],
                                     owner[None], traverser, e[None, None])[0]
            pick = inverse_cdf(q_kids[None], numbers[jnp.minimum(drawn, plan.draws - 1)][None])[0]
            slot = jnp.where(enum, j, pick)
            c = (at + slot).astype(jnp.int32)
            p = take(p_kids, slot)
            q = jnp.where(enum, jnp.ones((), dtype), take(q_kids, slot).astype(dtype))
            leaf = take(count, c) == 0
            payoff_c = take(t.payoff, c).astype(dtype)                              # [P]
            # fold a value into a frame: a leaf just pushed, or the finished node on top
            finish = ~push
            into = jnp.where(push, sp, sp - 1)
            child = jnp.where(push, c, h)
            value = jnp.where(push, payoff_c, f["value"][sp])
            ratio = jnp.where(push, p / q, f["ratio"][sp])
            q_in = jnp.where(push, q, f["q"][sp])
            fold = (push & leaf) | (finish & (sp > 0))
            seat = jnp.minimum(take(t.edge_owner, child), num - 1)
            into_c = jnp.maximum(into, 0)
            value_into = f["value"][into_c] + jnp.where(fold, ratio, 0) * value
            x_into = f["x"][into_c].at[take(tables.edge_slot, child)].set(
                jnp.where(fold, value[seat] / q_in, f["x"][into_c][take(tables.edge_slot,
                                                                         child)]))
            f = dict(f, value=f["value"].at[into_c].set(value_into),
                     x=f["x"].at[into_c].set(x_into),
                     taken=f["taken"].at[sp].add(push.astype(jnp.int32)))
            # a finished decision node: its slot
            record = finish & (kind == DECISION)
            w = jnp.minimum(written, slots - 1)

            def put(table, row, new):
                return table.at[row].set(jnp.where(record, new, table[row]))
            o = dict(node=put(o["node"], w, h), x=put(o["x"], w, f["x"][sp]),
                     sigma=put(o["sigma"], w, sigma_h), reach=put(o["reach"], w, f["reach"][sp]),
                     sample_reach=put(o["sample_reach"], w, f["sample_reach"][sp]))
            # an inner child just pushed: its frame
            grow = push & ~leaf
            below = jnp.minimum(sp + 1, depth - 1)
            reach_c = f["reach"][sp] * jnp.where(players == take(t.edge_owner, c), p, 1)

            def frame(table, new):
                return table.at[below].set(jnp.where(grow, new, table[below]))
            f = dict(f, node=frame(f["node"], c), taken=frame(f["taken"], 0),
                     value=frame(f["value"], payoff_c), x=frame(f["x"], jnp.zeros(actions, dtype)),
                     sigma=frame(f["sigma"], strategy(c, m)), reach=frame(f["reach"], reach_c),
                     sample_reach=frame(f["sample_reach"], f["sample_reach"][sp] * q),
                     ratio=frame(f["ratio"], p / q), q=frame(f["q"], q))
            drawn = drawn + (push & ~enum).astype(jnp.int32)
            written = written + record.astype(jnp.int32)
            done = finish & (sp == 0)
            sp = jnp.where(grow, sp + 1, jnp.where(finish, sp - 1, sp))
            return sp, done, drawn, written, f, o

        *_, written, _, o = jax.lax.while_loop(lambda c: ~c[1], step, start)
        return o, jnp.arange(slots) < written

    o, valid = jax.vmap(one)(member, eps, u)
    flat = lambda a: a.reshape((-1,) + a.shape[2:])                                # noqa: E731
    return Walked(flat(o["node"]), flat(valid), jnp.repeat(member, slots), flat(o["x"]),
                  flat(o["sigma"]), flat(o["reach"]), flat(o["sample_reach"]))
