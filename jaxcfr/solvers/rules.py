"""The regret rule and the averaging rule: how an iteration's estimate enters the tables.

Per iteration ``t`` (1-based), with instantaneous regret ``r_t`` and averaging
contribution ``s_t`` (from the estimator, :mod:`jaxcfr.solvers.estimators`)::

    R_t = rule(R_{t-1} + r_t, t)          the regret rule, elementwise
    S_t = S_{t-1} + w(t) s_t              the averaging rule: iteration t weighs w(t)
    sigma_{t+1} = RM(R_t [+ r_t if the rule is predictive])

Each rule is defined once, as a small pure function over rows, and both update paths
call it: the dense path (full-width estimators) on whole ``[I, A, *b]`` tables, the
sparse path (sampled estimators) on the rows a sample touched (``[M, A]``), or on every
row of the player for a rule that changes rows ``r_t`` did not touch
(:attr:`RegretRule.every_row`: discounting). Hyper-parameters arrive broadcastable
against the rows (``[*b]`` against ``[I, A, *b]``; ``[M, 1]`` against ``[M, A]``).

A new regret rule is one subclass of :class:`RegretRule` here and a preset that uses it
(:mod:`jaxcfr.solvers.presets`); a new averaging rule is one subclass of
:class:`AveragingRule`.

Example::

    >>> rule = RegretMatchingPlus()
    >>> rule(jnp.asarray([[-1.0, 2.0]]), jnp.asarray(3.0), hp)     # [[0., 2.]]
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp

__all__ = ["RegretRule", "RegretMatching", "RegretMatchingPlus", "DiscountedRegret",
           "AveragingRule", "PolynomialAverage", "AVERAGE_SCALE"]

#: Iterations per unit of averaging weight (a power of two; see :class:`PolynomialAverage`).
AVERAGE_SCALE = 2.0 ** 20


@dataclasses.dataclass(frozen=True)
class RegretRule:
    """``R_t = rule(R_{t-1} + r_t, t)``, elementwise. Frozen and hashable (static in
    compiled code).

    Attributes:
      predictive: play regret matching of ``R_t + r_t`` (the last instantaneous regret
        predicts the next one: PRM+, Farina, Kroer & Sandholm 2021).
      every_row: the rule changes rows ``r_t`` did not touch (discounting decays every
        row of the updated player each iteration), so a sparse update applies it to all
        of them, not only to the sampled rows.
    """
    predictive: bool = False
    every_row: ClassVar[bool] = False
    label: ClassVar[str] = "RM"

    def __call__(self, summed: jax.Array, t: jax.Array, hp) -> jax.Array:
        """The new accumulated regret from ``R_{t-1} + r_t`` (``summed``) at iteration ``t``."""
        return summed

    def describe(self) -> str:
        return ("predictive " if self.predictive else "") + self.label


@dataclasses.dataclass(frozen=True)
class RegretMatching(RegretRule):
    """Plain regret matching (Zinkevich et al. 2007): regrets add up."""


@dataclasses.dataclass(frozen=True)
class RegretMatchingPlus(RegretRule):
    """RM+ (Tammelin 2014): accumulated regret floored at 0."""
    label: ClassVar[str] = "RM+"

    def __call__(self, summed, t, hp):
        return jnp.maximum(summed, 0)


@dataclasses.dataclass(frozen=True)
class DiscountedRegret(RegretRule):
    """DCFR's discounting (Brown & Sandholm 2019): positive regrets times
    ``t^alpha / (t^alpha + 1)``, negative ones times ``t^beta / (t^beta + 1)``; with
    ``floor``, then floored at 0 (DCFR+, Xu et al. 2024)."""
    floor: bool = False
    every_row: ClassVar[bool] = True

    @property
    def label(self) -> str:     # type: ignore[override]
        return "discounted RM+" if self.floor else "discounted RM"

    def __call__(self, summed, t, hp):
        pos = 1 / (1 + jnp.power(t, -hp.alpha))
        neg = 1 / (1 + jnp.power(t, -hp.beta))
        out = summed * jnp.where(summed > 0, pos, neg)
        return jnp.maximum(out, 0) if self.floor else out


@dataclasses.dataclass(frozen=True)
class AveragingRule:
    """The averaging weight of iteration ``t``: ``S_t = S_{t-1} + weight(t) s_t``."""

    def weight(self, t: jax.Array, hp) -> jax.Array:
        raise NotImplementedError


@dataclasses.dataclass(frozen=True)
class PolynomialAverage(AveragingRule):
    """Iteration ``t`` weighs ``t^gamma`` (``gamma`` 0: uniform, 1: linear, ...).

    The weight is measured in units of :data:`AVERAGE_SCALE` iterations,
    ``(t / 2^20)^gamma``, so that in float32 neither early weights underflow nor late
    sums overflow (sums stay finite past 10^9 iterations for gamma <= 5; the weights
    that do underflow, the first iterations' for gamma > 6, are those the average would
    give less than 2^-126 of its weight anyway). Adding weighted contributions, rather
    than decaying every row by ``((t - 1) / t)^gamma``, gives the same average (each
    row is normalised) without touching rows an iteration did not reach.
    """

    def weight(self, t, hp):
        return jnp.power(t / AVERAGE_SCALE, hp.gamma)
