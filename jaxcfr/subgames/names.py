"""The names re-solving takes, without JAX (what ``jaxcfr resolve`` and a ``[resolve]``
section check before anything heavy is imported)."""

__all__ = ["GADGETS", "SAFE_GADGETS", "BATCHING", "batch_groups"]

#: The gadget names, in the order the docs list them.
GADGETS = ("resolve", "maxmargin", "reach", "unsafe")
#: Those that bound the opponent's gain (two-player zero-sum games only).
SAFE_GADGETS = ("resolve", "maxmargin", "reach")
#: How :func:`jaxcfr.subgames.resolve_subgames` groups subgame games into compiled runs.
BATCHING = ("auto", "one", "each")


def batch_groups(sizes, batching: str) -> list[list[int]]:
    """The games of ``sizes`` nodes (``[N]``) grouped into compiled runs by ``batching``:
    lists of their indices, the largest game first; ``each`` one game a run, ``one`` every
    game in one run, ``auto`` a new run at the first game of less than half the nodes of
    its run's first (largest) game."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    groups: list[list[int]] = []
    for i in order:
        if batching == "each" or not groups:
            groups.append([i])
        elif batching == "one" or 2 * sizes[i] >= sizes[groups[-1][0]]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups
