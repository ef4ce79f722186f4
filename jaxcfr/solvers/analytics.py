"""Exact analytics of a profile on the lowered tensors: values, best responses, exploitability.

:func:`evaluate` is the one evaluation path: a lowered game (single or stacked) and a
strategy table (``[I, A]``, ``[I, A, *b]`` or ``[B, I, A, *b]``) in, the metrics of
:data:`~jaxcfr.solvers.metric_record.METRIC_KEYS` out, with the dispatcher that picks the
tightest metric. The run loop, ``jaxcfr eval``, profiles and the tests all call it.

:func:`evaluate` and :func:`best_responses` check the caller's table first
(:mod:`jaxcfr.solvers.tables`): a row that is not a distribution over its legal actions
is a :class:`~jaxcfr.solvers.tables.StrategyError` naming its information set (or is
normalised, with ``normalise=True``), and the sink and padding rows are set by the
library, whatever the table holds there.

The kernels below them take one game's tensors (vmap them for a stack) and a profile
``strategy`` of shape ``[I, A, *b]`` (rows of every player) as it is: they read the
sink row's slot 0 as the probability of every chance and root edge, so it must be 1
there (and padding rows likewise); they check nothing.

Best-response values: on a game of perfect recall :func:`evaluate` reads them from the
sequence form (:func:`jaxcfr.kernels.sequence.best_response_values`: one pass over the
leaves and one over each player's rows, a max in place of the strategy's sum; the
evaluation's program is a fraction of the sweeps' to compile). Otherwise, and for the
best-response profiles themselves (:func:`best_response`, :func:`best_responses`,
:func:`counterfactual_values`), player ``i``'s pure best response is found by sweeping
"compute values under the current choice, then pick the best action of every
row of player ``i``" ``br_rounds`` times. A row's choice is final once the rows
below it are, so ``LoweredGame.br_rounds`` (the most own decisions on a path)
sweeps are exact, also when an information set's members lie at different depths.
The two agree to float rounding (``tests/test_sequence.py``).
"""

from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels import passes
from jaxcfr._util import precision, program_cache
from jaxcfr._util.tracing import counted
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr.kernels.numerics import check_payoff_range, trail
from jaxcfr.kernels.passes import best_response, expected_values
from jaxcfr.kernels.values import NODE_PASSES, ValueKernel, choose_kernel, representation
from jaxcfr.solvers import metric_record, tables
from jaxcfr.solvers.tables import StrategyError
from jaxcfr.tensors import DECISION, GameTensors, LoweredGame, Structure, to_device

__all__ = ["Evaluation", "expected_values", "best_response", "evaluate", "prepare_evaluation",
           "exact_metrics",
           "device_tensors", "evaluation_kernel",
           "history_values", "infoset_values",
           "best_responses", "BestResponses", "StrategyError",
           "counterfactual_best_response_values", "counterfactual_values",
           "CounterfactualValues"]



class Evaluation(NamedTuple):
    """Exact metrics of a profile (``*b``: trailing batch axes)."""
    values: jax.Array                # [P, *b] expected value of the profile per player
    best_response_values: jax.Array  # [P, *b] value of each player's best response
    nash_conv: jax.Array             # [*b]    sum over players of (BR value - value)


def history_values(t: GameTensors, s: Structure, strategy: jax.Array) -> jax.Array:
    """Continuation value of every node (history) for every player: ``[N, P, *b]``."""
    return passes.value_pass(t, s, passes.edge_probabilities(t, strategy))


def infoset_values(t: GameTensors, s: Structure, strategy: jax.Array) -> jax.Array:
    """Owner's value of every row given it is reached: ``[I, *b]``.

    ``sum_h reach_-i(h) v_i(h) / sum_h reach_-i(h)`` over the members ``h``
    (0 where no member is reachable by the others).
    """
    edge = passes.edge_probabilities(t, strategy)
    reach = passes.reach_pass(t, s, edge)
    values = passes.value_pass(t, s, edge)
    opp = passes.opponent_reach(reach)                                    # [N, P, *b]
    owner = jnp.clip(t.node_player, 0, s.num_players - 1)
    decision = trail(t.node_kind == DECISION, opp.ndim - 1)
    w = jnp.where(decision, passes.pick_player(opp, owner), 0)
    rows = t.legal_mask.shape[0]
    num = jax.ops.segment_sum(w * passes.pick_player(values, owner), t.node_infoset,
                              num_segments=rows)
    den = jax.ops.segment_sum(w, t.node_infoset, num_segments=rows)
    return jnp.where(den > 0, num / jnp.where(den > 0, den, 1), 0)


