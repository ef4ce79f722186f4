"""Reference games: contract, returns, information sets, tree sizes, OpenSpiel parity."""

import itertools
import math
import random

import pytest

import jaxcfr_games as games
import jaxcfr
from jaxcfr import CHANCE, TERMINAL, GameError
from jaxcfr.game.contract import DECISION, TERMINAL_NODE, inspect_node

# Every registered game, at a few parameter settings.
GAME_STRINGS = [
    "kuhn_poker", "kuhn_poker(players=3)", "kuhn_poker(players=4)",
    "leduc_poker", "leduc_poker(ranks=4, suits=3)", "leduc_poker(ranks=2, suits=2)",
    "nolimit_leduc", "nolimit_leduc(ranks=4, suits=1, stack=7, ante=2)",
    "rock_paper_scissors", "matching_pennies",
    "liars_dice", "liars_dice(dice=2, sides=3)",
    "goofspiel", "goofspiel(cards=6)",
    "sampled_dice_poker", "sampled_dice_poker(dice=2, sides=3)",
    "dice_poker", "dice_poker(dice=3, sides=2)",
]


def play(game, actions):
    """``game`` (a Game or a game string) after ``actions``, on a clone."""
    state = (jaxcfr.load_game(game) if isinstance(game, str) else game).clone()
    for a in actions:
        state.step(a)
    return state


def enumerate_tree(game):
    """Walk the whole tree, checking the contract and strong perfect recall on every node.

    Returns ``(histories, information sets)``.
    """
    n = game.num_players
    nodes = 0
    infosets = {}  # (player, key) -> (legal actions, the player's own (key, action) path)
    stack = [(game.clone(), (), ((),) * n)]
    while stack:
        state, history, own = stack.pop()
        nodes += 1
        info = inspect_node(state, n, history, require_enumerable=True)
        assert state.player_to_act() == info.player
        if info.kind == TERMINAL_NODE:
            continue
        for p in range(n):
            hash(state.infoset_key(p))
        if info.kind == DECISION:
            p = info.player
            key = state.infoset_key(p)
            first = infosets.setdefault((p, key), (info.actions, own[p]))
            assert first == (info.actions, own[p]), (history, key)
            for a in info.actions:
                child = state.clone()
                child.step(a)
                mine = own[:p] + ((own[p] + ((key, a),)),) + own[p + 1:]
                stack.append((child, history + (a,), mine))
        else:
            assert math.isclose(sum(info.probs), 1.0)
            for a in info.actions:
                child = state.clone()
                child.step(a)
                stack.append((child, history + (a,), own))
    return nodes, len(infosets)


def random_playout(state, rng):
    """Play ``state`` to the end with uniform random moves; return the path."""
    path = []
    while not state.is_terminal():
        if state.is_chance():
            action, _ = state.sample_chance(rng)
        else:
            action = rng.choice(state.legal_actions())
        state.step(action)
        path.append(action)
    return path


# --------------------------------------------------------------------------------------------
# Generic contract tests, every game
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text", GAME_STRINGS)
def test_validate(text):
    jaxcfr.validate(jaxcfr.load_game(text))


def test_every_game_is_registered():
    names = set(jaxcfr.registered_games())
    assert names >= {"kuhn_poker", "leduc_poker", "rock_paper_scissors", "matching_pennies",
                     "liars_dice", "goofspiel", "sampled_dice_poker"}
    for name in ("kuhn_poker", "leduc_poker", "liars_dice", "goofspiel"):
        assert jaxcfr.registered_games()[name].__doc__.strip()


@pytest.mark.parametrize("text", GAME_STRINGS)
def test_node_protocol_on_random_playouts(text):
    game = jaxcfr.load_game(text)
    rng = random.Random(1)
    for _ in range(20):
        state = game.clone()
        while True:
            player = state.player_to_act()
            for p in range(game.num_players):
                hash(state.infoset_key(p))
            if state.is_terminal():
                assert player == TERMINAL
                assert state.legal_actions() == [] and state.chance_outcomes() is None
                assert len(state.terminal_returns()) == game.num_players
                break
            if state.is_chance():
                assert player == CHANCE and state.legal_actions() == []
                action, prob = state.sample_chance(rng)
                assert 0 < prob <= 1
            else:
                assert 0 <= player < game.num_players
                assert state.chance_outcomes() is None
                actions = state.legal_actions()
                assert actions and all(isinstance(a, (str, int)) for a in actions)
                action = rng.choice(actions)
            state.step(action)


