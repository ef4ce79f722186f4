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
  Each costs ``H^2`` per terminal (dense, what a GPU does well for small ``H``); with
  ``PublicStructure.ranked`` folds and showdowns cost ``O(H)`` instead: the opponent's
  hands sorted by strength and running sums, card removal by inclusion-exclusion
  (:func:`_ranked_showdown`, :func:`_ranked_fold`).

Then values go up the public tree, each node gathering its children (a sum over them,
the edge weighted by ``i``'s own strategy when ``i`` chose it; a max over them at
``i``'s decisions for a best response; at a chance node with merged outcomes,
``PublicTensors.merge_*``, also each merged outcome's value: its representative child's
vector with the hands renamed), and the counterfactual action value of row
``(n, h)`` is the value of the child ``n a`` for ``h``: the same numbers as the history
tree's sums over histories (``tests/test_public.py``, to 1e-12 in float64). Every pass
is a gather of whole hand vectors, never a scatter.

Every function takes one game's tensors and any trailing batch axes ``*b`` on the
strategy. Shapes: ``N`` public nodes, ``H`` hands, ``P`` players, ``I`` rows, ``A``
actions. With ``P > 2`` players (:func:`_terminal_values_n`) terminals are folds and
payoff tables only, each contracted with every other player's reach vector (``H^P``
per terminal).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.numerics import instantaneous_regret, trail
from jaxcfr.tensors import (LEAN_NODE_ENTRIES, RANKED_CHUNK_ENTRIES, RANKED_CHUNK_LEAST,
                            PublicStructure, PublicTensors, public_row_index, ranked_chunk)

__all__ = ["edge_probabilities", "reach_pass", "player_reach", "value_pass",
           "counterfactual_action_values", "counterfactual_regrets", "best_response",
           "metrics", "Blocks", "blocks",
           "to_blocks", "from_blocks", "slot_groups", "Slots", "slots", "slot_offset",
           "to_slots", "from_slots", "into_rows", "slot_strategy", "slot_regrets"]


def _decisions(t: PublicTensors, table: jax.Array, pad: float) -> jax.Array:
    """A row table ``[I, A, *b]`` as ``[(D + 1) * A, H, *b]``: entry ``d * A + a`` is the
    hand vector of decision ``d``'s slot ``a`` (a hand the decision has no row for reads
    the sink's, what a padding row holds); ``d = D`` is a pad of ``pad``."""
    row, _ = public_row_index(t)                                              # [D + 1, H]
    body = jnp.swapaxes(jnp.take(table, row[:-1], axis=0), 1, 2)             # [D, A, H, *b]
    body = jnp.concatenate([body, jnp.full((1,) + body.shape[1:], pad, body.dtype)])
    return body.reshape((-1,) + body.shape[2:])


def _into_rows(t: PublicTensors, x: jax.Array) -> jax.Array:
    """A table by decision and hand ``[D, H, *r]`` as rows ``[I, *r]``: each decision's
    hands that have a row written there (one scatter), the others dropped, the sink and
    any row no decision writes (a stack member's past its own) 0."""
    row, real = public_row_index(t)
    rows = t.row_shape[0]
    where = jnp.where(real[:-1], row[:-1], rows)                              # past: dropped
    return jnp.zeros((rows,) + x.shape[2:], x.dtype).at[where].set(x, mode="drop")


def edge_probabilities(t: PublicTensors, s: PublicStructure, strategy: jax.Array) -> jax.Array:
    """The probability of the edge into each node for each hand of whoever chose it:
    ``[N, H, *b]`` (1 for chance and root edges)."""
    actions = t.row_shape[1]
    by_slot = _decisions(t, strategy, 1.0)                                  # [(D+1)*A, H, *b]
    return jnp.take(by_slot, t.edge_decision * actions + t.parent_slot, axis=0, mode="clip")


def reach_pass(t: PublicTensors, s: PublicStructure, edge: jax.Array) -> jax.Array:
    """Each player's own reach of every node for each of their hands: ``[N, P, H, *b]``
    (the product of their own edge probabilities from the root)."""
    owner = trail(t.edge_owner, edge.ndim)
    factor = jnp.stack([jnp.where(owner == p, edge, 1) for p in range(s.num_players)],
                       axis=1)
    return _down(t, s, lambda lo, hi: factor[lo:hi])


def player_reach(t: PublicTensors, s: PublicStructure, edge: jax.Array, p: int) -> jax.Array:
    """Player ``p``'s own reach of every node for each of their hands, ``[N, H, *b]``:
    :func:`reach_pass`'s ``[:, p]`` (the same products, bit for bit) without the other
    players' tables or the ``[N, P, H]`` factors (a flop's largest tables): a half-step
    of an alternating loop reads its opponent's reach, and its own only where the
    averaging weighs by reach."""
    mine = trail(t.edge_owner, edge.ndim) == p
    return _down(t, s, lambda lo, hi: jnp.where(mine[lo:hi], edge[lo:hi], 1))


def _down(t: PublicTensors, s: PublicStructure, factor, keep=None) -> jax.Array:
    """The products of each node's edge factor from the root down, level by level:
    ``[N, ...]``; ``factor(lo, hi)`` is the factors of the nodes ``lo:hi`` (one level;
    or a tuple of such, several products carried down together). ``keep(lo, hi,
    level)``: what rows ``lo:hi`` of the table hold, the levels then written into one
    table as they come (no list of levels and their concatenation: one ``[N, ...]`` table
    at a time, not two); without it, each level itself, concatenated at the end."""
    levels = s.level_start
    level = jax.tree_util.tree_map(jnp.ones_like, factor(levels[0], levels[1]))
    buffer = keep is not None
    keep = keep or (lambda lo, hi, x: x)
    root = keep(levels[0], levels[1], level)
    out = None                 # the table starts at the first level that is not constant
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        local = t.parent[lo:hi] - levels[d - 1]
        level = jax.tree_util.tree_map(
            lambda x, f: jnp.take(x, local, axis=0, mode="clip") * f, level, factor(lo, hi))
        if out is None:
            out = _Levels(levels[-1], lo, keep(lo, hi, level), buffer=buffer)
            out.put(levels[0], root)
        else:
            out.put(lo, keep(lo, hi, level))
    return (_Levels(levels[-1], levels[0], root, buffer=buffer) if out is None
            else out).table


class _Levels:
    """A node table ``[N, *r]`` put together level by level: the levels concatenated at
    the end (``buffer=False``: where a caller reads a few rows of it, e.g. the root's
    value, XLA keeps those alone), or written into one buffer as they come (in place:
    each level a ``dynamic_update_slice``, one allocation, no list of levels beside it).
    The buffer starts as a computed level padded with zeros (``into``: that table with
    the level written), not as a table of zeros or of the root's ones: XLA would hoist
    such a constant out of the loop, keep it alive through every pass and copy it."""

    def __init__(self, rows: int, lo: int, first: jax.Array, into: jax.Array | None = None,
                 buffer: bool = True):
        self.parts = None if buffer else [(lo, first)]
        if not buffer:
            return
        if into is None:
            pad = [(lo, rows - lo - first.shape[0])] + [(0, 0)] * (first.ndim - 1)
            self._table = jnp.pad(first, pad)
        else:
            self._table = into
            self.put(lo, first)

    def put(self, lo: int, level: jax.Array) -> None:
        if self.parts is not None:
            self.parts.append((lo, level))
        else:
            self._table = jax.lax.dynamic_update_slice_in_dim(self._table, level, lo, axis=0)

    @property
    def table(self) -> jax.Array:
        if self.parts is None:
            return self._table
        return jnp.concatenate([x for _, x in sorted(self.parts, key=lambda p: p[0])])


def _pick(x: jax.Array, player) -> jax.Array:
    """``x[:, player]`` for a Python int or a traced scalar ``player``."""
    return jnp.take(x, jnp.asarray(player), axis=1)


def terminal_values(t: PublicTensors, s: PublicStructure, reach: jax.Array, i,
                    opponent: jax.Array | None = None) -> jax.Array:
    """Player ``i``'s counterfactual value at every terminal, 0 elsewhere: ``[N, H, *b]``
    (:func:`terminal_table` gathered at the nodes)."""
    return jnp.take(terminal_table(t, s, reach, i, opponent), t.leaf_index, axis=0)


