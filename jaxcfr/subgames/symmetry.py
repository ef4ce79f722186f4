"""When a public subgame keeps the suit symmetry of its merged chance outcomes.

A public game may merge chance outcomes whose subtrees are another outcome's with the
hands renamed (``PublicGame.chance_merges``: a hold'em spot's suit isomorphism; docs
"Suit isomorphism"). The merge is exact for a profile that is itself symmetric, which
CFR keeps when the game it solves is: its regrets start and are updated alike for ``h``
and ``g(h)``. A re-solved public subgame (:class:`~jaxcfr.subgames.public.PublicSubgame`)
is the game below its node ``s`` plus what the blueprint puts at its roots: each player's
deal weights (the prior, the hands blocked at ``s``, the blueprint's ranges there) and,
for a safe gadget, the opponent's masses ``m(h)`` and alternatives ``CBV(h) / m(h)``.
Every renaming ``g`` a merge below ``s`` uses fixes the cards dealt up to it (``s``'s
among them) and the game's ranges, so it maps the game below ``s`` to itself; the subgame
keeps the symmetry exactly when its root data are invariant too: ``x[g^-1(h)] == x[h]``
for every renaming and every per-hand array ``x`` of the gadget. The subgame is then
solved on its merged tree, and its profile read back at every unmerged history through
the merged outcomes (``PublicLowered.expanded``), as a merged spot's profile is read.

The blueprint's data are symmetric only to rounding even where the blueprint is: its
counterfactual values at ``s`` sum the chance outcomes below in another order for ``h``
than for ``g(h)`` (float64: about 1e-16 relative), and a merged blueprint's rows above
its chance nodes differ by their own rounding (float32: about 1e-7 to 1e-6 relative).
:func:`symmetrise` therefore takes data within a relative ``tolerance`` of their
symmetric version (each hand's value replaced by its orbit's first hand's) as that
version, and the re-solve solves the symmetrised subgame exactly; data farther away
break the symmetry and the subgame is solved on every outcome (today's path, its results
bit for bit), with the reason. :data:`TOLERANCE`: per precision of the re-solve, well
below what its own arithmetic resolves.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxcfr.game.public import PublicGame

__all__ = ["TOLERANCE", "subgame_renamings", "orbit_firsts", "symmetrise"]

#: The relative tolerance of :func:`symmetrise` per precision of the re-solve: float64
#: 1e-12 (a float64 blueprint's rounding: ~1e-15), float32 1e-5 (a float32 blueprint's
#: rows: ~1e-6 relative after hundreds of iterations; a float32 solve resolves no more).
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def subgame_renamings(state: PublicGame) -> list[tuple[np.ndarray, ...]]:
    """The distinct hand renamings ``[P]`` of ``[H_p]`` ints (``sources[p][h] =
    g^-1(h)``) of the merged chance outcomes the lowering of the game below ``state``
    would keep: every chance node it walks (a merged outcome's subtree is not walked, as
    :func:`~jaxcfr.lowering.public.lower_public` does not walk it). Empty where nothing
    merges. The walk is the merged public tree's, without hands or tensors."""
    out: dict[bytes, tuple[np.ndarray, ...]] = {}
    if type(state).chance_merges is PublicGame.chance_merges:
        return []                                      # a game that never merges
    todo = [state.clone()]
    while todo:
        s = todo.pop()
        if s.is_terminal():
            continue
        if s.is_chance():
            merges = s.chance_merges() or {}
            for entry in merges.values():
                sources = tuple(np.asarray(x, np.int64) for x in entry[1])
                out.setdefault(b"|".join(x.tobytes() for x in sources), sources)
            steps = [x for x, _ in s.chance_outcomes() if x not in merges]
        else:
            steps = list(s.legal_actions())
        for x in steps:
            c = s.clone()
            c.step(x)
            todo.append(c)
    return list(out.values())


def orbit_firsts(renamings, player: int, size: int) -> np.ndarray:
    """``[H]`` the first (smallest) hand of each hand's orbit under the group the
    renamings of ``player``'s hands generate (union-find over their cycles)."""
    first = np.arange(size)

    def find(h):
        while first[h] != h:
            first[h] = first[first[h]]
            h = first[h]
        return h
    for sources in renamings:
        for h, g in enumerate(np.asarray(sources[player])[:size]):
            a, b = find(h), find(int(g))
            if a != b:
                first[max(a, b)] = min(a, b)
    return np.asarray([find(h) for h in range(size)], np.int64)


def symmetrise(gadget, renamings, tolerance: float):
    """``(gadget, None)`` with its per-hand data replaced by their symmetric version
    (each hand's value its orbit's first hand's: exact where they already are
    symmetric) when every array is within ``tolerance`` of it relative to its largest
    magnitude; else ``(None, why)``. ``gadget`` is a
    :class:`~jaxcfr.subgames.public.PublicGadget`; its ``weights`` ``[P][H_p]``, and
    for a safe gadget ``mass`` and ``alternative`` ``[H_o]``, are compared."""
    sizes = [len(w) for w in gadget.weights]
    firsts = [orbit_firsts(renamings, q, n) for q, n in enumerate(sizes)]
    named = [(f"player {q}'s deal weights (its range at the node)", q, w)
             for q, w in enumerate(gadget.weights)]
    if gadget.opponent is not None:
        o = gadget.opponent
        named += [(f"player {o}'s masses m(h)", o, gadget.mass),
                  (f"player {o}'s alternative values CBV(h) / m(h)", o, gadget.alternative)]
    out = []
    for what, q, x in named:
        x = np.asarray(x, np.float64)
        sym = x[firsts[q]]
        scale = float(np.abs(x).max(initial=0.0))
        off = float(np.abs(sym - x).max(initial=0.0))
        if off > tolerance * scale:
            return None, (f"{what} differ between suit-isomorphic hands by {off:.3g} "
                          f"({off / scale:.3g} of the largest, above the tolerance "
                          f"{tolerance:g})")
        out.append(sym)
    weights = tuple(out[:len(sizes)])
    if gadget.opponent is None:
        return dataclasses.replace(gadget, weights=weights), None
    mass, alternative = out[len(sizes):]
    return dataclasses.replace(gadget, weights=weights, mass=mass, alternative=alternative,
                               total=float(mass.sum())), None
