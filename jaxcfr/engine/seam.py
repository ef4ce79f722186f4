"""The seam: how a run's values are computed and how its batch is laid out, chosen once.

A run's compiled step needs two decisions, both objects (frozen, hashable: static in
compiled code):

* the **value kernel** (:mod:`jaxcfr.kernels.values`): node passes, the sequence form
  or the public tree's passes (a game lowered by :mod:`jaxcfr.lowering.public`), or a
  backend's own kernel for one of them;
* the **layout** of a stack of games (:class:`Layout`): :class:`Single` (no stack),
  :class:`Vmapped` (tensors ``[B, ...]``, vmapped), :class:`Mapped` (one member after
  another, each the single game's program), :class:`Shared` (one tree, the members on a
  trailing axis ``[I, A, B, *H]``) or :class:`Forest` (different trees side by side,
  ``[B * I, A, *H]``).

:func:`choose_seam` makes both from the backend, the game's representation and the
batch; nothing else in the engine asks which backend it runs on, probes tensors for
their tables or compares layout names. A kernel for one backend is one
:class:`~jaxcfr.kernels.values.ValueKernel` subclass plus one
:func:`~jaxcfr.kernels.values.register_kernel` line.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jaxcfr.kernels.values import ValueKernel, choose_kernel, representation
from jaxcfr.lowering.stack import forest as stack_forest
from jaxcfr.lowering.stack import shared_structure as stack_shared
from jaxcfr.solvers.estimator_protocol import Estimator
from jaxcfr.solvers.public_stack import maps_members
from jaxcfr.tensors import GameTensors, LoweredGame, Structure

__all__ = ["Layout", "Single", "Vmapped", "Mapped", "Shared", "Forest", "Seam",
           "choose_seam", "SHARED_MIN_MEMBERS"]

#: On a CPU, a stack of fewer members than this is stepped member after member in one
#: program (:class:`Mapped`): XLA's CPU code for a trailing batch axis narrower than 16
#: ran 3-4x *slower* per member than one game (Leduc, B = 2..8: 0.27-0.34x of one game's
#: iterations per second; B = 16: 1.75x; ``docs/benchmarks.md``, stacks).
SHARED_MIN_MEMBERS = 16


@dataclasses.dataclass(frozen=True)
class Layout:
    """How the compiled chunk holds and steps a run's state (one game: :class:`Single`)."""
    #: The step tensors are the node tensors themselves (else :meth:`host` made others).
    own_tensors: ClassVar[bool] = True
    #: Per-member tables ``[B, ...]`` (the value kernel's tables are stacked).
    stacked: ClassVar[bool] = False

    def host(self, lowered: LoweredGame) -> tuple[GameTensors, Structure]:
        """The host tensors the step reads, and their structure."""
        return lowered.tensors, lowered.structure

    def iterate(self, tensors, state, arrays, iterate, step, start):
        """The chunk's iterations: ``iterate(t, state, arrays, step, start)`` on this
        layout's view of ``state`` ``[(B,) I, A, *H]``."""
        return iterate(tensors, state, arrays, step, start)


@dataclasses.dataclass(frozen=True)
class Single(Layout):
    """One game, no stack."""


@dataclasses.dataclass(frozen=True)
class Vmapped(Layout):
    """A stack stepped by ``jax.vmap`` over its tensors ``[B, ...]`` and state."""
    stacked: ClassVar[bool] = True

    def iterate(self, tensors, state, arrays, iterate, step, start):
        return iterate(tensors, state, arrays, jax.vmap(step), jax.vmap(start))


@dataclasses.dataclass(frozen=True)
class Mapped(Layout):
    """A stack stepped member after member (``lax.map``): the single game's program."""
    stacked: ClassVar[bool] = True

    def iterate(self, tensors, state, arrays, iterate, step, start):
        # each member with its own tensors, state and arrays
        return jax.lax.map(lambda x: iterate(*x, step, start), (tensors, state, arrays))


