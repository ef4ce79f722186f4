"""Exact analytics on the device agree with brute force, with the NumPy reference and with
OpenSpiel.

* values, best-response values and NashConv of random profiles against a brute-force
  maximum over every pure strategy of the responding player (and the textbook
  recursive best response) on Kuhn poker, the different-depths ``.efg`` game,
  rock-paper-scissors, matching pennies and 3-player Kuhn poker;
* exploitability against ``open_spiel.python.algorithms.exploitability`` for the same
  profile on Kuhn and Leduc poker (information sets mapped by walking both trees);
* the metric dispatcher: known Nash value -> gap to it; 2-player constant-sum ->
  exploitability; otherwise NashConv;
* continuation values (history and information-set values) and the best-response
  profile itself.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.public_buckets import bucket_hands
from jaxcfr.solvers import analytics
from jaxcfr.solvers import metric_record
from jaxcfr.tensors import TERMINAL_NODE, to_device

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R

SEEDS = (0, 1, 2)
TOL = 2e-5          # float32 on the device; payoffs are O(1)


def _profiles(name: str, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [R.random_profile(C.tree(n), rng) for n in C.member_names(name)]


# -- best responses against brute force ------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_small_games_best_response_matches_brute_force(seed):
    profiles = _profiles("SMALL", seed)
    metrics = C.evaluate_table("SMALL", C.profile_table("SMALL", profiles))
    for b, name in enumerate(C.SMALL):
        tree, prof = C.tree(name), profiles[b]
        values = R.expected_values(tree, prof)
        brute = [R.best_response_value_brute_force(tree, prof, p) for p in range(2)]
        recursive = [R.best_response_value_recursive(tree, prof, p)[0] for p in range(2)]
        np.testing.assert_allclose(brute, recursive, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(metrics["values"][b], values, atol=TOL, err_msg=name)
        np.testing.assert_allclose(metrics["best_response_values"][b], brute, atol=TOL,
                                   err_msg=name)
        np.testing.assert_allclose(metrics["nash_conv"][b], sum(brute) - values.sum(),
                                   atol=TOL, err_msg=name)
        np.testing.assert_allclose(metrics["exploitability"][b], (sum(brute) - values.sum()) / 2,
                                   atol=TOL, err_msg=name)


def test_uniform_kuhn_values_by_hand():
    """Uniform play in Kuhn poker: player 0 wins 1/8 per game on average (OpenSpiel agrees)."""
    tree = C.tree("kuhn_poker")
    uniform = R.uniform_profile(tree)
    np.testing.assert_allclose(R.expected_values(tree, uniform), [0.125, -0.125], atol=1e-12)
    metrics = C.evaluate_table("SMALL", C.profile_table(
        "SMALL", [R.uniform_profile(C.tree(n)) for n in C.SMALL]))
    np.testing.assert_allclose(metrics["values"][0], [0.125, -0.125], atol=1e-6)
    # a best response to uniform play: OpenSpiel's nash_conv(kuhn, uniform) = 0.916666...
    np.testing.assert_allclose(metrics["nash_conv"][0], 11 / 12, atol=1e-5)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_three_player_nash_conv_matches_brute_force(seed):
    name = "kuhn_poker(players=3)"
    tree = C.tree(name)
    prof = _profiles(name, seed)[0]
    metrics = C.evaluate_table(name, C.profile_table(name, [prof]))
    conv, values, br = R.nash_conv(tree, prof, brute_force=True)
    _, _, br_recursive = R.nash_conv(tree, prof)
    np.testing.assert_allclose(br, br_recursive, atol=1e-12)
    np.testing.assert_allclose(metrics["values"], values, atol=TOL)
    np.testing.assert_allclose(metrics["best_response_values"], br, atol=TOL)
    np.testing.assert_allclose(metrics["nash_conv"], conv, atol=TOL)
    assert metrics["exploitability"] is None
    assert metrics["metric_name"] == "nash_conv"


def test_reference_game_values_by_linear_programming():
    """The oracle's own check: sequence-form LP values of the small games."""
    assert R.sequence_form_value(C.tree("kuhn_poker")) == pytest.approx(-1 / 18, abs=1e-9)
    assert R.sequence_form_value(C.tree("different_depths")) == pytest.approx(0.3, abs=1e-9)
    assert R.sequence_form_value(C.tree("rock_paper_scissors")) == pytest.approx(0, abs=1e-9)


