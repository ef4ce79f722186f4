"""Progress display for training runs: a one-line bar on a terminal, log lines otherwise.

A progress function has the shape ``progress(iteration, metrics)``: ``metrics``
is ``None`` after a compiled chunk and the evaluation record (see
:mod:`jaxcfr.runs.train`) after each evaluation. :func:`make_progress` picks the
display for a stream: a bar redrawn with ``\\r`` when the stream is a TTY, one
plain line per evaluation when it is not, nothing when quiet.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Callable, TextIO

__all__ = ["ProgressFn", "ProgressBar", "LogLines", "make_progress", "format_metric",
           "LoweringProgress"]

ProgressFn = Callable[[int, "dict[str, Any] | None"], None]


def format_metric(record: dict[str, Any]) -> str:
    """``"exploitability 1.23e-03"``, or a range ``min..max (n runs)`` for a batch."""
    metric = record["metric"]
    name = record["metric_name"]
    if isinstance(metric, list):
        vals = [m for m in metric if m is not None]
        if not vals:
            return f"{name} n/a"
        if len(vals) == 1:
            return f"{name} {vals[0]:.3e}"
        return f"{name} {min(vals):.3e}..{max(vals):.3e} ({len(metric)} runs)"
    return f"{name} {metric:.3e}" if metric is not None else f"{name} n/a"


class ProgressBar:
    """``[#####-----]  1200/2000  exploitability 1.2e-03  3,456 it/s`` redrawn in place."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total = max(1, int(total))
        self.stream = stream or sys.stderr
        self.metric = "lowering and compiling..."
        self.last_time = time.perf_counter()
        self.last_iteration: int | None = None     # the first call sets the baseline
        self.rate: float | None = None
        self._width = 0
        self.draw(0)

    def __call__(self, iteration: int, metrics: dict[str, Any] | None) -> None:
        now = time.perf_counter()
        if metrics is not None:
            self.metric = format_metric(metrics)
            self.rate = metrics.get("iterations_per_second") or self.rate
        elif (self.last_iteration is not None and now > self.last_time
              and iteration > self.last_iteration):
            rate = (iteration - self.last_iteration) / (now - self.last_time)
            self.rate = rate if self.rate is None else 0.7 * self.rate + 0.3 * rate
        self.last_time, self.last_iteration = now, iteration
        self.draw(iteration)

    def draw(self, iteration: int) -> None:
        columns = shutil.get_terminal_size((100, 20)).columns
        frac = min(1.0, iteration / self.total)
        digits = len(str(self.total))
        rate = f"{self.rate:,.0f} it/s" if self.rate else "... it/s"
        text = f"] {iteration:>{digits}}/{self.total}  {self.metric}  {rate}"
        bar = max(10, min(30, columns - len(text) - 2))
        filled = int(round(frac * bar))
        line = ("[" + "#" * filled + "-" * (bar - filled) + text)[:max(1, columns - 1)]
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


class LogLines:
    """One plain line per evaluation: ``iteration 100/2000  exploitability ...  it/s``."""

    def __init__(self, total: int, stream: TextIO | None = None):
        self.total = int(total)
        self.stream = stream or sys.stderr

    def __call__(self, iteration: int, metrics: dict[str, Any] | None) -> None:
        if metrics is None:
            return
        rate = metrics.get("iterations_per_second")
        rate_text = f"  {rate:,.0f} it/s" if rate else ""
        self.stream.write(f"iteration {iteration}/{self.total}  {format_metric(metrics)}"
                          f"{rate_text}\n")
        self.stream.flush()

    def close(self) -> None:
        pass


class _Silent:
    def __call__(self, iteration, metrics) -> None:
        pass

    def close(self) -> None:
        pass


def make_progress(total: int, *, quiet: bool = False, stream: TextIO | None = None):
    """The display for ``stream`` (default stderr): bar on a TTY, lines otherwise, or silence."""
    stream = stream or sys.stderr
    if quiet:
        return _Silent()
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return ProgressBar(total, stream)
    return LogLines(total, stream)


class LoweringProgress:
    """What lowering is doing, for whoever waits on a large game (``jaxcfr inspect / solve /
    train``): pass it as ``lower(..., progress=display, log=display.log)``.

    Quiet unless slow: nothing is shown for a game lowered (or loaded from the cache) in
    under ``delay`` seconds. Past that, the messages held so far (the size estimate,
    how the walk is split) are printed, then the nodes walked and the rate: one line
    redrawn in place on a terminal, else one line every ``every`` seconds; :meth:`close`
    ends with the total (``lowered 8,405,333 nodes in 31.2 s, 269,400 nodes/s``).
    ``write`` replaces the stream with a function of one line (``train``'s ``log``).
    """

    def __init__(self, stream: TextIO | None = None, *, write: Callable[[str], None] | None = None,
                 delay: float = 1.0, every: float = 5.0, prefix: str = "lowering: "):
        self.stream = stream or sys.stderr
        self.write = write
        isatty = getattr(self.stream, "isatty", None)
        self.tty = write is None and isatty is not None and isatty()
        self.delay, self.every, self.prefix = delay, every, prefix
        self.start = time.perf_counter()
        self.held: list[str] = []
        self.shown = False
        self.nodes = 0
        self.last_line = self.start
        self._width = 0

    def _line(self, text: str) -> None:
        self._end_bar()
        if self.write is not None:
            self.write(self.prefix + text)
        else:
            self.stream.write(self.prefix + text + "\n")
            self.stream.flush()

    def _end_bar(self) -> None:
        if self._width:
            self.stream.write("\n")
            self._width = 0

    def log(self, message: str) -> None:
        """A one-line message from lowering: held until the lowering turns out slow."""
        if self.shown:
            self._line(message)
        else:
            self.held.append(message)

    def _show(self, now: float) -> bool:
        if not self.shown and now - self.start >= self.delay:
            self.shown = True
            for message in self.held:
                self._line(message)
            self.held.clear()
        return self.shown

    def __call__(self, nodes: int) -> None:
        """``progress(nodes_walked)``."""
        self.nodes = nodes
        now = time.perf_counter()
        if not self._show(now):
            return
        rate = nodes / max(now - self.start, 1e-9)
        text = f"{nodes:,} nodes walked, {rate:,.0f} nodes/s"
        if self.tty:
            line = "\r" + self.prefix + text
            self.stream.write(line + " " * max(0, self._width - len(line)))
            self.stream.flush()
            self._width = len(line)
        elif now - self.last_line >= self.every:
            self.last_line = now
            self._line(text)

    def close(self) -> None:
        """The total, if anything was shown."""
        if self.shown and self.nodes:
            seconds = time.perf_counter() - self.start
            self._line(f"lowered {self.nodes:,} nodes in {seconds:.1f} s, "
                       f"{self.nodes / max(seconds, 1e-9):,.0f} nodes/s")
        self._end_bar()
        self.held.clear()
