"""Checkpoints: solver-state arrays in ``.npz`` plus a JSON sidecar, written atomically.

Layout of a checkpoint directory::

    ckpt-0000001000.npz    the SolverState arrays (np.savez, one array per field)
    ckpt-0000001000.json   sidecar: format, version, iteration, game fingerprint,
                           config, and the sha256 of the .npz
    latest                 the stem of the newest checkpoint (one line, for tools)

Every file is written to a temporary file in the same directory, fsynced, then
``os.replace``d into place, so a crash leaves either the old file or the new
one. The sidecar is written after the ``.npz`` and carries its sha256, so a torn
pair (new data, old sidecar, or a truncated file) is detected on load; the
``latest`` pointer moves last. Loading takes the newest *valid* checkpoint,
falling back to an older one when the newest is corrupt.

Example::

    >>> from jaxcfr.runs import checkpoint
    >>> path = checkpoint.save("run/checkpoints", {"regret": r, ...}, iteration=100,
    ...                        fingerprint=checkpoint.fingerprint(lowered), config={})
    >>> ckpt = checkpoint.load(path, fingerprint=checkpoint.fingerprint(lowered))
"""

from __future__ import annotations

import datetime
import hashlib
import io
import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from jaxcfr._util.atomic import atomic_write_bytes, atomic_write_text
from jaxcfr._util.serialize import jsonable
from jaxcfr._util.reading import read_bytes
from jaxcfr.tensors import fingerprint  # noqa: F401 - re-exported: the lowered game's digest

__all__ = ["FORMAT", "FORMAT_VERSION", "READABLE_VERSIONS", "CheckpointError",
           "CheckpointCorruptError", "Checkpoint", "fingerprint", "save", "load", "load_latest",
           "list_checkpoints"]

FORMAT = "jaxcfr-checkpoint"
#: Bumped whenever the layout changes; versions not in :data:`READABLE_VERSIONS` are refused.
#: 2: the lowered tensors lost ``abstraction_mask`` (so the game's fingerprint changed), and
#: exact runs keep ``strategy_sum`` as a sum of weighted contributions (as sampled runs
#: did), not a decayed one.
#: 3: the solver state gained ``strategy_error``, the compensation of ``strategy_sum``
#: (``jaxcfr.kernels.compensated``).
#: 4: the sidecar records the run's parameter set by name (``parameters``: every traced
#: parameter of the solver's parts and the seed, defaults included), which a resume must
#: match.
#: 5: the state holds only the tables its solver reads (``jaxcfr.Solver.tables``): no
#: ``prediction`` under a non-predictive rule, no ``strategy_error`` where the solver keeps
#: plain sums (``postflop-dcfr``).
FORMAT_VERSION = 5
#: Versions :func:`load` reads. A version 2 checkpoint is read as version 3 with
#: ``strategy_error`` zero (exactly what it was: a sum without its compensation; the run
#: goes on compensated from there); a version 3 one as version 4 without ``parameters``
#: (its config names the parameters it set; the others are taken at today's defaults); a
#: version 2 to 4 one with all four tables as they are: a resume keeps those its solver
#: reads (``jaxcfr.Solver.state_of``: an unread prediction is zero and dropped, an unkept
#: compensation added into the sums).
READABLE_VERSIONS = (2, 3, 4, 5)
LATEST = "latest"
_STEM = re.compile(r"^ckpt-(\d{10})$")


class CheckpointError(ValueError):
    """A checkpoint cannot be used: corrupt, another game, another format version."""


class CheckpointCorruptError(CheckpointError):
    """A checkpoint's files are unreadable, truncated or do not match each other."""


class Checkpoint(NamedTuple):
    """A loaded checkpoint."""
    arrays: dict[str, np.ndarray]   # field name -> array (e.g. SolverState fields)
    meta: dict[str, Any]            # the sidecar
    path: Path                      # the .npz

    @property
    def iteration(self) -> int:
        return int(self.meta["iteration"])


