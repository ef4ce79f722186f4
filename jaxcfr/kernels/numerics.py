"""Safe numerics shared by the device solvers and the host profiles.

:func:`normalise` is the one definition of "the positive part, normalised under a
mask, uniform where nothing is positive": regret matching (on regrets), the average
strategy (on strategy sums) and a profile's distributions (on stored probabilities)
are all this function. It never divides by zero and is exactly 0 outside the mask.

:func:`check_payoff_range` refuses payoffs whose regret sums would overflow the run's
precision, before anything is computed (instead of finishing with NaN metrics).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["normalise", "trail", "check_payoff_range", "PAYOFF_HEADROOM", "action_sum",
           "all_finite", "instantaneous_regret", "exploration_mix", "TIE_ULPS"]

#: Regrets within this many units in the last place of their row's largest value are ties.
TIE_ULPS = 4

#: Up to this many actions, :func:`action_sum` adds the slices one by one.
UNROLL_ACTIONS = 32

#: How many times the largest payoff a run's sums must be able to hold: values add up
#: payoffs, and regrets and strategy sums add up values over up to ~2**32 iterations.
PAYOFF_HEADROOM = 2.0 ** 32


def check_payoff_range(payoff, dtype, name: str = "the game") -> None:
    """Raise ``ValueError`` when ``payoff`` ``[N, P]`` is too large for ``dtype``'s sums.

    The limit is ``finfo(dtype).max / PAYOFF_HEADROOM`` (7.9e28 in float32, 4.2e298 in
    float64); CFR is unchanged by scaling every payoff by one positive number, so a
    game past it can be rescaled (or run in float64).
    """
    dtype = np.dtype(dtype)
    largest = float(np.max(np.abs(payoff), initial=0.0))
    limit = float(np.finfo(dtype).max) / PAYOFF_HEADROOM
    if not largest <= limit:                               # also catches NaN
        hint = ("run it in float64 (precision=\"float64\", --precision float64) or divide every "
                "payoff by one positive number (the equilibria do not change)"
                if dtype == np.float32 else "divide every payoff by one positive number (the "
                "equilibria do not change)")
        raise ValueError(f"{name} has payoffs up to {largest:.3g}, too large for {dtype.name} "
                         f"(the regret sums need |payoff| <= {limit:.2g}): {hint}")


def trail(x, ndim: int):
    """Append singleton axes so ``x`` broadcasts against an array of rank ``ndim``."""
    return x.reshape(x.shape + (1,) * (ndim - x.ndim))


def action_sum(x, keepdims: bool = False):
    """Sum of ``x`` ``[I, A, *b]`` over the action axis: ``[I, *b]`` (``[I, 1, *b]`` kept).

    For a traced array with few actions the slices are added one by one: XLA's CPU
    backend fuses that into the surrounding loop, where a reduce over a short minor
    axis ran about twice as slow (measured on this project's CPU, see
    ``docs/benchmarks.md``). NumPy arrays use ``sum``.
    """
    if isinstance(x, np.ndarray) or x.shape[1] > UNROLL_ACTIONS:
        return x.sum(axis=1, keepdims=keepdims)
    total = x[:, 0]
    for a in range(1, x.shape[1]):
        total = total + x[:, a]
    return total[:, None] if keepdims else total


def normalise(weights, mask, axis: int | None = None):
    """Rows of ``weights`` ``[I, A, *b]`` as distributions over ``mask`` ``[I, A]``.

    The positive part of ``weights`` scaled to sum 1 over each row's ``mask``; a row
    with no positive weight is uniform over its mask. NumPy in, NumPy out (host
    profiles); anything else runs in ``jax.numpy`` (traceable).

    Args:
      weights: ``[I, A, *b]`` (or ``[A]`` with ``mask`` ``[A]`` for one row).
      mask: ``[I, A]`` bool with at least one True per row.
      axis: the action axis of ``mask`` (default its last), e.g. 1 for a public tree's
        tables by slot, ``weights`` ``[D, A, H, *b]`` and ``mask`` ``[D, A, H]``
        (:func:`jaxcfr.kernels.public.to_blocks`): the same numbers as their rows.
    Returns:
      ``[I, A, *b]`` in ``weights``' dtype, rows summing to 1, 0 outside ``mask``.
    """
    xp = np if isinstance(weights, np.ndarray) and isinstance(mask, np.ndarray) else jnp
    axis = mask.ndim - 1 if axis is None else axis          # the action axis
    m = trail(mask, weights.ndim)
    positive = xp.where(m, xp.maximum(weights, 0), 0)
    if axis == 1:
        total = action_sum(positive, keepdims=True)
        count = action_sum(m.astype(weights.dtype), keepdims=True)
    else:
        total = positive.sum(axis=axis, keepdims=True)
        count = m.sum(axis=axis, keepdims=True).astype(weights.dtype)
    uniform = xp.where(m, 1 / count, 0).astype(weights.dtype)
    safe_total = xp.where(total > 0, total, 1)
    return xp.where(total > 0, positive / safe_total, uniform)


def instantaneous_regret(q, strategy, mask):
    """Regret of each action against the strategy's value, ``q - sum_b strategy_b q_b``.

    Args:
      q: ``[I, A, *b]`` counterfactual action values.
      strategy: ``[I, A, *b]`` the strategy they were computed under.
      mask: ``[I, A]`` bool, the actions that count (0 elsewhere).
    Returns:
      ``[I, A, *b]``. A regret smaller than :data:`TIE_ULPS` units in the last place of
      the row's largest ``|q|`` is exactly 0: it is rounding noise of a tie, and its sign
      (which regret matching turns into a pure or a uniform strategy) would otherwise
      depend on the order in which the values were summed (node passes or sequence
      form, one device or another, a stack's layout).
    """
    m = trail(mask, q.ndim)
    regret = q - action_sum(strategy * q, keepdims=True)
    scale = jnp.max(jnp.where(m, jnp.abs(q), 0), axis=1, keepdims=True) if q.shape[1] > \
        UNROLL_ACTIONS else _action_max(jnp.where(m, jnp.abs(q), 0))
    tie = jnp.abs(regret) <= TIE_ULPS * jnp.finfo(q.dtype).eps * scale
    return jnp.where(m & ~tie, regret, 0)


def _action_max(x):
    """Max over the action axis (axis 1) of ``[I, A, *b]``, kept: unrolled like action_sum."""
    out = x[:, 0]
    for a in range(1, x.shape[1]):
        out = jnp.maximum(out, x[:, a])
    return out[:, None]


@jax.jit
def all_finite(tables) -> jax.Array:
    """Whether every entry of ``tables`` (a tuple of arrays, e.g. a solver state's) is
    finite: one program, not one per table."""
    return jnp.stack([jnp.isfinite(x).all() for x in tables]).all()


def exploration_mix(p, present, count, eps):
    """Outcome sampling's draw at the traverser's decisions: ``eps`` times the uniform
    distribution over each row's ``present`` entries plus ``1 - eps`` times ``p``.

    Args:
      p: ``[R, K, *b]`` the strategy's probabilities.
      present: ``[R, K, *b]`` (or broadcasting to it) bool, the entries that exist.
      count: ``[R, *b']`` (``*b'`` ones or ``*b``) how many entries of each row are present.
      eps: the exploration, broadcasting against ``p``.
    """
    uniform = jnp.where(present, 1 / jnp.maximum(count, 1)[:, None].astype(p.dtype), 0)
    return eps * uniform + (1 - eps) * p
