"""A subgame with its gadget, as a :class:`jaxcfr.Game` like any other.

:class:`SubgameGame` walks the lowered tree of the full game below the roots of a public
state, under a gadget (:mod:`jaxcfr.subgames.gadgets`) and, for a depth-limited subgame,
down to its frontier (:mod:`jaxcfr.subgames.frontier`). It needs only the lowered full
game, so it works for every game jaxcfr can lower (``.efg`` files too): information-set
keys, action labels, chance probabilities and payoffs are the full game's, so a profile
of the subgame is keyed like the full game's and composes back over the blueprint.

The tree, from the top (``o`` the opponent, ``p`` the re-solving player):

* ``resolve``: chance picks a root (labels: the root's path in the full game); at ``o``'s
  augmented set ``c`` (key ``("jaxcfr.gadget", c)``) ``o`` plays ``"alternative"`` (the
  game ends: ``o`` gets the set's alternative value) or ``"enter"`` (the root's subtree).
* ``maxmargin`` / ``reach``: ``o`` picks a set (key ``("jaxcfr.gadget", "pick")``, actions
  ``("set", c)``), chance picks one of its roots; ``o``'s payoffs below are shifted by
  minus the set's alternative value and ``p``'s by plus it.
* ``unsafe``: chance picks a root with the blueprint's reach; nothing else.
* A frontier history is a leaf worth its continuation values, or, with ``k``
  continuations, a decision of ``o`` (key ``("jaxcfr.frontier", o's key there)``, actions
  ``("continuation", j)``) whose every action ends the game with those values.

Example::

    >>> import jaxcfr
    >>> blueprint = jaxcfr.solve("kuhn_poker", "cfr+", 100).profile
    >>> sub = jaxcfr.subgame("kuhn_poker", blueprint, [0, 1, "pass"], gadget="maxmargin")
    >>> jaxcfr.solve(sub, "cfr+", 200).final["exploitability"] < 0.01
    True
"""

from __future__ import annotations

import dataclasses
from typing import Any, Hashable

import numpy as np

from jaxcfr.game.contract import CHANCE, TERMINAL, GameError
from jaxcfr.game.protocol import Game, same_action
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.subgames.gadgets import Gadget
from jaxcfr.tensors import CHANCE_NODE, DECISION, TERMINAL_NODE

__all__ = ["SubgameGame", "GADGET", "FRONTIER", "is_gadget_key", "ENTER", "ALTERNATIVE"]

#: First element of the gadget's information-set keys.
GADGET = "jaxcfr.gadget"
#: First element of a multi-valued frontier's information-set keys.
FRONTIER = "jaxcfr.frontier"
#: The Resolve gadget's actions.
ALTERNATIVE, ENTER = "alternative", "enter"

_ROOT, _PICK, _CHOICE, _INSIDE, _FRONTIER, _END = range(6)


def is_gadget_key(key: Any) -> bool:
    """Whether an information-set key is one of the gadget's or the frontier's."""
    return isinstance(key, tuple) and bool(key) and key[0] in (GADGET, FRONTIER)


@dataclasses.dataclass(frozen=True, eq=False)
class _Spec:
    """What every state of one subgame game shares (never changed)."""
    index: TreeIndex
    gadget: Gadget
    depth_limit: int | None
    frontier: dict            # node -> [P, k] continuation values
    frontier_key: dict        # node -> o's key (k > 1)
    k: int
    chooser: int | None       # who picks a continuation (k > 1)
    name: str
    root_labels: tuple        # [R] the roots' paths
    set_roots: tuple          # [K] (root indices of each set)
    size: int                 # nodes of the tree


