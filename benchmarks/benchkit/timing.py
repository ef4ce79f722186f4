"""Clocks the benchmark programs share: CPU seconds (``time.process_time``, plus the
finished children's where asked) and wall seconds (``time.perf_counter``).

On a shared machine CPU seconds are the figure to compare (other processes slow the wall
clock, not the CPU time a run needs); wall seconds say what a user waits.
"""

from __future__ import annotations

import resource
import time
from typing import Callable

__all__ = ["cpu_seconds", "clocks"]


def cpu_seconds(children: bool = False) -> float:
    """CPU seconds (user and system) this process has used so far; with ``children``,
    plus those of its children that have finished (worker processes, for instance)."""
    seconds = time.process_time()
    if children:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds += usage.ru_utime + usage.ru_stime
    return seconds


def clocks(fn: Callable[[], object]) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` that ``fn()`` took (this process's CPU)."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu
