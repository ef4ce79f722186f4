"""A solver state holds the tables its solver reads, and nothing else (``Solver.tables``).

Oracles:

- every preset's state, made by every path (a history tree's runner, a batch of settings,
  sampling, a public tree's player blocks, a stack of public trees), holds the regrets
  and sums, the sums' compensation unless the preset keeps plain sums
  (``postflop-dcfr``), the prediction only under a predictive rule;
- a table the solver does not read changes no number: the same solver run from a state
  that still holds it (the layout before, a zero prediction) gives the same tables bit
  for bit;
- ``postflop-dcfr``'s plain float32 sums are the compensated sums to float32 rounding
  (the peer keeps plain sums: ``tests/test_holdem_spot.py`` follows its trajectory);
- checkpoints store the tables held, a resume is bit for bit the uninterrupted run, and
  a checkpoint written with all four tables (format 4) resumes: an unread zero
  prediction dropped, an unkept compensation added into the sums; a nonzero unread
  prediction, or a missing one that the solver reads, is refused with a clear error.
"""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr.runs import CheckpointError, checkpoint, config_from_dict, train
from jaxcfr.solvers.public import public_solver
from jaxcfr.solvers.solver import TABLES

PREDICTIVE = {"pcfr+", "pdcfr+", "hs-pcfr+"}
PLAIN = {"postflop-dcfr"}


def _expected(name: str) -> set[str]:
    keep = {"regret", "strategy_sum"}
    keep |= set() if name in PLAIN else {"strategy_error"}
    keep |= {"prediction"} if name in PREDICTIVE else set()
    return keep


@pytest.mark.parametrize("name", list(jaxcfr.ALGORITHMS))
def test_each_preset_keeps_the_tables_it_reads(name):
    solver = jaxcfr.make_solver(name)
    assert set(solver.tables) == _expected(name)
    assert solver.predictive == (name in PREDICTIVE)
    assert solver.compensate == (name not in PLAIN)
    # a history tree's run, one game and a batch of settings: held after iterating too
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    for settings in ({}, {"seed": [1, 2]}):
        runner = jaxcfr.Runner(kuhn, solver, settings, chunk=4)
        state = runner.advance(runner.init(), 4)
        assert set(state.tables) == _expected(name), settings
        assert [f for f in TABLES if getattr(state, f) is None] == \
            [f for f in TABLES if f not in _expected(name)]
        assert state.arrays().keys() == _expected(name) | {"iteration"}


def test_every_path_keeps_the_tables_it_reads():
    spot = jaxcfr.load_game("holdem_spot(ranges=('AA,KK,QJs', 'QQ,JJ,T9s'), pot=10, "
                            "stack=20, bets='50%', raises='')")
    lowered = jaxcfr.lower_public(spot)
    for name in ("cfr+", "pcfr+", "postflop-dcfr"):
        # a public tree's alternating run: the player blocks (kernels.public to_blocks)
        one = jaxcfr.solve_public(lowered, name, 6, eval_every=6)
        assert set(one.state.tables) == _expected(name)
        # a stack of public trees, a member taken out of it
        stack = jaxcfr.solve_public([lowered, lowered], name, 6, eval_every=6)
        assert set(stack.state.tables) == _expected(name)
        assert set(stack.member(1).state.tables) == _expected(name)
        for f, x in one.state.tables.items():
            np.testing.assert_allclose(np.asarray(stack.member(1).state.tables[f]),
                                       np.asarray(x), rtol=1e-5, atol=1e-6, err_msg=f)
    # sampling (rows scattered in: Solver.row_update)
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    for name in ("cfr+", "pcfr+"):
        sampled = jaxcfr.make_solver(name, sampling="external", samples=2)
        runner = jaxcfr.Runner(kuhn, sampled, chunk=8)
        assert set(runner.advance(runner.init(), 8).tables) == _expected(name)
    # plain sums on the sampled path: the sums are the compensated ones to rounding
    plain = dataclasses.replace(jaxcfr.make_solver("cfr+", sampling="external", samples=2),
                                compensate=False)
    both = [jaxcfr.Runner(kuhn, s, chunk=8) for s in (plain, dataclasses.replace(
        plain, compensate=True))]
    a, b = (r.advance(r.init(), 16) for r in both)
    assert "strategy_error" not in a.tables
    np.testing.assert_array_equal(np.asarray(a.regret), np.asarray(b.regret))
    np.testing.assert_allclose(np.asarray(a.strategy_sum), np.asarray(b.strategy_sum),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["cfr", "cfr+", "dcfr", "postflop-dcfr"])
