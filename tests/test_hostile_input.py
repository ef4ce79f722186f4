"""Careless and hostile input, round two (issue 18): strategy tables that are not strategies,
game strings that would run code, modules beside a config, bounds, and the rough edges a
first user meets. (Contract probes are in test_validate.py, signals in
test_interrupts.py, abstraction tables in test_abstraction.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import jaxcfr
from jaxcfr import ArgumentError, GameError
from jaxcfr._util import arguments
from jaxcfr.profiles import value_estimates
from jaxcfr.solvers.tables import StrategyError

try:
    from tests.cli_mistakes import assert_answered_before_jax, run_cli as _run
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cli_mistakes import assert_answered_before_jax, run_cli as _run

ROOT = Path(__file__).resolve().parent.parent


# -- 1. strategy tables that are not strategies ---------------------------------------------
@pytest.fixture(scope="module")
def kuhn():
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"), name="kuhn_poker")
    result = jaxcfr.solve(lowered, "cfr+", 200)
    return lowered, result


def test_a_hand_normalised_strategy_sum_evaluates_like_the_average(kuhn):
    """strategy_sum / its row sums leaves NaN in the sink row (it sums to 0): the sink is
    the library's business, so the metrics are the average strategy's, not 0.0."""
    lowered, result = kuhn
    sums = np.asarray(result.state.strategy_sum, np.float64)
    assert not sums[-1].any()                                  # the sink row: [0, 0]
    with np.errstate(invalid="ignore"):
        by_hand = sums / sums.sum(axis=1, keepdims=True)
    want = jaxcfr.evaluate(lowered, result.average_strategy)
    got = jaxcfr.evaluate(lowered, by_hand)
    # float64 normalisation against the float32 average: equal to float32 rounding of values
    # of order 0.1 (a few 1e-8), which is not a relative 1e-5 of an exploitability of 3e-4
    assert got["exploitability"] == pytest.approx(want["exploitability"], abs=5e-8)
    assert got["exploitability"] > 1e-6
    np.testing.assert_allclose(got["values"], want["values"], atol=1e-6)
    normalised = jaxcfr.evaluate(lowered, sums, normalise=True)   # the same, asked for
    assert normalised["exploitability"] == pytest.approx(want["exploitability"], abs=5e-8)
    garbage = np.asarray(result.average_strategy).copy()
    garbage[-1] = [7.0, -3.0]                                   # whatever the sink holds
    assert jaxcfr.evaluate(lowered, garbage)["exploitability"] == \
        pytest.approx(want["exploitability"], rel=1e-6)


@pytest.mark.parametrize("change, problem, words", [
    (lambda t: t.__setitem__(0, 0.0), "sum", "sums to 0"),
    (lambda t: t.__setitem__(slice(None), 7.0), "sum", "sums to 14"),
    (lambda t: t.__setitem__((3, 0), -0.25), "negative", "negative entry"),
    (lambda t: t.__setitem__((5, 1), np.nan), "non-finite", "non-finite"),
    (lambda t: t.__setitem__((2, 0), np.inf), "non-finite", "non-finite"),
], ids=["zeros", "sevens", "negative", "nan", "inf"])
def test_a_table_that_is_not_a_strategy_names_its_first_bad_information_set(
        kuhn, change, problem, words):
    lowered, result = kuhn
    table = np.asarray(result.average_strategy, np.float64).copy()
    change(table)
    with pytest.raises(StrategyError, match=words) as info:
        jaxcfr.evaluate(lowered, table)
    err = info.value
    assert err.problem == problem and isinstance(err, ValueError)
    assert err.key == lowered.infoset_keys[err.row]
    assert repr(err.key[1]) in str(err) and f"player {err.key[0]}" in str(err)


def test_normalise_scales_rows_but_refuses_what_is_not_a_weight(kuhn):
    lowered, result = kuhn
    sevens = np.full(lowered.tensors.legal_mask.shape, 7.0)
    uniform = np.asarray(lowered.tensors.legal_mask, np.float64)
    uniform /= uniform.sum(axis=1, keepdims=True)
    assert jaxcfr.evaluate(lowered, sevens, normalise=True)["exploitability"] == \
        pytest.approx(jaxcfr.evaluate(lowered, uniform)["exploitability"], rel=1e-6)
    bad = sevens.copy()
    bad[4, 1] = -1.0
    with pytest.raises(StrategyError, match="negative"):
        jaxcfr.evaluate(lowered, bad, normalise=True)


def test_mass_on_an_illegal_slot_is_refused():
    lowered = jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    mask = np.asarray(lowered.tensors.legal_mask, np.float64)
    table = mask / mask.sum(axis=1, keepdims=True)
    row = int(np.flatnonzero((mask[:-1].sum(axis=1) < mask.shape[1]))[0])   # a row with a gap
    slot = int(np.flatnonzero(mask[row] == 0)[0])
    table[row, slot] = 0.5
    with pytest.raises(StrategyError, match=f"slot {slot}, which is not a legal") as info:
        jaxcfr.evaluate(lowered, table)
    assert info.value.problem == "illegal" and info.value.row == row


def test_a_stacks_bad_row_names_its_member_and_best_responses_check_too():
    members = [jaxcfr.lower(jaxcfr.load_game(g)) for g in ("kuhn_poker", "leduc_poker(ranks=2)")]
    batch = jaxcfr.stack(members)
    mask = np.asarray(batch.tensors.legal_mask, np.float64)
    table = mask / mask.sum(axis=-1, keepdims=True)
    table[1, 2] = [0.9, 0.9, 0.0][:mask.shape[-1]]
    with pytest.raises(StrategyError, match="row 2 of stack member 1") as info:
        jaxcfr.evaluate(batch, table)
    assert info.value.member == 1 and info.value.key == members[1].infoset_keys[2]
    from jaxcfr.solvers.analytics import best_responses
    one = table[0, :members[0].num_rows, :members[0].max_actions].copy()
    one[0] = 0
    with pytest.raises(StrategyError, match="sums to 0"):
        best_responses(members[0], one)


# -- 2. game strings that would run code -----------------------------------------------------
def test_module_class_must_name_a_game_class_before_it_is_called(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ("os:system(command='touch hacked')", "subprocess:Popen(args='touch hacked')",
                 "builtins:exec(source='open(\"hacked\", \"w\")')"):
        with pytest.raises(GameError, match="not a jaxcfr.Game subclass") as info:
            jaxcfr.load_game(text)
        assert info.value.rule == "game-string"
        with pytest.raises(GameError, match="neither an actions") as info:
            jaxcfr.load_abstraction(text)
        assert info.value.rule == "abstraction-string"
    assert not (tmp_path / "hacked").exists()


def _profile_of(game: str, path: Path) -> Path:
    result = jaxcfr.solve("kuhn_poker", "cfr+", 20)
    saved = result.profile.save(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["game"] = game
    path.with_suffix(".json").write_text(json.dumps(meta))
    return saved


def test_a_game_string_in_a_profile_is_not_run_without_the_users_word(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil_game.py").write_text("open('imported', 'w').close()\n"
                                           "class Game:\n    pass\n")
    saved = _profile_of("evil_game:Game", tmp_path / "p.npz")
    status, _, err = _run(capsys, "eval", str(saved))
    assert status == 2 and "[untrusted-code]" in err and "--trust-code" in err, err
    assert "'evil_game'" in err and "Traceback" not in err
    assert not (tmp_path / "imported").exists()            # not even imported
    profile = jaxcfr.Profile.load(saved)
    with pytest.raises(GameError, match="untrusted-code"):
        jaxcfr.evaluate_profile(profile)
    with pytest.raises(GameError, match="untrusted-code"):
        profile.to_openspiel("kuhn_poker")
    # with the user's word it is imported, and refused: its Game is not a jaxcfr.Game
    status, _, err = _run(capsys, "eval", str(saved), "--trust-code")
    assert status == 2 and "not a jaxcfr.Game subclass" in err, err
    assert (tmp_path / "imported").exists()
    # os:system in a profile: refused before anything is imported or called
    saved = _profile_of("os:system(command='touch hacked')", tmp_path / "q.npz")
    status, _, err = _run(capsys, "eval", str(saved))
    assert status == 2 and "[untrusted-code]" in err and not (tmp_path / "hacked").exists()
    # a registered game in a file is read as before; a game given by the user is theirs
    saved = _profile_of("kuhn_poker(players=2)", tmp_path / "r.npz")
    assert jaxcfr.evaluate_profile(jaxcfr.Profile.load(saved))["rows"] == 12
    assert _run(capsys, "eval", str(tmp_path / "q.npz"), "kuhn_poker")[0] == 0


def test_a_config_naming_module_code_needs_trust_code(tmp_path, capsys):
    (tmp_path / "cfg_game_mod.py").write_text(ONE_CARD)
    config = tmp_path / "one.toml"
    config.write_text('[game]\nname = "cfg_game_mod:OneCard"\n[solver]\niterations = 4\n'
                      '[run]\nplot = false\nquiet = true\n')
    with pytest.raises(jaxcfr.runs.ConfigError, match=r"game.name: \[untrusted-code\]"):
        jaxcfr.load_config(config)
    assert "cfg_game_mod" not in sys.modules
    try:
        loaded = jaxcfr.load_config(config, trust_code=True)    # found beside the config
        assert loaded.game.name == "cfg_game_mod:OneCard" and "cfg_game_mod" in sys.modules
        # an override is the user's own
        other = tmp_path / "kuhn.toml"
        other.write_text('[game]\nname = "kuhn_poker"\n')
        assert jaxcfr.load_config(other, ["game.name=cfg_game_mod:OneCard"]).game.name == \
            "cfg_game_mod:OneCard"
        status, _, err = _run(capsys, "train", str(config), "--out", str(tmp_path / "run"))
        assert status == 2 and "--trust-code" in err
        assert _run(capsys, "train", str(config), "--out", str(tmp_path / "run"),
                    "--trust-code")[0] == 0
        status, _, err = _run(capsys, "train", "--resume", str(tmp_path / "run"))
        assert status == 2 and "[untrusted-code]" in err and "config.toml" in err
    finally:
        sys.modules.pop("cfg_game_mod", None)


def test_a_bucketing_naming_module_code_needs_trust_code(tmp_path):
    """bucket_by(function="module:name") imports that module: from a file, only on trust."""
    (tmp_path / "cfg_bucket_mod.py").write_text(
        "import pathlib\npathlib.Path(__file__).with_name('imported').touch()\n"
        "def by_card(player, key):\n    return key\n")
    config = tmp_path / "b.toml"
    config.write_text('[game]\nname = "kuhn_poker"\n'
                      'bucketing = "bucket_by(function=\'cfg_bucket_mod:by_card\')"\n')
    with pytest.raises(jaxcfr.runs.ConfigError, match=r"game.bucketing: \[untrusted-code\]"):
        jaxcfr.load_config(config)
    assert not (tmp_path / "imported").exists() and "cfg_bucket_mod" not in sys.modules
    from jaxcfr.game.registry import runs_code
    assert runs_code("bet_menu(fractions=[1.0]) + bucket_by(function='evil.mod:f')",
                     "abstraction") == "evil.mod"
    assert runs_code("suit_isomorphism + rank_buckets(buckets=4)", "abstraction") is None


# -- 2b. one parser decides what a string names and whether it runs code (issue 33) --------
EVIL = """
import pathlib
pathlib.Path(__file__).with_name("IMPORTED").touch()
from jaxcfr.game import Game


