"""Lowering: enumerate a game tree once on the host into padded NumPy tensors.

Nodes are numbered in depth order (each depth level a contiguous slice, and
within a level in pre-order, so the children of a level are grouped by parent
and their parent indices are sorted). Information sets of all players share one
row table with a trailing *sink* row that non-decision nodes point at.

Shapes: ``N`` nodes, ``I`` information-set rows (sink included), ``A`` max
actions (decision actions and chance outcomes), ``P`` players, ``D`` levels.

Example::

    >>> import jaxcfr
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> lowered.infosets_per_player
    (6, 6)
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Hashable, NamedTuple, Sequence

import numpy as np

from jaxcfr.contract import (CHANCE_NODE, DECISION, PADDING, TERMINAL_NODE,
                             check_terminal_step_refused, hashable_key, inspect_node,
                             player_to_act_consistent)
from jaxcfr.game import Game, GameError

__all__ = ["GameTensors", "LoweredGame", "lower", "sort_infosets", "MemoryBudgetError",
           "NO_PARENT", "estimate_bytes", "default_memory_budget"]

#: ``parent`` of the root.
NO_PARENT = -1
#: ``infoset_player`` of the sink row and of padding rows.
NO_PLAYER = -1
#: Fraction of available memory that lowering may plan to use by default.
DEFAULT_MEMORY_FRACTION = 0.5
# Host bytes per node while enumerating (Python lists of ints, keys, labels).
_HOST_BYTES_PER_NODE = 160


class GameTensors(NamedTuple):
    """The arrays a solver reads. A leading batch axis ``[B, ...]`` after :func:`jaxcfr.stack`."""
    parent: np.ndarray          # [N] int32  parent node; NO_PARENT at the root
    parent_slot: np.ndarray     # [N] int32  slot of the action leading here (0 at the root)
    node_kind: np.ndarray       # [N] int8   DECISION / CHANCE_NODE / TERMINAL_NODE / PADDING
    node_player: np.ndarray     # [N] int32  acting player; P at chance; -1 at terminal/padding
    node_infoset: np.ndarray    # [N] int32  information-set row; the sink row if not a decision
    edge_owner: np.ndarray      # [N] int32  who chose the edge into this node (P: chance/root)
    edge_index: np.ndarray      # [N] int32  row * A + slot of that edge (sink * A at chance/root)
    chance_prob: np.ndarray     # [N] float  probability of the chance edge into here (1 otherwise;
                                #            0 at padding)
    payoff: np.ndarray          # [N, P] float terminal returns (0 elsewhere)
    legal_mask: np.ndarray      # [I, A] bool legal actions per row (sink/padding: slot 0 only)
    abstraction_mask: np.ndarray  # [I, A] bool kept actions (all legal without abstraction)
    infoset_player: np.ndarray  # [I] int32  owner; NO_PLAYER for sink and padding rows
    infoset_rep: np.ndarray     # [I] int32  one member node (0 for sink and padding rows)


class MemoryBudgetError(GameError):
    """Lowering would need more memory than the budget allows."""


def default_memory_budget() -> int:
    """Bytes lowering may plan for: ``JAXCFR_MEMORY_BUDGET`` or half of available memory."""
    env = os.environ.get("JAXCFR_MEMORY_BUDGET")
    if env:
        return int(float(env))
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(int(line.split()[1]) * 1024 * DEFAULT_MEMORY_FRACTION)
    except OSError:
        pass
    return 8 << 30


def estimate_bytes(num_nodes: int, num_infosets: int, max_actions: int, num_players: int,
                   float_bytes: int = 4) -> int:
    """Device bytes for the tensors plus one solver's working set (reach, values, 4 tables)."""
    per_node = 4 * 6 + 1 + float_bytes * (1 + num_players)       # the [N] and [N, P] tensors
    per_node += float_bytes * (2 * num_players + 2)               # reach and value passes
    per_row = max_actions * (2 + 4 * float_bytes) + 8             # masks + regret/avg/pred tables
    return num_nodes * per_node + num_infosets * per_row