def test_an_unread_prediction_changes_no_number(name):
    """The layout before (a zero prediction table under a non-predictive rule) steps to the
    same tables, bit for bit, as the state without it: dropping it is exact."""
    lowered = jaxcfr.lower_public(jaxcfr.load_game("holdem_spot(ranges=('AA,KK,QJs', "
                                                   "'QQ,JJ,T9s'), pot=10, stack=20)"))
    from jaxcfr.solvers.public import public_device_tensors
    solver = public_solver(jaxcfr.make_solver(name))
    tensors = public_device_tensors(lowered, "float32")
    hp = solver.hyperparams()
    step = jax.jit(lambda s: solver.update(tensors, lowered.structure, s, hp))
    lean = solver.init(tensors)
    old = lean._replace(prediction=jax.numpy.zeros_like(lean.regret))
    for _ in range(5):
        lean, old = step(lean), step(old)
    assert lean.prediction is None and not np.asarray(old.prediction).any()
    for f, x in lean.tables.items():
        np.testing.assert_array_equal(np.asarray(old.tables[f]), np.asarray(x), err_msg=f)


def test_postflop_dcfr_plain_sums_are_the_compensated_ones_to_rounding():
    lowered = jaxcfr.lower_public(jaxcfr.load_game("holdem_spot"))
    plain = jaxcfr.make_solver("postflop-dcfr")
    runs = [jaxcfr.solve_public(lowered, s, 64, eval_every=64)
            for s in (plain, dataclasses.replace(plain, compensate=True))]
    a, b = (r.state for r in runs)
    assert set(a.tables) == {"regret", "strategy_sum"}
    exact = np.asarray(b.strategy_sum, np.float64) + np.asarray(b.strategy_error, np.float64)
    scale = np.abs(exact).max(axis=1, keepdims=True) + 1e-30           # each row's own
    assert np.max(np.abs(np.asarray(a.strategy_sum, np.float64) - exact) / scale) < 1e-5
    assert abs(runs[0].final["exploitability"] - runs[1].final["exploitability"]) < 1e-4


# -- checkpoints --------------------------------------------------------------------------
def _raw(algorithm: str, iterations: int) -> dict:
    return {"game": {"name": "kuhn_poker"},
            "solver": {"algorithm": algorithm, "iterations": iterations},
            "run": {"eval_every": 20, "checkpoint_every": 20, "quiet": True, "plot": False,
                    "seed": 1}}


def _run(tmp_path, algorithm, iterations, name, resume=None):
    return train(config_from_dict(_raw(algorithm, iterations)),
                 out_dir=None if resume else str(tmp_path / name), resume=resume,
                 handle_sigint=False)


def _rewrite(run_dir, change) -> None:
    """Every checkpoint of ``run_dir`` rewritten as format 4 with ``change(arrays)``."""
    for npz in (run_dir / "checkpoints").glob("*.npz"):
        meta = json.loads(npz.with_suffix(".json").read_text())
        with np.load(npz) as z:
            arrays = change({k: z[k] for k in z.files})
        npz.unlink()
        npz.with_suffix(".json").unlink()
        checkpoint.save(npz.parent, arrays, iteration=meta["iteration"],
                        fingerprint=meta["fingerprint"], config=meta["config"],
                        extra={k: meta[k] for k in ("wall_seconds", "members", "parameters",
                                                    "lock") if k in meta})
        written = json.loads(npz.with_suffix(".json").read_text())
        npz.with_suffix(".json").write_text(json.dumps(dict(written, version=4)))


