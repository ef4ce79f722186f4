"""The plan of ``benchmarks/gpu_check.py``: one budget shared by sections, and the result files.

Nothing here touches a device: the budget, the writer and the markdown are plain Python
(files are replaced with jaxcfr's atomic writer), so the test suite checks them on any
machine (``tests/test_gpu_check.py``).

* :class:`Budget`: the whole run's seconds, counted from the script's start. A section
  that starts gets ``share = (left - reserve) * weight / (its weight + the weights of the
  sections after it)``: time a section leaves unused rolls over to the later ones, and
  the reserve is kept for the last files.
* :class:`SectionClock`: one section's deadline; :meth:`SectionClock.affords` says whether
  an item expected to take ``seconds`` still fits (items of a section are ordered so that
  the most wanted come first).
* :class:`Results`: every figure is appended to ``DIR/figures.jsonl`` (flushed and fsynced
  line by line) the moment it is measured, and the section's file ``DIR/<section>.json``
  and the table ``DIR/gpu.md`` are rewritten atomically after each figure and when the
  section ends: a run killed at any moment keeps everything it measured.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from jaxcfr._util.atomic import atomic_write_text  # noqa: E402

__all__ = ["Budget", "SectionClock", "Results", "Column", "format_value"]


class Budget:
    """``total`` seconds from ``start`` (``clock()`` values), ``reserve`` of them kept back."""

    def __init__(self, total: float, *, start: float | None = None, reserve: float = 0.0,
                 clock: Callable[[], float] = time.monotonic):
        if not total > 0:
            raise ValueError(f"the budget must be positive, got {total!r}")
        self.total, self.reserve, self.clock = float(total), float(reserve), clock
        self.start = clock() if start is None else float(start)

    def spent(self) -> float:
        return self.clock() - self.start

    def left(self) -> float:
        return self.total - self.spent()

    def section(self, name: str, weight: float, weights_after: float) -> "SectionClock":
        """The clock of section ``name`` starting now (``weights_after``: the weights of the
        selected sections still to come after it)."""
        usable = max(0.0, self.left() - self.reserve)
        share = usable * weight / max(weight + weights_after, 1e-9)
        return SectionClock(name, share, self.clock() + share, self)


@dataclasses.dataclass
class SectionClock:
    """One section's share of the budget; items measured in it report their durations."""
    name: str
    share: float
    deadline: float
    budget: Budget
    durations: dict = dataclasses.field(default_factory=dict)   # key -> last item's seconds

    def left(self) -> float:
        return self.deadline - self.budget.clock()

    def affords(self, key: str | None = None, minimum: float = 0.0) -> bool:
        """Whether an item still fits: its expected seconds (the last item with the same
        ``key``, else the mean of this section's items so far, at least ``minimum``) are
        within the time left. The first item of a section always starts if time is left."""
        expected = self.durations.get(key)
        if expected is None:
            done = list(self.durations.values())
            expected = sum(done) / len(done) if done else 0.0
        return self.left() > max(expected, minimum)

    def done(self, key: str, seconds: float) -> None:
        self.durations[key] = seconds

    def why_not(self, key: str | None = None) -> str:
        """The reason recorded for an item skipped because the share is spent."""
        expected = self.durations.get(key)
        hint = f", a like item took {expected:.1f} s" if expected is not None else ""
        return (f"the section's share of the budget was spent ({self.left():.1f} s of "
                f"{self.share:.0f} s left{hint})")


@dataclasses.dataclass(frozen=True)
class Column:
    """A column of a section's markdown table: its header, the figure's key, a format."""
    header: str
    key: str
    fmt: str = "g4"       # g4, f2, pct, int, x (a ratio, "3.2x"), text


