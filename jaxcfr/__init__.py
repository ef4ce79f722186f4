"""jaxcfr: batched counterfactual regret minimisation on JAX.

Public API::

    import jaxcfr
    game = jaxcfr.load_game("leduc_poker")        # a Game (host, Python)
    jaxcfr.validate(game)                         # contract probe
    lowered = jaxcfr.lower(game)                  # padded tensors + host tables
    result = jaxcfr.solve(lowered, "cfr+", 1000)  # average profile + metrics
    jaxcfr.evaluate(lowered, result.average_strategy)["exploitability"]
    small = jaxcfr.Abstracted(game, abstraction)  # action abstraction: a smaller Game
    jaxcfr.lift(profile_of_small, game)           # its profile, back in the full game
"""

from jaxcfr import efg, runs
from jaxcfr.budget import MemoryEstimate, memory_estimate
from jaxcfr.abstraction import Abstracted, Abstraction, Identity
from jaxcfr.analytics import Evaluation, best_response, evaluate, expected_values
from jaxcfr.api import SolveResult, solve
from jaxcfr.blueprint import AbstractedResult, format_table, lift, train_abstracted
from jaxcfr.arguments import ArgumentError
from jaxcfr.contract import CHANCE, TERMINAL, GameError
from jaxcfr.engine import Runner, batch_mesh
from jaxcfr.chance_sampling import SampledChanceRunner
from jaxcfr.estimates import (Empirical, Estimate, ProfileEstimates, empirical_game,
                              estimate_profile, estimate_record, estimate_values)
from jaxcfr.game import Game
from jaxcfr.loop import RECORD_KEYS
from jaxcfr.lowering import MemoryBudgetError, estimate_bytes, lower, sort_infosets
from jaxcfr.profile import Profile, evaluate_profile
from jaxcfr.registry import (REFERENCE_ABSTRACTIONS, REFERENCE_GAMES, load_abstraction,
                             load_game, register, registered_games)
from jaxcfr.runs import load_config, train
from jaxcfr.size import SizeEstimate, estimate_size
from jaxcfr.solvers import (ALGORITHMS, HyperParams, Solver, SolverState, cfr, cfr_plus, dcfr,
                            dcfr_plus, linear_cfr, make_solver, pcfr_plus, pdcfr_plus)
from jaxcfr.stack import stack
from jaxcfr.tensors import GameTensors, LoweredGame
from jaxcfr.validate import validate, validate_game_with

__version__ = "0.1.0"

__all__ = [
    # the game protocol and formats
    "efg", "CHANCE", "TERMINAL", "Game", "GameError", "ArgumentError", "load_game", "register",
    "registered_games", "REFERENCE_GAMES", "validate", "validate_game_with",
    # lowering
    "GameTensors", "LoweredGame", "MemoryBudgetError", "estimate_bytes", "lower",
    "sort_infosets", "stack", "estimate_size", "SizeEstimate", "memory_estimate", "MemoryEstimate",
    # solvers and runs
    "ALGORITHMS", "HyperParams", "Solver", "SolverState", "cfr", "cfr_plus", "dcfr", "dcfr_plus",
    "linear_cfr", "make_solver", "pcfr_plus", "pdcfr_plus", "Runner", "batch_mesh", "solve",
    "SolveResult", "RECORD_KEYS", "runs", "load_config", "train",
    # analytics and profiles
    "Evaluation", "best_response", "evaluate", "expected_values", "Profile", "evaluate_profile",
    # estimated analytics (games too large to lower)
    "Estimate", "ProfileEstimates", "estimate_values", "estimate_profile", "estimate_record",
    "empirical_game", "Empirical",
    # chance that cannot be enumerated: the host samples it
    "SampledChanceRunner",
    # action abstraction
    "Abstraction", "Abstracted", "Identity", "lift", "train_abstracted", "AbstractedResult",
    "format_table", "load_abstraction", "REFERENCE_ABSTRACTIONS",
]
