"""Reference games implemented against the jaxcfr Game protocol.

Importing this package registers every game under its name (see
``jaxcfr.registered_games()``).
"""

from games.goofspiel import Goofspiel
from games.kuhn import KuhnPoker
from games.leduc import LeducPoker
from games.liars_dice import LiarsDice
from games.rps import MatchingPennies, MatrixGame, RockPaperScissors
from games.sampled_poker import SampledDicePoker

__all__ = [
    "Goofspiel", "KuhnPoker", "LeducPoker", "LiarsDice", "MatchingPennies", "MatrixGame",
    "RockPaperScissors", "SampledDicePoker",
]
