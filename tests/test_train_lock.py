"""Node locking in ``jaxcfr train`` configs (issue 31, item 5): ``solver.lock`` names the lock
file ``jaxcfr solve --lock`` reads (relative to the config), the runner plays it, the run
directory keeps a copy, the profile keeps the locked rows' strategy, a resume is bit for bit
and a checkpoint resumes only under the same lock. Kuhn poker with CFR+ and chunk 16, as
tests/test_train.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import jaxcfr
from jaxcfr.runs import CheckpointError, ConfigError, RunDir, load_config, train
from jaxcfr.runs import checkpoint

try:
    from tests.cfr_cases import KUHN_P0
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cfr_cases import KUHN_P0

#: A strategy of player 0 far from any equilibrium: always bet the jack.
BLUFF = {"0|0|": {"bet": 1.0}}

CONFIG = """
[game]
name = "kuhn_poker"

[solver]
algorithm = "cfr+"
iterations = 120
lock = "locks/p0.json"

[run]
eval_every = 40
checkpoint_every = 40
chunk = 16
quiet = true
plot = false
"""


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cfg")
    (folder / "locks").mkdir()
    (folder / "locks" / "p0.json").write_text(
        json.dumps([{"infoset": k, "strategy": v} for k, v in KUHN_P0.items()]))
    (folder / "locks" / "bluff.json").write_text(json.dumps(BLUFF))
    path = folder / "kuhn_locked.toml"
    path.write_text(CONFIG)
    return path


@pytest.fixture(scope="module")
def locked_run(config_path, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "locked"
    return train(load_config(config_path), out_dir=str(out))


def test_the_lock_path_is_relative_to_the_config(config_path):
    config = load_config(config_path)
    assert Path(config.solver.lock) == config_path.parent / "locks" / "p0.json"


def test_a_locked_run_keeps_the_locked_rows_and_records_the_lock(locked_run, config_path):
    run = RunDir(locked_run.run_dir)
    profile = jaxcfr.Profile.load(run.profile)
    for key, strategy in KUHN_P0.items():
        row = profile.keys.index((0, key))
        for action, p in strategy.items():
            a = profile.actions[row].index(action)
            assert profile.probs[row, a] == pytest.approx(p, abs=1e-6), (key, action)
    # player 0 plays an equilibrium strategy: the value is the game's, -1/18
    assert locked_run.final["values"][0] == pytest.approx(-1 / 18, abs=5e-3)
    # the lock travels with the run: a copy, named by the run's own config
    assert json.loads(run.lock_file.read_text()) == \
        json.loads((config_path.parent / "locks" / "p0.json").read_text())
    own = load_config(run.config)
    assert Path(own.solver.lock) == run.lock_file.resolve()
    meta = checkpoint.load_latest(run.checkpoints).meta
    assert isinstance(meta["lock"], str) and len(meta["lock"]) == 64


def _final(run_dir):
    return checkpoint.load_latest(Path(run_dir) / "checkpoints").arrays


def test_a_locked_run_resumes_bit_for_bit(locked_run, config_path, tmp_path):
    short = tmp_path / "short"
    train(load_config(config_path, ["solver.iterations=40"]), out_dir=str(short))
    more = train(load_config(short / "config.toml", ["solver.iterations=120"]),
                 resume=str(short))
    assert more.resumed_from == 40 and more.iteration == 120
    a, b = _final(locked_run.run_dir), _final(short)
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k
    pa = jaxcfr.Profile.load(Path(locked_run.run_dir) / "profile.npz")
    pb = jaxcfr.Profile.load(short / "profile.npz")
    assert pa.keys == pb.keys and pa.probs.tobytes() == pb.probs.tobytes()


def test_a_resume_under_another_lock_is_refused(locked_run, config_path):
    run = locked_run.run_dir
    unlocked = load_config(config_path)
    unlocked = unlocked.replace(solver=type(unlocked.solver)(algorithm="cfr+",
                                                             iterations=120))
    with pytest.raises(CheckpointError, match="a node lock"):
        train(unlocked, resume=str(run))
    other = load_config(config_path, [f"solver.lock={config_path.parent / 'locks' / 'bluff.json'}"])
    with pytest.raises(CheckpointError, match="another node lock"):
        train(other, resume=str(run))


def test_a_lock_on_an_unlocked_run_is_refused(config_path, tmp_path):
    free = tmp_path / "free"
    base = load_config(config_path, ["solver.iterations=16"])
    train(base.replace(solver=type(base.solver)(algorithm="cfr+", iterations=16)),
          out_dir=str(free))
    with pytest.raises(CheckpointError, match="no node lock"):
        train(load_config(config_path, ["solver.iterations=32"]), resume=str(free))


@pytest.mark.parametrize("override, words", [
    ("solver.lock=missing.json", "cannot read the lock file"),
    ("solver.sampling=outcome", "node locking needs a full-width estimator"),
])
def test_bad_locks_in_a_config(config_path, override, words):
    with pytest.raises(ConfigError, match="solver.lock") as e:
        load_config(config_path, [override])
    assert words in str(e.value)


def test_a_lock_naming_no_row_of_the_game_is_refused(config_path, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"9|9|": {"bet": 1.0}}))
    with pytest.raises(ValueError, match=re.escape("9|9|")):
        train(load_config(config_path, [f"solver.lock={bad}"]), out_dir=str(tmp_path / "r"))


SPOT = ("holdem_spot(board='Td9d6h5c2s', ranges=('AA,KK,QQ,AKs', 'JJ,TT,AQs,KQs'), pot=100, "
        "stack=200, bets='60%, a')")


@pytest.mark.slow
def test_a_locked_holdem_run_keeps_its_node_and_resumes_bit_for_bit(tmp_path):
    """A public tree: OOP's aces locked to check at the root (a hand class of the grid); the
    profile keeps it, the other hands are solved, and a resume is bit for bit."""
    pytest.importorskip("phevaluator")
    (tmp_path / "aa.json").write_text(json.dumps(
        [{"history": [], "hand": "AA", "strategy": {"Check": 1}}]))
    (tmp_path / "river.toml").write_text(
        f'[game]\nname = "{SPOT}"\n[solver]\nalgorithm = "postflop-dcfr"\niterations = 40\n'
        f'lock = "aa.json"\n[run]\neval_every = 20\ncheckpoint_every = 20\nchunk = 10\n'
        f'quiet = true\nplot = false\n')
    config = tmp_path / "river.toml"
    direct = train(load_config(config), out_dir=str(tmp_path / "direct"))
    profile = jaxcfr.Profile.load(Path(direct.run_dir) / "profile.npz")
    root = [(r, k[1][0]) for r, k in enumerate(profile.keys) if k[0] == 0 and k[1][1] == ()]
    aces = [r for r, hand in root if hand[0] == "A" and hand[2] == "A"]
    assert len(aces) == 6                                   # the six combinations of AA
    check = profile.actions[aces[0]].index("Check")
    for r in aces:
        assert profile.probs[r, check] == pytest.approx(1.0, abs=1e-6)
    kings = [r for r, hand in root if hand[0] == "K" and hand[2] == "K"]
    assert max(profile.probs[r, check] for r in kings) < 1 - 1e-3     # solved, not locked
    short = tmp_path / "short"
    train(load_config(config, ["solver.iterations=20"]), out_dir=str(short))
    more = train(load_config(short / "config.toml", ["solver.iterations=40"]),
                 resume=str(short))
    assert more.resumed_from == 20
    a, b = _final(direct.run_dir), _final(short)
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k
    assert jaxcfr.Profile.load(short / "profile.npz").probs.tobytes() == profile.probs.tobytes()


def test_a_lock_given_as_a_pipe_is_read_once(config_path, tmp_path):
    """``solver.lock = "/dev/fd/N"`` (a shell's ``<(...)``, ``/dev/stdin``): a pipe reads
    once, so the run reads the lock once (config check, runner, digest and the run
    directory's copy all from that one read), as ``jaxcfr solve --lock`` does."""
    text = json.dumps([{"infoset": k, "strategy": v} for k, v in KUHN_P0.items()])
    r, w = os.pipe()
    try:
        os.write(w, text.encode())
        os.close(w)
        config = load_config(config_path, [f"solver.lock=/dev/fd/{r}",
                                           "solver.iterations=16"])
        done = train(config, out_dir=str(tmp_path / "piped"))
    finally:
        os.close(r)
    run = RunDir(done.run_dir)
    assert json.loads(run.lock_file.read_text()) == json.loads(text)
    assert checkpoint.load_latest(run.checkpoints).meta["lock"] is not None
