"""A part of a tree walked by a worker: packed there, merged in pre-order by the parent.

:func:`pack` turns a worker's :class:`~jaxcfr.lowering.columns.Enumeration` of one subtree into
plain bytes and lists (its columns, the rows it met in first-met order, the rows it
added with their actions as ids into a table of distinct tuples). :class:`Merge`
puts the top of the tree and the parts together exactly as the serial walk numbers
them: nodes in pre-order, rows by their first member in pre-order. A row met in
several parts must have the same legal actions, kept actions and own sequence in
each (checked vectorised); otherwise :class:`Mismatch` is raised and the caller
walks serially, so that the error is the serial walk's.

Example (what :mod:`jaxcfr.lowering.parallel` does with processes, here in one)::

    >>> import jaxcfr
    >>> from jaxcfr.lowering import parallel, parts
    >>> game = jaxcfr.load_game("kuhn_poker")
    >>> top = parallel.cut(game, 2, None, workers=2, size=None, depth=1)
    >>> merge = parts.Merge(top, 2)
    >>> for _, item in top.frontier:
    ...     merge.add_part(parallel.loads(parallel.walk_job([item], top, 2, None)[0]))
    >>> len(merge.finish())
    58
"""

from __future__ import annotations

import operator
from array import array
from itertools import repeat

import numpy as np

from jaxcfr.lowering.columns import ROOT_PARENT, SLOT_RADIX, Enumeration, as_numpy
from jaxcfr.lowering.labels import Interner
from jaxcfr.lowering.levels import Levels, depth_order
from jaxcfr.lowering.rowkeys import Collision, KeyTable, all_str, decode, encode

__all__ = ["pack", "Merge", "Mismatch"]


class Mismatch(Exception):
    """Two parts disagree about a row: the serial walk must run (and name the error)."""


