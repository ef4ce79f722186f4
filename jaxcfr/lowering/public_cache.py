"""The cache of lowered public trees on disk: a second run of the same public game loads it.

The public-tree twin of :mod:`jaxcfr.lowering.cache`, with its directory, its switches
(``JAXCFR_NO_CACHE=1``, ``cache=False``, ``--no-cache``) and its rules of trust; an entry
is ``DIR/public-<Class>-<key>.npz``. The key is the sha256 of:

* the game: the loaded :class:`~jaxcfr.game.public.PublicGame`'s class (module and
  name), the game string's parameters with the defaults filled in, and the sha256 of
  the source files of its module's folder (the game's code and the modules beside it,
  such as a hold'em spot's cards and evaluator);
* the lowering: :data:`FORMAT_VERSION`, jaxcfr's version, the sha256 of the modules
  that decide the tables (:data:`_SOURCES`), ``terminals``, the float type and whether
  merged chance outcomes are merged (``merges``: a stack walks every outcome).

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

import datetime
import functools
import hashlib
import inspect
import os
import pickle
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from jaxcfr.game.contract import GameError
from jaxcfr.game.public_contract import HandInfo
from jaxcfr.game.registry import parse_game_string
from jaxcfr.lowering.cache import (dist_version, entry_file, plain_loads,
                                   read_entry, sources_digest, through_cache, write_entry)
from jaxcfr.lowering.public import (STATE_TABLES, PublicLowered, PublicSize,
                                    check_public_budget)
from jaxcfr.tensors import PublicTensors, fingerprint

__all__ = ["FORMAT", "FORMAT_VERSION", "public_identity", "entry_path", "load", "store",
           "lower_public_cached"]

FORMAT = "jaxcfr-public-tree"
#: Bumped whenever the stored layout changes (entries of other versions are stale).
FORMAT_VERSION = 5          # 4: the rows' legal actions and players per decision (2026-12-06)
                            # 5: each decision's rows its player's hands (decision_row,
                            #    row_space; 2026-12-07)
_PACKAGE = Path(__file__).resolve().parents[1]
#: jaxcfr sources that decide a public tree's tables (their digest is part of every key).
_SOURCES = ("game/contract.py", "game/public.py", "game/public_values.py",
            "game/public_contract.py", "lowering/public.py", "tensors.py")

Log = Callable[[str], None]


def public_identity(text: str, game: Any, *, terminals: str = "auto",
                    dtype: Any = np.float64, merges: bool = True,
                    outcome_steps: int = 0) -> dict[str, Any] | None:
    """The key's fields of game string ``text``, loaded as the PublicGame ``game``;
    ``None`` when it cannot be cached (its class has no source file, or the string's
    parameters do not bind to it). ``outcome_steps`` (``lower_public``'s) is a field
    only where it is not 0, so the keys of games lowered without it stay as they were."""
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
                         "source_sha256": sources_digest(folder)},
                "format": FORMAT_VERSION, "jaxcfr": dist_version("jaxcfr"),
                "lowering_sha256": sources_digest([_PACKAGE / s for s in _SOURCES]),
                "terminals": terminals, "dtype": np.dtype(dtype).str,
                "merges": bool(merges),
                **({"outcome_steps": int(outcome_steps)} if outcome_steps and merges
                   else {})}
    except (GameError, OSError, TypeError, ValueError):
        return None


def entry_path(directory: str | os.PathLike, ident: dict[str, Any]) -> Path:
    """``DIR/public-<Class>-<key>.npz``."""
    return entry_file(directory, ident["game"]["name"], ident, prefix="public-")


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
        "ranked": bool(lowered.ranked), "widths": tuple(lowered.widths),
        "merged": tuple(lowered.merged),
        "merge_renaming": tuple(lowered.merge_renaming)},
        pickle.HIGHEST_PROTOCOL)
    try:
        plain_loads(tables)
    except pickle.UnpicklingError as e:
        return f"its labels are not plain Python values ({e})"
    arrays = _host_arrays(lowered)
    header = {"format": FORMAT, "identity": ident, "fingerprint": fingerprint(lowered),
              "host_sha256": _host_digest(tables, arrays),
              "size": list(lowered.public_size),
              "created": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    tensors = {f"t_{f}": np.asarray(getattr(lowered.tensors, f))
               for f in PublicTensors._fields}
    return write_entry(path, header, tables,
                       {"level_start": np.asarray(lowered.level_start, np.int64),
                        **{f"h_{k}": v for k, v in arrays.items()}, **tensors})


def load(path: Path, ident: dict[str, Any], *, budget: int | None = None,
         state_tables: int = STATE_TABLES, float_bytes: int = 4
         ) -> tuple[PublicLowered | None, str]:
    """The entry at ``path`` if it is present and sound: ``(lowered, "hit")``, else
    ``(None, why)`` with ``why`` one of ``"missing"``, ``"stale ..."``, ``"corrupt ..."``.

    Raises:
      MemoryBudgetError: the cached game is larger than ``budget`` allows.
    """
    def read(z, header):
        size = PublicSize(*header["size"])
        if budget is not None:
            check_public_budget(size, budget, what="in the cached game",
                                state_tables=state_tables, float_bytes=float_bytes)
        tables_bytes = bytes(z["tables"])
        arrays = {k: z[f"h_{k}"] for k in ("node_kind", "weights_0", "weights_1",
                                           "compatible")}
        if _host_digest(tables_bytes, arrays) != header["host_sha256"]:
            return None, "corrupt (host tables do not match their checksum)"
        tensors = PublicTensors(*(z[f"t_{f}"] for f in PublicTensors._fields))
        level_start = tuple(int(x) for x in z["level_start"])
        t = plain_loads(tables_bytes)
        hands = HandInfo(t["hand_labels"], (arrays["weights_0"], arrays["weights_1"]),
                         t["cards"], arrays["compatible"], t["deal_total"])
        lowered = PublicLowered(tensors, level_start, hands, t["node_action"],
                                arrays["node_kind"], t["node_actions"], t["constant_sum"],
                                t["nash_value"], t["name"], t["ranked"], t["widths"],
                                t.get("merged", ()), t.get("merge_renaming", ()))
        if fingerprint(lowered) != header["fingerprint"]:
            return None, "corrupt (tensors do not match their fingerprint)"
        if lowered.public_size != size or len(lowered.node_action) != size.nodes:
            return None, "corrupt (sizes do not match the header)"
        return lowered, "hit"
    return read_entry(path, ident, read, fmt=FORMAT)


def lower_public_cached(text: str, game: Any, directory: Path,
                        lower_fn: Callable[[Any], PublicLowered], *, name: str,
                        terminals: str = "auto", memory_budget: int | None = None,
                        log: Log | None = None, merges: bool = True,
                        outcome_steps: int = 0, state_tables: int = STATE_TABLES,
                        float_bytes: int = 4
                        ) -> tuple[PublicLowered, str]:
    """Game string ``text`` (loaded: ``game``) lowered: from the cache in ``directory``
    when a sound entry is there, else by ``lower_fn(game)``, then stored.

    Returns ``(lowered, status)``: ``status`` is ``"hit: PATH"``, ``"stored: PATH"`` or
    ``"not cached: WHY"``; ``log`` gets the same news as one-line messages.
    """
    ident = public_identity(text, game, terminals=terminals, merges=merges,
                            outcome_steps=outcome_steps)
    if ident is None:
        return lower_fn(game), "not cached: the game string names no versioned code"
    return through_cache(entry_path(directory, ident), ident, lambda: lower_fn(game),
                         load=functools.partial(load, state_tables=state_tables,
                                                float_bytes=float_bytes),
                         store=store, name=name, memory_budget=memory_budget,
                         log=log, unit="public nodes")