def terminal_table(t: PublicTensors, s: PublicStructure, reach: jax.Array | None, i,
                   opponent: jax.Array | None = None) -> jax.Array:
    """Player ``i``'s counterfactual value at each terminal, by ``t.leaf_index`` (folds,
    showdowns, tables), then a zero row: ``[T + 1, H, *b]``. ``reach``: every player's
    reach ``[N, P, H, *b]`` (:func:`reach_pass`); or, two players, ``opponent``: the
    opponent's alone, ``[N, H, *b]`` (:func:`player_reach`; ``reach`` is then unread)."""
    if s.num_players != 2:
        return _terminal_values_n(t, s, reach, i)
    o = 1 - jnp.asarray(i)
    like = reach[:, 0] if opponent is None else opponent                   # [N, H, *b]
    batch = like.ndim - 2
    compat = jnp.where(jnp.asarray(i) == 0, t.compat, t.compat.T)               # [H, H]
    parts = {}

    # both sides at the terminals only (never the whole [N, P, H] table of blocked hands),
    # one player's blocked hands gathered ([K, H] -> [T, H], not [T, P, H] then one)
    def opp_at(nodes):
        """The opponent's reach vector at ``nodes``: ``[T, H, *b]``."""
        alive = _pick(t.alive, o)[t.node_path[nodes]] * t.weights[o]            # [T, H]
        here = (_pick(jnp.take(reach, nodes, axis=0), o) if opponent is None
                else jnp.take(opponent, nodes, axis=0))
        return here * trail(alive, 2 + batch)

    def own_at(nodes):
        """``i``'s side at ``nodes``: chance reach, not blocked, prior weight: ``[T, H]``."""
        alive = _pick(t.alive, i)[t.node_path[nodes]] * t.weights[i]
        return trail(t.chance_reach[nodes], 2) * alive

    def apply(nodes, scale, table=None):
        r = opp_at(nodes)                                                        # [T, H, *b]
        if table is None:
            v = jnp.einsum("ho,to...->th...", compat, r)
        else:
            v = jnp.einsum("tho,to...->th...", table, r)
        side = own_at(nodes) * scale[:, None]                                    # [T, H]
        return v * trail(side, v.ndim)

    if s.ranked:
        # each chunk of terminals gathers its reach and its side at its own terminals
        # (k: their positions): no [T, H] table of either, nor of the values unscaled
        if t.fold_node.shape[0]:
            pay = _pick(t.fold_payoff, i)
            parts["fold"] = _ranked_fold(
                t, lambda k: opp_at(t.fold_node[k]), i,
                lambda k: own_at(t.fold_node[k]) * pay[k][:, None] * t.deal_scale)
        if t.show_node.shape[0]:
            parts["show"] = _ranked_showdown(
                t, lambda k: opp_at(t.show_node[k]), i,
                lambda k: own_at(t.show_node[k]) * t.show_stake[k][:, None] * t.deal_scale)
    if t.fold_node.shape[0] and not s.ranked:
        parts["fold"] = apply(t.fold_node, _pick(t.fold_payoff, i))
    if t.show_node.shape[0] and not s.ranked:
        st = t.strengths[t.show_index]                                           # [Ts, P, H]
        mine, theirs = _pick(st, i), _pick(st, o)
        sign = jnp.sign(mine[:, :, None] - theirs[:, None, :]) * compat[None]   # [Ts, H, H]
        parts["show"] = apply(t.show_node, t.show_stake, sign)
    if t.table_node.shape[0]:
        table = jnp.take(_pick(t.tables, i), t.table_index, axis=0)            # [Tt, H, H]
        parts["table"] = apply(t.table_node, jnp.ones(t.table_node.shape, like.dtype),
                               table)
    ends = [parts[k] for k in ("fold", "show", "table") if k in parts]
    ends.append(jnp.zeros((1,) + like.shape[1:], like.dtype))
    return jnp.concatenate(ends)


def _terminal_values_n(t: PublicTensors, s: PublicStructure, reach: jax.Array, i
                       ) -> jax.Array:
    """:func:`terminal_table` for ``P > 2`` players (folds and payoff tables, dense): at
    terminal ``t`` player ``i``'s value of hand ``h`` is ``c(t) a_i(t, h) w_i(h) sum over
    the others' hands (o_1, ..., o_{P-1}) of C(h, o..) u_i(t, h, o..) prod_k r_k(t, o_k)``,
    the others ``o_k`` in seat order (``k + (k >= i)``), ``r_k = w a R`` each one's reach
    vector, ``C`` the compatibility over the deal's normaliser with ``i``'s axis first.
    Costs ``H^P`` per terminal."""
    P = s.num_players
    i = jnp.asarray(i)
    batch = reach.ndim - 3
    letters = "abcdefgh"[:P - 1]
    tail = "uvwxyz"[:batch]
    others = [k + (k >= i).astype(jnp.int32) for k in range(P - 1)]         # traced seats

    def opp_at(nodes, o):
        """Seat ``o``'s reach vector at ``nodes``: ``[T, H, *b]``."""
        alive = _pick(t.alive[t.node_path[nodes]], o) * _pick(t.weights[None], o)[0]
        return _pick(jnp.take(reach, nodes, axis=0), o) * trail(alive, 2 + batch)

    def own_at(nodes):
        alive = _pick(t.alive[t.node_path[nodes]], i) * _pick(t.weights[None], i)[0]
        return trail(t.chance_reach[nodes], 2) * alive

    def contract(table, nodes, shared):
        """``table`` ``[T, H]*P`` (or ``[H]*P``, ``shared``) against the others' reach
        vectors, last seat first: ``[T, H, *b]``."""
        v = table
        for k in range(P - 2, -1, -1):
            r = opp_at(nodes, others[k])                                     # [T, H, *b]
            keep = letters[:k]
            first = k == P - 2
            lhs = ("" if shared and first else "t") + "h" + keep + letters[k] + \
                ("" if first else tail)
            v = jnp.einsum(f"{lhs},t{letters[k]}{tail}->th{keep}{tail}", v, r)
        return v

    parts = []
    if t.fold_node.shape[0]:
        oriented = jnp.stack([jnp.moveaxis(t.compat, p, 0) for p in range(P)])   # [P, H]*P
        v = contract(_pick(oriented[None], i)[0], t.fold_node, True)
        side = own_at(t.fold_node) * _pick(t.fold_payoff, i)[:, None]
        parts.append(v * trail(side, v.ndim))
    if t.show_node.shape[0]:
        raise ValueError("Showdown operators take two players")   # (the contract refuses)
    if t.table_node.shape[0]:
        table = jnp.take(_pick(t.tables, i), t.table_index, axis=0)           # [Tt, H]*P
        v = contract(table, t.table_node, False)
        parts.append(v * trail(own_at(t.table_node), v.ndim))
    parts.append(jnp.zeros((1,) + reach.shape[2:], reach.dtype))
    return jnp.concatenate(parts)


def _along(x: jax.Array, index: jax.Array) -> jax.Array:
    """``x[t, index[t, k]]`` for ``x`` ``[T, L, *b]`` and ``index`` ``[T, K]`` (or ``[K]``):
    ``[T, K, *b]``."""
    index = jnp.broadcast_to(index, x.shape[:1] + index.shape[-1:])
    return jnp.take_along_axis(x, trail(index, x.ndim), axis=1)


def _rows_take(x: jax.Array, index: jax.Array) -> jax.Array:
    """``x[t, index[t, k]]`` for ``x`` ``[T, L, *b]`` and ``index`` ``[T, K]``: ``[T, K, *b]``,
    as one gather from ``x`` flattened (``take_along_axis`` builds a ``(t, k)`` pair per
    entry, which costs more than the gather itself at a turn's ``T * K`` of millions)."""
    T, L = x.shape[:2]
    flat = x.reshape((T * L,) + x.shape[2:])
    where = index + (jnp.arange(T, dtype=index.dtype) * L)[:, None]
    return jnp.take(flat, where.reshape(-1), axis=0, mode="clip").reshape(
        index.shape + x.shape[2:])


