"""How often jitted functions were traced: the one counter behind the compile-once tests.

A function decorated with :func:`counted` adds one to its name's count each time its
Python body runs, which under ``jax.jit`` is once per trace (a compile), never per call::

    @functools.partial(jax.jit, static_argnames=("chunk",))
    @counted("chunk")
    def run_chunk(...): ...

    before = TRACES.snapshot()
    ...                                  # a second chunk of the same run
    assert TRACES.since(before) == {}    # compiled nothing

The counter only counts. (The package's other process-wide state is the programs of
:mod:`jaxcfr._util.program_cache`, kept so that a program compiles once per process.)
"""

from __future__ import annotations

import collections
import functools
from typing import Callable

__all__ = ["TRACES", "TraceCounter", "counted"]


class TraceCounter:
    """Traces per function name."""

    def __init__(self) -> None:
        self._counts: collections.Counter[str] = collections.Counter()

    def add(self, name: str) -> None:
        self._counts[name] += 1

    def __getitem__(self, name: str) -> int:
        return self._counts[name]

    def snapshot(self) -> dict[str, int]:
        """The counts now (to compare with :meth:`since` later)."""
        return dict(self._counts)

    def since(self, snapshot: dict[str, int]) -> dict[str, int]:
        """Traces since ``snapshot``, by name (names without new traces left out)."""
        return {k: v - snapshot.get(k, 0) for k, v in self._counts.items()
                if v != snapshot.get(k, 0)}


#: Every counted function's traces.
TRACES = TraceCounter()


def counted(name: str) -> Callable:
    """Count the traces of the decorated function under ``name`` (put it under ``jax.jit``)."""
    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            TRACES.add(name)
            return fn(*args, **kwargs)
        return wrapper
    return decorate
