"""The memory budget: what lowering and a solve allocate, and the check against a budget.

:func:`memory_footprint` gives the bytes of each phase of a run from the sizes of
the lowered game (``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players, floats of
``f`` bytes, ``I * A`` strategy slots):

* ``lowering``: the host's peak while walking and building the tensors:
  16 MiB + ``N * (60 + 12 P)`` + 250 per row (resident, measured 2026-12-05 after the
  compact node arrays: 58 bytes per node on ``liars_dice(sides=7)``, 53 on ``sides=8``,
  46 on ``goofspiel(cards=6)``, estimated 102, 100 and 93: cautious there; traced small
  games 84-105, estimated 96-113);
* ``lowered``: the :class:`~jaxcfr.LoweredGame` kept for the run (tensors about 19 bytes a
  node held: narrow slots and players, tabled payoffs and chance probabilities; labels
  1-2; the rows' keys and actions): ``N * (15 + 2 P)`` + ``(2 A + 150)`` per row
  (counted on small games 25-34 bytes per node, estimated 1.05-1.08 times that);
* ``device``: a solve (tensors on the device, the solver state, the evaluation's
  temporaries, which are larger than the step's, as XLA's memory analysis reports
  them): 256 MiB (compilation and runtime; measured 120-240 MB) +
  ``N * (25 + f (1 + P) + 3 f P (P + 1))`` + ``I * A * (2 + 10 f)``;
* ``total``: ``lowering + device``: the host does not get all of the walk's memory
  back (measured: 75-85% of the peak stays resident) and on a CPU the device is
  the host. This is what :func:`footprint_bytes` returns and the budget is checked
  against; on a GPU it over-counts the host.

Measured on this project's CPU machine (``python benchmarks/bench.py --memory``,
docs/lowering.md): the estimate is 1.05-1.2 times the measured peak of lowering and a
short solve for games of a million nodes or more, more for small games (where the
fixed 256 MiB dominates). A batch of ``H`` settings or ``B`` games multiplies the
device part; float64 runs pass ``float_bytes=8``.

The budget defaults to :data:`DEFAULT_MEMORY_FRACTION` of the memory available
when the run starts (``MemAvailable``), or ``JAXCFR_MEMORY_BUDGET`` bytes.

Example::

    >>> from jaxcfr.lowering.budget import footprint_bytes
    >>> footprint_bytes(294_883, 24_577, 12, 2) // 2**20       # Liar's dice, float32
    343
"""

from __future__ import annotations

import os
from typing import NamedTuple

from jaxcfr.game.contract import GameError

__all__ = ["MemoryBudgetError", "MemoryFootprint", "memory_footprint", "footprint_bytes",
           "default_memory_budget", "check_budget", "cautious_nodes", "format_bytes",
           "cautious_rows", "describe_fit", "DEFAULT_MEMORY_FRACTION"]

#: Fraction of available memory a run may plan to use by default.
DEFAULT_MEMORY_FRACTION = 0.5

# Host, lowering: a fixed part (tables, the size probe), per node (walk columns, then the
# tensors being built, and the parts of parallel workers), per node and player (returns,
# payoffs) and per row (keys, the walk's key -> row tables, row lists and their ints).
_LOWERING_FIXED, _LOWERING_PER_NODE, _LOWERING_PER_NODE_PLAYER = 16 << 20, 60, 12
_LOWERING_PER_ROW = 250
# Host, the LoweredGame kept: tensors (33 + 8 P), pre-order (4) and labels (1-2) per node;
# per row its key, actions, the pair (player, key) and the tensors' row entries (and 2 A).
_LOWERED_PER_NODE, _LOWERED_PER_NODE_PLAYER, _LOWERED_PER_ROW = 15, 2, 150
# Device, a solve: compilation and runtime; int tensors per node; per (row, action) slot
# the masks (bytes) and, in floats, the state (3), the strategy (1) and evaluation
# temporaries (6); per node in floats the chance probability and payoffs (1 + P) and the
# evaluation's temporaries (3 P (P + 1): a best response per player over [N, P] values).
_DEVICE_FIXED, _DEVICE_INT_PER_NODE = 256 << 20, 25
_DEVICE_MASK_PER_SLOT, _DEVICE_FLOATS_PER_SLOT = 2, 10


class MemoryBudgetError(GameError):
    """Lowering or solving would need more memory than the budget allows."""


class MemoryFootprint(NamedTuple):
    """Bytes of each phase of a run (see the module docstring)."""
    lowering: int      # host peak while lowering
    lowered: int       # host bytes of the LoweredGame
    device: int        # device bytes of a solve (tensors, state, temporaries, runtime)
    total: int         # lowering + device: what the budget is checked against


