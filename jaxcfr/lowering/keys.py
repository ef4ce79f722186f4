"""The rows' information-set keys, ``(player, key)`` per row, without a tuple per row.

:class:`InfosetKeys` is ``LoweredGame.infoset_keys`` as lowering makes it: the keys in one
tuple and the players in one small int array. It reads like the tuple of ``(player, key)``
pairs it replaces (``len``, ``keys[row]``, slices, iteration, equality with a tuple or
another :class:`InfosetKeys`); a pair is made when it is read. That is about 55 bytes a
row less than a tuple of pairs (a 2-tuple is 56 bytes): 3.4 bytes a node on
``liars_dice(sides=8)`` (issue 32 item 1).

Example::

    >>> from jaxcfr.lowering.keys import InfosetKeys
    >>> keys = InfosetKeys([0, 1, 0], ("a", "b", "c"))
    >>> keys[1], len(keys), keys == ((0, "a"), (1, "b"), (0, "c"))
    ((1, 'b'), 3, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["InfosetKeys"]


class InfosetKeys(Sequence):
    """``[I - 1]`` ``(player, key)`` per real row (see the module docstring).

    ``players``: ``[I - 1]`` int8 (int32 past 127 players); ``keys``: tuple of keys.
    """

    __slots__ = ("players", "keys")

    def __init__(self, players, keys):
        keys = tuple(keys)
        players = np.asarray(players, dtype=np.int64 if not len(keys) else None)
        if players.ndim != 1 or len(players) != len(keys):
            raise ValueError(f"InfosetKeys needs one player per key, got {players.shape} "
                             f"players for {len(keys)} keys")
        small = np.int8 if not len(players) or int(players.max()) < 128 else np.int32
        self.players = players.astype(small)
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(zip(self.players[i].tolist(), self.keys[i]))
        return (int(self.players[i]), self.keys[i])

    def __iter__(self):
        return zip(self.players.tolist(), self.keys)

    def __eq__(self, other) -> bool:
        if isinstance(other, (InfosetKeys, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"InfosetKeys({len(self):,} rows)"

    def __reduce__(self):
        return (InfosetKeys, (self.players, self.keys))

    @property
    def nbytes(self) -> int:
        """Bytes of the players' array and of the keys' tuple (not the keys themselves)."""
        return int(self.players.nbytes) + 8 * len(self.keys)
