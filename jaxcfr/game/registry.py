"""Game strings: one syntax to name a game everywhere (CLI, configs, Python).

Accepted forms::

    kuhn_poker                      a reference game's name (REFERENCE_GAMES)
    leduc_poker(ranks=4, suits=2)   a name with keyword parameters
    mypackage.mygame:MyGame         module:Class (parameters allowed too)
    path/to/game.efg                a Gambit .efg file
    openspiel:kuhn_poker(players=3) an OpenSpiel game (needs the ``openspiel`` extra)

Abstraction strings (:func:`load_abstraction`) use the same syntax: a name of
:data:`REFERENCE_ABSTRACTIONS` (``identity``, ``bet_menu(fractions=[0.5, 1.0])``, the
bucketings ``suit_isomorphism``, ``rank_buckets(buckets=4)``, ``bucket_by(...)``) or
``module:Class(k=v)``; ``"A + B"`` (split at every ``+``) combines an action abstraction and
a bucketing. Both kinds of string are read by :mod:`jaxcfr.game.strings`.

Names come from three places, looked up in this order: :func:`register` (games a
user's own code registers), :data:`REFERENCE_GAMES` (the reference games in the
``jaxcfr_games`` package, the repository's ``games/`` folder, imported on first use)
and the ``jaxcfr.games`` entry-point group (games other installed packages offer).
``games.NAME:Class`` is accepted for ``jaxcfr_games.NAME:Class``.

**A ``module:Class`` string runs code.** Loading it imports ``module`` (running
everything at its top level, as ``import module`` does) and calls ``Class`` with the
string's parameters. ``Class`` must be a :class:`jaxcfr.Game` subclass (an
:class:`jaxcfr.Abstraction` for abstraction strings), which is checked after the import
and before the call, so ``os:system(command=...)`` is refused; but the import itself has
run by then. The module is looked for on ``sys.path``, then in the working directory
(where the ``jaxcfr`` command, unlike ``python -m``, does not look by itself), then in
the folders a caller adds (a config file's folder); the error says where it looked.

A game string read from a file (a profile's ``game``, a run directory's or a shared
config's ``game.name``, ``game.abstraction``, ``game.bucketing``) is only loaded when it
cannot run code a user did not choose: a registered name (:func:`register`,
:data:`REFERENCE_GAMES`, entry points, with any parameters), a ``.efg`` path, an
``openspiel:`` string, or references to public classes and functions defined in jaxcfr
itself. Whether it can is decided on what :mod:`jaxcfr.game.strings` parsed, the parse
that loading uses; a string it cannot parse is refused. Anything else needs the user's
word: ``trust_code=True`` in Python, ``--trust-code`` on the command line
(:func:`check_trusted` says why in its error; docs/security.md has the table).

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("leduc_poker(ranks=3)")
"""

from __future__ import annotations

import difflib
import importlib
import importlib.machinery
import importlib.metadata
import importlib.util
import inspect
import os
import re
import sys
import weakref
from typing import Any, Callable, Sequence

from jaxcfr.game.contract import GameError, check_protocol
from jaxcfr.game.protocol import Game
from jaxcfr.game.public import PublicGame
from jaxcfr.game.strings import (Parsed, Reference, parse_abstraction, parse_game,
                                 parse_game_string, parse_reference, untrusted)

__all__ = ["register", "load_game", "registered_games", "parse_game_string", "REFERENCE_GAMES",
           "ENTRY_POINT_GROUP", "PUBLIC_GAMES", "game_parameters", "game_constructor",
           "REFERENCE_ABSTRACTIONS", "load_abstraction", "runs_code", "check_trusted",
           "import_game_module", "game_string", "loadable_hint"]

