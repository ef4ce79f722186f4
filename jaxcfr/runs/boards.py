"""``[game] boards``: one hold'em spot on many boards, as the member game strings of a stack.

A config names a stack of public trees as it names a stack of history trees: their game
strings in ``game.names`` (:mod:`jaxcfr.runs.train` pads them into one
:class:`~jaxcfr.lowering.public_stack.PublicStack`). For the common case, many boards of
one hold'em spot, ``game.name`` is the spot and ``game.boards`` the boards: a spec as
``jaxcfr solve --boards`` takes it (``"river:Td9d6h5c"``, ``"turn:Td9d6h"``,
``"random:64"``, ``"Td9d6h5c2s,Td9d6h5c3s"``) or a list of boards. Each member is the
spot's string with its ``board`` replaced (:func:`board_members`), in the spec's order.

JAX-free (the config checks it on load).

Example::

    >>> board_members("holdem_spot(board='Td9d6h5c2s', pot=100)", ("Td9d6h5c2s", "Td9d6h5c3s"))
    ("holdem_spot(board='Td9d6h5c2s', pot=100)", "holdem_spot(board='Td9d6h5c3s', pot=100)")
"""

from __future__ import annotations

import functools

__all__ = ["board_members", "chosen_boards", "BoardsError"]


class BoardsError(ValueError):
    """``game.boards`` (or the spot it goes with) is not usable; the message says why, and
    ``key`` which config key holds the mistake (``game.name``: the spot does not parse)."""

    def __init__(self, message: str, key: str = "game.boards"):
        super().__init__(message)
        self.key = key


def board_members(spot: str | None, boards: str | tuple[str, ...]) -> tuple[str, ...]:
    """The game string of ``spot`` (a ``holdem_spot(...)``; its own ``board``, if any,
    replaced) on each board ``boards`` names (a spec string, or a tuple of boards).

    Raises:
      BoardsError: as :func:`chosen_boards`.
    """
    return _expand(spot, boards)[1]


def chosen_boards(spot: str | None, boards: str | tuple[str, ...]) -> tuple[str, ...]:
    """The boards ``boards`` names, in order (the members' labels).

    Raises:
      BoardsError: as :func:`board_members`.
    """
    return _expand(spot, boards)[0]


@functools.lru_cache(maxsize=64)
def _expand(spot: str | None, boards: str | tuple[str, ...]
            ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(boards, member game strings)`` (see :func:`board_members`).

    Raises:
      BoardsError: ``spot`` is not a hold'em spot, or ``boards`` is not a spec or a list
        of distinct boards of one street (the message quotes the value).
    """
    from jaxcfr.game.strings import GameError, parse_game_string
    if spot is None:
        raise BoardsError("game.boards needs game.name, the hold'em spot "
                          "(holdem_spot(...)) played on every board")
    try:
        name, params = parse_game_string(spot.strip())
    except GameError as e:
        raise BoardsError(str(e), key="game.name") from None
    if name != "holdem_spot" or params.get("tree", "public") != "public":
        raise BoardsError(f"game.boards takes a hold'em spot in game.name (holdem_spot(...)), "
                          f"got {spot!r}")
    from jaxcfr_games.holdem.boards import parse_boards
    from jaxcfr_games.holdem.cards import HoldemError
    if isinstance(boards, tuple):
        if not boards or not all(isinstance(b, str) and b.strip() and "," not in b
                                 for b in boards):
            raise BoardsError(f"a list of boards holds one board per string "
                              f"(['Td9d6h5c2s', 'Td9d6h5c3s']), got {list(boards)!r}")
        spec = ",".join(b.strip() for b in boards)
    else:
        spec = boards
    try:
        chosen = parse_boards(spec)
    except HoldemError as e:
        raise BoardsError(str(e)) from None
    params.pop("board", None)
    rest = "".join(f", {k}={v!r}" for k, v in params.items())
    return tuple(chosen), tuple(f"holdem_spot(board={b!r}{rest})" for b in chosen)
