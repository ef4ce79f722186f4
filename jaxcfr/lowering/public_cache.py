"""The cache of lowered public trees on disk: a second run of the same public game loads it.

The public-tree twin of :mod:`jaxcfr.lowering.cache`, with its directory, its switches
(``JAXCFR_NO_CACHE=1``, ``cache=False``, ``--no-cache``) and its rules of trust; an entry
is ``DIR/public-<Class>-<key>.npz``. The key is the sha256 of:

* the game: the loaded :class:`~jaxcfr.game.public.PublicGame`'s class (module and
  name), the game string's parameters with the defaults filled in, and the sha256 of
  the source files of its module's folder (the game's code and the modules beside it,
  such as a hold'em spot's cards and evaluator);
* the lowering: :data:`FORMAT_VERSION`, jaxcfr's version, the sha256 of the modules
  that decide the tables (:data:`_SOURCES`), ``terminals`` and the float type.

Nothing in an entry is trusted: it is read with ``allow_pickle=False``; a load compares
its header with the key (else *stale*), checks the sizes against the memory budget
(:func:`~jaxcfr.lowering.public.check_public_budget`) before reading any table,
recomputes the tensors' :func:`~jaxcfr.tensors.fingerprint` and the sha256 of the host
tables and arrays (else *corrupt*), and unpickles the host tables (labels, actions,
hand labels and cards) with :mod:`jaxcfr.lowering.cache`'s unpickler that builds plain
Python values only, so no code runs. A stale or corrupt entry is lowered again and
overwritten; a game whose labels are not plain values is not stored.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
import inspect
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
from jaxcfr.game.contract import GameError
from jaxcfr.game.public_contract import HandInfo
from jaxcfr.game.registry import parse_game_string
from jaxcfr.lowering.budget import default_memory_budget
from jaxcfr.lowering.cache import _digest, _plain_loads, _version
from jaxcfr.lowering.public import PublicLowered, PublicSize, check_public_budget
from jaxcfr.tensors import PublicTensors, fingerprint

__all__ = ["FORMAT", "FORMAT_VERSION", "public_identity", "entry_path", "load", "store",
           "lower_public_cached"]

FORMAT = "jaxcfr-public-tree"
#: Bumped whenever the stored layout changes (entries of other versions are stale).
FORMAT_VERSION = 1
_PACKAGE = Path(__file__).resolve().parents[1]
#: jaxcfr sources that decide a public tree's tables (their digest is part of every key).
_SOURCES = ("game/contract.py", "game/public.py", "game/public_values.py",
            "game/public_contract.py", "lowering/public.py", "tensors.py")

Log = Callable[[str], None]


def public_identity(text: str, game: Any, *, terminals: str = "auto",
                    dtype: Any = np.float64) -> dict[str, Any] | None:
    """The key's fields of game string ``text``, loaded as the PublicGame ``game``;
    ``None`` when it cannot be cached (its class has no source file, or the string's
    parameters do not bind to it)."""
    try:
        name, params = parse_game_string(text.strip())
        params = {k: v for k, v in params.items() if k != "tree"}
        ctor = type(game)
        bound = inspect.signature(ctor).bind(**params)
        bound.apply_defaults()
        source = getattr(sys.modules.get(ctor.__module__), "__file__", None)
        if source is None:
            return None
        folder = sorted(Path(source).parent.glob("*.py"))
        return {"game": {"module": ctor.__module__, "name": ctor.__qualname__,
                         "parameters": {k: repr(v) for k, v in
                                        sorted(bound.arguments.items())},
                         "source_sha256": _digest(folder)},
                "format": FORMAT_VERSION, "jaxcfr": _version("jaxcfr"),
                "lowering_sha256": _digest([_PACKAGE / s for s in _SOURCES]),
                "terminals": terminals, "dtype": np.dtype(dtype).str}
    except (GameError, OSError, TypeError, ValueError):
        return None


def entry_path(directory: str | os.PathLike, ident: dict[str, Any]) -> Path:
    """``DIR/public-<Class>-<key>.npz``."""
    key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.=-]+", "_", ident["game"]["name"]).strip("_.")[:60]
    return Path(directory) / f"public-{slug or 'game'}-{key[:32]}.npz"


def _host_arrays(lowered: PublicLowered) -> dict[str, np.ndarray]:
    """The host arrays outside the tensors: node kinds, hand weights, compatibility."""
    h = lowered.hands
    return {"node_kind": np.asarray(lowered.node_kind),
            "weights_0": np.asarray(h.weights[0], np.float64),
            "weights_1": np.asarray(h.weights[1], np.float64),
            "compatible": np.asarray(h.compatible, bool)}


def _host_digest(tables: bytes, arrays: dict[str, np.ndarray]) -> str:
    d = hashlib.sha256(tables)
    for k in sorted(arrays):
        a = np.ascontiguousarray(arrays[k])
        d.update(f"{k}:{a.dtype.str}:{a.shape};".encode())
        d.update(a.reshape(-1).view(np.uint8))
    return d.hexdigest()


def store(path: Path, ident: dict[str, Any], lowered: PublicLowered) -> str | None:
    """Write ``lowered`` at ``path`` atomically; ``None`` when done, else why not."""
    h = lowered.hands
    tables = pickle.dumps({
        "hand_labels": tuple(tuple(x) for x in h.labels), "cards": h.cards,
        "deal_total": float(h.deal_total), "node_action": tuple(lowered.node_action),
        "node_actions": tuple(lowered.node_actions), "constant_sum": lowered.constant_sum,
        "nash_value": lowered.nash_value, "name": lowered.name,
        "ranked": bool(lowered.ranked), "widths": tuple(lowered.widths)},
        pickle.HIGHEST_PROTOCOL)
    try:
        _plain_loads(tables)
    except pickle.UnpicklingError as e:
        return f"its labels are not plain Python values ({e})"
    arrays = _host_arrays(lowered)
    header = {"format": FORMAT, "identity": ident, "fingerprint": fingerprint(lowered),
              "host_sha256": _host_digest(tables, arrays),
              "size": list(lowered.public_size),
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    tensors = {f"t_{f}": np.asarray(getattr(lowered.tensors, f))
               for f in PublicTensors._fields}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with atomic_writer(path) as f:
            np.savez(f, header=np.frombuffer(json.dumps(header).encode(), np.uint8),
                     tables=np.frombuffer(tables, np.uint8),
                     level_start=np.asarray(lowered.level_start, np.int64),
                     **{f"h_{k}": v for k, v in arrays.items()}, **tensors)
    except OSError as e:
        return f"cannot write {path}: {e.strerror or e}"
    return None


def load(path: Path, ident: dict[str, Any], *,
         budget: int | None = None) -> tuple[PublicLowered | None, str]:
    """The entry at ``path`` if it is present and sound: ``(lowered, "hit")``, else
    ``(None, why)`` with ``why`` one of ``"missing"``, ``"stale ..."``, ``"corrupt ..."``.

    Raises:
      MemoryBudgetError: the cached game is larger than ``budget`` allows.
    """
    if not path.is_file():
        return None, "missing"
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(bytes(z["header"]).decode("utf-8"))
            if header.get("format") != FORMAT or header.get("identity") != ident:
                return None, "stale (another format, game version or jaxcfr version)"
            size = PublicSize(*header["size"])
            if budget is not None:
                check_public_budget(size, budget, what="in the cached game")
            tables_bytes = bytes(z["tables"])
            arrays = {k: z[f"h_{k}"] for k in ("node_kind", "weights_0", "weights_1",
                                               "compatible")}
            if _host_digest(tables_bytes, arrays) != header["host_sha256"]:
                return None, "corrupt (host tables do not match their checksum)"
            tensors = PublicTensors(*(z[f"t_{f}"] for f in PublicTensors._fields))
            level_start = tuple(int(x) for x in z["level_start"])
        t = _plain_loads(tables_bytes)
        hands = HandInfo(t["hand_labels"], (arrays["weights_0"], arrays["weights_1"]),
                         t["cards"], arrays["compatible"], t["deal_total"])
        lowered = PublicLowered(tensors, level_start, hands, t["node_action"],
                                arrays["node_kind"], t["node_actions"], t["constant_sum"],
                                t["nash_value"], t["name"], t["ranked"], t["widths"])
        if fingerprint(lowered) != header["fingerprint"]:
            return None, "corrupt (tensors do not match their fingerprint)"
        if lowered.public_size != size or len(lowered.node_action) != size.nodes:
            return None, "corrupt (sizes do not match the header)"
    except GameError:
        raise
    except Exception as e:  # noqa: BLE001 - anything unreadable is a corrupt entry
        return None, f"corrupt ({type(e).__name__}: {e})"
    return lowered, "hit"


def lower_public_cached(text: str, game: Any, directory: Path,
                        lower_fn: Callable[[Any], PublicLowered], *, name: str,
                        terminals: str = "auto", memory_budget: int | None = None,
                        log: Log | None = None) -> tuple[PublicLowered, str]:
    """Game string ``text`` (loaded: ``game``) lowered: from the cache in ``directory``
    when a sound entry is there, else by ``lower_fn(game)``, then stored.

    Returns ``(lowered, status)``: ``status`` is ``"hit: PATH"``, ``"stored: PATH"`` or
    ``"not cached: WHY"``; ``log`` gets the same news as one-line messages.
    """
    say = log or (lambda msg: None)
    ident = public_identity(text, game, terminals=terminals)
    if ident is None:
        return lower_fn(game), "not cached: the game string names no versioned code"
    path = entry_path(directory, ident)
    budget = default_memory_budget() if memory_budget is None else int(memory_budget)
    start = time.perf_counter()
    lowered, why = load(path, ident, budget=budget)
    if lowered is not None:
        say(f"loaded {lowered.num_nodes:,} public nodes from the cache in "
            f"{time.perf_counter() - start:.2f} s ({path})")
        return dataclasses.replace(lowered, name=name), f"hit: {path}"
    if why != "missing":
        say(f"cache entry {path.name} is {why}: lowering again")
    lowered = lower_fn(game)
    problem = store(path, ident, lowered)
    say(f"not cached: {problem}" if problem else f"cached in {path}")
    return lowered, f"not cached: {problem}" if problem else f"stored: {path}"
