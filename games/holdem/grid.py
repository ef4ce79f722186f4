"""The 13x13 hand grid of one public node's strategy: the picture every poker tool shows.

Rows and columns are the ranks from ace (0) down to deuce (12): the diagonal holds the
pairs (``AA`` .. ``22``), the cells above it the suited hands (row: the high card, column:
the low one, ``AKs`` at row 0, column 1), the cells below it the offsuit hands
(``AKo`` at row 1, column 0). A cell's frequency of an action is the average over the
cell's combinations of each combination's probability of that action, weighted by the
combination's *range at the node*: its weight in the starting range, times the
probability that the acting player's own average strategy takes the node's public
history, zero when a card dealt since (turn, river) blocks it. A cell no combination
reaches holds NaN.

:func:`hand_grid` reads a solved spot (``jaxcfr.solve_public(spot, ...)`` or
``jaxcfr.solve("holdem_spot(...)")``, a :class:`~jaxcfr.api.public.PublicSolveResult`)
or any ``(lowered, average_strategy)`` pair, and gives a :class:`HandGrid`: printed as
text (one grid of percentages per action), written as CSV (one row per combination) or
JSON (the grids and the combinations), or drawn (one colour band per action in each
cell: :mod:`.grid_plot`, a ``.png``/``.svg``/``.pdf`` path to :meth:`HandGrid.write`).

Example::

    >>> import jaxcfr
    >>> from jaxcfr_games.holdem.grid import hand_grid
    >>> result = jaxcfr.solve("holdem_spot", "postflop-dcfr", 200)
    >>> print(hand_grid(result, ("Check",)).text())        # IP after OOP checks
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import numpy as np

from .cards import NUM_CARDS, RANKS, SUITS, HoldemError, card, card_str

__all__ = ["HandGrid", "hand_grid", "check_history", "grid_cell", "cell_label",
           "parse_history", "history_text", "GRID_SIZE"]

GRID_SIZE = 13


def grid_cell(label: str) -> tuple[int, int]:
    """The ``(row, column)`` of the hand named ``label`` (``"AsKs"``, high card first)."""
    if not isinstance(label, str) or len(label) != 4 or label[0] not in RANKS \
            or label[2] not in RANKS:
        raise HoldemError(f"{label!r} is not a hand label such as 'AsKs'")
    a, b = 12 - RANKS.index(label[0]), 12 - RANKS.index(label[2])     # 0: ace
    high, low = min(a, b), max(a, b)
    if high == low:
        return high, high
    return (high, low) if label[1] == label[3] else (low, high)


def cell_label(row: int, column: int) -> str:
    """``"AA"``, ``"AKs"`` (above the diagonal) or ``"AKo"`` (below it)."""
    hi, lo = RANKS[12 - min(row, column)], RANKS[12 - max(row, column)]
    if row == column:
        return hi + lo
    return hi + lo + ("s" if row < column else "o")


@dataclasses.dataclass(frozen=True)
class HandGrid:
    """One public decision node's strategy over the acting player's hands.

    Attributes:
      player: the acting player (0: OOP, 1: IP).
      history: the public history of the node (actions, dealt cards as ints).
      actions: ``[A]`` the node's actions, as the tree names them.
      hands: ``[H]`` the player's hand labels.
      reach: ``[H]`` each combination's range at the node (see the module).
      strategy: ``[H, A]`` each combination's average strategy at the node.
      weights: ``[13, 13]`` the range at the node summed per cell (combinations).
      frequencies: ``[13, 13, A]`` the range-weighted action frequencies per cell (NaN
        where ``weights`` is 0).
      overall: ``[A]`` the range-weighted frequencies of the whole range.
      ev: ``[H]`` each combination's expected value at the node (chips, net of its half
        of the starting pot; NaN where it cannot be there), or ``None`` when not known
        (a grid of a bare strategy table); see
        ``jaxcfr.solvers.public.hand_values_public``.
      action_ev: ``[H, A]`` each combination's expected value of each action, or ``None``.
    """
    player: int
    history: tuple
    actions: tuple
    hands: tuple
    reach: np.ndarray
    strategy: np.ndarray
    weights: np.ndarray
    frequencies: np.ndarray
    overall: np.ndarray
    ev: np.ndarray | None = None
    action_ev: np.ndarray | None = None

    def heading(self) -> str:
        """``"IP at Check, Check, Td: 252 combinations"`` (dealt cards by name)."""
        return (f"{_who(self.player)} at {history_text(self.history)}: "
                f"{float(self.weights.sum()):.4g} combinations")

    def text(self, digits: int = 0) -> str:
        """The grid as text: the overall frequencies, then one 13x13 grid per action of
        percentages (``.`` where no combination reaches the cell)."""
        width = max(4, 4 + digits + (digits > 0))
        lines = [self.heading(),
                 "  ".join(f"{a} {100 * f:.1f}%" for a, f in zip(self.actions, self.overall))]
        for k, action in enumerate(self.actions):
            lines += ["", f"{action} (% of each cell)",
                      " " * 4 + "".join(f"{r:>{width}}" for r in RANKS[::-1])]
            for i in range(GRID_SIZE):
                cells = [f"{'.':>{width}}" if self.weights[i, j] <= 0 else
                         f"{100 * self.frequencies[i, j, k]:>{width}.{digits}f}"
                         for j in range(GRID_SIZE)]
                lines.append(f"{RANKS[12 - i]:<4}" + "".join(cells))
        return "\n".join(lines)

    def cells(self) -> list[list[str]]:
        """``[13][13]`` the cells' labels (``"AA"``, ``"AKs"``, ``"AKo"``, ...)."""
        return [[cell_label(i, j) for j in range(GRID_SIZE)] for i in range(GRID_SIZE)]

    def rows(self) -> list[dict]:
        """One record per combination: hand, cell, range at the node, each action's
        probability; with the values known, the hand's ``ev`` and each action's
        (``ev_<action>``; ``None`` where the hand cannot be there)."""
        out = []
        for h, label in enumerate(self.hands):
            i, j = grid_cell(label)
            row = {"hand": label, "cell": cell_label(i, j), "weight": float(self.reach[h]),
                   **{a: float(p) for a, p in zip(self.actions, self.strategy[h])}}
            if self.ev is not None:
                row["ev"] = _number(self.ev[h])
                row.update({f"ev_{a}": _number(v)
                            for a, v in zip(self.actions, self.action_ev[h])})
            out.append(row)
        return out

    def columns(self) -> list[str]:
        """The fields of :meth:`rows`, in order."""
        values = [] if self.ev is None else ["ev", *(f"ev_{a}" for a in self.actions)]
        return ["hand", "cell", "weight", *self.actions, *values]

    def csv(self) -> str:
        """:meth:`rows` as CSV (header ``hand,cell,weight,<actions>[,ev,ev_<action>...]``;
        an empty field where a value is unknown)."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, self.columns(), lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.rows())
        return buffer.getvalue()

    def to_json(self) -> dict:
        """The grid as JSON-ready data: ``cells`` ``[13][13]`` labels, ``weights``,
        ``frequencies`` ``[13][13][A]`` (``null`` where no combination reaches), the
        overall frequencies and :meth:`rows`."""
        freq = [[None if self.weights[i, j] <= 0 else self.frequencies[i, j].tolist()
                 for j in range(GRID_SIZE)] for i in range(GRID_SIZE)]
        return {"player": self.player, "history": [_step_text(x) for x in self.history],
                "actions": list(self.actions),
                "cells": self.cells(),
                "weights": self.weights.tolist(), "frequencies": freq,
                "overall": self.overall.tolist(), "hands": self.rows()}

    def write(self, path) -> None:
        """Write :meth:`csv` (a ``.csv`` path), :meth:`to_json` (``.json``) or the
        picture (``.png``, ``.svg``, ``.pdf``: :func:`~.grid_plot.plot_grid`)."""
        from .grid_plot import FORMATS, plot_grid
        path = str(path)
        if path.lower().endswith(FORMATS):
            plot_grid(self, path)
            return
        if path.lower().endswith(".csv"):
            text = self.csv()
        elif path.lower().endswith(".json"):
            text = json.dumps(self.to_json(), indent=1)
        else:
            raise HoldemError(f"a hand grid is written as .csv, .json or a picture "
                              f"({', '.join(FORMATS)}), got {path!r}")
        with open(path, "w") as f:
            f.write(text)


def _number(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def parse_history(text: str) -> tuple:
    """A public history written ``"Check, Bet(60), Call, Ah"`` (actions as the tree names
    them, dealt cards by name in any case, separated by commas; ``""``: the root) as
    :func:`hand_grid` takes it (cards as ints)."""
    items = [x.strip() for x in text.split(",")] if text.strip() else []
    if any(not x for x in items):
        raise HoldemError(f"empty step in the public history {text!r}")
    return tuple(card(x) if len(x) == 2 and x[0].upper() in RANKS else x for x in items)


def _is_card(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) \
        and 0 <= x < NUM_CARDS


def _step_text(x) -> str:
    """A public step as it is written: a dealt card by name (``"Td"``), an action as the
    tree names it."""
    return card_str(int(x)) if _is_card(x) else str(x)


def history_text(history) -> str:
    """A public history as :func:`parse_history` reads it (``"Check, Check, Td"``: dealt
    cards by name); ``"the root"`` for ``()``."""
    return ", ".join(map(_step_text, history)) or "the root"


def _who(player: int) -> str:
    return ("OOP", "IP")[player] if player in (0, 1) else f"player {player}"


def _where(history) -> str:
    return "at the root" if not history else f"after {history_text(history)!r}"


def _refused_step(history: tuple, i: int, kind: str, actions=(), player=0) -> HoldemError:
    """Why step ``i`` of ``history`` is no step of the node the steps before it reach:
    ``kind`` that node's (``"decision"``, with its ``actions`` and acting ``player``;
    ``"chance"``: a card is dealt; ``"terminal"``). Cards by name; the one wording of
    :func:`check_history` and :func:`hand_grid`."""
    x, before = history[i], history[:i]
    name, where = _step_text(x), _where(before)
    if kind == "terminal":
        return HoldemError(f"{name!r} comes after the end of the hand: the hand is over "
                           f"{where}")
    if kind == "chance":
        if not _is_card(x):
            return HoldemError(f"{name!r} is not a card: {where} a card is dealt (name it "
                               f"by rank {''.join(RANKS)} and suit {''.join(SUITS)}, as "
                               f"'Td')")
        if x in before:
            return HoldemError(f"{name!r} cannot be dealt {where}: it was dealt before")
        return HoldemError(f"{name!r} cannot be dealt {where}: it is on the board")
    acts = [str(a) for a in actions]
    near = [a for a in acts if a.lower() == name.lower()] or _nearest_size(name, acts)
    hint = (f" (did you mean {near[0]!r}?)" if near else
            " (a card is dealt once the street's betting is over)" if _is_card(x) else "")
    return HoldemError(f"{name!r} is not an action {where}: {_who(player)} acts there, "
                       f"with {', '.join(acts)}{hint}")


_SIZED = re.compile(r"\s*([A-Za-z]+)\s*\(\s*([0-9]*\.?[0-9]+)\s*\)\s*")


def _nearest_size(name: str, acts: list[str]) -> list[str]:
    """``[the action of the same kind whose chips are nearest]`` for a sized step the node
    does not have (``Bet(60)`` where the tree's bet is ``Bet(62)``, ``bet( 62 )``,
    ``Bet(62.0)``), else ``[]``."""
    m = _SIZED.fullmatch(name)
    if m is None:
        return []
    kind, chips = m.group(1).lower(), float(m.group(2))
    same = [(a, _SIZED.fullmatch(a)) for a in acts]
    same = [(abs(float(s.group(2)) - chips), a) for a, s in same
            if s is not None and s.group(1).lower() == kind]
    return [min(same)[1]] if same else []


def _not_a_decision(history: tuple, kind: str) -> HoldemError:
    if kind == "terminal":
        return HoldemError(f"the node {_where(history)} is not a decision: the hand is "
                           f"over there")
    return HoldemError(f"the node {_where(history)} is not a decision: a card is dealt "
                       f"there; add it to the history (by name, as 'Td')")


def check_history(game, history=()) -> None:
    """Raise what :func:`hand_grid` would of ``history`` on the public game ``game`` (a
    ``PublicGame`` state, e.g. a loaded ``holdem_spot``), without lowering or solving it:
    each step a legal public action or chance outcome of the state before it, ending at a
    decision. ``jaxcfr solve --grid`` checks its history so before the solve."""
    state = game.clone()
    history = tuple(history)
    for i, x in enumerate(history):
        if state.is_terminal():
            raise _refused_step(history, i, "terminal")
        if state.is_chance():
            if x not in [o for o, p in state.chance_outcomes() if p > 0]:
                raise _refused_step(history, i, "chance")
        elif x not in list(state.legal_actions()):
            raise _refused_step(history, i, "decision", state.legal_actions(),
                                state.player_to_act())
        state.step(x)
    if state.is_terminal() or state.is_chance():
        raise _not_a_decision(history, "terminal" if state.is_terminal() else "chance")


def _kind(lowered, node: int) -> str:
    t = lowered.tensors
    return "decision" if t.node_base[node] >= 0 else \
        "terminal" if t.child_count[node] == 0 else "chance"


def _located(lowered, history: tuple):
    """``lowered.locate(history)``, its refusal worded as :func:`check_history`'s."""
    try:
        return lowered.locate(history)
    except ValueError:
        pass
    for i in range(len(history)):                 # the first step the tree does not take
        try:
            lowered.locate(history[:i + 1])
        except ValueError:
            node = lowered.locate(history[:i]).node
            raise _refused_step(history, i, _kind(lowered, node),
                                lowered.node_actions[node],
                                int(lowered.tensors.node_player[node])) from None
    raise AssertionError("unreachable")


