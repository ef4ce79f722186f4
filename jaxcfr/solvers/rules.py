"""The regret rule and the averaging rule: how an iteration's estimate enters the tables.

Per iteration ``t`` (1-based), with instantaneous regret ``r_t`` and averaging
contribution ``s_t`` (from the estimator, :mod:`jaxcfr.solvers.estimators`)::

    R_t = rule(R_{t-1} + r_t, t)          the regret rule, elementwise
                                          (or rule(R_{t-1}, t) + r_t: ``before_adding``)
    S_t = d(t) S_{t-1} + w(t) s_t         the averaging rule: iteration t weighs w(t)
                                          (d = 1 unless the rule ``decays``)
    sigma_{t+1} = RM(R_t [+ r_t if the rule is predictive])

Each rule is defined once, as a small pure function over rows, and both update paths
call it: the dense path (full-width estimators) on whole ``[I, A, *b]`` tables, the
sparse path (sampled estimators) on the rows a sample touched (``[M, A]``), or on every
row of the player for a rule that changes rows ``r_t`` did not touch
(:attr:`RegretRule.every_row`: discounting).

A rule's numbers are its own *traced parameters* (:mod:`jaxcfr.solvers.parameters`):
fields made with :func:`~jaxcfr.solvers.parameters.parameter` (name, default, check,
one line of description), read in compiled code from ``hp`` by the same name
(``hp.alpha``), never from ``self``. They arrive broadcastable against the rows
(``[*b]`` against ``[I, A, *b]``; ``[M, 1]`` against ``[M, A]``). A rule that declares
none reads none (and a solver using it prints none).

A new regret rule is one subclass of :class:`RegretRule` (here, or in the user's own
code) and a preset that uses it (:mod:`jaxcfr.solvers.presets`); a new averaging rule is
one subclass of :class:`AveragingRule`. Its parameters then reach ``jaxcfr.solve``,
configs, the command line, sweeps and checkpoints with nothing else changed.

Example::

    >>> rule = RegretMatchingPlus()
    >>> rule(jnp.asarray([[-1.0, 2.0]]), jnp.asarray(3.0), hp)     # [[0., 2.]]
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util.arguments import ArgumentError, positive_float
from jaxcfr.solvers.parameters import parameter

__all__ = ["RegretRule", "RegretMatching", "RegretMatchingPlus", "DiscountedRegret",
           "PostflopDiscountedRegret", "AveragingRule", "PolynomialAverage", "ScheduledAverage",
           "RestartedAverage", "AVERAGE_SCALE"]

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
      before_adding: the rule applies to ``R_{t-1}`` before ``r_t`` is added,
        ``R_t = rule(R_{t-1}, t) + r_t`` (postflop-solver's order: the old regret's sign
        picks the discount, and the regret just added is not discounted); full-width
        estimators only.
    """
    predictive: bool = False
    every_row: ClassVar[bool] = False
    before_adding: ClassVar[bool] = False
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
    alpha: float = parameter(1.5, "positive regrets are discounted by t^alpha / (t^alpha + 1)")
    beta: float = parameter(0.0, "negative regrets are discounted by t^beta / (t^beta + 1)")
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


def _lag(t: jax.Array) -> jax.Array:
    """postflop-solver's ``t_alpha``: its 0-based iteration minus 1, at least 0 (jaxcfr's
    1-based ``t`` minus 2)."""
    return jnp.maximum(t - 2, 0)


@dataclasses.dataclass(frozen=True)
class PostflopDiscountedRegret(RegretRule):
    """The discounting of b-inary's postflop-solver (``src/solver.rs``, ``DiscountParams``),
    applied before the new regret is added (:attr:`RegretRule.before_adding`)::

        R_t = R_{t-1} * (s^alpha / (s^alpha + 1) if R_{t-1} > 0 else s^beta / (s^beta + 1))
              + r_t,       s = max(t - 2, 0)

    With its constants, alpha 1.5 and beta 0: positive regrets times
    ``s^1.5 / (s^1.5 + 1)`` (0 at ``t = 2``: the first iteration's positive regrets are
    dropped), negative ones halved every iteration. ``s`` is its own iteration counter,
    0-based, minus one (``t_alpha``); jaxcfr's ``t`` is 1-based. DCFR (Brown & Sandholm
    2019, :class:`DiscountedRegret`) instead discounts ``R_{t-1} + r_t`` by ``t``."""
    alpha: float = parameter(1.5, "positive regrets are discounted by s^alpha / (s^alpha + 1) "
                                  "(postflop: s = t - 2, before r_t is added)")
    beta: float = parameter(0.0, "negative regrets are discounted by s^beta / (s^beta + 1) "
                                 "(postflop: beta 0 halves them)")
    every_row: ClassVar[bool] = True
    before_adding: ClassVar[bool] = True
    label: ClassVar[str] = "postflop-discounted RM"

    def __call__(self, previous, t, hp):
        s = _lag(t)
        pos = jnp.power(s, hp.alpha)
        neg = jnp.power(s, hp.beta)
        return previous * jnp.where(previous > 0, pos / (pos + 1), neg / (neg + 1))