class Game(Game):
    pass


class X:
    def actions(self, state, player):
        return state.legal_actions()

    def bucket(self, player, key):
        return key


def fn(player, key):
    return key
"""


@pytest.fixture
def evil(tmp_path, monkeypatch):
    """A module ``evilmod`` in the working directory that leaves ``IMPORTED`` when imported;
    afterwards: it was not imported, ``this`` neither, ``sys.path`` is as it was, and no
    ``hacked`` file was written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evilmod.py").write_text(EVIL)
    path, had_this = list(sys.path), "this" in sys.modules
    yield tmp_path
    imported = [m for m in ("evilmod", "this") if m in sys.modules and
                not (m == "this" and had_this)]
    for m in imported:
        sys.modules.pop(m)
    changed, sys.path[:] = sys.path != path, path
    assert not (tmp_path / "IMPORTED").exists() and not imported
    assert not (tmp_path / "hacked").exists() and not changed


@pytest.mark.parametrize("key, text", [
    ("abstraction", "identity+evilmod:X"),                        # no blanks around '+'
    ("abstraction", "identity + evilmod:X"),
    ("abstraction", "identity+this:X"),                           # the standard library
    ("abstraction", "identity  +evilmod:X(depth=1)"),
    ("bucketing", "suit_isomorphism+bucket_by(function='evilmod:fn')"),
    ("bucketing", "bucket_by(function='jaxcfr.game.registry:os.system')"),
    ("bucketing", "bucket_by(function='jaxcfr.game.registry:sys.path.insert')"),
    ("bucketing", "bucket_by(function='jaxcfr.game.bucketing:importlib.import_module')"),
    ("bucketing", "bucket_by(function='jaxcfr:_util.atomic.atomic_write')"),
    ("bucketing", "bucket_by(function=['x', {'k': 'evilmod:fn'}])"),
    ("bucketing", "bucket_by(function='games.evilmod:fn')"),
    ("name", "jaxcfr.game.registry:os.system(command='touch hacked')"),
    ("name", "evilmod:Game"),
])
def test_a_config_string_that_reaches_code_outside_the_package_is_refused(evil, key, text):
    config = evil / "c.toml"
    config.write_text(f'[game]\nname = "kuhn_poker"\n{key} = "{text}"\n'.replace(
        'name = "kuhn_poker"\nname', "name"))
    with pytest.raises(jaxcfr.runs.ConfigError, match=r"\[untrusted-code\]") as info:
        jaxcfr.load_config(config)
    assert "--trust-code" in str(info.value)


