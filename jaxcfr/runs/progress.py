"""Progress display for runs: what is happening, on stderr, while ``solve`` and ``train`` work.

Two displays, both bars on a terminal (:class:`jaxcfr._util.bars.Bar`: tqdm, redrawn on
their own clock) and written as plain lines otherwise:

* a *status* (:class:`Status`, :func:`make_status`) for the phases before the first
  iteration: lowering (with the number of nodes walked so far), compiling;
* a *progress function* ``progress(iteration, metrics)`` for the iterations: ``metrics``
  is ``None`` after a compiled chunk and the evaluation record (see
  :mod:`jaxcfr.runs.train`) after each evaluation. :func:`make_progress` picks the
  display for a stream: a bar with percent, elapsed time and ETA when the stream is a TTY, one plain
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

import sys
import time
from typing import Any, Callable, Sequence, TextIO

from jaxcfr._util.bars import Bar

__all__ = ["ProgressFn", "ProgressBar", "LogLines", "make_progress", "format_metric", "pot_of",
           "pot_percent",
           "percent", "Status",
           "make_status", "LINE_EVERY"]

#: Seconds between two plain progress lines when the stream is not a terminal.
LINE_EVERY = 10.0

ProgressFn = Callable[[int, "dict[str, Any] | None"], None]


def format_metric(record: dict[str, Any], pot: float | Sequence[float] | None = None) -> str:
    """``"exploitability 1.23e-03"``, or a range ``min..max (n runs)`` for a batch; with
    ``pot`` (a poker spot's starting pot, :func:`pot_of`) a single exploitability also in
    percent of it: ``"exploitability 1.23e-01 (0.1230% of the pot)"``; with one pot per
    member (a stack of spots) each member's in percent of its own pot, as a range:
    ``"exploitability 0.0012%..0.1230% of the pot (48 spots)"``."""
    metric = record["metric"]
    name = record["metric_name"]
    if pot is not None and name == "exploitability" and isinstance(metric, float) \
            and isinstance(pot, (int, float)):
        return f"{name} {metric:.3e} ({pot_percent(metric, pot)} of the pot)"
    if pot is not None and name == "exploitability" and isinstance(metric, list) \
            and not isinstance(pot, (int, float)) and len(pot) == len(metric) \
            and None not in metric:
        pct = [100 * m / p for m, p in zip(metric, pot)]
        return (f"{name} {percent(min(pct))}..{percent(max(pct))} of the pot (mean "
                f"{percent(sum(pct) / len(pct))}, {len(pct)} spots)")
    if isinstance(metric, list):
        vals = [m for m in metric if m is not None]
        if not vals:
            return f"{name} n/a"
        if len(vals) == 1:
            return f"{name} {vals[0]:.3e}"
        return f"{name} {min(vals):.3e}..{max(vals):.3e} ({len(metric)} runs)"
    return f"{name} {metric:.3e}" if metric is not None else f"{name} n/a"


class ProgressBar:
    """The iterations as a bar on a terminal (:class:`jaxcfr._util.bars.Bar`, tqdm): percent,
    ``1200/2000``, elapsed time, ETA, it/s and the last metric, redrawn on its own clock.

    The bar starts at the first call (where the iterations start, after lowering and
    compiling, so that the rate and the ETA measure iterations only)."""

    def __init__(self, total: int, stream: TextIO | None = None, desc: str = "iterations",
                 pot: float | Sequence[float] | None = None):
        self.total = max(1, int(total))
        self.stream = stream or sys.stderr
        self.desc = desc
        self.pot = pot
        self.bar: Bar | None = None

    def __call__(self, iteration: int, metrics: dict[str, Any] | None) -> None:
        if self.bar is None:
            self.bar = Bar(self.desc, self.total, stream=self.stream, initial=iteration,
                           terminal=True)
        self.bar.update_to(iteration)
        if metrics is not None:
            self.bar.set_note(format_metric(metrics, self.pot))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class LogLines:
    """One plain line per evaluation: ``iteration 100/2000  exploitability ...  it/s``, and
    ``iteration 300/2000`` after a chunk when ``every`` seconds passed without a line."""

    def __init__(self, total: int, stream: TextIO | None = None, every: float = LINE_EVERY,
                 pot: float | Sequence[float] | None = None):
        self.total = int(total)
        self.pot = pot
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
        self.stream.write(f"iteration {iteration}/{self.total}  "
                          f"{format_metric(metrics, self.pot)}"
                          f"{rate_text}\n")
        self.stream.flush()

    def close(self) -> None:
        pass


class _Silent:
    def __call__(self, iteration, metrics) -> None:
        pass

    def close(self) -> None:
        pass


def make_progress(total: int, *, quiet: bool = False, stream: TextIO | None = None,
                  pot: float | Sequence[float] | None = None):
    """The display for ``stream`` (default stderr): bar on a TTY, lines otherwise, or
    silence; ``pot``: a poker spot's starting pot, the exploitability also shown in percent
    of it."""
    stream = stream or sys.stderr
    if quiet:
        return _Silent()
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return ProgressBar(total, stream, pot=pot)
    return LogLines(total, stream, pot=pot)


def pot_of(game) -> float | None:
    """The starting pot of a poker spot (a game with a numeric ``pot``, as
    ``holdem_spot``), in whose percent values and exploitability are also reported; else
    ``None``."""
    pot = getattr(game, "pot", None)
    if isinstance(pot, (int, float)) and not isinstance(pot, bool) and pot > 0:
        return float(pot)
    return None


def pot_percent(value: float, pot: float) -> str:
    """``value`` in percent of ``pot`` as reported (``"0.1230%"``): :func:`percent`."""
    return percent(100 * value / pot)


def percent(share: float) -> str:
    """A percentage as reported (``"0.1230%"``); rounding noise about 0 (an exploitability
    of ``-1e-9`` chips) is ``"0.0000%"``, not ``"-0.0000%"``."""
    return f"{round(float(share), 4) + 0.0:.4f}%"


class Status:
    """What a command is doing before it iterates: ``begin``, ``update`` (transient), ``end``.

    On a terminal a phase is a bar (:class:`jaxcfr._util.bars.Bar`, redrawn on its own
    clock): a spinner with the elapsed time (compiling), or, for lowering
    (:meth:`nodes`), the nodes walked with their rate, and the percent and ETA once the
    size is estimated; ``end`` replaces it by its line. Otherwise ``begin`` and ``end``
    print a line each and ``update`` one every ``every`` seconds, so that a log file shows
    progress without a line per update.

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
        self.bar: Bar | None = None
        self._text = ""

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()
        self.last_line = time.perf_counter()

    def _open(self, text: str, total: int | None = None, unit: str | None = None) -> Bar:
        self.close()
        self._text = text
        self.bar = Bar(text, total, stream=self.stream, unit=unit, terminal=True)
        return self.bar

    def begin(self, text: str) -> None:
        """A phase starts (``lowering leduc_poker``): a spinner with the elapsed time."""
        if self.tty:
            self._open(text)
        else:
            self._line(f"{text} ...")

    def update(self, text: str) -> None:
        """Where the phase is (``lowering leduc_poker: 40,960 nodes``): the bar's text on a
        terminal, a line every ``every`` seconds elsewhere."""
        if self.tty:
            if self.bar is None:
                self._open(text)
            else:
                self.bar.set_description(text)
        elif time.perf_counter() - self.last_line >= self.every:
            self._line(text)

    def end(self, text: str) -> None:
        """The phase is done (``lowered leduc_poker: 9,457 nodes ... in 0.2 s``)."""
        if self.tty and self.bar is not None:
            self.bar.close(leave=False)
            self.bar = None
        self._line(text)

    def nodes(self, text: str) -> Callable[[int], None]:
        """A ``progress(nodes_walked)`` hook for :func:`jaxcfr.lower`: on a terminal a bar
        of the nodes walked (percent and ETA once ``hook.expect(total)`` gives the size
        estimate), elsewhere a line with the nodes walked and the rate."""
        start = time.perf_counter()
        expected: list[int] = []

        def hook(walked: int) -> None:
            if self.tty:
                if self.bar is None or self._text != text or not self.bar.counts:
                    self._open(text, expected[0] if expected else None, unit=" nodes")
                self.bar.update_to(walked)
                return
            rate = walked / max(time.perf_counter() - start, 1e-9)
            self.update(f"{text}: {walked:,} nodes, {rate:,.0f} nodes/s")

        def expect(total: float) -> None:
            expected[:] = [max(1, int(total))]
            if self.tty and self.bar is not None and self._text == text and self.bar.counts:
                self.bar.set_total(expected[0])
        hook.expect = expect              # type: ignore[attr-defined]
        return hook

    def phase(self, text: str, done: int, total: int) -> None:
        """A phase of counted steps (``phase("solving subgames", 1, 3)``, the
        ``progress`` of :func:`jaxcfr.subgames.resolve_subgames`): a bar with percent,
        elapsed time and ETA on a terminal, closed when a new phase starts; elsewhere a line
        as the phase starts and every ``every`` seconds."""
        if self.tty:
            if self.bar is None or self._text != text:
                self._open(text, total, unit=" steps")
            self.bar.update_to(done)
            return
        if self._text != text:
            self._text = text
            self._line(f"{text}: {done}/{total}")
        elif time.perf_counter() - self.last_line >= self.every or done == total:
            self._line(f"{text}: {done}/{total}")

    def note(self, text: str) -> None:
        """A message of its own line (lowering's news: the size estimate, a cache hit)."""
        if self.tty and self.bar is not None:
            self.bar.write(text)
        else:
            self._line(text)

    def close(self) -> None:
        """End a phase left open (before an error message is printed)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> "Status":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


class _SilentStatus(Status):
    def __init__(self):
        super().__init__(stream=None, tty=False)

    def _line(self, text: str) -> None:
        pass



def make_status(*, quiet: bool = False, stream: TextIO | None = None) -> Status:
    """The status line for ``stream`` (default stderr), or a silent one."""
    return _SilentStatus() if quiet else Status(stream)
