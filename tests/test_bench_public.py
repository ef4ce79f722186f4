"""``benchmarks/bench_public.py --target`` (iterations to an exploitability on a public tree)
and ``benchmarks/profile_public_step.py`` (one iteration by parts).

A light run on ``liars_dice(sides=3, tree='public')`` to a loose target: the figures it
reports are checked against what they count (the state's tables, the lowered tensors) and
its last exploitability against ``jaxcfr.solve`` of the same game, preset and iterations
(float64: the same trajectory). Nothing here asserts a time.
"""

from __future__ import annotations


import numpy as np
import pytest

import jaxcfr
from tests.bench_programs import benchmark_modules

GAME = "liars_dice(sides=3, tree='public')"


@pytest.fixture(scope="module")
def bench_public():
    with benchmark_modules("bench_public") as (module,):
        yield module


def test_target_reports_and_agrees_with_solve(bench_public):
    lines = []
    out = bench_public.to_target(GAME, 5e-3, preset="dcfr", check_every=10,
                                 max_iterations=200, dtype="float64", emit=lines.append)
    checks = [x for x in lines if "iteration" in x]
    assert out["reached"] and out["exploitability"] <= 5e-3
    assert [c["iteration"] for c in checks] == list(range(10, out["iterations"] + 1, 10))
    assert all(c["exploitability"] > 5e-3 for c in checks[:-1])     # stopped at the first
    assert lines[0]["lowered"]["public_nodes"] == out["public_nodes"] == 127
    lowered = jaxcfr.lower_public(jaxcfr.load_game(GAME))
    rows, actions = lowered.tensors.legal_mask.shape
    assert (out["rows"], out["actions"]) == (lowered.num_rows, actions)
    tables = jaxcfr.dcfr().tables                   # regret, sums, their compensation
    assert len(tables) == 3
    assert out["device_state_bytes"] == len(tables) * rows * actions * 8  # float64 tables
    assert out["host_bytes"] == lowered.nbytes
    assert out["legal_fraction"] == pytest.approx(np.mean(lowered.tensors.legal_mask))
    result = jaxcfr.solve(GAME, "dcfr", out["iterations"], precision="float64")
    assert float(result.metrics[-1]["exploitability"]) == pytest.approx(
        out["exploitability"], rel=1e-12, abs=1e-15)


def test_target_refuses_a_history_game(bench_public):
    with pytest.raises(ValueError, match="not a public game"):
        bench_public.to_target("liars_dice(sides=3)", 1e-2, emit=lambda _: None)


def test_profile_public_step_parts():
    """``benchmarks/profile_public_step.py`` on a tiny public game: every part timed, the
    derived parts the differences they are defined as."""
    with benchmark_modules("profile_public_step") as (module,):
        profile = module.profile
    out = profile(GAME, "cfr+", repeats=1, warm_iterations=2)
    lowered = jaxcfr.lower_public(jaxcfr.load_game(GAME))
    assert out["legal_fraction"] == pytest.approx(np.mean(lowered.tensors.legal_mask))
    assert (out["rows"], out["actions"]) == (lowered.num_rows, lowered.tensors.legal_mask.shape[1])
    for part in ("step", "estimate", "reach", "value", "regret_matching"):
        assert out[part]["cpu_s"] >= 0 and out[part]["wall_s"] > 0
    for clock in ("cpu_s", "wall_s"):
        assert out["tables"][clock] == pytest.approx(
            out["step"][clock] - 2 * out["estimate"][clock] - out["regret_matching"][clock])
        assert out["estimate_rest"][clock] == pytest.approx(
            out["estimate"][clock] - out["reach"][clock] - out["value"][clock])



@pytest.mark.parametrize("script, argv, words", [
    ("bench_public", ["--target", "nan"], "--target must be a finite number, got nan"),
    ("bench_public", ["--target", "-1"], "--target must be positive, got -1.0"),
    ("bench_public", ["--target", "1e-3", "--check-every", "0"],
     "--check-every must be a positive integer"),
    ("bench_public", ["--target", "1e-3", "--game", "nosuch"],
     "--game 'nosuch': [game-string] unknown game"),
    ("bench_public", ["--target", "1e-3", "--game", "kuhn_poker"],
     "--game 'kuhn_poker' is not a public game"),
    ("bench_public", ["--target", "1e-3", "--preset", "nosuch"], "unknown --preset 'nosuch'"),
    ("profile_public_step", ["--repeats", "0"], "--repeats must be a positive integer"),
    ("profile_public_step", ["--game", "nosuch"], "--game 'nosuch': [game-string] unknown"),
    ("profile_public_step", ["--game", "kuhn_poker"], "--game 'kuhn_poker' is not a public"),
    ("profile_public_step", ["--preset", "nosuch"], "unknown --preset 'nosuch'"),
])
def test_bad_arguments_are_usage_errors(script, argv, words, capsys):
    # exit 2 with one line naming the argument, before any lowering (--target nan divided
    # by zero after lowering liar's dice 9; 0 or -1 never stopped; a game that does not
    # load was a traceback)
    with benchmark_modules(script) as (module,):
        main = module.main
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