# -- save -----------------------------------------------------------------------
def save(directory: str | os.PathLike, arrays: Mapping[str, Any], *, iteration: int,
         fingerprint: str, config: Mapping[str, Any] | None = None,
         extra: Mapping[str, Any] | None = None, keep: int = 3) -> Path:
    """Write checkpoint ``ckpt-<iteration>`` into ``directory``; keep the newest ``keep``.

    Args:
      arrays: name -> array (a NamedTuple's ``_asdict()`` works); any dtype but object.
      iteration: iterations done (names the files).
      fingerprint: :func:`fingerprint` of the lowered game.
      config: the resolved run config (a TOML-shaped dict), stored in the sidecar.
      extra: more JSON-able sidecar entries (e.g. ``wall_seconds``, ``parameters``: the
        run's parameter set by name).
    Returns:
      The ``.npz`` path.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"ckpt-{int(iteration):010d}"
    host = {k: np.asarray(v) for k, v in arrays.items()}
    bad = _non_finite(host)
    if bad:
        raise CheckpointError(f"not writing checkpoint {stem}: {bad} holds non-finite values "
                              "(NaN or inf): the run diverged; the previous checkpoint is kept")
    buf = io.BytesIO()
    np.savez(buf, **host)
    data = buf.getvalue()
    atomic_write_bytes(directory / f"{stem}.npz", data)
    meta = {
        "format": FORMAT, "version": FORMAT_VERSION, "iteration": int(iteration),
        "fingerprint": fingerprint, "npz": f"{stem}.npz",
        "npz_sha256": hashlib.sha256(data).hexdigest(),
        "fields": {k: {"shape": list(v.shape), "dtype": v.dtype.str} for k, v in host.items()},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": dict(config or {}),
    }
    meta.update(extra or {})
    atomic_write_text(directory / f"{stem}.json", json.dumps(meta, indent=1) + "\n")
    atomic_write_text(directory / LATEST, stem + "\n")
    _prune(directory, keep, current=stem)
    return directory / f"{stem}.npz"


def _prune(directory: Path, keep: int, current: str) -> None:
    stems = [s for _, s in list_checkpoints(directory)]
    old = [s for s in stems if s != current][: max(0, len(stems) - max(1, keep))]
    for stem in old:
        for suffix in (".json", ".npz"):          # sidecar first: a lone .npz is ignored
            try:
                os.unlink(directory / f"{stem}{suffix}")
            except FileNotFoundError:
                pass
    for tmp in directory.glob(".*.tmp"):          # left behind by a crash mid-write
        try:
            tmp.unlink()
        except OSError:
            pass


# -- load -----------------------------------------------------------------------
def list_checkpoints(directory: str | os.PathLike) -> list[tuple[int, str]]:
    """``(iteration, stem)`` of every checkpoint with a sidecar, oldest first."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    out = []
    for p in directory.glob("ckpt-*.json"):
        m = _STEM.match(p.stem)
        if m:
            out.append((int(m.group(1)), p.stem))
    return sorted(out)


