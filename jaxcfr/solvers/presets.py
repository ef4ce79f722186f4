"""The presets: each pairs a regret rule, an averaging rule and an update order, with its
paper's defaults, and :data:`ALGORITHMS`, the one table of algorithm names.

=========  ============  ==============  ==========================  ==============
preset     update order  regret rule     averaging weight of iter t  constants
=========  ============  ==============  ==========================  ==============
``cfr``    simultaneous  RM              1 (uniform)                 -
``cfr+``   alternating   RM+             t                           -
``lcfr``   alternating   discounted RM   t                           alpha=beta=gamma=1
``dcfr``   alternating   discounted RM   t^gamma                     1.5, 0, 2
``pcfr+``  alternating   predictive RM+  t^2                         gamma=2
``dcfr+``  alternating   discounted RM+  t^gamma                     alpha 1.5, gamma 4
``pdcfr+`` alternating   predictive      t^gamma                     alpha 2.3, gamma 5
                         discounted RM+
=========  ============  ==============  ==========================  ==============

References: Zinkevich et al. 2007 (CFR); Tammelin 2014 and Tammelin et al. 2015
(CFR+); Brown & Sandholm 2019 (LCFR, DCFR: alternating updates in all their
experiments); Farina, Kroer & Sandholm 2021 (PCFR+); Xu et al. 2024 (DCFR+, PDCFR+).

A new preset is one function here and one line of :data:`ALGORITHMS`.

Example::

    >>> import jaxcfr
    >>> jaxcfr.make_solver("dcfr", sampling="external", samples=16)
    Solver(dcfr: discounted RM, alternating, alpha=1.5, beta=0, gamma=2, external x16)
"""

from __future__ import annotations

import dataclasses

from jaxcfr._util.arguments import ArgumentError, finite_float
from jaxcfr.solvers.estimators import Estimator, make_estimator
from jaxcfr.solvers.rules import DiscountedRegret, RegretMatching, RegretMatchingPlus
from jaxcfr.solvers.solver import HYPERPARAMETERS, Solver

__all__ = ["cfr", "cfr_plus", "linear_cfr", "dcfr", "pcfr_plus", "dcfr_plus", "pdcfr_plus",
           "ALGORITHMS", "ALIASES", "resolve_algorithm", "make_solver"]


def cfr(alternating: bool = False) -> Solver:
    """Vanilla CFR (Zinkevich et al. 2007): regret matching, uniform averaging, simultaneous."""
    return Solver("cfr", RegretMatching(), alternating=alternating, gamma=0.0)


def cfr_plus(alternating: bool = True) -> Solver:
    """CFR+ (Tammelin 2014): RM+, alternating updates, linear averaging."""
    return Solver("cfr+", RegretMatchingPlus(), alternating=alternating, gamma=1.0)


def linear_cfr(alternating: bool = True) -> Solver:
    """Linear CFR (Brown & Sandholm 2019): iteration t weighs t in regrets and average."""
    return Solver("lcfr", DiscountedRegret(), alternating=alternating, alpha=1.0, beta=1.0,
                  gamma=1.0)


def dcfr(alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
         alternating: bool = True) -> Solver:
    """Discounted CFR (Brown & Sandholm 2019), defaults alpha 1.5, beta 0, gamma 2."""
    return Solver("dcfr", DiscountedRegret(), alternating=alternating, alpha=alpha, beta=beta,
                  gamma=gamma)


def pcfr_plus(gamma: float = 2.0, alternating: bool = True) -> Solver:
    """Predictive CFR+ (Farina, Kroer & Sandholm 2021): predictive RM+, quadratic averaging."""
    return Solver("pcfr+", RegretMatchingPlus(predictive=True), alternating=alternating,
                  gamma=gamma)


def dcfr_plus(alpha: float = 1.5, gamma: float = 4.0, alternating: bool = True) -> Solver:
    """DCFR+ (Xu et al. 2024): RM+ with positive regrets discounted by alpha."""
    return Solver("dcfr+", DiscountedRegret(floor=True), alternating=alternating,
                  alpha=alpha, beta=0.0, gamma=gamma)


def pdcfr_plus(alpha: float = 2.3, gamma: float = 5.0, alternating: bool = True) -> Solver:
    """PDCFR+ (Xu et al. 2024): predictive DCFR+."""
    return Solver("pdcfr+", DiscountedRegret(floor=True, predictive=True),
                  alternating=alternating, alpha=alpha, beta=0.0, gamma=gamma)


#: Preset name -> constructor: the one list of algorithm names (CLI, configs, API).
ALGORITHMS = {"cfr": cfr, "cfr+": cfr_plus, "lcfr": linear_cfr, "dcfr": dcfr,
              "pcfr+": pcfr_plus, "dcfr+": dcfr_plus, "pdcfr+": pdcfr_plus}
#: Other spellings accepted for a preset name (names are also case-insensitive).
ALIASES = {"cfr_plus": "cfr+", "cfrplus": "cfr+", "linear_cfr": "lcfr", "pcfr_plus": "pcfr+",
           "pcfrplus": "pcfr+", "dcfr_plus": "dcfr+", "pdcfr_plus": "pdcfr+"}


def resolve_algorithm(name: str, spelled: str = "algorithm") -> str:
    """The preset name of ``name`` (case-insensitive; aliases accepted); ArgumentError (a
    ValueError) naming the argument as ``spelled`` if unknown."""
    key = ALIASES.get(name.lower(), name.lower()) if isinstance(name, str) else None
    if key not in ALGORITHMS:
        raise ArgumentError(f"unknown {spelled} {name!r}; choose one of "
                            f"{', '.join(ALGORITHMS)} (also spelled "
                            f"{', '.join(ALIASES)}; any case)")
    return key


def make_solver(name: str | Solver, *, alternating: bool | None = None,
                estimator: Estimator | None = None, sampling: str | None = None,
                samples: int | None = None, counts: bool | None = None, spell=str,
                **defaults) -> Solver:
    """A preset by name (:data:`ALGORITHMS`, :data:`ALIASES`), or a Solver, with changes.

    ``defaults`` override the preset's default alpha / beta / gamma; ``estimator`` (an
    object), or ``sampling`` and ``samples`` (its name in
    :data:`~jaxcfr.solvers.estimators.ESTIMATORS` and subtrees per traverser, ``counts``
    to run them as counts), pick the estimator (default: the solver's, exact for a
    preset). Errors name the arguments as
    ``spell`` renders them (``--sampling``, ``solver.sampling``).
    """
    solver = name if isinstance(name, Solver) else \
        ALGORITHMS[resolve_algorithm(name, spell("algorithm"))]()
    bad = set(defaults) - set(HYPERPARAMETERS)
    if bad:
        raise ArgumentError(f"unknown hyper-parameter(s) {', '.join(sorted(bad))} for "
                            f"{solver.name}; known: {', '.join(HYPERPARAMETERS)}")
    changes = {k: finite_float(spell(k), v) for k, v in defaults.items() if v is not None}
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
    return dataclasses.replace(solver, **changes)
