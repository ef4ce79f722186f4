"""The host tree walk: enumerate a game once, checking its contract at every node.

:func:`walk` visits the tree iteratively in pre-order and records one row of
compact typed columns per node (:class:`Enumeration`); :mod:`jaxcfr.lowering.lower`
turns them into tensors. The same walk serves three callers: the whole tree
(serial lowering), the top of a tree cut at one depth (the frontier items become
the jobs of :mod:`jaxcfr.lowering.parallel`), and one such job in a worker process (seeded
with the top's information sets so that every member is checked against one).

Host memory per node during the walk: ``parent``, ``slot``, ``depth``, ``code``
(4 bytes each), ``prob`` (8) and a reference to the action label (8), plus 4 + 8P
bytes per terminal: about 40 bytes (the per-node figures are in docs/lowering.md).

Example::

    >>> import jaxcfr
    >>> from jaxcfr.lowering.walk import walk
    >>> len(walk(jaxcfr.load_game("kuhn_poker"), 2, None).parent)
    58
"""

from __future__ import annotations

import math
from array import array
from typing import Any, Callable, Hashable

from jaxcfr.game import contract
from jaxcfr.game.abstraction import kept_actions
from jaxcfr.game.contract import (TERMINAL, GameError, clone_error, format_history, game_exception,
                             hashable_key, inspect_node,
                             player_to_act_consistent)

__all__ = ["Enumeration", "walk", "CHANCE_CODE", "TERMINAL_CODE", "SLOT_RADIX", "CHECK_EVERY",
           "ROOT_PARENT"]

#: ``Enumeration.code`` of a chance node (decision nodes store their row, >= 0).
CHANCE_CODE = -1
#: ``Enumeration.code`` of a terminal node.
TERMINAL_CODE = -2
#: Radix of the own-sequence ids ``row * SLOT_RADIX + slot`` (more than any action count).
SLOT_RADIX = 1 << 32
#: What the terminal fast path takes as returns (anything else gets the full check).
_SEQUENCES, _NUMBERS = (tuple, list), {float, int}
#: Nodes between two calls of the walk's ``on_check`` (memory budget, progress).
CHECK_EVERY = 4096
#: ``Enumeration.parent`` of the first node of a walk (the root, or a job's subtree root).
ROOT_PARENT = -1


class Enumeration:
    """The columns of one iterative pre-order walk, indexed by pre-order number.

    Per node (typed ``array`` columns, or NumPy arrays once merged):
    ``parent`` (int32), ``slot`` (int32, action slot into it), ``depth`` (int32),
    ``prob`` (float64, chance probability into it, else 1), ``code`` (int32: the
    information-set row of a decision node, :data:`CHANCE_CODE` or
    :data:`TERMINAL_CODE`) and ``action`` (a list: the label into it). Per
    terminal: ``terminals`` (int32 node) and ``returns`` (float64, ``P`` per terminal,
    flat). Per information-set row: ``row_player``, ``row_key``, ``row_actions``
    (the walked game's legal actions), ``row_kept`` (the actions kept by the
    abstraction, in its order: the row's slots; the same object when all are kept) and ``row_seq`` (the owner's own last ``row * SLOT_RADIX + slot``
    before the row, -1 for none: by induction this names the whole own sequence).
    A walk cut at a depth also has ``frontier``: ``(nodes walked before it, item)``
    per stack item at the cut, in pre-order.
    """

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.parent = array("i")
        self.slot = array("i")
        self.depth = array("i")
        self.action: list[Any] = []
        self.prob = array("d")
        self.code = array("i")
        self.terminals = array("i")
        self.returns = array("d")
        self.row_player: list[int] = []
        self.row_key: list[Hashable] = []
        self.row_actions: list[tuple] = []
        self.row_kept: list[tuple] = []
        self.row_seq: list[int] = []
        self.max_actions = 1
        self.frontier: list[tuple[int, tuple]] = []
        self.rows_of: list[dict] | None = None     # per player key -> row, once asked for

    def __len__(self) -> int:
        return len(self.code)

    def path(self, node: int) -> tuple:
        """The action path from the first node of the walk to ``node`` (for error messages)."""
        out = []
        while self.parent[node] != ROOT_PARENT:
            out.append(self.action[node])
            node = self.parent[node]
        return tuple(reversed(out))

    def seed_rows(self, top: "Enumeration") -> list[dict]:
        """Start from ``top``'s information-set rows (a job below a cut walk); returns
        the per-player ``key -> row`` tables to extend."""
        self.row_player = list(top.row_player)
        self.row_key = list(top.row_key)
        self.row_actions = list(top.row_actions)
        self.row_kept = list(top.row_kept)
        self.row_seq = list(top.row_seq)
        self.max_actions = top.max_actions
        return [d.copy() for d in top.row_tables()]

    def row_tables(self) -> list[dict]:
        """Per player, ``key -> row`` of this walk's rows (built once, then kept)."""
        if self.rows_of is None:
            self.rows_of = [{} for _ in range(self.num_players)]
            for row, (p, key) in enumerate(zip(self.row_player, self.row_key)):
                self.rows_of[p][key] = row
        return self.rows_of


