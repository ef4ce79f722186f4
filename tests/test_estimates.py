"""Host value estimates (jaxcfr.profiles.value_estimates) against exact values; transposition
caching.

The oracles: jaxcfr.evaluate's exact values and best-response gains on games small
enough to lower (Kuhn poker; ``dice_poker``, which is ``sampled_dice_poker`` with its
dice rolled one at a time, so a profile has the same exact values in both). Coverage
counts are over fixed seeds (deterministic), with binomial tolerances stated beside them.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import jaxcfr
from jaxcfr.cli import app
from jaxcfr.profiles.value_estimates import interval, t_quantile
from jaxcfr.solvers.metric_record import ESTIMATE_KEYS
from jaxcfr.profiles.host_values import PolicyError, PolicySet, WalkStats, walk_values
from jaxcfr_games.dice_poker import DicePoker
from jaxcfr_games.sampled_poker import SampledDicePoker

TOL = 1e-9


def random_profile(lowered, seed):
    """A fixed mixed profile with full support (Dirichlet rows), as a table and a Profile."""
    mask = np.asarray(lowered.tensors.legal_mask)
    rng = np.random.default_rng(seed)
    table = np.where(mask, rng.dirichlet(np.ones(mask.shape[1]), size=mask.shape[0]), 0.0)
    table /= table.sum(axis=1, keepdims=True)
    return table, jaxcfr.Profile.from_lowered(lowered, table)


def exact(lowered, table):
    """Exact values ``[P]`` and best-response gains ``[P]``."""
    ev = jaxcfr.evaluate(lowered, table, dtype="float64")
    return ev["values"], ev["best_response_values"] - ev["values"]


def response_table(lowered, table, responses):
    """``table`` with each player's rows replaced by that player's response (one table each)."""
    out = []
    for p, response in enumerate(responses):
        t = table.copy()
        for r, (player, key) in enumerate(lowered.infoset_keys):
            if player == p and key in response:
                t[r] = 0.0
                t[r, lowered.infoset_actions[r].index(response[key])] = 1.0
        out.append(t)
    return out


def covers(e, x):
    return e.low - TOL <= x <= e.high + TOL


def _case(text: str, seed: int):
    """The game ``text`` lowered, a random profile of ``seed`` (table ``[I, A]`` and
    profile) and its exact values and gains."""
    lowered = jaxcfr.lower(jaxcfr.load_game(text))
    table, profile = random_profile(lowered, seed)
    values, gains = exact(lowered, table)
    return lowered, table, profile, values, gains


@pytest.fixture(scope="module")
def kuhn():
    return _case("kuhn_poker", 7)


# --------------------------------------------------------------------------------------------
# Coverage: the intervals cover the exact values; the gain bounds lie below the exact gains
# --------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_intervals_cover_exact_values_and_gains_over_200_seeds(kuhn):
    lowered, table, profile, values, gains = kuhn
    game = jaxcfr.load_game("kuhn_poker")
    # a small training set, so that the responses are not always the exact best responses
    empirical = jaxcfr.empirical_game(game, train_samples=4, seed=11)
    first = jaxcfr.estimate_profile(game, profile, samples=100, seed=0, empirical=empirical)
    # the gains the held-out draws estimate: those of the fixed responses, never above the
    # exact best-response gains
    response_gains = np.array([exact(lowered, t)[0][p] - values[p] for p, t in
                               enumerate(response_table(lowered, table, first.responses))])
    assert np.all(response_gains <= gains + TOL)
    assert response_gains[1] < gains[1] - 0.01       # a strict lower bound here
    value_cover, gain_cover, below = 0, np.zeros(2, int), np.zeros(2, int)
    seeds = range(200)
    for seed in seeds:
        est = jaxcfr.estimate_profile(game, profile, samples=100, seed=seed, empirical=empirical)
        assert est.responses == first.responses and est.method == "exact"
        value_cover += covers(est.values[0], values[0])
        for p in range(2):
            gain_cover[p] += covers(est.gains[p], response_gains[p])
            below[p] += est.gains[p].low <= gains[p] + TOL
    # Binomial(200, 0.95): mean 190, sd 3.1; [181, 198] holds with probability 99.6 %.
    assert 181 <= value_cover <= 198, value_cover
    assert np.all((181 <= gain_cover) & (gain_cover <= 198)), gain_cover
    # the interval's low end is a lower bound at nominal level (1 + 0.95) / 2 = 97.5 %
    assert np.all(below >= 190), below


def test_trajectory_estimates_cover_exact_values(kuhn):
    _, _, profile, values, _ = kuhn
    game = jaxcfr.load_game("kuhn_poker")
    count = sum(covers(jaxcfr.estimate_values(game, profile, samples=100, seed=seed,
                                              method="trajectories")[0], values[0])
                for seed in range(100))
    # Binomial(100, 0.95): [88, 99] holds with probability 99 %
    assert 88 <= count <= 99, count


def test_more_training_draws_find_the_exact_best_response(kuhn):
    lowered, table, profile, values, gains = kuhn
    est = jaxcfr.estimate_profile("kuhn_poker", profile, samples=200, train_samples=300, seed=5)
    response_gains = [exact(lowered, t)[0][p] - values[p] for p, t in
                      enumerate(response_table(lowered, table, est.responses))]
    np.testing.assert_allclose(response_gains, gains, atol=TOL)
    # in sample the responses look better than they are (on average): here above the truth
    assert all(g_in >= g - 0.05 for g_in, g in zip(est.gains_in_sample, gains))
    ex = est.exploitability
    assert ex is not None and covers(ex, gains.sum() / 2)


# --------------------------------------------------------------------------------------------
# sampled_dice_poker: chance that cannot be enumerated, checked against dice_poker's exact values
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dice():
    return _case("dice_poker(dice=2, sides=6)", 3)


def test_dice_poker_is_sampled_dice_poker_rolled_die_by_die(dice):
    """Same keys, same exact values: by brute force over sampled_dice_poker's sorted rolls."""
    lowered, _, profile, values, _ = dice
    sampled = SampledDicePoker(dice=2, sides=6)
    rolls = sorted({tuple(sorted((a, b))) for a in range(1, 7) for b in range(1, 7)})
    policies = PolicySet(profile.distribution)
    total = np.zeros(2)
    for r0 in rolls:
        for r1 in rolls:
            state = sampled.clone()
            state.step(r0)
            state.step(r1)                     # no chance left below: the walk is exact
            v = walk_values(state, policies, random.Random(0))[0]
            total += sampled.roll_probability(r0) * sampled.roll_probability(r1) * v
    np.testing.assert_allclose(total, values, atol=TOL)
    keys = {k for _, k in lowered.infoset_keys}
    assert "0|12|" in keys and "1|66|kb" not in keys and "1|66|k" in keys


