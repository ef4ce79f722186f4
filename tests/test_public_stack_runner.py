"""Stacks of public trees through the Runner and ``jaxcfr train`` (configs, checkpoints,
resume, the command line).

Oracles: :func:`jaxcfr.solve_public` of the same list of games (the stack's own solver,
``tests/test_public_stack.py``) and each member's own solve; a run of N iterations
straight equals N/2 + resume N/2 bit for bit (float64 and float32); a second chunk and a
second evaluation compile nothing. Games: public Kuhn and public Leduc with 3 and 4 ranks
(different trees, hand counts and depths), and a small-range river spot on two boards.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr.api.public_stack import solve_public_stack
from jaxcfr.cli.app import main as cli_main
from jaxcfr.engine.seam import SHARED_MIN_MEMBERS, Mapped, Vmapped, choose_seam
from jaxcfr.lowering.public_stack import PublicStack, stack_public
from jaxcfr.profiles.profile import Profile
from jaxcfr.runs import ConfigError, load_config, train
from jaxcfr.runs import checkpoint
from jaxcfr.runs.boards import board_members, chosen_boards
from jaxcfr.runs.config import config_from_dict
from jaxcfr.runs.progress import format_metric
from jaxcfr.solvers.metric_record import TIMING_KEYS
from jaxcfr_games.holdem.boards import river_boards
from jaxcfr_games.holdem.cards import parse_board

try:
    from tests.test_compile_once import count_compiles
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from test_compile_once import count_compiles

ROOT = Path(__file__).resolve().parent.parent
GAMES = ("kuhn_poker(tree='public')", "leduc_poker(tree='public', ranks=3)",
         "leduc_poker(tree='public', ranks=4)")
SMALL = "('QQ+,AKs,AQs,KQs,JTs', 'JJ-99,AJs+,KJs,T9s,98s')"
SPOT = f"holdem_spot(ranges={SMALL}, pot=100, stack=200, bets='60%', raises='', add_allin=0)"
BOARDS = ("Td9d6h5c2s", "AsKd6h5c2s")


def _config(games=GAMES, iterations=40, precision="float64", **game):
    section = {"names": list(games)} if not game else {"name": SPOT, **game}
    return config_from_dict({"name": "pubstack", "game": section,
                             "solver": {"algorithm": "cfr+", "iterations": iterations},
                             "run": {"eval_every": 10, "checkpoint_every": 20, "chunk": 8,
                                     "precision": precision, "quiet": True, "plot": False}})


@pytest.fixture(scope="module")
def stack():
    return stack_public([jaxcfr.load_game(g) for g in GAMES])


def test_the_runner_steps_a_stack_as_solve_public_does():
    """Runner(PublicStack): the state, metrics and profiles of solve_public's stack
    (float64; public Kuhn and Leduc, the slow test below adds Leduc with 4 ranks)."""
    stack = stack_public([jaxcfr.load_game(g) for g in GAMES[:2]])
    runner = jaxcfr.Runner(stack, jaxcfr.cfr_plus(), precision="float64", chunk=8)
    assert runner.games_batched and runner.batch_members == 2
    state = runner.advance(runner.init(), 20)
    ref = solve_public_stack(stack, "cfr+", 20, precision="float64", chunk=8)
    for field in ("regret", "strategy_sum"):
        got, want = np.asarray(getattr(state, field)), np.asarray(getattr(ref.state, field))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * max(1, np.abs(want).max()))
    ev = runner.evaluate(state)
    np.testing.assert_allclose(ev["exploitability"], ref.final["exploitability"], rtol=1e-12)
    profiles = runner.profiles(state)
    for b, table in enumerate(ref.stack.member_tables(ref.average_strategy)):
        mine = Profile.from_lowered(stack.members[b], table)     # [I_b, A_b]: unpadded
        assert profiles[b].keys == mine.keys
        np.testing.assert_allclose(profiles[b].probs, mine.probs, rtol=0, atol=1e-12)


@pytest.mark.slow
def test_each_member_of_the_runner_s_stack_is_its_own_solve(stack):
    """Each member's metrics and profile are its own solve's (float64)."""
    runner = jaxcfr.Runner(stack, jaxcfr.cfr_plus(), precision="float64", chunk=8)
    state = runner.advance(runner.init(), 20)
    ev = runner.evaluate(state)
    profiles = runner.profiles(state)
    for b, member in enumerate(stack.members):
        own = jaxcfr.solve_public(member, "cfr+", 20, precision="float64")
        np.testing.assert_allclose(ev["exploitability"][b], own.final["exploitability"],
                                   rtol=1e-10, atol=1e-13)
        mine = Profile.from_lowered(member, own.average_strategy)
        assert profiles[b].keys == mine.keys and profiles[b].game == member.name
        np.testing.assert_allclose(profiles[b].probs, mine.probs, rtol=0, atol=1e-12)


def test_a_stack_of_public_trees_is_vmapped_wherever_it_is_not_mapped(stack):
    """The seam never takes a public stack for a shared tree or a forest (history-tree
    layouts): on a GPU a stack vmaps, on a CPU it maps whatever its size (members one
    after another, per player block: jaxcfr.solvers.public_stack.maps_members)."""
    estimator = jaxcfr.cfr_plus().estimator
    assert type(choose_seam(stack, estimator, backend="gpu").layout) is Vmapped
    assert type(choose_seam(stack, estimator, backend="cpu").layout) is Mapped
    big = stack_public([jaxcfr.load_game(GAMES[0])] * SHARED_MIN_MEMBERS)
    assert type(choose_seam(big, estimator, backend="cpu").layout) is Mapped
    assert type(choose_seam(big, estimator, backend="gpu").layout) is Vmapped
    runner = jaxcfr.Runner(big, jaxcfr.cfr_plus(), precision="float64", chunk=8)
    state = runner.advance(runner.init(), 8)
    ref = solve_public_stack(big, "cfr+", 8, precision="float64", chunk=8)
    np.testing.assert_allclose(np.asarray(state.strategy_sum), np.asarray(
        ref.state.strategy_sum), rtol=0, atol=1e-12)
    np.testing.assert_allclose(runner.evaluate(state)["exploitability"],
                               ref.final["exploitability"], rtol=1e-12)


def test_a_second_chunk_and_evaluation_compile_nothing(stack):
    runner = jaxcfr.Runner(stack, jaxcfr.cfr_plus(), chunk=4)
    state = runner.advance(runner.init(), 4)
    runner.evaluate(state)
    state = runner.advance(state, 1)
    jax.block_until_ready(state)
    with count_compiles() as counts:
        state = runner.advance(state, 2 * 4 + 3)
        runner.evaluate(state)
        jax.block_until_ready(state)
    assert counts["traces"] == {} and counts["compiles"] == 0, counts


def _final(run_dir):
    return checkpoint.load_latest(Path(run_dir) / "checkpoints")


@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_train_straight_equals_half_and_resume_bit_for_bit(tmp_path, precision):
    straight = train(_config(precision=precision), out_dir=str(tmp_path / "straight"))
    assert isinstance(straight.lowered, PublicStack) and len(straight.members) == 3
    assert straight.members == list(GAMES)
    half = train(_config(iterations=20, precision=precision), out_dir=str(tmp_path / "half"))
    assert half.iteration == 20
    more = train(load_config(tmp_path / "half" / "config.toml", ["solver.iterations=40"]),
                 resume=str(tmp_path / "half"))
    assert more.resumed_from == 20 and more.iteration == 40
    a, b = _final(tmp_path / "straight"), _final(tmp_path / "half")
    assert a.iteration == b.iteration == 40
    for name in a.arrays:
        assert a.arrays[name].dtype == np.dtype(precision) or name == "iteration"
        np.testing.assert_array_equal(a.arrays[name], b.arrays[name], err_msg=name)
    strip = lambda rs: [{k: v for k, v in r.items() if k not in TIMING_KEYS}  # noqa: E731
                        for r in rs]
    assert strip(straight.metrics) == strip(more.metrics)
    assert len(straight.metrics[-1]["metric"]) == 3                 # one per member
    for p, q in zip(straight.profiles, more.profiles):
        np.testing.assert_array_equal(p.probs, q.probs)
    saved = sorted((tmp_path / "straight" / "profiles").glob("member-*.npz"))
    assert len(saved) == 3                                          # one profile per member
    spots = json.loads((tmp_path / "straight" / "spots.json").read_text())["spots"]
    assert [s["game"] for s in spots] == list(GAMES) and spots[0]["pot"] is None


def test_resume_refuses_another_stack(tmp_path):
    train(_config(iterations=10), out_dir=str(tmp_path / "run"))
    other = _config(games=GAMES[:2] + ("leduc_poker(tree='public', ranks=5)",), iterations=20)
    with pytest.raises(checkpoint.CheckpointError):
        train(other, resume=str(tmp_path / "run"))


def test_resume_on_other_boards_names_the_checkpoint_s_boards(tmp_path):
    # the spot (game.name) is the same: the message says which boards the run was on
    train(_config(boards=list(BOARDS), iterations=2), out_dir=str(tmp_path / "run"))
    with pytest.raises(checkpoint.CheckpointError,
                       match=r"another game: game\.boards \(\['Td9d6h5c2s', 'AsKd6h5c2s'\] "
                             r"in the checkpoint, \['Td9d6h5c2s', 'Td9d6h5c3s'\] now\)"):
        train(_config(boards=["Td9d6h5c2s", "Td9d6h5c3s"], iterations=4),
              resume=str(tmp_path / "run"))


def test_boards_expand_to_one_spot_per_board():
    members = board_members(SPOT, BOARDS)
    assert [jaxcfr.load_game(m).board() for m in members] == [parse_board(b) for b in BOARDS]
    assert all(jaxcfr.load_game(m).pot == 100 for m in members)
    assert chosen_boards(SPOT, "river:Td9d6h5c") == tuple(river_boards("Td9d6h5c"))
    assert len(board_members(SPOT, "river:Td9d6h5c")) == 48
    config = _config(boards=list(BOARDS))
    assert config.game.batched and config.game.strings == members


def test_the_boards_stack_equals_solve_public_of_the_spots(tmp_path):
    """A 2-board river spot: the run's per-board exploitability (and in percent of the
    pot) is solve_public's of the same spots, and each board's own solve's."""
    result = train(_config(boards=list(BOARDS), iterations=30), out_dir=str(tmp_path / "r"))
    spots = [jaxcfr.load_game(m) for m in board_members(SPOT, BOARDS)]
    ref = solve_public_stack(spots, "cfr+", 30, precision="float64", chunk=8)
    got = result.final["exploitability"]
    np.testing.assert_allclose(got, ref.final["exploitability"], rtol=1e-12)
    rows = json.loads((tmp_path / "r" / "spots.json").read_text())["spots"]
    assert [r["board"] for r in rows] == list(BOARDS)
    for b, r in enumerate(rows):
        assert r["pot"] == 100.0
        np.testing.assert_allclose(r["metric_pot_percent"],
                                   ref.final["exploitability_pot_percent"][b], rtol=1e-12)


