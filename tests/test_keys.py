"""jaxcfr.kernels.keys: the keys and uniform numbers of sampled iterations, the
Threefry-2x32 hash unrolled, equal bit for bit to ``jax.random``'s (whose CPU lowering
rolls the hash into a loop), and no loop left in the program."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcfr.kernels.keys import fold, iteration_keys, uniform

SEEDS = np.asarray([0, 1, -5, 2 ** 31 - 1, -2 ** 31, 12345], np.int32)


def _data(keys):
    return np.asarray(jax.random.key_data(keys))


def _reference_keys(seeds, t):
    return jax.vmap(lambda s: jax.random.fold_in(jax.random.key(s), t))(jnp.asarray(seeds))


@pytest.mark.parametrize("t", [1, 7, 2 ** 31 - 1])
def test_keys_and_folds_equal_jax_random(t):
    keys = jax.jit(iteration_keys)(jnp.asarray(SEEDS), jnp.asarray(t, jnp.int32))
    reference = _reference_keys(SEEDS, t)
    np.testing.assert_array_equal(_data(keys), _data(reference))
    for i in (0, 1, 2):
        folded = jax.jit(fold)(keys, jnp.asarray(i))                    # a traced int
        np.testing.assert_array_equal(
            _data(folded), _data(jax.vmap(lambda k: jax.random.fold_in(k, i))(reference)))
    # a [T, B] key array (a simultaneous update's traversers x members)
    grid = jax.vmap(lambda i: fold(keys, i))(jnp.arange(3))
    assert grid.shape == (3, SEEDS.size)
    np.testing.assert_array_equal(_data(grid[2]), _data(fold(keys, 2)))
    # a seed batch [2, 3] keeps its shape
    assert iteration_keys(jnp.asarray(SEEDS.reshape(2, 3)), jnp.asarray(t)).shape == (2, 3)


@pytest.mark.parametrize("shape", [(1,), (7,), (1000,), (3, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_equals_jax_random(shape, dtype):
    with jax.enable_x64(dtype == "float64"):
        keys = _reference_keys(SEEDS, 3)
        ours = jax.jit(uniform, static_argnums=(1, 2))(keys, shape, jnp.dtype(dtype))
        theirs = jax.vmap(lambda k: jax.random.uniform(k, shape, jnp.dtype(dtype)))(keys)
        assert ours.dtype == theirs.dtype and ours.shape == (SEEDS.size, *shape)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        assert (np.asarray(ours) >= 0).all() and (np.asarray(ours) < 1).all()


def test_no_loop_in_the_keys_program():
    """What the change is for: the hash is straight-line code, no ``while`` (JAX's CPU
    lowering of its own hash is a loop per call)."""
    def draws(seed, t):
        keys = fold(iteration_keys(seed, t), 1)
        return uniform(keys, (64,), jnp.float32)
    text = jax.jit(draws).lower(jnp.asarray(SEEDS), jnp.asarray(3)).as_text()
    assert "while" not in text and "threefry" not in text


def test_other_keys_and_types_take_jax_random_itself():
    """Keys of another implementation (``rbg``) and numbers of another type (float16) are
    not the unrolled hash's: they come from ``jax.random``, the same numbers as before."""
    rbg = jax.vmap(lambda s: jax.random.key(s, impl="rbg"))(jnp.asarray(SEEDS))
    np.testing.assert_array_equal(
        _data(fold(rbg, 3)), _data(jax.vmap(lambda k: jax.random.fold_in(k, 3))(rbg)))
    np.testing.assert_array_equal(
        np.asarray(uniform(rbg, (9,), jnp.float32)),
        np.asarray(jax.vmap(lambda k: jax.random.uniform(k, (9,), jnp.float32))(rbg)))
    keys = _reference_keys(SEEDS, 1)
    np.testing.assert_array_equal(
        np.asarray(uniform(keys, (4,), jnp.float16)),
        np.asarray(jax.vmap(lambda k: jax.random.uniform(k, (4,), jnp.float16))(keys)))