@pytest.mark.parametrize("text", GAME_STRINGS)
def test_step_refused_at_terminal_and_for_illegal_actions(text):
    game = jaxcfr.load_game(text)
    rng = random.Random(2)
    state = game.clone()
    while not state.is_terminal():
        for bad in ("no-such-move", None, [1, 2], -7, 10 ** 6):
            probe = state.clone()
            with pytest.raises(GameError):
                probe.step(bad)
        if state.is_chance():
            state.step(state.sample_chance(rng)[0])
        else:
            state.step(rng.choice(state.legal_actions()))
    for bad in (None, "call", 0):
        with pytest.raises(GameError):
            state.clone().step(bad)


@pytest.mark.parametrize("text", GAME_STRINGS)
def test_clone_is_independent(text):
    game = jaxcfr.load_game(text)
    before = (game.player_to_act(), [game.infoset_key(p) for p in range(game.num_players)])
    copy = game.clone()
    random_playout(copy, random.Random(3))
    assert copy.is_terminal() and not game.is_terminal()
    assert (game.player_to_act(), [game.infoset_key(p) for p in range(game.num_players)]) == before


@pytest.mark.parametrize("text", GAME_STRINGS)
def test_zero_sum_returns(text):
    game = jaxcfr.load_game(text)
    rng = random.Random(4)
    for _ in range(50):
        state = game.clone()
        random_playout(state, rng)
        assert math.isclose(sum(state.terminal_returns()), 0.0, abs_tol=1e-12)


@pytest.mark.parametrize("bad", [
    "kuhn_poker(players=1)", "kuhn_poker(players=11)", "kuhn_poker(players=2.5)",
    "kuhn_poker(players=True)", "leduc_poker(ranks=1)", "leduc_poker(suits=0)",
    "leduc_poker(ranks='3')", "leduc_poker(raise_sizes=(2,))", "leduc_poker(raise_sizes=(2, -4))",
    "liars_dice(dice=0)", "liars_dice(sides=1)", "goofspiel(cards=1)", "goofspiel(cards=14)",
    "sampled_dice_poker(dice=0)", "sampled_dice_poker(sides=10)", "kuhn_poker(deck=3)",
    "holdem_spot(isomorphism='no')",           # a word is truthy: it was taken as True
])
def test_bad_parameters(bad):
    with pytest.raises(GameError) as info:
        jaxcfr.load_game(bad)
    assert info.value.rule == "game-string"


@pytest.mark.parametrize("ctor,kwargs", [
    (games.KuhnPoker, {"players": 0}), (games.LeducPoker, {"ranks": 0}),
    (games.LiarsDice, {"dice": -1}), (games.Goofspiel, {"cards": "4"}),
    (games.SampledDicePoker, {"sides": 1}),
])
def test_bad_parameters_raise_value_error(ctor, kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        ctor(**kwargs)


def test_nash_values():
    assert jaxcfr.load_game("kuhn_poker").nash_value() == pytest.approx((-1 / 18, 1 / 18))
    assert jaxcfr.load_game("kuhn_poker(players=3)").nash_value() is None
    assert jaxcfr.load_game("rock_paper_scissors").nash_value() == (0.0, 0.0)
    assert jaxcfr.load_game("matching_pennies").nash_value() == (0.0, 0.0)
    assert jaxcfr.load_game("goofspiel").nash_value() == (0.0, 0.0)
    assert jaxcfr.load_game("sampled_dice_poker").nash_value() is None


# --------------------------------------------------------------------------------------------
# Tree sizes and strong perfect recall (small games only)
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,histories,infosets", [
    ("kuhn_poker", 58, 12),
    ("kuhn_poker(players=3)", 617, 48),
    ("leduc_poker", 9457, 936),
    ("rock_paper_scissors", 13, 2),
    ("matching_pennies", 7, 2),
    ("liars_dice(dice=1, sides=3)", 1147, 192),
    ("goofspiel", 1077, 162),
])
def test_tree_size_and_perfect_recall(text, histories, infosets):
    assert enumerate_tree(jaxcfr.load_game(text)) == (histories, infosets)


