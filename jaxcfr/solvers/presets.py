"""The presets: each pairs a regret rule, an averaging rule and an update order, with its
paper's defaults, and :data:`ALGORITHMS`, the one table of algorithm names.

============  ============  ==============  ==========================  ================
preset        update order  regret rule     averaging weight of iter t  parameters
============  ============  ==============  ==========================  ================
``cfr``       simultaneous  RM              1 (uniform)                 gamma 0
``cfr+``      alternating   RM+             t                           gamma 1
``lcfr``      alternating   discounted RM   t                           alpha 1, beta 1,
                                                                        gamma 1
``dcfr``      alternating   discounted RM   t^gamma                     alpha 1.5,
                                                                        beta 0, gamma 2
``pcfr+``     alternating   predictive RM+  t^gamma                     gamma 2
``dcfr+``     alternating   discounted RM+  t^gamma                     alpha 1.5,
                                                                        beta 0, gamma 4
``pdcfr+``    alternating   predictive      t^gamma                     alpha 2.3,
                            discounted RM+                              beta 0, gamma 5
``hs-pcfr+``  alternating   predictive RM+  prod over j > t of          gamma 30,
                                            ((j-1)/j)^gamma_j,          gamma_drop 5,
                                            gamma_j = gamma -           horizon 1000
                                            gamma_drop j / horizon
``postflop-   alternating   postflop-       restarted: (j - p + 1)^     alpha 1.5,
dcfr``                      discounted RM   gamma since the last power  beta 0, gamma 3
                                            of 4, p; unweighted by
                                            reach
============  ============  ==============  ==========================  ================

``postflop-dcfr`` is the Discounted CFR of b-inary's postflop-solver (and of the poker
solvers built on it), written out from its ``src/solver.rs`` so trajectories can be
compared iteration by iteration: regrets discounted before the new regret is added, with
a lagged iteration count (:class:`~jaxcfr.solvers.rules.PostflopDiscountedRegret`), and
an average restarted at its iterations 1, 4, 16, 64, ... and summed without the owner's
reach (:class:`~jaxcfr.solvers.rules.RestartedAverage`), in plain float sums as the
peer's (``compensate=False``: its state holds the regrets and the sums alone). It needs
the exact estimator.

The parameters are the parts' own (:mod:`jaxcfr.solvers.parameters`): ``alpha`` and
``beta`` the discounted rules', ``gamma`` the averaging rule's, ``gamma_drop`` and
``horizon`` the schedule's (:class:`~jaxcfr.solvers.rules.ScheduledAverage`); every run
also takes ``seed``, and outcome sampling ``exploration``.

References: Zinkevich et al. 2007 (CFR); Tammelin 2014 and Tammelin et al. 2015
(CFR+); Brown & Sandholm 2019 (LCFR, DCFR: alternating updates in all their
experiments); Farina, Kroer & Sandholm 2021 (PCFR+); Xu et al. 2024 (DCFR+, PDCFR+);
Zhang, McAleer & Sandholm 2024, arXiv:2404.09097 (hyper-parameter schedules: HS-PCFR+).

A new preset is one function here and one line of :data:`ALGORITHMS`.

Example::

    >>> import jaxcfr
    >>> jaxcfr.make_solver("dcfr", sampling="external", samples=16)
    Solver(dcfr: discounted RM, alternating, alpha=1.5, beta=0, gamma=2, external x16)
"""

from __future__ import annotations

import dataclasses

from jaxcfr._util.arguments import ArgumentError
from jaxcfr.solvers.estimators import ESTIMATORS, Estimator, make_estimator
from jaxcfr.solvers.names import (ALIASES, ESTIMATOR_PARAMETERS, PRESET_NAMES,
                                  PRESET_PARAMETERS, resolve_algorithm, rule_of)
from jaxcfr.solvers.parameters import Parameter, declared
from jaxcfr.solvers.rules import (DiscountedRegret, PolynomialAverage,
                                  PostflopDiscountedRegret, RegretMatching, RegretMatchingPlus,
                                  RestartedAverage, ScheduledAverage)
from jaxcfr.solvers.solver import SEED, Solver

