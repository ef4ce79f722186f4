"""Lowering: enumerate a game tree once on the host into padded NumPy tensors.

Nodes are numbered in depth order (each depth level a contiguous slice, and
within a level in pre-order, so the children of a level are grouped by parent
and their parent indices are sorted). Information sets of all players share one
row table with a trailing *sink* row that non-decision nodes point at.

Shapes: ``N`` nodes, ``I`` information-set rows (sink included), ``A`` max
decision actions (chance edges use no row, so chance outcomes do not widen ``A``), ``P`` players, ``D`` levels.

Example::

    >>> import jaxcfr
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> lowered.infosets_per_player
    (6, 6)
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
from typing import Any, Hashable

import numpy as np

from jaxcfr import contract
from jaxcfr.contract import (TERMINAL, GameError, check_protocol, clone_error,
                             format_history, game_exception, hashable_key, inspect_node,
                             player_to_act_consistent)
from jaxcfr.registry import load_game
from jaxcfr.tensors import (CHANCE_NODE, DECISION, NO_PARENT, NO_PLAYER, TERMINAL_NODE,
                            GameTensors, LoweredGame)

__all__ = ["lower", "as_lowered", "sort_infosets", "MemoryBudgetError", "estimate_bytes",
           "default_memory_budget"]
#: Fraction of available memory that lowering may plan to use by default.
DEFAULT_MEMORY_FRACTION = 0.5
# Host bytes per node while enumerating (Python lists of ints, keys, labels).
_HOST_BYTES_PER_NODE = 160


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


#: ``_Enumeration.code`` of a chance node (decision nodes store their row, >= 0).
_CHANCE_CODE = -1
#: ``_Enumeration.code`` of a terminal node.
_TERMINAL_CODE = -2
#: Radix of the own-sequence ids ``row * _SLOT_RADIX + slot`` (more than any action count).
_SLOT_RADIX = 1 << 32
#: What the terminal fast path takes as returns (anything else gets the full check).
_SEQUENCES, _NUMBERS = (tuple, list), {float, int}
#: Nodes between two memory-budget checks during the walk.
_BUDGET_CHECK_EVERY = 4096


class _Enumeration:
    """The columns of one iterative pre-order walk, indexed by pre-order number.

    Per node: ``parent``, ``slot`` (action slot into it), ``depth``, ``action``
    (label into it), ``prob`` (chance probability into it, else 1) and ``code``
    (the information-set row of a decision node, ``_CHANCE_CODE`` or
    ``_TERMINAL_CODE``). Per terminal: ``terminals`` (node) and ``returns``.
    Per information-set row: ``row_player``, ``row_key``, ``row_actions`` (legal
    actions), ``row_kept`` (kept by the abstraction; the same object when all
    are kept) and ``row_seq`` (the owner's own last ``row * _SLOT_RADIX + slot``
    before the row, -1 for none: by induction this names the whole own sequence).
    """

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.parent: list[int] = []
        self.slot: list[int] = []
        self.depth: list[int] = []
        self.action: list[Any] = []
        self.prob: list[float] = []
        self.code: list[int] = []
        self.terminals: list[int] = []
        self.returns: list[tuple] = []
        self.row_player: list[int] = []
        self.row_key: list[Hashable] = []
        self.row_actions: list[tuple] = []
        self.row_kept: list[tuple] = []
        self.row_seq: list[int] = []
        self.max_actions = 1

    def path(self, node: int) -> tuple:
        """The action path from the root to ``node`` (for error messages)."""
        out = []
        while self.parent[node] != NO_PARENT:
            out.append(self.action[node])
            node = self.parent[node]
        return tuple(reversed(out))


def _inspect(state, enum: _Enumeration, node: int) -> Any:
    """The full node-local check of :mod:`jaxcfr.contract` (rules in their canonical order).

    The walk runs it on every chance node, and on any other node whose cheap
    checks found something unusual, so that an error names the same rule as
    :func:`jaxcfr.validate` would. Returns the ``NodeInfo`` when the node is fine.
    """
    try:
        info = inspect_node(state, enum.num_players, None, require_enumerable=True)
        player_to_act_consistent(state, info, None)
    except GameError as e:
        raise e.with_context(history=enum.path(node)) from None
    return info


def _enumerate(game, num_players: int, abstraction, budget: int,
               progress=None) -> _Enumeration:
    """Walk the whole tree once, iteratively in pre-order, checking the contract at every node.

    Every rule of :func:`jaxcfr.validate` is checked on every node (including a
    path longer than ``MAX_TRAJECTORY_LENGTH``), plus enumerable chance, strong
    perfect recall and absent-mindedness. Decision and terminal nodes take a fast
    path with the same rules: a cheap test that is exact on valid nodes, and the
    full :func:`_inspect` when it fails, so that errors are reported alike.
    Legal actions are checked for emptiness and duplicates once per information
    set; every other member must list the same tuple. ``step(None)`` is probed at
    every terminal node on the state itself (it is not used again), not on a clone.
    The memory budget is re-checked every ``_BUDGET_CHECK_EVERY`` nodes.
    """
    enum = _Enumeration(num_players)
    add_parent, add_slot, add_depth = enum.parent.append, enum.slot.append, enum.depth.append
    add_action, add_prob, add_code = enum.action.append, enum.prob.append, enum.code.append
    add_terminal, add_returns = enum.terminals.append, enum.returns.append
    row_actions, row_kept, row_seq = enum.row_actions, enum.row_kept, enum.row_seq
    rows_of = [{} for _ in range(num_players)]   # per player: key -> row
    isfinite, radix, P = math.isfinite, _SLOT_RADIX, num_players
    max_actions = 1
    next_check = _BUDGET_CHECK_EVERY
    max_depth = contract.MAX_TRAJECTORY_LENGTH

    stack: list[tuple] = [(game.clone(), NO_PARENT, 0, 0, (-1,) * P, None, 1.0)]
    pop, push = stack.pop, stack.append
    node = -1
    while stack:
        state, parent, slot, depth, seq, action, prob = pop()
        node += 1
        add_parent(parent)
        add_slot(slot)
        add_depth(depth)
        add_action(action)
        add_prob(prob)
        if depth > max_depth:
            raise GameError(f"a path is longer than {max_depth} moves", rule="termination",
                            history=enum.path(node)[:20])
        if node >= next_check:
            next_check += _BUDGET_CHECK_EVERY
            enum.max_actions = max_actions
            _check_budget(node + 1, len(row_actions) + 1, max_actions, P, budget)
            if progress is not None:
                progress(node)
        try:
            if state.is_terminal():
                # node-type, player, terminal-returns (numbers, the same twice), no legal
                # actions; then step must be refused. Anything unusual: the full check.
                returns = None
                if not state.is_chance() and state.player_to_act() == TERMINAL:
                    raw = state.terminal_returns()
                    try:
                        if type(raw) in _SEQUENCES and set(map(type, raw)) <= _NUMBERS:
                            returns = tuple(map(float, raw))
                    except (TypeError, OverflowError):
                        returns = None
                    if returns is not None and (
                            len(returns) != P or not isfinite(sum(returns))
                            or state.terminal_returns() != raw or state.legal_actions()):
                        returns = None
                if returns is None:
                    returns = _inspect(state, enum, node).returns
                add_code(_TERMINAL_CODE)
                add_terminal(node)
                add_returns(returns)
                # The state is not used again: probe step() on it without a clone.
                try:
                    state.step(None)
                except GameError:
                    continue
                except Exception as exc:  # noqa: BLE001 - any other exception breaks the contract
                    raise GameError(f"step() at a terminal node raised {type(exc).__name__}: "
                                    f"{exc} (it must raise GameError)", rule="terminal-step",
                                    history=enum.path(node)) from None
                raise GameError("step() at a terminal node was accepted (it must raise "
                                "GameError)", rule="terminal-step", history=enum.path(node))

            if state.is_chance():
                info = _inspect(state, enum, node)
                add_code(_CHANCE_CODE)
                acts, probs = info.actions, info.probs
                n = len(acts)      # chance edges use no row: A counts decision actions only
                clone, d1 = state.clone, depth + 1
                j = n
                try:
                    for j in range(n - 1, -1, -1):
                        child = clone() if j else state
                        child.step(acts[j])
                        push((child, node, j, d1, seq, acts[j], probs[j]))
                        if j == n - 1 and j and (child is state or not state.is_chance() or tuple(
                                a for a, _ in state.chance_outcomes()) != acts):
                            raise clone_error(acts[j], enum.path(node))
                except GameError as e:
                    raise e.with_context(history=enum.path(node) + (acts[j],)) from None
                continue

            # A decision node.
            acts = tuple(state.legal_actions())
            player = state.player_to_act()
            if state.chance_outcomes() is not None or type(player) is not int \
                    or not 0 <= player < P:
                info = _inspect(state, enum, node)     # raises (or accepts e.g. a bool player)
                acts, player = info.actions, info.player
            key = state.infoset_key(player)
            rows = rows_of[player]
            try:
                row = rows.get(key)
            except TypeError:
                _inspect(state, enum, node)
                hashable_key(key, enum.path(node), player)
                raise
            kept = acts
            if abstraction is not None:
                kept = _kept_actions(abstraction, state, player, acts, enum.path(node))
            n = len(acts)
            new_row = row is None
            if new_row:
                try:
                    bad = not n or len(set(acts)) != n
                except TypeError:                    # an unhashable action
                    bad = True
                if bad:
                    _inspect(state, enum, node)
                hashable_key(key, enum.path(node), player)     # a NaN key is no key
                row = len(row_actions)
                rows[key] = row
                enum.row_player.append(player)
                enum.row_key.append(key)
                row_actions.append(acts)
                row_kept.append(kept)
                row_seq.append(seq[player])
                if n > max_actions:
                    max_actions = n
            elif acts != row_actions[row] or seq[player] != row_seq[row] \
                    or (abstraction is not None and kept != row_kept[row]):
                if acts != row_actions[row]:
                    _inspect(state, enum, node)
                _infoset_error(enum, node, row, key, player, acts, kept)
            add_code(row)
            head, tail, base = seq[:player], seq[player + 1:], row * radix
            clone, d1 = state.clone, depth + 1
            k = len(kept)
            # Is the first clone a new object (every node), and does stepping it leave the
            # state as it was (each row's first member: it costs a call)?
            last = k - 1 if k > 1 else -1
            j = k
            try:
                if kept is acts:
                    for j in range(k - 1, -1, -1):
                        child = clone() if j else state
                        child.step(acts[j])
                        push((child, node, j, d1, head + (base + j,) + tail, acts[j], 1.0))
                        if j == last and (child is state or (
                                new_row and state.infoset_key(player) != key)):
                            raise clone_error(acts[j], enum.path(node))
                else:
                    slot_of = {a: i for i, a in enumerate(acts)}
                    for j in range(k - 1, -1, -1):
                        s = slot_of[kept[j]]
                        child = clone() if j else state
                        child.step(kept[j])
                        push((child, node, s, d1, head + (base + s,) + tail, kept[j], 1.0))
                        if j == last and (child is state or (
                                new_row and state.infoset_key(player) != key)):
                            raise clone_error(kept[j], enum.path(node))
            except GameError as e:
                raise e.with_context(history=enum.path(node) + (kept[j],)) from None
        except GameError as e:
            if e.history is None:
                raise e.with_context(history=enum.path(node)) from None
            raise
        except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule
            err = game_exception(exc, enum.path(node))
            if err is None:
                raise
            raise err from exc
    enum.max_actions = max_actions
    return enum


def lower(game, *, abstraction=None, sort_infosets: bool = True,
          memory_budget: int | None = None, name: str = "", progress=None) -> LoweredGame:
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
        when the estimate exceeds it (default :func:`default_memory_budget`). The
        estimate is re-checked every few thousand nodes during the walk.
      progress: optional ``progress(nodes_walked: int)``, called every few thousand
        nodes during the walk.

    Raises:
      GameError: a contract violation (including imperfect recall and absent-
        mindedness), naming the history and the information set.
      MemoryBudgetError: the game does not fit the memory budget.
    """
    num_players = check_protocol(game)
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    enum = _enumerate(game, num_players, abstraction, budget, progress)
    _check_budget(len(enum.parent), len(enum.row_actions) + 1, enum.max_actions, num_players,
                  budget)
    lowered = _build(enum, game, name)
    if sort_infosets:
        lowered = globals()["sort_infosets"](lowered)
    return lowered


