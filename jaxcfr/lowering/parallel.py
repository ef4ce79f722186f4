"""Parallel lowering: the tree is cut near the root and its parts are walked by worker processes.

The parent process walks the top of the tree down to a cut depth (with every
contract check of :func:`jaxcfr.lowering.walk.walk`); each stack item at the cut is a job.
Worker processes (forked, so the game needs no pickling) take jobs in pre-order, a
run of consecutive jobs at a time (:func:`chunk`: many at first, one at the end), and
walk each run's subtrees with the same walk, seeded with the top's information sets.
The parent merges the parts in pre-order (:mod:`jaxcfr.lowering.parts`): node numbers,
information-set rows (in the order of their first member in pre-order), labels and
returns come out exactly as the serial walk's, so :func:`jaxcfr.lowering.lower` builds
identical tensors.

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
import signal
import struct
import warnings
from multiprocessing import connection
from typing import Callable

from jaxcfr.lowering.budget import cautious_nodes, check_budget
from jaxcfr.lowering.parts import Merge, Mismatch, pack
from jaxcfr.lowering.columns import ROOT_PARENT, Enumeration
from jaxcfr.lowering.walk import walk

__all__ = ["walk_parallel", "cut", "walk_job", "loads", "send", "receive", "run_ends", "chunk",
           "resolve_workers",
           "default_workers", "PARALLEL_MIN_NODES", "LoweringWorkerDied"]

#: Trees smaller than this (by the size estimate) are walked by one process by default.
PARALLEL_MIN_NODES = 1_000_000
#: The cut goes deep enough for this many jobs per worker (load balance).
JOBS_PER_WORKER = 8
#: ... unless the top of the tree above the cut would grow past this many nodes.
MAX_TOP_NODES = 50_000
#: The search for the cut walks at most this many times the largest top in all.
SEARCH_TOPS = 4
#: Seconds between two looks at the workers (progress, memory budget, failures).
POLL_SECONDS = 0.2
#: A worker takes at most the jobs left over this many times the workers at once (guided
#: scheduling: long runs of consecutive jobs first, single jobs at the end).
CHUNK_SHARE = 4


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


class _WorkerFailed(Exception):
    """A worker met an error (a contract violation, or anything else): walk serially."""


def walk_parallel(game, num_players: int, abstraction, *, workers: int, size, budget: int,
                  progress: Callable[[int], None] | None = None,
                  log: Callable[[str], None] | None = None,
                  cut_depth: int | None = None) -> Enumeration | None:
    """The serial walk's :class:`~jaxcfr.lowering.columns.Enumeration`, walked by ``workers``
    processes.

    Returns ``None`` when the serial walk must run instead (a contract violation
    anywhere, a tree too small to split, no way to start processes); raises
    ``MemoryBudgetError`` when the nodes walked so far exceed ``budget``.
    ``cut_depth`` forces the depth of the cut (tests walk every depth).
    """
    try:
        top = cut(game, num_players, abstraction, workers=workers, size=size, depth=cut_depth)
    except Exception:  # noqa: BLE001 - the serial walk reports it, in pre-order
        return None
    if not top.frontier:
        return top                      # the whole tree is above the cut
    if log is not None:
        log(f"walking {len(top.frontier):,} subtrees below depth "
            f"{top.frontier[0][1][3]} with {min(workers, len(top.frontier))} processes")
    try:
        return _run(top, num_players, abstraction, workers, budget, progress,
                    floor=cautious_nodes(size))
    except LoweringWorkerDied:
        raise                           # killed from outside: say so (the walk may be retried)
    except (Mismatch, _WorkerFailed, AssertionError, OSError):
        return None                     # (a daemonic process cannot fork, fork failed)


def cut(game, num_players: int, abstraction, *, workers: int, size,
        depth: int | None = None) -> Enumeration:
    """The top walk above the cut: at ``depth``, else the shallowest depth that gives
    enough jobs, or the one with the most jobs while the top stays small.

    Each depth tried walks the top again: the tops of a bushy tree grow geometrically
    (their walks add up to about twice the last), but those of a narrow one (a long
    chain of moves) by a few nodes a depth, so the search stops once its walks add up to
    :data:`SEARCH_TOPS` times the largest top allowed (linear, not quadratic, in depth).
    """
    if depth is not None:
        return walk(game, num_players, abstraction, cut_depth=depth)
    wanted = JOBS_PER_WORKER * workers
    cap = MAX_TOP_NODES if size is None else max(1_000, min(MAX_TOP_NODES, size.nodes / 50))
    best, depth, walked = None, 1, 0
    while True:
        top = walk(game, num_players, abstraction, cut_depth=depth)
        if not top.frontier:
            return top if best is None else best    # the tree ends above this depth
        if best is not None and len(top) > cap:
            return best
        if best is None or len(top.frontier) > len(best.frontier):
            best = top
        walked += len(top)
        if len(top.frontier) >= wanted or walked > SEARCH_TOPS * cap:
            return best
        depth += 1


class LoweringWorkerDied(ChildProcessError):
    """A worker process of the walk died (killed, out of memory): nothing was lowered, the
    walk can be retried. Attributes: ``worker`` (its number), ``pid``, ``exitcode``."""

    def __init__(self, worker: int, workers: int, pid: int | None, exitcode: int):
        self.worker, self.pid, self.exitcode = worker, pid, exitcode
        if exitcode < 0:
            name = signal.Signals(-exitcode).name if -exitcode in signal.valid_signals() \
                else str(-exitcode)
            oom = ", out of memory?" if -exitcode == signal.SIGKILL else ""
            why = f"by signal {-exitcode} ({name}{oom})"
        else:
            why = f"with exit status {exitcode}"
        super().__init__(f"lowering worker {worker + 1} of {workers} (pid {pid}) died {why}; "
                         "nothing was lowered and nothing is lost: the walk can be retried "
                         "(run it again), or walked in one process with --workers 1 "
                         "(workers=1, JAXCFR_LOWERING_WORKERS=1)")


def _run(top: Enumeration, num_players, abstraction, workers, budget, progress,
         floor: int = 0) -> Enumeration:
    ctx = multiprocessing.get_context("fork")
    jobs = top.frontier
    workers = min(workers, len(jobs))
    next_job = ctx.Value("i", 0)
    walked = ctx.Array("q", workers, lock=False)
    pipes = [ctx.Pipe(duplex=False) for _ in range(workers)]     # (parent's end, worker's)
    ends = run_ends(jobs)
    procs = [ctx.Process(target=_worker, daemon=True, name=f"jaxcfr-lowering-{i}",
                         args=(i, jobs, ends, workers, top, num_players, abstraction,
                               next_job, walked, pipes, os.getpid()))
             for i in range(workers)]
    merge = Merge(top, num_players)
    top.row_tables()                    # built once here, inherited by every worker
    with warnings.catch_warnings():
        # JAX warns on any fork once its backends run; the children never touch JAX.
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called",
                                category=RuntimeWarning)
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        for p in procs:
            p.start()
    for _, sender in pipes:
        sender.close()                  # (so that a worker's death ends its pipe)
    receivers = [receiver for receiver, _ in pipes]
    try:
        pending: dict[int, dict] = {}
        while merge.parts_done < len(jobs):
            if not receivers:
                raise _WorkerFailed             # (every worker ended, a part is missing)
            ready = connection.wait(receivers, timeout=POLL_SECONDS)
            if not ready:
                _check_workers(procs)
            for receiver in ready:
                try:
                    j, part = receive(receiver)
                except (EOFError, OSError):
                    receivers.remove(receiver)          # it ended: done, or died
                    _check_workers(procs, wait=True)
                    continue
                if part is None:
                    raise _WorkerFailed
                pending[j] = part                   # (a part of consecutive jobs from j)
            while merge.parts_done in pending:
                merge.add_part(pending.pop(merge.parts_done))
            nodes = len(top) + sum(walked)
            # the game's known size (``floor``, a cautious count) with the rows found so far
            check_budget(max(nodes, floor), merge.num_rows + 1, merge.max_actions, num_players,
                         budget, what="found so far" if nodes >= floor else
                         "(the size estimate) and the rows found so far")
            if progress is not None:
                progress(nodes)
        return merge.finish()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
        for receiver, _ in pipes:
            receiver.close()


def send(sender, j: int, message: tuple | None) -> None:
    """Send job ``j``'s part (:func:`walk_job`'s ``(data, buffers)``; ``None``: it failed):
    a header of sizes, then the pickle, then its out-of-band buffers (the arrays, not
    copied into the pickle)."""
    if message is None:
        sender.send_bytes(struct.pack("<qq", j, -1))
        return
    data, buffers = message
    views = [b.raw() for b in buffers]
    sender.send_bytes(struct.pack(f"<qq{len(views) + 1}q", j, len(views), len(data),
                                  *(v.nbytes for v in views)))
    sender.send_bytes(data)
    for v in views:
        sender.send_bytes(v)


def loads(message: tuple) -> dict:
    """The part in :func:`walk_job`'s message, in this process (what :func:`receive` gives
    the parent)."""
    data, buffers = message
    return pickle.loads(data, buffers=buffers)


def receive(receiver) -> tuple[int, dict | None]:
    """``(j, part)`` as :func:`send` sent it (``part`` ``None``: the job failed)."""
    header = receiver.recv_bytes()
    j, count = struct.unpack_from("<qq", header)
    if count < 0:
        return j, None
    sizes = struct.unpack_from(f"<{count + 1}q", header, 16)
    chunks = []
    for size in sizes:
        chunk = bytearray(size)             # (writable: the arrays are views of these)
        if size:
            receiver.recv_bytes_into(chunk)
        else:
            receiver.recv_bytes()
        chunks.append(chunk)
    return j, pickle.loads(chunks[0], buffers=chunks[1:])


def _check_workers(procs, wait: bool = False) -> None:
    """Raise :class:`LoweringWorkerDied` for a worker that died (``wait``: its pipe ended,
    so wait for its exit status)."""
    for i, p in enumerate(procs):
        code = p.exitcode
        if code is None and wait and not p.is_alive():
            p.join()
            code = p.exitcode
        if code not in (None, 0):
            raise LoweringWorkerDied(i, len(procs), p.pid, code)


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel ends this worker when the parent dies, even by SIGKILL."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)     # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def run_ends(jobs: list) -> list[int]:
    """Per job, the end of its run: the jobs from it up to there follow one another in
    pre-order with no top node between them (the same ``before``), so one walk over
    their subtrees, in order, is one part of the merge."""
    ends = [len(jobs)] * len(jobs)
    for j in range(len(jobs) - 2, -1, -1):
        ends[j] = ends[j + 1] if jobs[j + 1][0] == jobs[j][0] else j + 1
    return ends


def chunk(j: int, jobs: int, workers: int, ends: list[int]) -> int:
    """How many jobs from ``j`` a worker takes at once: the jobs left over
    :data:`CHUNK_SHARE` times the workers (at least one), within ``j``'s run."""
    return max(1, min((jobs - j) // (CHUNK_SHARE * workers), ends[j] - j))


def _worker(index, jobs, ends, workers, top, num_players, abstraction, next_job, walked,
            pipes, parent: int) -> None:
    """A worker process: take runs of consecutive jobs in order, walk each run's subtrees,
    send their columns down its pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the parent handles Ctrl-C
    _die_with_parent(parent)
    sender = pipes[index][1]
    for i, (receiver, other) in enumerate(pipes):     # only its own end stays open
        receiver.close()
        if i != index:
            other.close()
    before = 0
    while os.getppid() == parent:                     # (it died before prctl, or elsewhere)
        with next_job.get_lock():
            j = next_job.value
            c = chunk(j, len(jobs), workers, ends) if j < len(jobs) else 0
            next_job.value = j + c
        if j >= len(jobs):
            return

        def on_check(enum, nodes, base=before):
            walked[index] = base + nodes

        try:
            message, nodes = walk_job([item for _, item in jobs[j:j + c]], top, num_players,
                                      abstraction, on_check)
        except BaseException:  # noqa: BLE001 - the parent walks serially and reports it
            send(sender, j, None)
            return
        before += nodes
        walked[index] = before
        send(sender, j, message)


def walk_job(items: list, top: Enumeration, num_players: int, abstraction,
             on_check=None) -> tuple[tuple[bytes, list], int]:
    """Walk the subtrees of consecutive jobs (frontier items with no top node between
    them), in order, in one walk seeded with the top's rows; ``((data, buffers), size)``:
    its packed part pickled with its arrays out of band (``pickle.loads(data,
    buffers=buffers)``, or :func:`send` them), and its number of nodes."""
    start = [(state, ROOT_PARENT, slot, depth, seq, action, prob)
             for state, _, slot, depth, seq, action, prob in items]
    enum = walk(None, num_players, abstraction, on_check=on_check, seed=top, start=start)
    part = pack(enum, len(top.row_actions))
    part["jobs"] = len(items)
    buffers: list = []
    data = pickle.dumps(part, protocol=5, buffer_callback=buffers.append)
    return (data, buffers), len(enum)
