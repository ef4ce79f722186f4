"""Atomic file writes: a crash or kill mid-write never leaves a torn file behind.

Used by profiles, run directories (checkpoints, metrics, plots) and the cache of lowered
games.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import BinaryIO, Iterator

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_writer"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes, mode: int = 0o666) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same directory, fsync, replace).
    ``mode``: the new file's permissions (less the umask)."""
    with atomic_writer(path, mode) as f:
        f.write(data)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: int = 0o666) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` atomically when the ``with`` block ends.

    For data too large to hold twice in memory: write it piece by piece. On an
    exception the temporary file is removed and ``path`` is left as it was. ``mode``:
    the new file's permissions, less the umask (``0o600``: the user's only).
    """
    path = Path(path)
    # Not tempfile.mkstemp: its 0600 mode would ignore the umask.
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every filesystem allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
