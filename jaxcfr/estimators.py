"""Estimators: the first part of a CFR update, counterfactual regrets and averaging weights.

An update (see :mod:`jaxcfr.solvers`) is an *estimator*, a *regret rule* and an
*averaging rule*. The estimator reads the tensors and the current strategy and
returns an :class:`Estimate` for the rows it touched; the rules, which the presets
configure, fold it into the accumulated tables. Every estimator has the signature::

    estimate(tensors, structure, strategy, player, key, exploration) -> Estimate

``strategy`` is ``[I, A, *b]`` (trailing batch axes ``*b``: hyper-parameter
settings, seeds); ``player`` is ``None`` (update every player at once) or a traced
int scalar (one player of an alternating update); ``key`` is a PRNG key array of
shape ``[*b]`` (one per batch member; the exact estimator ignores it) and
``exploration`` a scalar or ``[*b]`` float (outcome sampling's epsilon).

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxcfr import passes
from jaxcfr.numerics import trail
from jaxcfr.tensors import GameTensors, Structure

__all__ = ["Estimate", "exact", "players_of", "rows_of"]


class Estimate(NamedTuple):
    """What an estimator returns (``*b``: trailing batch axes).

    ``average_rows`` says whose strategy sums this half-step owns: the averaging rule
    decays exactly those rows and adds ``average`` to them. Over one iteration every
    owned row is in exactly one half-step's ``average_rows`` (an alternating update's
    half-steps partition the players), so every row decays once per iteration.
    """
    regret: jax.Array        # [I, A, *b] instantaneous counterfactual regret; read on the
                             #            updated player's rows only
    average: jax.Array       # [I, A, *b] contribution to the strategy sums of average_rows
    average_rows: jax.Array  # [I] bool   the rows whose strategy sums this half-step updates


def players_of(structure: Structure, player):
    """The players an update of ``player`` values: all (a static tuple) or ``player[None]``."""
    return tuple(range(structure.num_players)) if player is None else player[None]


def rows_of(t: GameTensors, player) -> jax.Array:
    """``[I]`` bool: the rows an update of ``player`` changes (every owned row for ``None``)."""
    return t.infoset_player >= 0 if player is None else t.infoset_player == player


def exact(t: GameTensors, s: Structure, strategy: jax.Array, player, key=None,
          exploration=None) -> Estimate:
    """Full-width CFR: exact counterfactual values from one reach and one value pass.

    ``regret[I, a] = q(I, a) - sum_b strategy(I, b) q(I, b)`` with ``q`` the
    counterfactual action values of :func:`jaxcfr.passes.action_values`; the averaging
    contribution of a row of an updated player is its owner's reach times the strategy.
    Costs two dense passes over all ``N`` nodes.
    """
    del key, exploration
    rows, actions = t.legal_mask.shape
    m = trail(t.legal_mask & t.abstraction_mask, strategy.ndim)
    players = players_of(s, player)
    edge = passes.edge_probabilities(t, strategy)
    reach = passes.reach_pass(t, s, edge)
    values = passes.value_pass(t, s, edge, players)
    q = passes.action_values(t, s, passes.opponent_reach(reach), values, rows, actions, players)
    v = (strategy * q).sum(axis=1, keepdims=True)
    regret = jnp.where(m, q - v, 0)                                          # [I, A, *b]
    own = passes.own_reach_at_rows(t, reach)                                 # [I, *b]
    return Estimate(regret, own[:, None] * strategy, rows_of(t, player))


#: Estimator by ``Solver.sampling`` name.
ESTIMATORS = {"none": exact}
