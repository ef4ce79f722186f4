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


def test_fresh_summary_known_values(bench_holdem):
    # two rounds of one jaxcfr variant and the peer: medians, cores, per-round ratios; a
    # program compiled in one round only counts 0 in the other (the warm round)
    ours = [{"wall_s": 20.0, "cpu_s": 15.0, "iterations": 50, "exploitability": 0.3,
             "phases": {"imports": [1.5, 1.6], "chunk_compile": [9.0, 12.0]},
             "programs": {"jit__run_chunk": {"n": 1, "cpu_s": 8.0, "wall_s": 10.0}},
             "jax_events": {"backend_compile_duration": [3, 11.0]}},
            {"wall_s": 30.0, "cpu_s": 17.0, "iterations": 50, "exploitability": 0.3,
             "phases": {"imports": [1.3, 1.4], "chunk_compile": [0.2, 0.3]},
             "programs": {}, "jax_events": {}}]
    peer = [{"wall_s": 0.02, "cpu_s": 0.01, "iterations": 50, "exploitability": 0.3},
            {"wall_s": 0.03, "cpu_s": 0.02, "iterations": 50, "exploitability": 0.3}]
    out = bench_holdem.fresh_summary({"api_cold": ours, "peer": peer})
    a = out["api_cold"]
    assert (a["wall_s"], a["cpu_s"], a["iterations"]) == (25.0, 16.0, 50.0)
    assert a["cores"] == pytest.approx(16.0 / 25.0)
    assert a["phases"] == {"imports": [1.4, 1.5], "chunk_compile": [4.6, 6.15]}
    assert a["programs"] == {"jit__run_chunk": {"n": 0.5, "cpu_s": 4.0, "wall_s": 5.0}}
    assert a["jax_events"] == {"backend_compile_duration": 5.5}
    assert a["over_peer_cpu"] == [1500.0, 850.0] and a["over_peer_wall"] == [1000.0, 1000.0]
    assert out["peer"]["cpu_s"] == pytest.approx(0.015) and "over_peer_cpu" not in out["peer"]


@pytest.mark.slow
def test_a_fresh_process_reports_its_phases_and_a_warm_one_compiles_nothing(bench_holdem,
                                                                           tmp_path):
    # the child of --fresh on a small public game: the command line's cold process
    # compiles the chunk and the evaluation; a warm one (the directory the cold one filled)
    # compiles nothing and reaches the same exploitability, and so does solve_public's
    # (its default chunk is the command line's, so its chunk is the same program)
    config = tmp_path / "c.toml"
    config.write_text('[game]\nname = "kuhn_poker"\n[solver]\nalgorithm = "postflop-dcfr"\n'
                      'iterations = 30\n[run]\neval_every = 10\n')
    caches: dict = {}
    runs = [bench_holdem.fresh_jaxcfr(v, "kuhn_poker(tree='public')", str(config), 10, 30,
                                      1e-9, caches) for v in ("cli_cold", "cli_warm")]
    caches["api"] = caches["cli"]
    runs.append(bench_holdem.fresh_jaxcfr("api_warm", "kuhn_poker(tree='public')",
                                          str(config), 10, 30, 1e-9, caches))
    cold, *warm = runs
    assert {"jit__run_chunk", "jit__metrics"} <= set(cold["programs"])
    for rec in warm:
        assert rec["programs"] == {}, rec["variant"]
        assert (rec["iterations"], rec["exploitability"]) == (30, cold["exploitability"])
    for rec in runs:
        assert {"imports", "chunk_compile", "iterations", "evaluations",
                "total_inside"} <= set(rec["phases"])
        assert rec["cpu_s"] >= rec["phases"]["total_inside"][0] > 0
