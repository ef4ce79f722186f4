"""The public-tree names of ``jaxcfr``'s face, gathered in one place (``jaxcfr.PublicGame``,
``jaxcfr.lower_public``, ``jaxcfr.solve_public``, ``jaxcfr.evaluate_public``,
``jaxcfr.expand_public``; see docs/public_trees.md)."""

from jaxcfr.api.public import PublicSolveResult, solve_public
from jaxcfr.game.public import Fold, PayoffTable, PublicGame, Showdown
from jaxcfr.game.public_expand import expand as expand_public
from jaxcfr.lowering.public import PublicLowered, lower_public
from jaxcfr.solvers.public import evaluate_public

__all__ = ["PublicGame", "Fold", "Showdown", "PayoffTable", "expand_public", "lower_public",
           "PublicLowered", "solve_public", "PublicSolveResult", "evaluate_public"]
