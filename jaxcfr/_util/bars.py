"""Progress bars on a terminal: one owner of tqdm for every command.

:class:`Bar` is a tqdm bar on stderr (or a given stream) that

* shows the percent, the count, the elapsed time, the ETA and the rate when the total is
  known (training, solving, lowering once its size is estimated, re-solving's steps), and
  a spinner with the elapsed time and the count when it is not (compiling, lowering a tree
  of unknown size);
* is redrawn on its own clock (a daemon thread, every :data:`REDRAW_EVERY` seconds), not
  only when the work reports, so that the elapsed time and the ETA move during a long
  compiled chunk or a long compile;
* draws nothing at all when the stream is not a terminal (a log file keeps the plain lines
  of :mod:`jaxcfr.runs.progress` instead).

tqdm is imported only when a bar is drawn.

Example::

    >>> with Bar("lowering leduc_poker", unit="nodes") as bar:   # total not yet known
    ...     bar.set_total(9_457)                                    # the estimate arrives
    ...     bar.update_to(4_096)
"""

from __future__ import annotations

import itertools
import sys
import threading
from typing import TextIO

__all__ = ["Bar", "on_terminal", "REDRAW_EVERY", "SPINNER"]

#: Seconds between two redraws of a bar by its own clock.
REDRAW_EVERY = 0.5
#: The spinner's frames (a bar without a total).
SPINNER = "|/-\\"

_KNOWN = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
          "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
_UNKNOWN = "{desc} [{elapsed}, {n_fmt}{unit}{postfix}]"
_SPIN = "{desc} [{elapsed}{postfix}]"


def on_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except (ValueError, OSError):
        return False


class Bar:
    """A tqdm bar redrawn on its own clock; silent unless ``stream`` is a terminal.

    Args:
      desc: what is measured (``"cfr+"``, ``"lowering leduc_poker"``).
      total: the count at the end, or ``None`` (a spinner; :meth:`set_total` may give it
        later).
      stream: default ``sys.stderr``.
      unit: what is counted (``"it"``, ``" nodes"``: written right after the number and
        before ``/s``); ``None``: nothing is counted (a
        spinner with the elapsed time only, for compiling).
      initial: the count at the start (a resumed run).
      every: seconds between two redraws by the bar's own clock.
      terminal: draw even if ``stream`` is not a terminal (tests); default: ask the stream.
    """

    def __init__(self, desc: str, total: int | None = None, *, stream: TextIO | None = None,
                 unit: str | None = "it", initial: int = 0, every: float = REDRAW_EVERY,
                 terminal: bool | None = None):
        self.stream = stream or sys.stderr
        self.active = on_terminal(self.stream) if terminal is None else terminal
        self._bar = None
        self._frames = itertools.cycle(SPINNER)
        self._note = ""
        self._desc = desc
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.counts = unit is not None
        if not self.active:
            return
        from tqdm import tqdm
        self._bar = tqdm(total=total, desc=desc, file=self.stream, unit=unit or "it",
                         initial=initial, dynamic_ncols=True, leave=True, mininterval=0.1,
                         smoothing=0.3, bar_format=self._format(total), ascii=False)
        self._spin()
        self._thread = threading.Thread(target=self._tick, args=(every,), daemon=True,
                                        name="jaxcfr-progress-bar")
        self._thread.start()

    def _format(self, total) -> str:
        if total is not None:
            return _KNOWN
        return _UNKNOWN if self.counts else _SPIN

    def _spin(self) -> None:
        """The description, with a spinner frame while the total is unknown, and the note."""
        bar = self._bar
        frame = f" {next(self._frames)}" if bar.total is None else ""
        bar.set_description_str(self._desc + frame, refresh=False)
        bar.set_postfix_str(self._note, refresh=False)

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            with self._lock:
                if self._bar is None:
                    return
                self._spin()
                self._bar.refresh()

    # -- what the work reports -------------------------------------------------------
    def update_to(self, n: int) -> None:
        """The count is now ``n``."""
        if self._bar is None:
            return
        with self._lock:
            if self._bar is not None:
                self._bar.update(int(n) - self._bar.n)

    def set_total(self, total: int | None) -> None:
        """The total becomes known (a size estimate): percent and ETA from now on."""
        if self._bar is None:
            return
        with self._lock:
            self._bar.total = None if total is None else max(1, int(total))
            self._bar.bar_format = self._format(self._bar.total)
            self._spin()
            self._bar.refresh()

    def set_note(self, text: str) -> None:
        """Text after the numbers (``"exploitability 1.2e-03"``)."""
        if self._bar is None:
            return
        with self._lock:
            self._note = text
            self._spin()
            self._bar.refresh()

    def set_description(self, text: str) -> None:
        """The text before the numbers."""
        if self._bar is None:
            return
        with self._lock:
            self._desc = text
            self._spin()
            self._bar.refresh()

    def write(self, line: str) -> None:
        """A line of its own above the bar (the bar is cleared and redrawn)."""
        if self._bar is None:
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        with self._lock:
            self._bar.clear()
            self.stream.write(line + "\n")
            self.stream.flush()
            self._bar.refresh()

    def close(self, leave: bool = True) -> None:
        """Stop the clock; the bar's last drawing stays (``leave``) or is erased."""
        self._stop.set()
        with self._lock:
            bar, self._bar = self._bar, None
        if self._thread is not None:
            self._thread.join(timeout=2 * REDRAW_EVERY + 1)
            self._thread = None
        if bar is not None:
            bar.leave = leave
            bar.close()

    def __enter__(self) -> "Bar":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False
