"""The one parser of game and abstraction strings: what a string names, and the code it runs.

Every place that loads a game, an abstraction or a ``bucket_by`` function from a string
(:func:`jaxcfr.load_game`, :func:`jaxcfr.load_abstraction`, :class:`jaxcfr.BucketBy`) and
every place that decides whether a string read from a file may be loaded
(:func:`jaxcfr.game.registry.check_trusted`) reads it here, so the two cannot disagree:

* :func:`parse_game` reads a game string: an ``.efg`` path, an ``openspiel:`` string, or
  ``NAME`` / ``module:Class`` with ``(key=value, ...)`` literal parameters.
* :func:`parse_abstraction` reads an abstraction string: parts split at *every* ``+``
  outside brackets and quotes (``"identity+mod:X"`` is two parts, as
  ``"identity + mod:X"`` is), each part a ``NAME`` or ``module:Class`` with parameters.
* :func:`parse_reference` reads a ``module:attr`` reference (the part before ``(``, or a
  string parameter such as ``bucket_by(function="mod:fn")``): dotted identifiers on
  both sides, nothing else (no blanks). What it cannot read is no reference: no loader
  imports it.

A parsed string lists the :class:`Reference` objects loading it would import
(``references``): its own ``module:Class`` and every string parameter, at any depth, that
:func:`parse_reference` reads. :func:`untrusted` is the first of them that is not a
*package object*: a public class or function defined in ``jaxcfr`` or ``jaxcfr_games``
(``games.*`` is read as ``jaxcfr_games.*``), found by importing only modules of those
packages and following public attributes each of which is such a class or function (its
``__module__`` says where it was defined: ``jaxcfr.game.registry:os.system`` reaches the
module ``os`` and is refused), checked before anything is called. A string the parser
cannot read raises :class:`GameError` (rule ``game-string``): it is refused, never trusted.

Example::

    >>> from jaxcfr.game.strings import parse_abstraction, untrusted
    >>> [p.name for p in parse_abstraction("identity+evilmod:X")]
    ['identity', 'evilmod:X']
    >>> untrusted(parse_abstraction("identity+evilmod:X")).text
    'evilmod:X'
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
from typing import Any

from jaxcfr.game.contract import GameError

__all__ = ["Reference", "Parsed", "parse_reference", "parse_game", "parse_abstraction",
           "parse_game_string", "split_plus", "untrusted", "package_object", "PACKAGES"]

#: The packages whose public classes and functions a string read from a file may name.
PACKAGES = ("jaxcfr", "jaxcfr_games")
#: The name the reference games' package had before it was installed as ``jaxcfr_games``.
_LEGACY_PACKAGE = "games"

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_REFERENCE = re.compile(rf"({_DOTTED}):({_DOTTED})", re.ASCII)
_NAME = re.compile(rf"^\s*({_DOTTED}(?::{_DOTTED})?)\s*(?:\((.*)\))?\s*$", re.S | re.ASCII)


@dataclasses.dataclass(frozen=True)
class Reference:
    """``module:attr``: what loading imports (``module``) and looks up (``attr``, dotted).

    ``module`` is the module imported (``games.*`` already read as ``jaxcfr_games.*``);
    ``text`` the reference as written.
    """

    module: str
    attr: str
    text: str


@dataclasses.dataclass(frozen=True)
class Parsed:
    """One game string, or one part of an abstraction string.

    ``kind``: ``"efg"`` (``name`` is the path), ``"openspiel"`` (``name`` is what follows
    ``openspiel:``), ``"name"`` (a registered or reference name) or ``"module"`` (``name``
    is ``module:Class``); ``params``: the literal keyword parameters; ``references``: what
    loading it imports (:class:`Reference`, its own ``module:Class`` first).
    """

    text: str
    kind: str
    name: str
    params: dict
    references: tuple[Reference, ...]


def parse_reference(text: str) -> Reference | None:
    """``"pkg.mod:name.attr"`` as a :class:`Reference`; ``None`` for anything else (blanks
    included: ``" mod:f"`` is no reference, and nothing imports it)."""
    if not isinstance(text, str):
        return None
    m = _REFERENCE.fullmatch(text)
    if m is None:
        return None
    module, attr = m.group(1), m.group(2)
    if module == _LEGACY_PACKAGE or module.startswith(_LEGACY_PACKAGE + "."):
        module = PACKAGES[1] + module[len(_LEGACY_PACKAGE):]
    return Reference(module, attr, text)


def parse_game_string(text: str) -> tuple[str, dict[str, Any]]:
    """Split ``"name(k=v, ...)"`` into ``("name", {"k": v, ...})``; values are Python literals.

    Raises:
      GameError: ``game-string``, for what is not ``NAME``, ``module:Class`` (dotted
        identifiers) with optional ``(key=value, ...)`` literal parameters.
    """
    m = _NAME.match(text) if isinstance(text, str) else None
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
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or \
                call.args or any(kw.arg is None for kw in call.keywords):
            raise GameError(f"parameters of {text!r} must be given as key=value",
                            rule="game-string")
        for kw in call.keywords:
            if kw.arg in params:      # ast.parse takes f(a=1, a=2); Python itself refuses it
                raise GameError(f"parameter {kw.arg} of {text!r} is given twice; give it once",
                                rule="game-string")
            try:
                params[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise GameError(f"parameter {kw.arg} of {text!r} is not a literal (number, "
                                "string, bool, tuple or list)", rule="game-string") from None
    return name, params


def _parse_named(text: str) -> Parsed:
    name, params = parse_game_string(text)
    own = parse_reference(name) if ":" in name else None
    references = ([own] if own else []) + _parameter_references(params)
    return Parsed(text, "module" if own else "name", name, params, tuple(references))


def _parameter_references(params: dict[str, Any]) -> list[Reference]:
    """Every string among the parameters (at any depth) that :func:`parse_reference` reads."""
    out, values = [], list(params.values())
    while values:
        v = values.pop(0)
        if isinstance(v, dict):
            values.extend(v.keys())
            values.extend(v.values())
        elif isinstance(v, (list, tuple, set, frozenset)):
            values.extend(v)
        else:
            ref = parse_reference(v)
            if ref is not None:
                out.append(ref)
    return out


def parse_game(text: str) -> Parsed:
    """A game string (see the module docstring); ``GameError`` (``game-string``) if unreadable."""
    if not isinstance(text, str):
        raise GameError(f"a game string must be a string, got {type(text).__name__}",
                        rule="game-string")
    stripped = text.strip()
    if stripped.lower().endswith(".efg"):
        return Parsed(text, "efg", stripped, {}, ())
    if stripped.startswith("openspiel:"):
        return Parsed(text, "openspiel", stripped[len("openspiel:"):], {}, ())
    return _parse_named(stripped)


def split_plus(text: str) -> list[str]:
    """``text`` split at every ``+`` outside brackets and quotes (parts stripped)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "+" and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def parse_abstraction(text: str) -> tuple[Parsed, ...]:
    """An abstraction string's parts (one, or those of ``"A + B"``), each parsed.

    Raises:
      GameError: ``game-string``: not a string, an empty part, or a part that is not
        ``NAME`` / ``module:Class`` with literal parameters.
    """
    if not isinstance(text, str):
        raise GameError(f"an abstraction string must be a string, got {type(text).__name__}",
                        rule="game-string")
    parts = split_plus(text)
    if any(not part for part in parts):
        raise GameError(f"cannot parse abstraction string {text!r}: an empty part around '+'",
                        rule="game-string")
    return tuple(_parse_named(part) for part in parts)


