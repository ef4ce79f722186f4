"""Node locks as users write them: information sets and action probabilities, resolved to
the rows of a lowered game (:class:`~jaxcfr.solvers.locking.Lock`).

``lock=`` of :func:`jaxcfr.solve` and :func:`jaxcfr.solve_public` (and ``jaxcfr solve
--lock FILE.json``) takes a mapping from information set to ``{action: probability}``:

* a history tree: the information set's key as the game names it (``"0|1|"`` in
  jaxcfr's Kuhn poker, ``LoweredGame.infoset_keys``), or ``(player, key)`` where the key
  alone names rows of several players;
* a public tree: ``(public history, hand)``: the public actions and outcomes from the
  root (a tuple, or a string ``"Check, Bet(60), Ah"``), and the acting player's hand
  label (``"AsKs"``), or ``None`` / ``"*"`` for every hand at the node; on a hold'em
  spot also a hand class of the 13x13 grid (``"AA"``, ``"AKs"``, ``"AKo"``, ``"AK"``:
  both) and dealt cards by name. ``(player, hand, history)``, the keys of
  :meth:`~jaxcfr.api.public.PublicSolveResult.profile`, is taken too.

On a public tree lowered with merged (suit-isomorphic) chance outcomes the keys still
name the unmerged game's information sets (any card, merged or not): a lock that keeps the
suit symmetry (:func:`symmetric_lock`) locks the merged tree's rows; one that breaks it
is refused there (:func:`resolve_lock`) and, given as a game, solved on the tree lowered
without merging (:func:`jaxcfr.api.runners.make_runner`, which says so).

Entries apply in order: a later one overrides an earlier one's rows (a whole node first,
then single hands). Errors (:class:`~jaxcfr.solvers.locking.LockError`, a
``ValueError``) name an unknown information set (with the closest keys), an unknown or
illegal action, or probabilities that do not sum to 1.

A lock file (JSON) is a list of entries ``{"infoset": KEY, "player": P (optional),
"strategy": {ACTION: P}}`` (history trees) or ``{"history": [STEPS] or "Check, Bet(60)",
"hand": "AKs" (optional: every hand), "member": M (optional), "strategy": {...}}`` (public
trees), or an object ``{KEY: {ACTION: P}}`` of history-tree keys.

A stack of public trees (:class:`~jaxcfr.lowering.public_stack.PublicStack`;
:func:`resolve_stack_lock`) is locked per member: ``lock=`` is

* one lock (a mapping as above, a lock file): every entry applies to each member where
  its public history is a decision of the named player and its hands are dealt (a
  member without that node is not locked there; an entry found in no member is an
  error), and a lock file's entry with a ``"member"`` (its index, or its name: the
  member game's name, a board of ``game.boards`` in any case, as ``--boards`` reads it)
  applies to that member only;
* a list of one lock (or ``None``) per member, or a mapping ``{member: lock}`` (index
  or name), each resolved against its own member as :func:`resolve_lock` does.

Members without a lock play unlocked (their mask is all false: the same program, the
same numbers as an unlocked member). A member lowered with merged chance outcomes keeps
its merged tree where its lock keeps the suit symmetry (:func:`symmetric_lock`'s check,
member by member); :func:`locked_stack` lowers the others again without merging.
"""

from __future__ import annotations

import difflib
import json
import os
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

from jaxcfr._util.reading import read_bytes
from jaxcfr.lowering.public import PublicLowered
from jaxcfr.lowering.public_stack import PublicStack, stack_public_rows, unmerge_members
from jaxcfr.solvers.locking import Lock, LockError, lock_from_rows

__all__ = ["resolve_lock", "resolve_stack_lock", "history_lock", "public_lock",
           "symmetric_lock", "read_lock_file", "lock_blamed", "ForMember", "LockError",
           "BREAKS_SYMMETRY", "locked_stack", "BrokenSymmetry", "unmerged_note"]

#: What a solve that falls back to the unmerged tree says (:func:`symmetric_lock`).
BREAKS_SYMMETRY = "the lock breaks the suit symmetry"


class ForMember(NamedTuple):
    """A lock entry's key that applies to one member of a stack only (a lock file's
    ``"member"`` field): ``member`` its index or name, ``key`` the information set."""
    member: int | str
    key: Any