def format_value(value: Any, fmt: str) -> str:
    """A figure's value as a table cell (``–`` for missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if fmt == "text" or isinstance(value, str):
        return str(value)
    if fmt == "int":
        return f"{int(round(value)):,}"
    if fmt == "pct":
        return f"{100 * value:.0f}%"
    if fmt == "x":
        return f"{value:.2f}x" if abs(value) < 100 else f"{value:,.0f}x"
    if fmt.startswith("f"):
        return f"{value:.{int(fmt[1:])}f}"
    digits = int(fmt[1:]) if fmt.startswith("g") and fmt[1:].isdigit() else 4
    if value != 0 and (abs(value) >= 10 ** digits or abs(value) < 1e-3):
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}"


class Results:
    """The figures of one run, written as they come (see the module's docstring).

    ``common``: fields every figure carries (device, date, command, ...); ``columns``:
    section -> its table's :class:`Column` list; ``titles``: section -> a heading.
    """

    def __init__(self, out: str | os.PathLike, common: dict[str, Any],
                 columns: dict[str, list[Column]], titles: dict[str, str] | None = None,
                 header: Callable[["Results"], list[str]] | None = None):
        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.common = dict(common)
        self.columns, self.titles = columns, titles or {}
        self.header = header
        self.sections: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self._lines = open(self.out / "figures.jsonl", "a", encoding="utf-8")

    # -- sections ------------------------------------------------------------------------
    def start(self, name: str, share: float) -> None:
        self.sections[name] = {"section": name, "status": "running", "share_s": share,
                               "started_s": None, "spent_s": 0.0, "figures": [],
                               "skipped": [], "error": None, **self.common}
        self.order.append(name)
        self._started = time.monotonic()
        self._write(name)

    def finish(self, name: str, status: str, error: str | None = None) -> None:
        s = self.sections[name]
        s.update(status=status, error=error, spent_s=time.monotonic() - self._started)
        self._write(name)

    def not_selected(self, name: str, reason: str, keep_file: bool = False) -> None:
        """A section this run did not measure (the budget spent, or left out): named in
        ``gpu.md``; its file is written unless ``keep_file`` (a section left out by choice
        keeps the file an earlier run into the same directory wrote)."""
        self.sections[name] = {"section": name, "status": "not run", "reason": reason,
                               "figures": [], "skipped": [], "error": None, **self.common}
        self.order.append(name)
        if keep_file:
            atomic_write_text(self.out / "gpu.md", self.markdown())
        else:
            self._write(name)

    # -- figures -------------------------------------------------------------------------
    def figure(self, section: str, **fields) -> dict[str, Any]:
        """Record one figure of ``section`` now: JSON line, section file and table."""
        record = {**self.common, "section": section, **fields}
        record = json.loads(json.dumps(record, default=_plain))
        self.sections[section]["figures"].append(record)
        self._lines.write(json.dumps(record) + "\n")
        self._lines.flush()
        os.fsync(self._lines.fileno())
        self._write(section)
        return record

    def skip(self, section: str, item: str, reason: str) -> None:
        """An item of ``section`` not measured, and why."""
        self.sections[section]["skipped"].append({"item": item, "reason": reason})
        self._write(section)

    def update_common(self, **fields) -> None:
        """Fields every later figure carries (and every section file from now on)."""
        self.common.update(fields)
        for name in self.order:
            if self.sections[name]["status"] != "not run":
                self.sections[name].update(fields)
                self._write(name)

    def close(self) -> None:
        self._lines.close()

    # -- files ---------------------------------------------------------------------------
    def _write(self, section: str) -> None:
        atomic_write_text(self.out / f"{section}.json",
                          json.dumps(self.sections[section], indent=1, default=_plain) + "\n")
        atomic_write_text(self.out / "gpu.md", self.markdown())

    def markdown(self) -> str:
        """Every section's table, skips and errors: ready to paste into docs/benchmarks.md."""
        lines = list(self.header(self) if self.header else [])
        for name in self.order:
            s = self.sections[name]
            lines += ["", f"### {self.titles.get(name, name)}", ""]
            if s["status"] == "not run":
                lines.append(f"Not run: {s.get('reason', '')}.")
                continue
            columns = self.columns.get(name, [])
            if s["figures"] and columns:
                lines.append("| " + " | ".join(c.header for c in columns) + " |")
                lines.append("|" + "---|" * len(columns))
                for f in s["figures"]:
                    lines.append("| " + " | ".join(format_value(f.get(c.key), c.fmt)
                                                   for c in columns) + " |")
            notes = [f["note"] for f in s["figures"] if f.get("note")]
            for note in dict.fromkeys(notes):
                lines.append(f"\n{note}")
            status = s["status"] if s["status"] != "done" else \
                f"done in {s['spent_s']:.0f} s of a {s['share_s']:.0f} s share"
            lines.append(f"\n*{status}*")
            for skip in s["skipped"]:
                lines.append(f"- skipped {skip['item']}: {skip['reason']}")
            if s["error"]:
                lines.append(f"- error: `{s['error'].strip().splitlines()[-1]}` "
                             f"(the whole message is in {name}.json)")
        return "\n".join(lines).lstrip("\n") + "\n"


def _plain(value):
    """JSON for NumPy scalars and arrays (and anything else, as its string)."""
    for attr in ("item", "tolist"):
        if hasattr(value, attr):
            try:
                return getattr(value, "tolist" if getattr(value, "ndim", 0) else attr)()
            except (TypeError, ValueError):
                pass
    return str(value)
