"""The hold'em peer: b-inary's postflop-solver, driven through its ``pf_bench`` example.

``bench_holdem`` and ``bench_public_stack`` time it beside jaxcfr. The binary is not part
of this repository: build it as docs/holdem.md "Building the peer" says, then give its
path with ``--peer PATH`` or in ``$JAXCFR_PF_BENCH``. It runs on one thread
(``RAYON_NUM_THREADS=1``) and prints its own CPU and wall totals of ``solve_step``, the
exploitability at each check (evaluations timed apart) and its ``memory_usage``;
:func:`run_measured` adds the process's peak resident bytes, seen from outside.
:func:`memory_of` asks the peer's ``postflop_strategy_dump`` (built beside ``pf_bench``
from ``benchmarks/peers/``) for the exact ``memory_usage`` of any board and ranges.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import time

import numpy as np

__all__ = ["ENV", "default_binary", "run", "run_measured", "totals", "checks",
           "memory_usage", "evaluations", "dumper_beside", "memory_of", "dump_cpu",
           "strategy_dump"]

#: The environment variable naming the ``pf_bench`` binary.
ENV = "JAXCFR_PF_BENCH"
_TOTALS = re.compile(r"iterations=(\d+) iter_wall_total=([\d.]+)s iter_cpu_total=([\d.]+)s")
_CHECK = re.compile(r"iter (\d+) exploitability=([\d.]+) \([^)]*\) iter_wall=([\d.]+)s "
                    r"iter_cpu=([\d.]+)s")
_MEMORY = re.compile(r"memory_usage\(\): uncompressed=([\d.]+) MiB")
_EVALS = re.compile(r"exploitability evals=(\d+) wall_total=([\d.]+)s")


def default_binary() -> str:
    """``$JAXCFR_PF_BENCH``, or ``""`` (no peer) when it is not set."""
    return os.environ.get(ENV, "")


#: GNU time, which reports its child's peak resident KiB (``%M``); a child of this process
#: cannot report its own: Linux carries the peak of the process it was forked from (this
#: Python) across ``exec``.
_TIME = "/usr/bin/time"
_PEAK = re.compile(r"pf_bench_peak_kib=(\d+)")


def run_measured(binary: str, spot: tuple[str, ...], iterations: int,
                 check: int) -> tuple[str, int | None]:
    """``pf_bench SPOT... ITERATIONS CHECK`` on one thread: its standard output and its
    peak resident bytes, measured by GNU time (``None`` without ``/usr/bin/time``).
    ``ITERATIONS`` 0 stops after building the game, before its tables are allocated: its
    peak is the baseline."""
    timed = os.path.exists(_TIME)
    command = [binary, *spot, str(iterations), str(check)]
    if timed:
        command = [_TIME, "-f", "pf_bench_peak_kib=%M", *command]
    proc = subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, RAYON_NUM_THREADS="1"))
    if proc.returncode != 0:
        raise RuntimeError(f"pf_bench {' '.join(spot)} failed ({proc.returncode}): "
                           f"{proc.stderr[-2000:]}")
    peak = _PEAK.search(proc.stderr) if timed else None
    return proc.stdout, int(peak.group(1)) * 1024 if peak else None


def run(binary: str, spot: tuple[str, ...], iterations: int, check: int) -> str:
    """``pf_bench SPOT... ITERATIONS CHECK`` on one thread; its standard output."""
    return run_measured(binary, spot, iterations, check)[0]


def totals(out: str, iterations: int) -> tuple[float, float]:
    """``(cpu, wall)`` seconds of the ``iterations`` the output of :func:`run` reports."""
    found = _TOTALS.search(out)
    if found is None:
        raise RuntimeError(f"unexpected pf_bench output:\n{out}")
    if int(found.group(1)) != iterations:
        raise RuntimeError(f"the peer ran {found.group(1)} iterations, not {iterations}")
    return float(found.group(3)), float(found.group(2))


def checks(out: str) -> list[tuple[int, float, float, float]]:
    """``(iteration, exploitability in chips, solve_step wall s, solve_step CPU s)`` at
    each check the output of :func:`run` printed (every check when ``CHECK`` >= 10; the
    CPU seconds tick at 10 ms, the wall seconds are ``Instant``'s)."""
    return [(int(i), float(e), float(w), float(c)) for i, e, w, c in _CHECK.findall(out)]


def memory_usage(out: str) -> int:
    """The game's own ``memory_usage()`` (uncompressed storage) in bytes (0.1 MiB steps)."""
    found = _MEMORY.search(out)
    if found is None:
        raise RuntimeError(f"unexpected pf_bench output:\n{out}")
    return round(float(found.group(1)) * 2 ** 20)


def evaluations(out: str) -> tuple[int, float]:
    """``(count, wall seconds)`` of the exploitability evaluations it timed apart."""
    found = _EVALS.search(out)
    return (int(found.group(1)), float(found.group(2))) if found else (0, 0.0)


def dumper_beside(binary: str) -> str:
    """The ``postflop_strategy_dump`` built beside ``pf_bench`` at ``binary`` (``""`` when
    there is none: docs/holdem.md "Building the peer")."""
    path = os.path.join(os.path.dirname(binary), "postflop_strategy_dump")
    return path if binary and os.path.exists(path) else ""


def memory_of(dumper: str, board: str, ranges: tuple[str, str], pot: int,
              stack: int) -> tuple[int, tuple[int, int]]:
    """The peer's ``memory_usage()`` in bytes (uncompressed: float32 storage) of the spot
    ``board`` with ``ranges`` (OOP's, IP's), its example's sizes, and its hand counts."""
    out = subprocess.run([dumper, board, *ranges, str(pot), str(stack), "0"],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[out.index("memory_usage") + 1]), (int(out[out.index("hands") + 1]),
                                                     int(out[out.index("hands") + 2]))


def _dump_command(dumper: str, board: str, ranges: tuple[str, str], pot: int, stack: int,
                  iterations: int, trace: bool = False) -> list[str]:
    return [dumper, board, *ranges, str(pot), str(stack), str(iterations),
            *(["trace"] if trace else [])]


def dump_cpu(dumper: str, board: str, ranges: tuple[str, str], pot: int, stack: int,
             iterations: int) -> tuple[float, float]:
    """CPU and wall seconds of ``postflop_strategy_dump`` (one thread) solving the spot for
    ``iterations`` and writing its strategy (to ``/dev/null``): building, iterating,
    finalizing and the dump. ``pf_bench`` knows only its two range sets; the difference of
    two such runs is the peer's CPU of the iterations between them, on any spot."""
    before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(_dump_command(dumper, board, ranges, pot, stack, iterations),
                   stdout=subprocess.DEVNULL, check=True,
                   env=dict(os.environ, RAYON_NUM_THREADS="1"))
    after, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter() - wall
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall)