def resolve_lock(lowered, lock) -> Lock | None:
    """``lock`` (a mapping, a lock file's path, a :class:`Lock` of host tables, or
    ``None``) as the host :class:`Lock` of ``lowered``'s rows."""
    if lock is None:
        return None
    if isinstance(lock, (str, os.PathLike)):
        lock = read_lock_file(lock)
    if isinstance(lock, Lock):
        shape = tuple(lowered.tensors.legal_mask.shape)
        if np.shape(lock.strategy) != shape or np.shape(lock.mask) != shape[:1]:
            raise LockError(f"a Lock of tables {np.shape(lock.strategy)} and "
                            f"{np.shape(lock.mask)} does not fit the game's [I, A] = {shape}")
        return lock
    _check_one_game_lock(lock)
    if isinstance(lowered, PublicLowered):
        if lowered.merged:
            found = symmetric_lock(lowered, lock)
            if found is None:
                raise LockError(BREAKS_SYMMETRY + ": a public tree lowered with merged "
                                "(suit-isomorphic) chance outcomes cannot solve it; give "
                                "the PublicGame or its game string (a locked solve then "
                                "walks every outcome), or lower it with merges=False")
            return found
        return public_lock(lowered, lock)
    if getattr(lowered, "batch_size", None) is not None:
        raise LockError("node locking takes one game, not a stack")
    return history_lock(lowered, lock)


def _finish(lowered, rows: dict, actions_of, name_of) -> Lock:
    if not rows:
        raise LockError("the lock names no information set")
    legal = np.asarray(lowered.tensors.legal_mask, bool)
    table, mask = lock_from_rows(rows, actions_of, legal, name_of)
    return Lock(table, mask)


# -- history trees ---------------------------------------------------------------------

def history_lock(lowered, mapping: Mapping) -> Lock:
    """The lock of a history tree (keys: ``LoweredGame.infoset_keys``' keys, or
    ``(player, key)``)."""
    keys = lowered.infoset_keys                       # [I - 1] (player, key)
    exact = {pk: row for row, pk in enumerate(keys)}
    by_key: dict[Any, list[int]] = {}
    by_text: dict[str, list[int]] = {}
    for row, (_, key) in enumerate(keys):
        by_key.setdefault(key, []).append(row)
        by_text.setdefault(str(key), []).append(row)
    rows: dict[int, dict] = {}
    for key, strategy in mapping.items():
        row = _history_row(key, exact, by_key, by_text, keys)
        rows.pop(row, None)
        rows[row] = strategy

    def name_of(row):
        p, key = keys[row]
        return f"player {p}'s information set {key!r}"
    return _finish(lowered, rows, lambda row: lowered.infoset_actions[row], name_of)


def _history_row(key, exact, by_key, by_text, keys) -> int:
    try:
        if key in exact:
            return exact[key]
        found = by_key.get(key) or by_text.get(str(key))
    except TypeError:                                 # an unhashable key
        found = None
    if isinstance(key, (tuple, list)) and len(key) == 2 and not found:
        player, name = key
        hits = [r for r in by_text.get(str(name), []) if keys[r][0] == player]
        if len(hits) == 1:
            return hits[0]
    if not found:
        close = difflib.get_close_matches(str(key), list(by_text), n=3)
        hint = f" (closest: {', '.join(map(repr, close))})" if close else ""
        raise LockError(f"unknown information set {key!r}{hint}")
    if len(found) > 1:
        raise LockError(f"the key {key!r} names information sets of players "
                        f"{sorted(keys[r][0] for r in found)}: give (player, key)")
    return found[0]


# -- public trees ----------------------------------------------------------------------

def _holdem(lowered: PublicLowered):
    """The hold'em helpers (hand classes, card names) when ``lowered``'s hands are
    hold'em hands (labels such as ``"AsKs"``), else ``None``."""
    labels = [x for player in lowered.hands.labels for x in player]
    if not labels or not all(isinstance(x, str) and len(x) == 4 for x in labels):
        return None
    try:
        from jaxcfr_games.holdem import grid
        for x in labels[:3]:
            grid.grid_cell(x)
    except (ImportError, ValueError):
        return None
    return grid


def _shown(steps, holdem) -> str:
    """A public history as the errors show it: on hold'em trees written as a lock takes
    it, dealt cards by name (``'Check, Check, Td'``, not ``(..., 33)``); else its repr."""
    if not steps:
        return "the root"
    return repr(holdem.history_text(tuple(steps))) if holdem is not None else repr(steps)


def _history_steps(history, holdem) -> tuple:
    if isinstance(history, str):
        if holdem is not None:
            try:
                return holdem.parse_history(history)
            except ValueError as e:
                raise LockError(str(e)) from None
        return tuple(x.strip() for x in history.split(",")) if history.strip() else ()
    if not isinstance(history, (tuple, list)):
        raise LockError(f"a public history is a tuple of public actions and outcomes (or "
                        f"a string 'Check, Bet(60)'), got {history!r}")
    return tuple(history)


