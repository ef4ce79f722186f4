"""Parallel lowering: the tree is cut near the root and its parts are walked by worker processes.

The parent process walks the top of the tree down to a cut depth (with every
contract check of :func:`jaxcfr.walk.walk`); each stack item at the cut is a job.
Worker processes (forked, so the game needs no pickling) take jobs in pre-order
and walk each subtree with the same walk, seeded with the top's information sets.
The parent merges the parts in pre-order: node numbers, information-set rows (in
the order of their first member in pre-order), labels and returns come out exactly
as the serial walk's, so :func:`jaxcfr.lowering` builds identical tensors.

Checks that span parts are made at the merge: a row first met in several parts
must have the same legal actions, kept actions and own sequence in each. On any
contract violation (or any other exception in a worker) the parallel result is
dropped and the serial walk runs instead: it raises the very error, naming the
very history, that it always raises. A clean game pays nothing for that guarantee.

Workers need ``fork`` (Linux); elsewhere, or with ``workers=1``, the walk is serial.
The children run only the game's Python code and NumPy, never JAX (so JAX's
warning about forking a multithreaded process is silenced for this fork).

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("leduc_poker")
    >>> a, b = jaxcfr.lower(game, workers=2), jaxcfr.lower(game, workers=1)
    >>> bool((a.tensors.parent == b.tensors.parent).all())
    True
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue as queue_module
import signal
import warnings
from array import array
from itertools import repeat
from typing import Callable

import numpy as np

from jaxcfr.budget import check_budget
from jaxcfr.walk import ROOT_PARENT, SLOT_RADIX, Enumeration, walk

__all__ = ["walk_parallel", "resolve_workers", "default_workers", "PARALLEL_MIN_NODES"]

#: Trees smaller than this (by the size estimate) are walked by one process by default.
PARALLEL_MIN_NODES = 1_000_000
#: The cut goes deep enough for this many jobs per worker (load balance).
JOBS_PER_WORKER = 8
#: ... unless the top of the tree above the cut would grow past this many nodes.
MAX_TOP_NODES = 50_000
#: Seconds between two looks at the workers (progress, memory budget, failures).
POLL_SECONDS = 0.2


def default_workers() -> int:
    """``JAXCFR_LOWERING_WORKERS``, else the cores this process may run on."""
    env = os.environ.get("JAXCFR_LOWERING_WORKERS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def resolve_workers(workers: int | None, size) -> int:
    """The worker count to use: ``None`` picks :func:`default_workers` for a large tree."""
    if workers is None:
        if size is None or size.nodes < PARALLEL_MIN_NODES:
            return 1
        workers = default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    if workers > 1 and "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return workers


class _Fallback(Exception):
    """The parallel walk cannot give the serial walk's result: walk serially instead."""


def walk_parallel(game, num_players: int, abstraction, *, workers: int, size, budget: int,
                  progress: Callable[[int], None] | None = None,
                  log: Callable[[str], None] | None = None,
                  cut_depth: int | None = None) -> Enumeration | None:
    """The serial walk's :class:`~jaxcfr.walk.Enumeration`, walked by ``workers`` processes.

    Returns ``None`` when the serial walk must run instead (a contract violation
    anywhere, a tree too small to split, no way to start processes); raises
    ``MemoryBudgetError`` when the nodes walked so far exceed ``budget``.
    ``cut_depth`` forces the depth of the cut (tests walk every depth).
    """
    try:
        top = _cut(game, num_players, abstraction, workers, size, cut_depth)
    except Exception:  # noqa: BLE001 - the serial walk reports it, in pre-order
        return None
    if not top.frontier:
        return top                      # the whole tree is above the cut
    if log is not None:
        log(f"walking {len(top.frontier):,} subtrees below depth "
            f"{top.frontier[0][1][3]} with {min(workers, len(top.frontier))} processes")
    try:
        return _run(top, num_players, abstraction, workers, budget, progress)
    except (_Fallback, AssertionError, OSError):
        return None                     # (a daemonic process cannot fork, fork failed)


def _cut(game, num_players, abstraction, workers, size, depth=None) -> Enumeration:
    """The top walk above the cut: at ``depth``, else the shallowest depth that gives
    enough jobs, or the one with the most jobs while the top stays small."""
    if depth is not None:
        return walk(game, num_players, abstraction, cut_depth=depth)
    wanted = JOBS_PER_WORKER * workers
    cap = MAX_TOP_NODES if size is None else max(1_000, min(MAX_TOP_NODES, size.nodes / 50))
    best, depth = None, 1
    while True:
        top = walk(game, num_players, abstraction, cut_depth=depth)
        if not top.frontier:
            return top if best is None else best    # the tree ends above this depth
        if best is not None and len(top) > cap:
            return best
        if best is None or len(top.frontier) > len(best.frontier):
            best = top
        if len(top.frontier) >= wanted:
            return best
        depth += 1