@pytest.mark.parametrize("text", ["identity+", "+identity", "identity + (evilmod:X",
                                  "identity+evilmod:X)", "bucket_by(function='evilmod:fn'",
                                  "identity(evilmod:X)", "identity(**{'a': 'evilmod:X'})",
                                  "identity(a=1)(b='evilmod:X')", "identity(a=1) + x(evilmod:X)"])
def test_a_string_the_parser_cannot_read_is_refused_never_trusted(evil, text):
    from jaxcfr.game.registry import check_trusted, runs_code
    for what in ("abstraction", "bucketing"):
        with pytest.raises(GameError, match="cannot parse|key=value|not a literal"):
            runs_code(text, what)
        with pytest.raises(GameError, match="is refused"):
            check_trusted(text, "the config", what=what)
    config = evil / "c.toml"
    config.write_text(f'[game]\nname = "kuhn_poker"\nabstraction = "{text}"\n')
    with pytest.raises(jaxcfr.runs.ConfigError, match="is refused"):
        jaxcfr.load_config(config)


def test_the_package_own_objects_are_trusted_and_load_as_parsed():
    from jaxcfr.game.registry import runs_code
    from jaxcfr.game.strings import parse_abstraction
    for text in ("suit_isomorphism+rank_buckets(buckets=4)", "identity",
                 "bucket_by(function='jaxcfr.game.bucketing:BucketBy.bucket')",
                 "jaxcfr_games.leduc:SuitIsomorphism", "games.leduc:RankBuckets(buckets=2)"):
        assert runs_code(text, "abstraction") is None, text
    assert [p.name for p in parse_abstraction("bet_menu(fractions=[1.0])+suit_isomorphism")] \
        == ["bet_menu", "suit_isomorphism"]
    for text in ("jaxcfr_games.kuhn:KuhnPoker", "games.kuhn:KuhnPoker(players=3)",
                 "kuhn_poker", "leduc_poker(ranks=3)"):
        assert runs_code(text) is None, text
    # "A+B" loads the parts the parser read: the same two objects as "A + B"
    assert repr(jaxcfr.load_abstraction("bet_menu(fractions=[1.0])+suit_isomorphism")) == \
        repr(jaxcfr.load_abstraction("bet_menu(fractions=[1.0]) + suit_isomorphism"))
    # bucket_by reads its function with the same parser: games.* is jaxcfr_games.*, and
    # what is no reference is not imported
    from jaxcfr_games.leduc import LeducPoker
    assert jaxcfr.bucket_by("games.leduc:LeducPoker").function is LeducPoker
    with pytest.raises(ValueError, match="must be 'module:name'"):
        jaxcfr.bucket_by(" evilmod:fn")


#: Every string-taking entry point: (section, key) in a config, and a hostile string.
ENTRY_POINTS = {
    "game": ("game", "name", "evilmod:Game"),
    "abstraction": ("game", "abstraction", "identity+evilmod:X"),
    "bucketing": ("game", "bucketing", "bucket_by(function='jaxcfr.game.registry:os.system')"),
    "gadget": ("resolve", "gadget", "evilmod:X"),
    "estimator": ("solver", "sampling", "evilmod:X"),
    "config key": ("solver", "evilmod:X", 1),
}


def _toml(section: str, key: str, value) -> str:
    lines = {"game": ['name = "kuhn_poker"'], "solver": ["iterations = 2"],
             "run": ["plot = false", "quiet = true"]}
    if section == "resolve":
        lines["resolve"] = ["after_chance = 1"]
    lines[section] = [line for line in lines.get(section, []) if
                      not line.startswith(f"{key} ")] + [f'"{key}" = {json.dumps(value)}']
    return "".join(f"[{s}]\n" + "\n".join(ls) + "\n" for s, ls in lines.items())


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_entry_point_from_a_config(evil, capsys, entry):
    section, key, value = ENTRY_POINTS[entry]
    config = evil / "c.toml"
    config.write_text(_toml(section, key, value))
    with pytest.raises(jaxcfr.runs.ConfigError, match=key.replace("(", r"\(")):
        jaxcfr.load_config(config)
    status, _, err = _run(capsys, "train", str(config), "--out", str(evil / "run"))
    assert status == 2 and err.startswith("jaxcfr: error: ") and "Traceback" not in err, err


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_entry_point_from_a_run_directory(evil, capsys, entry):
    section, key, value = ENTRY_POINTS[entry]
    run = evil / "run"
    run.mkdir()
    (run / "config.toml").write_text(_toml(section, key, value))
    status, _, err = _run(capsys, "train", "--resume", str(run))
    assert status == 2 and "config.toml" in err and key in err, err
    if entry in ("game", "abstraction", "bucketing"):
        assert "[untrusted-code]" in err and "--trust-code" in err


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_every_entry_point_from_a_profile(evil, capsys, entry):
    """A profile records one string, its game: a hostile one is refused; the other entry
    points have no field in a profile, and one planted there is never read."""
    section, key, value = ENTRY_POINTS[entry]
    recorded = {"game": value, "abstraction": f"kuhn_poker | {value}",
                "bucketing": f"kuhn_poker | {value}"}.get(entry, "kuhn_poker")
    saved = _profile_of(recorded, evil / "p.npz")
    meta = json.loads(saved.with_suffix(".json").read_text())
    meta[key] = value
    saved.with_suffix(".json").write_text(json.dumps(meta))
    for where in (saved, _in_run_dir(saved, evil / "run")):
        status, out, err = _run(capsys, "eval", str(where), "--json")
        if entry in ("game", "abstraction", "bucketing"):
            assert status == 2 and ("is refused" in err or "[untrusted-code]" in err), err
        else:
            assert status == 0 and json.loads(out)["game"] == "kuhn_poker", err


def _in_run_dir(saved: Path, run: Path) -> Path:
    run.mkdir(exist_ok=True)
    for suffix in (".npz", ".json"):
        (run / f"profile{suffix}").write_bytes(saved.with_suffix(suffix).read_bytes())
    return run