def load(path: str | os.PathLike, *, fingerprint: str | None = None,
         game: Mapping[str, Any] | None = None) -> Checkpoint:
    """Load and verify one checkpoint (``.npz`` or ``.json`` path, or the stem).

    ``game``: the ``[game]`` section of the config resuming (TOML-shaped); a checkpoint of
    another fingerprint then names the keys that differ from the one it records.

    Raises:
      CheckpointCorruptError: a file is missing, unreadable, truncated, or the
        ``.npz`` does not match its sidecar's sha256.
      CheckpointError: another format or version; with ``fingerprint`` given, a
        checkpoint of another game.
    """
    path = Path(path)
    stem = path.name[:-len(path.suffix)] if path.suffix in (".npz", ".json") else path.name
    sidecar = path.parent / f"{stem}.json"
    npz = path.parent / f"{stem}.npz"
    try:
        meta = json.loads(read_bytes(sidecar).decode("utf-8"))   # (bounded: a device)
    except FileNotFoundError:
        raise CheckpointCorruptError(
            f"checkpoint {npz}: sidecar {sidecar.name} is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointCorruptError(f"checkpoint {npz}: sidecar {sidecar.name} is unreadable "
                                     f"({e}); the file is corrupted") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{sidecar} is not a jaxcfr checkpoint sidecar (format "
                              f"{meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("version") not in READABLE_VERSIONS:
        raise CheckpointError(f"checkpoint {npz} has format version {meta.get('version')!r}; "
                              f"this jaxcfr reads versions "
                              f"{', '.join(map(str, READABLE_VERSIONS))} only (it was written "
                              f"by another jaxcfr, whose solver state means something else: "
                              f"start the run afresh, or resume it with that version)")
    try:
        data = read_bytes(npz)
    except FileNotFoundError:
        raise CheckpointCorruptError(f"checkpoint {npz} is missing (its sidecar exists)") from None
    except OSError as e:
        raise CheckpointCorruptError(f"checkpoint {npz} is unreadable: {e.strerror or e}") \
            from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != meta.get("npz_sha256"):
        raise CheckpointCorruptError(
            f"checkpoint {npz} does not match its sidecar (sha256 {digest[:12]}... != "
            f"{str(meta.get('npz_sha256'))[:12]}...): the file is corrupted or was not "
            "completely written")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise CheckpointCorruptError(f"checkpoint {npz} is unreadable: {e}") from None
    fields = meta.get("fields", {})
    if set(fields) != set(arrays):
        raise CheckpointCorruptError(f"checkpoint {npz} holds arrays {sorted(arrays)} but its "
                                     f"sidecar lists {sorted(fields)}")
    bad = _non_finite(arrays)
    if bad:
        # save() never writes one: the file was altered (its checksum recomputed).
        raise CheckpointCorruptError(f"checkpoint {npz}: {bad} holds non-finite values (NaN or "
                                     "inf), which jaxcfr never writes")
    arrays, meta = _upgrade(arrays, meta)
    if fingerprint is not None and meta.get("fingerprint") != fingerprint:
        recorded = meta.get("config", {}).get("game", {})
        changed = _game_changes(recorded, game) if game is not None else []
        if changed:
            raise CheckpointError(
                f"checkpoint {npz} was written for another game: {'; '.join(changed)}; "
                "resume with the config it was written with, or start a new run")
        raise CheckpointError(
            f"checkpoint {npz} was written for another game ({_game_name(recorded)}; fingerprint "
            f"{str(meta.get('fingerprint'))[:12]}... != {fingerprint[:12]}... of this game; "
            "where the config is the same, the game now lowers to other tensors: its code or "
            "jaxcfr's changed since, e.g. stacks of turn boards are merged since 2026-12-06, "
            "and a public tree's decisions have rows for their own player's hands alone "
            "since 2026-12-07 (fewer rows: the solver state's tables changed shape); start a "
            "new run)")
    return Checkpoint(arrays, meta, npz)


def _upgrade(arrays: dict[str, np.ndarray], meta: dict[str, Any]
             ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A verified checkpoint of an older readable version as the current version."""
    version = meta["version"]
    if version == 2 and "strategy_sum" in arrays and "strategy_error" not in arrays:
        arrays = dict(arrays, strategy_error=np.zeros_like(arrays["strategy_sum"]))
        fields = dict(meta.get("fields", {}))
        fields["strategy_error"] = fields.get("strategy_sum")
        meta = dict(meta, fields=fields)
    if version != FORMAT_VERSION:          # 2, 3: no parameter record (meta["parameters"]);
                                           # 2 to 4: every table (Solver.state_of keeps
                                           # those its solver reads)
        meta = dict(meta, version=FORMAT_VERSION, upgraded_from=version)
    return arrays, meta


def _non_finite(arrays: Mapping[str, np.ndarray]) -> str | None:
    """The name of the first floating-point array holding NaN or inf, else None."""
    for name, a in arrays.items():
        if np.issubdtype(a.dtype, np.floating) and not np.isfinite(a).all():
            return name
    return None


def _game_changes(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``game.KEY (X in the checkpoint, Y now)`` for every key of the ``[game]`` sections
    that differs (a key one of them lacks is its default: a checkpoint written before the
    key existed)."""
    from jaxcfr.runs.config import key_default
    out = []
    for k in sorted(set(recorded) | set(now)):
        x, y = (s.get(k, key_default(f"game.{k}")) for s in (recorded, now))
        if jsonable(x) != jsonable(y):
            out.append(f"game.{k} ({x!r} in the checkpoint, {y!r} now)")
    return out


def _game_name(game: Mapping[str, Any]) -> str:
    if "names" in game:
        return "games " + ", ".join(map(str, game["names"]))
    if "boards" in game:                  # a spot on many boards: the boards tell them apart
        return f"game {game.get('name', '?')} on game.boards {game['boards']!r}"
    return f"game {game.get('name', '?')}"


def load_latest(directory: str | os.PathLike, *, fingerprint: str | None = None,
                warn: Callable[[str], None] | None = None,
                game: Mapping[str, Any] | None = None) -> Checkpoint | None:
    """The newest valid checkpoint in ``directory`` (``None`` when there is none).

    Checkpoints are tried newest first, each verified (sidecar, sha256 of the
    ``.npz``); corrupt ones are skipped and reported through ``warn``. A complete
    pair newer than the ``latest`` pointer (a crash between the sidecar and the
    pointer) is valid and used. Another game or format version raises at once:
    that is not something to fall back from (``game``: as :func:`load`'s).

    Raises:
      CheckpointError: checkpoints exist but none is valid, or one is of another
        game / format version.
    """
    directory = Path(directory)
    stems = [s for _, s in reversed(list_checkpoints(directory))]
    if not stems:
        return None
    problems = []
    for stem in stems:
        try:
            return load(directory / stem, fingerprint=fingerprint, game=game)
        except CheckpointCorruptError as e:
            problems.append(str(e))
            if warn is not None:
                warn(f"skipping corrupt checkpoint: {e}")
    raise CheckpointCorruptError(f"no valid checkpoint in {directory}: " + "; ".join(problems))
