"""Composing re-solved subgames back over the blueprint into a profile of the full game.

The re-solved strategies replace the blueprint's at the subgame's information sets: for a
safe gadget only the re-solving player's rows (its opponent's play in the gadget game is
a best response to the gadget, not a strategy to keep), for ``unsafe`` every player's.
The gadget's own decisions (``enter`` / ``alternative``, the Maxmargin pick, a frontier's
continuation choice) have keys the full game does not have and are left out; rows below a
depth limit's frontier keep the blueprint. Every other row keeps the blueprint.

Subgames of one composition must not overlap: the re-solve of each is safe against the
blueprint, not against another re-solve (re-solve nested subgames one after another).

Example::

    >>> table = compose(full, blueprint_table, [(member, member_table, (1,))])
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from jaxcfr.game.contract import format_history
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.subgames.closure import PublicState
from jaxcfr.tensors import LoweredGame

__all__ = ["compose", "check_disjoint"]


def compose(full: LoweredGame, blueprint: np.ndarray,
            pieces: Sequence[tuple[LoweredGame, np.ndarray, Sequence[int]]]) -> np.ndarray:
    """The blueprint's ``[I, A]`` table of ``full`` with the pieces' rows put in.

    Args:
      pieces: ``(subgame lowered, its [I_s, A_s] strategy table, players whose rows to
        take)`` per re-solved subgame game.
    Returns:
      A new ``[I, A]`` table; a row that two pieces both give is an error (``ValueError``).
    """
    table = np.array(blueprint, dtype=np.float64, copy=True)
    given: dict[int, int] = {}
    for p, (member, strategy, players) in enumerate(pieces):
        strategy = np.asarray(strategy)
        players = set(players)
        for row, (player, key) in enumerate(member.infoset_keys):
            if player not in players:
                continue
            try:
                target = full.row_of(player, key)
            except KeyError:
                continue                          # the gadget's own decisions
            if target in given and given[target] != p:
                raise ValueError(f"player {player}'s information set {key!r} is re-solved by "
                                 "two subgames: they overlap")
            given[target] = p
            actions = member.infoset_actions[row]
            if tuple(actions) != tuple(full.infoset_actions[target]):
                raise ValueError(f"player {player}'s information set {key!r} has actions "
                                 f"{list(actions)} in the subgame but "
                                 f"{list(full.infoset_actions[target])} in the game")
            n = len(actions)
            table[target] = 0.0
            table[target, :n] = strategy[row, :n]
    return table


def check_disjoint(index: TreeIndex, states: Sequence[PublicState]) -> None:
    """Refuse subgames that overlap (one public state inside another's subtrees).

    Raises:
      ValueError: naming both paths.
    """
    if len(states) < 2:
        return
    roots = np.concatenate([s.roots for s in states])
    owner = np.concatenate([np.full(len(s.roots), i) for i, s in enumerate(states)])
    order = np.argsort(index.pre[roots], kind="stable")
    roots, owner = roots[order], owner[order]
    ends = index.pre[roots] + index.size[roots]
    reach = np.maximum.accumulate(ends)
    clash = np.flatnonzero(index.pre[roots[1:]] < reach[:-1])     # starts inside an earlier one
    if clash.size:
        k = int(clash[0]) + 1
        j = int(owner[int(np.flatnonzero(ends[:k] > index.pre[roots[k]])[0])])
        i = int(owner[k])
        raise ValueError(f"the subgames at {format_history(states[j].path)} and "
                         f"{format_history(states[i].path)} overlap (one lies inside the "
                         "other): re-solve nested subgames one after another, each against "
                         "the profile the previous one composed")