@pytest.mark.parametrize("entry, argv, words", [
    ("game", ["solve", "jaxcfr.game.registry:os.system(command='touch hacked')"],
     "not a jaxcfr.Game subclass"),
    ("game", ["solve", "kuhn_poker + evilmod:Game"], "cannot parse game string"),
    ("abstraction", ["abstract", "kuhn_poker", "--abstraction",
                     "os:system(command='touch hacked')"], "neither an actions"),
    ("abstraction", ["abstract", "kuhn_poker", "--abstraction", "identity+"], "empty part"),
    ("bucketing", ["abstract", "kuhn_poker", "--bucketing", "bucket_by(function=' evilmod:fn')"],
     "must be 'module:name'"),
    ("gadget", ["resolve", "kuhn_poker", "p.npz", "--after-chance", "1", "--gadget",
                "evilmod:X"], "invalid choice"),
    ("estimator", ["solve", "kuhn_poker", "--sampling", "evilmod:X"], "invalid choice"),
    ("config key", ["train", "c.toml", "--set", "evilmod:X=1"], "unknown key"),
], ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_every_entry_point_from_the_command_line(evil, capsys, entry, argv, words):
    """The command line is the user's own word (docs/security.md): it may name a module of
    theirs. It is read by the same parser, and nothing is called before it is checked."""
    (evil / "c.toml").write_text(_toml("game", "name", "kuhn_poker"))
    status, _, err = _run(capsys, *argv)
    assert status == 2 and words in err and "Traceback" not in err, err


# -- 6. a game module beside the config, found by the jaxcfr executable ---------------------
ONE_CARD = '''
from jaxcfr.game import CHANCE, TERMINAL, Game, GameError


class OneCard(Game):
    """Chance deals 0 or 1 to player 0, who bets or checks; player 1 calls or folds."""
    num_players = 2

    def __init__(self, h=()):
        self.h = tuple(h)

    def is_terminal(self): return len(self.h) == 3
    def is_chance(self): return not self.h
    def player_to_act(self):
        return TERMINAL if len(self.h) == 3 else CHANCE if not self.h else len(self.h) - 1
    def chance_outcomes(self): return [(0, 0.5), (1, 0.5)] if not self.h else None
    def legal_actions(self): return ["a", "b"] if 0 < len(self.h) < 3 else []
    def step(self, action):
        if len(self.h) == 3:
            raise GameError("over")
        self.h += (action,)
    def clone(self): return OneCard(self.h)
    def terminal_returns(self):
        u = (1 if self.h[0] else -1) * (2 if self.h[1] == "b" else 1) * \\
            (1 if self.h[2] == "a" else 0.5)
        return (u, -u)
    def infoset_key(self, player): return (player, self.h[0] if player == 0 else self.h[1])
'''

LAUNCH = ["-c", "from jaxcfr.cli.launch import console_main; console_main()"]


def test_the_executable_finds_a_game_module_beside_the_config(tmp_path):
    """``jaxcfr`` (unlike ``python -m jaxcfr``) has no working directory on sys.path; the
    module beside the config is found, and where it looked is said when it is not."""
    folder = tmp_path / "configs"
    folder.mkdir()
    (folder / "nc_onecard.py").write_text(ONE_CARD)
    (folder / "one.toml").write_text('[game]\nname = "nc_onecard:OneCard"\n[solver]\n'
                                     'iterations = 10\n[run]\nplot = false\n')
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    env = dict(os.environ, JAXCFR_NO_CACHE="1")
    env.pop("PYTHONPATH", None)

    def jaxcfr_command(*argv, cwd):
        return subprocess.run([sys.executable, *LAUNCH, *argv], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=300)

    out = jaxcfr_command("train", str(folder / "one.toml"), "--trust-code", "--quiet",
                         "--out", str(tmp_path / "run"), cwd=elsewhere)
    assert out.returncode == 0, out.stderr
    out = jaxcfr_command("solve", "nc_onecard:OneCard", "--iterations", "5", "--quiet",
                         cwd=folder)                     # the working directory too
    assert out.returncode == 0, out.stderr
    out = jaxcfr_command("solve", "nc_onecard:OneCard", "--quiet", cwd=elsewhere)
    assert out.returncode == 2, out.stderr
    assert "No module named 'nc_onecard'" in out.stderr and str(elsewhere) in out.stderr
    assert "looked on sys.path and in" in out.stderr and "Traceback" not in out.stderr


# -- 8. estimates proportionate to the run ---------------------------------------------------
def test_estimate_sizes_follow_the_draws_a_run_consumed(monkeypatch):
    monkeypatch.delenv("JAXCFR_ESTIMATES", raising=False)
    assert value_estimates.run_draws(0) == (value_estimates.MIN_TRAIN_SAMPLES,
                                            value_estimates.MIN_SAMPLES)
    assert value_estimates.run_draws(50 * 16) == (4096, 1000)       # a 50-iteration run: 1,024
    assert value_estimates.run_draws(10 ** 6) == (value_estimates.DEFAULT_TRAIN_SAMPLES,
                                            value_estimates.DEFAULT_SAMPLES)
    assert value_estimates.run_draws(700) == value_estimates.run_draws(1024)   # a step function
    monkeypatch.setenv("JAXCFR_ESTIMATES", "quick")
    assert value_estimates.run_draws(10 ** 6) == value_estimates.QUICK_DRAWS
    monkeypatch.setenv("JAXCFR_ESTIMATES", "full")
    assert value_estimates.run_draws(1) == (value_estimates.DEFAULT_TRAIN_SAMPLES,
                                            value_estimates.DEFAULT_SAMPLES)
    monkeypatch.setenv("JAXCFR_ESTIMATES", "fast")
    with pytest.raises(ArgumentError, match="JAXCFR_ESTIMATES must be one of"):
        value_estimates.run_draws(1)


def test_the_empirical_game_enumerates_listed_chance_below_the_deal():
    """Leduc's board lists its outcomes: 2,000 fitting draws are the 30 deals' trees
    (each draw was its own tree before: 20,000 of them took 254 s)."""
    empirical = value_estimates.empirical_game("leduc_poker", 2000, seed=0)
    root = empirical.lowered.level_start[1] - empirical.lowered.level_start[0]
    children = empirical.lowered.level_start[2] - empirical.lowered.level_start[1]
    assert root == 1 and children == 30
    exact = jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    # the game, reweighted: its deals hang from one root (no level for the first card)
    assert empirical.lowered.infosets_per_player == exact.infosets_per_player
    assert empirical.lowered.num_nodes == exact.num_nodes - 6
    drawn = value_estimates.empirical_game("leduc_poker", 200, seed=0, enumerate_listed=False)
    assert drawn.lowered.level_start[2] - drawn.lowered.level_start[1] == 200


# -- 9. bounds ------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, words", [
    ({"iterations": 10 ** 30}, "iterations must be at most 2,147,483,647"),
    ({"iterations": 10, "device": jaxcfr.DeviceOptions(chunk=10 ** 12)},
     "chunk must be at most 2,147,483,647"),
    ({"iterations": 10, "chance": jaxcfr.Chance("sampled", draws=10 ** 9)},
     "draws must be at most 1,000,000"),
])
def test_huge_counts_are_refused_by_name(kwargs, words):
    with pytest.raises(ArgumentError, match=words):
        jaxcfr.solve("kuhn_poker", "cfr+", **kwargs)


