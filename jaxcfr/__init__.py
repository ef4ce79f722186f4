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

``import jaxcfr`` itself imports nothing: ``jaxcfr.efg`` (the ``.efg`` reader) loads
alone on first use, and the first use of any other public name imports the whole library,
JAX included, as one step (PEP 562 ``__getattr__``). So the ``jaxcfr`` command installs its
Ctrl-C handler and answers ``--version`` before JAX is imported.
"""

# Nothing is imported here: the ``jaxcfr`` command's first statement (jaxcfr.cli.launch)
# installs its Ctrl-C handler, and everything imported before it runs without one.
# ``jaxcfr.efg`` (the .efg package, which lives in the game layer) loads on first use.

__version__ = "0.1.0"

__all__ = [
    # the game protocol and formats
    "efg", "CHANCE", "TERMINAL", "Game", "GameError", "ArgumentError", "load_game", "register",
    "registered_games", "validate",
    # lowering
    "LoweredGame", "MemoryBudgetError", "lower", "stack", "probe_size", "memory_footprint",
    # solvers and runs
    "ALGORITHMS", "Solver", "SolverState", "cfr", "cfr_plus", "dcfr", "dcfr_plus",
    "linear_cfr", "make_solver", "pcfr_plus", "pdcfr_plus", "hs_pcfr_plus", "postflop_dcfr",
    "Runner",
    "batch_mesh", "Cluster", "solve", "SolveResult", "DeviceOptions", "LoadOptions", "Report",
    "runs", "load_config", "train", "plot_strategy", "strategy_matrix",
    # the parts of an update: estimators, regret and averaging rules, their parameters
    "Estimator", "ESTIMATORS", "Exact", "ChanceSampling", "ExternalSampling", "OutcomeSampling",
    "RegretRule", "RegretMatching", "RegretMatchingPlus", "DiscountedRegret",
    "PostflopDiscountedRegret", "AveragingRule", "PolynomialAverage", "ScheduledAverage",
    "RestartedAverage", "parameter",
    # analytics and profiles
    "best_response", "evaluate", "expected_values", "Profile", "evaluate_profile",
    # estimated analytics (games too large to lower)
    "estimate_values", "estimate_profile", "estimate_record", "empirical_game",
    # chance that cannot be enumerated: the host samples it
    "SampledChanceRunner", "Chance",
    # action abstraction
    "Abstraction", "Abstracted", "Identity", "lift", "train_abstracted", "AbstractedResult",
    "format_table", "load_abstraction", "pseudo_harmonic",
    # information abstraction
    "Bucketing", "Bucketed", "bucket_by",
    # subgame solving
    "subgame", "resolve",
]
# public trees (a game dealt as private hands, then played in public)
__all__ += ["PublicGame", "lower_public", "solve_public", "evaluate_public", "expand_public",
            "best_response_public", "stack_public", "evaluate_public_stack"]
# node locking (docs/holdem.md "Node locking")
__all__ += ["Lock", "LockError"]


def _load() -> None:
    """Import every public name into this module (what ``import jaxcfr`` used to do)."""
    import jaxcfr.runs as runs  # noqa: F401 - the runs package is a public name
    from jaxcfr._util.arguments import ArgumentError
    from jaxcfr.game.abstraction import Abstracted, Abstraction, Identity, pseudo_harmonic
    from jaxcfr.game.bucketing import Bucketed, Bucketing, bucket_by
    from jaxcfr.game.contract import CHANCE, TERMINAL, GameError
    from jaxcfr.game.protocol import Game
    from jaxcfr.game.registry import load_abstraction, load_game, register, registered_games
    from jaxcfr.game.validate import validate
    from jaxcfr.tensors import LoweredGame
    from jaxcfr.lowering.budget import memory_footprint
    from jaxcfr.lowering.lower import MemoryBudgetError, lower
    from jaxcfr.lowering.size import probe_size
    from jaxcfr.lowering.stack import stack
    from jaxcfr.solvers.analytics import best_response, evaluate, expected_values
    from jaxcfr.solvers.estimators import (ESTIMATORS, ChanceSampling, Estimator, Exact,
                                           ExternalSampling, OutcomeSampling)
    from jaxcfr.solvers.parameters import parameter
    from jaxcfr.solvers.presets import (ALGORITHMS, cfr, cfr_plus, dcfr, dcfr_plus, hs_pcfr_plus,
                                        linear_cfr, make_solver, pcfr_plus, pdcfr_plus,
                                        postflop_dcfr)
    from jaxcfr.solvers.rules import (AveragingRule, DiscountedRegret, PolynomialAverage,
                                      PostflopDiscountedRegret, RegretMatching,
                                      RegretMatchingPlus, RegretRule, RestartedAverage,
                                      ScheduledAverage)
    from jaxcfr.solvers.solver import Solver, SolverState
    from jaxcfr.profiles.value_estimates import (empirical_game, estimate_profile, estimate_record,
                                           estimate_values)
    from jaxcfr.profiles.profile import Profile, evaluate_profile
    from jaxcfr.engine.runner import Runner, batch_mesh
    from jaxcfr.engine.distributed import Cluster
    from jaxcfr.engine.chance import Chance
    from jaxcfr.engine.sampled_chance import SampledChanceRunner
    from jaxcfr.profiles.lifting import lift
    from jaxcfr.api.blueprint import AbstractedResult, format_table, train_abstracted
    from jaxcfr.api.solve import DeviceOptions, LoadOptions, Report, SolveResult, solve
    from jaxcfr.subgames import resolve, subgame
    from jaxcfr.runs import load_config, train
    from jaxcfr.runs.strategy_plot import plot_strategy, strategy_matrix
    from jaxcfr.api.public_names import (PublicGame, best_response_public, evaluate_public,
                                         evaluate_public_stack, expand_public, lower_public,
                                         solve_public, stack_public)
    from jaxcfr.solvers.locking import Lock, LockError
    names = dict(locals())
    globals().update((k, v) for k, v in names.items() if k in __all__)


_loaded = False
#: Former spellings of public names, kept for callers: the same objects (issue 29 item 7
#: gave the size and memory estimates names of their own; README, "Former names").
FORMER_NAMES = {"estimate_size": "probe_size", "memory_estimate": "memory_footprint"}


def __getattr__(name: str):
    """The first public name asked for loads them all (and the rooms they import)."""
    global _loaded
    if name in FORMER_NAMES:                    # the same object under its former name
        new = FORMER_NAMES[name]
        return globals()[new] if new in globals() else __getattr__(new)
    if name == "efg":                           # light: the reader alone, not the library
        from jaxcfr.game import efg
        return efg
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