def exact_metrics(t: GameTensors, s: Structure, strategy: jax.Array,
                  rounds: jax.Array, values: ValueKernel = NODE_PASSES) -> Evaluation:
    """Values, best-response values and NashConv of ``strategy`` (exact, one game), by the
    value kernel ``values`` the tensors were made for
    (:mod:`jaxcfr.kernels.values`): the sequence form under perfect recall (a pass over
    the leaves and the rows, a far smaller program than the node passes' ``rounds``
    sweeps), the node passes otherwise (same values up to float rounding)."""
    value, br = values.best_response_values(t, s, strategy, rounds)
    return Evaluation(value, br, (br - value).sum(axis=0))


@functools.partial(jax.jit, static_argnames=("structure", "games_batched", "normalise",
                                             "values", "profile"))
@counted("evaluate")
def _metrics(tensors: GameTensors, strategy, rounds: jax.Array, *,
             structure: Structure, games_batched: bool, normalise: bool,
             values: ValueKernel, profile=None):
    """The caller's table (or with ``profile``, the profile of the state ``strategy``)
    checked and repaired (:func:`jaxcfr.solvers.tables.repair`) and its metrics, in one
    program: ``(Evaluation, found)``."""
    if profile is not None:
        strategy = _state_table(tensors, strategy, profile, games_batched)
    table, found = tables.repair(tensors, strategy, batched=games_batched, normalise=normalise)
    fn = functools.partial(exact_metrics, s=structure, rounds=rounds, values=values)
    if games_batched:
        return jax.vmap(lambda t, x: fn(t, strategy=x))(tensors, table), found
    return fn(tensors, strategy=table), found


def _state_table(tensors: GameTensors, state, profile, games_batched: bool) -> jax.Array:
    """``profile(tensors, state)`` (a game's, or each game's of a stack): ``[(B,) I, A, *b]``."""
    return (jax.vmap(profile) if games_batched else profile)(tensors, state)


#: The sequence-form tables (NumPy) of the games evaluated, for as long as each game lives:
#: a game evaluated again (sampled chance's evaluations, a profile's) skips building them
#: (Liar's dice: 0.28 s, against 0.06 s to copy its tensors).
_SEQUENCE_TABLES: "weakref.WeakKeyDictionary[LoweredGame, dict]" = weakref.WeakKeyDictionary()


def evaluation_kernel(lowered: LoweredGame, sequence_form: bool = True) -> ValueKernel:
    """The value kernel :func:`evaluate` computes ``lowered``'s metrics with
    (:func:`jaxcfr.kernels.values.choose_kernel` of its representation on this backend)."""
    return choose_kernel(representation(lowered, sequence_form), jax.default_backend())


def device_tensors(lowered: LoweredGame, dtype, sequence_form: bool = True,
                   values: ValueKernel | None = None) -> GameTensors:
    """``lowered``'s tensors on the device in ``dtype`` (inside its precision scope), with
    the tables of the value kernel ``values`` (default :func:`evaluation_kernel`: the
    sequence form's, :class:`~jaxcfr.kernels.sequence.SequencedTensors`, when the game
    has perfect recall and ``sequence_form``): what :func:`evaluate` reads."""
    values = evaluation_kernel(lowered, sequence_form) if values is None else values
    tensors = to_device(lowered.tensors, dtype)
    built = _SEQUENCE_TABLES.setdefault(lowered, {})
    key = (np.dtype(dtype), values)
    if key not in built:
        built[key] = values.tables(lowered.tensors, lowered.structure, dtype,
                                   stacked=lowered.batch_size is not None)
    if built[key] is None:
        return tensors
    return values.attach(tensors, jax.tree_util.tree_map(on_device, built[key]))


