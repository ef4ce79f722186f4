"""``jaxcfr.solve(..., target=)`` and ``jaxcfr solve --target``: a solve ends at the first
evaluation whose metric (every member's, in a batch or a stack) is at or below the target,
by the run loop's ``stop_at`` (the test ``jaxcfr train``'s ``run.stop_at`` uses)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.arguments import ArgumentError
from jaxcfr.cli import app
from jaxcfr.engine.loop import at_or_below
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc

#: what differs between two runs of the same iterations: the clocks
TIMING = ("iterations_per_second", "compile_seconds", "wall_seconds")
ITERATIONS, EVERY = 200, 10


def _strip(records):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in records]


def _first_new_low(records, after: int = 2):
    """The iteration and metric of an evaluation (past the ``after``-th) whose metric is
    below every earlier one: a target that stops a run exactly there."""
    for i, r in enumerate(records):
        if i >= after and all(r["metric"] < q["metric"] for q in records[:i]):
            return r["iteration"], r["metric"]
    raise AssertionError("no new low")


def _stops_where_the_full_run_first_reaches(game, algorithm="cfr+", **options):
    """Oracle: the full run's first evaluation at or below its own metric there ends the
    targeted run, whose records are the full run's up to it, bit for bit."""
    full = jaxcfr.solve(game, algorithm, ITERATIONS, eval_every=EVERY, **options)
    assert not full.reached_target
    at, metric = _first_new_low(full.metrics)
    got = jaxcfr.solve(game, algorithm, ITERATIONS, eval_every=EVERY, target=metric,
                       **options)
    assert got.reached_target and got.final["iteration"] == at < ITERATIONS
    assert _strip(got.metrics) == _strip([r for r in full.metrics if r["iteration"] <= at])
    assert int(np.asarray(got.state.iteration).reshape(-1)[0]) == at
    return full, got


def test_kuhn_cfr_plus_stops_at_the_first_evaluation_at_or_below_the_target():
    full, got = _stops_where_the_full_run_first_reaches("kuhn_poker")
    assert type(got) is jaxcfr.SolveResult and "target reached" in repr(got)
    # a target no evaluation reaches: every iteration runs, as without one
    never = jaxcfr.solve("kuhn_poker", "cfr+", ITERATIONS, eval_every=EVERY, target=1e-9)
    assert not never.reached_target and never.final["iteration"] == ITERATIONS
    assert _strip(never.metrics) == _strip(full.metrics)


def test_a_public_tree_stops_at_the_target_too():
    _, got = _stops_where_the_full_run_first_reaches("kuhn_poker(tree='public')")
    assert type(got).__name__ == "PublicSolveResult"
    full = jaxcfr.solve_public(PublicKuhn(), "cfr+", ITERATIONS, eval_every=EVERY)
    at, metric = _first_new_low(full.metrics)
    public = jaxcfr.solve_public(PublicKuhn(), "cfr+", ITERATIONS, eval_every=EVERY,
                                 target=metric)
    assert public.reached_target and public.final["iteration"] == at


def test_a_batch_stops_only_when_every_member_is_at_or_below_the_target():
    """DCFR with alpha 1 and 2 on Kuhn: the target is the batch's worst metric at an
    evaluation where it is a new low; before it, some evaluation has one member at or
    below it but not the other, and the run goes on past that one."""
    full = jaxcfr.solve("kuhn_poker", "dcfr", ITERATIONS, eval_every=EVERY, alpha=[1.0, 2.0])
    worst = [{"iteration": r["iteration"], "metric": max(r["metric"])} for r in full.metrics]
    for i in range(2, len(worst)):
        target = worst[i]["metric"]
        if all(target < w["metric"] for w in worst[:i]) and \
                any(min(r["metric"]) <= target for r in full.metrics[:i]):
            break
    else:
        raise AssertionError("no evaluation tells a batch from its members")
    at = worst[i]["iteration"]
    got = jaxcfr.solve("kuhn_poker", "dcfr", ITERATIONS, eval_every=EVERY, alpha=[1.0, 2.0],
                       target=target)
    assert got.reached_target and got.final["iteration"] == at
    assert _strip(got.metrics) == _strip(full.metrics[:i + 1])


