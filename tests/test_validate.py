"""jaxcfr.validate rejects each deliberately broken game with the right rule and history."""

import importlib

import pytest

import jaxcfr
from jaxcfr import GameError
from jaxcfr.game.contract import (DECISION, TERMINAL_NODE, check_clone_independent,
                             check_terminal_step_refused, game_exception, hashable_key,
                             inspect_node, player_to_act_consistent)

try:
    from tests import broken_games as bg
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg


def _rejects(game) -> GameError:
    with pytest.raises(GameError) as info:
        jaxcfr.validate(game)
    return info.value


def test_toy_game_is_valid():
    jaxcfr.validate(bg.Toy())
    bg.Toy().validate(trajectories=16, seed=3)


@pytest.mark.parametrize("cls", bg.BROKEN_GAMES, ids=lambda c: c.__name__)
def test_validate_rejects_broken_game(cls):
    err = _rejects(cls())
    assert err.rule == cls.RULE, str(err)
    assert err.history in cls.HISTORIES, str(err)
    # The message names the rule and the path.
    assert f"[{cls.RULE}]" in str(err)
    assert "history:" in str(err)


def test_every_contract_rule_has_a_fixture():
    rules = {cls.RULE for cls in bg.BROKEN_GAMES}
    assert rules >= {
        "node-type", "terminal-returns", "terminal-step", "chance-legal-actions",
        "chance-empty", "chance-outcomes", "chance-probability", "chance-sum",
        "chance-duplicate", "chance-sampling", "decision-chance-outcomes", "decision-empty",
        "decision-duplicate", "player", "infoset-actions", "infoset-key",
        "nondeterministic", "terminal-legal-actions", "action-hashable", "game-exception",
        "clone"}


def test_inconsistent_action_order_names_the_infoset():
    err = _rejects(bg.InconsistentActionOrder())
    assert err.infoset == bg.InconsistentActionOrder.INFOSET
    assert "['y', 'x']" in str(err) or "['x', 'y']" in str(err)


def test_chance_sum_message_gives_the_sum():
    err = _rejects(bg.ChanceNotSummingToOne())
    assert "0.75" in str(err)


def test_sampling_error_gets_the_history():
    # The default sample_chance() raises without a history; validate adds it.
    err = _rejects(bg.SamplingNotImplemented())
    assert err.history == ("T", "b")


def test_runaway_game(monkeypatch):
    monkeypatch.setattr(importlib.import_module("jaxcfr.game.contract"), "MAX_TRAJECTORY_LENGTH", 100)
    err = _rejects(bg.NeverEnds())
    assert err.rule == bg.NeverEnds.RULE
    assert err.history in bg.NeverEnds.HISTORIES


@pytest.mark.parametrize("cls", [bg.NotAGame, bg.ZeroPlayers], ids=lambda c: c.__name__)
def test_whole_game_failures(cls):
    err = _rejects(cls())
    assert err.rule == cls.RULE
    assert err.history is None


@pytest.mark.parametrize("cls", bg.BLIND_SPOTS, ids=lambda c: c.__name__)
def test_blind_spots_pass_the_random_probe(cls):
    # validate() is a probe: these need the exhaustive checks of jaxcfr.lower.
    assert not cls.VALIDATE_DETECTS
    jaxcfr.validate(cls())


def test_fixture_lists_are_consistent():
    assert all(cls.VALIDATE_DETECTS for cls in bg.BROKEN_GAMES)
    assert all(cls.HISTORIES for cls in bg.BROKEN_GAMES + bg.BLIND_SPOTS)
    names = [cls.__name__ for cls in bg.BROKEN_GAMES + bg.BLIND_SPOTS]
    assert len(names) == len(set(names))


def _exhaustive_check(game):
    """A slow, exhaustive reference checker (what ``jaxcfr.lower`` must report on the fixtures).

    Visits every node in pre-order with the per-node contract checks (stepping a clone
    must leave the node as it was), then the information-set checks: same ordered
    actions, and strong perfect recall (same sequence of the player's own (key, action)
    pairs). An exception from the game's own code is a ``game-exception``.
    """
    n = game.num_players
    seen = {}
    stack = [(game.clone(), (), ((),) * n)]
    while stack:
        state, history, own = stack.pop()
        try:
            _exhaustive_node(state, history, own, n, seen, stack)
        except GameError:
            raise
        except Exception as exc:
            raise game_exception(exc, history) from exc


def _exhaustive_node(state, history, own, n, seen, stack):
    info = inspect_node(state, n, history, require_enumerable=True)
    player_to_act_consistent(state, info, history)
    if info.kind == TERMINAL_NODE:
        check_terminal_step_refused(state, history)
        return
    if len(info.actions) > 1:
        check_clone_independent(state, info, info.actions[-1], n, history)
    if info.kind == DECISION:
        p = info.player
        key = hashable_key(state.infoset_key(p), history, p)
        actions, path = seen.setdefault((p, key), (info.actions, own[p]))
        if actions != info.actions:
            raise GameError("actions differ", rule="infoset-actions", history=history,
                            infoset=key)
        if any(k == key for k, _ in own[p]):
            raise GameError("absent-minded", rule="absent-minded", history=history,
                            infoset=key)
        if path != own[p]:
            raise GameError("no perfect recall", rule="perfect-recall", history=history,
                            infoset=key)
    for a in reversed(info.actions):
        child = state.clone()
        child.step(a)
        mine = own
        if info.kind == DECISION:
            mine = own[:p] + (own[p] + ((key, a),),) + own[p + 1:]
        stack.append((child, history + (a,), mine))


@pytest.mark.parametrize("cls", bg.BROKEN_GAMES + bg.BLIND_SPOTS, ids=lambda c: c.__name__)
def test_fixture_metadata_for_exhaustive_checkers(cls):
    with pytest.raises(GameError) as info:
        _exhaustive_check(cls())
    assert info.value.rule == bg.lower_rule(cls), str(info.value)
    assert info.value.history in cls.HISTORIES, str(info.value)


def test_exhaustive_reference_checker_accepts_valid_games():
    _exhaustive_check(bg.Toy())
    for text in ("kuhn_poker", "leduc_poker(ranks=2, suits=2)", "goofspiel(cards=3)"):
        _exhaustive_check(jaxcfr.load_game(text))
