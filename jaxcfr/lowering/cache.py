"""The cache of lowered games on disk: a second run of the same game loads its tensors.

Where: ``$JAXCFR_LOWERING_CACHE_DIR``, else ``~/.cache/jaxcfr/lowered`` (created
private to the user, mode 0700). Off: ``JAXCFR_NO_CACHE=1`` (also turns off the
compilation cache), ``cache=False`` from Python, ``--no-cache`` on the command line,
``game.cache = false`` in a run config (public trees: :mod:`jaxcfr.lowering.public_cache`,
the same directory and rules). The command line and ``jaxcfr train`` use it by
default; from Python pass ``cache=True`` (or a directory) to :func:`jaxcfr.solve` /
``as_lowered``. Clearing it is deleting the directory.

The key of an entry is the sha256 of:

* the game: a reference or ``module:Class`` game's constructor (module and name),
  its parameters with the defaults filled in, and the sha256 of its module's source
  file (the game code's version); an ``.efg`` file's contents; an ``openspiel:``
  string with OpenSpiel's version;
* the lowering: :data:`FORMAT_VERSION`, jaxcfr's version, the sha256 of the source
  of the modules that decide the tensors (walk, lowering, contract, tensors, and the
  ``.efg`` reader or the OpenSpiel adapter), and ``sort_infosets``.

An entry is one ``.npz`` file written atomically (:mod:`jaxcfr._util.atomic`), so
processes that lower the same game at once each write a whole file and the last
rename wins. It holds a JSON header (the key's fields, the sizes, the tensors'
:func:`~jaxcfr.tensors.fingerprint` and the sha256 of the host tables), the
tensors, and the host tables pickled. Nothing in it is trusted: a load compares
the header with the key (else the entry is *stale*), recomputes the fingerprint
and the tables' sha256 (else it is *corrupt*), and unpickles the tables with an
unpickler that builds plain Python values only (no code runs); a stale or corrupt
entry is lowered again and overwritten. Games whose labels or keys are not plain
values, and games given as objects rather than game strings, are not cached.

Example::

    >>> import jaxcfr
    >>> a = jaxcfr.solve("kuhn_poker", iterations=10, cache=True)   # walks, then stores
    >>> b = jaxcfr.solve("kuhn_poker", iterations=10, cache=True)   # loads
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import importlib.metadata
import inspect
import io
import json
import os
import pickle
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from jaxcfr._util.atomic import atomic_writer
from jaxcfr.lowering.budget import check_budget, default_memory_budget
from jaxcfr.lowering.compact import compact_tensors
from jaxcfr.lowering.labels import NodeLabels
from jaxcfr.lowering.keys import InfosetKeys
from jaxcfr.lowering.preorder import Preorder, preorder_array
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import game_constructor, load_game, parse_game_string
from jaxcfr.tensors import GameTensors, LoweredGame, fingerprint

__all__ = ["FORMAT", "FORMAT_VERSION", "default_directory", "resolve", "identity",
           "entry_path", "entry_file", "load", "store", "lower_cached", "read_entry",
           "write_entry", "through_cache", "sources_digest", "dist_version", "plain_loads"]

FORMAT = "jaxcfr-lowered-game"
#: Bumped whenever the stored layout changes (entries of other versions are stale).
#: 2: GameTensors lost ``abstraction_mask`` (it was always ``legal_mask``).
FORMAT_VERSION = 2
_PACKAGE = Path(__file__).resolve().parents[1]
#: jaxcfr sources that decide the lowered tensors (their digest is part of every key).
_LOWERING_SOURCES = ("game/contract.py", "lowering/columns.py", "lowering/walk.py",
                     "lowering/parts.py", "lowering/parallel.py", "lowering/lower.py",
                     "tensors.py")
_EFG_SOURCES = ("game/efg/parser.py", "game/efg/fast.py", "game/efg/tree.py",
                "game/efg/game.py")
_OPENSPIEL_SOURCES = ("game/openspiel.py",)

Log = Callable[[str], None]


def default_directory() -> Path:
    """``$JAXCFR_LOWERING_CACHE_DIR``, else ``~/.cache/jaxcfr/lowered``."""
    env = os.environ.get("JAXCFR_LOWERING_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "jaxcfr" / "lowered"


def resolve(cache) -> Path | None:
    """The cache directory ``cache`` asks for: ``None``/``False`` none, ``True`` the default,
    else that directory; always ``None`` under ``JAXCFR_NO_CACHE=1``."""
    if cache is None or cache is False or os.environ.get("JAXCFR_NO_CACHE") == "1":
        return None
    return default_directory() if cache is True else Path(cache)


# -- the key --------------------------------------------------------------------------
def sources_digest(paths) -> str:
    """The sha256 of files (their names and bytes), part of a key."""
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.name).encode() + b"\0")
        h.update(Path(p).read_bytes())
    return h.hexdigest()


def dist_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, or ``None``."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def identity(text: str, *, sort: bool = True) -> dict[str, Any] | None:
    """The key's fields for game string ``text``; ``None`` when it cannot be cached.

    ``None`` also when the string is bad (an unknown game, bad parameters, a missing
    file): lowering it reports that error.
    """
    text = text.strip()
    sources = [_PACKAGE / s for s in _LOWERING_SOURCES]
    try:
        if text.lower().endswith(".efg"):
            game = {"kind": "efg", "sha256": hashlib.sha256(Path(text).read_bytes()).hexdigest()}
            sources += [_PACKAGE / s for s in _EFG_SOURCES]
        elif text.startswith("openspiel:"):
            version = dist_version("open_spiel")
            if version is None:
                return None
            game = {"kind": "openspiel", "game": text[len("openspiel:"):].strip(),
                    "openspiel": version}
            sources += [_PACKAGE / s for s in _OPENSPIEL_SOURCES]
        else:
            name, params = parse_game_string(text)
            ctor = game_constructor(name, text)
            bound = inspect.signature(ctor).bind(**params)
            bound.apply_defaults()
            module = sys.modules.get(getattr(ctor, "__module__", None) or "")
            source = getattr(module, "__file__", None)
            if source is None:
                return None
            game = {"kind": "python", "module": ctor.__module__,
                    "name": getattr(ctor, "__qualname__", repr(ctor)),
                    "parameters": {k: repr(v) for k, v in sorted(bound.arguments.items())},
                    "source_sha256": sources_digest([Path(source)])}
        return {"game": game, "format": FORMAT_VERSION, "jaxcfr": dist_version("jaxcfr"),
                "lowering_sha256": sources_digest(sources), "sort_infosets": bool(sort)}
    except (GameError, OSError, TypeError, ValueError):
        return None


def entry_path(directory: str | os.PathLike, text: str, ident: dict[str, Any]) -> Path:
    """``DIR/<name>-<key>.npz``: the game's class (or the file's stem, or the OpenSpiel
    game's name) and the key, so that equivalent game strings share one entry."""
    game = ident["game"]
    name = {"python": game.get("name"), "openspiel": f"openspiel-{game.get('game')}"}.get(
        game["kind"]) or Path(text.strip()).stem
    return entry_file(directory, name, ident)


