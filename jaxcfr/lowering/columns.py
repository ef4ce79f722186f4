"""The columns of a walk: one row of typed columns per node, in pre-order.

:class:`Enumeration` is what :mod:`jaxcfr.lowering.walk` fills, what a worker of
:mod:`jaxcfr.lowering.parallel` packs (:mod:`jaxcfr.lowering.parts`) and what
:mod:`jaxcfr.lowering.lower` turns into tensors. The node codes and the own-sequence
ids are defined here; a walk rebuilds a history (for an error) from its own groups
(:meth:`jaxcfr.lowering.walk._Walk.history`), never per node.

Example::

    >>> from jaxcfr.lowering.columns import Enumeration
    >>> len(Enumeration(2))
    0
"""

from __future__ import annotations

import struct
from array import array
from typing import Any, Hashable

import numpy as np

__all__ = ["Enumeration", "Packed", "CHANCE_CODE", "TERMINAL_CODE", "SLOT_RADIX", "ROOT_PARENT",
           "as_numpy"]

#: ``Enumeration.code`` of a chance node (decision nodes store their row, >= 0).
CHANCE_CODE = -1
#: ``Enumeration.code`` of a terminal node.
TERMINAL_CODE = -2
#: Radix of the own-sequence ids ``row * SLOT_RADIX + slot`` (more than any action count).
SLOT_RADIX = 1 << 32
#: ``Enumeration.parent`` of the first node of a walk (the root, or a job's subtree root).
ROOT_PARENT = -1


class Packed:
    """A typed column filled value by value: ``append`` / ``extend`` are a Python list's,
    and :meth:`pack` moves the list into the typed ``array`` in one call.

    (``array.append`` parses its argument the old way, about 600 instructions a value;
    a list append and one ``struct.pack`` per few thousand values cost about a third.)
    ``typecode`` is ``array``'s: ``"i"`` (int32) or ``"d"`` (float64).
    """

    __slots__ = ("values", "buffer", "append", "extend", "_code")

    def __init__(self, typecode: str):
        self.values = array(typecode)
        self.buffer: list = []
        self.append = self.buffer.append
        self.extend = self.buffer.extend
        self._code = typecode

    def pack(self) -> array:
        """Move the buffered values into :attr:`values` (raises ``struct.error`` for a
        value out of range); returns it."""
        buffer = self.buffer
        if buffer:
            self.values.frombytes(struct.pack(f"{len(buffer)}{self._code}", *buffer))
            buffer.clear()
        return self.values

    def __len__(self) -> int:
        return len(self.values) + len(self.buffer)


class Enumeration:
    """The columns of one iterative pre-order walk, indexed by pre-order number.

    Per node (NumPy arrays, or typed ``array`` columns: either reads as a buffer):
    ``parent`` (int32), ``slot`` (action slot into it: the smallest signed int that holds
    the walk's slots, int8 mostly), ``depth`` (the smallest unsigned int), ``code``
    (int32: the information-set row of a decision node, :data:`CHANCE_CODE` or
    :data:`TERMINAL_CODE`) and ``label`` (unsigned ints: the entry of the action label
    into it in ``label_table``, a list of distinct labels; no node holds a label itself).
    Per terminal: ``terminals`` (int32 node) and ``returns`` (float64, ``P`` per terminal,
    flat). Per chance edge (and start item): ``chance_at`` (int32, the node below it,
    pre-order ascending) and ``chance_prob`` (float64, its probability); every other edge
    has probability 1 (no ``[N]`` column of floats). Per information-set row:
    ``row_player``, ``row_key``, ``row_actions`` (the walked game's legal actions),
    ``row_kept`` (the actions kept by the abstraction, in its order: the row's slots; the
    same object when all are kept) and ``row_seq`` (the owner's own last
    ``row * SLOT_RADIX + slot`` before the row, -1 for none: by induction this names the
    whole own sequence). Rows are numbered as they are first met in pre-order (a whole
    walk's and a merge's; ``jaxcfr.lowering.lower`` sorts them by player on that ground).
    A walk cut at a depth also has ``frontier``: ``(nodes walked before it, item)``
    per stack item at the cut, in pre-order.
    """

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.parent = array("i")
        self.slot: Any = array("i")
        self.depth: Any = array("i")
        self.label: Any = array("I")     # [N] entries into label_table
        self.label_table: list = []
        self.chance_at: Any = array("i")     # [C] pre-order nodes below a chance edge
        self.chance_prob: Any = array("d")   # [C] their edge's probability
        self.code = array("i")
        self.terminals = array("i")
        self.returns = array("d")
        self.row_player: list[int] = []
        self.row_key: list[Hashable] = []
        self.row_actions: list[tuple] = []
        self.row_kept: list[tuple] = []
        self.row_seq: list[int] = []
        self.max_actions = 1
        self.frontier: list[tuple[int, tuple]] = []
        #: a merge's node columns in depth order (``jaxcfr.lowering.levels.Levels``;
        #: then the per-node columns above are unset but ``code``, the same array)
        self.levels = None
        self.rows_of: list[dict] | None = None     # per player key -> row, once asked for

    def __len__(self) -> int:
        return len(self.code)

    def seed_rows(self, top: "Enumeration") -> list[dict]:
        """Start from ``top``'s information-set rows (a job below a cut walk); returns
        the per-player ``key -> row`` tables to extend."""
        self.row_player = list(top.row_player)
        self.row_key = list(top.row_key)
        self.row_actions = list(top.row_actions)
        self.row_kept = list(top.row_kept)
        self.row_seq = list(top.row_seq)
        self.max_actions = top.max_actions
        return [d.copy() for d in top.row_tables()]

    def row_tables(self) -> list[dict]:
        """Per player, ``key -> row`` of this walk's rows (built once, then kept)."""
        if self.rows_of is None:
            self.rows_of = [{} for _ in range(self.num_players)]
            for row, (p, key) in enumerate(zip(self.row_player, self.row_key)):
                self.rows_of[p][key] = row
        return self.rows_of


def as_numpy(values, dtype) -> np.ndarray:
    """A column as a NumPy array: a view of an ``array`` column (no copy), else a
    conversion."""
    if isinstance(values, array):
        return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype)
    return np.asarray(values, dtype=dtype)