@dataclasses.dataclass(frozen=True, eq=False)
class LoweredGame:
    """A game lowered to tensors, with the host tables that map rows back to the game.

    ``tensors`` are NumPy arrays; solvers move them to the device. ``level_start``
    is static structure: the node slice of depth ``d`` is
    ``level_start[d]:level_start[d + 1]``.
    """
    tensors: GameTensors
    level_start: tuple[int, ...]          # [D + 1]
    num_players: int
    infoset_keys: tuple                   # [I - 1] (player, key) per real row (host only)
    infoset_actions: tuple                # [I - 1] tuple of action labels per real row
    preorder: np.ndarray                  # [N] int64 pre-order number of each node (host only)
    node_action: tuple                    # [N] label of the action into each node (host only)
    nash_value: tuple | None = None
    constant_sum: float | None = None     # sum of returns when equal at every leaf, else None
    br_rounds: int = 1                    # most own decisions on a path (best-response sweeps)
    name: str = ""
    batch_size: int | None = None         # B after stack(); None for a single game
    members: tuple = ()                   # the stacked LoweredGames (host tables per member)

    # -- sizes -------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return int(self.tensors.parent.shape[-1])

    @property
    def num_rows(self) -> int:
        """Information-set rows including the sink (``I``)."""
        return int(self.tensors.legal_mask.shape[-2])

    @property
    def max_actions(self) -> int:
        return int(self.tensors.legal_mask.shape[-1])

    @property
    def depth(self) -> int:
        """Longest root-to-leaf path, in moves."""
        return len(self.level_start) - 2

    @property
    def infosets_per_player(self) -> tuple[int, ...]:
        owners = np.asarray(self.tensors.infoset_player).reshape(-1)
        return tuple(int((owners == p).sum()) for p in range(self.num_players))

    @property
    def nbytes(self) -> int:
        return int(sum(np.asarray(t).nbytes for t in self.tensors))

    def sizes(self) -> dict[str, Any]:
        """The sizes reported by ``jaxcfr inspect``."""
        return {"nodes": self.num_nodes, "infosets": list(self.infosets_per_player),
                "max_actions": self.max_actions, "depth": self.depth, "bytes": self.nbytes}

    # -- host tables -------------------------------------------------------
    def history(self, node: int) -> tuple:
        """The action path from the root to ``node`` (labels)."""
        parent = self.tensors.parent
        path = []
        while parent[node] != NO_PARENT:
            path.append(self.node_action[node])
            node = int(parent[node])
        return tuple(reversed(path))

    def infoset_members(self, row: int) -> np.ndarray:
        """Nodes of information-set ``row``, sorted by pre-order number (Gambit's order)."""
        nodes = np.flatnonzero(self.tensors.node_infoset == row)
        return nodes[np.argsort(self.preorder[nodes], kind="stable")]

    def row_of(self, player: int, key: Hashable) -> int:
        """The row of ``player``'s information set ``key`` (KeyError if unknown)."""
        index = self.__dict__.get("_row_index")
        if index is None:
            index = {k: i for i, k in enumerate(self.infoset_keys)}
            object.__setattr__(self, "_row_index", index)
        return index[(player, key)]


class _Enumeration:
    """Growing per-node columns of one iterative pre-order walk."""

    def __init__(self):
        self.parent: list[int] = []
        self.slot: list[int] = []
        self.depth: list[int] = []
        self.kind: list[int] = []
        self.player: list[int] = []
        self.infoset: list[int] = []
        self.prob: list[float] = []
        self.action: list[Any] = []
        self.terminals: list[int] = []
        self.returns: list[tuple] = []

    def path(self, node: int) -> tuple:
        out = []
        while self.parent[node] != NO_PARENT:
            out.append(self.action[node])
            node = self.parent[node]
        return tuple(reversed(out))


