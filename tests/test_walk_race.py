"""The seeded fresh-process race of benchmarks/mccfr_bench.py (``--peer --only race``) and
its fresh-process compile probe (``--only compile_fresh``): the seed reaches both sides,
the medians count a run stopped at the limit as never finished, and the entries are the
programs they name. Oracles only (no timings)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))           # (its helper package: benchkit)
    try:
        spec = importlib.util.spec_from_file_location("mccfr_bench_race",
                                                      ROOT / "benchmarks" / "mccfr_bench.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def _peer_run(bench, seed: int) -> dict:
    out = subprocess.run([sys.executable, "-c", bench.PEER_FRESH, "kuhn_poker", "external",
                          "0.3", str(time.time()), str(seed)],
                         capture_output=True, text=True, check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_race_gives_openspiel_its_seed(bench):
    """OpenSpiel's child runs the seed it is given: the same seed the same iterations and
    exploitability as the solver run here with that seed and the same checks."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("kuhn_poker")
    for seed in (2, 5):
        child = _peer_run(bench, seed)
        assert child["seed"] == seed
        solver, done, n, expl = pyspiel.ExternalSamplingMCCFRSolver(game, seed=seed), 0, 100, 1.0
        while expl >= 0.3:
            for _ in range(n):
                solver.run_iteration()
            done += n
            expl = pyspiel.exploitability(game, solver.average_policy())
            n = max(100, int(done * 0.3))
        assert (child["iterations"], child["exploitability"]) == (done, expl)


def test_the_race_parses_its_options_and_entries(bench):
    """``--only race`` and ``--only compile_fresh`` with ``--seeds``; every race entry is
    the program it names (samples, one by one depth first or as counts)."""
    args = bench.build_parser().parse_args(["--peer", "--only", "race", "--seeds", "4", "7"])
    assert (args.only, args.seeds) == ("race", [4, 7])
    assert bench.build_parser().parse_args(["--peer", "--only", "compile_fresh"]).seeds \
        == [1, 2, 3]
    for entry in bench.RACE_ENTRIES:
        solver = bench.entry_solver(entry)
        samples = int(entry.split("/")[2])
        assert solver.estimator.samples == samples
        assert solver.estimator.counts == entry.endswith("/counts")
        assert solver.estimator.walk == ("depth" if entry.endswith("/depth") else "levels")


def test_a_run_stopped_at_the_limit_counts_as_never_finished(bench):
    stopped = {"side": "x", "seed": 3, "wall": None, "limit": 180.0}
    runs = [{"wall": 4.0, "cpu": 2.0}, stopped, {"wall": 6.0, "cpu": 3.0}]
    assert bench.race_median(runs, "wall") == 6.0
    assert bench.race_median(runs, "cpu") == 3.0
    assert bench.race_median([stopped, stopped, {"wall": 1.0, "cpu": 1.0}], "cpu") \
        == float("inf")
    assert bench.race_median([], "wall") is None
