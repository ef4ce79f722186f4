"""The sequence form of a lowered game: counterfactual values by sequences, not by nodes.

A *sequence* of player ``i`` is one of ``i``'s (row, action) pairs, numbered
``row * A + slot`` like the flattened strategy table; the *empty* sequence is the sink
row's slot 0 (``sink * A``), where regret matching always plays 1. Every node ``h``
has, for each player, the last sequence of that player on the path to ``h``
(perfect recall: the same for all members of an information set; a game lowered with
imperfect recall, ``LoweredGame.perfect_recall`` false, has no sequence form and is
stepped by the node passes). With these
tables an update of player ``i`` never walks the ``N`` nodes:

* ``x(I)``: the owner's *realisation weight* of row ``I`` (the product of the owner's
  strategy along its own earlier sequences): one gather of ``[I, K]`` and a product over ``K``;
* ``g(s) = sum over leaves z with i-sequence s of c(z) u_i(z) prod_{j != i} x_j(z)``,
  ``c`` the chance reach and ``x_j(z)`` player ``j``'s realisation weight of its last
  sequence at ``z``: one gather and one sorted segment sum over the ``T`` leaves;
* ``q(I, a) = g(I a) + sum over rows J right after (I, a) of sum_b strategy(J, b) q(J, b)``:
  bottom-up over player ``i``'s rows by own depth (a pass over rows, not nodes);
* the evaluation (:func:`best_response_values`): player ``i``'s value is
  ``sum over leaves z of x_i(z) g-terms``, and its best-response value the same
  bottom-up pass with ``max_b q(J, b)`` in place of the strategy-weighted sum.

``q`` equals :func:`jaxcfr.kernels.passes.action_values` (the counterfactual action values)
and ``x`` equals :func:`jaxcfr.kernels.passes.own_reach_at_rows`, up to float rounding; the
exact estimator uses them when the tensors carry these tables (see
:class:`SequencedTensors`, attached by :class:`jaxcfr.Runner`), and the node passes
otherwise. The tables are derived once on the host from :class:`GameTensors`
(:func:`sequence_tables`), so lowering and its formats are unchanged.

Per update of one player the device moves about ``T * (P + 1)`` leaf entries
(indices and values) and a few ``[I, A]`` tables, against ``~N * (3 P + 10)``
entries for the node passes; see ``docs/benchmarks.md`` for measured figures.

Shapes: ``N`` nodes, ``T`` leaves (terminal nodes and any node with a payoff), ``I``
rows (sink included), ``A`` actions, ``P`` players, ``K`` the most own decisions
before a row, ``*d`` trailing data axes of ``payoff`` / ``chance_prob`` (a
shared-structure stack), ``*b`` trailing batch axes of the strategy.

Example::

    >>> import jaxcfr
    >>> from jaxcfr import sequence
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> tables = sequence.sequence_tables(lowered.tensors, lowered.level_start,
    ...                                   lowered.num_players)
    >>> tables.leaf_own.shape            # [P, T]: 30 terminal histories
    (2, 30)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util.tabled import TabledArray
from jaxcfr.kernels.numerics import action_sum, trail
from jaxcfr.tensors import DECISION, TERMINAL_NODE, GameTensors

__all__ = ["SequenceTables", "SequencedTensors", "sequence_tables", "stacked_sequence_tables",
           "with_sequences", "split_axes", "lean", "row_ancestors", "realisation_weights",
           "sequence_weights", "counterfactual_action_values",
           "sequence_values", "times_others", "best_response_values"]


class SequenceTables(NamedTuple):
    """Index tables of the sequence form (one game; a leading ``[B]`` for a vmapped stack)."""
    leaf_own: np.ndarray     # [P, T] int32  leaves in player i's order (sorted by i's sequence):
                             #               i's last sequence at each leaf
    leaf_others: np.ndarray  # [P, P-1, T] int32 the other players' last sequences, same order
    leaf_value: np.ndarray   # [P, T, *d] float  chance reach times player i's payoff (a leaf
                             #               before i's first move too: its sequence is empty)
    leaf_node: np.ndarray    # [P, T] int32  the node of each leaf, same order (padding: 0);
                             #               None on a device without the node arrays
    row_parent: np.ndarray   # [I] int32  the owner's previous sequence (sink * A if none)
    row_ancestors: np.ndarray  # [I, K] int32 the owner's earlier sequences, padded with sink * A;
                               #   None on a lean device: derived from row_parent when read
                               #   (:func:`row_ancestors`)
    player_rows: np.ndarray  # [P, R] int32 each player's rows, ascending, padded with I, I + 1,
                             #   ... (distinct rows that are not there: reads give 0, writes
                             #   are dropped)
    level_rows: tuple        # K arrays [P, R_d] int32: rows of player i with d = 1..K own
                             #   decisions before them, sorted by row_parent (padded: sink row)


class SequencedTensors(GameTensors):
    """:class:`GameTensors` that also carry their :class:`SequenceTables` (``.sequence``).

    It is a ``GameTensors`` in every respect (fields, attributes, ``isinstance``), so any
    estimator or pass reads it as such; the exact estimator also finds ``.sequence``.
    A pytree of both (jit / vmap / device_put see the tables as leaves too).
    """

    def __new__(cls, tensors: GameTensors, sequence: SequenceTables):
        self = super().__new__(cls, *tensors)
        self.sequence = sequence
        return self

    def __repr__(self) -> str:
        return f"SequencedTensors({GameTensors(*self)!r}, {self.sequence!r})"


jax.tree_util.register_pytree_node(
    SequencedTensors,
    lambda s: ((GameTensors(*s), s.sequence), None),
    lambda _, children: SequencedTensors(*children))


def with_sequences(tensors: GameTensors, sequence: SequenceTables) -> SequencedTensors:
    """``tensors`` carrying ``sequence`` (both NumPy, or both on the device)."""
    return SequencedTensors(GameTensors(*tensors), sequence)


def split_axes(tables: SequenceTables) -> SequenceTables:
    """The axis of each table that grows with the game (leaves ``T``, rows ``I`` or a
    level's rows ``R_d``): the one to shard when a game is split over devices (``None``
    for a table left off the device, :func:`lean`)."""
    def axis(table, n):
        return None if table is None else n
    return SequenceTables(leaf_own=1, leaf_others=2, leaf_value=1,
                          leaf_node=axis(tables.leaf_node, 1), row_parent=0,
                          row_ancestors=axis(tables.row_ancestors, 0), player_rows=1,
                          level_rows=tuple(1 for _ in tables.level_rows))


# -- host: the tables ---------------------------------------------------------------------
#: Nodes per chunk of the host pass (:func:`_leaves_and_rows`): its temporaries (masks,
#: gathers, the index arrays NumPy widens to int64) are bounded by it, not by ``N`` or a
#: level's width.
_CHUNK = 1 << 18


def _index_dtype(bound: int) -> np.dtype:
    """The dtype of an index table whose entries are below ``bound``: int32 (the device's
    index type), int64 only past 2^31."""
    return np.dtype(np.int32 if bound <= np.iinfo(np.int32).max else np.int64)


def _counter_dtype(bound: int) -> np.dtype:
    """The smallest signed integer dtype that holds ``0 .. bound``."""
    return np.promote_types(np.int8, np.min_scalar_type(bound))


def _host(x):
    """``x`` as the host reads it: a compact host form (a ``TabledArray``: read by slices,
    never made dense) as it is, anything else as a NumPy array."""
    return x if isinstance(x, TabledArray) else np.asarray(x)


class _Leaves(NamedTuple):
    """The leaves in node order, and the rows' facts, from one pass over the nodes."""
    node: np.ndarray        # [T] int32  the leaves, ascending
    last: np.ndarray        # [T, P] int32  each player's last sequence at each leaf
    value: np.ndarray       # [P, T, *d] float (the run's dtype) chance reach x player's payoff
    row_parent: np.ndarray  # [I] int32  the owner's previous sequence (sink * A if none)
    row_depth: np.ndarray   # [I] small int  the owner's decisions before the row


