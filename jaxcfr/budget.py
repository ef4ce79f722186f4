"""The memory budget: what lowering and a solve allocate, and the check against a budget.

:func:`memory_estimate` gives the bytes of each phase of a run from the sizes of
the lowered game (``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players):

* ``lowering``: the host's peak while walking and building the tensors;
* ``lowered``: the host's :class:`~jaxcfr.LoweredGame` that stays for the run;
* ``device``: the solver's device memory (tensors, state, the compiled step's and
  the evaluation's temporaries, as XLA's memory analysis reports them);
* ``total``: the peak of the whole run, ``max(lowering, lowered + device)``, which
  is what :func:`estimate_bytes` returns and the budget is checked against (on a
  CPU the device memory is the host's; on a GPU this over-counts the host).

The coefficients are measured, not guessed: ``python scripts/bench.py --memory``
prints the measured peaks beside the estimate (docs/lowering.md has the figures),
and tests/test_budget.py checks that the estimate covers what is measured.

The budget defaults to :data:`DEFAULT_MEMORY_FRACTION` of the memory available
when the run starts (``MemAvailable``), or ``JAXCFR_MEMORY_BUDGET`` bytes.

Example::

    >>> from jaxcfr.budget import estimate_bytes
    >>> estimate_bytes(294_883, 24_577, 13, 2) // 2**20       # Liar's dice, float32
    62
"""

from __future__ import annotations

import os
from typing import NamedTuple

from jaxcfr.contract import GameError

__all__ = ["MemoryBudgetError", "MemoryEstimate", "memory_estimate", "estimate_bytes",
           "default_memory_budget", "check_budget", "format_bytes", "describe_fit",
           "DEFAULT_MEMORY_FRACTION"]

#: Fraction of available memory a run may plan to use by default.
DEFAULT_MEMORY_FRACTION = 0.5

# Host bytes per node while lowering (walk columns, then the tensors being built).
_LOWERING_PER_NODE = 160
# Host bytes per node and per (row, action) slot of the LoweredGame kept for the run.
_LOWERED_PER_NODE = 60
# Device bytes: per node a fixed part and a part per float (the [N] and [N, P] tensors,
# reach and value passes), per (row, action) slot a part per float (solver tables).
_DEVICE_PER_NODE, _DEVICE_FLOATS_PER_NODE = 25, 1
_DEVICE_PER_SLOT, _DEVICE_FLOATS_PER_SLOT = 2, 4


class MemoryBudgetError(GameError):
    """Lowering or solving would need more memory than the budget allows."""


class MemoryEstimate(NamedTuple):
    """Bytes of each phase of a run (see the module docstring)."""
    lowering: int      # host peak while lowering
    lowered: int       # host bytes of the LoweredGame
    device: int        # device bytes of the solver (tensors, state, temporaries)
    total: int         # max(lowering, lowered + device)


def memory_estimate(num_nodes: int, num_infosets: int, max_actions: int, num_players: int,
                    float_bytes: int = 4) -> MemoryEstimate:
    """The bytes a run on a game of these sizes allocates, phase by phase."""
    n, slots = int(num_nodes), int(num_infosets) * int(max_actions)
    floats_per_node = _DEVICE_FLOATS_PER_NODE + 2 * num_players + 2
    lowering = n * _LOWERING_PER_NODE
    lowered = n * _LOWERED_PER_NODE + slots * 2
    device = (n * (_DEVICE_PER_NODE + float_bytes * floats_per_node)
              + slots * (_DEVICE_PER_SLOT + float_bytes * _DEVICE_FLOATS_PER_SLOT))
    return MemoryEstimate(lowering, lowered, device, max(lowering, lowered + device))


def estimate_bytes(num_nodes: int, num_infosets: int, max_actions: int, num_players: int,
                   float_bytes: int = 4) -> int:
    """Peak bytes of lowering and solving a game of these sizes (:func:`memory_estimate`)."""
    return memory_estimate(num_nodes, num_infosets, max_actions, num_players, float_bytes).total


def default_memory_budget() -> int:
    """Bytes a run may plan for: ``JAXCFR_MEMORY_BUDGET``, else a fraction of available memory."""
    env = os.environ.get("JAXCFR_MEMORY_BUDGET")
    if env:
        return int(float(env))
    try:
        with open("/proc/meminfo") as f:
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
    """``(fits, sentence)`` for a :class:`~jaxcfr.SizeEstimate` against ``budget`` bytes."""
    need = memory_estimate(size.nodes, 0, max(1, size.max_actions), num_players).total
    if need <= budget:
        return True, (f"{size.describe()}, about {format_bytes(need)} to lower and solve, "
                      f"within the memory budget of {format_bytes(budget)}")
    return False, (f"too large to lower: {size.describe()} need about {format_bytes(need)}, "
                   f"over the memory budget of {format_bytes(budget)} (JAXCFR_MEMORY_BUDGET)")


def check_budget(nodes: int, rows: int, max_actions: int, num_players: int, budget: int, *,
                 what: str = "found so far") -> None:
    """Raise :class:`MemoryBudgetError` when a game of these sizes needs more than ``budget``."""
    need = estimate_bytes(nodes, rows, max_actions, num_players)
    if need > budget:
        raise MemoryBudgetError(
            f"lowering needs at least {need / 2**20:,.1f} MiB for {nodes:,} nodes {what}, "
            f"over the memory budget of {budget / 2**20:,.1f} MiB (set memory_budget= or "
            "JAXCFR_MEMORY_BUDGET to raise it)", rule="memory-budget")