def as_lowered(game, **lower_kwargs) -> LoweredGame:
    """A game string, a Game or a LoweredGame as a LoweredGame (lowering it if needed).

    A game string names the lowered game (``LoweredGame.name``).
    """
    if isinstance(game, LoweredGame):
        return game
    name = lower_kwargs.pop("name", "")
    if isinstance(game, (str, os.PathLike)):
        name = name or os.fspath(game)
        game = load_game(game)
    return lower(game, name=name, **lower_kwargs)


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
    if kept == legal:
        return legal
    return kept


def _infoset_error(enum: _Enumeration, node: int, row: int, key, player: int, actions, kept):
    """Raise for a member of ``row`` that disagrees with the first member.

    Same legal actions, same kept actions, same own sequence (strong perfect
    recall), in that order; a different own sequence on a path that already
    passed through ``row`` is absent-mindedness.
    """
    first = format_history(enum.path(_first_member(enum, row)))
    if actions != enum.row_actions[row]:
        raise GameError(f"legal actions {list(actions)} differ from "
                        f"{list(enum.row_actions[row])} at history {first} in the same "
                        "information set", rule="infoset-actions", history=enum.path(node),
                        infoset=key)
    if kept != enum.row_kept[row]:
        raise GameError(f"abstraction kept {list(kept)} here but {list(enum.row_kept[row])} at "
                        f"history {first} in the same information set",
                        rule="abstraction-order", history=enum.path(node), infoset=key)
    n = enum.parent[node]
    while n != NO_PARENT:
        if enum.code[n] == row:
            raise GameError(
                f"game does not have perfect recall: player {player}'s information set {key!r} "
                "is absent-minded (this history passes through it twice)",
                rule="absent-minded", history=enum.path(node), infoset=key)
        n = enum.parent[n]
    raise GameError(
        f"game does not have perfect recall: in player {player}'s information set {key!r}, "
        f"this history and the first member (history {first}) differ in that player's own "
        "earlier (information set, action) sequence", rule="perfect-recall",
        history=enum.path(node), infoset=key)


