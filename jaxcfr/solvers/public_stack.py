"""A stack of public trees in one compiled step: one game's update and metrics, vmapped.

A :class:`~jaxcfr.lowering.public_stack.PublicStack` holds its members'
:class:`~jaxcfr.tensors.PublicTensors` padded to one shape with a leading axis ``B``
and one static :class:`~jaxcfr.tensors.PublicStructure`. A solver's iteration on the
stack is :meth:`Solver.step <jaxcfr.solvers.solver.Solver.step>` of one public tree
(:class:`~jaxcfr.solvers.public.PublicExact`) on each member's tensors and state: on a
CPU one member after another (``lax.map``, :func:`maps_members`; each member's chunk of
iterations the single tree's program, its tables per player block where
:mod:`~jaxcfr.solvers.public_blocks` applies), else under ``jax.vmap`` over the members
(the :class:`~jaxcfr.engine.seam.Vmapped` layout of history-tree stacks); the exact
metrics are :func:`jaxcfr.kernels.public.metrics` vmapped. The structure is static and
the tensors are arguments, so one compiled program serves every stack of the same padded
shape.

Shapes: the state's tables are ``[B, I, A, *b]`` (``*b`` a batch of parameter settings,
shared by every member), its iteration ``[B]``; metrics are ``[B, P, *b]``.

Per member (traced arguments, vmapped with the members' tensors; a new value compiles
nothing): a node lock :class:`~jaxcfr.solvers.locking.Lock` of the stack's padded rows
(strategy ``[B, I, A]``, mask ``[B, I]``; a member with no locked row plays unlocked),
and with ``per_member`` the solver's parameters :class:`~jaxcfr.solvers.parameters.
HyperParams` with values ``[B]``: member ``b`` runs with the ``b``-th value of each (the
batch a sweep would put on a trailing axis, laid along the members instead).

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
from jaxcfr.solvers import public_blocks
from jaxcfr.solvers.locking import Lock, apply as apply_lock, locked_public_metrics
from jaxcfr.solvers.metric_record import metrics as metric_keys
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["stack_device_tensors", "stack_init", "stack_update", "stack_chunk",
           "stack_metrics", "stack_average_strategy", "evaluate_public_stack",
           "stack_device_lock", "evaluate_public_stack_locked", "member_step", "maps_members"]


def stack_device_tensors(stack, dtype) -> PublicTensors:
    """A stack's :class:`PublicTensors` ``[B, ...]`` on the device, floats in ``dtype``."""
    dtype = precision.dtype_of(dtype)
    return PublicTensors(*(on_device(np.asarray(x), dtype if np.issubdtype(
        np.asarray(x).dtype, np.floating) else None) for x in stack.tensors))


def stack_init(solver: Solver, stack, batch_shape: tuple[int, ...] = (),
               dtype=np.float32) -> SolverState:
    """Zero state of a stack: tables ``[B, I, A, *batch_shape]``, iteration ``[B]``."""
    shape = (stack.batch_size,) + stack.tensors.row_shape + tuple(batch_shape)
    return solver.zeros(shape, shape[:1], dtype)


def member_step(solver: Solver, structure, hp, lock, per_member: bool):
    """``(step, start)`` of one member, for ``jax.vmap`` / ``lax.map`` over the members:
    ``step(t, carry, arrays, member)`` and ``start(t, state, member)``, where ``member``
    is the member's own ``(lock, hp)`` (its slice of the stack's ``lock`` ``[B, ...]``
    and, with ``per_member``, of ``hp`` ``[B, *b]``; else ``hp`` is shared), what
    :func:`members` gives with the tensors."""
    def own(member):
        lk, h = member
        return lk, (h if per_member else hp)

    def step(t, carry, arrays, member):
        lk, h = own(member)
        return solver.step(t, structure, carry, h, arrays, lk)

    def start(t, state, member):
        return solver.start(t, state, own(member)[0])
    return step, start


def members(lock, hp, per_member: bool):
    """What travels with each member's tensors: ``(lock [B, ...] or None, hp [B, *b]
    with per_member, else None)``."""
    return lock, (hp if per_member else None)


def maps_members(backend: str | None = None) -> bool:
    """Whether a stack's compiled chunk steps its members one after another
    (``lax.map``, each member's ``count`` iterations the single public tree's program,
    its tables per player block where :func:`~jaxcfr.solvers.public_blocks.applies`)
    rather than all at once (``jax.vmap``): on a CPU (``backend``, default
    ``jax.default_backend()``). Measured (docs/holdem.md, "Stacks per player block"):
    64 hold'em rivers, vmapped, 0.27 CPU-ms per spot-iteration; one after another on the
    row path 0.155, per player block 0.085 (one spot alone: 0.082). XLA's CPU kernels on
    ``[B, ...]`` cost as much per member as one member's kernels or more (batched gathers,
    tables out of the cache), so a member axis saves none of the per-kernel overhead it
    was meant to amortise; a GPU runs the vmapped step as wide kernels."""
    return (jax.default_backend() if backend is None else backend) == "cpu"