def _leaves_and_rows(t: GameTensors, level_start, num_players: int, dtype) -> _Leaves:
    """One pass over the levels, each in chunks of :data:`_CHUNK` nodes, holding only the
    previous level's per-node state: every player's last sequence ``[n, P]`` (int32),
    own-decision count ``[n, P]`` (the smallest integer type of the depth) and the chance
    reach ``[n, *d]`` (float64, as the values are formed before they are rounded to
    ``dtype``). No ``[N]``-sized array but the leaf mask (bool) is made; the results are
    written straight into their final dtypes."""
    n = t.parent.shape[0]
    rows, actions = t.legal_mask.shape
    empty = (rows - 1) * actions
    p = num_players
    index = _index_dtype(rows * actions)
    counter = _counter_dtype(len(level_start))
    players = np.arange(p, dtype=np.int8 if p < 127 else np.int32)
    payoff, prob = t.payoff, t.chance_prob
    # leaves: terminal nodes and any node with a payoff (counted first, to size the tables)
    is_leaf = np.zeros(n, bool)
    for a in range(0, n, _CHUNK):
        b = min(a + _CHUNK, n)
        pay = np.asarray(payoff[a:b])
        is_leaf[a:b] = ((t.node_kind[a:b] == TERMINAL_NODE)
                        | (pay != 0).reshape(b - a, -1).any(axis=1))
    num_leaves = int(np.count_nonzero(is_leaf))
    chance_tail = tuple(prob.shape[1:])
    pay_tail = tuple(payoff.shape[2:])
    tail = np.broadcast_shapes((1,) + chance_tail + (1,) * (len(pay_tail) - len(chance_tail)),
                               (1,) + pay_tail)[1:]
    leaf_node = np.empty(num_leaves, _index_dtype(n))
    leaf_last = np.empty((num_leaves, p), index)
    leaf_value = np.empty((p, num_leaves) + tail, dtype)
    row_parent = np.full(rows, empty, index)
    row_depth = np.zeros(rows, counter)
    filled = 0
    prev = None                                     # (first node, last, own, chance)
    for d in range(len(level_start) - 1):
        lo, hi = level_start[d], level_start[d + 1]
        last = np.empty((hi - lo, p), index)
        own = np.empty((hi - lo, p), counter)
        chance = np.empty((hi - lo,) + chance_tail, np.float64)
        for a in range(lo, hi, _CHUNK):
            b = min(a + _CHUNK, hi)
            if prev is None:                        # the roots: nothing chosen, reach 1
                last_c = np.full((b - a, p), empty, index)
                own_c = np.zeros((b - a, p), counter)
                chance_c = np.ones((b - a,) + chance_tail)
            else:
                first, last_p, own_p, chance_p = prev
                par = np.asarray(t.parent[a:b]) - first
                mine = np.asarray(t.edge_owner[a:b])[:, None] == players[None, :]  # [c, P]
                last_c = np.where(mine, np.asarray(t.edge_index[a:b])[:, None].astype(index),
                                  last_p[par])
                own_c = own_p[par] + mine.astype(counter)
                chance_c = chance_p[par] * np.asarray(prob[a:b], np.float64)
            last[a - lo:b - lo], own[a - lo:b - lo], chance[a - lo:b - lo] = (
                last_c, own_c, chance_c)
            k = np.flatnonzero(is_leaf[a:b])
            if len(k):
                at = slice(filled, filled + len(k))
                leaf_node[at] = a + k
                leaf_last[at] = last_c[k]
                pay = np.asarray(payoff[a + k], np.float64)                  # [c, P, *d]
                reach = trail(chance_c[k], pay.ndim - 1)
                for i in range(p):
                    leaf_value[i, at] = reach * pay[:, i]
                filled += len(k)
            k = np.flatnonzero(np.asarray(t.node_kind[a:b]) == DECISION)
            if len(k):
                owner = np.asarray(t.node_player[a + k]).astype(np.intp)
                row = np.asarray(t.node_infoset[a + k])
                row_parent[row] = last_c[k, owner]
                row_depth[row] = own_c[k, owner]
        prev = (lo, last, own, chance)
    return _Leaves(leaf_node, leaf_last, leaf_value, row_parent, row_depth)


