"""Estimators: the first part of a CFR update, counterfactual regrets and averaging weights.

An update (see :mod:`jaxcfr.solvers.solver`) is an *estimator*, a *regret rule* and an
*averaging rule* (:mod:`jaxcfr.solvers.rules`). An estimator is one frozen, hashable
object (static in compiled code) that owns its host preparation and its device
function::

    bound, arrays = estimator.prepare(lowered)      # host, once per game
    estimate = bound.estimate(tensors, structure, current, player, keys, hp, arrays)

``tensors`` / ``structure`` are one game's (``[N]``, ``[I, A]``, ...); ``player`` is
``None`` (update every player at once) or a traced int scalar (one player of an
alternating update); ``keys`` is the half-step's PRNG key array (one key per batch
member; :mod:`jaxcfr.kernels.keys`); ``hp`` the run's
:class:`~jaxcfr.solvers.parameters.HyperParams`; ``arrays`` what
:meth:`~Estimator.prepare` made (traced). A *dense* estimator
(:attr:`Estimator.dense`: full width) gets the current strategy ``[I, A, *b]`` as
``current`` and returns a :class:`DenseEstimate` of whole tables, which lets the engine use
its shared / forest / split layouts; a *sparse* one gets a :class:`LazyStrategy` (the current
strategy read row by row, ``hp`` per member ``[B]``) and returns a :class:`RowEstimate`
listing the rows it touched.

The protocol (:class:`Estimator`, :class:`DenseEstimate`, :class:`RowEstimate`,
:class:`LazyStrategy`) and the exact estimator live in :mod:`jaxcfr.solvers.estimator_protocol`, the
sampling schemes in :mod:`jaxcfr.solvers.monte_carlo`; this module names them
(:data:`ESTIMATORS`, :func:`make_estimator`), holds the sampled-chance runner's
:class:`DrawnForest` and re-exports them all. Adding an estimator is one class:
subclass :class:`Estimator`, set ``name`` and ``dense``, write ``estimate`` (and
``prepare`` if it needs host tables), or, for a sampling scheme over the lowered tree,
subclass :class:`MonteCarlo` and write ``enumerates`` (its sampled subtrees, counts and
estimates are the package's; the kernels take the scheme object), and add it to :data:`ESTIMATORS`
to give it a name for ``jaxcfr solve --sampling``, ``solver.sampling`` and
``jaxcfr.make_solver(sampling=...)`` (``jaxcfr.solve`` takes the object itself). An
estimator's own traced parameters are fields made with
:func:`~jaxcfr.solvers.parameters.parameter` (outcome sampling's ``exploration``).

The estimators and what each pairs with:

===============  ===================================  ====================================
estimator        regrets of player i's rows           averaging contributions
===============  ===================================  ====================================
``Exact``        exact: leaves and rows, O(T + I A)   own reach x strategy, rows of i
``none``
``Chance``       one outcome per chance node,         own reach x strategy at every sampled
``chance``       decisions enumerated                 member, rows of i (chance needs no
                                                      correction: its reach is constant
                                                      over iterations)
``External``     i enumerates, chance and the others  strategy at the sampled nodes of
``external``     sampled (Lanctot et al. 2009)         player i + 1 ("simple" averaging, as
                                                      OpenSpiel and Pluribus; unbiased for
                                                      2 players)
``Outcome``      one trajectory; i samples from       own reach / sample reach x strategy
``outcome``      eps-uniform mix of its strategy       at i's sampled nodes ("stochastically
                                                      weighted", Lanctot 2013; as OpenSpiel)
``DrawnForest``  exact over the draws the host made   own reach x strategy, rows of i, by
                 (sampled chance; not named: the      global row
                 sampled-chance runner's own)
===============  ===================================  ====================================

The sampled counterfactual values are unbiased: with ``p`` the target and ``q`` the
sampling probability of each edge, ``W(h) = pi_-i(h) / Q(h)`` (``Q``: the product of
``q`` on the path, 1 on enumerated edges) and ``v(h) = sum over sampled children of
(p / q) v(child)``, so ``E[W(h) v(ha) / q(ha)] = pi_-i(h) v(ha)``. Every preset's
regret rule is a regret minimiser against arbitrary bounded utilities, so every
(preset, estimator) pairing is sound (Lanctot et al. 2009's MCCFR bound holds with
probability 1 - delta); predictive presets then predict with the last *sampled*
regret, which helps less than with exact regrets. Averaging weights need only be
right up to a constant per row (each row's average is normalised), which is why
chance sampling needs no importance weight there.

With ``counts=True`` (:class:`MonteCarlo`) a scheme's ``samples`` traversals run as counts
in one pass over the whole tree (:mod:`jaxcfr.kernels.counts`): their regret estimates
are summed exactly as the table above says, regrouped by leaf
(:meth:`MonteCarlo.from_counts`), and the averaging contributions are the exact
estimator's (own reach x strategy, rows of i), since the counts reach every row anyway.

Shapes: ``N`` nodes, ``I`` rows, ``A`` actions, ``P`` players, ``B`` batch members,
``M`` slots of a row estimate, ``C`` slots of a sampled forest.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
import numpy as np

from jaxcfr._util.arguments import ArgumentError, positive_int
from jaxcfr.solvers.names import ESTIMATOR_NAMES, WALK_NAMES, check_walk
from jaxcfr.solvers.estimator_protocol import (CappedEstimate, DenseEstimate, Estimator, Exact,
                                               LazyStrategy, RowEstimate, densify, over_chunks,
                                               players_of, rows_of)
from jaxcfr.solvers.monte_carlo import (WALKS, ChanceSampling, ExternalSampling, MonteCarlo,
                                        OutcomeSampling, check_counted_samples)

__all__ = ["Estimator", "Exact", "MonteCarlo", "ChanceSampling", "ExternalSampling",
           "OutcomeSampling", "DrawnForest", "ESTIMATORS", "make_estimator", "DenseEstimate",
           "RowEstimate", "CappedEstimate", "LazyStrategy", "densify", "over_chunks", "players_of",
           "rows_of"]


@dataclasses.dataclass(frozen=True)
class DrawnForest(Estimator):
    """Exact counterfactual regrets over chance the host drew (sampled chance,
    :mod:`jaxcfr.engine.sampled_chance`), listed by global row.

    ``t`` / ``s`` are one iteration's draws side by side (a forest whose roots are its
    parts, each counting ``1 / parts``) and ``arrays`` the global row of each of their
    rows (``[I']``); ``current`` reads the global table. Its host preparation is the
    sampled-chance runner's (draws, lowering, padding), not :meth:`prepare`.
    """
    name: ClassVar[str] = "drawn"
    dense: ClassVar[bool] = False

    def prepare(self, lowered):
        raise TypeError("the drawn forest is prepared by the sampled-chance runner, draw by "
                        "draw; it has no lowered game to prepare")

    def estimate(self, t, s, current: LazyStrategy, player, keys, hp, arrays) -> RowEstimate:
        rowmap = arrays
        local_rows, actions = t.legal_mask.shape
        width = current.legal.shape[1]
        zero = jnp.zeros(local_rows, jnp.int32)
        sigma = current.rows(rowmap, zero)[:, :actions]                       # [I', A']
        est = Exact().estimate(t, s, sigma, player)
        parts = s.level_start[1]             # the forest's roots: its parts, each a mean
        mine = rows_of(t, player)
        pad_cols = lambda x: jnp.pad(x, ((0, 0), (0, width - actions)))     # noqa: E731
        regret = pad_cols(jnp.where(mine[:, None], est.regret, 0) / parts)
        average = pad_cols(jnp.where(est.average_rows[:, None], est.average, 0) / parts)
        sink = jnp.zeros_like(rowmap)
        return RowEstimate(zero, jnp.where(mine, rowmap, sink), regret,
                           jnp.where(est.average_rows, rowmap, sink), average)

    def describe(self) -> str:
        return "drawn chance"


#: Estimator name -> class: the one table of estimator names (CLI ``--sampling``, config
#: ``solver.sampling``, ``jaxcfr.make_solver(sampling=...)``).
ESTIMATORS: dict[str, type[Estimator]] = {
    "none": Exact, "chance": ChanceSampling, "external": ExternalSampling,
    "outcome": OutcomeSampling}
if tuple(ESTIMATORS) != ESTIMATOR_NAMES:        # (the names the command line checks)
    raise ImportError("jaxcfr.solvers.names.ESTIMATOR_NAMES differs from ESTIMATORS")
if set(WALK_NAMES) != set(WALKS):               # (the walks the command line checks)
    raise ImportError("jaxcfr.solvers.names.WALK_NAMES differs from monte_carlo.WALKS")


def make_estimator(name: str, samples: int = 1, spell=str, counts: bool = False,
                   walk: str = "levels", pool: int | None = None) -> Estimator:
    """The estimator named ``name`` (:data:`ESTIMATORS`), drawing ``samples`` subtrees if it
    samples, as counts over the whole tree with ``counts``, its traversals one by one
    walked level by level or depth first (``walk``) with an output ``pool`` of that many
    slots a lane (``None``: probed; ``0``: the bound) (:class:`MonteCarlo`;
    :func:`jaxcfr.solvers.names.check_walk`). Errors name the arguments as the caller
    spells them: ``spell("sampling")`` (e.g. ``--sampling``, ``solver.sampling``;
    :mod:`jaxcfr._util.arguments`)."""
    cls = ESTIMATORS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ArgumentError(f"unknown {spell('sampling')} {name!r}; choose one of "
                            f"{', '.join(ESTIMATORS)}", argument=spell("sampling"))
    samples = positive_int(spell("samples"), samples)
    if not isinstance(counts, (bool, np.bool_)):
        raise ArgumentError(f"{spell('counts')} must be true or false, got {counts!r}",
                            argument=spell("counts"))
    walk, pool = check_walk(name, bool(counts), walk, pool, spell)
    if issubclass(cls, MonteCarlo):
        return cls(samples=check_counted_samples(samples, counts, spell), counts=bool(counts),
                   walk=walk, pool=pool)
    if counts:
        raise ArgumentError(f"{spell('counts')} runs a sampling estimator's traversals as "
                            f"counts: it needs {spell('sampling')} chance, external or "
                            f"outcome, not {name!r}", argument=spell("counts"))
    return cls()
