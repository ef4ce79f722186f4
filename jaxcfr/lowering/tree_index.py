"""The host index of one lowered game's tree, for walking it and cutting subtrees.

:class:`TreeIndex` holds, for a single lowered game (not a stack), the tables that every
subgame cut from it shares: children ranges, subtree sizes, depths, pre-order intervals,
the member nodes of each information-set row. It navigates by action paths
(:meth:`TreeIndex.node_at`) and answers subtree questions in time proportional to the
nodes asked about (:meth:`TreeIndex.nodes_below`, :meth:`TreeIndex.topmost`).
:mod:`jaxcfr.subgames` (public states, gadgets, frontiers, the subgame as a game) is its
main reader.

Shapes: ``N`` nodes, ``I`` rows.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.lowering.tree_index import TreeIndex
    >>> index = TreeIndex(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")))
    >>> index.path(index.node_at([0, 1, "pass"]))
    (0, 1, 'pass')
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from jaxcfr.game.contract import GameError, format_history
from jaxcfr.game.protocol import same_action
from jaxcfr.tensors import DECISION, TERMINAL_NODE, LoweredGame

__all__ = ["TreeIndex"]


class TreeIndex:
    """Host tables of one lowered game (not a stack) for walking and cutting subtrees.

    Attributes:
      lowered: the game.
      first_child, num_children: ``[N]`` int64: the children of node ``n`` are the nodes
        ``first_child[n] : first_child[n] + num_children[n]`` (nodes of a level are
        sorted by parent, so children are contiguous), in slot order.
      size: ``[N]`` int64 nodes in the subtree of each node (itself included).
      depth: ``[N]`` int64 moves from the root.
      pre: ``[N]`` int64 pre-order number; the subtree of ``n`` is the pre-order interval
        ``pre[n] : pre[n] + size[n]``.
    """

    def __init__(self, lowered: LoweredGame):
        if lowered.batch_size is not None:
            raise ValueError("subgames are cut from a single lowered game, not a stack")
        self.lowered = lowered
        t = lowered.tensors
        parent = np.asarray(t.parent, dtype=np.int64)
        n = parent.shape[0]
        nodes = np.arange(n)
        # parents are sorted over the whole array (level by level, sorted within a level)
        self.first_child = np.searchsorted(parent, nodes, side="left")
        self.num_children = np.searchsorted(parent, nodes, side="right") - self.first_child
        levels = lowered.level_start
        self.depth = np.repeat(np.arange(len(levels) - 1), np.diff(levels)).astype(np.int64)
        size = np.ones(n, dtype=np.int64)
        for d in range(len(levels) - 2, 0, -1):
            lo, hi = levels[d], levels[d + 1]
            np.add.at(size, parent[lo:hi], size[lo:hi])
        self.size = size
        self.parent = parent
        self.pre = np.asarray(lowered.preorder, dtype=np.int64)
        self.kind = np.asarray(t.node_kind)
        self.player = np.asarray(t.node_player)
        self.row = np.asarray(t.node_infoset)
        self.slot = np.asarray(t.parent_slot)
        self.num_rows = lowered.num_rows
        self.by_pre = np.empty(n, dtype=np.int64)
        self.by_pre[self.pre] = nodes
        decision = np.flatnonzero(self.kind == DECISION)
        order = np.argsort(self.row[decision], kind="stable")
        self.members = decision[order]                          # decision nodes by row
        self.member_start = np.searchsorted(self.row[self.members],
                                            np.arange(self.num_rows + 1), side="left")

    def public_key_ids(self, game, depth: int) -> np.ndarray:
        """``[N]`` int64: a number per distinct ``game.public_key()`` of each node down to
        ``depth`` (-1 below). The states are replayed level by level from the root, each
        node once per index (the deepest level's states are kept for the next call)."""
        cache = self.__dict__.setdefault("_public", {"ids": np.full(self.parent.shape[0], -1),
                                                     "depth": -1, "states": {}, "numbers": {}})
        levels = self.lowered.level_start
        labels = self.lowered.node_action
        ids, numbers = cache["ids"], cache["numbers"]
        while cache["depth"] < depth:
            d = cache["depth"] + 1
            lo, hi = levels[d], levels[d + 1]
            if d == 0:
                states = {0: game.clone()}
            else:
                states = {}
                for child in range(lo, hi):
                    par = int(self.parent[child])
                    if par in cache["states"]:
                        s = cache["states"][par].clone()
                        s.step(labels[child])
                        states[child] = s
            for n, s in states.items():
                ids[n] = numbers.setdefault((d, s.public_key()), len(numbers))
            cache["states"] = {n: s for n, s in states.items() if self.kind[n] != TERMINAL_NODE}
            cache["depth"] = d
        return ids

    # -- nodes and paths --------------------------------------------------------------
    def children(self, node: int) -> range:
        """The children of ``node`` (node numbers, in slot order)."""
        first = int(self.first_child[node])
        return range(first, first + int(self.num_children[node]))

    def path(self, node: int) -> tuple:
        """The action labels from the root to ``node``."""
        return self.lowered.history(int(node))

    def node_at(self, path: Sequence[Hashable], *, by_text: bool = False) -> int:
        """The node a path of action labels (chance outcomes included) leads to.

        ``by_text``: compare labels by ``str()`` (paths typed on a command line).

        Raises:
          GameError: ``subgame-path``: an action that is not legal where it is played.
        """
        node = 0
        labels = self.lowered.node_action
        for i, action in enumerate(path):
            for child in self.children(node):
                label = labels[child]
                if (str(label) == str(action)) if by_text else same_action(label, action):
                    node = child
                    break
            else:
                legal = [labels[c] for c in self.children(node)]
                what = ("the game is over there" if self.kind[node] == TERMINAL_NODE else
                        f"legal there: {legal}")
                raise GameError(f"path {list(path)}: action {action!r} (position {i}) is not "
                                f"legal after {format_history(path[:i])} ({what})",
                                rule="subgame-path", history=tuple(path[:i]))
        return node

    def decision_at(self, path: Sequence[Hashable], *, by_text: bool = False) -> int:
        """:meth:`node_at`, refusing a path that ends at a terminal or chance node."""
        node = self.node_at(path, by_text=by_text)
        kind = self.kind[node]
        if kind != DECISION:
            what = "a terminal node" if kind == TERMINAL_NODE else "a chance node"
            raise GameError(f"path {list(path)} ends at {what}: a subgame starts where a "
                            "player decides (give the path to a decision)", rule="subgame-path",
                            history=tuple(path))
        return node

    # -- subtrees ---------------------------------------------------------------------
    def inside(self, roots: np.ndarray) -> np.ndarray:
        """``[N]`` bool: the nodes in the subtrees of ``roots``."""
        out = np.zeros(self.parent.shape[0], dtype=bool)
        out[self.nodes_below(roots)] = True
        return out

    def nodes_below(self, roots: np.ndarray) -> np.ndarray:
        """The nodes in the subtrees of ``roots`` (disjoint), in pre-order: costs their
        number, not the game's."""
        roots = np.asarray(roots, dtype=np.int64)
        if roots.size == 0:
            return roots
        roots = roots[np.argsort(self.pre[roots], kind="stable")]
        starts, sizes = self.pre[roots], self.size[roots]
        offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        return self.by_pre[np.arange(int(sizes.sum())) + offsets]

    def is_below(self, roots: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """``[len(nodes)]`` bool: which of ``nodes`` lie in the subtrees of ``roots`` (sorted
        by pre-order, disjoint)."""
        i = np.searchsorted(self.pre[roots], self.pre[nodes], side="right") - 1
        ok = i >= 0
        j = np.maximum(i, 0)
        return ok & (self.pre[nodes] < self.pre[roots[j]] + self.size[roots[j]])

    def row_members(self, rows: np.ndarray) -> np.ndarray:
        """Every member node of ``rows`` (each row once)."""
        rows = np.asarray(rows, dtype=np.int64)
        lo, hi = self.member_start[rows], self.member_start[rows + 1]
        counts = hi - lo
        offsets = np.repeat(lo - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        return self.members[np.arange(int(counts.sum())) + offsets]

    def topmost(self, nodes: np.ndarray) -> np.ndarray:
        """The nodes of ``nodes`` no other of them lies above, sorted by pre-order."""
        nodes = np.unique(np.asarray(nodes, dtype=np.int64))
        nodes = nodes[np.argsort(self.pre[nodes], kind="stable")]
        ends = self.pre[nodes] + self.size[nodes]
        reach = np.maximum.accumulate(ends)
        keep = np.ones(len(nodes), dtype=bool)
        keep[1:] = self.pre[nodes[1:]] >= reach[:-1]
        return nodes[keep]

    def root_of(self, roots: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """For each of ``nodes`` (inside the subtrees of ``roots``, sorted by pre-order),
        the index of its root in ``roots``."""
        return np.searchsorted(self.pre[roots], self.pre[nodes], side="right") - 1

    def ancestor(self, nodes: np.ndarray, steps: np.ndarray) -> np.ndarray:
        """The ancestor ``steps`` moves above each of ``nodes`` (the root at most)."""
        out = np.asarray(nodes, dtype=np.int64).copy()
        steps = np.minimum(np.asarray(steps, dtype=np.int64), self.depth[out])
        for k in range(int(steps.max(initial=0))):
            move = steps > k
            out[move] = self.parent[out[move]]
        return out
