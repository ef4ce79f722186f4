"""PRNG keys of a run: derived from the seed and the iteration, never carried in a state.

Iteration ``t`` of a run with seed ``s`` uses ``fold_in(key(s), t)``; a purpose inside the
iteration (an alternating half-step's player, a simultaneous update's traverser) folds in
once more. Keys are then a function of the seed and the iteration alone, so a run is
reproducible, independent of the chunk length, and resumes bit for bit; a batch of seeds
is a key array ``[*b]`` on the batch's trailing axes.

Example::

    >>> keys = iteration_keys(jnp.asarray([0, 1]), jnp.asarray(7))   # [2] keys
    >>> fold(keys, 1)                                                  # player 1's
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["iteration_keys", "fold"]


def iteration_keys(seed: jax.Array, iteration: jax.Array) -> jax.Array:
    """The keys of iteration ``iteration`` (1-based): ``fold_in(key(seed), t)``, ``[*b]``.

    ``seed`` is an int32 scalar or ``[*b]`` array (one seed per batch member).
    """
    seed = jnp.asarray(seed)
    keys = jax.vmap(lambda s: jax.random.fold_in(jax.random.key(s), iteration))(
        seed.reshape(-1))
    return keys.reshape(seed.shape)


def fold(keys: jax.Array, data) -> jax.Array:
    """``fold_in(key, data)`` for every key of a ``[*b]`` key array (``data``: an int or a
    traced int scalar)."""
    flat = keys.reshape(-1)
    return jax.vmap(lambda k: jax.random.fold_in(k, data))(flat).reshape(keys.shape)
