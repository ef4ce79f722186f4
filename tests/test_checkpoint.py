"""Checkpoints: atomic .npz + sidecar pairs, verified on load, fall back past corrupt ones."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.atomic import atomic_write_text
from jaxcfr.runs import checkpoint
from jaxcfr.runs.checkpoint import CheckpointCorruptError, CheckpointError

FP = "ab" * 32


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return {"regret": rng.normal(size=(5, 3)).astype(np.float32),
            "strategy_sum": rng.random((5, 3)).astype(np.float32),
            "iteration": np.asarray(seed, np.int32)}


def _save(d, it, **kw):
    return checkpoint.save(d, _arrays(it), iteration=it, fingerprint=FP,
                           config={"game": {"name": "kuhn_poker"}}, **kw)


def test_round_trip_and_layout(tmp_path):
    path = _save(tmp_path, 7, extra={"wall_seconds": 1.5})
    assert path.name == "ckpt-0000000007.npz"
    assert (tmp_path / "latest").read_text().strip() == "ckpt-0000000007"
    ck = checkpoint.load(path, fingerprint=FP)
    assert ck.iteration == 7 and ck.meta["wall_seconds"] == 1.5
    assert ck.meta["version"] == checkpoint.FORMAT_VERSION
    assert ck.meta["config"]["game"]["name"] == "kuhn_poker"
    for k, v in _arrays(7).items():
        np.testing.assert_array_equal(ck.arrays[k], v)
        assert ck.arrays[k].dtype == v.dtype
    # the .json path and the stem load too
    assert checkpoint.load(tmp_path / "ckpt-0000000007.json").iteration == 7
    assert checkpoint.load(tmp_path / "ckpt-0000000007").iteration == 7
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_keeps_the_last_k(tmp_path):
    for it in (10, 20, 30, 40, 50):
        _save(tmp_path, it, keep=3)
    assert [i for i, _ in checkpoint.list_checkpoints(tmp_path)] == [30, 40, 50]
    assert sorted(p.name for p in tmp_path.glob("*.npz")) == [
        f"ckpt-00000000{i}.npz" for i in (30, 40, 50)]
    assert checkpoint.load_latest(tmp_path).iteration == 50


def test_corrupted_data_is_rejected(tmp_path):
    path = _save(tmp_path, 3)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointCorruptError, match="corrupted"):
        checkpoint.load(path)


def test_truncated_files_are_rejected(tmp_path):
    path = _save(tmp_path, 3)
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(CheckpointCorruptError):
        checkpoint.load(path)
    path = _save(tmp_path, 4)
    sidecar = path.with_suffix(".json")
    sidecar.write_text(sidecar.read_text()[:30])
    with pytest.raises(CheckpointCorruptError, match="unreadable"):
        checkpoint.load(path)


def test_another_version_is_rejected(tmp_path):
    path = _save(tmp_path, 3)
    sidecar = path.with_suffix(".json")
    meta = json.loads(sidecar.read_text())
    meta["version"] = checkpoint.FORMAT_VERSION + 1
    sidecar.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="version") as info:
        checkpoint.load(path)
    assert not isinstance(info.value, CheckpointCorruptError)
    with pytest.raises(CheckpointError, match="version"):      # no silent fallback
        checkpoint.load_latest(tmp_path)


def test_another_game_is_rejected(tmp_path):
    path = _save(tmp_path, 3)
    with pytest.raises(CheckpointError, match="another game") as info:
        checkpoint.load(path, fingerprint="cd" * 32)
    assert "kuhn_poker" in str(info.value)
    # the config resuming given: the [game] keys that differ are named; where none does
    # (a key absent is its default), the game itself lowers otherwise now (jaxcfr changed)
    with pytest.raises(CheckpointError, match=r"another game: game.name \('kuhn_poker' in the "
                                              r"checkpoint, 'leduc_poker' now\); resume with"):
        checkpoint.load(path, fingerprint="cd" * 32, game={"name": "leduc_poker"})
    with pytest.raises(CheckpointError, match="where the config is the same, the game now "
                                              "lowers to other tensors"):
        checkpoint.load(path, fingerprint="cd" * 32, game={"name": "kuhn_poker", "cache": True})


def test_fingerprint_identifies_the_lowered_game():
    a = checkpoint.fingerprint(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")))
    b = checkpoint.fingerprint(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")))
    c = checkpoint.fingerprint(jaxcfr.lower(jaxcfr.load_game("kuhn_poker(players=3)")))
    d = checkpoint.fingerprint(jaxcfr.lower(jaxcfr.load_game("kuhn_poker"), sort_infosets=False))
    assert a == b and len(a) == 64
    assert len({a, c, d}) == 3


def test_latest_falls_back_past_a_corrupt_newest(tmp_path):
    _save(tmp_path, 10)
    newest = _save(tmp_path, 20)
    newest.write_bytes(b"garbage")
    warnings = []
    ck = checkpoint.load_latest(tmp_path, warn=warnings.append)
    assert ck.iteration == 10
    assert warnings and "ckpt-0000000020" in warnings[0]
    (tmp_path / "ckpt-0000000010.npz").write_bytes(b"garbage")
    with pytest.raises(CheckpointCorruptError, match="no valid checkpoint"):
        checkpoint.load_latest(tmp_path)


def test_no_checkpoint_is_none(tmp_path):
    assert checkpoint.load_latest(tmp_path) is None
    assert checkpoint.load_latest(tmp_path / "missing") is None


def test_a_torn_pair_is_detected(tmp_path):
    """New data under an old sidecar (a crash between the two renames) does not load."""
    path = _save(tmp_path, 10)
    other = tmp_path / "other"
    new = checkpoint.save(other, _arrays(99), iteration=10, fingerprint=FP)
    os.replace(new, path)
    with pytest.raises(CheckpointCorruptError, match="does not match its sidecar"):
        checkpoint.load(path)


@pytest.mark.parametrize("crash_on", ["npz", "json", "latest"])
def test_a_crash_mid_write_leaves_the_previous_checkpoint_loadable(tmp_path, monkeypatch,
                                                                   crash_on):
    _save(tmp_path, 10)
    real_replace = os.replace

    def crashing_replace(src, dst):
        name = Path(dst).name
        if (crash_on == "latest" and name == "latest") or name == f"ckpt-0000000020.{crash_on}":
            raise OSError("simulated crash (disk full)")
        return real_replace(src, dst)

    monkeypatch.setattr(checkpoint.os, "replace", crashing_replace)
    with pytest.raises(OSError, match="simulated crash"):
        _save(tmp_path, 20)
    monkeypatch.setattr(checkpoint.os, "replace", real_replace)
    ck = checkpoint.load_latest(tmp_path)
    # a crash before the sidecar lands leaves checkpoint 10 the newest; a crash after it
    # (only the pointer missing) leaves a complete, verified checkpoint 20
    assert ck.iteration == (20 if crash_on == "latest" else 10)
    np.testing.assert_array_equal(ck.arrays["regret"], _arrays(ck.iteration)["regret"])
    assert not list(tmp_path.glob(".*.tmp"))      # the temp file was removed
    assert checkpoint.load(tmp_path / "ckpt-0000000010").iteration == 10


def test_atomic_write_replaces_whole_files(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_a_format_2_checkpoint_resumes_with_a_zero_compensation(tmp_path, monkeypatch):
    """Format 2 had no ``strategy_error``: it is read as a zero compensation (exactly the
    state it was), restores into a runner and goes on like the uninterrupted run."""
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=16)
    state = runner.advance(runner.init(), 40)
    # (format 2 kept every table but the compensation: a zero prediction under CFR+)
    old = dict({k: np.asarray(v) for k, v in state.arrays().items() if k != "strategy_error"},
               prediction=np.zeros_like(np.asarray(state.regret)))
    with monkeypatch.context() as m:
        m.setattr(checkpoint, "FORMAT_VERSION", 2)
        path = checkpoint.save(tmp_path, old, iteration=40, fingerprint=runner.fingerprint())
    assert json.loads(path.with_suffix(".json").read_text())["version"] == 2
    ck = checkpoint.load(path, fingerprint=runner.fingerprint())
    assert ck.meta["version"] == checkpoint.FORMAT_VERSION and ck.meta["upgraded_from"] == 2
    assert set(ck.arrays) == set(jaxcfr.SolverState._fields)
    np.testing.assert_array_equal(ck.arrays["strategy_error"], 0)
    assert ck.arrays["strategy_error"].dtype == ck.arrays["strategy_sum"].dtype
    resumed = runner.advance(runner.restore(ck.arrays), 40)
    straight = runner.advance(runner.init(), 80)
    np.testing.assert_allclose(runner.profile(resumed), runner.profile(straight), atol=1e-6)


def test_format_1_is_refused_naming_the_readable_versions(tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(checkpoint, "FORMAT_VERSION", 1)
        path = _save(tmp_path, 5)
    with pytest.raises(CheckpointError, match="reads versions 2, 3, 4, 5 only"):
        checkpoint.load(path)
