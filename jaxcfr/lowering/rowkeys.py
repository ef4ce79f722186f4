"""Information-set keys found in bulk: a NumPy hash table of ``str`` keys, exact.

The parallel walk's merge (:mod:`jaxcfr.lowering.parts`) looks up every row a part met
(hundreds of thousands a part on Liar's dice) among the rows numbered so far. A Python
``dict`` does it one key at a time (about 200 ns a key, memory-bound, in the parent,
serially). Here a worker sends, instead of its ``str`` keys, their ``hash`` (the same in
a forked worker as in the parent: the hash secret is inherited) and their UTF-8 bytes
(:func:`encode`); the parent finds all of a part's keys at once in an open-addressing
table of player and hash mixed (linear probing, vectorised over the keys: a few NumPy
passes), then compares the player, the length and the bytes (8 at a time) of every
match: equal ``str`` keys are exactly those with equal UTF-8 bytes (``surrogatepass``:
one-to-one), so the rows are the ``dict``'s. Two different keys with the same mixed hash
(a 64-bit collision) raise :class:`Collision`; the caller then goes back to ``dict``
lookups, exact either way. The keys of the rows new to the merge are decoded
(:func:`decode`), not the others.

Shapes: ``K`` keys looked up or added, ``W`` 8-byte words of the longest key, ``R`` rows.

Example::

    >>> import numpy as np
    >>> table = KeyTable()
    >>> rows = table.add(*encode(["a", "b"]), np.array([0, 1]))
    >>> table.find(*encode(["b", "c", "a"]), np.array([1, 0, 0])).tolist()
    [1, -1, 0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["KeyTable", "Collision", "encode", "decode", "all_str"]

_EMPTY = -1
#: the table is grown (doubled, rehashed) past this fraction of its slots in use
_LOAD = 0.5
#: probes left to this many keys go on one key at a time (fewer NumPy calls)
_FEW = 16


class Collision(Exception):
    """Two different keys with the same player and hash: use ``dict`` lookups instead."""


def all_str(keys) -> bool:
    """Whether every key is a ``str`` exactly (subclasses may redefine ``==``)."""
    return set(map(type, keys)) <= {str}


def encode(keys: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hashes [K] int64, lengths [K] int64, words [K, W] uint64)`` of ``str`` keys: their
    ``hash`` and UTF-8 bytes, zero-padded to the longest rounded up to 8 bytes and read as
    8-byte words (compared a word at a time); raises ``TypeError`` for a key that is not a
    ``str``. :func:`decode` gives the keys back."""
    if not all_str(keys):
        raise TypeError("only str keys are encoded")
    data = [k.encode("utf-8", "surrogatepass") for k in keys]
    hashes = np.fromiter(map(hash, keys), np.int64, len(keys))
    lengths = np.fromiter(map(len, data), np.int64, len(data))
    width = 8 * max(1, -(-int(lengths.max(initial=0)) // 8))
    raw = np.array(data, dtype=f"S{width}") if data else np.zeros(0, f"S{width}")
    return hashes, lengths, raw.view(np.uint64).reshape(len(data), width // 8)


def decode(lengths: np.ndarray, words: np.ndarray) -> list[str]:
    """The ``str`` keys that :func:`encode` gave ``lengths`` and ``words`` for."""
    k, width = len(lengths), 8 * words.shape[1]
    if k == 0:
        return []
    raw = np.ascontiguousarray(words).view(np.uint8).reshape(k, width)
    blob = raw[np.arange(width)[None, :] < lengths[:, None]].tobytes()    # keys end to end
    text = blob.decode("utf-8", "surrogatepass")
    ends = np.cumsum(lengths).tolist()
    if len(text) == len(blob):          # one character a byte (ASCII): cut the text
        return [text[i:j] for i, j in zip([0] + ends[:-1], ends)]
    return [blob[i:j].decode("utf-8", "surrogatepass") for i, j in zip([0] + ends[:-1], ends)]


class KeyTable:
    """Rows ``0, 1, ...`` by ``(player, key)``: :meth:`add` numbers new keys in order,
    :meth:`find` looks keys up (``-1``: absent). Holds each row's player, length and
    bytes (``[R, W]`` 8-byte words: what the exact comparison reads); a slot holds a row
    and its player's and key's hashes mixed (one 64-bit value: two rows with the same one
    are a :class:`Collision`)."""

    def __init__(self):
        self.size = 0
        self.mixed = np.zeros(0, np.int64)        # [R'] (capacity R' >= R)
        self.players = np.zeros(0, np.int64)
        self.lengths = np.zeros(0, np.int64)
        self.words = np.zeros((0, 1), np.uint64)   # [R', W] words
        self._slots(16)

    def _slots(self, slots: int) -> None:
        """``slots`` empty slots (a power of two): ``slot_row [S]`` (a row or -1) and
        ``slot_hash [S]`` (its mixed hash), side by side in memory (one cache line)."""
        both = np.zeros((slots, 2), np.int64)
        both[:, 0] = _EMPTY
        self.slot_row, self.slot_hash = both[:, 0], both[:, 1]

    @staticmethod
    def _mix(hashes: np.ndarray, players: np.ndarray) -> np.ndarray:
        return hashes ^ (players * np.int64(0x5BD1E995))    # a player's keys spread apart

    def _probe(self, mixed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(row or -1, slot)`` per mixed hash: the row with it, else the first empty
        slot of its probe sequence."""
        mask = len(self.slot_row) - 1
        slot = mixed & mask
        found = self.slot_row[slot]
        hit = self.slot_hash[slot] == mixed
        hit &= found >= 0
        todo = np.flatnonzero(~hit & (found >= 0))      # (occupied by another)
        row = np.where(hit, found, _EMPTY)
        while len(todo) > _FEW:
            s = (slot[todo] + 1) & mask
            slot[todo] = s
            r = self.slot_row[s]
            occupied = r >= 0
            hit = occupied & (self.slot_hash[s] == mixed[todo])
            row[todo[hit]] = r[hit]
            todo = todo[occupied & ~hit]
        for i in todo.tolist():         # the last few, one at a time
            s, h = int(slot[i]), int(mixed[i])
            while True:
                s = (s + 1) & mask
                r = int(self.slot_row[s])
                if r < 0 or int(self.slot_hash[s]) == h:
                    break
            slot[i], row[i] = s, r
        return row, slot

    def find(self, hashes: np.ndarray, lengths: np.ndarray, words: np.ndarray,
             players: np.ndarray) -> np.ndarray:
        """The rows of keys (``[K]``; -1: absent); raises :class:`Collision` where a row
        with the same player and hash holds different bytes."""
        players = np.asarray(players, np.int64)
        row, _ = self._probe(self._mix(hashes, players))
        hit = np.flatnonzero(row >= 0)
        if len(hit):
            r = row[hit]
            same = self.lengths[r] == lengths[hit]
            same &= self.players[r] == players[hit]
            # equal lengths: past the narrower width both are zero padding
            width = min(self.words.shape[1], words.shape[1])
            same &= (self.words[r, :width] == words[hit, :width]).all(axis=1)
            if not same.all():
                raise Collision
        return row

    def add(self, hashes: np.ndarray, lengths: np.ndarray, words: np.ndarray,
            players: np.ndarray) -> np.ndarray:
        """Number keys absent from the table (and distinct), in order; their rows.
        Raises :class:`Collision` (the table is then left unusable)."""
        players = np.asarray(players, np.int64)
        k = len(hashes)
        base = self.size
        rows = np.arange(base, base + k, dtype=np.int64)
        self._reserve(base + k, words.shape[1])
        self.mixed[base:base + k] = self._mix(hashes, players)
        self.players[base:base + k] = players
        self.lengths[base:base + k] = lengths
        self.words[base:base + k, :words.shape[1]] = words
        self.words[base:base + k, words.shape[1]:] = 0
        self.size = base + k
        if self.size > _LOAD * len(self.slot_row):
            self._rehash()
        else:
            self._insert(rows)
        return rows

    def _insert(self, rows: np.ndarray) -> None:
        """Put ``rows`` (in the arrays, not in the slots yet) into empty slots; raises
        :class:`Collision` for a row whose mixed hash another row has."""
        mixed = self.mixed[rows]
        found, slot = self._probe(mixed)
        if (found >= 0).any():
            raise Collision
        mask = len(self.slot_row) - 1
        todo = np.arange(len(rows))
        while len(todo) > _FEW:
            s = slot[todo]
            # of the rows that reach the same slot the first takes it (each reached an
            # empty slot: the probe's, or the next one after losing)
            _, first = np.unique(s, return_index=True)
            wins = np.zeros(len(todo), bool)
            wins[first] = True
            wins &= self.slot_row[s] == _EMPTY
            self.slot_row[s[wins]] = rows[todo[wins]]
            self.slot_hash[s[wins]] = mixed[todo[wins]]
            lose = todo[~wins]
            # a loser's slot is taken now: by a row with its mixed hash?
            if (self.slot_hash[slot[lose]] == mixed[lose]).any():
                raise Collision
            slot[lose] = (slot[lose] + 1) & mask
            todo = lose
        for i in todo.tolist():         # the last few, one at a time, in order
            s, h = int(slot[i]), int(mixed[i])
            while self.slot_row[s] != _EMPTY:
                if int(self.slot_hash[s]) == h:
                    raise Collision
                s = (s + 1) & mask
            self.slot_row[s], self.slot_hash[s] = rows[i], h

    def _reserve(self, rows: int, width: int) -> None:
        cap = len(self.mixed)
        if rows > cap or width > self.words.shape[1]:
            new = max(rows, 2 * cap) if rows > cap else cap
            w = max(width, self.words.shape[1])
            for name in ("mixed", "players", "lengths"):
                old = getattr(self, name)
                grown = np.zeros(new, np.int64)
                grown[:self.size] = old[:self.size]
                setattr(self, name, grown)
            grown = np.zeros((new, w), np.uint64)
            grown[:self.size, :self.words.shape[1]] = self.words[:self.size]
            self.words = grown

    def _rehash(self) -> None:
        slots = len(self.slot_row)
        while self.size > _LOAD * slots:
            slots *= 2
        self._slots(slots)
        self._insert(np.arange(self.size, dtype=np.int64))
