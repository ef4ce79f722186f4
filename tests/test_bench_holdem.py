"""``benchmarks/bench_holdem.py``'s arithmetic: a chunk's per-iteration slope, its fixed
cost and what a run in chunks of ``DEFAULT_CHUNK`` pays per iteration, from two chunk
lengths' CPU. Known values only; nothing here runs a spot or asserts a time."""

from __future__ import annotations


import pytest

from jaxcfr.engine.runner import DEFAULT_CHUNK
from tests.bench_programs import benchmark_modules



@pytest.fixture(scope="module")
def bench_holdem():
    with benchmark_modules("bench_holdem") as (module,):
        yield module


def test_chunk_costs_known_values(bench_holdem):
    # docs/holdem.md's full-range turn: chunks of 2 and 6 iterations, 350 and 834 CPU ms
    slope, fixed, run = bench_holdem.chunk_costs(2, 6, 350.0, 834.0)
    assert slope == pytest.approx(121.0)
    assert fixed == pytest.approx(108.0)
    assert run == pytest.approx(121.0 + 108.0 / DEFAULT_CHUNK)
    # a long chunk of DEFAULT_CHUNK: the run's figure is exactly its CPU per iteration
    _, _, run = bench_holdem.chunk_costs(4, DEFAULT_CHUNK, 50.0, 690.0)
    assert run == pytest.approx(690.0 / DEFAULT_CHUNK)
    # no fixed cost: slope == run; a chunk of 0 iterations is the fixed cost alone
    assert bench_holdem.chunk_costs(1, 3, 2.0, 6.0, chunk=8) == pytest.approx((2.0, 0.0, 2.0))
    assert bench_holdem.chunk_costs(0, 2, 43.0, 285.0, chunk=2)[1] == pytest.approx(43.0)
    with pytest.raises(ValueError):
        bench_holdem.chunk_costs(6, 6, 1.0, 1.0)


def test_summary_fields(bench_holdem):
    # two rounds; one chunk of 2 costs 0.350 s (fastest) and one of 64 7.852 s (121 ms an
    # iteration, 108 ms a chunk); the peer 20 iterations in 0.6 s (30 ms each)
    ours = {64: [(7.852, 5.0), (8.5, 5.0)], 2: [(0.4, 0.3), (0.350, 0.3)]}
    theirs = [(0.6, 0.7), (0.8, 0.9)]
    out = bench_holdem._summary({"run_chunk": 64, "peer_iterations": 20}, ours, theirs)
    assert out["jaxcfr_chunk_cpu_ms_min"] == [350.0, 7852.0]
    assert out["jaxcfr_slope_cpu_ms_min"] == pytest.approx(121.0)
    assert out["jaxcfr_fixed_cpu_ms_min"] == pytest.approx(108.0)
    assert out["jaxcfr_run_cpu_ms_min"] == pytest.approx(7852.0 / 64, abs=1e-4)
    assert out["jaxcfr_short_cpu_ms_min"] == pytest.approx(175.0)
    assert out["peer_cpu_ms_min"] == pytest.approx(30.0)
    assert out["ratio_slope_cpu_min"] == pytest.approx(round(121.0 / 30.0, 2))
    assert out["ratio_run_cpu_min"] == pytest.approx(round(7852.0 / 64 / 30.0, 2))
    assert out["ratio_short_cpu_min"] == pytest.approx(round(175.0 / 30.0, 2))
    assert out["jaxcfr_chunk_cpu_ms_median"] == [375.0, 8176.0]


def test_summary_peer_alone(bench_holdem):
    # jaxcfr's spot did not fit (flop_readme on a small host): the peer's figures alone
    out = bench_holdem._summary({"run_chunk": 64, "peer_iterations": 4}, {}, [(2.0, 2.0)])
    assert out["peer_cpu_ms_min"] == pytest.approx(500.0)
    assert not any(k.startswith(("jaxcfr_", "ratio_")) for k in out)
