"""Bad numbers are refused with the same words everywhere, and numbers that do not fit are
refused before training (issue 12, items 4 and 7).

The rules live in :mod:`jaxcfr._util.arguments`; ``jaxcfr.solve``, ``Runner``, the run loop,
configs (file and ``--set``), ``jaxcfr.train`` with a config built in Python, and the
command line all use them. Payoffs past what a precision can sum are refused by the
Runner and by ``jaxcfr.evaluate``; a metric that is not finite ends a run; a checkpoint
never holds NaN.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

import jaxcfr
from jaxcfr.cli import app
from jaxcfr._util.arguments import (ArgumentError, finite_float, nonnegative_int, plain_name,
                                    positive_int)
from jaxcfr.engine.loop import run_loop
from jaxcfr.runs import ConfigError, checkpoint, config_from_dict, load_config, train
from jaxcfr.runs.checkpoint import CheckpointCorruptError, CheckpointError

POSITIVE = "must be a positive integer (1, 2, ...), got"
KUHN = '[game]\nname = "kuhn_poker"\n[solver]\niterations = 40\n[run]\nchunk = 16\nquiet = true\n'
#: A one-move game whose payoffs do not fit float32's sums.
BIG_EFG = ('EFG 2 R "big payoffs" { "A" "B" }\n""\np "" 1 1 "" { "win" "lose" } 0\n'
           't "" 1 "w" { 1e39, -1e39 }\nt "" 2 "l" { -1e39, 1e39 }\n')


@pytest.fixture(scope="module")
def kuhn():
    return jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))


@pytest.mark.parametrize("value", [0, -5, 2.5, True, "3", None, np.float64(4)])
def test_the_positive_integer_rule(value):
    with pytest.raises(ArgumentError) as info:
        positive_int("iterations", value)
    assert str(info.value) == f"iterations {POSITIVE} {value!r}"
    assert type(positive_int("iterations", np.int64(7))) is int
    assert nonnegative_int("checkpoint_every", 0) == 0
    assert finite_float("alpha", 2) == 2.0
    for bad in (float("nan"), float("inf"), "1.5", True):
        with pytest.raises(ArgumentError, match="must be a finite number"):
            finite_float("alpha", bad)
    for bad in ("../x", "/abs", "a/b", ".", "..", "", " x"):
        with pytest.raises(ArgumentError, match="must be a plain name"):
            plain_name("name", bad)


@pytest.mark.parametrize("kwargs, name, value", [
    ({"iterations": -5}, "iterations", -5),
    ({"iterations": 2.5}, "iterations", 2.5),
    ({"iterations": 10, "eval_every": -3}, "eval_every", -3),
    ({"iterations": 10, "eval_every": 0}, "eval_every", 0),
    ({"iterations": 10, "device": jaxcfr.DeviceOptions(chunk=0)}, "chunk", 0),
])
def test_solve_refuses_bad_numbers_before_doing_anything(kwargs, name, value):
    with pytest.raises(ArgumentError) as info:
        jaxcfr.solve("no_such_game", **kwargs)           # refused before the game is loaded
    assert str(info.value) == f"{name} {POSITIVE} {value!r}"


def test_runner_and_run_loop_use_the_same_rules(kuhn):
    with pytest.raises(ArgumentError) as info:
        jaxcfr.Runner(kuhn, jaxcfr.cfr_plus(), chunk=0)
    assert str(info.value) == f"chunk {POSITIVE} 0"
    with pytest.raises(ArgumentError, match="alpha must be a finite number"):
        jaxcfr.Runner(kuhn, jaxcfr.dcfr(), {"alpha": [1.0, float("nan")]})
    runner = jaxcfr.Runner(kuhn, jaxcfr.cfr_plus(), chunk=16)
    with pytest.raises(ArgumentError, match="eval_every must be a positive integer"):
        run_loop(runner, runner.init(), total=10, eval_every=-3)   # once an endless loop


def test_configs_and_the_command_line_say_the_same(tmp_path, capsys):
    path = tmp_path / "kuhn.toml"
    path.write_text(KUHN)
    with pytest.raises(ConfigError) as info:
        load_config(path, overrides=["run.eval_every=-3"])
    # blamed on the --set that gave the value, not on the file
    assert str(info.value) == f"--set run.eval_every=-3: run.eval_every {POSITIVE} -3"
    (tmp_path / "bad.toml").write_text(KUHN.replace("chunk = 16", "chunk = 16\neval_every = 0"))
    with pytest.raises(ConfigError, match=r"bad\.toml: run\.eval_every must be a positive"):
        load_config(tmp_path / "bad.toml")
    assert app.main(["solve", "kuhn_poker", "--eval-every", "-3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"jaxcfr: error: --eval-every {POSITIVE} -3"]
    assert app.main(["solve", "kuhn_poker", "--iterations", "0"]) == 2
    assert capsys.readouterr().err.strip() == f"jaxcfr: error: --iterations {POSITIVE} 0"


def test_train_checks_a_config_built_in_python(tmp_path):
    config = config_from_dict({"game": {"name": "kuhn_poker"}})
    bad = dataclasses.replace(config, solver=dataclasses.replace(config.solver, iterations=-5))
    with pytest.raises(ConfigError) as info:
        train(bad, out_dir=str(tmp_path / "run"))
    assert str(info.value) == f"<dict>: solver.iterations {POSITIVE} -5"
    assert not (tmp_path / "run").exists()


def _uniform(lowered: jaxcfr.LoweredGame) -> jaxcfr.Profile:
    mask = lowered.tensors.legal_mask
    return jaxcfr.Profile.from_lowered(lowered, mask / mask.sum(1, keepdims=True))


def test_a_profile_of_another_game_is_refused(tmp_path, capsys, kuhn):
    leduc = _uniform(jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker"))
    leduc.save(tmp_path / "leduc.npz")
    with pytest.raises(ValueError, match="has none of the 12 information sets of kuhn_poker"):
        jaxcfr.evaluate_profile(leduc, "kuhn_poker")
    assert app.main(["eval", str(tmp_path / "leduc.npz"), "kuhn_poker"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "saved for leduc_poker" in err[0], err
    profile = _uniform(kuhn)
    # A profile that covers part of the game: evaluated, with a warning on stderr.
    half = jaxcfr.Profile(profile.keys[:6], profile.actions[:6], profile.probs[:6],
                          game="kuhn_poker")
    half.save(tmp_path / "half.npz")
    assert app.main(["eval", str(tmp_path / "half.npz"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["missing"] == 6
    assert "warning: 6 of 12 information sets of kuhn_poker are not in the profile" in err


# -- numbers that do not fit ------------------------------------------------------------
@pytest.fixture(scope="module")
def big(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.efg"
    path.write_text(BIG_EFG)
    return path


def test_payoffs_too_large_for_float32_are_refused_before_training(big, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"payoffs up to 1e\+39, too large for float32"):
        jaxcfr.solve(str(big), iterations=5)
    with pytest.raises(ValueError, match="too large for float32"):
        jaxcfr.evaluate(jaxcfr.lower(jaxcfr.load_game(str(big))), np.full((2, 2), 0.5))
    # float64 holds them: A plays "win" from iteration 2 on; CFR+ averages linearly, so
    # P(win) = (1/2 + 2 + 3 + 4 + 5) / 15 and A's value is (2 P(win) - 1) 1e39 = 14/15 1e39
    result = jaxcfr.solve(str(big), iterations=5, precision="float64")
    np.testing.assert_allclose(result.final["values"], [14 / 15 * 1e39, -14 / 15 * 1e39],
                               rtol=1e-12)
    # train: refused before the run directory is made, one line on the command line
    config = tmp_path / "big.toml"
    config.write_text(f'[game]\nname = "{big}"\n[solver]\niterations = 5\n[run]\nquiet = true\n')
    assert app.main(["train", str(config), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("jaxcfr: error: ") and "float64" in err[-1]
    assert not (tmp_path / "run").exists()
    assert app.main(["train", str(config), "--out", str(tmp_path / "run"),
                     "--set", "run.precision=float64", "--json"]) == 0
    np.testing.assert_allclose(json.loads(capsys.readouterr().out)["final"]["values"],
                               result.final["values"], rtol=1e-12)


def test_a_metric_that_is_not_finite_ends_the_run(kuhn):
    runner = jaxcfr.Runner(kuhn, jaxcfr.cfr_plus(), chunk=16)
    state = runner.init()
    arrays = {f: np.asarray(x) for f, x in state.arrays().items()}
    arrays["strategy_sum"] = np.full_like(arrays["strategy_sum"], np.nan)
    with pytest.raises(FloatingPointError, match="iteration 16: the solver state holds NaN"):
        run_loop(runner, runner.restore(arrays), total=16, eval_every=16)


def test_checkpoints_never_hold_nan(tmp_path, kuhn):
    good = {"regret": np.zeros((3, 2), np.float32), "iteration": np.asarray(5)}
    fp = checkpoint.fingerprint(kuhn)
    checkpoint.save(tmp_path, good, iteration=5, fingerprint=fp)
    with pytest.raises(CheckpointError, match="regret holds non-finite values"):
        checkpoint.save(tmp_path, {**good, "regret": np.full((3, 2), np.inf, np.float32)},
                        iteration=10, fingerprint=fp)
    # A newer checkpoint altered to hold NaN, its checksum recomputed: refused, skipped.
    checkpoint.save(tmp_path, {**good, "iteration": np.asarray(10)}, iteration=10,
                    fingerprint=fp)
    npz, sidecar = tmp_path / "ckpt-0000000010.npz", tmp_path / "ckpt-0000000010.json"
    buf = io.BytesIO()
    np.savez(buf, regret=np.full((3, 2), np.nan, np.float32), iteration=np.asarray(10))
    npz.write_bytes(buf.getvalue())
    meta = json.loads(sidecar.read_text())
    meta["npz_sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(CheckpointCorruptError, match="non-finite"):
        checkpoint.load(npz, fingerprint=fp)
    warnings = []
    latest = checkpoint.load_latest(Path(tmp_path), fingerprint=fp, warn=warnings.append)
    assert latest.iteration == 5
    assert warnings and "non-finite" in warnings[0]