# -- OpenSpiel ---------------------------------------------------------------------------
# Our action labels -> OpenSpiel action ids (games/kuhn.py and games/leduc.py document
# that they follow OpenSpiel's kuhn_poker / leduc_poker; chance actions are the card ids).
_OPENSPIEL_ACTIONS = {"kuhn_poker": {"pass": 0, "bet": 1},
                      "leduc_poker": {"fold": 0, "call": 1, "raise": 2}}


def _openspiel_policy(name: str, lowered, table: np.ndarray):
    """A TabularPolicy holding our ``[I, A]`` profile, keys matched by walking both trees."""
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python import policy as os_policy

    os_game = pyspiel.load_game(name)
    pol = os_policy.TabularPolicy(os_game)
    ids = _OPENSPIEL_ACTIONS[name]
    matched: dict = {}

    def walk(ours, theirs):
        if ours.is_terminal():
            assert theirs.is_terminal()
            np.testing.assert_allclose(ours.terminal_returns(), theirs.returns())
            return
        if ours.is_chance():
            assert theirs.is_chance_node()
            outcomes = dict(theirs.chance_outcomes())
            for a, p in ours.chance_outcomes():
                assert outcomes[a] == pytest.approx(p)
                o, t = ours.clone(), theirs.clone()
                o.step(a)
                t.apply_action(a)
                walk(o, t)
            return
        player = ours.player_to_act()
        assert theirs.current_player() == player
        acts = ours.legal_actions()
        assert [ids[a] for a in acts] == theirs.legal_actions()
        key = (player, ours.infoset_key(player))
        info = theirs.information_state_string()
        assert matched.setdefault(key, info) == info, "one of our infosets maps to two"
        row = lowered.row_of(*key)
        probs = pol.policy_for_key(info)
        for i, a in enumerate(acts):
            probs[ids[a]] = table[row, i]
        for a in acts:
            o, t = ours.clone(), theirs.clone()
            o.step(a)
            t.apply_action(ids[a])
            walk(o, t)

    walk(C.make_game(name), os_game.new_initial_state())
    assert len(set(matched.values())) == len(matched), "two of our infosets map to one"
    assert len(matched) == len(pol.state_lookup)
    return os_game, pol


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_exploitability_matches_openspiel(name):
    pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability as os_exploitability
    from open_spiel.python.algorithms import expected_game_score

    lowered = C.lowered(name)
    tree = C.tree(name)
    rng = np.random.default_rng(7)
    profiles = [R.uniform_profile(tree), R.random_profile(tree, rng)]
    for prof in profiles:
        table = R.table_from_profile(lowered, prof)
        ours = C.evaluate_table(name, table)
        os_game, pol = _openspiel_policy(name, lowered, table)
        expected = os_exploitability.nash_conv(os_game, pol, return_only_nash_conv=False,
                                               use_cpp_br=True)
        on_policy = expected_game_score.policy_value(os_game.new_initial_state(), [pol, pol])
        np.testing.assert_allclose(float(ours["nash_conv"]), expected.nash_conv, atol=5e-5)
        np.testing.assert_allclose(ours["values"], on_policy, atol=5e-5)
        np.testing.assert_allclose(ours["best_response_values"],
                                   np.asarray(on_policy) + expected.player_improvements,
                                   atol=5e-5)
        np.testing.assert_allclose(float(ours["exploitability"]),
                                   os_exploitability.exploitability(os_game, pol), atol=5e-5)


# -- the metric dispatcher --------------------------------------------------------------------
def _with_payoff(lowered, fn, **changes):
    t = lowered.tensors
    terminal = (t.node_kind == TERMINAL_NODE)[:, None]
    payoff = np.where(terminal, fn(t.payoff), t.payoff)
    return dataclasses.replace(lowered, tensors=t._replace(payoff=payoff), **changes)


