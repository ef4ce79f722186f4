"""The names re-solving takes, without JAX (what ``jaxcfr resolve`` and a ``[resolve]``
section check before anything heavy is imported)."""

__all__ = ["GADGETS", "SAFE_GADGETS", "BATCHING"]

#: The gadget names, in the order the docs list them.
GADGETS = ("resolve", "maxmargin", "reach", "unsafe")
#: Those that bound the opponent's gain (two-player zero-sum games only).
SAFE_GADGETS = ("resolve", "maxmargin", "reach")
#: How :func:`jaxcfr.subgames.resolve_subgames` groups subgame games into compiled runs.
BATCHING = ("auto", "one", "each")
