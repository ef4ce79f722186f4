"""Training runs end to end: artefacts, bit-for-bit resume, Ctrl-C, progress, the CLI.

Every run here is Kuhn poker with CFR+ and chunk 16, so the whole file shares one
compiled chunk and one compiled evaluation (plus one for the batched run).
"""

import io
import json
import os
import re
import runpy
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import jaxcfr
from jaxcfr.cli.app import main as cli_main
from jaxcfr.runs import CheckpointError, RunDir, load_config, train
from jaxcfr.runs import checkpoint
from jaxcfr.runs.progress import LogLines, ProgressBar, make_progress

ROOT = Path(__file__).resolve().parent.parent
KUHN = """
[game]
name = "kuhn_poker"
[solver]
algorithm = "cfr+"
iterations = 120
[run]
eval_every = 20
checkpoint_every = 40
chunk = 16
quiet = true
"""
TIMING = ("iterations_per_second", "compile_seconds", "wall_seconds")


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "kuhn_test.toml"
    path.write_text(KUHN)
    return path


@pytest.fixture(scope="module")
def full_run(config_path, tmp_path_factory):
    """An uninterrupted 120-iteration run: the reference for the resume tests."""
    out = tmp_path_factory.mktemp("runs") / "full"
    seen = []
    result = train(load_config(config_path), out_dir=str(out),
                   progress=lambda it, m: seen.append((it, m is not None)))
    return result, seen


def _final_arrays(run_dir):
    return checkpoint.load_latest(Path(run_dir) / "checkpoints").arrays


def _strip(records):
    return [{k: v for k, v in r.items() if k not in TIMING} for r in records]


def _assert_same_run(a, b):
    """Bit-for-bit equal final state, profile and metrics (timings aside)."""
    fa, fb = _final_arrays(a), _final_arrays(b)
    assert fa.keys() == fb.keys()
    for k in fa:
        assert fa[k].dtype == fb[k].dtype
        assert fa[k].tobytes() == fb[k].tobytes(), k
    pa = jaxcfr.Profile.load(Path(a) / "profile.npz")
    pb = jaxcfr.Profile.load(Path(b) / "profile.npz")
    assert pa.keys == pb.keys and pa.probs.tobytes() == pb.probs.tobytes()
    assert _strip(RunDir(a).read_metrics()) == _strip(RunDir(b).read_metrics())


def test_a_run_writes_every_artefact(full_run, config_path):
    result, seen = full_run
    run = RunDir(result.run_dir)
    assert result.iteration == 120 and not result.interrupted and result.resumed_from is None
    # resolved config reads back, pointing at its own directory
    config = load_config(run.config)
    assert config.solver == load_config(config_path).solver
    assert Path(config.run.out_dir) == run.path.resolve()
    # one metrics line per evaluation, with the documented fields
    lines = run.metrics.read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert [r["iteration"] for r in records] == [20, 40, 60, 80, 100, 120]
    for r in records:
        assert set(r) >= {"iteration", "exploitability", "nash_conv", "metric", "metric_name",
                          "values", "iterations_per_second", "compile_seconds", "wall_seconds"}
        assert r["metric_name"] == "exploitability" and len(r["values"]) == 2
        assert r["compile_seconds"] > 0 and r["wall_seconds"] > 0
    assert records[-1]["exploitability"] < records[0]["exploitability"]
    assert records[-1]["exploitability"] < 5e-3
    assert abs(records[-1]["values"][0] + 1 / 18) < 5e-3
    assert result.final == records[-1]
    # checkpoints at 40, 80 and the end; the newest 3 kept
    assert [i for i, _ in checkpoint.list_checkpoints(run.checkpoints)] == [40, 80, 120]
    assert (run.checkpoints / "latest").read_text().strip() == "ckpt-0000000120"
    # the profile and the plot
    profile = jaxcfr.Profile.load(run.profile)
    assert len(profile) == 12 and profile.game == "kuhn_poker"
    np.testing.assert_allclose(profile.probs, result.profiles[0].probs)
    assert run.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # progress: after every chunk (None) and every evaluation (the record)
    assert [it for it, is_eval in seen if is_eval] == [20, 40, 60, 80, 100, 120]
    assert (16, False) in seen


