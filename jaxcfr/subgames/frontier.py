"""Depth-limited subgames: the frontier of a cut subgame, valued by the blueprint.

A subgame cut at ``depth_limit`` (moves below its roots, chance included) ends at its
*frontier*: the non-terminal histories exactly ``depth_limit`` moves below a root. A
frontier history ``h`` is worth its blueprint continuation values: ``v(h)``, every
player's expected payoff from ``h`` on when everyone plays the blueprint (the seed's
"subgame continuation values", :func:`jaxcfr.solvers.analytics.history_values`, exact, on
the device).

Multi-valued frontiers (Brown, Sandholm & Amos 2018): at each frontier history the
opponent ``o`` of the re-solving player picks, at its information there, one of ``k``
continuation strategies ``s_1..s_k`` for itself; the history is worth ``v_j(h)``, the
values when ``o`` plays ``s_j`` and everyone else the blueprint below ``h``. ``s_1`` is
the blueprint, ``s_2`` ``o``'s best response to it (below the frontier the re-solver plays
the blueprint, so this is the continuation that punishes it most, up to how ``o``'s
information sets below weigh their histories), and :func:`biased` makes the others the
paper's way (the blueprint with one action's probability multiplied, rows renormalised).
The re-solver then cannot count on ``o`` continuing as the blueprint does.

Shapes: ``F`` frontier histories, ``k`` continuations, ``P`` players.
"""

from __future__ import annotations

import functools
from typing import Hashable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import precision
from jaxcfr.game.contract import GameError
from jaxcfr.solvers.analytics import best_responses, history_values
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.tensors import DECISION, TERMINAL_NODE, GameTensors, LoweredGame, Structure, to_device

__all__ = ["frontier_nodes", "continuation_values", "biased", "frontier_keys"]


def frontier_nodes(index: TreeIndex, roots: np.ndarray, depth_limit: int) -> np.ndarray:
    """``[F]`` the non-terminal histories ``depth_limit`` moves below the roots."""
    nodes = index.nodes_below(roots)                                  # pre-order
    nodes = nodes[index.kind[nodes] != TERMINAL_NODE]
    below = index.depth[nodes] - index.depth[roots[index.root_of(roots, nodes)]]
    return np.sort(nodes[below == depth_limit])


@functools.partial(jax.jit, static_argnames=("structure",))
def _values(tensors: GameTensors, tables: jax.Array, *, structure: Structure) -> jax.Array:
    return history_values(tensors, structure, tables)                 # [N, P, k]


def continuation_values(lowered: LoweredGame, tables: Sequence[np.ndarray], nodes: np.ndarray,
                        *, dtype="float64") -> np.ndarray:
    """``[F, P, k]``: every player's value of each of ``nodes`` under each profile of
    ``tables`` (``k`` tables ``[I, A]`` of ``lowered``), in one pass on the device."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        stacked = jnp.asarray(np.stack([np.asarray(t) for t in tables], axis=-1), dtype)
        out = _values(to_device(lowered.tensors, dtype), stacked, structure=lowered.structure)
        return np.asarray(out, dtype=np.float64)[nodes]


def biased(lowered: LoweredGame, table: np.ndarray, player: int, k: int,
           factor: float = 5.0) -> list[np.ndarray]:
    """``k`` continuation profiles: ``table``; ``player``'s best response to it; then
    ``table`` with ``player``'s action in slot ``j`` (``j = 0..k-3``; where a row has fewer
    actions, its last) multiplied by ``factor`` and every row of ``player`` renormalised
    (Brown, Sandholm & Amos 2018 bias towards fold, call and raise this way)."""
    table = np.asarray(table, dtype=np.float64)
    legal = np.asarray(lowered.tensors.legal_mask)
    mine = np.asarray(lowered.tensors.infoset_player) == player
    width = legal.sum(axis=1)
    out = [table]
    if k > 1:
        out.append(best_responses(lowered, table).tables[player])
    for j in range(k - 2):
        scale = np.ones_like(table)
        slot = np.minimum(j, np.maximum(width - 1, 0))
        scale[np.arange(len(table)), slot] = factor
        new = np.where(legal, table * scale, 0.0)
        total = new.sum(axis=1, keepdims=True)
        new = np.where(total > 0, new / np.where(total > 0, total, 1), table)
        out.append(np.where(mine[:, None], new, table))
    return out


def frontier_keys(index: TreeIndex, nodes: np.ndarray, player: int, game) -> list[Hashable]:
    """``player``'s information-set key at each frontier history (where ``player`` picks a
    continuation): the lowered row's key where it acts there, else the game's
    ``infoset_key(player)`` of the replayed state.

    Raises:
      ValueError: the game is not given and ``player`` does not act at some frontier history
        (its information there is not in the lowered tables).
    """
    lowered = index.lowered
    keys = []
    for n in nodes:
        n = int(n)
        if index.kind[n] == DECISION and int(index.player[n]) == player:
            keys.append(lowered.infoset_keys[int(index.row[n])][1])
            continue
        if game is None:
            raise ValueError("a multi-valued frontier needs the game itself (not only its "
                             f"lowered form): player {player}'s information at "
                             f"{list(index.path(n))} is not in the lowered tables")
        state = game.clone()
        for action in index.path(n):
            state.step(action)
        try:
            keys.append(state.infoset_key(player))
        except GameError as e:
            raise e.with_context(history=index.path(n)) from None
    return keys