def sequence_tables(tensors: GameTensors, level_start, num_players: int,
                    dtype=np.float32, multiple: int = 1) -> SequenceTables:
    """The :class:`SequenceTables` of one game's (NumPy) tensors, or of a forest of games.

    ``payoff [N, P, *d]`` and ``chance_prob [N, *d]`` may carry trailing data axes
    (the tensors of :func:`jaxcfr.lowering.stack.shared_structure`); ``leaf_value`` then has
    them too. Costs a few vectorised passes over the nodes (well under a second per
    million nodes). ``multiple``: pad the leaf axis ``T`` and each level's rows to a
    multiple of it (inert leaves in the sink, sink rows), to split them over devices.

    Built in the tables' own dtypes (int32 indices, ``dtype`` values) level by level, in
    chunks (:func:`_leaves_and_rows`): no ``[N]``-sized int64 or float64 array is made, and
    a compact host form of ``payoff`` / ``chance_prob`` is never made dense. The values
    are those of forming everything in int64 / float64 and rounding at the end (each leaf
    value is one float64 product, rounded once), to the bit.
    """
    t = GameTensors(*(_host(x) for x in tensors))
    rows, actions = t.legal_mask.shape
    sink = rows - 1
    empty = sink * actions
    p = num_players
    found = _leaves_and_rows(t, level_start, p, dtype)
    row_parent, row_depth = found.row_parent, found.row_depth
    num_leaves = len(found.node)
    width = num_leaves + (-num_leaves % multiple)  # padding leaves: sequences empty, value 0
    leaf_own = np.full((p, width), empty, row_parent.dtype)
    leaf_others = np.full((p, p - 1, width), empty, row_parent.dtype)
    leaf_value = np.zeros((p, width) + found.value.shape[2:], dtype)
    leaf_node = np.zeros((p, width), found.node.dtype)
    for i in range(p):
        order = np.argsort(found.last[:, i], kind="stable")
        leaf_own[i, :num_leaves] = found.last[order, i]
        for k, j in enumerate(j for j in range(p) if j != i):
            leaf_others[i, k, :num_leaves] = found.last[order, j]
        leaf_value[i, :num_leaves] = found.value[i, order]
        leaf_node[i, :num_leaves] = found.node[order]
        del order
    del found
    depth = int(row_depth.max(initial=0))
    ancestors = np.empty((rows, max(depth, 1)), row_parent.dtype)
    ancestors[:] = empty
    current = row_parent
    for k in range(depth):
        ancestors[:, k] = current
        current = row_parent[current // actions]          # the sink's parent is empty again
    row_player = np.asarray(t.infoset_player)
    own_rows = [np.flatnonzero(row_player == i) for i in range(p)]
    width = max(len(r) for r in own_rows)
    player_rows = _row_lists(own_rows, width + (-width % multiple), rows)
    level_rows = []
    for d in range(1, depth + 1):
        per_player = [np.flatnonzero((row_depth == d) & (row_player == i)) for i in range(p)]
        per_player = [r[np.argsort(row_parent[r], kind="stable")] for r in per_player]
        width = max(len(r) for r in per_player)
        width += -width % multiple
        # padding with the sink row keeps the rows sorted by parent (the sink's is largest)
        level_rows.append(np.stack([np.concatenate([r, np.full(width - len(r), sink)])
                                    for r in per_player]).astype(np.int32))
    return SequenceTables(
        leaf_own=leaf_own, leaf_others=leaf_others, leaf_value=leaf_value,
        leaf_node=leaf_node, row_parent=row_parent, row_ancestors=ancestors,
        player_rows=player_rows, level_rows=tuple(level_rows))


def _row_lists(lists, width: int, num_rows: int) -> np.ndarray:
    """``[len(lists), width]`` int32: each list of rows padded with ``num_rows``,
    ``num_rows + 1``, ... (distinct rows that are not there)."""
    return np.stack([np.concatenate([r, num_rows + np.arange(width - len(r))])
                     for r in lists]).astype(np.int32)


def stacked_sequence_tables(tensors: GameTensors, level_start, num_players: int,
                            dtype=np.float32) -> SequenceTables:
    """Tables of a stack's tensors ``[B, ...]`` (vmapped layout), padded to one shape.

    Extra leaves sit in the sink (value 0); extra ancestors and level rows are the
    sink row's, whose weight is 1 and whose values are never read; extra player rows are
    rows that are not there, as in one game's table.
    """
    members = [sequence_tables(GameTensors(*(np.asarray(x[b]) for x in tensors)), level_start,
                               num_players, dtype) for b in range(tensors.parent.shape[0])]
    rows, actions = tensors.legal_mask.shape[1:]
    empty = (rows - 1) * actions

    def pad(arrays, axis, fill):
        width = max(a.shape[axis] for a in arrays)
        out = []
        for a in arrays:
            shape = list(a.shape)
            shape[axis] = width - a.shape[axis]
            out.append(np.concatenate([a, np.full(shape, fill, a.dtype)], axis=axis))
        return np.stack(out)

    width = max(m.player_rows.shape[1] for m in members)
    depth = max(len(m.level_rows) for m in members)
    levels = []
    for d in range(depth):
        parts = [m.level_rows[d] if d < len(m.level_rows)
                 else np.full((num_players, 1), rows - 1, np.int32) for m in members]
        levels.append(pad(parts, 1, rows - 1))
    return SequenceTables(
        leaf_own=pad([m.leaf_own for m in members], 1, empty),
        leaf_others=pad([m.leaf_others for m in members], 2, empty),
        leaf_value=pad([m.leaf_value for m in members], 1, 0),
        leaf_node=pad([m.leaf_node for m in members], 1, 0),
        row_parent=np.stack([m.row_parent for m in members]),
        row_ancestors=pad([m.row_ancestors for m in members], 1, empty),
        player_rows=np.stack([_row_lists([r[r < rows] for r in m.player_rows], width, rows)
                              for m in members]),
        level_rows=tuple(levels))


# -- device: the passes --------------------------------------------------------------------
def _flat(strategy: jax.Array) -> jax.Array:
    return strategy.reshape((-1,) + strategy.shape[2:])


def _rows(x: jax.Array, index: jax.Array, sorted_index: bool = False) -> jax.Array:
    """``x[index]`` along axis 0; every index is in range by construction of the tables."""
    return x.at[index].get(mode="promise_in_bounds", indices_are_sorted=sorted_index)


def _of_player(table: jax.Array, player) -> jax.Array:
    """``table[player]`` for a static or traced player index (a dynamic slice)."""
    return jax.lax.dynamic_index_in_dim(table, player, axis=0, keepdims=False)


def row_ancestors(seq: SequenceTables, actions: int) -> jax.Array:
    """``[I, K]`` the owner's earlier sequences of each row (``seq.row_ancestors``), or,
    where a device holds no such table (``None``: :func:`lean`), the same derived from
    ``row_parent`` by ``K`` gathers of ``[I]`` (``K``: the number of levels, at least 1),
    as :func:`sequence_tables` derives it on the host."""
    if seq.row_ancestors is not None:
        return seq.row_ancestors
    current, ancestors = seq.row_parent, []
    for _ in range(max(len(seq.level_rows), 1)):
        ancestors.append(current)
        current = _rows(seq.row_parent, current // actions)  # the sink's parent: empty again
    return jnp.stack(ancestors, axis=1)


def lean(tables: SequenceTables) -> SequenceTables:
    """``tables`` as a device that holds no node arrays keeps them: without ``leaf_node``
    (it indexes the nodes) and ``row_ancestors`` (``[I, K]``, derived from ``row_parent``
    when read, :func:`row_ancestors`); what the exact passes compute is unchanged."""
    return tables._replace(leaf_node=None, row_ancestors=None)


def realisation_weights(seq: SequenceTables, strategy: jax.Array) -> jax.Array:
    """Each row owner's realisation weight of the row: ``[I, *b]`` (1 at depth-0 rows)."""
    # One gather of every ancestor [I, K, *b] and a product over K (on a CPU the same
    # products in the same order as a chain of multiplies): XLA keeps a reduction a loop
    # of its own, so the weights are written once, where a chain of K multiplies was
    # recomputed inside every consumer (the leaf pass, the averaging), with K gathers per
    # element there: a fifth of a 64-game Leduc stack's iteration, a tenth of one game's.
    ancestors = row_ancestors(seq, strategy.shape[1])                         # [I, K]
    return jnp.prod(_rows(_flat(strategy), ancestors), axis=1)


def _leaf_terms(seq: SequenceTables, x: jax.Array, player, num_players: int, batch: tuple):
    """Player ``player``'s leaf order ``own [T]`` (its last sequence at each leaf) and
    ``w [T, *b]``: chance reach times its payoff times the others' realisation weights."""
    own = _of_player(seq.leaf_own, player)                                  # [T]
    w = trail(_of_player(seq.leaf_value, player).astype(x.dtype), 1 + len(batch))
    return own, jnp.broadcast_to(times_others(seq, x, player, num_players, w), own.shape + batch)


def counterfactual_action_values(seq: SequenceTables, strategy: jax.Array, players,
                                 num_players: int) -> tuple[jax.Array, jax.Array]:
    """Counterfactual action values ``q [I, A, *b]`` and realisation weights ``x [I, *b]``.

    The values of the profile ``strategy`` itself (the regret update's input), not of a
    best response: those are :func:`best_response_values` here and, per history, the host
    :func:`jaxcfr.solvers.analytics.counterfactual_values`.

    ``players``: a static tuple of player indices (every row of theirs gets its ``q``),
    or a traced ``[1]`` int array (one player of an alternating update). Rows of other
    players get 0. ``strategy`` is ``[I, A, *b]``.
    """
    batch = strategy.shape[2:]
    weight, x = sequence_weights(seq, strategy)                 # [I, *b], [I * A, *b]

    def leaf_weights(i):            # chance reach x payoff x the others' realisation weights
        return _leaf_terms(seq, x, i, num_players, batch)[1]
    return sequence_values(seq, strategy, players, leaf_weights), weight


def sequence_weights(seq: SequenceTables, strategy: jax.Array
                     ) -> tuple[jax.Array, jax.Array]:
    """The realisation weights of the rows ``[I, *b]`` (:func:`realisation_weights`) and
    of the sequences, flat: weight times strategy, ``[I * A, *b]``."""
    weight = realisation_weights(seq, strategy)
    return weight, _flat(weight[:, None] * strategy)


def times_others(seq: SequenceTables, x: jax.Array, player, num_players: int,
                 w: jax.Array) -> jax.Array:
    """``w [T, *b]`` (at ``player``'s leaves, in its order) times ``prod_{j != player}
    x_j(z)``, the other players' realisation weights of their last sequences, one after
    another; ``x [I * A, *b]`` is the flat realisation weight times strategy."""
    others = _of_player(seq.leaf_others, player)                             # [P - 1, T]
    for j in range(num_players - 1):
        w = w * _rows(x, others[j])
    return w


def sequence_values(seq: SequenceTables, strategy: jax.Array, players, leaf_weights
                    ) -> jax.Array:
    """Values by sequences from weights at the leaves: ``q [I, A, *b]`` with
    ``q(I, a) = g(I a) + sum over rows J right after (I, a) of sum_b strategy(J, b) q(J, b)``
    and ``g(s)`` the sum of ``leaf_weights(i)`` ``[T, *b]`` over ``i``'s leaves whose last
    ``i``-sequence is ``s`` (:func:`counterfactual_action_values` with the exact weights; the
    Monte Carlo estimators' counts give others). ``players`` as there."""
    rows, actions = strategy.shape[:2]
    batch = strategy.shape[2:]
    static = isinstance(players, tuple)
    updated = players if static else (players[0],)
    q = jnp.zeros((rows * actions,) + batch, strategy.dtype)
    for i in updated:
        own = _of_player(seq.leaf_own, i)                                   # [T]
        w = leaf_weights(i)
        q = q.at[own].add(jnp.broadcast_to(w, own.shape + batch), indices_are_sorted=True,
                          mode="promise_in_bounds")
    # the leaves before a player's first move fed the empty sequence, which no row reads:
    # it is set back to 0, so the sink rows' values (and regrets) stay exactly 0 (a mask,
    # not a one-element scatter: that one went wrong on a game split over devices)
    q = _without_empty(q, rows, actions)
    for level in reversed(seq.level_rows):                                   # deepest first
        members = jnp.concatenate([_of_player(level, i) for i in updated])
        q2 = q.reshape((rows, actions) + batch)
        v = action_sum(_rows(strategy, members) * _rows(q2, members))
        q = q.at[_rows(seq.row_parent, members)].add(
            v, indices_are_sorted=len(updated) == 1, mode="promise_in_bounds")
    return q.reshape((rows, actions) + batch)


def best_response_values(t: "SequencedTensors", strategy: jax.Array,
                         num_players: int) -> tuple[jax.Array, jax.Array]:
    """Each player's value under ``strategy`` and its best-response value: ``[P, *b]`` each.

    ``t`` carries the tables (``t.sequence``); ``strategy`` ``[I, A, *b]`` is a profile
    whose sink row is ``[1, 0, ...]``. Player ``i``'s value is
    ``sum over leaves z of w_i(z) x_i(z)`` (``w_i``: chance reach, payoff and the others'
    realisation weights; ``x_i``: ``i``'s own). Its best-response value is the pass of
    :func:`counterfactual_action_values` with a max over the legal actions of each of ``i``'s
    rows in place of the strategy's sum, bottom-up by own depth, plus the leaves before
    ``i``'s first move: ``q(I, a) = g(I a) + sum over rows J right after (I, a) of
    max_b q(J, b)``, the value ``sum over i's first rows I of max_a q(I, a)``. Exact
    (perfect recall: a pure best response picks one action per row); equal to the node
    passes' sweeps (:func:`jaxcfr.solvers.analytics.best_response`) up to float rounding.
    """
    seq = t.sequence
    rows, actions = strategy.shape[:2]
    batch = strategy.shape[2:]
    empty = (rows - 1) * actions
    x = _flat(realisation_weights(seq, strategy)[:, None] * strategy)      # [I * A, *b]
    legal = trail(t.legal_mask, strategy.ndim)                               # [I, A, 1...]
    first = seq.row_parent == empty                 # rows with no own decision before them

    def best(g, index):                              # max over legal actions: [R, *b]
        g = g.reshape((rows, actions) + batch)
        picked = g if index is None else _rows(g, index)
        allowed = legal if index is None else _rows(legal, index)
        return jnp.max(jnp.where(allowed, picked, -jnp.inf), axis=1)

    values, responses = [], []
    for i in range(num_players):
        own, w = _leaf_terms(seq, x, i, num_players, batch)                  # [T], [T, *b]
        values.append(_total(w * _rows(x, own, sorted_index=True)))
        g = jnp.zeros((rows * actions,) + batch, strategy.dtype)
        g = g.at[own].add(w, indices_are_sorted=True, mode="promise_in_bounds")
        before_first = g[empty]                      # leaves before i's first move
        g = _without_empty(g, rows, actions)         # (padding rows in a level read it)
        for level in reversed(seq.level_rows):                               # deepest first
            members = _of_player(level, i)
            g = g.at[_rows(seq.row_parent, members)].add(
                best(g, members), indices_are_sorted=True, mode="promise_in_bounds")
        mine = trail(first & (t.infoset_player == i), 1 + len(batch))        # [I, 1...]
        responses.append(before_first + _total(jnp.where(mine, best(g, None), 0)))
    return jnp.stack(values), jnp.stack(responses)


def _without_empty(q: jax.Array, rows: int, actions: int) -> jax.Array:
    """``q`` ``[I * A, *b]`` with the empty sequence's entry (the last row's slot 0) 0."""
    empty = jnp.arange(q.shape[0]) == (rows - 1) * actions
    return jnp.where(trail(empty, q.ndim), 0, q)


def _total(x: jax.Array) -> jax.Array:
    """The sum of ``x`` ``[R, *b]`` over ``R``, added in row order (a scatter into one
    segment): the same float rounding whatever the batch axes' layout, which a reduce's
    vectorised order does not give (a stack stepped member by member, vmapped or split
    over devices must evaluate alike)."""
    one = jnp.zeros(x.shape[:1], jnp.int32)
    return jax.ops.segment_sum(x, one, num_segments=1, indices_are_sorted=True)[0]