def _node(lowered: PublicLowered, steps: tuple, holdem) -> int:
    t = lowered.tensors
    node = _walk(steps, holdem, lambda n: [(int(c), lowered.node_action[c]) for c in
                                           np.flatnonzero(t.parent == n)], lowered.history)
    if t.node_base[node] < 0:
        raise LockError(f"unknown information set: the node after {_shown(steps, holdem)} is "
                        "not a decision (a terminal or a chance node)")
    return node


def _walk(steps: tuple, holdem, children, history) -> int:
    """The node ``steps`` lead to from node 0: ``children(node)`` ``[(child, step)]``,
    ``history(node)`` its public history (for the errors)."""
    node = 0
    for x in steps:
        kids = children(node)
        match = [c for c, step in kids if _same_step(step, x, holdem)]
        if not match:
            here = [_shown((step,), holdem)[1:-1] if holdem is not None else str(step)
                    for _, step in kids]
            raise LockError(f"unknown information set: {x!r} is not a public action or "
                            f"outcome after {_shown(history(node), holdem)}"
                            + (f" (there: {', '.join(here[:12])}"
                               f"{', ...' if len(here) > 12 else ''})" if here else ""))
        node = match[0]
    return node


def _same_step(action, x, holdem) -> bool:
    if action == x or str(action) == str(x):
        return True
    if holdem is not None and isinstance(x, str) and isinstance(action, (int, np.integer)):
        try:
            return holdem.card(x) == int(action)
        except ValueError:
            return False
    return False


def _acting_hands(lowered, t, node: int, player, hand, holdem, steps) -> list:
    """The hands of whoever acts at ``node`` (after ``steps``) that ``hand`` names, once
    ``player`` (if given) is checked to be the one acting there."""
    acting = int(t.node_player[node])
    if player is not None and int(player) != acting:
        raise LockError(f"player {player} does not act after {_shown(steps, holdem)} "
                        f"(player {acting} does)")
    return _hands(lowered, acting, hand, holdem, _shown(steps, holdem) if steps else "the root")


def _hands(lowered: PublicLowered, player: int, hand, holdem, where: str) -> list[int]:
    labels = list(lowered.hands.labels[player])
    if hand is None or hand == "*":
        return list(range(len(labels)))
    if hand in labels:
        return [labels.index(hand)]
    if holdem is not None and isinstance(hand, str):
        name = hand.strip()
        classes = [holdem.cell_label(*holdem.grid_cell(x)) for x in labels]
        hits = [h for h, c in enumerate(classes)
                if c == name or (len(name) == 2 and name[0] != name[1] and c[:2] == name)]
        if hits:
            return hits
    raise LockError(f"{hand!r} is not a hand of player {player} at {where}"
                    + (" (a hand such as 'AsKs', a class such as 'AKs', or '*')"
                       if holdem is not None else ""))


def public_lock(lowered: PublicLowered, mapping: Mapping) -> Lock:
    """The lock of a public tree (keys ``(public history, hand)``; see the module)."""
    rows, names, _ = _public_rows(lowered, [(k, v, True) for k, v in mapping.items()])
    return _finish(lowered, rows, *names)


def _public_rows(lowered: PublicLowered, entries, where: str = ""):
    """``(rows {row: strategy}, (actions_of, name_of), hit [E] bool)`` of ``entries``
    ``[(key, strategy, strict)]`` on ``lowered`` (later entries override earlier ones'
    rows). A strict entry whose node or hands ``lowered`` lacks is an error; another is
    skipped there (``hit`` false). ``where``: the member, for the errors."""
    if lowered.merged:
        raise LockError("node locking takes a public tree without merged (suit-isomorphic) "
                        "chance outcomes: a lock can break the symmetry the merge relies "
                        "on; give the PublicGame or its game string (a locked solve walks "
                        "every outcome), or lower it with merges=False")
    holdem = _holdem(lowered)
    t = lowered.tensors
    rows: dict[int, dict] = {}
    node_of_row: dict[int, int] = {}
    hit = []
    for key, strategy, strict in entries:
        player, hand, history = _public_key(key)
        steps = _history_steps(history, holdem)
        try:
            node = _node(lowered, steps, holdem)
            hands = _acting_hands(lowered, t, node, player, hand, holdem, steps)
        except LockError as e:
            if strict:
                raise LockError(f"{where}{e}") from None
            hit.append(False)
            continue
        hit.append(True)
        for h in hands:
            row = int(t.node_base[node]) + h
            rows.pop(row, None)
            rows[row] = strategy
            node_of_row[row] = node

    def name_of(row):
        node = node_of_row[row]
        player = int(t.node_player[node])
        label = lowered.hands.labels[player][row - int(t.node_base[node])]
        return (f"player {player}'s hand {label} after "
                f"{_shown(lowered.history(node), holdem)}")
    return rows, (lambda row: tuple(lowered.node_actions[node_of_row[row]]), name_of), hit


