"""OpenSpiel games through jaxcfr.game.openspiel (skipped when pyspiel is not installed)."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import jaxcfr
from jaxcfr import GameError

pyspiel = pytest.importorskip("pyspiel")

from jaxcfr.game import openspiel  # noqa: E402 - after the skip


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_sizes_match_our_games(name):
    ours = jaxcfr.lower(jaxcfr.load_game(name)).sizes()
    theirs = jaxcfr.lower(jaxcfr.load_game(f"openspiel:{name}")).sizes()
    for key in ("nodes", "infosets", "max_actions", "depth"):
        assert ours[key] == theirs[key], key


def test_kuhn_validates_and_lowers_exactly():
    game = jaxcfr.load_game("openspiel:kuhn_poker")
    assert isinstance(game, openspiel.OpenSpielGame) and game.num_players == 2
    jaxcfr.validate(game)
    lowered = jaxcfr.lower(game)
    assert lowered.constant_sum == 0.0
    # Keys are OpenSpiel's information-state strings; actions its integer ids.
    player, key = lowered.infoset_keys[0]
    assert player == 0 and isinstance(key, str)
    assert lowered.infoset_actions[0] == (0, 1)


def test_kuhn_solves_to_its_value():
    result = jaxcfr.solve("openspiel:kuhn_poker", "cfr+", 500)
    assert float(result.final["values"][0]) == pytest.approx(-1 / 18, abs=1e-3)


def test_wrap_and_step_rules():
    game = openspiel.wrap(pyspiel.load_game("kuhn_poker"))
    assert game.is_chance() and game.legal_actions() == []
    assert [a for a, _ in game.chance_outcomes()] == [0, 1, 2]
    with pytest.raises(GameError):
        game.clone().step(7)                  # not a card: OpenSpiel would accept it
    with pytest.raises(GameError):
        game.clone().step("0")
    state = game.clone()
    for action in (0, 1):
        state.step(action)
    assert state.player_to_act() == 0 and state.legal_actions() == [0, 1]
    assert state.chance_outcomes() is None
    with pytest.raises(GameError):
        state.clone().step(2)
    for action in (0, 0):                     # pass, pass: showdown
        state.step(action)
    assert state.is_terminal() and state.player_to_act() == jaxcfr.TERMINAL
    assert state.terminal_returns() == (-1.0, 1.0)
    with pytest.raises(GameError):
        state.step(0)
    assert game.is_chance()                   # clones are independent


def test_wrapped_game_with_numpy_action_ids():
    game = openspiel.wrap(pyspiel.load_game("kuhn_poker"))
    game.step(np.int64(2))
    assert game.player_to_act() == jaxcfr.CHANCE


def test_simultaneous_game_is_refused():
    with pytest.raises(GameError, match="simultaneous"):
        jaxcfr.load_game("openspiel:goofspiel(num_cards=3)")
    turn_based = pyspiel.convert_to_turn_based(pyspiel.load_game("goofspiel(num_cards=3)"))
    lowered = jaxcfr.lower(openspiel.wrap(turn_based))
    assert lowered.num_players == 2


@pytest.mark.parametrize("text, match", [
    ("openspiel:no_such_game", "unknown OpenSpiel game"),
    ("openspiel:kuhn_poker(no_such_parameter=1)", "no_such_parameter"),
    ("openspiel:kuhn_poker(players=[2])", "Wrong type for parameter players"),
    ("openspiel:kuhn_poker(", "Missing closing bracket"),
    ("openspiel:goofspiel(num_cards=3)",
     r"openspiel:turn_based_simultaneous_game\(game=goofspiel\(num_cards=3\)\)"),
])
def test_bad_openspiel_strings(text, match):
    with pytest.raises(GameError, match=match):
        jaxcfr.load_game(text)


def test_openspiel_strings_go_to_openspiel_unchanged():
    """Game-valued parameters reach OpenSpiel: a simultaneous game made turn-based."""
    game = jaxcfr.load_game("openspiel:turn_based_simultaneous_game(game=goofspiel(num_cards=3))")
    lowered = jaxcfr.lower(game)
    assert lowered.num_players == 2 and lowered.infosets_per_player == (57, 57)
    result = jaxcfr.solve(lowered, "cfr+", 200)
    assert result.final["exploitability"] < 0.05


def test_missing_pyspiel_gives_install_hint(monkeypatch):
    real_import = builtins.__import__

    def no_pyspiel(name, *args, **kwargs):
        if name == "pyspiel":
            raise ImportError("No module named 'pyspiel'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyspiel)
    with pytest.raises(GameError, match=r"pip install 'jaxcfr\[openspiel\]'"):
        jaxcfr.load_game("openspiel:kuhn_poker")