#: The reference games: name -> ``module:Class``, imported on first use.
REFERENCE_GAMES = {
    "kuhn_poker": "jaxcfr_games.kuhn:KuhnPoker",
    "leduc_poker": "jaxcfr_games.leduc:LeducPoker",
    "nolimit_leduc": "jaxcfr_games.nolimit_leduc:NoLimitLeduc",
    "rock_paper_scissors": "jaxcfr_games.rps:RockPaperScissors",
    "matching_pennies": "jaxcfr_games.rps:MatchingPennies",
    "liars_dice": "jaxcfr_games.liars_dice:LiarsDice",
    "goofspiel": "jaxcfr_games.goofspiel:Goofspiel",
    "sampled_dice_poker": "jaxcfr_games.sampled_poker:SampledDicePoker",
    "dice_poker": "jaxcfr_games.dice_poker:DicePoker",
    # a PublicGame only (jaxcfr.game.public): solved on its public tree, whatever ``tree``
    "holdem_spot": "jaxcfr_games.holdem.spot:HoldemSpot",
}
#: The reference games written as public trees (:mod:`jaxcfr.game.public`): a name of
#: :data:`REFERENCE_GAMES` with ``tree="public"`` loads this PublicGame instead
#: (``tree="history"``, the default, the Game).
PUBLIC_GAMES = {
    "kuhn_poker": "jaxcfr_games.public_kuhn:PublicKuhn",
    "leduc_poker": "jaxcfr_games.public_leduc:PublicLeduc",
    "liars_dice": "jaxcfr_games.public_liars_dice:PublicLiarsDice",
    "holdem_spot": "jaxcfr_games.holdem.spot:HoldemSpot",
}
#: Abstractions a name can load (``module:Class``, imported on first use): action
#: abstractions (``actions(state, player)``) and bucketings (``bucket(player, key)``).
REFERENCE_ABSTRACTIONS = {
    "identity": "jaxcfr.game.abstraction:Identity",
    "bet_menu": "jaxcfr_games.nolimit_leduc:BetMenu",
    "suit_isomorphism": "jaxcfr_games.leduc:SuitIsomorphism",
    "rank_buckets": "jaxcfr_games.leduc:RankBuckets",
    "bucket_by": "jaxcfr.game.bucketing:BucketBy",
}
#: Entry-point group through which other packages offer games (``name = "module:Class"``).
ENTRY_POINT_GROUP = "jaxcfr.games"

_REGISTRY: dict[str, Callable] = {}


def register(name: str):
    """Class decorator: make a Game constructor of your own loadable by ``name``.

    The reference games need no registration (:data:`REFERENCE_GAMES`); an installed
    package can offer games through the ``jaxcfr.games`` entry-point group instead.
    """
    def deco(cls):
        if name in _REGISTRY and _REGISTRY[name] is not cls:
            raise ValueError(f"game name {name!r} is already registered to {_REGISTRY[name]}")
        _REGISTRY[name] = cls
        return cls
    return deco


def registered_games() -> dict[str, Callable]:
    """Name -> constructor of every game a name can load (imports them all)."""
    names = dict(_entry_points())
    names.update(REFERENCE_GAMES)
    out = {name: _import_target(target, name) for name, target in names.items()}
    out.update(_REGISTRY)
    return dict(sorted(out.items()))


def game_parameters(ctor: Callable) -> dict[str, Any]:
    """Keyword parameters of a game constructor with their defaults (``inspect.Parameter.empty``
    for none)."""
    try:
        sig = inspect.signature(ctor)
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _entry_points() -> dict[str, str]:
    try:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception:  # noqa: BLE001 - broken metadata must not break loading games
        return {}
    return {ep.name: ep.value for ep in eps}


