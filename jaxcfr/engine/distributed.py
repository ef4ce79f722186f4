"""Runs over several processes: ``jax.distributed`` joins them into one global mesh.

Every process runs the same program (JAX's multi-controller model): it lowers the game
itself (through the cache of lowered games when the run uses it), builds the same
:class:`~jaxcfr.engine.runner.Runner` over :func:`~jaxcfr.engine.runner.batch_mesh` of
*every* process's devices, and steps its own shards; XLA's collectives (gloo on CPUs,
NCCL on GPUs) join them. Arrays are gathered to the host
(:func:`jaxcfr._util.host_arrays.to_host`) before anything is written, and only process 0
writes (:attr:`Cluster.is_writer`).

A :class:`Cluster` says where the run's coordinator is, how many processes join and
which one this is; :meth:`Cluster.from_options` reads them from arguments or from the
environment (:data:`ENVIRONMENT`), and :meth:`Cluster.initialize` starts
``jax.distributed`` with bounded waits: joining (``initialization_timeout``), a peer's
heartbeat and the shutdown barrier (``heartbeat_timeout``). When a peer dies or the
coordinator is gone, JAX's distributed service ends every other process (it aborts,
SIGABRT, after its own log lines; :mod:`jaxcfr.cli.supervise` turns that into one line)
within about ``heartbeat_timeout`` seconds: no process waits for a collective that will
never come. A live process is waited for however slow it is: the processes meet before
every collective (:mod:`jaxcfr._util.meet`; gloo itself waits only 30 s), and at the end
(:func:`wait_for_every_process`, then :func:`shutdown`), so that the shutdown barrier is
reached by every process at once, not while process 0 still writes the run's files.

Example (two hosts; on the second, ``--process-id 1``)::

    jaxcfr train configs/leduc.toml --out /shared/runs/leduc \\
        --coordinator 10.0.0.1:4711 --num-processes 2 --process-id 0
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from jaxcfr._util.arguments import ArgumentError, api_spelling, positive_int
from jaxcfr._util.meet import meet

__all__ = ["Cluster", "DistributedError", "ENVIRONMENT", "is_writer",
           "any_process", "check_same", "together", "process_count", "wait_for_every_process",
           "shutdown"]

#: Where :meth:`Cluster.from_options` reads what its arguments do not give:
#: ``JAX_COORDINATOR_ADDRESS`` is JAX's own; the process count and index use the same
#: prefix (JAX itself reads them from SLURM / Open MPI / Kubernetes).
ENVIRONMENT = {"coordinator": "JAX_COORDINATOR_ADDRESS", "num_processes": "JAX_NUM_PROCESSES",
               "process_id": "JAX_PROCESS_ID"}

class DistributedError(ConnectionError):
    """The processes of a run could not join, disagree, or one of them failed."""


def process_count() -> int:
    """Processes of the run (1 without ``jax.distributed``)."""
    import jax
    return jax.process_count()


def is_writer() -> bool:
    """Whether this process writes the run's files: process 0 (or the only one)."""
    import jax
    return jax.process_index() == 0


def _gather(value: np.ndarray) -> np.ndarray:
    """``value`` of every process, stacked ``[processes, *value.shape]`` (a collective)."""
    from jax.experimental import multihost_utils
    meet("a gather of the processes' values")     # (gloo waits only 30 s: _util/meet.py)
    return np.asarray(multihost_utils.process_allgather(np.asarray(value)))


def any_process(flag: bool) -> bool:
    """Whether ``flag`` is true on any process (a collective: every process asks)."""
    if process_count() == 1:
        return bool(flag)
    return bool(_gather(np.asarray(bool(flag), np.int32)).any())


def check_same(value: int, what: str) -> None:
    """Raise :class:`DistributedError` unless every process has the same ``value``."""
    if process_count() == 1:
        return
    seen = _gather(np.asarray(value, np.int64)).reshape(-1).tolist()
    if len(set(seen)) > 1:
        raise DistributedError(f"the processes disagree on {what}: "
                               + ", ".join(f"process {k}: {v}" for k, v in enumerate(seen)))


