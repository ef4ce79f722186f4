"""Progress bars (jaxcfr._util.bars, tqdm): drawn on a terminal with percent, elapsed time
and ETA, redrawn on their own clock, silent when the stream is not a terminal."""

from __future__ import annotations

import io
import re
import threading
import time

from jaxcfr._util.bars import Bar, on_terminal
from jaxcfr.runs.progress import Status, make_progress


class _TTY(io.StringIO):
    def isatty(self):
        return True


def _frames(text: str) -> list[str]:
    return [f for f in text.split("\r") if f.strip()]


def _drawn(tty: _TTY, pattern: str) -> str:
    """The last frame once it matches ``pattern`` (the bar's clock redraws it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        last = _frames(tty.getvalue())[-1]
        if re.search(pattern, last):
            return last
        time.sleep(0.01)
    raise AssertionError(f"never drawn: {pattern!r} (last {last!r})")


def test_a_bar_with_a_total_shows_percent_elapsed_and_eta_on_a_terminal():
    tty = _TTY()
    with Bar("iterations", 200, stream=tty) as bar:
        bar.update_to(50)
        bar.set_note("exploitability 1.000e-03")
    last = _frames(tty.getvalue())[-1]
    assert re.search(r"iterations:  25%\|.*\| 50/200 \[\d\d:\d\d<\d\d:\d\d, .*it/s, "
                     r"exploitability 1\.000e-03\]", last), last
    assert tty.getvalue().endswith("\n")


def test_a_bar_is_redrawn_on_its_own_clock():
    tty = _TTY()
    bar = Bar("compiling cfr+", None, stream=tty, unit=None, every=0.01)
    drawn = len(_frames(tty.getvalue()))
    deadline = time.monotonic() + 30
    while len(_frames(tty.getvalue())) < drawn + 3 and time.monotonic() < deadline:
        time.sleep(0.02)                    # nothing is reported: only the clock draws
    frames = _frames(tty.getvalue())
    bar.close(leave=False)
    assert len(frames) >= drawn + 3
    # a spinner (no total): the frames differ, each with the elapsed time
    assert all(re.fullmatch(r"compiling cfr\+( [|/\\-])? \[\d\d:\d\d\]", f.rstrip())
               for f in frames), frames
    assert len({f.split("[")[0] for f in frames}) > 1
    assert not any(t.name == "jaxcfr-progress-bar" for t in threading.enumerate())


def test_a_total_given_later_turns_the_count_into_a_bar():
    tty = _TTY()
    bar = Bar("lowering x", None, stream=tty, unit=" nodes", every=0.01)
    bar.update_to(100)
    _drawn(tty, r"lowering x [|/\\-] \[\d\d:\d\d, 100 nodes\]")
    assert "%" not in tty.getvalue()
    bar.set_total(1000)
    bar.update_to(500)
    bar.close()
    assert re.search(r"lowering x:  50%\|.*\| 500/1000 \[", _frames(tty.getvalue())[-1])


def test_bars_are_silent_when_the_stream_is_not_a_terminal():
    plain = io.StringIO()
    assert not on_terminal(plain)
    with Bar("iterations", 10, stream=plain, every=0.01) as bar:
        bar.update_to(5)
        bar.set_note("x")
        time.sleep(0.05)
    assert plain.getvalue() == ""
    status = Status(plain)                  # a phase: plain lines, no bar
    status.begin("compiling cfr+")
    status.phase("solving subgames", 0, 2)
    status.phase("solving subgames", 2, 2)
    status.end("compiled in 0.1 s")
    assert plain.getvalue() == ("compiling cfr+ ...\nsolving subgames: 0/2\n"
                                "solving subgames: 2/2\ncompiled in 0.1 s\n")


def test_status_phases_and_lowering_are_bars_on_a_terminal():
    tty = _TTY()
    status = Status(tty)
    status.phase("solving subgames", 0, 4)
    status.phase("solving subgames", 3, 4)
    _drawn(tty, r"solving subgames:  75%\|.*\| 3/4 \[\d\d:\d\d<")
    hook = status.nodes("lowering x")
    hook(10)
    hook.expect(40)
    hook(20)
    _drawn(tty, r"lowering x:  50%\|.*\| 20/40 \[")
    status.end("lowered x")
    assert tty.getvalue().endswith("lowered x\n")


def test_iterations_start_their_clock_at_the_first_report():
    tty = _TTY()
    progress = make_progress(100, stream=tty)
    assert tty.getvalue() == ""             # nothing before the iterations start
    progress(40, None)                      # a resumed run starts at 40
    progress(70, {"iteration": 70, "metric": 2e-3, "metric_name": "exploitability"})
    progress.close()
    last = _frames(tty.getvalue())[-1]
    assert "70/100" in last and "exploitability 2.000e-03" in last
    plain = io.StringIO()
    progress = make_progress(100, stream=plain)
    progress(40, None)
    progress.close()
    assert plain.getvalue() == ""


def test_resolve_draws_its_phases_on_a_terminal_and_nothing_elsewhere(tmp_path, monkeypatch,
                                                                     capsys):
    import sys

    import jaxcfr
    from jaxcfr.cli.app import main
    jaxcfr.solve("kuhn_poker", "cfr", 20).profile.save(tmp_path / "bp")
    argv = ["resolve", "kuhn_poker", str(tmp_path / "bp.npz"), "--at", "0,1,pass",
            "--iterations", "20", "--json"]
    tty = _TTY()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    text = tty.getvalue()
    for phase in ("lowering kuhn_poker", "building gadget games", "lowering subgames",
                  "solving subgames", "evaluating"):
        assert phase in text, (phase, text)
    assert re.search(r"solving subgames: 100%\|.*\| 1/1 \[", text)
    monkeypatch.undo()
    capsys.readouterr()
    assert main(argv) == 0
    assert capsys.readouterr().err == ""             # not a terminal: as before, silent
