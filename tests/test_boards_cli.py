"""``jaxcfr solve holdem_spot(...) --boards SPEC`` (issue 31, item 4 on the command line): the
spec's boards (``games/holdem/boards.py`` ``parse_boards``), the stack solved in one compiled
step with each board's exploitability that of its own solve, and mistakes answered before
JAX is imported."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("phevaluator")

from jaxcfr_games.holdem.boards import parse_boards  # noqa: E402
from jaxcfr_games.holdem.cards import HoldemError, parse_board  # noqa: E402

try:
    from tests.cli_mistakes import assert_answered_before_jax, run_cli as _run
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cli_mistakes import assert_answered_before_jax, run_cli as _run

SPOT = ("holdem_spot(board='Td9d6h5c', ranges=('AA,KK,QQ,AKs', 'JJ,TT,AQs,KQs'), pot=100, "
        "stack=200, bets='60%, a')")


def test_river_and_turn_specs_name_every_next_card():
    rivers = parse_boards("river:Td9d6h5c")
    turn = parse_board("Td9d6h5c")
    assert len(rivers) == 48 == len(set(rivers))
    assert all(parse_board(b)[:4] == turn for b in rivers)
    assert {parse_board(b)[4] for b in rivers} == set(range(52)) - set(turn)
    turns = parse_boards(" TURN: Td9d6h ")
    assert len(turns) == 49 and all(len(parse_board(b)) == 4 for b in turns)


def test_random_and_explicit_specs():
    boards = parse_boards("random:16:4:7")
    assert len(boards) == 16 and len({frozenset(parse_board(b)) for b in boards}) == 16
    assert all(len(parse_board(b)) == 4 for b in boards)
    assert parse_boards("random:16:4:7") == boards                 # seeded
    assert parse_boards("random:16:4:8") != boards
    assert [len(parse_board(b)) for b in parse_boards("random:3")] == [5, 5, 5]
    assert parse_boards("Td9d6h5c2s, td9d6h5c3s") == ["Td9d6h5c2s", "Td9d6h5c3s"]


@pytest.mark.parametrize("spec, words", [
    ("river:Td9d6h", "river_boards() takes a turn board of 4 cards"),
    ("turn:Td9d6h5c", "turn_boards() takes a flop of 3 cards"),
    ("river:Td9d6h5x", "'5x' is not a card"),
    ("random:x", "random:COUNT[:CARDS[:SEED]] with whole numbers"),
    ("random:0", "COUNT must be at least 1"),
    ("random:4:6", "a board has 3, 4 or 5 cards, got 6"),
    ("random:30000:3", "there are 22,100 boards of 3 cards, not 30,000"),
    ("flop:Td9d6h", "unknown kind 'flop'"),
    ("Td9d6h5c2s,Td9d6h5c2s", "board Td9d6h5c2s comes twice"),
    ("Td9d6h5c2s,Td9d6h5c", "every board is of one street"),
    ("", "a boards spec is river:TURN"),
])
def test_bad_specs_say_what_is_wrong(spec, words):
    with pytest.raises(HoldemError, match=None) as e:
        parse_boards(spec)
    assert words in str(e.value)


@pytest.mark.slow
def test_the_stack_matches_each_board_solved_on_its_own(capsys):
    """Three river boards in one compiled step: each board's values and exploitability
    (chips and percent of the pot) are those of ``jaxcfr solve`` of that board alone."""
    boards = ["Td9d6h5c2s", "Td9d6h5cAs", "Td9d6h5cKh"]
    common = ("--algorithm", "postflop-dcfr", "--iterations", "30", "--precision", "float64",
              "--json", "--quiet")
    status, out, err = _run(capsys, "solve", SPOT, "--boards", ",".join(boards), *common)
    assert status == 0, err
    stack = json.loads(out)
    assert stack["boards"] == boards and stack["pot"] == 100
    for b, board in enumerate(boards):
        own = SPOT.replace("board='Td9d6h5c'", f"board='{board}'")
        status, out, err = _run(capsys, "solve", own, *common)
        assert status == 0, err
        alone = json.loads(out)
        np.testing.assert_allclose(stack["exploitability"][b], alone["exploitability"],
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(stack["values"][b], alone["values"], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(stack["exploitability_pot_percent"][b],
                                   alone["exploitability_pot_percent"], rtol=1e-9)
    assert len(set(np.round(stack["exploitability"], 9))) == 3    # the boards differ


@pytest.mark.slow
def test_the_table_has_a_row_per_board(capsys):
    status, out, err = _run(capsys, "solve", SPOT, "--boards", "random:2:5:3",
                            "--iterations", "20", "--eval-every", "10")
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["board", "exploitability", "%", "of", "pot", "value", "OOP",
                                "value", "IP"]
    rows = lines[1:3]
    assert [r.split()[0] for r in rows] == parse_boards("random:2:5:3")
    for row in rows:                                          # chips and % of a pot of 100
        chips, percent = row.split()[1:3]
        assert percent.endswith("%") and float(percent[:-1]) == pytest.approx(float(chips),
                                                                              rel=1e-3)
    assert lines[3].startswith("2 boards, pot 100: exploitability")
    assert err.count("iteration ") == 2 and "% of the pot on average" in err


MISTAKES = [
    (["solve", SPOT, "--boards", "river:Td9d6h"], "--boards: boards 'river:Td9d6h'"),
    (["solve", SPOT, "--boards", "random:0"], "COUNT must be at least 1"),
    (["solve", "kuhn_poker", "--boards", "random:4"], "--boards takes a hold'em spot"),
    (["solve", "holdem_spot(ranges=('AA', 'KX'))", "--boards", "random:2"], "'KX'"),
    # a range the first board empties is that board's, as on the others (turn:Td9d6h's
    # first board is Td9d6h2c); parameters no board takes are the game's
    (["solve", "holdem_spot(ranges=('2c2d', 'KK'))", "--boards", "turn:Td9d6h"],
     "jaxcfr: error: --boards: board Td9d6h2c: holdem_spot: OOP's range has no hand the "
     "board Td9d6h2c leaves\n"),
    (["solve", "holdem_spot(ranges=('', 'KK'))", "--boards", "turn:Td9d6h"],
     "jaxcfr: error: holdem_spot(ranges=('', 'KK')): holdem_spot: OOP's range has no hand"),
    (["solve", "holdem_spot(pot=-1)", "--boards", "turn:Td9d6h"],
     "jaxcfr: error: holdem_spot(pot=-1): holdem_spot: pot must be a positive"),
    (["solve", SPOT, "--boards", "random:2", "--grid", ""], "--grid is not taken"),
    (["solve", SPOT, "--boards", "random:2", "--sampling", "outcome"], "by exact passes"),
    (["solve", SPOT, "--boards", "random:3", "--algorithm", "dcfr", "--per-board",
      "alpha=1.5,2"], "--per-board alpha: 2 values for 3 boards; give one per board"),
    (["solve", SPOT, "--boards", "Td9d6h5c2s,Td9d6h5c3s", "--algorithm", "dcfr",
      "--per-board", "alpha=1.5,x"],
     "--per-board alpha: value 2 of 2 (board Td9d6h5c3s): 'x' is not a number"),
    (["solve", SPOT, "--boards", "Td9d6h5c2s,Td9d6h5c3s", "--algorithm", "dcfr",
      "--per-board", "alpha=nan,2"],
     "--per-board alpha: value 1 of 2 (board Td9d6h5c2s) must be a finite number, got nan"),
    (["solve", SPOT, "--boards", "random:2", "--per-board", "alpha=1,2"],
     "cfr+ takes no parameter 'alpha'; it takes gamma"),
    (["solve", SPOT, "--boards", "random:2", "--per-board", "gamma"], "expected NAME=X,X,..."),
    (["solve", SPOT, "--boards", "random:2", "--gamma", "1", "--per-board", "gamma=1,2"],
     "--per-board gamma: given twice (also by --gamma)"),
    (["solve", SPOT, "--boards", "random:2", "--gamma", "1,2"],
     "--per-board gamma=X,X,... gives one value per board"),
    (["solve", SPOT, "--per-board", "gamma=1,2"], "give --boards too"),
    (["solve", SPOT, "--boards", "Td9d6h5c2s", "--per-board", "gamma=1,2"],
     "--per-board gamma: 2 values for 1 board; give one per board"),      # not "1 boards"
    (["solve", SPOT, "--boards", "random:2", "--seed", "1,2"],
     "--boards runs one setting of --seed on every board, got a list\n"),
]


def test_mistakes_are_answered_before_jax_is_imported(tmp_path):
    assert_answered_before_jax(MISTAKES, tmp_path)


def test_target_stops_the_stack_of_boards(capsys):
    """``--boards --target``: every board's exploitability is below a huge target at the first
    evaluation, so the stack stops there (the stack's own test of every member:
    tests/test_solve_target.py)."""
    common = (SPOT, "--boards", "Td9d6h5c2s,Td9d6h5cAs", "--iterations", "30",
              "--eval-every", "10", "--target", "1e9", "--quiet")
    status, out, err = _run(capsys, "solve", *common, "--json")
    assert status == 0, err
    shown = json.loads(out)
    assert shown["reached_target"] is True and shown["iteration"] == 10
    status, out, err = _run(capsys, "solve", *common)
    assert status == 0, err
    assert "target          reached at iteration 10: every member's exploitability" in out


def test_a_stack_over_the_memory_budget_is_refused_at_once(capsys, monkeypatch):
    """Thousands of boards that do not fit the budget: refused with the count, the bytes
    and the budget after sizing a few spots, in one line, before the others are built or
    lowered (they would take minutes) and before anything compiles."""
    import jaxcfr.cli.boards as boards_cli
    built = []
    real = boards_cli._Spots.__getitem__
    monkeypatch.setattr(boards_cli._Spots, "__getitem__",
                        lambda self, b: built.append(b) or real(self, b))
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", str(300 << 20))
    status, out, err = _run(capsys, "solve", SPOT, "--boards", "random:5000")
    assert status == 2 and out == ""
    assert "[memory-budget] a stack of 5,000 spots" in err and "over the memory budget of " \
        "300.0 MiB" in err and "Traceback" not in err
    assert len(set(built)) <= 16


class _Lowerings:
    """Counts the spots lowered (``lower_public``, where the command line and
    ``stack_public`` call it), and with which terminals."""

    def __init__(self, monkeypatch):
        import jaxcfr.lowering.public as lowering
        import jaxcfr.lowering.public_stack as stacking
        self.calls: list[str] = []
        real = lowering.lower_public

        def counted(game, *args, **kwargs):
            self.calls.append(kwargs.get("terminals", "auto"))
            return real(game, *args, **kwargs)
        monkeypatch.setattr(lowering, "lower_public", counted)
        monkeypatch.setattr(stacking, "lower_public", counted)


MEMBER_BOARDS = ["Td9d6h5c2s", "Td9d6h5c3s", "Td9d6h5cAs"]


def _library(boards, iterations, **options):
    """The library's stack of ``SPOT`` on ``boards`` (float64): what the command line must
    print."""
    import jaxcfr
    from jaxcfr.game.strings import parse_game_string
    from jaxcfr_games.holdem.boards import board_spots
    params = parse_game_string(SPOT)[1]
    params.pop("board")
    return jaxcfr.solve_public(board_spots(boards, **params), "dcfr", iterations,
                               precision="float64", **options)


def test_per_board_settings_are_the_librarys_per_member_parameters(capsys, monkeypatch):
    """``--per-board alpha=...`` with a shared ``--gamma``: each board's exploitability and
    values are ``solve_public(list, per_member=True, alpha=[...])``'s, and each spot is
    lowered once (the precheck's members are stacked, not lowered again)."""
    lowerings = _Lowerings(monkeypatch)
    alpha = [1.5, 2, 3]
    status, out, err = _run(capsys, "solve", SPOT, "--boards", ",".join(MEMBER_BOARDS),
                            "--algorithm", "dcfr", "--iterations", "10", "--precision",
                            "float64", "--per-board", "alpha=[1.5, 2, 3]", "--gamma", "1",
                            "--json", "--quiet")
    assert status == 0, err
    assert len(lowerings.calls) == len(MEMBER_BOARDS)
    shown = json.loads(out)
    assert shown["per_board"] == {"alpha": alpha}
    ref = _library(MEMBER_BOARDS, 10, per_member=True, alpha=alpha, gamma=1)
    np.testing.assert_allclose(shown["exploitability"], ref.final["exploitability"],
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(shown["values"], ref.final["values"], rtol=1e-12, atol=0)
    assert len(set(np.round(shown["exploitability"], 9))) == 3


def test_the_table_shows_each_boards_settings(capsys):
    status, out, err = _run(capsys, "solve", SPOT, "--boards", ",".join(MEMBER_BOARDS),
                            "--algorithm", "dcfr", "--iterations", "5", "--per-board",
                            "alpha=1.5,2,3", "--per-board", "gamma=1,1,2", "--quiet")
    assert status == 0, err
    head, *rows = out.splitlines()[:4]
    assert head.split()[:3] == ["board", "alpha", "gamma"]
    assert [r.split()[:3] for r in rows] == [["Td9d6h5c2s", "1.5", "1"],
                                             ["Td9d6h5c3s", "2", "1"],
                                             ["Td9d6h5cAs", "3", "2"]]


def test_a_stack_of_ranked_and_dense_spots_lowers_the_dense_ones_again(capsys, monkeypatch):
    """Spots whose terminals differ (ranked from RANKED_FROM hands on; the ace blocks
    hands on Td9d6h5cAs): the stack is ranked, each spot lowered once and the dense ones a
    second time, ranked; the boards' figures are the library's stack's."""
    import jaxcfr.lowering.public as lowering
    from jaxcfr_games.holdem.boards import board_spots
    from jaxcfr.game.strings import parse_game_string
    params = parse_game_string(SPOT)[1]
    params.pop("board")
    hands = [max(len(s.hands(p)) for p in (0, 1)) for s in board_spots(MEMBER_BOARDS, **params)]
    assert hands[2] < hands[0] == hands[1]
    monkeypatch.setattr(lowering, "RANKED_FROM", hands[0])     # two ranked, one dense
    lowerings = _Lowerings(monkeypatch)
    status, out, err = _run(capsys, "solve", SPOT, "--boards", ",".join(MEMBER_BOARDS),
                            "--algorithm", "dcfr", "--iterations", "10", "--precision",
                            "float64", "--json", "--quiet")
    assert status == 0, err
    assert lowerings.calls == ["auto"] * 3 + ["ranked"]
    ref = _library(MEMBER_BOARDS, 10)
    assert ref.stack.ranked
    shown = json.loads(out)
    np.testing.assert_allclose(shown["exploitability"], ref.final["exploitability"],
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(shown["values"], ref.final["values"], rtol=1e-12, atol=0)
