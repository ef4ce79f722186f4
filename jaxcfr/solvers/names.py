"""The presets' names and their other spellings, and the name check, without JAX: what the
command line checks before it imports anything heavy (:mod:`jaxcfr.solvers.presets` holds
the presets themselves, keyed by these names, and checks on import that both agree, as
:mod:`jaxcfr.solvers.estimators` does for the estimators; ``tests/test_solve_cli.py``
checks the parameter names).

Example::

    >>> resolve_algorithm("CFR_plus")
    'cfr+'
"""

from __future__ import annotations

from jaxcfr._util.arguments import ArgumentError

__all__ = ["PRESET_NAMES", "ALIASES", "ESTIMATOR_NAMES", "PARAMETER_NAMES",
           "resolve_algorithm"]

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
#: The traced parameters the presets and estimators declare, by name: the keys of
#: :func:`jaxcfr.solvers.presets.named_parameters` (one ``jaxcfr solve`` option each).
PARAMETER_NAMES = ("gamma", "alpha", "beta", "gamma_drop", "horizon", "exploration")


def resolve_algorithm(name: str, spelled: str = "algorithm") -> str:
    """The preset name of ``name`` (case-insensitive; aliases accepted); ArgumentError (a
    ValueError) naming the argument as ``spelled`` if unknown."""
    key = ALIASES.get(name.lower(), name.lower()) if isinstance(name, str) else None
    if key not in PRESET_NAMES:
        raise ArgumentError(f"unknown {spelled} {name!r}; choose one of "
                            f"{', '.join(PRESET_NAMES)} (also spelled "
                            f"{', '.join(ALIASES)}; any case)")
    return key
