"""The estimator protocol: what an estimator reads and returns, its base class, and the
exact (full-width) estimator.

An estimator (:mod:`jaxcfr.solvers.estimators` lists them and says what each computes)
is a frozen, hashable :class:`Estimator` (static in compiled code) with a host
preparation and a device function. A *dense* one reads the current strategy
``[I, A, *b]`` and returns a :class:`DenseEstimate` of whole tables; a *sparse* one reads a
:class:`LazyStrategy` (the strategy row by row) and returns a :class:`RowEstimate` of the rows
it touched (:func:`densify` turns one into whole tables, for inspection and tests), or a
:class:`CappedEstimate`: a row estimate in chunks of fewer slots than its static bound (one
chunk unless a draw needs more).

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players, ``B`` batch members,
``M`` slots of a row estimate; ``*b`` trailing batch axes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, NamedTuple

import jax
import jax.numpy as jnp

from jaxcfr.kernels import compensated, passes
from jaxcfr.kernels.numerics import normalise
from jaxcfr.kernels.values import NODE_PASSES, ValueKernel
from jaxcfr.tensors import GameTensors, LoweredGame, Structure

__all__ = ["DenseEstimate", "RowEstimate", "CappedEstimate", "LazyStrategy", "Estimator",
           "Exact", "densify", "over_chunks", "players_of", "rows_of"]


class DenseEstimate(NamedTuple):
    """What a dense estimator returns (``*b``: trailing batch axes).

    ``average_rows`` says whose strategy sums this half-step owns: the averaging rule
    adds ``average`` to exactly those rows. Over one iteration every owned row is in
    exactly one half-step's ``average_rows`` (an alternating update's half-steps
    partition the players).
    """
    regret: jax.Array        # [I, A, *b] instantaneous counterfactual regret; read on the
                             #            updated player's rows only
    average: jax.Array       # [I, A, *b] contribution to the strategy sums of average_rows
    average_rows: jax.Array  # [I] bool   the rows whose strategy sums this half-step updates


class RowEstimate(NamedTuple):
    """A sparse estimate, slot by slot: only the rows the estimator touched (``M`` slots).

    A row may appear in several slots (several sampled members of an information set);
    its regret is the sum of theirs. Unused slots point at the sink row with zeros.
    """
    member: jax.Array        # [M] int32 batch member of the slot
    regret_row: jax.Array    # [M] int32 the updated player's row at the slot (sink: none)
    regret: jax.Array        # [M, A]    instantaneous regret contribution
    average_row: jax.Array   # [M] int32 the averaged player's row at the slot (sink: none)
    average: jax.Array       # [M, A]    contribution to the strategy sums


class CappedEstimate(NamedTuple):
    """A sparse estimate in chunks of ``C`` slots, ``C`` below its static bound.

    ``first`` holds the first ``C`` used slots (of the bound's layout, in its order);
    where they did not all fit, ``chunk(i)`` (``i`` = 1 .. ``more``) holds the next ``C``
    (invalid slots past the last). A consumer that applies the chunks in order
    (:func:`over_chunks`) adds the same numbers in the same order as it would the bound's
    slots, bit for bit, and a step that fits pays for ``C`` slots, not the bound.
    """
    first: RowEstimate                            # the first C used slots
    more: jax.Array                               # [] int32  further chunks (0: it fits)
    chunk: Callable[[jax.Array], RowEstimate]     # chunk i >= 1 of C slots


def over_chunks(est, f: Callable[[RowEstimate, Any], Any], acc):
    """``acc`` after ``f(chunk, acc)`` for each chunk of ``est`` in order: a
    :class:`RowEstimate` is one chunk; a :class:`CappedEstimate` its first, then its
    ``more`` others in a ``while`` loop (none where its slots fit; a loop, not a
    ``lax.cond``, whose carry XLA updates in place: on CPU a ``cond`` copies it)."""
    if not isinstance(est, CappedEstimate):
        return f(est, acc)
    acc = f(est.first, acc)
    return jax.lax.fori_loop(1, est.more + 1, lambda i, a: f(est.chunk(i), a), acc)


class LazyStrategy(NamedTuple):
    """The current strategy of a batch of ``B`` members, read lazily, row by row.

    Sparse estimators regret-match only the rows they visit (:meth:`rows`). The tables
    are the state's ``[I, A, B]`` tables flattened (row-major, the batch axis last), so
    that reading and scattering rows never changes a layout.
    """
    regret: jax.Array       # [I * A * B] accumulated regret
    prediction: jax.Array   # [I * A * B] last instantaneous regret (added when predictive)
    legal: jax.Array        # [I, A] bool legal actions
    members: int            # B
    predictive: bool

    def rows(self, row: jax.Array, member: jax.Array) -> jax.Array:
        """Regret matching of rows ``row [M]`` of members ``member [M]``: ``[M, A]``."""
        regret = self.take_rows(self.regret, row, member)
        if self.predictive:
            regret = regret + self.take_rows(self.prediction, row, member)
        return normalise(regret, passes.gather(self.legal, row))

    # Rows are read and written as windows of A actions (one index per row and member,
    # not one per entry: XLA's CPU gathers and scatters cost per index).
    def _view(self, table: jax.Array) -> jax.Array:
        return table.reshape(-1, self.legal.shape[1], self.members)           # [I, A, B]

    def take_rows(self, table: jax.Array, row: jax.Array, member: jax.Array) -> jax.Array:
        """``table``'s (a flat ``[I * A * B]`` table) rows ``row [M]`` of members
        ``member [M]``: ``[M, A]``."""
        return self._view(table).at[row, :, member].get(mode="clip")

    def add_rows(self, table, row, member, values) -> jax.Array:
        """``table`` with ``values [M, A]`` added at rows ``row`` of members ``member``
        (repeated rows add up): flat ``[I * A * B]``."""
        return self._view(table).at[row, :, member].add(values, mode="drop").reshape(-1)

    def add_rows_compensated(self, total, error, row, member, values
                             ) -> tuple[jax.Array, jax.Array]:
        """The compensated pair ``(total, error)`` (flat ``[I * A * B]`` each) with
        ``values [M, A]`` added at rows ``row`` of members ``member``
        (:func:`jaxcfr.kernels.compensated.scatter_add`)."""
        s, e = compensated.scatter_add(self._view(total), self._view(error),
                                       (row, slice(None), member), values)
        return s.reshape(-1), e.reshape(-1)

    def renormalise_rows(self, total, error, row, member) -> tuple[jax.Array, jax.Array]:
        """The compensated pair (flat ``[I * A * B]`` each) with rows ``row`` of members
        ``member`` renormalised (:func:`jaxcfr.kernels.compensated.renormalise_at`: the
        second half of :meth:`add_rows_compensated`, whose first is :meth:`add_rows` of
        the error; idempotent)."""
        s, e = compensated.renormalise_at(self._view(total), self._view(error),
                                          (row, slice(None), member))
        return s.reshape(-1), e.reshape(-1)

    def set_rows(self, table, row, member, values) -> jax.Array:
        """``table`` with rows ``row`` of members ``member`` set to ``values [M, A]``
        (a repeated row must get the same values): flat ``[I * A * B]``."""
        return self._view(table).at[row, :, member].set(values, mode="drop").reshape(-1)


def players_of(structure: Structure, player):
    """The players an update of ``player`` values: all (a static tuple) or ``player[None]``."""
    return tuple(range(structure.num_players)) if player is None else player[None]


def rows_of(t: GameTensors, player) -> jax.Array:
    """``[I]`` bool: the rows an update of ``player`` changes (every owned row for ``None``)."""
    return t.infoset_player >= 0 if player is None else t.infoset_player == player


def densify(est: RowEstimate | CappedEstimate, rows: int, actions: int, members: int = 1
            ) -> DenseEstimate:
    """A :class:`RowEstimate` (or :class:`CappedEstimate`) as dense ``[I, A, B]`` tables
    (for inspection and tests)."""
    def scatter(e, acc):
        regret, average, touched = acc

        def add(table, row, values):
            index = (row[:, None] * actions + jnp.arange(actions)[None, :]) * members \
                + e.member[:, None]
            return table.at[index].add(values)
        return (add(regret, e.regret_row, e.regret), add(average, e.average_row, e.average),
                touched.at[e.average_row].set(True))
    first = est.first if isinstance(est, CappedEstimate) else est
    zero = jnp.zeros(rows * actions * members, first.regret.dtype)
    regret, average, touched = over_chunks(est, scatter, (zero, zero, jnp.zeros(rows, bool)))
    return DenseEstimate(regret.reshape(rows, actions, members),
                         average.reshape(rows, actions, members), touched.at[rows - 1].set(False))


@dataclasses.dataclass(frozen=True)
class Estimator:
    """An estimator of counterfactual regrets and averaging contributions (see the module).

    Class attributes:
      name: its name in :data:`ESTIMATORS` (``--sampling``, ``solver.sampling``).
      dense: full width: :meth:`estimate` takes the strategy ``[I, A, *b]`` and returns an
        :class:`DenseEstimate`; else a :class:`LazyStrategy` and a :class:`RowEstimate`.
      seeded: it draws from the PRNG keys (a run's seed changes its result).
      reads_nodes: its device function reads the node arrays of the tensors itself (the
        ``[N]`` fields, :data:`~jaxcfr.tensors.NODE_FIELDS`), not only through its value
        kernel; where neither does, a run keeps them off the device
        (:class:`jaxcfr.Runner`).

    Attributes:
      values: the value kernel its exact values are computed with
        (:mod:`jaxcfr.kernels.values`: the node passes by default; the engine hands a
        dense estimator the kernel it chose with the tensors it made for it,
        :func:`jaxcfr.engine.seam.choose_seam`).
    """
    values: ValueKernel = dataclasses.field(default=NODE_PASSES, kw_only=True, repr=False)
    name: ClassVar[str] = ""
    dense: ClassVar[bool] = True
    seeded: ClassVar[bool] = False
    reads_nodes: ClassVar[bool] = True

    def prepare(self, lowered: LoweredGame) -> tuple["Estimator", Any]:
        """Host preparation for ``lowered`` (one game or a stack): this estimator with its
        static facts filled in, and the host arrays its device function reads."""
        return self, None

    def estimate(self, t: GameTensors, s: Structure, current, player, keys, hp, arrays):
        raise NotImplementedError

    def describe(self) -> str:
        """A short label for reprs and tables."""
        return self.name


@dataclasses.dataclass(frozen=True)
class Exact(Estimator):
    """Full-width CFR: exact counterfactual values of every row of the updated players.

    ``regret[I, a] = q(I, a) - sum_b strategy(I, b) q(I, b)`` with ``q`` the
    counterfactual action values (ties within rounding are exact zeros:
    :func:`jaxcfr.kernels.numerics.instantaneous_regret`); the averaging contribution of
    a row of an updated player is its owner's reach times the strategy. ``q`` comes from
    the value kernel (:attr:`Estimator.values`): the sequence form's
    :func:`jaxcfr.kernels.sequence.counterfactual_action_values` (a pass over the leaves and the
    rows; ``t`` carries its tables, as :class:`jaxcfr.Runner` steps with), or the node
    passes (:mod:`jaxcfr.kernels.passes`): one reach and one value pass over all ``N``
    nodes. Both give the same values up to float rounding.
    """
    name: ClassVar[str] = "none"
    reads_nodes: ClassVar[bool] = False     # only its kernel's values and the rows

    def estimate(self, t, s, current, player, keys=None, hp=None, arrays=None) -> DenseEstimate:
        regret, own = self.values.counterfactual_regrets(t, s, current, players_of(s, player))
        return DenseEstimate(regret, own[:, None] * current, rows_of(t, player))

    def describe(self) -> str:
        return "exact"