def test_goofspiel_6_is_constructed_without_walking_its_tree(monkeypatch):
    # About a million histories: constructing the game steps none of them, and a playout
    # takes the same few steps every time (counted calls, not seconds: speed is measured in
    # benchmarks/bench_lowering.py, never asserted here).
    from jaxcfr_games.goofspiel import Goofspiel
    steps = []
    step = Goofspiel.step
    monkeypatch.setattr(Goofspiel, "step", lambda self, action: (steps.append(action),
                                                                 step(self, action))[1])
    game = jaxcfr.load_game("goofspiel(cards=6)")
    assert steps == []
    rng = random.Random(5)
    lengths = set()
    for _ in range(2000):
        state, before = game.clone(), len(steps)
        while not state.is_terminal():
            state.legal_actions()
            state.infoset_key(0)
            state.step(rng.choice(state.legal_actions()))
        lengths.add(len(steps) - before)
    assert len(lengths) == 1 and 6 <= lengths.pop() <= 3 * 6


# --------------------------------------------------------------------------------------------
# Kuhn poker
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,returns", [
    ((2, 0, "pass", "pass"), (1, -1)),
    ((2, 0, "bet", "bet"), (2, -2)),
    ((2, 0, "bet", "pass"), (1, -1)),
    ((2, 0, "pass", "bet", "pass"), (-1, 1)),
    ((0, 1, "pass", "bet", "bet"), (-2, 2)),
    ((1, 0, "pass", "bet", "bet"), (2, -2)),
])
def test_kuhn_returns(path, returns):
    assert play("kuhn_poker", path).terminal_returns() == returns


@pytest.mark.parametrize("path,returns", [
    ((0, 1, 2, "pass", "bet", "pass", "bet"), (-2, 3, -1)),
    ((0, 3, 1, "pass", "pass", "pass"), (-1, 2, -1)),
    ((0, 3, 1, "bet", "pass", "pass"), (2, -1, -1)),
    ((3, 2, 1, "bet", "bet", "bet"), (4, -2, -2)),
    ((1, 2, 3, "pass", "pass", "bet", "bet", "pass"), (-2, -1, 3)),
])
def test_kuhn_three_player_returns(path, returns):
    assert play("kuhn_poker(players=3)", path).terminal_returns() == returns


def test_kuhn_moves_and_chance():
    game = jaxcfr.load_game("kuhn_poker")
    assert game.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (2, 1 / 3)]
    assert play(game, [1]).chance_outcomes() == [(0, 0.5), (2, 0.5)]
    assert play(game, [1, 0]).legal_actions() == ["pass", "bet"]
    assert play(game, [1, 0, "pass"]).player_to_act() == 1
    assert play(game, [1, 0, "pass", "pass"]).is_terminal()
    assert not play(game, [1, 0, "pass", "bet"]).is_terminal()
    with pytest.raises(GameError):
        play(game, [1, 1])  # card already dealt
    with pytest.raises(GameError):
        play(game, [1, 0, "call"])


def test_kuhn_infoset_keys():
    game = jaxcfr.load_game("kuhn_poker")
    # Player 0 cannot tell the opponent's card; player 1 can tell its own.
    assert play(game, [2, 0, "pass"]).infoset_key(0) == play(game, [2, 1, "pass"]).infoset_key(0)
    assert play(game, [2, 0, "pass"]).infoset_key(1) != play(game, [2, 1, "pass"]).infoset_key(1)
    assert play(game, [2, 0, "pass"]).infoset_key(1) == play(game, [1, 0, "pass"]).infoset_key(1)
    assert play(game, [2, 0, "pass", "bet"]).infoset_key(0) != play(game, [2, 0]).infoset_key(0)
    assert play(game, [2, 0, "pass"]).infoset_key(1) == "1|0|p"
    assert game.infoset_key(0) == "0|?|"


# --------------------------------------------------------------------------------------------
# Leduc poker
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,returns", [
    ((0, 2, "call", "call", 4, "call", "call"), (-1, 1)),       # Q beats J
    ((0, 2, "raise", "call", 1, "raise", "call"), (7, -7)),     # J pairs the public J
    ((0, 2, "raise", "raise", "fold"), (-3, 3)),
    ((0, 2, "call", "raise", "call", 4, "raise", "raise", "call"), (-11, 11)),
    ((0, 1, "call", "call", 2, "raise", "call"), (0, 0)),       # both J: split
    ((5, 2, "call", "call", 4, "raise", "fold"), (1, -1)),
])
def test_leduc_returns(path, returns):
    assert play("leduc_poker", path).terminal_returns() == returns