def _run(top: Enumeration, num_players, abstraction, workers, budget, progress) -> Enumeration:
    ctx = multiprocessing.get_context("fork")
    jobs = top.frontier
    workers = min(workers, len(jobs))
    next_job = ctx.Value("i", 0)
    walked = ctx.Array("q", workers, lock=False)
    results = ctx.Queue()
    procs = [ctx.Process(target=_worker, daemon=True, name=f"jaxcfr-lowering-{i}",
                         args=(i, jobs, top, num_players, abstraction, next_job, walked,
                               results, os.getpid()))
             for i in range(workers)]
    merge = _Merge(top, num_players)
    top.row_tables()                    # built once here, inherited by every worker
    with warnings.catch_warnings():
        # JAX warns on any fork once its backends run; the children never touch JAX.
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                category=RuntimeWarning)
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        for p in procs:
            p.start()
    try:
        pending: dict[int, bytes] = {}
        done = 0
        while done < len(jobs):
            try:
                j, data = results.get(timeout=POLL_SECONDS)
            except queue_module.Empty:
                _check_workers(procs)
            else:
                if data is None:
                    raise _Fallback
                pending[j] = data
                while merge.parts_done in pending:
                    merge.add_part(pickle.loads(pending.pop(merge.parts_done)))
                    done += 1
            nodes = len(top) + sum(walked)
            check_budget(nodes, merge.num_rows + 1, 1, num_players, budget)
            if progress is not None:
                progress(nodes)
        return merge.finish()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
        results.close()


def _check_workers(procs) -> None:
    for p in procs:
        if p.exitcode not in (None, 0):
            why = f"signal {-p.exitcode}" if p.exitcode < 0 else f"exit status {p.exitcode}"
            raise RuntimeError(f"a lowering worker process died ({why}"
                               f"{': out of memory?' if p.exitcode == -signal.SIGKILL else ''}); "
                               "lower with workers=1 (JAXCFR_LOWERING_WORKERS=1) to walk in "
                               "one process")


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel ends this worker when the parent dies, even by SIGKILL."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _worker(index, jobs, top, num_players, abstraction, next_job, walked, results,
            parent: int) -> None:
    """A worker process: take jobs in order, walk each subtree, send its columns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C
    _die_with_parent(parent)
    before = 0
    while os.getppid() == parent:                     # (it died before prctl, or elsewhere)
        with next_job.get_lock():
            j = next_job.value
            next_job.value = j + 1
        if j >= len(jobs):
            return

        def on_check(enum, nodes, base=before):
            walked[index] = base + nodes

        try:
            data, nodes = walk_job(jobs[j][1], top, num_players, abstraction, on_check)
        except BaseException:  # noqa: BLE001 - the parent walks serially and reports it
            results.put((j, None))
            return
        before += nodes
        walked[index] = before
        results.put((j, data))


def walk_job(item: tuple, top: Enumeration, num_players: int, abstraction,
             on_check=None) -> tuple[bytes, int]:
    """Walk one job's subtree (seeded with the top's rows); its packed columns and size."""
    state, _, slot, depth, seq, action, prob = item
    enum = walk(None, num_players, abstraction, on_check=on_check, seed=top,
                start=[(state, ROOT_PARENT, slot, depth, seq, action, prob)])
    return pickle.dumps(_pack(enum, len(top.row_actions)), pickle.HIGHEST_PROTOCOL), len(enum)


def _first_met(code: np.ndarray) -> np.ndarray:
    """The decision rows of ``code`` in the order of their first node."""
    rows = code[code >= 0]
    uniq, first = np.unique(rows, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def _pack(enum: Enumeration, seeded: int) -> dict:
    """A part's columns as bytes, and its rows: those it met in first-met order, and
    the ones it added (keys, actions as ids into a table of distinct tuples, seqs)."""
    out = {k: getattr(enum, k).tobytes()
           for k in ("parent", "slot", "depth", "prob", "code", "terminals", "returns")}
    out["labels"], out["label"] = _label_table(enum.action)
    out["first_met"] = _first_met(np.frombuffer(enum.code, np.int32))
    keys = enum.row_key[seeded:]
    for key in keys:
        if type(key).__hash__ is object.__hash__:
            raise TypeError("information-set keys compared by identity cannot cross processes")
    table: dict[tuple, int] = {}
    actions, kept = array("i"), array("i")
    for acts, keep in zip(enum.row_actions[seeded:], enum.row_kept[seeded:]):
        a = table.setdefault(acts, len(table))
        actions.append(a)
        kept.append(a if keep is acts else table.setdefault(keep, len(table)))
    player = np.asarray(enum.row_player[seeded:], np.int32)
    by_player = [np.flatnonzero(player == p) for p in range(enum.num_players)]
    out.update(key=keys, player=player, by_player=by_player,
               keys_by_player=[[keys[i] for i in idx.tolist()] for idx in by_player],
               seq=np.asarray(enum.row_seq[seeded:], np.int64), table=list(table),
               actions=np.frombuffer(actions, np.int32), kept=np.frombuffer(kept, np.int32))
    return out


def _label_table(labels: list) -> tuple[list, np.ndarray]:
    """``labels`` as a table of distinct objects (by identity) and one index per node."""
    index: dict[int, int] = {}
    table: list = []
    out = array("i")
    for a in labels:
        i = index.get(id(a))
        if i is None:
            i = index[id(a)] = len(table)
            table.append(a)
        out.append(i)
    return table, np.frombuffer(out, np.int32)


def _objects(values: list) -> np.ndarray:
    """A 1-d object array of ``values`` (tuples stay elements)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


