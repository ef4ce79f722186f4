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

__all__ = ["ProgressFn", "ProgressBar", "LogLines", "make_progress", "format_metric"]

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
