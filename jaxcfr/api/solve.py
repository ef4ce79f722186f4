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
from jaxcfr._util.arguments import api_spelling, optional_positive_int, positive_int
from jaxcfr._util.precision import PRECISIONS
from jaxcfr.engine.loop import Hooks, compile_reporting, run_loop
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.engine.distributed import Cluster
from jaxcfr.engine.runner import DEFAULT_CHUNK, Runner, batch_mesh
from jaxcfr.engine.sampled_chance import AUTO_SAMPLES, Chance, SampledChanceRunner, \
    choose_chance, sampled_chance_rules
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.estimators import Estimator
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.solver import Solver, SolverState, check_run_parameters
from jaxcfr.tensors import LoweredGame

__all__ = ["solve", "solve_with", "SolveOptions", "SolveResult"]


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
        and :class:`jaxcfr.engine.sampled_chance.Timing` (draws per host second, the
        fraction of the wall time the device waited for the host); else ``None``.
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


@dataclasses.dataclass(frozen=True)
class SolveOptions:
    """Everything a solve is told, grouped and checked (before any lowering).

    Attributes:
      solver: the solver, its estimator included.
      iterations: iterations to run.
      eval_every: evaluate every this many iterations (``None``: only at the end).
      run_parameters: what :class:`jaxcfr.Runner` takes: ``alpha`` / ``beta`` /
        ``gamma`` / ``exploration`` (a list: a batch of settings) and ``seed`` (a list:
        a batch of seeds).
      chance: how chance is treated (:class:`jaxcfr.engine.sampled_chance.Chance`).
      precision: ``"float32"`` or ``"float64"``.
      chunk: iterations per compiled chunk.
      workers: processes that lower a game string.
      compilation_cache: JAX's persistent compilation cache (``True``: jaxcfr's directory;
        a directory; ``False``: not turned on): :mod:`jaxcfr.engine.compilation_cache`.
    """
    solver: Solver
    iterations: int
    eval_every: int | None
    run_parameters: dict[str, Any]
    chance: Chance
    precision: str = "float32"
    chunk: int = DEFAULT_CHUNK
    workers: int | None = None
    compilation_cache: bool | str = True

    @classmethod
    def check(cls, spell=api_spelling, *, algorithm: str | Solver = "cfr+",
              iterations: int = 1000, estimator: Estimator | None = None,
              chance: str | Chance = "auto", seed: int = 0, seeds=None, alpha=None,
              beta=None, gamma=None, exploration=None, alternating: bool | None = None,
              eval_every: int | None = None, precision: str = "float32",
              chunk: int = DEFAULT_CHUNK, workers: int | None = None, sampling=None,
              samples=None, counts=None, draws=None, compilation_cache: bool | str = True
              ) -> "SolveOptions":
        """Check every argument by the rules every entry point shares
        (:mod:`jaxcfr._util.arguments`, the estimators, the presets, the sampled-chance
        rules); errors name the arguments as ``spell`` renders them (the API's names, the
        command line's flags). ``sampling`` / ``samples`` are thin spellings of
        ``estimator``, ``draws`` of ``chance``."""
        iterations = positive_int(spell("iterations"), iterations)
        eval_every = optional_positive_int(spell("eval_every"), eval_every)
        chunk = positive_int(spell("chunk"), chunk)
        arguments.one_of(spell("precision"), precision, PRECISIONS)
        if workers is not None:
            workers = positive_int(spell("workers"), workers)
        solver = make_solver(algorithm, alternating=alternating, estimator=estimator,
                             sampling=sampling, samples=samples, counts=counts,
                             spell=spell)
        hyper = check_run_parameters(
            {"alpha": alpha, "beta": beta, "gamma": gamma, "exploration": exploration,
             "seed": arguments.seeds(spell("seeds"), seeds) if seeds is not None
             else arguments.seed(spell("seed"), seed)},
            spell)
        chance = Chance.of(chance, draws=draws, spell=spell)
        if not isinstance(compilation_cache, (bool, str, os.PathLike)):
            raise arguments.ArgumentError(
                f"{spell('compilation_cache')} must be True, False or a directory, got "
                f"{compilation_cache!r}", argument=spell("compilation_cache"))
        options = cls(solver, iterations, eval_every, hyper, chance, precision, chunk, workers,
                      compilation_cache)
        if chance.mode == "sampled":
            options.check_sampled_chance(spell)
        return options

    def check_sampled_chance(self, spell=api_spelling, because: str = "") -> None:
        """:func:`~jaxcfr.engine.sampled_chance.sampled_chance_rules` for these options."""
        sampled_chance_rules(
            spell, estimator=self.solver.estimator, because=because,
            seeds=self.run_parameters["seed"] if isinstance(self.run_parameters["seed"], list)
            else None,
            settings=any(isinstance(v, list) for k, v in self.run_parameters.items()
                         if k != "seed"))


