"""Subgame solving (issue 19): public states, gadgets, depth limits, many at once, composing.

Oracles: the coin-toss game of Brown & Sandholm (2017), where unsafe re-solving is known to
raise exploitability and a safe gadget must find P2's equilibrium (guess heads 1/4); the
safety bound, exact for every blueprint (the composed profile's exploitability never
exceeds the blueprint's by more than the sum over gadget games of their mass times their
NashConv, halved); Kuhn's closed-form equilibrium; Leduc's public states (every deal
consistent with the public actions); depth-limited subgames that equal the whole subgame
past its depth. Every figure is exact (float64 passes); nothing is sampled.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr import CHANCE, TERMINAL, Game, GameError
from jaxcfr.subgames import (Context, paths_after_chance, paths_at_depth, public_state,
                             resolve_subgames, subgame)
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.subgames.closure import player_components
from jaxcfr.subgames.game import ALTERNATIVE, ENTER, GADGET, is_gadget_key
from random_games import RandomGame
import reference_cfr

SAFE = ("resolve", "maxmargin", "reach")
#: Kuhn's two public states after player 0's first move (one compiled shape per gadget).
KUHN_PATHS = [[0, 1, "pass"], [0, 1, "bet"]]
EPS = 1e-9


class CoinToss(Game):
    """Brown & Sandholm (2017), figure 1: chance tosses a fair coin; P1 (player 0) sees it
    and sells (worth +0.5 on heads, -0.5 on tails) or plays; then P2 (player 1), who has not
    seen it, guesses: right, P1 gets -1; wrong, +1. Zero-sum, value 0; at equilibrium P2
    guesses heads with probability 1/4."""

    num_players = 2

    def __init__(self):
        self.history = ()

    def clone(self):
        new = type(self)()
        new.history = self.history
        return new

    def is_terminal(self):
        h = self.history
        return len(h) == 3 or (len(h) == 2 and h[1] == "sell")

    def is_chance(self):
        return not self.history

    def player_to_act(self):
        if self.is_terminal():
            return TERMINAL
        return CHANCE if not self.history else len(self.history) - 1

    def chance_outcomes(self):
        return [("heads", 0.5), ("tails", 0.5)] if not self.history else None

    def legal_actions(self):
        if self.is_terminal() or not self.history:
            return []
        return ["sell", "play"] if len(self.history) == 1 else ["heads", "tails"]

    def step(self, action):
        if self.is_terminal():
            raise GameError("the game is over", rule="illegal-action")
        legal = [a for a, _ in self.chance_outcomes()] if not self.history else \
            self.legal_actions()
        if action not in legal:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.history = self.history + (action,)

    def terminal_returns(self):
        coin, move = self.history[:2]
        if move == "sell":
            u = 0.5 if coin == "heads" else -0.5
        else:
            u = -1.0 if self.history[2] == coin else 1.0
        return (u, -u)

    def infoset_key(self, player):
        return ("P1", self.history[:1]) if player == 0 else ("P2", self.history[1:2])

    def nash_value(self):
        return (0.0, 0.0)


def _table(lowered, policy):
    """A ``[I, A]`` table from ``{(player, key): {action: prob}}`` (others uniform)."""
    t = lowered.tensors
    table = t.legal_mask / t.legal_mask.sum(1, keepdims=True)
    for (player, key), probs in policy.items():
        row = lowered.row_of(player, key)
        acts = lowered.infoset_actions[row]
        table[row] = 0.0
        table[row, :len(acts)] = [probs[a] for a in acts]
    return table


@pytest.fixture(scope="module")
def coin():
    game = CoinToss()
    low = jaxcfr.lower(game)
    # an equilibrium: P1 plays half of the time with either coin; P2 guesses heads 1/4
    blueprint = _table(low, {(0, ("P1", ("heads",))): {"sell": 0.5, "play": 0.5},
                             (0, ("P1", ("tails",))): {"sell": 0.5, "play": 0.5},
                             (1, ("P2", ("play",))): {"heads": 0.25, "tails": 0.75}})
    return game, low, blueprint


def _expl(lowered, table):
    return float(jaxcfr.evaluate(lowered, table, dtype="float64")["exploitability"])


# -- counterfactual best-response values (analytics) against the NumPy reference --------
@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "random"])
def test_counterfactual_best_response_values_match_the_reference(name):
    from jaxcfr.solvers.analytics import counterfactual_values
    game = RandomGame(seed=2, players=2, max_depth=6, max_nodes=200) if name == "random" \
        else jaxcfr.load_game(name)
    low = jaxcfr.lower(game)
    tree = reference_cfr.Tree(game)
    rng = np.random.default_rng(0)
    profile = reference_cfr.random_profile(tree, rng)
    table = reference_cfr.table_from_profile(low, profile)
    cv = counterfactual_values(low, table)
    for player in range(2):
        value, choice = reference_cfr.best_response_value_recursive(tree, profile, player)
        br = dict(profile)
        for key, a in choice.items():
            br[key] = np.eye(len(tree.infosets[key]))[a]
        q, _, _ = reference_cfr.counterfactual_values(tree, br)
        for row, key in enumerate(low.infoset_keys):
            if key[0] != player or key not in q:
                continue
            n = len(low.infoset_actions[row])
            np.testing.assert_allclose(cv.action_values[row, :n], q[key], atol=1e-9)
            assert cv.infoset_values[row] == pytest.approx(max(q[key]), abs=1e-9)
        # the root's counterfactual value is the best-response value
        assert cv.values[player, 0] == pytest.approx(value, abs=1e-9)
    # reach: each player's own and chance's, as the reference's
    reach = reference_cfr._reaches(tree, profile)
    for node in range(0, low.num_nodes, max(1, low.num_nodes // 200)):
        np.testing.assert_allclose(cv.reach[node], reach[low.history(node)], atol=1e-12)


# -- the coin toss: the known failure of unsafe re-solving -----------------------------
def test_coin_toss_blueprint_is_an_equilibrium(coin):
    _, low, blueprint = coin
    assert _expl(low, blueprint) < 1e-12


def test_unsafe_resolving_raises_exploitability_safe_gadgets_do_not(coin):
    game, low, blueprint = coin
    at = ["heads", "play"]
    unsafe = resolve_subgames(game, blueprint, [at], gadget="unsafe", iterations=200,
                              precision="float64")
    # beliefs 50/50 leave P2 indifferent: CFR keeps guessing uniformly, which P1 exploits
    p2 = unsafe.profile.policy(1, ("P2", ("play",)))
    assert p2["heads"] == pytest.approx(0.5)
    assert unsafe.metrics["exploitability"] == pytest.approx(0.125, abs=1e-9)
    for gadget in SAFE:
        result = resolve_subgames(game, blueprint, [at], gadget=gadget, iterations=2000,
                                  precision="float64")
        assert result.bound is not None
        assert result.metrics["exploitability"] <= result.bound + EPS, gadget
        assert result.bound < 2e-3
        p2 = result.profile.policy(1, ("P2", ("play",)))
        assert p2["heads"] == pytest.approx(0.25, abs=0.02), gadget


def test_coin_toss_alternatives_are_the_blueprints_values(coin):
    game, low, blueprint = coin
    sub = subgame(game, blueprint, ["tails", "play"], gadget="resolve")
    assert sub.player == 1 and sub.opponent == 0
    g = sub.gadget
    assert len(g.roots) == 2 and g.num_sets == 2           # P1 knows the coin
    assert sorted(g.alternative) == pytest.approx([-0.5, 0.5])
    assert g.probability == pytest.approx([0.5, 0.5])      # P2's and chance's reach only
    jaxcfr.validate(sub)


# -- public states ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def leduc():
    game = jaxcfr.load_game("leduc_poker")
    return game, jaxcfr.lower(game, name="leduc_poker")


def test_a_leduc_root_set_holds_every_deal_consistent_with_the_public_actions(leduc):
    game, low = leduc
    index = TreeIndex(low)
    for path, board in (([0, 1, "call", "call", 2], 2), ([3, 5, "raise", "call", 0], 0)):
        state = public_state(index, path)
        deals = {index.path(int(r))[:2] for r in state.roots}
        bets = {index.path(int(r))[2:] for r in state.roots}
        assert deals == {(a, b) for a in range(6) for b in range(6)
                         if len({a, b, board}) == 3}
        assert bets == {tuple(path[2:])}
        # the same roots from the game's declared public key, and from any path into it
        assert public_state(index, path, game=game).source == "public key"
        assert public_state(index, path, game=game).key == state.key
        other = list(index.path(int(state.roots[-1])))
        assert public_state(index, other).key == state.key
    round_one = public_state(index, [4, 0, "raise"])
    assert len(round_one.roots) == 30


def test_every_second_round_public_state_of_leduc(leduc):
    _, low = leduc
    paths = paths_after_chance(low, 3)
    assert len(paths) == 5 * 6             # round-1 sequences cc, rc, crc, rrc, crrc x boards
    index = TreeIndex(low)
    sizes = {len(public_state(index, p).roots) for p in paths}
    assert sizes == {20}
    assert len(paths_at_depth(low, 2)) == 1       # the first decision: every deal


def test_a_public_key_that_is_not_closed_is_refused():
    class Leaky(CoinToss):
        def public_key(self):                       # claims P1 sees which coin P2 faces
            return self.history
    low = jaxcfr.lower(Leaky())
    with pytest.raises(GameError, match="not closed") as e:
        public_state(TreeIndex(low), ["heads", "play"], game=Leaky())
    assert e.value.rule == "public-key"


def test_augmented_information_sets(leduc):
    _, low = leduc
    index = TreeIndex(low)
    roots = public_state(index, [0, 1, "call", "call", 2]).roots
    for player in (0, 1):
        comp = player_components(index, roots, player)
        cards = [index.path(int(r))[player] for r in roots]
        # one set per private card of the player
        assert len(set(comp)) == 5
        assert all(len({c for c, k in zip(cards, comp) if k == j}) == 1 for j in set(comp))


@pytest.mark.parametrize("path, message", [
    ([0, 0], "not legal"), ([0, 1, "fold"], "not legal"), ([0, 1, "call", "call"], "chance"),
    ([0, 1, "raise", "fold"], "terminal"), ([], "chance")])
def test_bad_paths_are_named(leduc, path, message):
    _, low = leduc
    blueprint = low.tensors.legal_mask / low.tensors.legal_mask.sum(1, keepdims=True)
    with pytest.raises(GameError, match=message) as e:
        subgame(low, blueprint, path)
    assert e.value.rule == "subgame-path"
    assert str(list(path)) in str(e.value)


def test_safe_gadgets_need_two_player_zero_sum():
    game = jaxcfr.load_game("kuhn_poker(players=3)")
    low = jaxcfr.lower(game)
    uniform = low.tensors.legal_mask / low.tensors.legal_mask.sum(1, keepdims=True)
    for gadget in SAFE:
        with pytest.raises(ValueError, match="two-player zero-sum.*3 players.*unsafe"):
            subgame(low, uniform, [0, 1, 2, "pass"], gadget=gadget)
    sub = subgame(low, uniform, [0, 1, 2, "pass"], gadget="unsafe")
    jaxcfr.validate(sub)
    assert sub.player is None and jaxcfr.lower(sub).num_players == 3
    with pytest.raises(ValueError, match="unknown gadget"):
        subgame(low, uniform, [0, 1, 2, "pass"], gadget="nope")


# -- a subgame is a game like any other -------------------------------------------------
@pytest.fixture(scope="module")
def kuhn():
    game = jaxcfr.load_game("kuhn_poker")
    low = jaxcfr.lower(game, name="kuhn_poker")
    return game, low, jaxcfr.solve(low, "cfr", 10, precision="float64").profile


@pytest.mark.parametrize("gadget", ["resolve", "maxmargin", "reach", "unsafe"])
def test_a_subgame_lowers_validates_and_solves(kuhn, gadget):
    game, low, blueprint = kuhn
    sub = subgame(game, blueprint, [2, 0, "pass"], gadget=gadget)
    jaxcfr.validate(sub)
    lowered = jaxcfr.lower(sub)
    assert lowered.num_nodes == sub.tree_size()
    if gadget != "unsafe":
        assert sub.player == 1
    # every preset solves it (the compiled steps of one shape, so on one gadget only)
    for algorithm in jaxcfr.ALGORITHMS if gadget == "reach" else ("cfr+",):
        result = jaxcfr.solve(lowered, algorithm, 20, precision="float64")
        assert np.isfinite(result.final["nash_conv"])
    keys = {k for _, k in lowered.infoset_keys}
    assert keys - {k for _, k in low.infoset_keys} == {k for k in keys if is_gadget_key(k)}


def test_the_resolve_gadget_tree(kuhn):
    game, low, blueprint = kuhn
    sub = subgame(game, blueprint, [0, 1, "pass"], gadget="resolve")
    state = sub.clone()
    assert state.is_chance() and len(state.chance_outcomes()) == 6      # every deal
    first = state.chance_outcomes()[0][0]
    state.step(first)
    assert state.player_to_act() == sub.opponent == 0
    assert state.infoset_key(0)[0] == GADGET
    assert state.legal_actions() == [ALTERNATIVE, ENTER]
    alt = state.clone()
    alt.step(ALTERNATIVE)
    assert alt.is_terminal() and sum(alt.terminal_returns()) == 0
    state.step(ENTER)
    assert state.player_to_act() == 1
    assert state.infoset_key(1) == low.infoset_keys[low.row_of(1, state.infoset_key(1))][1]


# -- safety, on Leduc and on random games -----------------------------------------------
def _check_safe(result):
    base = result.blueprint_metrics["exploitability"]
    after = result.metrics["exploitability"]
    assert result.bound is not None
    assert after <= base + result.bound + EPS, (base, after, result.bound)
    return base, after


@pytest.mark.slow
def test_resolving_every_second_round_state_of_leduc_is_safe(leduc):
    game, low = leduc
    paths = paths_after_chance(low, 3)
    rows = []
    for blueprint_iterations in (1, 10, 100):
        blueprint = jaxcfr.solve(low, "cfr", blueprint_iterations, precision="float64").profile
        context = Context(low, blueprint)
        for gadget in SAFE:
            result = resolve_subgames(low, blueprint, paths, gadget=gadget, iterations=300,
                                      precision="float64", context=context)
            base, after = _check_safe(result)
            assert result.bound < 0.05
            rows.append((blueprint_iterations, gadget, base, after))
    weak = [after / base for it, _, base, after in rows if it == 1]
    assert max(weak) < 0.9 and min(weak) < 0.65      # weak blueprints: a substantial drop


def _repaid(structure: int, draw: int) -> RandomGame:
    """A random game of one tree (``structure``) with payoffs drawn afresh (``draw``): games
    of one shape, so one compiled program serves them all."""
    game = RandomGame(seed=structure, players=2, max_depth=6, max_nodes=200)
    rng = np.random.default_rng(1000 * structure + draw)
    for i, node in enumerate(game.tree):
        if node[0] == "t":
            u = float(rng.integers(-4, 5))
            game.tree[i] = node[:5] + ((u, -u),) + node[6:]
    return game


@pytest.mark.parametrize("structure, depth", [(0, 3)])
@pytest.mark.slow
def test_resolving_random_games_is_safe(structure, depth):
    """18 random games of one tree, each with a blueprint of another quality."""
    low = jaxcfr.lower(_repaid(structure, 0))
    index = TreeIndex(low)
    from jaxcfr.subgames.closure import at_depth
    states = at_depth(index, depth)
    assert len(states) >= 2
    for draw in range(18):
        low = jaxcfr.lower(_repaid(structure, draw))
        solved = jaxcfr.solve(low, "cfr", 5, precision="float64").average_strategy
        uniform = low.tensors.legal_mask / low.tensors.legal_mask.sum(1, keepdims=True)
        mix = draw / 17                                      # from uniform to CFR's
        blueprint = (1 - mix) * uniform + mix * solved
        context = Context(low, blueprint)
        for gadget in SAFE:
            result = resolve_subgames(low, blueprint, states, gadget=gadget,
                                      iterations=400, precision="float64", batching="one",
                                      context=context)
            _check_safe(result)


@pytest.mark.slow
def test_an_equilibrium_blueprint_is_given_back(kuhn):
    game, low, _ = kuhn
    # Kuhn's equilibrium with alpha = 0 (cards 0 < 1 < 2)
    eq = _table(low, {
        (0, "0|0|"): {"pass": 1, "bet": 0}, (0, "0|1|"): {"pass": 1, "bet": 0},
        (0, "0|2|"): {"pass": 1, "bet": 0}, (0, "0|0|pb"): {"pass": 1, "bet": 0},
        (0, "0|1|pb"): {"pass": 2 / 3, "bet": 1 / 3}, (0, "0|2|pb"): {"pass": 0, "bet": 1},
        (1, "1|0|p"): {"pass": 2 / 3, "bet": 1 / 3}, (1, "1|1|p"): {"pass": 1, "bet": 0},
        (1, "1|2|p"): {"pass": 0, "bet": 1}, (1, "1|0|b"): {"pass": 1, "bet": 0},
        (1, "1|1|b"): {"pass": 2 / 3, "bet": 1 / 3}, (1, "1|2|b"): {"pass": 0, "bet": 1}})
    assert _expl(low, eq) < 1e-12
    for gadget in SAFE:
        result = resolve_subgames(low, eq, KUHN_PATHS, gadget=gadget, iterations=3000,
                                  precision="float64")
        _check_safe(result)
        assert result.metrics["exploitability"] < 2e-3


# -- many at once ------------------------------------------------------------------------
@pytest.mark.slow
def test_one_stacked_run_equals_solving_one_by_one(kuhn):
    game, low, blueprint = kuhn
    one = resolve_subgames(low, blueprint, KUHN_PATHS, gadget="maxmargin", iterations=50,
                           precision="float64", batching="one")
    each = resolve_subgames(low, blueprint, KUHN_PATHS, gadget="maxmargin", iterations=50,
                            precision="float64", batching="each")
    assert len(one.stacks) == 1 and len(each.stacks) == len(each.subgames) == 4
    np.testing.assert_allclose(one.table, each.table, atol=1e-10)
    # paths in one public state share one subgame
    same = resolve_subgames(low, blueprint, [[0, 1, "pass"], [2, 1, "pass"]],
                            gadget="resolve", iterations=5, precision="float64")
    assert len(same.subgames) == 2


def test_another_blueprint_compiles_nothing(kuhn):
    from jaxcfr._util.tracing import TRACES
    game, low, _ = kuhn
    blueprints = [jaxcfr.solve(low, "cfr", n, precision="float64").profile for n in (3, 7)]
    resolve_subgames(low, blueprints[0], KUHN_PATHS, gadget="maxmargin", iterations=20,
                     precision="float64")
    before = TRACES.snapshot()
    resolve_subgames(low, blueprints[1], KUHN_PATHS, gadget="maxmargin", iterations=30,
                     precision="float64")
    assert TRACES.since(before) == {}                    # values and solves: arguments


def test_overlapping_subgames_are_refused(kuhn):
    game, low, blueprint = kuhn
    with pytest.raises(ValueError, match="overlap"):
        resolve_subgames(low, blueprint, [[0, 1], [0, 1, "pass"]], iterations=5)


def test_the_composed_profile_is_a_profile_of_the_full_game(kuhn, tmp_path):
    game, low, blueprint = kuhn
    profile = jaxcfr.resolve(game, blueprint, KUHN_PATHS, gadget="resolve", iterations=100,
                             precision="float64")
    assert set(profile.keys) == set(low.infoset_keys)
    path = profile.save(tmp_path / "composed")
    again = jaxcfr.Profile.load(path)
    np.testing.assert_allclose(again.probs, profile.probs)
    jaxcfr.evaluate_profile(again, "kuhn_poker")
    # outside the subgame the blueprint is kept
    table, _ = again.table(low)
    outside = low.row_of(0, "0|0|")
    np.testing.assert_allclose(table[outside], blueprint.table(low)[0][outside])


# -- depth limits ------------------------------------------------------------------------
def test_depth_limited_subgames(leduc):
    game, low = leduc
    blueprint = jaxcfr.solve(low, "cfr", 20, precision="float64").profile
    path = [0, 1, "raise"]
    whole = subgame(low, blueprint, path, gadget="unsafe")
    tree = reference_cfr.Tree(whole)
    table = reference_cfr.profile_from_table(jaxcfr.lower(whole), blueprint.table(
        jaxcfr.lower(whole))[0])
    value = reference_cfr.expected_values(tree, table)
    for limit in (1, 3, 5):
        cut = subgame(low, blueprint, path, gadget="unsafe", depth_limit=limit)
        cut_tree = reference_cfr.Tree(cut)
        assert len(cut_tree.nodes) < len(tree.nodes) == whole.tree_size()
        assert len(cut_tree.nodes) == cut.tree_size()
        # the frontier is worth the blueprint's continuation values: the same expected value
        cut_table = {k: v for k, v in table.items() if k in cut_tree.infosets}
        np.testing.assert_allclose(reference_cfr.expected_values(cut_tree, cut_table), value,
                                   atol=1e-12)
    # past the subgame's depth the cut subgame is the whole one, value for value
    deep = jaxcfr.lower(subgame(low, blueprint, path, gadget="resolve", depth_limit=50))
    full = jaxcfr.lower(subgame(low, blueprint, path, gadget="resolve"))
    assert deep.num_nodes == full.num_nodes
    assert deep.infoset_keys == full.infoset_keys
    np.testing.assert_array_equal(deep.tensors.payoff, full.tensors.payoff)
    np.testing.assert_array_equal(deep.tensors.chance_prob, full.tensors.chance_prob)


@pytest.mark.slow
def test_a_multi_valued_frontier(leduc):
    game, low = leduc
    blueprint = jaxcfr.solve(low, "cfr", 20, precision="float64").profile
    path = [0, 1, "raise"]
    single = subgame(game, blueprint, path, gadget="resolve", depth_limit=2)
    multi = subgame(game, blueprint, path, gadget="resolve", depth_limit=2, continuations=3)
    jaxcfr.validate(multi)
    b = jaxcfr.lower(multi)
    o = multi.opponent
    frontier = [k for _, k in b.infoset_keys if k[0] == "jaxcfr.frontier"]
    assert frontier and all(b.infoset_actions[b.row_of(o, k)] ==
                            tuple(("continuation", j) for j in range(3)) for k in frontier)
    # continuation 0 is the blueprint: choosing it everywhere is the single-valued game
    one, many = reference_cfr.Tree(single), reference_cfr.Tree(multi)
    base = reference_cfr.uniform_profile(one)
    first = dict(reference_cfr.uniform_profile(many))
    for k in frontier:
        first[(o, k)] = np.array([1.0, 0.0, 0.0])
    np.testing.assert_allclose(reference_cfr.expected_values(many, first),
                               reference_cfr.expected_values(one, base), atol=1e-12)
    # with more continuations to pick from, the opponent's best response gains
    br_one = reference_cfr.best_response_value_recursive(one, base, o)[0]
    br_many = reference_cfr.best_response_value_recursive(many, first, o)[0]
    assert br_many > br_one + 1e-6
    with pytest.raises(ValueError, match="needs the game itself"):
        subgame(low, blueprint, path, depth_limit=1, continuations=2)


# -- nested re-solving after an abstraction's dropped actions ----------------------------
@pytest.mark.slow
def test_off_abstraction_subgames_of_no_limit_leduc():
    from jaxcfr.subgames import off_abstraction
    name = "nolimit_leduc(stack=3)"
    game = jaxcfr.load_game(name)
    full = jaxcfr.lower(game, name=name)
    menu = jaxcfr.load_abstraction("bet_menu(fractions=[])")
    small = jaxcfr.lower(jaxcfr.Abstracted(game, menu))
    trained = jaxcfr.solve(small, "cfr+", 300).profile
    paths = off_abstraction(game, menu, abstract=small)
    assert paths
    for p in paths:                      # each right after one dropped raise
        *_, last = p
        assert last not in ("f", "c")
    context = Context(full, trained, abstraction=small)
    result = resolve_subgames(full, trained, paths, gadget="resolve", iterations=200,
                              precision="float64", batching="one", context=context)
    lifted = jaxcfr.lift(trained, full).table(full)[0]
    np.testing.assert_allclose(result.blueprint_table, lifted)
    assert result.metrics["exploitability"] < result.blueprint_metrics["exploitability"] / 3
    assert result.bound is None                     # nested alternatives: a target, no bound
    assert {s[1] for s in result.skipped} <= {0, 1}   # the raiser's side: never reached


def test_report_is_json(kuhn):
    game, low, blueprint = kuhn
    result = resolve_subgames(low, blueprint, KUHN_PATHS, iterations=5, precision="float64")
    text = json.dumps(result.report())
    assert "subgames" in text and repr(result).startswith("ResolveResult(4 subgame games")


# -- the command line and run configs ----------------------------------------------------
def test_the_resolve_command(kuhn, tmp_path, capsys):
    from jaxcfr.cli.app import main
    game, low, blueprint = kuhn
    blueprint.save(tmp_path / "bp")
    out = tmp_path / "composed"
    status = main(["resolve", "kuhn_poker", str(tmp_path / "bp.npz"), "--at", "0,1,pass",
                   "--at", "0,1,bet", "--gadget", "maxmargin", "--iterations", "50",
                   "--precision", "float64", "--out", str(out), "--json"])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    assert report["public_states"] == 2 and report["subgame_games"] == 4
    assert report["resolved"]["exploitability"] <= (report["blueprint"]["exploitability"]
                                                    + report["bound"] + EPS)
    assert jaxcfr.Profile.load(report["out"]).game == "kuhn_poker"
    assert main(["resolve", "kuhn_poker", str(tmp_path / "bp.npz"), "--at", "0,0"]) == 2
    assert "[subgame-path]" in capsys.readouterr().err
    assert main(["resolve", "kuhn_poker(players=3)", str(tmp_path / "bp.npz"), "--at",
                 "0,1,2,pass"]) == 2
    assert "two-player zero-sum" in capsys.readouterr().err


def test_a_config_trains_then_resolves(tmp_path):
    from jaxcfr.runs import ConfigError, config_from_dict, train
    raw = {"name": "kuhn_resolve", "game": {"name": "kuhn_poker"},
           "solver": {"algorithm": "cfr", "iterations": 10},
           "run": {"eval_every": 10, "precision": "float64", "plot": False, "quiet": True},
           "resolve": {"gadget": "maxmargin", "iterations": 50, "at": ["0,1,pass", "0,1,bet"]}}
    config = config_from_dict(raw)
    result = train(config, out_dir=str(tmp_path / "run"), log=lambda _: None)
    report = json.loads((result.run_dir / "resolve.json").read_text())
    assert report == json.loads(json.dumps(result.resolve))
    assert report["metrics"]["exploitability"] <= (report["blueprint_metrics"]["exploitability"]
                                                   + report["bound"] + EPS)
    assert jaxcfr.Profile.load(result.run_dir / "resolved.npz").game == "kuhn_poker"
    again = jaxcfr.runs.load_config(result.run_dir / "config.toml")
    assert again.resolve == config.resolve
    for bad, message in (({"gadget": "nope", "at_depth": 2}, "resolve.gadget"),
                         ({"after_chance": 1, "at_depth": 2}, "one way"),
                         ({"off_abstraction": True}, "game.abstraction"),
                         ({"at_depth": 2, "iterations": 0}, "resolve.iterations")):
        with pytest.raises(ConfigError, match=message):
            config_from_dict({**raw, "resolve": bad})
    with pytest.raises(ConfigError, match="unknown key resolve.gadgt"):
        config_from_dict(raw, overrides=["resolve.gadgt=reach"])
