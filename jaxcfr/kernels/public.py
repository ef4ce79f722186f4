"""Public-tree passes: reach and counterfactual values as vectors over hands.

The public-tree twin of :mod:`jaxcfr.kernels.passes`, on
:class:`~jaxcfr.tensors.PublicTensors`. An information set is (public node, own hand),
so reach is a table ``[N, P, H]`` (each player's own reach for each of their hands) and
player ``i``'s counterfactual values ``[N, H]``; terminals are operators applied to the
opponent's reach vector:

* at terminal ``t`` player ``i``'s counterfactual value of hand ``h`` is
  ``c(t) a_i(t, h) w_i(h) sum_o C_i(h, o) u_i(t, h, o) r_o(t, o)`` where ``c`` is the
  public chance reach, ``a`` the not-blocked mask, ``w`` the prior weights, ``C_i`` the
  compatibility over the deal's normaliser (oriented for ``i``) and
  ``r_o = w_o a_o R_o`` the opponent's reach vector (their strategy's reach ``R_o``);
* a :class:`~jaxcfr.game.public.Fold` is ``u = payoff_i`` (a matrix-vector product
  with ``C``); a :class:`~jaxcfr.game.public.Showdown` is
  ``u = stake sign(s_i(h) - s_o(o))``, a payoff table is its stored ``[H, H]`` table.
  Each costs ``H^2`` per terminal (dense, what a GPU does well for small ``H``).

Then values go up the public tree (a sum over children, the edge weighted by ``i``'s
own strategy when ``i`` chose it; a max over them at ``i``'s decisions for a best
response), and the counterfactual action value of row ``(n, h)`` is the value of the
child ``n a`` for ``h``: the same numbers as the history tree's sums over histories
(``tests/test_public.py``, to 1e-12 in float64).

Every function takes one game's tensors and any trailing batch axes ``*b`` on the
strategy. Shapes: ``N`` public nodes, ``H`` hands, ``P`` = 2 players, ``I`` rows, ``A``
actions.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcfr.kernels.numerics import trail
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["edge_probabilities", "reach_pass", "value_pass", "counterfactual_values",
           "metrics"]


def _rows(base: jax.Array, player: jax.Array, s: PublicStructure, sink: int) -> jax.Array:
    """``[N, H]`` int32: ``base[n] + h`` where ``base >= 0`` and ``h`` is one of
    ``player[n]``'s hands, else ``sink``."""
    H = max(s.hands)
    h = jnp.arange(H, dtype=jnp.int32)[None, :]
    count = jnp.asarray(s.hands, jnp.int32)[jnp.clip(player, 0, 1)]
    valid = (base >= 0)[:, None] & (h < count[:, None])
    return jnp.where(valid, base[:, None] + h, sink)


def edge_probabilities(t: PublicTensors, s: PublicStructure, strategy: jax.Array) -> jax.Array:
    """The probability of the edge into each node for each hand of whoever chose it:
    ``[N, H, *b]`` (1 for chance and root edges)."""
    rows, actions = t.legal_mask.shape
    row = _rows(t.edge_base, t.edge_owner, s, rows - 1)                         # [N, H]
    flat = strategy.reshape((rows * actions,) + strategy.shape[2:])
    edge = jnp.take(flat, row * actions + t.parent_slot[:, None], axis=0, mode="clip")
    return jnp.where(trail(t.edge_base >= 0, edge.ndim), edge, 1)


def reach_pass(t: PublicTensors, s: PublicStructure, edge: jax.Array) -> jax.Array:
    """Each player's own reach of every node for each of their hands: ``[N, P, H, *b]``
    (the product of their own edge probabilities from the root)."""
    owner = trail(t.edge_owner, edge.ndim)
    factor = jnp.stack([jnp.where(owner == p, edge, 1) for p in range(2)], axis=1)
    levels = s.level_start
    out = [jnp.ones_like(factor[levels[0]:levels[1]])]
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        local = t.parent[lo:hi] - levels[d - 1]
        out.append(jnp.take(out[-1], local, axis=0, mode="clip") * factor[lo:hi])
    return jnp.concatenate(out, axis=0)


def _pick(x: jax.Array, player) -> jax.Array:
    """``x[:, player]`` for a Python int or a traced scalar ``player``."""
    return jnp.take(x, jnp.asarray(player), axis=1)


