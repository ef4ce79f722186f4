"""Each part declares its own traced parameters (``jaxcfr.solvers.parameters``).

A regret rule defined here, outside the package, with a parameter of its own: one class,
and its parameter reaches ``jaxcfr.solve`` by name and sweeps as a batch in one compiled
step, each member equal to its separate run. The library's own such rule (HS-PCFR+'s
schedule) against the paper's recursion in the NumPy reference. The parameter set is read
by name everywhere: a solver prints only its parts' parameters, configs take them as
``[solver]`` keys, the command line's options are generated from the declarations, and a
checkpoint records the set and refuses a run whose set differs.
"""

from __future__ import annotations

import dataclasses
import json

import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.tracing import TRACES
from jaxcfr.cli import app
from jaxcfr.runs import CheckpointError, checkpoint, config_from_dict, train
from jaxcfr.solvers import presets
from jaxcfr.solvers.parameters import HyperParams
from jaxcfr.solvers.rules import ScheduledAverage

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R


# -- a rule with a parameter of its own, defined here ---------------------------------------
@dataclasses.dataclass(frozen=True)
class FlooredRegret(jaxcfr.RegretRule):
    """Accumulated regret floored at ``-floor``: RM+ at 0, plain RM as ``floor`` grows."""
    floor: float = jaxcfr.parameter(1.0, "accumulated regret is floored at -floor")

    def __call__(self, summed, t, hp):
        return jnp.maximum(summed, -hp.floor)


FLOORED = jaxcfr.Solver("floored", FlooredRegret(), jaxcfr.PolynomialAverage(gamma=1.0),
                        alternating=True)
FLOORS = [0.0, 0.5, 2.0]
ITERATIONS = 60


def _tables(state, member=None) -> dict[str, np.ndarray]:
    out = {f: np.asarray(getattr(state, f)) for f in ("regret", "strategy_sum",
                                                      "strategy_error")}
    return out if member is None else {f: x[..., member] for f, x in out.items()}


def test_a_rule_of_its_own_is_one_class_and_its_parameter_is_the_solvers():
    assert [p.name for p in FLOORED.parameters] == ["floor", "gamma", "seed"]
    assert repr(FLOORED) == "Solver(floored: RM, alternating, floor=1, gamma=1)"
    # the compiled step's key carries no value: another default is the same program
    other = FLOORED.with_defaults(floor=3.0)
    assert other.regret.floor == 3.0 and other.static_key() == FLOORED.static_key()
    with pytest.raises(jaxcfr.ArgumentError, match="floor must be a finite number"):
        jaxcfr.solve("kuhn_poker", FLOORED, 5, floor="deep")
    with pytest.raises(jaxcfr.ArgumentError, match="floored takes no parameter alpha; it "
                                                   "takes floor, gamma, seed"):
        jaxcfr.solve("kuhn_poker", FLOORED, 5, alpha=2.0)


def test_a_rule_of_its_own_sweeps_its_parameter_in_one_compiled_step():
    """A list of values is a batch: one compiled chunk for all three, each member equal to
    its separate run (bit for bit, as the exact estimator's members are), and floor 0 is
    RM+ (CFR+'s tables)."""
    lowered = C.lowered("kuhn_poker")
    before = TRACES.snapshot()
    batch = jaxcfr.solve(lowered, FLOORED, ITERATIONS, floor=FLOORS)
    assert TRACES.since(before).get("chunk") == 1
    assert batch.final["members"] == ["floor=0", "floor=0.5", "floor=2"]
    separate = []
    for h, floor in enumerate(FLOORS):
        before = TRACES.snapshot()
        single = jaxcfr.solve(lowered, FLOORED, ITERATIONS, floor=floor)
        if h:                                        # a new value compiles nothing
            assert "chunk" not in TRACES.since(before)
        for f, table in _tables(single.state).items():
            np.testing.assert_array_equal(_tables(batch.state, h)[f], table, err_msg=f)
        separate.append(single)
    assert np.asarray(batch.state.regret).min() < -0.5       # floor 2 lets regrets go below
    plus = jaxcfr.solve(lowered, "cfr+", ITERATIONS)
    np.testing.assert_array_equal(_tables(separate[0].state)["regret"],
                                  _tables(plus.state)["regret"])
    assert not np.array_equal(_tables(separate[1].state)["regret"],
                              _tables(separate[2].state)["regret"])


@pytest.mark.slow
def test_a_rule_of_its_own_runs_sampled_too():
    """The parameter reaches the sparse path (rows a sample touched) by name as well."""
    result = jaxcfr.solve(C.lowered("kuhn_poker"), FLOORED, 30,
                          estimator=jaxcfr.ExternalSampling(), floor=[0.0, 0.25], seed=[3, 3])
    regret = np.asarray(result.state.regret)
    assert regret[..., 0].min() >= 0 and regret[..., 1].min() >= -0.25 - 1e-6
    assert regret[..., 1].min() < 0


