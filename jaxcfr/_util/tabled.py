"""An ``[N, *tail]`` array held as a table of its distinct rows and an ``[N]`` index.

A lowered game's payoffs ``[N, P]`` and chance probabilities ``[N]`` take few distinct
values (Liar's dice: two payoff vectors and one probability besides 1; Leduc: 15 payoff
vectors): :class:`TabledArray` keeps ``table [U, *tail]`` and ``index [N]`` of the smallest
unsigned dtype (1 byte a node up to 256 distinct rows) instead of 8 or 16 bytes a node,
and reads like the array it stands for (issue 32, item 1):

* ``np.asarray(x)`` (and every NumPy function, ``x + 1``, comparisons) makes the dense
  array, ``table[index]``, bit for bit (rows are told apart by their bytes, so ``-0.0``
  and ``0.0`` stay apart); it is not kept;
* ``x[i]``, ``x[a:b]``, ``x[nodes]``, ``x[nodes, j]`` index the rows without making it;
* ``shape``, ``dtype``, ``ndim``, ``len`` are the dense array's; :attr:`nbytes` is what
  it holds (index and table).

Example::

    >>> import numpy as np
    >>> x = tabled(5, np.array([1, 3]), np.array([[1.0, -1.0], [1.0, -1.0]]),
    ...            fill=np.zeros(2))
    >>> x.shape, x.index.dtype.name, len(x.table)
    ((5, 2), 'uint8', 2)
    >>> x[3].tolist(), np.asarray(x)[:, 0].tolist()
    ([1.0, -1.0], [0.0, 1.0, 0.0, 1.0, 0.0])
"""

from __future__ import annotations

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

__all__ = ["TabledArray", "tabled", "index_dtype", "small_int_dtype"]


def small_int_dtype(largest: int) -> np.dtype:
    """The smallest signed integer dtype that holds ``-1 .. largest`` (host node arrays:
    slots, players)."""
    for dtype in (np.int8, np.int16, np.int32):
        if largest <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def index_dtype(count: int) -> np.dtype:
    """The smallest unsigned dtype that holds indices ``0 .. count - 1``."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if count <= int(np.iinfo(dtype).max) + 1:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


#: Rows per chunk of :func:`tabled`'s pass (its temporaries are a chunk's, not ``T``'s).
CHUNK = 1 << 16
#: Most distinct rows :func:`tabled` tables (a 2-byte index); past it the array is dense.
MOST_ROWS = 1 << 16


def _keys(rows: np.ndarray) -> np.ndarray:
    """``[T]`` keys equal exactly when the rows are equal byte for byte."""
    width = rows.dtype.itemsize * int(np.prod(rows.shape[1:], dtype=np.int64))
    keys = np.ascontiguousarray(rows).reshape(len(rows), -1).view(
        np.dtype((np.void, width))).reshape(-1)
    return keys.view(np.dtype(f"u{width}")) if width in (1, 2, 4, 8) else keys


def tabled(n: int, at: np.ndarray, rows: np.ndarray, fill):
    """The ``[n, *tail]`` array that is ``rows[k]`` at ``at[k]`` and ``fill`` (one row)
    elsewhere: a :class:`TabledArray` (its distinct rows, told apart by their bytes so that
    ``-0.0`` and ``0.0`` stay apart, and an index), or a dense array past
    :data:`MOST_ROWS` distinct rows.

    One pass over ``rows`` in chunks of :data:`CHUNK`: the temporaries are a chunk's,
    and the index is written in place (no ``[T]`` inverse)."""
    rows = np.asarray(rows)
    at = np.asarray(at)
    fill = np.asarray(fill, dtype=rows.dtype).reshape((1,) + rows.shape[1:])
    entry: dict[bytes, int] = {fill[0].tobytes(): 0}
    table = [fill[0]]
    index = np.zeros(n, dtype=np.uint8)            # (widened when a 257th row comes)
    for lo in range(0, len(rows), CHUNK):
        chunk = rows[lo:lo + CHUNK]
        _, first, inverse = np.unique(_keys(chunk), return_index=True, return_inverse=True)
        entries = np.empty(len(first), dtype=np.int64)
        for j, k in enumerate(first.tolist()):
            key = chunk[k].tobytes()
            e = entry.get(key)
            if e is None:
                if len(table) == MOST_ROWS:
                    dense = np.repeat(fill, n, axis=0)
                    dense[at] = rows
                    return dense
                e = entry[key] = len(table)
                table.append(chunk[k])
                if len(table) == 257:
                    index = index.astype(np.uint16)
            entries[j] = e
        index[at[lo:lo + CHUNK]] = entries[inverse.reshape(-1)]
    return TabledArray(np.stack(table), index)


class TabledArray(NDArrayOperatorsMixin):
    """``table[index]`` without making it (see the module docstring).

    ``table``: ``[U, *tail]``; ``index``: ``[N]`` unsigned ints into it.
    """

    __slots__ = ("table", "index")
    __array_priority__ = 20

    def __init__(self, table: np.ndarray, index: np.ndarray):
        table, index = np.asarray(table), np.asarray(index)
        if index.ndim != 1 or index.dtype.kind != "u":
            raise ValueError(f"TabledArray index must be a 1-D unsigned array, got "
                             f"{index.dtype} of shape {index.shape}")
        if table.ndim < 1 or (len(index) and int(index.max()) >= len(table)):
            raise ValueError(f"TabledArray index (max {int(index.max(initial=0))}) is past "
                             f"its table of {len(table)} rows")
        self.table = table
        self.index = index

    # -- the array it stands for ---------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.index),) + self.table.shape[1:]

    @property
    def dtype(self) -> np.dtype:
        return self.table.dtype

    @property
    def ndim(self) -> int:
        return self.table.ndim

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes held (index and table), not the dense array's."""
        return int(self.index.nbytes + self.table.nbytes)

    def __len__(self) -> int:
        return len(self.index)

    def __array__(self, dtype=None, copy=None):
        table = self.table if dtype is None else self.table.astype(dtype, copy=False)
        return table[self.index]

    def astype(self, dtype, copy: bool = True) -> np.ndarray:
        """The dense array in ``dtype`` (the table converted first: no dense temporary)."""
        return self.__array__(dtype)

    def __getitem__(self, key):
        if isinstance(key, tuple) and key and not any(k is Ellipsis or k is None
                                                      for k in key):
            first, rest = key[0], key[1:]
        elif key is Ellipsis or key is None:
            return np.asarray(self)[key]
        else:
            first, rest = key, ()
        rows = self.table[self.index[first]]
        if not rest:
            return rows
        lead = rows.ndim - (self.table.ndim - 1)          # 0 for one node, else 1
        return rows[(slice(None),) * lead + rest]

    def __iter__(self):
        return iter(np.asarray(self))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(np.asarray(x) if isinstance(x, TabledArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, TabledArray) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getattr__(self, name: str):
        # anything else the dense array has (``max``, ``reshape``, ...): made for the call
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def __getstate__(self):
        return (self.table, self.index)

    def __setstate__(self, state):
        self.table, self.index = state

    def __repr__(self) -> str:
        return (f"TabledArray(shape={self.shape}, dtype={self.dtype}, {len(self.table)} "
                f"distinct rows, {self.index.dtype} index)")
