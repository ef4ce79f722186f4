"""Lowering: enumerate a game tree once on the host into padded NumPy tensors.

Nodes are numbered in depth order (each depth level a contiguous slice, and
within a level in pre-order, so the children of a level are grouped by parent
and their parent indices are sorted). Information sets of all players share one
row table with a trailing *sink* row that non-decision nodes point at.

The walk itself (and every contract check) is :mod:`jaxcfr.lowering.walk`; large trees are
walked by several processes (:mod:`jaxcfr.lowering.parallel`) into the same columns; the
size probe before walking is :mod:`jaxcfr.lowering.size`, the memory budget
:mod:`jaxcfr.lowering.budget`, and the on-disk cache of lowered games
:mod:`jaxcfr.lowering.cache`.

Shapes: ``N`` nodes, ``I`` information-set rows (sink included), ``A`` max
decision actions (chance edges use no row, so chance outcomes do not widen ``A``), ``P``
players, ``D`` levels.

Example::

    >>> import jaxcfr
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> lowered.infosets_per_player
    (6, 6)
"""

from __future__ import annotations

import ctypes
import dataclasses
import itertools
import operator
import os
from typing import Callable

import numpy as np

from jaxcfr._util.tabled import small_int_dtype, tabled
from jaxcfr.lowering import cache as _cache
from jaxcfr.lowering import parallel
from jaxcfr.lowering.budget import (MemoryBudgetError, cautious_nodes, cautious_rows,
                                    check_budget,
                                    default_memory_budget, footprint_bytes, format_bytes,
                                    memory_footprint)
from jaxcfr.game.abstraction import Abstracted, unwrap
from jaxcfr.game.bucketing import (Bucketed, abstract_game, find_bucketing,
                                   imperfect_recall_declared)
from jaxcfr.game.contract import GameError, check_nash_value, check_protocol
from jaxcfr.game.registry import game_string, load_game
from jaxcfr.game.validate import probe_blind_spots
from jaxcfr.lowering.size import TreeSize, probe_size
from jaxcfr.tensors import (CHANCE_NODE, DECISION, NO_PARENT, NO_PLAYER, TERMINAL_NODE,
                            GameTensors, LoweredGame)
from jaxcfr.lowering.columns import CHANCE_CODE, Enumeration, as_numpy
from jaxcfr.lowering.labels import NodeLabels, index_dtype
from jaxcfr.lowering.levels import depth_order
from jaxcfr.lowering.preorder import Preorder
from jaxcfr.lowering.keys import InfosetKeys
from jaxcfr.lowering.walk import fewer_collections, walk

__all__ = ["lower", "as_lowered", "sort_infosets", "MemoryBudgetError", "footprint_bytes",
           "default_memory_budget", "edge_index_dtype", "edge_columns"]

Progress = Callable[[int], None]
Log = Callable[[str], None]


