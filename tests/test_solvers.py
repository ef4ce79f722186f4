"""The CFR family on the device agrees with a slow NumPy reference, iteration by iteration,
and meets known correctness bars.

Parity: every preset, simultaneous and alternating, on one stack of four small
games (Kuhn poker, an ``.efg`` game whose information sets hold nodes at
different depths, rock-paper-scissors, matching pennies): regrets, strategy sums,
predictions and the average strategy after iterations 1, 2, 3 and 10, mapped by
information-set key. Leduc poker (CFR+) and 3-player Kuhn poker (CFR, CFR+) are
checked the same way for a few iterations, and ``precision="float64"`` (in a
subprocess: it flips ``jax_enable_x64`` for the process) to ~1e-10.

Bars: Kuhn CFR+ 1000 iterations (exploitability < 1e-3, value -1/18 within 1e-3),
Leduc CFR+ 1000 (exploitability < 2e-3), 3-player Kuhn CFR NashConv decreasing
over 10, 100, 1000 iterations, and every preset below a measured bound on Kuhn
after 2000 iterations.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr.kernels import passes

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R

CHECKPOINTS = (1, 2, 3, 10)
FINAL = 2000
PRESET_NAMES = tuple(R.PRESETS)
# float32 on the device against float64 on the host: relative to the table's scale.
RTOL = 1e-4

# lcfr and dcfr differ only in hyper-parameters (traced), so one compiled DCFR step
# serves both: a batch of two settings, [lcfr, dcfr].
_FOLDED = {"lcfr": 0, "dcfr": 1}
_FOLDED_HP = {"alpha": [1.0, 1.5], "beta": [1.0, 0.0], "gamma": [1.0, 2.0]}


def _device_solver(preset: str, alternating: bool) -> tuple[jaxcfr.Solver, dict, int | None]:
    if preset in _FOLDED:
        return jaxcfr.dcfr(alternating=alternating), _FOLDED_HP, _FOLDED[preset]
    return jaxcfr.make_solver(preset, alternating=alternating), {}, None


def _host(state) -> dict:
    """The tables the state holds (a non-predictive solver's has no prediction)."""
    return {f: np.asarray(x, dtype=np.float64) for f, x in state.tables.items()
            if f != "strategy_error"}


@functools.cache
def _small_run(solver: jaxcfr.Solver, hp_key: tuple) -> dict:
    """Device states of the SMALL stack at every checkpoint, and the average after FINAL."""
    hp = {k: list(v) for k, v in hp_key}
    runner = C.runner("SMALL", solver, hp)
    state = runner.init()
    out: dict = {}
    done = 0
    for it in CHECKPOINTS:
        state = runner.advance(state, it - done)
        done = it
        out[it] = _host(state)
        out[it]["average"] = runner.profile(state)
        out[it]["current"] = runner.profile(state, average=False)
        out[it]["iteration"] = np.asarray(state.iteration)
    state = runner.advance(state, FINAL - done)
    out["final"] = runner.profile(state)
    return out


def small_run(preset: str, alternating: bool) -> tuple[dict, int | None]:
    solver, hp, h = _device_solver(preset, alternating)
    return _small_run(solver, C._freeze(hp)), h


@functools.cache
def reference_run(game: str, preset: str, alternating: bool) -> dict:
    ref = R.ReferenceCFR(C.tree(game), preset, alternating=alternating)
    out = {}
    for it in CHECKPOINTS:
        ref.run(it - ref.iteration)
        out[it] = {"regret": dict(ref.regret), "strategy_sum": dict(ref.strategy_sum),
                   "prediction": dict(ref.prediction), "average": ref.average(),
                   "current": ref.current()}
    return out


def _close(dev: np.ndarray, ref: np.ndarray, what: str) -> None:
    # relative to the table's own scale: strategy sums are kept in units of 2^20 iterations
    # (weights (t / 2^20)^gamma), far below 1, and an absolute floor of 1 would let them pass
    scale = float(np.abs(ref).max()) or 1.0
    np.testing.assert_allclose(dev, ref, rtol=RTOL, atol=RTOL * scale, err_msg=what)


def check_member(dev: dict, ref: dict, member: jaxcfr.LoweredGame, what: str) -> None:
    """Compare one member's ``[I', A', ...]`` device tables with the reference (by key)."""
    n, a = member.num_rows, member.max_actions
    for field in ("regret", "strategy_sum", "prediction"):
        if field not in dev:        # a table the solver does not keep: the reference's is 0
            assert field == "prediction" and not any(np.any(v) for v in ref[field].values())
            continue
        table = dev[field]
        assert np.isfinite(table).all(), f"{what}: {field} is not finite"
        _close(table[:n, :a], C.state_table(member, ref[field]), f"{what}: {field}")
        # Padding (beyond the member's rows / actions) and the sink row stay exactly 0.
        assert not table[n - 1:].any(), f"{what}: {field} of the sink / padding rows is not 0"
        assert not table[:, a:].any(), f"{what}: {field} of padded action slots is not 0"
        for r, acts in enumerate(member.infoset_actions):
            assert not table[r, len(acts):].any(), f"{what}: {field} of illegal slots is not 0"
    for field in ("average", "current"):
        table = dev[field]
        assert np.isfinite(table).all(), f"{what}: {field} is not finite"
        _close(table[:n - 1, :a], R.table_from_profile(member, ref[field])[:n - 1],
               f"{what}: {field}")
        for r, acts in enumerate(member.infoset_actions):
            assert not table[r, len(acts):].any(), f"{what}: {field} puts mass on illegal slots"


def _slice(tables: dict, b: int | None, h: int | None) -> dict:
    out = {}
    for k, v in tables.items():
        if k == "iteration":
            continue
        v = v if b is None else v[b]
        out[k] = v if h is None else v[..., h]
    return out


# -- parity -----------------------------------------------------------------------------
@pytest.mark.parametrize("alternating", [False, True], ids=["simultaneous", "alternating"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_small_games_match_reference(preset, alternating):
    run, h = small_run(preset, alternating)
    for b, member in C.member_rows("SMALL"):
        name = C.SMALL[b]
        ref = reference_run(name, preset, alternating)
        for it in CHECKPOINTS:
            assert (run[it]["iteration"] == it).all()
            check_member(_slice(run[it], b, h), ref[it], member,
                         f"{preset} {'alt' if alternating else 'sim'} {name} iteration {it}")


@functools.cache
def _leduc_run() -> dict:
    runner = C.runner("leduc_poker", jaxcfr.cfr_plus())
    state = runner.init()
    out = {}
    for it in (1, 2, 3):
        state = runner.advance(state, 1)
        out[it] = _host(state)
        out[it]["average"] = runner.profile(state)
        out[it]["current"] = runner.profile(state, average=False)
    state = runner.advance(state, 1000 - 3)
    out["metrics"] = runner.evaluate(state)
    return out


def test_leduc_cfr_plus_matches_reference():
    run = _leduc_run()
    ref = R.ReferenceCFR(C.tree("leduc_poker"), "cfr+")
    member = C.lowered("leduc_poker")
    for it in (1, 2, 3):
        ref.step()
        check_member(run[it], {"regret": ref.regret, "strategy_sum": ref.strategy_sum,
                               "prediction": ref.prediction, "average": ref.average(),
                               "current": ref.current()}, member, f"leduc cfr+ iteration {it}")


@pytest.mark.parametrize("preset", ["cfr", "cfr+"])
def test_three_player_kuhn_matches_reference(preset):
    """Three players: alternating updates go 0, 1, 2, each seeing the others' new regrets."""
    runner = C.runner("kuhn_poker(players=3)", jaxcfr.make_solver(preset))
    ref = R.ReferenceCFR(C.tree("kuhn_poker(players=3)"), preset)
    member = C.lowered("kuhn_poker(players=3)")
    state = runner.init()
    for it in (1, 2, 3):
        state = runner.advance(state, 1)
        ref.step()
        dev = _host(state)
        dev["average"] = runner.profile(state)
        dev["current"] = runner.profile(state, average=False)
        check_member(dev, {"regret": ref.regret, "strategy_sum": ref.strategy_sum,
                           "prediction": ref.prediction, "average": ref.average(),
                           "current": ref.current()}, member, f"kuhn3 {preset} iteration {it}")


@pytest.mark.parametrize("preset,alternating", C.FLOAT64_PARITY)
def test_float64_matches_reference_tightly(preset, alternating):
    """precision="float64": the device agrees with the reference to ~1e-12, not 1e-4."""
    run = C.float64_parity(preset, alternating)
    ref = R.ReferenceCFR(C.tree(C.FLOAT64_GAME), preset, alternating=alternating)
    member = C.lowered(C.FLOAT64_GAME)
    for it in C.FLOAT64_CHECKPOINTS:
        ref.run(it - ref.iteration)
        dev = run[it]
        assert dev["dtype"] == "float64"
        for field in ("regret", "strategy_sum", "prediction"):
            expected = C.state_table(member, getattr(ref, field))
            if field not in dev:    # not kept (not predictive): the reference's is 0
                assert field == "prediction" and not expected.any()
                continue
            scale = float(np.abs(expected).max()) or 1.0          # as _close
            np.testing.assert_allclose(np.asarray(dev[field]), expected, rtol=1e-10,
                                       atol=1e-12 * scale, err_msg=f"{field} iteration {it}")


# -- hand-computed ---------------------------------------------------------------------
def _kuhn_row(key):
    return C.lowered("kuhn_poker").row_of(0, key)


def test_cfr_one_iteration_average_is_uniform():
    run, _ = small_run("cfr", False)
    for b, member in C.member_rows("SMALL"):
        table = run[1]["average"][b]
        for r, acts in enumerate(member.infoset_actions):
            np.testing.assert_allclose(table[r, :len(acts)], 1 / len(acts), rtol=1e-6)
            assert not table[r, len(acts):].any()


def test_kuhn_cfr_two_iterations_by_hand():
    """Simultaneous CFR on Kuhn, player 0, worked out on paper.

    Iteration 1 plays uniform. Holding the K (card 2): pass is worth 3/4 (the
    opponent checks: +1; bets: fold -1 or call +2), bet 3/2, each weighted by the
    chance reach 1/3: regrets (-1/8, +1/8), so iteration 2 bets. Holding the J:
    pass -5/4, bet -1/2: regrets (-1/8, +1/8), so iteration 2 bets (bluffs).
    Facing a bet with the J: fold -1, call -2 at counterfactual reach 1/6:
    regrets (+1/12, -1/12), so iteration 2 folds. The average after two
    iterations weighs each iteration by the own reach: (1/4, 3/4) with the K or
    the J; facing a bet with the J the own reach is 1/2 then 0: (1/2, 1/2).
    """
    run, _ = small_run("cfr", False)
    kuhn = C.SMALL.index("kuhn_poker")
    regret = run[1]["regret"][kuhn]
    current = run[1]["current"][kuhn]
    average = run[2]["average"][kuhn]
    np.testing.assert_allclose(regret[_kuhn_row("0|2|"), :2], [-1 / 8, 1 / 8], rtol=1e-6)
    np.testing.assert_allclose(regret[_kuhn_row("0|0|"), :2], [-1 / 8, 1 / 8], rtol=1e-6)
    np.testing.assert_allclose(regret[_kuhn_row("0|0|pb"), :2], [1 / 12, -1 / 12], rtol=1e-6)
    np.testing.assert_allclose(current[_kuhn_row("0|2|"), :2], [0, 1])
    np.testing.assert_allclose(current[_kuhn_row("0|0|"), :2], [0, 1])
    np.testing.assert_allclose(current[_kuhn_row("0|0|pb"), :2], [1, 0])
    np.testing.assert_allclose(average[_kuhn_row("0|2|"), :2], [1 / 4, 3 / 4], rtol=1e-6)
    np.testing.assert_allclose(average[_kuhn_row("0|0|"), :2], [1 / 4, 3 / 4], rtol=1e-6)
    np.testing.assert_allclose(average[_kuhn_row("0|0|pb"), :2], [1 / 2, 1 / 2], rtol=1e-6)


# -- regret matching -----------------------------------------------------------------
def test_regret_matching_is_safe():
    mask = jnp.array([[True, True, True], [True, True, False], [True, False, False],
                      [True, True, True], [True, True, False], [True, True, True]])
    regret = jnp.array([[0.0, 0.0, 0.0],          # nothing positive: uniform
                        [-1.0, -2.0, 5.0],        # the only positive regret is masked out
                        [-3.0, 7.0, 9.0],         # one legal action
                        [1e-30, 0.0, -1.0],       # tiny positive regret
                        [1e30, 1e30, 1e30],       # large
                        [2.0, 1.0, 1.0]])
    sigma = np.asarray(passes.regret_matching(regret, mask))
    assert np.isfinite(sigma).all()
    assert not sigma[~np.asarray(mask)].any(), "masked slots must get exactly 0"
    np.testing.assert_allclose(sigma.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(sigma[0], [1 / 3, 1 / 3, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(sigma[1], [1 / 2, 1 / 2, 0])
    np.testing.assert_allclose(sigma[2], [1, 0, 0])
    np.testing.assert_allclose(sigma[3], [1, 0, 0])
    np.testing.assert_allclose(sigma[4], [1 / 2, 1 / 2, 0], rtol=1e-6)
    np.testing.assert_allclose(sigma[5], [1 / 2, 1 / 4, 1 / 4], rtol=1e-6)
    # trailing batch axes
    batched = np.asarray(passes.regret_matching(jnp.stack([regret, -regret], axis=-1), mask))
    np.testing.assert_allclose(batched[..., 0], sigma)
    assert not batched[~np.asarray(mask)].any()


def test_solver_presets_are_the_published_ones():
    for name, cfg in R.PRESETS.items():
        s = jaxcfr.make_solver(name)
        rule = s.regret
        discount = isinstance(rule, jaxcfr.DiscountedRegret)
        floor = isinstance(rule, jaxcfr.RegretMatchingPlus) or (discount and rule.floor)
        assert isinstance(s.average, jaxcfr.PolynomialAverage), name
        defaults = {p.name: p.default for p in s.part_parameters}
        got = dict(floor=floor, discount=discount, predictive=s.predictive,
                   alternating=s.alternating, alpha=defaults.get("alpha", 1.0),
                   beta=defaults.get("beta", 1.0), gamma=defaults["gamma"])
        assert got == pytest.approx(cfg), name
        # a rule that reads no discount declares none
        assert ("alpha" in defaults) == discount, name
    # lcfr is dcfr's structure with alpha = beta = gamma = 1 (folded into one run above)
    assert jaxcfr.linear_cfr().static_key() == jaxcfr.dcfr().static_key()


# -- correctness bars ----------------------------------------------------------------------
def test_kuhn_cfr_plus_1000_iterations():
    result = jaxcfr.solve("kuhn_poker", "cfr+", 1000)
    final = result.final
    assert float(final["exploitability"]) < 1e-3
    assert abs(float(final["values"][0]) - (-1 / 18)) < 1e-3
    assert final["metric_name"] == "exploitability"
    assert float(final["metric"]) < 1e-3
    # the profile is keyed by information set and sums to one
    pol = result.profile.policy(0, "0|2|")
    assert set(pol) == {"pass", "bet"} and abs(sum(pol.values()) - 1) < 1e-6


def test_leduc_cfr_plus_1000_iterations():
    metrics = _leduc_run()["metrics"]
    assert float(metrics["exploitability"]) < 2e-3
    # Leduc's value to player 0 is about -0.0856 (OpenSpiel's CFR literature value)
    assert abs(float(metrics["values"][0]) - (-0.0856)) < 5e-3


def test_three_player_kuhn_nash_conv_decreases():
    runner = C.runner("kuhn_poker(players=3)", jaxcfr.cfr())
    state = runner.init()
    done, conv = 0, []
    for it in (10, 100, 1000):
        state = runner.advance(state, it - done)
        done = it
        m = runner.evaluate(state)
        assert m["exploitability"] is None and m["metric_name"] == "nash_conv"
        conv.append(float(m["nash_conv"]))
    assert conv[0] > conv[1] > conv[2] > 0, conv
    assert conv[2] < 0.05, conv


# Exploitability of the average profile after FINAL iterations: (Kuhn, different depths),
# about 3x what was measured (float32; 1e-5 at least). Simultaneous updates are much
# slower than alternating ones on these games; the NumPy reference shows the same.
BOUNDS = {
    ("cfr", False): (0.015, 0.045), ("cfr", True): (1.5e-3, 1e-3),
    ("cfr+", False): (6e-3, 0.027), ("cfr+", True): (1.5e-4, 1.5e-3),
    ("lcfr", False): (0.015, 0.06), ("lcfr", True): (1.5e-4, 2e-4),
    ("dcfr", False): (0.01, 0.06), ("dcfr", True): (2e-4, 1.2e-3),
    ("pcfr+", False): (2e-5, 4e-3), ("pcfr+", True): (1e-5, 3e-5),
    ("dcfr+", False): (8e-3, 0.05), ("dcfr+", True): (1.7e-4, 2.3e-3),
    ("pdcfr+", False): (1e-5, 7.5e-3), ("pdcfr+", True): (1e-5, 2e-5),
}


@pytest.mark.parametrize("alternating", [False, True], ids=["simultaneous", "alternating"])
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_every_preset_converges(preset, alternating):
    run, h = small_run(preset, alternating)
    table = run["final"] if h is None else run["final"][..., h]
    metrics = C.evaluate_table("SMALL", table)
    exploitability = metrics["nash_conv"] / 2
    kuhn, dd = C.SMALL.index("kuhn_poker"), C.SMALL.index("different_depths")
    bound_kuhn, bound_dd = BOUNDS[preset, alternating]
    assert exploitability[kuhn] < bound_kuhn, exploitability
    assert exploitability[dd] < bound_dd, exploitability
    assert (exploitability[2:] < 1e-5).all(), exploitability
    # and the value is close to the game value
    assert abs(metrics["values"][kuhn, 0] + 1 / 18) < 2 * bound_kuhn + 1e-4
    assert abs(metrics["values"][dd, 0] - R.DifferentDepths.VALUE) < 2 * bound_dd + 1e-4


# -- the loop's carry ----------------------------------------------------------------------
@pytest.mark.parametrize("settings", [{}, {"gamma": [1.0, 1.5, 2.0]}],
                         ids=["one game", "a batch of settings"])
@pytest.mark.parametrize("preset", ["dcfr", "pcfr+"])
def test_step_carries_the_current_strategy_of_its_state(preset, settings):
    """``Solver.step`` keeps its carried strategy equal to regret matching of the state it
    carries (one table, or a batch of settings whose half-steps re-match only the updated
    player's rows), and a loop of steps is a loop of ``update`` calls: bit for bit on one
    game; a batch's two programs are compiled apart and XLA may fuse a product into a sum
    (one rounding instead of two) in one and not the other, so there to float rounding."""
    import jax
    solver = jaxcfr.make_solver(preset)
    runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game("leduc_poker(ranks=3)")), solver,
                           settings)
    tensors, structure, hp = runner.step_tensors, runner.step_structure, runner.hp
    step = jax.jit(lambda c: runner.step_solver.step(tensors, structure, c, hp))
    update = jax.jit(lambda s: runner.step_solver.update(tensors, structure, s, hp))
    carry, state = runner.step_solver.start(tensors, runner.init()), runner.init()
    for _ in range(7):
        carry, state = step(carry), update(state)
    np.testing.assert_array_equal(carry.strategy, solver.strategy(tensors, carry.state))
    assert carry.state.arrays().keys() == state.arrays().keys()
    for field in carry.state.arrays():
        if settings:
            np.testing.assert_allclose(getattr(carry.state, field), getattr(state, field),
                                       rtol=1e-5, atol=1e-7)
        else:
            np.testing.assert_array_equal(getattr(carry.state, field), getattr(state, field))
