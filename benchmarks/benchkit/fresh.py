"""Fresh-process runs: one new process (a Python one: this interpreter; or any program),
what it printed, its exit status, and its wall and CPU seconds measured from outside.

The CPU seconds are those of the children that finished while it ran
(``RUSAGE_CHILDREN``): run fresh processes one at a time, as the programs do.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any, Mapping, Sequence

__all__ = ["Fresh", "fresh_python", "fresh_process"]


@dataclasses.dataclass
class Fresh:
    """One finished fresh process."""
    stdout: str
    stderr: str
    returncode: int
    wall_s: float        # from its start to its end, seen from outside
    cpu_s: float         # user and system CPU seconds of the process (and its children)

    def last_json(self) -> Any:
        """The last line it printed, read as JSON (the programs' way of reporting)."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def fresh_python(args: Sequence[str], *, env: Mapping[str, str] | None = None,
                 cwd: str | os.PathLike | None = None, timeout: float | None = None,
                 check: bool = False) -> Fresh:
    """Run ``python ARGS`` (this interpreter) in a new process and wait for it.

    ``env``: its whole environment (default: this process's). ``timeout``: seconds, after
    which it is killed and :class:`subprocess.TimeoutExpired` raised. ``check``: a
    non-zero exit status raises :class:`RuntimeError` with the end of its stderr.
    """
    return fresh_process([sys.executable, *args], env=env, cwd=cwd, timeout=timeout,
                         check=check)


def fresh_process(command: Sequence[str], *, env: Mapping[str, str] | None = None,
                  cwd: str | os.PathLike | None = None, timeout: float | None = None,
                  check: bool = False) -> Fresh:
    """Run ``command`` (a program and its arguments, e.g. a peer's binary) in a new
    process and wait for it; the arguments as :func:`fresh_python`'s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(command), capture_output=True, text=True,
                          env=None if env is None else dict(env), cwd=cwd, timeout=timeout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and proc.returncode != 0:
        raise RuntimeError(f"child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return Fresh(proc.stdout, proc.stderr, proc.returncode, wall, cpu)