def test_sampled_dice_poker_estimates_are_finite_and_cover(dice):
    _, _, profile, values, gains = dice
    game = jaxcfr.load_game("sampled_dice_poker(dice=2, sides=6)")
    empirical = jaxcfr.empirical_game(game, train_samples=300, seed=1)
    value_cover, below = 0, np.zeros(2, int)
    for seed in range(20):
        est = jaxcfr.estimate_profile(game, profile, samples=300, seed=seed, empirical=empirical)
        record = est.record()
        json.dumps(record, allow_nan=False)
        assert set(record) == set(ESTIMATE_KEYS) and record["estimate"] is True
        assert record["train_samples"] == 300 and record["samples"] == 300
        flat = np.array([record["values"], record["gain_lower_bound"]] +
                        record["values_interval"] + record["gain_interval"], dtype=float)
        assert np.all(np.isfinite(flat))
        for e in est.values + est.gains:
            assert e.estimate and e.low <= e.value <= e.high and 0 < e.high - e.low < 0.5
        assert est.values[0].value == pytest.approx(-est.values[1].value)   # zero-sum
        value_cover += covers(est.values[0], values[0])
        below += [est.gains[p].low <= gains[p] + TOL for p in range(2)]
    # Binomial(20, 0.95) >= 16 with probability 99.7 %; Binomial(20, 0.975) >= 17: 99.8 %
    assert value_cover >= 16 and np.all(below >= 17), (value_cover, below)