@pytest.mark.parametrize("algorithm", ["postflop-dcfr", "pcfr+"])
def test_a_checkpoint_holds_the_tables_and_resumes_bit_for_bit(tmp_path, algorithm):
    part = _run(tmp_path, algorithm, 20, "part")
    ck = checkpoint.load_latest(part.run_dir / "checkpoints")
    assert set(ck.arrays) == _expected(algorithm) | {"iteration"}
    assert ck.meta["version"] == checkpoint.FORMAT_VERSION == 5
    whole = _run(tmp_path, algorithm, 40, "whole")
    rest = _run(tmp_path, algorithm, 40, None, resume=str(part.run_dir))
    assert rest.resumed_from == 20
    assert rest.state.arrays().keys() == whole.state.arrays().keys()
    for f, x in whole.state.arrays().items():
        np.testing.assert_array_equal(np.asarray(rest.state.arrays()[f]), np.asarray(x))


def test_a_four_table_checkpoint_resumes(tmp_path):
    """Format 4 kept all four tables: CFR+'s zero prediction is dropped (the resume is the
    uninterrupted run bit for bit); postflop-dcfr's compensation is added into its sums
    (the exact sum, rounded once) and the run goes on in plain sums."""
    whole = _run(tmp_path, "cfr+", 40, "whole")
    part = _run(tmp_path, "cfr+", 20, "part")
    _rewrite(part.run_dir, lambda a: dict(a, prediction=np.zeros_like(a["regret"])))
    rest = _run(tmp_path, "cfr+", 40, None, resume=str(part.run_dir))
    assert rest.state.prediction is None and rest.resumed_from == 20
    for f, x in whole.state.arrays().items():
        np.testing.assert_array_equal(np.asarray(rest.state.arrays()[f]), np.asarray(x))

    plain = _run(tmp_path, "postflop-dcfr", 20, "plain")
    error = {}

    def four(a):                      # the sums split into a total and an error, as before
        error["e"] = np.where(a["strategy_sum"] != 0, np.float32(1e-9), 0).astype(np.float32)
        return dict(a, strategy_sum=a["strategy_sum"] - error["e"], strategy_error=error["e"],
                    prediction=np.zeros_like(a["regret"]))
    kept = np.asarray(plain.state.strategy_sum)
    _rewrite(plain.run_dir, four)
    runner = jaxcfr.Runner(plain.lowered, jaxcfr.make_solver("postflop-dcfr"))
    ck = checkpoint.load_latest(plain.run_dir / "checkpoints")
    assert set(ck.arrays) == set(TABLES) | {"iteration"} and ck.meta["upgraded_from"] == 4
    state = runner.restore(ck.arrays)
    assert set(state.tables) == {"regret", "strategy_sum"}
    expected = (np.asarray(ck.arrays["strategy_sum"], np.float64)
                + error["e"].astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(state.strategy_sum), expected)
    np.testing.assert_allclose(np.asarray(state.strategy_sum), kept, rtol=1e-6)
    rest = _run(tmp_path, "postflop-dcfr", 40, None, resume=str(plain.run_dir))
    assert rest.iteration == 40 and set(rest.state.tables) == {"regret", "strategy_sum"}


def test_a_checkpoint_that_does_not_fit_the_solver_is_refused(tmp_path):
    part = _run(tmp_path, "cfr+", 20, "nonzero")
    _rewrite(part.run_dir, lambda a: dict(a, prediction=np.ones_like(a["regret"])))
    with pytest.raises(CheckpointError, match="nonzero prediction table, which cfr\\+ does "
                                              "not read"):
        _run(tmp_path, "cfr+", 40, None, resume=str(part.run_dir))
    runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")), jaxcfr.pcfr_plus())
    arrays = runner.init().arrays()
    del arrays["prediction"]
    with pytest.raises(ValueError, match="the state has no prediction, which pcfr\\+ reads"):
        runner.restore({k: np.asarray(v) for k, v in arrays.items()})


def test_a_step_refuses_a_state_of_other_tables():
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    plain, compensated = jaxcfr.make_solver("postflop-dcfr"), jaxcfr.cfr_plus()
    tensors = jaxcfr.solvers.analytics.device_tensors(kuhn, "float32")
    with pytest.raises(ValueError, match="the state holds regret, strategy_error, "
                                         "strategy_sum; postflop-dcfr keeps regret, "
                                         "strategy_sum: make its state with solver.init"):
        plain.start(tensors, compensated.init(tensors))
    with pytest.raises(ValueError, match="cfr\\+ keeps regret, strategy_sum, strategy_error"):
        compensated.start(tensors, plain.init(tensors))
