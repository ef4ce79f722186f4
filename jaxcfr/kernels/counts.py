"""Traversal counts: ``K`` Monte Carlo traversals as one top-down pass over the whole tree.

A sampling scheme (chance, external or outcome sampling: any
:class:`~jaxcfr.kernels.subtree.Scheme`) enumerates the children of some nodes and samples
one child of the others. Run ``K`` traversals and count, at every node ``h``, how many
reach it: ``n(h)``. Each traversal's estimate is a sum over the nodes it reaches of terms
that depend only on the node and on the traversal's own path below it, so the *sum* of
the ``K`` estimates is a function of the counts alone
(:meth:`jaxcfr.solvers.monte_carlo.MonteCarlo.from_counts` writes it out). Carrying
counts instead of traversals makes ``K`` traversals cost one pass over the ``N`` nodes
whatever ``K`` is: the sampled subtrees' ``O(K x reached nodes)`` becomes ``O(N)``, which
is less as soon as ``K`` traversals together reach more nodes than the tree has.

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

from jaxcfr.kernels.keys import uniform
from jaxcfr.kernels.numerics import trail
from jaxcfr.kernels.passes import gather
from jaxcfr.kernels.subtree import Scheme
from jaxcfr.tensors import GameTensors, LoweredGame

__all__ = ["CountTables", "count_tables", "siblings", "split_bounds", "traversal_counts",
           "node_uniforms", "MAX_SAMPLES"]

#: The most traversals one count pass carries: counts are exact integers in float32 up to
#: 2**24 (a split computes ``n B`` and ``ceil`` on them).
MAX_SAMPLES = 2 ** 24


class CountTables(NamedTuple):
    """Each node's siblings (contiguous, in order, in the next level) and, per traverser,
    the nodes that sample (those that draw a number): one game's (a stack's with a leading
    ``[B]``, its ``J`` padded with ``N``)."""
    follows: np.ndarray       # [N] bool   the node before it has the same parent
    last: np.ndarray          # [N] int32  the last node with its parent (itself at a root)
    sampling: np.ndarray      # [P, J] int32 the nodes that sample when player i traverses
                              #   (chance sampling: every row alike), padded with N
    slot: np.ndarray          # [P, N] int32 each node's place in its row of ``sampling``
                              #   (J where it does not sample)
    level_nodes: np.ndarray   # [D, L] int32 the nodes of each level, padded with N
    level_up: np.ndarray      # [D, L] int32 the place of each one's parent in the row above
    place: np.ndarray         # [N] int32  each node's place in ``level_nodes`` (d * L + j)


def count_tables(lowered: LoweredGame, scheme: Scheme) -> CountTables:
    """The :class:`CountTables` of ``lowered`` under ``scheme`` (its ``enumerates`` says
    which nodes sample; :class:`~jaxcfr.kernels.subtree.Scheme`; one game, or a stack padded
    to one shape)."""
    t = lowered.tensors
    parent = np.asarray(t.parent)
    if parent.ndim == 1:
        return _one_game(parent, np.asarray(t.node_kind), np.asarray(t.node_player), scheme,
                         lowered.num_players, lowered.level_start)
    parts = [_one_game(parent[b], np.asarray(t.node_kind)[b], np.asarray(t.node_player)[b],
                       scheme, lowered.num_players, lowered.level_start)
             for b in range(parent.shape[0])]
    width = max(p.sampling.shape[1] for p in parts)
    n = parent.shape[1]
    return CountTables(
        np.stack([p.follows for p in parts]), np.stack([p.last for p in parts]),
        np.stack([np.pad(p.sampling, ((0, 0), (0, width - p.sampling.shape[1])),
                         constant_values=n) for p in parts]),
        np.stack([np.where(p.slot == p.sampling.shape[1], width, p.slot) for p in parts]),
        *(np.stack([getattr(p, f) for p in parts]) for f in ("level_nodes", "level_up",
                                                              "place")))


def siblings(lowered: LoweredGame) -> int:
    """``W``: the most nodes with one parent (a stack's padding nodes included)."""
    parent = np.asarray(lowered.tensors.parent).reshape(-1, lowered.level_start[-1])
    return max(int(np.bincount(p[p >= 0]).max(initial=1)) for p in parent)


def _one_game(parent: np.ndarray, kind, owner, scheme: Scheme, players: int, levels
              ) -> CountTables:
    n = parent.shape[0]
    follows = np.zeros(n, dtype=bool)
    follows[1:] = (parent[1:] == parent[:-1]) & (parent[1:] >= 0)
    ends = np.flatnonzero(np.append(~follows[1:], True))          # the last of each run
    last = ends[np.cumsum(~follows) - 1]                          # ... of each node's run
    internal = np.bincount(parent[parent >= 0], minlength=n) > 0
    rows = [np.flatnonzero(internal & ~np.asarray(scheme.enumerates(kind, owner, i)))
            for i in range(players)]
    width = max(1, max(len(r) for r in rows))
    sampling = np.full((players, width), n, dtype=np.int32)
    slot = np.full((players, n), width, dtype=np.int32)
    for i, r in enumerate(rows):
        sampling[i, :len(r)] = r
        slot[i, r] = np.arange(len(r))
    # the levels side by side, each padded to the widest (the count pass scans them)
    sizes = np.diff(levels)
    depth, widest = len(sizes), int(sizes.max())
    level_nodes = np.full((depth, widest), n, dtype=np.int32)
    level_up = np.zeros((depth, widest), dtype=np.int32)
    place = np.zeros(n, dtype=np.int32)
    for d, (lo, hi) in enumerate(zip(levels[:-1], levels[1:])):
        level_nodes[d, :hi - lo] = np.arange(lo, hi)
        if d:
            level_up[d, :hi - lo] = parent[lo:hi] - levels[d - 1]
        place[lo:hi] = d * widest + np.arange(hi - lo)
    return CountTables(follows, last.astype(np.int32), sampling, slot, level_nodes, level_up,
                       place)


def split_bounds(tables: CountTables, width: int, weight: jax.Array
                 ) -> tuple[jax.Array, jax.Array]:
    """Each node's interval ``[B(c), B(c+))`` among its siblings: the sampling weights of
    the siblings before it, and up to it, over all of theirs: ``[N, *b]`` each (0 at
    unreachable nodes, whose parents' weights are all 0; ``[0, 1)`` at a root).

    Args:
      tables: :func:`count_tables`.
      width: ``W``, the most siblings (:func:`siblings`; static).
      weight: ``[N, *b]`` the sampling weight of the edge into each node (``>= 0``).

    The weights are summed one sibling after the other, ``S(c) = S(c-1) + q(c)``: ``W - 1``
    shifted adds over all nodes at once (no gathers), so a bound never decreases, a child
    of weight 0 gets ``S(c) = S(c-1)`` exactly, and consecutive children share a bound.
    """
    ndim = weight.ndim
    follows = trail(tables.follows, ndim)
    total = weight
    for _ in range(width - 1):
        before = jnp.concatenate([jnp.zeros_like(total[:1]), total[:-1]])
        total = weight + jnp.where(follows, before, 0)
    whole = gather(total, tables.last)                   # all the siblings' weight [N, *b]
    safe = jnp.where(whole > 0, whole, 1)
    hi = total / safe
    lo = jnp.where(follows, jnp.concatenate([jnp.zeros_like(hi[:1]), hi[:-1]]), 0)
    return lo, hi


def traversal_counts(t: GameTensors, tables: CountTables, bounds: tuple[jax.Array, jax.Array],
                     enumerated: jax.Array, samples, uniforms: jax.Array) -> jax.Array:
    """How many of ``samples`` traversals reach each node: ``[N, *b]`` (exact integers).

    Args:
      t: the tensors (``parent``).
      tables: :func:`count_tables` (the levels side by side).
      bounds: :func:`split_bounds` of the sampling weights.
      enumerated: ``[N]`` bool (or ``[N, *b]``): the node's children all get its count.
      samples: ``K``, the count at each root (a number or a traced scalar).
      uniforms: ``[N, *b]`` in ``[0, 1)``: node ``h`` splits with ``uniforms[h]``
        (:func:`node_uniforms`).

    One ``lax.scan`` over the levels, each padded to the widest ``L``: its body (a gather
    of the parents' counts and a few elementwise operations) is compiled once. Unrolled
    level by level the pass compiled in 0.66 s of a Leduc step's 1.44 s (the exact step:
    0.5 s); scanned, it does ``D x L`` work instead of ``N`` (3.4 times on Leduc and Liar's
    dice), which costs about a third of a Liar's dice count estimate. What the body reads
    besides the counts is laid out level by level before it (``[D, L]``).
    """
    lo, hi = bounds
    ndim, batch = lo.ndim, lo.shape[1:]
    parent = jnp.maximum(t.parent, 0)
    copy = trail(gather(enumerated, parent), ndim)            # the parent enumerates
    u = gather(uniforms, parent)                              # the parent's number

    def by_level(x):                        # [N, *b] -> [D, L, *b]; padding reads zeros
        x = jnp.concatenate([x, jnp.zeros((1,) + x.shape[1:], x.dtype)])
        return gather(x, tables.level_nodes)
    levels = (by_level(lo), by_level(hi), by_level(u), by_level(copy), tables.level_up)
    first = jnp.where(trail(tables.level_nodes[0] < t.parent.shape[0], ndim),
                      jnp.asarray(samples, lo.dtype), jnp.zeros((1,) + batch, lo.dtype))

    def level(above, xs):
        lo_d, hi_d, u_d, copy_d, up = xs                               # level d: [L, *b]
        n = gather(above, up)                                          # the parents' counts
        here = jnp.where(copy_d, n, jnp.ceil(n * hi_d - u_d) - jnp.ceil(n * lo_d - u_d))
        return here, here
    _, rest = jax.lax.scan(level, first, tuple(x[1:] for x in levels))
    out = jnp.concatenate([first[None], rest])                            # [D, L, *b]
    return gather(out.reshape((-1,) + batch), tables.place)


def node_uniforms(keys: jax.Array, tables: CountTables, traverser, dtype) -> jax.Array:
    """``[N, *b]`` uniform numbers in ``[0, 1)`` at the nodes that sample when ``traverser``
    traverses (an int or a traced int; ``None``: chance sampling, the same for all), 0
    elsewhere, from a ``[*b]`` key array: member ``b``'s from its own key alone, so that a
    batch member draws what its separate run draws."""
    row = 0 if traverser is None else traverser
    sampling = jax.lax.dynamic_index_in_dim(tables.sampling, row, keepdims=False)     # [J]
    slot = jax.lax.dynamic_index_in_dim(tables.slot, row, keepdims=False)             # [N]
    u = uniform(keys.reshape(-1), sampling.shape, dtype)                            # [B, J]
    u = jnp.concatenate([jnp.moveaxis(u, 0, -1), jnp.zeros((1, u.shape[0]), dtype)])
    return gather(u, slot).reshape(slot.shape + keys.shape)
