"""The reference games as public trees, by name: ``tree='public'`` in a game string.

``kuhn_poker``, ``leduc_poker`` and ``liars_dice`` take ``tree="public"`` (their
:class:`~jaxcfr.game.public.PublicGame`, :data:`PUBLIC_GAMES`) or ``tree="history"`` (the
default: the ``Game``). :func:`jaxcfr.load_game` asks :func:`split_tree` first, so every
tool that takes a game string takes either representation.

Example::

    >>> jaxcfr.load_game("leduc_poker(ranks=13, tree='public')")
    PublicLeduc(board=-1)
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
from typing import Any

from jaxcfr.game.contract import GameError

__all__ = ["PUBLIC_GAMES", "split_tree"]

#: Reference game name -> its PublicGame (``module:Class``, imported on first use).
PUBLIC_GAMES = {
    "kuhn_poker": "jaxcfr_games.public_kuhn:PublicKuhn",
    "leduc_poker": "jaxcfr_games.public_leduc:PublicLeduc",
    "liars_dice": "jaxcfr_games.public_liars_dice:PublicLiarsDice",
}
_TREES = ("history", "public")


def _call(text: str):
    """``(name, {keyword: literal})`` of ``name(k=v, ...)``, or None if it is not one."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or node.args or not isinstance(node.func, ast.Name):
        return None
    try:
        params = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except ValueError:
        return None
    return (node.func.id, params) if None not in params else None


def split_tree(text: Any) -> tuple[Any, Any]:
    """``(text, None)`` for a string without ``tree=`` (and anything not a string);
    ``(the string without it, None)`` for ``tree='history'``; ``(text, the PublicGame)``
    for ``tree='public'``.

    Raises:
      GameError: ``game-string``: another ``tree``, a game with no public tree, or
        parameters its public tree does not take.
    """
    if not isinstance(text, str) or isinstance(text, os.PathLike) or "tree" not in text:
        return text, None
    parsed = _call(text)
    if parsed is None or "tree" not in parsed[1]:
        return text, None
    name, params = parsed
    tree = params.pop("tree")
    if tree not in _TREES:
        raise GameError(f"tree must be 'history' or 'public', got {tree!r}", rule="game-string")
    if tree == "history":
        return f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})", None
    if name not in PUBLIC_GAMES:
        raise GameError(f"game {name!r} has no public tree (tree='public' is offered by "
                        f"{', '.join(PUBLIC_GAMES)})", rule="game-string")
    module, _, attr = PUBLIC_GAMES[name].partition(":")
    ctor = getattr(importlib.import_module(module), attr)
    accepted = inspect.signature(ctor).parameters
    unknown = [k for k in params if k not in accepted]
    if unknown:
        raise GameError(f"game {name!r} (tree='public') has no parameter "
                        f"{', '.join(map(repr, unknown))}; it takes "
                        f"{', '.join(accepted) or 'no parameters'}", rule="game-string")
    try:
        return text, ctor(**params)
    except (TypeError, ValueError) as e:
        raise GameError(f"bad parameters for game {name!r} (tree='public'): {e}",
                        rule="game-string") from None
