"""Texas hold'em postflop spots: cards, hand strength, ranges, the bet tree, showdowns.

Pure NumPy and Python (the hand strengths come from phevaluator, the ``holdem`` extra);
imports only the game protocol. Modules, one concept each:

- :mod:`.cards`: cards, boards, the 1,326 hole-card pairs and their card masks.
- :mod:`.strength`: hand strength of 7 cards (phevaluator) as arrays over the hands.
- :mod:`.ranges`: ranges in the standard notation with weights (``66+,A8s+,AsKs:0.5``).
- :mod:`.bets`: bet sizes and the bet tree in postflop-solver's conventions.
- :mod:`.showdown`: fold and showdown values as operators over hand vectors, with card
  removal (sorted strength and prefix sums, inclusion-exclusion).
- :mod:`.spot`: ``holdem_spot``, the spot as a public-tree game.
- :mod:`.isomorphism`: suit symmetries of a spot and the classes of cards to deal.
- :mod:`.grid`: the 13x13 hand grid of a solved node's strategy (text, CSV, JSON).
- :mod:`.grid_plot`: its picture, one colour band per action in each cell (matplotlib).

See docs/holdem.md.
"""

from .bets import BetSize, BetTree, TreeConfig, build_tree, parse_sizes, tree_config
from .cards import HoldemError, card, parse_board
from .ranges import parse_range, range_hands
from .showdown import HandOperators

__all__ = ["BetSize", "BetTree", "TreeConfig", "build_tree", "parse_sizes", "tree_config",
           "HoldemError", "card", "parse_board", "parse_range", "range_hands",
           "HandOperators"]