def _lookup(name: str) -> Callable | None:
    """The constructor registered under ``name``, or None."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    target = REFERENCE_GAMES.get(name) or _entry_points().get(name)
    return None if target is None else _import_target(target, name)


def _import_target(target: str | Reference, text: str,
                   search: Sequence[str | os.PathLike] = ()) -> Callable:
    """Import a ``module:attr.attr`` reference (:func:`jaxcfr.game.strings.parse_reference`;
    ``games.`` read as ``jaxcfr_games.``); ``search``: more folders to look for the module in
    (after ``sys.path`` and the working directory)."""
    ref = target if isinstance(target, Reference) else parse_reference(target)
    if ref is None:
        raise GameError(f"{target!r} in {text!r} is not a module:name reference (dotted "
                        "names on both sides of one ':', no blanks)", rule="game-string")
    module = _import_module(ref.module, text, search)
    ctor = module
    for part in ref.attr.split("."):
        ctor = getattr(ctor, part, None)
        if ctor is None:
            raise GameError(f"module {ref.module!r} has no attribute {ref.attr!r}",
                            rule="game-string")
    return ctor


def _search_folders(search: Sequence[str | os.PathLike]) -> list[str]:
    """The working directory, then ``search``: absolute, without repeats."""
    return list(dict.fromkeys(os.path.abspath(os.fspath(d)) for d in (os.getcwd(), *search)))


def _import_module(module_name: str, text: str, search: Sequence[str | os.PathLike]):
    """``importlib.import_module``, and where ``sys.path`` lacks the top-level package, the
    working directory and ``search`` (the module is then imported under its own name)."""
    top = module_name.partition(".")[0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != top:
            raise GameError(f"cannot import module {module_name!r} for {text!r}: {e}",
                            rule="game-string") from None
        first = e
    except ImportError as e:
        raise GameError(f"cannot import module {module_name!r} for {text!r}: {e}",
                        rule="game-string") from None
    folders = _search_folders(search)
    spec = importlib.machinery.PathFinder.find_spec(top, folders)
    if spec is None or spec.loader is None:
        raise GameError(f"cannot import module {module_name!r} for {text!r}: {first} (looked "
                        f"on sys.path and in {', '.join(folders)})", rule="game-string")
    module = importlib.util.module_from_spec(spec)
    sys.modules[top] = module
    try:
        spec.loader.exec_module(module)
        return importlib.import_module(module_name)
    except BaseException as e:
        sys.modules.pop(top, None)
        if not isinstance(e, Exception):
            raise
        raise GameError(f"cannot import module {module_name!r} for {text!r} (from "
                        f"{spec.origin}): {type(e).__name__}: {e}", rule="game-string") from None


def import_game_module(text: str, search: Sequence[str | os.PathLike] = (), *,
                       what: str = "game") -> None:
    """Import the modules a game (``what="game"``) or abstraction string references
    (:func:`jaxcfr.game.strings.parse_game`, :func:`~jaxcfr.game.strings.parse_abstraction`),
    looking in ``search`` too, so that later loads of ``text`` find them wherever they run:
    a config's folder is known where the config is read."""
    try:
        parsed = _parse(os.fspath(text), what)
    except GameError:
        return                                     # reported where the string is loaded
    for part in parsed:
        for ref in part.references:
            _import_module(ref.module, text, search)


def _parse(text: str, what: str) -> tuple[Parsed, ...]:
    """``text`` read by the one parser: a game string's one part, an abstraction's parts."""
    return (parse_game(text),) if what == "game" else parse_abstraction(text)


def game_constructor(name: str, text: str | None = None) -> Callable:
    """The constructor a game string's ``name`` (a registered name or ``module:Class``) means."""
    if ":" in name:
        ctor = _import_target(name, text or name)
        if not (isinstance(ctor, type) and issubclass(ctor, (Game, PublicGame))):
            raise GameError(f"{name!r} names {_describe(ctor)}, not a jaxcfr.Game subclass: a "
                            "module:Class game string must name a class derived from "
                            "jaxcfr.Game or jaxcfr.PublicGame (it is not called otherwise)",
                            rule="game-string")
        return ctor
    ctor = _lookup(name)
    if ctor is None:
        known = list(registered_games())
        raise GameError(f"unknown game {name!r}{_did_you_mean(name, known)}; known games: "
                        f"{', '.join(known)} (jaxcfr games lists their parameters)",
                        rule="game-string")
    return ctor