def test_leduc_moves():
    game = jaxcfr.load_game("leduc_poker")
    assert len(game.chance_outcomes()) == 6
    dealt = play(game, [0, 2])
    assert dealt.legal_actions() == ["call", "raise"]
    assert play(dealt, ["raise"]).legal_actions() == ["fold", "call", "raise"]
    assert play(dealt, ["raise", "raise"]).legal_actions() == ["fold", "call"]
    assert play(dealt, ["call", "call"]).is_chance()
    assert [c for c, _ in play(dealt, ["call", "call"]).chance_outcomes()] == [1, 3, 4, 5]
    assert play(dealt, ["call", "call", 4]).player_to_act() == 0
    with pytest.raises(GameError):
        play(dealt, ["fold"])  # nothing to call
    with pytest.raises(GameError):
        play(dealt, ["raise", "raise", "raise"])  # two raises per round
    with pytest.raises(GameError):
        play(dealt, ["call", "call", 2])  # card already dealt


def test_leduc_infoset_keys():
    game = jaxcfr.load_game("leduc_poker")
    a = play(game, [0, 2, "raise"])
    b = play(game, [0, 4, "raise"])
    assert a.infoset_key(0) == b.infoset_key(0) != a.infoset_key(1)
    assert a.infoset_key(1) != b.infoset_key(1)
    assert play(game, [1, 2, "raise"]).infoset_key(1) == a.infoset_key(1) == "1|Qs|r"
    c = play(game, [0, 2, "call", "call", 4])
    d = play(game, [0, 2, "call", "call", 5])
    assert c.infoset_key(0) != d.infoset_key(0)      # different public card
    assert c.infoset_key(0) == play(game, [0, 3, "call", "call", 4]).infoset_key(0)
    # The round boundary is part of the key: call-call|K vs call-raise-call|K differ.
    e = play(game, [0, 2, "call", "raise", "call", 4])
    assert e.infoset_key(0) != c.infoset_key(0)
    assert c.infoset_key(0) == "0|Js|cc|Ks|"


def test_leduc_bigger_deck():
    game = jaxcfr.load_game("leduc_poker(ranks=4, suits=3)")
    assert len(game.chance_outcomes()) == 12
    # Two players can both pair the public card with three suits: split.
    assert play(game, [0, 1, "call", "call", 2, "call", "call"]).terminal_returns() == (0, 0)


# --------------------------------------------------------------------------------------------
# Rock-paper-scissors and matching pennies
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,path,returns", [
    ("rock_paper_scissors", ("rock", "paper"), (-1, 1)),
    ("rock_paper_scissors", ("scissors", "paper"), (1, -1)),
    ("rock_paper_scissors", ("paper", "rock"), (1, -1)),
    ("rock_paper_scissors", ("rock", "rock"), (0, 0)),
    ("matching_pennies", ("heads", "heads"), (1, -1)),
    ("matching_pennies", ("tails", "heads"), (-1, 1)),
])
def test_matrix_game_returns(text, path, returns):
    assert play(text, path).terminal_returns() == returns


@pytest.mark.parametrize("text", ["rock_paper_scissors", "matching_pennies"])
def test_matrix_game_hides_the_first_move(text):
    game = jaxcfr.load_game(text)
    first, second = game.legal_actions()[:2]
    assert play(game, [first]).infoset_key(1) == play(game, [second]).infoset_key(1)
    assert play(game, [first]).infoset_key(0) != play(game, [second]).infoset_key(0)
    assert game.infoset_key(0) != play(game, [first]).infoset_key(1)  # player in the key


# --------------------------------------------------------------------------------------------
# Liar's dice
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,returns", [
    ((3, 5, "1-3", "liar"), (1, -1)),          # one 3 showing: the bid holds
    ((3, 5, "1-3", "2-3", "liar"), (1, -1)),   # only one 3: the caller (player 0) wins
    ((6, 2, "2-2", "liar"), (1, -1)),          # the 6 is wild
    ((1, 2, "1-4", "liar"), (-1, 1)),
    ((6, 6, "1-1", "2-6", "liar"), (-1, 1)),
])
def test_liars_dice_returns(path, returns):
    assert play("liars_dice", path).terminal_returns() == returns