def test_dispatcher_picks_the_tightest_metric():
    kuhn = C.lowered("kuhn_poker")
    tree = C.tree("kuhn_poker")
    prof = R.random_profile(tree, np.random.default_rng(3))
    table = R.table_from_profile(kuhn, prof)
    conv, values, br = R.nash_conv(tree, prof)

    # nash_value() known: each player's best-response gap to it
    m = jaxcfr.evaluate(kuhn, table)
    assert kuhn.nash_value == pytest.approx((-1 / 18, 1 / 18))
    np.testing.assert_allclose(m["nash_gap"], br - np.array([-1 / 18, 1 / 18]), atol=TOL)
    assert m["metric_name"] == "exploitability"
    np.testing.assert_allclose(m["metric"], conv / 2, atol=TOL)
    np.testing.assert_allclose(m["exploitability"], conv / 2, atol=TOL)

    # ... computed from the known value, not from the profile's values
    fake = dataclasses.replace(kuhn, nash_value=(0.5, 0.5))
    m = jaxcfr.evaluate(fake, table)
    np.testing.assert_allclose(m["metric"], (br[0] - 0.5 + br[1] - 0.5) / 2, atol=TOL)

    # 2-player constant-sum (sum 2), no known value: exploitability = NashConv / 2
    shifted = _with_payoff(kuhn, lambda p: p + 1.0, nash_value=None, constant_sum=2.0)
    m = jaxcfr.evaluate(shifted, table)
    assert m["nash_gap"] is None and m["metric_name"] == "exploitability"
    np.testing.assert_allclose(m["values"], values + 1, atol=TOL)
    np.testing.assert_allclose(m["metric"], conv / 2, atol=TOL)

    # 2-player general-sum: NashConv, no exploitability
    general = _with_payoff(kuhn, lambda p: p * np.array([1.0, 2.0]), nash_value=None,
                           constant_sum=None)
    m = jaxcfr.evaluate(general, table)
    assert m["exploitability"] is None and m["metric_name"] == "nash_conv"
    np.testing.assert_allclose(m["values"], values * [1, 2], atol=TOL)

    # lowering finds the constant sum itself
    assert kuhn.constant_sum == 0.0
    assert C.lowered("kuhn_poker(players=3)").num_players == 3


def test_lowering_detects_constant_and_general_sum():
    class Shifted(type(C.make_game("matching_pennies"))):
        __slots__ = ()

        def terminal_returns(self):
            u, v = super().terminal_returns()
            return (u + 1.5, v + 1.5)

        def nash_value(self):
            return None

    assert jaxcfr.lower(Shifted()).constant_sum == pytest.approx(3.0)

    class General(Shifted):
        __slots__ = ()

        def terminal_returns(self):
            u, v = super().terminal_returns()
            return (u, 2 * v)

    assert jaxcfr.lower(General()).constant_sum is None


# -- continuation values and the best-response profile ------------------------------------------
@functools.cache
def _jitted(fn, structure):
    return jax.jit(lambda t, s: fn(t, structure, s))


def _random_case(name: str, seed: int):
    """The game ``name`` lowered, its reference tree, its tensors on the device (float32),
    a random reference profile of ``seed`` and that profile's table ``[I, A]`` (float32)."""
    lowered, tree = C.lowered(name), C.tree(name)
    prof = R.random_profile(tree, np.random.default_rng(seed))
    return (lowered, tree, to_device(lowered.tensors, jnp.float32), prof,
            jnp.asarray(R.table_from_profile(lowered, prof), jnp.float32))


@pytest.mark.parametrize("name", ["kuhn_poker", "different_depths"])
def test_history_and_infoset_values_match_reference(name):
    lowered, tree, tensors, prof, table = _random_case(name, 11)
    structure = lowered.structure

    hist = np.asarray(_jitted(analytics.history_values, structure)(tensors, table))
    ref_hist = R.history_values(tree, prof)
    assert hist.shape == (lowered.num_nodes, lowered.num_players)
    for node in range(lowered.num_nodes):
        np.testing.assert_allclose(hist[node], ref_hist[lowered.history(node)], atol=TOL)

    inf = np.asarray(_jitted(analytics.infoset_values, structure)(tensors, table))
    ref_inf = R.infoset_values(tree, prof)
    for r, key in enumerate(lowered.infoset_keys):
        np.testing.assert_allclose(inf[r], ref_inf[key], atol=TOL, err_msg=str(key))


