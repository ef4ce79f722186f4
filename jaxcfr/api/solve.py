"""``jaxcfr.solve``: one call from a game to an average profile and its metrics.

The common case is one line; the solver's parameters are keywords named by its parts
(:mod:`jaxcfr.solvers.parameters`), a list of values a batch of settings; the rest is
grouped in option objects (:class:`DeviceOptions`: how and where it runs;
:class:`LoadOptions`: how a game string is lowered; :class:`Report`: who hears about
progress), which the command line builds too (:mod:`jaxcfr.cli.solve`).

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("kuhn_poker", "cfr+", 1000)
    >>> round(result.final["values"][0], 3)
    -0.056
    >>> sweep = jaxcfr.solve("leduc_poker", "dcfr", 500, alpha=[1.0, 1.5, 2.0])  # one step
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import os
import time
from typing import Any, Callable, Mapping

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.arguments import ArgumentError, api_spelling, optional_positive_int, \
    positive_int, stop_target
from jaxcfr._util.precision import PRECISIONS
from jaxcfr.api.public_result import PublicSolveResult
from jaxcfr.engine.loop import Hooks, compile_reporting, run_loop
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.engine.distributed import Cluster
from jaxcfr.engine.runner import DEFAULT_CHUNK, batch_mesh
from jaxcfr.engine.chance import ChanceMode, chance_mode, sampled_chance_rules
from jaxcfr.api.runners import make_runner
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.estimators import Estimator
from jaxcfr.solvers.locking import Lock
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.solver import Solver, SolverState
from jaxcfr.lowering.public import public_game_of
from jaxcfr.lowering.public_buckets import unbucketed
from jaxcfr.tensors import LoweredGame

__all__ = ["solve", "solve_with", "SolveOptions", "SolveResult", "DeviceOptions",
           "LoadOptions", "Report"]


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
      metrics: one record per evaluation (keys: :data:`jaxcfr.solvers.metric_record.RECORD_KEYS`).
      final: the last record.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunk and the evaluation.
      iterations_per_second: steady-state iterations per second (evaluations excluded).
      chance: ``"exact"`` (the lowered tree) or ``"sampled"`` (the host drew chance).
      sampled_chance: under sampled chance, the host's figures: rows, draws, cache hits
        and :class:`jaxcfr.engine.sampled_chance.Timing` (draws per host second, the
        fraction of the wall time the device waited for the host); else ``None``.
      reached_target: the run stopped at an evaluation whose metric (every member's) was
        at or below ``target``: at iteration ``final["iteration"]``, possibly before
        ``iterations`` (``False`` without a target, or when no evaluation reached it).
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
    reached_target: bool = False

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
                f"{final['iteration']} iterations"
                f"{' (target reached)' if self.reached_target else ''}, "
                f"{final['metric_name']} {shown}, "
                f"{self.iterations_per_second:,.0f} it/s, compile {self.compile_seconds:.1f} s)")


@dataclasses.dataclass(frozen=True)
class DeviceOptions:
    """How and where a solve runs (never what it computes: results are the same).

    Attributes:
      chunk: iterations per compiled chunk.
      compilation_cache: keep compiled programs on disk, so that the next process (same
        game shapes, same solver) skips compiling: ``True`` in
        ``$JAXCFR_COMPILATION_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxcfr/xla`` or
        ``~/.cache/jaxcfr/xla``; a directory; ``False`` does not turn it on.
        ``JAXCFR_NO_COMPILATION_CACHE=1`` keeps the whole process off it
        (:mod:`jaxcfr.engine.jax_compilation_cache`).
      cluster: solve over several processes (:class:`jaxcfr.Cluster`, e.g.
        ``jaxcfr.Cluster.from_options()`` reading ``$JAX_COORDINATOR_ADDRESS``,
        ``$JAX_NUM_PROCESSES``, ``$JAX_PROCESS_ID``): ``jax.distributed`` starts first,
        every process calls ``solve`` with the same arguments, and the run is sharded
        over every process's devices (a batch over its members, one game split); every
        process gets the whole result.
      hand_buckets: pad a two-player public tree's hands to buckets
        (:mod:`jaxcfr.lowering.public_buckets`: 175 + 252 hands solved as 176 + 256), so
        that another board of the same bet tree, whose card removal leaves other hand
        counts in the same buckets, runs the program already compiled (in the process,
        or in the compilation cache); padded hands carry no weight, so the numbers are
        the unpadded run's up to float summation order (float64 within 1e-12) and no
        result shows them. Also the board tables card removal sizes and, without a
        lock, the suit-isomorphic chance outcomes walked to a bucket (a turn's 35 or 36
        river classes: 36; ``lower_public(outcome_steps=)``), so that another suit
        pattern runs the same program too. ``False``: each game's own sizes and tree.
    """
    chunk: int = DEFAULT_CHUNK
    compilation_cache: bool | str | os.PathLike = True
    cluster: Cluster | None = None
    hand_buckets: bool = True

    def check(self, spell=api_spelling) -> "DeviceOptions":
        positive_int(spell("chunk"), self.chunk)
        if not isinstance(self.compilation_cache, (bool, str, os.PathLike)):
            raise ArgumentError(f"{spell('compilation_cache')} must be True, False or a "
                                f"directory, got {self.compilation_cache!r}",
                                argument=spell("compilation_cache"))
        if not isinstance(self.hand_buckets, bool):
            raise ArgumentError(f"{spell('hand_buckets')} must be True or False, got "
                                f"{self.hand_buckets!r}", argument=spell("hand_buckets"))
        if self.cluster is not None and not isinstance(self.cluster, Cluster):
            raise ArgumentError(f"{spell('cluster')} must be a jaxcfr.Cluster, got "
                                f"{self.cluster!r}", argument=spell("cluster"))
        return self


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """How a game string is loaded and lowered (a Game or a LoweredGame ignores them).

    Attributes:
      cache: load from / store in the cache of lowered games (``True``:
        ``~/.cache/jaxcfr/lowered``; a directory; ``None``/``False``: not used;
        :mod:`jaxcfr.lowering.cache`).
      workers: processes that walk the tree (see :func:`jaxcfr.lower`).
    """
    cache: bool | str | os.PathLike | None = None
    workers: int | None = None

    def check(self, spell=api_spelling) -> "LoadOptions":
        if self.workers is not None:
            positive_int(spell("workers"), self.workers)
        return self


@dataclasses.dataclass(frozen=True)
class Report:
    """Who hears about a solve as it goes.

    Attributes:
      callback: called with each evaluation's record.
      progress: ``progress(iteration, record)``, called after every compiled chunk
        (``record=None``) and every evaluation, like ``jaxcfr.train``'s.
      status: told about lowering and compiling (``begin`` / ``update`` / ``end``: e.g.
        ``jaxcfr.runs.progress.make_status()``, which writes to stderr).
    """
    callback: Callable[[dict[str, Any]], None] | None = None
    progress: Callable[[int, dict[str, Any] | None], None] | None = None
    status: Any = None


#: What a keyword ``solve`` no longer takes became (for the message that says so).
_MOVED = {"sampling": "estimator=jaxcfr.ExternalSampling(...) (an estimator object)",
          "samples": "estimator=jaxcfr.ExternalSampling(samples=...)",
          "counts": "estimator=jaxcfr.ExternalSampling(samples=..., counts=True)",
          "draws": "chance=jaxcfr.Chance(\"sampled\", draws=...)",
          "seeds": "seed=[...] (a list of seeds is a batch)",
          "chunk": "device=jaxcfr.DeviceOptions(chunk=...)",
          "compilation_cache": "device=jaxcfr.DeviceOptions(compilation_cache=...)",
          "cluster": "device=jaxcfr.DeviceOptions(cluster=...)",
          "hand_buckets": "device=jaxcfr.DeviceOptions(hand_buckets=...)",
          "cache": "load=jaxcfr.LoadOptions(cache=...)",
          "workers": "load=jaxcfr.LoadOptions(workers=...)",
          "callback": "report=jaxcfr.Report(callback=...)",
          "progress": "report=jaxcfr.Report(progress=...)",
          "status": "report=jaxcfr.Report(status=...)"}


@dataclasses.dataclass(frozen=True)
class SolveOptions:
    """Everything a solve is told, grouped and checked (before any lowering).

    Attributes:
      solver: the solver, its estimator included.
      iterations: iterations to run.
      eval_every: evaluate every this many iterations (``None``: only at the end).
      target: stop at the first evaluation whose metric is at or below it (``None``: run
        every iteration); needs ``eval_every``.
      parameters: the solver's parameter values by name, checked by their declarations
        (:attr:`~jaxcfr.solvers.solver.Solver.parameters`; a list: a batch).
      chance: how chance is treated (a :class:`jaxcfr.engine.chance.ChanceMode`).
      precision: ``"float32"`` or ``"float64"``.
      device: :class:`DeviceOptions`.
      load: :class:`LoadOptions`.
      lock: node locking as given (a mapping, a lock file's path, a
        :class:`~jaxcfr.solvers.locking.Lock`; ``None``: none), resolved against the
        game's rows once it is lowered (:func:`jaxcfr.api.locks.resolve_lock`; a stack
        of public trees: :func:`~jaxcfr.api.locks.resolve_stack_lock`).
      per_member: on a stack of public trees, the parameters' lists give one value per
        member (a config's ``solver.combine = "members"``), not a batch of settings.
      member_labels: further names of a stack's members that a lock may use (the boards
        of ``game.boards``), or ``None``.
    """
    solver: Solver
    iterations: int
    eval_every: int | None
    parameters: dict[str, Any]
    chance: ChanceMode
    precision: str = "float32"
    device: DeviceOptions = DeviceOptions()
    load: LoadOptions = LoadOptions()
    lock: Any = None
    target: float | None = None
    per_member: bool = False
    member_labels: tuple[str, ...] | None = None

    @classmethod
    def check(cls, given: Mapping[str, Any], spell=api_spelling) -> "SolveOptions":
        """The options of :func:`solve`'s arguments ``given`` by name (its signature is the
        one list of them, with their defaults; ``parameters``: the solver's parameter
        values), each checked by the rules every entry point shares
        (:mod:`jaxcfr._util.arguments`, the parts' declarations, the presets, the
        sampled-chance rules); errors name the arguments as ``spell`` renders them (the
        API's names, the command line's flags)."""
        unknown = set(given) - set(_SOLVE_DEFAULTS)
        if unknown:
            raise TypeError(f"solve() has no argument {sorted(unknown)[0]!r}")
        a = {**_SOLVE_DEFAULTS, **given}
        values = dict(a["parameters"] or {})
        iterations = positive_int(spell("iterations"), a["iterations"])
        eval_every = optional_positive_int(spell("eval_every"), a["eval_every"])
        target = stop_target(spell("target"), a["target"], spell("eval_every"), eval_every)
        arguments.one_of(spell("precision"), a["precision"], PRECISIONS)
        device = _group(a["device"], DeviceOptions, "device", spell).check(spell)
        load = _group(a["load"], LoadOptions, "load", spell).check(spell)
        solver = make_solver(a["algorithm"], alternating=a["alternating"],
                             estimator=a["estimator"], spell=spell)
        _not_arguments(values, solver, spell)
        parameters = solver.check_parameters(values, spell)
        chance = chance_mode(a["chance"], spell=spell)
        lock = a["lock"]
        if lock is not None:
            if not isinstance(lock, (Mapping, str, os.PathLike, Lock)):
                raise ArgumentError(f"{spell('lock')} must map information sets to "
                                    f"{{action: probability}} (or name a lock file), got "
                                    f"{type(lock).__name__}", argument=spell("lock"))
            if not solver.estimator.dense:
                raise ArgumentError(f"{spell('lock')}: node locking needs a full-width "
                                    f"estimator, not {solver.estimator.describe()}",
                                    argument=spell("lock"))
            if chance.always_samples:
                raise ArgumentError(f"{spell('lock')}: node locking needs the lowered tree, "
                                    "not sampled chance", argument=spell("lock"))
        options = cls(solver, iterations, eval_every, parameters, chance, a["precision"],
                      device, load, lock, target)
        if chance.always_samples:
            options.check_sampled_chance(spell)
        return options

    def check_sampled_chance(self, spell=api_spelling, because: str = "") -> None:
        """:func:`~jaxcfr.engine.chance.sampled_chance_rules` for these options."""
        sampled_chance_rules(spell, estimator=self.solver.estimator, because=because,
                             parameters=self.parameters)


def _not_arguments(values: Mapping[str, Any], solver: Solver, spell) -> None:
    """A keyword that is neither a parameter of ``solver`` nor an argument of :func:`solve`,
    but was one (:data:`_MOVED`) or looks like one: an error saying which."""
    taken = {p.name for p in solver.parameters}
    for name, value in values.items():
        if name in taken or value is None:
            continue
        if name in _MOVED:
            raise ArgumentError(f"solve() takes no {spell(name)} any more: give "
                                f"{_MOVED[name]}", argument=spell(name))
        close = difflib.get_close_matches(name, list(_SOLVE_DEFAULTS)[:-1], n=1, cutoff=0.8)
        if close:
            raise ArgumentError(f"solve() has no argument {spell(name)} (did you mean "
                                f"{spell(close[0])}?)", argument=spell(name))


def _group(value, kind: type, name: str, spell):
    """An option group: ``None`` (the defaults) or a ``kind``."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ArgumentError(f"{spell(name)} must be a jaxcfr.{kind.__name__}, got {value!r}",
                            argument=spell(name))
    return value


