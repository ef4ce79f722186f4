"""Run configs: TOML into frozen dataclasses, errors naming key and file, --set overrides."""

from pathlib import Path

import pytest

import jaxcfr
from jaxcfr.runs import ConfigError, config_from_dict, load_config, to_toml
from jaxcfr.runs.config import parse_override

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted((ROOT / "configs").glob("*.toml"))


def _write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_shipped_configs_are_there():
    names = {p.stem for p in CONFIGS}
    assert {"kuhn", "leduc", "liars_dice", "kuhn3", "efg_kuhn", "dcfr_sweep", "leduc_external",
            "sampled_dice_poker"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_every_shipped_config_loads_and_takes_the_documented_overrides(path):
    config = load_config(path)
    assert config.name == path.stem
    for s in config.game.strings:
        if s.endswith(".efg"):
            assert Path(s).is_absolute() and Path(s).exists(), s
        else:
            jaxcfr.game.registry.parse_game_string(s)
    over = load_config(path, overrides=["solver.iterations=7", "solver.algorithm=dcfr",
                                        "run.checkpoint_every=3"])
    assert (over.solver.iterations, over.solver.algorithm, over.run.checkpoint_every) == (
        7, "dcfr", 3)
    assert over.game == config.game
    # the resolved config written to a run directory reads back to the same config
    again = load_config(_write_tmp(to_toml(config)))
    assert again.game == config.game and again.solver == config.solver
    assert again.run == config.run


def _write_tmp(text):
    import tempfile
    d = Path(tempfile.mkdtemp())
    return _write(d, text)


def test_main_job_is_leduc_cfr_plus():
    config = load_config(ROOT / "configs" / "leduc.toml")
    assert config.game.name == "leduc_poker"
    assert config.solver.algorithm == "cfr+" and config.solver.iterations == 2000
    assert config.run.eval_every == 100


def test_unknown_key_names_key_and_file(tmp_path):
    path = _write(tmp_path, '[game]\nname = "kuhn_poker"\n[solver]\niteratoins = 10\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert "iteratoins" in msg and str(path) in msg and "iterations" in msg  # lists known keys


def test_unknown_section_and_top_level_key(tmp_path):
    path = _write(tmp_path, '[game]\nname = "kuhn_poker"\n[solvr]\nalgorithm = "cfr"\n')
    with pytest.raises(ConfigError, match="solvr"):
        load_config(path)
    path = _write(tmp_path, 'nmae = "x"\n[game]\nname = "kuhn_poker"\n')
    with pytest.raises(ConfigError, match="nmae"):
        load_config(path)


@pytest.mark.parametrize("line, key", [
    ('[solver]\niterations = "ten"', "solver.iterations"),
    ("[solver]\niterations = 1.5", "solver.iterations"),
    ("[solver]\niterations = true", "solver.iterations"),     # bool is not an int
    ('[run]\nquiet = "yes"', "run.quiet"),
    ('[solver]\nalpha = "high"', "solver.alpha"),
    ("[solver]\nalpha = []", "solver.alpha"),
    ('[solver]\nalpha = [1, "x"]', "solver.alpha"),
    ("[game]\nnames = 3", "game.names"),
])
def test_wrong_type_names_key_and_file(tmp_path, line, key):
    text = line if line.startswith("[game]") else '[game]\nname = "kuhn_poker"\n' + line
    path = _write(tmp_path, text + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert key in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("text, key", [
    ("[solver]\niterations = 0", "solver.iterations"),
    ('[solver]\nalgorithm = "cfr++"', "solver.algorithm"),
    ("[run]\neval_every = 0", "run.eval_every"),
    ("[run]\nstop_at = 0", "run.stop_at"),
    ('[run]\nstop_at = "low"', "run.stop_at"),
    ('[run]\nprecision = "float16"', "run.precision"),
    ('[solver]\nalgorithm = "dcfr"\ncombine = "zip"\nalpha = [1, 2]\ngamma = [1, 2, 3]',
     "solver.combine"),
    ('[solver]\nalpha = 2', "solver.alpha"),        # cfr+ takes gamma only
])
def test_bad_values(tmp_path, text, key):
    path = _write(tmp_path, '[game]\nname = "kuhn_poker"\n' + text + "\n")
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(path)


def test_game_needs_exactly_one_of_name_and_names(tmp_path):
    with pytest.raises(ConfigError, match="exactly one"):
        load_config(_write(tmp_path, '[game]\nname = "a"\nnames = ["b"]\n'))
    with pytest.raises(ConfigError, match="game"):
        load_config(_write(tmp_path, "[solver]\niterations = 3\n"))


def test_ints_are_accepted_for_floats_and_lists_are_tuples(tmp_path):
    c = load_config(_write(tmp_path, '[game]\nname = "x"\n[solver]\nalgorithm = "dcfr"\n'
                                     'alpha = 2\ngamma = [1, 2.5]\n'))
    assert c.solver.alpha == 2.0 and isinstance(c.solver.alpha, float)
    assert c.solver.gamma == (1.0, 2.5)


def test_set_overrides_parse_toml_literals_and_fall_back_to_strings():
    assert parse_override("solver.iterations=500") == ("solver.iterations", 500)
    assert parse_override("solver.alpha = 1.5") == ("solver.alpha", 1.5)
    assert parse_override("run.quiet=true") == ("run.quiet", True)
    assert parse_override("solver.gamma=[1, 2]") == ("solver.gamma", [1, 2])
    assert parse_override("solver.algorithm=cfr+") == ("solver.algorithm", "cfr+")
    assert parse_override('game.name="leduc_poker"') == ("game.name", "leduc_poker")
    assert parse_override("game.name=leduc_poker(ranks=4)") == ("game.name",
                                                               "leduc_poker(ranks=4)")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_override("solver.iterations")


def test_set_errors_name_the_override(tmp_path):
    path = _write(tmp_path, '[game]\nname = "kuhn_poker"\n')
    with pytest.raises(ConfigError, match=r"--set solver\.nope=1.*nope"):
        load_config(path, overrides=["solver.nope=1"])
    with pytest.raises(ConfigError, match=r"--set solver\.iterations=many.*solver\.iterations"):
        load_config(path, overrides=["solver.iterations=many"])
    with pytest.raises(ConfigError, match="unknown key"):
        load_config(path, overrides=["iterations=3"])


def test_set_game_name_replaces_a_batch(tmp_path):
    path = _write(tmp_path, '[game]\nnames = ["kuhn_poker", "kuhn_poker"]\n')
    c = load_config(path, overrides=["game.name=leduc_poker"])
    assert c.game.name == "leduc_poker" and c.game.names is None


def test_efg_paths_resolve_against_the_config_file(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    path = _write(tmp_path / "sub", '[game]\nname = "games/x.efg"\n')
    monkeypatch.chdir(tmp_path)
    c = load_config(path)
    assert c.game.name == str((tmp_path / "sub" / "games" / "x.efg").resolve())
    # an override is relative to the working directory
    c = load_config(path, overrides=["game.name=y.efg"])
    assert c.game.name == str((tmp_path / "y.efg").resolve())


def test_hyperparameter_lists_make_a_grid():
    c = config_from_dict({"game": {"name": "x"},
                          "solver": {"algorithm": "dcfr", "alpha": [1, 2], "beta": 0,
                                     "gamma": [1, 2, 3]}})
    hp = c.solver.hyperparams()
    assert hp["beta"] == 0.0
    assert list(zip(hp["alpha"], hp["gamma"])) == [(a, g) for a in (1, 2) for g in (1, 2, 3)]
    assert len(c.solver.settings()) == 6
    z = config_from_dict({"game": {"name": "x"},
                          "solver": {"algorithm": "dcfr", "alpha": [1, 2], "gamma": [3, 4],
                                     "combine": "zip"}})
    assert z.solver.hyperparams() == {"alpha": [1.0, 2.0], "gamma": [3.0, 4.0]}
    assert config_from_dict({"game": {"name": "x"}}).solver.settings() == []


def test_configs_are_frozen():
    c = config_from_dict({"game": {"name": "kuhn_poker"}})
    with pytest.raises(Exception):
        c.solver.iterations = 3          # noqa: B003 - the point of the test


def test_invalid_toml_names_the_file(tmp_path):
    path = _write(tmp_path, "[game\nname = 1\n")
    with pytest.raises(ConfigError, match="invalid TOML") as info:
        load_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("solver", [{"alpha": "x"}, {"algorithm": "nosuch", "alpha": 1.0},
                                    {"algorithm": 3, "alpha": 1.0}, {"alpha": []},
                                    {"counts": True, "alpha": 1.0},
                                    {"sampling": "bogus", "exploration": 2.0}])
def test_the_jax_free_value_check_leaves_what_it_cannot_judge_to_the_config(solver):
    """runs.schema judges a [solver] parameter only where the algorithm and estimator are
    known and the value is a number or a list of them; the rest is the config's rules' (a
    type error, an unknown algorithm: their own messages, after)."""
    from jaxcfr.runs.schema import check_keys
    raw = {"game": {"name": "kuhn_poker"}, "solver": solver}
    check_keys(raw, "c.toml")                                    # no answer here
    with pytest.raises(ConfigError) as info:
        config_from_dict(raw, source="c.toml")
    assert "c.toml" in str(info.value)


def test_set_with_no_value_puts_a_key_back_to_its_default(tmp_path):
    """``--set run.stop_at=``: a config's target (or any key) removed from the command
    line, the key back to its default; an unknown key is still named."""
    path = _write(tmp_path, '[game]\nname = "kuhn_poker"\n[solver]\niterations = 7\n'
                            '[run]\nstop_at = 0.01\neval_every = 5\n')
    assert parse_override("run.stop_at=") == ("run.stop_at", None)
    assert parse_override("run.stop_at = ") == ("run.stop_at", None)
    assert load_config(path).run.stop_at == 0.01
    c = load_config(path, overrides=["run.stop_at=", "solver.iterations="])
    (tmp_path / "d").mkdir()
    default = load_config(_write(tmp_path / "d", '[game]\nname = "kuhn_poker"\n'))
    assert c.run.stop_at is None and c.solver.iterations == default.solver.iterations
    assert c.run.eval_every == 5
    with pytest.raises(ConfigError, match=r"--set run\.stop_att=.*did you mean run\.stop_at"):
        load_config(path, overrides=["run.stop_att="])