def test_a_public_stack_stops_only_when_every_member_is_there():
    games = [PublicKuhn(), PublicLeduc(ranks=3)]
    full = jaxcfr.solve_public(games, "cfr+", 40, eval_every=4)
    worst = [max(r["metric"]) for r in full.metrics]
    best = [min(r["metric"]) for r in full.metrics]
    i = next(i for i in range(1, len(worst))
             if all(worst[i] < w for w in worst[:i]) and any(b <= worst[i] for b in best[:i]))
    got = jaxcfr.solve_public(games, "cfr+", 40, eval_every=4, target=worst[i])
    assert got.reached_target and got.final["iteration"] == full.metrics[i]["iteration"]
    assert _strip(got.metrics) == _strip(full.metrics[:i + 1])
    assert got.member(1).reached_target
    with pytest.raises(ArgumentError, match="give eval_every too"):
        jaxcfr.solve_public(games, "cfr+", 40, target=0.1)


def test_at_or_below_reads_every_member():
    assert at_or_below(0.5, 0.5) and not at_or_below(0.6, 0.5)
    assert at_or_below([[0.1, 0.2], [0.3, 0.5]], 0.5)
    assert not at_or_below([[0.1, 0.2], [0.3, 0.6]], 0.5)
    assert not at_or_below([0.1, None], 0.5) and not at_or_below(None, 0.5)


@pytest.mark.parametrize("target, words", [
    (0, "target must be positive, got 0"), (-1.0, "target must be positive"),
    (float("nan"), "target must be a finite number"),
    (float("inf"), "target must be a finite number"),
    ("0.1", "target must be a finite number, got '0.1'"),
    (True, "target must be a finite number, got True")])
def test_bad_targets_are_refused_by_name(target, words):
    with pytest.raises(ArgumentError, match=words):
        jaxcfr.solve("kuhn_poker", "cfr+", 10, eval_every=5, target=target)


def test_a_target_without_evaluations_is_refused():
    with pytest.raises(ArgumentError, match="target is checked at evaluations.*give "
                                            "eval_every too"):
        jaxcfr.solve("kuhn_poker", "cfr+", 10, target=0.1)


def test_the_command_line_prints_where_it_reached_the_target(capsys):
    full = jaxcfr.solve("kuhn_poker", "cfr+", ITERATIONS, eval_every=EVERY)
    at, metric = _first_new_low(full.metrics)
    line = ["solve", "kuhn_poker", "--iterations", str(ITERATIONS), "--eval-every",
            str(EVERY), "--target", repr(metric), "--quiet"]
    assert app.main(line) == 0
    out = capsys.readouterr().out
    assert f"target          reached at iteration {at}: exploitability" in out
    assert f"iteration {at + EVERY:>8}" not in out          # no evaluation after it
    assert app.main([*line, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["reached_target"] is True and shown["iteration"] == at
    assert shown["target"] == metric and shown["metric"] == metric
    assert app.main(["solve", "kuhn_poker", "--iterations", "20", "--eval-every", "10",
                     "--target", "1e-9", "--quiet"]) == 0
    assert "target          not reached in 20 iterations" in capsys.readouterr().out


@pytest.mark.parametrize("value, words", [("0", "--target must be positive, got 0"),
                                          ("inf", "--target must be a finite number"),
                                          ("x", "--target must be a finite number, got 'x'")])
def test_bad_command_line_targets_exit_2_with_the_message(capsys, value, words):
    with pytest.raises(SystemExit) as info:                 # argparse's own exit
        app.main(["solve", "kuhn_poker", "--eval-every", "5", "--target", value])
    assert info.value.code == 2 and words in capsys.readouterr().err
    assert app.main(["solve", "kuhn_poker", "--target", "0.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give --eval-every too" in err[0], err