def _first_met(code: np.ndarray) -> np.ndarray:
    """The decision rows of ``code`` in the order of their first node."""
    rows = code[code >= 0]
    uniq, first = np.unique(rows, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def pack(enum: Enumeration, seeded: int) -> dict:
    """A part's columns as bytes (or arrays: those of a dtype chosen by the walk), and its
    rows: those it met in first-met order, and the ones it added (keys, actions as ids
    into a table of distinct tuples, seqs)."""
    code = as_numpy(enum.code, np.int32)
    out = _in_depth_order(as_numpy(enum.parent, np.int32), np.asarray(enum.slot), code,
                          np.asarray(enum.label), np.asarray(enum.depth),
                          as_numpy(enum.terminals, np.int32), as_numpy(enum.chance_at, np.int32))
    del out["order"]
    out["returns"] = as_numpy(enum.returns, np.float64)
    out["chance_prob"] = as_numpy(enum.chance_prob, np.float64)
    out["labels"] = list(enum.label_table)
    out["first_met"] = _first_met(code)
    keys = enum.row_key[seeded:]
    for kind in set(map(type, keys)):
        if kind.__hash__ is object.__hash__:
            raise TypeError("information-set keys compared by identity cannot cross processes")
    row_actions, row_kept = enum.row_actions[seeded:], enum.row_kept[seeded:]
    table: dict[tuple, int] = {}
    actions = np.asarray([table.setdefault(acts, len(table)) for acts in row_actions],
                         np.int32)
    if all(map(operator.is_, row_kept, row_actions)):
        kept = actions                                  # no abstraction (or it kept all)
    else:
        kept = np.asarray([table.setdefault(keep, len(table)) for keep in row_kept], np.int32)
    player = np.asarray(enum.row_player[seeded:], np.int32)
    out.update(player=player, seq=np.asarray(enum.row_seq[seeded:], np.int64),
               table=list(table), actions=actions, kept=kept)
    if all_str(keys):
        # found in bulk by the parent (jaxcfr.lowering.rowkeys): hashes and bytes made
        # here, the keys themselves decoded there, for the rows new to the merge only
        out["hash"], out["length"], out["words"] = encode(keys)
    else:
        out["key"] = keys
    return out


def _in_depth_order(parent, slot, code, label, depth, terminals, chance_at,
                    first: int = 0) -> dict:
    """A run of pre-order nodes ``first, first + 1, ...`` (``[n]`` columns) in its own
    depth order (:func:`~jaxcfr.lowering.levels.depth_order`): ``levels`` (nodes per depth,
    from depth 0), ``slot``, ``code``, ``label`` and ``parent`` (a depth-order number in
    the run; -1 for a parent outside it, whose pre-order number is then in ``outer`` at
    the node's place, ``outer_at``), the terminals' and chance edges' nodes (``terminals``,
    ``chance_at``: pre-order numbers in, depth-order numbers in the run out)."""
    order, level_start = depth_order(depth)
    n = len(order)
    new_of_old = np.empty(n, dtype=np.int64)
    new_of_old[order] = np.arange(n)
    parent = parent[order].astype(np.int64) - first
    inside = parent >= 0
    outer_at = np.flatnonzero(~inside)
    local = np.full(n, ROOT_PARENT, dtype=np.int32)
    local[inside] = new_of_old[parent[inside]]
    return {"levels": np.diff(level_start), "slot": slot[order], "code": code[order],
            "label": label[order], "parent": local, "outer_at": outer_at,
            "outer": parent[outer_at] + first,
            "terminals": new_of_old[terminals - first].astype(np.int32),
            "chance_at": new_of_old[chance_at - first].astype(np.int32),
            "order": order + first}


def _keys(part: dict, which: np.ndarray | None = None) -> list:
    """A part's added rows' keys (those at indices ``which``, default all)."""
    if "key" in part:
        keys = part["key"]
        return keys if which is None else [keys[i] for i in which.tolist()]
    lengths, words = part["length"], part["words"]
    return decode(lengths, words) if which is None else decode(lengths[which], words[which])


def _keys_by_player(part: dict, num_players: int) -> list[tuple[np.ndarray, list]]:
    """Per player, ``(indices, keys)`` of a part's added rows."""
    keys, player = _keys(part), part["player"]
    out = []
    for p in range(num_players):
        idx = np.flatnonzero(player == p)
        out.append((idx, [keys[i] for i in idx.tolist()]))
    return out


class Merge:
    """The serial walk's columns, put together part by part in pre-order.

    Rows get global numbers in the order of their first member in pre-order; a
    row's legal actions, kept actions and own sequence are checked against its first
    part's, vectorised (actions as ids into one table of distinct action tuples).
    """

    def __init__(self, top: Enumeration, num_players: int):
        self.top = top
        self.num_players = num_players
        self.seeded = len(top.row_actions)
        # the top's runs and the parts, in pre-order, each in its own depth order
        # (_in_depth_order's columns; a top run's with ``order``, its top nodes)
        self.blocks: list[dict] = []
        self.row_player: list = []
        self.row_key: list = []
        # the rows by key: a KeyTable of str keys (found in bulk), else (other keys, or
        # after a 64-bit hash collision) per player ``key -> global row`` dicts
        self.keys: KeyTable | None = KeyTable() if all_str(top.row_key) else None
        self.row_of: list[dict] | None = None if self.keys is not None else \
            [{} for _ in range(num_players)]
        self.unindexed = 0                # rows below this are in keys / row_of
        self.row_act = array("i")         # global row -> id of its legal actions
        self.row_kept = array("i")        # global row -> id of its kept actions
        self.row_seq = array("q")         # global row -> own sequence (global rows)
        self.table: list[tuple] = []      # distinct action tuples
        self.table_id: dict[tuple, int] = {}
        self.labels = Interner()          # distinct action labels of all parts
        self.top_label = self.labels.add_all(top.label_table)    # top entry -> merged entry
        self.top_row = np.full(self.seeded, -1, dtype=np.int64)   # top row -> global row
        self.top_done = 0                    # top nodes merged so far
        self.top_terminal = 0                # top terminals merged so far
        self.parts_done = 0

    @property
    def num_rows(self) -> int:
        return len(self.row_act)

    @property
    def max_actions(self) -> int:
        """The widest row: rows' slots are their kept actions."""
        return max((len(self.table[a]) for a in set(self.row_kept)), default=1)

    # -- rows ----------------------------------------------------------------
    def _action_id(self, acts: tuple) -> int:
        a = self.table_id.get(acts)
        if a is None:
            a = self.table_id[acts] = len(self.table)
            self.table.append(acts)
        return a

    @staticmethod
    def _seqs(seq: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Own-sequence ids with their rows renumbered by ``rows`` (-1 stays)."""
        out = seq.copy()
        some = seq >= 0
        out[some] = rows[seq[some] // SLOT_RADIX] * SLOT_RADIX + seq[some] % SLOT_RADIX
        return out

    def _to_dicts(self) -> None:
        """Find rows by ``dict`` from now on (a key that is not a ``str``, or a collision)."""
        self.keys = None
        self.row_of = [{} for _ in range(self.num_players)]
        self.unindexed = 0
        self._index()

    def _index(self) -> None:
        """Put the rows added one at a time (the top's, :meth:`_new_row`) in the index."""
        lo, hi = self.unindexed, len(self.row_key)
        if lo == hi:
            return
        keys, players = self.row_key[lo:hi], self.row_player[lo:hi]
        if self.keys is not None:
            if all_str(keys):
                try:
                    self.keys.add(*encode(keys), np.asarray(players, np.int64))
                    self.unindexed = hi
                    return
                except Collision:
                    pass
            self._to_dicts()
            return
        for p, key, row in zip(players, keys, range(lo, hi)):
            self.row_of[p][key] = row
        self.unindexed = hi

    def _find(self, part: dict) -> np.ndarray:
        """The global rows of a part's added rows (``[K]``, -1: new to the merge)."""
        self._index()
        if self.keys is not None and "hash" not in part:
            self._to_dicts()
        if self.keys is not None:
            try:
                return self.keys.find(part["hash"], part["length"], part["words"],
                                      part["player"])
            except Collision:
                self._to_dicts()
        found = np.empty(len(part["player"]), dtype=np.int64)
        for p, (idx, keys_p) in enumerate(_keys_by_player(part, self.num_players)):
            found[idx] = np.fromiter(map(self.row_of[p].get, keys_p, repeat(-1)),
                                     np.int64, len(keys_p))
        return found

    def _new_row(self, player: int, key, act: int, kept: int, seq: int) -> int:
        """A row added alone (indexed later, by :meth:`_index`)."""
        row = len(self.row_act)
        self.row_player.append(player)
        self.row_key.append(key)
        self.row_act.append(act)
        self.row_kept.append(kept)
        self.row_seq.append(seq)
        return row

    def _new_rows(self, new: np.ndarray, found: np.ndarray, part: dict, act, kept) -> None:
        """Add a part's rows ``new`` (indices, in the part's order) and number them in
        ``found``; their sequences are filled in by the caller."""
        self._index()
        base = len(self.row_act)
        found[new] = np.arange(base, base + len(new))
        players = part["player"][new]
        new_keys = _keys(part, new)
        self.row_player.extend(players.tolist())
        self.row_key.extend(new_keys)
        self.row_act.extend(act[new].astype(np.int32).tolist())
        self.row_kept.extend(kept[new].astype(np.int32).tolist())
        self.row_seq.extend([-1] * len(new))
        if self.keys is not None:
            try:
                self.keys.add(part["hash"][new], part["length"][new], part["words"][new],
                              players)
            except Collision:
                self._to_dicts()
        else:
            for p in range(self.num_players):
                mine = np.flatnonzero(players == p)
                self.row_of[p].update(zip([new_keys[i] for i in mine.tolist()],
                                          (base + mine).tolist()))
        self.unindexed = len(self.row_key)

    def _top_row(self, r: int) -> None:
        if self.top_row[r] < 0:
            t = self.top
            act = self._action_id(t.row_actions[r])
            kept = act if t.row_kept[r] is t.row_actions[r] else self._action_id(t.row_kept[r])
            seq = int(self._seqs(np.asarray([t.row_seq[r]], np.int64), self.top_row)[0])
            self.top_row[r] = self._new_row(t.row_player[r], t.row_key[r], act, kept, seq)

    @staticmethod
    def _renumber(code: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """``code`` with its decision rows renumbered by ``rows``."""
        out = code.copy()
        decision = code >= 0
        out[decision] = rows[code[decision]]
        return out

    # -- nodes ---------------------------------------------------------------
    def _top_run(self, stop: int) -> None:
        """Top nodes ``top_done:stop`` (those walked before the next part)."""
        a, b = self.top_done, stop
        if a == b:
            return
        t = self.top
        code = np.frombuffer(t.code, np.int32)[a:b]
        for r in _first_met(code):
            self._top_row(int(r))
        terms = np.frombuffer(t.terminals, np.int32)
        lo, hi = self.top_terminal, int(np.searchsorted(terms, b))
        P = self.num_players
        chance_at = as_numpy(t.chance_at, np.int32)
        c_lo, c_hi = np.searchsorted(chance_at, [a, b])
        block = _in_depth_order(np.frombuffer(t.parent, np.int32)[a:b], np.asarray(t.slot)[a:b],
                                self._renumber(code, self.top_row).astype(np.int32),
                                self.top_label[as_numpy(t.label, np.int32)[a:b]],
                                np.asarray(t.depth)[a:b], terms[lo:hi], chance_at[c_lo:c_hi],
                                first=a)
        block["returns"] = np.frombuffer(t.returns, np.float64)[lo * P:hi * P]
        block["chance_prob"] = as_numpy(t.chance_prob, np.float64)[c_lo:c_hi]
        self.blocks.append(block)
        self.top_done, self.top_terminal = b, hi

    def add_part(self, part: dict) -> None:
        """The next part in pre-order (after the top nodes walked before it): the subtrees
        of ``part["jobs"]`` consecutive jobs with no top node between them."""
        jobs = self.top.frontier[self.parts_done:self.parts_done + part["jobs"]]
        before = jobs[0][0]
        if len(jobs) != part["jobs"] or any(b != before for b, _ in jobs):
            raise Mismatch                      # (not one run of the frontier)
        self._top_run(before)
        seeded = self.seeded
        players = part["player"].tolist()
        ids = np.empty(seeded + len(players), dtype=np.int64)
        ids[:seeded] = self.top_row
        table = np.asarray([self._action_id(acts) for acts in part["table"]], np.int32)
        act, kept = table[part["actions"]], table[part["kept"]]
        first_met = part["first_met"]
        met_top = first_met[first_met < seeded]
        # (a part's added rows differ from the top's and from each other, so those new
        # to the merge stay new while the top rows met first here are numbered)
        found = self._find(part)
        if (self.top_row[met_top] >= 0).all():
            # Common case: every top row met here is numbered, so the rows new to the
            # merge come in the part's order: add them at once.
            ids[seeded:] = found
            created = found < 0
            self._new_rows(np.flatnonzero(created), ids[seeded:], part, act, kept)
        else:
            created = np.zeros(len(players), dtype=bool)
            keys = _keys(part)
            for r in first_met.tolist():
                if r < seeded:
                    self._top_row(r)
                    ids[r] = self.top_row[r]
                    continue
                i = r - seeded
                g = int(found[i])
                if g < 0:
                    g = self._new_row(players[i], keys[i], int(act[i]), int(kept[i]), -1)
                    created[i] = True
                ids[r] = g
            self._index()
        rows = ids[seeded:]
        seq = self._seqs(part["seq"], ids)
        row_act = np.frombuffer(self.row_act, np.int32)
        row_kept = np.frombuffer(self.row_kept, np.int32)
        row_seq = np.frombuffer(self.row_seq, np.int64)
        row_seq[rows[created]] = seq[created]
        old = ~created
        if not (np.array_equal(row_act[rows[old]], act[old])
                and np.array_equal(row_kept[rows[old]], kept[old])
                and np.array_equal(row_seq[rows[old]], seq[old])):
            raise Mismatch                     # the serial walk names the first member
        del row_act, row_kept, row_seq
        # the jobs' subtree roots are the part's only nodes with a parent outside it
        if len(part["outer_at"]) != len(jobs):
            raise Mismatch
        block = {k: part[k] for k in ("levels", "slot", "parent", "outer_at", "terminals",
                                      "chance_at", "returns", "chance_prob")}
        block["outer"] = np.asarray([item[1] for _, item in jobs], dtype=np.int64)
        block["code"] = self._renumber(part["code"], ids).astype(np.int32)
        block["label"] = self.labels.add_all(part["labels"])[part["label"]]
        self.blocks.append(block)
        self.parts_done += len(jobs)

    def finish(self) -> Enumeration:
        """The merged tree as one :class:`Enumeration` whose node columns are in depth
        order (its ``levels``, :class:`~jaxcfr.lowering.levels.Levels`; ``code`` too)."""
        self._top_run(len(self.top))
        self.keys = self.row_of = None      # (the index of rows: freed before the levels)
        enum = Enumeration(self.num_players)
        enum.levels = self._levels()
        enum.code = enum.levels.code
        enum.label_table = self.labels.table
        enum.row_player, enum.row_key = self.row_player, self.row_key
        enum.row_actions = [self.table[a] for a in self.row_act]
        enum.row_kept = [self.table[k] for k in self.row_kept]
        enum.row_seq = self.row_seq.tolist()
        enum.max_actions = self.max_actions
        return enum

    def _levels(self) -> Levels:
        """The blocks put in depth order: level by level, each block's slice of the level
        in pre-order (a block is a run of consecutive pre-order numbers), copied."""
        blocks = self.blocks
        depths = max(len(b["levels"]) for b in blocks)
        count = np.zeros((len(blocks), depths), dtype=np.int64)     # [blocks, D] nodes
        for k, b in enumerate(blocks):
            count[k, :len(b["levels"])] = b["levels"]
        level_start = np.concatenate([[0], np.cumsum(count.sum(axis=0))])
        before = np.cumsum(count, axis=0) - count       # the level's nodes in earlier blocks
        local = np.cumsum(count, axis=1) - count        # a block's own level starts
        base = level_start[None, :-1] + before - local  # depth-order number - block's own
        d_of, k_of = np.nonzero(count.T)                # the slices: levels, then blocks
        lo = local[k_of, d_of]
        slices = list(zip(k_of.tolist(), lo.tolist(), (lo + count[k_of, d_of]).tolist()))

        def column(name: str) -> np.ndarray:
            return np.concatenate([blocks[k][name][a:b] for k, a, b in slices])

        def numbers(k: int, nodes: np.ndarray) -> np.ndarray:
            """Depth-order numbers of block ``k``'s nodes (its own depth-order numbers)."""
            return nodes + base[k, np.searchsorted(local[k], nodes, side="right") - 1]

        top_node = np.full(len(self.top), ROOT_PARENT, dtype=np.int64)   # top -> depth order
        for k, b in enumerate(blocks):
            if "order" in b:
                top_node[b["order"]] = numbers(k, np.arange(len(b["order"])))
        parent = column("parent")           # (int32, in place: no [N] temporaries)
        at = 0
        for k, d, size in zip(k_of.tolist(), d_of.tolist(), count[k_of, d_of].tolist()):
            if d:                           # a parent in the block, one level up
                parent[at:at + size] += int(base[k, d - 1])
            at += size
        for k, b in enumerate(blocks):      # parents outside the block: the top's, the root
            outer = b["outer"]
            parent[numbers(k, b["outer_at"])] = np.where(
                outer >= 0, top_node[np.maximum(outer, 0)], ROOT_PARENT)
        return Levels(
            parent=parent, slot=column("slot"), code=column("code"),
            label=column("label"), level_start=tuple(int(x) for x in level_start),
            at=np.concatenate([numbers(k, b["terminals"]) for k, b in enumerate(blocks)]),
            returns=np.concatenate([b["returns"] for b in blocks]),
            chance_at=np.concatenate([numbers(k, b["chance_at"]) for k, b in enumerate(blocks)]),
            chance_prob=np.concatenate([b["chance_prob"] for b in blocks]))
