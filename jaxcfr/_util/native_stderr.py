"""XLA's banners that must not reach users: a filter on the process's C-level stderr.

XLA's ``SlowCompilationAlarm`` (``xla/service/slow_operation_alarm.cc``) logs, through
absl, at ERROR level, when a compilation takes longer than its alarm (two minutes, then
doubling), a block like (its third line, one line in the log, wrapped here)::

    E1205 08:40:00.123456  4711 slow_operation_alarm.cc:73]
    ********************************
    [Compiling module jit_step] Very slow compile? If you want to file a bug, run with envvar
        XLA_FLAGS=--xla_dump_to=/tmp/foo and attach the results.
    ********************************

It is written from C++ to file descriptor 2, so Python cannot catch it, and no XLA flag
turns the alarm off; lowering absl's level (``TF_CPP_MIN_LOG_LEVEL=3``) would also hide
real errors. :class:`NativeStderrFilter` therefore points descriptor 2 at a pipe for the
length of a command and copies what arrives to the real stderr, line by line, less these
blocks (:func:`is_banner`); Python's own ``sys.stderr`` keeps writing to the real stderr
directly (bars and messages are not delayed). On exit descriptor 2 is restored and the
pipe drained, so that nothing written afterwards (JAX's shutdown) depends on the thread.

Standard library only (layer 0).
"""

from __future__ import annotations

import os
import sys
import threading

__all__ = ["NativeStderrFilter", "is_banner", "BANNER", "ALARM_SOURCE"]

#: The words of XLA's slow-compile banner.
BANNER = b"Very slow compile?"
#: The source file of the absl line that opens the banner block.
ALARM_SOURCE = b"slow_operation_alarm.cc"
#: The most lines a banner block spans after its opening line.
BLOCK_LINES = 6


def _stars(line: bytes) -> bool:
    text = line.strip()
    return len(text) >= 8 and text == b"*" * len(text)


def is_banner(line: bytes) -> bool:
    """Whether ``line`` (bytes, with or without its newline) belongs to the banner: the
    alarm's absl line, the banner's words or the rule of asterisks around them."""
    return ALARM_SOURCE in line or BANNER in line or _stars(line)


class _Filter:
    """The line-by-line copy, less the banner blocks (a state machine over lines)."""

    def __init__(self, sink_fd: int):
        self.sink_fd = sink_fd
        self.block = 0            # lines of an open banner block still to drop, at most
        self.words = False        # the block's words were seen: the next rule closes it

    def line(self, line: bytes) -> None:
        if ALARM_SOURCE in line:
            self.block, self.words = BLOCK_LINES, False
            return
        if self.block:
            if is_banner(line) or not line.strip():
                self.block -= 1
                if BANNER in line:
                    self.words = True
                elif _stars(line) and self.words:        # the closing rule
                    self.block = 0
                return
            self.block = 0
        if BANNER in line:
            return
        _write_all(self.sink_fd, line)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data):]
        except InterruptedError:
            continue
        except OSError:
            return


class NativeStderrFilter:
    """``with NativeStderrFilter(): ...``: inside, XLA's slow-compile banner written to
    descriptor 2 is dropped; everything else passes through. A no-op off POSIX, or when
    ``enabled`` is False (``--traceback`` passes everything)."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled and os.name == "posix"
        self._saved: int | None = None
        self._thread: threading.Thread | None = None
        self._python_stderr = None
        self._read_fd: int | None = None

    def __enter__(self) -> "NativeStderrFilter":
        if not self.enabled:
            return self
        try:
            sys.stderr.flush()
            saved = os.dup(2)
            read_fd, write_fd = os.pipe()
        except (OSError, ValueError):
            self.enabled = False
            return self
        self._saved, self._read_fd = saved, read_fd
        if _writes_to_fd2(sys.stderr):   # Python's own writes bypass the pipe
            self._python_stderr = sys.stderr
            sys.stderr = open(os.dup(saved), "w", buffering=1, encoding=getattr(
                sys.stderr, "encoding", None) or "utf-8", errors="backslashreplace")
        os.dup2(write_fd, 2)
        os.close(write_fd)
        # the copy writes to its own descriptor and closes both of its own when the pipe
        # ends (a child process still holding the pipe may keep it open past __exit__)
        self._thread = threading.Thread(target=self._copy, args=(read_fd, os.dup(saved)),
                                        daemon=True,
                                        name="jaxcfr-native-stderr")
        self._thread.start()
        return self

    @staticmethod
    def _copy(read_fd: int, sink_fd: int) -> None:
        keep = _Filter(sink_fd)
        pending = b""
        try:
            while True:
                chunk = os.read(read_fd, 65536)
                if not chunk:
                    break
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    keep.line(line + b"\n")
        except Exception:  # noqa: BLE001 - never block the writers: pass the rest through
            while True:
                try:
                    chunk = os.read(read_fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                _write_all(sink_fd, chunk)
        if pending:
            keep.line(pending)
        os.close(read_fd)
        os.close(sink_fd)

    def __exit__(self, *exc) -> bool:
        if not self.enabled or self._saved is None:
            return False
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self._saved, 2)          # the pipe's write end closes: the copy drains, ends
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._python_stderr is not None:
            replaced, sys.stderr = sys.stderr, self._python_stderr
            replaced.close()
        os.close(self._saved)
        self._saved = None
        return False


def _writes_to_fd2(stream) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False