def test_out_dir_holding_a_run_is_refused(full_run, config_path):
    with pytest.raises(FileExistsError, match="--resume"):
        train(load_config(config_path), out_dir=str(full_run[0].run_dir))


def test_interrupted_by_the_progress_callback_then_resumed_is_bit_for_bit(
        full_run, config_path, tmp_path):
    def stop_at_60(it, metrics):
        if metrics is not None and it == 60:
            raise KeyboardInterrupt

    out = tmp_path / "run"
    first = train(load_config(config_path), out_dir=str(out), progress=stop_at_60)
    assert first.interrupted and first.iteration == 60
    assert checkpoint.load_latest(out / "checkpoints").iteration == 60
    assert [r["iteration"] for r in RunDir(out).read_metrics()] == [20, 40, 60]
    second = train(load_config(out / "config.toml"), resume=str(out))
    assert second.resumed_from == 60 and second.iteration == 120 and not second.interrupted
    _assert_same_run(full_run[0].run_dir, out)
    assert len(second.metrics) == 6


def test_sigint_stops_at_a_chunk_boundary_and_resumes_bit_for_bit(full_run, config_path,
                                                                  tmp_path):
    """A real SIGINT mid-segment (iteration 56: a chunk boundary inside the 40..60 segment)."""
    sent = []

    def interrupt_at_56(it, metrics):
        if it == 56 and not sent:
            sent.append(it)
            os.kill(os.getpid(), signal.SIGINT)     # handled by train's deferring handler

    out = tmp_path / "run"
    logs = []
    before = signal.getsignal(signal.SIGINT)        # (SIG_IGN in a background job)
    first = train(load_config(config_path), out_dir=str(out), progress=interrupt_at_56,
                  log=logs.append)
    assert sent and first.interrupted and first.iteration == 56
    assert any("interrupt" in m for m in logs)
    assert signal.getsignal(signal.SIGINT) is before                       # restored
    assert checkpoint.load_latest(out / "checkpoints").iteration == 56
    train(load_config(out / "config.toml"), resume=str(out))
    _assert_same_run(full_run[0].run_dir, out)


def test_a_second_sigint_while_the_checkpoint_is_written_keeps_the_last_one(
        full_run, config_path, tmp_path, monkeypatch):
    """Ctrl-C at iteration 56, then Ctrl-C again (abort at once) while the interrupt's
    checkpoint is being written, between its ``.npz`` and its sidecar: the run ends with
    ``KeyboardInterrupt``, the half-written checkpoint is not taken for one, the one of
    iteration 40 is the newest, and the run resumes from it bit for bit."""
    sent = []

    def interrupt_at_56(it, metrics):
        if it == 56 and not sent:
            sent.append(it)
            os.kill(os.getpid(), signal.SIGINT)     # deferred to the chunk's end

    write_text = checkpoint.atomic_write_text

    def sidecar_interrupted(path, text):
        if Path(path).name == "ckpt-0000000056.json":
            os.kill(os.getpid(), signal.SIGINT)     # the second: raised here, at once
        write_text(path, text)

    monkeypatch.setattr(checkpoint, "atomic_write_text", sidecar_interrupted)
    out = tmp_path / "run"
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        train(load_config(config_path), out_dir=str(out), progress=interrupt_at_56)
    assert sent and signal.getsignal(signal.SIGINT) is before
    written = sorted(p.name for p in (out / "checkpoints").iterdir())
    assert "ckpt-0000000056.npz" in written and "ckpt-0000000056.json" not in written
    assert checkpoint.load_latest(out / "checkpoints").iteration == 40
    monkeypatch.undo()
    again = train(load_config(out / "config.toml"), resume=str(out))
    assert again.resumed_from == 40 and again.iteration == 120
    _assert_same_run(full_run[0].run_dir, out)


def test_resume_a_finished_run_for_more_iterations(config_path, tmp_path):
    short = tmp_path / "short"
    train(load_config(config_path, ["solver.iterations=60"]), out_dir=str(short))
    more = train(load_config(short / "config.toml", ["solver.iterations=120"]),
                 resume=str(short))
    assert more.resumed_from == 60 and more.iteration == 120
    direct = tmp_path / "direct"
    train(load_config(config_path), out_dir=str(direct))
    _assert_same_run(direct, short)