def memory_footprint(num_nodes: int, num_infosets: int, max_actions: int, num_players: int,
                     float_bytes: int = 4) -> MemoryFootprint:
    """The bytes a run on a game of these sizes allocates, phase by phase."""
    n, rows, p, f = int(num_nodes), int(num_infosets), int(num_players), int(float_bytes)
    slots = rows * int(max_actions)
    lowering = (_LOWERING_FIXED + n * (_LOWERING_PER_NODE + _LOWERING_PER_NODE_PLAYER * p)
                + rows * _LOWERING_PER_ROW)
    lowered = (n * (_LOWERED_PER_NODE + _LOWERED_PER_NODE_PLAYER * p)
               + rows * (2 * int(max_actions) + _LOWERED_PER_ROW))
    device = (_DEVICE_FIXED + n * (_DEVICE_INT_PER_NODE + f * (1 + p) + 3 * f * p * (p + 1))
              + slots * (_DEVICE_MASK_PER_SLOT + _DEVICE_FLOATS_PER_SLOT * f))
    return MemoryFootprint(lowering, lowered, device, lowering + device)


def footprint_bytes(num_nodes: int, num_infosets: int, max_actions: int, num_players: int,
                    float_bytes: int = 4) -> int:
    """Peak bytes of lowering and solving a game of these sizes (:func:`memory_footprint`)."""
    return memory_footprint(num_nodes, num_infosets, max_actions, num_players, float_bytes).total


def default_memory_budget(meminfo: str = "/proc/meminfo") -> int:
    """Bytes a run may plan for: ``JAXCFR_MEMORY_BUDGET``, else :data:`DEFAULT_MEMORY_FRACTION`
    of the memory available now (``MemAvailable`` in ``meminfo``), else 8 GiB."""
    env = os.environ.get("JAXCFR_MEMORY_BUDGET")
    if env:
        try:
            value = float(env)
        except ValueError:
            value = float("nan")
        if not (value >= 1 and value < float("inf")):
            raise ValueError(f"JAXCFR_MEMORY_BUDGET must be a number of bytes (e.g. 8e9), got "
                             f"{env!r}")
        return int(value)
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * DEFAULT_MEMORY_FRACTION)
    except OSError:
        pass
    return 8 << 30


def format_bytes(n: float) -> str:
    """``"1.5 GiB"``, ``"12.0 MiB"``, ``"300 B"``."""
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:,.1f} {unit}"
    return f"{int(n)} B"


def describe_fit(size, num_players: int, budget: int) -> tuple[bool, str]:
    """``(fits, sentence)`` for a :class:`~jaxcfr.lowering.size.TreeSize` against
    ``budget`` bytes."""
    need = memory_footprint(size.nodes, cautious_rows(size), max(1, size.max_actions),
                           num_players).total
    if need <= budget:
        return True, (f"{size.describe()}, about {format_bytes(need)} to lower and solve, "
                      f"within the memory budget of {format_bytes(budget)}")
    return False, (f"too large to lower: {size.describe()} need about {format_bytes(need)}, "
                   f"over the memory budget of {format_bytes(budget)} (set "
                   "JAXCFR_MEMORY_BUDGET=BYTES to raise it)")


def check_budget(nodes: int, rows: int, max_actions: int, num_players: int, budget: int, *,
                 what: str = "found so far") -> None:
    """Raise :class:`MemoryBudgetError` when a game of these sizes (``rows`` information-set
    rows, sink included) needs more than ``budget``; the error names the estimate, the
    sizes it counts, the budget and how to raise it."""
    need = footprint_bytes(nodes, rows, max_actions, num_players)
    if need > budget:
        raise MemoryBudgetError(
            f"lowering and solving need about {need / 2**20:,.1f} MiB "
            f"for {int(nodes):,} nodes and {int(rows):,} information-set rows of up to "
            f"{int(max_actions)} actions {what}, over the memory budget of "
            f"{budget / 2**20:,.1f} MiB (set memory_budget= or JAXCFR_MEMORY_BUDGET=BYTES to "
            "raise it)", rule="memory-budget")


def cautious_nodes(size) -> int:
    """The node count a :class:`~jaxcfr.lowering.size.TreeSize` vouches for: exact, or
    two standard errors below the estimate (0 for no estimate). The walk checks the budget
    with at least this many nodes, with the rows found so far, so that a game whose rows
    push it over is refused as soon as they are met, not at the end of the walk."""
    if size is None:
        return 0
    return int(size.nodes if size.exact else size.low)


def cautious_rows(size) -> int:
    """The information-set rows (sink included) a :class:`~jaxcfr.lowering.size.TreeSize`
    vouches for: the game's own count plus the sink, or 0 when it gave none (the walk
    then counts the rows it meets)."""
    rows = 0 if size is None else int(getattr(size, "rows", 0) or 0)
    return rows + 1 if rows else 0