@dataclasses.dataclass(frozen=True)
class AveragingRule:
    """The averaging weight of iteration ``t``: ``S_t = d(t) S_{t-1} + weight(t) s_t``
    (``d = 1`` unless :attr:`decays`). Only each row's proportions matter (the average is
    normalised), so a weight may carry any constant factor.

    Class attributes:
      decays: the sum is multiplied by :meth:`decay` before iteration ``t`` adds to it.
      reach_weighted: ``s_t`` is the owner's reach times the current strategy (the
        estimator's contribution); else the current strategy itself at every row of the
        updated player (postflop-solver's sums), which needs a full-width estimator.
    """
    decays: ClassVar[bool] = False
    reach_weighted: ClassVar[bool] = True

    def weight(self, t: jax.Array, hp) -> jax.Array:
        raise NotImplementedError

    def decay(self, t: jax.Array, hp) -> jax.Array:
        """The factor ``d(t)`` of ``S_{t-1}`` (``[*b]``; only when :attr:`decays`)."""
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__


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
    gamma: float = parameter(0.0, "iteration t weighs t^gamma in the average strategy "
                                  "(0: uniform, 1: linear)")

    def weight(self, t, hp):
        return jnp.power(t / AVERAGE_SCALE, hp.gamma)


@dataclasses.dataclass(frozen=True)
class ScheduledAverage(AveragingRule):
    """The averaging of a hyper-parameter schedule (Zhang, McAleer & Sandholm 2024,
    "Faster Game Solving via Hyperparameter Schedules", arXiv:2404.09097): the average
    is discounted each iteration by ``((t - 1) / t)^gamma_t`` with an exponent that falls
    linearly over a planned horizon ``n``::

        S_t = S_{t-1} ((t - 1) / t)^gamma_t + s_t,     gamma_t = gamma - gamma_drop t / n

    (HS-PCFR+(30): ``gamma = 30``, ``gamma_drop = 5``, ``n`` the run's iterations:
    early iterations are discounted hard, later ones trusted more).

    As a weight added without decaying every row: iteration ``k`` weighs
    ``W(k) = prod_{j=2..k} (j / (j - 1))^gamma_j`` relative to the others, and with the
    linear schedule ``log W(k) = gamma log k - (gamma_drop / n) (k log k - lgamma(k))``
    (``sum_{j=2..k} j log(j / (j - 1)) = k log k - log (k - 1)!``). The weight is taken
    relative to ``W`` at ``k = n`` in the exponent, ``exp(gamma log(k / n) - ...)``, so
    that in float32 the weights of the iterations that matter (near the horizon) neither
    underflow nor overflow; those of the first iterations underflow to 0, as their share
    of the average does (below 2^-126 of it).
    """
    gamma: float = parameter(30.0, "the averaging exponent at the start (the average is "
                                   "discounted by ((t-1)/t)^gamma_t each iteration)")
    gamma_drop: float = parameter(5.0, "how much the averaging exponent falls, linearly, "
                                       "by the horizon: gamma_t = gamma - gamma_drop t/horizon")
    horizon: float = parameter(1000.0, "the iterations the schedule is planned over (the "
                                       "run's iterations)", check=positive_float)

    def weight(self, t, hp):
        log_w = (hp.gamma * jnp.log(t / hp.horizon)
                 - hp.gamma_drop / hp.horizon * (t * jnp.log(t) - jax.lax.lgamma(t)))
        return jnp.exp(log_w)


def _restart_base(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ArgumentError(f"{name} must be an integer of at least 2, got {value!r}",
                            argument=name)
    return int(value)


@dataclasses.dataclass(frozen=True)
class RestartedAverage(AveragingRule):
    """The averaging of b-inary's postflop-solver (``src/solver.rs``, ``DiscountParams``):
    polynomial averaging restarted at its iterations 1, 4, 16, 64, ... (0-based: jaxcfr's
    ``t`` = 2, 5, 17, 65, ...), the current strategy added unweighted by reach::

        S_t = S_{t-1} (u / (u + 1))^gamma + sigma_t,    u = k - p,
        k = t - 1 (its 0-based iteration), p = the largest power of ``base`` <= k (0 for k = 0)

    At ``u = 0`` the factor is 0: the sum forgets everything before, so the average is
    that of the iterations since the last restart, iteration ``j`` weighing
    ``(j - p + 1)^gamma`` (cubic with its gamma 3). ``base`` is static (4: powers of 4).
    Unweighted sums (:attr:`AveragingRule.reach_weighted` false) are a heuristic of the
    poker solvers; the sums are still an average strategy, not the reach-weighted one
    CFR's theory averages.
    """
    gamma: float = parameter(3.0, "the average weighs iteration j by (j - p + 1)^gamma since "
                                  "the last restart p (postflop: 3)")
    base: int = 4
    decays: ClassVar[bool] = True
    reach_weighted: ClassVar[bool] = False

    def __post_init__(self):
        _restart_base("base", self.base)

    def describe(self) -> str:
        return f"RestartedAverage(base {self.base})"

    def _since_restart(self, t: jax.Array) -> jax.Array:
        """``u = k - p`` for ``k = t - 1``: iterations since the last restart (``t`` ``[]``)."""
        powers = [1]
        while powers[-1] * self.base < 2 ** 31:
            powers.append(powers[-1] * self.base)
        k = t - 1
        powers = jnp.asarray(powers, t.dtype)
        last = jnp.max(jnp.where(powers <= k, powers, 0))      # 0 when k = 0
        return k - last

    def weight(self, t, hp):
        return jnp.ones_like(t)

    def decay(self, t, hp):
        u = self._since_restart(t)
        return jnp.power(u / (u + 1), hp.gamma)
