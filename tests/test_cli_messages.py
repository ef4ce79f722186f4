"""First contact with the command line: help, version, the games list, messages that say
what is wrong in the user's words, and what is happening while it works (issue 12,
items 8 and 9)."""

from __future__ import annotations

import io
import json

import pytest

import jaxcfr
from jaxcfr.cli import app
from jaxcfr.engine.loop import lower_reporting
from jaxcfr.runs.progress import LogLines, Status

try:
    from tests.cli_mistakes import run_cli as _run
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cli_mistakes import run_cli as _run


def test_help_says_what_the_tool_does_with_examples(capsys):
    status, out, _ = _run(capsys, "--help")
    assert status == 0
    assert out.startswith("usage: jaxcfr") and "counterfactual-regret-minimisation" in out
    assert "examples:" in out and "jaxcfr solve kuhn_poker" in out
    assert "``" not in out                      # no internal docstring markup
    for command in app.COMMANDS:
        assert f"    {command}" in out


def test_solve_help_has_defaults_and_descriptions(capsys):
    status, out, _ = _run(capsys, "solve", "--help")
    assert status == 0
    flat = " ".join(out.split())
    for text in ("iterations to run (default: 1000)", "(default: cfr+)", "(default: float32)",
                 "(default: only at the end)", "--simultaneous update all players at once",
                 "--traceback show the Python traceback"):
        assert text in flat, text
    _, out, _ = _run(capsys, "train", "--help")
    assert "from iteration 0 if it has none yet" in " ".join(out.split())


def test_version(capsys):
    status, out, _ = _run(capsys, "--version")
    assert status == 0 and out.startswith("jaxcfr ") and "(JAX " in out


def test_games_lists_every_game_with_its_parameters(capsys):
    status, out, _ = _run(capsys, "games")
    assert status == 0
    lines = out.splitlines()
    assert any(line.startswith("kuhn_poker") and "players=2" in line for line in lines)
    assert any(line.startswith("leduc_poker") and "ranks=3, suits=2" in line for line in lines)
    status, out, _ = _run(capsys, "games", "--json")
    games = {g["name"]: g for g in json.loads(out)["games"]}
    assert set(games) == set(jaxcfr.registered_games())
    assert games["liars_dice"]["parameters"] == {"dice": 1, "sides": 6}
    assert games["kuhn_poker"]["description"].startswith("Kuhn poker")


def test_traceback_after_the_command(capsys):
    status, _, err = _run(capsys, "solve", "kuhn_poker", "--iterations", "0")
    assert status == 2 and "Traceback" not in err
    with pytest.raises(ValueError, match="--iterations must be a positive integer"):
        app.main(["solve", "kuhn_poker", "--iterations", "0", "--traceback"])
    with pytest.raises(ValueError):
        app.main(["--traceback", "solve", "kuhn_poker", "--iterations", "0"])


@pytest.mark.parametrize("argv, line", [
    (["eval", "nosuch.npz", "kuhn_poker"], "jaxcfr: error: no profile nosuch.npz"),
    (["solve", "kuhn_poker(foo=1)"],
     "jaxcfr: error: [game-string] game 'kuhn_poker' has no parameter 'foo'; it takes players=2"),
    (["validate", "leduc_poker(rank=4)"],
     "jaxcfr: error: [game-string] game 'leduc_poker' has no parameter 'rank' (did you mean "
     "ranks?); it takes ranks=3, suits=2, raise_sizes=(2, 4)"),
    (["solve", "leduc_poker(ranks=4, ranks=5)"],      # ast takes it; the last one won
     "jaxcfr: error: [game-string] parameter ranks of 'leduc_poker(ranks=4, ranks=5)' is "
     "given twice; give it once"),
])
def test_messages_name_what_the_user_wrote(capsys, argv, line):
    status, _, err = _run(capsys, *argv)
    assert status == 2 and err.strip().splitlines() == [line]


