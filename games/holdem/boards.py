"""Stacks of boards: one spot on many boards, to solve in one compiled step.

``jaxcfr.solve_public`` takes a list of public-tree games and solves them as a stack
(``jaxcfr.lowering.public_stack``); these helpers make the lists a poker user asks
for: every river card of a turn board as its own river spot, every turn card of a flop,
or a sample of random boards, with one set of spot parameters.

Example::

    >>> import jaxcfr
    >>> spots = board_spots(river_boards("Td9d6h5c"), pot=100, stack=200)   # 48 river spots
    >>> result = jaxcfr.solve_public(spots, "postflop-dcfr", 100)
    >>> result.final["exploitability_pot_percent"]                           # [48]
"""

from __future__ import annotations

from math import comb

import numpy as np

from .cards import NUM_CARDS, HoldemError, board_str, parse_board
from .spot import HoldemSpot

__all__ = ["next_boards", "river_boards", "turn_boards", "random_boards", "board_spots",
           "parse_boards", "BOARDS_HELP"]

BOARDS_HELP = ("river:TURN (every river card of a turn board, river:Td9d6h5c), turn:FLOP "
               "(every turn card of a flop), random:COUNT[:CARDS[:SEED]] (distinct random "
               "boards, 5 cards and seed 0 unless given) or boards separated by commas "
               "(Td9d6h5c2s,Td9d6h5c3s)")


def next_boards(board) -> list[str]:
    """The boards one card later: ``board`` plus each card it does not hold, in card
    order (``"Td9d6h5c"`` -> 48 river boards ``"Td9d6h5c2c"``, ...)."""
    cards = parse_board(board)
    if len(cards) == 5:
        raise HoldemError(f"board {board_str(cards)} is a river board: no card comes next")
    return [board_str(cards + (c,)) for c in range(NUM_CARDS) if c not in cards]


def river_boards(turn_board) -> list[str]:
    """Every river board of a turn board (48)."""
    if len(parse_board(turn_board)) != 4:
        raise HoldemError(f"river_boards() takes a turn board of 4 cards, got {turn_board!r}")
    return next_boards(turn_board)


def turn_boards(flop) -> list[str]:
    """Every turn board of a flop (49)."""
    if len(parse_board(flop)) != 3:
        raise HoldemError(f"turn_boards() takes a flop of 3 cards, got {flop!r}")
    return next_boards(flop)


def random_boards(count: int, cards: int = 5, seed: int = 0) -> list[str]:
    """``count`` distinct boards of ``cards`` cards (3, 4 or 5) drawn uniformly with
    ``numpy.random.default_rng(seed)``, each written with its cards in the order drawn."""
    if cards not in (3, 4, 5):
        raise HoldemError(f"a board has 3, 4 or 5 cards, got {cards!r}")
    if not isinstance(count, (int, np.integer)) or count < 1:
        raise HoldemError(f"count must be a positive int, got {count!r}")
    rng = np.random.default_rng(seed)
    seen: set = set()
    out = []
    while len(out) < count:
        drawn = tuple(int(c) for c in rng.choice(NUM_CARDS, cards, replace=False))
        if frozenset(drawn) not in seen:
            seen.add(frozenset(drawn))
            out.append(board_str(drawn))
    return out


def board_spots(boards, **spot) -> list[HoldemSpot]:
    """One :class:`~.spot.HoldemSpot` per board, each with the parameters ``spot``
    (``ranges``, ``pot``, ``stack``, ``bets``, ...): a list for ``jaxcfr.solve_public``."""
    boards = list(boards)
    if not boards:
        raise HoldemError("board_spots() needs at least one board")
    return [HoldemSpot(board=b, **spot) for b in boards]


def parse_boards(spec: str) -> list[str]:
    """The boards a spec names (the ``--boards`` of ``jaxcfr solve``): ``river:TURN``
    (:func:`river_boards`), ``turn:FLOP`` (:func:`turn_boards`),
    ``random:COUNT[:CARDS[:SEED]]`` (:func:`random_boards`) or explicit boards separated
    by commas, each checked (distinct, of one street). Raises :class:`HoldemError` naming
    what is wrong."""
    if not isinstance(spec, str) or not spec.strip():
        raise HoldemError(f"a boards spec is {BOARDS_HELP}; got {spec!r}")
    text = spec.strip()
    kind, colon, rest = text.partition(":")
    kind = kind.strip().lower()
    if colon and kind in ("river", "turn"):
        try:
            return river_boards(rest.strip()) if kind == "river" else turn_boards(rest.strip())
        except HoldemError as e:
            raise HoldemError(f"boards {text!r}: {e}") from None
    if colon and kind == "random":
        fields = [f.strip() for f in rest.split(":")]
        if len(fields) > 3 or not all(f.isdigit() for f in fields):
            raise HoldemError(f"boards {text!r}: random boards are random:COUNT[:CARDS[:SEED]] "
                              f"with whole numbers (random:64, random:16:4:7)")
        count, cards, seed = (int(f) for f in fields + ["5", "0"][len(fields) - 1:])
        if count < 1:
            raise HoldemError(f"boards {text!r}: COUNT must be at least 1")
        if cards not in (3, 4, 5):
            raise HoldemError(f"boards {text!r}: a board has 3, 4 or 5 cards, got {cards}")
        if count > comb(NUM_CARDS, cards):
            raise HoldemError(f"boards {text!r}: there are {comb(NUM_CARDS, cards):,} boards "
                              f"of {cards} cards, not {count:,}")
        return random_boards(count, cards, seed)
    if colon:
        raise HoldemError(f"boards {text!r}: unknown kind {kind!r}; a boards spec is "
                          f"{BOARDS_HELP}")
    boards, seen = [], set()
    for item in text.split(","):
        item = item.strip()
        try:
            cards = parse_board(item)
        except HoldemError as e:
            raise HoldemError(f"boards {text!r}: {e}") from None
        if frozenset(cards) in seen:
            raise HoldemError(f"boards {text!r}: board {board_str(cards)} comes twice")
        if boards and len(cards) != len(parse_board(boards[0])):
            raise HoldemError(f"boards {text!r}: every board is of one street; {boards[0]} "
                              f"has {len(parse_board(boards[0]))} cards, {item} {len(cards)}")
        seen.add(frozenset(cards))
        boards.append(board_str(cards))
    return boards
