"""Stacking lowered games into one batch ``[B, ...]`` of a common padded shape.

Each depth level is padded to the widest member's level, rows to the most rows,
actions to the widest row. Padding is inert by construction: a padding node
(kind PADDING) has zero payoff, a chance edge (owner ``P``) of probability zero
that points at its game's sink row, and hangs under the last node of the level
above (so parents stay sorted; that node may be real, even a terminal, or
padding: its value and reach do not change). A padding row is a sink row (one
legal slot, no owner); padded action slots are never legal.

Shapes: every tensor of :class:`~jaxcfr.tensors.GameTensors` gains a leading
``B`` axis; ``N``, ``I`` and ``A`` become the maxima over the members (``N`` the
sum of the per-level maxima).

Example::

    >>> import jaxcfr
    >>> games = [jaxcfr.lower(jaxcfr.load_game(f"leduc_poker(ranks={r})")) for r in (3, 4)]
    >>> batch = jaxcfr.stack(games)
    >>> batch.batch_size, batch.tensors.parent.shape[0]
    (2, 2)
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from jaxcfr.tensors import NO_PARENT, NO_PLAYER, PADDING, GameTensors, LoweredGame

__all__ = ["stack", "pad", "pad_to_multiple", "unstack_rows", "forest", "shared_structure"]


def stack(games: Sequence[LoweredGame]) -> LoweredGame:
    """Pad ``games`` (all with the same number of players) to one shape; add a batch axis.

    The result's tensors have a leading ``B`` axis; host tables stay per member in
    ``members``. Row ``r`` of member ``b`` keeps its row number, so
    ``unstack_rows(batch, table)`` recovers member tables.
    """
    games = list(games)
    if not games:
        raise ValueError("stack() needs at least one lowered game")
    if any(g.batch_size is not None for g in games):
        raise ValueError("stack() takes single lowered games, not stacked ones")
    num_players = games[0].num_players
    if any(g.num_players != num_players for g in games):
        raise ValueError("stack() needs games with the same number of players, got "
                         f"{[g.num_players for g in games]}")
    num_levels = max(len(g.level_start) - 1 for g in games)
    widths = np.zeros((len(games), num_levels), dtype=np.int64)
    for b, g in enumerate(games):
        w = np.diff(g.level_start)
        widths[b, :len(w)] = w
    level_width = widths.max(axis=0)
    level_start = np.concatenate([[0], np.cumsum(level_width)])
    num_nodes = int(level_start[-1])
    num_rows = max(g.num_rows for g in games)
    max_actions = max(g.max_actions for g in games)
    padded = [_pad(g, widths[b], level_start, num_nodes, num_rows, max_actions)
              for b, g in enumerate(games)]
    tensors = GameTensors(*(np.stack(parts) for parts in zip(*padded)))
    nash = games[0].nash_value if all(g.nash_value == games[0].nash_value for g in games) else None
    return LoweredGame(tensors=tensors, level_start=tuple(int(x) for x in level_start),
                       num_players=num_players, infoset_keys=(), infoset_actions=(),
                       preorder=np.zeros(0, dtype=np.int64), node_action=(),
                       nash_value=nash, br_rounds=max(g.br_rounds for g in games),
                       constant_sum=(games[0].constant_sum if all(
                           g.constant_sum == games[0].constant_sum for g in games) else None),
                       name="stack(" + ", ".join(g.name for g in games) + ")",
                       batch_size=len(games), members=tuple(games),
                       perfect_recall=all(g.perfect_recall for g in games))


def pad(g: LoweredGame, level_widths, num_rows: int, max_actions: int) -> GameTensors:
    """``g``'s tensors padded to ``level_widths`` nodes per level (at least ``g``'s, and at
    least as many levels), ``num_rows`` rows and ``max_actions`` actions (inert padding,
    as in :func:`stack`)."""
    widths = np.diff(g.level_start)
    level_width = np.asarray(level_widths, dtype=np.int64)
    if len(widths) > len(level_width) or (widths > level_width[:len(widths)]).any() \
            or g.num_rows > num_rows or g.max_actions > max_actions:
        raise ValueError("pad() needs a shape at least as large as the game's")
    level_start = np.concatenate([[0], np.cumsum(level_width)])
    return _pad(g, widths, level_start, int(level_start[-1]), num_rows, max_actions)


def pad_to_multiple(game: LoweredGame, multiple: int) -> LoweredGame:
    """``game`` with inert padding nodes (in its last level) and padding rows (after the
    sink) so that ``N`` and ``I`` are multiples of ``multiple``: the shape a single game
    needs to be split evenly over ``multiple`` devices. Host tables are kept; rows keep
    their numbers, so ``table[:game.num_rows]`` is the unpadded game's table.
    """
    if game.batch_size is not None:
        raise ValueError("pad_to_multiple takes a single lowered game")
    widths = np.diff(game.level_start)
    widths[-1] += -game.num_nodes % multiple
    level_start = np.concatenate([[0], np.cumsum(widths)])
    rows = game.num_rows + (-game.num_rows % multiple)
    tensors = _pad(game, np.diff(game.level_start), level_start, int(level_start[-1]), rows,
                   game.max_actions)
    return dataclasses.replace(game, tensors=tensors,
                               level_start=tuple(int(x) for x in level_start))


def _pad(g: LoweredGame, widths, level_start, num_nodes, num_rows, max_actions) -> GameTensors:
    t = g.tensors
    p = g.num_players
    # new position of every old node: its level's new start + its offset in the level
    old_levels = np.repeat(np.arange(len(widths))[:len(g.level_start) - 1],
                           np.diff(g.level_start))
    offset = np.arange(g.num_nodes) - np.asarray(g.level_start)[old_levels]
    new_pos = level_start[old_levels] + offset
    sink = g.num_rows - 1

    parent = np.empty(num_nodes, dtype=np.int32)
    # padding node of level d hangs under the last slot of level d - 1: sorted, in range
    level_of_new = np.repeat(np.arange(len(level_start) - 1), np.diff(level_start))
    parent[:] = np.where(level_of_new > 0, level_start[np.maximum(level_of_new, 1)] - 1, NO_PARENT)
    parent[new_pos] = np.where(t.parent == NO_PARENT, NO_PARENT, new_pos[np.maximum(t.parent, 0)])

    def column(values, fill, dtype):
        out = np.full((num_nodes,) + values.shape[1:], fill, dtype=dtype)
        out[new_pos] = values
        return out

    old_rows = t.edge_index // g.max_actions
    old_slots = t.edge_index % g.max_actions
    edge_index = column(old_rows * max_actions + old_slots, sink * max_actions, np.int32)

    def rows(values, fill, dtype):
        out = np.full((num_rows,) + values.shape[1:], fill, dtype=dtype)
        out[:len(values)] = values
        return out

    def mask(m):
        out = np.zeros((num_rows, max_actions), dtype=bool)
        out[:m.shape[0], :m.shape[1]] = m
        out[m.shape[0]:, 0] = True      # padding rows behave like the sink row
        return out

    return GameTensors(
        parent=parent,
        parent_slot=column(t.parent_slot, 0, np.int32),
        node_kind=column(t.node_kind, PADDING, np.int8),
        node_player=column(t.node_player, -1, np.int32),
        node_infoset=column(t.node_infoset, sink, np.int32),
        edge_owner=column(t.edge_owner, p, np.int32),
        edge_index=edge_index,
        chance_prob=column(t.chance_prob, 0.0, t.chance_prob.dtype),
        payoff=column(t.payoff, 0.0, t.payoff.dtype),
        legal_mask=mask(t.legal_mask),
        infoset_player=rows(t.infoset_player, NO_PLAYER, np.int32),
        infoset_rep=rows(new_pos[t.infoset_rep] * (t.infoset_player >= 0), 0, np.int32),
    )


def unstack_rows(batch: LoweredGame, table: np.ndarray) -> list[np.ndarray]:
    """Split a ``[B, I, ...]`` table of a stacked game into each member's ``[I_b, ...]``."""
    return [np.asarray(table[b, :g.num_rows]) for b, g in enumerate(batch.members)]


