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

The walking and cutting is done on a :class:`~jaxcfr.lowering.tree_index.TreeIndex`
(the host tables of one lowered game that every subgame of it shares).

Shapes: ``N`` nodes, ``I`` rows, ``R`` roots.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.lowering.tree_index import TreeIndex
    >>> from jaxcfr.subgames.closure import public_state
    >>> index = TreeIndex(jaxcfr.lower(jaxcfr.load_game("leduc_poker")))
    >>> len(public_state(index, [0, 1, "call", "call", 2]).roots)   # every deal with board 2
    20
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxcfr.game.contract import GameError, format_history
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.tensors import CHANCE_NODE, DECISION, NO_PARENT, TERMINAL_NODE

__all__ = ["PublicState", "public_state", "at_depth", "after_chance",
           "player_components", "parse_path"]


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
