"""The context of one re-solve: the full game lowered, a blueprint, its exact values.

A :class:`Context` is built once per game and blueprint and shared by every subgame cut
from them: the lowered full game and its :class:`~jaxcfr.lowering.tree_index.TreeIndex`, the
blueprint's ``[I, A]`` table (a profile of an abstraction is lifted by action label), its
counterfactual best-response values (:func:`jaxcfr.solvers.analytics.counterfactual_values`,
exact, on the device, computed on first use) and, for nested subgames, the abstracted game
with the abstract blueprint's values (:class:`~jaxcfr.subgames.gadgets.Nested`). It turns
paths into public states and builds the :class:`~jaxcfr.subgames.game.SubgameGame` of a
gadget (with its frontier when depth-limited).

Example::

    >>> context = Context("leduc_poker", blueprint)
    >>> state = context.states([0, 1, "call", "call", 2])[0]
    >>> from jaxcfr.subgames.gadgets import Resolve
    >>> game = context.build(state, context.gadget(state, Resolve(), 0), None, 1)
"""

from __future__ import annotations

import os

import numpy as np

from jaxcfr._util import arguments
from jaxcfr.game.abstraction import Abstracted
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import load_game
from jaxcfr.lowering.lower import as_lowered, lower
from jaxcfr.profiles.lifting import as_abstraction
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.analytics import counterfactual_values
from jaxcfr.subgames import frontier as _frontier
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.subgames.closure import PublicState, public_state
from jaxcfr.subgames.gadgets import Gadget, GadgetKind, Nested, build_gadget
from jaxcfr.subgames.game import SubgameGame
from jaxcfr.tensors import LoweredGame

__all__ = ["Context", "blueprint_table", "depth_limit_of", "single"]


class Context:
    """A full game, lowered, with a blueprint and its counterfactual values (built once,
    shared by every subgame of one call).

    Args:
      game: a game string, a Game or a LoweredGame (the full game).
      blueprint: a :class:`jaxcfr.Profile` (of the full game or of an abstraction of it:
        it is lifted by action label) or a ``[I, A]`` strategy table of the lowered game.
      abstraction: the abstraction the blueprint was trained on (an abstraction, its
        string, or the abstracted game lowered): nested subgames after its dropped actions
        take their alternatives from it.
      root: the game's root state when ``game`` is its LoweredGame (optional: for a
        declared ``public_key()``, multi-valued frontiers and lowering the abstraction).
    """

    def __init__(self, game, blueprint, *, abstraction=None, root=None):
        self.root = root
        if isinstance(game, (str, os.PathLike)):
            self.root = load_game(os.fspath(game))
            self.full = lower(self.root, name=os.fspath(game))
        elif isinstance(game, LoweredGame):
            self.full = game
        else:
            self.root = game
            self.full = as_lowered(game)
        if self.full.batch_size is not None:
            raise ValueError("subgames are cut from a single game, not a stack")
        self.index = TreeIndex(self.full)
        self.profile = blueprint if isinstance(blueprint, Profile) else None
        self.table = blueprint_table(self.full, blueprint)
        self._values = None
        self.nested = None
        if abstraction is not None:
            small = abstraction if isinstance(abstraction, LoweredGame) else None
            if small is None:
                if self.root is None:
                    raise ValueError("nested re-solving lowers the abstracted game: give the "
                                     "game itself (not only its lowered form), or the "
                                     "abstracted game lowered as abstraction=")
                small = lower(Abstracted(self.root, as_abstraction(abstraction)), workers=1)
            abstract_table = blueprint_table(small, blueprint)
            self.nested = Nested(small, counterfactual_values(small, abstract_table))

    @property
    def values(self):
        """The blueprint's counterfactual values (computed on first use, on the device)."""
        if self._values is None:
            self._values = counterfactual_values(self.full, self.table)
        return self._values

    @property
    def name(self) -> str:
        return self.full.name or "game"

    def states(self, at, *, by_text: bool = False) -> list[PublicState]:
        """The distinct public states of ``at`` (one path, a list of paths, node numbers or
        :class:`PublicState` objects); ``by_text``: labels compared by ``str()``."""
        out, seen = [], set()
        for item in _paths(self.index, at):
            state = item if isinstance(item, PublicState) else public_state(
                self.index, item, game=self.root, by_text=by_text)
            if state.key not in seen:
                seen.add(state.key)
                out.append(state)
        return out

    def gadget(self, state: PublicState, kind: GadgetKind, player: int | None
               ) -> Gadget | None:
        return build_gadget(kind, self.index, state, self.values, player, nested=self.nested,
                            path=state.path)

    def frontier(self, roots: np.ndarray, depth_limit: int, continuations, chooser: int
                 ) -> tuple[dict, dict]:
        """``(node -> [P, k] values, node -> chooser's key)`` of the frontier below ``roots``."""
        nodes = _frontier.frontier_nodes(self.index, roots, depth_limit)
        tables = _continuations(self.full, self.table, chooser, continuations)
        values = _frontier.continuation_values(self.full, tables, nodes)
        keys = {}
        if len(tables) > 1:
            keys = dict(zip(nodes.tolist(), _frontier.frontier_keys(self.index, nodes, chooser,
                                                                    self.root)))
        return dict(zip(nodes.tolist(), values)), keys

    def build(self, state: PublicState, gadget: Gadget, depth_limit, continuations
              ) -> SubgameGame:
        frontier = keys = None
        if depth_limit is not None:
            chooser = gadget.opponent
            if chooser is None:
                chooser = 1 - int(self.index.player[state.node]) \
                    if self.full.num_players == 2 else int(self.index.player[state.node])
            frontier, keys = self.frontier(gadget.roots, depth_limit, continuations, chooser)
        who = "every player" if gadget.player is None else f"player {gadget.player}"
        name = (f"subgame({self.name} @ {','.join(map(str, state.path))}; {gadget.kind.name} for "
                f"{who}" + (f"; depth {depth_limit}" if depth_limit is not None else "") + ")")
        return SubgameGame(self.index, gadget, depth_limit=depth_limit, frontier=frontier,
                           frontier_key=keys, name=name)


