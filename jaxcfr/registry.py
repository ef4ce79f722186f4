"""Game strings: one syntax to name a game everywhere (CLI, configs, Python).

Accepted forms::

    kuhn_poker                      a registered name
    leduc_poker(ranks=4, suits=2)   a registered name with keyword parameters
    games.kuhn:KuhnPoker            module:Class (parameters allowed too)
    path/to/game.efg                a Gambit .efg file
    openspiel:kuhn_poker(players=3) an OpenSpiel game (needs the ``openspiel`` extra)

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("leduc_poker(ranks=3)")
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from typing import Any, Callable

from jaxcfr.game import Game, GameError

__all__ = ["register", "load_game", "registered_games", "parse_game_string"]

_REGISTRY: dict[str, Callable[..., Game]] = {}
_NAME = re.compile(r"^\s*([A-Za-z_][\w.]*(?::[A-Za-z_][\w.]*)?)\s*(?:\((.*)\))?\s*$", re.S)


def register(name: str):
    """Class decorator: make a Game constructor loadable by ``name``."""
    def deco(cls):
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"game name {name!r} is already registered to {_REGISTRY[name]}")
        _REGISTRY[name] = cls
        return cls
    return deco


def registered_games() -> dict[str, Callable[..., Game]]:
    """Name -> constructor of every registered game (the reference games included)."""
    _load_reference_games()
    return dict(sorted(_REGISTRY.items()))


def _load_reference_games() -> None:
    importlib.import_module("games")


def parse_game_string(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name(k=v, ...)"`` into ``("name", {"k": v, ...})``; values are Python literals."""
    m = _NAME.match(text)
    if not m:
        raise GameError(f"cannot parse game string {text!r}: expected NAME, NAME(key=value, ...) "
                        "or module:Class", rule="game-string")
    name, arg_text = m.group(1), m.group(2)
    params: dict[str, Any] = {}
    if arg_text and arg_text.strip():
        try:
            call = ast.parse(f"f({arg_text})", mode="eval").body
        except SyntaxError as e:
            raise GameError(f"cannot parse parameters of {text!r}: {e.msg}",
                            rule="game-string") from None
        if call.args:
            raise GameError(f"parameters of {text!r} must be given as key=value",
                            rule="game-string")
        for kw in call.keywords:
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except ValueError:
                raise GameError(f"parameter {kw.arg} of {text!r} is not a literal "
                                f"(number, string, bool, tuple or list)", rule="game-string") from None
    return name, params


def load_game(text: str | os.PathLike) -> Game:
    """The root state of the game named by ``text`` (see the module docstring)."""
    text = os.fspath(text)
    stripped = text.strip()
    if stripped.lower().endswith(".efg"):
        from jaxcfr import efg
        return efg.load(stripped)
    if stripped.startswith("openspiel:"):
        from jaxcfr import openspiel
        return openspiel.load(stripped[len("openspiel:"):])
    name, params = parse_game_string(stripped)
    if ":" in name:
        module_name, _, attr = name.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as e:
            raise GameError(f"cannot import module {module_name!r} for game {text!r}: {e}",
                            rule="game-string") from None
        ctor = module
        for part in attr.split("."):
            ctor = getattr(ctor, part, None)
            if ctor is None:
                raise GameError(f"module {module_name!r} has no attribute {attr!r}",
                                rule="game-string")
    else:
        _load_reference_games()
        if name not in _REGISTRY:
            known = ", ".join(sorted(_REGISTRY))
            raise GameError(f"unknown game {name!r}; registered games: {known}",
                            rule="game-string")
        ctor = _REGISTRY[name]
    try:
        game = ctor(**params)
    except TypeError as e:
        raise GameError(f"bad parameters for game {name!r}: {e}", rule="game-string") from None
    except ValueError as e:
        raise GameError(f"bad parameters for game {name!r}: {e}", rule="game-string") from None
    if not isinstance(game, Game):
        raise GameError(f"{text!r} did not produce a jaxcfr.Game (got {type(game).__name__})",
                        rule="protocol")
    return game