def wait_for_every_process(what: str) -> None:
    """Wait until every process gets here (:func:`jaxcfr._util.meet.meet`: as long as they
    live; a dead one ends the run within the heartbeat timeout); nothing in one process."""
    meet(what)


def shutdown() -> None:
    """Shut ``jax.distributed`` down now (its shutdown barrier waits for every process at
    most ``heartbeat_timeout`` seconds: call it once every process is done, after
    :func:`wait_for_every_process`). An error of JAX's shutdown, after the run's work is
    done, is written to the C-level stderr (the supervisor's log), not raised."""
    from jax._src import distributed as jax_distributed
    if jax_distributed.global_state.client is None:
        return
    try:
        jax_distributed.global_state.shutdown()
    except Exception as e:  # noqa: BLE001 - the run is done: JAX's business, logged
        state = jax_distributed.global_state
        state.client = state.service = state.preemption_sync_manager = None
        os.write(2, f"jaxcfr: jax.distributed.shutdown failed: {e}\n".encode())


@contextlib.contextmanager
def together(what: str) -> Iterator[None]:
    """Run the block on every process; if it raises on one, raise on every one.

    The process that failed raises its own error; the others raise
    :class:`DistributedError` naming it (instead of waiting in a collective for it).
    """
    if process_count() == 1:
        yield
        return
    try:
        yield
    except Exception:
        _gather(np.asarray(1, np.int32))
        raise
    failed = np.flatnonzero(_gather(np.asarray(0, np.int32)).reshape(-1)).tolist()
    if failed:
        raise DistributedError(f"process {failed[0]} could not {what} (its message says why)")


def _address(spell, value: Any) -> str:
    host, sep, port = str(value).rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ArgumentError(f"{spell('coordinator')} must be HOST:PORT (e.g. 10.0.0.1:4711), "
                            f"got {value!r}", spell("coordinator"))
    return str(value)


