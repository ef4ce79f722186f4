"""A stack of public trees' chunk compiled once and called round after round: the stack's
device tensors, the solver's zero state and hyper-parameters, ``stack_chunk`` of ``count``
iterations compiled for them, and one call timed (what ``bench_public_stack`` and
``bench_merged_stack`` time)."""

from __future__ import annotations

import dataclasses
import time

import jax

from jaxcfr.solvers.public_stack import stack_chunk, stack_device_tensors, stack_init

from benchkit import timing

__all__ = ["CompiledStack", "compile_stack"]


@dataclasses.dataclass(frozen=True)
class CompiledStack:
    """A stack's compiled chunk and what it is called with."""

    tensors: object          # the stack's PublicTensors on the device ([B, ...] a field)
    zero: object             # the solver's state before the first iteration ([B, I, A] tables)
    hp: object               # the solver's hyper-parameters
    compiled: object         # stack_chunk of the count, compiled: (tensors, zero, hp) -> state
    compile_s: float         # wall seconds to lower and compile it

    def run(self):
        """One call from the zero state: ``(state after it, wall seconds, CPU seconds of
        this process)``, the state's regrets ready."""
        states = []

        def call():
            states.append(self.compiled(self.tensors, self.zero, self.hp))
            jax.block_until_ready(states[-1].regret)
        wall, cpu = timing.clocks(call)
        return states[0], wall, cpu


def compile_stack(stack, solver, count: int, dtype, mapped: bool | None = None
                  ) -> CompiledStack:
    """``solver``'s chunk of ``count`` iterations on ``stack`` (a ``PublicStack``) in
    ``dtype``, compiled (``mapped``: as ``stack_chunk``'s; ``None``, the backend's layout).
    Call it inside ``jaxcfr._util.precision.scope(dtype)``, and run it there."""
    tensors = stack_device_tensors(stack, dtype)
    hp = solver.hyperparams(dtype)
    zero = stack_init(solver, stack, (), dtype)
    clock = time.perf_counter()
    compiled = stack_chunk.lower(tensors, zero, hp, solver=solver, structure=stack.structure,
                                 count=count, mapped=mapped).compile()
    return CompiledStack(tensors, zero, hp, compiled, time.perf_counter() - clock)
