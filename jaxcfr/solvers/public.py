"""The CFR family on public trees: the exact estimator over hand vectors, and exact metrics.

A public tree's rows are (player, public decision node, hand) (:mod:`jaxcfr.lowering.public`),
so every regret rule, averaging rule, preset and update order of
:class:`~jaxcfr.solvers.solver.Solver` applies unchanged: only the estimator differs.
:class:`PublicExact` computes the exact counterfactual regrets and averaging
contributions from :func:`jaxcfr.kernels.public.counterfactual_action_values` (reach and values
as ``[public nodes, hands]`` tables, terminals as operators on the opponent's reach
vector) in place of the history tree's passes.

Example::

    >>> solver = public_solver(jaxcfr.cfr_plus())
    >>> tensors = public_device_tensors(lowered, "float64")
    >>> state = solver.init(tensors, dtype=np.float64)
    >>> state = solver.update(tensors, lowered.structure, state, solver.hyperparams(np.float64))
    >>> evaluate_public(lowered, solver.average_strategy(tensors, state))["exploitability"]
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

import jax
import numpy as np

from jaxcfr._util import precision
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr.kernels import public as kernels
from jaxcfr.kernels.numerics import normalise
from jaxcfr.solvers.estimator_protocol import DenseEstimate, Estimator, Exact, rows_of
from jaxcfr.solvers.metric_record import metrics
from jaxcfr.solvers.solver import Solver
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["PublicExact", "public_solver", "public_device_tensors", "public_metrics",
           "evaluate_public", "best_response_public", "hand_values_public",
           "range_values_public"]


@dataclasses.dataclass(frozen=True)
class PublicExact(Estimator):
    """Full-width CFR on a public tree: exact counterfactual regrets of every row of the
    updated players, and their own reach times the strategy as averaging contributions
    (as :class:`~jaxcfr.solvers.estimator_protocol.Exact` on the history tree of the same game)."""
    name: ClassVar[str] = "public"

    def estimate(self, t: PublicTensors, s: PublicStructure, current, player, keys=None,
                 hp=None, arrays=None) -> DenseEstimate:
        players = tuple(range(s.num_players)) if player is None else player[None]
        regret, own = kernels.counterfactual_regrets(t, s, current, players)
        return DenseEstimate(regret, own[:, None] * current, rows_of(t, player))

    def describe(self) -> str:
        return "exact (public tree)"


def public_solver(solver: Solver) -> Solver:
    """``solver`` (a preset or any exact :class:`Solver`) on public trees: the same rules
    and update order with :class:`PublicExact` as its estimator."""
    if not isinstance(solver.estimator, (Exact, PublicExact)):
        raise ValueError(f"{solver!r} samples ({solver.estimator.describe()}); public trees "
                         "are solved full width (sampling=None)")
    return dataclasses.replace(solver, estimator=PublicExact())


def public_device_tensors(lowered, dtype) -> PublicTensors:
    """``lowered``'s :class:`PublicTensors` on the device, floats in ``dtype``."""
    dtype = precision.dtype_of(dtype)
    return PublicTensors(*(on_device(np.asarray(x), dtype if np.issubdtype(
        np.asarray(x).dtype, np.floating) else None) for x in lowered.tensors))


@functools.partial(jax.jit, static_argnames=("structure",))
def public_metrics(tensors: PublicTensors, strategy: jax.Array, *,
                   structure: PublicStructure) -> tuple[jax.Array, jax.Array]:
    """``(values [P, *b], best_response_values [P, *b])`` of a profile ``[I, A, *b]``
    (one compiled program per game shape)."""
    return kernels.metrics(tensors, structure, strategy)


def evaluate_public(lowered, strategy, *, dtype="float64",
                    tensors: PublicTensors | None = None, normalise_rows: bool = True
                    ) -> dict[str, Any]:
    """Exact metrics of a strategy table ``[I, A, *b]`` of a public tree, on the host.

    Rows are normalised over their legal actions (``normalise_rows``; a row of zeros is
    uniform), so a strategy sum can be passed as it is. Returns the keys of
    :data:`~jaxcfr.solvers.metric_record.METRIC_KEYS` (as :func:`jaxcfr.evaluate`):
    ``values`` and ``best_response_values`` ``[P, *b]``, ``nash_conv`` ``[*b]``,
    ``exploitability`` (NashConv / 2 for a two-player constant-sum game, else ``None``),
    ``nash_gap`` (each best response's value minus the game's ``nash_value()``, when it
    states one) and the tightest of them, ``metric`` / ``metric_name``.
    """
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        if tensors is None:
            tensors = public_device_tensors(lowered, dtype)
        table = on_device(strategy, dtype)
        if table.shape[:2] != lowered.tensors.row_shape:
            raise ValueError(f"strategy of shape {tuple(table.shape)} does not fit the public "
                             f"tree's [I, A] = {lowered.tensors.row_shape}")
        if normalise_rows:
            table = normalise(table, tensors.legal_mask)
        values, br = public_metrics(tensors, table, structure=lowered.structure)
        values = to_host(values, dtype=np.float64)
        br = to_host(br, dtype=np.float64)
    nash_conv = (br - values).sum(axis=0)
    two = lowered.num_players == 2
    gap = None
    if two and lowered.nash_value is not None:
        gap = br - np.asarray(lowered.nash_value).reshape((2,) + (1,) * (br.ndim - 1))
    return metrics(values, br, nash_conv,
                   nash_conv / 2 if two and lowered.constant_sum is not None else None, gap)


@functools.partial(jax.jit, static_argnames=("structure", "player"))
def _best_response(tensors, strategy, *, structure, player):
    return kernels.best_response(tensors, structure, strategy, player)