def load_game(text: str | os.PathLike):
    """The root state of the game named by ``text`` (see the module docstring)."""
    text = os.fspath(text)
    parsed = parse_game(text)
    if parsed.kind == "efg":
        from jaxcfr.game import efg
        return efg.load(parsed.name)
    if parsed.kind == "openspiel":
        from jaxcfr.game import openspiel
        return openspiel.load(parsed.name)
    name, params = parsed.name, dict(parsed.params)
    tree = params.pop("tree", "history")
    if tree not in ("history", "public"):
        raise GameError(f"tree must be 'history' or 'public', got {tree!r}", rule="game-string")
    if tree == "public" and name not in PUBLIC_GAMES:
        raise GameError(f"game {name!r} has no public tree (tree='public' is offered by "
                        f"{', '.join(PUBLIC_GAMES)})", rule="game-string")
    ctor = game_constructor(name, text) if tree == "history" else \
        _import_target(PUBLIC_GAMES[name], name)
    accepted = game_parameters(ctor)
    takes = ", ".join(f"{k}={v!r}" if v is not inspect.Parameter.empty else k
                      for k, v in accepted.items()) or "no parameters"
    unknown = [k for k in params if k not in accepted]
    if unknown and not any(p.kind == p.VAR_KEYWORD for p in _signature_parameters(ctor)):
        raise GameError(f"game {name!r} has no parameter {', '.join(map(repr, unknown))}"
                        f"{_did_you_mean(unknown[0], list(accepted))}; it takes {takes}",
                        rule="game-string")
    try:
        game = ctor(**params)
    except TypeError as e:
        raise GameError(f"bad parameters for game {name!r} ({e}); it takes {takes}",
                        rule="game-string") from None
    except ValueError as e:
        raise GameError(f"bad parameters for game {name!r}: {e}", rule="game-string") from None
    if tree == "public" or isinstance(game, PublicGame):   # public only: holdem_spot
        return _remember(game, text.strip())
    try:
        check_protocol(game)
    except GameError:
        raise GameError(f"{text!r} did not produce a jaxcfr.Game (got {type(game).__name__})",
                        rule="protocol") from None
    return _remember(game, text.strip())


#: id(root) -> (a weak reference to it, the string load_game loaded it from). Kept beside the
#: object, not in it: a clone (copy.deepcopy included) or another object is not that root.
_LOADED: dict[int, tuple[weakref.ref, str]] = {}


def _remember(game, text: str):
    """``game``, remembering ``text`` (:func:`game_string`) while it lives."""
    key = id(game)
    try:
        ref = weakref.ref(game, lambda _, key=key: _LOADED.pop(key, None))
    except TypeError:                      # no weak references to it: nothing remembered
        return game
    _LOADED[key] = (ref, text)
    return game


def game_string(game: Any) -> str | None:
    """The game string :func:`load_game` loaded the root state ``game`` from (``None`` for a
    game made otherwise, and for its clones): what :func:`jaxcfr.lower` names the lowered
    game, and so what a profile solved from ``game`` records.

    Example::

        >>> jaxcfr.game.registry.game_string(jaxcfr.load_game("leduc_poker(ranks=3)"))
        'leduc_poker(ranks=3)'
    """
    entry = _LOADED.get(id(game))
    return entry[1] if entry is not None and entry[0]() is game else None


def loadable_hint(label: str) -> str | None:
    """``None`` when ``label`` can name a game to :func:`load_game` (as far as can be told
    without loading it); else a sentence on how to make a profile that records it loadable.
    ``label`` is then a class name (what :func:`jaxcfr.lower` names a game it was not given
    the string of)."""
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z_]\w*", label) or \
            _lookup(label) is not None:
        return None
    known = {**REFERENCE_GAMES, **_entry_points()}
    same = [name for name, target in known.items() if target.rpartition(":")[2] == label]
    same += [name for name, ctor in _REGISTRY.items() if getattr(ctor, "__name__", "") == label]
    example = same[0] if same else "mypackage.mygame:" + label
    which = (f"{label}'s game string is {example!r}, with its parameters" if same
             else f"e.g. {example!r}")
    return (f"{label!r} is the class name of the game, not a game string jaxcfr.load_game "
            f"loads ({which}): load "
            f"the game with jaxcfr.load_game({example!r}) before solving it (a game remembers "
            f"the string it was loaded from), or set profile.game = {example!r} before saving; "
            "meanwhile `jaxcfr eval PROFILE GAME` names the game")


def load_abstraction(text: str):
    """The abstraction named by ``text``: a :data:`REFERENCE_ABSTRACTIONS` name or
    ``module:Class``, with ``(key=value, ...)`` parameters as in a game string; an action
    abstraction, a bucketing, or ``"A + B"``: one of each, combined
    (:func:`jaxcfr.game.bucketing.combine`).

    Raises:
      GameError: ``abstraction-string``: unparsable, unknown, bad parameters, the
        object made has neither ``actions(state, player)`` nor ``bucket(player, key)``,
        or the parts of ``"A + B"`` are not one action abstraction and one bucketing.
    """
    try:
        parts = parse_abstraction(text)
    except GameError as e:
        raise GameError(f"abstraction {text!r}: {e.detail}", rule="abstraction-string") from None
    if len(parts) > 1:
        from jaxcfr.game.bucketing import combine
        made = [_load_one(part) for part in parts]
        try:
            return combine(*made)
        except TypeError as e:
            raise GameError(f"abstraction {text!r}: {e}", rule="abstraction-string") from None
    return _load_one(parts[0])