def _public_key(key) -> tuple:
    """``(player or None, hand, history)`` of a public tree's lock key."""
    if isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], (int, np.integer)):
        return key
    if isinstance(key, tuple) and len(key) == 2:
        return (None, key[1], key[0])
    raise LockError(f"a public tree's information set is (public history, hand), got "
                    f"{key!r}")


def _check_one_game_lock(lock) -> None:
    """Raise :class:`LockError` unless ``lock`` is a mapping of one game's information sets
    (no entry tagged for a member of a stack)."""
    if not isinstance(lock, Mapping):
        raise LockError(f"a lock is a mapping from information set to {{action: "
                        f"probability}} (or a lock file), got {type(lock).__name__}")
    tagged = next((k for k in lock if isinstance(k, ForMember)), None)
    if tagged is not None:
        raise LockError(f"the lock's entry for member {tagged.member!r} applies to a stack "
                        "of public trees, not to one game")


# -- public trees with merged chance outcomes (suit isomorphism) ------------------------

def symmetric_lock(lowered: PublicLowered, lock) -> Lock | None:
    """The lock of a public tree whose chance outcomes are merged (suit isomorphism,
    ``PublicLowered.merged``) on its rows, when the lock keeps the symmetry the merge
    relies on; ``None`` when it does not (solve it on the tree lowered with
    ``merges=False``), and on a tree without merged outcomes (:func:`public_lock`'s).

    ``lock`` (a mapping or a lock file, as :func:`public_lock` takes them) names
    information sets of the unmerged game: every public history, through merged outcomes
    too (:meth:`~jaxcfr.lowering.public.PublicLowered.expanded`). Each merged outcome
    ``e`` comes with a renaming of the game's steps and hands: its
    ``merge_renaming[e]`` (``{step: g^-1(step)}``, the outcome itself to its
    representative; absent steps unchanged) and ``merge_source[e]`` (hand ``h`` to
    ``g^-1(h)``). The lock keeps the symmetry when, for every such renaming ``g^-1`` and
    every locked information set ``(history, h)``, ``(g^-1(history), g^-1(h))`` is locked
    to the same probabilities (tolerance 0: the float64 table rows compared exactly);
    every renaming being a bijection of the information sets, the unlocked ones then map
    to unlocked ones too. The unmerged solve is then invariant under the suit
    permutations (its regrets start and are updated symmetric), so the merged tree,
    which reads each merged outcome's subtree from its representative's, solves it
    exactly: each row of the merged tree is locked as every information set read from it
    (:meth:`~jaxcfr.lowering.public.PublicLowered.expanded_rows`).

    A merge whose renaming does not take its outcome to its representative (a game that
    gives no renaming) says nothing of the other steps: no lock is taken as symmetric
    there. A :class:`Lock` of host tables is never taken (it is the unmerged tree's).

    Raises:
      LockError: what :func:`public_lock` raises (an unknown information set, action,
        probabilities that do not sum to 1), the information sets named as the game's own
        histories.
    """
    if isinstance(lock, (str, os.PathLike)):
        lock = read_lock_file(lock)
    if lock is None or isinstance(lock, Lock) or not lowered.merged:
        return None
    _check_one_game_lock(lock)
    found, _ = _symmetric_rows(lowered, [(k, v, True) for k, v in lock.items()])
    if found is _EMPTY:
        raise LockError("the lock names no information set")
    return found


#: :func:`_symmetric_rows`'s lock of entries that name no information set there.
_EMPTY = Lock(np.zeros((0, 0)), np.zeros(0, bool))


