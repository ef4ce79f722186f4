"""Traversal counts: ``K`` Monte Carlo traversals as one top-down pass over the whole tree.

A sampling scheme (chance, external or outcome sampling; :mod:`jaxcfr.kernels.subtree`)
enumerates the children of some nodes and samples one child of the others. Run ``K``
traversals and count, at every node ``h``, how many reach it: ``n(h)``. Each traversal's
estimate is a sum over the nodes it reaches of terms that depend only on the node and on
the traversal's own path below it, so the *sum* of the ``K`` estimates is a function of
the counts alone (:meth:`jaxcfr.solvers.estimators.MonteCarlo.from_counts` writes it
out). Carrying counts instead of traversals makes ``K`` traversals cost one pass over the
``N`` nodes whatever ``K`` is: the sampled subtrees' ``O(K x reached nodes)`` becomes
``O(N)``, which is less as soon as ``K`` traversals together reach more nodes than the
tree has.

The counts go down level by level. An enumerating node gives every child its count; a
sampling node splits its count ``n`` among its children in proportion to the sampling
probabilities ``q``, **systematically**: with one uniform ``u`` per node, child ``c``
gets the number of points ``u, u + 1, ..., u + n - 1`` that fall in its interval
``[n B(c), n B(c+))`` of the node's cumulative probabilities::

    n(c) = ceil(n B(c+) - u) - ceil(n B(c) - u)

so ``n(c)`` is ``floor(n q(c))`` or one more, ``E[n(c)] = n q(c)``, a child of
probability 0 never gets a traversal, and the children's counts add up to ``n`` exactly
(the intervals tile ``[0, n)``: consecutive children share one computed boundary, the
boundaries never decrease, the last is exactly ``n``). By the tower property ``E[n(h)]``
is ``K`` times the probability that one traversal reaches ``h``, so every estimate built
linearly on the counts has the expectation of the mean of ``K`` independent traversals;
with ``n = 1`` a split is one draw from ``q``, so ``K = 1`` is one traversal exactly. The
``K`` traversals are coupled, not independent: a split never strays more than one from
its mean where a multinomial one strays by about ``sqrt(n q (1 - q))``, so the variance
is lower (measured in ``docs/mccfr.md``; systematic splitting, unlike residual or
stratified splitting, has no general guarantee of that: Douc, Cappe & Moulines 2005).

A run is reproducible bit for bit from its seed, whatever its chunk length, and resumes
bit for bit. A member of a batch of seeds equals its separate run to float rounding only:
XLA may round the batched program's sums differently (``fma`` or not), and a count is a
``ceil`` of rounded numbers, so once a rounding difference moves a split the two runs go
apart like two seeds would (the traversals one by one keep every member's numbers
apart and agree bit for bit).

Shapes: ``N`` nodes, ``J`` internal nodes (nodes with children), ``W`` the most
children of a node, ``*b`` trailing batch axes (settings, seeds).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.numerics import trail
from jaxcfr.kernels.passes import gather
from jaxcfr.tensors import GameTensors, LoweredGame

__all__ = ["CountTables", "count_tables", "split_bounds", "traversal_counts",
           "node_uniforms", "MAX_SAMPLES"]

#: The most traversals one count pass carries: counts are exact integers in float32 up to
#: 2**24 (a split computes ``n B`` and ``ceil`` on them).
MAX_SAMPLES = 2 ** 24


class CountTables(NamedTuple):
    """Where each node's children are (contiguous in the next level), one game's ``[N]``
    (a stack's ``[B, N]``; its ``J`` padded with the sink's index ``N``)."""
    internal: np.ndarray      # [J] int32  the nodes with children
    first_child: np.ndarray   # [J] int32  the first child of each
    num_children: np.ndarray  # [J] int32  how many
    slot: np.ndarray          # [N] int32  each node's place in ``internal`` (J at a leaf)


def count_tables(lowered: LoweredGame) -> CountTables:
    """The :class:`CountTables` of ``lowered`` (one game, or a stack padded to one shape)."""
    t = lowered.tensors
    parent = np.asarray(t.parent)
    if parent.ndim == 2:
        parts = [_one_game(parent[b], np.asarray(t.node_kind)[b])
                 for b in range(parent.shape[0])]
        width = max(len(p.internal) for p in parts)
        n = parent.shape[1]

        def pad(x, fill):
            return np.concatenate([x, np.full(width - len(x), fill, np.int32)])
        return CountTables(
            np.stack([pad(p.internal, n) for p in parts]),
            np.stack([pad(p.first_child, n) for p in parts]),
            np.stack([pad(p.num_children, 0) for p in parts]),
            np.stack([np.where(p.slot == len(p.internal), width, p.slot).astype(np.int32)
                      for p in parts]))
    return _one_game(parent, np.asarray(t.node_kind))


def _one_game(parent: np.ndarray, kind: np.ndarray) -> CountTables:
    from jaxcfr.tensors import PADDING
    n = parent.shape[0]
    # a stack's padding nodes hang under real nodes, after their real children: not children
    child = np.flatnonzero((parent >= 0) & (kind != PADDING))
    num = np.bincount(parent[child], minlength=n)
    first = np.full(n, n, dtype=np.int64)
    np.minimum.at(first, parent[child], child)
    internal = np.flatnonzero(num > 0)
    slot = np.full(n, len(internal), dtype=np.int64)
    slot[internal] = np.arange(len(internal))
    return CountTables(internal.astype(np.int32), first[internal].astype(np.int32),
                       num[internal].astype(np.int32), slot.astype(np.int32))


def split_bounds(t: GameTensors, tables: CountTables, width: int, weight: jax.Array
                 ) -> tuple[jax.Array, jax.Array]:
    """Each node's interval ``[B(c), B(c+))`` among its siblings: the sampling weights of
    the siblings before it, and up to it, over all of theirs: ``[N, *b]`` each (0 at the
    roots and at unreachable nodes, whose parents' weights are all 0).

    Args:
      t: the tensors (``parent``).
      tables: :func:`count_tables`.
      width: ``W``, the most children of a node (static).
      weight: ``[N, *b]`` the sampling weight of the edge into each node (``>= 0``).
    """
    batch, ndim = weight.shape[1:], weight.ndim
    padded = jnp.concatenate([weight, jnp.zeros((width,) + batch, weight.dtype)])
    cols = jnp.arange(width)
    window = gather(padded, tables.first_child[:, None] + cols)             # [J, W, *b]
    window = jnp.where(trail(cols < tables.num_children[:, None], ndim + 1), window, 0)
    # cumulative weights one column after another: never decreasing (a reduction in
    # another order could make a child's two boundaries cross)
    cum = [jnp.zeros_like(window[:, 0])]
    for j in range(width):
        cum.append(cum[-1] + window[:, j])
    total = cum[-1]
    safe = jnp.where(total > 0, total, 1)
    bounds = jnp.stack([c / safe for c in cum], axis=1).reshape((-1,) + batch)  # [J*(W+1)]
    parent = jnp.maximum(t.parent, 0)
    at = gather(tables.slot, parent)                    # the parent's place among internals
    place = jnp.arange(t.parent.shape[0]) - gather(tables.first_child, at)
    inside = (t.parent >= 0) & (place >= 0) & (place < gather(tables.num_children, at))
    index = at * (width + 1) + jnp.clip(place, 0, width - 1)
    lo = jnp.where(trail(inside, ndim), gather(bounds, index), 0)
    hi = jnp.where(trail(inside, ndim), gather(bounds, index + 1), 0)
    return lo, hi


def traversal_counts(t: GameTensors, levels, bounds: tuple[jax.Array, jax.Array],
                     enumerated: jax.Array, samples, uniforms: jax.Array) -> jax.Array:
    """How many of ``samples`` traversals reach each node: ``[N, *b]`` (exact integers).

    Args:
      t: the tensors (``parent``).
      levels: the static level slices (``Structure.level_start``).
      bounds: :func:`split_bounds` of the sampling weights.
      enumerated: ``[N]`` bool (or ``[N, *b]``): the node's children all get its count.
      samples: ``K``, the count at each root (a number or a traced scalar).
      uniforms: ``[N, *b]`` in ``[0, 1)``: node ``h`` splits with ``uniforms[h]``
        (:func:`node_uniforms`).
    """
    lo, hi = bounds
    ndim = lo.ndim
    level = jnp.full((levels[1] - levels[0],) + lo.shape[1:], samples, lo.dtype)
    out = [level]
    for d in range(1, len(levels) - 1):
        start, a, b = levels[d - 1], levels[d], levels[d + 1]
        local = t.parent[a:b] - start
        n = gather(level, local)
        u = gather(uniforms[start:a], local)
        split = jnp.ceil(n * hi[a:b] - u) - jnp.ceil(n * lo[a:b] - u)
        copy = trail(gather(enumerated[start:a], local), ndim)
        level = jnp.where(copy, n, split)
        out.append(level)
    return jnp.concatenate(out, axis=0)


def node_uniforms(keys: jax.Array, tables: CountTables, dtype) -> jax.Array:
    """``[N, *b]`` uniform numbers in ``[0, 1)``, drawn at the internal nodes only (0 at the
    leaves), from a ``[*b]`` key array: member ``b``'s from its own key alone, so that a
    batch member equals its separate run."""
    internal = tables.internal.shape[0]
    u = jax.vmap(lambda k: jax.random.uniform(k, (internal,), dtype))(keys.reshape(-1))
    u = jnp.concatenate([jnp.moveaxis(u, 0, -1), jnp.zeros((1, u.shape[0]), dtype)])
    return gather(u, tables.slot).reshape(tables.slot.shape + keys.shape)
