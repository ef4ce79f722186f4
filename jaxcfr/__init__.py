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
    sub = jaxcfr.subgame(game, profile, path)     # the subgame at a history, with its gadget
    jaxcfr.resolve(game, profile, paths)          # the blueprint with those subgames re-solved
    buckets = jaxcfr.Bucketed(game, jaxcfr.load_abstraction("suit_isomorphism"))
    jaxcfr.lift(profile_of_buckets, game, bucketing="suit_isomorphism")

``import jaxcfr`` itself is light (the standard library and the ``.efg`` reader): the
first use of any other public name imports the whole library, JAX included, as one step
(PEP 562 ``__getattr__``). So the ``jaxcfr`` command installs its Ctrl-C handler and
answers ``--version`` before JAX is imported.
"""

import sys

from jaxcfr.game import efg

# The .efg package lives in the game layer; ``import jaxcfr.efg`` is its public name.
sys.modules[__name__ + ".efg"] = efg

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
    "linear_cfr", "make_solver", "pcfr_plus", "pdcfr_plus", "Runner", "RunnerProtocol",
    "batch_mesh", "Cluster", "DistributedError", "solve", "SolveOptions", "SolveResult", "RECORD_KEYS", "runs", "load_config",
    "train",
    # the parts of an update: estimators, regret and averaging rules
    "Estimator", "ESTIMATORS", "Exact", "ChanceSampling", "ExternalSampling", "OutcomeSampling",
    "RegretRule", "RegretMatching", "RegretMatchingPlus", "DiscountedRegret", "AveragingRule",
    "PolynomialAverage",
    # analytics and profiles
    "Evaluation", "best_response", "evaluate", "expected_values", "Profile", "evaluate_profile",
    "StrategyError",
    # estimated analytics (games too large to lower)
    "Estimate", "ProfileEstimates", "estimate_values", "estimate_profile", "estimate_record",
    "empirical_game", "Empirical",
    # chance that cannot be enumerated: the host samples it
    "SampledChanceRunner", "Chance",
    # action abstraction
    "Abstraction", "Abstracted", "Identity", "lift", "train_abstracted", "AbstractedResult",
    "format_table", "load_abstraction", "REFERENCE_ABSTRACTIONS", "pseudo_harmonic",
    # information abstraction
    "Bucketing", "Bucketed", "BucketBy", "bucket_by",
    # subgame solving
    "subgame", "resolve", "resolve_subgames", "ResolveResult", "SubgameGame",
]


def _load() -> None:
    """Import every public name into this module (what ``import jaxcfr`` used to do)."""
    import jaxcfr.runs as runs  # noqa: F401 - the runs package is a public name
    from jaxcfr._util.arguments import ArgumentError
    from jaxcfr.game.abstraction import Abstracted, Abstraction, Identity, pseudo_harmonic
    from jaxcfr.game.bucketing import BucketBy, Bucketed, Bucketing, bucket_by
    from jaxcfr.game.contract import CHANCE, TERMINAL, GameError
    from jaxcfr.game.protocol import Game
    from jaxcfr.game.registry import (REFERENCE_ABSTRACTIONS, REFERENCE_GAMES, load_abstraction,
                                      load_game, register, registered_games)
    from jaxcfr.game.validate import validate, validate_game_with
    from jaxcfr.tensors import GameTensors, LoweredGame
    from jaxcfr.lowering.budget import MemoryEstimate, memory_estimate
    from jaxcfr.lowering.lower import MemoryBudgetError, estimate_bytes, lower, sort_infosets
    from jaxcfr.lowering.size import SizeEstimate, estimate_size
    from jaxcfr.lowering.stack import stack
    from jaxcfr.solvers.analytics import Evaluation, best_response, evaluate, expected_values
    from jaxcfr.solvers.tables import StrategyError
    from jaxcfr.solvers.estimators import (ESTIMATORS, ChanceSampling, Estimator, Exact,
                                           ExternalSampling, OutcomeSampling)
    from jaxcfr.solvers.presets import (ALGORITHMS, cfr, cfr_plus, dcfr, dcfr_plus, linear_cfr,
                                        make_solver, pcfr_plus, pdcfr_plus)
    from jaxcfr.solvers.rules import (AveragingRule, DiscountedRegret, PolynomialAverage,
                                      RegretMatching, RegretMatchingPlus, RegretRule)
    from jaxcfr.solvers.solver import HyperParams, Solver, SolverState
    from jaxcfr.profiles.estimates import (Empirical, Estimate, ProfileEstimates, empirical_game,
                                           estimate_profile, estimate_record, estimate_values)
    from jaxcfr.profiles.profile import Profile, evaluate_profile
    from jaxcfr.engine.loop import RECORD_KEYS
    from jaxcfr.engine.protocol import RunnerProtocol
    from jaxcfr.engine.runner import Runner, batch_mesh
    from jaxcfr.engine.distributed import Cluster, DistributedError
    from jaxcfr.engine.sampled_chance import Chance, SampledChanceRunner
    from jaxcfr.profiles.lifting import lift
    from jaxcfr.api.blueprint import AbstractedResult, format_table, train_abstracted
    from jaxcfr.api.solve import SolveOptions, SolveResult, solve
    from jaxcfr.subgames import ResolveResult, SubgameGame, resolve, resolve_subgames, subgame
    from jaxcfr.runs import load_config, train
    names = dict(locals())
    globals().update((k, v) for k, v in names.items() if k in __all__)


_loaded = False


def __getattr__(name: str):
    """The first public name asked for loads them all (and the rooms they import)."""
    global _loaded
    if not name.startswith("__") and not _loaded:
        _loaded = True                         # (the imports below ask for names too)
        try:
            _load()
        except BaseException:
            _loaded = False
            raise
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
