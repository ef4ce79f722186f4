"""Public trees of more than two players: the same game as the history tree, exactly.

Oracles: the expanded history tree (:func:`jaxcfr.expand_public`, lowered and solved by
the ordinary code) gives, in float64 after every iteration, the same regrets, strategy
sums, predictions, values and NashConv (the sum of the best-response gains) as the
public tree, for three-player Kuhn written in the public protocol (dense payoff tables
over the players' cards, card removal) and for random three-player public games (folds
and general-sum payoff tables, public chance blocking hands); ``jaxcfr.solve`` of
``kuhn_poker(players=3, tree='public')`` ends where ``kuhn_poker(players=3)`` (the
history-tree game, OpenSpiel's rules) ends. What takes two players is refused by name.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxcfr
from jaxcfr.game import GameError, Showdown
from jaxcfr_games.public_kuhn import PublicKuhn
from tests.random_public_games import RandomPublicGame
from tests.test_public import _check_same, _random_profile


def _presets(default):
    return [n if n in default else pytest.param(n, marks=pytest.mark.slow)
            for n in jaxcfr.ALGORITHMS]


@pytest.mark.parametrize("name", _presets({"cfr", "cfr+", "pcfr+"}))
def test_three_player_kuhn_every_preset_matches_the_history_tree(name):
    _check_same(PublicKuhn(players=3), name, 8)


@pytest.mark.parametrize("seed", [0, 5] + [pytest.param(s, marks=pytest.mark.slow)
                                           for s in (1, 4, 6)])
def test_random_three_player_public_games_match_their_expansion(seed):
    game = RandomPublicGame(seed, players=3)
    game.validate()
    jaxcfr.validate(jaxcfr.expand_public(game))
    lowered = jaxcfr.lower_public(game)
    t = lowered.tensors
    assert t.fold_node.size and t.table_node.size and t.alive.shape[0] > 1
    assert lowered.num_players == 3 and len(lowered.rows_per_player) == 3
    _check_same(game, "cfr", 4)                           # simultaneous
    _check_same(game, "pcfr+", 4)                         # alternating, predictive


@pytest.mark.slow
def test_four_player_kuhn_matches_the_history_tree():
    _check_same(PublicKuhn(players=4), "cfr+", 3)


def test_three_player_kuhn_is_kuhn_poker_with_three_players():
    """The same random profile through both evaluators: the public tree and the
    history-tree ``kuhn_poker(players=3)`` (OpenSpiel's rules, cards dealt one by one)."""
    public = jaxcfr.lower_public(PublicKuhn(players=3))
    history = jaxcfr.lower(jaxcfr.load_game("kuhn_poker(players=3)"))
    table = _random_profile(public, 3)
    letter = {"pass": "p", "bet": "b"}
    mapped = np.zeros(history.tensors.legal_mask.shape)
    mapped[-1, 0] = 1
    index = {k: i for i, k in enumerate(history.infoset_keys)}
    for row, key in enumerate(public.row_keys()):
        if key is None:
            continue
        p, (card, path) = key
        mapped[index[(p, f"{p}|{card}|{''.join(letter[a] for a in path)}")]] = table[row]
    a = jaxcfr.evaluate_public(public, table)
    b = jaxcfr.evaluate(history, mapped, dtype="float64")
    np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-12)
    assert abs(a["nash_conv"] - b["nash_conv"]) <= 1e-12
    assert a["nash_conv"] == pytest.approx(
        float(np.sum(a["best_response_values"] - a["values"])), abs=1e-15)
    assert a["exploitability"] is None                   # as the history tree's: P > 2


def test_solve_takes_three_player_public_kuhn_and_matches_the_history_tree():
    a = jaxcfr.solve("kuhn_poker(players=3, tree='public')", "dcfr", 40, precision="float64")
    b = jaxcfr.solve("kuhn_poker(players=3)", "dcfr", 40, precision="float64")
    assert abs(a.final["nash_conv"] - b.final["nash_conv"]) <= 1e-12
    np.testing.assert_allclose(a.final["values"], b.final["values"], rtol=0, atol=1e-12)
    assert a.final["nash_conv"] < 0.05
    profile = a.to_profile()
    assert {p for p, _ in profile.keys} == {0, 1, 2}
    assert abs(profile.evaluate(precision="float64")["nash_conv"]
               - a.final["nash_conv"]) <= 1e-12


def test_best_response_of_a_third_player_earns_its_value():
    lowered = jaxcfr.lower_public(PublicKuhn(players=3))
    table = _random_profile(lowered, 1)
    before = jaxcfr.evaluate_public(lowered, table)
    br = jaxcfr.best_response_public(lowered, table, 2)
    after = jaxcfr.evaluate_public(lowered, br)
    assert after["values"][2] == pytest.approx(before["best_response_values"][2], abs=1e-12)
    with pytest.raises(ValueError, match="player must be 0 to 2"):
        jaxcfr.best_response_public(lowered, table, 3)


class _ThreeShowdown(PublicKuhn):
    def terminal_value(self):
        return Showdown(1.0, (range(4), range(4), range(4)))


def test_what_takes_two_players_is_refused_by_name():
    with pytest.raises(GameError, match="Showdown takes two players; this game has 3") as e:
        jaxcfr.lower_public(_ThreeShowdown(players=3))
    assert e.value.rule == "terminal-value"
    with pytest.raises(ValueError, match="ranked terminals take two players"):
        jaxcfr.lower_public(PublicKuhn(players=3), terminals="ranked")
    with pytest.raises(ValueError, match="stacks of public trees take two-player games"):
        jaxcfr.stack_public([PublicKuhn(players=3)])
    lowered = jaxcfr.lower_public(PublicKuhn(players=3))
    with pytest.raises(ValueError, match="two-player public trees"):
        jaxcfr.solvers.public.hand_values_public(lowered, _random_profile(lowered, 0), 0)
    with pytest.raises(ValueError, match="players must be an integer in 2..5"):
        PublicKuhn(players=6)


@pytest.mark.parametrize("players", [1, 9, True, "3"])
def test_a_player_count_out_of_range_is_named(players):
    game = PublicKuhn()
    game.num_players = players
    with pytest.raises(GameError, match="2 to 8 players") as e:
        game.validate()
    assert e.value.rule == "num-players"


@pytest.mark.parametrize("text", ["kuhn_poker(tree='public')",
                                  "kuhn_poker(players=3, tree='public')",
                                  "leduc_poker(tree='public')"])
def test_to_openspiel_of_a_public_profile_has_its_nash_conv(text):
    """OpenSpiel's NashConv of the converted policy is jaxcfr's of the public profile."""
    pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability
    result = jaxcfr.solve(text, "cfr+", 5, precision="float64")
    profile = result.to_profile()
    policy = profile.to_openspiel()
    ours = profile.evaluate(precision="float64")["nash_conv"]
    theirs = exploitability.nash_conv(policy.game, policy)
    assert abs(theirs - ours) <= 1e-12 and ours > 1e-3
