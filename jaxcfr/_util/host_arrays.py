"""Arrays on the host from any process: ``to_host`` of a device array that spans devices of
other processes gathers it first.

In a run over several processes (:mod:`jaxcfr.engine.distributed`) a sharded array is
*global*: each process holds only its own devices' shards, and ``np.asarray`` of it
fails. :func:`to_host` gathers such an array with
``jax.experimental.multihost_utils.process_allgather`` (a collective: every process must
call it, in the same order, as they do since they run the same program). A replicated
or process-local array, or one of a single process, is read as ``np.asarray`` reads it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["to_host"]


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
        x = multihost_utils.process_allgather(x, tiled=True)
    return np.asarray(x, dtype=dtype)