def blueprint_table(lowered: LoweredGame, blueprint) -> np.ndarray:
    if isinstance(blueprint, Profile):
        table, counts = blueprint.table(lowered)
        if len(blueprint) and counts["rows"] and not counts["found"]:
            raise ValueError(f"the blueprint has none of the {counts['rows']} information sets "
                             f"of {lowered.name or 'the game'}: it is a profile of another game")
        return table
    table = np.asarray(blueprint, dtype=np.float64)
    if table.shape != lowered.tensors.legal_mask.shape:
        raise ValueError(f"blueprint table of shape {table.shape} does not fit the game's "
                         f"[I, A] = {lowered.tensors.legal_mask.shape}")
    return table


def _continuations(full: LoweredGame, table: np.ndarray, chooser: int, continuations):
    if isinstance(continuations, (int, np.integer)) and not isinstance(continuations, bool):
        k = arguments.positive_int("continuations", int(continuations))
        return _frontier.biased(full, table, chooser, k)
    out = [table]
    for c in continuations:
        t = blueprint_table(full, c)
        mine = np.asarray(full.tensors.infoset_player) == chooser
        out.append(np.where(mine[:, None], t, table))
    return out


def depth_limit_of(depth_limit):
    if depth_limit is None:
        return None
    return arguments.positive_int("depth_limit", depth_limit)


def single(at):
    """One path (or node, or public state) as a list of one item for :meth:`Context.states`."""
    return at if isinstance(at, (PublicState, int, np.integer)) else [at]


def _paths(index: TreeIndex, at) -> list:
    """``at`` as a list of items: one path, or a list of paths / nodes / public states."""
    if isinstance(at, (PublicState, int, np.integer)):
        return [at]
    if isinstance(at, str):
        raise ValueError(f"a path is a list of actions, not the string {at!r}")
    items = list(at)
    many = items and all(isinstance(x, (list, tuple, PublicState)) for x in items)
    if many and not all(isinstance(x, list) or isinstance(x, PublicState) for x in items):
        try:                                  # tuples: a path of tuple labels, or paths
            index.decision_at(tuple(items))
            return [tuple(items)]
        except GameError:
            pass
    return items if many else [items]