def _symmetric_rows(lowered: PublicLowered, entries, where: str = ""
                    ) -> tuple[Lock | None, list]:
    """``(lock, hit [E] bool)`` of ``entries`` ``[(key, strategy, strict)]`` on a merged
    tree (:func:`symmetric_lock`): the merged rows' :class:`Lock`, ``None`` when the
    entries break the symmetry (or a merge gives no renaming), :data:`_EMPTY` when none
    is found there. A strict entry the game lacks is an error; another is skipped
    (``hit`` false), as :func:`_public_rows` does."""
    renamings = _merge_renamings(lowered)
    if renamings is None:
        return None, [True] * len(entries)
    t = lowered.tensors
    holdem = _holdem(lowered)
    # the unmerged tree's public nodes: u -> (node of this tree, game history, hands)
    expanded = list(lowered.expanded())
    try:
        index = {history: u for u, (_, history, _) in enumerate(expanded)}
    except TypeError:                                 # steps that do not hash: no check
        return None, [True] * len(entries)
    children: dict[int, list] = {}
    for u, (_, history, _) in enumerate(expanded):
        if history:
            children.setdefault(index[history[:-1]], []).append((u, history[-1]))
    wanted: dict[tuple, dict] = {}                    # (u, hand) -> {action: probability}
    hit = []
    for key, strategy, strict in entries:
        player, hand, history = _public_key(key)
        steps = _history_steps(history, holdem)
        try:
            u = _walk(steps, holdem, lambda v: children.get(v, []),
                      lambda v: expanded[v][1])
            node = expanded[u][0]
            if t.node_base[node] < 0:
                raise LockError(f"unknown information set: the node after "
                                f"{_shown(steps, holdem)} is not a decision (a terminal or "
                                "a chance node)")
            hands = _acting_hands(lowered, t, node, player, hand, holdem, steps)
        except LockError as e:
            if strict:
                raise LockError(f"{where}{e}") from None
            hit.append(False)
            continue
        hit.append(True)
        for h in hands:
            wanted.pop((u, h), None)
            wanted[(u, h)] = strategy
    if not wanted:
        return _EMPTY, hit
    keys = list(wanted)                               # [K] (u, hand)
    player_of = [int(t.node_player[expanded[u][0]]) for u, _ in keys]
    row_of = np.asarray([int(t.node_base[expanded[u][0]]) + int(expanded[u][2][p][h])
                         for (u, h), p in zip(keys, player_of)], np.int64)      # [K]
    legal = np.asarray(t.legal_mask, bool)

    def name_of(k):
        (u, h), p = keys[k], player_of[k]
        return (f"{where}player {p}'s hand {lowered.hands.labels[p][h]} after "
                f"{expanded[u][1]!r}")
    table, _ = lock_from_rows(dict(enumerate(wanted.values())),
                              lambda k: tuple(lowered.node_actions[expanded[keys[k][0]][0]]),
                              legal[row_of], name_of)                    # [K, A]
    at = {key: k for k, key in enumerate(keys)}
    for rename, sources in renamings:
        for k, (u, h) in enumerate(keys):
            image = index.get(tuple(_renamed(rename, x) for x in expanded[u][1]))
            j = None if image is None else at.get((image, int(sources[player_of[k]][h])))
            if j is None or not np.array_equal(table[j], table[k]):
                return None, hit
    out = np.zeros(legal.shape)
    mask = np.zeros(legal.shape[0], bool)
    for k, row in enumerate(row_of):
        if mask[row] and not np.array_equal(out[row], table[k]):
            return None, hit                          # (cannot be, the renamings kept)
        out[row], mask[row] = table[k], True
    return Lock(out, mask), hit


def _merge_renamings(lowered: PublicLowered) -> list | None:
    """The distinct ``(renaming {step: g^-1(step)}, sources [P, H])`` of the merged
    outcomes, or ``None`` when a merge's renaming does not take its outcome to its
    representative."""
    t = lowered.tensors
    out, seen = [], set()
    for e, (_, outcome) in enumerate(lowered.merged):
        rename = lowered.merge_renaming[e] if lowered.merge_renaming else {}
        rep = lowered.node_action[int(t.merge_child[e])]
        if _renamed(rename, outcome) != rep:
            return None
        sources = np.asarray(t.merge_source[e], np.int64)                    # [P, H]
        try:
            key = (tuple(sorted(rename.items())), sources.tobytes())
        except TypeError:                             # steps that do not sort
            key = (tuple(rename.items()), sources.tobytes())
        if key not in seen:
            seen.add(key)
            out.append((rename, sources))
    return out


def _renamed(table: dict, x):
    try:
        return table.get(x, x)
    except TypeError:                                 # an unhashable step: not renamed
        return x


# -- stacks of public trees --------------------------------------------------------------