def _with_pad(r: jax.Array) -> jax.Array:
    """``r`` ``[T, H, *b]`` with a zero hand appended (index ``H``): ``[T, H + 1, *b]``."""
    return jnp.concatenate([r, jnp.zeros_like(r[:, :1])], axis=1)


#: Block length of :func:`_cumsum`'s triangular products.
CUMSUM_BLOCK = 32


def _cumsum(x: jax.Array) -> jax.Array:
    """The running sums of ``x`` ``[T, L, *b]`` along axis 1 (``[T, L, *b]``), as two
    triangular matrix products: within blocks of :data:`CUMSUM_BLOCK`, then the blocks'
    totals. XLA's CPU backend lowers ``jnp.cumsum`` to a chain of window reductions,
    4 to 6 times slower on these lengths (a few thousand); a product runs vectorised."""
    T, L = x.shape[:2]
    rest = x.shape[2:]
    block = min(CUMSUM_BLOCK, L)
    blocks = -(-L // block)
    pad = [(0, 0), (0, blocks * block - L)] + [(0, 0)] * len(rest)
    xp = jnp.pad(x, pad).reshape((T, blocks, block) + rest)
    upper = jnp.triu(jnp.ones((block, block), x.dtype))                       # a <= c
    inner = jnp.einsum("tna...,ac->tnc...", xp, upper, precision=jax.lax.Precision.HIGHEST)
    if blocks > 1:
        before = jnp.triu(jnp.ones((blocks, blocks), x.dtype), 1)             # n < m
        offset = jnp.einsum("tn...,nm->tm...", inner[:, :, -1], before,
                            precision=jax.lax.Precision.HIGHEST)
        inner = inner + offset[:, :, None]
    return inner.reshape((T, blocks * block) + rest)[:, :L]


def _running(x: jax.Array) -> jax.Array:
    """``[T, L + 1, *b]``: 0, then the running sums of ``x`` ``[T, L, *b]`` along axis 1."""
    return jnp.concatenate([jnp.zeros_like(x[:, :1]), _cumsum(x)], axis=1)


def _terms(table: jax.Array, index: jax.Array) -> list:
    """``[table[t, index[.., g, h]] for g]`` (``G`` arrays ``[T, H, *b]``) for ``table``
    ``[T, L, *b]`` and ``index`` ``[G, H]`` (shared by every terminal: one gather of whole
    columns) or ``[T, G, H]`` (one gather from the flattened table): every term of every
    hand in one gather, then whole ``[T, H]`` slices of it (vectorised arithmetic; a
    reduce over a short minor axis is not)."""
    T = table.shape[0]
    G, H = index.shape[-2:]
    if index.ndim == 2:
        terms = jnp.take(table, index.reshape(-1), axis=1, mode="clip")      # [T, G*H, *b]
    else:
        terms = _rows_take(table, index.reshape(T, G * H))                  # [T, G*H, *b]
    return [terms[:, g * H:(g + 1) * H] for g in range(G)]


def _card_segments(t: PublicTensors, i) -> jax.Array:
    """Where the opponent's (hand, card) entries of each card start, then end, in its
    ``fold_pair`` order: ``[2C]`` int32 (the cards ``i``'s hands hold; 0 elsewhere)."""
    cards = jnp.take(t.hand_cards, jnp.asarray(i), axis=0).reshape(-1)       # [H * J]
    C = t.cards.shape[0]
    cards = jnp.where(cards < 0, 2 * C, cards)                               # none: dropped
    out = jnp.zeros((2 * C,), jnp.int32)
    for k, x in enumerate((t.pair_start, t.pair_end)):
        out = out.at[cards + k * C].set(jnp.take(x, jnp.asarray(i), axis=0).reshape(-1),
                                        mode="drop")
    return out


#: From this many fold terminals on, a ranked fold adds each hand's cards by a product
#: with the hands-by-cards matrix (:func:`_ranked_fold`): on a hold'em turn (486 folds)
#: 9% less CPU time per iteration than the gather, on a river (6) 9 to 15% more.
FOLD_PRODUCT_FROM = 64


# The chunks of ranked terminals: jaxcfr.tensors.ranked_chunk of RANKED_CHUNK_ENTRIES and
# RANKED_CHUNK_LEAST, read from this module at each call (a test may set them here).


def _by_chunks(f, H: int, T: int) -> jax.Array:
    """``f(k)`` for the terminals' positions ``k`` ``[T']`` (``f`` terminal by terminal:
    ``[T', H, *b]``) computed ``T'`` terminals at a time, ``T'`` the most whose ``[T', H]``
    stays within :data:`RANKED_CHUNK_ENTRIES`, at least :data:`RANKED_CHUNK_LEAST`, the
    last chunk padded with terminal 0 (its rows dropped): ``[T, H, *b]``; one call where
    ``T <= T'``. The chunks after the first are a loop that writes each into the table
    the first one starts (padded to the chunks' rows): no stacked output of a ``lax.map``
    to be made from a table of zeros, which XLA hoists out of an iteration loop, keeps
    alive and copies. The same operations on each terminal's numbers, so the same values
    bit for bit where XLA takes the same kernels for a chunk as for the whole (checked on
    the flop and a turn, float32 and float64; not so in float64 with a trailing batch
    axis, where the running sums' product can round one unit in the last place
    otherwise)."""
    size = ranked_chunk(H, RANKED_CHUNK_ENTRIES, RANKED_CHUNK_LEAST)
    if T <= size:
        return f(jnp.arange(T, dtype=jnp.int32))
    n = -(-T // size)
    first = f(jnp.arange(size, dtype=jnp.int32))                           # [T', H, *b]
    table = jnp.pad(first, [(0, (n - 1) * size)] + [(0, 0)] * (first.ndim - 1))

    def chunk(c, table):
        k = c * size + jnp.arange(size, dtype=jnp.int32)
        k = jnp.where(k < T, k, 0)                                 # past the end: terminal 0
        return jax.lax.dynamic_update_slice_in_dim(table, f(k), c * size, axis=0)
    return jax.lax.fori_loop(1, n, chunk, table)[:T]


def _ranked_fold(t: PublicTensors, r, i, side=None) -> jax.Array:
    """``sum_o compatible(h, o) r(o)`` for each of ``i``'s hands ``h`` (``[T, H, *b]``):
    the opponent's total, less the reach held by each of ``h``'s cards, plus that of the
    hand holding both (inclusion-exclusion). The reach held by a card is a difference of
    running sums over the opponent's (hand, card) entries sorted by card. With few
    terminals a hand's terms (two per card, the hand of the same cards) are one gather
    from the running sums and ``r`` side by side; from :data:`FOLD_PRODUCT_FROM` on the
    differences are taken once per card (``[T, C]``) and a hand's two added by a product
    with ``i``'s hands-by-cards matrix (``[C, H]``: two nonzero terms, so exactly the sum
    the gather gives, bit for bit). ``r``, ``side``: as :func:`_ranked_terminals`."""
    T = t.fold_node.shape[0] if callable(r) else r.shape[0]
    product = T >= FOLD_PRODUCT_FROM                          # on all the terminals' count

    def chunk(r, _):
        total = r.sum(axis=1, keepdims=True)                             # [T', 1, *b]
        return _ranked_fold_chunk(t, r, total, i, product)
    return _ranked_terminals(t, chunk, r, side, T)


def _ranked_terminals(t: PublicTensors, f, r, side, T: int) -> jax.Array:
    """``f(r, k)`` (``[T', H, *b]``) for chunks of the terminals' positions ``k`` ``[T']``
    (:func:`_by_chunks`), ``r`` the opponent's reach at them (``r`` ``[T, H, *b]``, or a
    function ``r(k)`` giving its rows: each chunk gathers its own, no ``[T, H]`` table),
    times ``side(k)`` ``[T', H]`` where given (a chunk's values scaled in the chunk)."""
    rows = r if callable(r) else (lambda k: jnp.take(r, k, axis=0))
    H = t.same.shape[-1]

    def one(k):
        v = f(rows(k), k)
        return v if side is None else v * trail(side(k), v.ndim)
    return _by_chunks(one, H, T)


def _ranked_fold_chunk(t: PublicTensors, r: jax.Array, total: jax.Array, i, product: bool
                       ) -> jax.Array:
    """:func:`_ranked_fold` of the terminals ``r`` ``[T', H, *b]`` of reach ``total``
    ``[T', 1, *b]``, by the product with the hands-by-cards matrix where ``product``,
    else by the gather."""
    o = 1 - jnp.asarray(i)
    r_pad = _with_pad(r)                                                     # [T, H + 1, *b]
    pairs = jnp.take(r_pad, t.fold_pair[o], axis=1, mode="clip")            # [T, M, *b]
    running = _running(pairs)                                                # [T, M + 1, *b]
    if product:
        ends = jnp.take(running, _card_segments(t, i), axis=1)               # [T, 2C, *b]
        C = t.cards.shape[0]
        cards = jnp.take(t.hand_cards, jnp.asarray(i), axis=0)               # [H, J]
        matrix = (cards[:, :, None] == jnp.arange(C, dtype=cards.dtype)).sum(axis=1)
        held = jnp.einsum("tc...,hc->th...", ends[:, C:] - ends[:, :C],
                          matrix.astype(r.dtype),
                          precision=jax.lax.Precision.HIGHEST)               # [T, H, *b]
        same = jnp.take(r_pad, jnp.take(t.same, jnp.asarray(i), axis=0), axis=1,
                        mode="clip")                                         # [T, H, *b]
        return total - held + same
    M = pairs.shape[1]
    table = jnp.concatenate([running, r_pad], axis=1)                   # [T, M + 1 + H + 1]
    J = t.pair_start.shape[-1]
    index = jnp.concatenate([t.pair_start[i].T, t.pair_end[i].T,             # [2J + 1, H]
                             t.same[i][None] + (M + 1)])
    x = _terms(table, index)
    held = 0
    for j in range(J):                  # the order of the sums below is the dense one's
        held = held + (x[J + j] - x[j])
    return total - held + x[2 * J]


def _ranked_showdown(t: PublicTensors, r, i, side=None) -> jax.Array:
    """``sum_o compatible(h, o) sign(s_i(h) - s_o(o)) r(o)`` (``[T, H, *b]``) in O(H + M)
    per terminal: the opponent's hands sorted by strength and running sums (weaker mass
    ``W``, stronger mass ``L``), each less the part holding one of ``h``'s cards (the
    same sums over the (hand, card) entries sorted by card, then strength), plus the
    hand of the same two cards where it was taken off twice.

    A hand's eleven terms (``W`` and ``L``'s two, four per card, the same-cards hand) are
    gathered from the two running sums and ``r`` (each term from its own table: a copy of
    the three side by side cost a pass over ``[T, 2H + M]`` per half-step), their
    positions built per strength table (a board) and taken per terminal; a spot of one
    strength table (a river) shares the gather's columns between its terminals. The terms
    are added in the order of the sums above, so that equal values (a fold and a call
    worth the same chips) stay exactly equal, as the history tree has them. ``r``,
    ``side``: as :func:`_ranked_terminals`."""
    T = t.show_node.shape[0] if callable(r) else r.shape[0]
    # the terms' positions per strength table ([S, 4J + 3, H]), taken per terminal
    cards = [jnp.broadcast_to(x, (t.rank_lo.shape[0],) + x.shape)
             for x in (t.pair_start[i].T, t.pair_end[i].T, t.same[i][None])]
    index = jnp.concatenate([_pick(t.rank_lo, i)[:, None], _pick(t.rank_hi, i)[:, None],
                             jnp.swapaxes(_pick(t.pair_lo, i), 1, 2),
                             jnp.swapaxes(_pick(t.pair_hi, i), 1, 2)] + cards, axis=1)
    return _ranked_terminals(
        t, lambda r, k: _ranked_showdown_chunk(t, r, i, jnp.take(t.show_index, k), index),
        r, side, T)


def _ranked_showdown_chunk(t: PublicTensors, r: jax.Array, i, show_index: jax.Array,
                           index: jax.Array) -> jax.Array:
    """:func:`_ranked_showdown` of the terminals ``r`` ``[T', H, *b]`` of strength tables
    ``show_index`` ``[T']``, the terms' positions per table ``index`` ``[S, 4J + 3, H]``."""
    o = 1 - jnp.asarray(i)
    shared = t.rank_order.shape[0] == 1
    k = jnp.zeros((1,), jnp.int32) if shared else show_index                # [T'] tables
    if not shared:
        # the terms' positions per terminal (index[k], [T', 4J + 3, H]) are taken inside
        # the loop from the small per-table ones: left to itself XLA hoists them out of an
        # iteration loop as one int32 table (9 MB on a hold'em turn) that every half-step
        # then streams through; tying k to the reach keeps the lookup in the loop (24% less
        # CPU per turn iteration, the same values)
        k, r = jax.lax.optimization_barrier((k, r))
    r_pad = _with_pad(r)                                                     # [T, H + 1, *b]

    def sort(order):                                          # order [T', L] -> [T, L, *b]
        return (jnp.take(r_pad, order[0], axis=1, mode="clip") if shared
                else _rows_take(r_pad, order))
    ranked = _running(sort(_pick(t.rank_order, o)[k]))                      # [T, H + 1, *b]
    pairs = _running(sort(_pick(t.pair_order, o)[k]))                       # [T, M + 1, *b]
    J = t.pair_start.shape[-1]
    index = index[0] if shared else index[k]
    # each term from its own table (the running sums over the sorted hands, over the sorted
    # (hand, card) entries, the reach): no copy of the three side by side
    x = (_terms(ranked, index[..., :2, :]) + _terms(pairs, index[..., 2:2 + 4 * J, :])
         + _terms(r_pad, index[..., 2 + 4 * J:, :]))
    lo, hi, plo, phi, start, end, same = (x[0], x[1], x[2:2 + J], x[2 + J:2 + 2 * J],
                                          x[2 + 2 * J:2 + 3 * J], x[2 + 3 * J:2 + 4 * J],
                                          x[2 + 4 * J])
    w_held = s_held = 0
    for j in range(J):
        w_held = w_held + plo[j] - start[j]
        s_held = s_held + end[j] - phi[j]

    def scaled(table):                                                       # [S, P, H]
        f = _pick(table, i)
        f = f[:1] if shared else f[k]                                        # [T or 1, H]
        return same * trail(f, same.ndim)
    weaker = lo - w_held + scaled(t.same_weaker)
    stronger = ranked[:, -1:] - hi - s_held + scaled(t.same_stronger)
    return weaker - stronger


#: Levels whose nodes have more children than this go up by a segment sum.
GATHER_WIDTH = 8


def value_pass(t: PublicTensors, s: PublicStructure, edge, reach: jax.Array | None,
               i, best: bool = False, opponent: jax.Array | None = None,
               into: jax.Array | None = None, ends: jax.Array | None = None) -> jax.Array:
    """Player ``i``'s counterfactual value of every node for each of their hands,
    bottom-up: ``[N, H, *b]``. ``best``: a max over the children at ``i``'s decisions
    (a best response's values) instead of the strategy's weighted sum. ``reach``
    ``[N, P, H, *b]``, or ``opponent`` ``[N, H, *b]`` alone (:func:`terminal_table`).
    ``edge``: the edge probabilities ``[N, H, *b]`` (:func:`edge_probabilities`), or a
    function ``edge(lo, hi, after)`` giving those of the nodes ``lo:hi`` (one level, made
    when the pass reaches it: no ``[N, H]`` table of them; ``after``, the level below
    them, lets it tie its work to the pass's progress). The terminals' values and ``i``'s
    edge factors are taken level by level, the levels written into one table as they
    come (no ``[N, H]`` table of leaves or factors, no list of levels concatenated):
    into ``into`` where given (an ``[N, H, *b]`` table the caller no longer reads once the
    terminals have read ``opponent``, e.g. ``opponent`` itself: its buffer is reused).
    ``ends``: :func:`terminal_table`'s ``[T + 1, H, *b]`` where the caller has it (two
    passes on the same terminals; ``reach`` and ``opponent`` are then unread)."""
    if ends is None:
        ends = terminal_table(t, s, reach, i, opponent)                      # [T + 1, H, *b]
    edges_of = edge if callable(edge) else (lambda lo, hi, _: edge[lo:hi])
    levels = s.level_start
    depth = len(levels) - 1

    def leaf(lo, hi):
        return jnp.take(ends, t.leaf_index[lo:hi], axis=0)
    below = leaf(levels[depth - 1], levels[depth])
    out = _Levels(levels[-1], levels[depth - 1], below, into, buffer=into is not None)
    for d in range(depth - 2, -1, -1):
        lo, hi = levels[d], levels[d + 1]
        width = s.widths[d]
        start = levels[d + 1]
        factor = edges_of(start, levels[d + 2], below)                          # [n', H]
        mine = trail(t.edge_owner[start:levels[d + 2]] == i, factor.ndim)
        edges = jnp.where(mine, factor, 1)                                     # [n', H]
        if width > GATHER_WIDTH:
            # a level with chance nodes (a card each): a gather [n, w] would pad every
            # node of the level to the cards' count; a sorted segment sum reads each
            # child once
            parent = t.parent[start:levels[d + 2]] - lo                         # [n']
            here = leaf(lo, hi) + jax.ops.segment_sum(edges * below, parent, hi - lo,
                                                     indices_are_sorted=True)
            top = (jax.ops.segment_max(below, parent, hi - lo, indices_are_sorted=True)
                   if best else None)
        else:
            slots = jnp.arange(width, dtype=jnp.int32)
            index = t.first_child[lo:hi, None] - start + slots[None, :]        # [n, w]
            present = slots[None, :] < t.child_count[lo:hi, None]
            index = jnp.where(present, index, 0)
            kids = jnp.take(below, index, axis=0)                              # [n, w, H, *b]
            weight = jnp.take(edges, index, axis=0)
            mask = trail(present, kids.ndim)
            here = leaf(lo, hi) + jnp.where(mask, weight * kids, 0).sum(axis=1)
            top = jnp.where(mask, kids, -jnp.inf).max(axis=1) if best and width else None
        if s.merges and s.merges[d][1] > s.merges[d][0]:
            here = here + _merged_values(t, s.merges[d], below, start, lo, hi, i)
        if top is not None:
            here = jnp.where(trail(t.node_player[lo:hi] == i, here.ndim), top, here)
        below = here
        out.put(lo, below)
    return out.table


def _merged_values(t: PublicTensors, span: tuple, below: jax.Array, start: int, lo: int,
                   hi: int, i) -> jax.Array:
    """``[hi - lo, H, *b]``: what the merged outcomes ``span`` (``(start, end)`` into
    ``t.merge_*``) of the chance nodes ``lo:hi`` add to their values: each one its
    representative child's value vector (``below``, the level from node ``start``)
    permuted by ``merge_source`` for player ``i``."""
    a, b = span
    kids = jnp.take(below, t.merge_child[a:b] - start, axis=0)               # [e, H, *b]
    source = _pick(t.merge_source[a:b], i)                                   # [e, H]
    moved = _rows_take(kids, source)                                         # [e, H, *b]
    return jax.ops.segment_sum(moved, t.merge_parent[a:b] - lo, hi - lo,
                               indices_are_sorted=True)


def _player_slots(t: PublicTensors, s: PublicStructure, by_slot: jax.Array,
                  edge_index: jax.Array, players, at: tuple | None = None
                  ) -> tuple[jax.Array, jax.Array]:
    """``(q [*c, H, *b], own [D', H, *b])``: the counterfactual action values of
    ``players``' decisions by slot (other players' 0) and each decision's player's own
    reach of it for each hand (0 for a blocked hand). ``at``: ``(child [*c], node [D'])``,
    the child node of each slot wanted (``N``: none) and the node of each decision wanted
    (``None``: every decision's slots ``t.child_of`` ``[D, A]`` and ``t.decision_node``).
    ``by_slot`` ``[E, H, *b]`` is the strategy by slot in any layout, a pad entry of ones
    included, ``edge_index`` ``[N]`` the entry of ``by_slot`` on the edge into each node
    (the pad for chance and the root)."""
    if at is not None and isinstance(players, tuple) and len(players) == 1 \
            and s.num_players == 2:
        return _one_player_slots(t, s, by_slot, edge_index, players[0], *at)
    edge = jnp.take(by_slot, edge_index, axis=0, mode="clip")                 # [N, H, *b]
    reach = reach_pass(t, s, edge)                                            # [N, P, H, *b]
    chosen = jnp.zeros(edge.shape, edge.dtype)
    count = players if isinstance(players, tuple) else range(players.shape[0])
    for k in count:
        p = k if isinstance(players, tuple) else players[k]
        v = value_pass(t, s, edge, reach, p)
        chosen = chosen + jnp.where(trail(t.edge_owner == p, v.ndim), v, 0)
    chosen = jnp.concatenate([chosen, jnp.zeros_like(chosen[:1])])           # node N: none
    child_of, node = (t.child_of, t.decision_node) if at is None else at
    q = jnp.take(chosen, child_of, axis=0)                                   # [*c, H, *b]
    player = jnp.clip(t.node_player[node], 0, s.num_players - 1)             # [D']
    here = jnp.take(reach, node, axis=0)                                     # [D', P, H, *b]
    own = jnp.take_along_axis(here, trail(player, here.ndim), axis=1)[:, 0]  # [D', H, *b]
    alive = t.alive[t.node_path[node]]                                       # [D', P, H]
    mine = jnp.take_along_axis(alive, player[:, None, None], axis=1)[:, 0]   # [D', H]
    return q, own * trail(mine, own.ndim)


def _one_player_slots(t: PublicTensors, s: PublicStructure, by_slot: jax.Array,
                      edge_index: jax.Array, p: int, child: jax.Array, node: jax.Array
                      ) -> tuple[jax.Array, jax.Array]:
    """:func:`_player_slots` of one player ``p`` of two at its own slots (``child``
    ``[*c]``, ``N``: none) and decisions (``node`` ``[D']``), the same numbers bit for bit
    with less memory: no ``[N, P, H]`` table, ``q`` taken from ``p``'s values (the edges
    into ``p``'s slots' children are ``p``'s). From :data:`LEAN_NODE_ENTRIES` on, also
    the edge probabilities taken level by level from ``by_slot`` (no ``[N, H]`` table of
    them), both players' reach computed down the tree together and kept in one ``[N, H]``
    table (``p``'s at ``p``'s decisions, where ``own`` is read; the opponent's elsewhere,
    where the terminals read it), the value pass written into that table's buffer."""
    if t.parent.shape[0] * by_slot.shape[1] < LEAN_NODE_ENTRIES:
        edge = jnp.take(by_slot, edge_index, axis=0, mode="clip")             # [N, H, *b]
        own = jnp.take(player_reach(t, s, edge, p), node, axis=0)           # [D', H, *b]
        v = value_pass(t, s, edge, None, p, opponent=player_reach(t, s, edge, 1 - p))
    else:
        own, v = _lean_values(t, s, by_slot, edge_index, p, node)
    q = jnp.zeros((), v.dtype) + jnp.take(v, child, axis=0, mode="fill",
                                          fill_value=0)                      # [*c, H, *b]
    mine = _pick(t.alive, p)[t.node_path[node]]                              # [D', H]
    return q, own * trail(mine, own.ndim)


def _lean_values(t: PublicTensors, s: PublicStructure, by_slot: jax.Array,
                 edge_index: jax.Array, p: int, node: jax.Array) -> tuple:
    """``(own [D', H, *b], values [N, H, *b])`` of :func:`_one_player_slots` with one
    ``[N, H]`` table at a time."""
    def keep(lo, hi, level):                 # (p's, the opponent's) [n, H] -> [n, H]
        mine = trail(t.node_player[lo:hi] == p, level[0].ndim)
        return jnp.where(mine, level[0], level[1])

    def edges(x):
        return _slot_edges(x, edge_index)
    reach = _down(t, s, _own_factors(t, edges(by_slot), (p, 1 - p)), keep)  # [N, H, *b]
    own = jnp.take(reach, node, axis=0)                                     # [D', H, *b]
    v = value_pass(t, s, _late_edges(edges, by_slot), None, p, opponent=reach, into=reach)
    return own, v


def _slot_edges(by_slot: jax.Array, edge_index: jax.Array):
    """``edge(lo, hi)``: the edge probabilities of the nodes ``lo:hi`` (one level,
    ``[n, H, *b]``) taken from the strategy by slot ``by_slot`` ``[E, H, *b]`` by
    ``edge_index`` ``[N]`` (:func:`_player_slots`): no ``[N, H]`` edge table."""
    def edge(lo, hi):
        return jnp.take(by_slot, edge_index[lo:hi], axis=0, mode="clip")
    return edge


def _row_edges(t: PublicTensors, strategy: jax.Array, after: jax.Array | int = 0):
    """``edge(lo, hi)``: :func:`edge_probabilities` of the nodes ``lo:hi`` (one level,
    ``[n, H, *b]``; the same numbers) taken from the rows' strategy ``[I, A, *b]`` itself:
    entry ``(n, h)`` is the action ``parent_slot[n]`` of decision ``edge_decision[n]``'s
    row for ``h`` (:func:`~jaxcfr.tensors.public_row_index`: the sink's where it has
    none), 1 on chance and root edges. No ``[(D + 1) * A, H]`` strategy by slot.
    ``after``: an int32 0 added to the decisions' indices (:func:`_after`)."""
    actions = t.row_shape[1]
    start = t.decision_row                                                   # [D + 1]
    width = jnp.concatenate([start[1:] - start[:-1], jnp.zeros((1,), start.dtype)])
    hands = jnp.arange(t.alive.shape[-1], dtype=jnp.int32)
    sink = t.row_space.shape[-2] - 1
    flat = strategy.reshape((-1,) + strategy.shape[2:])                      # [I * A, *b]

    def edge(lo, hi):
        d = t.edge_decision[lo:hi] + after                                   # [n]
        row = jnp.where(hands[None] < width[d][:, None], start[d][:, None] + hands[None],
                        sink)                                                # [n, H]
        e = jnp.take(flat, row * actions + t.parent_slot[lo:hi, None], axis=0,
                     mode="clip")                                            # [n, H, *b]
        return jnp.where(trail(d == start.shape[0] - 1, e.ndim), jnp.ones((), e.dtype), e)
    return edge


def _late_edges(edges, source: jax.Array):
    """:func:`value_pass`'s ``edge(lo, hi, after)``: ``edges(source)(lo, hi)`` (a level's
    edges from a strategy table, :func:`_slot_edges` or :func:`_row_edges`), each
    level's taken again from ``source`` tied to the level below (``after``): else XLA
    shares a down pass's gathers with the value pass, or takes them all before the
    terminals, and keeps them alive through the pass."""
    def late(lo, hi, below):
        tied, _ = jax.lax.optimization_barrier((source, below))
        return edges(tied)(lo, hi)
    return late


def _own_factors(t: PublicTensors, edge, players: tuple):
    """:func:`_down`'s ``factor(lo, hi)``: for each of ``players``, its own edge factors of
    the nodes ``lo:hi`` (its edge probability where it chose the edge, else 1), from
    ``edge(lo, hi)`` ``[n, H, *b]``: a tuple of ``[n, H, *b]`` (:func:`player_reach`'s)."""
    def factor(lo, hi):
        e = edge(lo, hi)
        owner = trail(t.edge_owner[lo:hi], e.ndim)
        return tuple(jnp.where(owner == p, e, 1) for p in players)
    return factor


def _lean_reach(t: PublicTensors, s: PublicStructure, edge, p) -> jax.Array:
    """Player ``p``'s own reach ``[N, H, *b]`` (:func:`player_reach`'s numbers, bit for
    bit), its edges taken level by level (``edge(lo, hi)``: :func:`_slot_edges`,
    :func:`_row_edges`) and the levels written into one buffer: one ``[N, H]`` table,
    no edge table."""
    return _down(t, s, _own_factors(t, edge, (p,)), lambda lo, hi, level: level[0])


def _lean(t: PublicTensors, s: PublicStructure, lean_from: int | None) -> bool:
    """Whether the passes of two players keep one ``[N, H]`` table at a time: from
    ``lean_from`` ``[N, H]`` entries on (default :data:`LEAN_NODE_ENTRIES`)."""
    least = LEAN_NODE_ENTRIES if lean_from is None else lean_from
    return s.num_players == 2 and t.parent.shape[0] * t.alive.shape[-1] >= least


def _slot_values(t: PublicTensors, s: PublicStructure, strategy: jax.Array, players
                 ) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(q [D, A, H, *b], own [I, *b], by_slot [(D + 1) * A, H, *b])``: the
    counterfactual action values of ``players``' decisions by slot (decision ``d``'s slot
    ``a`` is the hand vector ``q[d, a]``; other players' 0), every row's own reach, and
    the strategy by slot (:func:`_decisions`)."""
    actions = t.row_shape[1]
    by_slot = _decisions(t, strategy, 1.0)                                 # [(D+1)*A, H, *b]
    q, own = _player_slots(t, s, by_slot, t.edge_decision * actions + t.parent_slot,
                           players)
    return q, _into_rows(t, own), by_slot


def _to_rows(t: PublicTensors, x: jax.Array) -> jax.Array:
    """A table by slot ``[D, A, H, *b]`` as rows ``[I, A, *b]`` (the sink row 0)."""
    return _into_rows(t, jnp.swapaxes(x, 1, 2))


class Blocks(NamedTuple):
    """Where each player's decisions sit when the solver's tables are kept per player
    (:func:`blocks`): player ``p``'s block is its ``D_p`` decisions in ascending order
    (``PublicStructure.player_decisions``), the blocks side by side in seat order. The
    rows' order (``decision_row[d] + h``) is unchanged: only the loop's tables are laid
    out this way (:func:`to_blocks`, :func:`from_blocks` at its boundary)."""
    decisions: tuple   # P arrays [D_p] int32: player p's decision ordinals, ascending
    position: jax.Array     # [D + 1] int32 each decision's place in the blocks (D: the pad)
    first: tuple       # P arrays [D_p] int32: the first row of each of p's decisions


def blocks(t: PublicTensors, s: PublicStructure) -> Blocks:
    """The :class:`Blocks` of one game (device arrays, computed once per compiled loop)."""
    D = t.decision_node.shape[0]
    owner = t.node_player[t.decision_node]                                    # [D]
    order = jnp.argsort(owner, stable=True).astype(jnp.int32)                 # [D]
    ends = np.cumsum((0,) + tuple(s.player_decisions))
    decisions = tuple(order[ends[p]:ends[p + 1]] for p in range(s.num_players))
    position = jnp.concatenate([jnp.argsort(order).astype(jnp.int32),
                                jnp.full((1,), D, jnp.int32)])                # [D + 1]
    return Blocks(decisions, position, tuple(jnp.take(t.decision_row, d) for d in decisions))


def _block_rows(s: PublicStructure, b: Blocks, p: int, first=None) -> jax.Array:
    """``[D_p', H_p]`` the rows of player ``p``'s decisions (``first``: their first rows,
    ``[D_p']``; default all of ``p``'s, ``b.first[p]``), its own hands each."""
    first = b.first[p] if first is None else first
    return first[:, None] + jnp.arange(s.hands[p], dtype=first.dtype)


def to_blocks(table: jax.Array, s: PublicStructure, b: Blocks, pad=0) -> tuple:
    """A row table ``[I, A, *b]`` as each player's block ``[D_p, A, H_p, *b]`` (a tuple in
    seat order: its decisions, its own ``H_p`` hands; the rows of padding hands and the
    sink are left out, :func:`from_blocks` takes them back from the table)."""
    del pad                           # (the blocks hold real decisions alone: no pad read)

    def block(p):                     # each decision's H_p rows, one contiguous slice
        rows = jax.vmap(lambda f: jax.lax.dynamic_slice_in_dim(table, f, s.hands[p]))
        return jnp.swapaxes(rows(b.first[p]), 1, 2)                       # [D_p, A, H_p, *b]
    return tuple(block(p) for p in range(len(b.decisions)))


def from_blocks(parts: tuple, table: jax.Array, s: PublicStructure, b: Blocks) -> jax.Array:
    """Each player's block ``[D_p, A, H_p, *b]`` back into the rows ``[I, A, *b]`` of
    ``table``: the blocks' rows replaced, its other rows (the sink) kept."""
    for p, part in enumerate(parts):
        table = table.at[_block_rows(s, b, p)].set(
            jnp.swapaxes(part, 1, 2), indices_are_sorted=True, unique_indices=True)
    return table


def slot_groups(s: PublicStructure, actions: int, compact: bool) -> tuple:
    """Each player's groups of decisions in the loop's layout (:func:`slots`), static:
    ``P`` tuples of ``(k, D_pk)``. ``compact``: the decisions grouped by their count ``k``
    of legal actions (``PublicStructure.legal_groups``, ascending ``k``), only those
    columns kept; else one group per player, every column, ``((A, D_p),)``."""
    if compact:
        return s.legal_groups
    return tuple(((actions, n),) for n in s.player_decisions)


class Slots(NamedTuple):
    """The layout of the tables and the current strategy inside a loop of per-player
    blocks (:func:`slots`). Player ``p``'s block ``[D_p, A, H_p]`` is split into groups
    ``[D_pk, k, H_p]`` (:func:`slot_groups`): its decisions of ``k`` columns each, those
    columns the decision's legal actions in order (compact) or all ``A`` of them. A slot
    is one (decision, column) pair: the current strategy is kept by slot, ``[S + 1, H]``
    (player by player, group by group, decision-major; the last a pad of ones), ``S``
    the number of slots."""
    groups: tuple      # static: P tuples of (k, D_pk) (slot_groups)
    compact: bool      # static: whether the groups keep the legal columns alone
    order: tuple       # P arrays [D_p] int32: the places in p's block of its decisions,
                       #   group by group
    columns: tuple     # P tuples of arrays [D_pk, k] int32: each group's action columns
    source: jax.Array  # [S + 1] int32 each slot's entry d * A + a of a table by slot
                       #   (_decisions; D * A: the pad)
    edge_index: jax.Array  # [N] int32 the slot of the edge into each node (S: the pad)
    children: tuple    # P arrays [S_p] int32: the child node of each of p's slots (N: none)
    nodes: tuple       # P arrays [D_p] int32: the node of each of p's decisions, slot order


def slots(t: PublicTensors, s: PublicStructure, b: Blocks, compact: bool) -> Slots:
    """The :class:`Slots` of one game (device arrays, computed once per compiled loop).
    A decision's columns are the actions legal for any of its owner's hands (the rows'
    masks are kept, gathered like the tables: :func:`to_slots` of the legal mask)."""
    D = t.decision_node.shape[0]
    A = t.row_shape[1]
    groups = slot_groups(s, A, compact)
    owner = t.node_player[t.decision_node]                                    # [D]
    # any of the owner's hands (H_p of the structure): the decision's own actions where
    # the game has some of those hands, else (a stack member's padding) slot 0 alone
    legal = jnp.where((t.hand_count[owner] > 0)[:, None], t.decision_legal[:-1],
                      jnp.arange(A) == 0) & (jnp.asarray(s.hands)[owner] > 0)[:, None]  # [D, A]
    count = legal.sum(axis=1)                                                 # [D]
    every = jnp.argsort(~legal, axis=1, stable=True).astype(jnp.int32) if compact else \
        jnp.broadcast_to(jnp.arange(A, dtype=jnp.int32), (D, A))              # [D, A]
    total = sum(k * n for g in groups for k, n in g)                          # S
    slot_of = jnp.full(((D + 1) * A,), total, jnp.int32)
    order, columns, source, children, nodes = [], [], [], [], []
    offset = 0
    for p, d in enumerate(b.decisions):
        place = (jnp.argsort(jnp.take(count, d), stable=True).astype(jnp.int32) if compact
                 else jnp.arange(d.shape[0], dtype=jnp.int32))                # [D_p]
        mine = jnp.take(d, place)                                             # [D_p]
        cols, kids, start = [], [], 0
        for k, n in groups[p]:
            dec = mine[start:start + n]                                       # [D_pk]
            c = every[dec, :k]                                                # [D_pk, k]
            flat = (dec[:, None] * A + c).reshape(-1)                         # [D_pk * k]
            slot_of = slot_of.at[flat].set(offset + jnp.arange(n * k, dtype=jnp.int32))
            cols.append(c)
            source.append(flat)
            kids.append(t.child_of[dec[:, None], c].reshape(-1))
            start, offset = start + n, offset + n * k
        order.append(place)
        columns.append(tuple(cols))
        children.append(jnp.concatenate(kids))
        nodes.append(jnp.take(t.decision_node, mine))
    source = jnp.concatenate(source + [jnp.full((1,), D * A, jnp.int32)])
    edge_index = jnp.take(slot_of, t.edge_decision * A + t.parent_slot, mode="clip")
    return Slots(groups, compact, tuple(order), tuple(columns), source, edge_index,
                 tuple(children), tuple(nodes))


def slot_offset(sl: Slots, player: int) -> int:
    """The first slot of ``player``'s groups in the current strategy by slot."""
    return sum(k * n for g in sl.groups[:player] for k, n in g)


def to_slots(block: jax.Array, sl: Slots, player: int) -> tuple:
    """``player``'s block ``[D_p, A, H_p, *b]`` (:func:`to_blocks`) as its groups, a tuple
    of ``[D_pk, k, H_p, *b]`` (:class:`Slots`; the block itself when not compact)."""
    if not sl.compact:
        return (block,)
    x = jnp.take(block, sl.order[player], axis=0)
    out, start = [], 0
    for (k, n), c in zip(sl.groups[player], sl.columns[player]):
        part = x[start:start + n]                                             # [D_pk, A, ...]
        out.append(jnp.take_along_axis(part, trail(c, part.ndim), axis=1))    # [D_pk, k, ...]
        start += n
    return tuple(out)


def from_slots(parts: tuple, block: jax.Array, sl: Slots, player: int) -> jax.Array:
    """``player``'s groups (:func:`to_slots`) back into its block ``[D_p, A, H_p, *b]``:
    the groups' entries replaced, the columns they leave out kept from ``block``."""
    if not sl.compact:
        return parts[0]
    start = 0
    for (k, n), c, part in zip(sl.groups[player], sl.columns[player], parts):
        place = sl.order[player][start:start + n]                             # [D_pk]
        block = block.at[place[:, None], c].set(part)
        start += n
    return block


def into_rows(table: jax.Array, parts: tuple, s: PublicStructure, b: Blocks, sl: Slots,
              player: int) -> jax.Array:
    """``player``'s groups ``parts`` (:func:`to_slots`: ``[D_pk, k, H_p, *b]`` each)
    written into the rows ``[I, A, *b]`` of ``table``, one scatter a group, its other
    entries kept: ``from_blocks`` of ``from_slots`` for that player's rows (the same
    entries), without the whole blocks, their transposes and the rows' copies between
    (on a flop, tables of ``D A H`` entries each)."""
    start = 0
    for (k, n), c, part in zip(sl.groups[player], sl.columns[player], parts):
        first = jnp.take(b.first[player], sl.order[player][start:start + n])     # [D_pk]
        # one index pair (first row, column) per (decision, column), its H_p rows (and
        # any batch axes) a window: not a pair per entry ([D_pk, k, H_p, 2] int32, on a
        # flop larger than the table written, made before the loop and kept through it)
        where = jnp.stack([jnp.broadcast_to(first[:, None], c.shape), c], axis=-1)
        rest = tuple(range(2, part.ndim))                          # H_p and the batch axes
        numbers = jax.lax.ScatterDimensionNumbers(
            update_window_dims=rest, inserted_window_dims=(1,),
            scatter_dims_to_operand_dims=(0, 1))
        table = jax.lax.scatter(table, where, part.astype(table.dtype), numbers,
                                indices_are_sorted=False, unique_indices=True)
        start += n
    return table


def slot_strategy(t: PublicTensors, table: jax.Array, sl: Slots) -> jax.Array:
    """A strategy ``[I, A, *b]`` by slot, padding hands included (the sink's row), the pad
    (ones) last: ``[S + 1, H, *b]`` (:func:`slot_regrets`'s ``current``)."""
    return jnp.take(_decisions(t, table, 1.0), sl.source, axis=0)


def slot_regrets(t: PublicTensors, s: PublicStructure, current: jax.Array, sl: Slots,
                 player: int, legal: tuple) -> tuple:
    """:func:`counterfactual_regrets` and the own reach of ``player``'s rows alone (the
    same numbers, bit for bit), group by group: a tuple of ``(regret [D_pk, k, H_p, *b],
    own [D_pk, H_p, *b])``. ``current`` ``[S + 1, H, *b]``: the current strategy by slot
    (:func:`slot_strategy`); ``legal``: the player's groups of its legal mask
    (``[D_pk, k, H_p]`` each)."""
    q, own = _player_slots(t, s, current, sl.edge_index, (player,),
                           (sl.children[player], sl.nodes[player]))  # [S_p, H, *b], [D_p, ..]
    lo, hands, batch = slot_offset(sl, player), s.hands[player], current.shape[2:]
    out, start, first = [], 0, 0
    for (k, n), mask in zip(sl.groups[player], legal):
        shape = (n, k, current.shape[1]) + batch
        qk = q[first:first + n * k].reshape(shape)[:, :, :hands]             # [D_pk, k, H_p]
        mine = current[lo + first:lo + first + n * k].reshape(shape)[:, :, :hands]
        out.append((instantaneous_regret(qk, mine, mask), own[start:start + n, :hands]))
        start, first = start + n, first + n * k
    return tuple(out)


def counterfactual_action_values(t: PublicTensors, s: PublicStructure, strategy: jax.Array,
                                 players) -> tuple[jax.Array, jax.Array]:
    """``(q [I, A, *b], own [I, *b])``: the counterfactual action values of the rows of
    ``players`` (a static tuple, or a traced ``[k]`` array; other rows 0), and every
    row's own reach (its player's strategy's reach of its node, 0 for a blocked hand)."""
    q, own, _ = _slot_values(t, s, strategy, players)
    return _to_rows(t, q), own


def counterfactual_regrets(t: PublicTensors, s: PublicStructure, strategy: jax.Array,
                           players) -> tuple[jax.Array, jax.Array]:
    """``(regret [I, A, *b], own [I, *b])``: :func:`~jaxcfr.kernels.numerics.instantaneous_regret`
    of :func:`counterfactual_action_values` (the same numbers, bit for bit), computed by
    slot, ``[D, A, H, *b]``, where each action is a contiguous hand vector, and written
    into the rows' ``[I, A]`` layout once: in that layout the sum and the maximum over
    three actions read strided entries (XLA's CPU code for them cost about as much as the
    rest of the half-step's table work on a hold'em turn)."""
    q, own, by_slot = _slot_values(t, s, strategy, players)
    D, A = q.shape[:2]
    current = by_slot[:D * A].reshape(q.shape)                               # [D, A, H, *b]
    legal = _decisions(t, t.legal_mask, False)[:D * A].reshape(q.shape[:3])  # [D, A, H]
    return _to_rows(t, instantaneous_regret(q, current, legal)), own


def best_response(t: PublicTensors, s: PublicStructure, strategy: jax.Array, player: int,
                  lean_from: int | None = None) -> jax.Array:
    """``strategy`` with ``player``'s rows replaced by a pure best response: at each of
    their (decision, hand) rows the legal action of the highest best-response value
    (the first of equals): ``[I, A, *b]``. ``lean_from``: as :func:`metrics` (the
    opponent's reach alone, then the best values written into its buffer)."""
    actions = t.row_shape[1]
    if _lean(t, s, lean_from):
        def edges(x):
            return _row_edges(t, x)
        opponent = _lean_reach(t, s, edges(strategy), 1 - player)           # [N, H, *b]
        best = value_pass(t, s, _late_edges(edges, strategy), None, player, best=True,
                          opponent=opponent, into=opponent)                  # [N, H, *b]
    else:
        edge = edge_probabilities(t, s, strategy)
        best = value_pass(t, s, edge, reach_pass(t, s, edge), player, best=True)
    best = jnp.concatenate([best, jnp.zeros_like(best[:1])])
    q = _into_rows(t, jnp.swapaxes(jnp.take(best, t.child_of, axis=0), 1, 2))  # [I, A, *b]
    q = jnp.where(trail(t.legal_mask, q.ndim), q, -jnp.inf)
    pick = jax.nn.one_hot(jnp.argmax(q, axis=1), actions, axis=1, dtype=strategy.dtype)
    return jnp.where(trail(t.infoset_player == player, q.ndim), pick, strategy)


def metrics(t: PublicTensors, s: PublicStructure, strategy: jax.Array,
            lean_from: int | None = None) -> tuple[jax.Array, jax.Array]:
    """``(values [P, *b], best_response_values [P, *b])`` of the profile ``strategy``.
    From ``lean_from`` ``[N, H]`` entries on (default :data:`LEAN_NODE_ENTRIES`: the
    flops), two players' passes keep one node table at a time (:func:`_lean_metrics`),
    the same numbers bit for bit."""
    if _lean(t, s, lean_from):
        return _lean_metrics(t, s, strategy)
    edge = edge_probabilities(t, s, strategy)
    reach = reach_pass(t, s, edge)
    values, best = [], []
    for p in range(s.num_players):
        values.append(value_pass(t, s, edge, reach, p)[0].sum(axis=0))
        best.append(value_pass(t, s, edge, reach, p, best=True)[0].sum(axis=0))
    return jnp.stack(values), jnp.stack(best)


def _lean_metrics(t: PublicTensors, s: PublicStructure, strategy: jax.Array
                  ) -> tuple[jax.Array, jax.Array]:
    """:func:`metrics` of two players with one ``[N, H]`` table at a time: no edge table
    nor strategy by slot (each level's edges taken from the rows, :func:`_row_edges`), no
    ``[N, P, H]`` reach: for each player ``p`` in turn the opponent's reach alone
    (:func:`_lean_reach`, one buffer), the terminals' values once (ranked chunks gather
    their reach), then ``p``'s two value passes (the strategy's, the best response's) on
    them, of which the root's row alone is read (the levels go as they are used). The
    second player's passes wait for the first's results (:func:`_after`), so that their
    tables are not held at once."""
    values, best = [], []
    after = jnp.zeros((), jnp.int32)
    for p in range(2):
        # p's edges read through indices that depend on the first player's results (plus
        # 0 whatever they are): XLA's CPU scheduler would otherwise interleave the two
        # players' passes and hold both players' tables (an optimization barrier orders
        # nothing there; a loop over the players reads the same numbers but XLA rounds
        # its sums otherwise: a river's best-response value in float32's last places)
        def edges(x, after=after):
            return _row_edges(t, x, after)
        opponent = _lean_reach(t, s, edges(strategy), 1 - p)                 # [N, H, *b]
        ends = terminal_table(t, s, None, p, opponent)                       # [T + 1, H, *b]
        late = _late_edges(edges, strategy)
        values.append(value_pass(t, s, late, None, p, ends=ends)[0].sum(axis=0))
        best.append(value_pass(t, s, late, None, p, best=True, ends=ends)[0].sum(axis=0))
        after = _after(values[-1], best[-1])
    return jnp.stack(values), jnp.stack(best)


def _after(*xs: jax.Array) -> jax.Array:
    """An int32 0 ``[]`` computed from ``xs`` (0 whatever their values, NaN included):
    added to an index, it makes what reads through it wait for ``xs``."""
    flag = jnp.stack([x.reshape(-1)[0] != x.reshape(-1)[0] for x in xs]).any()
    return jnp.minimum(flag.astype(jnp.int32), 0)
