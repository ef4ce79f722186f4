"""The host tree walk: enumerate a game once, checking its contract at every node.

:func:`walk` visits the tree iteratively in pre-order and records one row of
compact typed columns per node (:class:`~jaxcfr.lowering.columns.Enumeration`);
:mod:`jaxcfr.lowering.lower` turns them into tensors. The same walk serves three
callers: the whole tree (serial lowering), the top of a tree cut at one depth (the
frontier items become the jobs of :mod:`jaxcfr.lowering.parallel`), and one such job
in a worker process (seeded with the top's information sets so that every member is
checked against one).

The walk is one :class:`_Walk`, read top to bottom: :meth:`_Walk.walk_stack` pops a
stack item, records it, checks it by its kind (terminal and decision nodes inline,
chance nodes in :meth:`_Walk.chance`); a decision node finds its information-set row
or opens it (:meth:`_Walk.open_row`), checks it against the row's first member
(:meth:`_Walk.member_differs`, :meth:`_Walk.perfect_recall`) and pushes its children.
On a valid game every node costs O(1) game calls and O(P + A) work: the history of a
node (O(depth)) is built only when an error is reported (:meth:`_Walk.history`), so
the walk is linear in the size of the tree, however deep. What each step costs is in
docs/lowering.md ("The walk's cost per node"): the walk is written for CPython's
interpreter, where an allocation, a bound method or a call is worth several lines.

Host memory per node during the walk: its creation number and code (4 bytes each), its
group's depth, first creation number and label base (12 per group of children), plus
8P bytes per terminal: about 12 bytes. No node holds a reference to its action label: a
decision's children take theirs from the row's slots, a chance node's from its outcomes
(one list for all chance groups). :meth:`_Walk.finish` then makes the columns of
:class:`~jaxcfr.lowering.columns.Enumeration` (32 bytes a node) one by one.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.lowering.walk import walk
    >>> len(walk(jaxcfr.load_game("kuhn_poker"), 2, None).parent)
    58
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import math
from array import array
from bisect import bisect_right
from typing import Callable

import numpy as np

from jaxcfr.game import contract
from jaxcfr.game.abstraction import kept_actions
from jaxcfr.game.contract import (TERMINAL, GameError, clone_error, format_history,
                                  hashable_key, inspect_node,
                                  player_to_act_consistent, reraise_as_game_error)
from jaxcfr.lowering.columns import (CHANCE_CODE, ROOT_PARENT, SLOT_RADIX, TERMINAL_CODE,
                                     Enumeration, Packed, as_numpy)
from jaxcfr._util.tabled import small_int_dtype
from jaxcfr.lowering.labels import Interner, index_dtype

__all__ = ["Enumeration", "walk", "root_item", "fewer_collections", "CHANCE_CODE",
           "TERMINAL_CODE", "SLOT_RADIX", "CHECK_EVERY", "ROOT_PARENT"]

#: Nodes per chunk of :meth:`_Walk.finish` and :meth:`_Walk.index` (their temporaries).
FINISH_CHUNK = 1 << 16
#: Nodes between two calls of the walk's ``on_check`` (memory budget, progress).
CHECK_EVERY = 4096
#: Allocations between two collections of the youngest generation during a walk (Python's
#: default is 700). The walk allocates a few short-lived tuples per node and makes no
#: reference cycles; the default spent 10-15% of the walk's time in collections that
#: find nothing (most of it in full collections over the whole heap, JAX's included).
YOUNG_COLLECTION_EVERY = 50_000
#: What the terminal fast path takes as returns besides plain floats (anything else gets
#: the full check).
_SEQUENCES, _NUMBERS = (tuple, list), frozenset((float, int))


def _plain_returns(raw, num_players: int) -> tuple | None:
    """``raw`` as floats if it is a tuple or list of ``num_players`` plain ints and
    floats, else ``None`` (the full check then decides)."""
    try:
        if type(raw) not in _SEQUENCES or not _NUMBERS.issuperset(map(type, raw)):
            return None
        returns = tuple(map(float, raw))
    except OverflowError:               # an int too large for a float
        return None
    return returns if len(returns) == num_players else None


def _sum_of_floats(raw: tuple) -> float | None:
    """The sum of ``raw`` if it holds plain floats only, else ``None``."""
    total = 0.0
    for x in raw:
        if type(x) is not float:
            return None
        total += x
    return total


def root_item(game, num_players: int) -> tuple:
    """The walk's first stack item: ``(state, parent, slot, depth, seq, action, prob)``.

    ``seq`` holds, per player, the last own ``row * SLOT_RADIX + slot`` above the node
    (-1: none yet), which names the player's whole own sequence by induction.
    """
    return (game.clone(), ROOT_PARENT, 0, 0, (-1,) * num_players, None, 1.0)


def walk(game, num_players: int, abstraction, *, start: list | None = None,
         on_check: Callable[[Enumeration, int], None] | None = None, cut_depth: int = -1,
         seed: Enumeration | None = None, perfect_recall: bool = True) -> Enumeration:
    """Walk the whole tree once, iteratively in pre-order, checking the contract at every node.

    Every rule of :func:`jaxcfr.validate` is checked on every node (including a
    path longer than ``MAX_TRAJECTORY_LENGTH``), plus enumerable chance, strong
    perfect recall and absent-mindedness. Decision and terminal nodes take a fast
    path with the same rules: a cheap test that is exact on valid nodes, and the
    full :func:`jaxcfr.game.contract.inspect_node` when it fails, so that errors are
    reported alike. Legal actions are checked for emptiness and duplicates once per
    information set; every other member must list the same tuple. ``step(None)`` is
    probed at every terminal node on the state itself (it is not used again), not on a
    clone.

    Args:
      game: the root state (not modified; ignored when ``start`` is given).
      num_players: ``P``.
      abstraction: ``None`` or an object with ``actions(state, player)``.
      start: the stack items to walk from (default: the root's, :func:`root_item`).
      on_check: ``on_check(enum, nodes_walked)`` every :data:`CHECK_EVERY` nodes
        (the memory budget and progress); it may raise to stop the walk.
      cut_depth: stack items at this depth are not walked but recorded in
        ``frontier`` (-1: walk everything).
      seed: an enumeration whose information-set rows this walk starts from.
      perfect_recall: ``False`` accepts members of an information set whose own
        earlier sequences differ (imperfect recall, declared by a bucketing);
        absent-mindedness is refused either way.

    Raises:
      GameError: the first contract violation in pre-order, with its rule and history.
    """
    items = start if start is not None else [root_item(game, num_players)]
    with fewer_collections():
        return _Walk(num_players, abstraction, seed, on_check, cut_depth,
                     perfect_recall).run(items)


@contextlib.contextmanager
def fewer_collections():
    """Collect the youngest generation every :data:`YOUNG_COLLECTION_EVERY` allocations
    (not 700) while walking (and, in :func:`jaxcfr.lower`, while the tensors are built: a
    full collection there, set off by the rows' key tuples, took 3% of a lowering); a
    game's own cycles are still collected, later. The caller's thresholds come back
    afterwards (a higher one, or none, is kept as it is)."""
    before = gc.get_threshold()
    if 0 < before[0] < YOUNG_COLLECTION_EVERY:
        gc.set_threshold(YOUNG_COLLECTION_EVERY, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _Walk:
    """One walk in progress: its stack, the columns it fills and its information-set rows.

    A stack item is ``(state, cid, ctx)``. ``cid`` numbers the nodes in the order they
    are created: the children of a node are created together, when it is expanded
    (a *group* of consecutive numbers), and ``ctx`` is theirs, one tuple for all of
    them, ``(depth, seq, player, offset)``: their depth, their parent's own sequence
    ``seq`` (a list, see :func:`root_item`), the player who chose them (-1: chance)
    and ``offset``, with ``offset + cid`` the id of the choice. So what a child costs
    is one small tuple. Within the walk a choice's id is compact, ``row_start[row] +
    slot`` (the rows' slots numbered one after the other: small ints, whose sums and
    comparisons cost a third of ``row * SLOT_RADIX + slot``'s); start items, frontier
    items and the finished ``row_seq`` use ``row * SLOT_RADIX + slot``. Each walked node records its
    ``cid`` (:attr:`cids`) and its code; a group records its depth and actions
    (:attr:`labels`), and its parent is known without being recorded: a node's
    slot-0 child is the next node in pre-order (its last child pushed, first popped),
    so the group of node ``x`` starts at ``cids[x + 1]`` (:meth:`index`; a group at
    the cut is noted by :meth:`beyond`). :meth:`finish` puts each node's parent,
    slot, depth, probability and label in pre-order. Every column is a
    :class:`~jaxcfr.lowering.columns.Packed` list, packed every :data:`CHECK_EVERY`
    nodes.

    Terminal and decision nodes are walked inline in :meth:`walk_stack` (a method call
    per node is a measurable part of the walk); the rare paths are methods.
    """

    def __init__(self, num_players: int, abstraction, seed: Enumeration | None,
                 on_check, cut_depth: int, perfect_recall: bool = True):
        enum = self.enum = Enumeration(num_players)
        #: per player, ``key -> row``
        self.rows_of = [{} for _ in range(num_players)] if seed is None else \
            enum.seed_rows(seed)
        self.num_players = num_players
        self.abstraction = abstraction
        self.on_check = on_check
        self.cut_depth = cut_depth
        self.perfect_recall_required = perfect_recall
        self.max_depth = contract.MAX_TRAJECTORY_LENGTH
        # one test per group of children for both: the cut, or a path longer than allowed
        self.limit = min(cut_depth, self.max_depth + 1) if cut_depth >= 0 else \
            self.max_depth + 1
        self.stack: list[tuple] = []
        self.tuples: dict[tuple, tuple] = {}    # (actions, their types) -> shared tuple
        self.node = -1                  # pre-order number of the last node walked
        self.created = 0                # creation numbers given
        self.next_check = CHECK_EVERY
        # per node walked, in pre-order: its creation number and code; per terminal: returns
        self.cids, self.codes, self.returns = Packed("i"), Packed("i"), Packed("d")
        # per group of nodes created together, in creation order: its depth
        self.group_depth = Packed("i")
        # per group, in creation order: its first cid and its label base: a decision's
        # children are labelled by the compact ids ``base + slot`` of its row's slots, a
        # chance node's (or a start item's) by ``other_labels[-1 - base + slot]``
        self.group_start, self.group_label = Packed("i"), Packed("i")
        self.other_labels: list = []
        self.chance_probs: dict[int, tuple] = {}    # first cid -> a chance group's probs
        self.starts: dict[int, tuple] = {}          # cid -> a start item's (slot, prob)
        self.start_first: list[int] = []            # per start item: its cid (a group
        self.start_parent: list[int] = []           # of one) and its parent
        self.cut_first: dict[int, int] = {}         # node -> first cid of its children
        # the groups of the nodes walked before ``indexed``: first cid, parent (node)
        self.group_first, self.group_parent = array("i"), array("i")
        self.indexed = 0
        self.row_actions, self.row_kept, self.row_seq = \
            enum.row_actions, enum.row_kept, enum.row_seq
        #: per row, the compact id of its slot 0 (then ``slots``: all slots so far)
        self.row_start = list(itertools.accumulate(map(len, self.row_kept), initial=0))
        self.slots = self.row_start.pop()
        self.row_seq[:] = self.compact(self.row_seq)

    # -- the loop --------------------------------------------------------------------------
    def run(self, items: list) -> Enumeration:
        """Walk from ``items`` (old-style stack items, :func:`root_item`), in order."""
        for item in items:
            state, parent, slot, depth, seq, action, prob = item
            if depth >= self.limit:
                if depth == self.cut_depth:
                    self.enum.frontier.append((self.node + 1, item))
                    continue
                self.too_long(parent, action)
            cid = self.created
            self.created += 1
            self.group_depth.append(depth)
            self.group_start.append(cid)
            self.group_label.append(-1 - len(self.other_labels))
            self.other_labels.append(action)
            self.starts[cid] = (slot, prob)
            self.start_first.append(cid)
            self.start_parent.append(parent)
            self.stack.append((state, cid, (depth, self.compact(seq), -1, 0)))
            self.walk_stack()
        return self.finish()

    def walk_stack(self) -> None:
        """Pop nodes until the stack is empty: record each, check it and expand it by its
        kind. Errors get the history of the node they were met at."""
        P, stack = self.num_players, self.stack
        two = P == 2
        pop, push = stack.pop, stack.append
        add_cid, add_code, add_returns = self.cids.append, self.codes.append, \
            self.returns.extend
        add_depth, add_start, add_label = self.group_depth.append, \
            self.group_start.append, self.group_label.append
        rows_of, row_actions, row_kept, row_seq = self.rows_of, self.row_actions, \
            self.row_kept, self.row_seq
        row_start = self.row_start
        abstraction, limit = self.abstraction, self.limit
        node, created, next_check = self.node, self.created, self.next_check
        while stack:
            state, cid, ctx = pop()
            node += 1
            if node >= next_check:
                next_check += CHECK_EVERY
                self.check_in(node)
            add_cid(cid)
            try:
                if state.is_terminal():
                    # Node-type, player, returns (P plain floats, finite, the same twice),
                    # no legal actions; other returns get :meth:`other_returns`, and a
                    # failed test the full check (which names the rule).
                    if state.is_chance() or not state.player_to_act() == TERMINAL:
                        raw = self.inspect(state, node).returns
                    else:
                        raw = state.terminal_returns()
                        if two:              # unrolled (a loop costs three times more)
                            try:
                                a, b = raw   # (any pair; only a tuple passes below)
                            except (TypeError, ValueError):
                                a = None
                            total = a + b if type(a) is float and type(b) is float \
                                and type(raw) is tuple else None
                        else:
                            total = _sum_of_floats(raw) if type(raw) is tuple \
                                and len(raw) == P else None
                        if total is None:
                            raw = self.other_returns(state, node, raw)
                        elif total - total != 0.0 or (          # not finite
                                (again := state.terminal_returns()) is not raw
                                and again != raw) or state.legal_actions():
                            raw = self.inspect(state, node).returns
                    add_code(TERMINAL_CODE)
                    add_returns(raw)
                    # The state is not used again: step() must be refused, probed here on
                    # the state itself. (Catching in this long-lived frame: a caught
                    # exception costs a frame object in a fresh one.)
                    try:
                        state.step(None)
                    except GameError:
                        continue
                    except Exception as exc:  # noqa: BLE001 - it must be a GameError
                        self.terminal_step(node, exc)
                    self.terminal_step(node, None)
                if state.is_chance():
                    created = self.chance(state, node, cid, ctx, created)
                    continue
                # A decision: legal actions, player, no chance outcomes; the key's row
                # (opened by its first member, every other member must match it).
                acts = tuple(state.legal_actions())
                player = state.player_to_act()
                if state.chance_outcomes() is not None or type(player) is not int \
                        or not 0 <= player < P:
                    info = self.inspect(state, node)  # raises (or accepts a NumPy player)
                    acts, player = info.actions, info.player
                key = state.infoset_key(player)
                try:
                    row = rows_of[player].get(key)
                except TypeError:
                    self.unhashable_key(state, node, key, player)
                    raise
                depth, seq, chooser, offset = ctx
                if chooser >= 0:                      # this node's own sequence
                    seq = seq.copy()
                    seq[chooser] = offset + cid
                kept = acts if abstraction is None else self.kept(state, node, player, acts)
                opened = row is None
                if opened:
                    row = self.open_row(state, node, player, key, acts, kept, seq)
                elif acts != row_actions[row] or seq[player] != row_seq[row] or (
                        abstraction is not None and kept != row_kept[row]):
                    self.member_differs(state, node, row, key, player, acts, kept)
                add_code(row)

                # One child per kept action, stepped in reverse, the last (slot 0) on the
                # state itself, and pushed so that slot 0 is walked first. The first clone
                # must be a new object, and (at a row's first member: it costs a call)
                # stepping it must leave the key as it was.
                first = created
                n = len(kept)
                created = first + n
                depth += 1
                children = (depth, seq, player, row_start[row] - first)
                add_depth(depth)
                add_start(first)
                add_label(row_start[row])
                j = n - 1
                try:
                    if j:
                        child = state.clone()
                        child.step(kept[j])
                        push((child, first + j, children))
                        if child is state or (opened and state.infoset_key(player) != key):
                            raise clone_error(kept[j], self.history(node))
                        while j > 1:      # (a bound method and a range are two allocations)
                            j -= 1
                            child = state.clone()
                            child.step(kept[j])
                            push((child, first + j, children))
                        j = 0
                    state.step(kept[0])
                    push((state, first, children))
                except GameError as e:
                    raise e.with_context(history=self.history(node) + (kept[j],)) from None
                if depth >= limit:
                    self.beyond(node, kept)
            except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule
                reraise_as_game_error(exc, self.history(node))
        self.node, self.created, self.next_check = node, created, next_check

    def check_in(self, node: int) -> None:
        """Every :data:`CHECK_EVERY` nodes: pack the columns, then the caller's memory
        budget and progress."""
        self.pack()
        if self.on_check is not None:
            self.on_check(self.enum, node)

    def pack(self) -> None:
        """Pack the columns' lists."""
        self.cids.pack()
        self.codes.pack()
        self.returns.pack()
        self.group_depth.pack()
        self.group_start.pack()
        self.group_label.pack()

    def compact(self, ids) -> list:
        """Own-sequence ids ``row * SLOT_RADIX + slot`` (-1: none) as compact ids."""
        start = self.row_start
        return [i if i < 0 else start[i // SLOT_RADIX] + i % SLOT_RADIX for i in ids]

    def radix(self, ids) -> list:
        """Compact own-sequence ids (-1: none) as ``row * SLOT_RADIX + slot`` (a whole
        column at once: :meth:`finish`)."""
        ids = np.asarray(ids, dtype=np.int64)
        some = ids >= 0
        start = np.asarray(self.row_start, np.int64)
        row = np.searchsorted(start, ids[some], "right") - 1
        ids[some] += row * SLOT_RADIX - start[row]
        return ids.tolist()

    def radix_one(self, i: int) -> int:
        """:meth:`radix` of one id (a frontier item's, :meth:`beyond`): a bisection of the
        rows, where converting them to an array costs O(rows) per call."""
        if i < 0:
            return i
        row = bisect_right(self.row_start, i) - 1
        return i + row * SLOT_RADIX - self.row_start[row]

    def index(self, upto: int) -> None:
        """Index the groups of the children of the nodes walked before ``upto`` (every
        node before it is followed by its slot-0 child, unless its children lie at the
        cut): their first cids, ascending (groups are made in pre-order), and parents."""
        self.pack()
        if upto <= self.indexed:
            return
        cid = as_numpy(self.cids.values, np.int32)
        codes = as_numpy(self.codes.values, np.int32)
        for lo in range(self.indexed, upto, FINISH_CHUNK):       # (chunk temporaries only)
            hi = min(upto, lo + FINISH_CHUNK)
            parent = lo + np.flatnonzero(codes[lo:hi] != TERMINAL_CODE)
            first = cid[np.minimum(parent + 1, len(cid) - 1)]
            for node, start in self.cut_first.items():
                at = np.searchsorted(parent, node)
                if at < len(parent) and parent[at] == node:
                    first[at] = start
            self.group_first.frombytes(first.astype(np.int32).tobytes())
            self.group_parent.frombytes(parent.astype(np.int32).tobytes())
        self.indexed = upto

    def finish(self) -> Enumeration:
        """The columns in pre-order: each walked node's creation number picks its
        parent, slot, depth, probability and action from its group.

        Chunk by chunk of :data:`FINISH_CHUNK` nodes in pre-order (a node's group by a
        bisection of the groups' first creation numbers): the only ``[N]`` arrays made are
        the columns themselves, each in the smallest integer that holds it."""
        self.index(len(self.cids))
        enum, created = self.enum, self.created
        cid = as_numpy(self.cids.values, np.int32)
        n = len(cid)
        # per group, in creation order: first cid (ascending), parent, depth, label base
        first = as_numpy(self.group_start.values, np.int32)
        at = np.searchsorted(as_numpy(self.group_first, np.int32), self.start_first)
        parent_of = np.insert(as_numpy(self.group_parent, np.int32), at, self.start_parent)
        self.group_first = self.group_parent = None        # (no history is asked for now)
        depth_of = as_numpy(self.group_depth.values, np.int32)
        depth_of = depth_of.astype(index_dtype(int(depth_of.max(initial=0)) + 1))
        self.group_depth = None
        entries, base_of = self.labels()
        size = np.diff(first, append=created)
        starts = np.fromiter(self.starts, np.int64, len(self.starts))
        start_slot = np.fromiter((s for s, _ in self.starts.values()), np.int64, len(starts))
        by_start = np.argsort(starts)
        widest = max(int(size.max(initial=1)) - 1, int(start_slot.max(initial=0)))
        del size
        parent = enum.parent = np.empty(n, dtype=np.int32)
        depth = enum.depth = np.empty(n, dtype=depth_of.dtype)
        slot = enum.slot = np.empty(n, dtype=small_int_dtype(widest))
        label = enum.label = np.empty(n, dtype=entries.dtype)
        for lo in range(0, n, FINISH_CHUNK):
            c = cid[lo:lo + FINISH_CHUNK]
            g = np.searchsorted(first, c, side="right") - 1
            parent[lo:lo + len(c)] = parent_of[g]
            depth[lo:lo + len(c)] = depth_of[g]
            s = c - first[g]
            label[lo:lo + len(c)] = entries[base_of[g] + s]
            if len(starts):
                own = np.flatnonzero(np.isin(c, starts))        # start items: their slot
                s[own] = start_slot[by_start[np.searchsorted(starts, c[own],
                                                             sorter=by_start)]]
            slot[lo:lo + len(c)] = s
        del parent_of, depth_of, entries, base_of, first
        self.chance_edges(cid)
        enum.code, enum.returns = self.codes.values, self.returns.values
        enum.row_seq[:] = self.radix(enum.row_seq)
        code = as_numpy(enum.code, np.int32)
        for lo in range(0, n, FINISH_CHUNK):
            enum.terminals.frombytes((lo + np.flatnonzero(
                code[lo:lo + FINISH_CHUNK] == TERMINAL_CODE)).astype(np.int32).tobytes())
        return enum
    def chance_edges(self, cid: np.ndarray) -> None:
        """``enum.chance_at`` and ``enum.chance_prob``: the nodes (pre-order, ascending)
        below a chance node or a start item and the probability of their edge; every
        other edge has probability 1. No ``[N]`` column of floats is made."""
        created = self.created
        groups = [(start, probs) for start, probs in self.chance_probs.items()]
        groups += [(c, (p,)) for c, (_, p) in self.starts.items()]
        if groups:
            ids = np.concatenate([np.arange(start, start + len(probs), dtype=np.int64)
                                  for start, probs in groups])
            probs = np.fromiter(itertools.chain.from_iterable(p for _, p in groups),
                                np.float64, len(ids))
        else:
            ids, probs = np.zeros(0, np.int64), np.zeros(0)
        listed = np.zeros(created, dtype=bool)
        listed[ids] = True
        at = np.flatnonzero(listed[cid])                   # pre-order, ascending
        del listed
        by_id = np.argsort(ids, kind="stable")
        self.enum.chance_prob = probs[by_id[np.searchsorted(ids, cid[at], sorter=by_id)]]
        self.enum.chance_at = at.astype(np.int32 if len(cid) < 2 ** 31 else np.int64)

    def labels(self) -> tuple[np.ndarray, np.ndarray]:
        """``(entries, base)``: the labels of the rows' slots and of the other groups
        interned into ``enum.label_table`` (:class:`Interner`), ``entries`` (the smallest
        unsigned dtype) their entries in it; ``base`` (int64, per group in creation
        order) where the group's slot 0 lies in ``entries``: a node's label entry is
        ``entries[base[group] + its slot in the group]``."""
        interner = Interner()
        entries = np.concatenate([
            interner.add_all(list(itertools.chain.from_iterable(self.row_kept))),
            interner.add_all(self.other_labels)])
        self.enum.label_table = interner.table
        base = as_numpy(self.group_label.pack(), np.int32).astype(np.int64)
        # a slot's compact id, or (other labels) the slots' count + its position
        other = base < 0
        base[other] = self.slots - 1 - base[other]
        return entries.astype(index_dtype(len(interner.table))), base

    # -- the rarer kinds of node -----------------------------------------------------------
    def other_returns(self, state, node: int, raw):
        """Returns that are not a tuple of P plain floats: a list or ints are taken as
        floats if finite, the same twice and with no legal actions; else the full check."""
        P = self.num_players
        returns = _plain_returns(raw, P)
        if returns is None or not math.isfinite(sum(returns)) \
                or state.terminal_returns() != raw or state.legal_actions():
            returns = self.inspect(state, node).returns
        return returns

    def terminal_step(self, node: int, exc: Exception | None) -> None:
        """Rule ``terminal-step``: ``step`` at a terminal node raised ``exc`` (not a
        GameError), or was accepted (``exc`` is None)."""
        if exc is None:
            raise GameError("step() at a terminal node was accepted (it must raise GameError)",
                            rule="terminal-step", history=self.history(node))
        raise GameError(f"step() at a terminal node raised {type(exc).__name__}: {exc} "
                        "(it must raise GameError)", rule="terminal-step",
                        history=self.history(node)) from None

    def chance(self, state, node: int, cid: int, ctx: tuple, created: int) -> int:
        """The full node check (every chance node), then one child per outcome. The first
        clone must be a new object and stepping it must leave the state as it was.
        Returns the creation numbers given so far."""
        info = self.inspect(state, node)
        self.codes.append(CHANCE_CODE)
        acts, probs = info.actions, info.probs
        n = len(acts)      # chance edges use no row: A counts decision actions only
        depth, seq, chooser, offset = ctx
        if chooser >= 0:
            seq = seq.copy()
            seq[chooser] = offset + cid
        children = (depth + 1, seq, -1, 0)
        self.group_depth.append(depth + 1)
        self.group_start.append(created)
        self.group_label.append(-1 - len(self.other_labels))
        self.other_labels.extend(acts)
        self.chance_probs[created] = probs
        clone, push = state.clone, self.stack.append
        j = n
        try:
            for j in range(n - 1, -1, -1):
                child = clone() if j else state
                child.step(acts[j])
                push((child, created + j, children))
                if j == n - 1 and j and (child is state or not state.is_chance() or tuple(
                        a for a, _ in state.chance_outcomes()) != acts):
                    raise clone_error(acts[j], self.history(node))
        except GameError as e:
            raise e.with_context(history=self.history(node) + (acts[j],)) from None
        if depth + 1 >= self.limit:
            self.beyond(node, acts)
        return created + n

    def beyond(self, node: int, labels: tuple) -> None:
        """The children of ``node`` just pushed (one per label in ``labels``) lie at the
        cut: they become ``frontier`` items (old-style, :func:`root_item`), in pre-order;
        or deeper than allowed: rule ``termination``."""
        items = [self.stack.pop() for _ in labels]          # slot 0 first
        first = items[0][1]
        depth, seq, chooser, offset = items[0][2]
        if depth != self.cut_depth:
            self.too_long(node, labels[0])
        self.cut_first[node] = first
        probs = self.chance_probs.get(first)
        shared = [self.radix_one(i) for i in seq]
        for state, cid, _ in items:
            own = list(shared)
            if chooser >= 0:
                own[chooser] = self.radix_one(offset + cid)
            prob = 1.0 if probs is None else probs[cid - first]
            self.enum.frontier.append((node + 1, (state, node, cid - first, depth,
                                                  tuple(own), labels[cid - first], prob)))

    # -- a decision node's row -------------------------------------------------------------
    def kept(self, state, node: int, player: int, acts: tuple) -> tuple:
        """The abstraction's kept actions (the walked game's own contract first)."""
        self.check_actions(state, node, acts)
        return kept_actions(self.abstraction, state, player, acts)

    def check_actions(self, state, node: int, acts: tuple) -> None:
        """Legal actions that are empty, repeat one or cannot be hashed get the full check
        (which names the rule)."""
        try:
            bad = not acts or len(set(acts)) != len(acts)
        except TypeError:                    # an unhashable action
            bad = True
        if bad:
            self.inspect(state, node)

    def open_row(self, state, node: int, player: int, key, acts: tuple, kept: tuple,
                 seq: tuple) -> int:
        """A new information-set row, first met at ``node``: its actions are checked once
        here (non-empty, no duplicates) and its key must be a key (hashable, no NaN)."""
        self.check_actions(state, node, acts)
        if type(key) is not str:            # (a str is a key: hashable, equal to itself)
            hashable_key(key, None, player)     # (the loop adds the history to its error)
        # rows share one tuple per distinct action list (equal in types and values)
        same = kept is acts
        acts = self.shared(acts)
        kept = acts if same else self.shared(kept)
        enum = self.enum
        row = len(self.row_actions)
        self.rows_of[player][key] = row
        enum.row_player.append(player)
        enum.row_key.append(key)
        self.row_actions.append(acts)
        self.row_kept.append(kept)
        self.row_seq.append(seq[player])
        self.row_start.append(self.slots)
        n = len(kept)
        self.slots += n
        if n > enum.max_actions:
            enum.max_actions = n
        return row

    def shared(self, acts: tuple) -> tuple:
        """The walk's one tuple equal to ``acts`` in types and values (``acts`` itself the
        first time): a game's rows list few distinct action tuples, each kept once."""
        key = (acts, tuple(map(type, acts)))
        try:
            return self.tuples.setdefault(key, acts)
        except TypeError:                   # (an unhashable action: refused elsewhere)
            return acts

    # -- errors (histories are built here only) --------------------------------------------
    def parent(self, node: int) -> int:
        """The pre-order number of ``node``'s parent (a start item's own parent); the
        groups of the nodes before ``node`` are indexed (:meth:`index`: its callers index
        once, up to the node they start from, which covers all its ancestors)."""
        cid = self.cids.values[node]
        k = bisect_right(self.group_first, cid) - 1
        s = bisect_right(self.start_first, cid) - 1
        if s >= 0 and (k < 0 or self.start_first[s] > self.group_first[k]):
            return self.start_parent[s]
        return self.group_parent[k]

    def history(self, node: int) -> tuple:
        """The action path to ``node`` (O(depth): for error messages only)."""
        out = []
        self.index(node)
        parent = self.parent(node)
        while parent != ROOT_PARENT:
            out.append(self.label_of(self.cids.values[node]))
            node, parent = parent, self.parent(parent)
        return tuple(reversed(out))

    def label_of(self, cid: int):
        """The action label into the node created as ``cid`` (for error messages)."""
        self.pack()
        k = bisect_right(self.group_start.values, cid) - 1
        j, base = cid - self.group_start.values[k], self.group_label.values[k]
        if base < 0:
            return self.other_labels[-1 - base + j]
        row = bisect_right(self.row_start, base) - 1
        return self.row_kept[row][base - self.row_start[row] + j]

    def inspect(self, state, node: int):
        """The full node-local check of :mod:`jaxcfr.game.contract` (rules in their
        canonical order), so that an error names the same rule as :func:`jaxcfr.validate`
        would. Returns the ``NodeInfo`` when the node is fine."""
        try:
            info = inspect_node(state, self.num_players, None, require_enumerable=True)
            player_to_act_consistent(state, info, None)
        except GameError as e:
            raise e.with_context(history=self.history(node)) from None
        return info

    def too_long(self, parent: int, action) -> None:
        """Rule ``termination``: the node below ``parent`` by ``action`` is deeper than
        ``MAX_TRAJECTORY_LENGTH``; the history names its first 20 moves."""
        history = () if parent == ROOT_PARENT else self.history(parent) + (action,)
        raise GameError(f"a path is longer than {self.max_depth} moves", rule="termination",
                        history=history[:20])

    def unhashable_key(self, state, node: int, key, player: int) -> None:
        """The key could not be looked up: the node's own rule first, then the key's."""
        self.inspect(state, node)
        hashable_key(key, self.history(node), player)

    def member_differs(self, state, node: int, row: int, key, player: int, actions: tuple,
                       kept: tuple) -> None:
        """Raise for a member of ``row`` that disagrees with the first member: same legal
        actions (the node's own rules first), same kept actions, then the same own
        sequence (:meth:`perfect_recall`), in that order."""
        if actions != self.row_actions[row]:
            self.inspect(state, node)
            raise GameError(f"legal actions {list(actions)} differ from "
                            f"{list(self.row_actions[row])} at history {self.first(row)} in "
                            "the same information set", rule="infoset-actions",
                            history=self.history(node), infoset=key)
        if kept != self.row_kept[row]:
            raise GameError(f"abstraction kept {list(kept)} here but "
                            f"{list(self.row_kept[row])} at history {self.first(row)} in the "
                            "same information set", rule="abstraction-order",
                            history=self.history(node), infoset=key)
        self.perfect_recall(node, row, key, player)

    def first(self, row: int) -> str:
        """The history of ``row``'s first member, as printed (a scan of the codes)."""
        self.pack()
        return format_history(self.history(self.codes.values.index(row)))

    def perfect_recall(self, node: int, row: int, key, player: int) -> None:
        """Strong perfect recall: a member of ``row`` whose own (information set, action)
        sequence differs from the first member's breaks it. On a path that already passed
        through ``row`` that is absent-mindedness (rule ``absent-minded``), else rule
        ``perfect-recall``.

        The one place the rule is enforced: the walk calls it (through
        :meth:`member_differs`) only when the sequences differ, and
        :class:`jaxcfr.lowering.parts.Merge` compares the same ``row_seq`` across parts.
        A walk told that the game does not have perfect recall (``perfect_recall=False``)
        returns here once absent-mindedness is ruled out (such a game is walked in one
        process).
        """
        self.index(node)
        n = self.parent(node)
        while n != ROOT_PARENT:
            if self.codes.values[n] == row:
                raise GameError(
                    f"game does not have perfect recall: player {player}'s information set "
                    f"{key!r} is absent-minded (this history passes through it twice)",
                    rule="absent-minded", history=self.history(node), infoset=key)
            n = self.parent(n)
        if not self.perfect_recall_required:
            return
        raise GameError(
            f"game does not have perfect recall: in player {player}'s information set "
            f"{key!r}, this history and the first member (history {self.first(row)}) differ "
            "in that player's own earlier (information set, action) sequence",
            rule="perfect-recall", history=self.history(node), infoset=key)