def best_response_public(lowered, strategy, player: int, *, dtype="float64") -> np.ndarray:
    """``strategy`` (``[I, A, *b]``, rows normalised) with ``player``'s rows replaced by
    a pure best response to the others' (one-hot rows), on the host."""
    if isinstance(player, bool) or player not in range(lowered.num_players):
        raise ValueError(f"player must be 0 to {lowered.num_players - 1}, got {player!r}")
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        table = normalise(on_device(strategy, dtype), tensors.legal_mask)
        out = _best_response(tensors, table, structure=lowered.structure, player=int(player))
        return to_host(out, dtype=np.float64)


@functools.partial(jax.jit, static_argnames=("structure", "player"))
def _hand_terms(tensors, strategy, *, structure, player):
    """``(q [I, A], reach [N, P, H])``: ``player``'s counterfactual action values and
    every player's own reach."""
    q, _ = kernels.counterfactual_action_values(tensors, structure, strategy, (player,))
    reach = kernels.reach_pass(tensors, structure,
                               kernels.edge_probabilities(tensors, structure, strategy))
    return q, reach


def hand_values_public(lowered, strategy, node: int, *, dtype="float64"
                       ) -> dict[str, np.ndarray]:
    """Per-hand expected values of the acting player at public decision ``node`` under the
    profile ``strategy`` ``[I, A]`` (rows normalised), on the host.

    A hand's value is its counterfactual value divided by its counterfactual reach: what
    the hand wins on average once the node is reached holding it, in the game's payoff
    units (chips, net of the player's half of the starting pot for a hold'em spot),
    against the opponent's range at the node (their reach, card removal included)::

        reach(h) = c(n) a(n, h) w(h) sum_o C(h, o) w_o(o) a_o(n, o) R_o(n, o)
        action_ev(h, a) = q(n, h, a) / reach(h),   ev(h) = sum_a sigma(h, a) action_ev(h, a)

    (``c``: the public chance reach, ``a``: not blocked, ``w``: prior weights, ``C``:
    compatibility over the deal's normaliser, ``R_o``: the opponent's strategy's reach).
    NaN where the reach is 0. Summed over the hands weighted by ``reach``, ``ev`` is the
    player's counterfactual value of the node (at the root: the game value).

    Returns: ``{"ev": [H_p], "action_ev": [H_p, A_n], "reach": [H_p], "strategy":
    [H_p, A_n]}`` (``A_n``: the node's actions).
    """
    t = lowered.tensors
    if not 0 <= node < len(t.node_base) or t.node_base[node] < 0:
        raise ValueError(f"node {node!r} is not a public decision node")
    player = int(t.node_player[node])
    if lowered.num_players != 2:
        raise ValueError(f"hand values are computed for two-player public trees; this one "
                         f"has {lowered.num_players} players")
    other = 1 - player
    sizes = [len(x) for x in lowered.hands.labels]
    actions = len(lowered.node_actions[node])
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        table = normalise(on_device(strategy, dtype), tensors.legal_mask)
        q, reach = _hand_terms(tensors, table, structure=lowered.structure, player=player)
        q = to_host(q, dtype=np.float64)
        reach = to_host(reach, dtype=np.float64)
        table = to_host(table, dtype=np.float64)
    rows = int(t.node_base[node]) + np.arange(sizes[player])
    alive = np.asarray(t.alive[t.node_path[node]], np.float64)                 # [P, H]
    w = np.asarray(t.weights, np.float64)
    compat = lowered.compatibility                                            # [H_0, H_1]
    if player == 1:
        compat = compat.T                                                     # [H_p, H_o]
    opponent = (w[other] * alive[other] * reach[node, other])[:sizes[other]]
    mass = (float(t.chance_reach[node]) * w[player, :sizes[player]]
            * alive[player, :sizes[player]] * (compat @ opponent))            # [H_p]
    sigma = table[rows, :actions]
    with np.errstate(invalid="ignore", divide="ignore"):
        action_ev = np.where(mass[:, None] > 0, q[rows, :actions] / mass[:, None], np.nan)
    ev = np.where(mass > 0, np.sum(np.where(sigma > 0, sigma * action_ev, 0.0), axis=1),
                  np.nan)
    return {"ev": ev, "action_ev": action_ev, "reach": mass, "strategy": sigma}


@functools.partial(jax.jit, static_argnames=("structure",))
def _range_values(tensors, strategy, *, structure):
    edge = kernels.edge_probabilities(tensors, structure, strategy)
    reach = kernels.reach_pass(tensors, structure, edge)
    best = [kernels.value_pass(tensors, structure, edge, reach, p, best=True)
            for p in range(structure.num_players)]
    return reach, jax.numpy.stack(best)


def range_values_public(lowered, strategy, *, dtype="float64"
                        ) -> tuple[np.ndarray, np.ndarray]:
    """What re-solving at a public node reads of a profile ``strategy`` ``[I, A]`` (rows
    normalised), on the host: ``(reach [N, P, H], best [P, N, H])``, each player's own
    reach of every public node for each hand (its strategy's product, not the prior) and
    each player's counterfactual best-response value of every node for each hand (it
    best responds below the node, the others play ``strategy``; the public chance reach,
    its prior weight, the not-blocked mask and the others' reach included, as
    :func:`jaxcfr.kernels.public.value_pass`): at a public node ``n`` and a hand ``h``
    of player ``o``, ``best[o, n, h]`` is the history tree's counterfactual
    best-response value summed over the histories of ``n`` where ``o`` holds ``h``."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        table = normalise(on_device(strategy, dtype), tensors.legal_mask)
        reach, best = _range_values(tensors, table, structure=lowered.structure)
        return to_host(reach, dtype=np.float64), to_host(best, dtype=np.float64)
