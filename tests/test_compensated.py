"""Compensated strategy sums: float32 runs keep the late increments that plain addition loses.

Oracles: float64 sums of the same increments. Each check is sized so that plain float32
addition fails it by orders of magnitude (stated beside each tolerance): late in a run an
increment is about ``(gamma + 1) / t`` of its sum, a few hundred ulps of it or less.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.kernels import compensated
from jaxcfr.solvers.estimators import RowEstimate
from jaxcfr.solvers.solver import Rows, SolverState

EPS32 = float(np.finfo(np.float32).eps)


def _linear_increments(n, seed=0):
    """CFR+'s averaging increments late in a run: iteration t weighs t, times a reach that
    changes little (in (0.30, 0.31)): alike increments round alike, so the error adds up."""
    rng = np.random.default_rng(seed)
    t = np.arange(1, n + 1, dtype=np.float64)
    return (t / 2 ** 20 * rng.uniform(0.30, 0.31, n)).astype(np.float32)


def test_two_sum_is_exact():
    a = np.float32(1.0)
    b = np.float32(2.0 ** -30)
    s, e = compensated.two_sum(jnp.asarray(a), jnp.asarray(b))
    assert float(s) == 1.0 and float(e) == 2.0 ** -30
    s, e = compensated.two_sum(jnp.asarray(b), jnp.asarray(a))   # either order
    assert float(s) == 1.0 and float(e) == 2.0 ** -30


def test_add_keeps_a_long_sum_to_a_few_roundings():
    """10^6 linearly weighted increments: compensated within 2 ulps of the float64 sum;
    plain float32 addition is off by more than 50 ulps (measured: 227)."""
    inc = _linear_increments(1_000_000)
    exact = float(np.sum(inc.astype(np.float64)))

    def body(acc, x):
        return compensated.add(*acc, x), None

    (total, error), _ = jax.lax.scan(body, (jnp.float32(0), jnp.float32(0)), jnp.asarray(inc))
    naive, _ = jax.lax.scan(lambda s, x: (s + x, None), jnp.float32(0), jnp.asarray(inc))
    assert abs(float(total) - exact) <= 2 * EPS32 * exact
    assert abs((float(total) + float(error)) - exact) <= 2 * EPS32 * exact
    assert abs(float(naive) - exact) > 50 * EPS32 * exact        # the case is adversarial


def test_scatter_add_sums_repeated_positions():
    """Rows scattered into a flat table, positions repeated within one scatter (as sampled
    members of one information set are): every position within 2 ulps of float64."""
    rng = np.random.default_rng(1)
    k, rounds, m = 7, 4000, 12
    index = rng.integers(0, k, size=(rounds, m))
    inc = (rng.uniform(0.30, 0.31, (rounds, m)) / 2 ** 8).astype(np.float32)  # ~0.3 ulp each
    exact = np.zeros(k)
    np.add.at(exact, index.ravel(), inc.astype(np.float64).ravel())
    start = np.full(k, 3.0e4, np.float32)           # a large sum already: late iterations
    exact += 3.0e4

    def body(acc, x):
        i, v = x
        return compensated.scatter_add(*acc, i, v), None

    (total, error), _ = jax.lax.scan(body, (jnp.asarray(start), jnp.zeros(k, jnp.float32)),
                                     (jnp.asarray(index), jnp.asarray(inc)))
    naive = start.copy()
    for i, v in zip(index, inc):
        np.add.at(naive, i, v)                      # float32, one rounding per addition
    np.testing.assert_allclose(np.asarray(total, np.float64), exact, rtol=2 * EPS32)
    assert np.max(np.abs(naive - exact) / exact) > 100 * EPS32   # the case is adversarial


def _late_state(runner, t0):
    """A Kuhn state as if at iteration ``t0``: sums of the size ``t0`` linear weights give."""
    state = runner.advance(runner.init(), 8)
    scale = (t0 ** 2 / 2 / 2 ** 20) / float(np.max(np.asarray(state.strategy_sum)))
    return state._replace(strategy_sum=state.strategy_sum * scale,
                          iteration=jnp.asarray(t0, jnp.int32))


def _as(state, dtype):
    """Fresh device copies in ``dtype`` (a chunk donates its state)."""
    with precision.scope(dtype):
        return state.map_tables(lambda x: jnp.asarray(np.asarray(x), dtype),
                                jnp.asarray(np.asarray(state.iteration)))


def test_dense_cfr_plus_late_increments_survive_in_float32():
    """From a state at iteration 2^20, 256 CFR+ iterations on Kuhn: what float32 adds to
    the strategy sums matches float64 to 1e-4 relative (plain float32 addition: off by
    up to 1e-3, measured; an increment is 2 / t0 of its sum, a few ulps)."""
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    r32 = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=64)
    r64 = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=64, precision="float64")
    late = _late_state(r32, 2 ** 20)
    start = late.map_tables(np.asarray, np.asarray(late.iteration))
    s0 = np.asarray(start.strategy_sum, np.float64)
    end32 = r32.advance(_as(start, np.float32), 256)
    end64 = r64.advance(_as(start, np.float64), 256)
    added32 = (np.asarray(end32.strategy_sum, np.float64)
               + np.asarray(end32.strategy_error, np.float64) - s0)
    added64 = np.asarray(end64.strategy_sum, np.float64) - s0
    big = added64 > 1e-3 * added64.max()
    assert big.sum() >= 10
    np.testing.assert_allclose(added32[big], added64[big], rtol=1e-4)


def test_sparse_row_update_late_increments_survive_in_float32():
    """``Solver.row_update`` (the sampled path) with a fixed estimate that lists rows twice:
    float32 sums match the float64 ones to 1e-5 relative after 2,000 late iterations
    (plain float32 scatter-adds: off by up to 7e-2, measured)."""
    solver = jaxcfr.cfr_plus()
    rows_n, actions = 6, 3
    legal = jnp.ones((rows_n, actions), bool)
    owner = jnp.asarray([0, 1, 0, 1, 0, -1], jnp.int32)
    row = jnp.asarray([0, 2, 2, 4, 1, 3, 3, 5], jnp.int32)
    contrib = np.random.default_rng(2).uniform(0.1, 1.0, (8, actions))

    def run(dtype):
        with precision.scope(dtype):
            est = RowEstimate(jnp.zeros(8, jnp.int32), row, jnp.zeros((8, actions), dtype),
                              row, jnp.asarray(contrib, dtype))
            t0 = 2 ** 20
            s0 = jnp.full((rows_n, actions), t0 ** 2 / 2 / 2 ** 20, dtype)
            state = SolverState(jnp.zeros_like(s0), s0, jnp.zeros_like(s0), None,
                                jnp.asarray(t0, jnp.int32))
            hp = solver.hyperparams(gamma=1.0, dtype=dtype)

            @jax.jit
            def step(state, _):
                return solver.row_update(Rows(legal, owner), 2, state, hp,
                                         lambda *a: est), None
            state, _ = jax.lax.scan(step, state, None, length=2000)
            return (np.asarray(state.strategy_sum, np.float64)
                    + np.asarray(state.strategy_error, np.float64) - float(s0[0, 0]))

    added32, added64 = run(np.float32), run(np.float64)
    touched = np.zeros(rows_n, bool)
    touched[np.asarray(row)] = True
    assert np.all(added64[touched] > 0) and np.all(added64[~touched] == 0)
    np.testing.assert_allclose(added32, added64, rtol=1e-5)
