"""``benchmarks/bench_history_scale.py``: its main function on ``liars_dice(sides=3)``.

The records' fields and their exact facts (the game's known node and information-set
counts, the checks' iterations), that the exploitability falls from check to check under
DCFR, and that the run stops at the first check at or below its target. No time asserted.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_history_scale.py"


@pytest.fixture(scope="module")
def bench():
    saved = list(sys.path)
    sys.path.insert(0, str(SCRIPT.parent))     # as run: benchmarks/ first (benchkit)
    try:
        spec = importlib.util.spec_from_file_location("bench_history_scale", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path[:] = saved


def _run(bench, *argv):
    lines = []
    records = bench.main(["--sides", "3", *argv], emit=lines.append)
    assert [json.loads(line) for line in lines] == records     # one JSON line per record
    return records


def test_lowers_solves_and_reports(bench):
    records = _run(bench, "--every", "10", "--max-iterations", "40", "--target", "1e-9")
    lowering, *checks, summary = records
    assert lowering["phase"] == "lowering" and summary["phase"] == "summary"
    assert (lowering["nodes"], lowering["infosets"]) == (1147, 192)
    for key in ("lowering_cpu_s", "lowering_peak_bytes", "lowering_peak_per_node"):
        assert lowering[key] >= 0
    assert [c["iteration"] for c in checks] == [10, 20, 30, 40]
    for c in checks:
        assert c["phase"] == "check" and set(c) == {
            "phase", "iteration", "exploitability", "solve_cpu_s", "evaluate_cpu_s",
            "rss_bytes"}
    values = [c["exploitability"] for c in checks]
    assert all(b < a for a, b in zip(values, values[1:])), values       # DCFR converges
    assert summary["iterations"] == 40 and summary["reached"] is False
    assert summary["exploitability"] == values[-1]
    for key in ("compile_cpu_s", "solve_cpu_s", "evaluate_cpu_s", "cpu_s_per_iteration",
                "cpu_s_per_iteration_with_evaluation", "process_peak_bytes"):
        assert summary[key] >= 0
    assert (summary["cpu_s_per_iteration_with_evaluation"]
            >= summary["cpu_s_per_iteration"])


def test_stops_at_the_target(bench):
    """The first check at or below the target ends the run (CFR+ passes 1e-2 on sides=3
    within a few tens of iterations: it stops well before the maximum)."""
    records = _run(bench, "--every", "10", "--max-iterations", "200", "--target", "1e-2",
                   "--preset", "cfr+")
    checks, summary = records[1:-1], records[-1]
    assert summary["reached"] is True and summary["preset"] == "cfr+"
    assert checks[-1]["exploitability"] <= 1e-2
    assert all(c["exploitability"] > 1e-2 for c in checks[:-1])
    assert summary["iterations"] == checks[-1]["iteration"] < 200


@pytest.mark.parametrize("argv, words", [
    (["--target", "0"], "--target must be positive, got 0.0"),
    (["--target", "nan"], "--target must be a finite number, got nan"),
    (["--target", "inf"], "--target must be a finite number, got inf"),
    (["--every", "0"], "--every must be a positive integer"),
    (["--max-iterations", "-5"], "--max-iterations must be a positive integer"),
    (["--game", "nosuch"], "--game 'nosuch': [game-string] unknown game 'nosuch'"),
    (["--preset", "nosuch"], "unknown --preset 'nosuch'"),
])
def test_bad_arguments_are_usage_errors(bench, capsys, argv, words):
    # exit 2 with one line naming the argument, before any lowering (a target of 0, nan or
    # inf would never stop the run: it ran to --max-iterations)
    with pytest.raises(SystemExit) as e:
        bench.main(argv, emit=lambda line: pytest.fail(f"ran: {line}"))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