def solve(game: Any, algorithm: str | Solver = "cfr+", iterations: int = 1000, *,
          estimator: Estimator | None = None, chance: str | ChanceMode = "auto",
          alternating: bool | None = None, eval_every: int | None = None,
          target: float | None = None, precision: str = "float32",
          device: DeviceOptions | None = None, load: LoadOptions | None = None,
          report: Report | None = None, lock: Mapping | str | os.PathLike | None = None,
          **parameters) -> SolveResult:
    """Solve ``game`` with ``algorithm`` for ``iterations`` iterations (at most, with
    ``target``).

    Args:
      game: a game string (``"leduc_poker"``, ``"x.efg"``), a Game, or a LoweredGame
        (a stacked one solves the whole batch). A public tree (a PublicGame, one lowered
        by ``jaxcfr.lower_public``, a string with ``tree='public'`` or naming a public
        game such as ``holdem_spot``) runs through the same Runner (its value kernel is
        the seam's ``PublicTree``) and gives a :class:`PublicSolveResult`.
      algorithm: a preset name (``cfr``, ``cfr+``, ``lcfr``, ``dcfr``, ``pcfr+``,
        ``dcfr+``, ``pdcfr+``, ``hs-pcfr+``; any case, aliases as ``cfr_plus``) or a
        Solver (one made of your own parts too).
      estimator: the estimator object (default: the solver's, exact for a preset), e.g.
        ``jaxcfr.ExternalSampling(samples=16)`` (:mod:`jaxcfr.solvers.estimators`);
        ``counts=True`` runs the samples as counts over the whole tree
        (``jaxcfr.ExternalSampling(samples=4096, counts=True)``: one pass whatever the
        number of samples; :mod:`jaxcfr.kernels.counts`).
      chance: ``"auto"`` (lower the tree where chance can be enumerated, else sample it),
        ``"exact"``, ``"sampled"`` (the host draws chance samples each iteration and
        lowers what follows them: :mod:`jaxcfr.engine.sampled_chance`; metrics are
        exact where the full game can be lowered, else estimates with intervals), or a
        :class:`~jaxcfr.engine.chance.ChanceMode` with its options
        (``jaxcfr.Chance("sampled", draws=64)``, ``jaxcfr.SampledChance(draws=64)``).
      alternating: override the preset's update order.
      eval_every: evaluate the average profile every this many iterations (and at
        the end); ``None``: only at the end.
      target: stop at the first evaluation whose metric (``record["metric"]``: the
        exploitability where the game has one, else NashConv; in a batch or a stack,
        every member's) is at or below it: ``iterations`` is then the most it runs, and
        ``result.reached_target`` says whether it stopped there (at
        ``result.final["iteration"]``), the records up to it being those of the full run.
        A finite number above 0, checked at evaluations only: it needs ``eval_every``
        (``jaxcfr train``'s ``run.stop_at``, ``--target``; the same test,
        :func:`jaxcfr.engine.loop.run_loop`'s ``stop_at``).
      precision: ``"float32"`` or ``"float64"`` (scoped to this call).
      device: :class:`DeviceOptions` (chunk, compilation cache, cluster).
      load: :class:`LoadOptions` (cache of lowered games, lowering workers).
      report: :class:`Report` (callback per evaluation, progress, status).
      lock: node locking (docs/holdem.md "Node locking"; :mod:`jaxcfr.api.locks`): a
        mapping from information set (a history tree's key, or ``(player, key)``; a
        public tree's ``(public history, hand)``) to ``{action: probability}``, or a
        lock file's path (JSON). Those rows play the lock at every iteration and their
        average is the lock; the rest is solved; the metrics are the restricted game's,
        where the locked player cannot deviate at the locked rows
        (:mod:`jaxcfr.solvers.locking`). A traced argument: another lock does not
        recompile. One game, full width, exact chance. A public tree with merged
        (suit-isomorphic) chance outcomes is solved merged when the lock keeps the suit
        symmetry (:func:`jaxcfr.api.locks.symmetric_lock`), else lowered again without
        merging (the progress says so).
      **parameters: the solver's traced parameters by name, as its parts declare them
        (``solver.parameters``; README "Algorithms"): e.g. ``alpha``, ``beta``,
        ``gamma`` of the discounted presets, ``exploration`` of outcome sampling, and
        ``seed`` (iteration ``t`` draws from ``fold_in(key(seed), t)``). A list of values
        is a batch of settings (or seeds) solved by the same compiled step, each member
        equal to its separate run (with ``counts``, to float rounding); several lists:
        element by element.
    """
    given = dict(locals())
    given.pop("game")
    options = SolveOptions.check(given)
    return solve_with(game, options, report)


