"""Depth order: nodes by depth, in pre-order within a depth (the tensors' node order).

:func:`depth_order` sorts a pre-order walk's nodes so (a stable counting sort, in
chunks). A worker of the parallel walk sorts its own part (:mod:`jaxcfr.lowering.parts`):
a part is a run of consecutive pre-order numbers, so each level of the whole tree is the
parts' slices of that level one after the other, and the merge puts the tree in depth
order by copying slices (:class:`Levels`), with no pass over the whole tree's
pre-order numbers.

Example::

    >>> import numpy as np
    >>> order, level_start = depth_order(np.array([0, 1, 2, 1], np.uint8))
    >>> order.tolist(), level_start
    ([0, 1, 3, 2], (0, 1, 3, 4))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["depth_order", "Levels", "CHUNK"]

#: Nodes per chunk of the passes that would otherwise make ``[N]`` int64 temporaries.
CHUNK = 1 << 16


class Levels(NamedTuple):
    """A tree's node columns in depth order (made by a merge of parts, for
    ``jaxcfr.lowering.lower``'s build). ``N`` nodes, ``T`` terminals and ``C`` chance
    edges, the latter two in pre-order.

    ``parent [N]`` int32 (depth-order number, -1 at the root), ``slot [N]`` (the walk's
    narrow ints), ``code [N]`` int32 (row, or a ``columns`` code), ``label [N]`` (entries
    into the merge's label table), ``level_start`` (``D + 1`` ints), ``at [T]`` (the
    terminals' depth-order numbers), ``returns [T * P]`` float64, ``chance_at [C]`` (the
    nodes below chance edges), ``chance_prob [C]`` float64.
    """

    parent: np.ndarray
    slot: np.ndarray
    code: np.ndarray
    label: np.ndarray
    level_start: tuple
    at: np.ndarray
    returns: np.ndarray
    chance_at: np.ndarray
    chance_prob: np.ndarray


def depth_order(depth: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """``(order, level_start)``: ``order [N]`` (int32 below 2^31 nodes, else int64) lists
    the nodes (pre-order numbers, ``depth [N]`` unsigned ints) by depth, in pre-order
    within a depth (what a stable ``argsort`` gives); ``level_start [D + 1]``.

    A counting sort in chunks of :data:`CHUNK` nodes: its temporaries are a chunk's, where
    ``argsort`` made ``[N]`` int64 (8 bytes a node at the build's peak)."""
    n = len(depth)
    levels = int(depth.max(initial=0)) + 1
    counts = np.zeros(levels, dtype=np.int64)
    for lo in range(0, n, CHUNK):      # (bincount makes its input int64: by chunks)
        counts += np.bincount(depth[lo:lo + CHUNK], minlength=levels)
    starts = np.concatenate([[0], np.cumsum(counts)])
    index = np.int32 if n < 2 ** 31 else np.int64
    order = np.empty(n, dtype=index)
    filled = starts[:-1].copy()                     # next free place of each depth
    for lo in range(0, n, CHUNK):
        chunk = depth[lo:lo + CHUNK]
        local = np.argsort(chunk, kind="stable")
        level = chunk[local]
        first = np.searchsorted(level, level, side="left")     # each depth's run in the chunk
        order[filled[level] + (np.arange(len(chunk)) - first)] = local + lo
        filled += np.bincount(chunk, minlength=levels)
    return order, tuple(int(x) for x in starts)