def test_best_response_profile_attains_the_best_response_value():
    """Player 0 moves at A (depth 1) and then at C (depths 3 and 4): two sweeps needed."""
    name, player = "different_depths", 0
    lowered, tree, tensors, prof, table = _random_case(name, 5)
    structure = lowered.structure
    br_fn = jax.jit(analytics.best_response, static_argnums=(1, 3))
    br_profile, value = br_fn(tensors, structure, table, player,
                              jnp.asarray(lowered.br_rounds, jnp.int32))
    br_profile = np.asarray(br_profile)
    brute = R.best_response_value_brute_force(tree, prof, player)
    np.testing.assert_allclose(float(value), brute, atol=TOL)
    as_dict = R.profile_from_table(lowered, br_profile)
    for key, probs in as_dict.items():
        if key[0] == player:                       # pure on the responder's rows
            assert sorted(probs.tolist()) == [0.0] * (len(probs) - 1) + [1.0], key
        else:                                      # the others' rows untouched
            np.testing.assert_allclose(probs, prof[key], rtol=1e-6)
    np.testing.assert_allclose(R.expected_values(tree, as_dict)[player], brute, atol=TOL)


# -- one evaluation path ------------------------------------------------------------------------
def test_evaluate_of_a_table_equals_the_runners_figures():
    """jaxcfr.evaluate on the average table is what the runner, solve and eval report."""
    lowered = C.lowered("kuhn_poker")
    runner = C.runner("kuhn_poker", jaxcfr.cfr_plus())
    state = runner.advance(runner.init(), 30)
    table = runner.profile(state)
    ours, theirs = jaxcfr.evaluate(lowered, table), runner.evaluate(state)
    assert set(ours) == set(metric_record.METRIC_KEYS) == set(theirs)
    for key in ("values", "best_response_values", "nash_conv", "exploitability", "nash_gap",
                "metric"):
        np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)
    result = jaxcfr.solve(lowered, "cfr+", 30)
    assert result.final["exploitability"] == pytest.approx(float(ours["exploitability"]),
                                                           rel=1e-6)
    ev = result.profile.evaluate(lowered)
    # the profile is renormalised in float64 before a float32 evaluation: the two agree to
    # float32 rounding of sums of payoffs of order 1 (a few 1e-8 each, 5.6e-8 measured on
    # the sequence form), not to a relative 1e-6 of an exploitability of 5e-3
    assert ev["found"] == 12 and ev["exploitability"] == pytest.approx(
        float(ours["exploitability"]), abs=1e-7)


@pytest.mark.slow          # 6 to 9 CPU-s a case; the default set's sibling: the test above
@pytest.mark.parametrize("game", ["SMALL", "public kuhn"])
def test_the_runners_evaluation_is_its_profiles_bit_for_bit(game):
    """A Runner's evaluation makes the profile inside the evaluation's program (no table
    held beside the program): the figures of its profile made apart and evaluated, bit
    for bit, average and current (predictive), on a stack of history trees and on a
    public tree padded to hand buckets (3 hands a player as 8)."""
    if game == "SMALL":
        runner, lowered = C.runner(game, jaxcfr.pcfr_plus()), C.small_stack()
    else:
        from jaxcfr_games.public_kuhn import PublicKuhn
        lowered = bucket_hands(jaxcfr.lower_public(PublicKuhn()))
        assert lowered.structure.hands == (8, 8)
        runner = jaxcfr.Runner(lowered, jaxcfr.pcfr_plus(), compilation_cache=False)
    state = runner.advance(runner.init(), 7)
    for average in (True, False):
        ours = runner.evaluate(state, average)
        theirs = jaxcfr.evaluate(lowered, runner.profile(state, average))
        for key in ("values", "best_response_values", "nash_conv", "metric"):
            np.testing.assert_array_equal(ours[key], theirs[key], err_msg=key)


def test_evaluate_takes_stacks_and_batches():
    stack = C.small_stack()
    runner = C.runner("SMALL", jaxcfr.cfr_plus())
    state = runner.advance(runner.init(), 10)
    table = runner.profile(state)                                   # [B, I, A]
    batch = jaxcfr.evaluate(stack, table)
    assert batch["nash_conv"].shape == (len(C.SMALL),)
    for b, member in enumerate(stack.members):
        one = jaxcfr.evaluate(member, table[b, :member.num_rows, :member.max_actions])
        np.testing.assert_allclose(batch["nash_conv"][b], one["nash_conv"], atol=1e-6)
    with pytest.raises(ValueError, match="does not fit"):
        jaxcfr.evaluate(C.lowered("kuhn_poker"), np.ones((3, 2)))