def resolve_stack_lock(stack: PublicStack, lock, labels: Sequence[str] | None = None
                       ) -> Lock | None:
    """``lock`` (see the module: one lock for every member where its nodes exist, a list
    of one per member, ``{member: lock}``, a lock file, a :class:`Lock` of the stack's
    tables ``[B, I, A]``, ``[B, I]``; ``None``) as the host :class:`Lock` of the stack's
    padded rows: strategy ``[B, I, A]``, mask ``[B, I]`` (a member without a lock: all
    false). ``labels``: further names of the members (the boards of ``game.boards``)."""
    if lock is None:
        return None
    B = stack.batch_size
    if isinstance(lock, Lock):
        shape = tuple(stack.tensors.legal_mask.shape)
        if np.shape(lock.strategy) != shape or np.shape(lock.mask) != shape[:2]:
            raise LockError(f"a Lock of tables {np.shape(lock.strategy)} and "
                            f"{np.shape(lock.mask)} does not fit the stack's [B, I, A] = "
                            f"{shape}")
        return lock
    if isinstance(lock, (str, os.PathLike)):
        lock = read_lock_file(lock)
    names = [m.name for m in stack.members]

    def index(member) -> int:
        if isinstance(member, (int, np.integer)) and not isinstance(member, bool):
            if not 0 <= member < B:
                raise LockError(f"member {member} is not in the stack of {B} members")
            return int(member)
        for known in (names, labels or ()):
            if member in known and list(known).count(member) == 1:
                return list(known).index(member)
        board = _board_label(member) if labels else None     # as --boards writes it
        if board is not None and list(labels).count(board) == 1:
            return list(labels).index(board)
        shown = ", ".join(map(str, list(labels or names)[:4])) + (", ..." if B > 4 else "")
        raise LockError(f"{member!r} names no member of the stack (an index 0 to {B - 1}, "
                        f"or a member's {'board' if labels else 'name'}, as written there: "
                        f"{shown})")

    per: list = [None] * B
    if isinstance(lock, (list, tuple)):
        if len(lock) != B:
            raise LockError(f"a list of locks has one per member: {len(lock)} for a stack "
                            f"of {B}")
        per = list(lock)
    elif isinstance(lock, Mapping) and lock and all(
            isinstance(k, (int, np.integer, str)) for k in lock):
        for member, given in lock.items():
            per[index(member)] = given
    elif isinstance(lock, Mapping):
        return _shared_lock(stack, lock, index)
    else:
        raise LockError(f"a stack's lock is a lock (a mapping from information set to "
                        f"{{action: probability}}, a lock file), a list of one per member or "
                        f"{{member: lock}}, got {type(lock).__name__}")
    locks, broken = [], []
    for b, (member, given) in enumerate(zip(stack.members, per)):
        try:
            if given is not None and member.merged and not isinstance(given, Lock):
                # (a lock the merged tree cannot resolve is the unmerged tree's to judge)
                given = read_lock_file(given) if isinstance(given, (str, os.PathLike)) \
                    else given
                _check_one_game_lock(given)
                try:
                    found = symmetric_lock(member, given)
                except LockError:
                    found = None
                if found is None:
                    broken.append(b)
                locks.append(found)
                continue
            locks.append(None if given is None else resolve_lock(member, given))
        except LockError as e:
            raise LockError(f"member {b} ({member.name}): {e}") from None
    if broken:
        raise BrokenSymmetry(stack, broken)
    return _stacked(stack, locks)


class BrokenSymmetry(LockError):
    """A stack's lock breaks the suit symmetry of merged members ``members`` (their
    merged trees cannot solve it: :func:`locked_stack` lowers them again without
    merging)."""

    def __init__(self, stack: PublicStack, members: Sequence[int]):
        self.members = tuple(int(b) for b in members)
        names = ", ".join(f"{b} ({stack.members[b].name})" for b in self.members[:3])
        more = f" and {len(self.members) - 3} more" if len(self.members) > 3 else ""
        super().__init__(f"{BREAKS_SYMMETRY} of member{'s' * (len(self.members) > 1)} "
                         f"{names}{more}, lowered with merged (suit-isomorphic) chance "
                         "outcomes: give the stack's games (a locked member then walks "
                         "every outcome), or lower them with merges=False")


def locked_stack(stack: PublicStack, lock, labels: Sequence[str] | None = None
                 ) -> tuple[PublicStack, Lock | None, tuple[int, ...]]:
    """``(stack, lock, unmerged)``: ``lock`` resolved on ``stack`` as
    :func:`resolve_stack_lock` does, where the members it locks keep their merged
    (suit-isomorphic) trees when the lock keeps each one's symmetry (as one spot's,
    :func:`symmetric_lock`); the members whose lock breaks it (or whose merged tree cannot
    resolve it: the unmerged tree's resolution then says what is wrong) are lowered again
    without merging (:func:`~jaxcfr.lowering.public_stack.unmerge_members`) and the stack
    returned is the one restacked with them (``unmerged``: their indices; ``()`` and
    ``stack`` itself when none). Raises :class:`BrokenSymmetry` when the stack does not
    know those members' games (a stack of lowered members)."""
    try:
        return stack, resolve_stack_lock(stack, lock, labels), ()
    except BrokenSymmetry as e:
        again = unmerge_members(stack, e.members)
        if again is None:
            raise
        return again, resolve_stack_lock(again, lock, labels), e.members