def test_two_parts_may_not_declare_one_name():
    @dataclasses.dataclass(frozen=True)
    class Greedy(jaxcfr.RegretRule):
        gamma: float = jaxcfr.parameter(1.0, "a second meaning of gamma")

    with pytest.raises(jaxcfr.ArgumentError, match="both declare a parameter 'gamma'"):
        jaxcfr.Solver("x", Greedy(), jaxcfr.PolynomialAverage())


# -- HS-PCFR+: the library's rule with parameters of its own --------------------------------
def test_schedule_weights_are_the_papers_product_of_discounts():
    """``W(k) / W(T) = prod_{j=k+1..T} ((j - 1) / j)^gamma_j`` (float64, every k)."""
    rule = ScheduledAverage()
    gamma, drop, horizon = 30.0, 5.0, 200.0
    hp = HyperParams(
        {"gamma": np.float64(gamma), "gamma_drop": np.float64(drop),
         "horizon": np.float64(horizon)})
    from jaxcfr._util import precision
    with precision.scope(np.float64):
        t = jnp.arange(1, 251, dtype=jnp.float64)
        w = np.asarray(rule.weight(t, hp))
    j = np.arange(2, 251, dtype=np.float64)
    log_decay = (gamma - drop * j / horizon) * np.log((j - 1) / j)     # log ((j-1)/j)^g_j
    expected = np.exp(np.concatenate([np.cumsum(log_decay[::-1])[::-1], [0.0]]))
    np.testing.assert_allclose(w / w[-1], expected, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("game", ["kuhn_poker", "matching_pennies"])
def test_hs_pcfr_plus_matches_the_papers_recursion(game):
    """jaxcfr's HS-PCFR+ (float64) against the NumPy reference, which decays the sum each
    iteration as the paper writes it: the average strategy after 40 iterations."""
    iterations = 40
    result = jaxcfr.solve(C.lowered(game), "hs-pcfr+", iterations, precision="float64",
                          horizon=iterations)
    ref = R.ReferenceCFR(C.tree(game), "pcfr+", gamma=30.0,
                         schedule=(5.0, iterations)).run(iterations)
    lowered = C.lowered(game)
    n = len(lowered.infoset_keys)
    np.testing.assert_allclose(result.average_strategy[:n],
                               R.table_from_profile(lowered, ref.average())[:n],
                               rtol=1e-9, atol=1e-12)


def test_hs_pcfr_plus_solves_leduc():
    """1,000 iterations of HS-PCFR+(30) with its horizon the run's (measured on this CPU:
    0.00096, PCFR+ 0.00072, DCFR 0.00015), float32."""
    result = jaxcfr.solve(C.lowered("leduc_poker"), "hs-pcfr+", 1000)
    assert result.final["exploitability"] < 2e-3, result.final


# -- the parameter set, read by name everywhere ---------------------------------------------
def test_a_solver_prints_only_the_parameters_its_parts_read():
    assert repr(jaxcfr.cfr_plus()) == "Solver(cfr+: RM+, alternating, gamma=1)"
    assert "alpha" not in repr(jaxcfr.cfr()) and "exploration" not in repr(jaxcfr.dcfr())
    outcome = jaxcfr.make_solver("cfr", estimator=jaxcfr.OutcomeSampling(samples=4))
    assert repr(outcome) == "Solver(cfr: RM, simultaneous, gamma=0, exploration=0.6, outcome x4)"
    assert [p.name for p in jaxcfr.hs_pcfr_plus().parameters] == [
        "gamma", "gamma_drop", "horizon", "seed"]


def test_configs_take_the_parts_parameters_as_solver_keys():
    c = config_from_dict({"game": {"name": "kuhn_poker"},
                          "solver": {"algorithm": "hs-pcfr+", "horizon": [50, 100],
                                     "gamma": 15}})
    assert c.solver.horizon == (50.0, 100.0) and c.solver.gamma == 15.0
    assert c.run_parameters() == {"horizon": [50.0, 100.0], "gamma": 15.0, "seed": 0}
    assert c.to_dict()["solver"]["horizon"] == [50.0, 100.0]
    with pytest.raises(jaxcfr.runs.ConfigError, match=r"solver\.horizon must be positive"):
        config_from_dict({"game": {"name": "kuhn_poker"},
                          "solver": {"algorithm": "hs-pcfr+", "horizon": 0}})
    with pytest.raises(jaxcfr.runs.ConfigError,
                       match=r"takes no parameter solver\.horizon; it takes solver\.gamma"):
        config_from_dict({"game": {"name": "kuhn_poker"}, "solver": {"horizon": 10}})


def test_the_command_line_options_come_from_the_declarations(capsys):
    assert app.main(["solve", "kuhn_poker", "--algorithm", "hs-pcfr+", "--iterations", "30",
                     "--horizon", "30,60", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["members"] == ["horizon=30", "horizon=60"] and len(out["exploitability"]) == 2
    assert app.main(["solve", "kuhn_poker", "--alpha", "2", "--quiet"]) == 2
    assert "cfr+ takes no parameter --alpha; it takes --gamma, --seed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        app.main(["solve", "--help"])
    shown = capsys.readouterr().out
    for name, takers in presets.named_parameters().items():
        assert "--" + name.replace("_", "-") in shown
        assert takers[0][1].doc.split()[0] in shown


def test_solve_names_the_keywords_it_no_longer_takes():
    with pytest.raises(jaxcfr.ArgumentError, match=r"no seeds any more: give seed=\[\.\.\.\]"):
        jaxcfr.solve("kuhn_poker", "cfr+", 5, seeds=[1, 2])
    with pytest.raises(jaxcfr.ArgumentError, match=r"give device=jaxcfr.DeviceOptions\(chunk"):
        jaxcfr.solve("kuhn_poker", "cfr+", 5, chunk=8)
    with pytest.raises(jaxcfr.ArgumentError, match=r"no argument eval_evry \(did you mean "
                                                   r"eval_every\?\)"):
        jaxcfr.solve("kuhn_poker", "cfr+", 5, eval_evry=2)
    with pytest.raises(jaxcfr.ArgumentError, match="device must be a jaxcfr.DeviceOptions"):
        jaxcfr.solve("kuhn_poker", "cfr+", 5, device={"chunk": 8})


def _raw(tmp_path, **solver):
    return {"game": {"name": "kuhn_poker"},
            "solver": {"algorithm": "dcfr", "iterations": 40, **solver},
            "run": {"eval_every": 20, "checkpoint_every": 20, "quiet": True, "plot": False,
                    "seed": 1}}


def test_a_checkpoint_records_the_parameter_set_and_a_resume_must_match(tmp_path,
                                                                         monkeypatch):
    part = train(config_from_dict(_raw(tmp_path, iterations=20, alpha=[1.0, 2.0])),
                 out_dir=str(tmp_path / "part"), handle_sigint=False)
    sidecar = json.loads(next((tmp_path / "part" / "checkpoints").glob("*.json")).read_text())
    assert sidecar["version"] == checkpoint.FORMAT_VERSION
    assert sidecar["parameters"] == {"alpha": [1.0, 2.0], "beta": 0.0, "gamma": 2.0,
                                     "seed": 1}
    # the preset's default changed since: the same config is another run, refused
    changed = lambda **kw: jaxcfr.dcfr(**{"beta": 0.5, **kw})          # noqa: E731
    with monkeypatch.context() as m:
        m.setitem(presets.ALGORITHMS, "dcfr", changed)
        with pytest.raises(CheckpointError, match=r"parameter beta \(0.0 in the checkpoint, "
                                                  r"0.5 now\)"):
            train(config_from_dict(_raw(tmp_path, alpha=[1.0, 2.0])),
                  resume=str(tmp_path / "part"), handle_sigint=False)
    whole = train(config_from_dict(_raw(tmp_path, alpha=[1.0, 2.0])),
                  out_dir=str(tmp_path / "whole"), handle_sigint=False)
    rest = train(config_from_dict(_raw(tmp_path, alpha=[1.0, 2.0])),
                 resume=str(tmp_path / "part"), handle_sigint=False)
    assert part.iteration == 20 and rest.resumed_from == 20
    for f, table in _tables(whole.state).items():
        np.testing.assert_array_equal(_tables(rest.state)[f], table, err_msg=f)


def test_a_format_3_checkpoint_without_a_parameter_record_resumes(tmp_path):
    train(config_from_dict(_raw(tmp_path, iterations=20)), out_dir=str(tmp_path / "part"),
          handle_sigint=False)
    for sidecar in (tmp_path / "part" / "checkpoints").glob("*.json"):
        meta = json.loads(sidecar.read_text())
        del meta["parameters"]
        sidecar.write_text(json.dumps(dict(meta, version=3)))
    rest = train(config_from_dict(_raw(tmp_path)), resume=str(tmp_path / "part"),
                 handle_sigint=False)
    assert rest.resumed_from == 20 and rest.iteration == 40
