"""``jaxcfr solve``: JSON output, every algorithm name, .efg paths, one-line errors."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import numpy as np
import pytest

from jaxcfr.cli import app

try:
    from tests import cfr_cases as C
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R

KEYS = {"game", "algorithm", "iterations", "exploitability", "nash_conv", "values",
        "best_response_values", "seconds", "compile_seconds", "iterations_per_second"}


UNIFORM = ("solve", "kuhn_poker", "--algorithm", "cfr", "--iterations", "1", "--json")
BAD = ("solve", "kuhn_poker", "--algorithm", "cfr++", "--iterations", "1")


@functools.cache
def _started(args: tuple[str, ...]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "jaxcfr", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=C.HERE.parent)


@pytest.fixture(scope="module", autouse=True)
def _start_commands():
    """Start the command-line runs at once: they run while the in-process tests do."""
    for args in (UNIFORM, BAD):
        _started(args)
    yield
    for args in (UNIFORM, BAD):          # reap them, also when their tests were deselected
        proc = _started(args)
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _run(*args: str) -> tuple[int, str, str]:
    proc = _started(args)
    stdout, stderr = proc.communicate(timeout=300)
    return proc.returncode, stdout, stderr


def _main_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    status = app.main(["solve", *args, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("algorithm", ["cfr", "cfr+", "lcfr", "dcfr", "pcfr+"])
def test_every_algorithm_name_works(capsys, algorithm):
    out = _main_json(capsys, "kuhn_poker", "--algorithm", algorithm, "--iterations", "3")
    assert out["algorithm"] == algorithm and out["iterations"] == 3
    # the values of the average profile after 3 iterations are the reference's
    tree = C.tree("kuhn_poker")
    ref = R.ReferenceCFR(tree, algorithm).run(3)
    np.testing.assert_allclose(out["values"], R.expected_values(tree, ref.average()), atol=1e-5)
    conv = R.nash_conv(tree, ref.average())[0]
    np.testing.assert_allclose(out["nash_conv"], conv, atol=1e-5)
    np.testing.assert_allclose(out["exploitability"], conv / 2, atol=1e-5)


def test_general_sum_game_has_no_exploitability(capsys):
    out = _main_json(capsys, "kuhn_poker(players=3)", "--algorithm", "cfr", "--iterations", "1")
    assert out["exploitability"] is None
    assert len(out["values"]) == 3 and out["nash_conv"] > 0
    np.testing.assert_allclose(sum(out["values"]), 0, atol=1e-6)


def test_efg_path(capsys):
    path = str(C.DIFFERENT_DEPTHS_EFG)
    if not C.efg_loader_available():
        pytest.skip("jaxcfr.efg is missing")
    out = _main_json(capsys, path, "--algorithm", "cfr+", "--iterations", "300")
    assert out["game"] == path
    assert out["exploitability"] < 0.01
    assert abs(out["values"][0] - R.DifferentDepths.VALUE) < 0.01


def test_bad_algorithm_is_a_one_line_error():
    status, stdout, stderr = _run(*BAD)
    assert status != 0
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("jaxcfr: error:") and "cfr++" in lines[0], lines[0]
    assert "Traceback" not in stderr and stdout == ""


def test_bad_iterations_is_a_one_line_error(capsys):
    status = app.main(["solve", "kuhn_poker", "--iterations", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert status != 0 and len(err) == 1 and err[0].startswith("jaxcfr: error:"), err


def test_one_cfr_iteration_gives_the_uniform_profile():
    """After one CFR iteration the average is uniform: Kuhn's uniform values, by hand.

    Uniform play: player 0 wins 1/8 per hand; a best response earns 1/2 against
    the uniform player 1 and 5/12 against the uniform player 0 (NashConv 11/12).
    """
    status, stdout, stderr = _run(*UNIFORM)
    assert status == 0, stderr
    out = json.loads(stdout.strip().splitlines()[-1])
    assert KEYS <= set(out), set(out) ^ KEYS
    assert out["game"] == "kuhn_poker" and out["algorithm"] == "cfr" and out["iterations"] == 1
    np.testing.assert_allclose(out["values"], [1 / 8, -1 / 8], atol=1e-6)
    np.testing.assert_allclose(out["best_response_values"], [1 / 2, 5 / 12], atol=1e-6)
    np.testing.assert_allclose(out["nash_conv"], 11 / 12, atol=1e-6)
    np.testing.assert_allclose(out["exploitability"], 11 / 24, atol=1e-6)
    for key in ("seconds", "compile_seconds", "iterations_per_second"):
        assert isinstance(out[key], (int, float)) and out[key] > 0, key


def test_the_parameter_options_named_without_jax_are_the_declared_ones(capsys):
    """jaxcfr solve reads its parameter options from JAX-free names (a mistake is answered
    before JAX is imported); they are the declarations' names, and --help describes them."""
    from jaxcfr.cli.app import main
    from jaxcfr.solvers.names import PARAMETER_NAMES
    from jaxcfr.solvers.presets import named_parameters
    assert PARAMETER_NAMES == tuple(named_parameters())
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    out = capsys.readouterr().out
    for name, takers in named_parameters().items():
        assert f"--{name.replace('_', '-')}" in out
    assert "a parameter of the algorithm or the estimator" not in out     # described


@pytest.mark.parametrize("algorithm, sampling, samples, counts, values", [
    ("cfr+", "none", 1, False, {"alpha": -1.0}),
    ("dcfr", "none", 1, False, {"alpha": [1.0, float("inf")]}),
    ("dcfr", "none", 1, False, {"alpha": [1.0, 2.0], "gamma": 3, "seed": [0, 1]}),
    ("hs-pcfr+", "none", 1, False, {"horizon": 0}),
    ("hs-pcfr+", "none", 1, False, {"horizon": 50, "gamma_drop": 2}),
    ("pdcfr+", "outcome", 2, False, {"exploration": 0.0}),
    ("cfr", "outcome", 1, False, {"exploration": [0.2, 1.0]}),
    ("cfr", "external", 3, True, {"exploration": 0.5}),
    ("lcfr", "chance", 1, False, {"seed": 1.5, "beta": 0.5}),
    ("postflop-dcfr", "none", 1, False, {"alpha": None, "beta": "x"}),
])
def test_the_jax_free_parameter_check_answers_as_the_solver_does(algorithm, sampling, samples,
                                                                   counts, values):
    """jaxcfr solve checks the parameters' names and values before JAX is imported
    (solvers/names.py): the same values, or the same message, as the solver's own check."""
    from jaxcfr._util.arguments import ArgumentError, command_line_spelling as spell
    from jaxcfr.solvers.names import check_named_parameters
    from jaxcfr.solvers.presets import make_solver

    def answer(check):
        try:
            return check()
        except ArgumentError as e:
            return str(e)
    solver = make_solver(algorithm, sampling=sampling, samples=samples, counts=counts)
    expected = answer(lambda: solver.check_parameters(values, spell))
    got = answer(lambda: check_named_parameters(algorithm, values, sampling, samples, counts,
                                                spell))
    assert got == expected
