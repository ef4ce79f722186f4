"""The reference games, implemented against the jaxcfr Game protocol.

Installed as the package ``jaxcfr_games`` (this folder is ``games/`` in the
repository). Each module imports only the protocol (:mod:`jaxcfr.game`); the names
that load them (``kuhn_poker``, ``leduc_poker``, ...) are listed once, in
:data:`jaxcfr.game.registry.REFERENCE_GAMES`, and imported on first use.
"""

from .dice_poker import DicePoker
from .goofspiel import Goofspiel
from .kuhn import KuhnPoker
from .leduc import LeducPoker, RankBuckets, SuitIsomorphism
from .liars_dice import LiarsDice
from .nolimit_leduc import BetMenu, NoLimitLeduc
from .rps import MatchingPennies, MatrixGame, RockPaperScissors
from .sampled_poker import SampledDicePoker

__all__ = [
    "DicePoker", "Goofspiel", "KuhnPoker", "LeducPoker", "LiarsDice", "MatchingPennies",
    "MatrixGame", "NoLimitLeduc", "BetMenu", "RockPaperScissors", "SampledDicePoker",
    "SuitIsomorphism", "RankBuckets",
]
