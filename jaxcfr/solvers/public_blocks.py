"""A compiled loop of alternating iterations on a public tree with the tables kept per player.

The state's tables are rows ``[I, A, *b]`` (``d * H + h``: every player's decisions, each
padded to the most hands ``H``). Inside a loop of alternating iterations on one public
tree, unlocked, :func:`iterate` keeps them instead as each player's block
``[D_p, A, H_p, *b]`` (its ``D_p`` decisions, its own ``H_p`` hands:
:func:`jaxcfr.kernels.public.to_blocks`), so that a player's half-step reads and writes
its own block alone: its regrets come by slot from
:func:`jaxcfr.kernels.public.block_regrets`, the rules (:meth:`Solver.fold`) and regret
matching run on the block, and no table goes through the rows' layout (a transpose and a
select over every player's rows per half-step on the row path). The current strategy is
carried by slot, ``[D + 1, A, H, *b]`` (the blocks side by side, a pad decision last),
which is what the passes gather from. The rows come back at the loop's end
(:func:`jaxcfr.kernels.public.from_blocks`): checkpoints, evaluations and profiles see the
rows as before, and every number is the row path's, bit for bit (the same operations on
the same entries, players in seat order; ``tests/test_public_blocks.py``).

Other runs (simultaneous updates, node locking, stacks, sampling) take the row path
(:meth:`Solver.step`); :func:`applies` says which.
"""

from __future__ import annotations

import jax

from jaxcfr.kernels import public as kernels
from jaxcfr.kernels.numerics import normalise
from jaxcfr.solvers.parameters import HyperParams
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["applies", "iterate"]


def applies(solver: Solver, t, structure, lock=None) -> bool:
    """Whether :func:`iterate` runs ``solver`` on a game of tensors ``t`` and
    ``structure``: one public tree's (its player blocks counted, its rows ``D * H + 1``,
    no stack's batch axis), alternating updates, full width, nothing locked."""
    return (isinstance(structure, PublicStructure) and bool(structure.player_decisions)
            and isinstance(t, PublicTensors) and t.legal_mask.ndim == 2
            and t.legal_mask.shape[0] == sum(structure.player_decisions) * max(
                structure.hands) + 1
            and solver.alternating and solver.estimator.dense and lock is None)


def iterate(solver: Solver, t: PublicTensors, s: PublicStructure, state: SolverState,
            hp: HyperParams, steps) -> SolverState:
    """``steps`` (a traced or Python int) iterations of ``solver`` from ``state``
    (``[I, A, *b]`` tables), the tables kept per player inside the loop: the state
    :meth:`Solver.step` would reach, bit for bit."""
    b = kernels.blocks(t, s)
    legal = kernels.to_blocks(t.legal_mask, s, b, False)                 # P x [D_p, A, H_p]
    tables = tuple(zip(*(kernels.to_blocks(x, s, b) for x in state[:-1])))  # P x 4 x block
    current = kernels.strategy_slots(solver.strategy(t, state), s, b)      # [D + 1, A, H, *b]
    predictive = solver.predictive

    def one(_, carry):
        tables, current, done = carry
        it = done + 1
        tf = it.astype(current.dtype)
        weight = solver.average.weight(tf, hp)                               # [*b]
        decay = solver.average.decay(tf, hp) if solver.average.decays else None
        out = list(tables)
        for p in range(s.num_players):                          # alternating, seat order
            lo, hands = kernels.block_offset(s, p), s.hands[p]
            regret, own = kernels.block_regrets(t, s, current, b, p, legal[p])
            mine = current[lo:lo + s.player_decisions[p], :, :hands]  # [D_p, A, H_p, *b]
            contribution = own[:, None] * mine if solver.average.reach_weighted else mine
            out[p] = solver.fold(tables[p], regret, contribution, tf, hp, weight, decay)
            summed = out[p][0] + out[p][3] if predictive else out[p][0]
            matched = normalise(summed, legal[p], axis=1)                # [D_p, A, H_p, *b]
            current = jax.lax.dynamic_update_slice(
                current, matched, (lo,) + (0,) * (current.ndim - 1))
        return tuple(out), current, it

    tables, _, done = jax.lax.fori_loop(0, steps, one, (tables, current, state.iteration))
    return SolverState(*(kernels.from_blocks(tuple(tables[p][k] for p in range(s.num_players)),
                                             x, s, b)
                         for k, x in enumerate(state[:-1])), done)
