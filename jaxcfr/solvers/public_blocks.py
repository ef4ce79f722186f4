"""A compiled loop of alternating iterations on a public tree with the tables kept per player.

The state's tables are rows ``[I, A, *b]`` (``decision_row[d] + h``: every player's
decisions, each with its player's ``H_p`` rows). Inside a loop of alternating iterations on
one public tree, unlocked, :func:`iterate` keeps them instead as each player's block
``[D_p, A, H_p, *b]`` (its ``D_p`` decisions, its own ``H_p`` hands:
:func:`jaxcfr.kernels.public.to_blocks`), split into groups ``[D_pk, k, H_p, *b]``: where
few actions are legal (:func:`compacts`) the player's decisions of ``k`` legal actions
with those ``k`` columns alone, else one group of all ``A`` columns
(:func:`jaxcfr.kernels.public.slots`, ``to_slots``). A player's half-step reads and writes
its own groups alone: its regrets come by slot from
:func:`jaxcfr.kernels.public.slot_regrets`, the rules (:meth:`Solver.fold`) and regret
matching run on each group, and no table goes through the rows' layout (a transpose and a
select over every player's rows per half-step on the row path) or its padded columns. The
current strategy is carried by slot, group by group (``[D_pk * k, H, *b]`` each, padding
hands included), and put together at each half-step as the table ``[S + 1, H, *b]`` the
passes gather from (the groups' slots side by side, a pad of ones last). The
rows come back at the loop's end (:func:`jaxcfr.kernels.public.into_rows`, each
group scattered into the state's rows): checkpoints, evaluations and profiles see the
rows as before, and every number is the row path's (the same operations on the same
entries, players in seat order; bit for bit where XLA fuses the programs alike, else to a
few ulps: ``tests/test_public_blocks.py``).

Other runs (simultaneous updates, node locking, stacks, sampling) take the row path
(:meth:`Solver.step`); :func:`applies` says which.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxcfr.kernels import public as kernels
from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.solvers.parameters import HyperParams
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.tensors import PublicStructure, PublicTensors

__all__ = ["applies", "compacts", "iterate", "COMPACT_SHARE"]


def applies(solver: Solver, t, structure, lock=None) -> bool:
    """Whether :func:`iterate` runs ``solver`` on a game of tensors ``t`` and
    ``structure``: one public tree's (its player blocks counted, its rows
    ``sum_p D_p H_p + 1``, no stack's batch axis), alternating updates, full width, nothing
    locked."""
    return (isinstance(structure, PublicStructure) and bool(structure.player_decisions)
            and isinstance(t, PublicTensors) and t.decision_legal.ndim == 2
            and t.row_shape[0] == sum(d * h for d, h in zip(structure.player_decisions,
                                                            structure.hands)) + 1
            and solver.alternating and solver.estimator.dense and lock is None)


#: The blocks keep only the legal columns (``kernels.public.slot_groups`` compact) when the
#: legal (decision, action) pairs are at most this share of the decisions' ``A`` columns.
#: Measured (docs/public_trees.md, "legal columns"): liar's dice (14-17% legal) 4.3 to 5.7x
#: less CPU time per iteration than all columns, hold'em rivers and turn (75-83% legal)
#: the same within noise; a game with nearly every action legal gains nothing, so keeps
#: one group per player.
COMPACT_SHARE = 0.9


def compacts(t, s) -> bool:
    """Whether :func:`iterate` keeps the legal columns alone on a game of tensors ``t``
    and structure ``s`` (static: from the structure's legal groups)."""
    if not s.legal_groups:
        return False
    legal = sum(k * n for g in s.legal_groups for k, n in g)
    return legal <= COMPACT_SHARE * t.row_shape[1] * sum(s.player_decisions)


def iterate(solver: Solver, t: PublicTensors, s: PublicStructure, state: SolverState,
            hp: HyperParams, steps, compact: bool | None = None, padding: bool = False
            ) -> SolverState:
    """``steps`` (a traced or Python int) iterations of ``solver`` from ``state``
    (``[I, A, *b]`` tables), the tables kept per player inside the loop: the state
    :meth:`Solver.step` would reach, bit for bit. ``compact``: keep the legal columns
    alone (``None``: :func:`compacts` decides). ``padding``: the blocks may hold padding
    rows (a stack member's hands past its own count, below the stack's ``H_p``): their
    averaging contributions are kept at 0, as the row path never updates them (their
    regrets are 0 already: a padding hand has no value)."""
    solver.check_state(state)
    compact = compacts(t, s) if compact is None else compact
    b = kernels.blocks(t, s)
    sl = kernels.slots(t, s, b, compact)
    P = s.num_players
    legal = tuple(kernels.to_slots(x, sl, p)                        # P x G_p x [D_pk, k, H_p]
                  for p, x in enumerate(kernels.to_blocks(t.legal_mask, s, b, False)))
    owned = (tuple(kernels.to_slots(x, sl, p) for p, x in enumerate(kernels.to_blocks(
        jnp.broadcast_to((t.infoset_player >= 0)[:, None], t.legal_mask.shape), s, b,
        False))) if padding else None)                          # P x G_p x [D_pk, k, H_p]
    whole = [None if x is None else kernels.to_blocks(x, s, b)      # 4 x P x [D_p, A, H_p, *b]
             for x in state[:-1]]                                   # (None: not kept)

    def groups(x, p):
        return (None,) * len(sl.groups[p]) if x is None else kernels.to_slots(x[p], sl, p)
    tables = tuple(tuple(zip(*(groups(x, p) for x in whole)))
                   for p in range(P))                                   # P x G_p x 4 x group
    current = kernels.slot_strategy(t, solver.strategy(t, state), sl)      # [S + 1, H, *b]
    # the current strategy is carried as each group's slots [D_pk * k, H, *b] (what its
    # half-step writes: a new buffer, not an update in place of one [S + 1, H] table, which
    # XLA copied three times per iteration around the loop's carry), the padding hands'
    # columns (past the player's own H_p) kept from the start; the table the passes gather
    # from is put together from the pieces at each half-step (kernels.slot_regrets)
    live, lo = [], 0
    for p in range(P):
        mine = []
        for k, n in sl.groups[p]:
            mine.append(current[lo:lo + n * k])                          # [D_pk * k, H, *b]
            lo += n * k
        live.append(tuple(mine))
    live, pad = tuple(live), current[lo:]                                 # pad: [1, H, *b]
    predictive = solver.predictive

    def assemble(live):
        """The current strategy by slot ``[S + 1, H, *b]`` from the groups' slots."""
        return jnp.concatenate([x for p in range(P) for x in live[p]] + [pad])

    def one(_, carry):
        tables, live, done = carry
        it = done + 1
        tf = it.astype(pad.dtype)
        weight = solver.average.weight(tf, hp)                               # [*b]
        decay = solver.average.decay(tf, hp) if solver.average.decays else None
        out, live = list(tables), list(live)
        for p in range(P):                                      # alternating, seat order
            parts, hands = [], s.hands[p]
            for g, ((k, n), old, (regret, own)) in enumerate(zip(
                    sl.groups[p], tables[p],
                    kernels.slot_regrets(t, s, assemble(live), sl, p, legal[p]))):
                mine = live[p][g][:, :hands].reshape(
                    (n, k, hands) + live[p][g].shape[2:])                   # [D_pk, k, H_p]
                contribution = own[:, None] * mine if solver.average.reach_weighted else mine
                if padding:
                    contribution = jnp.where(trail(owned[p][g], contribution.ndim),
                                             contribution, 0)
                parts.append(solver.fold(old, regret, contribution, tf, hp, weight, decay))
            out[p] = tuple(parts)
            matched = []
            for (k, n), new, mask in zip(sl.groups[p], parts, legal[p]):
                summed = new[0] + new[3] if predictive else new[0]
                x = normalise(summed, mask, axis=1)                          # [D_pk, k, H_p]
                x = x.reshape((n * k,) + x.shape[2:])
                before = live[p][len(matched)]                           # [D_pk * k, H, *b]
                matched.append(x if hands == before.shape[1] else
                               jnp.concatenate([x, before[:, hands:]], axis=1))
            live[p] = tuple(matched)
        return tuple(out), tuple(live), it

    tables, _, done = jax.lax.fori_loop(0, steps, one, (tables, live, state.iteration))

    def back(i, x):                         # the groups written into the state's rows
        for p in range(P):
            x = kernels.into_rows(x, tuple(g[i] for g in tables[p]), s, b, sl, p)
        return x
    return SolverState(*(None if x is None else back(i, x) for i, x in enumerate(state[:-1])),
                       done)
