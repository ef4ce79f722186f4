"""Naming many subgames at once: every public state after a chance event or at a depth,
every subgame after an action an abstraction dropped.

Each function returns one path per public state (paths into one public state share one
subgame); :func:`select` is what the command line and a run config's ``[resolve]`` use.

Example::

    >>> paths_after_chance("leduc_poker", 3)[:2]       # Leduc's second round: 30 states
    [(0, 1, 'call', 'call', 2), (0, 1, 'call', 'call', 3)]
"""

from __future__ import annotations

import os

import numpy as np

from jaxcfr._util import arguments
from jaxcfr.game.abstraction import Abstracted
from jaxcfr.game.registry import load_game
from jaxcfr.lowering.lower import as_lowered, lower
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.profiles.lifting import as_abstraction
from jaxcfr.subgames.closure import PublicState, chance_counts, decision_depths, public_state
from jaxcfr.subgames.closure import after_chance as after_chance_states
from jaxcfr.subgames.closure import at_depth as at_depth_states
from jaxcfr.subgames.context import Context
from jaxcfr.tensors import DECISION, LoweredGame

__all__ = ["select", "paths_at_depth", "paths_after_chance", "off_abstraction"]


def select(context: Context, *, at=None, after_chance: int | None = None,
           at_depth: int | None = None, off_menu: bool = False,
           by_text: bool = False) -> list[PublicState]:
    """The public states a command line or a config names: paths (``at``), every state
    after the ``after_chance``-th chance event or at depth ``at_depth``, or every subgame
    after an action the context's abstraction dropped (``off_menu``); exactly one."""
    given = [x for x in (at, after_chance, at_depth) if x is not None] + ([1] if off_menu else [])
    if len(given) != 1:
        raise ValueError("name the subgames one way: paths (at), after_chance, at_depth or "
                         "off_abstraction")
    if at is not None:
        return context.states(list(at) if not isinstance(at, PublicState) else at,
                              by_text=by_text)
    if after_chance is not None:
        count = arguments.positive_int("after_chance", after_chance)
        states = after_chance_states(context.index, count)
        if not states:
            counts = chance_counts(context.index)
            raise ValueError(
                f"no public state starts right after chance event {count} of "
                f"{context.name}: " + (f"public states start after chance events "
                                       f"{_listed(counts)}" if counts else
                                       "no decision follows a chance event in it"))
        return states
    if at_depth is not None:
        depth = arguments.nonnegative_int("at_depth", at_depth)
        states = at_depth_states(context.index, depth)
        if not states:
            raise ValueError(f"there is no public state at depth {depth} of {context.name}: "
                             f"its decisions lie at depths "
                             f"{_listed(decision_depths(context.index))}")
        return states
    if context.nested is None:
        raise ValueError("the subgames after dropped actions need the blueprint's abstraction "
                         "(abstraction=)")
    return context.states(off_abstraction(context.full, None, abstract=context.nested.lowered))



def _listed(values: list[int]) -> str:
    """``1, 2, 3`` (runs of more than three as ``2..40``)."""
    if len(values) > 3 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}"
    return ", ".join(map(str, values))


def paths_at_depth(game, depth: int) -> list[tuple]:
    """One path per public state whose decisions lie ``depth`` moves from the root."""
    return [s.path for s in at_depth_states(TreeIndex(as_lowered(game)), int(depth))]


def paths_after_chance(game, count: int) -> list[tuple]:
    """One path per public state that starts right after the ``count``-th chance event
    (Leduc's second round: ``count=3``)."""
    return [s.path for s in after_chance_states(TreeIndex(as_lowered(game)), int(count))]


def off_abstraction(game, abstraction, *, abstract: LoweredGame | None = None) -> list[tuple]:
    """One path per public state that follows an action ``abstraction`` dropped at a
    history it keeps: the (maximal) subgames nested re-solving answers.

    Args:
      game: the full game (a game string, a Game or its LoweredGame).
      abstraction: an abstraction or its string (or ``abstract``: the abstracted game,
        lowered, to avoid lowering it again).
    """
    full = as_lowered(game)
    if abstract is None:
        root = load_game(game) if isinstance(game, (str, os.PathLike)) else game
        if isinstance(root, LoweredGame):
            raise ValueError("off_abstraction() lowers the abstracted game: give the game "
                             "itself, or abstract= (the abstracted game, lowered)")
        abstract = lower(Abstracted(root, as_abstraction(abstraction)), workers=1)
    index = TreeIndex(full)
    t = full.tensors
    kept = np.zeros(t.legal_mask.shape, dtype=bool)
    for row, (player, key) in enumerate(full.infoset_keys):
        try:
            small = abstract.infoset_actions[abstract.row_of(player, key)]
        except KeyError:
            continue
        labels = full.infoset_actions[row]
        kept[row, :len(labels)] = [a in small for a in labels]
    on = np.zeros(full.num_nodes, dtype=bool)
    on[0] = True
    levels = full.level_start
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        par = index.parent[lo:hi]
        decision = index.kind[par] == DECISION
        slot = np.minimum(index.slot[lo:hi], kept.shape[1] - 1)     # chance slots: unused
        edge = np.where(decision, kept[index.row[par], slot], True)
        on[lo:hi] = on[par] & edge
    par = np.maximum(index.parent, 0)
    seeds = np.flatnonzero(~on & on[par] & (index.parent >= 0) & (index.kind == DECISION))
    out, covered = [], np.zeros(full.num_nodes, dtype=bool)
    for s in seeds[np.argsort(index.pre[seeds], kind="stable")]:
        if covered[s]:
            continue
        state = public_state(index, int(s))
        covered[index.nodes_below(state.roots)] = True
        out.append(state.path)
    return out
