"""Lowering a PublicGame: walk the public tree once, emit dense ``[public nodes, hands]`` tables.

:func:`lower_public` walks the public tree breadth first (so nodes come out in depth
order, children grouped by parent, as the history-tree lowering's), checking every node
(:func:`jaxcfr.game.public_contract.inspect_public`), and returns a
:class:`PublicLowered`: the :class:`~jaxcfr.tensors.PublicTensors` and the host tables
that name rows. Its cost follows the public tree and the hand counts, never the
number of histories: one Python visit per public node, then NumPy over hands.

Choices (and why):

* Rows are (player, public decision node, hand), ``H_p`` per decision node of player
  ``p`` (``node_base[n] + h``, ``h < H_p``; ``decision_row [D + 1]`` holds each
  decision's first row): a node's rows are one contiguous block of its player's hands
  alone (no padding rows for the other player's larger count: on the README flop 36.1
  million rows, not 43.0), gathered as ``[decisions, H, A]`` hand vectors where the
  passes read them (a row that is not there reads as the sink) and written back by one
  scatter. Every hand of the acting player gets a row, also a
  hand the public chance blocked there (it is never reached: its counterfactual values
  and its averaging weight are 0, and its strategy stays uniform); the history tree has
  no such information set.
* Blocked hands are stored once per distinct blocked set (``alive [K, P, H]``,
  ``node_path [N]``): in Leduc 27 sets (no board, or one of 26 board cards) for any
  number of nodes.
* Compatibility between hands (card removal) and the deal's normaliser are one dense
  ``[H, H]`` table; payoff tables are stored once per distinct table (liar's dice: one
  per (last bid, caller)), oriented for each player with the compatibility folded in.
  Strength tables are stored once per distinct table (a hold'em board), whatever the
  showdowns' stakes, so the ranked operators' index tables follow the boards.

The memory budget (:mod:`jaxcfr.lowering.budget`, ``memory_budget=`` or
``JAXCFR_MEMORY_BUDGET``) is checked as for a history tree: :func:`public_footprint`
gives the bytes of lowering and solving from the public tree's sizes (public nodes,
decision nodes, hands, actions, blocked-hand sets, terminals, strength and payoff
tables), and the walk refuses a game over the budget with :class:`MemoryBudgetError`
after every level of the public tree and before the ``[rows, A]``, ``[K, P, H]`` and
``[U, P, H, H]`` tables are allocated.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxcfr.lowering.budget import (MemoryBudgetError, MemoryFootprint,
                                    default_memory_budget, format_bytes)
from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE, GameError
from jaxcfr.game.public import PublicCounts, PublicGame
from jaxcfr.game.public_values import Fold, Showdown
from jaxcfr.game.public_contract import HandInfo, inspect_public, read_hands
from jaxcfr.game.registry import game_constructor, load_game, parse_game_string
from jaxcfr.tensors import (LEAN_NODE_ENTRIES, NO_PARENT, NO_PLAYER, PublicStructure,
                            PublicTensors, decision_rows, ranked_chunk)

__all__ = ["PublicLowered", "lower_public", "public_game_of", "public_footprint",
           "PublicSize", "check_public_budget", "merge_levels", "Located", "LocatedStep",
           "STATE_TABLES", "evaluation_overlap_fits", "counted_size", "least_public_size",
           "walked_outcomes"]


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PublicLowered:
    """A PublicGame lowered to tensors, with the host tables that name its rows."""
    tensors: PublicTensors
    level_start: tuple[int, ...]          # [D + 1]
    hands: HandInfo                       # the players' hands (labels, weights, cards)
    node_action: tuple                    # [N] the public action or outcome into each node
    node_kind: np.ndarray                 # [N] int8 DECISION / CHANCE_NODE / TERMINAL_NODE
    node_actions: tuple                   # [N] legal actions at decisions (() elsewhere)
    constant_sum: float | None = None     # the sum of payoffs when constant, else None
    nash_value: tuple | None = None
    name: str = ""
    ranked: bool = False                  # folds and showdowns by the ranked operators
    widths: tuple = ()                    # [D + 1] most children of a node, per level
    merged: tuple = ()                    # [E] (chance node, outcome) of each merged
                                          # outcome (tensors.merge_*): not walked, its
                                          # subtree read from its class's representative
    merge_renaming: tuple = ()            # [E] {later step: its counterpart after the
                                          # representative} per merged outcome (empty:
                                          # later steps unchanged; locate())
    padded_hands: tuple = ()              # [P] each player's hands padded to a bucket
                                          # (jaxcfr.lowering.public_buckets; the
                                          # structure's H_p): hands past the real count
                                          # are padding rows; (): not padded
    unpadded: Any = None                  # the game before its hands were padded (a
                                          # padded game's; None otherwise)

    # what the Runner, the evaluation and profiles read of any lowered game
    # (jaxcfr.engine.runner, jaxcfr.solvers.analytics, jaxcfr.profiles.profile)
    batch_size = None                     # a single game
    members = ()
    br_rounds = 1                         # (the public kernel's best response is one pass)
    perfect_recall = True

    @property
    def num_players(self) -> int:
        """``P``: the players (2, or more with dense payoff tables)."""
        return len(self.hands.labels)

    @functools.cached_property
    def infoset_keys(self) -> tuple:
        """``[I - 1]`` the ``(player, (hand label, public history))`` of every row, ``None``
        at a padding row: :meth:`row_keys` as the information-set keys a
        :class:`~jaxcfr.profiles.profile.Profile` is keyed by (those of the expanded
        history tree, :mod:`jaxcfr.game.public_expand`)."""
        return tuple(self.row_keys())

    @functools.cached_property
    def infoset_actions(self) -> tuple:
        """``[I - 1]`` the action labels of every row (``()`` at a padding row)."""
        t = self.tensors
        out: list = [()] * (self.num_rows - 1)
        for n in np.flatnonzero(t.node_base >= 0):
            base = int(t.node_base[n])
            acts = tuple(self.node_actions[n])
            for h in range(len(self.hands.labels[int(t.node_player[n])])):
                out[base + h] = acts
        return tuple(out)

    def __repr__(self) -> str:
        rows = "+".join(f"{n:,}" for n in self.rows_per_player)
        padded = (f" (padded to {'+'.join(str(h) for h in self.padded_hands)})"
                  if self.padded_hands else "")
        return (f"PublicLowered({self.name or '?'}: {self.num_nodes:,} public nodes, "
                f"{'+'.join(str(len(h)) for h in self.hands.labels)} hands{padded}, "
                f"{rows} rows, "
                f"{self.max_actions} actions max, depth {len(self.level_start) - 2})")

    @functools.cached_property
    def structure(self) -> PublicStructure:
        """The static facts of the compiled passes (derived once: the legal groups
        reduce the ``[I, A]`` legal mask, which every solve and evaluation asks for)."""
        t = self.tensors
        owner = np.asarray(t.node_player)[np.asarray(t.decision_node)]
        hands = self.padded_hands or tuple(len(x) for x in self.hands.labels)
        legal = (np.asarray(t.decision_legal)[:-1]
                 & (np.asarray(hands)[owner] > 0)[:, None])             # [D, A] own hands'
        count = legal.sum(axis=1)                                       # [D] legal actions
        groups = tuple(tuple((int(k), int(n)) for k, n in zip(*np.unique(
            count[owner == p], return_counts=True))) for p in range(self.num_players))
        return PublicStructure(self.level_start, self.num_players, hands, self.ranked,
                               self.widths, tuple(int(n) for n in np.bincount(
                                   owner, minlength=self.num_players)),
                               merge_levels(t.merge_parent, self.level_start), groups)

    @property
    def num_nodes(self) -> int:
        return int(self.tensors.parent.shape[0])

    @property
    def num_rows(self) -> int:
        """Rows including the sink (``I``)."""
        return int(self.tensors.row_shape[0])

    @property
    def max_actions(self) -> int:
        return int(self.tensors.row_shape[1])

    @property
    def rows_per_player(self) -> tuple[int, ...]:
        owner = np.asarray(self.tensors.decision_player)
        count = np.asarray(self.tensors.hand_count)
        return tuple(int((owner == p).sum()) * int(count[p]) for p in range(self.num_players))

    @property
    def nbytes(self) -> int:
        return int(sum(np.asarray(t).nbytes for t in self.tensors))

    @property
    def compatibility(self) -> np.ndarray:
        """``[H_0, H_1]`` float64: ``compatible[h0, h1] / Z`` (the deal's normaliser) over
        each player's own hands, two players: what ``tensors.compat`` holds padded, on the
        host whatever the terminals (with ranked ones ``tensors.compat`` is empty: the
        ranked operators never read it)."""
        return np.asarray(self.hands.compatible, np.float64) / self.hands.deal_total

    @property
    def depth(self) -> int:
        return len(self.level_start) - 2

    @property
    def public_size(self) -> "PublicSize":
        """The sizes the memory budget counts (:func:`public_footprint`)."""
        t = self.tensors
        ends = len(t.fold_node) + len(t.show_node) + len(t.table_node)
        dense = len(t.table_node) + (0 if self.ranked else len(t.fold_node) + len(t.show_node))
        return PublicSize(self.num_nodes, len(t.decision_node), max(self.structure.hands),
                          self.max_actions, int(t.alive.shape[0]), ends, dense,
                          int(t.tables.shape[0]), int(t.strengths.shape[0]), self.ranked,
                          self.num_players, int(t.merge_parent.shape[0]), self.num_rows - 1)

    def sizes(self) -> dict[str, Any]:
        """The sizes ``jaxcfr inspect`` prints (``infosets``: each player's rows, those of
        hands blocked at their node included, padding rows not; ``hands``: each player's
        hand count; ``merged_outcomes``: the chance outcomes merged into a
        suit-isomorphic representative, when there are any)."""
        out = {"nodes": self.num_nodes, "infosets": list(self.rows_per_player),
               "max_actions": self.max_actions, "depth": self.depth, "bytes": self.nbytes,
               "hands": [len(x) for x in self.hands.labels], "tree": "public",
               "terminals": "ranked" if self.ranked else "dense"}
        if self.merged:
            out["merged_outcomes"] = len(self.merged)
        if self.padded_hands:
            out["padded_hands"] = list(self.padded_hands)
        return out

    def history(self, node: int) -> tuple:
        """The public actions and outcomes from the root to ``node``."""
        parent = self.tensors.parent
        path = []
        while parent[node] != NO_PARENT:
            path.append(self.node_action[node])
            node = int(parent[node])
        return tuple(reversed(path))

    def row_keys(self) -> list:
        """``[I - 1]`` the ``(player, (hand label, public history))`` of every real row:
        the information-set keys of the expanded game
        (:mod:`jaxcfr.game.public_expand`), for blocked hands too."""
        t = self.tensors
        out: list[Any] = [None] * (self.num_rows - 1)
        for n in np.flatnonzero(t.node_base >= 0):
            p = int(t.node_player[n])
            hist = self.history(int(n))
            base = int(t.node_base[n])
            for h, label in enumerate(self.hands.labels[p]):
                out[base + h] = (p, (label, hist))
        return out

    def merged_into(self, node: int, outcome) -> int | None:
        """The representative child that the merged outcome ``outcome`` of chance node
        ``node`` is read from (suit isomorphism: :attr:`merged`), else ``None``."""
        t = self.tensors
        for e, (n, x) in enumerate(self.merged):
            if n == node and x == outcome:
                return int(t.merge_child[e])
        return None

    @functools.cached_property
    def _merge_at(self) -> dict:
        """``{(chance node, outcome): e}`` of the merged outcomes."""
        return {(int(n), x): e for e, (n, x) in enumerate(self.merged)}

    def child(self, node: int, step) -> int | None:
        """The child of ``node`` its public action or outcome ``step`` leads to (``None``
        when no kept child has that label)."""
        t = self.tensors
        lo = int(t.first_child[node])
        for c in range(lo, lo + int(t.child_count[node])):
            if self.node_action[c] == step:
                return c
        return None

    def locate(self, history: tuple) -> "Located":
        """Where the public history ``history`` (the game's own actions and outcomes,
        merged outcomes included) is read in this tree.

        Off merged outcomes it is the node ``history`` leads to, every hand its own row.
        Through a merged outcome (suit isomorphism, :attr:`merged`) the subtree is its
        representative's with the hands renamed: the walk goes on at the representative,
        later steps renamed (:attr:`merge_renaming`), and player ``p``'s hand ``h`` is
        read at hand ``hands[p][h]`` of the node reached (``PublicTensors.merge_source``,
        composed along the path). Every reader of a profile maps a history this way
        (strategies, hand values, profiles, grids).

        Raises:
          ValueError: a step that is no public action or outcome there.
        """
        t = self.tensors
        hands = tuple(np.arange(len(x), dtype=np.int64) for x in self.hands.labels)
        renaming: dict = {}
        node, path = 0, []
        for x in tuple(history):
            y = _renamed(renaming, x)
            path.append(LocatedStep(node, x, y, hands))
            c = self.child(node, y)
            if c is None:
                e = _renamed(self._merge_at, (node, y), None) if self.merged else None
                if e is None:
                    raise ValueError(f"{x!r} is not a public action or outcome after "
                                     f"{tuple(s.step for s in path[:-1])!r}")
                hands = _through(hands, t.merge_source[e])
                renaming = _compose(renaming, self.merge_renaming[e]
                                    if self.merge_renaming else {})
                c = int(t.merge_child[e])
            node = c
        return Located(node, hands, tuple(path))

    def expanded(self):
        """Every public node of the game as the unmerged tree has it (a node under a
        merged outcome included, read from its representative): ``(node, history,
        hands)`` per public node, ``node`` this tree's, ``history`` the game's own,
        ``hands`` as :meth:`locate` gives them. Without merged outcomes: this tree's nodes,
        every hand its own row."""
        t = self.tensors
        identity = tuple(np.arange(len(x), dtype=np.int64) for x in self.hands.labels)
        merges: dict[int, list] = {}
        for e, (n, _) in enumerate(self.merged):
            merges.setdefault(int(n), []).append(e)
        stack = [(0, (), identity, {}, {})]          # (node, history, hands, ren, inverse)
        while stack:
            node, history, hands, ren, inv = stack.pop()
            yield node, history, hands
            lo = int(t.first_child[node])
            out = [(c, history + (inv.get(self.node_action[c], self.node_action[c]),), hands,
                    ren, inv) for c in range(lo, lo + int(t.child_count[node]))]
            for e in merges.get(node, ()):
                x = self.merged[e][1]
                ren2 = _compose(ren, self.merge_renaming[e] if self.merge_renaming else {})
                out.append((int(t.merge_child[e]), history + (inv.get(x, x),),
                            _through(hands, t.merge_source[e]), ren2,
                            {v: k for k, v in ren2.items()}))
            stack.extend(reversed(out))

    def expanded_rows(self) -> tuple[list, list, np.ndarray]:
        """The rows of the unmerged public tree: ``(keys [R], actions [R], rows [R])``,
        ``keys`` as :attr:`infoset_keys` (``(player, (hand label, public history))``),
        ``rows`` the row of this tree each is read from (:meth:`expanded`). Without merged
        outcomes: this tree's rows, padding dropped."""
        t = self.tensors
        keys, actions, rows = [], [], []
        for node, history, hands in self.expanded():
            base = int(t.node_base[node])
            if base < 0:
                continue
            p = int(t.node_player[node])
            acts = tuple(self.node_actions[node])
            for h, label in enumerate(self.hands.labels[p]):
                keys.append((p, (label, history)))
                actions.append(acts)
                rows.append(base + int(hands[p][h]))
        return keys, actions, np.asarray(rows, np.int64)

    def live_rows(self) -> np.ndarray:
        """``[I]`` bool: the rows the history tree has: a hand of positive weight, not
        blocked at its node, with a compatible opponent hand of positive weight not
        blocked there either."""
        t = self.tensors
        out = np.zeros(self.num_rows, bool)
        sizes = [len(x) for x in self.hands.labels]
        w = self.hands.weights
        P = self.num_players
        for n in np.flatnonzero(t.node_base >= 0):
            p = int(t.node_player[n])
            alive = t.alive[t.node_path[n]] > 0
            if P != 2:
                tuples = self.hands.dealt() > 0
                for q in range(P):
                    shape = [1] * P
                    shape[q] = -1
                    tuples = tuples & alive[q, :sizes[q]].reshape(shape)
                ok = tuples.any(axis=tuple(q for q in range(P) if q != p))
                out[t.node_base[n]:t.node_base[n] + sizes[p]] = ok
                continue
            a0 = alive[0, :sizes[0]] & (w[0] > 0)
            a1 = alive[1, :sizes[1]] & (w[1] > 0)
            pairs = self.hands.compatible & a0[:, None] & a1[None, :]
            ok = pairs.any(axis=1) if p == 0 else pairs.any(axis=0)
            out[t.node_base[n]:t.node_base[n] + sizes[p]] = ok
        return out


class LocatedStep(NamedTuple):
    """One step of a public history as :meth:`PublicLowered.locate` reads it."""
    node: int          # the node of the tree the step leaves
    step: Any          # the game's own action or outcome
    read: Any          # the step in the tree (renamed below a merged outcome)
    hands: tuple       # [P] of [H_p] ints: the row (of ``node``) of each hand there


class Located(NamedTuple):
    """A public history located in a (merged) public tree (:meth:`PublicLowered.locate`)."""
    node: int          # the node of the tree the history is read at
    hands: tuple       # [P] of [H_p] ints: player p's hand h is read at hand hands[p][h]
    path: tuple        # [len(history)] LocatedStep from the root


def _through(hands: tuple, source: np.ndarray) -> tuple:
    """``hands`` (``[P]`` of ``[H_p]``) composed with a merged outcome's ``merge_source``
    ``[P, H]``: hand ``h`` read at ``source[p][hands[p][h]]``."""
    return tuple(np.asarray(source[p], np.int64)[hands[p]] for p in range(len(hands)))


def _renamed(table: dict, x, default=...):
    """``table[x]``, else ``default`` (``x`` itself by default; an unhashable ``x`` is in
    no table)."""
    try:
        return table.get(x, x if default is ... else default)
    except TypeError:
        return x if default is ... else default


def _compose(first: dict, then: dict) -> dict:
    """The renaming ``then`` after ``first`` (``{step: counterpart}``, absent unchanged)."""
    if not first:
        return dict(then)
    out = {x: then.get(y, y) for x, y in first.items()}
    for x, y in then.items():
        out.setdefault(x, y)
    return out


def merge_levels(merge_parent: np.ndarray, level_start: tuple) -> tuple:
    """``PublicStructure.merges``: per level, the ``(start, end)`` of the merged outcomes
    (``merge_parent`` ``[E]``, ascending) whose chance node is on it; ``()`` when none."""
    merge_parent = np.asarray(merge_parent)
    if not merge_parent.shape[0]:
        return ()
    cut = np.searchsorted(merge_parent, np.asarray(level_start), "left")
    return tuple((int(cut[d]), int(cut[d + 1])) for d in range(len(level_start) - 1))


class PublicSize(NamedTuple):
    """The sizes of a lowered public tree that its memory depends on (see
    :class:`~jaxcfr.tensors.PublicTensors` for the letters)."""
    nodes: int                  # N public nodes
    decisions: int              # D decision nodes
    hands: int                  # H hands per player (the larger count)
    max_actions: int            # A
    alive_sets: int = 1         # K distinct sets of blocked hands
    terminals: int = 0          # T terminals (every operator)
    dense_terminals: int = 0    # terminals applied as [H, H] products on the device
    tables: int = 0             # U distinct payoff tables [P, H, H]
    strength_tables: int = 0    # S distinct strength tables [P, H]
    ranked: bool = False        # the ranked operators' index tables are made
    players: int = 2            # P (compatibility and payoff tables hold H^P entries)
    merged: int = 0             # E merged chance outcomes (merge_* tensors, [E, P, H])
    decision_rows: int = 0      # the decisions' rows: their players' hands summed (0: not
                                #   counted, D * H taken)

    @property
    def rows(self) -> int:
        """``I``: rows (player, decision node, hand) and the sink."""
        return (self.decision_rows or self.decisions * self.hands) + 1

    def describe(self) -> str:
        return (f"{self.nodes:,} public nodes ({self.decisions:,} decisions of up to "
                f"{self.hands:,} hands: {self.rows - 1:,} rows of up to {self.max_actions} "
                f"actions, "
                f"{self.terminals:,} terminals{', ranked' if self.ranked else ''})")


# Host, lowering: the walk's Python per public node (the node's lists, its state while its
# level is the frontier, the checks' memo), then the tensors twice (built, then cast).
# Measured 2026-12-05 on liars_dice(sides=8, tree='public') (131,071 public nodes, 8
# hands): lowering peak 65 MB and a short solve 821 MB of resident memory (XLA: the
# step's arguments, outputs and temporaries 437 MB), estimated 196 MB and 760 MB (1.08
# times the sum); leduc_poker(ranks=13) 1.8 MB and 87 MB, estimated 303 MB in all (the
# fixed 256 MiB dominates small games, as for history trees).
_WALK_PER_NODE, _HOST_FIXED = 1024, 16 << 20
# Host, kept: node labels and actions per node; row keys (made when a profile is asked).
_KEPT_PER_NODE, _KEPT_PER_ROW = 200, 150
# Device, a solve (measured 2026-12-07 with ``memory_analysis()`` of the Runner's compiled
# chunk and evaluation on abstract arguments, float32 ``postflop-dcfr``, ``cfr+`` and
# ``pcfr+`` on the README river, turn and flop, the full river and a small-range flop:
# docs/holdem.md, "The public memory budget recalibrated"): compilation and runtime; the
# tensors; per (row, action) slot in floats 2.5 per state table (the run's; a second
# copy, the evaluation's zero state while it compiles or a chunk's output where it is not
# donated; the update's temporaries, measured 1.4 tables' worth per table past two) and
# the evaluated profile; the passes' temporaries, the larger of the chunk's and the
# evaluation's (mostly [N, H] tables: the README flop's did not shrink with its rows),
# per (node, hand) and (row, action) slot in floats, and per (terminal, hand) of one
# chunk of ranked terminals (jaxcfr.tensors.ranked_chunk) or of every dense terminal;
# per (dense terminal, hand pair) the [H, H] products. The estimate is 1.10 to 1.4 times
# what the compiled programs hold on those spots (the README flop 1.13, its turn 1.11).
# From jaxcfr.tensors.LEAN_NODE_ENTRIES (node, hand) entries on (the flops) both programs
# keep one [N, H] table at a time (the half-step since 2026-12-07 evening, the evaluation
# since 2026-12-07 late: docs/holdem.md, "The evaluation's tables on a flop, one at a
# time"): 8 floats per (node, hand) there, the estimate 1.1 to 1.3 times what they hold.
_DEVICE_FIXED, _STATE_FLOATS = 256 << 20, 2.5
_NODE_HAND_FLOATS, _SLOT_TEMP_FLOATS = 12, 0.6
_LEAN_NODE_HAND_FLOATS = 8
_TERMINAL_FLOATS = 16
_PAIR_FLOATS = 3
#: The state's ``[I, A]`` tables :func:`public_footprint` counts unless told: regrets and
#: strategy sums, what ``postflop-dcfr`` keeps and the fewest any solver keeps (``cfr+``
#: and the others that compensate their sums keep 3, the predictive ones 4).
STATE_TABLES = 2


def _tensor_bytes(z: PublicSize, f: int) -> int:
    """Bytes of :class:`PublicTensors` for sizes ``z`` with floats of ``f`` bytes."""
    n, d, h, a = z.nodes, z.decisions, z.hands, z.max_actions
    if z.players != 2:            # [K, P, H] alive, [P, H] weights, H^P compat, [U, P, H^P]
        return (n * (40 + f) + d * 4 * (1 + a) + (d + 1) * (a + 8) + 4 * z.players
                + z.terminals * (4 + z.players * f)
                + f * h * z.players * (z.alive_sets + 1)
                + f * h ** z.players * (1 + z.players * z.tables))
    compat = 0 if z.ranked else h                # [H, H] compat: empty with ranked terminals
    out = (n * (40 + f) + d * 4 * (1 + a) + (d + 1) * (a + 8) + 8 + z.terminals * (4 + 2 * f)
           + z.merged * 4 * (2 + 2 * h)                      # merge_parent, _child, _source
           + f * h * (2 * z.alive_sets + 2 + compat + 2 * z.strength_tables
                      + 2 * h * z.tables))
    if z.ranked:                  # rank orders and bounds, pair tables, same-hand flags,
        out += z.strength_tables * h * (72 + 4 * f) + 88 * h   # hands' cards, cards (<= 4h)
    return out


def public_footprint(size: PublicSize, float_bytes: int = 4,
                     host_float_bytes: int = 8, state_tables: int = STATE_TABLES,
                     overlapped: bool = False) -> MemoryFootprint:
    """The bytes a run on a public tree of these sizes allocates, phase by phase (the
    fields of :func:`jaxcfr.lowering.budget.memory_footprint`): the host builds the tensors
    in ``host_float_bytes`` floats (:func:`lower_public`'s ``dtype``), the device solves in
    ``float_bytes`` with a state of ``state_tables`` ``[I, A]`` tables (default
    :data:`STATE_TABLES`; a solver's own: ``len(solver.tables)``). It follows the public
    tree and the hands, never the histories.

    The device part is an upper bound of what a solve holds at its peak: the tensors, the
    state twice, the evaluated profile and the compiled programs' temporaries (XLA's
    ``memory_analysis()`` of the chunk and of the evaluation; tests/test_public_budget.py
    checks the bound and its margin on compiled spots), the larger of the chunk's and the
    evaluation's: the Runner evaluates a zero state in a thread while the first chunks
    run only where the budget holds both (``overlapped``: the evaluation's temporaries
    counted beside the chunk's, :func:`evaluation_overlap_fits`)."""
    z, f = size, int(float_bytes)
    host = _tensor_bytes(z, int(host_float_bytes))
    lowering = _HOST_FIXED + z.nodes * _WALK_PER_NODE + 2 * host
    lowered = host + z.nodes * _KEPT_PER_NODE + z.rows * _KEPT_PER_ROW
    slots = z.rows * z.max_actions
    terminal_hands = z.terminals * z.hands
    if z.ranked:                          # one chunk of ranked terminals at a time
        terminal_hands = min(z.terminals, ranked_chunk(z.hands)) * z.hands
    lean = z.players == 2 and z.nodes * z.hands >= LEAN_NODE_ENTRIES    # (the kernels' gate)
    temporaries = ((_LEAN_NODE_HAND_FLOATS if lean else _NODE_HAND_FLOATS)
                   * z.nodes * z.hands * z.players // 2
                   + _SLOT_TEMP_FLOATS * slots
                   + _TERMINAL_FLOATS * terminal_hands
                   + _PAIR_FLOATS * z.dense_terminals * z.hands ** z.players)
    device = int(_DEVICE_FIXED + _tensor_bytes(z, f)
                 + slots * f * (_STATE_FLOATS * int(state_tables) + 1)
                 + temporaries * f * (2 if overlapped else 1))
    return MemoryFootprint(lowering, lowered, device, lowering + device)


def evaluation_overlap_fits(size: PublicSize, budget: int, *, float_bytes: int = 4,
                            state_tables: int = STATE_TABLES) -> bool:
    """Whether a run of ``size`` may evaluate a zero state (the evaluation's compile
    warm-up) while its first chunks run: both programs' temporaries at once within
    ``budget`` (:func:`public_footprint` ``overlapped``). Where not, the Runner compiles
    the evaluation when it is first due, between chunks (``Runner.overlap_evaluation``),
    and the budget's count, the larger of the two, holds."""
    return public_footprint(size, float_bytes, state_tables=state_tables,
                            overlapped=True).total <= budget


def check_public_budget(size: PublicSize, budget: int, *, what: str = "in all",
                        state_tables: int = STATE_TABLES, counted: bool = False,
                        float_bytes: int = 4) -> None:
    """Raise :class:`MemoryBudgetError` when a public tree of ``size`` solved with a state
    of ``state_tables`` tables in ``float_bytes`` floats needs more than ``budget``
    bytes; the error names the sizes, the estimate, the budget and how to raise it.
    ``counted``: ``size`` is the least the game's own counts imply (:func:`counted_size`),
    before the walk."""
    need = public_footprint(size, float_bytes, state_tables=state_tables).total
    if need > budget:
        sizes = (f"the {size.nodes:,} public nodes the game counts ({size.decisions:,} "
                 f"decisions, {size.terminals:,} terminals; up to {size.hands:,} hands per "
                 "player), before the walk" if counted else f"{size.describe()} {what}")
        raise MemoryBudgetError(
            f"lowering and solving need {'at least' if counted else 'about'} "
            f"{format_bytes(need)} for {sizes} (a state of {int(state_tables)} tables"
            f"{'' if int(float_bytes) == 4 else f' of {8 * int(float_bytes)}-bit floats'}), "
            f"over the memory budget of {format_bytes(budget)} (set memory_budget= or "
            "JAXCFR_MEMORY_BUDGET=BYTES to raise it)", rule="memory-budget")


def counted_size(counts: PublicCounts, hands: Sequence[int], float_bytes: int = 4
                 ) -> PublicSize:
    """The least :class:`PublicSize` of a public tree of ``counts`` (a game's
    :meth:`~jaxcfr.game.public.PublicGame.public_counts`) with ``hands[p]`` hands of
    player ``p``: each decision its player's rows, nothing the counts leave out (blocked
    sets, payoff and strength tables, merged outcomes, dense terminals) counted, the
    cheaper of ranked and dense terminals in ``float_bytes`` floats; its
    :func:`public_footprint` (in those floats) is at most the walked tree's."""
    decisions = tuple(counts.decisions)
    rows = sum(d * h for d, h in zip(decisions, hands))
    return min((PublicSize(counts.nodes, sum(decisions), max(hands),
                           max(1, counts.max_actions), terminals=counts.terminals,
                           ranked=r, players=len(hands), decision_rows=rows)
                for r in (False, True)), key=lambda z: public_footprint(z, float_bytes).total)


#: ``terminals="auto"`` takes the ranked operators from this many hands per player on.
RANKED_FROM = 64
#: ... and below it too when the dense folds and showdowns would make more ``[H, H]``
#: entries than this (terminals x H^2): the dense operators build ``[T, H, H]`` tables
#: every half-step, which on a flop spot (271,895 folds and showdowns) are the program's
#: largest temporaries at any hand count (34 hands: 839 MB each; docs/holdem.md, "A flop
#: spot"), where the ranked ones are ``O(T H)``. Rivers and turns stay below it (a turn's
#: 1,302 terminals x 63^2 = 5.2M).
DENSE_ENTRIES_MOST = 1 << 24
TERMINALS = ("auto", "ranked", "dense")


def lower_public(game: PublicGame, *, name: str = "", dtype=np.float64,
                 terminals: str = "auto", memory_budget: int | None = None,
                 progress: Callable[[int], None] | None = None,
                 merges: bool = True, state_tables: int = STATE_TABLES,
                 float_bytes: int = 4, outcome_steps: int = 0) -> PublicLowered:
    """Walk ``game``'s public tree (checking every node) into a :class:`PublicLowered`.

    Args:
      terminals: how folds and showdowns are evaluated on the device: ``"dense"`` (an
        ``[H, H]`` product per terminal), ``"ranked"`` (hands sorted by strength, running
        sums, card removal by inclusion-exclusion: ``O(H)`` per terminal; hands of at
        most two cards), or ``"auto"``: ranked from :data:`RANKED_FROM` hands on when
        the hands allow it, or below that when the dense terminals would hold more than
        :data:`DENSE_ENTRIES_MOST` ``[H, H]`` entries in all (decided once the tree is
        walked). The same values either way (to float rounding).
      memory_budget: bytes (default :func:`~jaxcfr.lowering.budget.default_memory_budget`:
        ``JAXCFR_MEMORY_BUDGET``, else half the available memory); the walk stops with
        :class:`MemoryBudgetError` as soon as the public tree met so far needs more
        (:func:`public_footprint`), checked after every level and before the tables.
      progress: ``progress(public_nodes_walked)`` after every level of the public tree.
      merges: walk one representative per class of the game's merged chance outcomes
        (``PublicGame.chance_merges``: suit isomorphism); ``False`` walks every outcome
        (what node locks and subgames that break the symmetry need).
      outcome_steps: with ``merges``, walk :func:`walked_outcomes` ``(kept, total,
        outcome_steps)`` outcomes at a chance node of a tree of one chance round (a
        turn's river cards; not a flop's) whose ``total`` outcomes fall in ``kept``
        classes: the representatives and the first merged outcomes (in the game's
        order) up to that bucket, the rest merged. Boards of another suit pattern
        of one bet tree (a turn's 35 or 36 river classes: 36) then walk trees of one
        shape (:mod:`~jaxcfr.lowering.public_buckets`); a walked outcome is exact, as
        with ``merges=False``. ``0`` (the default): the representatives only.
      state_tables: the ``[I, A]`` tables the solver to run keeps (``len(solver.tables)``:
        2 for ``postflop-dcfr``, 3 for ``cfr+``, 4 for ``pcfr+``), as the budget counts
        them (:func:`public_footprint`); ``float_bytes``: the bytes of the run's floats
        (8 for ``precision="float64"``).

    Raises:
      GameError: the first node that breaks the contract, named by its public history.
      MemoryBudgetError: the game does not fit the memory budget.
      ValueError: ``terminals="ranked"`` for hands of more than two cards, or for a game
        of more than two players (their terminals are dense tables).
    """
    if terminals not in TERMINALS:
        raise ValueError(f"terminals must be one of {', '.join(TERMINALS)}, got {terminals!r}")
    if isinstance(state_tables, bool) or not isinstance(state_tables, (int, np.integer)) \
            or state_tables < 1 or float_bytes not in (4, 8) or isinstance(float_bytes, bool):
        raise ValueError(f"state_tables must be a whole number of tables (at least 1) and "
                         f"float_bytes 4 or 8, got {state_tables!r} and {float_bytes!r}")
    hands = read_hands(game)
    P = hands.num_players
    if terminals == "ranked" and P != 2:
        raise ValueError(f"ranked terminals take two players; this game has {P} (its "
                         "terminals are dense payoff tables: use terminals='dense' or 'auto')")
    most_cards = max((len(c) for per in (hands.cards or ()) for c in per), default=0)
    if terminals == "ranked" and most_cards > 2:
        raise ValueError(f"ranked terminals take hands of at most two cards; this game's "
                         f"hold up to {most_cards} (use terminals='dense')")
    rankable = terminals == "auto" and most_cards <= 2 and P == 2
    ranked = terminals == "ranked" or (rankable and
                                       max(len(x) for x in hands.labels) >= RANKED_FROM)
    sizes = tuple(len(x) for x in hands.labels)
    H = max(sizes)
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    counted = _counts(game, P)
    if counted is not None:              # the game counts its tree: refused before the walk
        check_public_budget(counted_size(counted, sizes, float_bytes), budget, counted=True,
                            state_tables=state_tables, float_bytes=float_bytes)
    memo: dict = {}
    # per node (in BFS order)
    parent, slot, owner, kind, player, prob, reach, path, action, acts = ([] for _ in range(10))
    alive_sets: list[np.ndarray] = []
    alive_index: dict[bytes, int] = {}

    def path_id(mask: np.ndarray) -> int:
        key = mask.tobytes()
        k = alive_index.get(key)
        if k is None:
            k = alive_index[key] = len(alive_sets)
            alive_sets.append(mask)
        return k

    root_alive = np.zeros((P, H), bool)
    for p in range(P):
        root_alive[p, :sizes[p]] = True
    frontier = [(game.clone(), (), -1, 0, P, 1.0, 1.0, path_id(root_alive), None)]
    walked = _Walked(sizes, ranked, P, rankable=rankable)
    level_start = [0]
    values: list[tuple[int, Any]] = []
    merge_edges: list[tuple] = []  # (chance node, outcome, representative, sources, renaming)
    one_round: list[bool] = []     # the tree's chance is one round (outcome_steps)
    while frontier:
        nxt = []
        for state, history, par, sl, own, pr, re, pid, act in frontier:
            n = len(parent)
            here = alive_sets[pid]
            node = inspect_public(state, hands, history, memo=memo,
                                  alive=tuple(here[p, :sizes[p]] for p in range(P)))
            parent.append(par)
            slot.append(sl)
            owner.append(own)
            kind.append(node.kind)
            player.append(node.player if node.kind == DECISION else -1)
            prob.append(pr)
            reach.append(re)
            path.append(pid)
            action.append(act)
            acts.append(node.actions if node.kind == DECISION else ())
            walked.count(node)
            if node.kind == TERMINAL_NODE:
                values.append((n, node.value))
                continue
            merged = (_chance_merges(state, history) if merges and node.kind == CHANCE_NODE
                      else {})
            if merged and outcome_steps and _one_round(state, node.actions, merged, owner,
                                                       parent, n, P, one_round):
                total = len(node.actions)
                walk = walked_outcomes(total - len(merged), total, outcome_steps)
                more = [x for x in node.actions if x in merged][:walk - total + len(merged)]
                merged = {x: m for x, m in merged.items() if x not in more}
            kept = [a for a, x in enumerate(node.actions) if x not in merged]
            for x, (rep, source, renaming) in merged.items():
                merge_edges.append((n, x, rep, source, renaming))
            for k, a in enumerate(kept):
                x = node.actions[a]
                child = state if k == len(kept) - 1 else state.clone()
                child.step(x)
                if node.kind == CHANCE_NODE:
                    blocked = np.zeros((P, H), bool)
                    for p in range(P):
                        blocked[p, :sizes[p]] = node.blocked[a][p]
                    cid = path_id(alive_sets[pid] & ~blocked)
                    nxt.append((child, history + (x,), n, k, P, node.probs[a],
                                re * node.probs[a], cid, x))
                else:
                    nxt.append((child, history + (x,), n, a, node.player, 1.0, re, pid, x))
        level_start.append(len(parent))
        frontier = nxt
        check_public_budget(walked.size(len(alive_sets), values if not frontier else None,
                                        len(merge_edges)),
                            budget, what="met so far" if frontier else "in all",
                            state_tables=state_tables, float_bytes=float_bytes)
        if progress is not None:
            progress(len(parent))
    ranked = walked.ranked                  # "auto": ranked when the dense would be too large
    N = len(parent)
    parent_a = np.asarray(parent, np.int32)
    kind_a = np.asarray(kind, np.int8)
    player_a = np.asarray(player, np.int32)
    # rows: one per hand of the acting player at each decision node, the decisions one
    # after another, the sink last
    decisions = np.flatnonzero(kind_a == DECISION).astype(np.int32)
    D = len(decisions)
    decision_row = decision_rows(player_a[decisions], sizes)               # [D + 1]
    node_base = np.full(N, -1, np.int32)
    node_base[decisions] = decision_row[:-1]
    A = max([len(acts[n]) for n in decisions], default=1)
    legal = np.zeros((D + 1, A), bool)                  # per decision; the last: the sink
    decision_player = np.full(D + 1, NO_PLAYER, np.int32)
    legal[:, 0] = True
    child_of = np.full((D, A), N, np.int32)                     # N: the zero pad node
    ordinal = np.full(N, D, np.int32)                           # D: not a decision
    ordinal[decisions] = np.arange(D, dtype=np.int32)
    for d, n in enumerate(decisions):
        legal[d, :len(acts[n])] = True
        decision_player[d] = player_a[n]
    children = np.flatnonzero(parent_a >= 0)
    from_decision = children[kind_a[parent_a[children]] == DECISION]
    child_of[ordinal[parent_a[from_decision]], np.asarray(slot)[from_decision]] = from_decision
    edge_decision = np.where(parent_a >= 0, ordinal[np.maximum(parent_a, 0)], D).astype(np.int32)
    first_child = np.full(N, N, np.int64)
    child_count = np.zeros(N, np.int64)
    np.minimum.at(first_child, parent_a[children], children)
    np.add.at(child_count, parent_a[children], 1)
    widths = tuple(int(child_count[level_start[d]:level_start[d + 1]].max(initial=0))
                   for d in range(len(level_start) - 1))
    # terminal operators
    fold_node, fold_pay, show_node, show_stake, show_index = [], [], [], [], []
    table_node, table_index = [], []
    strength_list, strength_of = [], {}
    table_list, table_of = [], {}
    for n, v in values:
        if isinstance(v, Fold):
            fold_node.append(n)
            fold_pay.append(v.payoffs)
        elif isinstance(v, Showdown):
            k = strength_of.get(id(v))
            if k is None:                     # one table per distinct strengths (a board)
                arr = np.zeros((2, H))
                for p in range(2):
                    arr[p, :sizes[p]] = v.strengths[p]
                k = strength_of.setdefault(arr.tobytes(), len(strength_list))
                strength_of[id(v)] = k
                if k == len(strength_list):
                    strength_list.append(arr)
            show_node.append(n)
            show_stake.append(v.stake)
            show_index.append(k)
        else:
            k = table_of.get(id(v))
            if k is None:
                k = table_of[id(v)] = len(table_list)
                table_list.append(np.asarray(v.payoffs, np.float64))
            table_node.append(n)
            table_index.append(k)
    if P == 2:
        compat = np.zeros((H, H))
        compat[:sizes[0], :sizes[1]] = hands.compatible / hands.deal_total
        tables = np.zeros((len(table_list), 2, H, H))
        for u, t in enumerate(table_list):
            tables[u, 0, :sizes[0], :sizes[1]] = t[0] * compat[:sizes[0], :sizes[1]]
            tables[u, 1, :sizes[1], :sizes[0]] = (t[1] * compat[:sizes[0], :sizes[1]]).T
    else:                        # [H]*P, and per player p the table with p's axis first
        compat = _padded(hands.compatible / hands.deal_total, H)
        tables = np.zeros((len(table_list), P) + (H,) * P)
        for u, t in enumerate(table_list):
            for p in range(P):
                tables[u, p] = np.moveaxis(_padded(t[p], H) * compat, p, 0)
    weights = np.zeros((P, H))
    for p in range(P):
        weights[p, :sizes[p]] = hands.weights[p]
    strengths = np.stack(strength_list) if strength_list else np.zeros((0, 2, H))
    leaf_index = np.full(N, len(values), np.int32)          # terminals: folds, showdowns, tables
    ends = np.concatenate([np.asarray(x, np.int64) for x in (fold_node, show_node, table_node)])
    leaf_index[ends] = np.arange(len(ends), dtype=np.int32)
    f = np.dtype(dtype)
    merge_parent, merge_child, merge_source = _merge_tables(merge_edges, parent, action,
                                                            sizes, H)
    tensors = PublicTensors(
        parent=parent_a, parent_slot=np.asarray(slot, np.int32),
        edge_owner=np.asarray(owner, np.int32), edge_decision=edge_decision,
        node_base=node_base, decision_node=decisions, child_of=child_of,
        first_child=np.minimum(first_child, N).astype(np.int32),
        child_count=child_count.astype(np.int32), leaf_index=leaf_index,
        node_player=player_a, chance_reach=np.asarray(reach, f),
        node_path=np.asarray(path, np.int32), alive=np.stack(alive_sets).astype(f),
        weights=weights.astype(f),
        compat=(np.zeros((0, 0)) if ranked else compat).astype(f),  # ranked: never read
        fold_node=np.asarray(fold_node, np.int32),
        fold_payoff=np.asarray(fold_pay, f).reshape(-1, P),
        show_node=np.asarray(show_node, np.int32), show_stake=np.asarray(show_stake, f),
        show_index=np.asarray(show_index, np.int32), strengths=strengths.astype(f),
        table_node=np.asarray(table_node, np.int32),
        table_index=np.asarray(table_index, np.int32), tables=tables.astype(f),
        decision_legal=legal, decision_player=decision_player,
        hand_count=np.asarray(sizes, np.int32), decision_row=decision_row,
        row_space=np.zeros((int(decision_row[-1]) + 1, 0), bool),
        merge_parent=merge_parent, merge_child=merge_child, merge_source=merge_source,
        **_rank_tables(hands, strengths if ranked else np.zeros((0, 2, H)), H, ranked, f))
    return PublicLowered(tensors, tuple(level_start), hands, tuple(action), kind_a,
                         tuple(acts), _constant_sum(values, hands),
                         _nash_value(game), name or type(game).__name__, ranked, widths,
                         tuple((n, x) for n, x, *_ in merge_edges),
                         tuple(dict(r) for *_, r in merge_edges) if merge_edges else ())


def least_public_size(game: PublicGame, float_bytes: int = 4) -> PublicSize | None:
    """The least :class:`PublicSize` of ``game``'s public tree that the game's own counts
    (:meth:`~jaxcfr.game.public.PublicGame.public_counts`) imply (:func:`counted_size`),
    before a node is walked; ``None`` where the game does not count it."""
    hands = read_hands(game)
    counts = _counts(game, hands.num_players)
    return None if counts is None else counted_size(counts, [len(x) for x in hands.labels],
                                                    float_bytes)


def _counts(game: PublicGame, players: int) -> PublicCounts | None:
    """``game.public_counts()`` checked: ``None`` (not counted, or no such method) or
    :class:`PublicCounts` of whole numbers: at least the root, a decision count per
    player (or none), no more decisions and terminals than nodes."""
    counts = game.public_counts() if hasattr(game, "public_counts") else None
    if counts is None:
        return None

    def whole(x, least=0) -> bool:
        return (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
                and x >= least)
    ok = (isinstance(counts, PublicCounts) and isinstance(counts.decisions, (tuple, list))
          and len(counts.decisions) in (0, players) and whole(counts.nodes, 1)
          and all(whole(x) for x in (counts.terminals, counts.max_actions,
                                     *counts.decisions)))
    if not ok or sum(counts.decisions) + counts.terminals > counts.nodes:
        raise GameError(f"public_counts() must be None or PublicCounts of whole numbers (at "
                        f"least the root; a decision count per player; no more decisions "
                        f"and terminals than nodes), got {counts!r}", rule="public-counts")
    return PublicCounts(int(counts.nodes), tuple(int(x) for x in counts.decisions),
                        int(counts.terminals), int(counts.max_actions))


def _one_round(state: PublicGame, outcomes, merged: dict, owner: list, parent: list,
               n: int, P: int, seen: list) -> bool:
    """Whether the tree's public chance is one round: chance node ``n`` (``state``) has
    no chance edge above it and no chance node below its first walked outcome (a probe
    of that subtree, depth first, up to the first chance node; once, into ``seen``).
    ``outcome_steps`` walks outcomes to a bucket only then (a turn's river cards): a
    flop's tree is another suit pattern's in its turn cards whatever its rivers walk,
    and its rivers rounded up would cost it nodes (1.6% on Td9d6h) for nothing."""
    m = n
    while parent[m] >= 0:
        if owner[m] == P:
            return False                    # a later round: the first said no already
        m = parent[m]
    if not seen:
        first = state.clone()
        first.step(next(x for x in outcomes if x not in merged))
        stack, found = [first], False
        while stack and not found:
            x = stack.pop()
            if x.is_terminal():
                continue
            found = x.is_chance()
            for a in ([] if found else x.legal_actions()):
                y = x.clone()
                y.step(a)
                stack.append(y)
        seen.append(not found)
    return seen[0]


def walked_outcomes(kept: int, total: int, steps: int) -> int:
    """How many of a chance node's ``total`` outcomes, merged into ``kept`` classes, are
    walked with ``outcome_steps=steps`` (:func:`lower_public`): ``kept`` rounded up to a
    multiple of ``2 ** floor(log2 kept) / steps`` (at least 1), at most ``total``. With
    8 steps: 35 and 36 classes walk 36 outcomes, 37 walk 40, 22 walk 22 (at most 1/8 more
    nodes under the chance node).

    >>> [walked_outcomes(k, 48, 8) for k in (22, 35, 36, 37, 46, 48)]
    [22, 36, 36, 40, 48, 48]
    """
    kept, total = int(kept), int(total)
    if kept <= 0 or steps <= 0:
        return max(kept, 0)
    step = max(1, (1 << (kept.bit_length() - 1)) // int(steps))
    return min(total, -(-kept // step) * step)


def _chance_merges(state: PublicGame, history: tuple) -> dict:
    """``state.chance_merges()`` checked: ``{outcome: (representative, sources,
    renaming)}`` (``renaming`` ``{}`` where the game gives none)."""
    merges = state.chance_merges() or {}
    outcomes = {x for x, _ in state.chance_outcomes()}
    out = {}
    for x, entry in merges.items():
        if not isinstance(entry, tuple) or len(entry) not in (2, 3):
            raise GameError(f"chance_merges() after {history!r}: {x!r} -> {entry!r} is not "
                            "(representative, sources) or (representative, sources, "
                            "renaming)", rule="chance-merges")
        rep = entry[0]
        if x not in outcomes or rep not in outcomes or rep in merges or rep == x:
            raise GameError(f"chance_merges() after {history!r}: {x!r} -> {rep!r} is not an "
                            "outcome merged into a walked representative",
                            rule="chance-merges")
        renaming = entry[2] if len(entry) == 3 else {}
        if not isinstance(renaming, dict):
            raise GameError(f"chance_merges() after {history!r}: the renaming of {x!r} is "
                            f"not a dict, got {type(renaming).__name__}",
                            rule="chance-merges")
        out[x] = (rep, entry[1], renaming)
    return out


def _merge_tables(edges: list, parent: list, action: list, sizes: tuple, H: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(merge_parent [E], merge_child [E], merge_source [E, P, H])`` of the merged
    outcomes (:class:`~jaxcfr.tensors.PublicTensors`), sorted by chance node; a padding
    hand's source is itself."""
    child = {(parent[c], action[c]): c for c in range(len(parent)) if parent[c] >= 0}
    P = len(sizes)
    mp = np.zeros(len(edges), np.int32)
    mc = np.zeros(len(edges), np.int32)
    ms = np.tile(np.arange(H, dtype=np.int32), (len(edges), P, 1))
    for e, (n, _, rep, source, _) in enumerate(edges):
        mp[e], mc[e] = n, child[(n, rep)]
        for p in range(P):
            src = np.asarray(source[p], np.int64)
            if sorted(src.tolist()) != list(range(sizes[p])):
                raise GameError(f"chance_merges(): player {p}'s sources after outcome "
                                f"{edges[e][1]!r} are not a permutation of its hands",
                                rule="chance-merges")
            ms[e, p, :sizes[p]] = src
    order = np.argsort(mp, kind="stable")
    return mp[order], mc[order], ms[order]


class _Walked:
    """The sizes of the public nodes walked so far, counted as they are met (the memory
    budget's :class:`PublicSize`: a lower bound on the game's until the walk ends)."""

    def __init__(self, hands: tuple, ranked: bool, players: int = 2, rankable: bool = False):
        self.sizes, self.hands, self.players = tuple(hands), max(hands), players
        self._ranked, self.rankable = ranked, rankable  # rankable: "auto", ranked if large
        self.nodes = self.decisions = self.rows = self.terminals = self.tabled = 0
        self.cards = 0
        self.max_actions = 1
        self.tables: set[int] = set()        # ids of payoff tables (lower_public's dedupe)

    def count(self, node) -> None:
        self.nodes += 1
        if node.kind == DECISION:
            self.decisions += 1
            self.rows += self.sizes[node.player]
            self.max_actions = max(self.max_actions, len(node.actions))
        elif node.kind == TERMINAL_NODE:
            self.terminals += 1
            if not isinstance(node.value, (Fold, Showdown)):
                self.tables.add(id(node.value))
                self.tabled += 1
            else:
                self.cards += 1

    @property
    def ranked(self) -> bool:
        """Whether the folds and showdowns met so far are ranked: as asked, or under
        ``"auto"`` when as dense ``[H, H]`` products they would exceed
        :data:`DENSE_ENTRIES_MOST` entries."""
        return self._ranked or (self.rankable and
                                self.cards * self.hands ** 2 > DENSE_ENTRIES_MOST)

    def size(self, alive_sets: int, values: list | None, merged: int = 0) -> PublicSize:
        """The sizes; ``values`` (the terminals' ``(node, operator)``, at the end of the
        walk) count the distinct strength tables as :func:`lower_public` merges them: by
        their contents."""
        boards = 0
        if values is not None:
            shows = {id(v): v for _, v in values if isinstance(v, Showdown)}.values()
            boards = len({b"".join(np.asarray(x, np.float64).tobytes() for x in v.strengths)
                          for v in shows})
        ranked = self.ranked
        return PublicSize(self.nodes, self.decisions, self.hands, self.max_actions,
                          alive_sets, self.terminals,
                          self.tabled + (0 if ranked else self.cards), len(self.tables),
                          boards, ranked, self.players, merged, self.rows)


def _rank_tables(hands: HandInfo, strengths: np.ndarray, H: int, ranked: bool, f) -> dict:
    """The index tables of the ranked operators (see :class:`PublicTensors`); empty
    (zero-sized) when not ``ranked``."""
    S = strengths.shape[0]
    sizes = [len(x) for x in hands.labels]
    cards = hands.cards if hands.cards is not None else \
        tuple(tuple(frozenset() for _ in x) for x in hands.labels)
    held = [[sorted(c) for c in per] for per in cards]
    M = max(1, max(sum(len(c) for c in per) for per in held)) if ranked else 0
    J = 2 if ranked else 0
    Hr = H if ranked else 0
    out = {"deal_scale": np.asarray(1.0 / hands.deal_total, f),
           "rank_order": np.full((S, 2, Hr), H, np.int32),
           "rank_lo": np.zeros((S, 2, Hr), np.int32), "rank_hi": np.zeros((S, 2, Hr), np.int32),
           "pair_order": np.full((S, 2, M), H, np.int32),
           "pair_lo": np.zeros((S, 2, Hr, J), np.int32),
           "pair_hi": np.zeros((S, 2, Hr, J), np.int32),
           "fold_pair": np.full((2, M), H, np.int32),
           "hand_cards": np.full((2, Hr, J), -1, np.int32),
           "cards": np.zeros((0,), np.int32),
           "pair_start": np.zeros((2, Hr, J), np.int32),
           "pair_end": np.zeros((2, Hr, J), np.int32),
           "same": np.full((2, Hr), H, np.int32),
           "same_weaker": np.zeros((S, 2, Hr), f), "same_stronger": np.zeros((S, 2, Hr), f)}
    if not ranked:
        return out
    # the cards any hand holds, and each hand's (a fold's card removal: one-hot sums)
    every = sorted({c for per in held for cs in per for c in cs})
    out["cards"] = np.asarray(every, np.int32)
    place = {c: k for k, c in enumerate(every)}
    for p in range(2):
        for h, cs in enumerate(held[p]):
            out["hand_cards"][p, h, :len(cs)] = [place[c] for c in cs]
    # each player's (card, hand) entries, sorted by card: segments per card
    entries = []
    for p in range(2):
        e = sorted((c, h) for h, cs in enumerate(held[p]) for c in cs)
        entries.append(e)
        out["fold_pair"][p, :len(e)] = [h for _, h in e]
    segment = []
    for p in range(2):
        seg: dict[int, list[int]] = {}
        for pos, (c, _) in enumerate(entries[p]):
            seg.setdefault(c, [pos, pos])[1] = pos + 1
        segment.append(seg)
    for i in range(2):
        o = 1 - i
        index_of = {frozenset(c): h for h, c in enumerate(held[o]) if len(c) >= 2}
        for h, cs in enumerate(held[i]):
            for j, c in enumerate(cs):
                a, b = segment[o].get(c, (0, 0))
                out["pair_start"][i, h, j], out["pair_end"][i, h, j] = a, b
            out["same"][i, h] = index_of.get(frozenset(cs), H)
    for k in range(S):
        for i in range(2):
            o = 1 - i
            mine, theirs = strengths[k, i, :sizes[i]], strengths[k, o, :sizes[o]]
            order = np.argsort(theirs, kind="stable")
            out["rank_order"][k, o, :sizes[o]] = order
            ranked_s = theirs[order]
            out["rank_lo"][k, i, :sizes[i]] = np.searchsorted(ranked_s, mine, "left")
            out["rank_hi"][k, i, :sizes[i]] = np.searchsorted(ranked_s, mine, "right")
            e = sorted(entries[o], key=lambda ch: (ch[0], theirs[ch[1]]))
            out["pair_order"][k, o, :len(e)] = [h for _, h in e]
            for h, cs in enumerate(held[i]):
                for j, c in enumerate(cs):
                    a, b = segment[o].get(c, (0, 0))
                    seg_s = np.asarray([theirs[x] for _, x in e[a:b]])
                    out["pair_lo"][k, i, h, j] = a + np.searchsorted(seg_s, mine[h], "left")
                    out["pair_hi"][k, i, h, j] = a + np.searchsorted(seg_s, mine[h], "right")
                same = out["same"][i, h]
                if same < H:
                    out["same_weaker"][k, i, h] = float(theirs[same] < mine[h])
                    out["same_stronger"][k, i, h] = float(theirs[same] > mine[h])
    return out


def _padded(x: np.ndarray, H: int) -> np.ndarray:
    """``x`` (``[H_0, ..., H_{P-1}]``) zero-padded to ``[H]*P``."""
    out = np.zeros((H,) * x.ndim)
    out[tuple(slice(0, n) for n in x.shape)] = x
    return out


def _constant_sum(values, hands: HandInfo) -> float | None:
    """The payoffs' sum when it is the same at every terminal and compatible tuple."""
    sums = set()
    for v in {id(v): v for _, v in values}.values():
        if isinstance(v, Fold):
            sums.add(round(sum(v.payoffs), 12))
        elif isinstance(v, Showdown):
            sums.add(0.0)
        else:
            t = np.asarray(v.payoffs)
            s = t.sum(axis=0)[hands.compatible]
            sums.update(np.round(np.unique(s), 12).tolist())
        if len(sums) > 1:
            return None
    return float(sums.pop()) if sums else None


def _nash_value(game):
    try:
        v = game.nash_value()
    except Exception:  # noqa: BLE001 - optional
        return None
    return None if v is None else (float(v[0]), float(v[1]))


def public_game_of(game: Any) -> "PublicGame | PublicLowered | None":
    """``game`` when it is a public tree (a PublicGame, a lowered one, or a game string
    with ``tree="public"`` or naming a game that only exists as a public tree, such as
    ``holdem_spot``, loaded), else ``None``. The one place that routes a game to the
    public solver (:func:`jaxcfr.solve`, ``jaxcfr solve``, ``jaxcfr inspect``)."""
    if isinstance(game, (PublicGame, PublicLowered)):
        return game
    if not isinstance(game, str):
        return None
    try:
        name, params = parse_game_string(game.strip())
    except GameError:
        return None
    if params.get("tree") == "public" or _public_only(name):
        return load_game(game)
    return None


def _public_only(name: str) -> bool:
    """Whether the registered game ``name`` is a PublicGame (it has no history tree)."""
    try:
        ctor = game_constructor(name)
    except GameError:
        return False
    return isinstance(ctor, type) and issubclass(ctor, PublicGame)
