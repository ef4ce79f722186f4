"""Tree passes over lowered tensors: regret matching, reach, values, counterfactual values.

Every function here works on one game (tensors without a batch axis) and any
number of *trailing* batch axes ``*b`` on the strategy-like arrays, so that a
batch of hyper-parameters or seeds over one game shares every index gather
(contiguous rows). A batch of different games is handled one level up by
``jax.vmap`` over the tensors' leading axis.

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players; ``levels`` is the
static ``LoweredGame.level_start``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.tensors import GameTensors, Structure

__all__ = ["gather", "segment_sum", "regret_matching", "edge_probabilities", "reach_pass",
           "path_product", "value_pass", "bottom_up", "action_values", "pick_player",
           "select_player", "opponent_reach", "own_reach_at_rows", "expected_values",
           "best_response"]


def gather(x: jax.Array, index: jax.Array) -> jax.Array:
    """``x[index]`` along axis 0 for in-range indices, without negative-index fix-ups."""
    return jnp.take(x, index, axis=0, mode="clip")


def segment_sum(x: jax.Array, ids: jax.Array, num: int, *, sorted_ids: bool = False):
    """Sum rows of ``x`` into ``num`` segments (``ids`` are in range by construction)."""
    return jax.ops.segment_sum(x, ids, num_segments=num, indices_are_sorted=sorted_ids,
                               mode=jax.lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def regret_matching(regret: jax.Array, mask: jax.Array) -> jax.Array:
    """Strategy proportional to positive regret; uniform over ``mask`` when none is positive.

    Args:
      regret: ``[I, A, *b]``.
      mask: ``[I, A]`` bool, at least one True per row.
    Returns:
      ``[I, A, *b]``, exactly 0 outside ``mask``; never divides by zero.
    """
    return normalise(regret, mask)


def edge_probabilities(t: GameTensors, strategy: jax.Array) -> jax.Array:
    """Probability of the edge into each node: ``[N, *b]`` (strategy or chance)."""
    flat = strategy.reshape((-1,) + strategy.shape[2:])
    return gather(flat, t.edge_index) * trail(t.chance_prob, strategy.ndim - 1)


def reach_pass(t: GameTensors, s: Structure, edge: jax.Array) -> jax.Array:
    """Per-player reach probability of every node, top-down: ``[N, P + 1, *b]`` (last: chance)."""
    players = jnp.arange(s.num_players + 1)
    owner = (t.edge_owner[:, None] == players[None, :])                    # [N, P + 1]
    factor = jnp.where(trail(owner, edge.ndim + 1), edge[:, None], 1)      # [N, P + 1, *b]
    return path_product(t, s, factor)


def path_product(t: GameTensors, s: Structure, factor: jax.Array) -> jax.Array:
    """The product of ``factor`` ``[N, ...]`` (one value per edge, at the node it leads to)
    over the edges from the root to each node, top-down: ``[N, ...]`` (1 at the roots)."""
    levels = s.level_start
    out = [jnp.ones_like(factor[levels[0]:levels[1]])]
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        local_parent = t.parent[lo:hi] - levels[d - 1]
        out.append(gather(out[-1], local_parent) * factor[lo:hi])
    return jnp.concatenate(out, axis=0)


def value_pass(t: GameTensors, s: Structure, edge: jax.Array,
               players=None) -> jax.Array:
    """Expected payoff of every node under the edge probabilities, bottom-up.

    ``players``: a tuple of player indices or a traced ``[k]`` int array (all by
    default). Returns ``[N, len(players), *b]``.
    """
    levels = s.level_start
    payoff = t.payoff if players is None else jnp.take(t.payoff, jnp.asarray(players), axis=1)
    payoff = trail(payoff, edge.ndim + 1).astype(edge.dtype)
    payoff = jnp.broadcast_to(payoff, payoff.shape[:2] + edge.shape[1:])
    return bottom_up(payoff, edge, t.parent, levels)


def bottom_up(payoff: jax.Array, weight: jax.Array, parent: jax.Array, levels) -> jax.Array:
    """``v(n) = payoff(n) + sum over children c of weight(c) v(c)``, level by level from the
    deepest: ``[N, ...]``.

    ``payoff`` ``[N, ...]``; ``weight`` ``[N, *b]`` (the edge into each node); ``parent``
    ``[N]``, each node's parent in the level above; ``levels`` the level slices (a
    tuple, static), nodes sorted by parent within each level.
    """
    depth = len(levels) - 1
    below = payoff[levels[depth - 1]:levels[depth]]
    out = [below]
    for d in range(depth - 2, -1, -1):
        lo, hi = levels[d], levels[d + 1]
        child = slice(levels[d + 1], levels[d + 2])
        weighted = weight[child][:, None] * below
        below = payoff[lo:hi] + segment_sum(weighted, parent[child] - lo, hi - lo,
                                            sorted_ids=True)
        out.append(below)
    return jnp.concatenate(out[::-1], axis=0)


def pick_player(x: jax.Array, player: jax.Array) -> jax.Array:
    """``x[n, player[n], ...]`` for ``x`` of shape ``[N, P, *b]`` and ``player`` ``[N]``."""
    index = trail(player, x.ndim - 1)[:, None]
    return jnp.take_along_axis(x, index, axis=1)[:, 0]


def select_player(x: jax.Array, player: jax.Array) -> jax.Array:
    """:func:`pick_player` for ``player`` in ``[0, P)``, by one select per column (the
    same values; no gather, whose index fix-ups XLA inlines into every kernel reading it:
    for the few players of a slot estimate)."""
    index = trail(player, x.ndim - 1)
    out = x[:, 0]
    for p in range(1, x.shape[1]):
        out = jnp.where(index == p, x[:, p], out)
    return out


def opponent_reach(reach: jax.Array) -> jax.Array:
    """Reach of everyone but player ``i`` (chance included), per node: ``[N, P, *b]``."""
    p1 = reach.shape[1]
    cols = []
    for i in range(p1 - 1):
        others = [reach[:, j] for j in range(p1) if j != i]
        prod = others[0]
        for o in others[1:]:
            prod = prod * o
        cols.append(prod)
    return jnp.stack(cols, axis=1)


def action_values(t: GameTensors, s: Structure, opp_reach: jax.Array,
                  values: jax.Array, num_rows: int, num_actions: int,
                  players=None) -> jax.Array:
    """Counterfactual value of every (row, action) for the row's owner: ``[I, A, *b]``.

    ``q[I, a] = sum over h in I of (reach of h by everyone but the owner) * v_owner(h a)``;
    members at different depths are summed alike. ``values`` holds the columns of
    ``players`` (all by default); rows of other players get 0, and chance and root
    edges land in the sink row.
    """
    players = tuple(range(s.num_players)) if players is None else players
    parent = jnp.maximum(t.parent, 0)
    weighted = None
    for k in range(len(players)):
        i = players[k]                                    # static int or traced scalar
        cf_reach = gather(jnp.take(opp_reach, i, axis=1), parent)             # [N, *b]
        mine = trail(t.edge_owner == i, values.ndim - 1)
        w = jnp.where(mine, cf_reach * values[:, k], 0)
        weighted = w if weighted is None else weighted + w
    q = segment_sum(weighted, t.edge_index, num_rows * num_actions)
    return q.reshape((num_rows, num_actions) + q.shape[1:])


def own_reach_at_rows(t: GameTensors, reach: jax.Array) -> jax.Array:
    """Each row owner's own reach of the row (same for every member): ``[I, *b]``."""
    owner = jnp.maximum(t.infoset_player, 0)
    at_rep = gather(reach, t.infoset_rep)                                     # [I, P + 1, *b]
    own = pick_player(at_rep, owner)
    return jnp.where(trail(t.infoset_player >= 0, own.ndim), own, 0)


