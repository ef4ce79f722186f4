"""The run loop shared by :func:`jaxcfr.solve` and ``jaxcfr train``, and its metric record.

:func:`run_loop` advances a :class:`~jaxcfr.Runner` in compiled chunks, evaluates at
absolute multiples of ``eval_every`` (and at the end), stops for checkpoints at
absolute multiples of ``checkpoint_every``, and calls its hooks; because the stops
do not depend on where a run started, a resumed run executes the same chunks as an
uninterrupted one.

The metric record (one per evaluation) has the keys
:data:`jaxcfr.solvers.metric_record.RECORD_KEYS`, documented once
in ``docs/runs.md`` ("Metric records"): ``metrics.jsonl`` lines, ``SolveResult.metrics``,
the ``--json`` outputs and the progress hooks all use it. For a batched run every metric
is a list with one entry per member, games outer and settings inner.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable

import jax
import numpy as np

from jaxcfr._util import program_cache
from jaxcfr._util.arguments import nonnegative_int, positive_int
from jaxcfr._util.host_arrays import to_host
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.kernels.numerics import all_finite
from jaxcfr.lowering.lower import as_lowered
from jaxcfr.lowering import cache as _lowered_cache
from jaxcfr.lowering.public import STATE_TABLES, PublicLowered, lower_public
from jaxcfr.lowering.public_cache import lower_public_cached
from jaxcfr.game.registry import game_string, load_game
from jaxcfr._util.serialize import jsonable
from jaxcfr.solvers.solver import SolverState
from jaxcfr.tensors import LoweredGame

__all__ = ["Hooks", "LoopResult", "run_loop", "make_record", "iteration_of",
           "lower_reporting", "lower_public_reporting", "compile_reporting",
           "state_is_finite", "at_or_below"]



@dataclasses.dataclass
class Hooks:
    """What the loop calls; every hook is optional.

    Attributes:
      on_chunk: ``on_chunk(iteration)`` after every compiled chunk.
      on_record: ``on_record(record)`` after every evaluation.
      on_checkpoint: ``on_checkpoint(iteration, state)`` at every checkpoint stop before
        the end (the caller writes the final checkpoint itself).
      stop_requested: ``stop_requested() -> bool``, asked between chunks; True ends the
        loop early with ``interrupted=True`` (a deferred Ctrl-C, a SIGTERM).
    """
    on_chunk: Callable[[int], None] | None = None
    on_record: Callable[[dict[str, Any]], None] | None = None
    on_checkpoint: Callable[[int, SolverState], None] | None = None
    stop_requested: Callable[[], bool] | None = None


@dataclasses.dataclass
class LoopResult:
    """Where :func:`run_loop` stopped."""
    state: SolverState
    iteration: int
    records: list[dict[str, Any]]
    interrupted: bool
    iterations: int          # iterations this loop ran
    seconds: float           # their wall time (evaluations and hooks excluded)
    reached: bool = False    # stopped early: an evaluation's metric was at or below stop_at


def iteration_of(state: SolverState) -> int:
    """Iterations done (``iteration`` is ``[B]`` for a stacked game, all equal)."""
    return int(to_host(state.iteration).reshape(-1)[0])


#: Seconds after which lowering's news and progress are shown (a quick lowering says only
#: "lowering" and "lowered").
NEWS_AFTER = 1.0


def lower_reporting(game, status=None, **lower_kwargs) -> LoweredGame:
    """:func:`jaxcfr.lowering.lower.as_lowered` of ``game``, telling ``status`` what it does.

    ``status`` (optional) has ``begin(text)``, ``update(text)``, ``note(text)`` and
    ``end(text)`` (:class:`jaxcfr.runs.progress.Status`): it hears ``lowering NAME``, the
    nodes walked every few thousand nodes with the rate and lowering's news (the size
    estimate, how the walk is split, a cache hit) once lowering has taken ``NEWS_AFTER``
    seconds, and the lowered sizes. A game string
    goes through the cache of lowered games when ``cache`` says so.
    """
    if status is None or isinstance(game, LoweredGame):
        return as_lowered(game, **lower_kwargs)
    if isinstance(game, (str, os.PathLike)):       # a game that does not load: no status line
        lower_kwargs["name"] = lower_kwargs.get("name") or os.fspath(game)
        load_game(game)
    name = lower_kwargs.get("name") or game_string(game) or type(game).__name__
    status.begin(f"lowering {name}")
    start = time.perf_counter()
    held: list[str] = []         # lowering's news (own lines), shown once it turns out slow
    nodes = status.nodes(f"lowering {name}")

    def slow() -> bool:
        if time.perf_counter() - start < NEWS_AFTER:
            return False
        while held:
            status.note(held.pop(0))
        return True

    def note(text: str) -> None:
        held.append(text)
        slow()

    def progress(walked: int) -> None:
        slow()
        nodes(walked)           # a bar on a terminal, else a line every few seconds

    if hasattr(nodes, "expect"):
        progress.expect = nodes.expect          # type: ignore[attr-defined]  (the size)

    lowered = as_lowered(game, progress=progress, log=note, **lower_kwargs)
    slow()
    sizes = lowered.sizes()
    status.end(f"lowered {name}: {sizes['nodes']:,} nodes, {sum(sizes['infosets']):,} "
               f"information sets ({time.perf_counter() - start:.1f} s)")
    return lowered


def lower_public_reporting(game, status=None, *, text: str | None = None, cache=None,
                           report: dict | None = None, **lower_kwargs) -> PublicLowered:
    """:func:`jaxcfr.lowering.public.lower_public` of a PublicGame (a PublicLowered is
    returned as it is), telling ``status`` what it does as :func:`lower_reporting` does:
    ``lowering NAME (public tree)``, the public nodes walked after every level, a cache
    hit, and the lowered sizes (public nodes, hands per player, rows).

    With ``text`` (the game string ``game`` was loaded from) and ``cache`` (``True``: the
    default directory; or a directory), the game is looked up in the cache of lowered
    games first and stored there after lowering (:mod:`jaxcfr.lowering.public_cache`);
    ``report`` (a dict, optional) receives ``"cache"``: what the cache did."""
    report = {} if report is None else report
    report["cache"] = "off"
    if isinstance(game, PublicLowered):
        report["cache"] = "not used: already lowered"
        return game
    name = lower_kwargs.get("name") or type(game).__name__
    if status is not None:
        status.begin(f"lowering {name} (public tree)")
        lower_kwargs["progress"] = status.nodes(f"lowering {name}")
    start = time.perf_counter()
    directory = _lowered_cache.resolve(cache) if text is not None else None
    if directory is None:
        lowered = lower_public(game, **lower_kwargs)
    else:
        lowered, report["cache"] = lower_public_cached(
            os.fspath(text), game, directory, lambda g: lower_public(g, **lower_kwargs),
            name=name, terminals=lower_kwargs.get("terminals", "auto"),
            merges=lower_kwargs.get("merges", True),
            outcome_steps=lower_kwargs.get("outcome_steps", 0),
            memory_budget=lower_kwargs.get("memory_budget"),
            state_tables=lower_kwargs.get("state_tables", STATE_TABLES),
            float_bytes=lower_kwargs.get("float_bytes", 4),
            log=None if status is None else status.note)
    if status is not None:
        hands = "+".join(f"{h:,}" for h in lowered.structure.hands)
        status.end(f"lowered {name}: {lowered.num_nodes:,} public nodes, {hands} hands, "
                   f"{sum(lowered.rows_per_player):,} rows "
                   f"({time.perf_counter() - start:.1f} s)")
    return lowered


def compile_reporting(runner: RunnerProtocol, state: SolverState, status=None
                      ) -> tuple[SolverState, float]:
    """:meth:`Runner.compile`, telling ``status`` (see :func:`lower_reporting`) about it
    (a runner that compiles on its first chunk says nothing)."""
    if not runner.compiles_ahead:
        return runner.compile(state)
    if status is not None:
        members = runner.batch_members
        status.begin(f"compiling {runner.solver.name} ({runner.dtype.name}"
                     f"{f', {members} members' if members > 1 else ''})")
    state, seconds = runner.compile(state)
    if status is not None:
        status.end(f"compiled in {seconds:.1f} s")
    return state, seconds


def _per_member(x, batched: bool, players: bool) -> np.ndarray:
    """``[(B,) (P,) *H]`` -> ``[M, (P)]`` with members games-outer."""
    x = np.asarray(x, dtype=np.float64)
    if players:
        x = np.moveaxis(x, 1 if batched else 0, -1)
        return x.reshape(-1, x.shape[-1])
    return x.reshape(-1)


def make_record(runner: RunnerProtocol, state: SolverState, iteration: int, *,
                compile_seconds: float | None = None, wall_seconds: float | None = None,
                iterations_per_second: float | None = None) -> dict[str, Any]:
    """The metric record of ``state`` (keys :data:`~jaxcfr.solvers.metric_record.RECORD_KEYS`;
    see the module docstring)."""
    ev = runner.evaluate(state)
    labels = runner.member_labels()
    batched = runner.games_batched

    def pick(x, players=False):
        if x is None:
            return None
        m = _per_member(x, batched, players)
        return m.tolist() if labels else m[0].tolist()

    rec = {"iteration": int(iteration), "metric": pick(ev["metric"]),
           "metric_name": ev["metric_name"], "exploitability": pick(ev["exploitability"]),
           "nash_conv": pick(ev["nash_conv"]), "nash_gap": pick(ev["nash_gap"], True),
           "values": pick(ev["values"], True),
           "best_response_values": pick(ev["best_response_values"], True),
           "members": list(labels) or None, "iterations_per_second": iterations_per_second,
           "compile_seconds": compile_seconds, "wall_seconds": wall_seconds,
           "estimates": ev.get("estimates")}
    return jsonable(rec)


def _next_stop(it: int, total: int, eval_every: int, checkpoint_every: int) -> int:
    stops = [total, (it // eval_every + 1) * eval_every]
    if checkpoint_every:
        stops.append((it // checkpoint_every + 1) * checkpoint_every)
    return min(stops)


def run_loop(runner: RunnerProtocol, state: SolverState, *, total: int, eval_every: int,
             checkpoint_every: int = 0, hooks: Hooks | None = None,
             compile_seconds: float | None = None,
             wall: Callable[[], float] | None = None,
             stop_at: float | None = None) -> LoopResult:
    """Advance ``state`` to ``total`` iterations; evaluate, checkpoint and report on the way.

    Args:
      runner: the device side.
      state: where to start (its ``iteration``; 0 for a fresh run).
      total: iterations to reach.
      eval_every: evaluate at multiples of this (and at ``total``).
      checkpoint_every: call ``hooks.on_checkpoint`` at multiples of this (0: never).
      hooks: see :class:`Hooks`.
      compile_seconds, wall: recorded in each record (``wall()``: seconds since the run
        started, over resumed segments).
      stop_at: end the loop after the first evaluation whose ``metric`` (every member's,
        in a batch) is at or below it (``reached=True``, not interrupted); ``None``: run
        to ``total``.
    Raises:
      KeyboardInterrupt: when it arrives while a chunk runs (the state being advanced is
        then lost; the caller's last checkpoint is what survives). Between chunks a
        ``KeyboardInterrupt`` from a hook ends the loop with ``interrupted=True``.
    """
    total = positive_int("iterations", total)
    eval_every = positive_int("eval_every", eval_every)
    checkpoint_every = nonnegative_int("checkpoint_every", checkpoint_every)
    hooks = hooks or Hooks()
    stop_requested = hooks.stop_requested or (lambda: False)
    it = iteration_of(state)
    records: list[dict[str, Any]] = []
    seg_iters, seg_seconds, run_iters, run_seconds = 0, 0.0, 0, 0.0
    interrupted = reached = False
    try:
        while it < total and not stop_requested() and not reached:
            stop = _next_stop(it, total, eval_every, checkpoint_every)
            while it < stop and not stop_requested():
                n = min(runner.chunk, stop - it)
                t0 = time.perf_counter()
                advanced = runner.advance(state, n)
                jax.block_until_ready(advanced)
                state = advanced
                seconds = time.perf_counter() - t0
                seg_iters, seg_seconds = seg_iters + n, seg_seconds + seconds
                run_iters, run_seconds = run_iters + n, run_seconds + seconds
                it += n
                if hooks.on_chunk is not None:
                    hooks.on_chunk(it)
            if it < stop:
                break                                          # stopped mid-segment
            if it % eval_every == 0 or it == total:
                rec = make_record(
                    runner, state, it, compile_seconds=compile_seconds,
                    wall_seconds=None if wall is None else wall(),
                    iterations_per_second=seg_iters / seg_seconds if seg_seconds > 0 else None)
                seg_iters, seg_seconds = 0, 0.0
                _check_finite(runner, state, rec)
                records.append(rec)
                if hooks.on_record is not None:
                    hooks.on_record(rec)
                reached = stop_at is not None and at_or_below(rec["metric"], stop_at)
            if (hooks.on_checkpoint is not None and checkpoint_every
                    and it % checkpoint_every == 0 and it < total):
                hooks.on_checkpoint(it, state)
    except KeyboardInterrupt:
        if _donated(state):                    # it arrived inside a chunk: nothing to keep
            raise
        interrupted = True
    interrupted = interrupted or (it < total and not reached)
    return LoopResult(state, it, records, interrupted, run_iters, run_seconds, reached)


def at_or_below(metric, bound: float) -> bool:
    """Whether a record's ``metric`` (a number, or one per member: a list, nested for a
    stack of games times a batch of settings) is at or below ``bound`` for every member
    (a member without one, ``None``, is not); the one test of ``stop_at`` (``jaxcfr
    train``'s ``run.stop_at``, :func:`jaxcfr.solve`'s ``target``, a public stack's)."""
    if isinstance(metric, (list, tuple)):
        return all(at_or_below(m, bound) for m in metric)
    return metric is not None and metric <= bound


def state_is_finite(state: SolverState) -> jax.Array:
    """Whether every table of ``state`` is finite (one rarely run program; the runner
    compiles it beside its evaluation, so that the loop's first check finds it)."""
    return program_cache.call(all_finite, (tuple(state.tables.values()),), {}, rarely=True)


def _check_finite(runner: RunnerProtocol, state: SolverState, record: dict[str, Any]) -> None:
    """A state or metric that is not finite (NaN / inf; a metric is written as null) ends
    the run: regret matching would quietly play uniform from there on."""
    metric = record["metric"]
    values = metric if isinstance(metric, list) else [metric]
    with runner.scope():
        finite = bool(state_is_finite(state))
    if not finite or any(v is None for v in values):
        raise FloatingPointError(
            f"iteration {record['iteration']}: the {'metrics' if finite else 'solver state'} "
            "holds NaN or inf: the solver's sums overflowed; run in float64 or rescale the "
            "payoffs")


def _donated(state: SolverState) -> bool:
    """Whether ``state``'s buffers were handed to a chunk that did not finish."""
    return any(getattr(x, "is_deleted", lambda: False)() for x in state)