def unmerged_note(stack: PublicStack, members, labels=None) -> str:
    """What a locked stack says of ``members`` lowered again without merging."""
    names = [(labels[b] if labels else f"{b} ({stack.members[b].name})") for b in members]
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (f"{BREAKS_SYMMETRY} of member{'s' * (len(names) > 1)} {shown}: solved without "
            "isomorphism there (every chance outcome walked)")


def _board_label(member) -> str | None:
    """``member`` as ``--boards`` (``game.boards``) writes one board (``"AsKd6h5c2S"`` ->
    ``"AsKd6h5c2s"``), or ``None`` when it is not one board."""
    try:
        from jaxcfr_games.holdem.boards import parse_boards
        boards = parse_boards(member) if isinstance(member, str) else []
    except (ImportError, ValueError):
        return None
    return boards[0] if len(boards) == 1 else None


def _shared_lock(stack: PublicStack, mapping: Mapping, index) -> Lock:
    """One lock's entries on every member where they exist; :class:`ForMember` keys on
    their member only (strictly)."""
    entries = []
    for key, strategy in mapping.items():
        if isinstance(key, ForMember):
            entries.append((index(key.member), key.key, strategy))
        else:
            entries.append((None, key, strategy))
    if not entries:
        raise LockError("the lock names no information set")
    found = np.zeros(len(entries), bool)
    locks = []
    broken = []
    for b, member in enumerate(stack.members):
        mine = [(k, v, m is not None) for m, k, v in entries if m is None or m == b]
        where = f"member {b} ({member.name}): "
        mine_at = [e for e, (m, _, _) in enumerate(entries) if m is None or m == b]
        if member.merged:                     # kept merged where the lock is symmetric
            try:
                found_here, hit = _symmetric_rows(member, mine, where)
            except LockError:                 # (the unmerged tree's to judge)
                found_here, hit = None, [True] * len(mine)
            found[np.asarray(mine_at, int)] |= np.asarray(hit, bool)
            if found_here is None:
                broken.append(b)
            locks.append(None if found_here is _EMPTY else found_here)
            continue
        rows, names, hit = _public_rows(member, mine, where)
        found[np.asarray(mine_at, int)] |= np.asarray(hit, bool)
        try:
            locks.append(_finish(member, rows, *names) if rows else None)
        except LockError as e:
            raise LockError(f"{where}{e}") from None
    if broken:
        raise BrokenSymmetry(stack, broken)
    missing = [entries[e][1] for e in np.flatnonzero(~found)]
    if missing:
        raise LockError(f"unknown information set {missing[0]!r}: no member of the stack "
                        "has it (its public history, its player or its hands)")
    return _stacked(stack, locks)


def _stacked(stack: PublicStack, locks: list) -> Lock:
    """Per-member host locks (``None``: unlocked) as the stack's padded tables."""
    strategy, mask = [], []
    for member, lock in zip(stack.members, locks):
        shape = tuple(member.tensors.legal_mask.shape)
        strategy.append(np.zeros(shape) if lock is None else np.asarray(lock.strategy))
        rows = np.zeros(shape[0], bool) if lock is None else np.asarray(lock.mask, bool)
        mask.append(np.broadcast_to(rows[:, None], shape))
    return Lock(stack_public_rows(stack, strategy),
                stack_public_rows(stack, mask, False)[..., 0])


# -- lock files --------------------------------------------------------------------------

class _RepeatedKey(Exception):
    """A JSON object of a lock file names a key twice (``args``: the key, the object)."""