def _load_one(part: Parsed):
    text, name, params = part.text, part.name, part.params
    try:
        target = name if part.kind == "module" else REFERENCE_ABSTRACTIONS.get(name)
        if target is None:
            raise GameError(f"unknown abstraction {name!r}; known: "
                            f"{', '.join(REFERENCE_ABSTRACTIONS)} (or module:Class)")
        ctor = _import_target(target, text)
        if part.kind == "module" and not (isinstance(ctor, type) and _is_abstraction_class(ctor)):
            raise GameError(f"{name!r} names {_describe(ctor)}, which has neither an "
                            "actions(state, player) method nor a bucket(player, key) method: a "
                            "module:Class abstraction string must name an action abstraction "
                            "(jaxcfr.Abstraction) or a bucketing (jaxcfr.Bucketing) class (it "
                            "is not called otherwise)")
        made = ctor(**params)
    except GameError as e:
        raise GameError(f"abstraction {text!r}: {e.detail}", rule="abstraction-string") from None
    except (TypeError, ValueError) as e:
        raise GameError(f"bad parameters for abstraction {text!r}: {e}",
                        rule="abstraction-string") from None
    if not callable(getattr(made, "actions", None)) and not callable(getattr(made, "bucket",
                                                                               None)):
        raise GameError(f"{text!r} did not produce an abstraction (got {type(made).__name__}, "
                        "which has no actions(state, player) method and no bucket(player, key) "
                        "method)", rule="abstraction-string")
    return made


def _did_you_mean(word: str, known: list[str]) -> str:
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _signature_parameters(ctor: Callable) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(ctor).parameters.values())
    except (TypeError, ValueError):
        return []


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    kind = "a function" if callable(obj) else f"a {type(obj).__name__}"
    return f"{kind} ({getattr(obj, '__module__', None) or '?'}." \
           f"{getattr(obj, '__qualname__', None) or getattr(obj, '__name__', repr(obj))})"


def _is_abstraction_class(cls: type) -> bool:
    """An action abstraction (``actions``) or a bucketing (``bucket``) class."""
    return callable(getattr(cls, "actions", None)) or callable(getattr(cls, "bucket", None))


# -- game strings read from files ------------------------------------------------
def runs_code(text: str, what: str = "game") -> str | None:
    """The module that loading ``text`` (a game string, or with ``what`` ``"abstraction"``
    or ``"bucketing"`` an abstraction string) would import to reach an object that is not
    the package's own, else ``None``: registered and reference names, ``.efg`` paths,
    ``openspiel:`` strings and references to public classes and functions defined in
    ``jaxcfr`` or ``jaxcfr_games`` (:func:`jaxcfr.game.strings.untrusted`).

    Raises:
      GameError: ``game-string``: ``text`` cannot be parsed (so it is refused, never
        trusted).
    """
    ref = untrusted(_parse(os.fspath(text), what))
    return None if ref is None else ref.module


def check_trusted(text: str, source: str, trust_code: bool = False, *,
                  what: str = "game") -> None:
    """Refuse a game (or abstraction) string read from the file ``source`` that would run
    unregistered code, unless ``trust_code``.

    Raises:
      GameError: ``untrusted-code``, saying which module would run and how to allow it.
    """
    if trust_code:
        return
    try:
        ref = untrusted(_parse(os.fspath(text), what))
    except GameError as e:
        raise GameError(f"{source} names the {what} {text!r}, which is refused: {e.detail}",
                        rule=e.rule) from None
    if ref is not None:
        raise GameError(
            f"{source} names the {what} {text!r}, which refers to {ref.text!r}: loading it "
            f"imports and runs the Python module {ref.module!r}, and {ref.text!r} is not a "
            "public class or function defined in jaxcfr or jaxcfr_games. A string read from "
            "a file is only loaded when it names registered games (jaxcfr games lists them), "
            ".efg files, openspiel: games or the package's own classes and functions, since "
            "a profile, run directory or config may come from someone else. If you trust "
            f"{ref.module!r}, pass --trust-code (trust_code=True in Python)",
            rule="untrusted-code")
