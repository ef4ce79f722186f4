"""Command-line rules the benchmark programs share: a ``--target`` and counts checked as
``jaxcfr`` checks them (a one-line ``argparse`` error, exit status 2), and a game and a
preset checked before any lowering (``--game nosuch`` is a usage error, not a traceback
after imports).

Example::

    parser.add_argument("--target", type=TARGET)
    parser.add_argument("--every", type=count("--every"), default=25)
    args = parser.parse_args(argv)
    game = checked_game(parser, "--game", args.game, public=True)
"""

from __future__ import annotations

import argparse

from jaxcfr._util.arguments import command_line_type, positive_float, positive_int

__all__ = ["TARGET", "count", "checked_game", "checked_preset"]

#: ``type=`` of a ``--target``: a finite number above 0 (``nan``, ``inf``, ``0``, ``-1``
#: would never stop the run, or stop it at once).
TARGET = command_line_type(positive_float, "--target", float)


def count(option: str):
    """``type=`` of a positive integer option (iterations, a cadence, repeats)."""
    return command_line_type(positive_int, option)


def checked_game(parser: argparse.ArgumentParser, option: str, spec: str,
                 public: bool = False):
    """The game ``spec`` names, loaded; a usage error naming ``option`` if it does not
    load, or (``public``) is not a public tree."""
    import jaxcfr
    from jaxcfr.game.contract import GameError
    from jaxcfr.lowering.public import public_game_of
    try:
        game = jaxcfr.load_game(spec)
    except (GameError, ValueError, TypeError) as e:
        parser.error(f"{option} {spec!r}: {e}")
    if public and public_game_of(game) is None:
        parser.error(f"{option} {spec!r} is not a public game (give tree='public', or a "
                     f"game that is one)")
    return game


def checked_preset(parser: argparse.ArgumentParser, option: str, name: str) -> str:
    """The preset ``name`` resolves to; a usage error naming ``option`` if none."""
    from jaxcfr.solvers.names import resolve_algorithm
    try:
        return resolve_algorithm(name, option)
    except ValueError as e:
        parser.error(str(e))