def _unique_keys(pairs: list) -> dict:
    """``json.loads``' ``object_pairs_hook``: the object, or :class:`_RepeatedKey` for a key
    given twice (``{"Check": 0.5, "Bet(60)": 0.5, "Check": 0.5}`` sums to 1 as JSON reads
    it, the first ``Check`` dropped)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            shown = "{" + ", ".join(f"{a!r}: ..." for a, _ in pairs[:4]) + \
                (", ...}" if len(pairs) > 4 else "}")
            raise _RepeatedKey(k, shown)
        out[k] = v
    return out


def read_lock_file(path, data: bytes | None = None) -> dict:
    """A lock file (JSON; see the module) as the mapping :func:`resolve_lock` takes;
    ``data``: its bytes when read already (a pipe reads once)."""
    try:                                 # bounded: --lock /dev/zero never ends
        data = json.loads((read_bytes(path) if data is None else data)
                          .decode("utf-8-sig"),   # (a byte-order mark skipped)
                          object_pairs_hook=_unique_keys)
    except _RepeatedKey as e:
        raise LockError(f"the lock file {os.fspath(path)!r} gives the key {e.args[0]!r} twice "
                        f"in one object ({e.args[1]}): JSON would keep the last one alone; "
                        "give each key once") from None
    except OSError as e:
        raise LockError(f"cannot read the lock file {os.fspath(path)!r}: {e.strerror}") \
            from None
    except json.JSONDecodeError as e:
        raise LockError(f"the lock file {os.fspath(path)!r} is not JSON: {e}") from None
    except UnicodeDecodeError as e:
        raise LockError(f"the lock file {os.fspath(path)!r} is not JSON (UTF-8 text): "
                        f"{e.reason} at byte {e.start}") from None
    except RecursionError:
        raise LockError(f"the lock file {os.fspath(path)!r} nests lists or objects too "
                        "deeply to be a lock") from None
    name = os.fspath(path)
    if isinstance(data, dict):
        return data
    if not isinstance(data, list):
        raise LockError(f"the lock file {name!r} holds a list of entries or an object of "
                        f"information sets, got {type(data).__name__}")
    out: dict = {}
    for k, entry in enumerate(data):
        where = f"entry {k} of the lock file {name!r}"
        if not isinstance(entry, dict) or "strategy" not in entry:
            raise LockError(f"{where} must be an object with a "
                            f"'strategy', got {entry!r}")
        unknown = set(entry) - {"infoset", "player", "history", "hand", "member", "strategy"}
        if unknown:
            raise LockError(f"{where} has unknown fields "
                            f"{sorted(unknown)}")
        player = entry.get("player")
        if player is not None and (not isinstance(player, int) or isinstance(player, bool)
                                   or player < 0):
            raise LockError(f"{where}: 'player' is a player's index "
                            f"(0, 1, ...), got {player!r}")
        if "infoset" in entry:
            infoset = _hashable(entry["infoset"])
            if infoset is None or isinstance(infoset, (bool, float)):
                raise LockError(f"{where}: 'infoset' is an information "
                                f"set's key (a string), got {entry['infoset']!r}")
            key = infoset if player is None else (player, infoset)
        elif "history" in entry:
            history = entry["history"]
            if isinstance(history, list):
                bad = [x for x in history if not isinstance(x, (str, int))
                       or isinstance(x, bool)]
                if bad:
                    raise LockError(f"{where}: a 'history' step is an "
                                    f"action or a dealt card (a string or a card number), "
                                    f"got {bad[0]!r}")
                history = tuple(history)
            elif not isinstance(history, str):
                raise LockError(f"{where}: 'history' is a list of steps "
                                f"or a string 'Check, Bet(60)', got {history!r}")
            hand = entry.get("hand")
            if hand is not None and not isinstance(hand, str):
                raise LockError(f"{where}: 'hand' is one hand or class "
                                f"('AsKs', 'AKs', '*'), got {hand!r}")
            key = (history, hand) if player is None else (player, hand, history)
        else:
            raise LockError(f"{where} names no information set (an "
                            "'infoset', or a 'history' and a 'hand')")
        if entry.get("member") is not None:
            member = entry["member"]
            if not isinstance(member, (int, str)) or isinstance(member, bool):
                raise LockError(f"{where}: 'member' is a member's index "
                                f"or name, got {member!r}")
            key = ForMember(member, key)
        out.pop(key, None)
        out[key] = entry["strategy"]
    return out


def lock_blamed(where: str, message: str) -> str:
    """``message`` (a :class:`LockError`'s) prefixed by ``where``, the option or key that
    gave the lock file (``--lock lock.json``), unless it already names the file."""
    return message if message.startswith(("the lock file", "entry ", "cannot read the lock",
                                          where)) else f"{where}: {message}"


def _hashable(value):
    """A lock file's JSON key as a dict key: lists as tuples (at every depth); ``None``
    for an object, which names no information set."""
    if isinstance(value, list):
        items = [_hashable(x) for x in value]
        return None if any(x is None for x in items) else tuple(items)
    return None if isinstance(value, dict) or value is None else value