def package_object(ref: Reference) -> Any | None:
    """The object ``ref`` names when it is a public class or function defined in
    :data:`PACKAGES`, reached through public attributes that are each such a class or
    function; ``None`` otherwise. Imports only modules of :data:`PACKAGES` (found on
    ``sys.path``), calls nothing."""
    if ref.module.partition(".")[0] not in PACKAGES:
        return None
    if any(part.startswith("_") for part in ref.module.split(".") + ref.attr.split(".")):
        return None
    try:
        obj: Any = importlib.import_module(ref.module)
    except Exception:  # noqa: BLE001 - a package module that does not import is not trusted
        return None
    if getattr(obj, "__name__", None) != ref.module:
        return None
    for part in ref.attr.split("."):
        obj = inspect.getattr_static(obj, part, None) if inspect.isclass(obj) else \
            getattr(obj, part, None)
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            return None
        module = getattr(obj, "__module__", None)
        if not isinstance(module, str) or module.partition(".")[0] not in PACKAGES:
            return None
    return obj


def untrusted(parsed: Parsed | tuple[Parsed, ...]) -> Reference | None:
    """The first reference of a parsed string (or of its parts) that is not a package
    object (:func:`package_object`), else ``None``."""
    parts = parsed if isinstance(parsed, tuple) else (parsed,)
    for part in parts:
        for ref in part.references:
            if package_object(ref) is None:
                return ref
    return None