class SubgameGame(Game):
    """The subgame of a public state with its gadget (module docstring); build it with
    :func:`jaxcfr.subgame`.

    Attributes (of the root state): ``gadget`` (:class:`~jaxcfr.subgames.gadgets.Gadget`),
    ``roots`` (``[R]`` node numbers of the full game), ``player`` (the re-solving player;
    ``None`` for unsafe), ``opponent``, ``depth_limit``, ``name``.
    """

    __slots__ = ("_s", "_stage", "_node", "_root", "_set", "_depth", "_returns")

    def __init__(self, index: TreeIndex, gadget: Gadget, *, depth_limit: int | None = None,
                 frontier: dict | None = None, frontier_key: dict | None = None,
                 name: str = ""):
        frontier = {} if frontier is None else frontier
        k = int(next(iter(frontier.values())).shape[-1]) if frontier else 1
        roots = gadget.roots
        labels = tuple(index.path(int(r)) for r in roots)
        sets = tuple(tuple(int(i) for i in np.flatnonzero(gadget.component == c))
                     for c in range(gadget.num_sets))
        chooser = gadget.opponent
        if k > 1 and chooser is None:
            chooser = int(index.player[int(roots[0])])
            chooser = 1 - chooser if index.lowered.num_players == 2 else chooser
        size = _tree_size(index, gadget, depth_limit, len(frontier), k)
        self._s = _Spec(index, gadget, depth_limit, frontier, frontier_key or {}, k, chooser,
                        name or "subgame", labels, sets, size)
        self._stage = _ROOT
        self._node = -1
        self._root = -1
        self._set = -1
        self._depth = 0
        self._returns = None

    # -- what the root state tells -----------------------------------------------------
    @property
    def num_players(self) -> int:
        return self._s.index.lowered.num_players

    @property
    def gadget(self) -> Gadget:
        return self._s.gadget

    @property
    def roots(self) -> np.ndarray:
        return self._s.gadget.roots

    @property
    def player(self) -> int | None:
        return self._s.gadget.player

    @property
    def opponent(self) -> int | None:
        return self._s.gadget.opponent

    @property
    def depth_limit(self) -> int | None:
        return self._s.depth_limit

    @property
    def name(self) -> str:
        return self._s.name

    @property
    def full_node(self) -> int:
        """The node of the full game this state is at (-1 in the gadget above the roots)."""
        return self._node

    def __repr__(self) -> str:
        return f"SubgameGame({self._s.name}, stage={self._stage}, node={self._node})"

    def clone(self) -> "SubgameGame":
        new = _new(SubgameGame)
        new._s = self._s
        new._stage = self._stage
        new._node = self._node
        new._root = self._root
        new._set = self._set
        new._depth = self._depth
        new._returns = self._returns
        return new

    def tree_size(self):
        return self._s.size if self._stage == _ROOT else None

    # -- node type ---------------------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._returns is not None

    def is_chance(self) -> bool:
        if self._returns is not None:
            return False
        stage = self._stage
        if stage == _ROOT:
            return not self._s.gadget.kind.opponent_picks
        if stage == _PICK:
            return True
        return stage == _INSIDE and self._s.index.kind[self._node] == CHANCE_NODE

    def player_to_act(self) -> int:
        if self._returns is not None:
            return TERMINAL
        if self.is_chance():
            return CHANCE
        stage = self._stage
        if stage in (_ROOT, _CHOICE):
            return self._s.gadget.opponent
        if stage == _FRONTIER:
            return self._s.chooser
        return int(self._s.index.player[self._node])

    # -- moves -------------------------------------------------------------------------
    def chance_outcomes(self):
        s, stage = self._s, self._stage
        if stage == _ROOT and not s.gadget.kind.opponent_picks:
            return [(s.root_labels[i], float(p)) for i, p in enumerate(s.gadget.probability)]
        if stage == _PICK:
            return [(s.root_labels[i], float(s.gadget.probability[i]))
                    for i in s.set_roots[self._set]]
        if stage == _INSIDE and s.index.kind[self._node] == CHANCE_NODE:
            labels, prob = s.index.lowered.node_action, s.index.lowered.tensors.chance_prob
            return [(labels[c], float(prob[c])) for c in s.index.children(self._node)]
        return None

    def legal_actions(self) -> list:
        if self._returns is not None or self.is_chance():
            return []
        s, stage = self._s, self._stage
        if stage == _ROOT:
            return [("set", c) for c in range(s.gadget.num_sets)]
        if stage == _CHOICE:
            return [ALTERNATIVE, ENTER]
        if stage == _FRONTIER:
            return [("continuation", j) for j in range(s.k)]
        return list(s.index.lowered.infoset_actions[int(s.index.row[self._node])])

    def step(self, action) -> None:
        if self._returns is not None:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        s, stage = self._s, self._stage
        if stage == _ROOT or stage == _PICK:
            self._step_root(action)
        elif stage == _CHOICE:
            if action == ALTERNATIVE:
                self._end_with_alternative()
            elif action == ENTER:
                self._enter(self._root)
            else:
                raise GameError(f"illegal action {action!r}; legal: {[ALTERNATIVE, ENTER]}",
                                rule="illegal-action")
        elif stage == _FRONTIER:
            j = action[1] if isinstance(action, tuple) and len(action) == 2 else None
            if action != ("continuation", j) or not isinstance(j, int) or not 0 <= j < s.k:
                raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                                rule="illegal-action")
            self._end(s.frontier[self._node][:, j])
        else:
            self._step_inside(action)

    def _step_root(self, action) -> None:
        s, g = self._s, self._s.gadget
        if self._stage == _ROOT and g.kind.opponent_picks:
            c = action[1] if isinstance(action, tuple) and len(action) == 2 else None
            if action != ("set", c) or not isinstance(c, int) or not 0 <= c < g.num_sets:
                raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                                rule="illegal-action")
            self._stage, self._set = _PICK, c
            return
        choices = range(len(s.root_labels)) if self._stage == _ROOT else s.set_roots[self._set]
        for i in choices:
            if s.root_labels[i] == action:
                break
        else:
            raise GameError(f"{action!r} is not a root of this subgame", rule="illegal-action")
        self._root, self._set = i, int(g.component[i])
        if g.kind.offers_alternative:
            self._stage = _CHOICE
        else:
            self._enter(i)

    def _enter(self, i: int) -> None:
        self._stage = _INSIDE
        self._root = i
        self._at(int(self._s.gadget.roots[i]), 0)

    def _step_inside(self, action) -> None:
        index = self._s.index
        labels = index.lowered.node_action
        node = self._node
        for child in index.children(node):
            label = labels[child]
            if same_action(label, action):
                self._at(child, self._depth + 1)
                return
        raise GameError(f"illegal action {action!r}; legal: "
                        f"{[labels[c] for c in index.children(node)]}", rule="illegal-action")

    def _at(self, node: int, depth: int) -> None:
        s = self._s
        self._node, self._depth = node, depth
        kind = s.index.kind[node]
        if kind == TERMINAL_NODE:
            self._end(s.index.lowered.tensors.payoff[node])
        elif s.depth_limit is not None and depth == s.depth_limit:
            if s.k == 1:
                self._end(s.frontier[node][:, 0])
            else:
                self._stage = _FRONTIER

    def _end(self, values) -> None:
        g = self._s.gadget
        self._returns = tuple(g.kind.payoffs(g, self._set, [float(v) for v in values]))

    def _end_with_alternative(self) -> None:
        g = self._s.gadget
        out = [0.0] * self.num_players
        alt = float(g.alternative[self._set])
        out[g.opponent] = alt
        out[g.player] = g.constant_sum - alt
        self._returns = tuple(out)

    def terminal_returns(self):
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node",
                            rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------------------
    def infoset_key(self, player: int) -> Hashable:
        s, stage = self._s, self._stage
        if stage == _ROOT:
            return (GADGET, "pick")
        if stage == _CHOICE:
            return (GADGET, self._set)
        if stage == _FRONTIER:
            return (FRONTIER, s.frontier_key[self._node])
        if stage == _INSIDE and s.index.kind[self._node] == DECISION:
            owner, key = s.index.lowered.infoset_keys[int(s.index.row[self._node])]
            if owner == player:
                return key
        return ("jaxcfr.not-acting", stage, self._node)


def _tree_size(index: TreeIndex, gadget: Gadget, depth_limit, frontier: int, k: int) -> int:
    roots = gadget.roots
    if depth_limit is None:
        inside = int(index.size[roots].sum())
    else:
        nodes = index.nodes_below(roots)                              # pre-order
        below = index.depth[nodes] - index.depth[roots[index.root_of(roots, nodes)]]
        inside = int((below <= depth_limit).sum())
    return 1 + inside + gadget.kind.top_nodes(gadget) + (frontier * k if k > 1 else 0)


_new = object.__new__