def test_the_progress_shows_each_spot_in_percent_of_its_pot():
    record = {"metric": [0.5, 2.0], "metric_name": "exploitability"}
    assert format_metric(record, (100.0, 50.0)) == \
        "exploitability 0.5000%..4.0000% of the pot (mean 2.2500%, 2 spots)"
    assert format_metric(record) == "exploitability 5.000e-01..2.000e+00 (2 runs)"


def test_the_river_boards_config_runs_from_the_command_line(tmp_path, capsys):
    """configs/river_boards.toml loads, checks and runs (`jaxcfr train`, fewer
    iterations): one exploitability per board, in percent of the pot in the summary."""
    path = ROOT / "configs" / "river_boards.toml"
    config = load_config(path)
    assert config.game.batched and len(config.game.strings) == 4
    out = tmp_path / "run"
    assert cli_main(["train", str(path), "--out", str(out), "--set", "solver.iterations=8",
                     "--set", "run.eval_every=4", "--set", "run.plot=false", "--quiet"]) == 0
    text = capsys.readouterr().out
    boards = chosen_boards(config.game.name, config.game.boards)
    for board in boards:
        assert board in text
    assert "% of pot" in text
    rows = json.loads((out / "spots.json").read_text())
    assert rows["iteration"] == 8 and [r["board"] for r in rows["spots"]] == list(boards)


