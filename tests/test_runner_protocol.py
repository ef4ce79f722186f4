"""Both runners implement the runner protocol, and the parts of an update are objects.

The run loop, ``jaxcfr.solve`` and ``jaxcfr train`` call :class:`jaxcfr.RunnerProtocol`
and nothing else (``tests/test_structure.py`` checks that no caller asks which runner it
has); here each runner is checked against it, member by member.
"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np
import pytest

import jaxcfr
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.solvers import estimators

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C


def _members() -> set[str]:
    hints = set(typing.get_type_hints(RunnerProtocol))
    methods = {n for n, v in vars(RunnerProtocol).items()
               if callable(v) and not n.startswith("_")}
    return hints | methods


@pytest.fixture(scope="module")
def runners():
    exact = jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.cfr_plus())
    sampled = jaxcfr.SampledChanceRunner(jaxcfr.load_game("kuhn_poker"), jaxcfr.cfr_plus(),
                                         {"seed": 1}, draws=2, chunk=4,
                                         exact=C.lowered("kuhn_poker"))
    yield exact, sampled
    sampled.close()


def test_both_runners_have_every_member_of_the_protocol(runners):
    members = _members()
    assert {"init", "advance", "evaluate", "profiles", "host_state", "fingerprint",
            "report", "close", "member_labels", "compile"} <= members
    for runner in runners:
        missing = sorted(m for m in members if not hasattr(runner, m))
        assert not missing, f"{type(runner).__name__} lacks {missing}"
        assert isinstance(runner, RunnerProtocol)


def test_the_protocol_runs_both_runners_the_same_way(runners):
    for runner in runners:
        state, seconds = runner.compile(runner.init())
        assert seconds >= 0
        state = runner.advance(state, 8)
        assert int(np.asarray(state.iteration).reshape(-1)[0]) == 8
        metrics = runner.evaluate(state)
        assert metrics["metric_name"] == "exploitability"     # Kuhn lowers: exact metrics
        profiles = runner.profiles(state)
        assert len(profiles) == runner.batch_members == 1
        assert runner.member_labels() == []
        assert isinstance(runner.fingerprint(), str) and runner.fingerprint()
        assert runner.chance in ("exact", "sampled")
    exact, sampled = runners
    assert exact.host_state() is None and exact.report() is None
    assert isinstance(sampled.host_state(), dict) and "draws" in sampled.report()
    with pytest.raises(ValueError, match="host state"):
        exact.restore_host({"rows": []})
    with pytest.raises(ValueError, match="host state"):
        sampled.restore_host(None)


def test_estimators_are_hashable_values_with_one_name_table():
    for name, cls in jaxcfr.ESTIMATORS.items():
        est = estimators.make_estimator(name, 4)
        assert est.name == name and isinstance(est, cls)
        assert hash(est) == hash(estimators.make_estimator(name, 4))     # static in jit
        with pytest.raises(dataclasses.FrozenInstanceError):
            est.samples = 2                                              # noqa: B018
    assert jaxcfr.Exact().dense and not jaxcfr.ExternalSampling().dense
    solver = jaxcfr.make_solver("cfr+", estimator=jaxcfr.OutcomeSampling(samples=8))
    assert solver.estimator == jaxcfr.OutcomeSampling(samples=8)
    assert solver == jaxcfr.make_solver("cfr+", sampling="outcome", samples=8)
    with pytest.raises(jaxcfr.ArgumentError, match="--samples"):
        estimators.make_estimator("external", 0, jaxcfr._util.arguments.command_line_spelling)
    with pytest.raises(jaxcfr.ArgumentError, match="samples"):
        jaxcfr.ExternalSampling(samples=0)


def test_a_new_estimator_is_one_class():
    """An estimator written outside the package (here: exact regrets, doubled) plugs into
    solve by object, with no other change."""
    @dataclasses.dataclass(frozen=True)
    class Doubled(jaxcfr.Estimator):
        name: typing.ClassVar[str] = "doubled"

        def estimate(self, t, s, current, player, keys, hp, arrays):
            est = jaxcfr.Exact().estimate(t, s, current, player)
            return est._replace(regret=2 * est.regret)

    # RM+ is scale-invariant in the regrets: doubling them changes nothing but the sums
    plain = jaxcfr.solve("kuhn_poker", "cfr+", 50)
    doubled = jaxcfr.solve("kuhn_poker", "cfr+", 50, estimator=Doubled())
    np.testing.assert_allclose(doubled.average_strategy, plain.average_strategy, atol=1e-6)
    np.testing.assert_allclose(np.asarray(doubled.state.regret),
                               2 * np.asarray(plain.state.regret), rtol=1e-5, atol=1e-7)


def test_a_new_regret_rule_is_one_definition():
    """A rule outside the package (RM+ with regrets capped) runs dense and sparse."""
    import jax.numpy as jnp

    @dataclasses.dataclass(frozen=True)
    class Capped(jaxcfr.RegretRule):
        def __call__(self, summed, t, hp):
            return jnp.clip(summed, 0, 0.5)

    solver = dataclasses.replace(jaxcfr.cfr_plus(), name="capped", regret=Capped())
    for estimator in (jaxcfr.Exact(), jaxcfr.ExternalSampling()):
        result = jaxcfr.solve("kuhn_poker", solver, 30, estimator=estimator)
        regret = np.asarray(result.state.regret)
        assert regret.min() >= 0 and regret.max() <= 0.5 + 1e-7, estimator
