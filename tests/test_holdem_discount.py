"""postflop-solver's Discounted CFR (the ``postflop-dcfr`` preset) against its source.

Oracles: the per-iteration coefficients computed by hand and by a literal port of
postflop-solver's ``DiscountParams::new`` (``src/solver.rs`` at 9d1509f, with its bit trick
for the power of 4), and a NumPy reference written from its ``solve_recursive`` (regrets
discounted by the old regret's sign before the new regret is added, strategy sums decayed by
``gamma_t`` and added unweighted by reach, alternating updates, player 0 first) that shares
no code with :mod:`jaxcfr.solvers`: the device's regret and strategy-sum tables and average
strategy agree with it after each of the first 20 iterations (which span the restarts at its
iterations 1, 4 and 16) on Kuhn and Leduc poker, and for a batch of traced settings.
"""

from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr.solvers.parameters import make_hyperparams

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R


def discount_params(current_iteration: int) -> tuple[float, float, float]:
    """postflop-solver's ``DiscountParams::new`` (0-based iteration), line by line."""
    x = current_iteration
    # 1 << ((x.leading_zeros() ^ 31) & !1) for a u32: the largest power of 4 <= x
    nearest_lower_power_of_4 = 0 if x == 0 else 1 << (((32 - x.bit_length()) ^ 31) & ~1)
    t_alpha = float(max(x - 1, 0))
    t_gamma = float(x - nearest_lower_power_of_4)
    pow_alpha = t_alpha * math.sqrt(t_alpha)
    pow_gamma = (t_gamma / (t_gamma + 1.0)) ** 3
    return pow_alpha / (pow_alpha + 1.0), 0.5, pow_gamma


def _hp(**values):
    solver = jaxcfr.postflop_dcfr()
    return make_hyperparams(solver.parameters, values, np.float64, np.asarray)


def test_the_port_of_discount_params_by_hand():
    # powers of 4 below x: 0 -> 0, 1..3 -> 1, 4..15 -> 4, 16..63 -> 16
    assert [discount_params(k)[2] for k in (0, 1, 4, 16, 64, 256)] == [0.0] * 6
    assert discount_params(2)[2] == 1 / 8 and discount_params(3)[2] == pytest.approx(8 / 27)
    assert discount_params(15)[2] == pytest.approx((11 / 12) ** 3)
    assert discount_params(17)[2] == 1 / 8
    assert [discount_params(k)[0] for k in (0, 1, 2)] == [0.0, 0.0, 0.5]
    assert discount_params(3)[0] == pytest.approx(2 ** 1.5 / (2 ** 1.5 + 1))


def test_regret_coefficients_by_hand():
    rule = jaxcfr.PostflopDiscountedRegret()
    hp = _hp()
    regret = jnp.asarray([2.0, -2.0, 0.0])
    # jaxcfr's t is 1-based: its iteration t uses postflop's coefficients of iteration t - 1
    expected = {1: (0.0, 0.5), 2: (0.0, 0.5), 3: (0.5, 0.5),
                4: (2 ** 1.5 / (2 ** 1.5 + 1), 0.5), 5: (3 ** 1.5 / (3 ** 1.5 + 1), 0.5),
                101: (99 ** 1.5 / (99 ** 1.5 + 1), 0.5)}
    for t, (pos, neg) in expected.items():
        got = np.asarray(rule(regret, jnp.asarray(float(t)), hp))
        np.testing.assert_allclose(got, [2 * pos, -2 * neg, 0.0], rtol=1e-6, err_msg=str(t))
    for t in range(1, 300):
        alpha, beta, _ = discount_params(t - 1)
        got = np.asarray(rule(regret, jnp.asarray(float(t)), hp))
        np.testing.assert_allclose(got, [2 * alpha, -2 * beta, 0.0], rtol=1e-6, err_msg=str(t))
    assert rule.before_adding and rule.every_row


def test_average_decay_by_hand():
    rule = jaxcfr.RestartedAverage()
    hp = _hp()
    # t (1-based) -> decay of the sum: restarts (0) at postflop's iterations 0, 1, 4, 16, 64
    by_hand = {1: 0.0, 2: 0.0, 3: 1 / 8, 4: 8 / 27, 5: 0.0, 6: 1 / 8, 16: (11 / 12) ** 3,
               17: 0.0, 18: 1 / 8, 64: (47 / 48) ** 3, 65: 0.0, 66: 1 / 8, 257: 0.0}
    for t, d in by_hand.items():
        got = float(rule.decay(jnp.asarray(float(t)), hp))
        assert got == pytest.approx(d, rel=1e-6, abs=1e-12), t
        assert float(rule.weight(jnp.asarray(float(t)), hp)) == 1.0
    for t in range(1, 1100):
        got = float(rule.decay(jnp.asarray(float(t), jnp.float32), hp))
        assert got == pytest.approx(discount_params(t - 1)[2], rel=1e-6, abs=1e-12), t
    # another base restarts at its powers; gamma is the part's traced parameter
    base3 = jaxcfr.RestartedAverage(base=3)
    assert [float(base3.decay(jnp.asarray(float(k + 1)), _hp(gamma=2.0)))
            for k in (3, 4, 8, 9, 10)] == pytest.approx([0.0, 1 / 4, (5 / 6) ** 2, 0.0, 1 / 4])
    with pytest.raises(jaxcfr.ArgumentError, match="base must be an integer of at least 2"):
        jaxcfr.RestartedAverage(base=1)


