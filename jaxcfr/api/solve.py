"""``jaxcfr.solve``: one call from a game to an average profile and its metrics.

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("kuhn_poker", algorithm="cfr+", iterations=1000)
    >>> round(result.final["values"][0], 3)
    -0.056
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.arguments import optional_positive_int, positive_int
from jaxcfr.engine.sampled_chance import DEFAULT_DRAWS, SampledChanceRunner, choose_chance
from jaxcfr.engine.runner import DEFAULT_CHUNK, Runner
from jaxcfr.engine.loop import Hooks, compile_reporting, run_loop
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.solver import Solver, SolverState, make_solver, resolve_sampling
from jaxcfr.tensors import LoweredGame

__all__ = ["solve", "SolveResult"]


@dataclasses.dataclass(repr=False)
class SolveResult:
    """What :func:`solve` returns.

    Attributes:
      lowered: the lowered game (under sampled chance: the full game if it could be
        lowered for exact metrics, else ``None``).
      solver: the solver used.
      state: the final solver state (device arrays).
      average_strategy: ``[I, A]`` (``[(B,) I, A, *H]`` when batched) on the host.
      profile: the average profile keyed by information set (single game, no batch),
        else ``None``.
      metrics: one record per evaluation (keys: :data:`jaxcfr.engine.loop.RECORD_KEYS`).
      final: the last record.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunk and the evaluation.
      iterations_per_second: steady-state iterations per second (evaluations excluded).
      chance: ``"exact"`` (the lowered tree) or ``"sampled"`` (the host drew chance).
      sampled_chance: under sampled chance, the host's figures: rows, draws, cache hits
        and :class:`jaxcfr.engine.sampled_chance.Timing` (draws per host second, the fraction of
        the wall time the device waited for the host); else ``None``.
    """
    lowered: LoweredGame
    solver: Solver
    state: SolverState
    average_strategy: np.ndarray
    profile: Profile | None
    metrics: list[dict[str, Any]]
    final: dict[str, Any]
    seconds: float
    compile_seconds: float
    iterations_per_second: float
    chance: str = "exact"
    sampled_chance: dict[str, Any] | None = None

    def __repr__(self) -> str:
        final = self.final
        metric = final["metric"]
        shown = (f"{metric:.4g}" if isinstance(metric, float) else
                 f"[{', '.join('n/a' if v is None else f'{v:.3g}' for v in metric)}]"
                 if isinstance(metric, list) else "n/a")
        name = self.lowered.name if self.lowered is not None else None
        if self.profile is not None and self.chance == "sampled":
            name = self.profile.game
        return (f"SolveResult({self.solver.name} on {name or '?'}"
                f"{' (sampled chance)' if self.chance == 'sampled' else ''}: "
                f"{final['iteration']} iterations, {final['metric_name']} {shown}, "
                f"{self.iterations_per_second:,.0f} it/s, compile {self.compile_seconds:.1f} s)")


def solve(game: Any, algorithm: str | Solver = "cfr+", iterations: int = 1000, *,
          eval_every: int | None = None, alternating: bool | None = None, alpha=None,
          beta=None, gamma=None, precision: str = "float32", chunk: int = DEFAULT_CHUNK,
          callback: Callable[[dict[str, Any]], None] | None = None,
          progress: Callable[[int, dict[str, Any] | None], None] | None = None,
          status=None, cache=None, sampling: str = "none", seed: int = 0,
          seeds=None, exploration=None, samples: int = 1, chance: str = "auto",
          draws: int = DEFAULT_DRAWS, workers: int | None = None) -> SolveResult:
    """Solve ``game`` with ``algorithm`` for ``iterations`` iterations.

    Args:
      game: a game string (``"leduc_poker"``, ``"x.efg"``), a Game, or a LoweredGame
        (a stacked one solves the whole batch).
      algorithm: a preset name (``cfr``, ``cfr+``, ``lcfr``, ``dcfr``, ``pcfr+``,
        ``dcfr+``, ``pdcfr+``) or a Solver.
      eval_every: evaluate the average profile every this many iterations (and at
        the end); ``None``: only at the end.
      alternating: override the preset's update order.
      alpha, beta, gamma: hyper-parameters; a list gives a batch of settings solved
        by the same compiled step (several lists: element by element).
      sampling: the estimator: ``"none"`` (exact full-width passes), ``"chance"``,
        ``"external"`` or ``"outcome"`` (Monte Carlo; :mod:`jaxcfr.solvers.estimators`).
      seed: the run's PRNG seed (iteration ``t`` uses ``fold_in(key(seed), t)``).
      seeds: a list of seeds: a batch of runs in one compiled step, one per seed (each
        equal to the separate run with that seed; zipped with hyper-parameter lists).
      exploration: outcome sampling's epsilon (default 0.6, as OpenSpiel).
      samples: subtrees a sampling estimator draws per traverser and iteration.
      precision: ``"float32"`` or ``"float64"`` (scoped to this call).
      callback: called with each evaluation's record.
      progress: ``progress(iteration, record)``, called after every compiled chunk
        (``record=None``) and every evaluation, like ``jaxcfr.train``'s.
      status: told about lowering and compiling (``begin`` / ``update`` / ``end``:
        e.g. ``jaxcfr.runs.progress.make_status()``, which writes to stderr).
      cache: a game string is loaded from / stored in the cache of lowered games
        (``True``: ``~/.cache/jaxcfr/lowered``; or a directory; see :mod:`jaxcfr.lowering.cache`).
      chance: ``"auto"`` (lower the tree where chance can be enumerated, else sample it),
        ``"exact"`` or ``"sampled"`` (the host draws ``draws`` chance samples per
        iteration and lowers what follows them: :mod:`jaxcfr.engine.sampled_chance`; metrics
        are exact where the full game can be lowered, else estimates with intervals).
      draws: chance samples per iteration under sampled chance.
      workers: processes that lower a game string (see :func:`jaxcfr.lower`).
    """
    iterations = positive_int("iterations", iterations)
    eval_every = optional_positive_int("eval_every", eval_every)
    positive_int("chunk", chunk)
    solver = algorithm if isinstance(algorithm, Solver) else make_solver(
        algorithm, alternating=alternating, sampling=sampling, samples=positive_int(
            "samples", samples))
    if isinstance(algorithm, Solver):
        changes = {"alternating": alternating} if alternating is not None else {}
        if sampling != "none" or samples != 1:
            changes.update(sampling=resolve_sampling(sampling),
                           samples=positive_int("samples", samples))
        solver = dataclasses.replace(solver, **changes)
    hyper = {k: v for k, v in (("alpha", alpha), ("beta", beta), ("gamma", gamma))
             if v is not None}
    hyper["seed"] = arguments.seeds("seeds", seeds) if seeds is not None else \
        arguments.seed("seed", seed)
    if exploration is not None:
        hyper["exploration"] = arguments.exploration("exploration", exploration)
    draws = arguments.draws("draws", draws)
    lowered, sampled = choose_chance(game, chance, status, cache=cache, workers=workers)
    if sampled is None:
        runner = Runner(lowered, solver, hyper, precision=precision, chunk=chunk)
    else:
        if solver.sampling != "none":
            raise arguments.ArgumentError(
                f"sampled chance is chance-sampled CFR already: it takes no sampling="
                f"{solver.sampling!r} (use the exact tree for Monte Carlo estimators)")
        if seeds is not None:
            raise arguments.ArgumentError("sampled chance runs one seed at a time: give seed, "
                                          "not seeds")
        name = os.fspath(game) if isinstance(game, (str, os.PathLike)) else ""
        runner = SampledChanceRunner(sampled, solver, hyper, precision=precision, chunk=chunk,
                                     draws=draws, exact=lowered, name=name)
    try:
        return _solve(runner, lowered, solver, iterations, eval_every, callback, progress,
                      status)
    finally:
        if sampled is not None:
            runner.close()


def _solve(runner, lowered, solver, iterations, eval_every, callback, progress, status
           ) -> SolveResult:
    state, compile_seconds = compile_reporting(runner, runner.init(), status)
    start = time.perf_counter()

    def on_record(record):
        if callback is not None:
            callback(record)
        if progress is not None:
            progress(record["iteration"], record)

    def on_chunk(iteration):
        if progress is not None:
            progress(iteration, None)

    on_chunk(0)
    out = run_loop(runner, state, total=iterations, eval_every=eval_every or iterations,
                   hooks=Hooks(on_chunk=on_chunk, on_record=on_record),
                   compile_seconds=compile_seconds, wall=lambda: time.perf_counter() - start)
    if out.interrupted:            # between two chunks: solve has nothing to keep, so stop
        raise KeyboardInterrupt
    sampled = isinstance(runner, SampledChanceRunner)
    average = runner.profile(out.state)
    profile = None
    if sampled:
        profile = runner.profile_table(out.state)
    elif lowered.batch_size is None and average.ndim == 2:
        profile = Profile.from_lowered(lowered, average)
    return SolveResult(
        lowered=lowered, solver=solver, state=out.state, average_strategy=average,
        profile=profile, metrics=out.records, final=out.records[-1],
        seconds=time.perf_counter() - start, compile_seconds=compile_seconds,
        iterations_per_second=out.iterations / out.seconds if out.seconds > 0 else float("inf"),
        chance="sampled" if sampled else "exact",
        sampled_chance=runner.report() if sampled else None)