def test_huge_counts_in_configs_and_on_the_command_line(tmp_path, capsys):
    for override, key in (("run.chunk=1000000000000", "run.chunk"),
                          ("solver.iterations=1000000000000000000000000000000",
                           "solver.iterations"), ("solver.draws=1000000000", "solver.draws")):
        with pytest.raises(jaxcfr.runs.ConfigError, match=f"{key} must be at most"):
            jaxcfr.runs.config_from_dict({"game": {"name": "kuhn_poker"}}, overrides=[override])
    status, _, err = _run(capsys, "solve", "kuhn_poker", "--iterations", str(10 ** 30))
    assert status == 2 and err.startswith("jaxcfr: error: --iterations must be at most"), err
    assert "10**30" in err


@pytest.mark.parametrize("text", ["goofspiel(cards=1000000000000000000)",
                                  "dice_poker(dice=1000000000000000000)",
                                  "nolimit_leduc(stack=1000000000000000000)",
                                  "nolimit_leduc(ranks=1000000000000000000)",
                                  "kuhn_poker(players=1000000000000000000)",
                                  "leduc_poker(ranks=1000000000000000000)"])
def test_huge_game_parameters_are_refused_without_counting_their_trees(text):
    with pytest.raises(GameError, match="bad parameters") as info:
        jaxcfr.load_game(text)
    assert "more than" in str(info.value) or "at most" in str(info.value) or \
        "to 150 cards" in str(info.value)


def test_the_memory_budget_variable_is_named(monkeypatch):
    from jaxcfr.lowering.budget import default_memory_budget, describe_fit
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "lots")
    with pytest.raises(ValueError, match="JAXCFR_MEMORY_BUDGET must be a number of bytes"):
        default_memory_budget()
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "1000")
    with pytest.raises(jaxcfr.MemoryBudgetError, match="JAXCFR_MEMORY_BUDGET"):
        jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    size = jaxcfr.probe_size(jaxcfr.load_game("leduc_poker"))
    assert "JAXCFR_MEMORY_BUDGET" in describe_fit(size, 2, 1000)[1]


# -- 10. the smaller rough edges -----------------------------------------------------------
def test_validate_points_a_listless_chance_game_to_solve_and_train(capsys):
    status, out, _ = _run(capsys, "validate", "sampled_dice_poker(dice=1, sides=3)")
    assert status == 0 and "jaxcfr solve" in out and "jaxcfr train" in out
    assert "jaxcfr inspect" not in out


def test_eval_and_estimate_take_the_profile_and_the_game_in_either_order(tmp_path, capsys):
    saved = jaxcfr.solve("kuhn_poker", "cfr+", 20).profile.save(tmp_path / "p.npz")
    a = _run(capsys, "eval", str(saved), "kuhn_poker", "--json")
    b = _run(capsys, "eval", "kuhn_poker", str(saved), "--json")
    assert a[0] == b[0] == 0 and json.loads(a[1]) == json.loads(b[1])
    c = _run(capsys, "estimate", "kuhn_poker", str(saved), "--samples", "20",
             "--train-samples", "20", "--json")
    d = _run(capsys, "estimate", str(saved), "kuhn_poker", "--samples", "20",
             "--train-samples", "20", "--json")
    assert c[0] == d[0] == 0 and json.loads(c[1]) == json.loads(d[1])


def test_abstractions_print_by_their_fields():
    class KeepAll:
        def __init__(self):
            self.depth = 3

        def actions(self, state, player):
            return state.legal_actions()
    small = jaxcfr.Abstracted(jaxcfr.load_game("kuhn_poker"), KeepAll())
    assert "object at 0x" not in repr(small) and "KeepAll(depth=3)" in repr(small)
    assert small.name.endswith("| KeepAll(depth=3)")
    result = jaxcfr.train_abstracted("kuhn_poker", KeepAll(), iterations=5)
    assert result.label == "KeepAll(depth=3)" and "object at" not in repr(result)
    assert "KeepAll(depth=3)" in jaxcfr.format_table(result)      # one result is a table


def test_to_openspiel_finds_the_openspiel_game_itself():
    pytest.importorskip("pyspiel")
    profile = jaxcfr.solve("kuhn_poker", "cfr+", 20).profile
    policy = profile.to_openspiel()
    assert policy.action_probability_array.shape == (12, 2)
    untold = jaxcfr.solve("goofspiel(cards=2)", "cfr+", 2).profile
    with pytest.raises(ValueError, match="needs pyspiel_game="):
        untold.to_openspiel()


def test_a_jax_prng_key_is_a_seed():
    import jax
    key = jax.random.key(7)
    seed = arguments.seed("seed", key)
    assert seed == arguments.seed("seed", jax.random.PRNGKey(7)) and 0 <= seed < 2 ** 31
    a = jaxcfr.solve("kuhn_poker", "cfr", 20, estimator=jaxcfr.OutcomeSampling(), seed=key)
    b = jaxcfr.solve("kuhn_poker", "cfr", 20, estimator=jaxcfr.OutcomeSampling(), seed=seed)
    c = jaxcfr.solve("kuhn_poker", "cfr", 20, estimator=jaxcfr.OutcomeSampling(),
                     seed=jax.random.PRNGKey(7))      # a raw key is one seed, not two
    np.testing.assert_array_equal(a.average_strategy, c.average_strategy)
    np.testing.assert_array_equal(a.average_strategy, b.average_strategy)
    with pytest.raises(ArgumentError, match="or a JAX PRNG key"):
        arguments.seed("seed", jax.numpy.ones(3))


def test_chex_is_a_test_dependency_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("chex") for d in project["dependencies"])
    assert any(d.startswith("chex") for d in project["optional-dependencies"]["test"])
    assert not any(d.startswith("pygambit") for d in project["optional-dependencies"]["test"])
    assert "gambit" in (ROOT / ".ci" / "run").read_text()