@pytest.mark.parametrize("game, overrides, match", [
    ({"name": "kuhn_poker", "boards": ["Td9d6h5c2s"]}, [],
     r"game\.boards: .*holdem_spot.*'kuhn_poker'"),
    ({"name": SPOT, "boards": "river:Td9d6h"}, [],
     r"game\.boards: .*'river:Td9d6h'.*turn board of 4 cards"),
    ({"name": SPOT, "boards": ["Td9d6h5c2s", "Td9d6h5c2s"]}, [], r"game\.boards: .*Td9d6h5c2s"),
    ({"name": SPOT, "boards": []}, [],
     r"game\.boards: expected a string or a non-empty list of strings, got a list \[\]"),
    ({"name": SPOT, "boards": "random:0"}, [], r"game\.boards: .*'random:0'"),
    ({"name": SPOT, "boards": ["Td9d6h5c2s"], "bucketing": "suit_isomorphism"}, [],
     r"game\.boards: .*bucketing"),
    ({"name": SPOT}, ["game.boards=7"], r"game\.boards"),
    # the spot given by --set does not parse: the message blames that --set and game.name
    ({"name": SPOT, "boards": ["Td9d6h5c2s"]}, ["game.name=\"holdem_spot(ranges=x)\""],
     r"^--set game\.name=.*: game\.name: \[game-string\] parameter ranges .* not a literal"),
])
def test_bad_boards_are_named_with_their_value(game, overrides, match):
    with pytest.raises(ConfigError, match=match):
        config_from_dict({"game": game}, overrides=overrides)


