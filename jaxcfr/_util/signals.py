"""Ctrl-C (SIGINT) and SIGTERM: how a run and a command stop when asked to.

Two pieces, both scoped (installed on entry, the previous handlers restored on exit):

* :class:`DeferredStop` (used by ``jaxcfr.train`` around its iterations): the first
  SIGINT or SIGTERM only sets ``requested``; the run stops at the next chunk boundary,
  writes a checkpoint and returns. A second signal aborts at once.
* :class:`RaisingInterrupts` (used by the ``jaxcfr`` command around a whole command):
  SIGINT raises ``KeyboardInterrupt`` and SIGTERM, what a cluster scheduler sends,
  :class:`Terminated` (a ``KeyboardInterrupt``), so that loading, lowering, compilation
  and iteration stop the same way. Python runs a signal handler in whatever Python code
  runs next, and some of that swallows exceptions: JAX's garbage-collection callback
  (``Exception ignored in: _xla_gc_callback``), or native code that turns the exception
  into another one. So the handler re-sends the signal every quarter second until the
  command has seen it, and remembers it: an error that arrives after a signal is the
  signal.

:func:`exit_at_once` is what the ``jaxcfr`` command installs first, before anything heavy
is imported (:mod:`jaxcfr.cli.launch`): until a command starts (:class:`RaisingInterrupts`
takes over), SIGINT and SIGTERM end the process at once with the usual line and status.
While Python imports JAX a raised ``KeyboardInterrupt`` could be swallowed (JAX's import
survived it and the command ran on); there is nothing to save yet, so nothing is lost.

:func:`exit_now` ends a command that was interrupted without Python's interpreter
shutdown. XLA compiles on its own threads; when Ctrl-C arrives mid-compilation the
``KeyboardInterrupt`` reaches Python while those threads still run, and tearing the
interpreter (and XLA's objects) down under them crashed with a segmentation fault
(exit status 139). Everything a run must keep is on disk by then (atomic writes).

Example::

    >>> from jaxcfr._util.signals import DeferredStop
    >>> with DeferredStop(say=print) as stop:
    ...     while not stop.requested:
    ...         ...                              # one chunk of work
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Callable, NoReturn

__all__ = ["Terminated", "DeferredStop", "RaisingInterrupts", "exit_status", "exit_now",
           "exit_at_once", "exiting_at_once", "INTERRUPTED", "TERMINATED", "REDELIVER_SECONDS"]

#: Exit status after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130
#: Exit status after SIGTERM (128 + SIGTERM).
TERMINATED = 143

_NAMES = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM"}
#: How long a raised interrupt may go unseen before the signal is sent again.
REDELIVER_SECONDS = 0.25


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop like Ctrl-C (exit status :data:`TERMINATED`)."""


def exit_status(exc: BaseException | None = None, stopped_by: str | None = None) -> int:
    """130 for Ctrl-C, 143 for SIGTERM (from the exception, or from a signal's name)."""
    if isinstance(exc, Terminated) or stopped_by == "SIGTERM":
        return TERMINATED
    return INTERRUPTED


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


class DeferredStop:
    """Defer the first SIGINT / SIGTERM to a chunk boundary; the second one aborts.

    Attributes:
      requested: a stop was asked for.
      signal_name: ``"SIGINT"`` or ``"SIGTERM"`` (the first one received), else ``None``.
    """

    def __init__(self, enabled: bool = True, say: Callable[[str], None] = print):
        self.enabled = enabled and _on_main_thread()
        self.requested = False
        self.signal_name: str | None = None
        self.say = say
        self.previous: dict[int, object] = {}

    def _handle(self, signum, frame):
        if self.requested:
            raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt
        self.requested = True
        self.signal_name = _NAMES.get(signum, str(signum))
        what = "terminate" if signum == signal.SIGTERM else "interrupt"
        self.say(f"{what}: stopping after the current chunk and writing a checkpoint "
                 f"({'Ctrl-C' if signum == signal.SIGINT else 'a second signal'} again to "
                 "abort at once)")

    def __enter__(self) -> "DeferredStop":
        if self.enabled:
            for signum in _NAMES:
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc) -> bool:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous.clear()
        return False


class RaisingInterrupts:
    """Within the block, SIGINT raises ``KeyboardInterrupt`` and SIGTERM :class:`Terminated`
    (main thread only), re-sent until seen (see the module docstring).

    Attributes:
      signal_name: ``"SIGINT"`` / ``"SIGTERM"`` once one arrived, else ``None``.
    """

    def __init__(self):
        self.signal_name: str | None = None
        self.enabled = _on_main_thread()
        self.previous: dict[int, object] = {}
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._closed = False

    def _handle(self, signum, frame) -> NoReturn:
        self.signal_name = self.signal_name or _NAMES.get(signum, str(signum))
        with self._lock:
            if not self._closed:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = threading.Timer(REDELIVER_SECONDS, self._redeliver, (signum,))
                self._timer.daemon = True
                self._timer.start()
        raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt

    def _redeliver(self, signum: int) -> None:
        with self._lock:
            if not self._closed:
                os.kill(os.getpid(), signum)

    def _unraisable(self, info) -> None:
        """An interrupt raised where Python ignores exceptions: re-sent, so say nothing."""
        if not isinstance(info.exc_value, KeyboardInterrupt):
            self._previous_hook(info)

    def __enter__(self) -> "RaisingInterrupts":
        if self.enabled:
            for signum in _NAMES:
                self.previous[signum] = signal.signal(signum, self._handle)
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable
        return self

    def __exit__(self, *exc) -> bool:
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        if self.previous:
            sys.unraisablehook = self._previous_hook
        self.previous.clear()
        return False


def _stderr_fd() -> int:
    """The descriptor of ``sys.stderr`` (the terminal's, also while descriptor 2 goes
    through :class:`jaxcfr._util.native_stderr.NativeStderrFilter`'s pipe, which an
    immediate exit would not drain); 2 where it has none."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return 2


def exit_at_once(prog: str) -> None:
    """From now on SIGINT / SIGTERM print ``PROG: interrupted`` / ``PROG: terminated`` and
    end the process with 130 / 143 at once (main thread only; see the module docstring).
    The handlers stay until something else (:class:`RaisingInterrupts`) replaces them."""
    if not _on_main_thread():
        return

    def handle(signum, frame):
        status = TERMINATED if signum == signal.SIGTERM else INTERRUPTED
        what = "terminated" if status == TERMINATED else "interrupted"
        try:
            os.write(_stderr_fd(), f"{prog}: {what}\n".encode())
        except OSError:
            pass
        os._exit(status)

    for signum in _NAMES:
        signal.signal(signum, handle)


@contextlib.contextmanager
def exiting_at_once(prog: str):
    """For the length of the block, SIGINT / SIGTERM end the process at once as under
    :func:`exit_at_once`; the handlers before it come back afterwards. For JAX's import
    inside a command: an exception raised in the middle of importing its native library
    leaves it half initialised, and touching it afterwards ends the process with a
    segmentation fault (seen: status -11 instead of 130), so a signal there ends the
    process before anything can touch it."""
    if not _on_main_thread():
        yield
        return
    saved = {signum: signal.getsignal(signum) for signum in _NAMES}
    exit_at_once(prog)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def exit_now(status: int) -> NoReturn:
    """Flush stdout and stderr and end the process with ``status``, skipping interpreter
    shutdown (see the module docstring: XLA threads may still be compiling)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not stop the exit
            pass
    os._exit(status)
