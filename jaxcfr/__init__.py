"""jaxcfr: batched counterfactual regret minimisation on JAX.

Public API (everything a user needs is importable from here)::

    import jaxcfr
    game = jaxcfr.load_game("leduc_poker")
    jaxcfr.validate(game)
"""

from jaxcfr.game import CHANCE, TERMINAL, Game, GameError
from jaxcfr.registry import load_game, register, registered_games
from jaxcfr.validate import validate, validate_game_with

__version__ = "0.1.0"

__all__ = [
    "CHANCE", "TERMINAL", "Game", "GameError",
    "load_game", "register", "registered_games",
    "validate", "validate_game_with",
]