def evaluate(lowered: LoweredGame, strategy, *, dtype="float32",
             tensors: GameTensors | None = None, values: ValueKernel | None = None,
             normalise: bool = False, sequence_form: bool = True,
             profile=None) -> dict[str, Any]:
    """Exact metrics of a strategy table of ``lowered``, as host NumPy values.

    Args:
      lowered: a lowered game, or a stack of them.
      strategy: the profile, rows of every player: ``[I, A, *b]`` for a single game
        (``*b``: trailing batch axes, e.g. hyper-parameter settings), ``[B, I, A, *b]``
        for a stack. Every row of an information set must be a distribution over its
        legal actions (finite, non-negative, summing to 1, nothing on illegal slots;
        :mod:`jaxcfr.solvers.tables` has the tolerance); the sink row and a stack's
        padding rows are the library's: whatever they hold is replaced.
      dtype: ``"float32"`` / ``"float64"`` (or the dtype): the precision of the passes.
      tensors: ``lowered``'s tensors already on the device in ``dtype`` (optional;
        :func:`device_tensors`; with the sequence-form tables or without), with
        ``values``, the value kernel they were made for (:mod:`jaxcfr.kernels.values`).
      normalise: scale each row to sum 1 over its legal actions (a row summing to 0 is
        uniform), e.g. for ``SolverState.strategy_sum`` as it is.
      sequence_form: evaluate a game of perfect recall on the sequence form (the
        default; :func:`jaxcfr.kernels.sequence.best_response_values`), else by the node
        passes' sweeps (:func:`best_response`); the same values up to float rounding.
        Only read when ``tensors`` is not given (:func:`evaluation_kernel`).
      profile: ``strategy`` is a solver state (on the device, in ``dtype``) and
        ``profile(tensors, state)`` its table (a
        :class:`~jaxcfr.solvers.solver.StateProfile`), made inside the evaluation's
        program: a Runner's way, so that no ``[I, A]`` table of its own is held beside the
        program's temporaries (the same numbers as the table made apart).
    Returns:
      A dict with the keys of :data:`~jaxcfr.solvers.metric_record.METRIC_KEYS`; the
      players axis ``P`` comes after the stack axis ``B`` and before ``*b``:

      * ``values`` ``[(B,) P, *b]``: each player's expected value;
      * ``best_response_values`` (same shape): each player's best-response value;
      * ``nash_conv`` ``[(B,) *b]``: sum over players of the best-response gains;
      * ``exploitability``: NashConv / 2 for two-player constant-sum games, else ``None``;
      * ``nash_gap``: when the game states its equilibrium value (``nash_value()``),
        each player's best-response value minus that value ``[(B,) 2, *b]``, else ``None``;
      * ``metric`` / ``metric_name``: the tightest of these: the mean gap to the known
        value (named ``exploitability``), else the exploitability, else ``nash_conv``.

    Raises:
      StrategyError: (a ``ValueError``) a row is not a distribution, named by its
        information set's key; ``ValueError``: the table's shape does not fit.

    Example::

        >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
        >>> uniform = lowered.tensors.legal_mask / lowered.tensors.legal_mask.sum(1, keepdims=True)
        >>> jaxcfr.evaluate(lowered, uniform)["exploitability"]
    """
    dtype = precision.dtype_of(dtype)
    batched = lowered.batch_size is not None
    with precision.scope(dtype):
        if tensors is None:                  # (a Runner checked its own when it made them)
            values = evaluation_kernel(lowered, sequence_form)
            check_payoff_range(values.payoffs(lowered.tensors), dtype,
                               lowered.name or "the game")
            tensors = device_tensors(lowered, dtype, values=values)
        elif values is None:
            raise ValueError("evaluate() was given tensors without the value kernel they were "
                             "made for (values=)")
        args, static = _metrics_call(lowered, strategy, dtype, tensors, values, normalise,
                                     profile)
        # (found on disk before tracing, where it can be)
        ev, found = program_cache.call(_metrics, args, static, rarely=True)
        table = args[1]
        if profile is not None:        # the table a problem is shown in, made only then
            table = functools.partial(_state_table, tensors, args[1], profile, batched)
        tables.check(lowered, table, found)
        # (gathered from every process when a batch is sharded over several)
        values = to_host(ev.values, dtype=np.float64)
        br = to_host(ev.best_response_values, dtype=np.float64)
        nash_conv = to_host(ev.nash_conv, dtype=np.float64)
    return _dispatch(lowered, values, br, nash_conv, players_axis=1 if batched else 0)


def _metrics_call(lowered: LoweredGame, strategy, dtype, tensors: GameTensors,
                  values: ValueKernel, normalise: bool, profile=None) -> tuple[tuple, dict]:
    """The arguments and static arguments :func:`evaluate` runs ``_metrics`` with (in
    ``dtype``'s precision scope): the strategy ``[(B,) I, A, *b]`` on the device (or with
    ``profile``, the state it is made of), its shape checked against the game's."""
    batched = lowered.batch_size is not None
    table = on_device(strategy, dtype) if profile is None else strategy
    # a state's profile has the shape of its tables (no trace: a process that loads the
    # program from the caches traces nothing)
    shape = table.shape if profile is None else next(iter(table.tables.values())).shape
    want = 3 if batched else 2
    if len(shape) < want or shape[want - 2:want] != lowered.tensors.legal_mask.shape[-2:]:
        raise ValueError(f"strategy of shape {tuple(shape)} does not fit the game's "
                         f"[{'B, ' if batched else ''}I, A] = "
                         f"{tuple(lowered.tensors.legal_mask.shape)}")
    static = dict(structure=lowered.structure, games_batched=batched,
                  normalise=bool(normalise), values=values)
    if profile is not None:             # (not in the key of a table's program)
        static["profile"] = profile
    return (tensors, table, on_device(np.int32(lowered.br_rounds))), static


