"""jaxcfr.validate rejects each deliberately broken game with the right rule and history."""

import importlib
import random

import pytest

import jaxcfr
from jaxcfr import GameError
from jaxcfr.game.validate import validate_game_with
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
    monkeypatch.setattr(importlib.import_module("jaxcfr.game.contract"),
                        "MAX_TRAJECTORY_LENGTH", 100)
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


# -- breaches no single node shows (issue 18, item 3) -------------------------------------
@pytest.mark.parametrize("cls", bg.PROBED, ids=lambda c: c.__name__)
def test_validate_probes_what_no_node_shows(cls):
    """Sampling against the listed outcomes (a chi-square test, seeded), a copy.copy clone
    (what the original does later), a wrong transposition key, a 3-entry nash_value."""
    err = _rejects(cls())
    assert err.rule == cls.RULE, str(err)
    assert err.history in cls.HISTORIES, str(err)
    assert f"[{cls.RULE}]" in str(err) and "history:" in str(err)


@pytest.mark.parametrize("cls", bg.PROBED, ids=lambda c: c.__name__)
def test_lowering_sees_what_it_can_of_them(cls):
    rule = bg.lower_rule(cls)
    if rule is None:
        jaxcfr.lower(cls())               # a blind spot of the walk: validate is the net
        return
    with pytest.raises(GameError) as info:
        jaxcfr.lower(cls())
    assert info.value.rule == rule and info.value.history in cls.HISTORIES


def test_sampling_test_states_its_figures():
    err = _rejects(bg.BiasedSampling())
    text = str(err)
    assert "1000 draws" in text and "'H' came up" in text and "p = " in text, text


def test_a_fair_sampler_passes_whatever_the_seed():
    """The chi-square threshold (p < 1e-6) does not refuse a correct sampler: 50 seeds of
    a game whose sample_chance draws exactly what chance_outcomes() lists."""
    class FairSampler(bg.Toy):
        def sample_chance(self, rng):
            outcomes = self.chance_outcomes()
            return outcomes[0] if rng.random() < outcomes[0][1] else outcomes[1]
    for seed in range(50):
        validate_game_with(FairSampler(), trajectories=4, seed=seed)


def test_a_cache_shared_by_clones_is_not_a_clone_error():
    """Leduc's deck memoises chance outcomes in a dict every state shares: stepping a clone
    fills it, but nothing a state reports changes, so it conforms."""
    class Memo(bg.Toy):
        def __init__(self):
            self.h, self.memo = (), {}

        def legal_actions(self):
            self.memo[self.h] = super().legal_actions()
            return list(self.memo[self.h])
    jaxcfr.validate(Memo())
    jaxcfr.validate(jaxcfr.load_game("leduc_poker"))


def test_dice_poker_transpositions_pass_the_probe():
    game = jaxcfr.load_game("dice_poker(dice=1, sides=3)")
    assert game.caches_transpositions()
    jaxcfr.validate(game)


# -- issue 33, item 7: what each probe blames, and the paths that skip validate ----------
class ShuffledLegalActions(bg.Toy):
    """``legal_actions()`` answers in the other order on every other call."""

    def __init__(self):
        super().__init__()
        self.calls = [0]

    def legal_actions(self):
        actions = super().legal_actions()
        self.calls[0] += 1
        return actions[::-1] if self.calls[0] % 2 else actions


class NowAndThenReturns(bg.Toy):
    """``terminal_returns()`` doubles one answer in four (a seeded generator): two calls in
    a row often agree, so only asking again tells it from a bad clone."""

    def __init__(self):
        super().__init__()
        self.rng = random.Random(0)

    def terminal_returns(self):
        u, v = super().terminal_returns()
        k = self.rng.choice([1.0, 1.0, 1.0, 2.0])
        return (u * k, v * k)


@pytest.mark.parametrize("cls, words", [
    (ShuffledLegalActions, "legal_actions() listed"),
    (NowAndThenReturns, "terminal_returns() gave"),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("seed", range(4))
def test_a_game_that_varies_by_itself_is_nondeterministic_not_a_bad_clone(cls, words, seed):
    with pytest.raises(GameError) as info:
        validate_game_with(cls(), seed=seed)
    assert info.value.rule == "nondeterministic" and words in str(info.value), str(info.value)
    with pytest.raises(GameError) as info:                 # a shared clone stays a clone
        validate_game_with(bg.ShallowCopyClone(), seed=seed)
    assert info.value.rule == "clone"


def test_the_paths_that_skip_validate_probe_where_they_start():
    """Lowering (clones), sampled chance (sample_chance) and the estimates (sample_chance,
    state_hash) gave wrong numbers for games only validate refused."""
    with pytest.raises(GameError) as info:
        jaxcfr.lower(bg.ShallowCopyClone())
    assert info.value.rule == "clone"
    with pytest.raises(GameError) as info:
        jaxcfr.solve(bg.BiasedSampling(), "cfr", 2, chance="sampled")
    assert info.value.rule == "chance-sampling" and info.value.history in \
        bg.BiasedSampling.HISTORIES
    for cls, rule in ((bg.WrongStateHash, "transposition"),
                      (bg.BiasedSampling, "chance-sampling"),
                      (bg.SampledOutcomeNotListed, "chance-sampling")):
        with pytest.raises(GameError) as info:
            jaxcfr.estimate_values(cls(), samples=10)
        assert info.value.rule == rule and info.value.history in cls.HISTORIES, info.value
    jaxcfr.estimate_values(bg.Toy(), samples=10)           # a sound game is not refused
    jaxcfr.solve(bg.Toy(), "cfr", 2, chance="sampled")


def test_reraise_as_game_error_is_the_one_wrapping_rule():
    """contract.reraise_as_game_error: a GameError gets the history if it has none (and
    keeps its own), the game's own exception becomes ``game-exception`` at that history."""
    from jaxcfr.game.contract import reraise_as_game_error

    def game_code():
        raise KeyError("x")

    def caught(error_or_call, history):
        try:
            if callable(error_or_call):
                error_or_call()
            raise error_or_call
        except Exception as exc:  # noqa: BLE001
            try:
                reraise_as_game_error(exc, history)
            except BaseException as out:  # noqa: BLE001
                return exc, out
        raise AssertionError("reraise_as_game_error returned")

    _, out = caught(GameError("bad", rule="legal-actions"), (1, 2))
    assert (out.rule, out.history) == ("legal-actions", (1, 2))
    _, out = caught(GameError("bad", rule="legal-actions", history=(0,)), (1, 2))
    assert out.history == (0,)
    exc, out = caught(game_code, ("a",))
    assert isinstance(out, GameError) and out.rule == "game-exception"
    assert out.history == ("a",) and out.__cause__ is exc
    assert "KeyError: 'x' in game_code() at test_validate.py" in str(out)