def test_resume_refuses_another_game_and_another_solver(full_run, config_path, tmp_path):
    run = full_run[0].run_dir
    other = load_config(config_path, ["game.name=kuhn_poker(players=3)"])
    with pytest.raises(CheckpointError, match=r"another game: game.name \('kuhn_poker' in the "
                                              r"checkpoint, 'kuhn_poker\(players=3\)' now\); "
                                              r"resume with the config it was written with"):
        train(other, resume=str(run))
    dcfr = load_config(config_path, ["solver.algorithm=dcfr"])
    with pytest.raises(CheckpointError, match="solver.algorithm"):
        train(dcfr, resume=str(run))
    with pytest.raises(FileNotFoundError):
        train(load_config(config_path), resume=str(tmp_path / "nowhere"))


def test_resume_with_fewer_iterations_than_done_says_so_before_compiling(full_run,
                                                                         config_path):
    """Resumed with solver.iterations below the checkpoint's: one plain error (not "120 of
    40" after a compilation for nothing), the run directory untouched."""
    try:
        from tests.test_compile_once import count_compiles
    except ImportError:  # tests/ is not a package: pytest put it on sys.path
        from test_compile_once import count_compiles
    run = full_run[0].run_dir
    files = lambda: sorted((p.name, p.stat().st_mtime_ns)  # noqa: E731 (.lock: held)
                           for p in Path(run).iterdir() if p.name != ".lock")
    before = files()
    with count_compiles() as seen, pytest.raises(
            CheckpointError, match=r"already has 120 iterations, more than solver.iterations "
                                   r"= 40: resume with more .*N > 120"):
        train(load_config(config_path, ["solver.iterations=40"]), resume=str(run))
    assert seen["compiles"] == 0
    assert files() == before


def test_resume_skips_a_corrupt_newest_checkpoint(full_run, config_path, tmp_path):
    import shutil
    out = tmp_path / "copy"
    shutil.copytree(full_run[0].run_dir, out)
    (out / "checkpoints" / "ckpt-0000000120.npz").write_bytes(b"torn")
    logs = []
    result = train(load_config(out / "config.toml"), resume=str(out), log=logs.append)
    assert result.resumed_from == 80 and result.iteration == 120
    assert any("corrupt" in m for m in logs)
    _assert_same_run(full_run[0].run_dir, out)


def test_batched_games_and_hyperparameters(tmp_path):
    """Two games (stacked) x two DCFR settings = four members, each with its own profile."""
    config = jaxcfr.runs.config_from_dict({
        "name": "batch",
        "game": {"names": ["kuhn_poker", str(ROOT / "configs" / "games" / "kuhn.efg")]},
        "solver": {"algorithm": "dcfr", "iterations": 40, "alpha": [1.0, 2.0]},
        "run": {"eval_every": 20, "chunk": 16, "quiet": True}})
    result = train(config, out_dir=str(tmp_path / "b"))
    assert len(result.members) == 4 and result.members[0].startswith("kuhn_poker alpha=1")
    final = result.final
    assert final["members"] == result.members
    assert len(final["metric"]) == 4 and len(final["values"]) == 4
    assert all(len(v) == 2 for v in final["values"])
    # the same game as a registered game and as an .efg file: identical numbers
    np.testing.assert_allclose(final["metric"][:2], final["metric"][2:], rtol=1e-5, atol=1e-7)
    assert final["metric"][1] != final["metric"][0]
    run = RunDir(result.run_dir)
    assert sorted(p.name for p in run.profiles.glob("*.npz")) == [
        f"member-{m:03d}.npz" for m in range(4)]
    best = jaxcfr.Profile.load(run.profile)
    np.testing.assert_array_equal(best.probs, result.profiles[result.best_member].probs)
    assert result.best_member == int(np.argmin(final["metric"]))
    assert run.plot.read_bytes()[:4] == b"\x89PNG"


