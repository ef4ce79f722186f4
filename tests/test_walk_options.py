"""Monte Carlo's depth-first walks and their output pool by name: ``solver.walk`` /
``solver.pool`` in a run config (``--set`` too) and ``jaxcfr solve --walk --pool``, checked
with messages naming the key or the option (the command line before JAX is imported), and
the runs they make equal to the library's ``ExternalSampling(walk="depth", pool=k)``."""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr.cli import app
from jaxcfr.runs import ConfigError, config_from_dict, load_config, to_toml
from jaxcfr.runs.config import COMPUTE_KEYS

try:
    from tests.cli_mistakes import assert_answered_before_jax
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cli_mistakes import assert_answered_before_jax


def _config(**solver):
    return config_from_dict({"game": {"name": "kuhn_poker"},
                             "solver": {"algorithm": "cfr", "iterations": 30, **solver},
                             "run": {"eval_every": 30, "quiet": True, "plot": False}})


def test_the_config_names_the_walk_and_the_pool(tmp_path):
    default = _config(sampling="external").estimator()
    assert (default.walk, default.pool) == ("levels", None)
    c = _config(sampling="outcome", samples=2, walk="depth", pool=3)
    e = c.estimator()
    assert (type(e), e.samples, e.walk, e.pool) == (jaxcfr.OutcomeSampling, 2, "depth", 3)
    assert c.make_solver().estimator == e and c.options().solver.estimator == e
    assert _config(sampling="chance", walk="depth", pool=0).estimator().pool == 0  # the bound
    path = tmp_path / "c.toml"                      # written and read back, overridden
    path.write_text(to_toml(c))
    assert load_config(path).solver == c.solver
    over = load_config(path, overrides=["solver.pool=8"])
    assert over.estimator().pool == 8
    assert load_config(path, overrides=["solver.pool="]).estimator().pool is None  # probed


@pytest.mark.parametrize("solver, words", [
    ({"sampling": "external", "walk": "depth", "pool": -1},
     "solver.pool must be a non-negative integer (0, 1, ...), got -1"),
    ({"sampling": "external", "walk": "depth", "pool": 1.5},
     "solver.pool: expected an integer, got a float 1.5"),
    ({"sampling": "external", "walk": "depth", "pool": True},
     "solver.pool: expected an integer, got a boolean True"),
    ({"sampling": "external", "walk": "depth", "pool": "8"},
     "solver.pool: expected an integer, got a string '8'"),
    ({"sampling": "external", "pool": 8},
     "solver.pool is the output pool of depth-first walks: it needs solver.walk depth"),
    ({"sampling": "external", "walk": "Depth"},
     "solver.walk must be one of levels, depth, got 'Depth'"),
    ({"sampling": "external", "walk": "os:system"},         # a string is a name, never code
     "solver.walk must be one of levels, depth, got 'os:system'"),
    ({"walk": "depth"},
     "solver.walk depth walks sampled traversals: it needs solver.sampling chance, "
     "external or outcome"),
    ({"sampling": "external", "counts": True, "walk": "depth"},
     "solver.walk depth walks the traversals one by one; solver.counts runs them as counts"),
])
def test_bad_walks_and_pools_name_the_key_and_the_file(tmp_path, solver, words):
    lines = "".join(f"{k} = {json.dumps(v)}\n" for k, v in solver.items())
    path = tmp_path / "c.toml"
    path.write_text('[game]\nname = "kuhn_poker"\n[solver]\n' + lines)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert words in str(info.value) and str(path) in str(info.value)


def test_an_override_is_named():
    with pytest.raises(ConfigError) as info:
        config_from_dict({"game": {"name": "kuhn_poker"},
                          "solver": {"sampling": "external", "walk": "depth"}},
                         overrides=["solver.pool=-2"])
    assert str(info.value) == ("--set solver.pool=-2: solver.pool must be a non-negative "
                               "integer (0, 1, ...), got -2")


def test_an_empty_override_is_the_keys_default_in_the_check_before_jax():
    """``--set solver.walk=`` (``KEY=``: back to the default) passes the JAX-free check as
    ``load_config`` reads it: the walk is levels again (2026-12-06: refused as '')."""
    from jaxcfr.runs.schema import check_solver_values
    raw = {"game": {"name": "kuhn_poker"}, "solver": {"sampling": "external",
                                                      "walk": "depth"}}
    check_solver_values(raw, "c.toml", ["solver.walk="])
    check_solver_values(raw, "c.toml", ["solver.walk=", "solver.pool="])
    assert config_from_dict(raw, overrides=["solver.walk="]).solver.walk == "levels"
    with pytest.raises(ConfigError, match="^--set solver.walk=: solver.pool is the output"):
        check_solver_values({**raw, "solver": {**raw["solver"], "pool": 3}}, "c.toml",
                            ["solver.walk="])


def test_the_walk_changes_what_is_computed_and_the_pool_does_not():
    """A checkpoint resumes under another pool (the same tables, bit for bit), not under
    another walk (other draws); a checkpoint's config from before ``solver.walk`` existed
    ran level by level."""
    from jaxcfr.runs.train import _compute_mismatch
    assert "solver.walk" in COMPUTE_KEYS and "solver.pool" not in COMPUTE_KEYS
    depth = _config(sampling="external", walk="depth", pool=4).to_dict()
    assert _compute_mismatch(depth, _config(sampling="external", walk="depth").to_dict()) == []
    levels = _config(sampling="external").to_dict()
    assert _compute_mismatch(depth, levels) == \
        ["solver.walk ('levels' in the checkpoint, 'depth' now)"]
    older = _config(sampling="external").to_dict()
    del older["solver"]["walk"]                     # written before the key existed
    assert _compute_mismatch(levels, older) == []
    assert _compute_mismatch(depth, older) != []