class _Merge:
    """The serial walk's columns, put together part by part in pre-order.

    Rows get global numbers in the order of their first member in pre-order; a
    row's legal actions, kept actions and own sequence are checked against its first
    part's, vectorised (actions as ids into one table of distinct action tuples).
    """

    def __init__(self, top: Enumeration, num_players: int):
        self.top = top
        self.num_players = num_players
        self.seeded = len(top.row_actions)
        self.pieces: dict[str, list] = {k: [] for k in ("parent", "slot", "depth", "code",
                                                       "terminals", "prob", "returns", "action")}
        self.row_player: list = []
        self.row_key: list = []
        self.row_of: list[dict] = [{} for _ in range(num_players)]   # key -> global row
        self.row_act = array("i")         # global row -> id of its legal actions
        self.row_kept = array("i")        # global row -> id of its kept actions
        self.row_seq = array("q")         # global row -> own sequence (global rows)
        self.table: list[tuple] = []      # distinct action tuples
        self.table_id: dict[tuple, int] = {}
        self.top_row = np.full(self.seeded, -1, dtype=np.int64)   # top row -> global row
        self.top_node = np.full(len(top), -1, dtype=np.int64)     # top node -> global node
        self.nodes = 0                       # global nodes so far
        self.top_done = 0                    # top nodes merged so far
        self.top_terminal = 0                # top terminals merged so far
        self.parts_done = 0

    @property
    def num_rows(self) -> int:
        return len(self.row_act)

    @property
    def max_actions(self) -> int:
        return max((len(self.table[a]) for a in set(self.row_act)), default=1)

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

    def _new_row(self, player: int, key, act: int, kept: int, seq: int) -> int:
        row = len(self.row_act)
        self.row_of[player][key] = row
        self.row_player.append(player)
        self.row_key.append(key)
        self.row_act.append(act)
        self.row_kept.append(kept)
        self.row_seq.append(seq)
        return row

    def _new_rows(self, new: np.ndarray, found: np.ndarray, part: dict, act, kept) -> None:
        """Add a part's rows ``new`` (indices, in the part's order) and number them in
        ``found``; their sequences are filled in by the caller."""
        base = len(self.row_act)
        found[new] = np.arange(base, base + len(new))
        keys, players = part["key"], part["player"][new]
        new_keys = [keys[i] for i in new.tolist()]
        for p in range(self.num_players):
            mine = np.flatnonzero(players == p)
            self.row_of[p].update(zip([new_keys[i] for i in mine.tolist()],
                                      (base + mine).tolist()))
        self.row_player.extend(players.tolist())
        self.row_key.extend(new_keys)
        self.row_act.extend(act[new].astype(np.int32).tolist())
        self.row_kept.extend(kept[new].astype(np.int32).tolist())
        self.row_seq.extend([-1] * len(new))

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
    def _append(self, **columns) -> None:
        for k, v in columns.items():
            self.pieces[k].append(v)

    def _top_run(self, stop: int) -> None:
        """Top nodes ``top_done:stop`` (those walked before the next part)."""
        a, b = self.top_done, stop
        if a == b:
            return
        t = self.top
        code = np.frombuffer(t.code, np.int32)[a:b]
        for r in _first_met(code):
            self._top_row(int(r))
        self.top_node[a:b] = np.arange(self.nodes, self.nodes + b - a)
        parent = np.frombuffer(t.parent, np.int32)[a:b]
        terms = np.frombuffer(t.terminals, np.int32)
        lo, hi = self.top_terminal, int(np.searchsorted(terms, b))
        P = self.num_players
        self._append(parent=np.where(parent == ROOT_PARENT, ROOT_PARENT,
                                     self.top_node[np.maximum(parent, 0)]).astype(np.int32),
                     slot=np.frombuffer(t.slot, np.int32)[a:b].copy(),
                     depth=np.frombuffer(t.depth, np.int32)[a:b].copy(),
                     code=self._renumber(code, self.top_row).astype(np.int32),
                     prob=np.frombuffer(t.prob, np.float64)[a:b].copy(),
                     terminals=(self.top_node[terms[lo:hi]]).astype(np.int32),
                     returns=np.frombuffer(t.returns, np.float64)[lo * P:hi * P].copy())
        self._append(action=_objects(t.action[a:b]))
        self.nodes += b - a
        self.top_done, self.top_terminal = b, hi

    def add_part(self, part: dict) -> None:
        """The next part in pre-order (after the top nodes walked before it)."""
        before, item = self.top.frontier[self.parts_done]
        self._top_run(before)
        seeded = self.seeded
        keys, players = part["key"], part["player"].tolist()
        ids = np.empty(seeded + len(keys), dtype=np.int64)
        ids[:seeded] = self.top_row
        table = np.asarray([self._action_id(acts) for acts in part["table"]], np.int32)
        act, kept = table[part["actions"]], table[part["kept"]]
        first_met = part["first_met"]
        met_top = first_met[first_met < seeded]
        if (self.top_row[met_top] >= 0).all():
            # Common case: every top row met here is numbered, so the rows new to the
            # merge come in the part's order: look them all up, then add them at once.
            found = ids[seeded:]
            for p, (idx, keys_p) in enumerate(zip(part["by_player"], part["keys_by_player"])):
                found[idx] = np.fromiter(map(self.row_of[p].get, keys_p, repeat(-1)),
                                         np.int64, len(keys_p))
            created = found < 0
            self._new_rows(np.flatnonzero(created), found, part, act, kept)
        else:
            created = np.zeros(len(keys), dtype=bool)
            for r in first_met.tolist():
                if r < seeded:
                    self._top_row(r)
                    ids[r] = self.top_row[r]
                    continue
                i = r - seeded
                g = self.row_of[players[i]].get(keys[i])
                if g is None:
                    g = self._new_row(players[i], keys[i], int(act[i]), int(kept[i]), -1)
                    created[i] = True
                ids[r] = g
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
            raise _Fallback                     # the serial walk names the first member
        del row_act, row_kept, row_seq
        code = np.frombuffer(part["code"], np.int32)
        offset = self.nodes
        parent = np.frombuffer(part["parent"], np.int32).astype(np.int64) + offset
        parent[0] = self.top_node[item[1]]
        self._append(parent=parent.astype(np.int32),
                     slot=np.frombuffer(part["slot"], np.int32),
                     depth=np.frombuffer(part["depth"], np.int32),
                     code=self._renumber(code, ids).astype(np.int32),
                     prob=np.frombuffer(part["prob"], np.float64),
                     terminals=(np.frombuffer(part["terminals"], np.int32) + offset)
                     .astype(np.int32),
                     returns=np.frombuffer(part["returns"], np.float64))
        self._append(action=_objects(part["labels"])[part["label"]])
        self.nodes += len(code)
        self.parts_done += 1

    def finish(self) -> Enumeration:
        """The merged columns as one :class:`Enumeration` (NumPy columns)."""
        self._top_run(len(self.top))
        enum = Enumeration(self.num_players)
        for k, pieces in self.pieces.items():
            dtype = {"prob": np.float64, "returns": np.float64, "action": object}.get(k, np.int32)
            setattr(enum, k, np.concatenate(pieces) if pieces else np.zeros(0, dtype))
            pieces.clear()
        enum.row_player, enum.row_key = self.row_player, self.row_key
        enum.row_actions = [self.table[a] for a in self.row_act]
        enum.row_kept = [self.table[k] for k in self.row_kept]
        enum.row_seq = self.row_seq.tolist()
        enum.max_actions = self.max_actions
        return enum
