"""Games on the host: the ``Game`` protocol and its contract, the random-trajectory probe,
game strings (``strings``: the one parser) and the registry, action abstraction and action
translation (``abstraction``), information abstraction (``bucketing``), drawn chance
(``determinize``; the three wrap a state and forward the rest of the protocol:
``wrapper``), OpenSpiel games and Gambit ``.efg`` files.

Layer 1: may import ``jaxcfr._util``. Nothing here knows about tensors or JAX.

This package's face is what a game author needs (``from jaxcfr.game import Game``)::

    from jaxcfr.game import CHANCE, TERMINAL, Game, GameError
    from jaxcfr.game import pseudo_harmonic      # for an abstraction's translate()
"""

from jaxcfr.game.abstraction import pseudo_harmonic
from jaxcfr.game.contract import CHANCE, TERMINAL, GameError
from jaxcfr.game.protocol import LARGEST_TREE, Game, too_large
from jaxcfr.game.public import Fold, PayoffTable, PublicCounts, PublicGame, Showdown

__all__ = ["CHANCE", "TERMINAL", "Game", "GameError", "LARGEST_TREE", "too_large",
           "pseudo_harmonic"]
__all__ += ["PublicGame", "PublicCounts", "Fold", "Showdown", "PayoffTable"]
