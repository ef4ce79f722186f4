"""Draws of chance on the host, for sampled chance (:mod:`jaxcfr.engine.sampled_chance`).

One draw is the chance from the root to the first decision (its *prefix*), drawn with
``sample_chance``, and the decision tree below it, lowered with the contract checked
(:func:`lower_draw`). Its information sets are numbered in one global
:class:`RowTable`; draws are padded to a :class:`Shape` that only grows (powers of two)
and put side by side as one forest (:func:`assemble`), which is what the device steps.

Shapes: ``N'`` nodes of one padded draw, ``I'`` its rows, ``G`` rows of the global
table, ``A`` its actions.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from jaxcfr.game.contract import GameError
from jaxcfr.game.determinize import Determinized, draw_prefix
from jaxcfr.lowering.lower import lower
from jaxcfr.profiles.profile import decode_label, encode_label
from jaxcfr.lowering.stack import forest, pad
from jaxcfr.tensors import NO_PLAYER, GameTensors, LoweredGame

__all__ = ["RowTable", "Shape", "Draw", "lower_draw", "assemble", "bucket", "pool_init",
           "pool_lower"]


def bucket(n: int) -> int:
    """The capacity for ``n``: the next power of two (at least 1)."""
    return 1 << max(0, int(n) - 1).bit_length()


class RowTable:
    """The global information-set rows: ``(player, key) -> row``, in order of first sight.

    Row 0 is the sink (no owner, one legal slot): a padded draw's sink and padding rows
    map to it. Rows are numbered in the order the draws meet them, and draws are lowered
    in iteration order, so the numbering is a function of the seed alone.
    """

    def __init__(self):
        self.index: dict[tuple, int] = {}
        self.keys: list[tuple | None] = [None]     # row -> (player, key); row 0: the sink
        self.actions: list[tuple] = [("",)]

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, lowered: LoweredGame) -> np.ndarray:
        """The global row of each of ``lowered``'s rows ``[I]`` (its sink: 0), adding new ones."""
        out = np.zeros(lowered.num_rows, dtype=np.int32)
        for r, (key, acts) in enumerate(zip(lowered.infoset_keys, lowered.infoset_actions)):
            acts = tuple(acts)
            row = self.index.get(key)
            if row is None:
                row = self.index[key] = len(self.keys)
                self.keys.append(key)
                self.actions.append(acts)
            elif self.actions[row] != acts:
                raise GameError(f"information set {key[1]!r} of player {key[0]} has actions "
                                f"{list(acts)} in one draw and {list(self.actions[row])} in "
                                "another", rule="infoset-actions", infoset=key[1])
            out[r] = row
        return out

    def truncate(self, rows: int) -> None:
        """Forget every row from ``rows`` on."""
        del self.keys[rows:], self.actions[rows:]
        self.index = {k: r for r, k in enumerate(self.keys) if r}

    def legal(self, rows: int, capacity: int, width: int) -> np.ndarray:
        """``[capacity, width]`` bool: the legal slots of the first ``rows`` rows (the
        others: slot 0, inert)."""
        out = np.zeros((capacity, width), dtype=bool)
        lengths = np.asarray([len(a) for a in self.actions[:rows]])
        out[:rows] = np.arange(width)[None, :] < lengths[:, None]
        out[rows:, 0] = True
        return out

    def owners(self, rows: int, capacity: int) -> np.ndarray:
        """``[capacity]`` int32: the player of each of the first ``rows`` rows (others: none)."""
        out = np.full(capacity, NO_PLAYER, dtype=np.int32)
        out[1:rows] = [k[0] for k in self.keys[1:rows]]
        return out

    def state(self, rows: int) -> dict[str, Any]:
        """The first ``rows`` rows as JSON values (labels through ``encode_label``)."""
        return {"keys": [[int(p), encode_label(k)] for p, k in self.keys[1:rows]],
                "actions": [[encode_label(a) for a in acts] for acts in self.actions[1:rows]]}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> "RowTable":
        table = cls()
        for (p, k), acts in zip(data["keys"], data["actions"]):
            key = (int(p), decode_label(k))
            table.index[key] = len(table.keys)
            table.keys.append(key)
            table.actions.append(tuple(decode_label(a) for a in acts))
        return table