@dataclasses.dataclass(frozen=True)
class Forest(Layout):
    """Different trees side by side (``stack.forest``): stepped as ``[B * I, A, *H]``."""
    own_tensors: ClassVar[bool] = False

    def host(self, lowered):
        forest_tensors, forest_levels = stack_forest(lowered)
        return forest_tensors, Structure(forest_levels, lowered.num_players)

    def iterate(self, tensors, state, arrays, iterate, step, start):
        batched_shape = state.regret.shape
        state = state.map_tables(lambda x: x.reshape((-1,) + x.shape[2:]), state.iteration[0])
        state = iterate(tensors, state, arrays, step, start)
        return state.map_tables(lambda x: x.reshape(batched_shape),
                                jnp.broadcast_to(state.iteration, (batched_shape[0],)))


@dataclasses.dataclass(frozen=True)
class Shared(Layout):
    """One tree shared by every member (``stack.shared_structure``): stepped as
    ``[I, A, B, *H]`` (the members on a trailing axis)."""
    own_tensors: ClassVar[bool] = False

    def host(self, lowered):
        return stack_shared(lowered), lowered.structure

    def iterate(self, tensors, state, arrays, iterate, step, start):
        members = state.regret.shape[0]
        state = state.map_tables(lambda x: jnp.moveaxis(x, 0, 2), state.iteration[0])
        state = iterate(tensors, state, arrays, step, start)
        return state.map_tables(lambda x: jnp.moveaxis(x, 2, 0),
                                jnp.broadcast_to(state.iteration, (members,)))


class Seam(NamedTuple):
    """What :func:`choose_seam` chose."""
    values: ValueKernel      # how the step computes exact values
    layout: Layout           # how it holds a stack
    evaluation: ValueKernel  # how the evaluation computes them on the step's tensors, or
                             # on the node tensors (see :func:`choose_seam`)


def choose_seam(lowered: LoweredGame, estimator: Estimator, *, sharded: bool = False,
                sequence_form: bool = True, backend: str | None = None) -> Seam:
    """The value kernel and the layout of a run of ``estimator`` on ``lowered``: the one
    place they are chosen.

    Args:
      lowered: the game (a stack: its batch).
      estimator: the solver's estimator (``dense``: full width; ``seeded``: it draws).
      sharded: the run is sharded over a mesh (a stack over its members).
      sequence_form: step a dense estimator on the sequence form where the game has
        perfect recall (else the node passes).
      backend: ``jax.default_backend()`` unless given (a test's fake backend).

    How a stack is stepped: on a CPU a small stack steps its members one after another
    (:data:`SHARED_MIN_MEMBERS`), and so does a stack of public trees of any size
    (:func:`jaxcfr.solvers.public_stack.maps_members`: each member per player block, as
    :func:`jaxcfr.solve_public` of a list steps them); else members sharing one tree put
    the batch on a trailing axis (shared gathers); different trees become one forest; a
    sharded stack, one under a sampling estimator (each member samples its own tree), or a
    stack of public trees (:class:`~jaxcfr.lowering.public_stack.PublicStack`: its members
    padded to one shape) off a CPU vmaps. The
    evaluation reads the step's tensors where they carry the value kernel's tables of
    these very tensors (one game, or a stack stepped as such), else the node tensors.
    """
    backend = jax.default_backend() if backend is None else backend
    dense = estimator.dense
    merged = dense and not estimator.seeded
    kind = representation(lowered, sequence_form and dense)
    layout: Layout = Single()
    if lowered.batch_size is not None:
        layout = Vmapped()
        small = lowered.batch_size < SHARED_MIN_MEMBERS and backend == "cpu"
        if not sharded and dense and (small or (kind == "public" and maps_members(backend))):
            layout = Mapped()
        elif not sharded and merged and kind != "public":
            layout = Shared() if stack_shared(lowered) is not None else Forest()
    values = choose_kernel(kind, backend)
    if values.full_width_only and not merged:
        raise ValueError(f"a {values.representation} tree is solved full width: the "
                         f"estimator {estimator.describe()!r} samples (use the exact one, "
                         "sampling=None)")
    evaluation = values if layout.own_tensors else choose_kernel("nodes", backend)
    return Seam(values, layout, evaluation)
