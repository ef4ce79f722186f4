"""The run directory: where a training run keeps its config, metrics and artefacts.

Layout::

    <run>/config.toml        the resolved config (what --resume reads back)
    <run>/lock.json          the node lock of a locked run (solver.lock), a copy
    <run>/metrics.jsonl      one JSON object per evaluation
    <run>/checkpoints/       ckpt-<iteration>.npz + .json, and a `latest` pointer
    <run>/profile.npz/.json  the final average profile (the best member of a batch)
    <run>/profiles/          every member's profile (batched runs only)
    <run>/convergence.png    metric against iterations, log-log
    <run>/.lock              held by the process that runs it (one at a time)

A run directory is created once the run's game is lowered (a game that fails to load
leaves nothing behind). A directory without a checkpoint (a run stopped while it
compiled, or before its first checkpoint) holds nothing to lose: ``--resume`` starts it
from iteration 0, and a new run may take it over.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

from jaxcfr._util.atomic import atomic_write_text
from jaxcfr._util.serialize import jsonable
from jaxcfr._util.reading import read_bytes

try:
    import fcntl
except ImportError:  # Windows: no advisory locks (runs are not protected against each other)
    fcntl = None

__all__ = ["RunDir", "RunDirBusy", "default_run_dir", "jsonable", "RUN_ENTRIES"]

#: What a run directory may hold (anything else in a folder means it is someone else's).
RUN_ENTRIES = frozenset({"config.toml", "metrics.jsonl", "checkpoints", "profile.npz",
                         "profile.json", "profiles", "convergence.png", ".lock", "lock.json"})


#: What a run directory holds between its creation and its config (no run data yet).
_SKELETON = frozenset({"checkpoints", ".lock"})


class RunDirBusy(OSError):
    """Another process holds the run directory's lock."""


def default_run_dir(name: str, root: str | os.PathLike = "runs") -> Path:
    """``runs/<name>-<YYYYmmdd-HHMMSS>`` (with ``-2``, ``-3``... if taken)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(root) / f"{name}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


class RunDir:
    """Paths of one run directory and its metrics file; ``writer=False``: a process that
    only reads it (the metrics methods then write nothing)."""

    def __init__(self, path: str | os.PathLike, writer: bool = True):
        self.path = Path(path)
        self.writer = writer
        self.config = self.path / "config.toml"
        self.lock_file = self.path / "lock.json"     # solver.lock's copy (a locked run)
        self.metrics = self.path / "metrics.jsonl"
        self.checkpoints = self.path / "checkpoints"
        self.profile = self.path / "profile.npz"
        self.profiles = self.path / "profiles"
        self.plot = self.path / "convergence.png"

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def has_checkpoint(self) -> bool:
        """Whether ``checkpoints/`` holds a checkpoint (valid or not)."""
        return self.checkpoints.is_dir() and any(self.checkpoints.glob("ckpt-*.json"))

    def check_new(self) -> bool:
        """Check that a new run may use this path; return whether it holds a run to take over.

        Accepted: a path that does not exist, an empty directory, or a run directory
        without a checkpoint (nothing in it can be resumed beyond iteration 0).

        Raises:
          FileExistsError: the directory holds a run with checkpoints (continue it with
            ``--resume``), or files that are not a run's (they are not overwritten), or
            the path is a file.
        """
        if not self.path.exists():
            return False
        if not self.path.is_dir():
            raise FileExistsError(f"{self.path} is a file, not a directory: choose another "
                                  "--out")
        if self.has_checkpoint():
            raise FileExistsError(f"{self.path} already holds a run; continue it with "
                                  f"--resume {self.path} or choose another --out")
        entries = sorted(p.name for p in self.path.iterdir())
        foreign = [e for e in entries if e not in RUN_ENTRIES]
        if foreign or (not self.config.exists() and not set(entries) <= _SKELETON):
            shown = ", ".join((foreign or entries)[:5]) + (", ..." if len(foreign or entries) > 5
                                                          else "")
            raise FileExistsError(f"{self.path} is not empty and is not a run directory (it "
                                  f"holds {shown}): choose a new or empty directory for --out")
        return self.config.exists()

    @classmethod
    def create(cls, path: str | os.PathLike) -> "RunDir":
        """Make the directory (and ``checkpoints/``) for a run that :meth:`check_new` accepted."""
        run = cls(path)
        run.checkpoints.mkdir(parents=True, exist_ok=True)
        return run

    @classmethod
    def existing(cls, path: str | os.PathLike, writer: bool = True) -> "RunDir":
        """An existing run directory (one with a ``config.toml``), for ``--resume``."""
        run = cls(path, writer)
        if not run.path.exists():
            raise FileNotFoundError(f"no run directory {run.path}")
        if not run.path.is_dir():
            raise NotADirectoryError(f"{run.path} is a file; --resume takes a run directory "
                                     "(the --out of an earlier run)")
        if not run.config.is_file():
            raise FileNotFoundError(f"{run.path} is not a run directory (it has no config.toml); "
                                    "--resume takes the --out of an earlier run")
        if writer:
            run.checkpoints.mkdir(exist_ok=True)
        return run

    @contextlib.contextmanager
    def lock(self) -> Iterator["RunDir"]:
        """Hold ``.lock`` while the block runs: a second process gets :class:`RunDirBusy`.

        The lock is the operating system's (``flock``): it goes away with the process,
        however it ends, so a killed run never leaves a stale lock behind.
        """
        if fcntl is None:
            yield self
            return
        fd = os.open(self.path / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 64).decode("ascii", "replace").strip() or "?"
                raise RunDirBusy(f"{self.path} is in use by another process (pid {holder}); "
                                 "wait for it to finish or stop it first") from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield self
        finally:
            os.close(fd)

    # -- metrics -----------------------------------------------------------
    def read_metrics(self, upto: int | None = None) -> list[dict[str, Any]]:
        """Records of ``metrics.jsonl`` (those with ``iteration <= upto``); bad lines skipped."""
        out = []
        try:
            lines = read_bytes(self.metrics).decode("utf-8", "replace").splitlines()
        except FileNotFoundError:
            return out
        for line in lines:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue                      # a line torn by a crash
            if isinstance(rec, dict) and (upto is None or rec.get("iteration", 0) <= upto):
                out.append(rec)
        return out

    def write_metrics(self, records: Iterable[dict[str, Any]]) -> None:
        """Replace ``metrics.jsonl`` atomically (a reader writes nothing)."""
        if not self.writer:
            return
        text = "".join(json.dumps(jsonable(r)) + "\n" for r in records)
        atomic_write_text(self.metrics, text)

    def append_metrics(self, record: dict[str, Any]) -> None:
        if not self.writer:
            return
        with open(self.metrics, "a", encoding="utf-8") as f:
            f.write(json.dumps(jsonable(record)) + "\n")
            f.flush()
