"""Depth-first walks: Monte Carlo traversals whose work follows the nodes they reach.

A sampling scheme (:class:`~jaxcfr.kernels.subtree.Scheme`: chance, external or outcome
sampling) enumerates the children of some nodes and samples one child of the others.
:func:`walk` runs each traversal as one *lane*: a ``lax.while_loop`` that walks the tree
depth first with an explicit stack of one frame per depth (``D`` frames: the tree's
depth bounds it), ``vmap``-ped over the lanes (traversers x batch members x draws: the
traversers of a simultaneous update are lanes of the same loop, not one loop each). One
loop step
either

* *pushes* the next child of the node on top of the stack (an enumerating node's next
  child, or the one child a sampling node draws from the next uniform number); a leaf is
  folded into its parent's frame at once, an inner node gets a frame; or
* *finishes* the node on top (every child taken): a decision node's counterfactual facts
  are written to the lane's next output slot (only a node whose facts the update reads:
  the traverser's, for its regrets, and the averaged player's, for its strategy sums;
  :func:`recorded`), its value is folded into its parent's frame, and the frame is
  popped.

So a traversal costs one step per node it reaches plus one per inner node it reaches,
whatever the tree's width: no level is padded to the most any draw could reach (the
level-by-level builder of :func:`jaxcfr.kernels.subtree.build_subtree` pays for every slot
of its fixed capacity), an outcome-sampling trajectory stops where it ends, and the
program is one loop body (it compiles about as fast as the exact step, where the
level-by-level builder unrolls one body per level). Lanes run in lockstep: a batch of
lanes takes as many steps as its longest traversal; so from :data:`REFILL_FROM`
traversals a step has fewer lanes than traversals, and a lane whose traversal ends takes
the next one not yet walked (:func:`lane_count`).

What a frame carries for its node ``h``: the value accumulated so far
``v(h) = u(h) + sum over taken children c of (p / q)(c) v(c)`` for every player (``p``
the edge's target probability, strategy x chance; ``q`` the probability the scheme took
it, 1 where it enumerates), ``x(h, a) = v(ha)[acting player] / q(ha)`` of the taken
children, the strategy at ``h``, the own reach of every player and chance and the sample
reach ``Q(h)`` (the product of ``q`` above ``h``). A finished decision node's slot holds
those (:class:`Walked`); the estimators turn them into regrets and averaging
contributions exactly as they do a sampled subtree's nodes
(:meth:`jaxcfr.solvers.monte_carlo.MonteCarlo.from_walks`).

Randomness: traversal ``v`` reads its own block of ``U`` uniform numbers, the ``k``-th
draw of its walk (in depth-first order, children in slot order) reading number ``k``,
whichever lane walks it. A
batch member's numbers come from its key alone, so a member equals its separate run, and
a traverser's lanes equal that traverser's walk alone.

Shapes: ``N`` nodes, ``A`` actions, ``P`` players, ``D`` depth levels (frames), ``V``
traversals (``T`` traversers x ``B`` members x ``samples`` draws, traverser-major, then
member-major; ``T = 1`` for one traverser or chance sampling), ``L`` lanes (``V``, or
fewer: :func:`lane_count`), ``S`` the most recorded decision nodes one traversal
finishes, ``S'`` output slots per lane (``S``, or ``S`` times one more than the
traversals a lane takes on average), ``U`` uniform numbers per traversal (the most draws
one traversal makes), ``K`` the widest node that may sample.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.passes import gather as take
from jaxcfr.kernels.subtree import SampleTables, Scheme
from jaxcfr.kernels.subtree import _inverse_cdf as inverse_cdf
from jaxcfr.tensors import DECISION, PADDING, GameTensors, LoweredGame

__all__ = ["WalkPlan", "Walked", "lane_count", "make_walk_plan", "pool_size", "pooled",
           "recorded", "walk"]

#: Random walks per traverser (and member of a stack) in the probe of a plan
#: (:func:`make_walk_plan`: how many recorded nodes walks finish in practice).
PROBE_WALKS = 256


class WalkPlan(NamedTuple):
    """Static bounds of a scheme's walks on one game (hashable: compiled code depends on
    it); a stack's are the most over its members."""
    depth: int          # D: frames (levels of the tree)
    slots: int          # S: most recorded decision nodes one traversal finishes
    draws: int          # U: most numbers one traversal draws (at least 1)
    max_children: int   # K: the widest node the scheme may sample from
    samples: int = 1    # traversals per member (lanes per member)
    # the probe: recorded nodes one walk finishes under the uniform strategy
    # (PROBE_WALKS walks per traverser and member): mean, standard deviation, most
    mean: float = 0.0
    spread: float = 0.0
    most: int = 0