def test_estimates_are_deterministic_and_json():
    a = jaxcfr.estimate_record("sampled_dice_poker(dice=2, sides=3)", samples=50,
                               train_samples=50, seed=4)
    b = jaxcfr.estimate_record("sampled_dice_poker(dice=2, sides=3)", samples=50,
                               train_samples=50, seed=4)
    c = jaxcfr.estimate_record("sampled_dice_poker(dice=2, sides=3)", samples=50,
                               train_samples=50, seed=5)
    assert json.dumps(a) == json.dumps(b) != json.dumps(c)
    values = jaxcfr.estimate_values("sampled_dice_poker(dice=2, sides=3)", samples=50, seed=4)
    assert [e.value for e in values] == a["values"]          # the same held-out draws


def test_auto_method_falls_back_to_trajectories():
    game = jaxcfr.load_game("leduc_poker")
    assert jaxcfr.estimate_profile(game, samples=2, train_samples=2).method == "exact"
    est = jaxcfr.estimate_profile(game, samples=20, train_samples=2, max_nodes=10)
    assert est.method == "trajectories" and est.record()["method"] == "trajectories"


# --------------------------------------------------------------------------------------------
# Transpositions: memoised only where the game opts in
# --------------------------------------------------------------------------------------------

class CollidingOptOut(DicePoker):
    """A state_hash that collides everywhere, and (rightly) no opt-in."""
    __slots__ = ()

    def state_hash(self):
        return 0

    def caches_transpositions(self):
        return False


class CollidingOptIn(CollidingOptOut):
    """The same colliding hash with a (wrong) opt-in: memoisation corrupts its values."""
    __slots__ = ()

    def caches_transpositions(self):
        return True


def test_transpositions_memoised_only_on_opt_in():
    game = DicePoker(dice=2, sides=4)
    lowered = jaxcfr.lower(game)
    table, profile = random_profile(lowered, 5)
    values, _ = exact(lowered, table)
    policies = PolicySet(profile.distribution)

    def walk(g, **kw):
        stats = WalkStats()
        v = walk_values(g, policies, random.Random(0), enumerate_chance=True, stats=stats, **kw)
        return v[0], stats

    cached, s1 = walk(game)
    plain, s2 = walk(game, transpositions=False)
    np.testing.assert_allclose(cached, values, atol=TOL)
    np.testing.assert_allclose(plain, values, atol=TOL)
    assert s1.hits > 0 and s1.nodes < s2.nodes == lowered.num_nodes and s2.hits == 0
    opt_out, s3 = walk(CollidingOptOut(dice=2, sides=4))
    np.testing.assert_allclose(opt_out, values, atol=TOL)
    assert s3.hits == 0 and s3.nodes == lowered.num_nodes
    wrong, s4 = walk(CollidingOptIn(dice=2, sides=4))
    assert s4.hits > 0 and not np.allclose(wrong, values, atol=1e-3)
    # through the public API: exact (zero-width) values when every chance node is enumerated
    est = jaxcfr.estimate_values(game, profile, samples=2, enumerate_chance=True)
    assert [e.value for e in est] == pytest.approx(values, abs=TOL)
    assert all(e.high - e.low < TOL for e in est)


def test_dice_poker_state_hash_is_an_exact_transposition_key():
    game = DicePoker(dice=2, sides=3)
    seen = {}
    stack = [game.clone()]
    while stack:
        state = stack.pop()
        key = (state._rolls, state._bets)
        assert seen.setdefault(state.state_hash(), key) == key        # injective
        if state.is_terminal():
            continue
        actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance()
                   else state.legal_actions())
        for a in actions:
            child = state.clone()
            child.step(a)
            stack.append(child)
    assert len(seen) < game.tree_size()                              # there are transpositions
    a, b = game.clone(), game.clone()
    for x in (1, 3):
        a.step(x)
    for x in (3, 1):
        b.step(x)
    assert a.state_hash() == b.state_hash() and a.infoset_key(0) == b.infoset_key(0) == "0|13|"


def test_dice_poker_sizes_and_limits():
    assert jaxcfr.lower(jaxcfr.load_game("dice_poker")).num_nodes == \
        jaxcfr.load_game("dice_poker").tree_size() == 11_923
    with pytest.raises(jaxcfr.GameError,
                       match="dice must be an integer in 1..4 for 6 sides.*nodes"):
        jaxcfr.load_game("dice_poker(dice=5)")
    with pytest.raises(jaxcfr.GameError, match="sides must be an integer in 2..9"):
        jaxcfr.load_game("dice_poker(sides=10)")


# --------------------------------------------------------------------------------------------
# Pieces and errors
# --------------------------------------------------------------------------------------------