def forest(batch: LoweredGame) -> tuple[GameTensors, tuple[int, ...]]:
    """The stacked games as one forest of ``B`` trees: unbatched tensors for a fast step.

    Level ``d`` of the forest holds level ``d`` of member 0, then of member 1, ...,
    so each level stays contiguous and parents stay sorted; member ``b``'s row ``r``
    becomes row ``b * I + r``. A solver state ``[B, I, A, ...]`` reshaped to
    ``[B * I, A, ...]`` is a state of the forest, so one unbatched update steps every
    member, with gathers over contiguous rows instead of a vmapped batch of gathers.

    Returns:
      ``(tensors, level_start)``: ``N' = B * N`` nodes, ``I' = B * I`` rows.
    """
    if batch.batch_size is None:
        raise ValueError("forest() takes a stacked LoweredGame (see stack())")
    t = batch.tensors
    b, n = t.parent.shape
    rows, actions = t.legal_mask.shape[1:]
    starts = np.asarray(batch.level_start)
    widths = np.diff(starts)
    level = np.repeat(np.arange(len(widths)), widths)                 # [N] level of each node
    offset = np.arange(n) - starts[level]                             # [N] position in level
    member = np.arange(b)[:, None]
    # forest index of (member, node): B * start(level) + member * width(level) + offset
    position = b * starts[level][None, :] + member * widths[level][None, :] + offset[None, :]
    order = np.empty(b * n, dtype=np.int64)
    order[position.reshape(-1)] = np.arange(b * n)                   # forest index -> flat (b, n)

    def nodes(x):
        return x.reshape((b * n,) + x.shape[2:])[order]

    parent = np.where(t.parent == NO_PARENT, NO_PARENT,
                      np.take_along_axis(position, np.maximum(t.parent, 0), axis=1))
    row_offset = member * rows
    tensors = GameTensors(
        parent=nodes(parent).astype(np.int32),
        parent_slot=nodes(t.parent_slot),
        node_kind=nodes(t.node_kind),
        node_player=nodes(t.node_player),
        node_infoset=nodes(t.node_infoset + row_offset).astype(np.int32),
        edge_owner=nodes(t.edge_owner),
        edge_index=nodes(t.edge_index + row_offset * actions).astype(np.int32),
        chance_prob=nodes(t.chance_prob),
        payoff=nodes(t.payoff),
        legal_mask=t.legal_mask.reshape(b * rows, actions),
        infoset_player=t.infoset_player.reshape(-1),
        infoset_rep=np.take_along_axis(position, t.infoset_rep,
                                       axis=1).reshape(-1).astype(np.int32),
    )
    return tensors, tuple(int(x) for x in b * starts)


#: Tensors that differ between members of a stack that shares one tree shape.
_DATA_FIELDS = ("payoff", "chance_prob")


def shared_structure(batch: LoweredGame) -> GameTensors | None:
    """If every member has the same tree (only payoffs and chance probabilities may
    differ), one game's tensors with ``payoff [N, P, B]`` and ``chance_prob [N, B]``:
    a trailing batch axis, so every index gather is shared by the batch. Else None.
    """
    if batch.batch_size is None:
        raise ValueError("shared_structure() takes a stacked LoweredGame (see stack())")
    t = batch.tensors
    for name, x in zip(t._fields, t):
        if name not in _DATA_FIELDS and not (x == x[:1]).all():
            return None
    first = GameTensors(*(x[0] for x in t))
    return first._replace(payoff=np.moveaxis(t.payoff, 0, -1),
                          chance_prob=np.moveaxis(t.chance_prob, 0, -1))