class Walked(NamedTuple):
    """The decision nodes the lanes finished, ``S'`` slots per lane, lane-major (``[L *
    S']``; a lane's traversals one after another; traversal ``v = (i * B + b) * samples +
    k``: traverser ``i``, member ``b``, draw ``k``); a slot past the lane's last finished
    node is invalid (node 0, zeros)."""
    node: jax.Array     # [L * S'] int32  the finished decision node
    valid: jax.Array    # [L * S'] bool   the slot holds one
    member: jax.Array   # [L * S'] int32  batch member of the slot's traversal
    traverser: jax.Array | None  # [L * S'] int32  its traverser (None: chance sampling)
    x: jax.Array        # [L * S', A] float  v(ha)[acting] / q(ha) at the taken children's slots
    sigma: jax.Array    # [L * S', A] float  the current strategy at the node
    reach: jax.Array    # [L * S', P + 1] float  own reach of every player and chance
    sample_reach: jax.Array  # [L * S'] float  Q(h), the probability the walk reached it
    count: jax.Array    # [L] int32  recorded nodes each lane finished (its used slots)


def recorded(scheme: Scheme, kind, owner, traverser, num_players: int):
    """``[M]`` bool: the decision nodes whose facts an update of ``traverser`` reads, so
    whose slots a walk writes: the traverser's (regrets) and those of the player its
    strategy sums go to (``scheme.average_target``); every decision node for ``None``
    (chance sampling of every player). The others' slots would only carry zeros (an
    outcome-sampling walk's opponent nodes, a third player's under external sampling).
    NumPy or JAX alike."""
    decision = kind == DECISION
    if traverser is None:
        return decision
    return decision & ((owner == traverser)
                       | (owner == scheme.average_target(traverser, num_players)))


# -- host: bounds -------------------------------------------------------------------------------
def _bounds(t: GameTensors, tables: SampleTables, levels, enumerated: np.ndarray,
            kept: np.ndarray) -> tuple[int, int]:
    """The most ``kept`` nodes one traversal finishes and the most draws it makes (sum
    over enumerated children, max over sampled ones), bottom-up level by level."""
    parent = np.asarray(t.parent)
    kind = np.asarray(t.node_kind)
    inner = np.asarray(tables.num_children) > 0
    slots = kept.astype(np.int64)
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


def _probe(t: GameTensors, tables: SampleTables, enumerated: np.ndarray, kept: np.ndarray,
           walks: int, rng: np.random.Generator) -> np.ndarray:
    """``[walks]``: the ``kept`` nodes each of ``walks`` random walks reaches (so finishes),
    every walk at once level by level: an ``enumerated`` node takes all its children, the
    others one, drawn on the chance probabilities (chance) or uniformly (decisions: the
    uniform strategy)."""
    first, num = np.asarray(tables.first_child), np.asarray(tables.num_children)
    chance = np.asarray(tables.chance)
    lane, node = np.arange(walks), np.zeros(walks, np.int64)
    count = np.zeros(walks, np.int64)
    while node.size:
        count += np.bincount(lane[kept[node]], minlength=walks)
        inner = num[node] > 0
        lane, node = lane[inner], node[inner]
        wide = num[node]
        group = np.repeat(np.arange(node.size), wide)                 # the parent of each
        child = first[node][group] + (np.arange(group.size)
                                      - np.repeat(np.cumsum(wide) - wide, wide))
        # one child of each sampling node: inverse CDF over the group's weights
        weight = np.cumsum(chance[child])
        end = np.cumsum(wide) - 1
        before = np.where(end - wide >= 0, weight[np.maximum(end - wide, 0)], 0)
        target = before + rng.uniform(size=node.size) * (weight[end] - before)
        pick = np.minimum(np.searchsorted(weight, target, side="right"), end)
        take_all = enumerated[node][group]
        keep = take_all | (np.arange(group.size) == pick[group])
        lane, node = lane[group][keep], child[keep]
    return count