def entry_file(directory: str | os.PathLike, name: str, ident: dict[str, Any], *,
               prefix: str = "") -> Path:
    """``DIR/<prefix><name>-<key>.npz``, the key the sha256 of ``ident`` (every kind of
    lowered game names its entries so)."""
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.=-]+", "_", name).strip("_.")[:60] or "game"
    return Path(directory) / f"{prefix}{slug}-{key[:32]}.npz"


# -- safe tables ----------------------------------------------------------------------
class _PlainUnpickler(pickle.Unpickler):
    """Builds plain Python values only: containers, numbers, strings (no code runs)."""

    _ALLOWED = {("builtins", n) for n in ("complex", "frozenset", "set", "slice", "range",
                                          "bytearray")}

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not a plain value")


def plain_loads(data: bytes):
    """Unpickle ``data`` into plain Python values only (no code runs)."""
    return _PlainUnpickler(io.BytesIO(data)).load()


# -- the entry file: read and write, for every kind of lowered game ---------------------
def read_entry(path: Path, ident: dict[str, Any],
               read: Callable[[Any, dict[str, Any]], tuple[Any, str]], *,
               fmt: str = FORMAT) -> tuple[Any, str]:
    """``read(npz, header)`` of the entry at ``path`` when it is there and its header
    names format ``fmt`` and ``ident``: ``(None, "missing")``, ``(None, "stale ...")``,
    ``(None, "corrupt ...")`` when anything in it cannot be read, else what ``read``
    returns (``(lowered, "hit")`` or ``(None, why)``). The file is read with
    ``allow_pickle=False``; a :class:`~jaxcfr.game.contract.GameError` (the memory
    budget) is raised."""
    if not path.is_file():
        return None, "missing"
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(bytes(z["header"]).decode("utf-8"))
            if header.get("format") != fmt or header.get("identity") != ident:
                return None, "stale (another format, game version or jaxcfr version)"
            return read(z, header)
    except GameError:
        raise
    except Exception as e:  # noqa: BLE001 - anything unreadable is a corrupt entry
        return None, f"corrupt ({type(e).__name__}: {e})"