def lower(game, *, abstraction=None, sort_infosets: bool = True,
          memory_budget: int | None = None, name: str = "", progress: Progress | None = None,
          log: Log | None = None, workers: int | None = None,
          size: TreeSize | None | bool = None, probe: bool = True) -> LoweredGame:
    """Enumerate ``game`` and check its contract on every node.

    Args:
      game: the root state; it is not modified. An :class:`jaxcfr.Abstracted` game is
        walked as its wrapped game with its abstraction (below).
      abstraction: an :class:`jaxcfr.Abstraction` (``None``: keep all): lower
        ``Abstracted(game, abstraction)``, the smaller game. Only kept actions are
        walked (the subtrees below dropped actions are never enumerated), rows hold
        the kept actions in the abstraction's order (``infoset_actions``, ``A``
        counts kept actions), and the wrapped game's contract is checked at every
        node reached, the abstraction's rules too (``abstraction-*``, including the
        same kept actions in the same order across an information set). A bucketing
        (``bucket(player, key)``) lowers :class:`jaxcfr.Bucketed` ``(game, it)`` instead,
        and an object with both methods both (:func:`jaxcfr.game.bucketing.abstract_game`).
        A bucketed game that declares imperfect recall is walked in one process and
        its members' own sequences may differ (absent-mindedness is still refused).
      sort_infosets: put rows in Gambit's canonical order (grouped by player, each
        player's information sets by their first member's pre-order number);
        otherwise rows keep the order in which the walk first met them.
      memory_budget: bytes; lowering stops early with :class:`MemoryBudgetError`
        when the estimate exceeds it (default :func:`default_memory_budget`): before
        walking when the size estimate is clearly over it, then every few thousand
        nodes during the walk.
      progress: ``progress(nodes_walked)``, called every few thousand nodes; when it has an
        ``expect(nodes)`` attribute, that is called first with the size estimate (a
        display's total: :meth:`jaxcfr.runs.progress.Status.nodes`).
      log: called with one-line messages (the size estimate, how the walk is split).
      workers: processes that walk the tree (``None``: all available cores for a
        large tree, see :func:`jaxcfr.lowering.parallel.default_workers`; 1: this process only).
        The result is identical either way, errors included.
      size: a size estimate already made (default: :func:`jaxcfr.probe_size`), or
        ``False``: no estimate (many small trees lowered one after another, such as
        :mod:`jaxcfr.engine.sampled_chance`'s draws; the budget is then checked during the walk).
      probe: first run :func:`jaxcfr.game.validate.probe_blind_spots`'s clone probe on a few
        short trajectories (a clone that shares what ``step`` changes passes every node
        check of the walk and gives wrong numbers); ``False`` where the game's root was
        probed already (the draws and subgames of a probed game).

    Raises:
      GameError: a contract violation (including imperfect recall and absent-
        mindedness), naming the history and the information set.
      MemoryBudgetError: the game does not fit the memory budget.
    """
    if abstraction is not None:
        game = abstract_game(game, abstraction)
    if isinstance(game, (Abstracted, Bucketed)):
        name = name or game.name
    num_players = check_protocol(game)
    check_nash_value(game, num_players)              # before a long walk, not after it
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    outer = game
    game, abstraction = unwrap(game)
    perfect_recall = not imperfect_recall_declared(outer)
    if size is None:
        size = probe_size(outer)             # an abstracted game is smaller than its game
    elif size is False:
        size = None
    if size is not None:
        _check_estimate(size, num_players, budget, log)
        if hasattr(progress, "expect"):          # a display that shows a total
            progress.expect(size.nodes)
    workers = parallel.resolve_workers(workers, size) if perfect_recall else 1
    # the walk clones: a clone that shares what step changes would give wrong numbers
    # without a word, so it is probed first (validate's probe, which the walk skips)
    if probe:
        probe_blind_spots(game, num_players, transpositions=False)

    floor, rows_floor = cautious_nodes(size), cautious_rows(size)

    def on_check(enum: Enumeration, nodes: int) -> None:
        # the game's known size with the rows met so far (a lower bound on its rows)
        check_budget(max(nodes, floor), max(len(enum.row_actions) + 1, rows_floor),
                     enum.max_actions,
                     num_players, budget, what="found so far" if nodes >= floor else
                     "(the size estimate) and the rows found so far")
        if progress is not None:
            progress(nodes)

    # The walk and the tensors make millions of young objects and no cycles.
    with fewer_collections():
        enum = None
        try:
            if workers > 1:
                enum = parallel.walk_parallel(game, num_players, abstraction,
                                              workers=workers, size=size, budget=budget,
                                              progress=progress, log=log)
            if enum is None:
                enum = walk(game, num_players, abstraction, on_check=on_check,
                            perfect_recall=perfect_recall)
        except GameError as e:
            if e.rule != "perfect-recall" or find_bucketing(outer) is None:
                raise
            raise GameError(e.detail + " (this bucketing makes the player forget: declare it "
                            "with Bucketed(game, bucketing, imperfect_recall=True))",
                            rule=e.rule, history=e.history, infoset=e.infoset) from None
        nodes = len(enum)
        check_budget(nodes, len(enum.row_actions) + 1, enum.max_actions, num_players, budget,
                     what="in all")
        if progress is not None:
            progress(nodes)
        _check_index_width(len(enum.row_actions) + 1, enum.max_actions)
        _release_free_memory()          # (the walk's temporaries: the build's peak is lower)
        lowered = _build(enum, outer, name, sort=sort_infosets)
        del enum
        if not perfect_recall:
            lowered = dataclasses.replace(lowered, perfect_recall=False)
    _release_free_memory()
    return lowered