def _first_member(enum: _Enumeration, row: int) -> int:
    return enum.code.index(row)


def _check_budget(nodes, rows, max_actions, num_players, budget) -> None:
    need = estimate_bytes(nodes, rows, max_actions, num_players) + nodes * _HOST_BYTES_PER_NODE
    if need > budget:
        raise MemoryBudgetError(
            f"lowering needs at least {need / 2**20:,.1f} MiB for {nodes:,} nodes found so far, "
            f"over the memory budget of {budget / 2**20:,.1f} MiB (set memory_budget= or "
            "JAXCFR_MEMORY_BUDGET to raise it)", rule="memory-budget")


def _build(enum: _Enumeration, game, name: str) -> LoweredGame:
    """Reorder the pre-order columns into depth order and fill the tensors."""
    num_players, max_actions = enum.num_players, enum.max_actions
    n = len(enum.parent)
    depth = np.fromiter(enum.depth, np.int64, n)
    order = np.argsort(depth, kind="stable")            # depth order, pre-order within a level
    new_of_old = np.empty(n, dtype=np.int64)
    new_of_old[order] = np.arange(n)
    level_start = tuple(int(x) for x in np.concatenate(
        [[0], np.cumsum(np.bincount(depth, minlength=int(depth.max()) + 1))]))

    parent_old = np.fromiter(enum.parent, np.int64, n)[order]
    parent = np.where(parent_old == NO_PARENT, NO_PARENT,
                      new_of_old[np.maximum(parent_old, 0)]).astype(np.int32)
    slot = np.fromiter(enum.slot, np.int32, n)[order]
    code = np.fromiter(enum.code, np.int64, n)[order]
    num_real = len(enum.row_actions)
    sink = num_real
    decision = code >= 0
    kind = np.where(decision, DECISION,
                    np.where(code == _CHANCE_CODE, CHANCE_NODE, TERMINAL_NODE)).astype(np.int8)
    row_player = np.asarray(enum.row_player + [NO_PLAYER], dtype=np.int32)
    player = np.where(decision, row_player[np.where(decision, code, sink)],
                      np.where(code == _CHANCE_CODE, num_players, -1)).astype(np.int32)
    infoset = np.where(decision, code, sink).astype(np.int32)
    prob = np.fromiter(enum.prob, np.float64, n)[order]
    payoff = np.zeros((n, num_players), dtype=np.float64)
    if enum.terminals:
        returns = np.fromiter(itertools.chain.from_iterable(enum.returns), np.float64,
                              len(enum.returns) * num_players).reshape(-1, num_players)
        payoff[new_of_old[np.fromiter(enum.terminals, np.int64, len(enum.terminals))]] = returns

    has_parent = parent != NO_PARENT
    safe_parent = np.maximum(parent, 0)
    parent_is_decision = has_parent & (kind[safe_parent] == DECISION)
    edge_owner = np.where(parent_is_decision, player[safe_parent], num_players).astype(np.int32)
    edge_index = np.where(parent_is_decision, infoset[safe_parent].astype(np.int64) * max_actions
                          + slot, sink * max_actions).astype(np.int32)

    rows_total = num_real + 1
    lengths = np.asarray([len(a) for a in enum.row_actions] + [1], dtype=np.int64)
    legal = np.arange(max_actions)[None, :] < lengths[:, None]
    kept = legal.copy()
    for r, (acts, keep) in enumerate(zip(enum.row_actions, enum.row_kept)):
        if keep is not acts:
            index = {a: i for i, a in enumerate(acts)}
            kept[r] = False
            kept[r, [index[a] for a in keep]] = True
    infoset_player = row_player.copy()
    infoset_rep = np.zeros(rows_total, dtype=np.int32)
    keys = tuple(zip(enum.row_player, enum.row_key))
    decision_nodes = np.flatnonzero(decision)
    # First member in depth order is fine: every member has the same own reach.
    first = np.full(rows_total, n, dtype=np.int64)
    np.minimum.at(first, infoset[decision_nodes], decision_nodes)
    infoset_rep[:num_real] = first[:num_real]

    tensors = GameTensors(
        parent=parent, parent_slot=slot, node_kind=kind, node_player=player,
        node_infoset=infoset, edge_owner=edge_owner, edge_index=edge_index,
        chance_prob=prob, payoff=payoff, legal_mask=legal, abstraction_mask=kept,
        infoset_player=infoset_player, infoset_rep=infoset_rep)
    node_action = tuple(map(enum.action.__getitem__, order.tolist()))
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
                       infoset_keys=keys, infoset_actions=tuple(enum.row_actions),
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
