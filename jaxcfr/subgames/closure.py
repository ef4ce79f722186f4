"""The public state of a history: the roots of its subgame, from the lowered game.

The root set of the subgame at a history ``h`` is every history that some player cannot
tell apart from ``h``, transitively (the common-knowledge closure; in poker, every deal
consistent with the public actions). It is computed from the lowered game's
information sets as a fixed point: start from ``{h}``; while an information set has
members both inside the subtrees of the roots and outside them, add each outside member's
ancestor at the inside members' distance below their root (the history "at the same
moment" as the root), and keep only the topmost roots. The result is a set of roots whose
subtrees (a forest) hold every member of every information set they touch: a strategy
change inside it changes nothing outside. Usually the roots lie at one depth (poker);
games whose information sets span depths can give roots at several.

A game may declare the public state itself: a ``public_key()`` method (hashable, equal
exactly for histories in one public state, and only at one depth). Then the roots are the
histories at ``h``'s depth with ``h``'s public key, and :func:`public_state` checks that
they are closed under the information sets (a wrong key is an error, not a wrong subgame).

:class:`TreeIndex` holds the host tables of one lowered game that every subgame of it
shares: children ranges, subtree sizes, depths, pre-order intervals.

Shapes: ``N`` nodes, ``I`` rows, ``R`` roots.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.subgames.closure import TreeIndex, public_state
    >>> index = TreeIndex(jaxcfr.lower(jaxcfr.load_game("leduc_poker")))
    >>> len(public_state(index, [0, 1, "call", "call", 2]).roots)   # every deal with board 2
    20
"""

from __future__ import annotations

import dataclasses
from typing import Hashable, Sequence

import numpy as np

from jaxcfr.game.contract import GameError, format_history
from jaxcfr.game.protocol import same_action
from jaxcfr.tensors import CHANCE_NODE, DECISION, NO_PARENT, TERMINAL_NODE, LoweredGame

__all__ = ["TreeIndex", "PublicState", "public_state", "at_depth", "after_chance",
           "player_components", "parse_path"]


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


@dataclasses.dataclass(frozen=True)
class PublicState:
    """The roots of one subgame.

    Attributes:
      roots: ``[R]`` int64 node numbers, sorted by pre-order (subtrees disjoint).
      node: the history the public state was asked for.
      path: its action labels.
      source: ``"information sets"`` or ``"public key"``: how the roots were found.
    """
    roots: np.ndarray
    node: int
    path: tuple
    source: str = "information sets"

    @property
    def key(self) -> tuple:
        """The roots as a tuple (equal for every path into one public state)."""
        return tuple(int(r) for r in self.roots)


def public_state(index: TreeIndex, at, *, game=None, by_text: bool = False) -> PublicState:
    """The public state of a history: the roots of the subgame there (module docstring).

    Args:
      at: a path of action labels from the root (chance outcomes included), or a node
        number of ``index.lowered``.
      game: the game's root state (optional): when it declares ``public_key()``, the roots
        are the histories at the same depth with the same public key (checked).
      by_text: compare path labels by ``str()`` (command lines).

    Raises:
      GameError: ``subgame-path`` (not a legal path, or it ends at a terminal or chance
        node) or ``public-key`` (the declared key is not closed under information sets).
    """
    if isinstance(at, (int, np.integer)) and not isinstance(at, bool):
        node = int(at)
        path = index.path(node)
        if index.kind[node] != DECISION:
            raise GameError(f"history {format_history(path)} is not a decision: a subgame "
                            "starts where a player decides", rule="subgame-path", history=path)
    else:
        path = tuple(at)
        node = index.decision_at(path, by_text=by_text)
    if game is not None and _declares_public_key(game):
        roots = _by_public_key(index, node, game)
        _check_closed(index, roots, path)
        return PublicState(roots, node, index.path(node), "public key")
    return PublicState(closure(index, node), node, index.path(node))


def closure(index: TreeIndex, node) -> np.ndarray:
    """The fixed point of the module docstring from ``{node}`` (or from a set of nodes):
    ``[R]`` roots. Each round costs the size of the subgame and of the information sets it
    touches."""
    roots = index.topmost(np.atleast_1d(np.asarray(node, dtype=np.int64)))
    while True:
        below = index.nodes_below(roots)                              # pre-order
        decision = below[index.kind[below] == DECISION]
        rows = np.unique(index.row[decision])
        members = index.row_members(rows)
        outside = members[~index.is_below(roots, members)]
        if outside.size == 0:
            return roots
        # how far below its root each straddling row's inside members lie (the least)
        straddling = np.zeros(index.num_rows, dtype=bool)
        straddling[index.row[outside]] = True
        inner = decision[straddling[index.row[decision]]]
        offset = index.depth[inner] - index.depth[roots[index.root_of(roots, inner)]]
        least = np.full(index.num_rows, np.iinfo(np.int64).max)
        np.minimum.at(least, index.row[inner], offset)
        new = index.ancestor(outside, least[index.row[outside]])
        roots = index.topmost(np.concatenate([roots, new]))