def write_entry(path: Path, header: dict[str, Any], tables: bytes,
                arrays: dict[str, np.ndarray]) -> str | None:
    """Write an entry atomically (``header`` as JSON, the pickled host ``tables``,
    ``arrays``); ``None`` when done, else why not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with atomic_writer(path) as f:
            np.savez(f, header=np.frombuffer(json.dumps(header).encode(), np.uint8),
                     tables=np.frombuffer(tables, np.uint8), **arrays)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


def through_cache(path: Path, ident: dict[str, Any], lower: Callable[[], Any], *,
                  load: Callable[..., tuple[Any, str]],
                  store: Callable[[Path, dict[str, Any], Any], str | None], name: str,
                  memory_budget: int | None, log: Log | None, unit: str = "nodes"
                  ) -> tuple[Any, str]:
    """The lowered game of entry ``path``: ``load(path, ident, budget=)`` it when it is
    sound, else ``lower()`` it and ``store`` it. Returns ``(lowered, status)``, status
    ``"hit: PATH"``, ``"stored: PATH"`` or ``"not cached: WHY"``; ``log`` hears the same
    as one-line messages (``unit``: what the sizes count)."""
    say = log or (lambda msg: None)
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    start = time.perf_counter()
    lowered, why = load(path, ident, budget=budget)
    if lowered is not None:
        say(f"loaded {lowered.num_nodes:,} {unit} from the cache in "
            f"{time.perf_counter() - start:.2f} s ({path})")
        return dataclasses.replace(lowered, name=name), f"hit: {path}"
    if why != "missing":
        say(f"cache entry {path.name} is {why}: lowering again")
    lowered = lower()
    problem = store(path, ident, lowered)
    say(f"not cached: {problem}" if problem else f"cached in {path}")
    return lowered, f"not cached: {problem}" if problem else f"stored: {path}"


# -- load / store ---------------------------------------------------------------------
def load(path: Path, ident: dict[str, Any], *,
         budget: int | None = None) -> tuple[LoweredGame | None, str]:
    """The entry at ``path`` if it is present and sound: ``(lowered, "hit")``, else
    ``(None, why)`` with ``why`` one of ``"missing"``, ``"stale ..."``, ``"corrupt ..."``.

    Raises:
      MemoryBudgetError: the cached game is larger than ``budget`` allows.
    """
    def read(z, header):
        sizes = header["sizes"]
        if budget is not None:
            check_budget(sizes["nodes"], sizes["rows"], sizes["max_actions"],
                         sizes["players"], budget, what="in the cached game")
        tables_bytes = bytes(z["tables"])
        if hashlib.sha256(tables_bytes).hexdigest() != header["tables_sha256"]:
            return None, "corrupt (host tables do not match their checksum)"
        tensors = GameTensors(*(z[f"t_{f}"] for f in GameTensors._fields))
        level_start = tuple(int(x) for x in z["level_start"])
        tables = plain_loads(tables_bytes)
        lowered = LoweredGame(
            tensors=tensors, level_start=level_start, num_players=tables["num_players"],
            infoset_keys=InfosetKeys([p for p, _ in tables["infoset_keys"]],
                                     [k for _, k in tables["infoset_keys"]]),
            infoset_actions=tables["infoset_actions"],
            preorder=Preorder(tensors.parent, level_start),
            node_action=NodeLabels.from_labels(tables["node_action"]),
            nash_value=tables["nash_value"], constant_sum=tables["constant_sum"],
            br_rounds=tables["br_rounds"], name=tables["name"])
        if fingerprint(lowered) != header["fingerprint"]:
            return None, "corrupt (tensors do not match their fingerprint)"
        if lowered.num_nodes != sizes["nodes"] or len(lowered.node_action) != sizes["nodes"]:
            return None, "corrupt (sizes do not match the header)"
        # (stored dense; held compact as lowering holds it: jaxcfr.lowering.compact)
        return dataclasses.replace(lowered, tensors=compact_tensors(tensors)), "hit"
    return read_entry(path, ident, read)


def store(path: Path, ident: dict[str, Any], lowered: LoweredGame) -> str | None:
    """Write ``lowered`` at ``path`` atomically; ``None`` when done, else why not."""
    tables = pickle.dumps({
        "num_players": lowered.num_players, "infoset_keys": tuple(lowered.infoset_keys),
        "infoset_actions": lowered.infoset_actions,
        "node_action": tuple(lowered.node_action),
        "nash_value": lowered.nash_value, "constant_sum": lowered.constant_sum,
        "br_rounds": lowered.br_rounds, "name": lowered.name}, pickle.HIGHEST_PROTOCOL)
    try:
        plain_loads(tables)
    except pickle.UnpicklingError as e:
        return f"its labels or keys are not plain Python values ({e})"
    header = {"format": FORMAT, "identity": ident, "fingerprint": fingerprint(lowered),
              "tables_sha256": hashlib.sha256(tables).hexdigest(),
              "sizes": {"nodes": lowered.num_nodes, "rows": lowered.num_rows,
                        "max_actions": lowered.max_actions, "players": lowered.num_players},
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    arrays = {f"t_{f}": np.asarray(getattr(lowered.tensors, f)) for f in GameTensors._fields}
    return write_entry(path, header, tables,
                       {"level_start": np.asarray(lowered.level_start, np.int64),
                        "preorder": preorder_array(lowered.preorder), **arrays})


def lower_cached(text: str, directory: Path, lower_fn: Callable[[Any], LoweredGame], *,
                 name: str, sort: bool = True, memory_budget: int | None = None,
                 log: Log | None = None) -> tuple[LoweredGame, str]:
    """Game string ``text`` lowered: from the cache in ``directory`` when a sound entry is
    there, else by ``lower_fn(load_game(text))``, then stored.

    Returns ``(lowered, status)``: ``status`` is ``"hit: PATH"``, ``"stored: PATH"`` or
    ``"not cached: WHY"``; ``log`` gets the same news as one-line messages.
    """
    ident = identity(text, sort=sort)
    if ident is None:
        return lower_fn(load_game(text)), "not cached: the game string names no versioned code"
    return through_cache(entry_path(directory, text, ident), ident,
                         lambda: lower_fn(load_game(text)), load=load, store=store,
                         name=name, memory_budget=memory_budget, log=log)