@pytest.mark.parametrize("argv, option", [
    (["solve", "kuhn_poker", "--iter", "5"], "--iter"),
    (["solve", "kuhn_poker", "--algo", "cfr+"], "--algo"),
    (["--trace", "solve", "kuhn_poker"], "--trace"),
])
def test_an_abbreviated_option_is_refused_not_guessed(capsys, argv, option):
    # argparse would read ``--iter`` as ``--iterations``; a script written so breaks the
    # day another option starts with the same letters, so the full name is asked for
    status, _, err = _run(capsys, *argv)
    assert status == 2 and f"unrecognized arguments: {option}" in err
    assert "Traceback" not in err


def test_an_unknown_game_suggests_a_name(capsys):
    status, _, err = _run(capsys, "validate", "kuhn_pokr")
    assert status == 2 and "unknown game 'kuhn_pokr' (did you mean kuhn_poker?)" in err


def test_set_errors_suggest_the_key_and_blame_the_override(tmp_path, capsys):
    path = tmp_path / "kuhn.toml"
    path.write_text('[game]\nname = "kuhn_poker"\n')
    status, _, err = _run(capsys, "train", str(path), "--set", "solver.iteration=5")
    assert err.strip() == ("jaxcfr: error: --set solver.iteration=5: unknown key "
                           "solver.iteration (did you mean solver.iterations?); the keys of "
                           "[solver] are algorithm, iterations, alternating, combine, "
                           "sampling, samples, counts, walk, pool, chance, draws, lock, and the "
                           "parameters of "
                           "the algorithms' parts: gamma, alpha, beta, gamma_drop, horizon, "
                           "exploration")
    status, _, err = _run(capsys, "train", str(path), "--set", "iterations=5")
    assert "(did you mean solver.iterations?)" in err
    path.write_text('[game]\nname = "kuhn_poker"\n[run]\nevall_every = 3\n')
    status, _, err = _run(capsys, "train", str(path))
    assert f"{path}: unknown key run.evall_every (did you mean run.eval_every?)" in err


def test_os_errors_read_like_sentences():
    e = FileNotFoundError(2, "No such file or directory", "configs/config.toml")
    assert app.describe_error(e) == "error: No such file or directory: configs/config.toml"
    assert app.describe_error(KeyError("x")) == "error: x"
    assert app.describe_error(RuntimeError("boom")) == "internal error (RuntimeError): boom"


def test_no_hint_about_sampled_chance():
    with pytest.raises(jaxcfr.GameError) as info:
        jaxcfr.lower(jaxcfr.load_game("sampled_dice_poker(dice=2, sides=3)"))
    assert "sampled" not in str(info.value) and info.value.rule == "chance-not-enumerable"


def test_openspiel_strings_go_to_openspiel_unchanged():
    pytest.importorskip("pyspiel")
    # game-valued parameters and bare-word values
    game = jaxcfr.load_game("openspiel:turn_based_simultaneous_game(game=goofspiel("
                            "num_cards=3,points_order=descending))")
    jaxcfr.validate(game)
    with pytest.raises(jaxcfr.GameError, match=r"load openspiel:turn_based_simultaneous_game\("
                                               r"game=goofspiel\(num_cards=3\)\) instead"):
        jaxcfr.load_game("openspiel:goofspiel(num_cards=3)")


# -- what is happening ---------------------------------------------------------------------
def test_lowering_reports_the_nodes_walked():
    stream = io.StringIO()
    lowered = lower_reporting(jaxcfr.load_game("leduc_poker"),
                              Status(stream, tty=True, redraw_every=0.0), name="leduc_poker")
    text = stream.getvalue()
    assert text.startswith("\rlowering leduc_poker")        # a bar, redrawn with \r
    assert "lowered leduc_poker" in text.rsplit("\r", 1)[1]
    assert text.endswith(f"lowered leduc_poker: {lowered.sizes()['nodes']:,} nodes, "
                         f"{len(lowered.infoset_keys):,} information sets (" +
                         text.rsplit("(", 1)[1])
    assert text.endswith(" s)\n")
    plain = io.StringIO()                     # not a terminal: one line per phase
    lower_reporting(jaxcfr.load_game("leduc_poker"), Status(plain), name="leduc_poker")
    assert plain.getvalue().splitlines()[0] == "lowering leduc_poker ..."
    assert len(plain.getvalue().splitlines()) == 2


