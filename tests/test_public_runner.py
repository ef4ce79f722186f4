"""Public trees through the seam: the Runner, checkpoints, ``jaxcfr train`` and profiles.

A public tree is a representation the seam chooses (``kernels/values.py``: the
``PublicTree`` kernel of representation ``"public"``), so ``make_runner`` builds the
same :class:`jaxcfr.Runner` for it as for any game, and every tool takes it.

Oracles:

* the path public trees had before the seam, written out here (``_reference``: one
  jitted ``Solver.step`` per iteration on ``public_device_tensors`` and
  ``evaluate_public`` of the strategy sum): ``jaxcfr.solve`` and ``jaxcfr.solve_public``
  give its values, exploitability and average strategy after every iteration, in
  float64, to 1e-12;
* a run interrupted and resumed from its checkpoint is bit for bit the uninterrupted
  run (state, profile and metrics);
* a saved profile, loaded back, evaluates to the exploitability the run reported (the
  same table: to 1e-12 in float64), on its recorded game and through ``jaxcfr eval``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.api.public_result import PublicSolveResult
from jaxcfr.api.runners import make_runner
from jaxcfr.api.solve import SolveOptions
from jaxcfr.cli.app import main as cli_main
from jaxcfr.engine.seam import Single, choose_seam
from jaxcfr.kernels.values import KERNELS, PublicTree, choose_kernel, representation
from jaxcfr.runs import RunDir, checkpoint, config_from_dict, load_config, train
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import evaluate_public, public_device_tensors, public_solver

ROOT = Path(__file__).resolve().parent.parent
LEDUC = "leduc_poker(ranks=3, tree='public')"
#: A small river spot (ranked terminals forced: the O(H) operators), pot 60.
SPOT = "holdem_spot(ranges=('QQ,66', 'AK,T9s'), pot=60, stack=120, bets='60%, a')"
TIMING = ("iterations_per_second", "compile_seconds", "wall_seconds")


@functools.partial(jax.jit, static_argnames=("solver", "structure"))
def _step(tensors, state, hp, *, solver, structure):
    return solver.update(tensors, structure, state, hp)


def _reference(lowered, algorithm: str, iterations: int):
    """The path before the seam: ``[(values, exploitability)]`` after every iteration,
    and the final average strategy (float64)."""
    solver = public_solver(make_solver(algorithm))
    with precision.scope(np.float64):
        tensors = public_device_tensors(lowered, "float64")
        hp = solver.hyperparams(np.float64)
        state = solver.init(tensors, dtype=np.float64)
        out = []
        for _ in range(iterations):
            state = _step(tensors, state, hp, solver=solver, structure=lowered.structure)
            ev = evaluate_public(lowered, state.strategy_sum, dtype="float64", tensors=tensors)
            out.append((ev["values"], float(ev["exploitability"])))
        average = np.asarray(solver.average_strategy(tensors, state), np.float64)
    return out, average


@pytest.mark.parametrize("game,algorithm", [
    pytest.param(LEDUC, "cfr+", id="leduc-cfr+"),
    pytest.param(LEDUC, "pcfr+", id="leduc-pcfr+", marks=pytest.mark.slow),
    pytest.param(SPOT, "postflop-dcfr", id="spot-postflop-dcfr")])
def test_the_runner_is_the_previous_path_after_every_iteration(game, algorithm):
    lowered = jaxcfr.lower_public(jaxcfr.load_game(game),
                                  terminals="ranked" if game == SPOT else "auto")
    expected, average = _reference(lowered, algorithm, 12)
    result = jaxcfr.solve(lowered, algorithm, 12, eval_every=1, precision="float64",
                          device=jaxcfr.DeviceOptions(chunk=5))
    assert isinstance(result, PublicSolveResult)
    assert [r["iteration"] for r in result.metrics] == list(range(1, 13))
    for record, (values, exploitability) in zip(result.metrics, expected):
        np.testing.assert_allclose(record["values"], values, rtol=0, atol=1e-12)
        assert abs(record["exploitability"] - exploitability) <= 1e-12 * max(
            1.0, abs(exploitability))
    np.testing.assert_allclose(result.average_strategy, average, rtol=0, atol=1e-12)
    # solve_public is the same run
    direct = jaxcfr.solve_public(lowered, algorithm, 12, eval_every=4, precision="float64")
    assert [r["exploitability"] for r in direct.metrics] == \
        [result.metrics[i]["exploitability"] for i in (3, 7, 11)]


def test_the_seam_chooses_the_public_kernel_and_make_runner_a_runner():
    lowered = jaxcfr.lower_public(jaxcfr.load_game(LEDUC))
    assert representation(lowered) == "public" and KERNELS[(None, "public")] is PublicTree
    seam = choose_seam(lowered, make_solver("cfr+").estimator, backend="cpu")
    assert seam.values == choose_kernel("public") == PublicTree() and seam.layout == Single()
    with pytest.raises(ValueError, match="full width"):
        choose_seam(lowered, jaxcfr.ExternalSampling(samples=4), backend="cpu")
    # jaxcfr.evaluate takes a public tree through the same choice
    mask = lowered.tensors.legal_mask
    table = np.where(mask, np.arange(1, mask.shape[1] + 1), 0) / np.where(
        mask, np.arange(1, mask.shape[1] + 1), 0).sum(1, keepdims=True)
    ours = jaxcfr.evaluate(lowered, table, dtype="float64")
    theirs = evaluate_public(lowered, table, dtype="float64")
    assert abs(ours["exploitability"] - theirs["exploitability"]) <= 1e-12
    np.testing.assert_allclose(ours["values"], theirs["values"], rtol=0, atol=1e-12)
    runner = make_runner(LEDUC, SolveOptions.check({"algorithm": "dcfr", "iterations": 10}),
                         label=LEDUC)
    assert isinstance(runner, jaxcfr.Runner) and runner.values == PublicTree()
    assert runner.lowered.name == LEDUC
    with pytest.raises(jaxcfr.ArgumentError, match="full width"):
        make_runner(LEDUC, SolveOptions.check({"iterations": 10, "estimator":
                                               jaxcfr.ExternalSampling(samples=4)}))


def test_progress_comes_after_every_chunk():
    seen = []
    jaxcfr.solve(LEDUC, "cfr+", 20, device=jaxcfr.DeviceOptions(chunk=8),
                 report=jaxcfr.Report(progress=lambda it, m: seen.append((it, m is not None))))
    assert seen == [(0, False), (8, False), (16, False), (20, False), (20, True)]


def _config(out_every: int = 20, iterations: int = 40):
    return config_from_dict({
        "name": "public", "game": {"name": LEDUC},
        "solver": {"algorithm": "dcfr", "iterations": iterations},
        "run": {"eval_every": 10, "checkpoint_every": out_every, "chunk": 8, "quiet": True}})


def _assert_same_run(a, b):
    fa = checkpoint.load_latest(Path(a) / "checkpoints").arrays
    fb = checkpoint.load_latest(Path(b) / "checkpoints").arrays
    assert fa.keys() == fb.keys()
    for k in fa:
        assert fa[k].dtype == fb[k].dtype and fa[k].tobytes() == fb[k].tobytes(), k
    pa, pb = (jaxcfr.Profile.load(Path(x) / "profile.npz") for x in (a, b))
    assert pa.keys == pb.keys and pa.probs.tobytes() == pb.probs.tobytes()

    def strip(records):
        return [{k: v for k, v in r.items() if k not in TIMING} for r in records]
    assert strip(RunDir(a).read_metrics()) == strip(RunDir(b).read_metrics())


def test_a_public_run_resumes_bit_for_bit(tmp_path):
    full = train(_config(), out_dir=str(tmp_path / "full"))
    assert full.iteration == 40 and full.final["exploitability"] > 0

    def stop_at_20(it, metrics):
        if metrics is not None and it == 20:
            raise KeyboardInterrupt

    out = tmp_path / "run"
    first = train(_config(), out_dir=str(out), progress=stop_at_20)
    assert first.interrupted and first.iteration == 20
    second = train(load_config(out / "config.toml"), resume=str(out))
    assert second.resumed_from == 20 and second.iteration == 40
    _assert_same_run(full.run_dir, out)
    # a checkpoint of the history tree of the same game is another game
    other = config_from_dict({"name": "h", "game": {"name": "leduc_poker(ranks=3)"},
                              "solver": {"algorithm": "dcfr", "iterations": 60},
                              "run": {"quiet": True}})
    with pytest.raises(jaxcfr.runs.CheckpointError, match="another game"):
        train(other, resume=str(out))


def test_train_the_river_config_end_to_end(tmp_path, capsys):
    out = tmp_path / "river"
    assert cli_main(["train", str(ROOT / "configs" / "river.toml"), "--out", str(out),
                     "--set", "solver.iterations=20", "--set", "run.eval_every=10",
                     "--set", "run.checkpoint_every=10"]) == 0
    captured = capsys.readouterr()
    lines = [x for x in captured.err.splitlines() if x.startswith("iteration ")]
    assert [x.split()[1] for x in lines] == ["10/20", "20/20"]
    records = RunDir(out).read_metrics()
    for line, record in zip(lines, records):       # the percent is the chips over the pot
        e = record["exploitability"]
        assert f"exploitability {e:.3e} ({100 * e / 100:.4f}% of the pot)" in line
    assert "% of the pot 100)" in next(x for x in captured.out.splitlines()
                                        if x.startswith("exploitability"))
    # the saved profile evaluates to what the run reported (float32 both)
    assert cli_main(["eval", str(out), "--json"]) == 0
    ev = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ev["missing"] == 0 and ev["game"].startswith("holdem_spot(board='Td9d6h5c2s'")
    assert ev["exploitability"] == pytest.approx(records[-1]["exploitability"], rel=1e-4)


def test_a_saved_profile_loads_back_to_the_same_exploitability(tmp_path, capsys):
    result = jaxcfr.solve(SPOT, "postflop-dcfr", 30, precision="float64")
    profile = result.to_profile()
    player, (hand, history) = profile.keys[0]
    assert profile.policy(player, (hand, history)) == result.strategy(player, hand, history)
    assert profile.game == SPOT
    path = profile.save(tmp_path / "spot")
    loaded = jaxcfr.Profile.load(path)
    assert loaded.keys == profile.keys and np.array_equal(loaded.probs, profile.probs)
    again = loaded.evaluate(precision="float64")            # on its recorded game
    assert again["missing"] == 0 and again["found"] == len(profile)
    assert abs(again["exploitability"] - result.final["exploitability"]) <= 1e-12
    np.testing.assert_allclose(again["values"], result.final["values"], rtol=0, atol=1e-12)
    assert cli_main(["eval", str(path), "--precision", "float64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert abs(out["exploitability"] - result.final["exploitability"]) <= 1e-12
