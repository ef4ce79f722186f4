"""Gambit ``.efg`` extensive-form game files: read them as a :class:`jaxcfr.Game`, write any
enumerable game as one.

The format (Gambit's "EFG 2 R" / "EFG 2 D" savefile)::

    EFG 2 R "title" { "Player 1" "Player 2" }
    "optional comment"

    c "node" 1 "deal" { "H" 1/2 "T" 1/2 } 0
    p "node" 1 1 "infoset" { "A" "B" } 0
    t "node" 1 "outcome" { 1, -1 }
    t "" 1
    ...

Nodes come in pre-order. ``c``: chance node (chance infoset number, then its name
and ``{ "action" probability ... }`` at first use). ``p``: player node (1-based
player number, infoset number, then the infoset name and ``{ "action" ... }`` at
first use; later nodes of the same infoset may repeat an identical list or omit
it). ``t``: terminal node. Every node ends with an outcome number (0 = none),
followed by ``"outcome name" { payoff ... }`` at the outcome's first use.
Outcomes on non-terminal nodes add up along the path to every leaf below.
Numbers are integers, decimals (``.80``, ``1e3``) or rationals (``1/3``), all
read exactly as :class:`fractions.Fraction`.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("tests/fixtures/efg/authored_kuhn_poker.efg")
    >>> game.num_players, game.title[:10]
    (2, 'Kuhn poker')
    >>> text = jaxcfr.game.efg.dumps(game)        # and back: jaxcfr.game.efg.loads(text)

Strings are read as Gambit reads them: ``\\"`` stands for a quote, any other
backslash is kept as it is (so a label cannot end with a backslash). Empty or
repeated action labels within one information set (and empty or repeated player
names) are made unique the way Gambit does it: ``label_1``, ``label_2``, ...
(skipping names already in use).
"""


from jaxcfr.game.efg.game import EfgGame, load, loads
from jaxcfr.game.efg.parser import _parse_fast, _parse_tokens  # noqa: F401 - tests compare both parsers
from jaxcfr.game.efg.tree import EfgError, EfgInfoset, EfgNode, EfgOutcome, EfgTree
from jaxcfr.game.efg.writer import dump, dumps

__all__ = ["EfgError", "EfgGame", "EfgInfoset", "EfgNode", "EfgOutcome", "EfgTree", "dump",
           "dumps", "load", "loads"]
