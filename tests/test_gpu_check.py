"""``benchmarks/gpu_check.py``, the one prepared GPU run: its budget, its files, its code path.

The plan and the writer are checked exactly (a fake clock; the files a killed run leaves);
one in-process run on Kuhn goes through lowering, the exact section's timing and bound, and
the determinism section's device runs (the CPU subprocess is left out here: it is the same
``run_case``), in a few seconds. ``JAXCFR_LONG_TESTS=1`` also runs the whole ``--small``
plan in a subprocess. Nothing here asserts a time.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.bench_programs import BENCHMARKS, benchmark_modules

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def benchmarks():
    with benchmark_modules("benchkit.gpu.plan", "gpu_check") as modules:
        yield modules


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_budget_shares_roll_over(benchmarks):
    plan, _ = benchmarks
    clock = FakeClock()
    budget = plan.Budget(100, reserve=10, clock=clock)
    clock.now += 10                                     # start-up
    a = budget.section("a", 1, weights_after=3)         # (90 - 10) * 1/4
    assert a.share == pytest.approx(20)
    clock.now += 5                                      # a used 5 of its 20 s
    b = budget.section("b", 1, weights_after=2)         # (85 - 10) * 1/3: a's rest rolls over
    assert b.share == pytest.approx(25)
    clock.now += 100
    assert budget.section("c", 1, 0).share == 0         # nothing left: nothing given
    with pytest.raises(ValueError, match="positive"):
        plan.Budget(0)


def test_section_clock_expects_like_items(benchmarks):
    plan, _ = benchmarks
    clock = FakeClock()
    section = plan.Budget(100, clock=clock).section("s", 1, 0)
    assert section.affords("first")                     # nothing known: it starts
    section.done("big", 60.0)
    section.done("small", 1.0)
    clock.now += 50                                     # 50 s left
    assert section.affords("small") and not section.affords("big")
    assert section.affords("unknown")                   # the mean, 30.5 s, fits
    assert "a like item took 60.0 s" in section.why_not("big")


def test_results_files_survive_each_step(benchmarks, tmp_path):
    plan, _ = benchmarks
    columns = {"exact": [plan.Column("game", "game", "text"),
                         plan.Column("ms / iteration", "ms_per_iteration"),
                         plan.Column("x bound", "ratio_to_bound", "x")]}
    results = plan.Results(tmp_path, {"device": "cpu", "date": "2026-12-01", "command": "c"},
                           columns, {"exact": "Exact"})
    results.start("exact", 30.0)
    results.figure("exact", item="kuhn", game="kuhn_poker", ms_per_iteration=np.float32(0.5),
                   ratio_to_bound=1234.5, samples=np.arange(3))
    # a kill now would leave this: the figure is in all three files already
    section = json.loads((tmp_path / "exact.json").read_text())
    assert section["status"] == "running" and section["figures"][0]["samples"] == [0, 1, 2]
    line = json.loads((tmp_path / "figures.jsonl").read_text().splitlines()[0])
    assert line["device"] == "cpu" and line["ms_per_iteration"] == 0.5
    assert "| kuhn_poker | 0.5 | 1,234x |" in (tmp_path / "gpu.md").read_text()
    results.skip("exact", "goofspiel", "the section's share of the budget was spent")
    results.finish("exact", "done")
    results.not_selected("split", "left out by --only / --skip", keep_file=True)
    results.not_selected("seeds", "the run's budget was spent before it started")
    results.close()
    text = (tmp_path / "gpu.md").read_text()
    assert "### Exact" in text and "skipped goofspiel: the section's share" in text
    assert "### split" in text and "Not run: left out by --only / --skip." in text
    assert not (tmp_path / "split.json").exists()        # an earlier run's file would stay
    assert json.loads((tmp_path / "seeds.json").read_text())["status"] == "not run"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_format_value(benchmarks):
    plan, _ = benchmarks
    f = plan.format_value
    assert (f(None, "g4"), f(True, "g4"), f(0.25, "pct"), f(3.14159, "x")) == \
        ("–", "yes", "25%", "3.14x")
    assert (f(12345.6, "int"), f(1.5e-5, "g4"), f(0.1234567, "g4")) == \
        ("12,346", "1.500e-05", "0.1235")


def test_set_and_list(benchmarks, capsys):
    _, check = benchmarks
    args, sizes = check.parse(["--small", "--set", 'draws=[2]', "seeds=3",
                               "split_game=kuhn_poker"])
    assert sizes.draws == (2,) and sizes.seeds == 3 and sizes.split_game == "kuhn_poker"
    with pytest.raises(SystemExit):
        check.parse(["--set", "seeds=many"])
    assert "seeds takes a int" in capsys.readouterr().err
    assert check.main(["--list", "--skip", "stacks"]) == 0
    assert "skip stacks" in capsys.readouterr().out


def test_small_run_in_process(benchmarks, tmp_path, monkeypatch):
    """Lowering, the exact section (timing, bound) and the determinism section's device
    runs on Kuhn, with the files they write."""
    _, check = benchmarks
    gpu_measure = importlib.import_module("benchkit.gpu.measure")
    gpu_determinism = importlib.import_module("benchkit.gpu.determinism")
    # the CPU side is a subprocess of its own: here, a run in this process stands in for it
    monkeypatch.setattr(gpu_measure.Measure, "start_worker", lambda self, spec, env: spec)

    def collect(self, children, name, clock):
        spec = children[name]
        lowered, _ = self.lower(spec["game"])
        return {run["name"]: gpu_determinism.run_case(lowered, run["precision"],
                                                      run["iterations"])
                for run in spec["runs"]}
    monkeypatch.setattr(gpu_measure.Measure, "collect", collect)
    out = tmp_path / "out"
    status = check.main(["--small", "--only", "lowering", "exact", "determinism",
                         "--games", "kuhn_poker", "--presets", "cfr+", "--rounds", "1",
                         "--set", "determinism_game=kuhn_poker", "determinism_iterations=8",
                         "float64_iterations=4", "--budget", "300", "--out", str(out),
                         "--cache", str(tmp_path / "cache")])
    assert status == 0
    exact = json.loads((out / "exact.json").read_text())
    (figure,) = exact["figures"]
    assert exact["status"] == "done" and figure["device"] == "cpu"
    assert figure["ms_per_iteration"] > 0 and figure["iterations_timed"] > 0
    # Kuhn by hand (I = 13 rows, A = 2, T = 30 leaves, K = 1, one row level of 3, P = 2,
    # floats of 4 bytes, masks of 1, indices of 4), per half-step: regret matching
    # 26 + 26 * 8; weights 13 * 4 + 13 * 8; leaves 30 * 2 * 4 + 30 * 16 + 2 * 26 * 4;
    # the level 3 * 8 + 3 * 28; the updates 26 + 26 * 28; two half-steps
    assert figure["bytes_per_iteration"] == 2 * (234 + 156 + 928 + 108 + 754)
    assert figure["bound_ms"] == pytest.approx(4360 / 4800e9 * 1e3)
    lowering = json.loads((out / "lowering.json").read_text())["figures"]
    assert [f["game"] for f in lowering] == ["kuhn_poker"]
    det = {f["item"].split(",")[0].split(" ")[0]: f for f in
           json.loads((out / "determinism.json").read_text())["figures"]}
    assert det["kuhn_poker"]["bit_for_bit"] and det["resumed"]["bit_for_bit"]
    assert det["float64"]["holds"] and det["float64"]["max_abs_difference"] == 0
    assert det["float32"]["holds"] is None          # two devices: no bit-for-bit expectation
    assert not (out / "stacks.json").exists()
    assert "| kuhn_poker | 58 | cfr+ |" in (out / "gpu.md").read_text()


@pytest.mark.skipif(os.environ.get("JAXCFR_LONG_TESTS") != "1",
                    reason="the whole --small plan: JAXCFR_LONG_TESTS=1")
def test_small_plan_subprocess(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "gpu_check.py"), "--small",
                           "--budget", "120", "--out", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode in (0, 2), proc.stdout[-2000:] + proc.stderr[-2000:]
    for name in ("lowering", "machine", "exact", "sampling", "stacks", "seeds",
                 "sampled_chance", "split", "determinism"):
        assert json.loads((out / f"{name}.json").read_text())["section"] == name
    assert (out / "gpu.md").read_text().startswith("## On a GPU")
