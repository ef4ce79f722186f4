"""The processes of a run over several processes meet before a collective: :func:`meet`.

On CPUs XLA's collectives go over gloo, and gloo waits at most 30 s for the other
processes: when a collective's first use connects them ("Gloo context initialization
failed: ... GetKeyValue() timed out ... 29.99s") and in every exchange. That limit is
fixed inside XLA (no option of JAX reaches it), and the processes of one run drift much
further apart on a loaded machine: one compiles a program for a minute while the other,
done, waits in the collective that follows; process 0 writes a checkpoint or draws the
plot while the others go on. So every collective that jaxcfr issues from the host (the
gathers of :func:`jaxcfr._util.host_arrays.to_host` and :mod:`jaxcfr.engine.distributed`,
and the first run of each compiled program whose arguments span several processes,
:mod:`jaxcfr._util.program_cache`) is preceded by :func:`meet`: each process writes its
arrival in the key-value store of JAX's coordination service and waits for every other
one's. That wait has no limit of its own: a process that died stops its heartbeat, and
JAX's distributed service then ends every process within ``--heartbeat-timeout``
seconds, as it does anywhere else; a process that lives is waited for however slow it
is. Once they met, gloo's 30 s bound only the exchange itself.

:func:`meet` is a no-op without ``jax.distributed`` (one process). Every process must
call it the same number of times, in the same order (as they issue the collectives).
``MEET_SLICE_MS``: how long one look at the store waits (the loop then looks again).
"""

from __future__ import annotations

import itertools
import threading

__all__ = ["meet", "MEET_SLICE_MS", "running", "other_processes"]

#: One blocking look at the coordination service's store, in milliseconds.
MEET_SLICE_MS = 10_000
_PREFIX = "jaxcfr/meet"
_count = itertools.count()
_lock = threading.Lock()


def running():
    """JAX's distributed state when a run over several processes is running, else ``None``."""
    from jax._src import distributed
    state = distributed.global_state
    if state.client is None or (state.num_processes or 1) <= 1:
        return None
    return state


def other_processes(devices) -> bool:
    """Whether any of ``devices`` belongs to another process (a program over them is a
    collective every process runs)."""
    import jax
    me = jax.process_index()
    return any(d.process_index != me for d in devices)


def meet(what: str = "") -> None:
    """Wait until every process of the run arrives here (see the module docstring).

    ``what``: a few words for the store (what the processes meet before), read when
    debugging a run that hangs."""
    state = running()
    if state is None:
        return
    client, me, n = state.client, state.process_id, state.num_processes
    with _lock:
        number = next(_count)
    where = f"{_PREFIX}/{number}"
    client.key_value_set(f"{where}/{me}", what or "-", allow_overwrite=True)
    for k in range(n):
        if k != me:
            _wait(client, f"{where}/{k}")
    if number:                 # every process is past the previous meeting: drop mine
        try:
            client.key_value_delete(f"{_PREFIX}/{number - 1}/{me}")
        except Exception:      # noqa: BLE001 - a key left behind costs a few bytes
            pass


def _wait(client, key: str) -> None:
    while True:
        try:
            client.blocking_key_value_get(key, MEET_SLICE_MS)
            return
        except Exception as e:      # noqa: BLE001 - only the slice's deadline is looked again
            if "DEADLINE_EXCEEDED" not in str(e) and "timed out" not in str(e).lower():
                raise
