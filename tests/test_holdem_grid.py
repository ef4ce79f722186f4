"""The 13x13 hand grid of a node's strategy (``jaxcfr_games.holdem.grid``).

Oracles: grids of hand-written strategies on a tiny river spot, worked out by hand
(the combinations the board leaves, the range weights, the own strategy's reach, cards
dealt since); a solved spot's grid agrees with ``PublicSolveResult.strategy`` per
combination; the CSV and JSON carry the same numbers.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

import jaxcfr
from jaxcfr_games.holdem.cards import HoldemError, card
from jaxcfr_games.holdem.grid import cell_label, grid_cell, hand_grid

#: OOP: AA (6 combinations), AKs at half weight (4 x 0.5), 72o (12); IP: KK (6), QQ at
#: half weight (the board's Qh leaves 3 of 6).
SPOT = "holdem_spot(board='QhJd8c5s3h', ranges=('AA,AKs:0.5,72o', 'KK,QQ:0.5'))"


@functools.cache
def lowered():
    return jaxcfr.lower_public(jaxcfr.load_game(SPOT))


def _node(low, history):
    node = 0
    for x in history:
        node = next(int(c) for c in np.flatnonzero(low.tensors.parent == node)
                    if low.node_action[c] == x)
    return node


def _set(low, avg, history, rule):
    """Rows of the node after ``history``: ``rule(label) -> {action: p}``."""
    node = _node(low, history)
    player = int(low.tensors.node_player[node])
    actions = list(low.node_actions[node])
    for h, label in enumerate(low.hands.labels[player]):
        row = np.zeros(avg.shape[1])
        for a, p in rule(label).items():
            row[actions.index(a)] = p
        avg[int(low.tensors.node_base[node]) + h] = row
    return actions


def test_cells_and_labels():
    assert grid_cell("AsAh") == (0, 0) and cell_label(0, 0) == "AA"
    assert grid_cell("AsKs") == (0, 1) and cell_label(0, 1) == "AKs"     # above: suited
    assert grid_cell("AsKd") == (1, 0) and cell_label(1, 0) == "AKo"     # below: offsuit
    assert grid_cell("7d2c") == (12, 7) and cell_label(12, 7) == "72o"
    assert grid_cell("2c2d") == (12, 12) and cell_label(12, 12) == "22"
    assert {cell_label(i, j) for i in range(13) for j in range(13)}.__len__() == 169
    with pytest.raises(HoldemError, match="hand label"):
        grid_cell("AK")


def test_a_hand_written_strategy_gives_the_hand_checked_grid():
    low = lowered()
    avg = np.zeros(tuple(low.tensors.legal_mask.shape))
    # OOP at the root: bets 60 holding the ace of spades, else checks
    _set(low, avg, (), lambda h: {"Bet(60)": 1.0} if "As" in h else {"Check": 1.0})
    grid = hand_grid(low, average_strategy=avg)
    assert grid.player == 0 and grid.actions == ("Check", "Bet(60)", "AllIn(200)")
    bet = grid.actions.index("Bet(60)")
    assert grid.weights[0, 0] == 6 and grid.weights[0, 1] == 2 and grid.weights[12, 7] == 12
    assert grid.weights.sum() == 20
    assert grid.frequencies[0, 0, bet] == 0.5          # AsAc AsAd AsAh of the 6
    assert grid.frequencies[0, 1, bet] == 0.25         # AsKs of the 4
    assert grid.frequencies[12, 7, bet] == 0.0
    assert np.isnan(grid.frequencies[1, 1]).all()      # KK: not in OOP's range
    np.testing.assert_allclose(grid.overall[bet], (3 + 0.5) / 20)

    # IP after the check: its own range, untouched by OOP's strategy (QQ: 3 left x 0.5)
    _set(low, avg, ("Check",), lambda h: {"Check": 1.0})
    ip = hand_grid(low, ("Check",), average_strategy=avg)
    assert ip.player == 1 and ip.weights[1, 1] == 6 and ip.weights[2, 2] == 1.5
    assert ip.weights.sum() == 7.5

    # OOP facing a bet after checking: reached by the combinations that checked
    _set(low, avg, ("Check", "Bet(60)"),
         lambda h: {"Call": 1.0} if h[0] == "A" or "7c" in h else {"Fold": 1.0})
    facing = hand_grid(low, ("Check", "Bet(60)"), average_strategy=avg)
    call = facing.actions.index("Call")
    assert facing.weights[0, 0] == 3 and facing.weights[0, 1] == 1.5
    assert facing.weights[12, 7] == 12
    assert facing.frequencies[0, 0, call] == 1.0
    assert facing.frequencies[12, 7, call] == 0.25     # 7c2d 7c2h 7c2s of the 12
    np.testing.assert_allclose(facing.overall[call], (3 + 1.5 + 3) / 16.5)
    assert "OOP at Check, Bet(60): 16.5 combinations" in facing.text()

    # CSV: one row per combination, the same numbers; JSON: the grids
    rows = facing.csv().splitlines()
    assert rows[0] == "hand,cell,weight," + ",".join(facing.actions)
    assert len(rows) == 1 + len(low.hands.labels[0])
    assert "7c2d,72o,1.0," in facing.csv() and "AsAh,AA,0.0," in facing.csv()
    data = json.loads(json.dumps(facing.to_json()))
    assert data["cells"][0][1] == "AKs" and data["cells"][1][0] == "AKo"
    assert data["frequencies"][12][7][call] == 0.25 and data["frequencies"][1][1] is None
    assert data["weights"][0][0] == 3


def test_a_dealt_card_blocks_the_hands_holding_it():
    spot = jaxcfr.load_game("holdem_spot(board='QhJd8c5s', ranges=('AA,72o', 'KK'), "
                            "bets='a', raises='a')")
    low = jaxcfr.lower_public(spot)
    avg = np.zeros(tuple(low.tensors.legal_mask.shape))
    _set(low, avg, (), lambda h: {"Check": 0.5, "AllIn(200)": 0.5} if "Ac" in h
         else {"Check": 1.0})
    _set(low, avg, ("Check",), lambda h: {"Check": 1.0})
    history = ("Check", "Check", card("As"))
    _set(low, avg, history, lambda h: {"Check": 1.0})
    grid = hand_grid(low, history, average_strategy=avg)
    # AA: the As blocks AsAc AsAd AsAh; AcAd AcAh checked half the time, AdAh always
    assert grid.weights[0, 0] == 2.0
    assert grid.weights[12, 7] == 12                   # 72o: untouched
    with pytest.raises(HoldemError, match="not a decision"):
        hand_grid(low, ("Check", "Check"), average_strategy=avg)      # a card to deal


def test_a_solved_spot_grid_matches_its_strategy():
    result = jaxcfr.solve(SPOT, "postflop-dcfr", 40)
    grid = hand_grid(result, ("Check",))
    for label in ("KsKh", "QsQd"):
        strategy = result.strategy(1, label, ("Check",))
        h = grid.hands.index(label)
        assert grid.strategy[h].tolist() == [strategy[a] for a in grid.actions]
    cells = ~np.isnan(grid.frequencies[..., 0])
    np.testing.assert_allclose(grid.frequencies[cells].sum(-1), 1.0, rtol=1e-6)
    with pytest.raises(HoldemError, match="is not an action at the root"):
        hand_grid(result, ("Raise(1)",))
    with pytest.raises(HoldemError, match="one solve, no batch"):
        hand_grid(result, average_strategy=result.average_strategy[..., None])


def test_the_command_line_prints_and_writes_the_grid(tmp_path, capsys):
    from jaxcfr.cli import app
    out = tmp_path / "grid.csv"
    assert app.main(["solve", SPOT, "--algorithm", "postflop-dcfr", "--iterations", "20",
                     "--grid", "Check", "--grid-out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "IP at Check: 7.5 combinations" in text
    assert out.read_text().splitlines()[0] == ("hand,cell,weight,Check,Bet(60),AllIn(200),"
                                               "ev,ev_Check,ev_Bet(60),ev_AllIn(200)")
    assert len(out.read_text().splitlines()) == 1 + 9           # KK 6 + QQ 3 combinations
    assert app.main(["solve", SPOT, "--iterations", "5", "--grid", "", "--json",
                     "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["grid"]["player"] == 0 and data["grid"]["weights"][0][0] == 6
    for argv in (["solve", "kuhn_poker", "--grid", ""],
                 ["solve", SPOT, "--grid-out", "x.csv"],
                 ["solve", SPOT, "--grid", "", "--grid-out", "x.txt"],
                 ["solve", SPOT, "--iterations", "5", "--grid", "Check, Check"]):
        assert app.main(argv) == 2, argv
    assert "--grid:" in capsys.readouterr().err


def test_per_hand_values_of_a_node():
    # facing OOP's shove, IP's fold loses its half of the pot (50) whatever the hand, and
    # a call with a set of queens (better than every hand OOP holds) wins the showdown's
    # stake (250); a hand's value is its strategy's mix of those; weighted by the hands'
    # counterfactual reach, the root's values are the game value
    from jaxcfr.solvers.public import hand_values_public
    result = jaxcfr.solve_public(lowered(), "cfr+", 200, precision="float64")
    v = result.hand_values(("AllIn(200)",))
    assert v["player"] == 1 and v["actions"] == ("Fold", "Call")
    np.testing.assert_allclose(v["action_ev"][:, 0], -50.0, rtol=1e-12)
    for h, label in enumerate(v["hands"]):
        if label[0] == "Q":
            assert v["action_ev"][h, 1] == pytest.approx(250.0, rel=1e-12)
        assert v["ev"][h] == pytest.approx(v["strategy"][h] @ v["action_ev"][h], rel=1e-12)
    root = hand_values_public(result.lowered, result.average_strategy, 0)
    assert np.nansum(root["reach"] * root["ev"]) == pytest.approx(result.final["values"][0],
                                                                  rel=1e-9)
    assert np.nansum(root["reach"]) == pytest.approx(1.0, rel=1e-9)
    grid = hand_grid(result, ("AllIn(200)",))
    rows = {r["hand"]: r for r in grid.rows()}
    # (to rounding: XLA compiles for the host's CPU, and where it contracts a multiply-add
    # the fold's -50 comes out one or two units in the last place off, e.g. on an AMD EPYC)
    assert rows["QsQd"]["ev_Call"] == pytest.approx(250.0, rel=1e-12)
    assert rows["KsKh"]["ev_Fold"] == pytest.approx(-50.0, rel=1e-12)
    assert grid.csv().splitlines()[0] == "hand,cell,weight,Fold,Call,ev,ev_Fold,ev_Call"
    bare = hand_grid(result.lowered, ("AllIn(200)",),
                     average_strategy=result.average_strategy)
    assert bare.ev is None and "ev" not in bare.csv().splitlines()[0]


def test_the_picture_draws_each_cells_frequencies_as_bands(tmp_path):
    # the hand-written root strategy above: AsAx bets (3 of AA's 6), AsKs bets (1 of the
    # half-weight AKs' 4 x 0.5), 72o checks; bands are as wide as the frequencies and as
    # high as the cell's range over its combinations (AA 6/6, AKs 2/4, 72o 12/12)
    from jaxcfr_games.holdem.grid_plot import action_colours, band_rectangles, grid_figure
    low = lowered()
    avg = np.zeros(tuple(low.tensors.legal_mask.shape))
    _set(low, avg, (), lambda h: {"Bet(60)": 1.0} if "As" in h else {"Check": 1.0})
    grid = hand_grid(low, average_strategy=avg)
    bands = {(i, j, grid.actions[k]): (left, width, height)
             for i, j, k, left, width, height in band_rectangles(grid)}
    assert bands == {(0, 0, "Check"): (0.0, 0.5, 1.0), (0, 0, "Bet(60)"): (0.5, 0.5, 1.0),
                     (0, 1, "Check"): (0.0, 0.75, 0.5), (0, 1, "Bet(60)"): (0.75, 0.25, 0.5),
                     (12, 7, "Check"): (0.0, 1.0, 1.0)}
    # folds blue, checks and calls green, bets by size towards red, all-ins darkest
    fold, call, small, big, shove = action_colours(
        ["Fold", "Call", "Raise(150)", "Raise(300)", "AllIn(400)"])
    assert fold != call and len({small, big, shove}) == 3
    assert action_colours(["Check", "Bet(60)", "AllIn(200)"])[0] == call
    figure = grid_figure(grid)
    drawn = [p for p in figure.axes[0].patches if p.get_width() < 1]     # the bands
    assert sorted(round(p.get_width(), 12) for p in drawn) == [0.25, 0.5, 0.5, 0.75]
    for name in ("grid.png", "grid.svg"):
        grid.write(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 1000
    assert (tmp_path / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(HoldemError, match=r"\.csv, \.json or a picture"):
        grid.write(tmp_path / "grid.txt")


def test_grid_out_that_cannot_be_written_is_refused_before_the_solve(tmp_path, capsys,
                                                                     monkeypatch):
    # a directory, a missing folder or a file taken for a folder: exit 2 naming --grid-out,
    # and nothing solved (the solve's work would be lost to a path mistake)
    from jaxcfr.cli import app
    monkeypatch.setattr("jaxcfr.api.solve.solve_with", lambda *a, **k: pytest.fail("solved"))
    (tmp_path / "d.png").mkdir()
    (tmp_path / "f").write_text("")
    for path, words in ((tmp_path / "d.png", "is a directory"),
                        (tmp_path / "nodir" / "x.png", "does not exist"),
                        (tmp_path / "f" / "x.svg", "does not exist (it is a file)"),
                        # a folder that exists but takes no file (was written after the
                        # solve, whose result was then lost); root passes permission bits
                        *([(Path("/proc/x.csv"), "cannot write in the folder '/proc'")]
                          if Path("/proc/self").is_dir() else [])):
        capsys.readouterr()
        assert app.main(["solve", SPOT, "--iterations", "5", "--grid", "Check",
                         "--grid-out", str(path), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"--grid-out {str(path)!r}" in err and words in err, err
        assert "Traceback" not in err


def test_grid_written_whatever_the_case_of_its_suffix(tmp_path):
    # the command line takes x.CSV (its suffix check ignores the case): so does write()
    grid = hand_grid(jaxcfr.solve_public(lowered(), "cfr+", 5, precision="float64"))
    grid.write(tmp_path / "g.CSV")
    grid.write(tmp_path / "g.Json")
    assert (tmp_path / "g.CSV").read_text() == grid.csv()
    assert json.loads((tmp_path / "g.Json").read_text()) == json.loads(json.dumps(grid.to_json()))


@pytest.mark.parametrize("spot, histories", [
    (SPOT, [(), ("Check",), ("Nope",), ("Check", "Check"), ("Bet(60)", "Fold"),
            ("AllIn(200)",), ("Check", "Bet(60)"), ("Check", "Bet(60)", "Call", card("Ah"))]),
    ("holdem_spot(board='Td9d6h', ranges=('AA', 'KK'), bets='60%', raises='', add_allin=0)",
     [("Check", "Check", card("2c")), ("Check", "Check", card("Td")),
      ("Check", "Check", card("2s"), "Check", "Check", card("2s")),     # 2s: through 2c
      ("Check", "Check", card("2s"), "Check", "Check", card("2c")),
      ("Check", "Check", card("2c"), "Bet(60)"), ("Check", "Check")]),
])
def test_check_history_raises_what_hand_grid_raises(spot, histories):
    # the unlowered game walked: the same verdict and words as the lowered tree's grid
    from jaxcfr_games.holdem.grid import check_history
    game = jaxcfr.load_game(spot)
    tree = jaxcfr.lower_public(game)
    uniform = np.ones(tree.tensors.legal_mask.shape)
    for history in histories:
        said = []
        for check in (lambda: check_history(game, history),
                      lambda: hand_grid(tree, history, average_strategy=uniform)):
            try:
                check()
                said.append(None)
            except HoldemError as e:
                said.append(str(e))
        assert said[0] == said[1], history


def test_a_grid_history_not_in_the_game_is_refused_before_the_solve(capsys, monkeypatch):
    from jaxcfr.cli import app
    monkeypatch.setattr("jaxcfr.api.solve.solve_with", lambda *a, **k: pytest.fail("solved"))
    for history, words in (("Nope", "'Nope' is not an action at the root: OOP acts there, "
                                    "with Check, Bet(60), AllIn(200)"),
                           ("Check, Check", "is not a decision")):
        assert app.main(["solve", SPOT, "--iterations", "5", "--grid", history,
                         "--quiet"]) == 2
        err = capsys.readouterr().err
        assert f"--grid: {words}" in err or words in err, err
        assert "Traceback" not in err


FLOP = "holdem_spot(board='Td9d6h', ranges=('AA', 'KK'), bets='60%', raises='', add_allin=0)"
RIVER_OVER = "Check, Check, 2c, Check, Check, 3c, Check, Check"


@pytest.mark.parametrize("history, words", [
    ("Check, Check, Td", "'Td' cannot be dealt after 'Check, Check': it is on the board"),
    ("Check, Check, 2c, Check, Check, 2c",
     "'2c' cannot be dealt after 'Check, Check, 2c, Check, Check': it was dealt before"),
    ("Check, Check, 2s, Check, Check, 2S",
     "'2s' cannot be dealt after 'Check, Check, 2s, Check, Check': it was dealt before"),
    ("Check, Check, Bet(60)", "'Bet(60)' is not a card: after 'Check, Check' a card is "
                              "dealt"),
    ("2c", "'2c' is not an action at the root: OOP acts there, with Check, Bet(60) (a card "
           "is dealt once the street's betting is over)"),
    ("Check, Check, 2c, check", "'check' is not an action after 'Check, Check, 2c': OOP "
                                "acts there, with Check, Bet(60) (did you mean 'Check'?)"),
    ("Check, Check", "the node after 'Check, Check' is not a decision: a card is dealt"),
    # a size as the tree does not write it: the nearest of that kind
    ("Bet(62)", "'Bet(62)' is not an action at the root: OOP acts there, with Check, "
                "Bet(60) (did you mean 'Bet(60)'?)"),
    ("bet( 60.0 )", "'bet( 60.0 )' is not an action at the root: OOP acts there, with "
                    "Check, Bet(60) (did you mean 'Bet(60)'?)"),
    ("Raise(60)", "'Raise(60)' is not an action at the root: OOP acts there, with Check, "
                  "Bet(60)"),
    (RIVER_OVER, f"the node after '{RIVER_OVER}' is not a decision: the hand is over"),
    (RIVER_OVER + ", Check", f"'Check' comes after the end of the hand: the hand is over "
                             f"after '{RIVER_OVER}'"),
])
def test_every_grid_refusal_names_the_cards_and_what_is_wrong(capsys, monkeypatch, history,
                                                              words):
    # issue 31: a dealt card was its number ("33 is not a public action ... after
    # ('Check', 'Check')" for Td on the board), and what was wrong went unsaid
    from jaxcfr.cli import app
    monkeypatch.setattr("jaxcfr.api.solve.solve_with", lambda *a, **k: pytest.fail("solved"))
    assert app.main(["solve", FLOP, "--iterations", "5", "--grid", history, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"--grid: {words}" in err and "Traceback" not in err, err


#: a turn whose river cards merge by suit isomorphism (2h is read through 2d)
TURN = "holdem_spot(board='TdTh9c9s', ranges=('AA', 'KK'), bets='60%', raises='', add_allin=0)"


def test_the_lowered_tree_words_a_grid_refusal_as_the_spot_does():
    # hand_grid on the lowered tree (through a merged card too) says what check_history
    # says on the spot, cards by name; the heading and the JSON name the dealt cards
    from jaxcfr_games.holdem.grid import check_history, parse_history
    game = jaxcfr.load_game(TURN)
    tree = jaxcfr.lower_public(game)
    assert tree.merged
    uniform = np.ones(tree.tensors.legal_mask.shape)
    for text, words in (("Check, Check, Th", "'Th' cannot be dealt after 'Check, Check': "
                                             "it is on the board"),
                        ("Check, Check, 2h, check", "'check' is not an action after 'Check, "
                                                    "Check, 2h'"),
                        ("Check, Check, 2h, Check, Check", "the node after 'Check, Check, "
                                                           "2h, Check, Check' is not a"),
                        ("Check, Check, 2h, Check, Check, Check", "'Check' comes after"),
                        ("Check, 2h", "'2h' is not an action after 'Check'")):
        history = parse_history(text)
        said = []
        for check in (lambda: check_history(game, history),
                      lambda: hand_grid(tree, history, average_strategy=uniform)):
            with pytest.raises(HoldemError) as e:
                check()
            said.append(str(e.value))
        assert said[0] == said[1] and said[0].startswith(words), said
    grid = hand_grid(tree, ("Check", "Check", card("2h")), average_strategy=uniform)
    assert grid.heading().startswith("OOP at Check, Check, 2h: ")
    assert grid.text().splitlines()[0] == grid.heading()
    assert grid.to_json()["history"] == ["Check", "Check", "2h"]
