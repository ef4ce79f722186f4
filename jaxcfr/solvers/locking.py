"""Node locking: one player's strategy fixed at chosen information sets, the rest solved.

What poker users know from PioSOLVER and GTO+: a :class:`Lock` holds a strategy table
``[I, A]`` and a mask ``[I]`` of locked rows. It is a traced argument of the solver's
step (:meth:`jaxcfr.solvers.solver.Solver.step`), so changing what is locked (which rows,
which probabilities) never recompiles; ``lock=None`` is the unlocked program.

Under a lock, at every iteration:

* the current strategy at locked rows is the lock (:func:`apply`): every player's
  estimate, the opponents' regrets and the locked player's own other rows, sees it;
* the locked rows' strategy sums are the lock itself (their regrets and predictions
  are kept at 0), so the average strategy there *is* the lock, reached or not;
* every other row is solved as usual, by the solver's own rules.

Exploitability of a locked solve is that of the *restricted game*, in which the locked
player cannot deviate at the locked rows: player ``i``'s best-response value is the
largest value of a strategy of ``i`` that plays the lock at ``i``'s locked rows
(:func:`restricted_best_response`), and ``NashConv = sum_i (BR_i - v_i)`` with those
restricted best responses (exploitability: NashConv / 2 in a two-player zero-sum game).
The solve converges to a Nash equilibrium of that restricted game: the unlocked rows
of the locked player are a best response among the strategies that keep the lock, and
the opponent's strategy a best response to the locked player, lock included (their
value is what they win against the locked strategy). A player with no locked row has
the ordinary best response.

The restricted best response is found as the unrestricted one of the node passes
(:func:`jaxcfr.kernels.passes.best_response`): ``rounds`` sweeps of "values under the
current choice, then the best action at every unlocked row of ``i``", bottom-up
final after as many sweeps as ``i`` has decisions on a path.

Shapes: ``I`` rows, ``A`` actions, ``*b`` trailing batch axes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import precision
from jaxcfr._util.arguments import ArgumentError
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr._util.tracing import counted
from jaxcfr.kernels import passes
from jaxcfr.kernels import public as public_kernels
from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.kernels.values import NODE_PASSES
from jaxcfr.solvers.metric_record import metrics
from jaxcfr.tensors import to_device

__all__ = ["Lock", "apply", "lock_sums", "restricted_best_response", "free_rows",
           "LockError", "lock_from_rows", "evaluate_locked", "evaluate_public_locked",
           "locked_metrics", "locked_public_metrics"]


class LockError(ArgumentError):
    """A lock that does not fit its game: an unknown information set, an action that is
    not legal there, probabilities that are not a distribution (an ``ArgumentError``,
    a ``ValueError``, blaming the ``lock`` argument)."""

    def __init__(self, message: str, argument: str | None = "lock"):
        super().__init__(message, argument)


class Lock(NamedTuple):
    """Locked rows and their strategy (traced: a new lock does not recompile)."""
    strategy: jax.Array   # [I, A] the locked rows' strategy (rows sum to 1 over legal
                          #        actions; other rows are ignored, kept 0)
    mask: jax.Array       # [I] bool the locked rows

    @property
    def rows(self) -> int:
        return int(np.sum(np.asarray(self.mask)))


def apply(strategy: jax.Array, lock: Lock | None) -> jax.Array:
    """``strategy`` ``[I, A, *b]`` with the locked rows replaced by the lock."""
    if lock is None:
        return strategy
    ndim = strategy.ndim
    return jnp.where(trail(lock.mask, ndim), trail(lock.strategy, ndim).astype(strategy.dtype),
                     strategy)


def lock_sums(tables: tuple, lock: Lock | None) -> tuple:
    """The state's tables ``(regret, strategy_sum, strategy_error, prediction)`` (each
    ``[I, A, *b]``, or ``None`` where the solver keeps none) with the locked rows' sums
    set to the lock (the average there is the lock) and their regret, sums' error and
    prediction 0."""
    if lock is None:
        return tables
    regret, total, error, prediction = tables
    ndim = regret.ndim
    mask = trail(lock.mask, ndim)
    zero = jnp.zeros((), regret.dtype)
    locked = jnp.broadcast_to(trail(lock.strategy, ndim).astype(total.dtype), total.shape)

    def cleared(x):
        return None if x is None else jnp.where(mask, zero, x)
    return (cleared(regret), jnp.where(mask, locked, total), cleared(error),
            cleared(prediction))


def restricted_best_response(action_values: Callable[[jax.Array], jax.Array],
                             strategy: jax.Array, legal: jax.Array, mine: jax.Array,
                             rounds) -> jax.Array:
    """A pure best response among the strategies that keep the locked rows.

    Args:
      action_values: ``profile [I, A, *b] -> q [I, A, *b]``, the counterfactual action
        values of the responding player's rows under ``profile``.
      strategy: ``[I, A, *b]`` the profile, locked rows holding the lock.
      legal: ``[I, A]`` bool legal actions.
      mine: ``[I]`` bool the rows the response may change (the player's unlocked rows).
      rounds: sweeps (traced or static; at least the player's decisions on a path).
    Returns:
      ``[I, A, *b]``: ``strategy`` with ``mine`` replaced by the best action's one-hot.
    """
    ndim = strategy.ndim
    actions = strategy.shape[1]
    allowed = trail(legal, ndim)
    free = trail(mine, ndim)

    def sweep(_, profile):
        q = jnp.where(allowed, action_values(profile), -jnp.inf)
        best = jax.nn.one_hot(jnp.argmax(q, axis=1), actions, axis=1, dtype=profile.dtype)
        return jnp.where(free, best, profile)

    return jax.lax.fori_loop(0, rounds, sweep, strategy)


def free_rows(lock: Lock | None, owner, player: int):
    """``[I]`` bool: the rows a best response of ``player`` may change (``owner`` ``[I]``:
    each row's player), i.e. ``player``'s rows not locked."""
    mine = owner == player
    return mine if lock is None else mine & ~lock.mask


# -- exact metrics of the restricted game ------------------------------------------------

def locked_metrics(t, s, strategy: jax.Array, mask: jax.Array, rounds
                   ) -> tuple[jax.Array, jax.Array]:
    """``(values [P, *b], restricted best-response values [P, *b])`` of ``strategy``
    ``[I, A, *b]`` on a history tree (node passes; ``mask`` ``[I]`` the locked rows,
    ``rounds`` the sweeps: ``LoweredGame.br_rounds``)."""
    values = passes.expected_values(t, s, strategy)
    best = []
    for p in range(s.num_players):
        def q_of(profile, p=p):
            return NODE_PASSES.counterfactual_action_values(t, s, profile, (p,))[0]
        free = (t.infoset_player == p) & ~mask
        profile = restricted_best_response(q_of, strategy, t.legal_mask, free, rounds)
        best.append(passes.expected_values(t, s, profile)[p])
    return values, jnp.stack(best)


def locked_public_metrics(t, s, strategy: jax.Array, mask: jax.Array
                          ) -> tuple[jax.Array, jax.Array]:
    """:func:`locked_metrics` on a public tree (:mod:`jaxcfr.kernels.public`; as many
    sweeps as the tree has levels)."""
    def value(profile, p):
        edge = public_kernels.edge_probabilities(t, s, profile)
        reach = public_kernels.reach_pass(t, s, edge)
        return public_kernels.value_pass(t, s, edge, reach, p)[0].sum(axis=0)
    values, best = [], []
    for p in range(2):
        def q_of(profile, p=p):
            return public_kernels.counterfactual_action_values(t, s, profile, (p,))[0]
        free = (t.infoset_player == p) & ~mask
        profile = restricted_best_response(q_of, strategy, t.legal_mask, free,
                                           len(s.level_start))
        values.append(value(strategy, p))
        best.append(value(profile, p))
    return jnp.stack(values), jnp.stack(best)


@functools.partial(jax.jit, static_argnames=("structure",))
@counted("evaluate_locked")
def _history_metrics(tensors, strategy, mask, rounds, *, structure):
    return locked_metrics(tensors, structure, strategy, mask, rounds)


@functools.partial(jax.jit, static_argnames=("structure",))
@counted("evaluate_locked")
def _public_metrics(tensors, strategy, mask, *, structure):
    return locked_public_metrics(tensors, structure, strategy, mask)


def _records(values, br, two_player_constant_sum: bool) -> dict[str, Any]:
    values = to_host(values, dtype=np.float64)
    br = to_host(br, dtype=np.float64)
    nash_conv = (br - values).sum(axis=0)
    return metrics(values, br, nash_conv, nash_conv / 2 if two_player_constant_sum else None)


def _table(strategy, legal, lock: Lock, dtype) -> jax.Array:
    """The profile normalised over legal actions with the lock at locked rows."""
    table = normalise(on_device(strategy, dtype), on_device(np.asarray(legal)))
    return apply(table, Lock(on_device(np.asarray(lock.strategy), dtype),
                             on_device(np.asarray(lock.mask, bool))))


def evaluate_locked(lowered, strategy, lock: Lock, *, dtype="float64",
                    tensors=None) -> dict[str, Any]:
    """Exact metrics of a history tree's profile ``[I, A, *b]`` in the game restricted
    by ``lock`` (see the module): the keys of :func:`jaxcfr.evaluate`, with the
    restricted best responses (``nash_gap`` ``None``: the game's stated equilibrium
    value is the unrestricted game's). Rows are normalised; locked rows are the lock.
    ``tensors``: ``lowered``'s node tensors already on the device in ``dtype``."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        if tensors is None:
            tensors = to_device(lowered.tensors, dtype)
        table = _table(strategy, lowered.tensors.legal_mask, lock, dtype)
        values, br = _history_metrics(tensors, table, on_device(np.asarray(lock.mask, bool)),
                                      on_device(np.int32(lowered.br_rounds)),
                                      structure=lowered.structure)
        return _records(values, br, lowered.num_players == 2 and
                        lowered.constant_sum is not None)


def evaluate_public_locked(lowered, strategy, lock: Lock, *, dtype="float64",
                           tensors=None) -> dict[str, Any]:
    """:func:`evaluate_locked` on a public tree (``tensors``: its device tensors in
    ``dtype``, :func:`jaxcfr.solvers.public.public_device_tensors`)."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        if tensors is None:
            tensors = type(lowered.tensors)(*(
                on_device(np.asarray(x), dtype if np.issubdtype(np.asarray(x).dtype,
                                                                np.floating) else None)
                for x in lowered.tensors))
        table = _table(strategy, lowered.tensors.legal_mask, lock, dtype)
        values, br = _public_metrics(tensors, table, on_device(np.asarray(lock.mask, bool)),
                                     structure=lowered.structure)
        return _records(values, br, lowered.constant_sum is not None)


# -- building a lock on the host ---------------------------------------------------------

#: How far a locked row's probabilities may be from summing to 1.
SUM_TOLERANCE = 1e-6


def lock_from_rows(rows: dict[int, dict], actions_of: Callable[[int], tuple],
                   legal: np.ndarray, name_of: Callable[[int], str]) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """The host tables ``(strategy [I, A] float64, mask [I] bool)`` of a lock given per row.

    Args:
      rows: ``{row: {action: probability}}`` (an action as its label, or its text).
      actions_of: a row's action labels (``[A_row]``, in slot order).
      legal: ``[I, A]`` bool legal actions.
      name_of: the row's information set as the errors name it.
    Raises:
      LockError: an action the row does not have, an illegal action, a negative or
        non-finite probability, probabilities that do not sum to 1.
    """
    num_rows, width = legal.shape
    table = np.zeros((num_rows, width))
    mask = np.zeros(num_rows, bool)
    for row, given in rows.items():
        where = name_of(row)
        if not isinstance(given, dict) or not given:
            raise LockError(f"the lock at {where} must map actions to probabilities, got "
                            f"{given!r}")
        labels = tuple(actions_of(row))
        texts = [str(a) for a in labels]
        for action, p in given.items():
            if action in labels:
                slot = labels.index(action)
            elif str(action) in texts:
                slot = texts.index(str(action))
            else:
                slot = None
            if slot is None or not legal[row, slot]:
                shown = [t for k, t in enumerate(texts) if legal[row, k]]
                raise LockError(f"{action!r} is not a legal action at {where} (the legal "
                                f"actions there: {', '.join(shown)})")
            try:
                if isinstance(p, (str, bytes, bool, np.bool_)):   # "1", true: not numbers
                    raise TypeError
                value = float(p)
            except (TypeError, ValueError):
                raise LockError(f"the probability of {action!r} at {where} must be a "
                                f"number, got {p!r}") from None
            if not np.isfinite(value) or value < 0:
                raise LockError(f"the probability of {action!r} at {where} must be a "
                                f"finite number >= 0, got {p!r}")
            table[row, slot] += value
        total = table[row].sum()
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise LockError(f"the lock's probabilities at {where} sum to {total:.6g}, not 1")
        table[row] /= total
        mask[row] = True
    return table, mask
