"""``holdem_spot`` through the general entry points: ``jaxcfr.solve``, ``load_game`` and
``jaxcfr solve`` route a game that only exists as a public tree to the public solver
without ``tree='public'``, and the command line reports values and exploitability in
chips and in percent of the pot.

Oracles: the same spot solved by ``jaxcfr.solve_public`` directly (bit-identical
records: the same compiled program on the same tensors); the percentages are the chips
divided by the pot; a spot where OOP holds the nuts against a range that cannot win is
worth exactly the whole starting pot to OOP (+50 of a pot of 100, net of its half).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr.api.public import PublicSolveResult, public_game_of
from jaxcfr.cli import app
from jaxcfr_games.holdem.spot import HoldemSpot

#: A small river spot on Td9d6h5c2s (pot 60, stack 120).
SMALL = "holdem_spot(ranges=('QQ,66', 'AK,T9s'), pot=60, stack=120, bets='60%, a')"
#: OOP's sets of 6 against ace-king: OOP wins every showdown.
NUTS = "holdem_spot(ranges=('66', 'AKo'))"


def test_load_game_and_routing_need_no_tree_argument():
    spot = jaxcfr.load_game("holdem_spot")
    assert isinstance(spot, HoldemSpot)
    assert isinstance(public_game_of(SMALL), HoldemSpot)
    assert public_game_of("kuhn_poker") is None          # has a history tree: not routed
    assert public_game_of("no_such_game") is None        # left to the ordinary errors
    assert isinstance(public_game_of("kuhn_poker(tree='public')"), jaxcfr.PublicGame)


def test_solve_by_name_is_solve_public():
    by_name = jaxcfr.solve(SMALL, "postflop-dcfr", 30, eval_every=10)
    direct = jaxcfr.solve_public(jaxcfr.load_game(SMALL), "postflop-dcfr", 30, eval_every=10)
    assert isinstance(by_name, PublicSolveResult)
    assert [r["iteration"] for r in by_name.metrics] == [10, 20, 30]
    for a, b in zip(by_name.metrics, direct.metrics):
        assert a["values"] == b["values"]
        assert a["exploitability"] == b["exploitability"]
    np.testing.assert_array_equal(by_name.average_strategy, direct.average_strategy)


def test_the_command_line_reports_percent_of_the_pot(capsys):
    assert app.main(["solve", SMALL, "--algorithm", "postflop-dcfr", "--iterations", "20",
                     "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["pot"] == 60
    np.testing.assert_allclose(out["values_pot_percent"], np.asarray(out["values"]) / 0.6)
    np.testing.assert_allclose(out["exploitability_pot_percent"],
                               out["exploitability"] / 0.6)
    assert app.main(["solve", NUTS, "--algorithm", "postflop-dcfr", "--iterations", "20",
                     "--precision", "float64", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "iteration       20  exploitability" in text and "% of the pot)" in \
        next(x for x in text.splitlines() if x.startswith("iteration"))
    line = next(x for x in text.splitlines() if x.startswith("values"))
    assert "50.000000, -50.000000 chips" in line and "(50.0000%, -50.0000% of the pot 100)" \
        in line
    assert "% of the pot)" in next(x for x in text.splitlines()
                                   if x.startswith("exploitability"))


@pytest.mark.parametrize("game", ["kuhn_poker"])
def test_other_games_print_no_pot(capsys, game):
    assert app.main(["solve", game, "--iterations", "10", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "pot" not in out and "values_pot_percent" not in out


def test_inspect_takes_the_spot_by_name(capsys):
    assert app.main(["inspect", SMALL, "--json"]) == 0
    sizes = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert sizes["tree"] == "public"
    spot = jaxcfr.load_game(SMALL)
    assert sizes["hands"] == [len(spot.hands(0)), len(spot.hands(1))]
