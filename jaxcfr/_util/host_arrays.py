"""Arrays between host and device: ``to_host`` from any process (a device array that spans
devices of other processes is gathered first), ``on_device`` without compiling anything.

In a run over several processes (:mod:`jaxcfr.engine.distributed`) a sharded array is
*global*: each process holds only its own devices' shards, and ``np.asarray`` of it
fails. :func:`to_host` gathers such an array with
``jax.experimental.multihost_utils.process_allgather`` (a collective: every process must
call it, in the same order, as they do since they run the same program), after the
processes met (:func:`jaxcfr._util.meet.meet`). A replicated
or process-local array, or one of a single process, is read as ``np.asarray`` reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxcfr._util.meet import meet

__all__ = ["to_host", "on_device"]


def to_host(x: Any, dtype=None) -> np.ndarray:
    """``x`` as a NumPy array of its global shape (``dtype``: optional cast).

    Example::

        >>> to_host(jnp.arange(3)).tolist()
        [0, 1, 2]
    """
    import jax
    if (isinstance(x, jax.Array) and not x.is_fully_addressable
            and not x.is_fully_replicated):
        from jax.experimental import multihost_utils
        meet("to_host")                # (gloo waits only 30 s: jaxcfr._util.meet)
        x = multihost_utils.process_allgather(x, tiled=True)
    return np.asarray(x, dtype=dtype)


def on_device(x: Any, dtype=None):
    """``x`` (NumPy, a Python number or a JAX array) as a JAX array of ``dtype`` (optional).

    Host values are converted by NumPy and copied with ``jax.device_put``: no XLA program
    is compiled. (``jnp.asarray`` of a NumPy array or a number compiles, on first use of
    each shape and dtype, a small ``stage`` or ``convert_element_type`` program: about 15
    of them were a tenth of a cold Leduc solve's compile time.) The dtype is canonical
    for the current precision scope (int64 becomes int32 outside 64-bit mode), as
    ``jnp.asarray`` makes it. A JAX array (or a tracer) goes through ``jnp.asarray``.

    Example::

        >>> on_device(np.arange(3), np.float32).dtype
        dtype('float32')
    """
    import jax
    import jax.numpy as jnp
    if isinstance(x, (jax.Array, jax.core.Tracer)):
        return jnp.asarray(x, dtype)
    return jax.device_put(np.asarray(x, dtype))
