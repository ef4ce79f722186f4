"""Strategy tables handed to the analytics: checked, normalised on request, sink rows set.

A strategy table of a lowered game has one row per information set of every player and
the sink row (and, in a stack, padding rows) that the kernels read as the probability
of chance and root edges: that row must hold ``[1, 0, ...]``. A caller's table is the
caller's rows only: :func:`prepare` sets the sink and padding rows itself, whatever the
table holds there, and refuses a real row that is not a distribution over its legal
actions, naming the first bad information set by its key (:class:`StrategyError`).

A row is a distribution when every entry is finite, no legal entry is below
``-tolerance``, the legal entries sum to 1 within ``tolerance`` and no illegal slot
holds more than ``tolerance`` (``tolerance = ROW_TOLERANCE + A * PER_ACTION_TOLERANCE``:
float32 rounding of an ``A``-action row, so a float32 table that was normalised passes).
With ``normalise=True`` a row is scaled to sum 1 instead, and a row that sums to 0 (an
information set the run never reached: ``strategy_sum`` is 0 there) is uniform over its
legal actions; non-finite and negative entries and mass on illegal actions are errors
either way.

The check runs on the device (one elementwise pass, :func:`repair`, traced into the
evaluation's own program by :func:`jaxcfr.evaluate`, or jitted alone by :func:`prepare`)
and brings back only a few flags; :func:`check` builds the message on the host from the
first bad row.

Example::

    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> ones = np.ones(lowered.tensors.legal_mask.shape)
    >>> jaxcfr.evaluate(lowered, ones)          # StrategyError: ... sums to 2 ...
    >>> jaxcfr.evaluate(lowered, ones, normalise=True)["exploitability"]   # uniform
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.kernels.numerics import trail
from jaxcfr.tensors import GameTensors, LoweredGame

__all__ = ["StrategyError", "prepare", "repair", "check", "ROW_TOLERANCE",
           "PER_ACTION_TOLERANCE", "PROBLEMS"]

#: How far a row's sum may be from 1 (and an entry below 0, or an illegal slot from 0) ...
ROW_TOLERANCE = 1e-5
#: ... plus this much per action slot (float32 rounding of a normalised row).
PER_ACTION_TOLERANCE = 5e-7

#: The problems a row can have, in the order they are reported.
PROBLEMS = ("non-finite", "illegal", "negative", "sum")


class StrategyError(ValueError):
    """A strategy table is not a profile of the game.

    Attributes:
      problem: one of :data:`PROBLEMS`.
      row: the first bad row (of the member ``member`` in a stack).
      member: the stack member (``None`` for a single game).
      key: ``(player, information-set key)`` of that row.
    """

    def __init__(self, message: str, *, problem: str, row: int, member: int | None, key: Any):
        super().__init__(message)
        self.problem, self.row, self.member, self.key = problem, row, member, key


def tolerance(actions: int) -> float:
    """The tolerance of an ``actions``-wide table (see the module docstring)."""
    return ROW_TOLERANCE + actions * PER_ACTION_TOLERANCE


def repair(tensors: GameTensors, table: jax.Array, *, batched: bool, normalise: bool):
    """The repaired table and what :func:`check` reads: ``{"bad": [4] bool, "index": [4]
    int}``, per problem of :data:`PROBLEMS` whether a real row has it and the first such
    row (flat over ``[(B,) I]``). Traceable; the four flags share two reductions."""
    lead = 1 if batched else 0
    legal = trail(tensors.legal_mask, table.ndim)                  # [(B,) I, A, 1...]
    real = tensors.infoset_player >= 0                             # [(B,) I]
    tol = tolerance(table.shape[lead + 1])
    finite = jnp.isfinite(table)
    x = jnp.where(finite, table, 0)
    total = jnp.sum(jnp.where(legal, x, 0), axis=lead + 1, keepdims=True)
    off = (jnp.zeros_like(total, dtype=bool) if normalise      # [(B,) I, 1, *b]
           else jnp.abs(total - 1) > tol)
    entries = jnp.stack([~finite, ~legal & (jnp.abs(x) > tol), legal & (x < -tol),
                         jnp.broadcast_to(off, x.shape)])          # [4, (B,) I, A, *b]
    flags = jnp.any(entries, axis=tuple(range(lead + 2, entries.ndim))) & real   # [4, (B,) I]
    flags = flags.reshape(len(PROBLEMS), -1)
    if normalise:
        count = jnp.sum(legal, axis=lead + 1, keepdims=True)
        uniform = jnp.where(legal, 1 / count, 0).astype(table.dtype)
        x = jnp.where(total > 0, jnp.where(legal, x, 0) / jnp.where(total > 0, total, 1),
                      uniform)
    x = jnp.where(legal, jnp.maximum(x, 0), 0)
    sink = jnp.broadcast_to(legal, x.shape).astype(table.dtype)   # slot 0 of sink/padding rows
    out = jnp.where(trail(real, table.ndim), x, sink)
    return out, {"bad": jnp.any(flags, axis=1), "index": jnp.argmax(flags, axis=1)}


def prepare(lowered: LoweredGame, tensors: GameTensors, table: jax.Array, *,
            normalise: bool = False) -> jax.Array:
    """``table`` with its sink and padding rows set, after checking its real rows.

    Args:
      lowered: the game (single or stacked): its host tables name a bad row.
      tensors: its tensors on the device.
      table: ``[I, A, *b]`` (``[B, I, A, *b]`` for a stack), on the device.
      normalise: scale rows to sum 1 (rows summing to 0: uniform) instead of refusing them.
    Returns:
      The table to evaluate: real rows as given (entries within the tolerance of 0 made
      exactly 0), sink and padding rows ``[1, 0, ...]``.
    Raises:
      StrategyError: the first bad real row, by its information set's key.
    """
    batched = lowered.batch_size is not None
    out, found = _prepare(tensors, table, batched=batched, normalise=bool(normalise))
    check(lowered, table, found)
    return out


_prepare = jax.jit(repair, static_argnames=("batched", "normalise"))


def check(lowered: LoweredGame, table, found) -> None:
    """Raise :class:`StrategyError` for the first problem :func:`repair` ``found`` in
    ``table`` (the caller's table, ``[(B,) I, A, *b]``, or a function that makes it, called
    only where there is a problem), if any."""
    found = jax.device_get(found)
    for problem, bad, index in zip(PROBLEMS, found["bad"], found["index"]):
        if bool(bad):
            table = table() if callable(table) else table
            raise _error(lowered, np.asarray(table), problem, int(index),
                         lowered.batch_size is not None)


def _error(lowered: LoweredGame, table: np.ndarray, problem: str, index: int,
           batched: bool) -> StrategyError:
    rows = table.shape[1 if batched else 0]
    member, row = divmod(index, rows) if batched else (None, index)
    game = lowered.members[member] if batched and lowered.members else lowered
    values = table[member, row] if batched else table[row]            # [A, *b]
    legal = np.asarray(game.tensors.legal_mask)[row] if row < game.num_rows else None
    if legal is None:                                                  # (a stack's padding)
        legal = np.asarray(lowered.tensors.legal_mask)[member, row]
    key = game.infoset_keys[row] if row < len(game.infoset_keys) else None
    labels = list(game.infoset_actions[row]) if key is not None else list(range(legal.sum()))
    where = (f"row {row}" + (f" of stack member {member}" if batched else "")
             + (f" (player {key[0]}, information set {key[1]!r})" if key is not None else ""))
    legal_values = values[:len(legal)][legal]
    shown = _show(np.moveaxis(legal_values, 0, -1) if legal_values.ndim > 1 else legal_values)
    tol = tolerance(values.shape[0])
    if problem == "non-finite":
        what = f"holds a non-finite entry ({shown} over its legal actions {labels})"
    elif problem == "illegal":
        slots = [int(s) for s in np.flatnonzero(~legal) if
                 np.any(np.abs(np.nan_to_num(values[s])) > tol)]
        what = (f"puts mass on slot {slots[0]}, which is not a legal action there (its legal "
                f"actions are {labels}, slots 0..{len(labels) - 1})")
    elif problem == "negative":
        what = f"has a negative entry: {shown} over its legal actions {labels}"
    else:
        sums = np.sum(legal_values, axis=0)
        total = _show(sums) if np.ndim(sums) else f"{float(sums):.6g}"
        what = (f"sums to {total} over its legal actions {labels} ({shown}), not 1; pass "
                "normalise=True to scale the rows to sum 1 (uniform where they sum to 0, "
                "as an unreached information set's strategy_sum does)")
    return StrategyError(f"the strategy table is not a profile of {lowered.name or 'the game'}:"
                         f" {where} {what}", problem=problem, row=row, member=member, key=key)


def _show(values) -> str:
    """A few numbers as ``[0.5, 0.25]`` (``nan`` / ``inf`` as such)."""
    return np.array2string(np.asarray(values, dtype=np.float64), separator=", ", threshold=12,
                           formatter={"float_kind": lambda v: f"{v:.6g}"})
