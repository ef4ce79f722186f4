"""The programs of ``benchmarks/`` imported as modules, for the tests of their arithmetic
and options: ``benchmarks/`` on ``sys.path`` while the test module runs (the programs
import ``benchkit`` as their own package), the path restored after."""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextlib.contextmanager
def benchmark_modules(*names: str):
    """Yield the modules ``names`` (``"bench_holdem"``, ``"benchkit.gpu.plan"``) imported
    with ``benchmarks/`` first on ``sys.path``; the path is restored on exit."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield tuple(importlib.import_module(n) for n in names)
    finally:
        sys.path[:] = saved
