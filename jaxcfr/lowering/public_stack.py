"""Stacking public trees into one batch ``[B, ...]`` of a common padded shape.

A stack of public-tree games (many boards of one hold'em spot, their ranges or bet sizes
differing too) is solved by one compiled step: the step of one game vmapped over a
leading member axis (the :class:`~jaxcfr.engine.seam.Vmapped` layout of history-tree
stacks, :mod:`jaxcfr.lowering.stack`). Every member's
:class:`~jaxcfr.tensors.PublicTensors` are padded to the largest member's sizes, so the
static :class:`~jaxcfr.tensors.PublicStructure` (the level slices, the widths, ``H``)
is one for the whole stack and the members' tables are arguments: a stack of other
boards of the same shape reuses the compiled program.

Padding, axis by axis (every padded entry is inert by construction):

* ``N`` public nodes: each depth level is padded to the widest member's level (``N`` the
  sum of the per-level maxima); a member's node keeps its level and its place in it, so
  children stay consecutive and parents sorted. A padding node hangs under the last node
  of the level above but is nobody's child (its parent's ``child_count`` is unchanged,
  so no value pass gathers it); it is a chance edge (owner ``P``) of chance reach 0, not
  a decision, not a terminal (``leaf_index`` is the zero pad).
* ``H`` hands: the largest hand count of any player of any member; a padded hand (and
  a player's hands past its own count, the member's own padding) has weight 0, is
  blocked everywhere (``alive`` 0), compatible with no hand (``compat``
  0; ranked members keep no ``compat``, ``[0, 0]``), and its rows are inert padding
  rows (owned by nobody, slot 0 only). In the ranked tables the zero-pad hand index
  ``H`` of a member becomes the stack's ``H``.
* ``D`` decisions: a member's decision ``d`` keeps its ordinal; padded decisions have no
  children (``child_of`` = ``N``). Where the members' decisions differ in count, each
  member is padded, player by player and legal group by legal group (its decisions of
  ``k`` actions legal for its hands), to the stack's count, the most of any member
  (:func:`_block_pads`): such a padded decision is its player's (its ``decision_node`` is
  one of that player's real decisions, read, never written; ``decision_legal`` its ``k``
  first slots) and has that player's ``H_p`` rows, all padding rows (``NO_PLAYER``, slot
  0 only: nothing reaches them, nothing updates them), so every member has the stack's
  blocks and the stack is stepped per player block (``PublicStructure.player_decisions``,
  ``legal_groups``). Where that layout would cost more than :data:`BLOCK_ROWS_SLACK`
  times the rows of the other, padded decisions have no rows (the row path).
* ``I`` rows: a member's decision of player ``p`` has the stack's ``H_p`` rows (the most
  hands of ``p`` in any member; those past the member's own count are padding rows), its
  decisions one after another from row 0 (``decision_row``), the sink the stack's last
  row; a member's rows past its decisions' (where another member has more) are padding.
* ``A`` actions: padded slots are never legal and have no child.
* ``T`` terminals of each operator (folds, showdowns, tables): padded entries have payoff,
  stake and table 0 and no ``leaf_index`` points at them (value 0 in every case).
* ``K`` blocked sets, ``S`` strength tables, ``U`` payoff tables, ``M`` (hand, card)
  entries: padded with zeros (or the zero-pad hand), never referenced.
* ``E`` merged chance outcomes (members on their merged, suit-isomorphic trees): laid
  out level by level, each level as wide as the member with the most there
  (``PublicStructure.merges`` of the stack); a padded outcome's chance node is the next
  level's first node, one past the level's segments, so the value pass drops it.

Shapes: every tensor of :class:`~jaxcfr.tensors.PublicTensors` gains a leading ``B``
axis, its other axes the maxima above (``deal_scale`` is ``[B]``). The members must agree
on the terminal operators (all ranked or all dense: lower them with one ``terminals=``).

Example::

    >>> from jaxcfr_games.holdem.boards import board_spots, river_boards
    >>> stack = stack_public(board_spots(river_boards("Td9d6h5c")))   # every river card
    >>> stack.batch_size, stack.num_nodes
    (48, 21)
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from jaxcfr.game.public import PublicGame
from jaxcfr.lowering.budget import (MemoryBudgetError, MemoryFootprint, default_memory_budget,
                                    format_bytes)
from jaxcfr.lowering.public import (_DEVICE_FIXED, STATE_TABLES, PublicLowered, PublicSize,
                                    lower_public, public_footprint)
from jaxcfr.tensors import NO_PARENT, PublicStructure, PublicTensors, decision_rows

__all__ = ["PublicStack", "stack_public", "unstack_public_rows", "stack_public_rows",
           "PADDED_AXES", "stack_footprint", "check_stack_budget", "stack_overlap_fits",
           "precheck_stack",
           "PRECHECK_MEMBERS", "lower_stack", "StackError", "unmerge_members",
           "BLOCK_ROWS_SLACK",
           # the padding of one member, shared with the hand buckets (public_buckets)
           "merge_layout", "common_sizes", "member_decision_rows", "pad_member"]

#: The axes of every :class:`PublicTensors` field, by name (``N`` nodes, ``D`` decisions,
#: ``A`` actions, ``I`` rows, ``H`` hands, ``Hr`` hands of the ranked tables (0 when
#: dense), ``Hd`` hands of the dense compatibility (0 when ranked), ``P`` players, ``K``
#: blocked sets, ``Tf``/``Ts``/``Tt`` terminals of each operator, ``S`` strength tables,
#: ``U`` payoff tables, ``M`` (hand, card) entries, ``J`` cards per hand of the ranked
#: tables, ``C`` cards held by any hand). A new field of PublicTensors needs its axes (and,
#: if it holds indices, its remapping in :func:`pad_member`) here.
PADDED_AXES: dict[str, tuple[str, ...]] = {
    "parent": ("N",), "parent_slot": ("N",), "edge_owner": ("N",), "edge_decision": ("N",),
    "node_base": ("N",), "decision_node": ("D",), "child_of": ("D", "A"),
    "first_child": ("N",), "child_count": ("N",), "leaf_index": ("N",),
    "node_player": ("N",), "chance_reach": ("N",), "node_path": ("N",),
    "alive": ("K", "P", "H"), "weights": ("P", "H"), "compat": ("Hd", "Hd"),
    "fold_node": ("Tf",), "fold_payoff": ("Tf", "P"), "show_node": ("Ts",),
    "show_stake": ("Ts",), "show_index": ("Ts",), "strengths": ("S", "P", "H"),
    "table_node": ("Tt",), "table_index": ("Tt",), "tables": ("U", "P", "H", "H"),
    "deal_scale": (), "rank_order": ("S", "P", "Hr"), "rank_lo": ("S", "P", "Hr"),
    "rank_hi": ("S", "P", "Hr"), "pair_order": ("S", "P", "M"),
    "pair_lo": ("S", "P", "Hr", "J"), "pair_hi": ("S", "P", "Hr", "J"),
    "fold_pair": ("P", "M"), "hand_cards": ("P", "Hr", "J"), "cards": ("C",),
    "pair_start": ("P", "Hr", "J"), "pair_end": ("P", "Hr", "J"),
    "same": ("P", "Hr"), "same_weaker": ("S", "P", "Hr"), "same_stronger": ("S", "P", "Hr"),
    "decision_legal": ("D1", "A"), "decision_player": ("D1",), "hand_count": ("P",),
    "decision_row": ("D1",), "row_space": ("I", "Z"),
    "merge_parent": ("E",), "merge_child": ("E",), "merge_source": ("E", "P", "H"),
}
#: Fields holding hand indices whose zero pad (the member's ``H``) becomes the stack's.
_HAND_INDEX = ("rank_order", "pair_order", "fold_pair", "same")
#: Fields padded with -1 (no card) rather than 0.
_CARD_INDEX = ("hand_cards", "cards")


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class PublicStack:
    """Public-tree games padded to one shape (see the module).

    ``tensors`` have a leading ``B`` axis; ``structure`` is shared by every member;
    ``members`` keep each member's own :class:`PublicLowered` (its host tables, its
    unpadded shapes). Member ``b``'s row of its decision ``d`` and hand ``h`` is the
    stack's row of the same decision and hand (:func:`unstack_public_rows`).
    """
    tensors: PublicTensors
    structure: PublicStructure
    members: tuple[PublicLowered, ...]
    constant_sum: float | None = None     # the members' common payoff sum, else None
    name: str = ""
    pots: tuple | None = None             # [B] each member game's ``pot`` (hold'em spots:
                                          # values in percent of the pot), else None
    unmerged: Callable | None = None      # unmerged(b, terminals): member b lowered again
                                          # without merged chance outcomes (None: its game
                                          # is not known); a lock that breaks a member's
                                          # suit symmetry is solved there (unmerge_members)

    num_players = 2
    nash_value = None                     # (what a run's evaluation reads of a stacked game)
    br_rounds = 1                         # the public kernel's best response is one pass
    perfect_recall = True

    def __repr__(self) -> str:
        return (f"PublicStack({self.batch_size} games: {self.num_nodes:,} public nodes, "
                f"{max(self.structure.hands)} hands, {self.num_rows:,} rows, "
                f"{self.max_actions} actions max, each padded)")

    @property
    def batch_size(self) -> int:
        return len(self.members)

    @property
    def level_start(self) -> tuple[int, ...]:
        return self.structure.level_start

    @property
    def ranked(self) -> bool:
        return self.structure.ranked

    @property
    def num_nodes(self) -> int:
        return int(self.tensors.parent.shape[1])

    @property
    def num_rows(self) -> int:
        """Rows per member, the sink included (``I``)."""
        return int(self.tensors.row_shape[0])

    @property
    def max_actions(self) -> int:
        return int(self.tensors.row_shape[1])

    @property
    def nbytes(self) -> int:
        return int(sum(np.asarray(t).nbytes for t in self.tensors))

    def member_tables(self, table) -> list[np.ndarray]:
        """Each member's own ``[I_b, A_b, *b]`` of a stack's table ``[B, I, A, *b]``
        (:func:`unstack_public_rows`; a Runner's profiles of the stack)."""
        return unstack_public_rows(self, table)

    def sizes(self) -> dict[str, Any]:
        """The padded sizes per member, and the members'."""
        return {"members": self.batch_size, "nodes": self.num_nodes, "rows": self.num_rows,
                "hands": max(self.structure.hands), "max_actions": self.max_actions,
                "bytes": self.nbytes, "terminals": "ranked" if self.ranked else "dense",
                "member_nodes": [m.num_nodes for m in self.members],
                "member_hands": [list(m.structure.hands) for m in self.members]}


def padded_size(sizes: Sequence[PublicSize]) -> PublicSize:
    """The sizes every member is padded to: each field's largest over ``sizes`` (the node
    count is a lower bound: the stack pads level by level)."""
    sizes = list(sizes)
    return PublicSize(*(max(getattr(z, f) for z in sizes) for f in PublicSize._fields))


def stack_footprint(sizes: Sequence[PublicSize], count: int, *, float_bytes: int = 4,
                    state_tables: int = STATE_TABLES, overlapped: bool = False
                    ) -> MemoryFootprint:
    """The bytes a stack of ``count`` members needs, each padded to the largest of
    ``sizes`` (the members lowered so far: :attr:`PublicLowered.public_size`): every member
    kept lowered on the host and its padded tables, state (``state_tables`` ``[I, A]``
    tables of ``float_bytes`` floats: the solver's own, as
    :func:`~jaxcfr.lowering.public.public_footprint` counts one tree's) and temporaries on
    the device (``overlapped``: the evaluation's beside the chunk's), the runtime's fixed
    share once. Members whose decisions differ in count may be padded to the stack's
    player blocks (:func:`_block_pads`), which adds rows up to :data:`BLOCK_ROWS_SLACK`
    times the largest member's: such a stack is counted at that bound."""
    sizes = list(sizes)
    z = padded_size(sizes)
    if len({(x.decisions, x.decision_rows) for x in sizes}) > 1:
        z = z._replace(decision_rows=int(np.ceil((z.rows - 1) * BLOCK_ROWS_SLACK)))
    one = public_footprint(z, float_bytes, state_tables=state_tables, overlapped=overlapped)
    n = int(count)
    device = _DEVICE_FIXED + n * (one.device - _DEVICE_FIXED)
    return MemoryFootprint(one.lowering, n * one.lowered, device,
                           one.lowering + n * one.lowered + device)


def check_stack_budget(sizes: Sequence[PublicSize], count: int, budget: int | None = None,
                       *, what: str = "members", float_bytes: int = 4,
                       state_tables: int = STATE_TABLES) -> None:
    """Raise :class:`~jaxcfr.lowering.budget.MemoryBudgetError` when a stack of ``count``
    members, padded to the largest of ``sizes`` (those lowered so far), solved with a
    state of ``state_tables`` tables of ``float_bytes`` floats, needs more than
    ``budget`` bytes (default :func:`~jaxcfr.lowering.budget.default_memory_budget`): a
    stack too large for the machine is refused after its first member, not after all of
    them. The error names the count, the bytes per member, the total and the budget."""
    budget = default_memory_budget() if budget is None else int(budget)
    need = stack_footprint(sizes, count, float_bytes=float_bytes, state_tables=state_tables)
    if need.total > budget:
        z = padded_size(sizes)
        per = (need.total - _DEVICE_FIXED - need.lowering) / max(int(count), 1)
        floats = f", tables of {8 * int(float_bytes)}-bit floats" if float_bytes != 4 else ""
        raise MemoryBudgetError(
            f"a stack of {int(count):,} {what} of up to {z.describe()} needs about "
            f"{format_bytes(need.total)} ({format_bytes(per)} a member; a solver state of "
            f"{int(state_tables)} tables{floats}), over the memory "
            f"budget of {format_bytes(budget)}: stack fewer {what}, or set memory_budget= "
            "or JAXCFR_MEMORY_BUDGET=BYTES to raise it", rule="memory-budget")


def stack_overlap_fits(stack: PublicStack, budget: int | None = None, *,
                       float_bytes: int = 4, state_tables: int = STATE_TABLES) -> bool:
    """Whether a run of ``stack`` may evaluate a zero state (the evaluation's compile
    warm-up) while its first chunks run: both programs' temporaries at once within
    ``budget`` (:func:`stack_footprint` ``overlapped``), as
    :func:`~jaxcfr.lowering.public.evaluation_overlap_fits` decides for one tree."""
    budget = default_memory_budget() if budget is None else int(budget)
    need = stack_footprint([m.public_size for m in stack.members], stack.batch_size,
                           float_bytes=float_bytes, state_tables=state_tables,
                           overlapped=True)
    return need.total <= budget


#: How many members, spread over a stack, :func:`precheck_stack` lowers to size it.
PRECHECK_MEMBERS = 16


def precheck_stack(lowered_at: Callable[[int], PublicLowered], count: int,
                   budget: int | None = None, *, what: str = "members",
                   float_bytes: int = 4, state_tables: int = STATE_TABLES
                   ) -> dict[int, PublicLowered]:
    """Size a stack of ``count`` members before building it: lower up to
    :data:`PRECHECK_MEMBERS` of them, spread evenly over the stack (``lowered_at(b)``:
    member ``b`` lowered), and :func:`check_stack_budget` with their sizes. Members differ
    (a board blocks other hands), so this is an estimate: :func:`stack_public` checks
    again as it lowers each member. Returns the members it lowered, by index, for the
    caller to stack rather than lower again."""
    picks = sorted({int(b) for b in np.linspace(0, count - 1, min(count, PRECHECK_MEMBERS))})
    done = {b: lowered_at(b) for b in picks}
    check_stack_budget([m.public_size for m in done.values()], count, budget, what=what,
                       float_bytes=float_bytes, state_tables=state_tables)
    return done


def lower_stack(lowered_at: Callable[..., PublicLowered], count: int, *,
                budget: int | None = None, what: str = "members",
                progress: Callable[[int, int], None] | None = None,
                float_bytes: int = 4, state_tables: int = STATE_TABLES) -> PublicStack:
    """A stack of ``count`` members lowered one by one, each once: sized first
    (:func:`precheck_stack`: a stack over the memory budget is refused after at most
    :data:`PRECHECK_MEMBERS` members, and those are stacked, not lowered again), the rest
    lowered in order (``progress(done, count)`` after each member), and when the members'
    terminals differ the dense ones lowered again ranked (as :func:`stack_public` does with
    ``terminals="auto"``), then stacked.

    ``lowered_at(b)`` lowers member ``b`` with ``terminals="auto"`` (on its merged tree,
    where its game merges chance outcomes and the caller's lowering does), ``lowered_at(b,
    "ranked")`` with ranked terminals, ``lowered_at(b, terminals, merges=False)`` walking
    every outcome (the stack's :attr:`PublicStack.unmerged`: a lock that breaks a member's
    suit symmetry); the caller chooses the cache, the names, the status. The budget
    counts a solver state of ``state_tables`` tables of ``float_bytes`` floats (the
    solver's: :func:`check_stack_budget`). Raises
    :class:`MemoryBudgetError`, what ``lowered_at`` raises, and :class:`StackError` where
    :func:`stack_public` refuses the members.
    """
    sized = precheck_stack(lowered_at, count, budget, what=what, float_bytes=float_bytes,
                           state_tables=state_tables)
    members = []
    for b in range(count):
        members.append(sized[b] if b in sized else lowered_at(b))
        if progress is not None:
            progress(b + 1, count)
    if len({m.ranked for m in members}) > 1:              # some ranked: all ranked
        members = [m if m.ranked else lowered_at(b, "ranked") for b, m in enumerate(members)]
    try:
        stack = stack_public(members, memory_budget=budget, float_bytes=float_bytes,
                             state_tables=state_tables)
    except ValueError as e:
        raise StackError(str(e)) from None
    return dataclasses.replace(stack, unmerged=lambda b, terminals="auto": lowered_at(
        b, terminals, merges=False))


class StackError(ValueError):
    """:func:`lower_stack`'s members cannot be stacked (:func:`stack_public`'s message)."""


def stack_public(games: Sequence[PublicGame | PublicLowered], *, terminals: str = "auto",
                 memory_budget: int | None = None, merges: bool = True,
                 blocks: bool = True, float_bytes: int = 4,
                 state_tables: int = STATE_TABLES) -> PublicStack:
    """Pad public trees to one shape and stack them on a leading axis ``B``.

    Args:
      games: :class:`~jaxcfr.game.public.PublicGame` s (lowered here with
        ``terminals``) or lowered ones (:func:`~jaxcfr.lowering.public.lower_public`).
      terminals: for the games lowered here (``"auto"``: ranked when any member's hands
        ask for it, so that all agree).
      memory_budget: bytes (default :func:`~jaxcfr.lowering.budget.default_memory_budget`);
        the stack is checked against it after each member (:func:`check_stack_budget`),
        for a solver state of ``state_tables`` ``[I, A]`` tables of ``float_bytes``
        floats (the solver's own: ``len(solver.tables)``; the default counts two of
        float32).
      merges: lower the games given here with their merged (suit-isomorphic) chance
        outcomes (``PublicGame.chance_merges``: each member on its own merged tree, as
        one spot is solved); ``False`` walks every outcome. Lowered members are taken as
        they are, merged or not.
      blocks: pad members whose decisions differ in count to the stack's player blocks
        (:func:`_block_pads`: stepped per player block, as members that agree are);
        ``False``: their padded decisions rowless (the row path; what stacks did before
        2026-12-07, kept for comparison).

    Raises:
      MemoryBudgetError: the stack would not fit the budget (raised after the first
        member that shows it, before the rest are lowered).
      ValueError: no games, a member that is neither, a member of more than two players,
        or members that mix ranked and dense terminals (lower them with one
        ``terminals=``).
    """
    games = list(games)
    if not games:
        raise ValueError("stack_public() needs at least one public tree")
    for b, g in enumerate(games):
        if not isinstance(g, (PublicGame, PublicLowered)):
            raise ValueError(f"stack_public() takes PublicGames or PublicLowered games; "
                             f"member {b} is a {type(g).__name__}")
    pots = tuple(getattr(g, "pot", None) for g in games)
    pots = pots if all(isinstance(x, (int, float)) and x > 0 for x in pots) else None
    sizes: list[PublicSize] = []

    def lowered(g, **kwargs) -> PublicLowered:     # each member checked as it comes
        out = g if isinstance(g, PublicLowered) else lower_public(g, merges=merges, **kwargs)
        sizes.append(out.public_size)
        check_stack_budget(sizes, len(games), memory_budget, float_bytes=float_bytes,
                           state_tables=state_tables)
        return out

    given = tuple(games)

    def unmerged(b: int, terms: str = "auto") -> PublicLowered | None:
        g = given[b]
        return (lower_public(g, merges=False, terminals=terms)
                if isinstance(g, PublicGame) else None)
    if terminals == "auto" and any(isinstance(g, PublicGame) for g in games):
        members = [lowered(g) for g in games]
        if len({g.ranked for g in members}) > 1:       # some ranked: all ranked
            members = [g if g.ranked or isinstance(games[b], PublicLowered)
                       else lowered(games[b], terminals="ranked")
                       for b, g in enumerate(members)]
        games = members
    else:
        games = [lowered(g, terminals=terminals) for g in games]
    many = [b for b, g in enumerate(games) if g.num_players != 2]
    if many:
        raise ValueError(f"stacks of public trees take two-player games; member {many[0]} "
                         f"has {games[many[0]].num_players} players (solve it alone)")
    ranked = {g.ranked for g in games}
    if len(ranked) > 1:
        kinds = ["ranked" if g.ranked else "dense" for g in games]
        raise ValueError(f"the members mix ranked and dense terminals ({kinds}); lower them "
                         "with one terminals='ranked' or terminals='dense'")
    is_ranked = ranked.pop()
    depth = max(len(g.level_start) - 1 for g in games)
    level_width = np.zeros(depth, np.int64)
    widths = np.zeros(depth, np.int64)
    for g in games:
        w = np.diff(g.level_start)
        level_width[:len(w)] = np.maximum(level_width[:len(w)], w)
        widths[:len(g.widths)] = np.maximum(widths[:len(g.widths)], g.widths)
    level_start = np.concatenate([[0], np.cumsum(level_width)])
    hands = _stack_hands(games)
    pads = (_block_pads(games, hands) if blocks
            else [(np.zeros(0, np.int64), np.zeros(0, np.int64))] * len(games))
    sizes = common_sizes(games, int(level_start[-1]), is_ranked, pads)
    merge_start = merge_layout(games, depth)
    sizes["E"] = int(merge_start[-1])
    padded = [pad_member(g, level_start, sizes, merge_start, hands, pad)
              for g, pad in zip(games, pads)]
    tensors = PublicTensors(*(np.stack(parts) for parts in zip(*padded)))
    decisions, groups = _player_blocks(tensors, hands)
    merge_spans = (tuple((int(merge_start[d]), int(merge_start[d + 1])) for d in range(depth))
                   if merge_start[-1] else ())
    structure = PublicStructure(tuple(int(x) for x in level_start), 2, hands, is_ranked,
                                tuple(int(x) for x in widths), decisions, merge_spans, groups)
    sums = {g.constant_sum for g in games}
    known = any(isinstance(g, PublicGame) for g in given)
    return PublicStack(tensors, structure, tuple(games),
                       sums.pop() if len(sums) == 1 else None,
                       "stack(" + ", ".join(g.name for g in games) + ")", pots,
                       unmerged if known else None)


def unmerge_members(stack: PublicStack, which: Sequence[int]) -> PublicStack | None:
    """``stack`` with members ``which`` lowered again without merged chance outcomes
    (:attr:`PublicStack.unmerged`, with the stack's terminals) and stacked again (its
    pots and name kept); ``None`` when the stack does not know a member's game."""
    if stack.unmerged is None:
        return None
    members = list(stack.members)
    for b in which:
        again = stack.unmerged(int(b), "ranked" if stack.ranked else "auto")
        if again is None:
            return None
        members[int(b)] = again
    out = stack_public(members)
    return dataclasses.replace(out, name=stack.name, pots=stack.pots, unmerged=stack.unmerged)


def merge_layout(games: Sequence[PublicLowered], depth: int) -> np.ndarray:
    """``[depth + 1]`` where each level's merged outcomes start in the stack: level ``d``
    holds as many as the member with the most there (``PublicStructure.merges`` of the
    stack; the others' padded, :func:`pad_member`)."""
    most = np.zeros(depth, np.int64)
    for g in games:
        spans = g.structure.merges
        for d, (a, b) in enumerate(spans):
            most[d] = max(most[d], b - a)
    return np.concatenate([[0], np.cumsum(most)]).astype(np.int64)


#: A stack whose members' decisions differ in count is padded to equal player blocks
#: (:func:`_block_pads`) when that costs at most this many times the rows of padding
#: each member's decisions at its end alone (with rowless padded decisions: the row
#: path); a state's tables are ``[I, A]``, so rows are memory per spot. Boards of one
#: spot merged differently (a turn's members of 180 and 284 decisions a player) cost
#: none more: a member that merges more has a subset of the other's decisions.
BLOCK_ROWS_SLACK = 1.25


def _legal_counts(t: PublicTensors, hands: tuple) -> tuple[np.ndarray, np.ndarray]:
    """``(owner [D], count [D])`` of one member's decisions (its tensors ``t``, no batch
    axis) in a stack of ``hands`` per player: each decision's player (of its node) and
    its count of actions legal for any of the stack's hands of that player, as
    :func:`jaxcfr.kernels.public.slots` counts them (the decision's own actions when the
    member has hands of its player, else slot 0 alone; none where the stack has no hands
    of that player)."""
    owner = np.asarray(t.node_player)[np.asarray(t.decision_node)]
    mine = np.asarray(t.hand_count)[owner] > 0                                   # [D_b]
    A = int(t.decision_legal.shape[-1])
    legal = np.where(mine[:, None], np.asarray(t.decision_legal)[:-1], np.arange(A) == 0)
    legal = legal & (np.asarray(hands)[owner] > 0)[:, None]                     # [D_b, A]
    return owner, legal.sum(axis=1)


def _group_counts(owner: np.ndarray, count: np.ndarray) -> dict:
    """``{(p, k): n}``: how many decisions of player ``p`` have ``k`` legal actions
    (:func:`_legal_counts`)."""
    if not len(owner):
        return {}
    keys, n = np.unique(np.stack([owner, count], axis=1), axis=0, return_counts=True)
    return {(int(p), int(k)): int(m) for (p, k), m in zip(keys, n)}


def _block_pads(games: Sequence[PublicLowered], hands: tuple) -> list:
    """Each member's padded decisions, ``(owner [X_b], count [X_b])`` (``X_b`` of them;
    none: ``(empty, empty)``), that give every member the stack's count of decisions of
    each player and each count of legal actions (the most of any member): the stack's
    blocks. A padded decision of player ``p`` and count ``k`` is read as ``p``'s (its
    node one of the member's decisions of ``p``) with ``k`` legal slots. Every member
    ``(empty, empty)`` (its padded decisions rowless: the row path) where the members
    agree already, where a member needs decisions of a player it has none of, or of a
    count its hands cannot give, or where the blocks' rows exceed
    :data:`BLOCK_ROWS_SLACK` times the rowless layout's."""
    none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    counts = [_legal_counts(g.tensors, hands) for g in games]
    groups = [_group_counts(o, k) for o, k in counts]
    want: dict = {}
    for g in groups:
        for key, n in g.items():
            want[key] = max(want.get(key, 0), n)
    if all(g == want for g in groups):
        return [none] * len(games)
    pads = []
    for g, (owner, _), member in zip(groups, counts, games):
        have = np.asarray(member.tensors.hand_count)
        extra = [(p, k) for (p, k) in sorted(want)
                 for _ in range(want[(p, k)] - g.get((p, k), 0))]
        for p, k in extra:                 # the count slots() gives a padded decision
            read = k if have[p] > 0 else int(hands[p] > 0)
            if not (owner == p).any() or read != k:
                return [none] * len(games)
        pads.append((np.asarray([p for p, _ in extra], np.int64),
                     np.asarray([k for _, k in extra], np.int64)))
    blocks = sum(n * hands[p] for (p, _), n in want.items())
    rowless = max(int(member_decision_rows(g, hands)[-1]) for g in games)
    return pads if blocks <= BLOCK_ROWS_SLACK * rowless else [none] * len(games)


def _player_blocks(tensors: PublicTensors, hands: tuple) -> tuple[tuple, tuple]:
    """``(player_decisions, legal_groups)`` of the stack's structure (what
    :mod:`jaxcfr.solvers.public_blocks` keeps per player, static, so one for every
    member): each player's decision count and its decisions grouped by their count of
    actions legal for any of its ``hands`` (padded hands included: legal in slot 0 alone),
    as :attr:`PublicLowered.structure` counts them, when every decision of every member
    is a player's with that player's ``H_p`` rows (real decisions, and the padded ones of
    :func:`_block_pads`) and the members agree; else ``((), ())`` (the row path)."""
    seen = set()
    for b in range(tensors.decision_node.shape[0]):
        owner = np.asarray(tensors.node_player[b])[np.asarray(tensors.decision_node[b])]
        if owner.min(initial=0) < 0:
            return (), ()
        width = np.diff(np.asarray(tensors.decision_row[b]))                  # [D]
        if (width != np.asarray(hands)[owner]).any():      # rowless padded decisions
            return (), ()
        _, count = _legal_counts(PublicTensors(*(np.asarray(x)[b] for x in tensors)),
                                 hands)                                      # [D]
        groups = tuple(tuple((int(k), int(n)) for k, n in zip(*np.unique(
            count[owner == p], return_counts=True))) for p in range(2))
        seen.add((tuple(int(n) for n in np.bincount(owner, minlength=2)), groups))
        if len(seen) > 1:
            return (), ()
    return seen.pop()


def common_sizes(games: Sequence[PublicLowered], num_nodes: int, ranked: bool,
                  pads: Sequence[tuple]) -> dict:
    """Each axis's size in the stack: the members' maxima (``N`` given), their decisions
    and rows counting their padded decisions ``pads`` (:func:`_block_pads`)."""
    sizes: dict[str, int] = {"N": num_nodes, "P": 2}
    for name, axes in PADDED_AXES.items():
        for g in games:
            shape = np.shape(getattr(g.tensors, name))
            for axis, n in zip(axes, shape):
                if axis not in ("N", "I", "P", "D1", "Z"):
                    sizes[axis] = max(sizes.get(axis, 0), int(n))
    sizes["H"] = max(max(g.structure.hands) for g in games)
    sizes["Hr"] = sizes["H"] if ranked else 0
    sizes["Hd"] = 0 if ranked else sizes["H"]
    hands = _stack_hands(games)
    sizes["I"] = max(int(member_decision_rows(g, hands, pad[0])[-1])
                     for g, pad in zip(games, pads)) + 1
    sizes["D"] = max(int(g.tensors.decision_node.shape[0]) + len(pad[0])
                     for g, pad in zip(games, pads))
    sizes["D1"] = sizes["D"] + 1
    sizes["Z"] = 0
    return sizes


def _stack_hands(games: Sequence[PublicLowered]) -> tuple[int, ...]:
    """``[P]`` the stack's hands per player: the most of any member (its structure's)."""
    return tuple(max(g.structure.hands[p] for g in games) for p in range(2))


def member_decision_rows(g: PublicLowered, hands: tuple, pad=()) -> np.ndarray:
    """``[D_b + X + 1]`` the first row of each of member ``g``'s decisions in a stack of
    ``hands`` per player (each decision ``hands[p]`` rows), then of its ``X`` padded
    decisions of players ``pad`` (:func:`_block_pads`), the last one past them."""
    return decision_rows(np.concatenate([np.asarray(g.tensors.decision_player)[:-1],
                                         np.asarray(pad, np.int64)]), hands)


def pad_member(g: PublicLowered, level_start: np.ndarray, sizes: dict,
                merge_start: np.ndarray, hands: tuple, pad: tuple) -> PublicTensors:
    """One member's tensors padded to ``sizes`` (see the module); its merged outcomes
    placed level by level at ``merge_start`` (:func:`merge_layout`); its padded
    decisions ``pad`` (:func:`_block_pads`) after its own, the rest rowless."""
    t = g.tensors
    N, D, H = sizes["N"], sizes["D"], sizes["H"]
    n_old, d_old = g.num_nodes, int(t.decision_node.shape[0])
    h_old = max(g.structure.hands)
    # new position of every node: its level's new start plus its offset in the level
    old_start = np.asarray(g.level_start)
    level = np.repeat(np.arange(len(old_start) - 1), np.diff(old_start))
    new_pos = (level_start[level] + np.arange(n_old) - old_start[level]).astype(np.int32)
    to_node = np.append(new_pos, N).astype(np.int32)         # the pad node index n_old -> N
    tf, ts = sizes["Tf"], sizes["Ts"]
    terminals = tf + ts + sizes["Tt"]
    f_old, s_old = t.fold_node.shape[0], t.show_node.shape[0]
    t_old = f_old + s_old + t.table_node.shape[0]
    leaf_map = np.concatenate([np.arange(f_old), tf + np.arange(s_old),
                               tf + ts + np.arange(t_old - f_old - s_old), [terminals]])
    ordinal = np.append(np.arange(d_old), D).astype(np.int32)     # d_old (none) -> D

    def nodes(x, fill):
        out = np.full((N,) + x.shape[1:], fill, x.dtype)
        out[new_pos] = x
        return out

    def ends(x, shape, fill=0):
        """``x`` padded at the end of every axis to ``shape``."""
        out = np.full(shape, fill, x.dtype)
        out[tuple(slice(0, n) for n in x.shape)] = x
        return out

    level_of_new = np.repeat(np.arange(len(level_start) - 1), np.diff(level_start))
    parent = np.where(level_of_new > 0, level_start[np.maximum(level_of_new, 1)] - 1,
                      NO_PARENT).astype(np.int32)
    parent[new_pos] = np.where(t.parent == NO_PARENT, NO_PARENT, to_node[t.parent])
    pad_owner, pad_count = pad                                    # [X], [X]
    first = member_decision_rows(g, hands, pad_owner)              # [d_old + X + 1] stack rows
    decision_row = np.concatenate([first, np.repeat(first[-1:], D - len(first) + 1)]
                                  ).astype(np.int32)
    # a padded decision is read as its player's (the kernels take a decision's player
    # from its node): its node that player's first decision, never written
    player = np.asarray(t.node_player)[np.asarray(t.decision_node)]           # [d_old]
    pad_node = (np.asarray(t.decision_node)[np.argmax(player[:, None] == pad_owner, axis=0)]
                if len(pad_owner) else np.zeros(0, np.int64))
    base = np.full(n_old, -1, np.int32)
    base[np.asarray(t.decision_node)] = first[:d_old]
    node_base = nodes(base, -1)

    def decisions(x, shape):
        """A per-decision table ``[D_b + 1, ...]`` (the sink last) as ``shape`` ``[D + 1,
        ...]``: the padded decisions are copies of the sink's entry (slot 0 alone, no
        player)."""
        x = ends(x, (x.shape[0],) + shape[1:])
        return np.concatenate([x[:-1], np.repeat(x[-1:], D - d_old + 1, axis=0)])
    out = {}
    for name, axes in PADDED_AXES.items():
        x = np.asarray(getattr(t, name))
        shape = tuple(sizes[a] for a in axes)
        if name.startswith("merge_"):
            continue                                     # _pad_merges
        if name == "parent":
            out[name] = parent
        elif name == "node_base":
            out[name] = node_base
        elif name == "decision_row":
            out[name] = decision_row
        elif name == "row_space":
            out[name] = np.zeros(shape, bool)
        elif name == "decision_player":
            out[name] = decisions(x, shape)                 # padded: NO_PLAYER's rows
        elif name == "decision_legal":                      # padded: their k first slots
            out[name] = decisions(x, shape)
            out[name][d_old:d_old + len(pad_count)] = np.arange(shape[1]) < pad_count[:, None]
        elif name == "alive":                   # a player's hands past its own count are
            out[name] = ends(x, shape) * (     # blocked too (the member's own padding)
                np.arange(sizes["H"]) < np.asarray(g.structure.hands)[:, None]
            ).astype(x.dtype)
        elif name in ("first_child",):
            out[name] = nodes(to_node[x], N)
        elif name == "edge_decision":
            out[name] = nodes(ordinal[x], D)
        elif name == "leaf_index":
            out[name] = nodes(leaf_map[x].astype(x.dtype), terminals)
        elif name == "edge_owner":
            out[name] = nodes(x, 2)
        elif name == "node_player":
            out[name] = nodes(x, -1)
        elif axes and axes[0] == "N":                    # parent_slot, child_count, reach,
            out[name] = nodes(x, 0)                      # node_path: 0 at padding
        elif name == "decision_node":                    # rowless padded decisions:
            out[name] = ends(to_node[np.concatenate([x, pad_node]).astype(np.int64)],
                             shape)                      # the root
        elif name == "child_of":
            out[name] = ends(to_node[x], shape, N)
        elif name in ("fold_node", "show_node", "table_node"):
            out[name] = ends(to_node[x], shape)
        elif name in _CARD_INDEX:
            out[name] = ends(x, shape, -1)
        elif name in _HAND_INDEX:
            out[name] = ends(np.where(x == h_old, H, x).astype(x.dtype), shape, H)
        else:
            out[name] = ends(x, shape)
    out.update(_pad_merges(g, level_start, merge_start, to_node, H))
    missing = set(PublicTensors._fields) - set(out)
    if missing:
        raise ValueError(f"stack_public() does not know how to pad {sorted(missing)}")
    return PublicTensors(**out)


def _pad_merges(g: PublicLowered, level_start: np.ndarray, merge_start: np.ndarray,
                to_node: np.ndarray, H: int) -> dict:
    """``merge_parent [E]``, ``merge_child [E]``, ``merge_source [E, P, H]`` of member
    ``g`` in the stack: its merged outcomes of level ``d`` at ``merge_start[d]`` on,
    their nodes renumbered (``to_node``), each player's hands past the member's own
    read as themselves. A padded outcome of level ``d`` is inert: its chance node is the
    next level's first (``level_start[d + 1]``, one past the level's segments, so the
    value pass's segment sum drops it), its child that node too, its renaming the
    identity."""
    t = g.tensors
    E, P = int(merge_start[-1]), 2
    parent = np.zeros(E, np.int32)
    child = np.zeros(E, np.int32)
    source = np.broadcast_to(np.arange(H, dtype=np.int32), (E, P, H)).copy()
    for d in range(len(merge_start) - 1):
        lo, hi = int(merge_start[d]), int(merge_start[d + 1])
        parent[lo:hi] = child[lo:hi] = level_start[d + 1]
    for d, (a, b) in enumerate(g.structure.merges):
        at = int(merge_start[d])
        parent[at:at + b - a] = to_node[t.merge_parent[a:b]]
        child[at:at + b - a] = to_node[t.merge_child[a:b]]
        src = np.asarray(t.merge_source[a:b])
        source[at:at + b - a, :, :src.shape[2]] = src
    return {"merge_parent": parent, "merge_child": child, "merge_source": source}


def _member_rows(stack: PublicStack, b: int) -> np.ndarray:
    """``[I_b - 1]`` the stack's row of each of member ``b``'s rows but its sink (member
    ``b``'s row of its decision ``d`` and hand ``h`` is the stack's row of the same)."""
    g = stack.members[b]
    mine = np.asarray(g.tensors.decision_row, np.int64)                    # [D_b + 1]
    there = np.asarray(stack.tensors.decision_row[b], np.int64)[:len(mine) - 1]
    width = np.diff(mine)
    hand = np.arange(int(mine[-1])) - np.repeat(mine[:-1], width)
    return np.repeat(there, width) + hand


def unstack_public_rows(stack: PublicStack, table) -> list[np.ndarray]:
    """Split a ``[B, I, A, *b]`` table of a stack into each member's ``[I_b, A_b, *b]``
    (its rows and its actions, padding dropped)."""
    table = np.asarray(table)
    out = []
    for b, g in enumerate(stack.members):
        x = np.concatenate([table[b, _member_rows(stack, b)], table[b, -1:]])
        out.append(x[:, :g.max_actions])
    return out


def stack_public_rows(stack: PublicStack, tables, fill=0) -> np.ndarray:
    """Each member's table ``[I_b, A_b, *b]`` (a list of ``B``) placed in the stack's
    ``[B, I, A, *b]`` (the inverse of :func:`unstack_public_rows`): member ``b``'s row of
    its decision ``d`` and hand ``h`` at the stack's row of the same, its sink at the last
    row, ``fill`` at the padded rows and actions."""
    tables = [np.asarray(x) for x in tables]
    if len(tables) != stack.batch_size:
        raise ValueError(f"{len(tables)} tables for a stack of {stack.batch_size} members")
    trailing = tables[0].shape[2:]
    out = np.full((stack.batch_size, stack.num_rows, stack.max_actions) + trailing, fill,
                  np.result_type(*tables))
    for b, (g, x) in enumerate(zip(stack.members, tables)):
        if x.shape[:2] != (g.num_rows, g.max_actions) or x.shape[2:] != trailing:
            raise ValueError(f"member {b}'s table {x.shape} does not fit its [I, A] = "
                             f"{(g.num_rows, g.max_actions)}")
        out[b, _member_rows(stack, b), :g.max_actions] = x[:-1]
        out[b, -1, :g.max_actions] = x[-1]
    return out