def root_item(game, num_players: int) -> tuple:
    """The walk's first stack item: ``(state, parent, slot, depth, seq, action, prob)``."""
    return (game.clone(), ROOT_PARENT, 0, 0, (-1,) * num_players, None, 1.0)


def _inspect(state, enum: Enumeration, node: int) -> Any:
    """The full node-local check of :mod:`jaxcfr.game.contract` (rules in their canonical order).

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


def walk(game, num_players: int, abstraction, *, start: list | None = None,
         on_check: Callable[[Enumeration, int], None] | None = None, cut_depth: int = -1,
         seed: Enumeration | None = None, perfect_recall: bool = True) -> Enumeration:
    """Walk the whole tree once, iteratively in pre-order, checking the contract at every node.

    Every rule of :func:`jaxcfr.validate` is checked on every node (including a
    path longer than ``MAX_TRAJECTORY_LENGTH``), plus enumerable chance, strong
    perfect recall and absent-mindedness. Decision and terminal nodes take a fast
    path with the same rules: a cheap test that is exact on valid nodes, and the
    full :func:`_inspect` when it fails, so that errors are reported alike.
    Legal actions are checked for emptiness and duplicates once per information
    set; every other member must list the same tuple. ``step(None)`` is probed at
    every terminal node on the state itself (it is not used again), not on a clone.

    Args:
      game: the root state (not modified; ignored when ``start`` is given).
      num_players: ``P``.
      abstraction: ``None`` or an object with ``actions(state, player)``.
      start: the stack items to walk from (default: the root's, :func:`root_item`).
      on_check: ``on_check(enum, nodes_walked)`` every :data:`CHECK_EVERY` nodes
        (the memory budget and progress); it may raise to stop the walk.
      cut_depth: stack items at this depth are not walked but recorded in
        ``frontier`` (-1: walk everything).
      seed: an enumeration whose information-set rows this walk starts from.
      perfect_recall: ``False`` accepts members of an information set whose own
        earlier sequences differ (imperfect recall, declared by a bucketing:
        :func:`jaxcfr.game.bucketing.imperfect_recall_declared`); absent-mindedness is
        refused either way.
    """
    enum = Enumeration(num_players)
    rows_of: list[dict] = [{} for _ in range(num_players)] if seed is None else \
        enum.seed_rows(seed)     # per player: key -> row
    add_parent, add_slot, add_depth = enum.parent.append, enum.slot.append, enum.depth.append
    add_action, add_prob, add_code = enum.action.append, enum.prob.append, enum.code.append
    add_terminal, add_returns = enum.terminals.append, enum.returns.extend
    row_actions, row_kept, row_seq = enum.row_actions, enum.row_kept, enum.row_seq
    isfinite, radix, P = math.isfinite, SLOT_RADIX, num_players
    max_actions = enum.max_actions
    next_check = CHECK_EVERY
    max_depth = contract.MAX_TRAJECTORY_LENGTH
    frontier = enum.frontier

    stack: list[tuple] = list(reversed(start)) if start is not None else \
        [root_item(game, num_players)]
    pop, push = stack.pop, stack.append
    node = -1
    while stack:
        item = pop()
        state, parent, slot, depth, seq, action, prob = item
        if depth == cut_depth:
            frontier.append((node + 1, item))
            continue
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
            next_check += CHECK_EVERY
            enum.max_actions = max_actions
            if on_check is not None:
                on_check(enum, node)
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
                add_code(TERMINAL_CODE)
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
                add_code(CHANCE_CODE)
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
                if not acts or len(set(acts)) != len(acts):
                    _inspect(state, enum, node)     # the walked game's own contract first
                kept = kept_actions(abstraction, state, player, acts)
            k = len(kept)
            new_row = row is None
            if new_row:
                try:
                    bad = not k or len(set(acts)) != len(acts)
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
                if k > max_actions:
                    max_actions = k
            elif acts != row_actions[row] or seq[player] != row_seq[row] \
                    or (abstraction is not None and kept != row_kept[row]):
                if acts != row_actions[row]:
                    _inspect(state, enum, node)
                _infoset_error(enum, node, row, key, player, acts, kept, perfect_recall)
            add_code(row)
            head, tail, base = seq[:player], seq[player + 1:], row * radix
            clone, d1 = state.clone, depth + 1
            # Is the first clone a new object (every node), and does stepping it leave the
            # state as it was (each row's first member: it costs a call)?
            last = k - 1 if k > 1 else -1
            j = k
            try:
                # a row's slots are its kept actions, in the abstraction's order
                for j in range(k - 1, -1, -1):
                    child = clone() if j else state
                    child.step(kept[j])
                    push((child, node, j, d1, head + (base + j,) + tail, kept[j], 1.0))
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


def _infoset_error(enum: Enumeration, node: int, row: int, key, player: int, actions, kept,
                   perfect_recall: bool = True):
    """Raise for a member of ``row`` that disagrees with the first member.

    Same legal actions, same kept actions, same own sequence (strong perfect
    recall), in that order; a different own sequence on a path that already
    passed through ``row`` is absent-mindedness. Without ``perfect_recall`` a
    different own sequence is accepted (returns) unless it is absent-minded.
    """
    def first() -> str:          # a scan of the nodes: only for the message
        return format_history(enum.path(_first_member(enum, row)))
    if actions != enum.row_actions[row]:
        raise GameError(f"legal actions {list(actions)} differ from "
                        f"{list(enum.row_actions[row])} at history {first()} in the same "
                        "information set", rule="infoset-actions", history=enum.path(node),
                        infoset=key)
    if kept != enum.row_kept[row]:
        raise GameError(f"abstraction kept {list(kept)} here but {list(enum.row_kept[row])} at "
                        f"history {first()} in the same information set",
                        rule="abstraction-order", history=enum.path(node), infoset=key)
    n = enum.parent[node]
    while n != ROOT_PARENT:
        if enum.code[n] == row:
            raise GameError(
                f"game does not have perfect recall: player {player}'s information set {key!r} "
                "is absent-minded (this history passes through it twice)",
                rule="absent-minded", history=enum.path(node), infoset=key)
        n = enum.parent[n]
    if not perfect_recall:
        return
    raise GameError(
        f"game does not have perfect recall: in player {player}'s information set {key!r}, "
        f"this history and the first member (history {first()}) differ in that player's own "
        "earlier (information set, action) sequence", rule="perfect-recall",
        history=enum.path(node), infoset=key)


def _first_member(enum: Enumeration, row: int) -> int:
    return enum.code.index(row)