#: :func:`solve`'s arguments after the game, with their defaults: the one list of them.
_SOLVE_DEFAULTS = {name: (p.default if p.kind is not p.VAR_KEYWORD else {})
                   for name, p in list(inspect.signature(solve).parameters.items())[1:]}


def solve_with(game: Any, options: SolveOptions, report: Report | None = None, *,
               spell=api_spelling) -> SolveResult:
    """:func:`solve` of checked :class:`SolveOptions` (the command line's way in);
    ``spell`` names the arguments in the errors found once the game is known."""
    report = report or Report()
    public = public_game_of(game)               # a public tree (docs/public_trees.md)
    if public is not None and options.device.cluster is not None:
        raise ArgumentError("a public tree is solved in one process (no cluster)",
                            argument=spell("cluster"))
    cluster = options.device.cluster
    if cluster is not None:
        cluster.initialize()                        # before anything touches a device
    mesh = None if cluster is None else batch_mesh()
    label = os.fspath(game) if isinstance(game, (str, os.PathLike)) else ""
    runner = make_runner(game if label else public or game, options, status=report.status,
                         mesh=mesh,
                         spell=spell, label=label, cache=options.load.cache,
                         workers=options.load.workers)
    try:
        result = _solve(runner, options.iterations, options.eval_every, report.callback,
                        report.progress, report.status, profile=public is None,
                        target=options.target)
    finally:
        runner.close()
    if public is not None:                      # what a public tree's result adds
        # the game and its rows as lowered: a padded one's (hand buckets) padding dropped
        # from the average and from every table of the state (a stack member's way)
        state = result.state
        lowered, average, *tables = unbucketed(result.lowered, result.average_strategy,
                                               *state.tables.values())
        if lowered is not result.lowered:
            state = state._replace(**dict(zip(state.tables, tables)))
        return PublicSolveResult(lowered, result.solver, state,
                                 average, result.metrics, result.final,
                                 result.seconds, result.compile_seconds,
                                 result.iterations_per_second, result.chance,
                                 reached_target=result.reached_target)
    return result


def _solve(runner: RunnerProtocol, iterations, eval_every, callback, progress, status,
           profile: bool = True, target: float | None = None) -> SolveResult:
    """The run loop of :func:`solve_with`; ``profile``: make the result's
    :class:`~jaxcfr.Profile` (a public tree's is made on demand:
    ``PublicSolveResult.to_profile``); ``target``: the loop's ``stop_at``."""
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
                   compile_seconds=compile_seconds, wall=lambda: time.perf_counter() - start,
                   stop_at=target)
    if out.interrupted:            # between two chunks: solve has nothing to keep, so stop
        raise KeyboardInterrupt
    profiles = runner.profiles(out.state) if profile and runner.batch_members == 1 else []
    return SolveResult(
        lowered=runner.lowered, solver=runner.solver, state=out.state,
        average_strategy=runner.profile(out.state),
        profile=profiles[0] if len(profiles) == 1 else None, metrics=out.records,
        final=out.records[-1], seconds=time.perf_counter() - start,
        compile_seconds=compile_seconds,
        iterations_per_second=out.iterations / out.seconds if out.seconds > 0 else float("inf"),
        chance=runner.chance, sampled_chance=runner.report(), reached_target=out.reached)
