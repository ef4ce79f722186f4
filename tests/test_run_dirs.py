"""Run directories that can always be continued, reused or refused with a reason (issue 12,
items 1 and 7).

The choice (docs/runs.md): a run directory is created once the game is lowered and the
solver built, so a game that fails to load leaves nothing; a directory without a
checkpoint (Ctrl-C while compiling, or before the first checkpoint) resumes from
iteration 0 with ``--resume``, and the same command run again takes it over. A folder
holding other files is refused, as is a second process on a running directory.

Every run here is Kuhn poker, CFR+, chunk 16 (the compiled chunk ``test_train.py`` uses).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

import jaxcfr
from jaxcfr.cli.app import main as cli_main
from jaxcfr.runs import ConfigError, RunDir, load_config, train
from jaxcfr.runs import checkpoint
from jaxcfr.runs.rundir import RunDirBusy

train_module = importlib.import_module("jaxcfr.runs.train")
KUHN = """
[game]
name = "kuhn_poker"
[solver]
iterations = 32
[run]
eval_every = 16
chunk = 16
quiet = true
plot = false
"""


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "kuhn.toml"
    path.write_text(KUHN)
    return path


@pytest.mark.parametrize("game", ["nosuch", "kuhn_poker(players=1)", "missing.efg"])
def test_a_game_that_fails_to_load_leaves_no_directory(config_path, tmp_path, game):
    with pytest.raises(jaxcfr.GameError):
        train(load_config(config_path, [f"game.name={game}"]), out_dir=str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


def test_interrupted_while_compiling_then_resumed_or_rerun(config_path, tmp_path, monkeypatch):
    """Ctrl-C during compilation leaves config.toml and no checkpoint: both ways on work."""
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "compile_reporting", interrupted)
    for name in ("resumed", "rerun"):
        with pytest.raises(KeyboardInterrupt):
            train(load_config(config_path), out_dir=str(tmp_path / name))
        assert (tmp_path / name / "config.toml").exists()
        assert not checkpoint.list_checkpoints(tmp_path / name / "checkpoints")
    monkeypatch.undo()
    logs = []
    resumed = train(load_config(tmp_path / "resumed" / "config.toml"),
                    resume=str(tmp_path / "resumed"), log=logs.append)
    assert resumed.iteration == 32 and resumed.resumed_from is None
    assert any("starting from iteration 0" in m for m in logs)
    rerun = train(load_config(config_path), out_dir=str(tmp_path / "rerun"), log=logs.append)
    assert rerun.iteration == 32 and any("starting it afresh" in m for m in logs)
    assert resumed.final["metric"] == rerun.final["metric"]
    # A finished run is not taken over.
    with pytest.raises(FileExistsError, match="--resume"):
        train(load_config(config_path), out_dir=str(tmp_path / "rerun"))


def test_a_folder_with_other_files_is_refused_and_left_alone(config_path, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    (folder / "profile.npz").write_bytes(b"not ours")
    with pytest.raises(FileExistsError, match="not empty and is not a run directory"):
        train(load_config(config_path), out_dir=str(folder))
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt", "profile.npz"]
    assert (folder / "profile.npz").read_bytes() == b"not ours"
    # An empty folder is fine.
    (tmp_path / "empty").mkdir()
    assert train(load_config(config_path), out_dir=str(tmp_path / "empty")).iteration == 32


def test_one_process_at_a_time(config_path, tmp_path):
    out = tmp_path / "run"
    train(load_config(config_path), out_dir=str(out))
    with RunDir(out).lock():                        # as another process would hold it
        with pytest.raises(RunDirBusy, match="in use by another process"):
            train(load_config(out / "config.toml", ["solver.iterations=48"]), resume=str(out))
    more = train(load_config(out / "config.toml", ["solver.iterations=48"]), resume=str(out))
    assert more.resumed_from == 32 and more.iteration == 48


@pytest.mark.parametrize("name", ["../outside", "/tmp/abs", "a/b", ".."])
def test_a_config_name_stays_inside_runs(config_path, name):
    with pytest.raises(ConfigError, match="name must be a plain name"):
        load_config(config_path, [f"name={name}"])
    text = Path(config_path).read_text()
    bad = Path(config_path).with_name("bad-name.toml")
    bad.write_text(f"name = {json.dumps(name)}\n" + text)
    with pytest.raises(ConfigError, match=f"{bad}: name must be a plain name"):
        load_config(bad)


def test_resume_messages_name_what_is_wrong(config_path, tmp_path, capsys):
    (tmp_path / "configs").mkdir()
    assert cli_main(["train", "--resume", str(tmp_path / "configs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"jaxcfr: error: {tmp_path / 'configs'} is not a run directory (it has no "
                   "config.toml); --resume takes the --out of an earlier run")
    assert cli_main(["train", "--resume", str(config_path)]) == 2
    assert "is a file; --resume takes a run directory" in capsys.readouterr().err
    assert cli_main(["train", "--resume", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"jaxcfr: error: no run directory {tmp_path / 'nowhere'}"
    assert cli_main(["train", str(tmp_path / "nosuch.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"jaxcfr: error: no config file {tmp_path / 'nosuch.toml'}"


# -- pictures of run directories (jaxcfr plot; issue 33 item 8) ----------------------------
@pytest.fixture(scope="module")
def plotted_runs(tmp_path_factory, config_path):
    """Two short real runs (CFR+, DCFR) and a 2 x 2 DCFR sweep, written by ``train``."""
    pytest.importorskip("matplotlib")
    root = tmp_path_factory.mktemp("plots")
    train(load_config(config_path), out_dir=str(root / "cfrplus"))
    train(load_config(config_path, ["solver.algorithm=dcfr"]), out_dir=str(root / "dcfr"))
    train(load_config(config_path, ["solver.algorithm=dcfr", "solver.alpha=[1.0, 2.0]",
                                    "solver.gamma=[1.0, 3.0]"]), out_dir=str(root / "sweep"))
    return root


def _metric_rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_several_runs_on_one_plot_against_iterations_or_seconds(plotted_runs, tmp_path,
                                                                capsys):
    from jaxcfr.runs.compare import read_run, runs_figure
    runs = [plotted_runs / "cfrplus", plotted_runs / "dcfr", plotted_runs / "sweep"]
    out = tmp_path / "one.png"
    assert cli_main(["plot", *map(str, runs), "--x", "seconds", "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {out} (3 run(s), against seconds)" in capsys.readouterr().out
    for axis, field in (("iterations", "iteration"), ("seconds", "wall_seconds")):
        fig = runs_figure([read_run(r) for r in runs], x=axis)
        (ax,) = fig.axes
        lines = {line.get_label(): line for line in ax.get_lines()}
        # one line per run, a sweep's members as lines of their own
        assert sorted(lines) == ["cfrplus", "dcfr", "sweep: alpha=1 gamma=1",
                                 "sweep: alpha=1 gamma=3", "sweep: alpha=2 gamma=1",
                                 "sweep: alpha=2 gamma=3"]
        rows = _metric_rows(runs[1])                 # the curve is the run's metrics
        assert list(lines["dcfr"].get_xdata()) == [r[field] for r in rows]
        assert list(lines["dcfr"].get_ydata()) == [r["metric"] for r in rows]
        sweep = _metric_rows(runs[2])
        assert list(lines["sweep: alpha=2 gamma=1"].get_ydata()) == [r["metric"][2]
                                                                     for r in sweep]
        assert ax.get_xlabel().startswith("iterations" if axis == "iterations" else "wall")


def test_a_sweep_is_drawn_as_a_grid(plotted_runs, tmp_path):
    from jaxcfr.runs.compare import grid_figure, read_run
    out = tmp_path / "grid.png"
    assert cli_main(["plot", str(plotted_runs / "sweep"), "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    fig = grid_figure(read_run(plotted_runs / "sweep"))
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == ["alpha=1 gamma=1", "alpha=1 gamma=3",
                                                "alpha=2 gamma=1", "alpha=2 gamma=3"]
    rows = _metric_rows(plotted_runs / "sweep")
    for j, ax in enumerate(shown):
        (line,) = ax.get_lines()
        assert list(line.get_ydata()) == [r["metric"][j] for r in rows]


def test_plot_refuses_what_it_cannot_draw(plotted_runs, tmp_path, capsys):
    cases = [(["plot", str(tmp_path / "none")], "no run directory"),
             (["plot", str(tmp_path)], "has no metrics.jsonl"),
             (["plot", str(plotted_runs / "dcfr"), "--out", str(tmp_path)], "is a directory"),
             (["plot", str(plotted_runs / "dcfr"), str(plotted_runs / "sweep"), "--layout",
               "grid"], "draws one run's members")]
    for argv, message in cases:
        capsys.readouterr()
        assert cli_main(argv) == 2, argv
        assert message in capsys.readouterr().err