def lower(game: Game, *, abstraction=None, sort_infosets: bool = True,
          memory_budget: int | None = None, name: str = "") -> LoweredGame:
    """Enumerate ``game`` and check its contract on every node.

    Args:
      game: the root state; it is not modified.
      abstraction: an object with ``actions(state, player)`` returning the kept
        subset of ``legal_actions()`` (``None``: keep all). Dropped actions are
        pruned and masked out in ``abstraction_mask``.
      sort_infosets: put rows in Gambit's canonical order (grouped by player, each
        player's information sets by their first member's pre-order number);
        otherwise rows keep the order in which the walk first met them.
      memory_budget: bytes; lowering stops early with :class:`MemoryBudgetError`
        when the estimate exceeds it (default :func:`default_memory_budget`).

    Raises:
      GameError: a contract violation (including imperfect recall and absent-
        mindedness), naming the history and the information set.
    """
    if not isinstance(game, Game):
        raise GameError(f"{type(game).__name__} does not implement jaxcfr.Game", rule="protocol")
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    num_players = int(game.num_players)
    enum = _Enumeration()
    rows: dict[tuple[int, Hashable], int] = {}
    row_actions: list[tuple] = []
    row_kept: list[tuple] = []
    row_seq: list[int] = []        # own (row * A_big + slot) sequence before the row; -1: empty
    row_first: list[int] = []      # first member (pre-order node number)
    big = 1 << 20                  # slot radix for sequence ids (actions per node < 2**20)
    max_actions = 1

    no_seq = (-1,) * num_players
    stack: list[tuple[Game, int, int, int, tuple, Any, float]] = [
        (game.clone(), NO_PARENT, 0, 0, no_seq, None, 1.0)]
    while stack:
        state, parent, slot, depth, seq, action, prob = stack.pop()
        node = len(enum.parent)
        enum.parent.append(parent)
        enum.slot.append(slot)
        enum.depth.append(depth)
        enum.action.append(action)
        enum.prob.append(prob)
        if node & 0xFFFF == 0xFFFF:
            _check_budget(node + 1, len(row_actions) + 1, max_actions, num_players, budget)
        try:
            info = inspect_node(state, num_players, None, require_enumerable=True)
            player_to_act_consistent(state, info, None)
        except GameError as e:
            raise e.with_context(history=enum.path(node)) from None
        enum.kind.append(info.kind)

        if info.kind == TERMINAL_NODE:
            try:
                check_terminal_step_refused(state, None)
            except GameError as e:
                raise e.with_context(history=enum.path(node)) from None
            enum.player.append(-1)
            enum.infoset.append(-1)
            enum.terminals.append(node)
            enum.returns.append(info.returns)
            continue

        if info.kind == CHANCE_NODE:
            enum.player.append(num_players)
            enum.infoset.append(-1)
            children = [(i, a, p) for i, (a, p) in enumerate(zip(info.actions, info.probs))]
            max_actions = max(max_actions, len(info.actions))
            child_seq = seq
        else:
            player = info.player
            try:
                key = hashable_key(state.infoset_key(player), (), player)
            except GameError as e:
                raise e.with_context(history=enum.path(node)) from None
            kept = info.actions
            if abstraction is not None:
                kept = _kept_actions(abstraction, state, player, info.actions, enum.path(node))
            row = rows.get((player, key))
            if row is None:
                row = len(row_actions)
                rows[(player, key)] = row
                row_actions.append(info.actions)
                row_kept.append(kept)
                row_seq.append(seq[player])
                row_first.append(node)
                max_actions = max(max_actions, len(info.actions))
            else:
                _check_same_infoset(enum, node, row, key, player, info.actions, kept, seq,
                                    row_actions, row_kept, row_seq, big)
            enum.player.append(player)
            enum.infoset.append(row)
            index = {a: i for i, a in enumerate(info.actions)}
            children = [(index[a], a, 1.0) for a in kept]
            child_seq = None
        # Push children in reverse so that they are popped in order (pre-order walk).
        last = len(children) - 1
        for j in range(last, -1, -1):
            child_slot, a, p = children[j]
            child = state if j == 0 else state.clone()
            try:
                child.step(a)
            except GameError as e:
                raise e.with_context(history=enum.path(node) + (a,)) from None
            if child_seq is None:
                s = list(seq)
                s[info.player] = row * big + child_slot
                cs = tuple(s)
            else:
                cs = child_seq
            stack.append((child, node, child_slot, depth + 1, cs, a, p))

    num_nodes = len(enum.parent)
    _check_budget(num_nodes, len(row_actions) + 1, max_actions, num_players, budget)
    lowered = _build(enum, num_players, row_actions, row_kept, rows, max_actions, game, name)
    if sort_infosets:
        lowered = globals()["sort_infosets"](lowered)
    return lowered


def _kept_actions(abstraction, state, player, legal, history) -> tuple:
    kept = tuple(abstraction.actions(state, player))
    if not kept:
        raise GameError("abstraction kept no action", rule="abstraction-empty", history=history)
    if len(set(kept)) != len(kept):
        raise GameError(f"abstraction repeats an action: {list(kept)}",
                        rule="abstraction-duplicate", history=history)
    legal_set = set(legal)
    for a in kept:
        if a not in legal_set:
            raise GameError(f"abstraction kept {a!r}, which is not legal here",
                            rule="abstraction-illegal", history=history)
    return kept


