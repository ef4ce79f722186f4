"""One compiled loop of a solver on a public tree: the public kernel alone, without the
Runner's traced count, layouts and evaluations (what ``bench_public`` and
``bench_holdem`` time)."""

from __future__ import annotations

import functools

import jax

__all__ = ["public_chunk"]


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count"))
def public_chunk(tensors, state, hp, *, solver, structure, count):
    """``count`` iterations of ``solver`` on ``tensors`` (a public tree's, on the device)
    in one compiled loop; the solver state after them."""
    carry = jax.lax.fori_loop(0, count, lambda _, c: solver.step(tensors, structure, c, hp),
                              solver.start(tensors, state))
    return carry.state
