"""Reading a file a user names, bounded: a path may be a device or a pipe that never ends
(``--lock /dev/zero``, a run directory's ``lock.json`` linked to it), which an unbounded
``read()`` follows until the process is killed for memory.

Example::

    >>> data = read_bytes("lock.json")          # a regular file: all of it
    >>> read_bytes("/dev/zero")                 # raises FileTooLarge (an OSError)
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["STREAM_LIMIT", "FileTooLarge", "read_bytes"]

#: The most bytes read from a path that is not a regular file (a device, a pipe, a socket).
STREAM_LIMIT = 64 * 2 ** 20


class FileTooLarge(OSError):
    """A stream that is not a regular file went on past the limit; ``strerror`` says so
    (callers that report ``OSError.strerror`` need nothing more)."""


def read_bytes(path: str | os.PathLike, *, limit: int = STREAM_LIMIT) -> bytes:
    """The bytes of ``path``: a regular file whole; anything else (``/dev/zero``, a pipe)
    up to ``limit`` bytes, and :class:`FileTooLarge` if it goes on.

    Raises:
      OSError: the file cannot be opened or read; FileTooLarge: see above.
    """
    with open(path, "rb") as f:
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return f.read()
        data = f.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"not a regular file, and it goes on past "
                                        f"{limit:,} bytes (a device or a stream?)",
                           os.fspath(path))
    return data