@dataclasses.dataclass(frozen=True)
class Cluster:
    """Where a run over several processes meets, and which process this is.

    Attributes:
      coordinator: ``HOST:PORT`` of process 0 (it serves the coordination service there).
      num_processes: processes in the run.
      process_id: this process's index, ``0 <= process_id < num_processes``.
      initialization_timeout: seconds to wait for every process to join.
      heartbeat_timeout: seconds after which a silent peer counts as dead (every process
        then ends), also the bound of the shutdown barrier.
    """
    coordinator: str
    num_processes: int
    process_id: int
    initialization_timeout: int = 60
    heartbeat_timeout: int = 20

    def _reach_coordinator(self, where: str) -> None:
        """Before JAX's client (whose failure to connect aborts the process), check that
        someone serves the coordinator's port, within ``initialization_timeout``."""
        host, _, port = self.coordinator.rpartition(":")
        why = _reach(host, int(port), self.initialization_timeout)
        if why is not None:
            raise DistributedError(f"{where} within {self.initialization_timeout} s: nobody "
                                   f"answers there ({why}); is process 0 started, and is the "
                                   "address right?")

    @property
    def is_writer(self) -> bool:
        """Process 0 writes the run directory, metrics, checkpoints and plot."""
        return self.process_id == 0

    @classmethod
    def from_options(cls, coordinator: str | None = None, num_processes: int | None = None,
                     process_id: int | None = None, *, initialization_timeout: int = 60,
                     heartbeat_timeout: int = 20, env: Mapping[str, str] | None = None,
                     spell: Callable[[str], str] = api_spelling) -> "Cluster | None":
        """The cluster the arguments (else :data:`ENVIRONMENT`) describe; ``None`` when
        none of the three is given (a run in one process).

        Raises:
          ArgumentError: some are given but not all, or one breaks its rule (named as
            ``spell`` names it: ``--process-id`` on the command line).
        """
        env = os.environ if env is None else env
        given = {"coordinator": coordinator, "num_processes": num_processes,
                 "process_id": process_id}
        for name, var in ENVIRONMENT.items():
            if given[name] is None and env.get(var):
                given[name] = env[var]
        missing = [n for n, v in given.items() if v is None]
        if len(missing) == len(given):
            return None
        if missing:
            raise ArgumentError(
                "a run over several processes needs the coordinator, the number of processes "
                "and this process's index: missing "
                + ", ".join(f"{spell(n)} (or ${ENVIRONMENT[n]})" for n in missing),
                spell(missing[0]))
        n = positive_int(spell("num_processes"), _int(given["num_processes"]))
        k = _int(given["process_id"])
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < n:
            raise ArgumentError(f"{spell('process_id')} must be an integer from 0 to {n - 1} "
                                f"({spell('num_processes')} is {n}), got {given['process_id']!r}",
                                spell("process_id"))
        return cls(_address(spell, given["coordinator"]), n, k,
                   positive_int(spell("initialization_timeout"), initialization_timeout),
                   positive_int(spell("heartbeat_timeout"), heartbeat_timeout))

    def initialize(self) -> "Cluster":
        """Start ``jax.distributed`` for this process (before anything touches a device).

        On CPUs the collectives go over gloo. Returns ``self``; a second call in the same
        process checks that it describes the running cluster.

        Raises:
          DistributedError: JAX already touched a device; the processes did not all join
            within ``initialization_timeout``; or JAX sees another number of processes.
        """
        import jax
        if jax.distributed.is_initialized():
            if (jax.process_count(), jax.process_index()) != (self.num_processes,
                                                               self.process_id):
                raise DistributedError(
                    f"jax.distributed already runs process {jax.process_index()} of "
                    f"{jax.process_count()}, not {self.process_id} of {self.num_processes}")
            return self
        from jax._src import xla_bridge
        if xla_bridge.backends_are_initialized():
            raise DistributedError("jax.distributed must start before anything touches a "
                                   "device, but this process already used JAX's devices")
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        where = (f"process {self.process_id} of {self.num_processes} could not join the run "
                 f"at {self.coordinator}")
        if not self.is_writer:
            self._reach_coordinator(where)
        try:
            jax.distributed.initialize(
                coordinator_address=self.coordinator, num_processes=self.num_processes,
                process_id=self.process_id, initialization_timeout=self.initialization_timeout,
                heartbeat_timeout_seconds=self.heartbeat_timeout,
                shutdown_timeout_seconds=self.heartbeat_timeout)
            count = jax.process_count()            # the devices of every process meet here
        except Exception as e:  # noqa: BLE001 - JAX's errors are pages long: one line
            _leave()
            raise DistributedError(f"{where} within {self.initialization_timeout} s: "
                                   f"{_first_line(e)}") from None
        if count != self.num_processes:
            raise DistributedError(f"{where}: this process was told {self.num_processes} "
                                   f"processes, the coordinator runs {count}")
        return self


def _reach(host: str, port: int, seconds: float) -> str | None:
    """``None`` once a TCP connection to ``host:port`` opens within ``seconds``, else why not."""
    import socket
    import time
    deadline, why = time.monotonic() + seconds, "no answer"
    while True:
        try:
            with socket.create_connection((host.strip("[]"), port), timeout=2.0):
                return None
        except OSError as e:
            why = e.strerror or str(e) or type(e).__name__
        if time.monotonic() >= deadline:
            return why
        time.sleep(0.2)


def _leave() -> None:
    """Drop a client that failed to join, so that JAX's shutdown at exit does not abort
    the process over it (the error is already reported)."""
    from jax._src import distributed as jax_distributed
    state = jax_distributed.global_state
    try:
        state.shutdown()
    except Exception:  # noqa: BLE001 - it is in error already: nothing more to report
        state.client = state.service = state.preemption_sync_manager = None


def _int(value: Any) -> Any:
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def _first_line(e: Any) -> str:
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return line if len(line) <= 240 else line[:237] + "..."