def _check_same_infoset(enum, node, row, key, player, actions, kept, seq, row_actions,
                        row_kept, row_seq, big) -> None:
    """A second member of ``row``: same actions, same kept actions, same own sequence."""
    if actions != row_actions[row]:
        raise GameError(f"legal actions {list(actions)} differ from {list(row_actions[row])} "
                        "seen earlier in the same information set",
                        rule="infoset-actions", history=enum.path(node), infoset=key)
    if kept != row_kept[row]:
        raise GameError(f"abstraction kept {list(kept)} here but {list(row_kept[row])} elsewhere "
                        "in the same information set", rule="abstraction-order",
                        history=enum.path(node), infoset=key)
    if seq[player] == row_seq[row]:
        return
    # Imperfect recall: is it absent-mindedness (the path already passed through the row)?
    n = enum.parent[node]
    while n != NO_PARENT:
        if enum.infoset[n] == row:
            raise GameError(
                f"game does not have perfect recall: player {player}'s information set is "
                "absent-minded (this history passes through it twice)",
                rule="absent-minded", history=enum.path(node), infoset=key)
        n = enum.parent[n]
    raise GameError(
        f"game does not have perfect recall: histories in player {player}'s information set "
        "differ in that player's own earlier (information set, action) sequence",
        rule="perfect-recall", history=enum.path(node), infoset=key)


def _check_budget(nodes, rows, max_actions, num_players, budget) -> None:
    need = estimate_bytes(nodes, rows, max_actions, num_players) + nodes * _HOST_BYTES_PER_NODE
    if need > budget:
        raise MemoryBudgetError(
            f"lowering needs at least {need / 2**20:,.1f} MiB for {nodes:,} nodes found so far, "
            f"over the memory budget of {budget / 2**20:,.1f} MiB (set memory_budget= or "
            "JAXCFR_MEMORY_BUDGET to raise it)", rule="memory-budget")