def strategy_dump(dumper: str, board: str, ranges: tuple[str, str], pot: int, stack: int,
                  iterations: int, trace: bool = False) -> dict:
    """The peer's solve of a spot (its example's sizes) after ``iterations``, read from
    ``postflop_strategy_dump``: ``{"hands": [OOP's, IP's] (labels in its order),
    "trace": [exploitability after each iteration] (with ``trace``), "final": {"values",
    "best_response_values", "exploitability"}, "strategies": {path: (player, [H_p, A]
    float64 average strategy)}}``, the path the actions and dealt cards from the spot's
    root joined by ``","`` (every card, isomorphic ones included)."""
    out = subprocess.run(_dump_command(dumper, board, ranges, pot, stack, iterations, trace),
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, RAYON_NUM_THREADS="1")).stdout
    trace_, final, hands, strategies = [], {}, {0: [], 1: []}, {}
    rows: list = []
    for line in out.splitlines():
        head, _, rest = line.partition(" ")
        if head == "#":
            path = line[line.index("[") + 1:line.index("]")]
            player = int(line.rsplit(" ", 1)[1])
            rows = []
            strategies[path] = (player, rows)
        elif head == "trace":
            trace_.append(float(rest.split()[1]))
        elif head in ("ev", "br"):
            final[{"ev": "values", "br": "best_response_values"}[head]] = [
                float(x) for x in rest.split()]
        elif head == "exploitability":
            final["exploitability"] = float(rest)
        else:
            if len(hands[player]) == len(rows):      # the player's first node lists its hands
                hands[player].append(head)
            rows.append(rest)
    strategies = {path: (p, np.asarray(" ".join(rows).split(), np.float64).reshape(len(rows), -1))
                  for path, (p, rows) in strategies.items()}
    return {"hands": [hands[0], hands[1]], "trace": trace_, "final": final,
            "strategies": strategies}