class Shape(NamedTuple):
    """The padded shapes of the device program (capacities: powers of two, only growing)."""
    widths: tuple[int, ...] = ()    # nodes per level of one padded draw
    part_rows: int = 1              # rows of one padded draw
    capacity: int = 64              # rows G of the global table
    width: int = 1                  # actions A of the global table

    def grown(self, draws: list["Draw"], rows: int) -> "Shape":
        """This shape grown to hold ``draws`` and ``rows`` global rows."""
        widths, part_rows, width = list(self.widths), self.part_rows, self.width
        for d in draws:
            w = np.diff(d.lowered.level_start)
            widths += [1] * (len(w) - len(widths))
            widths = [max(c, bucket(x)) for c, x in zip(widths, list(w) + [0] * len(widths))]
            part_rows = max(part_rows, bucket(d.lowered.num_rows))
            width = max(width, bucket(d.lowered.max_actions))
        return Shape(tuple(widths), part_rows, max(self.capacity, bucket(rows)), width)


class Draw(NamedTuple):
    """A lowered draw and its global rows (cached while nothing below its prefix is chance)."""
    lowered: LoweredGame
    rowmap: np.ndarray        # [I] the global row of each of its rows
    prefix: tuple | None      # its key in the runner's cache (None: not cached)


def lower_draw(game, seed: int, enumerate_listed: bool, budget: int
                ) -> tuple[tuple, LoweredGame, bool]:
    """One draw: its chance prefix, the tree below it lowered, and whether that tree is a
    function of the prefix alone (no chance node below it was drawn). Chance nodes below
    the prefix keep their listed outcomes when ``enumerate_listed``; the others (all of
    them otherwise) get one draw of the same generator."""
    prefix, state, rng = draw_prefix(game, seed)
    root = Determinized(state, rng, enumerate_listed=enumerate_listed)
    lowered = lower(root, sort_infosets=False, name="draw", workers=1, size=False,
                    memory_budget=budget, probe=False)        # the runner probed the game
    return prefix, lowered, root.tally[0] == 0


_POOL_GAME = None     # in a lowering worker: (game, enumerate_listed, budget)


def pool_init(game, enumerate_listed: bool, budget: int) -> None:
    global _POOL_GAME
    _POOL_GAME = (game, enumerate_listed, budget)


def pool_lower(seed: int) -> tuple[tuple, LoweredGame, bool]:
    return lower_draw(_POOL_GAME[0], seed, *_POOL_GAME[1:])


def assemble(draws: list[Draw], shape: Shape, padded: dict[tuple, tuple]
             ) -> tuple[GameTensors, np.ndarray]:
    """``draws`` padded to ``shape`` and put side by side (one forest, ``[len(draws) *
    N']``), with the global row of each of their rows ``[len(draws) * I']``.

    ``padded`` keeps the padded form of cached draws (keyed by their prefix, like the
    cache: never by ``id()``, which a freed draw passes on) for the shape it was made for.
    """
    parts, maps = [], []
    for d in draws:
        hit = padded.get(d.prefix) if d.prefix is not None else None
        if hit is None or hit[0] != shape:
            hit = (shape, pad(d.lowered, shape.widths, shape.part_rows, shape.width),
                   np.concatenate([d.rowmap, np.zeros(shape.part_rows - len(d.rowmap),
                                                        np.int32)]))
            if d.prefix is not None:
                padded[d.prefix] = hit
        parts.append(hit[1])
        maps.append(hit[2])
    return _forest(parts, shape.widths), np.concatenate(maps)


def _forest(parts: list[GameTensors], widths) -> GameTensors:
    """Padded parts (same shape) side by side, level by level (``stack.forest``'s layout)."""
    levels = tuple(int(x) for x in np.concatenate([[0], np.cumsum(widths)]))
    fake = LoweredGame(tensors=GameTensors(*(np.stack(x) for x in zip(*parts))),
                       level_start=levels, num_players=0, infoset_keys=(), infoset_actions=(),
                       preorder=np.zeros(0, np.int64), node_action=(),
                       batch_size=len(parts))
    return forest(fake)[0]