def test_liars_dice_moves_and_keys():
    game = jaxcfr.load_game("liars_dice")
    assert game.chance_outcomes() == [(f, 1 / 6) for f in range(1, 7)]
    rolled = play(game, [3, 5])
    assert rolled.legal_actions()[0] == "1-1" and "liar" not in rolled.legal_actions()
    after = play(rolled, ["1-6"])
    assert after.legal_actions() == ["2-1", "2-2", "2-3", "2-4", "2-5", "2-6", "liar"]
    assert play(rolled, ["2-6"]).legal_actions() == ["liar"]
    with pytest.raises(GameError):
        play(rolled, ["1-6", "1-5"])  # bids must increase
    with pytest.raises(GameError):
        play(rolled, ["liar"])        # not as the first move
    with pytest.raises(GameError):
        play(game, [7])
    assert after.infoset_key(1) == play(game, [1, 5, "1-6"]).infoset_key(1) == "1|5| 1-6"
    assert after.infoset_key(0) != play(game, [1, 5, "1-6"]).infoset_key(0)
    assert after.infoset_key(0) != rolled.infoset_key(0)


def test_liars_dice_own_dice_are_a_multiset():
    game = jaxcfr.load_game("liars_dice(dice=2, sides=3)")
    a = play(game, [1, 3, 2, 2, "1-1"])
    b = play(game, [3, 1, 2, 1, "1-1"])
    assert a.infoset_key(0) == b.infoset_key(0) == "0|13| 1-1"
    assert a.infoset_key(1) != b.infoset_key(1)
    # Twos, and threes (wild), count: 2, 2, 3.
    assert play(game, [1, 3, 2, 2, "3-2", "liar"]).terminal_returns() == (1, -1)
    assert play(game, [1, 3, 2, 2, "4-2", "liar"]).terminal_returns() == (-1, 1)


# --------------------------------------------------------------------------------------------
# Goofspiel
# --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path,returns", [
    ((4, 1, 3, 2, 2, 3), (1, -1)),     # 4 + 3 against 2 + 1 (the last round plays itself)
    ((4, 4, 3, 3, 2, 2), (0, 0)),      # every prize discarded
    ((1, 4, 2, 3, 3, 2), (-1, 1)),
    ((1, 2, 4, 1, 2, 3), (-1, 1)),     # 3 for player 0 against 4 + 2 + 1
])
def test_goofspiel_returns(path, returns):
    state = play("goofspiel", path)
    assert state.is_terminal()
    assert state.terminal_returns() == returns


def test_goofspiel_moves_and_keys():
    game = jaxcfr.load_game("goofspiel")
    assert game.legal_actions() == [1, 2, 3, 4] and game.player_to_act() == 0
    assert game.prize() == 4
    # Player 1 bids without seeing player 0's bid.
    assert play(game, [4]).infoset_key(1) == play(game, [1]).infoset_key(1) == "1|"
    # Afterwards both learn only who won: 4 vs 1 and 3 vs 1 look alike to player 1.
    assert play(game, [4, 1]).infoset_key(1) == play(game, [3, 1]).infoset_key(1) == "1|1< "
    assert play(game, [4, 1]).infoset_key(1) != play(game, [1, 1]).infoset_key(1)
    assert play(game, [4, 1]).infoset_key(0) == play(game, [4, 2]).infoset_key(0) == "0|4> "
    assert play(game, [4, 1]).legal_actions() == [1, 2, 3]
    assert play(game, [4, 1, 3]).legal_actions() == [2, 3, 4]
    with pytest.raises(GameError):
        play(game, [4, 1, 4])  # spent


# --------------------------------------------------------------------------------------------
# Sampled dice poker
# --------------------------------------------------------------------------------------------

def test_sampled_dice_poker_chance_is_not_enumerable():
    game = jaxcfr.load_game("sampled_dice_poker")
    assert game.is_chance() and game.chance_outcomes() is None
    roll, prob = game.sample_chance(random.Random(0))
    assert len(roll) == 5 and list(roll) == sorted(roll)
    assert prob == pytest.approx(game.roll_probability(roll))