__all__ = ["cfr", "cfr_plus", "linear_cfr", "dcfr", "pcfr_plus", "dcfr_plus", "pdcfr_plus",
           "hs_pcfr_plus", "postflop_dcfr", "ALGORITHMS", "ALIASES", "resolve_algorithm",
           "make_solver", "named_parameters"]


def cfr(alternating: bool = False) -> Solver:
    """Vanilla CFR (Zinkevich et al. 2007): regret matching, uniform averaging, simultaneous."""
    return Solver("cfr", RegretMatching(), PolynomialAverage(gamma=0.0), alternating=alternating)


def cfr_plus(alternating: bool = True) -> Solver:
    """CFR+ (Tammelin 2014): RM+, alternating updates, linear averaging."""
    return Solver("cfr+", RegretMatchingPlus(), PolynomialAverage(gamma=1.0),
                  alternating=alternating)


def linear_cfr(alternating: bool = True) -> Solver:
    """Linear CFR (Brown & Sandholm 2019): iteration t weighs t in regrets and average."""
    return Solver("lcfr", DiscountedRegret(alpha=1.0, beta=1.0), PolynomialAverage(gamma=1.0),
                  alternating=alternating)


def dcfr(alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
         alternating: bool = True) -> Solver:
    """Discounted CFR (Brown & Sandholm 2019), defaults alpha 1.5, beta 0, gamma 2."""
    return Solver("dcfr", DiscountedRegret(alpha=alpha, beta=beta),
                  PolynomialAverage(gamma=gamma), alternating=alternating)


def pcfr_plus(gamma: float = 2.0, alternating: bool = True) -> Solver:
    """Predictive CFR+ (Farina, Kroer & Sandholm 2021): predictive RM+, quadratic averaging."""
    return Solver("pcfr+", RegretMatchingPlus(predictive=True), PolynomialAverage(gamma=gamma),
                  alternating=alternating)


def dcfr_plus(alpha: float = 1.5, gamma: float = 4.0, alternating: bool = True) -> Solver:
    """DCFR+ (Xu et al. 2024): RM+ with positive regrets discounted by alpha."""
    return Solver("dcfr+", DiscountedRegret(alpha=alpha, beta=0.0, floor=True),
                  PolynomialAverage(gamma=gamma), alternating=alternating)


def pdcfr_plus(alpha: float = 2.3, gamma: float = 5.0, alternating: bool = True) -> Solver:
    """PDCFR+ (Xu et al. 2024): predictive DCFR+."""
    return Solver("pdcfr+", DiscountedRegret(alpha=alpha, beta=0.0, floor=True,
                                             predictive=True),
                  PolynomialAverage(gamma=gamma), alternating=alternating)


def hs_pcfr_plus(gamma: float = 30.0, gamma_drop: float = 5.0, horizon: float = 1000.0,
                 alternating: bool = True) -> Solver:
    """HS-PCFR+ (Zhang, McAleer & Sandholm 2024, arXiv:2404.09097): PCFR+ whose averaging
    exponent follows a schedule, ``gamma_t = gamma - gamma_drop t / horizon`` (their
    HS-PCFR+(30): 30 falling to 25). ``horizon``: the run's iterations
    (:class:`~jaxcfr.solvers.rules.ScheduledAverage`)."""
    return Solver("hs-pcfr+", RegretMatchingPlus(predictive=True),
                  ScheduledAverage(gamma=gamma, gamma_drop=gamma_drop, horizon=horizon),
                  alternating=alternating)


def postflop_dcfr(alpha: float = 1.5, beta: float = 0.0, gamma: float = 3.0,
                  alternating: bool = True) -> Solver:
    """Discounted CFR as b-inary's postflop-solver runs it (``src/solver.rs``): positive
    regrets times ``s^1.5 / (s^1.5 + 1)`` and negative ones halved, ``s = t - 2``, before
    the new regret is added; the average cubic, restarted at its 0-based iterations 1, 4,
    16, 64, ..., the strategy summed unweighted by reach; alternating, player 0 first;
    plain float sums, as the peer's (no compensation table: :attr:`Solver.compensate`)."""
    return Solver("postflop-dcfr", PostflopDiscountedRegret(alpha=alpha, beta=beta),
                  RestartedAverage(gamma=gamma), alternating=alternating, compensate=False)


