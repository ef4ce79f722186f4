"""Blueprints: train on an abstracted game, lift the profile back, measure it in the full game.

:func:`train_abstracted` solves the abstracted game (an action abstraction, a
bucketing, or both) with :func:`jaxcfr.solve`, lifts the average profile and computes
its exact metrics in the full game with :func:`jaxcfr.evaluate`, by elimination and,
where the abstraction translates, by translation. Given several abstractions (or
bucketings) of one game it stacks them (:func:`jaxcfr.stack`) and trains them all in
one compiled run, so that they can be compared side by side (:func:`format_table`).

Example::

    >>> import jaxcfr
    >>> results = jaxcfr.train_abstracted(
    ...     "nolimit_leduc", ["bet_menu(fractions=[1.0])", "bet_menu(fractions=[0.5, 1.0])"],
    ...     iterations=500)
    >>> print(jaxcfr.format_table(results))     # sizes, full-game and in-abstraction metrics
    >>> results[1].profile.act(jaxcfr.load_game("nolimit_leduc"), rng=0)   # plays the real game
    >>> buckets = jaxcfr.train_abstracted("leduc_poker(ranks=13)", bucketing=[
    ...     "rank_buckets(buckets=4)", "rank_buckets(buckets=4, recall=False)"])
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

import numpy as np

from jaxcfr.api.solve import SolveResult, solve
from jaxcfr.game.abstraction import Abstracted, describe
from jaxcfr.game.bucketing import Bucketed, abstract_game, combine, is_bucketing
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import load_game
from jaxcfr.engine.loop import lower_reporting
from jaxcfr.lowering.stack import stack
from jaxcfr.profiles.lifting import as_abstraction, lifted_row
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.parameters import single_setting
from jaxcfr.tensors import LoweredGame

__all__ = ["train_abstracted", "AbstractedResult", "format_table"]


@dataclasses.dataclass(repr=False)
class AbstractedResult:
    """One abstraction's blueprint (what :func:`train_abstracted` returns per abstraction).

    Attributes:
      abstraction: the abstraction object (action abstraction, bucketing, or both:
        :func:`jaxcfr.game.bucketing.combine`); ``label`` its text.
      lowered: the abstracted game, lowered; ``full``: the full game, lowered.
      profile: the lifted profile: every information set of the full game (by
        translation where the abstraction translates, else by elimination).
      abstract_profile: the average profile of the abstracted game (abstracted order).
      abstract_final: the solve's final record for this member (metrics inside the
        abstraction: its best responses may only use kept actions).
      row: this abstraction's row of :func:`format_table` (see :func:`lifted_row`).
      solve: the :class:`jaxcfr.SolveResult` (shared by every member of a batch).
      lower_seconds: time to lower this abstracted game.
    """
    abstraction: Any
    label: str
    lowered: LoweredGame
    full: LoweredGame
    profile: Profile
    abstract_profile: Profile
    abstract_final: dict[str, Any]
    row: dict[str, Any]
    solve: SolveResult
    lower_seconds: float

    @property
    def metrics(self) -> dict[str, Any]:
        """:func:`jaxcfr.evaluate` of the lifted profile in the full game (JSON values:
        ``exploitability``, ``nash_conv``, ``values``, ``metric``, ...)."""
        return self.row["full_game"]

    @property
    def exploitability(self) -> float | None:
        """Exact full-game exploitability of the lifted profile (two-player constant-sum)."""
        return self.metrics["exploitability"]

    @property
    def unreached(self) -> int:
        """Information sets of the full game the lifted profile plays uniformly."""
        return self.row["unreached_infosets"]

    @property
    def elimination_exploitability(self) -> float | None:
        """Full-game metric of the profile lifted by elimination (the seed's rule)."""
        return self.row["elimination_metric"]

    @property
    def translation_exploitability(self) -> float | None:
        """Full-game metric of the profile lifted by translation (``None`` without)."""
        return self.row["translation_metric"]

    def __repr__(self) -> str:
        metric = self.metrics["metric"]
        return (f"AbstractedResult({self.label}: {self.lowered.num_nodes:,} of "
                f"{self.full.num_nodes:,} histories, full-game {self.metrics['metric_name']} "
                f"{metric:.4g})")


def train_abstracted(game, abstraction=None, algorithm="cfr+", iterations: int = 1000, *,
                     bucketing=None, imperfect_recall: bool = False,
                     translate: bool | None = None, precision: str = "float32",
                     status=None, **solve_options):
    """Train on ``game`` abstracted, lift the profile, evaluate it in ``game``.

    Args:
      game: the full game: a game string or a Game (not an ``Abstracted`` one). Its
        chance must be enumerable: the full game is lowered to lift the profile and
        to compute its metrics exactly.
      abstraction: an abstraction or an abstraction string (``"bet_menu(fractions=
        [1.0])"``, ``"suit_isomorphism"``, ``"A + B"``, ``"module:Class(k=v)"``): an
        action abstraction (:class:`jaxcfr.Abstracted`), a bucketing
        (:class:`jaxcfr.Bucketed`) or both; or a list of them: a batch, stacked and
        trained by one compiled run (each member as its separate run would be).
      bucketing: a bucketing (or its string) for every member, or a list of them (a
        batch; then ``abstraction`` is one value or ``None``).
      imperfect_recall: accept bucketings that make players forget (see
        :class:`jaxcfr.Bucketed`; a bucketing may declare it itself).
      translate: how to lift: ``None`` by translation where the action abstraction
        defines it (the row has both rules' metrics), ``False`` by elimination only.
      status: told what is being done (``begin`` / ``update`` / ``end`` / ``phase``:
        :func:`jaxcfr.runs.progress.make_status`): lowering the full game, lowering each
        member (its abstraction and bucketing applied to every information set), and
        lifting and evaluating each member in the full game; pass ``report=
        jaxcfr.Report(progress=..., status=...)`` for the solve's own.
      algorithm, iterations, precision, solve_options: as :func:`jaxcfr.solve`
        (``eval_every``, ``alternating``, ``report``, the solver's parameters such as
        ``alpha``): one setting, no lists (:func:`~jaxcfr.solvers.parameters.single_setting`).
    Returns:
      An :class:`AbstractedResult`, or a list of them (one per member, in order) when
      ``abstraction`` or ``bucketing`` is a list or tuple.
    Raises:
      GameError: ``chance-not-enumerable`` when the game's chance cannot be
        enumerated; a contract, abstraction or bucket rule broken (naming the history).
    """
    batch, specs, labels = _members(abstraction, bucketing)
    single_setting(solve_options, why="train_abstracted()", because="to sweep settings, "
                   "solve jaxcfr.stack(...) of the abstracted games with jaxcfr.solve and "
                   "lift() each member")
    name = os.fspath(game) if isinstance(game, (str, os.PathLike)) else ""
    root = load_game(game) if name else game
    if isinstance(root, Abstracted):
        raise ValueError("train_abstracted() takes the full game and the abstraction "
                         "separately (got an Abstracted game)")
    if isinstance(root, Bucketed):
        raise ValueError("train_abstracted() takes the full game and the bucketing "
                         "separately (got a Bucketed game)")
    full = _lower_full(root, name, status)
    members, seconds = [], []
    for a, label in zip(specs, labels):
        start = time.perf_counter()
        members.append(lower_reporting(abstract_game(root, a, imperfect_recall=imperfect_recall),
                                       status, name=f"{full.name} | {label}"))
        seconds.append(time.perf_counter() - start)
    lowered = stack(members) if batch else members[0]
    result = solve(lowered, algorithm, iterations, precision=precision, **solve_options)
    average = np.asarray(result.average_strategy)             # [(B,) I, A]
    final = result.final
    out = []
    for b, (member, a, label) in enumerate(zip(members, specs, labels)):
        if status is not None:
            status.phase("lifting to the full game and evaluating", b, len(members))
        table = average[b, :member.num_rows, :member.max_actions] if batch else average
        abstract = Profile.from_lowered(member, table)
        record = {k: (v[b] if batch and k != "members" and isinstance(v, list) else v)
                  for k, v in final.items()}
        lifted, row = lifted_row(abstract, member, full, abstraction=label,
                                 abstract_metric=record["metric"], precision=precision,
                                 spec=a, game=root, translate=translate,
                                 imperfect_recall=imperfect_recall or None)
        out.append(AbstractedResult(
            abstraction=a, label=label, lowered=member, full=full,
            profile=Profile.from_lowered(full, lifted), abstract_profile=abstract,
            abstract_final=record, row=row, solve=result, lower_seconds=seconds[b]))
    if status is not None:
        status.phase("lifting to the full game and evaluating", len(members), len(members))
        status.close()
    return out if batch else out[0]


def _members(abstraction, bucketing) -> tuple[bool, list, list[str]]:
    """``(batch, specs, labels)``: one abstraction object and label per member."""
    lists = [isinstance(x, (list, tuple)) for x in (abstraction, bucketing)]
    if all(lists):
        raise ValueError("train_abstracted() takes a list of abstractions or a list of "
                         "bucketings, not both (one of them is a batch's members)")
    batch = any(lists)
    n = len(abstraction if lists[0] else bucketing) if batch else 1
    if batch and not n:
        raise ValueError("train_abstracted() needs at least one abstraction")
    if abstraction is None and bucketing is None:
        raise ValueError("train_abstracted() needs an abstraction or a bucketing")

    def nth(x, i):
        return x[i] if isinstance(x, (list, tuple)) else x

    specs, labels = [], []
    for i in range(n):
        parts = [(x, as_abstraction(x)) for x in (nth(abstraction, i), nth(bucketing, i))
                 if x is not None]
        if nth(bucketing, i) is not None and not is_bucketing(parts[-1][1]):
            raise ValueError(f"bucketing= {parts[-1][0]!r} is not a bucketing (it has no "
                             "bucket(player, key) method)")
        try:
            specs.append(combine(*(obj for _, obj in parts)))
        except TypeError as e:
            raise ValueError(str(e)) from None
        labels.append(" + ".join(x if isinstance(x, str) else describe(obj) for x, obj in parts))
    return batch, specs, labels


def _lower_full(root, name: str, status=None) -> LoweredGame:
    try:
        return lower_reporting(root, status, name=name)
    except GameError as e:
        if e.rule != "chance-not-enumerable":
            raise
        raise GameError(
            "train_abstracted needs enumerable chance (chance_outcomes() at every chance "
            "node): the lifted profile is evaluated exactly in the full game, which is "
            "lowered whole, but this game's chance cannot be enumerated",
            rule="chance-not-enumerable", history=e.history) from None


def format_table(results, full_row: bool = True) -> str:
    """A plain-text table: per abstraction, its size, the lifted profile's metric in the
    full game (what the abstraction is worth; first), the same by each lifting rule
    (elimination, translation) and its metric inside the abstraction (best responses
    restricted to the kept actions: not comparable across abstractions); with
    ``full_row``, the full game's size first. ``*``: imperfect recall (the metric inside
    the abstraction is approximate there); ``n/a``: no translation.

    Args:
      results: one :class:`AbstractedResult` (or its row) or several (a list), or their
        rows (:func:`lifted_row`, the entries of a run's ``abstraction.json``), all of
        one full game.
    """
    if isinstance(results, (AbstractedResult, dict)):
        results = [results]
    rows = [r.row if isinstance(r, AbstractedResult) else r for r in results]
    if not rows:
        return ""
    name = rows[0]["metric_name"].replace("_", " ")
    head = ["abstraction", "histories", "infosets", "actions", f"full-game {name} (lifted)",
            "by elimination", "by translation", f"{name} inside the abstraction",
            "uniform infosets"]
    body = []
    if full_row:
        r = rows[0]
        body.append([f"full game ({r['game']})", f"{r['full_histories']:,}",
                     f"{r['full_infosets']:,}", str(r["full_max_actions"]), "", "", "", "", ""])
    for r in rows:
        elimination = r.get("elimination_metric", r["full_game_metric"])
        body.append([str(r["abstraction"]), f"{r['histories']:,}", f"{r['infosets']:,}",
                     str(r["max_actions"]), _num(r["full_game_metric"]),
                     _num(elimination), _num(r.get("translation_metric")),
                     _num(r["abstract_metric"]) + ("*" if r.get("imperfect_recall") else ""),
                     f"{r['unreached_infosets']:,}"])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in
                       enumerate(zip(line, widths))) for line in [head] + body]
    return "\n".join(lines)


def _num(x) -> str:
    return "n/a" if x is None else f"{x:.4g}"