def test_a_stack_mixing_public_and_history_trees_is_refused(tmp_path):
    config = _config(games=(GAMES[0], "leduc_poker"))
    with pytest.raises(jaxcfr.ArgumentError, match=r"game\.names: .*'leduc_poker' is not a "
                                                    "public tree"):
        train(config, out_dir=str(tmp_path / "run"))


@pytest.mark.slow
def test_each_board_of_the_run_is_its_own_solve(tmp_path):
    result = train(_config(boards=list(BOARDS), iterations=30), out_dir=str(tmp_path / "r"))
    for b, member in enumerate(board_members(SPOT, BOARDS)):
        own = jaxcfr.solve_public(jaxcfr.load_game(member), "cfr+", 30, precision="float64")
        np.testing.assert_allclose(result.final["exploitability"][b],
                                   own.final["exploitability"], rtol=1e-9)


@pytest.mark.slow
def test_a_batch_of_settings_crosses_the_stack(tmp_path):
    """solver.alpha = [1.5, 2.0] on a 2-board stack: four members (boards outer), each
    the solve_public stack's of that setting; spots.json has a row for each."""
    config = config_from_dict({"name": "pubstack",
                               "game": {"name": SPOT, "boards": list(BOARDS)},
                               "solver": {"algorithm": "dcfr", "iterations": 8,
                                          "alpha": [1.5, 2.0]},
                               "run": {"eval_every": 8, "chunk": 8, "precision": "float64",
                                       "quiet": True, "plot": False}})
    result = train(config, out_dir=str(tmp_path / "r"))
    spots = [jaxcfr.load_game(m) for m in board_members(SPOT, BOARDS)]
    ref = solve_public_stack(spots, "dcfr", 8, precision="float64", chunk=8, alpha=[1.5, 2.0])
    np.testing.assert_allclose(result.final["exploitability"],
                               np.asarray(ref.final["exploitability"]).reshape(-1), rtol=1e-12)
    rows = json.loads((tmp_path / "r" / "spots.json").read_text())["spots"]
    assert [r["board"] for r in rows] == [BOARDS[0]] * 2 + [BOARDS[1]] * 2
    assert all(r["label"].endswith(f"alpha={a}") for r, a in zip(rows, ("1.5", "2") * 2))


def test_a_stack_of_boards_over_the_memory_budget_is_refused_at_once(tmp_path, monkeypatch):
    """``game.boards = "random:5000"`` on a small budget: refused after sizing a few
    members (the others are neither loaded nor lowered), naming the count and the
    budget."""
    import importlib
    from jaxcfr.lowering.budget import MemoryBudgetError
    train_module = importlib.import_module("jaxcfr.runs.train")   # (runs.train: the function)
    lowered = []
    real = train_module.lower_public_reporting
    monkeypatch.setattr(train_module, "lower_public_reporting",
                        lambda game, *a, **k: lowered.append(game) or real(game, *a, **k))
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", str(300 << 20))
    config = _config(boards="random:5000")
    with pytest.raises(MemoryBudgetError, match=r"a stack of 5,000 members .* over the "
                                                r"memory budget of 300\.0 MiB"):
        train(dataclasses.replace(config, game=dataclasses.replace(config.game, cache=False)),
              out_dir=str(tmp_path / "run"))
    assert len(lowered) <= 16