#: Preset name -> constructor: the one list of algorithm names (CLI, configs, API).
ALGORITHMS = {"cfr": cfr, "cfr+": cfr_plus, "lcfr": linear_cfr, "dcfr": dcfr,
              "pcfr+": pcfr_plus, "dcfr+": dcfr_plus, "pdcfr+": pdcfr_plus,
              "hs-pcfr+": hs_pcfr_plus, "postflop-dcfr": postflop_dcfr}
if tuple(ALGORITHMS) != PRESET_NAMES:             # (the names the command line checks)
    raise ImportError("jaxcfr.solvers.names.PRESET_NAMES differs from ALGORITHMS")


def _check_declared_rules() -> None:
    """ImportError unless :mod:`jaxcfr.solvers.names`'s JAX-free tables (each preset's and
    estimator's parameters, each parameter's rule) are what the parts declare."""
    takers = [(PRESET_PARAMETERS[n], make().part_parameters) for n, make in ALGORITHMS.items()]
    takers += [(ESTIMATOR_PARAMETERS[n], list(declared(cls))) for n, cls in ESTIMATORS.items()]
    takers += [(("seed",), [SEED])]
    for names, parameters in takers:
        if tuple(p.name for p in parameters) != names or \
                any(p.check is not rule_of(p.name).check for p in parameters):
            raise ImportError(f"jaxcfr.solvers.names: the parameters {names} or their rules "
                              f"differ from the declarations {parameters}")


_check_declared_rules()


def make_solver(name: str | Solver, *, alternating: bool | None = None,
                estimator: Estimator | None = None, sampling: str | None = None,
                samples: int | None = None, counts: bool | None = None, spell=str,
                **defaults) -> Solver:
    """A preset by name (:data:`ALGORITHMS`, :data:`ALIASES`), or a Solver, with changes.

    ``defaults`` override the parts' parameter values (:meth:`Solver.with_defaults`:
    ``alpha=2``); ``estimator`` (an
    object), or ``sampling`` and ``samples`` (its name in
    :data:`~jaxcfr.solvers.estimators.ESTIMATORS` and subtrees per traverser, ``counts``
    to run them as counts), pick the estimator (default: the solver's, exact for a
    preset). Errors name the arguments as
    ``spell`` renders them (``--sampling``, ``solver.sampling``).
    """
    solver = name if isinstance(name, Solver) else \
        ALGORITHMS[resolve_algorithm(name, spell("algorithm"))]()
    changes = {}
    if alternating is not None:
        changes["alternating"] = bool(alternating)
    if estimator is not None:
        if sampling is not None or samples is not None or counts is not None:
            raise ArgumentError(f"give {spell('estimator')} or {spell('sampling')} / "
                                f"{spell('samples')} / {spell('counts')}, not both")
        if not isinstance(estimator, Estimator):
            raise ArgumentError(f"{spell('estimator')} must be an estimator object "
                                f"(jaxcfr.ExternalSampling(samples=16), ...), got "
                                f"{estimator!r}; by name, use {spell('sampling')}")
        changes["estimator"] = estimator
    elif sampling is not None or samples is not None or counts is not None:
        changes["estimator"] = make_estimator(
            sampling if sampling is not None else solver.estimator.name or "none",
            1 if samples is None else samples, spell, False if counts is None else counts)
    solver = dataclasses.replace(solver, **changes)
    return solver.with_defaults(spell, **defaults) if defaults else solver


def named_parameters() -> dict[str, list[tuple[str, Parameter]]]:
    """Every traced parameter of the named parts: those of the presets
    (:data:`ALGORITHMS`) and of the named estimators
    (:data:`~jaxcfr.solvers.estimators.ESTIMATORS`), by name: ``[(who takes it, its
    declaration there)]`` (the names a config's ``[solver]`` and ``jaxcfr solve``'s
    options take; the run's ``seed`` is not among them)."""
    found: dict[str, list] = {}
    takers = [(name, make().part_parameters) for name, make in ALGORITHMS.items()]
    takers += [(f"{name} sampling", declared(cls)) for name, cls in ESTIMATORS.items()]
    for who, parameters in takers:
        for p in parameters:
            found.setdefault(p.name, []).append((who, p))
    return found