def make_walk_plan(lowered: LoweredGame, scheme: Scheme, tables: SampleTables,
                   samples: int = 1) -> WalkPlan:
    """The bounds of ``scheme``'s walks on ``lowered`` (one game or a stack; ``tables``:
    :func:`~jaxcfr.kernels.subtree.child_tables` of it), every traverser's (a scheme that
    samples per traverser, ``per_traverser``, always walks for one; the others for
    ``None``, every player at once, or for one)."""
    t = lowered.tensors
    batched = lowered.batch_size is not None
    members = ([GameTensors(*(np.asarray(x)[b] for x in t)) for b in range(lowered.batch_size)]
               if batched else [t])
    member_tables = ([SampleTables(*(np.asarray(x)[b] for x in tables))
                      for b in range(lowered.batch_size)] if batched else [tables])
    slots, draws, widest = 1, 1, 1
    mean, spread, most = 0.0, 0.0, 0
    rng = np.random.default_rng(0)                          # the plan is a function of the game
    for tm, tab in zip(members, member_tables):
        kind, owner = np.asarray(tm.node_kind), np.asarray(tm.node_player)
        who = list(range(lowered.num_players))
        for i in who + ([] if scheme.per_traverser else [None]):
            enum = np.asarray(scheme.enumerates(kind, owner, i))
            kept = np.asarray(recorded(scheme, kind, owner, i, lowered.num_players))
            s, u = _bounds(tm, tab, lowered.level_start, enum, kept)
            slots, draws = max(slots, s), max(draws, u)
            finished = _probe(tm, tab, enum, kept, PROBE_WALKS, rng)
            mean, spread = max(mean, float(finished.mean())), max(spread, float(finished.std()))
            most = max(most, int(finished.max()))
        may = np.asarray(scheme.may_sample(kind)) & (np.asarray(tab.num_children) > 0)
        if may.any():
            widest = max(widest, int(np.asarray(tab.num_children)[may].max()))
    return WalkPlan(len(lowered.level_start) - 1, slots, draws, widest, int(samples),
                    round(mean, 3), round(spread, 3), most)


def pool_size(plan: WalkPlan, lanes: int, per_lane: int | None) -> int:
    """The output slots ``C`` that ``lanes`` walks (traversals) share after their loop (the estimate
    and the scatters run over these, not the ``lanes x S`` of the static bound):
    ``per_lane`` slots a lane on average, or (``None``) from the plan's probe: the mean
    over the lanes plus four standard deviations of their sum, and at least the most one
    probed walk finished plus the mean of the other lanes; a multiple of 8, and never more
    than the bound ``lanes x S`` (the bound itself: no pool)."""
    full = lanes * plan.slots
    if per_lane == 0:
        return full
    if per_lane is None:
        want = max(lanes * plan.mean + 4 * plan.spread * math.sqrt(lanes),
                   plan.most + (lanes - 1) * plan.mean)
    else:
        want = lanes * per_lane
    return min(full, 8 * math.ceil(want / 8))


def pooled(w: Walked, size: int, start=0) -> Walked:
    """The used slots of ``w`` (a lane's first ``count``, lane after lane), from the
    ``start``-th (a traced int) on, moved in their order into ``size`` slots (the rest
    invalid: node 0, zeros). So chunks ``start = 0, size, 2 size, ...`` up to
    ``w.count.sum()`` hold every used slot once; sums over them in order add what sums over
    ``w``'s slots add, in the same order, without the unused slots' zeros: the same
    floats, bit for bit."""
    lanes = w.count.shape[0]
    slots = w.node.shape[0] // lanes
    end = jnp.cumsum(w.count)                                                       # [L]
    j = start + jnp.arange(size, dtype=jnp.int32)
    lane = jnp.minimum(jnp.searchsorted(end, j, side="right"), lanes - 1)          # [C]
    used = j < end[-1]
    source = jnp.where(used, lane * slots + j - (end - w.count)[lane], 0)
    pick = lambda x: take(x, source)                                                # noqa: E731
    return Walked(jnp.where(used, pick(w.node), 0), used, pick(w.member),
                  None if w.traverser is None else pick(w.traverser),
                  *(jnp.where(used.reshape((-1,) + (1,) * (x.ndim - 1)), pick(x), 0)
                    for x in (w.x, w.sigma, w.reach, w.sample_reach)),
                  w.count)


