"""This process's memory, as the benchmark programs report it (Linux).

``rss()`` is the resident bytes now (``/proc/self/statm``), ``peak_rss()`` the highest so
far (``getrusage``'s ``ru_maxrss``, which Linux gives in KiB); a figure per node is the
difference from a baseline taken before the work, divided by the nodes. ``tree_bytes(tree)``
is the bytes of a pytree's arrays (device arrays: what they hold on the device).
"""

from __future__ import annotations

import os
import resource

__all__ = ["rss", "peak_rss", "tree_bytes"]


def rss() -> int:
    """This process's resident bytes now."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss() -> int:
    """This process's highest resident bytes so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def tree_bytes(tree) -> int:
    """The bytes of the arrays of ``tree`` (a pytree of NumPy or JAX arrays)."""
    import jax          # here, not above: bench_history_scale reads rss() before JAX loads
    return int(sum(x.nbytes for x in jax.tree_util.tree_leaves(tree)))
