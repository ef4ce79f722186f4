"""Precision is explicit and scoped: a float64 run never changes what a float32 run computes.

Every float64 test of the suite runs in this process; this file checks that the
float32 results around them are exactly those of a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import jaxcfr

GAME, ALGORITHM, ITERATIONS = "leduc_poker(ranks=3)", "dcfr", 40

_FRESH = f"""
import json, numpy as np, jaxcfr
r = jaxcfr.solve({GAME!r}, {ALGORITHM!r}, {ITERATIONS})
print(json.dumps({{"average": r.average_strategy.tobytes().hex(),
                   "dtype": str(r.average_strategy.dtype), "values": r.final["values"]}}))
"""


def _fresh(env_extra: dict | None = None) -> dict:
    env = dict(os.environ, JAX_PLATFORMS="cpu", **(env_extra or {}))
    out = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_float32_after_float64_equals_a_fresh_process():
    r64 = jaxcfr.solve(GAME, ALGORITHM, ITERATIONS, precision="float64")
    assert r64.average_strategy.dtype == np.float64
    assert r64.state.regret.dtype == np.float64
    assert not jax.config.jax_enable_x64                   # nothing leaked out of the run
    r32 = jaxcfr.solve(GAME, ALGORITHM, ITERATIONS)
    assert r32.average_strategy.dtype == np.float32 and r32.state.regret.dtype == np.float32
    fresh = _fresh()
    assert fresh["dtype"] == "float32"
    assert r32.average_strategy.tobytes().hex() == fresh["average"]
    assert r32.final["values"] == fresh["values"]
    # the precisions differ (regrets near 0 round differently), the solutions do not
    assert abs(r64.final["exploitability"] - r32.final["exploitability"]) < 0.2 * max(
        r64.final["exploitability"], r32.final["exploitability"])


@pytest.mark.slow
def test_float32_inside_an_x64_process_equals_a_fresh_process():
    """``JAX_ENABLE_X64=1`` for the whole process does not change a float32 run."""
    assert _fresh({"JAX_ENABLE_X64": "1"}) == _fresh()


def test_the_default_solver_state_is_float32_whatever_ran_before():
    jaxcfr.solve("kuhn_poker", "cfr+", 5, precision="float64")
    state = jaxcfr.cfr_plus().init(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")))
    assert state.regret.dtype == np.float32


def test_float64_runner_keeps_float64_across_calls():
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), precision="float64")
    state = runner.advance(runner.init(), 3)
    state = runner.advance(state, 3)                     # a second call, outside any scope
    assert state.strategy_sum.dtype == np.float64
    assert runner.profile(state).dtype == np.float64
    metrics = runner.evaluate(state)
    assert metrics["values"].dtype == np.float64
