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
blueprint (``compose``). ``public`` does the same at a public node of a public tree
(a :class:`~jaxcfr.game.public.PublicGame`): the subgame is a ``PublicGame`` whose hands
are dealt with the blueprint's ranges, with the ``resolve`` gadget's per-hand
alternatives; ``subgame`` and ``resolve`` route public trees there.

Layer 8: may import the layers below (``_util`` up to ``api``); ``runs`` and ``cli`` may
import it.

Example::

    >>> import jaxcfr
    >>> blueprint = jaxcfr.solve("leduc_poker", "cfr+", 50).profile
    >>> sub = jaxcfr.subgame("leduc_poker", blueprint, [0, 1, "call", "call", 2])
    >>> jaxcfr.validate(sub)
    >>> composed = jaxcfr.resolve("leduc_poker", blueprint, [0, 1, "call", "call", 2])
"""

from jaxcfr._util.lazy import lazy_exports

#: Each public name -> its module, imported when the name is first asked for (so that
#: ``jaxcfr.subgames.names``, the command line's JAX-free names, imports nothing heavy).
_WHERE = {"PublicState": "closure", "public_state": "closure",
          "Context": "context", "SubgameGame": "game", "GADGETS": "names",
          "off_abstraction": "selection", "paths_after_chance": "selection",
          "paths_at_depth": "selection", "select": "selection", "ResolveResult": "solving",
          "resolve": "solving", "resolve_subgames": "solving", "subgame": "solving",
          "PublicSubgame": "public", "PublicContext": "public",
          "public_paths_after_chance": "public", "public_paths_at_depth": "public"}

__all__ = ["subgame", "resolve", "resolve_subgames", "ResolveResult", "Context", "SubgameGame",
           "GADGETS", "PublicState", "public_state", "paths_at_depth",
           "paths_after_chance", "off_abstraction", "select", "PublicSubgame", "PublicContext",
           "public_paths_after_chance", "public_paths_at_depth"]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__, globals())