def _build(enum: _Enumeration, num_players, row_actions, row_kept, rows, max_actions, game,
           name) -> LoweredGame:
    """Reorder the pre-order columns into depth order and fill the tensors."""
    n = len(enum.parent)
    depth = np.asarray(enum.depth, dtype=np.int64)
    order = np.argsort(depth, kind="stable")            # depth order, pre-order within a level
    new_of_old = np.empty(n, dtype=np.int64)
    new_of_old[order] = np.arange(n)
    level_start = tuple(int(x) for x in np.concatenate(
        [[0], np.cumsum(np.bincount(depth, minlength=int(depth.max()) + 1))]))

    parent_old = np.asarray(enum.parent, dtype=np.int64)[order]
    parent = np.where(parent_old == NO_PARENT, NO_PARENT,
                      new_of_old[np.maximum(parent_old, 0)]).astype(np.int32)
    slot = np.asarray(enum.slot, dtype=np.int32)[order]
    kind = np.asarray(enum.kind, dtype=np.int8)[order]
    player = np.asarray(enum.player, dtype=np.int32)[order]
    num_real = len(row_actions)
    sink = num_real
    infoset = np.asarray(enum.infoset, dtype=np.int32)[order]
    infoset[infoset < 0] = sink
    prob = np.asarray(enum.prob, dtype=np.float64)[order]
    payoff = np.zeros((n, num_players), dtype=np.float64)
    if enum.terminals:
        payoff[new_of_old[np.asarray(enum.terminals)]] = np.asarray(enum.returns, dtype=np.float64)

    has_parent = parent != NO_PARENT
    safe_parent = np.maximum(parent, 0)
    parent_is_decision = has_parent & (kind[safe_parent] == DECISION)
    edge_owner = np.where(parent_is_decision, player[safe_parent], num_players).astype(np.int32)
    edge_index = np.where(parent_is_decision, infoset[safe_parent].astype(np.int64) * max_actions
                          + slot, sink * max_actions).astype(np.int32)

    rows_total = num_real + 1
    legal = np.zeros((rows_total, max_actions), dtype=bool)
    kept = np.zeros((rows_total, max_actions), dtype=bool)
    for r, (acts, keep) in enumerate(zip(row_actions, row_kept)):
        legal[r, :len(acts)] = True
        if keep is acts:
            kept[r, :len(acts)] = True
        else:
            index = {a: i for i, a in enumerate(acts)}
            kept[r, [index[a] for a in keep]] = True
    legal[sink, 0] = kept[sink, 0] = True
    infoset_player = np.full(rows_total, NO_PLAYER, dtype=np.int32)
    infoset_rep = np.zeros(rows_total, dtype=np.int32)
    keys = [None] * num_real
    for (p, key), r in rows.items():
        infoset_player[r] = p
        keys[r] = (p, key)
    decision_nodes = np.flatnonzero(kind == DECISION)
    # First member in depth order is fine: every member has the same own reach.
    first = np.full(rows_total, n, dtype=np.int64)
    np.minimum.at(first, infoset[decision_nodes], decision_nodes)
    infoset_rep[:num_real] = first[:num_real]

    tensors = GameTensors(
        parent=parent, parent_slot=slot, node_kind=kind, node_player=player,
        node_infoset=infoset, edge_owner=edge_owner, edge_index=edge_index,
        chance_prob=prob, payoff=payoff, legal_mask=legal, abstraction_mask=kept,
        infoset_player=infoset_player, infoset_rep=infoset_rep)
    node_action = tuple(enum.action[i] for i in order)
    nash = game.nash_value() if num_players == 2 else None
    # own decisions along each path, level by level (parents come first in depth order)
    own = np.zeros((n, num_players + 1), dtype=np.int64)
    for d in range(1, len(level_start) - 1):
        lo, hi = level_start[d], level_start[d + 1]
        own[lo:hi] = own[parent[lo:hi]]
        own[np.arange(lo, hi), edge_owner[lo:hi]] += 1
    br_rounds = int(own[:, :num_players].max(initial=0)) + 1
    sums = payoff[kind == TERMINAL_NODE].sum(axis=1)
    constant_sum = None
    if sums.size and np.allclose(sums, sums[0], rtol=1e-9, atol=1e-12 * max(1.0, abs(sums).max())):
        constant_sum = float(sums[0])
    return LoweredGame(tensors=tensors, level_start=level_start, num_players=num_players,
                       infoset_keys=tuple(keys), infoset_actions=tuple(row_actions),
                       preorder=order.astype(np.int64), node_action=node_action,
                       nash_value=None if nash is None else tuple(float(v) for v in nash),
                       constant_sum=constant_sum, br_rounds=br_rounds,
                       name=name or type(game).__name__)


def sort_infosets(lowered: LoweredGame) -> LoweredGame:
    """Gambit's canonical row order, by one O(I log I) sort.

    Rows are grouped by player; each player's rows are sorted by the pre-order
    number of their first member (members themselves are listed in pre-order by
    :meth:`LoweredGame.infoset_members`). The sink row stays last.
    """
    if lowered.batch_size is not None:
        raise ValueError("sort_infosets works on a single lowered game; sort before stack()")
    t = lowered.tensors
    num_real = len(lowered.infoset_keys)
    decision = np.flatnonzero(t.node_kind == DECISION)
    first_pre = np.full(num_real + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_pre, t.node_infoset[decision], lowered.preorder[decision])
    perm = np.lexsort((first_pre[:num_real], t.infoset_player[:num_real]))  # new -> old
    perm = np.concatenate([perm, [num_real]])
    old_to_new = np.empty_like(perm)
    old_to_new[perm] = np.arange(len(perm))
    a = lowered.max_actions
    edge_row = t.edge_index // a
    tensors = t._replace(
        node_infoset=old_to_new[t.node_infoset].astype(np.int32),
        edge_index=(old_to_new[edge_row] * a + t.edge_index % a).astype(np.int32),
        legal_mask=t.legal_mask[perm], abstraction_mask=t.abstraction_mask[perm],
        infoset_player=t.infoset_player[perm], infoset_rep=t.infoset_rep[perm])
    return dataclasses.replace(
        lowered, tensors=tensors,
        infoset_keys=tuple(lowered.infoset_keys[i] for i in perm[:-1]),
        infoset_actions=tuple(lowered.infoset_actions[i] for i in perm[:-1]))


def timed_lower(game: Game, **kwargs) -> tuple[LoweredGame, float]:
    """``lower(game, **kwargs)`` and the seconds it took."""
    start = time.perf_counter()
    lowered = lower(game, **kwargs)
    return lowered, time.perf_counter() - start
