"""Subgame solving: re-solve the parts of a game a blueprint reaches, safely, many at once.

A subgame is rooted at the public state of a history (``closure``: every history some
player cannot tell apart from it, transitively, computed from the lowered game's
information sets or from the game's optional ``public_key()``). Against a blueprint,
``gadgets`` gives the opponent its counterfactual best-response values (Resolve,
Maxmargin, Reach-Maxmargin) or weights the roots by the blueprint's reach (unsafe);
``frontier`` cuts a subgame at a depth and values the cut by the blueprint's
continuation values (one, or several for the opponent to pick from); ``game`` makes the
whole a :class:`jaxcfr.Game` like any other; ``context`` holds a game and a blueprint
with its values; ``selection`` names many subgames at once (a round, the subgames after
an abstraction's dropped actions); ``solving`` builds the subgames of many paths, stacks
them, solves them in one compiled run and composes the re-solved strategies back over the
blueprint (``compose``).

Layer 8: may import the layers below (``_util`` up to ``api``); ``runs`` and ``cli`` may
import it.

Example::

    >>> import jaxcfr
    >>> blueprint = jaxcfr.solve("leduc_poker", "cfr+", 50).profile
    >>> sub = jaxcfr.subgame("leduc_poker", blueprint, [0, 1, "call", "call", 2])
    >>> jaxcfr.validate(sub)
    >>> composed = jaxcfr.resolve("leduc_poker", blueprint, [0, 1, "call", "call", 2])
"""

from jaxcfr.subgames.closure import PublicState, TreeIndex, public_state
from jaxcfr.subgames.context import Context
from jaxcfr.subgames.game import SubgameGame
from jaxcfr.subgames.gadgets import GADGETS
from jaxcfr.subgames.selection import off_abstraction, paths_after_chance, paths_at_depth, select
from jaxcfr.subgames.solving import ResolveResult, resolve, resolve_subgames, subgame

__all__ = ["subgame", "resolve", "resolve_subgames", "ResolveResult", "Context", "SubgameGame",
           "GADGETS", "PublicState", "TreeIndex", "public_state", "paths_at_depth",
           "paths_after_chance", "off_abstraction", "select"]