# -- device: the walk ------------------------------------------------------------------------
#: Traversals of a step from which lanes walk several each (:func:`lane_count`), the
#: fewest lanes they then get, and how many traversals a lane takes on average.
REFILL_FROM, MIN_LANES, PER_LANE = 256, 128, 4


def lane_count(traversals: int) -> int:
    """Lanes for ``traversals`` walks of one step. Lanes step in lockstep until the last
    is done, so with one lane per traversal a step costs every lane the longest
    traversal's steps (Leduc, external sampling: traversals of 41 and 29 steps on
    average, the longest of 1,024 about 72; outcome sampling 14 and 23). From
    :data:`REFILL_FROM` traversals, fewer lanes (one per :data:`PER_LANE`, at least
    :data:`MIN_LANES`) each take the next traversal not yet walked when their own ends:
    about the mean length times the traversals a lane takes, plus the last one's tail.
    Below it one lane each: a step's cost is then mostly per kernel, not per lane, and
    fewer lanes would only take more steps."""
    if traversals < REFILL_FROM:
        return traversals
    return max(MIN_LANES, -(-traversals // PER_LANE))


def walk(t: GameTensors, tables: SampleTables, plan: WalkPlan, scheme: Scheme, policy,
         members: int, uniforms: jax.Array, traverser, exploration: jax.Array,
         num_players: int, lanes: int | None = None) -> Walked:
    """Walk ``plan.samples`` traversals of each of ``members`` batch members (of each of
    ``T`` traversers), depth first, every lane under one loop.

    Args:
      scheme: which nodes enumerate, how the others draw (:class:`Scheme`).
      policy: ``policy(rows [M], member [M]) -> [M, A]``: the current strategy of the
        given rows (read lazily: only reached rows are ever regret-matched).
      uniforms: ``[B, samples * U]``: member ``b``'s numbers, draw ``k``'s block
        ``k * U:(k + 1) * U``; ``[T, B, samples * U]`` with ``T`` traversers: traverser
        ``i``'s numbers at ``[i]``.
      traverser: the updating player (a traced int), ``[T]`` traced ints (a simultaneous
        update: one lane per traverser, member and draw, all stepping together), or
        ``None`` (chance sampling of every player at once).
      exploration: ``[B]`` outcome sampling's epsilon at the traverser's decisions.
      num_players: ``P``.
      lanes: how many lanes walk the ``V`` traversals (default :func:`lane_count`): one
        each (``V``), or fewer, each taking the next traversal not yet walked when its
        own ends (see :func:`lane_count`).

    The loop's state is packed into few arrays (one integer and one float row per frame,
    one float row per output slot) and a node's facts into one integer and one float row
    of two tables, so a step is a few gathers and in-place row updates: XLA's CPU backend
    pays per array touched, not per number.
    """
    depth, slots, k = plan.depth, plan.slots, plan.max_children
    actions = t.legal_mask.shape[1]
    num = num_players
    dtype = uniforms.dtype
    who = None if traverser is None else jnp.reshape(traverser, -1).astype(jnp.int32)
    groups = 1 if who is None else who.shape[0]                                     # T
    total = groups * members * plan.samples                                          # V
    lanes = lane_count(total) if lanes is None else min(int(lanes), total)           # L
    refill = lanes < total
    # each traversal's member, traverser, exploration and numbers
    member = jnp.tile(jnp.repeat(jnp.arange(members, dtype=jnp.int32), plan.samples),
                      groups)                                                       # [V]
    lane_traverser = None if who is None else jnp.repeat(who, members * plan.samples)  # [V]
    eps = take(exploration, member).astype(dtype)                                   # [V]
    u = uniforms.reshape(total, plan.draws)                                          # [V, U]
    # output slots of a lane: a traversal's most, times one more than the traversals a
    # lane takes on average: a lane takes another only while it has room for the most
    # one can write, and then the lanes cannot all be short of room while traversals
    # are left (they would hold more than V x S slots)
    capacity = slots * (1 + -(-total // lanes)) if refill else slots
    n = t.node_kind.shape[0]
    # a node's facts, one row each, padded by K rows so that children are one window
    facts = jnp.stack([t.node_kind.astype(jnp.int32), t.node_player.astype(jnp.int32),
                       tables.first_child, tables.num_children,
                       t.node_infoset.astype(jnp.int32), t.edge_owner.astype(jnp.int32),
                       tables.edge_slot[:n]], axis=1)                               # [N, 7]
    facts = jnp.concatenate([facts, jnp.zeros((k, 7), jnp.int32)])                  # [N + K, 7]
    KIND, OWNER, FIRST, COUNT, ROW, EDGE_OWNER, SLOT = range(7)
    amounts = jnp.concatenate([t.payoff.astype(dtype), tables.chance[:n, None].astype(dtype)],
                              axis=1)
    amounts = jnp.concatenate([amounts, jnp.zeros((k, num + 1), dtype)])          # [N + K, P + 1]
    # a frame's float row: value [P] | x [A] | sigma [A] | reach [P + 1] | Q | p / q | q
    X, SIG, R = num, num + actions, num + 2 * actions                     # value at column 0
    SQ, RATIO, Q = R + num + 1, R + num + 2, R + num + 3
    width = Q + 1
    players = jnp.arange(num + 1)
    cols = jnp.arange(width)

    def strategy(node_row, m):                                                  # [A]
        return policy(node_row[None], m[None])[0].astype(dtype)

    def root_row(m):                                                            # [F]
        return jnp.concatenate([amounts[0, :num], jnp.zeros(actions, dtype),
                                strategy(facts[0, ROW], m), jnp.ones(num + 4, dtype)])

    def init(m):
        ff = jnp.zeros((depth, width), dtype).at[0].set(root_row(m))
        fi = jnp.zeros((depth, 2), jnp.int32)                     # node, children taken
        of = jnp.zeros((capacity + 1, width), dtype)              # the last row: scratch
        on = jnp.zeros((capacity + 1, 2), jnp.int32)              # node, traversal
        zero = jnp.zeros((), jnp.int32)
        return zero, jnp.zeros((), bool), zero, zero, ff, fi, of, on

    def step(carry, m, e, traverser, tau):
        """One step of one lane (a finished lane's step changes nothing)."""
        sp, done, drawn, written, ff, fi, of, on = carry
        zero = jnp.zeros((), jnp.int32)
        alive = ~done
        h, j = fi[sp, 0], fi[sp, 1]
        top = ff[sp]                                                       # [F]
        fh = facts[h]
        kind, owner, at, nk = fh[KIND], fh[OWNER], fh[FIRST], fh[COUNT]
        enum = scheme.enumerates(kind, owner, traverser)
        push = alive & (j < jnp.where(enum, nk, jnp.minimum(nk, 1)))
        kids = jax.lax.dynamic_slice_in_dim(facts, at, k)                  # [K, 7]
        kid_amounts = jax.lax.dynamic_slice_in_dim(amounts, at, k)         # [K, P + 1]
        present = jnp.arange(k) < nk
        sigma_h = jax.lax.dynamic_slice_in_dim(top, SIG, actions)
        p_kids = jnp.where(present, take(sigma_h, kids[:, SLOT]) * kid_amounts[:, num], 0)
        q_kids = scheme.proposal(p_kids[None], present[None], nk[None], kind[None],
                                 owner[None], traverser, e[None, None])[0]
        pick = inverse_cdf(q_kids[None], u[tau, jnp.minimum(drawn, plan.draws - 1)][None])[0]
        slot = jnp.where(enum, j, pick)
        fc, payoff_c = kids[slot], kid_amounts[slot, :num]
        c = (at + slot).astype(jnp.int32)
        p = p_kids[slot]
        q = jnp.where(enum, jnp.ones((), dtype), q_kids[slot].astype(dtype))
        leaf = fc[COUNT] == 0
        finish = alive & ~push
        # fold a value into a frame: a leaf just pushed, or the finished node on top
        into = jnp.maximum(jnp.where(push, sp, sp - 1), 0)
        value = jnp.where(push, payoff_c, top[:num])
        ratio = jnp.where(push, p / q, top[RATIO])
        q_in = jnp.where(push, q, top[Q])
        edge_owner = jnp.where(push, fc[EDGE_OWNER], fh[EDGE_OWNER])
        edge_slot = jnp.where(push, fc[SLOT], fh[SLOT])
        fold = (push & leaf) | (finish & (sp > 0))
        seat = jnp.minimum(edge_owner, num - 1)
        target = ff[into]
        folded = jnp.where(cols < num, target + jnp.pad(ratio * value, (0, width - num)),
                           jnp.where(cols == X + edge_slot, value[seat] / q_in, target))
        ff = ff.at[into].set(jnp.where(fold, folded, target))
        fi = fi.at[sp, 1].add(push.astype(jnp.int32))
        # a finished decision node the update reads: its slot (else the scratch row)
        record = finish & recorded(scheme, kind, owner, traverser, num)
        w = jnp.where(record, written, capacity)
        of = of.at[w].set(top)
        on = on.at[w].set(jnp.stack([h, tau]))
        # an inner child just pushed: its frame (else the dead row above the top)
        below = jnp.minimum(sp + 1, depth - 1)
        reach = jax.lax.dynamic_slice_in_dim(top, R, num + 1)
        reach_c = reach * jnp.where(players == fc[EDGE_OWNER], p, 1)
        new = jnp.concatenate([payoff_c, jnp.zeros(actions, dtype), strategy(fc[ROW], m),
                               reach_c, jnp.stack([top[SQ] * q, p / q, q])])
        grow = push & ~leaf
        ff = ff.at[below].set(jnp.where(grow, new, ff[below]))
        fi = fi.at[below].set(jnp.where(grow, jnp.stack([c, zero]), fi[below]))
        drawn = drawn + (push & ~enum).astype(jnp.int32)
        written = written + record.astype(jnp.int32)
        done = done | (finish & (sp == 0))
        sp = jnp.maximum(jnp.where(grow, sp + 1, jnp.where(finish, sp - 1, sp)), 0)
        return sp, done, drawn, written, ff, fi, of, on

    # the loop runs the lanes' steps side by side until every lane is done: its predicate
    # is one flag, so a step updates rows in place (a vmapped while_loop would select
    # between every lane's old and new state, whole buffers, at every step)
    lanes_step = jax.vmap(step)
    first = jnp.arange(lanes, dtype=jnp.int32)                    # lane l starts traversal l

    def per_traversal(tau):
        return (take(member, tau), take(eps, tau),
                None if lane_traverser is None else take(lane_traverser, tau), tau)

    if not refill:
        fixed = per_traversal(first)
        _, _, _, written, _, _, of, on = jax.lax.while_loop(
            lambda c: ~jnp.all(c[1]), lambda c: lanes_step(c, *fixed),
            jax.vmap(init)(member))
    else:
        roots = jax.vmap(root_row)(member)                                          # [V, F]

        def body(state):
            c, tau, taken = state
            sp, done, drawn, written, ff, fi, of, on = lanes_step(c, *per_traversal(tau))
            # a lane whose traversal ended takes the next one not yet walked (lanes in
            # order), if it has room for the most one can write
            want = done & (written + slots <= capacity)
            rank = jnp.cumsum(want.astype(jnp.int32)) - 1
            nxt = taken + rank
            ok = want & (nxt < total)
            nxt = jnp.minimum(nxt, total - 1)
            ff = ff.at[:, 0].set(jnp.where(ok[:, None], take(roots, nxt), ff[:, 0]))
            fi = fi.at[:, 0].set(jnp.where(ok[:, None], 0, fi[:, 0]))
            state = (sp, done & ~ok, jnp.where(ok, 0, drawn), written, ff, fi, of, on)
            return state, jnp.where(ok, nxt, tau), taken + ok.sum(dtype=jnp.int32)

        (_, _, _, written, _, _, of, on), _, _ = jax.lax.while_loop(
            lambda s: ~jnp.all(s[0][1]), body,
            (jax.vmap(init)(take(member, first)), first, jnp.asarray(lanes, jnp.int32)))
    on, of = on[:, :capacity], of[:, :capacity]
    valid = jnp.arange(capacity)[None, :] < written[:, None]
    tau = on[..., 1].reshape(-1)
    of = of.reshape(-1, width)
    return Walked(on[..., 0].reshape(-1), valid.reshape(-1), take(member, tau),
                  None if who is None else take(lane_traverser, tau),
                  of[:, X:X + actions], of[:, SIG:SIG + actions], of[:, R:R + num + 1],
                  of[:, SQ], written)