def test_sampled_dice_poker_probabilities_are_exact():
    game = jaxcfr.load_game("sampled_dice_poker")
    rolls = list(itertools.combinations_with_replacement(range(1, 7), 5))
    assert math.fsum(game.roll_probability(r) for r in rolls) == pytest.approx(1.0, abs=1e-12)
    assert game.roll_probability((6, 6, 6, 6, 6)) == pytest.approx(6 ** -5)
    assert game.roll_probability((1, 2, 3, 4, 5)) == pytest.approx(120 * 6 ** -5)


def test_hand_strength_order():
    from jaxcfr_games.sampled_poker import hand_strength
    order = [(1, 2, 3, 4, 6), (1, 1, 2, 3, 4), (1, 1, 2, 2, 3), (2, 2, 2, 3, 4), (1, 1, 2, 2, 2),
             (1, 3, 3, 3, 3), (2, 2, 2, 2, 2)]
    strengths = [hand_strength(r) for r in order]
    assert strengths == sorted(strengths)
    assert hand_strength((1, 1, 5, 5, 6)) < hand_strength((1, 4, 4, 5, 5))  # 5-5-4-4 beats 5-5-1-1
    assert hand_strength((2, 2, 3, 4, 6)) < hand_strength((1, 2, 3, 3, 4))  # pair of 3s beats 2s
    assert hand_strength((1, 3, 3, 4, 5)) < hand_strength((2, 3, 3, 4, 5))  # then the kickers


@pytest.mark.parametrize("bets,returns", [
    (("check", "check"), (1, -1)),
    (("bet", "fold"), (1, -1)),
    (("check", "bet", "fold"), (-1, 1)),
    (("bet", "call"), (2, -2)),
    (("check", "bet", "call"), (2, -2)),
])
def test_sampled_dice_poker_returns(bets, returns):
    strong, weak = (2, 2, 2, 2, 2), (1, 2, 3, 4, 6)
    assert play("sampled_dice_poker", (strong, weak) + bets).terminal_returns() == returns
    swapped = play("sampled_dice_poker", (weak, strong) + bets).terminal_returns()
    if bets[-1] == "fold":  # the cards do not matter
        assert swapped == returns
    else:
        assert swapped == (-returns[0], -returns[1])
        assert play("sampled_dice_poker", (weak, weak) + bets).terminal_returns() == (0, 0)


def test_sampled_dice_poker_keys_and_moves():
    game = jaxcfr.load_game("sampled_dice_poker")
    a = play(game, [(1, 1, 2, 5, 6), (3, 3, 3, 4, 4), "check"])
    b = play(game, [(1, 1, 2, 5, 6), (1, 2, 3, 4, 5), "check"])
    assert a.infoset_key(0) == b.infoset_key(0) == "0|11256|k"
    assert a.infoset_key(1) != b.infoset_key(1)
    assert a.legal_actions() == ["check", "bet"]
    assert play(a, ["bet"]).legal_actions() == ["fold", "call"]
    with pytest.raises(GameError):
        play(game, [(2, 1, 3, 4, 5)])  # not sorted
    with pytest.raises(GameError):
        play(game, [(1, 2, 3)])        # wrong number of dice


# --------------------------------------------------------------------------------------------
# Parity with OpenSpiel (skipped when it is not installed)
# --------------------------------------------------------------------------------------------

def _openspiel_lockstep(ours, theirs, to_openspiel):
    """Walk both trees together: same nodes, moves, probabilities, returns and infoset partition.

    Returns the number of histories.
    """
    ours_to_theirs, theirs_to_ours = {}, {}
    stack = [(ours.clone(), theirs.clone())]
    count = 0
    while stack:
        a, b = stack.pop()
        count += 1
        assert a.is_terminal() == b.is_terminal()
        if a.is_terminal():
            assert a.terminal_returns() == pytest.approx(b.returns())
            continue
        assert a.is_chance() == b.is_chance_node()
        if a.is_chance():
            theirs_probs = dict(b.chance_outcomes())
            mine = a.chance_outcomes()
            assert len(mine) == len(theirs_probs)
            moves = []
            for action, p in mine:
                assert theirs_probs[to_openspiel(action)] == pytest.approx(p)
                moves.append(action)
        else:
            player = a.player_to_act()
            assert player == b.current_player()
            moves = a.legal_actions()
            assert [to_openspiel(m) for m in moves] == b.legal_actions()
            mine_key = (player, a.infoset_key(player))
            theirs_key = (player, b.information_state_string())
            assert ours_to_theirs.setdefault(mine_key, theirs_key) == theirs_key
            assert theirs_to_ours.setdefault(theirs_key, mine_key) == mine_key
        for m in moves:
            stack.append((play(a, [m]), b.child(to_openspiel(m))))
    return count


