"""Safe numerics shared by the device solvers and the host profiles.

:func:`normalise` is the one definition of "the positive part, normalised under a
mask, uniform where nothing is positive": regret matching (on regrets), the average
strategy (on strategy sums) and a profile's distributions (on stored probabilities)
are all this function. It never divides by zero and is exactly 0 outside the mask.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = ["normalise", "trail"]


def trail(x, ndim: int):
    """Append singleton axes so ``x`` broadcasts against an array of rank ``ndim``."""
    return x.reshape(x.shape + (1,) * (ndim - x.ndim))


def normalise(weights, mask):
    """Rows of ``weights`` ``[I, A, *b]`` as distributions over ``mask`` ``[I, A]``.

    The positive part of ``weights`` scaled to sum 1 over each row's ``mask``; a row
    with no positive weight is uniform over its mask. NumPy in, NumPy out (host
    profiles); anything else runs in ``jax.numpy`` (traceable).

    Args:
      weights: ``[I, A, *b]`` (or ``[A]`` with ``mask`` ``[A]`` for one row).
      mask: ``[I, A]`` bool with at least one True per row.
    Returns:
      ``[I, A, *b]`` in ``weights``' dtype, rows summing to 1, 0 outside ``mask``.
    """
    xp = np if isinstance(weights, np.ndarray) and isinstance(mask, np.ndarray) else jnp
    axis = mask.ndim - 1                                   # the action axis
    m = trail(mask, weights.ndim)
    positive = xp.where(m, xp.maximum(weights, 0), 0)
    total = positive.sum(axis=axis, keepdims=True)
    count = m.sum(axis=axis, keepdims=True).astype(weights.dtype)
    uniform = xp.where(m, 1 / count, 0).astype(weights.dtype)
    safe_total = xp.where(total > 0, total, 1)
    return xp.where(total > 0, positive / safe_total, uniform)
