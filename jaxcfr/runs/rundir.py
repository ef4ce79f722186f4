"""The run directory: where a training run keeps its config, metrics and artefacts.

Layout::

    <run>/config.toml        the resolved config (what --resume reads back)
    <run>/metrics.jsonl      one JSON object per evaluation
    <run>/checkpoints/       ckpt-<iteration>.npz + .json, and a `latest` pointer
    <run>/profile.npz/.json  the final average profile (the best member of a batch)
    <run>/profiles/          every member's profile (batched runs only)
    <run>/convergence.png    metric against iterations, log-log
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any, Iterable

from jaxcfr.atomic import atomic_write_text
from jaxcfr.serialize import jsonable

__all__ = ["RunDir", "default_run_dir", "jsonable"]


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
    """Paths of one run directory and its metrics file."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.config = self.path / "config.toml"
        self.metrics = self.path / "metrics.jsonl"
        self.checkpoints = self.path / "checkpoints"
        self.profile = self.path / "profile.npz"
        self.profiles = self.path / "profiles"
        self.plot = self.path / "convergence.png"

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @classmethod
    def create(cls, path: str | os.PathLike) -> "RunDir":
        """Make a new run directory; refuse one that already holds a run."""
        run = cls(path)
        if run.config.exists() or run.checkpoints.exists():
            raise FileExistsError(f"{run.path} already holds a run; continue it with "
                                  f"--resume {run.path} or choose another --out")
        run.checkpoints.mkdir(parents=True, exist_ok=True)
        return run

    @classmethod
    def existing(cls, path: str | os.PathLike) -> "RunDir":
        run = cls(path)
        if not run.path.is_dir():
            raise FileNotFoundError(f"no run directory {run.path}")
        if not run.checkpoints.is_dir():
            raise FileNotFoundError(f"{run.path} has no checkpoints/ (not a run directory?)")
        return run

    # -- metrics -----------------------------------------------------------
    def read_metrics(self, upto: int | None = None) -> list[dict[str, Any]]:
        """Records of ``metrics.jsonl`` (those with ``iteration <= upto``); bad lines skipped."""
        out = []
        try:
            lines = self.metrics.read_text(encoding="utf-8").splitlines()
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
        """Replace ``metrics.jsonl`` atomically."""
        text = "".join(json.dumps(jsonable(r)) + "\n" for r in records)
        atomic_write_text(self.metrics, text)

    def append_metrics(self, record: dict[str, Any]) -> None:
        with open(self.metrics, "a", encoding="utf-8") as f:
            f.write(json.dumps(jsonable(record)) + "\n")
            f.flush()
