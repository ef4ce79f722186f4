"""A lowered game's tensors in the host's compact forms, from dense ones.

Lowering makes the compact forms directly (:func:`jaxcfr.lower`); a game whose tensors
come dense (a cache entry, written dense so that its format did not change) is compacted
here: slots and players in the smallest signed integer (:data:`jaxcfr.tensors.WIDE_DTYPES`),
payoffs and chance probabilities as a :class:`jaxcfr._util.tabled.TabledArray`
(:data:`jaxcfr.tensors.HOST_FORMS`). The device and the fingerprint see the same arrays.

Example::

    >>> import numpy as np, jaxcfr
    >>> t = jaxcfr.lower(jaxcfr.load_game("kuhn_poker")).tensors
    >>> dense = t._replace(**{f: np.asarray(getattr(t, f), np.int32 if f != "payoff" and
    ...                       f != "chance_prob" else None) for f in t._fields})
    >>> compact_tensors(dense).node_player.dtype.name
    'int8'
"""

from __future__ import annotations

import numpy as np

from jaxcfr._util.tabled import small_int_dtype, tabled
from jaxcfr.tensors import WIDE_DTYPES, GameTensors

__all__ = ["compact_tensors"]


def compact_tensors(tensors: GameTensors) -> GameTensors:
    """One game's tensors in the host's compact forms (``jaxcfr.tensors.WIDE_DTYPES``
    narrowed, ``HOST_FORMS`` tabled), from dense ones (a cache entry's): the same arrays
    to the device and the fingerprint."""
    narrow = {f: getattr(tensors, f).astype(small_int_dtype(int(
        np.max(getattr(tensors, f), initial=0)))) for f in WIDE_DTYPES}
    payoff, prob = np.asarray(tensors.payoff), np.asarray(tensors.chance_prob)
    n, p = payoff.shape
    at = np.flatnonzero((payoff.view(np.uint64) != 0).any(axis=1))      # (bytes: -0.0 kept)
    one = prob.view(np.uint64) != np.float64(1.0).view(np.uint64)
    return tensors._replace(payoff=tabled(n, at, payoff[at], np.zeros(p)),
                            chance_prob=tabled(n, np.flatnonzero(one), prob[one], 1.0),
                            **narrow)