def solve(game: Any, algorithm: str | Solver = "cfr+", iterations: int = 1000, *,
          estimator: Estimator | None = None, chance: str | Chance = "auto",
          seed: int = 0, seeds=None, alpha=None, beta=None, gamma=None, exploration=None,
          alternating: bool | None = None, eval_every: int | None = None,
          precision: str = "float32", chunk: int = DEFAULT_CHUNK,
          callback: Callable[[dict[str, Any]], None] | None = None,
          progress: Callable[[int, dict[str, Any] | None], None] | None = None,
          status=None, cache=None, workers: int | None = None,
          sampling: str | None = None, samples: int | None = None,
          counts: bool | None = None, draws: int | None = None,
          compilation_cache: bool | str = True,
          cluster: Cluster | None = None) -> SolveResult:
    """Solve ``game`` with ``algorithm`` for ``iterations`` iterations.

    Args:
      game: a game string (``"leduc_poker"``, ``"x.efg"``), a Game, or a LoweredGame
        (a stacked one solves the whole batch).
      algorithm: a preset name (``cfr``, ``cfr+``, ``lcfr``, ``dcfr``, ``pcfr+``,
        ``dcfr+``, ``pdcfr+``; any case, aliases as ``cfr_plus``) or a Solver.
      estimator: the estimator object (default: the solver's, exact for a preset), e.g.
        ``jaxcfr.ExternalSampling(samples=16)`` (:mod:`jaxcfr.solvers.estimators`);
        ``sampling="external", samples=16`` is a thin spelling of it, and
        ``counts=True`` runs the samples as counts over the whole tree
        (``jaxcfr.ExternalSampling(samples=4096, counts=True)``: one pass whatever the
        number of samples; :mod:`jaxcfr.kernels.counts`).
      chance: ``"auto"`` (lower the tree where chance can be enumerated, else sample it),
        ``"exact"``, ``"sampled"`` (the host draws chance samples each iteration and
        lowers what follows them: :mod:`jaxcfr.engine.sampled_chance`; metrics are
        exact where the full game can be lowered, else estimates with intervals), or a
        :class:`~jaxcfr.engine.sampled_chance.Chance` with its options
        (``jaxcfr.Chance("sampled", draws=64)``); ``draws=64`` is a thin spelling.
      seed: the run's PRNG seed (iteration ``t`` uses ``fold_in(key(seed), t)``).
      seeds: a list of seeds: a batch of runs in one compiled step, one per seed (each
        equal to the separate run with that seed; with ``counts``, to float rounding:
        :mod:`jaxcfr.kernels.counts`; zipped with hyper-parameter lists).
      alpha, beta, gamma: hyper-parameters; a list gives a batch of settings solved
        by the same compiled step (several lists: element by element).
      exploration: outcome sampling's epsilon (default 0.6, as OpenSpiel).
      alternating: override the preset's update order.
      eval_every: evaluate the average profile every this many iterations (and at
        the end); ``None``: only at the end.
      precision: ``"float32"`` or ``"float64"`` (scoped to this call).
      chunk: iterations per compiled chunk.
      callback: called with each evaluation's record.
      progress: ``progress(iteration, record)``, called after every compiled chunk
        (``record=None``) and every evaluation, like ``jaxcfr.train``'s.
      status: told about lowering and compiling (``begin`` / ``update`` / ``end``:
        e.g. ``jaxcfr.runs.progress.make_status()``, which writes to stderr).
      cache: a game string is loaded from / stored in the cache of lowered games
        (``True``: ``~/.cache/jaxcfr/lowered``; or a directory; see
        :mod:`jaxcfr.lowering.cache`).
      workers: processes that lower a game string (see :func:`jaxcfr.lower`).
      compilation_cache: keep compiled programs on disk, so that the next process
        (same game shapes, same solver) skips compiling: ``True`` (default) in
        ``$JAXCFR_COMPILATION_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxcfr/xla`` or
        ``~/.cache/jaxcfr/xla``; a directory; ``False`` does not turn it on.
        ``JAXCFR_NO_COMPILATION_CACHE=1`` keeps the whole process off it
        (:mod:`jaxcfr.engine.compilation_cache`).
      cluster: solve over several processes (:class:`jaxcfr.Cluster`, e.g.
        ``jaxcfr.Cluster.from_options()`` reading ``$JAX_COORDINATOR_ADDRESS``,
        ``$JAX_NUM_PROCESSES``, ``$JAX_PROCESS_ID``): ``jax.distributed`` starts here
        (call it before anything touches a device), every process calls ``solve`` with
        the same arguments, and the run is sharded over every process's devices (a batch
        over its members, one game split); every process gets the whole result.
    """
    if cluster is not None:
        cluster.initialize()                        # before anything touches a device
    options = SolveOptions.check(
        algorithm=algorithm, iterations=iterations, estimator=estimator, chance=chance,
        seed=seed, seeds=seeds, alpha=alpha, beta=beta, gamma=gamma, exploration=exploration,
        alternating=alternating, eval_every=eval_every, precision=precision, chunk=chunk,
        workers=workers, sampling=sampling, samples=samples, counts=counts, draws=draws,
        compilation_cache=compilation_cache)
    return solve_with(game, options, callback=callback, progress=progress, status=status,
                      cache=cache, mesh=None if cluster is None else batch_mesh())