def test_stop_at_ends_the_run_at_the_first_evaluation_at_or_below_it(full_run, config_path,
                                                                     tmp_path, capsys):
    """``run.stop_at``: the run ends after the first evaluation whose metric is at or below
    it (here the uninterrupted run's metric at iteration 60, so exactly there), not
    interrupted, a checkpoint written there, the records those of the full run up to it
    (bit for bit); ``jaxcfr train --target`` sets it."""
    records = full_run[0].metrics
    at = next(r for r in records if r["iteration"] == 60)["metric"]
    assert all(r["metric"] > at for r in records if r["iteration"] < 60)    # the first
    result = train(load_config(config_path, [f"run.stop_at={at!r}"]),
                   out_dir=str(tmp_path / "stop"))
    assert result.reached_target and not result.interrupted and result.iteration == 60
    assert _strip(result.metrics) == _strip([r for r in records if r["iteration"] <= 60])
    assert checkpoint.load_latest(Path(result.run_dir) / "checkpoints").iteration == 60
    never = train(load_config(config_path, ["run.stop_at=1e-12", "solver.iterations=40"]),
                  out_dir=str(tmp_path / "never"))
    assert not never.reached_target and not never.interrupted and never.iteration == 40
    out = tmp_path / "cli"
    assert cli_main(["train", str(config_path), "--out", str(out), "--json",
                     "--target", repr(at)]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["reached_target"] is True and shown["iteration"] == 60
    with pytest.raises(SystemExit) as info:                 # argparse's own exit
        cli_main(["train", str(config_path), "--target", "0"])
    assert info.value.code == 2 and "--target must be positive" in capsys.readouterr().err


def test_resuming_at_a_met_target_runs_nothing(full_run, config_path, tmp_path):
    """A run resumed where an evaluation already met ``run.stop_at`` (it stopped there, or
    the target given now is above that metric) is reached at once: no iteration run, the
    checkpoint and the records as they were; a lower target goes on to its own first
    evaluation at or below it (the full run's records, bit for bit)."""
    records = full_run[0].metrics
    at = next(r for r in records if r["iteration"] == 60)["metric"]
    out = tmp_path / "stop"
    train(load_config(config_path, [f"run.stop_at={at!r}"]), out_dir=str(out))
    for target in (at, 2 * at):
        again = train(load_config(out / "config.toml", [f"run.stop_at={target!r}"]),
                      resume=str(out))
        assert again.reached_target and not again.interrupted
        assert again.iteration == again.resumed_from == 60
        assert _strip(again.metrics) == _strip([r for r in records if r["iteration"] <= 60])
        assert checkpoint.load_latest(out / "checkpoints").iteration == 60
    lower = next(r for r in records if r["iteration"] > 60)
    assert lower["metric"] < at                   # (the next evaluation, lower)
    more = train(load_config(out / "config.toml", [f"run.stop_at={lower['metric']!r}"]),
                 resume=str(out))
    assert more.reached_target and more.iteration == lower["iteration"]
    assert _strip(more.metrics) == _strip([r for r in records
                                           if r["iteration"] <= lower["iteration"]])


# -- the command line ---------------------------------------------------------------
def test_cli_train_and_eval(config_path, tmp_path, capsys):
    out = tmp_path / "cli"
    assert cli_main(["train", str(config_path), "--out", str(out), "--set",
                     "solver.iterations=40"]) == 0
    text = capsys.readouterr().out
    assert f"run directory   {out}" in text and "exploitability" in text
    final = RunDir(out).read_metrics()[-1]
    assert cli_main(["eval", str(out / "profile.npz"), "kuhn_poker", "--json"]) == 0
    ev = json.loads(capsys.readouterr().out)
    assert ev["found"] == ev["rows"] == 12
    assert ev["exploitability"] == pytest.approx(final["exploitability"], rel=1e-4, abs=1e-6)
    assert cli_main(["eval", str(out)]) == 0           # a run directory, game from the profile
    assert "exploitability" in capsys.readouterr().out


def test_cli_errors_are_one_line(config_path, tmp_path, capsys):
    assert cli_main(["train", str(config_path), "--set", "solver.bogus=1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxcfr: error:") and "bogus" in err and "Traceback" not in err
    assert cli_main(["train"]) == 2
    assert "CONFIG" in capsys.readouterr().err


def test_cli_ctrl_c_writes_a_checkpoint_and_exits_130(config_path, tmp_path, capsys,
                                                       monkeypatch):
    import jaxcfr.runs.progress as progress_module

    def sigint_at_first_eval(total, **kw):
        def progress(it, metrics):
            if metrics is not None:
                os.kill(os.getpid(), signal.SIGINT)
        progress.close = lambda: None
        return progress

    monkeypatch.setattr(progress_module, "make_progress", sigint_at_first_eval)
    out = tmp_path / "cli"
    assert cli_main(["train", str(config_path), "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "interrupted at iteration 20" in err and f"--resume {out}" in err
    assert checkpoint.load_latest(out / "checkpoints").iteration == 20
    monkeypatch.undo()
    assert cli_main(["train", "--resume", str(out), "--quiet"]) == 0
    assert RunDir(out).read_metrics()[-1]["iteration"] == 120


def test_scripts_train_py(config_path, tmp_path, monkeypatch, capsys):
    out = tmp_path / "script"
    monkeypatch.setattr(sys, "argv", ["train.py", str(config_path), "--out", str(out),
                                      "--set", "solver.iterations=20", "--quiet"])
    with pytest.raises(SystemExit) as info:
        runpy.run_path(str(ROOT / "benchmarks" / "train.py"), run_name="__main__")
    assert info.value.code == 0
    assert "run directory" in capsys.readouterr().out
    assert (out / "profile.npz").exists()


def test_sigint_to_a_training_process(tmp_path, tmp_path_factory):
    """The real thing: Ctrl-C to ``jaxcfr train`` in its own process exits 130, cleanly."""
    out = tmp_path / "proc"
    cmd = [sys.executable, "-m", "jaxcfr", "train", str(ROOT / "configs" / "kuhn.toml"),
           "--out", str(out), "--set", "solver.iterations=100000000",
           "--set", "run.eval_every=2000", "--set", "run.checkpoint_every=0"]
    # Kuhn / CFR+ / chunk 64 is also what the notebook compiles: share XLA's disk cache.
    env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=str(
        tmp_path_factory.getbasetemp() / "jax-compilation-cache"))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 120
        while not (out / "metrics.jsonl").exists() or not (out / "metrics.jsonl").read_text():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no evaluation within 120 s"
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted at iteration" in stderr and "--resume" in stderr
    assert f"run directory   {out}" in stdout
    stopped = int(re.search(r"interrupted at iteration (\d+)", stderr).group(1))
    ck = checkpoint.load_latest(out / "checkpoints")
    assert ck.iteration == stopped >= 2000
    assert stopped % 2000 % 64 == 0           # a chunk boundary (chunks start per segment)


# -- progress display ---------------------------------------------------------------
class _TTY(io.StringIO):
    def isatty(self):
        return True


RECORD = {"iteration": 100, "metric": 1.5e-3, "metric_name": "exploitability",
          "iterations_per_second": 1234.0}


def test_progress_is_a_bar_on_a_tty_and_lines_otherwise():
    tty = _TTY()
    bar = make_progress(200, stream=tty)
    assert isinstance(bar, ProgressBar)
    bar(50, None)
    bar(100, RECORD)
    bar.close()
    text = tty.getvalue()
    assert text.startswith("\r") and text.count("\n") == 1      # one line, redrawn
    last = text.rstrip("\n").rsplit("\r", 1)[1]
    assert " 50%|" in last and "100/200" in last and "exploitability 1.500e-03" in last
    assert tty.getvalue().endswith("\n")

    plain = io.StringIO()
    lines = make_progress(200, stream=plain)
    assert isinstance(lines, LogLines)
    lines(50, None)
    lines(100, RECORD)
    assert plain.getvalue() == "iteration 100/200  exploitability 1.500e-03  1,234 it/s\n"

    quiet = io.StringIO()
    silent = make_progress(200, stream=_TTY(), quiet=True)
    silent(100, RECORD)
    silent.close()
    assert quiet.getvalue() == ""


def test_progress_shows_a_batch_as_a_range():
    plain = io.StringIO()
    LogLines(10, plain)(10, {**RECORD, "metric": [3e-3, 1e-3, 2e-3]})
    assert "exploitability 1.000e-03..3.000e-03 (3 runs)" in plain.getvalue()
