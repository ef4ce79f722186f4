"""The public-tree names of ``jaxcfr``'s face, gathered in one place (``jaxcfr.PublicGame``,
``jaxcfr.lower_public``, ``jaxcfr.solve_public``, ``jaxcfr.evaluate_public``,
``jaxcfr.expand_public``, ``jaxcfr.stack_public``; see docs/public_trees.md).
``solve_public`` takes one public tree or a stack of them (a list)."""

from jaxcfr.api.public import PublicSolveResult
from jaxcfr.api.public_stack import PublicStackResult, solve_public
from jaxcfr.game.public import Fold, PayoffTable, PublicGame, Showdown
from jaxcfr.game.public_expand import expand as expand_public
from jaxcfr.lowering.public import PublicLowered, lower_public
from jaxcfr.lowering.public_stack import PublicStack, stack_public
from jaxcfr.solvers.public import best_response_public, evaluate_public
from jaxcfr.solvers.public_stack import evaluate_public_stack

__all__ = ["PublicGame", "Fold", "Showdown", "PayoffTable", "expand_public", "lower_public",
           "PublicLowered", "solve_public", "PublicSolveResult", "evaluate_public",
           "best_response_public", "stack_public", "PublicStack", "PublicStackResult",
           "evaluate_public_stack"]
