"""Ranges in the standard notation, with weights: ``"66+,A8s+,A5s-A4s,AJo+,AsKs:0.5"``.

The grammar is postflop-solver's (``src/range.rs``), which follows PioSOLVER's. Groups are
separated by commas, each an optional ``:weight`` (0 to 1, default 1) after one of

================  ===============================================================
``AA`` ``AKs``    a pair, a suited or offsuit non-pair (``AK``: both)
``AKo`` ``AK``
``AsKs``          one combination (rank first: ``AsKh``; ``KhAs`` is refused)
``TT+``           the pair and every higher pair
``T9s+``          a connector (gap 1) and every higher one: T9s, JTs, ..., AKs
``ATo+``          a fixed high card, the second rank up to just below it: ATo..AKo
``QQ-88``         pairs, or hands with the same gap (``KQo-JTo``), from high to low
``A9s-A6s``       a fixed high card, the second rank from high to low
================  ===============================================================

Ranks are ``AKQJT98765432`` (either case), suits ``cdhs``, ``s``/``o`` lowercase.
Whitespace around ``,``, ``-`` and ``:`` is ignored. Where groups overlap, the first one
sets the weight (postflop-solver reads the groups last to first). A malformed group
raises :class:`~.cards.HoldemError` naming it and its ``position`` in the string.
"""

from __future__ import annotations

import re

import numpy as np

from .cards import NUM_HANDS, HoldemError, hand_index

__all__ = ["parse_range", "range_hands"]

_RANKS = {c: i for i, c in enumerate("23456789TJQKA")}
_RANKS.update({c.lower(): i for c, i in _RANKS.items()})
_SUITS = {c: i for i, c in enumerate("cdhs")}
_COMBO = r"(?:[AaKkQqJjTt2-9]{2}[os]?|(?:[AaKkQqJjTt2-9][cdhs]){2})"
_GROUP = re.compile(rf"(?P<range>{_COMBO}(?:\+|-{_COMBO})?)"
                    r"(?::(?P<weight>[01](?:\.[0-9]*)?|\.[0-9]+))?")
_SPACES = re.compile(r"\s*([-:])\s*")


def _indices(r1: int, r2: int, suited: str) -> list[int]:
    """The combination indices of ranks ``r1 >= r2`` with suitedness ``"s"``, ``"o"``,
    ``""`` (all) or a pair of suits."""
    if isinstance(suited, tuple):
        return [hand_index(4 * r1 + suited[0], 4 * r2 + suited[1])]
    if r1 == r2:
        return [hand_index(4 * r1 + i, 4 * r1 + j) for i in range(4) for j in range(i + 1, 4)]
    pairs = [(i, j) for i in range(4) for j in range(4)
             if suited == "" or (suited == "s") == (i == j)]
    return [hand_index(4 * r1 + i, 4 * r2 + j) for i, j in pairs]


def _singleton(combo: str):
    """``(rank1, rank2, suitedness)`` of ``AKs``, ``AA``, ``AsKh``; a ValueError says why."""
    if len(combo) == 4:
        r1, s1, r2, s2 = _RANKS[combo[0]], _SUITS[combo[1]], _RANKS[combo[2]], _SUITS[combo[3]]
        if r1 < r2:
            raise ValueError("the first rank must be at least the second")
        if r1 == r2 and s1 == s2:
            raise ValueError("a combination has two different cards")
        return r1, r2, (s1, s2)
    r1, r2 = _RANKS[combo[0]], _RANKS[combo[1]]
    suited = combo[2:]
    if r1 < r2:
        raise ValueError("the first rank must be at least the second")
    if r1 == r2 and suited:
        raise ValueError("a pair is neither suited nor offsuit")
    return r1, r2, suited


def _combos(text: str) -> list[int]:
    """The combination indices of one group's range part (no weight)."""
    if "-" in text:
        first, last = text.split("-")
        r11, r12, s1 = _singleton(first)
        r21, r22, s2 = _singleton(last)
        if s1 != s2:
            raise ValueError("both ends must have the same suitedness")
        if r11 - r12 == r21 - r22:              # same gap: 88-55, KQo-JTo
            if r11 <= r21:
                raise ValueError("a dash range goes from high to low")
            gap = r11 - r12
            return [i for r in range(r21, r11 + 1) for i in _indices(r, r - gap, s1)]
        if r11 == r21:                          # same first rank: A5s-A2s
            if r12 <= r22:
                raise ValueError("a dash range goes from high to low")
            return [i for r in range(r22, r12 + 1) for i in _indices(r11, r, s1)]
        raise ValueError("a dash range keeps the gap (QQ-88, KQo-JTo) or the first rank "
                         "(A9s-A6s)")
    if text.endswith("+"):
        r1, r2, suited = _singleton(text[:-1])
        gap = r1 - r2
        if gap <= 1:                            # pairs and connectors: 88+, T9s+
            return [i for r in range(r1, 13) for i in _indices(r, r - gap, suited)]
        return [i for r in range(r2, r1) for i in _indices(r1, r, suited)]   # ATo+
    r1, r2, suited = _singleton(text)
    return _indices(r1, r2, suited)


def parse_range(text: str) -> np.ndarray:
    """``[1326]`` float64 weights in [0, 1] of a range string (module docstring); a
    hand not named weighs 0. ``""`` is the empty range."""
    if not isinstance(text, str):
        raise HoldemError(f"a range is a string such as '66+,A8s+,AJo+', got {text!r}")
    weights = np.zeros(NUM_HANDS)
    done = np.zeros(NUM_HANDS, bool)
    pieces, start = [], 0
    for raw in text.split(","):
        lead = len(raw) - len(raw.lstrip())
        pieces.append((raw.strip(), start + lead))
        start += len(raw) + 1
    if pieces and pieces[-1][0] == "":
        pieces.pop()
    for group, position in pieces:
        compact = _SPACES.sub(r"\1", group)
        m = _GROUP.fullmatch(compact)
        try:
            if m is None:
                raise ValueError("expected a hand (AA, AKs, AKo, AK, AsKs), a range (TT+, "
                                 "QQ-88, A9s-A6s) and an optional ':weight' from 0 to 1")
            combos = _combos(m.group("range"))
        except ValueError as e:
            raise HoldemError(f"range {text!r}, at position {position}: {group!r}: {e}",
                              position) from None
        w = float(m.group("weight")) if m.group("weight") else 1.0
        if not 0.0 <= w <= 1.0:
            raise HoldemError(f"range {text!r}, at position {position}: {group!r}: a "
                              f"weight is from 0 to 1", position)
        combos = np.asarray(combos)
        fresh = combos[~done[combos]]             # the first group to name a hand sets it
        weights[fresh] = w
        done[fresh] = True
    return weights


def range_hands(weights: np.ndarray, dead=()) -> np.ndarray:
    """The hand indices with positive weight that share no card with ``dead`` (a board)."""
    from .cards import blocked
    weights = np.asarray(weights)
    return np.flatnonzero((weights > 0) & ~blocked(dead))