def hand_grid(result, history=(), *, average_strategy=None, values=None) -> HandGrid:
    """The hand grid of the public decision node reached by ``history``.

    Args:
      result: a solved public tree (``.lowered`` and ``.average_strategy``), or a
        lowered public tree (then ``average_strategy`` is required).
      history: the public actions and dealt cards from the root (``("Check",
        "Bet(60)")``; a dealt card is its int, ``jaxcfr_games.holdem.card("Ah")``).
      average_strategy: ``[I, A]`` rows of the lowered tree (default: the result's).
      values: the node's per-hand values (``{"ev": [H], "action_ev": [H, A]}``); by
        default a solved result's own (``result.hand_values(history)``), none for a
        bare table.
    """
    lowered = getattr(result, "lowered", result)
    avg = result.average_strategy if average_strategy is None else average_strategy
    avg = np.asarray(avg, np.float64)
    t = lowered.tensors
    if avg.ndim != 2 or avg.shape[0] != t.legal_mask.shape[0]:
        raise HoldemError(f"the average strategy must be [I, A] = "
                          f"{tuple(t.legal_mask.shape)} (one solve, no batch), got "
                          f"{avg.shape}")
    history = tuple(history)
    at = _located(lowered, history)  # below a merged (suit-isomorphic) card: the representative's
    node = at.node
    if t.node_base[node] < 0:                      # (decisions have rows, nothing else)
        raise _not_a_decision(history, _kind(lowered, node))
    player = int(t.node_player[node])
    labels = tuple(lowered.hands.labels[player])
    reach = np.asarray(lowered.hands.weights[player], np.float64).copy()          # [H]
    for step in at.path:
        if t.node_base[step.node] < 0:             # a chance node on the path: a card
            cards = lowered.hands.cards[player]
            reach[[step.step in c for c in cards]] = 0.0   # the dealt card blocks them
        elif int(t.node_player[step.node]) == player:
            a = list(lowered.node_actions[step.node]).index(step.read)
            reach *= avg[int(t.node_base[step.node]) + step.hands[player], a]
    actions = tuple(lowered.node_actions[node])
    strategy = avg[int(t.node_base[node]) + at.hands[player], :len(actions)]     # [H, A]
    weights = np.zeros((GRID_SIZE, GRID_SIZE))
    mass = np.zeros((GRID_SIZE, GRID_SIZE, len(actions)))
    for h, label in enumerate(labels):
        i, j = grid_cell(label)
        weights[i, j] += reach[h]
        mass[i, j] += reach[h] * strategy[h]
    with np.errstate(invalid="ignore", divide="ignore"):
        frequencies = np.where(weights[..., None] > 0, mass / weights[..., None], np.nan)
    total = reach.sum()
    overall = (reach @ strategy) / total if total > 0 else np.full(len(actions), np.nan)
    if values is None and average_strategy is None and hasattr(result, "hand_values"):
        values = result.hand_values(history)
    ev = action_ev = None
    if values is not None:
        ev = np.asarray(values["ev"], np.float64)
        action_ev = np.asarray(values["action_ev"], np.float64)
        if ev.shape != (len(labels),) or action_ev.shape != (len(labels), len(actions)):
            raise HoldemError(f"the values must be ev [{len(labels)}] and action_ev "
                              f"[{len(labels)}, {len(actions)}], got {ev.shape} and "
                              f"{action_ev.shape}")
    return HandGrid(player, history, actions, labels, reach, strategy, weights,
                    frequencies, overall, ev, action_ev)
