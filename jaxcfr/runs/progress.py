"""Progress display for runs: what is happening, on stderr, while ``solve`` and ``train`` work.

Two displays, both redrawn in place on a terminal and written as plain lines otherwise:

* a *status* (:class:`Status`, :func:`make_status`) for the phases before the first
  iteration: lowering (with the number of nodes walked so far), compiling;
* a *progress function* ``progress(iteration, metrics)`` for the iterations: ``metrics``
  is ``None`` after a compiled chunk and the evaluation record (see
  :mod:`jaxcfr.runs.train`) after each evaluation. :func:`make_progress` picks the
  display for a stream: a bar redrawn with ``\\r`` when the stream is a TTY, one plain
  line per evaluation (and one every ``every`` seconds between them) when it is not,
  nothing when quiet.

Example::

    >>> import sys
    >>> from jaxcfr.runs.progress import make_status
    >>> status = make_status(stream=sys.stderr)
    >>> status.begin("lowering leduc_poker")
    >>> lowered = jaxcfr.lower(game, progress=status.nodes("lowering leduc_poker"))
    >>> status.end("lowered leduc_poker: 9,457 nodes")
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Callable, TextIO

__all__ = ["ProgressFn", "ProgressBar", "LogLines", "make_progress", "format_metric", "Status",
           "make_status", "LINE_EVERY"]

#: Seconds between two plain progress lines when the stream is not a terminal.
LINE_EVERY = 10.0

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
        self.metric = "..."
        self.last_time = time.perf_counter()
        self.last_iteration: int | None = None     # the first call sets the baseline
        self.rate: float | None = None
        self._width = 0

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
    """One plain line per evaluation: ``iteration 100/2000  exploitability ...  it/s``, and
    ``iteration 300/2000`` after a chunk when ``every`` seconds passed without a line."""

    def __init__(self, total: int, stream: TextIO | None = None, every: float = LINE_EVERY):
        self.total = int(total)
        self.stream = stream or sys.stderr
        self.every = every
        self.last_line = time.perf_counter()
        self.started = False

    def __call__(self, iteration: int, metrics: dict[str, Any] | None) -> None:
        now = time.perf_counter()
        if not self.started:                     # the first call: where the iterations start
            self.started, self.last_line = True, now
            if metrics is None:
                return
        if metrics is None:
            if now - self.last_line >= self.every:
                self.last_line = now
                self.stream.write(f"iteration {iteration}/{self.total}\n")
                self.stream.flush()
            return
        self.last_line = now
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


class Status:
    """What a command is doing before it iterates: ``begin``, ``update`` (transient), ``end``.

    On a terminal the line is redrawn in place (``lowering liars_dice: 122,880 nodes``);
    otherwise ``begin`` and ``end`` print a line each and ``update`` one every ``every``
    seconds, so that a log file shows progress without a line per update.

    Example::

        >>> status = Status(sys.stderr)
        >>> status.begin("compiling cfr+")
        >>> status.end("compiled in 2.1 s")

    """

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None,
                 every: float = LINE_EVERY, redraw_every: float = 0.1):
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty()) if tty is None else tty
        self.every = every
        self.redraw_every = redraw_every
        self.last_line = time.perf_counter()
        self._width = 0

    def _draw(self, text: str, newline: bool) -> None:
        if self.tty:
            columns = shutil.get_terminal_size((100, 20)).columns
            line = text[:max(1, columns - 1)]
            self.stream.write("\r" + line + " " * max(0, self._width - len(line))
                              + ("\n" if newline else ""))
            self._width = 0 if newline else len(line)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.last_line = time.perf_counter()

    def begin(self, text: str) -> None:
        """A phase starts (``lowering leduc_poker``)."""
        self._draw(f"{text} ...", newline=not self.tty)

    def update(self, text: str) -> None:
        """Where the phase is (``lowering leduc_poker: 40,960 nodes``): redrawn at most every
        ``redraw_every`` seconds on a terminal, printed every ``every`` seconds elsewhere."""
        if time.perf_counter() - self.last_line >= (self.redraw_every if self.tty else
                                                     self.every):
            self._draw(text, newline=not self.tty)

    def end(self, text: str) -> None:
        """The phase is done (``lowered leduc_poker: 9,457 nodes ... in 0.2 s``)."""
        self._draw(text, newline=True)

    def nodes(self, text: str) -> Callable[[int], None]:
        """A ``progress(nodes_walked)`` hook for :func:`jaxcfr.lower` that updates this line
        with the nodes walked and the rate."""
        start = time.perf_counter()

        def hook(walked: int) -> None:
            rate = walked / max(time.perf_counter() - start, 1e-9)
            self.update(f"{text}: {walked:,} nodes, {rate:,.0f} nodes/s")
        return hook

    def note(self, text: str) -> None:
        """A message of its own line (lowering's news: the size estimate, a cache hit)."""
        self.close()
        self._draw(text, newline=True)

    def close(self) -> None:
        """End a line left open on a terminal (before an error message is printed)."""
        if self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0

    def __enter__(self) -> "Status":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


class _SilentStatus(Status):
    def __init__(self):
        super().__init__(stream=None, tty=False)

    def _draw(self, text: str, newline: bool) -> None:
        pass

    def close(self) -> None:
        pass


def make_status(*, quiet: bool = False, stream: TextIO | None = None) -> Status:
    """The status line for ``stream`` (default stderr), or a silent one."""
    return _SilentStatus() if quiet else Status(stream)