@pytest.mark.parametrize("players", [2, 3, 4])
def test_kuhn_matches_openspiel(players):
    pyspiel = pytest.importorskip("pyspiel")
    theirs = pyspiel.load_game("kuhn_poker", {"players": players}).new_initial_state()
    moves = {"pass": 0, "bet": 1}
    ours = jaxcfr.load_game(f"kuhn_poker(players={players})")
    count = _openspiel_lockstep(ours, theirs, lambda m: moves.get(m, m))
    assert count == {2: 58, 3: 617, 4: 7886}[players]


def test_leduc_matches_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    theirs = pyspiel.load_game("leduc_poker").new_initial_state()
    moves = {"fold": 0, "call": 1, "raise": 2}
    count = _openspiel_lockstep(jaxcfr.load_game("leduc_poker"), theirs,
                                lambda m: moves.get(m, m) if isinstance(m, str) else m)
    assert count == 9457


@pytest.mark.parametrize("dice,sides", [(1, 3), (2, 2)])
def test_liars_dice_matches_openspiel(dice, sides):
    pyspiel = pytest.importorskip("pyspiel")
    theirs = pyspiel.load_game("liars_dice", {"numdice": dice, "dice_sides": sides})
    ours = jaxcfr.load_game(f"liars_dice(dice={dice}, sides={sides})")
    labels = {f"{q}-{f}": (q - 1) * sides + f - 1
              for q in range(1, 2 * dice + 1) for f in range(1, sides + 1)}
    labels["liar"] = 2 * dice * sides

    def to_openspiel(m):
        return labels[m] if isinstance(m, str) else m - 1

    _openspiel_lockstep(ours, theirs.new_initial_state(), to_openspiel)


def _count_openspiel(state):
    count, stack = 0, [state]
    while stack:
        s = stack.pop()
        count += 1
        if s.is_terminal():
            continue
        moves = [a for a, _ in s.chance_outcomes()] if s.is_chance_node() else s.legal_actions()
        stack.extend(s.child(a) for a in moves)
    return count


def _count_ours(game):
    count, stack = 0, [game.clone()]
    while stack:
        s = stack.pop()
        count += 1
        if s.is_terminal():
            continue
        moves = [a for a, _ in s.chance_outcomes()] if s.is_chance() else s.legal_actions()
        for m in moves:
            child = s.clone()
            child.step(m)
            stack.append(child)
    return count


def test_liars_dice_tree_size_matches_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    theirs = pyspiel.load_game("liars_dice", {"numdice": 1}).new_initial_state()
    assert _count_ours(jaxcfr.load_game("liars_dice")) == _count_openspiel(theirs) == 294883


def test_goofspiel_matches_openspiel_turn_based():
    pyspiel = pytest.importorskip("pyspiel")
    theirs = pyspiel.convert_to_turn_based(pyspiel.load_game("goofspiel", {
        "imp_info": True, "num_cards": 4, "points_order": "descending",
        "returns_type": "win_loss"}))
    count = _openspiel_lockstep(jaxcfr.load_game("goofspiel"), theirs.new_initial_state(),
                                lambda m: m - 1)
    assert count == 1077


@pytest.mark.parametrize("text,os_name,os_params,to_os,paths", [
    ("kuhn_poker(players=3)", "kuhn_poker", {"players": 3}, {"pass": 0, "bet": 1},
     [(0, 1, 2, "pass", "bet", "pass", "bet"), (3, 1, 0, "bet", "bet", "pass")]),
    ("leduc_poker", "leduc_poker", {}, {"fold": 0, "call": 1, "raise": 2},
     [(0, 2, "raise", "call", 1, "raise", "raise", "call"), (5, 3, "call", "raise", "fold")]),
])
def test_fixed_sequences_match_openspiel(text, os_name, os_params, to_os, paths):
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game(os_name, os_params)
    for path in paths:
        theirs = game.new_initial_state()
        for m in path:
            theirs.apply_action(to_os.get(m, m) if isinstance(m, str) else m)
        assert play(text, path).terminal_returns() == pytest.approx(theirs.returns())