def test_best_responses_agree_with_evaluate(kuhn):
    lowered, table, _, _, _ = kuhn
    br = jaxcfr.solvers.analytics.best_responses(lowered, table)
    ev = jaxcfr.evaluate(lowered, table, dtype="float64")
    np.testing.assert_allclose(br.best_response_values, ev["best_response_values"], atol=TOL)
    np.testing.assert_allclose(br.values, ev["values"], atol=TOL)
    for p in range(2):
        values = jaxcfr.evaluate(lowered, br.tables[p], dtype="float64")["values"]
        assert values[p] == pytest.approx(ev["best_response_values"][p], abs=TOL)
        rows = np.asarray(lowered.tensors.infoset_player) == p
        assert set(np.unique(br.tables[p][rows])) <= {0.0, 1.0}


def test_t_quantiles_and_intervals():
    for p, df, t in [(0.975, 1, 12.7062), (0.975, 2, 4.3027), (0.975, 3, 3.1824),
                     (0.975, 10, 2.2281), (0.975, 30, 2.0423), (0.995, 5, 4.0321),
                     (0.975, 10 ** 6, 1.9600)]:
        assert t_quantile(p, df) == pytest.approx(t, abs=1e-4)
    e = interval([1.0, 2.0, 3.0], 0.95)
    assert (e.value, e.samples, e.stderr) == (2.0, 3, pytest.approx(1 / np.sqrt(3)))
    assert e.high - e.value == pytest.approx(4.3027 / np.sqrt(3), abs=1e-4)
    assert json.loads(json.dumps(e.to_json()))["estimate"] is True


class BadRoll(SampledDicePoker):
    __slots__ = ()

    def sample_chance(self, rng):
        roll, _ = super().sample_chance(rng)
        return roll, 2.0


def test_bad_input_gets_specific_errors(kuhn):
    game = jaxcfr.load_game("kuhn_poker")
    for kwargs, match in [({"samples": 1}, "samples must be at least 2"),
                          ({"confidence": 1.0}, r"confidence must be in \(0, 1\)"),
                          ({"method": "guess"}, "method must be one of auto, exact"),
                          ({"seed": -1}, "seed must be an integer from 0")]:
        with pytest.raises(jaxcfr.ArgumentError, match=match):
            jaxcfr.estimate_values(game, **kwargs)
    with pytest.raises(TypeError, match="not a LoweredGame"):
        jaxcfr.estimate_values(kuhn[0])
    with pytest.raises(PolicyError, match=r"information set '0\|\d\|'"):
        jaxcfr.estimate_values(game, lambda player, key, legal: [-1.0, 2.0])
    with pytest.raises(PolicyError, match="gives 3 probabilities"):
        jaxcfr.estimate_values(game, lambda player, key, legal: [0.2, 0.3, 0.5])
    with pytest.raises(jaxcfr.GameError, match=r"\[chance-probability\].*history: <root>"):
        jaxcfr.estimate_values(BadRoll(dice=2, sides=3))
    # a policy as a mapping; a callable policy through the best-response path
    always_bet = lambda player, key, legal: {"bet": 1.0}              # noqa: E731
    est = jaxcfr.estimate_profile(game, always_bet, samples=20, train_samples=20)
    assert est.values[0].low <= 0.0 <= est.values[0].high      # exact value: 0 (bet, call)


def test_estimate_command(tmp_path, capsys):
    lowered = jaxcfr.lower(jaxcfr.load_game("dice_poker(dice=2, sides=3)"))
    _, profile = random_profile(lowered, 1)
    path = profile.save(tmp_path / "p")
    game = "sampled_dice_poker(dice=2, sides=3)"
    assert app.main(["estimate", game, str(path), "--samples", "40", "--train-samples", "40",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["estimate"] is True and out["profile"] == str(path)
    assert set(ESTIMATE_KEYS) <= set(out) and out["samples"] == 40
    assert out == {**jaxcfr.estimate_record(game, profile, samples=40, train_samples=40),
                   "game": game, "profile": str(path)}
    assert app.main(["estimate", game, "--samples", "40", "--values-only"]) == 0
    text = capsys.readouterr().out
    assert "value p0" in text and "95% interval" in text and "not exact values" in text
    assert app.main(["estimate", game, "--samples", "1"]) == 2
    assert "--samples must be at least 2" in capsys.readouterr().err
