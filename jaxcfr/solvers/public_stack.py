"""A stack of public trees in one compiled step: one game's update and metrics, vmapped.

A :class:`~jaxcfr.lowering.public_stack.PublicStack` holds its members'
:class:`~jaxcfr.tensors.PublicTensors` padded to one shape with a leading axis ``B``
and one static :class:`~jaxcfr.tensors.PublicStructure`. A solver's iteration on the
stack is :meth:`Solver.step <jaxcfr.solvers.solver.Solver.step>` of one public tree
(:class:`~jaxcfr.solvers.public.PublicExact`) under ``jax.vmap`` over the members'
tensors and states (the :class:`~jaxcfr.engine.seam.Vmapped` layout of history-tree
stacks); the exact metrics are :func:`jaxcfr.kernels.public.metrics` vmapped the same
way. The structure is static and the tensors are arguments, so one compiled program
serves every stack of the same padded shape.

Shapes: the state's tables are ``[B, I, A, *b]`` (``*b`` a batch of parameter settings,
shared by every member), its iteration ``[B]``; metrics are ``[B, P, *b]``.

Example::

    >>> solver = public_solver(jaxcfr.cfr_plus())
    >>> tensors = stack_device_tensors(stack, "float64")
    >>> state = stack_init(solver, stack, dtype=np.float64)
    >>> state = stack_update(tensors, state, solver.hyperparams(np.float64),
    ...                      solver=solver, structure=stack.structure)
    >>> evaluate_public_stack(stack, state.strategy_sum)["exploitability"]    # [B]
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

from jaxcfr._util import precision
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr.kernels import public as kernels
from jaxcfr.kernels.numerics import normalise
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["stack_device_tensors", "stack_init", "stack_update", "stack_chunk",
           "stack_metrics", "stack_average_strategy", "evaluate_public_stack"]


def stack_device_tensors(stack, dtype) -> PublicTensors:
    """A stack's :class:`PublicTensors` ``[B, ...]`` on the device, floats in ``dtype``."""
    dtype = precision.dtype_of(dtype)
    return PublicTensors(*(on_device(np.asarray(x), dtype if np.issubdtype(
        np.asarray(x).dtype, np.floating) else None) for x in stack.tensors))


def stack_init(solver: Solver, stack, batch_shape: tuple[int, ...] = (),
               dtype=np.float32) -> SolverState:
    """Zero state of a stack: tables ``[B, I, A, *batch_shape]``, iteration ``[B]``."""
    shape = tuple(stack.tensors.legal_mask.shape) + tuple(batch_shape)
    return SolverState(*(on_device(np.zeros(shape, dtype)) for _ in SolverState._fields[:-1]),
                       on_device(np.zeros(shape[:1], np.int32)))


def _loop(tensors, state, hp, solver: Solver, structure: PublicStructure, count: int):
    step = jax.vmap(lambda t, c: solver.step(t, structure, c, hp))
    start = jax.vmap(solver.start)
    carry = jax.lax.fori_loop(0, count, lambda _, c: step(tensors, c), start(tensors, state))
    return carry.state


@functools.partial(jax.jit, static_argnames=("solver", "structure"))
def stack_update(tensors: PublicTensors, state: SolverState, hp, *, solver: Solver,
                 structure: PublicStructure) -> SolverState:
    """One iteration of ``solver`` (on public trees: :func:`~jaxcfr.solvers.public.
    public_solver`) on every member of the stack."""
    return _loop(tensors, state, hp, solver, structure, 1)


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count"))
def stack_chunk(tensors: PublicTensors, state: SolverState, hp, *, solver: Solver,
                structure: PublicStructure, count: int) -> SolverState:
    """``count`` iterations on every member in one compiled loop."""
    return _loop(tensors, state, hp, solver, structure, count)


@functools.partial(jax.jit, static_argnames=("structure",))
def stack_metrics(tensors: PublicTensors, strategy: jax.Array, *,
                  structure: PublicStructure) -> tuple[jax.Array, jax.Array]:
    """``(values [B, P, *b], best_response_values [B, P, *b])`` of a profile
    ``[B, I, A, *b]`` of every member."""
    return jax.vmap(lambda t, s: kernels.metrics(t, structure, s))(tensors, strategy)


@jax.jit
def _normalise(table, legal):
    return jax.vmap(normalise)(table, legal)


def stack_average_strategy(tensors: PublicTensors, state: SolverState) -> jax.Array:
    """Each member's normalised strategy sum: ``[B, I, A, *b]``."""
    return _normalise(state.strategy_sum, tensors.legal_mask)


def evaluate_public_stack(stack, strategy, *, dtype="float64",
                          tensors: PublicTensors | None = None, normalise_rows: bool = True
                          ) -> dict[str, Any]:
    """Exact metrics of every member of a stack from a strategy table ``[B, I, A, *b]``
    (rows normalised over their legal actions unless ``normalise_rows`` is false; a
    strategy sum can be passed as it is), on the host: ``values`` and
    ``best_response_values`` ``[B, P, *b]``, ``nash_conv`` ``[B, *b]`` and
    ``exploitability`` (NashConv / 2, ``[B, *b]``, when every member is constant-sum,
    else ``None``), as :func:`~jaxcfr.solvers.public.evaluate_public` per member."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        if tensors is None:
            tensors = stack_device_tensors(stack, dtype)
        table = on_device(strategy, dtype)
        if table.shape[:3] != stack.tensors.legal_mask.shape:
            raise ValueError(f"strategy of shape {tuple(table.shape)} does not fit the "
                             f"stack's [B, I, A] = {tuple(stack.tensors.legal_mask.shape)}")
        if normalise_rows:
            table = _normalise(table, tensors.legal_mask)
        values, br = stack_metrics(tensors, table, structure=stack.structure)
        values = to_host(values, dtype=np.float64)
        br = to_host(br, dtype=np.float64)
    nash_conv = (br - values).sum(axis=1)
    constant = all(m.constant_sum is not None for m in stack.members)
    return {"values": values, "best_response_values": br, "nash_conv": nash_conv,
            "exploitability": nash_conv / 2 if constant else None}