def prepare_evaluation(lowered: LoweredGame, strategy, *, dtype, tensors: GameTensors,
                       values: ValueKernel, normalise: bool = False, profile=None) -> None:
    """Compile (or load) the program :func:`evaluate` runs on a strategy of ``strategy``'s
    shape and type (with ``profile``: on a state of ``strategy``'s), without running it
    (a Runner's warm-up: evaluating a zero state of the README turn cost as much CPU as a
    real evaluation, 0.4 s, for nothing)."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        args, static = _metrics_call(lowered, strategy, dtype, tensors, values, normalise,
                                     profile)
        program_cache.program(_metrics, args, static, rarely=True)


class BestResponses(NamedTuple):
    """Each player's pure best response to a profile (host NumPy arrays, one game)."""
    tables: np.ndarray                # [P, I, A] the profile with player p's rows replaced by
                                      #           one-hot rows of p's best response (table p)
    best_response_values: np.ndarray  # [P] each player's value when best responding
    values: np.ndarray                # [P] each player's value under the profile itself


@functools.partial(jax.jit, static_argnames=("structure",))
@counted("best_responses")
def _best_responses(tensors: GameTensors, strategy: jax.Array, rounds: jax.Array, *,
                    structure: Structure):
    players = jnp.arange(structure.num_players)
    tables, br = jax.vmap(lambda p: best_response(tensors, structure, strategy, p, rounds))(
        players)
    return tables, br, expected_values(tensors, structure, strategy)


def _single_game_table(lowered: LoweredGame, strategy, dtype) -> jax.Array:
    """``strategy`` as a ``[I, A]`` table of ``dtype`` for the single-game analytics (inside
    ``precision.scope(dtype)``): the payoffs must fit ``dtype`` and the table the game."""
    check_payoff_range(lowered.tensors.payoff, dtype, lowered.name or "the game")
    table = jnp.asarray(strategy, dtype)
    if table.shape != lowered.tensors.legal_mask.shape:
        raise ValueError(f"strategy of shape {tuple(table.shape)} does not fit the game's "
                         f"[I, A] = {tuple(lowered.tensors.legal_mask.shape)}")
    return table


def best_responses(lowered: LoweredGame, strategy, *, dtype="float64",
                   normalise: bool = False) -> BestResponses:
    """Each player's pure best response to ``strategy`` in ``lowered`` (one game), and values.

    Args:
      strategy: ``[I, A]`` rows of every player, checked as :func:`evaluate` checks them.
      dtype: the precision of the passes (ties between actions go to the first).
      normalise: as in :func:`evaluate`.
    Returns:
      :class:`BestResponses`: the ``[P, I, A]`` tables (the responses :func:`evaluate`
      values), each player's best-response value and value under ``strategy``.

    Example::

        >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
        >>> uniform = lowered.tensors.legal_mask / lowered.tensors.legal_mask.sum(1, keepdims=True)
        >>> best_responses(lowered, uniform).tables.shape         # (2, 13, 2)
    """
    if lowered.batch_size is not None:
        raise ValueError("best_responses() takes a single lowered game, not a stack")
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        table = _single_game_table(lowered, strategy, dtype)
        tensors = to_device(lowered.tensors, dtype)
        table = tables.prepare(lowered, tensors, table, normalise=normalise)
        out = _best_responses(tensors, table,
                              jnp.asarray(lowered.br_rounds, jnp.int32),
                              structure=lowered.structure)
        return BestResponses(*(np.asarray(x, dtype=np.float64) for x in out))


class CounterfactualValues(NamedTuple):
    """Counterfactual best-response values of a profile (host NumPy arrays, one game).

    Player ``i``'s counterfactual best-response value of a history ``h`` is
    ``reach_-i(h) * v_i(h)``: the others' and chance's reach of ``h`` under the profile
    times ``i``'s value at ``h`` when ``i`` best responds below it and the others play the
    profile. Summed over an information set's members it is the set's counterfactual
    best-response value (CBV, unnormalised; divide by the summed reach for the value
    given the set is reached).
    """
    reach: np.ndarray             # [N, P + 1] each player's own reach (last: chance's)
    values: np.ndarray            # [P, N] player i's value of each node when i best responds
    action_values: np.ndarray     # [I, A] per row, for its owner best responding below:
                                  #        sum over members h of reach_-owner(h) v(h a)
    infoset_values: np.ndarray    # [I] CBV of each row: its owner's best action value
                                  #     (0 for the sink and rows no one else reaches)