def solve_with(game: Any, options: SolveOptions, *, callback=None, progress=None, status=None,
               cache=None, spell=api_spelling, mesh=None) -> SolveResult:
    """:func:`solve` of checked :class:`SolveOptions` (the command line's way in);
    ``spell`` names the arguments in the errors found once the game is known; ``mesh``
    shards the run (:class:`~jaxcfr.engine.runner.Runner`; not under sampled chance)."""
    lowered, sampled = choose_chance(game, options.chance, status, cache=cache,
                                     workers=options.workers)
    if sampled is None:
        runner: RunnerProtocol = Runner(lowered, options.solver, options.run_parameters,
                                        precision=options.precision, chunk=options.chunk,
                                        mesh=mesh, compilation_cache=options.compilation_cache)
    elif mesh is not None:
        raise arguments.ArgumentError(f"sampled chance ({spell('chance')}) runs in one "
                                      "process on one device: it cannot be sharded",
                                      spell("chance"))
    else:
        if options.chance.mode == "auto":
            options.check_sampled_chance(spell, because=AUTO_SAMPLES)
        name = os.fspath(game) if isinstance(game, (str, os.PathLike)) else ""
        runner = SampledChanceRunner(sampled, options.solver, options.run_parameters,
                                     precision=options.precision, chunk=options.chunk,
                                     draws=options.chance.draws,
                                     workers=options.chance.workers, exact=lowered, name=name,
                                     compilation_cache=options.compilation_cache)
    try:
        return _solve(runner, options.iterations, options.eval_every, callback, progress,
                      status)
    finally:
        runner.close()


def _solve(runner: RunnerProtocol, iterations, eval_every, callback, progress, status
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
    profiles = runner.profiles(out.state) if runner.batch_members == 1 else []
    return SolveResult(
        lowered=runner.lowered, solver=runner.solver, state=out.state,
        average_strategy=runner.profile(out.state),
        profile=profiles[0] if len(profiles) == 1 else None, metrics=out.records,
        final=out.records[-1], seconds=time.perf_counter() - start,
        compile_seconds=compile_seconds,
        iterations_per_second=out.iterations / out.seconds if out.seconds > 0 else float("inf"),
        chance=runner.chance, sampled_chance=runner.report())