def test_no_document_cites_a_design_section_users_do_not_have():
    for path in list(ROOT.glob("jaxcfr/**/*.py")) + list(ROOT.glob("docs/*.md")) + \
            [ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        assert "design §" not in text and "DESIGN.md" not in text, path


# -- issue 33, item 7: messages about the right thing -------------------------------------
def test_a_module_bucketing_class_is_taken_as_a_bucketing(tmp_path, monkeypatch):
    (tmp_path / "hostile_buckets.py").write_text(
        "class ByRank:\n    def bucket(self, player, key):\n        return key\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    made = jaxcfr.load_abstraction("hostile_buckets:ByRank")
    assert type(made).__name__ == "ByRank"
    lowered = jaxcfr.lower(jaxcfr.Bucketed(jaxcfr.load_game("kuhn_poker"), made))
    assert lowered.num_rows == jaxcfr.lower(jaxcfr.load_game("kuhn_poker")).num_rows
    with pytest.raises(GameError, match="neither an actions.*nor a bucket"):
        jaxcfr.load_abstraction("jaxcfr_games.kuhn:KuhnPoker")


@pytest.mark.parametrize("game, action", [("leduc_poker", "'call'"), ("kuhn_poker", "'pass'")])
def test_a_no_limit_bet_menu_on_another_game_says_so(game, action):
    small = jaxcfr.Abstracted(jaxcfr.load_game(game),
                              jaxcfr.load_abstraction("bet_menu(fractions=[1.0])"))
    with pytest.raises(GameError) as info:
        jaxcfr.lower(small)
    err = info.value
    assert err.rule == "abstraction-game" and f"has the action {action}" in str(err), str(err)
    assert "use bet_menu on nolimit_leduc" in str(err) and "invalid literal" not in str(err)


def test_subgames_named_where_there_is_none_say_so(tmp_path, capsys):
    saved = jaxcfr.solve("kuhn_poker", "cfr+", 5).profile.save(tmp_path / "p.npz")
    status, _, err = _run(capsys, "resolve", "kuhn_poker", str(saved), "--at-depth", "999",
                          "--iterations", "2")
    assert status == 2 and "no public state at depth 999 of kuhn_poker" in err, err
    assert "its decisions lie at depths 2, 3, 4" in err and "chance node" not in err
    status, _, err = _run(capsys, "resolve", "kuhn_poker", str(saved), "--after-chance", "7",
                          "--iterations", "2")
    assert status == 2 and "right after chance event 7" in err, err
    assert "public states start after chance events 2" in err and "chance node" not in err


# -- issue 33, item 3: mistakes answered before JAX is imported ----------------------------
MISTAKES = [
    (["validate", "kuhn_poker", "--trajectories", "x"], "invalid int value"),
    (["games", "--jsn"], "unrecognized arguments"),
    (["inspect"], "required: game"),
    (["slove", "kuhn_poker"], "invalid choice"),
    (["train", "missing.toml"], "no config file missing.toml"),
    (["train", "--resume", "missing-run"], "no run directory missing-run"),
    (["train", "--resume", "."], "is not a run directory"),
    (["train", "c.toml", "--out", "a", "--resume", "b"], "exclude each other"),
    (["eval", "missing.npz"], "no profile missing.npz"),
    (["eval", "missing.npz", "--precision", "float16"], "invalid choice"),
    (["abstract", "kuhn_poker"], "give at least one --abstraction"),
    (["abstract", "kuhn_poker", "--abstraction", "identity", "--iterations", "0"],
     "--iterations must be a positive integer"),
    (["estimate", "kuhn_poker", "--samples", "1"], "--samples must be at least 2"),
    (["estimate", "kuhn_poker", "--confidence", "1.5"], "--confidence must be in (0, 1)"),
    (["estimate", "kuhn_poker", "--train-samples", "0"], "--train-samples must be a positive"),
    (["estimate", "kuhn_poker", "missing.npz"], "no profile missing.npz"),
    (["estimate", "kuhn_poker", "--method", "x"], "invalid choice"),
    (["resolve", "kuhn_poker", "p.npz", "--at", "0", "--iterations", "0"],
     "--iterations must be a positive integer"),
    (["resolve", "kuhn_poker", "p.npz", "--at", "0", "--algorithm", "cfrr"],
     "unknown --algorithm 'cfrr'"),
    (["resolve", "kuhn_poker", "p.npz", "--at", "0", "--gadget", "x"], "invalid choice"),
    (["resolve", "kuhn_poker", "missing.npz", "--at", "0"], "no profile missing.npz"),
    (["plot", "missing-run"], "no run directory missing-run"),
    (["plot", "missing.npz", "--strategy", "0|??|"], "no profile missing.npz"),
    (["plot", ".", "--strategy", "*"], ". has no saved profile"),
    (["plot", "missing-run", "--player", "0"], "--player selects the rows of --strategy"),
    (["plot", "a.npz", "--strategy", "*", "--max-rows", "0"], "--max-rows must be a positive"),
    (["solve", "kuhn_poker", "--iterations", "0"], "--iterations must be a positive integer"),
    (["solve", "kuhn_poker", "--algorithm", "cfrr"], "unknown --algorithm 'cfrr'"),
    (["solve", "kuhn_poker", "--alpah", "1.5"], "unrecognized arguments: --alpah"),
    (["solve", "kuhn_poker", "--alpha", "x"], "argument --alpha: expected a number"),
    (["solve", "kuhn_poker", "--draws", "0"], "--draws must be a positive integer"),
    (["solve", "kuhn_poker", "--eval-every", "0"], "--eval-every must be a positive integer"),
    (["solve", "kuhn_poker", "--sampling", "bogus"], "invalid choice"),
    (["solve", "kuhn_poker", "--eval-every", "10", "--target", "0"],
     "--target must be positive, got 0"),
    (["solve", "kuhn_poker", "--eval-every", "10", "--target", "nan"],
     "--target must be a finite number, got nan"),
    (["solve", "kuhn_poker", "--eval-every", "10", "--target", "low"],
     "--target must be a finite number, got 'low'"),
    (["solve", "kuhn_poker", "--target", "0.01"],
     "--target is checked at evaluations, and there are none before the last iteration: "
     "give --eval-every too"),
    # the parameters' names and values, by the rules the parts declare (solvers/names.py)
    (["solve", "leduc_poker", "--alpha", "-1"],
     "cfr+ takes no parameter --alpha; it takes --gamma, --seed"),
    (["solve", "kuhn_poker", "--algorithm", "hs-pcfr+", "--horizon", "0"],
     "--horizon must be positive, got 0"),
    (["solve", "kuhn_poker", "--sampling", "outcome", "--exploration", "1.5"],
     "--exploration must be in (0, 1], got 1.5"),
    (["solve", "kuhn_poker", "--sampling", "external", "--samples", "4", "--exploration", "0.5"],
     "cfr+ with external x4 takes no parameter --exploration; it takes --gamma, --seed"),
    (["solve", "kuhn_poker", "--algorithm", "dcfr", "--alpha", "1,nan"],
     "--alpha must be a finite number, got nan"),
    (["solve", "kuhn_poker", "--seed", "-1"], "--seed must be an integer from 0"),
    (["solve", "kuhn_poker", "--seed", "1,2.5"], "--seed must be an integer from 0"),
]


def test_mistakes_are_answered_before_jax_is_imported(tmp_path):
    """Each mistake in a fresh interpreter: its one line and status 2, and JAX not imported
    (the CPU time it saves is measured by benchmarks/mistake_bench.py, not asserted here)."""
    assert_answered_before_jax(MISTAKES, tmp_path)


# -- issue 33, item 8 ------------------------------------------------------------------------
@pytest.mark.parametrize("program", ["mccfr_bench", "sampled_chance_bench"])
def test_the_benchmarks_write_into_docs_only_when_asked(program, monkeypatch):
    import importlib.util
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))     # (its helper package: benchkit)
    spec = importlib.util.spec_from_file_location(program, ROOT / "benchmarks" / f"{program}.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = Path(bench.build_parser().parse_args([]).out)
    assert "docs" not in out.parts and out == Path("runs") / program
    assert Path(bench.build_parser().parse_args(["--out", "docs"]).out) == Path("docs")


@pytest.mark.parametrize("full_game", [None, [0.01, 0.02, 0.03, 0.04]], ids=["run", "abstraction"])
def test_the_convergence_plot_keeps_its_axes_with_long_labels(full_game):
    """Labels of about 115 characters (a game string with an abstraction and a setting) went
    into a legend inside the axes, which pushed the axes off the figure: wrapped, and below
    the axes, the figure taller; short labels stay inside."""
    pytest.importorskip("matplotlib")
    from jaxcfr.runs.plot import LEGEND_WIDTH, convergence_figure
    labels = [f"leduc_poker(ranks=13, suits=4) | bet_menu(fractions=[0.25, 0.5, 0.75, 1.0, "
              f"1.5, 2.0]) + rank_buckets(buckets=8), alpha=1.{j}" for j in range(4)]
    assert min(map(len, labels)) >= 115
    metrics = [{"iteration": i, "metric": [(j + 1) / i for j in range(4)],
                "metric_name": "exploitability", "members": labels} for i in (1, 10, 100)]
    fig = convergence_figure(metrics, members=labels, full_game=full_game)
    fig.canvas.draw()
    ax = fig.axes[0]
    box = ax.get_position()                                   # figure fractions
    assert 0 <= box.x0 and box.x1 <= 1 and box.width > 0.7 and 0 < box.y0 and box.y1 <= 1
    axes_inches = box.height * fig.get_size_inches()[1]
    assert axes_inches > 2.5                                  # the axes kept their height
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert all(len(line) <= LEGEND_WIDTH for t in texts for line in t.split("\n"))
    if full_game is None:                                     # wrapped at blanks: the same
        assert [t.replace("\n", " ") for t in texts] == labels
    legend = ax.get_legend().get_window_extent()
    figure = fig.bbox
    assert legend.x0 >= figure.x0 and legend.x1 <= figure.x1      # within the figure's width
    assert legend.y1 <= ax.get_window_extent().y0                 # below the axes
    short = convergence_figure(metrics, members=["a", "b", "c", "d"])
    short.canvas.draw()
    inside = short.axes[0].get_legend().get_window_extent()
    assert short.axes[0].get_window_extent().contains(inside.x0 + 1, inside.y0 + 1)


def test_misspelt_config_keys_are_answered_before_jax_is_imported(tmp_path):
    """A key no config takes, or a solver parameter the algorithm does not take or whose
    value its rule refuses, in the file or in a --set, is refused with the config's own
    message (jaxcfr.runs.schema, JAX-free), and JAX is not imported."""
    (tmp_path / "typo.toml").write_text('[game]\nname = "kuhn_poker"\n[solver]\nalpah = 1.5\n')
    (tmp_path / "top.toml").write_text('[gmae]\nname = "kuhn_poker"\n')
    (tmp_path / "ok.toml").write_text('[game]\nname = "kuhn_poker"\n')
    cases = [(["train", "typo.toml"], "typo.toml: unknown key solver.alpah (did you mean "
                                      "solver.alpha?); the keys of [solver] are algorithm"),
             (["train", "top.toml"], "top.toml: unknown key 'gmae' (did you mean game?)"),
             (["train", "ok.toml", "--set", "solver.iteratons=5"],
              "--set solver.iteratons=5: unknown key solver.iteratons (did you mean "
              "solver.iterations?)"),
             (["train", "ok.toml", "--set", "solvr.iterations=5"], "unknown key "
              "'solvr.iterations' (did you mean solver.iterations?)"),
             # the solver's parameters' names and values, by their declared rules
             (["train", "alpha.toml"], "alpha.toml: cfr+ takes no parameter solver.alpha; it "
                                       "takes solver.gamma"),
             (["train", "horizon.toml"], "horizon.toml: solver.horizon must be positive, got "
                                         "0.0"),
             (["train", "ok.toml", "--set", 'solver.sampling="outcome"', "--set",
               "solver.exploration=2"], "--set solver.exploration=2: solver.exploration must "
                                        "be in (0, 1], got 2.0"),
             (["train", "ok.toml", "--set", "solver.algorithm=dcfr", "--set",
               "solver.alpha=[1, nan]"], "--set solver.alpha=[1, nan]: solver.alpha must be a "
                                         "finite number, got nan")]
    (tmp_path / "alpha.toml").write_text('[game]\nname = "kuhn_poker"\n[solver]\nalpha = 1.5\n')
    (tmp_path / "horizon.toml").write_text('[game]\nname = "kuhn_poker"\n[solver]\n'
                                           'algorithm = "hs-pcfr+"\nhorizon = [10, 0]\n')
    code = ("import json, sys\nfrom jaxcfr.cli.app import main\nout = []\n"
            "for argv in json.loads(sys.argv[1]):\n"
            "    out.append([main(argv), 'jax' in sys.modules])\n"
            "print(json.dumps(out))\n")
    done = subprocess.run([sys.executable, "-c", code, json.dumps([a for a, _ in cases])],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for (argv, words), (status, jax) in zip(cases, results):
        assert status == 2 and words in done.stderr, (argv, done.stderr)
        assert not jax, f"{argv} imported JAX"
    # the same keys and values, read after JAX by the config's own rules, give the same
    # messages
    from jaxcfr.runs import ConfigError, load_config
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "typo.toml")
    message = str(info.value).split("typo.toml: ", 1)[1]
    assert f"typo.toml: {message}" in done.stderr
    for argv, words in cases[4:]:
        overrides = [a for a in argv[2:] if a != "--set"]
        with pytest.raises(ConfigError) as info:
            load_config(tmp_path / argv[1], overrides)
        assert str(info.value).endswith(words), (argv, str(info.value))


def test_a_config_nested_too_deeply_is_one_error_not_a_recursion(tmp_path, capsys):
    """TOML nested past Python's recursion limit (a file, a --set value) is one line naming
    the file or the --set, status 2 (2026-12-06: an internal RecursionError)."""
    from jaxcfr.runs import ConfigError, config_from_dict, load_config
    deep = "[" * 100_000 + "]" * 100_000
    path = tmp_path / "deep.toml"
    path.write_text(f'[game]\nname = "kuhn_poker"\n[solver]\nalpha = {deep}\n')
    with pytest.raises(ConfigError, match=f"^{path}: invalid TOML: lists or tables nested"):
        load_config(path)
    status, _, err = _run(capsys, "train", str(path), "--quiet")
    assert status == 2 and f"jaxcfr: error: {path}: invalid TOML: lists or tables" in err
    with pytest.raises(ConfigError, match="^--set solver.alpha=.*nests lists or tables too"):
        config_from_dict({"game": {"name": "kuhn_poker"}}, overrides=[f"solver.alpha={deep}"])
    (tmp_path / "c.toml").write_text('[game]\nname = "kuhn_poker"\n')
    status, _, err = _run(capsys, "train", str(tmp_path / "c.toml"), "--set",
                          f"solver.alpha={deep}")
    assert status == 2 and "nests lists or tables too deeply" in err
    assert "Traceback" not in err and "RecursionError" not in err


# -- files that never end: a device or a pipe where a file is named -------------------------
ZERO = Path("/dev/zero")
needs_zero = pytest.mark.skipif(not ZERO.exists(), reason="needs /dev/zero")


@needs_zero
def test_a_stream_is_read_only_up_to_its_limit(tmp_path):
    from jaxcfr._util.reading import FileTooLarge, read_bytes
    (tmp_path / "f").write_bytes(b"x" * 100)
    assert read_bytes(tmp_path / "f", limit=10) == b"x" * 100   # a regular file: whole
    with pytest.raises(FileTooLarge, match="goes on past 1,000 bytes") as info:
        read_bytes(ZERO, limit=1000)
    assert info.value.filename == str(ZERO)


@needs_zero
def test_a_lock_file_or_efg_file_that_never_ends_is_one_error(tmp_path, capsys):
    # --lock /dev/zero (or a run directory's lock.json, an .efg linked to it) was read
    # until the process was killed for memory (status 137)
    status, _, err = _run(capsys, "solve", "kuhn_poker", "--iterations", "3", "--lock",
                          str(ZERO))
    assert status == 2 and err.strip() == (
        "jaxcfr: error: cannot read the lock file '/dev/zero': not a regular file, and it "
        "goes on past 67,108,864 bytes (a device or a stream?)")
    (tmp_path / "game.efg").symlink_to(ZERO)
    with pytest.raises(GameError, match="cannot read .*game.efg: not a regular file") as info:
        jaxcfr.efg.load(tmp_path / "game.efg")
    assert info.value.rule == "efg-file"


@needs_zero
def test_a_run_directorys_files_that_never_end_are_refused_or_skipped(tmp_path):
    from jaxcfr.runs import RunDir, checkpoint
    from jaxcfr._util.reading import FileTooLarge
    folder = tmp_path / "checkpoints"
    for it in (20, 40):
        checkpoint.save(folder, {"regret": np.full(3, float(it))}, iteration=it,
                        fingerprint="f")
    (folder / "ckpt-0000000040.npz").unlink()
    (folder / "ckpt-0000000040.npz").symlink_to(ZERO)         # the newest: skipped, said
    said = []
    assert checkpoint.load_latest(folder, fingerprint="f", warn=said.append).iteration == 20
    assert len(said) == 1 and "ckpt-0000000040.npz is unreadable: not a regular file" in said[0]
    (folder / "ckpt-0000000020.json").unlink()
    (folder / "ckpt-0000000020.json").symlink_to(ZERO)        # a sidecar: likewise
    with pytest.raises(checkpoint.CheckpointError, match="no valid checkpoint"):
        checkpoint.load_latest(folder, fingerprint="f")
    (tmp_path / "metrics.jsonl").symlink_to(ZERO)
    with pytest.raises(FileTooLarge):
        RunDir(tmp_path).read_metrics()


def test_eval_of_a_holdem_spot_gives_the_exploitability_in_percent_of_the_pot(tmp_path,
                                                                              capsys):
    """``jaxcfr eval`` of a hold'em spot, as ``solve`` and ``train``: the exploitability in
    percent of the pot too (text and JSON); rounding noise about 0 is ``0.0000%``."""
    pytest.importorskip("phevaluator")
    from jaxcfr.runs.progress import format_metric, pot_percent
    assert pot_percent(-1e-9, 100) == pot_percent(0.0, 50) == "0.0000%"
    assert pot_percent(-0.5, 200) == "-0.2500%" and pot_percent(1, 80) == "1.2500%"
    assert format_metric({"metric": -1e-9, "metric_name": "exploitability"}, 100) == \
        "exploitability -1.000e-09 (0.0000% of the pot)"
    spot = ("holdem_spot(board='Td9d6h5c2s', ranges=('AA,KK', 'QQ,JJ'), pot=80, stack=200, "
            "bets='60%', raises='')")
    lowered = jaxcfr.lower_public(jaxcfr.load_game(spot))
    legal = np.asarray(lowered.tensors.legal_mask, np.float64)           # [I, A]: uniform
    profile = jaxcfr.Profile.from_lowered(lowered, legal / np.maximum(
        legal.sum(axis=1, keepdims=True), 1))
    profile.game = spot
    profile.save(tmp_path / "uniform")
    status, out, _ = _run(capsys, "eval", str(tmp_path / "uniform.npz"), "--json")
    got = json.loads(out)
    assert status == 0 and got["pot"] == 80
    assert got["exploitability_pot_percent"] == pytest.approx(100 * got["exploitability"] / 80)
    status, out, _ = _run(capsys, "eval", str(tmp_path / "uniform.npz"))
    line = next(x for x in out.splitlines() if x.startswith("exploitability"))
    assert status == 0 and line.endswith(
        f"({pot_percent(got['exploitability'], 80)} of the pot 80)"), line