class PostflopReference:
    """postflop-solver's ``solve_step`` on a reference :class:`~reference_cfr.Tree`."""

    def __init__(self, tree: R.Tree, alpha=1.5, gamma=3.0):
        self.tree, self.alpha, self.gamma = tree, alpha, gamma
        self.regret = {k: np.zeros(len(a)) for k, a in tree.infosets.items()}
        self.strategy_sum = {k: np.zeros(len(a)) for k, a in tree.infosets.items()}
        self.iteration = 0            # postflop's 0-based current_iteration

    def coefficients(self):
        k = self.iteration
        power = 0 if k == 0 else 4 ** ((k.bit_length() - 1) // 2)
        t_alpha = max(k - 1, 0)
        alpha = t_alpha ** self.alpha / (t_alpha ** self.alpha + 1)
        u = k - power
        return alpha, 0.5, (u / (u + 1)) ** self.gamma

    def step(self):
        alpha, beta, gamma = self.coefficients()
        for player in (0, 1):
            sigma = {k: R.regret_matching(r) for k, r in self.regret.items()}
            q, _, _ = R.counterfactual_values(self.tree, sigma)
            for key in self.tree.player_infosets(player):
                self.strategy_sum[key] = self.strategy_sum[key] * gamma + sigma[key]
                inst = q[key] - sigma[key] @ q[key]
                # a tie's rounding noise (1e-18) is a tie: jaxcfr (float32) makes it 0, and
                # its sign would make regret matching pure or uniform
                inst[np.abs(inst) <= 1e-9 * np.abs(q[key]).max()] = 0.0
                old = self.regret[key]
                self.regret[key] = old * np.where(old >= 0, alpha, beta) + inst
        self.iteration += 1

    def average(self):
        return {k: R.normalise(s) for k, s in self.strategy_sum.items()}


def _close(dev, ref, what, tol=2e-4):
    scale = float(np.abs(ref).max()) or 1.0
    np.testing.assert_allclose(dev, ref, rtol=tol, atol=tol * scale, err_msg=what)


@functools.cache
def _trajectory(game: str, settings: tuple, precision: str = "float32") -> list:
    hp = {k: list(v) for k, v in settings}
    if precision == "float32":
        runner = C.runner(game, jaxcfr.postflop_dcfr(), hp or None)
    else:
        runner = jaxcfr.Runner(C.lowered(game), jaxcfr.postflop_dcfr(), hp or None,
                               precision=precision)
    state = runner.init()
    out = []
    for _ in range(20):
        state = runner.advance(state, 1)
        out.append({"regret": np.asarray(state.regret, np.float64),
                    "strategy_sum": np.asarray(state.strategy_sum, np.float64),
                    "average": np.asarray(runner.profile(state), np.float64)})
    return out


# float32 drifts from the float64 reference where a regret near 0 changes sign (Leduc,
# iteration 20: 8 of 2811 strategy-sum entries by 4%), so Leduc is checked in float64
@pytest.mark.parametrize("game,precision,tol", [("kuhn_poker", "float32", 2e-4),
                                                ("leduc_poker", "float64", 1e-9)])
def test_trajectory_matches_the_postflop_reference(game, precision, tol):
    member = C.lowered(game)
    ref = PostflopReference(C.tree(game))
    n = member.num_rows
    for it, dev in enumerate(_trajectory(game, (), precision), start=1):
        ref.step()
        what = f"{game} iteration {it}"
        _close(dev["regret"], C.state_table(member, ref.regret), f"{what}: regret", tol)
        _close(dev["strategy_sum"], C.state_table(member, ref.strategy_sum),
               f"{what}: strategy sum", tol)
        _close(dev["average"][:n - 1], R.table_from_profile(member, ref.average())[:n - 1],
               f"{what}: average", tol)


def test_a_batch_of_settings_matches_the_reference_for_each():
    member = C.lowered("kuhn_poker")
    settings = (("alpha", (1.5, 1.0)), ("gamma", (3.0, 2.0)))
    refs = [PostflopReference(C.tree("kuhn_poker"), alpha=a, gamma=g)
            for a, g in zip(*(v for _, v in settings))]
    for it, dev in enumerate(_trajectory("kuhn_poker", settings), start=1):
        for h, ref in enumerate(refs):
            ref.step()
            _close(dev["regret"][..., h], C.state_table(member, ref.regret),
                   f"member {h} iteration {it}: regret")
            _close(dev["strategy_sum"][..., h], C.state_table(member, ref.strategy_sum),
                   f"member {h} iteration {it}: strategy sum")


def test_the_preset_converges_on_kuhn():
    result = jaxcfr.solve("kuhn_poker", "postflop-dcfr", 2000)
    assert float(result.final["exploitability"]) < 1e-3
    assert abs(result.final["values"][0] + 1 / 18) < 2e-3


def test_the_preset_is_named_and_needs_the_exact_estimator():
    solver = jaxcfr.make_solver("Postflop_DCFR")
    assert solver.name == "postflop-dcfr" and solver.alternating
    assert {p.name: p.default for p in solver.part_parameters} == {
        "alpha": 1.5, "beta": 0.0, "gamma": 3.0}
    assert jaxcfr.ALGORITHMS["postflop-dcfr"] is jaxcfr.postflop_dcfr
    with pytest.raises(jaxcfr.ArgumentError, match="postflop-dcfr has a regret rule applied "
                       "before the new regret is added and an average that decays and an "
                       "average not weighted by reach: it needs a full-width estimator"):
        jaxcfr.make_solver("postflop-dcfr", sampling="external", samples=2)
