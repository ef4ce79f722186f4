"""The hold'em peer: b-inary's postflop-solver, driven through its ``pf_bench`` example.

``bench_holdem`` and ``bench_public_stack`` time it beside jaxcfr. The binary is not part
of this repository: build it as docs/holdem.md "Building the peer" says, then give its
path with ``--peer PATH`` or in ``$JAXCFR_PF_BENCH``. It runs on one thread
(``RAYON_NUM_THREADS=1``) and prints its own CPU and wall totals of ``solve_step``.
"""

from __future__ import annotations

import os
import re
import subprocess

__all__ = ["ENV", "default_binary", "run", "totals"]

#: The environment variable naming the ``pf_bench`` binary.
ENV = "JAXCFR_PF_BENCH"
_TOTALS = re.compile(r"iterations=(\d+) iter_wall_total=([\d.]+)s iter_cpu_total=([\d.]+)s")


def default_binary() -> str:
    """``$JAXCFR_PF_BENCH``, or ``""`` (no peer) when it is not set."""
    return os.environ.get(ENV, "")


def run(binary: str, spot: tuple[str, ...], iterations: int, check: int) -> str:
    """``pf_bench SPOT... ITERATIONS CHECK`` on one thread; its standard output."""
    return subprocess.run([binary, *spot, str(iterations), str(check)], capture_output=True,
                          text=True, check=True,
                          env=dict(os.environ, RAYON_NUM_THREADS="1")).stdout


def totals(out: str, iterations: int) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of the ``iterations`` the output of :func:`run` reports."""
    found = _TOTALS.search(out)
    if found is None:
        raise RuntimeError(f"unexpected pf_bench output:\n{out}")
    if int(found.group(1)) != iterations:
        raise RuntimeError(f"the peer ran {found.group(1)} iterations, not {iterations}")
    return float(found.group(3)), float(found.group(2))
