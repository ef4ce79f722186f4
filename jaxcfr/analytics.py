"""Exact analytics of a profile on the lowered tensors: values, best responses, exploitability.

All functions take one game's tensors (vmap them for a stack) and a profile
``strategy`` of shape ``[I, A, *b]`` (rows of every player; the sink row and
padding rows are ignored).

Best response: player ``i``'s pure best response is found by sweeping
"compute values under the current choice, then pick the best action of every
row of player ``i``" ``br_rounds`` times. A row's choice is final once the rows
below it are, so ``LoweredGame.br_rounds`` (the most own decisions on a path)
sweeps are exact, also when an information set's members lie at different depths.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxcfr import passes
from jaxcfr.lowering import GameTensors

__all__ = ["Evaluation", "expected_values", "best_response", "evaluate", "history_values",
           "infoset_values"]


class Evaluation(NamedTuple):
    """Exact metrics of a profile (``*b``: trailing batch axes)."""
    values: jax.Array                # [P, *b] expected value of the profile per player
    best_response_values: jax.Array  # [P, *b] value of each player's best response
    nash_conv: jax.Array             # [*b]    sum over players of (BR value - value)


def expected_values(t: GameTensors, s: passes.Structure, strategy: jax.Array) -> jax.Array:
    """Expected payoff of each player under ``strategy``: ``[P, *b]``."""
    edge = passes.edge_probabilities(t, strategy)
    return passes.value_pass(t, s, edge)[0]


def history_values(t: GameTensors, s: passes.Structure, strategy: jax.Array) -> jax.Array:
    """Continuation value of every node (history) for every player: ``[N, P, *b]``."""
    return passes.value_pass(t, s, passes.edge_probabilities(t, strategy))


def infoset_values(t: GameTensors, s: passes.Structure, strategy: jax.Array) -> jax.Array:
    """Owner's value of every row given it is reached: ``[I, *b]``.

    ``sum_h reach_-i(h) v_i(h) / sum_h reach_-i(h)`` over the members ``h``
    (0 where no member is reachable by the others).
    """
    edge = passes.edge_probabilities(t, strategy)
    reach = passes.reach_pass(t, s, edge)
    values = passes.value_pass(t, s, edge)
    opp = passes.opponent_reach(reach)                                    # [N, P, *b]
    owner = jnp.clip(t.node_player, 0, s.num_players - 1)
    decision = passes.trail(t.node_kind == 0, opp.ndim - 1)
    w = jnp.where(decision, passes.pick_player(opp, owner), 0)
    rows = t.legal_mask.shape[0]
    num = jax.ops.segment_sum(w * passes.pick_player(values, owner), t.node_infoset, num_segments=rows)
    den = jax.ops.segment_sum(w, t.node_infoset, num_segments=rows)
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1), 0)


def best_response(t: GameTensors, s: passes.Structure, strategy: jax.Array, player,
                  rounds: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Player ``player``'s pure best response to ``strategy`` and its value.

    Args:
      rounds: number of sweeps (``LoweredGame.br_rounds``; traced, so it never recompiles).
    Returns:
      ``(profile [I, A, *b], value [*b])``: ``strategy`` with ``player``'s rows
      replaced by the best response, and that player's expected value under it.
    """
    rows, actions = t.legal_mask.shape
    mask = passes.trail(t.legal_mask & t.abstraction_mask, strategy.ndim)
    mine = passes.trail(t.infoset_player == player, strategy.ndim)
    edge0 = passes.edge_probabilities(t, strategy)
    opp = passes.opponent_reach(passes.reach_pass(t, s, edge0))   # independent of player's rows

    def sweep(_, profile):
        values = passes.value_pass(t, s, passes.edge_probabilities(t, profile))
        q = passes.action_values(t, s, opp, values, rows, actions)
        q = jnp.where(mask, q, -jnp.inf)
        best = jax.nn.one_hot(jnp.argmax(q, axis=1), actions, axis=1, dtype=profile.dtype)
        return jnp.where(mine, best, profile)

    profile = jax.lax.fori_loop(0, rounds, sweep, strategy)
    value = expected_values(t, s, profile)[player]
    return profile, value


def evaluate(t: GameTensors, s: passes.Structure, strategy: jax.Array,
             rounds: jax.Array) -> Evaluation:
    """Values, best-response values and NashConv of ``strategy`` (exact)."""
    values = expected_values(t, s, strategy)
    # one compiled best response, vmapped over the (traced) responding player
    br = jax.vmap(lambda p: best_response(t, s, strategy, p, rounds)[1])(
        jnp.arange(s.num_players))
    return Evaluation(values, br, (br - values).sum(axis=0))
