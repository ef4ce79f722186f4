"""The presets' names and their other spellings, the parameters each takes with their value
rules, and the checks of both, without JAX: what the command line checks before it imports
anything heavy (:mod:`jaxcfr.solvers.presets` holds the presets themselves, keyed by these
names, and checks on import that both agree, parameters and rules included, as
:mod:`jaxcfr.solvers.estimators` does for the estimators' names; ``tests/test_solve_cli.py``
checks the parameter names).

Example::

    >>> resolve_algorithm("CFR_plus")
    'cfr+'
    >>> check_named_parameters("cfr+", {"alpha": 2.0})
    Traceback (most recent call last):
    ArgumentError: cfr+ takes no parameter alpha; it takes gamma, seed
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.arguments import ArgumentError

__all__ = ["PRESET_NAMES", "ALIASES", "ESTIMATOR_NAMES", "WALK_NAMES", "PARAMETER_NAMES",
           "PRESET_PARAMETERS", "ESTIMATOR_PARAMETERS", "PARAMETER_RULES", "Rule",
           "resolve_algorithm", "check_values", "check_named_parameters", "check_walk"]

#: The presets' names, in the order the help lists them.
PRESET_NAMES = ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "dcfr+", "pdcfr+", "hs-pcfr+",
                "postflop-dcfr")
#: Other spellings accepted for a preset name (names are also case-insensitive).
ALIASES = {"cfr_plus": "cfr+", "cfrplus": "cfr+", "linear_cfr": "lcfr", "pcfr_plus": "pcfr+",
           "pcfrplus": "pcfr+", "dcfr_plus": "dcfr+", "pdcfr_plus": "pdcfr+",
           "hs_pcfr_plus": "hs-pcfr+", "postflop_dcfr": "postflop-dcfr",
           "postflop": "postflop-dcfr"}

#: The estimators' names (``--sampling``, ``solver.sampling``): the keys of
#: :data:`jaxcfr.solvers.estimators.ESTIMATORS`.
ESTIMATOR_NAMES = ("none", "chance", "external", "outcome")
#: How a sampling estimator's traversals one by one run (``--walk``, ``solver.walk``):
#: :data:`jaxcfr.solvers.monte_carlo.WALKS`, the default first.
WALK_NAMES = ("levels", "depth")
#: The traced parameters the presets and estimators declare, by name: the keys of
#: :func:`jaxcfr.solvers.presets.named_parameters` (one ``jaxcfr solve`` option each).
PARAMETER_NAMES = ("gamma", "alpha", "beta", "gamma_drop", "horizon", "exploration")
#: Each preset's traced parameters, in the order its parts declare them (regret rule,
#: averaging rule): :attr:`jaxcfr.Solver.part_parameters` of the preset.
PRESET_PARAMETERS = {
    "cfr": ("gamma",), "cfr+": ("gamma",), "lcfr": ("alpha", "beta", "gamma"),
    "dcfr": ("alpha", "beta", "gamma"), "pcfr+": ("gamma",),
    "dcfr+": ("alpha", "beta", "gamma"), "pdcfr+": ("alpha", "beta", "gamma"),
    "hs-pcfr+": ("gamma", "gamma_drop", "horizon"),
    "postflop-dcfr": ("alpha", "beta", "gamma")}
#: Each estimator's traced parameters (what its class declares).
ESTIMATOR_PARAMETERS = {"none": (), "chance": (), "external": (), "outcome": ("exploration",)}
#: A parameter's value rule (``rule(spelled name, value) -> value``) where it is not
#: :func:`~jaxcfr._util.arguments.finite_float`; ``seed`` is every run's own.
PARAMETER_RULES: dict[str, Callable[[str, Any], Any]] = {
    "horizon": arguments.positive_float, "exploration": arguments.exploration,
    "seed": arguments.seed}


class Rule(NamedTuple):
    """A parameter as :func:`check_values` reads it: its name and value rule (a
    :class:`jaxcfr.solvers.parameters.Parameter` is one too)."""
    name: str
    check: Callable[[str, Any], Any]


def rule_of(name: str) -> Rule:
    """The declared value rule of parameter ``name``."""
    return Rule(name, PARAMETER_RULES.get(name, arguments.finite_float))


def resolve_algorithm(name: str, spelled: str = "algorithm") -> str:
    """The preset name of ``name`` (case-insensitive; aliases accepted); ArgumentError (a
    ValueError) naming the argument as ``spelled`` if unknown."""
    key = ALIASES.get(name.lower(), name.lower()) if isinstance(name, str) else None
    if key not in PRESET_NAMES:
        raise ArgumentError(f"unknown {spelled} {name!r}; choose one of "
                            f"{', '.join(PRESET_NAMES)} (also spelled "
                            f"{', '.join(ALIASES)}; any case)")
    return key


def check_named_parameters(algorithm: str, values: Mapping[str, Any], sampling: str = "none",
                           samples: int = 1, counts: bool = False, spell=str,
                           seed: bool = True) -> dict[str, Any]:
    """``values`` (a run's parameters by name, ``seed`` among them; ``None``: not given)
    checked as a run of preset ``algorithm`` with estimator ``sampling`` checks them
    (:meth:`jaxcfr.Solver.check_parameters`), with the same messages, without JAX: a name
    the run does not take, or a value its rule refuses, is an ArgumentError naming it as
    ``spell`` renders it. ``algorithm`` and ``sampling`` are names the caller checked;
    ``seed=False``: the parts' parameters only (a config's ``[solver]``; its seed is
    ``run.seed``)."""
    algorithm = resolve_algorithm(algorithm)
    names = PRESET_PARAMETERS[algorithm] + ESTIMATOR_PARAMETERS[sampling] + \
        (("seed",) if seed else ())
    owner = algorithm
    if sampling != "none":
        owner += f" with {sampling}{f' x{samples}' if samples > 1 else ''}" \
                 f"{' (counts)' if counts else ''}"
    return check_values(tuple(map(rule_of, names)), values, spell, owner)


def check_walk(sampling: str, counts: bool, walk: Any = "levels", pool: Any = None,
               spell=str) -> tuple[str, int | None]:
    """``(walk, pool)`` of a sampling estimator checked without JAX: ``walk`` one of
    :data:`WALK_NAMES`, ``pool`` ``None`` (probed) or a whole number of output slots a lane
    ``>= 0`` (``0``: the static bound; :class:`jaxcfr.solvers.monte_carlo.MonteCarlo`);
    a depth-first walk needs a sampling estimator whose traversals run one by one (not
    ``counts``), and ``pool`` a depth-first walk. Errors name the arguments as ``spell``
    renders them (``--walk``, ``solver.pool``)."""
    walk = arguments.one_of(spell("walk"), walk, WALK_NAMES)
    if pool is not None:
        pool = arguments.nonnegative_int(spell("pool"), pool)
    if walk == "depth" and sampling == "none":
        raise ArgumentError(f"{spell('walk')} depth walks sampled traversals: it needs "
                            f"{spell('sampling')} chance, external or outcome",
                            argument=spell("walk"))
    if walk == "depth" and counts:
        raise ArgumentError(f"{spell('walk')} depth walks the traversals one by one; "
                            f"{spell('counts')} runs them as counts over the whole tree: "
                            "give one of the two", argument=spell("walk"))
    if pool is not None and walk != "depth":
        raise ArgumentError(f"{spell('pool')} is the output pool of depth-first walks: it "
                            f"needs {spell('walk')} depth", argument=spell("pool"))
    return walk, pool


def _is_batch(value) -> bool:
    return np.ndim(value) > 0 and not isinstance(value, str)


def check_values(parameters, values: Mapping[str, Any], spell=str,
                 owner: str = "this solver") -> dict[str, Any]:
    """``values`` checked by the declarations of ``parameters``: ``None`` is dropped (the
    default), a sequence is a batch (a list; not empty), anything else one value. Errors
    name the parameter as ``spell`` renders it (``alpha``, ``--alpha``, ``solver.alpha``);
    a name ``owner`` does not take is an ArgumentError listing those it takes."""
    by_name = {p.name: p for p in parameters}
    unknown = [k for k in values if k not in by_name and values[k] is not None]
    if unknown:
        takes = ", ".join(map(spell, by_name)) or "no parameters"
        raise ArgumentError(f"{owner} takes no parameter {spell(unknown[0])}; it takes "
                            f"{takes}", argument=spell(unknown[0]))
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        out[name] = _checked(by_name[name], spell(name), value)
    return out


def _checked(p, spelled: str, value):
    """One value checked, or a batch (a list of them)."""
    if not _is_batch(value):
        return p.check(spelled, value)
    if not isinstance(value, (list, tuple, range, np.ndarray)):
        try:                            # an array that is one value (a raw JAX PRNG key)
            return p.check(spelled, value)
        except ArgumentError:
            pass
    items = [p.check(spelled, x) for x in np.ravel(np.asarray(value, object))]
    if not items:
        raise ArgumentError(f"{spelled} must not be an empty list", argument=spelled)
    return items