def test_solve_says_what_it_is_doing(capsys):
    status, out, err = _run(capsys, "solve", "kuhn_poker", "--iterations", "32")
    assert status == 0 and "exploitability" in out
    lines = err.splitlines()
    assert lines[0] == "lowering kuhn_poker ..."
    assert lines[1].startswith("lowered kuhn_poker: 58 nodes, 12 information sets (")
    assert lines[2] == "compiling cfr+ (float32) ..." and lines[3].startswith("compiled in ")
    assert lines[4].startswith("iteration 32/32  exploitability")
    status, out, err = _run(capsys, "solve", "kuhn_poker", "--iterations", "32", "--quiet")
    assert status == 0 and err == ""


def test_train_says_what_it_is_doing_when_stderr_is_a_file(tmp_path, capsys):
    path = tmp_path / "kuhn.toml"
    path.write_text('[game]\nname = "kuhn_poker"\n[solver]\niterations = 32\n'
                    '[run]\neval_every = 16\nchunk = 16\nplot = false\n')
    status, _, err = _run(capsys, "train", str(path), "--out", str(tmp_path / "run"))
    assert status == 0
    lines = err.splitlines()
    assert lines[0] == "lowering kuhn_poker ..." and lines[2].startswith("compiling cfr+")
    assert lines[4].startswith("iteration 16/32  exploitability")


def test_plain_progress_lines_between_evaluations():
    stream = io.StringIO()
    lines = LogLines(1000, stream, every=0.0)
    lines(0, None)                              # where the run starts: no line
    lines(64, None)
    assert stream.getvalue() == "iteration 64/1000\n"


# -- XLA's slow-compile banner (issue 33, item 8) -----------------------------------------
SLOW_COMPILE_BANNER = (
    "E1205 08:40:00.123456  4711 slow_operation_alarm.cc:73] \n"
    "********************************\n"
    "[Compiling module jit_run_chunk] Very slow compile? If you want to file a bug, run with "
    "envvar XLA_FLAGS=--xla_dump_to=/tmp/foo and attach the results.\n"
    "********************************\n")


def test_xla_slow_compile_banner_never_reaches_the_user(tmp_path):
    """The banner, written to descriptor 2 while the command compiles (where XLA's alarm
    writes it, from C++, after two minutes: too slow to wait for in a test), is dropped;
    XLA's other lines and jaxcfr's own pass; --traceback passes everything."""
    import subprocess
    import sys
    script = tmp_path / "run.py"
    script.write_text(
        "import os, sys\n"
        "import jaxcfr.api.solve as solve\n"
        "from jaxcfr.cli.app import main\n"
        "real = solve.compile_reporting\n"
        "def slow(*a, **k):\n"
        "    os.write(2, b'W1205 08:39:59.000000  4711 other.cc:1] kept\\n')\n"
        f"    os.write(2, {SLOW_COMPILE_BANNER.encode()!r})\n"
        "    return real(*a, **k)\n"
        "solve.compile_reporting = slow\n"
        "sys.exit(main(sys.argv[1:]))\n")
    argv = [sys.executable, str(script), "solve", "kuhn_poker", "--iterations", "8"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "Very slow compile" not in done.stderr and "slow_operation_alarm" not in done.stderr
    assert "*****" not in done.stderr
    assert "other.cc:1] kept" in done.stderr and "compiling cfr+" in done.stderr
    assert "exploitability" in done.stdout
    done = subprocess.run(argv + ["--traceback"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Very slow compile" in done.stderr


def test_the_banner_filter_drops_only_the_banner():
    from jaxcfr._util.native_stderr import _Filter
    import os
    read_fd, write_fd = os.pipe()
    keep = _Filter(write_fd)
    text = ("kept 1\n" + SLOW_COMPILE_BANNER + "kept 2\n" + "*** SIGABRT received\n"
            + SLOW_COMPILE_BANNER.replace("\n***", "\n\n***", 1) + "kept 3\n")
    for line in text.splitlines(keepends=True):
        keep.line(line.encode())
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as f:
        assert f.read().decode() == "kept 1\nkept 2\n*** SIGABRT received\nkept 3\n"
