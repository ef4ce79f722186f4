"""jaxcfr: batched counterfactual regret minimisation on JAX.

Public API::

    import jaxcfr
    game = jaxcfr.load_game("leduc_poker")        # a Game (host, Python)
    jaxcfr.validate(game)                         # contract probe
    lowered = jaxcfr.lower(game)                  # padded tensors + host tables
    result = jaxcfr.solve(lowered, "cfr+", 1000)  # average profile + metrics
"""

from jaxcfr import efg
from jaxcfr.analytics import Evaluation, best_response, evaluate, expected_values
from jaxcfr.api import SolveResult, solve
from jaxcfr.engine import Runner, batch_mesh
from jaxcfr.game import CHANCE, TERMINAL, Game, GameError
from jaxcfr.lowering import (GameTensors, LoweredGame, MemoryBudgetError, estimate_bytes, lower,
                             sort_infosets)
from jaxcfr.profile import Profile
from jaxcfr.registry import load_game, register, registered_games
from jaxcfr.solvers import (ALGORITHMS, HyperParams, Solver, SolverState, cfr, cfr_plus, dcfr,
                            dcfr_plus, linear_cfr, make_solver, pcfr_plus, pdcfr_plus)
from jaxcfr.stack import stack
from jaxcfr.validate import validate, validate_game_with

__version__ = "0.1.0"

__all__ = [
    # the game protocol and formats
    "efg",
    "CHANCE", "TERMINAL", "Game", "GameError", "load_game", "register", "registered_games",
    "validate", "validate_game_with",
    # lowering
    "GameTensors", "LoweredGame", "MemoryBudgetError", "estimate_bytes", "lower",
    "sort_infosets", "stack",
    # solvers and runs
    "ALGORITHMS", "HyperParams", "Solver", "SolverState", "cfr", "cfr_plus", "dcfr", "dcfr_plus",
    "linear_cfr", "make_solver", "pcfr_plus", "pdcfr_plus", "Runner", "batch_mesh", "solve",
    "SolveResult",
    # analytics and profiles
    "Evaluation", "best_response", "evaluate", "expected_values", "Profile",
]

# Training runs from TOML configs (``jaxcfr train``, docs/runs.md).
from jaxcfr import runs  # noqa: E402
from jaxcfr.runs import evaluate_profile, load_config, train  # noqa: E402

__all__ += ["runs", "evaluate_profile", "load_config", "train"]
