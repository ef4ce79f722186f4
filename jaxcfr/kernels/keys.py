"""PRNG keys of a run: derived from the seed and the iteration, never carried in a state.

Iteration ``t`` of a run with seed ``s`` uses ``fold_in(key(s), t)``; a purpose inside the
iteration (an alternating half-step's player, a simultaneous update's traverser) folds in
once more. Keys are then a function of the seed and the iteration alone, so a run is
reproducible, independent of the chunk length, and resumes bit for bit; a batch of seeds
is a key array ``[*b]`` on the batch's trailing axes.

The hash behind them (Threefry-2x32, JAX's default keys) is written out here, its 20
rounds unrolled: the same numbers as ``jax.random.fold_in`` and ``jax.random.uniform``, bit
for bit (tested), but without the ``while`` loop that JAX's CPU lowering of the hash emits
at every call (a sampled step called it three times: two folds and the uniform numbers,
three loops for XLA to compile; unrolled they are plain elementwise kernels, and the
program compiles faster: docs/mccfr.md).

Example::

    >>> keys = iteration_keys(jnp.asarray([0, 1]), jnp.asarray(7))   # [2] keys
    >>> fold(keys, 1)                                                  # player 1's
    >>> uniform(keys, (5,), jnp.float32)                               # [2, 5]
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["iteration_keys", "fold", "uniform", "threefry2x32"]

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(x: jax.Array, d: int) -> jax.Array:
    return (x << np.uint32(d)) | (x >> np.uint32(32 - d))


def threefry2x32(k1: jax.Array, k2: jax.Array, x1: jax.Array, x2: jax.Array
                 ) -> tuple[jax.Array, jax.Array]:
    """The Threefry-2x32 hash (20 rounds) of the counters ``(x1, x2)`` under the key
    ``(k1, k2)``, uint32 arrays broadcast together: what JAX's ``threefry2x32``
    primitive computes, its rounds unrolled (JAX's CPU lowering rolls them into a loop)."""
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x = [x1 + ks[0], x2 + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ _rotate_left(x[1], r)
        x = [x[0] + ks[(i + 1) % 3], x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)]
    return x[0], x[1]


def _threefry(keys: jax.Array) -> bool:
    """The keys are Threefry-2x32 keys (JAX's default; another implementation, chosen by
    ``jax_default_prng_impl``, takes ``jax.random``'s own functions)."""
    return str(jax.random.key_impl(keys)) == "threefry2x32"


def _fold(keys: jax.Array, value) -> jax.Array:
    """``fold_in(key, value)`` for every key of a ``[*b]`` key array: on Threefry keys
    the hash of the counters ``(0, value)`` on their raw data ``[*b, 2]``."""
    if not _threefry(keys):
        flat = keys.reshape(-1)
        return jax.vmap(lambda k: jax.random.fold_in(k, value))(flat).reshape(keys.shape)
    data = jax.random.key_data(keys)                                        # [*b, 2] uint32
    value = jnp.asarray(value).astype(jnp.uint32)
    h1, h2 = threefry2x32(data[..., 0], data[..., 1], jnp.zeros_like(value), value)
    return jax.random.wrap_key_data(jnp.stack([h1, h2], axis=-1))


def iteration_keys(seed: jax.Array, iteration: jax.Array) -> jax.Array:
    """The keys of iteration ``iteration`` (1-based): ``fold_in(key(seed), t)``, ``[*b]``.

    ``seed`` is an int32 scalar or ``[*b]`` array (one seed per batch member).
    """
    seed = jnp.asarray(seed)
    return _fold(jax.vmap(jax.random.key)(seed.reshape(-1)), iteration).reshape(seed.shape)


def fold(keys: jax.Array, data) -> jax.Array:
    """``fold_in(key, data)`` for every key of a ``[*b]`` key array (``data``: an int or a
    traced int scalar)."""
    return _fold(keys, data)


def uniform(keys: jax.Array, shape: tuple[int, ...], dtype) -> jax.Array:
    """``jax.random.uniform(key, shape, dtype)`` in ``[0, 1)`` for every key of a ``[*b]``
    key array: ``[*b, *shape]``, the same numbers bit for bit: on Threefry keys, float32
    or float64, fewer than 2^32 numbers a key, from the unrolled hash; else from
    ``jax.random.uniform`` itself."""
    dtype = jnp.dtype(dtype)
    size = math.prod(shape)
    if not _threefry(keys) or size >= 2 ** 32 or dtype not in (jnp.float32, jnp.float64):
        flat = keys.reshape(-1)
        out = jax.vmap(lambda k: jax.random.uniform(k, tuple(shape), dtype))(flat)
        return out.reshape(keys.shape + tuple(shape))
    data = jax.random.key_data(keys)[..., None, :]                          # [*b, 1, 2]
    count = jnp.arange(size, dtype=jnp.uint32)                              # [n]
    h1, h2 = threefry2x32(data[..., 0], data[..., 1], jnp.zeros_like(count), count)
    if dtype == jnp.float32:
        bits, uint, nmant = h1 ^ h2, jnp.uint32, 23
    else:
        uint, nmant = jnp.uint64, 52
        bits = (h1.astype(uint) << np.uint64(32)) | h2.astype(uint)
    one = np.array(1.0, dtype).view(uint)
    mantissa = (bits >> np.array(8 * dtype.itemsize - nmant, uint)) | one
    floats = jax.lax.bitcast_convert_type(mantissa, dtype) - jnp.array(1.0, dtype)
    return jnp.maximum(jnp.array(0.0, dtype), floats).reshape(keys.shape + tuple(shape))