def terminal_values(t: PublicTensors, s: PublicStructure, reach: jax.Array, i) -> jax.Array:
    """Player ``i``'s counterfactual value at every terminal, 0 elsewhere: ``[N, H, *b]``."""
    o = 1 - jnp.asarray(i)
    batch = reach.ndim - 3
    alive = t.alive[t.node_path]                                                # [N, P, H]
    own_side = (trail(t.chance_reach, 2) * _pick(alive, i) * t.weights[i])      # [N, H]
    opp = _pick(reach, o) * trail(_pick(alive, o) * t.weights[o], 2 + batch)   # [N, H, *b]
    compat = jnp.where(jnp.asarray(i) == 0, t.compat, t.compat.T)               # [H, H]
    out = jnp.zeros(opp.shape, opp.dtype)

    def apply(nodes, matrix_or_none, scale, table=None):
        r = jnp.take(opp, nodes, axis=0)                                         # [T, H, *b]
        if table is None:
            v = jnp.einsum("ho,to...->th...", compat, r)
        else:
            v = jnp.einsum("tho,to...->th...", table, r)
        side = jnp.take(own_side, nodes, axis=0) * scale[:, None]                # [T, H]
        return v * trail(side, v.ndim)

    if t.fold_node.shape[0]:
        v = apply(t.fold_node, None, _pick(t.fold_payoff, i))
        out = out.at[t.fold_node].set(v)
    if t.show_node.shape[0]:
        st = t.strengths[t.show_index]                                           # [Ts, P, H]
        mine, theirs = _pick(st, i), _pick(st, o)
        sign = jnp.sign(mine[:, :, None] - theirs[:, None, :]) * compat[None]   # [Ts, H, H]
        v = apply(t.show_node, None, t.show_stake, sign)
        out = out.at[t.show_node].set(v)
    if t.table_node.shape[0]:
        table = jnp.take(t.tables, t.table_index, axis=0)                       # [Tt, P, H, H]
        v = apply(t.table_node, None, jnp.ones(t.table_node.shape, out.dtype),
                  _pick(table, i))
        out = out.at[t.table_node].set(v)
    return out


def value_pass(t: PublicTensors, s: PublicStructure, edge: jax.Array, reach: jax.Array, i,
               best: bool = False) -> jax.Array:
    """Player ``i``'s counterfactual value of every node for each of their hands,
    bottom-up: ``[N, H, *b]``. ``best``: a max over the children at ``i``'s decisions
    (a best response's values) instead of the strategy's weighted sum."""
    leaf = terminal_values(t, s, reach, i)
    mine = t.edge_owner == i
    factor = jnp.where(trail(mine, edge.ndim), edge, 1)                        # [N, H, *b]
    levels = s.level_start
    depth = len(levels) - 1
    below = leaf[levels[depth - 1]:levels[depth]]
    out = [below]
    for d in range(depth - 2, -1, -1):
        lo, hi = levels[d], levels[d + 1]
        child = slice(levels[d + 1], levels[d + 2])
        ids = t.parent[child] - lo
        total = jax.ops.segment_sum(factor[child] * below, ids, num_segments=hi - lo,
                                    indices_are_sorted=True)
        here = leaf[lo:hi] + total
        if best:
            top = jax.ops.segment_max(below, ids, num_segments=hi - lo,
                                      indices_are_sorted=True)
            here = jnp.where(trail(t.node_player[lo:hi] == i, here.ndim), top, here)
        below = here
        out.append(below)
    return jnp.concatenate(out[::-1], axis=0)


def counterfactual_values(t: PublicTensors, s: PublicStructure, strategy: jax.Array,
                          players) -> tuple[jax.Array, jax.Array]:
    """``(q [I, A, *b], own [I, *b])``: the counterfactual action values of the rows of
    ``players`` (a static tuple, or a traced ``[k]`` array; other rows 0), and every
    row's own reach (its player's strategy's reach of its node, 0 for a blocked hand)."""
    rows, actions = t.legal_mask.shape
    sink = rows - 1
    edge = edge_probabilities(t, s, strategy)
    reach = reach_pass(t, s, edge)
    n = t.parent.shape[0]
    batch = strategy.shape[2:]
    chosen = jnp.zeros(edge.shape, edge.dtype)
    count = players if isinstance(players, tuple) else range(players.shape[0])
    for k in count:
        p = k if isinstance(players, tuple) else players[k]
        v = value_pass(t, s, edge, reach, p)
        chosen = chosen + jnp.where(trail(t.edge_owner == p, v.ndim), v, 0)
    row = _rows(t.edge_base, t.edge_owner, s, sink)                              # [N, H]
    index = (row * actions + t.parent_slot[:, None]).reshape(-1)
    q = jnp.zeros((rows * actions,) + batch, edge.dtype).at[index].add(
        chosen.reshape((-1,) + batch)).reshape((rows, actions) + batch)
    node_row = _rows(t.node_base, t.node_player, s, sink)                       # [N, H]
    player = jnp.clip(t.node_player, 0, 1)
    alive = t.alive[t.node_path]                                                 # [N, P, H]
    mine = jnp.take_along_axis(alive, player[:, None, None], axis=1)[:, 0]       # [N, H]
    own_reach = jnp.take_along_axis(
        reach, trail(player, reach.ndim), axis=1)[:, 0]                          # [N, H, *b]
    own = jnp.zeros((rows,) + batch, edge.dtype).at[node_row.reshape(-1)].add(
        (own_reach * trail(mine, own_reach.ndim)).reshape((-1,) + batch))
    del n
    return q, own.at[sink].set(0)


def metrics(t: PublicTensors, s: PublicStructure, strategy: jax.Array
            ) -> tuple[jax.Array, jax.Array]:
    """``(values [P, *b], best_response_values [P, *b])`` of the profile ``strategy``."""
    edge = edge_probabilities(t, s, strategy)
    reach = reach_pass(t, s, edge)
    values, best = [], []
    for p in range(2):
        values.append(value_pass(t, s, edge, reach, p)[0].sum(axis=0))
        best.append(value_pass(t, s, edge, reach, p, best=True)[0].sum(axis=0))
    return jnp.stack(values), jnp.stack(best)