MISTAKES = [
    (["solve", "kuhn_poker", "--walk", "depth"],
     "--walk depth walks sampled traversals: it needs --sampling chance, external or outcome"),
    (["solve", "kuhn_poker", "--sampling", "external", "--pool", "3"],
     "--pool is the output pool of depth-first walks: it needs --walk depth"),
    (["solve", "kuhn_poker", "--sampling", "external", "--walk", "depth", "--pool", "-1"],
     "--pool must be a non-negative integer (0, 1, ...), got -1"),
    (["solve", "kuhn_poker", "--sampling", "external", "--walk", "depth", "--pool", "x"],
     "argument --pool: invalid int value: 'x'"),
    (["solve", "kuhn_poker", "--sampling", "outcome", "--counts", "--walk", "depth"],
     "--walk depth walks the traversals one by one; --counts runs them as counts"),
    (["solve", "kuhn_poker", "--walk", "sideways"], "argument --walk: invalid choice"),
    (["train", "c.toml", "--set", "solver.pool=3"], "jaxcfr: error: --set solver.pool=3: "
     "solver.pool is the output pool of depth-first walks: it needs solver.walk depth"),
    (["train", "c.toml", "--set", "solver.walk=depth", "--set", "solver.pool=-1"],
     "jaxcfr: error: --set solver.pool=-1: solver.pool must be a non-negative integer"),
    (["train", "bad.toml"],
     "jaxcfr: error: bad.toml: solver.walk must be one of levels, depth, got 'diagonal'"),
    # KEY= puts solver.walk back to levels (2026-12-06: the check read it as '', refused);
    # the conflict with the file's pool is blamed on the --set that made it
    (["train", "pool.toml", "--set", "solver.walk="], "jaxcfr: error: --set solver.walk=: "
     "solver.pool is the output pool of depth-first walks: it needs solver.walk depth"),
    (["train", "pool.toml", "--set", "solver.walk=levels"], "jaxcfr: error: --set "
     "solver.walk=levels: solver.pool is the output pool of depth-first walks"),
    (["train", "pool.toml", "--set", "solver.sampling=none"], "jaxcfr: error: --set "
     "solver.sampling=none: solver.walk depth walks sampled traversals"),
]


def test_command_line_mistakes_are_answered_before_jax_is_imported(tmp_path):
    """``jaxcfr solve``'s options, and ``jaxcfr train``'s config and ``--set`` (the JAX-free
    key check, :func:`jaxcfr.runs.schema.check_solver_values`)."""
    solver = '[game]\nname = "kuhn_poker"\n[solver]\nsampling = "external"\n'
    (tmp_path / "c.toml").write_text(solver)
    (tmp_path / "bad.toml").write_text(solver + 'walk = "diagonal"\n')
    (tmp_path / "pool.toml").write_text(solver + 'walk = "depth"\npool = 2\n')
    assert_answered_before_jax(MISTAKES, tmp_path)


def _solve_json(capsys, *args):
    capsys.readouterr()
    status = app.main(["solve", "kuhn_poker", "--algorithm", "cfr", "--iterations", "30",
                       "--precision", "float64", "--json", "--quiet", *args])
    out, err = capsys.readouterr()
    assert status == 0, err
    return json.loads(out)


def test_the_command_line_and_a_config_run_the_librarys_pool(capsys, tmp_path):
    """``jaxcfr solve --walk depth --pool 1`` (every step overflows into chunks of one slot
    a lane) equals the library's ``ExternalSampling(walk="depth", pool=1)`` and the bound's
    ``--pool 0`` bit for bit, differs from level by level (other draws), and a config with
    ``solver.walk`` / ``solver.pool`` trains the same run."""
    ref = jaxcfr.solve("kuhn_poker", "cfr", 30, precision="float64",
                       estimator=jaxcfr.ExternalSampling(walk="depth", pool=1))
    one = _solve_json(capsys, "--sampling", "external", "--walk", "depth", "--pool", "1")
    assert (one["walk"], one["pool"]) == ("depth", 1)
    assert one["exploitability"] == ref.final["exploitability"]
    assert one["values"] == list(np.asarray(ref.final["values"]).tolist())
    bound = _solve_json(capsys, "--sampling", "external", "--walk", "depth", "--pool", "0")
    assert bound["exploitability"] == one["exploitability"]
    levels = _solve_json(capsys, "--sampling", "external")
    assert (levels["walk"], levels["pool"]) == ("levels", None)
    assert levels["exploitability"] != one["exploitability"]
    from jaxcfr.runs.train import train
    config = config_from_dict({"game": {"name": "kuhn_poker"},
                               "solver": {"algorithm": "cfr", "iterations": 30,
                                          "sampling": "external", "walk": "depth", "pool": 1},
                               "run": {"eval_every": 30, "quiet": True, "plot": False,
                                       "precision": "float64"}})
    run = train(config, out_dir=str(tmp_path / "run"))
    assert run.final["exploitability"] == ref.final["exploitability"]