def expected_values(t: GameTensors, s: Structure, strategy: jax.Array) -> jax.Array:
    """Expected payoff of each player under ``strategy``: ``[P, *b]``."""
    edge = edge_probabilities(t, strategy)
    return value_pass(t, s, edge)[0]


def best_response(t: GameTensors, s: Structure, strategy: jax.Array, player,
                  rounds: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Player ``player``'s pure best response to ``strategy`` and its value.

    Args:
      rounds: number of sweeps (``LoweredGame.br_rounds``; traced, so it never recompiles).
    Returns:
      ``(profile [I, A, *b], value [*b])``: ``strategy`` with ``player``'s rows
      replaced by the best response, and that player's expected value under it.
    """
    rows, actions = t.legal_mask.shape
    mask = trail(t.legal_mask, strategy.ndim)
    mine = trail(t.infoset_player == player, strategy.ndim)
    edge0 = edge_probabilities(t, strategy)
    opp = opponent_reach(reach_pass(t, s, edge0))   # independent of player's rows

    def sweep(_, profile):
        values = value_pass(t, s, edge_probabilities(t, profile))
        q = action_values(t, s, opp, values, rows, actions)
        q = jnp.where(mask, q, -jnp.inf)
        best = jax.nn.one_hot(jnp.argmax(q, axis=1), actions, axis=1, dtype=profile.dtype)
        return jnp.where(mine, best, profile)

    profile = jax.lax.fori_loop(0, rounds, sweep, strategy)
    value = expected_values(t, s, profile)[player]
    return profile, value