def _release_free_memory() -> None:
    """Give the C heap's free pages back to the system after a walk (glibc's
    ``malloc_trim``; nothing elsewhere). The walk's columns and temporaries are freed by
    then, but the C heap keeps the pages they lay on: measured 35-45 bytes per node of
    resident memory that no object held (docs/lowering.md)."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            _malloc_trim = ctypes.CDLL(None).malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


def _check_index_width(rows: int, max_actions: int) -> None:
    """Past 2^31 row-slots the edge index is int64 (:func:`edge_index_dtype`); JAX keeps
    int64 on the device only with ``jax_enable_x64`` (else it would cut the indices to
    int32 and gather the wrong slots), so the game is refused without it."""
    if edge_index_dtype(rows, max_actions) == np.int32:
        return
    import jax      # (only here: a game this large; lowering itself never needs JAX)
    if not jax.config.read("jax_enable_x64"):
        raise MemoryBudgetError(
            f"{rows:,} information-set rows x {max_actions} actions need 64-bit edge "
            f"indices ({rows * max_actions:,} row-slots, past 2^31): enable them with "
            "JAX_ENABLE_X64=1 (or jax.config.update('jax_enable_x64', True)) before "
            "lowering", rule="memory-budget")


def _check_estimate(size: TreeSize, num_players: int, budget: int, log: Log | None) -> None:
    """Say the size; stop before walking when even a cautious estimate is over the budget
    (the rows counted when the game gave their number, :func:`cautious_rows`)."""
    rows = cautious_rows(size)
    need = memory_footprint(size.nodes, rows, max(1, size.max_actions), num_players).total
    if log is not None:
        log(f"{size.describe()}, about {format_bytes(need)} to lower and solve "
            f"(memory budget {format_bytes(budget)})")
    low = size.nodes if size.exact else size.low
    if footprint_bytes(low, rows, max(1, size.max_actions), num_players) > budget:
        counted = f" and {rows - 1:,} information sets" if rows else ""
        raise MemoryBudgetError(
            f"the game has {size.describe()}{counted}, which needs about {format_bytes(need)} to "
            f"lower and solve, over the memory budget of {format_bytes(budget)} (set "
            "memory_budget= or JAXCFR_MEMORY_BUDGET to raise it)", rule="memory-budget")


def as_lowered(game, *, cache=None, report: dict | None = None,
               **lower_kwargs) -> LoweredGame:
    """A game string, a Game or a LoweredGame as a LoweredGame (lowering it if needed).

    A game string names the lowered game (``LoweredGame.name``). With ``cache``
    (``True``: the default directory; or a directory), a game string is looked up
    in the on-disk cache of lowered games first and stored there after lowering
    (:mod:`jaxcfr.lowering.cache`; ``JAXCFR_NO_CACHE=1`` turns it off). ``report`` (a dict,
    optional) receives ``"cache"``: what the cache did (``hit: PATH``, ``stored: PATH``,
    ``off``, ...).
    """
    report = {} if report is None else report
    report["cache"] = "off"
    if isinstance(game, LoweredGame):
        report["cache"] = "not used: already lowered"
        return game
    name = lower_kwargs.pop("name", "")
    if isinstance(game, (str, os.PathLike)):
        text = os.fspath(game)
        name = name or text
        directory = _cache.resolve(cache)
        if directory is not None and lower_kwargs.get("abstraction") is None:
            lowered, report["cache"] = _cache.lower_cached(
                text, directory, lambda g: lower(g, name=name, **lower_kwargs),
                name=name, sort=lower_kwargs.get("sort_infosets", True),
                memory_budget=lower_kwargs.get("memory_budget"), log=lower_kwargs.get("log"))
            return lowered
        game = load_game(text)
    return lower(game, name=name, **lower_kwargs)


def _build(enum: Enumeration, game, name: str, sort: bool = False) -> LoweredGame:
    """Reorder the pre-order columns into depth order and fill the tensors; ``sort``: rows
    in :func:`sort_infosets`' order (renumbered here, before any ``[N]`` row column is
    made, so the result equals ``sort_infosets(_build(enum, ...))`` without its copies).

    Consumes ``enum``: each column is dropped once it is converted, and the payoffs are
    made while few tensors exist, so that the host's peak stays near the final tensors
    plus one column (docs/lowering.md).
    """
    num_players, max_actions = enum.num_players, enum.max_actions
    n = len(enum)
    num_real = len(enum.row_actions)
    if sort:
        _sort_rows(enum)
    if enum.levels is not None:
        # a merge's columns, in depth order already (jaxcfr.lowering.levels)
        levels, enum.levels = enum.levels, None
        level_start = levels.level_start
        table = enum.label_table
        node_action = NodeLabels(tuple(table), levels.label.astype(index_dtype(len(table)),
                                                                   copy=False))
        enum.label_table = enum.code = None
        constant_sum = None
        returns = levels.returns.reshape(-1, num_players)
        payoff = tabled(n, levels.at, returns, np.zeros(num_players))
        if len(levels.at):
            constant_sum = _constant_sum(returns, levels.at)
        del returns
        prob = tabled(n, levels.chance_at, levels.chance_prob, 1.0)
        parent, slot, code = levels.parent, levels.slot, levels.code
        del levels
    else:
        # depth order, pre-order within a level: the pre-order number of each node in depth
        # order (int32 below 2^31 nodes), by a stable counting sort in chunks
        order, level_start = depth_order(np.asarray(enum.depth))
        enum.depth = None
        # [N] labels: the walk's (or merge's) entries into its table of distinct labels, one
        # byte or two a node (jaxcfr.lowering.labels)
        table = enum.label_table
        node_action = NodeLabels(tuple(table), np.asarray(enum.label)[order]
                                 .astype(index_dtype(len(table)), copy=False))
        enum.label = enum.label_table = None
        new_of_old = np.empty(n, dtype=np.int32)
        for lo in range(0, n, _CHUNK):
            new_of_old[order[lo:lo + _CHUNK]] = np.arange(lo, min(n, lo + _CHUNK), dtype=np.int32)
        # the payoffs: the terminals' returns as distinct rows and a small index per node
        # (jaxcfr._util.tabled; zero elsewhere), never an [N, P] array of floats
        constant_sum = None
        returns = as_numpy(enum.returns, np.float64).reshape(-1, num_players)
        at = new_of_old[as_numpy(enum.terminals, np.int32)]
        payoff = tabled(n, at, returns, np.zeros(num_players))
        if len(at):
            constant_sum = _constant_sum(returns, at)
        del returns, at
        enum.terminals = enum.returns = None
        # the chance probabilities: those of chance edges (every other edge has 1) likewise
        at = as_numpy(enum.chance_at, np.int64)
        prob = tabled(n, new_of_old[at], as_numpy(enum.chance_prob, np.float64), 1.0)
        enum.chance_at = enum.chance_prob = None
        del at

        parent = as_numpy(enum.parent, np.int32)[order]
        enum.parent = None
        root = parent == NO_PARENT
        parent = new_of_old.take(parent, mode="wrap")          # (a root's -1: fixed below)
        parent[root] = NO_PARENT
        del root, new_of_old
        # slots (the walk's, already narrow) and players in the smallest signed int that holds
        # them (int8 on most games; the device and the fingerprint see int32:
        # jaxcfr.tensors.WIDE_DTYPES)
        slot = np.asarray(enum.slot)[order]
        enum.slot = None
        code = as_numpy(enum.code, np.int32)[order]
        enum.code = None
        del order               # (the pre-order numbers are made again when read: Preorder)
    sink = num_real
    decision = code >= 0
    kind = np.full(n, TERMINAL_NODE, dtype=np.int8)
    kind[decision] = DECISION
    chance = code == CHANCE_CODE
    kind[chance] = CHANCE_NODE
    row_player = np.asarray(enum.row_player + [NO_PLAYER], dtype=np.int32)
    player = np.full(n, -1, dtype=small_int_dtype(num_players))
    player[decision] = row_player[code[decision]]
    player[chance] = num_players
    del chance
    code[~decision] = sink
    infoset = code
    del code

    edge_owner, edge_index = edge_columns(parent, slot, kind, player, infoset, num_players,
                                          max_actions, sink)

    rows_total = num_real + 1
    # A row's slots are its kept actions (all its legal actions without an abstraction).
    lengths = np.fromiter(itertools.chain(map(len, enum.row_kept), (1,)), np.int64,
                          len(enum.row_kept) + 1)
    legal = np.arange(max_actions)[None, :] < lengths[:, None]
    infoset_player = row_player.copy()
    infoset_rep = np.zeros(rows_total, dtype=np.int32)
    keys = InfosetKeys(enum.row_player, enum.row_key)
    decision_nodes = np.flatnonzero(decision)
    del decision
    # First member in depth order is fine: every member has the same own reach.
    first = np.full(rows_total, n, dtype=np.int64)
    np.minimum.at(first, infoset[decision_nodes], decision_nodes)
    infoset_rep[:num_real] = first[:num_real]
    del decision_nodes, first

    tensors = GameTensors(
        parent=parent, parent_slot=slot, node_kind=kind, node_player=player,
        node_infoset=infoset, edge_owner=edge_owner, edge_index=edge_index,
        chance_prob=prob, payoff=payoff, legal_mask=legal,
        infoset_player=infoset_player, infoset_rep=infoset_rep)
    nash = check_nash_value(game, num_players)
    br_rounds = _most_own_decisions(parent, edge_owner, level_start, num_players) + 1
    return LoweredGame(tensors=tensors, level_start=level_start, num_players=num_players,
                       infoset_keys=keys, infoset_actions=tuple(enum.row_kept),
                       preorder=Preorder(parent, level_start),
                       node_action=node_action,
                       nash_value=None if nash is None else tuple(float(v) for v in nash),
                       constant_sum=constant_sum, br_rounds=br_rounds,
                       name=name or game_string(game) or type(game).__name__)


#: Nodes per chunk of the build's passes that would otherwise make ``[N]`` int64 temporaries.
_CHUNK = 1 << 16


def _constant_sum(returns: np.ndarray, at: np.ndarray) -> float | None:
    """The sum of every terminal's returns (``returns [T, P]``, at nodes ``at [T]``) when
    all are close to the first terminal's in depth order (``np.allclose(sums, first,
    rtol=1e-9, atol=1e-12 * max(1, max |sums|))``), else ``None``; by chunks."""
    first = returns[int(np.argmin(at))].sum()
    largest = deviation = 0.0
    for lo in range(0, len(returns), _CHUNK):
        sums = returns[lo:lo + _CHUNK].sum(axis=1)
        largest = max(largest, float(np.abs(sums).max()))
        deviation = max(deviation, float(np.abs(sums - first).max()))
    atol = 1e-12 * max(1.0, largest)
    return float(first) if deviation <= atol + 1e-9 * abs(first) else None


def edge_index_dtype(rows: int, max_actions: int) -> np.dtype:
    """``int32`` while every ``row * A + slot`` of ``rows`` rows (sink included) fits it,
    else ``int64`` (chosen automatically; about 1.5e8 rows of 14 actions)."""
    return np.dtype(np.int32 if int(rows) * int(max_actions) < 2 ** 31 else np.int64)


def edge_columns(parent, slot, kind, player, infoset, num_players: int, max_actions: int,
                 sink: int) -> tuple[np.ndarray, np.ndarray]:
    """``(edge_owner, edge_index)``, both ``[N]``: the player who chose the edge into each
    node (``P`` for chance and the root) and its ``row * A + slot`` (the sink's slot 0 for
    chance edges and the root), in :func:`edge_index_dtype` of ``sink + 1`` rows.

    ``parent``, ``slot``, ``player``, ``infoset`` are ``[N]`` ints, ``kind`` ``[N]`` node
    kinds (``jaxcfr.tensors``)."""
    dtype = edge_index_dtype(sink + 1, max_actions)
    safe_parent = np.maximum(parent, 0)
    parent_is_decision = kind[safe_parent] == DECISION
    parent_is_decision &= parent != NO_PARENT
    edge_owner = player[safe_parent]
    edge_owner[~parent_is_decision] = num_players
    edge_index = infoset[safe_parent].astype(dtype, copy=False)
    edge_index *= max_actions
    edge_index += slot
    edge_index[~parent_is_decision] = sink * max_actions
    return edge_owner, edge_index


def _most_own_decisions(parent, edge_owner, level_start, num_players) -> int:
    """The most decisions one player makes on any path (level by level, one player at a time)."""
    most = 0
    own = np.zeros(len(parent), dtype=np.int32)
    for p in range(num_players):
        own[:] = 0
        for d in range(1, len(level_start) - 1):
            lo, hi = level_start[d], level_start[d + 1]
            own[lo:hi] = own[parent[lo:hi]] + (edge_owner[lo:hi] == p)
        most = max(most, int(own.max(initial=0)))
    return most


def _row_order(row_player) -> np.ndarray:
    """:func:`sort_infosets`' row order (new -> old, ``[I - 1]``): rows by player, then by
    the pre-order number of their first member. A walk (or a merge) numbers its rows in
    that very order, as it first meets them in pre-order, so a stable sort by player
    gives it (no pass over the nodes)."""
    return np.argsort(np.asarray(row_player, np.int32), kind="stable")


def _sort_rows(enum: Enumeration) -> None:
    """Renumber ``enum``'s rows in :func:`sort_infosets`' order: its ``code`` column in
    place (a walk's own, or a merge's) and its row lists."""
    num_real = len(enum.row_actions)
    code = as_numpy(enum.code, np.int32)
    perm = _row_order(enum.row_player)
    old_to_new = np.empty(num_real, dtype=np.int32)
    old_to_new[perm] = np.arange(num_real, dtype=np.int32)
    decision = code >= 0
    code[decision] = old_to_new[code[decision]]
    del decision, code
    order = perm.tolist()
    for field in ("row_player", "row_key", "row_actions", "row_kept", "row_seq"):
        setattr(enum, field, list(_take(getattr(enum, field), order)))


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
    del decision
    perm = np.lexsort((first_pre[:num_real], t.infoset_player[:num_real]))  # new -> old
    perm = np.concatenate([perm, [num_real]])
    old_to_new = np.empty(len(perm), dtype=t.edge_index.dtype)    # (int64 past 2^31 slots)
    old_to_new[perm] = np.arange(len(perm), dtype=t.edge_index.dtype)
    a = lowered.max_actions
    edge_index = old_to_new[t.edge_index // a]
    edge_index *= a
    edge_index += t.edge_index % a
    tensors = t._replace(
        node_infoset=old_to_new[t.node_infoset].astype(t.node_infoset.dtype, copy=False),
        edge_index=edge_index,
        legal_mask=t.legal_mask[perm],
        infoset_player=t.infoset_player[perm], infoset_rep=t.infoset_rep[perm])
    return dataclasses.replace(
        lowered, tensors=tensors,
        infoset_keys=_take_keys(lowered.infoset_keys, perm[:-1]),
        infoset_actions=_take(lowered.infoset_actions, perm[:-1].tolist()))


def _take_keys(keys, perm: np.ndarray):
    """``keys`` (an :class:`InfosetKeys` or a tuple of pairs) in the order ``perm``."""
    if isinstance(keys, InfosetKeys):
        return InfosetKeys(keys.players[perm], _take(keys.keys, perm.tolist()))
    return _take(keys, perm.tolist())


def _take(values: tuple, indices: list) -> tuple:
    """``tuple(values[i] for i in indices)``, the loop in C."""
    if len(indices) > 1:
        return operator.itemgetter(*indices)(values)
    return tuple(values[i] for i in indices)
