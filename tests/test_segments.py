"""``jaxcfr.kernels.segments``: segment sums by planned gathers equal scatter-adds.

Oracle: ``target.at[ids].add(values)`` (float64, so only the order of additions within a
segment can differ: to 1e-12), over random sorted ids with uniform and skewed segment
lengths, empty inputs, and plans stacked over players with a traced player index.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcfr._util import precision
from jaxcfr.kernels.segments import (MAX_BUCKETS, plan_of, plan_segments, segment_add,
                                     stack_plans)


def _ids(rng, targets: int, count: int, skew: bool) -> np.ndarray:
    ids = rng.integers(0, targets, count)
    if skew:                                     # one long segment among short ones
        ids = np.concatenate([ids, np.full(int(rng.integers(50, 300)), rng.integers(targets))])
    return np.sort(ids)


_jit_segment_add = jax.jit(segment_add)     # one program per case, not one per operation


@pytest.mark.parametrize("skew", [False, True])
def test_segment_add_equals_scatter_add(skew):
    rng = np.random.default_rng(7)
    with precision.scope(np.float64):
        # Each case has shapes of its own, so each compiles its own ops: 12 cases, the
        # first two the edges (no input at all; one target).
        for case in range(12):
            targets = 1 if case == 1 else int(rng.integers(1, 40))
            count = 0 if case == 0 else int(rng.integers(1, 200))
            ids = _ids(rng, targets, count, skew and case > 0)
            plan = plan_segments(ids, targets)
            assert 1 <= len(plan.buckets) <= MAX_BUCKETS
            assert sorted(plan.targets.tolist()) == sorted(set(ids.tolist()))
            values = rng.standard_normal((ids.size, 2))
            start = rng.standard_normal((targets, 2))
            got = _jit_segment_add(jnp.asarray(start), jnp.asarray(values),
                                   jax.tree_util.tree_map(jnp.asarray, plan))
            want = jnp.asarray(start).at[ids].add(values)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12,
                                       atol=1e-12)


def test_stacked_plans_with_a_traced_member():
    rng = np.random.default_rng(3)
    count, targets = 120, 25
    ids = [_ids(rng, targets, count - 50 * (p == 1), p == 2) for p in range(3)]
    length = max(i.size for i in ids)          # members' values padded to one length
    ids = [np.concatenate([i, np.full(length - i.size, targets - 1)]) for i in ids]
    plan = jax.tree_util.tree_map(
        jnp.asarray, stack_plans([plan_segments(i, targets) for i in ids], targets, length))
    values = rng.standard_normal((3, length))
    pick = jax.jit(lambda p, v: segment_add(jnp.zeros(targets), v, plan_of(plan, p)))
    with precision.scope(np.float64):
        for p in range(3):
            got = pick(jnp.asarray(p), jnp.asarray(values[p]))
            want = jnp.zeros(targets).at[ids[p]].add(values[p])
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


def test_positions_left_out_are_never_read():
    ids = np.array([0, 0, 1, 1, 1, 2])
    keep = np.array([True, False, True, True, False, True])
    plan = jax.tree_util.tree_map(jnp.asarray, plan_segments(ids, 3, keep=keep))
    values = jnp.asarray([1.0, np.nan, 2.0, 3.0, np.inf, 5.0])
    np.testing.assert_array_equal(np.asarray(segment_add(jnp.zeros(3), values, plan)),
                                  [1.0, 5.0, 5.0])


def test_unsorted_or_out_of_range_ids_are_refused():
    with pytest.raises(ValueError, match="sorted"):
        plan_segments(np.array([2, 1]), 3)
    with pytest.raises(ValueError, match="0..2"):
        plan_segments(np.array([0, 3]), 3)
