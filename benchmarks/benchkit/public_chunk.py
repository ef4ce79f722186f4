"""One compiled loop of a solver on a public tree: the public kernel alone, without the
Runner's traced count, layouts and evaluations (what ``bench_public`` and
``bench_holdem`` time)."""

from __future__ import annotations

import functools

import jax

from jaxcfr.solvers import public_blocks

__all__ = ["public_chunk"]


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count"),
                   donate_argnames=("state",))
def public_chunk(tensors, state, hp, *, solver, structure, count):
    """``count`` iterations of ``solver`` on ``tensors`` (a public tree's, on the device)
    in one compiled loop; the solver state after them (an alternating solver keeps the
    tables per player inside the loop, as the Runner does: ``jaxcfr.solvers.public_blocks``).
    ``state`` is donated (its buffers become the output's, as the Runner's chunk does):
    pass the returned state to the next call."""
    if public_blocks.applies(solver, tensors, structure):
        return public_blocks.iterate(solver, tensors, structure, state, hp, count)
    carry = jax.lax.fori_loop(0, count, lambda _, c: solver.step(tensors, structure, c, hp),
                              solver.start(tensors, state))
    return carry.state