def _mapped(tensors, state, hp, lock, solver: Solver, structure: PublicStructure,
            count: int, per_member: bool):
    """``count`` iterations of every member, one member after another: its own tensors,
    state, lock and parameters; per player block (:func:`public_blocks.iterate`) when it
    applies (alternating, nothing locked, ``structure`` counting each player's
    decisions: :func:`jaxcfr.lowering.public_stack.stack_public`), else the row path."""
    step, start = member_step(solver, structure, hp, lock, per_member)

    def one(x):
        t, st, member = x
        lk, h = member[0], (member[1] if per_member else hp)
        if public_blocks.applies(solver, t, structure, lk):
            return public_blocks.iterate(solver, t, structure, st, h, count, padding=True)
        return jax.lax.fori_loop(0, count, lambda _, c: step(t, c, None, member),
                                 start(t, st, member)).state
    return jax.lax.map(one, (tensors, state, members(lock, hp, per_member)))


def _loop(tensors, state, hp, lock, solver: Solver, structure: PublicStructure, count: int,
          per_member: bool, mapped: bool | None = None):
    if maps_members() if mapped is None else mapped:
        return _mapped(tensors, state, hp, lock, solver, structure, count, per_member)
    step, start = member_step(solver, structure, hp, lock, per_member)
    own = members(lock, hp, per_member)
    vstep = jax.vmap(lambda t, c, m: step(t, c, None, m))
    carry = jax.lax.fori_loop(0, count, lambda _, c: vstep(tensors, c, own),
                              jax.vmap(start)(tensors, state, own))
    return carry.state


@functools.partial(jax.jit, static_argnames=("solver", "structure", "per_member", "mapped"))
def stack_update(tensors: PublicTensors, state: SolverState, hp, lock: Lock | None = None,
                 *, solver: Solver, structure: PublicStructure, per_member: bool = False,
                 mapped: bool | None = None) -> SolverState:
    """One iteration of ``solver`` (on public trees: :func:`~jaxcfr.solvers.public.
    public_solver`) on every member of the stack (``lock``, ``per_member``: see the
    module; ``mapped``: members one after another, ``None``: :func:`maps_members`)."""
    return _loop(tensors, state, hp, lock, solver, structure, 1, per_member, mapped)


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count", "per_member",
                                             "mapped"))
def stack_chunk(tensors: PublicTensors, state: SolverState, hp, lock: Lock | None = None,
                *, solver: Solver, structure: PublicStructure, count: int,
                per_member: bool = False, mapped: bool | None = None) -> SolverState:
    """``count`` iterations on every member in one compiled loop (``mapped``: as
    :func:`stack_update`)."""
    return _loop(tensors, state, hp, lock, solver, structure, count, per_member, mapped)


def stack_device_lock(lock: Lock | None, dtype) -> Lock | None:
    """A stack's host lock (``[B, I, A]``, ``[B, I]``) on the device, in ``dtype``."""
    if lock is None:
        return None
    return Lock(on_device(np.asarray(lock.strategy), precision.dtype_of(dtype)),
                on_device(np.asarray(lock.mask, bool)))


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
        want = (stack.batch_size,) + stack.tensors.row_shape
        if table.shape[:3] != want:
            raise ValueError(f"strategy of shape {tuple(table.shape)} does not fit the "
                             f"stack's [B, I, A] = {want}")
        if normalise_rows:
            table = _normalise(table, tensors.legal_mask)
        values, br = stack_metrics(tensors, table, structure=stack.structure)
        values = to_host(values, dtype=np.float64)
        br = to_host(br, dtype=np.float64)
    nash_conv = (br - values).sum(axis=1)
    constant = all(m.constant_sum is not None for m in stack.members)
    return {"values": values, "best_response_values": br, "nash_conv": nash_conv,
            "exploitability": nash_conv / 2 if constant else None}


@functools.partial(jax.jit, static_argnames=("structure",))
def _locked_metrics(tensors, strategy, lock, *, structure):
    def one(t, table, lk):
        return locked_public_metrics(t, structure, apply_lock(table, lk), lk.mask)
    return jax.vmap(one)(tensors, strategy, lock)


def evaluate_public_stack_locked(stack, strategy, lock: Lock, *, dtype="float64",
                                 tensors: PublicTensors | None = None) -> dict[str, Any]:
    """:func:`evaluate_public_stack` in each member's game restricted by its lock
    (:func:`jaxcfr.solvers.locking.evaluate_public_locked` of every member, vmapped:
    ``lock`` the stack's ``[B, I, A]``, ``[B, I]``; a member with no locked row has the
    ordinary best responses). Rows are normalised; locked rows are the lock. The keys of
    :func:`jaxcfr.evaluate` (``nash_gap`` ``None``), shapes ``[B, P, *b]`` and ``[B, *b]``."""
    dtype = precision.dtype_of(dtype)
    with precision.scope(dtype):
        if tensors is None:
            tensors = stack_device_tensors(stack, dtype)
        table = _normalise(on_device(strategy, dtype), tensors.legal_mask)
        values, br = _locked_metrics(tensors, table, stack_device_lock(lock, dtype),
                                     structure=stack.structure)
        values = to_host(values, dtype=np.float64)
        br = to_host(br, dtype=np.float64)
    nash_conv = (br - values).sum(axis=1)
    constant = all(m.constant_sum is not None for m in stack.members)
    return metric_keys(values, br, nash_conv, nash_conv / 2 if constant else None)
