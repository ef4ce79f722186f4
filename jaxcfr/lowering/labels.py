"""The action label into each node, stored compactly: a table of distinct labels and,
per node, the smallest unsigned integer that indexes it.

A lowered game keeps one label per node (``LoweredGame.node_action``, host only). Held
as an N-slot tuple that costs 8 bytes a node plus the tuple; :class:`NodeLabels` holds
``[N]`` indices of dtype ``uint8`` (up to 256 distinct labels), ``uint16`` or
``uint32``, and reads like the tuple (``len``, ``labels[i]``, slices, iteration,
equality with a tuple or another :class:`NodeLabels`). Labels that are equal and of the
same type share one table entry (the walk already requires every member of an
information set to list equal actions); a label that cannot be hashed keeps its own.

Example::

    >>> from jaxcfr.lowering.labels import NodeLabels
    >>> labels = NodeLabels.from_labels([None, "call", "fold", "call"])
    >>> labels[3], len(labels), labels.index.dtype.name
    ('call', 4, 'uint8')
    >>> labels == (None, "call", "fold", "call")
    True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jaxcfr._util.tabled import index_dtype

__all__ = ["NodeLabels", "Interner", "index_dtype"]


class Interner:
    """A table of distinct labels filled label by label: :meth:`add` returns a label's
    entry, shared by labels equal in type and value (an unhashable label gets an entry
    of its own). The walk interns the labels of rows' slots and chance outcomes, never
    one per node; the parallel merge interns each part's table."""

    __slots__ = ("table", "entry")

    def __init__(self):
        self.table: list = []
        self.entry: dict = {}

    def add(self, label) -> int:
        """The table entry of ``label`` (a new one when no equal label of its type is in)."""
        try:
            key = (type(label), label)
            at = self.entry.get(key)
        except TypeError:                   # unhashable: an entry of its own
            key, at = None, None
        if at is None:
            at = len(self.table)
            self.table.append(label)
            if key is not None:
                self.entry[key] = at
        return at

    def add_all(self, labels) -> np.ndarray:
        """The entries of ``labels`` (a sequence), ``[len(labels)]`` int32: each distinct
        object (by identity) is interned once, then one pass in C maps every label to
        its entry (the rows' slots repeat a few small objects)."""
        code = {ident: self.add(label) for ident, label in
                {id(x): x for x in labels}.items()}
        return np.fromiter(map(code.__getitem__, map(id, labels)), np.int32, len(labels))


class NodeLabels(Sequence):
    """``[N]`` action labels as ``table[index[i]]`` (see the module docstring).

    ``table``: tuple of distinct labels; ``index``: ``[N]`` unsigned ints into it.
    """

    __slots__ = ("table", "index")

    def __init__(self, table: tuple, index: np.ndarray):
        index = np.asarray(index)
        if index.ndim != 1 or index.dtype.kind != "u":
            raise ValueError(f"NodeLabels index must be a 1-D unsigned array, got "
                             f"{index.dtype} of shape {index.shape}")
        if len(index) and int(index.max()) >= len(table):
            raise ValueError(f"NodeLabels index {int(index.max())} is past its table of "
                             f"{len(table)} labels")
        self.table = tuple(table)
        self.index = index

    @classmethod
    def from_labels(cls, labels) -> "NodeLabels":
        """Intern ``labels`` (a sequence, or an ``[N]`` object array, kept alive meanwhile):
        the distinct objects by identity, merged by type and value, then one pass in C
        (``map``) from each label's identity to its entry: no N-sized temporaries but the
        index itself."""
        n = len(labels)
        distinct = {id(x): x for x in labels}          # identity -> object
        entry: dict = {}
        table: list = []
        code: dict[int, int] = {}                      # identity -> table entry
        for ident, label in distinct.items():
            try:
                key = (type(label), label)
                at = entry.get(key)
            except TypeError:               # unhashable: an entry of its own
                key, at = None, None
            if at is None:
                at = len(table)
                table.append(label)
                if key is not None:
                    entry[key] = at
            code[ident] = at
        del distinct, entry
        index = np.fromiter(map(code.__getitem__, map(id, labels)),
                            dtype=index_dtype(len(table)), count=n)
        return cls(tuple(table), index)

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self.table[k] for k in self.index[i].tolist())
        return self.table[int(self.index[i])]

    def __iter__(self):
        table = self.table
        return (table[k] for k in self.index.tolist())

    def __eq__(self, other) -> bool:
        if isinstance(other, NodeLabels):
            return len(self) == len(other) and tuple(self) == tuple(other)
        if isinstance(other, (tuple, list)):
            return len(self) == len(other) and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"NodeLabels({len(self):,} nodes, {len(self.table):,} distinct labels)"

    @property
    def nbytes(self) -> int:
        """Bytes of the index (the table's labels are shared with the rows)."""
        return int(self.index.nbytes)