def player_components(index: TreeIndex, roots: np.ndarray, player: int) -> np.ndarray:
    """``[R]`` int: ``player``'s augmented information sets at the roots, numbered 0..K-1.

    Two roots share one when an information set of ``player`` has members below both
    (transitively). Roots below which ``player`` never decides are alone: this can split
    what the player really cannot tell apart, which keeps every safety argument valid (the
    player's best responses below different parts are independent).
    """
    r = len(roots)
    comp = np.arange(r)
    below = index.nodes_below(roots)                                  # pre-order
    mine = below[(index.kind[below] == DECISION) & (index.player[below] == player)]
    if mine.size:
        which = index.root_of(roots, mine)
        rows = index.row[mine]
        while True:                          # label propagation to the least root index
            least = np.full(index.num_rows, r)
            np.minimum.at(least, rows, comp[which])
            new = comp.copy()
            np.minimum.at(new, which, least[rows])
            new = new[new]                   # shortcut chains
            if np.array_equal(new, comp):
                break
            comp = new
    _, numbered = np.unique(comp, return_inverse=True)
    return numbered.astype(np.int64)


def at_depth(index: TreeIndex, depth: int) -> list[PublicState]:
    """Every public state whose seed is a decision at ``depth`` (one per public state)."""
    seeds = np.flatnonzero((index.depth == depth) & (index.kind == DECISION))
    return _partition(index, seeds)


def after_chance(index: TreeIndex, count: int) -> list[PublicState]:
    """Every public state that starts right after the ``count``-th chance event on a path
    (Leduc's second betting round: ``count=3``, after the two deals and the board)."""
    after, chance_edges = _after_chance(index)
    return _partition(index, np.flatnonzero(after & (chance_edges == count)))


def chance_counts(index: TreeIndex) -> list[int]:
    """The counts ``K`` for which :func:`after_chance` finds public states (sorted)."""
    after, chance_edges = _after_chance(index)
    return sorted(set(chance_edges[after].tolist()))


def decision_depths(index: TreeIndex) -> list[int]:
    """The depths at which :func:`at_depth` finds public states (sorted)."""
    return sorted(set(index.depth[index.kind == DECISION].tolist()))


def _after_chance(index: TreeIndex) -> tuple[np.ndarray, np.ndarray]:
    """``([N] bool: a decision right below a chance node, [N] int64: the chance events on
    the path to each node)``."""
    chance_edges = np.zeros(index.parent.shape[0], dtype=np.int64)
    levels = index.lowered.level_start
    is_chance = (index.kind == CHANCE_NODE).astype(np.int64)
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        par = index.parent[lo:hi]
        chance_edges[lo:hi] = chance_edges[par] + is_chance[par]
    parent = np.maximum(index.parent, 0)
    after = (index.kind == DECISION) & (index.parent != NO_PARENT) \
        & (index.kind[parent] == CHANCE_NODE)
    return after, chance_edges


def _partition(index: TreeIndex, seeds: np.ndarray) -> list[PublicState]:
    """The public states of ``seeds``: closures that overlap are merged (the closure of
    their union), so the states returned are disjoint."""
    seeds = seeds[np.argsort(index.pre[seeds], kind="stable")]
    owner = np.full(index.parent.shape[0], -1, dtype=np.int64)
    found: dict[int, tuple[np.ndarray, int]] = {}                  # id -> (roots, seed)
    next_id = 0
    for s in seeds:
        if owner[s] >= 0:
            continue
        roots, seed = closure(index, int(s)), int(s)
        while True:
            below = index.nodes_below(roots)
            merge = np.unique(owner[below][owner[below] >= 0]).tolist()
            if not merge:
                break
            for k in merge:
                r, first = found.pop(k)
                owner[index.nodes_below(r)] = -1
                seed = min(seed, first, key=lambda n: index.pre[n])
                roots = np.concatenate([roots, r])
            roots = closure(index, roots)
        found[next_id] = (roots, seed)
        owner[index.nodes_below(roots)] = next_id
        next_id += 1
    states = sorted(found.values(), key=lambda x: index.pre[x[1]])
    return [PublicState(roots, seed, index.path(seed)) for roots, seed in states]


def parse_path(text: str) -> list[str]:
    """``"0,1,call,call,2"`` -> ``["0", "1", "call", "call", "2"]`` (labels compared by text)."""
    text = text.strip()
    return [] if not text else [p.strip() for p in text.split(",")]


# -- a declared public key --------------------------------------------------------------
def _declares_public_key(game) -> bool:
    fn = getattr(game, "public_key", None)
    if not callable(fn):
        return False
    try:
        return fn() is not None
    except Exception:  # noqa: BLE001 - a game that cannot say it at the root says it below
        return True


def _by_public_key(index: TreeIndex, node: int, game) -> np.ndarray:
    """The nodes at ``node``'s depth whose states have ``node``'s public key."""
    depth = int(index.depth[node])
    ids = index.public_key_ids(game, depth)
    lo, hi = index.lowered.level_start[depth], index.lowered.level_start[depth + 1]
    level = np.arange(lo, hi)
    same = level[(ids[lo:hi] == ids[node]) & (index.kind[lo:hi] != TERMINAL_NODE)]
    return same[np.argsort(index.pre[same], kind="stable")]


def _check_closed(index: TreeIndex, roots: np.ndarray, path: tuple) -> None:
    below = index.nodes_below(roots)
    members = index.row_members(np.unique(index.row[below[index.kind[below] == DECISION]]))
    outside = members[~index.is_below(roots, members)]
    if outside.size:
        m = int(outside[0])
        row = int(index.row[m])
        player, key = index.lowered.infoset_keys[row]
        raise GameError(f"the game's public_key() at {format_history(path)} names a public "
                        f"state that is not closed: player {player}'s information set {key!r} "
                        f"also holds {format_history(index.path(m))}, outside it",
                        rule="public-key", history=path, infoset=key)