def counterfactual_best_response_values(t: GameTensors, s: Structure, strategy: jax.Array,
                                        rounds: jax.Array):
    """Every player's best response to ``strategy``, as counterfactual values (one game).

    Returns:
      ``(reach [N, P + 1, *b], values [P, N, *b], action_values [I, A, *b])``: the
      profile's reach, each player's node values under its own best response (the
      others fixed), and each row's action values for its owner under that response
      (see :class:`CounterfactualValues`).
    """
    rows, actions = t.legal_mask.shape
    reach = passes.reach_pass(t, s, passes.edge_probabilities(t, strategy))
    opp = passes.opponent_reach(reach)                   # the others' reach: [N, P, *b]

    def one(player):
        profile, _ = best_response(t, s, strategy, player, rounds)
        edge = passes.edge_probabilities(t, profile)
        values = passes.value_pass(t, s, edge, players=player[None])        # [N, 1, *b]
        q = passes.action_values(t, s, opp, values, rows, actions, players=player[None])
        return values[:, 0], q

    values, q = jax.vmap(one)(jnp.arange(s.num_players))  # [P, N, *b], [P, I, A, *b]
    owner = jnp.clip(t.infoset_player, 0, s.num_players - 1)
    q = jnp.take_along_axis(q, trail(owner, q.ndim - 1)[None], axis=0)[0]
    q = jnp.where(trail(t.infoset_player >= 0, q.ndim), q, 0)
    return reach, values, q


@functools.partial(jax.jit, static_argnames=("structure",))
@counted("counterfactual")
def _counterfactual(tensors: GameTensors, strategy: jax.Array, rounds: jax.Array, *,
                    structure: Structure):
    return counterfactual_best_response_values(tensors, structure, strategy, rounds)


def counterfactual_values(lowered: LoweredGame, strategy, *,
                          dtype="float64") -> CounterfactualValues:
    """Counterfactual best-response values of every history and information set (exact,
    on the device, from the same tensors as :func:`evaluate`).

    The user-facing host function (what subgame gadgets read): each player best responds
    below the node. The kernels' ``counterfactual_action_values``
    (:meth:`jaxcfr.kernels.values.ValueKernel.counterfactual_action_values`) are another
    quantity, the profile's own action values that the regret update reads.

    Args:
      lowered: one lowered game (not a stack).
      strategy: ``[I, A]`` rows of every player.
      dtype: the precision of the passes.
    Returns:
      :class:`CounterfactualValues`. ``reach[:, :P].prod(1) * reach[:, P]`` is the
      profile's reach of each node; the CBV of a set of histories ``H`` of player ``i``
      is ``sum over h in H of reach_-i(h) * values[i, h]``.

    Example::

        >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
        >>> uniform = lowered.tensors.legal_mask / lowered.tensors.legal_mask.sum(1, keepdims=True)
        >>> counterfactual_values(lowered, uniform).infoset_values.shape        # (13,)
    """
    if lowered.batch_size is not None:
        raise ValueError("counterfactual_values() takes a single lowered game, not a stack")
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        table = _single_game_table(lowered, strategy, dtype)
        reach, values, q = _counterfactual(to_device(lowered.tensors, dtype), table,
                                           jnp.asarray(lowered.br_rounds, jnp.int32),
                                           structure=lowered.structure)
        reach, values, q = (np.asarray(x, dtype=np.float64) for x in (reach, values, q))
    legal = np.asarray(lowered.tensors.legal_mask)
    best = np.where(legal, q, -np.inf).max(axis=1)
    best = np.where(np.asarray(lowered.tensors.infoset_player) >= 0, best, 0.0)
    return CounterfactualValues(reach, values, q, best)


def _dispatch(lowered: LoweredGame, values, br, nash_conv, players_axis: int) -> dict[str, Any]:
    """Add the exploitability, the gap to a known value, and the tightest metric."""
    two = lowered.num_players == 2
    exploitability = nash_conv / 2 if two and lowered.constant_sum is not None else None
    gap = None
    if two and lowered.nash_value is not None:
        shape = (2,) + (1,) * (br.ndim - 1 - players_axis)
        gap = br - np.asarray(lowered.nash_value).reshape(shape)
    return metric_record.metrics(values, br, nash_conv, exploitability, gap,
                                 players_axis=players_axis)
