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

Entries apply in order: a later one overrides an earlier one's rows (a whole node first,
then single hands). Errors (:class:`~jaxcfr.solvers.locking.LockError`, a
``ValueError``) name an unknown information set (with the closest keys), an unknown or
illegal action, or probabilities that do not sum to 1.

A lock file (JSON) is a list of entries ``{"infoset": KEY, "player": P (optional),
"strategy": {ACTION: P}}`` (history trees) or ``{"history": [STEPS] or "Check, Bet(60)",
"hand": "AKs" (optional: every hand), "strategy": {...}}`` (public trees), or an object
``{KEY: {ACTION: P}}`` of history-tree keys.
"""

from __future__ import annotations

import difflib
import json
import os
from typing import Any, Mapping

import numpy as np

from jaxcfr.lowering.public import PublicLowered
from jaxcfr.solvers.locking import Lock, LockError, lock_from_rows

__all__ = ["resolve_lock", "history_lock", "public_lock", "read_lock_file", "LockError"]


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
    if not isinstance(lock, Mapping):
        raise LockError(f"a lock is a mapping from information set to {{action: "
                        f"probability}} (or a lock file), got {type(lock).__name__}")
    if isinstance(lowered, PublicLowered):
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
    node = 0
    for x in steps:
        children = [int(c) for c in np.flatnonzero(t.parent == node)]
        match = [c for c in children if _same_step(lowered.node_action[c], x, holdem)]
        if not match:
            here = [str(lowered.node_action[c]) for c in children]
            raise LockError(f"unknown information set: {x!r} is not a public action or "
                            f"outcome after {lowered.history(node)!r}"
                            + (f" (there: {', '.join(here[:12])}"
                               f"{', ...' if len(here) > 12 else ''})" if here else ""))
        node = match[0]
    if t.node_base[node] < 0:
        raise LockError(f"unknown information set: the node after {steps!r} is not a "
                        "decision (a terminal or a chance node)")
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
    if lowered.merged:
        raise LockError("node locking takes a public tree without merged (suit-isomorphic) "
                        "chance outcomes: a lock can break the symmetry the merge relies "
                        "on; give the PublicGame or its game string (a locked solve walks "
                        "every outcome), or lower it with merges=False")
    holdem = _holdem(lowered)
    t = lowered.tensors
    rows: dict[int, dict] = {}
    node_of_row: dict[int, int] = {}
    for key, strategy in mapping.items():
        if isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], (int, np.integer)):
            player, hand, history = key
        elif isinstance(key, tuple) and len(key) == 2:
            player, (history, hand) = None, key
        else:
            raise LockError(f"a public tree's information set is (public history, hand), "
                            f"got {key!r}")
        steps = _history_steps(history, holdem)
        node = _node(lowered, steps, holdem)
        acting = int(t.node_player[node])
        if player is not None and int(player) != acting:
            raise LockError(f"player {player} does not act after {steps!r} (player "
                            f"{acting} does)")
        where = f"{steps!r}" if steps else "the root"
        for h in _hands(lowered, acting, hand, holdem, where):
            row = int(t.node_base[node]) + h
            rows.pop(row, None)
            rows[row] = strategy
            node_of_row[row] = node

    def name_of(row):
        node = node_of_row[row]
        player = int(t.node_player[node])
        label = lowered.hands.labels[player][row - int(t.node_base[node])]
        return f"player {player}'s hand {label} after {lowered.history(node)!r}"
    return _finish(lowered, rows, lambda row: tuple(lowered.node_actions[node_of_row[row]]),
                   name_of)


# -- lock files --------------------------------------------------------------------------

def read_lock_file(path) -> dict:
    """A lock file (JSON; see the module) as the mapping :func:`resolve_lock` takes."""
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise LockError(f"cannot read the lock file {os.fspath(path)!r}: {e.strerror}") \
            from None
    except json.JSONDecodeError as e:
        raise LockError(f"the lock file {os.fspath(path)!r} is not JSON: {e}") from None
    if isinstance(data, dict):
        return data
    if not isinstance(data, list):
        raise LockError(f"a lock file holds a list of entries or an object of information "
                        f"sets, got {type(data).__name__}")
    out: dict = {}
    for k, entry in enumerate(data):
        if not isinstance(entry, dict) or "strategy" not in entry:
            raise LockError(f"entry {k} of the lock file must be an object with a "
                            f"'strategy', got {entry!r}")
        unknown = set(entry) - {"infoset", "player", "history", "hand", "strategy"}
        if unknown:
            raise LockError(f"entry {k} of the lock file has unknown fields "
                            f"{sorted(unknown)}")
        if "infoset" in entry:
            key = entry["infoset"] if entry.get("player") is None else (
                int(entry["player"]), entry["infoset"])
        elif "history" in entry:
            history = entry["history"]
            history = tuple(history) if isinstance(history, list) else history
            key = (history, entry.get("hand"))
            if entry.get("player") is not None:
                key = (int(entry["player"]), entry.get("hand"), history)
        else:
            raise LockError(f"entry {k} of the lock file names no information set (an "
                            "'infoset', or a 'history' and a 'hand')")
        out.pop(key, None)
        out[key] = entry["strategy"]
    return out
