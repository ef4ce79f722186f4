"""Training runs: ``train(config, out_dir=..., progress=...)`` and the script entry point.

One run lowers the config's game (or stacks several; with ``game.abstraction``, the
abstracted game or a stack of abstractions of it), builds the solver, and
iterates in compiled chunks, evaluating every ``run.eval_every`` iterations and
checkpointing every ``run.checkpoint_every``. Segment boundaries are absolute
multiples of those cadences, so a resumed run executes exactly the same sequence
of compiled chunks as an uninterrupted one and ends bit for bit equal.

Ctrl-C (SIGINT) and SIGTERM are deferred to the end of the running chunk: the run
then writes a checkpoint and returns with ``interrupted=True`` (a second signal
aborts at once; the last checkpoint stays intact). The run directory is created
once the game is lowered and locked while the run works; one without a checkpoint
resumes from iteration 0 (see :mod:`jaxcfr.runs.rundir`).

With a :class:`~jaxcfr.engine.distributed.Cluster` the run goes over several processes
(``docs/distributed.md``): each lowers the game, the runner shards over the devices of
every process, process 0 alone writes the run directory, and every process reads the
checkpoint it resumes from; a stop (a signal to any process) is agreed at the end of a
chunk, so every process stops there and process 0 writes the checkpoint.

Example::

    >>> from jaxcfr.runs import load_config, train
    >>> result = train(load_config("configs/kuhn.toml"), out_dir="runs/kuhn-demo")
    >>> result.final["exploitability"]
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from jaxcfr._util.arguments import ArgumentError
from jaxcfr._util.atomic import atomic_write_bytes, atomic_write_text
from jaxcfr._util.host_arrays import to_host
from jaxcfr._util.serialize import jsonable
from jaxcfr._util.signals import DeferredStop
from jaxcfr.api.locks import LockError, lock_blamed
from jaxcfr.api.runners import make_runner
from jaxcfr.engine.distributed import (Cluster, any_process, check_same, together,
                                       wait_for_every_process)
from jaxcfr.engine.loop import (Hooks, LoopResult, at_or_below, compile_reporting,
                                iteration_of, lower_public_reporting, lower_reporting,
                                run_loop)
from jaxcfr.engine.protocol import RunnerProtocol
from jaxcfr.engine.runner import batch_mesh
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import load_abstraction
from jaxcfr.lowering.public import lower_public, public_game_of
from jaxcfr.lowering.public_stack import PublicStack, StackError, lower_stack
from jaxcfr.lowering.stack import stack
from jaxcfr.profiles.lifting import lifted_row
from jaxcfr.profiles.profile import Profile
from jaxcfr.runs import checkpoint
from jaxcfr.runs.checkpoint import CheckpointError
from jaxcfr.runs.progress import pot_of
from jaxcfr.runs.config import (Config, check_config, check_sampled_chance, compute_keys,
                                config_spelling, key_default, to_toml)
from jaxcfr.runs.rundir import RunDir, default_run_dir
from jaxcfr.solvers.solver import SolverState
from jaxcfr.tensors import LoweredGame

__all__ = ["train", "TrainResult", "build_lowered", "build_runner"]

ProgressFn = Callable[[int, "dict[str, Any] | None"], None]


@dataclasses.dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
      config: the resolved config (``run.out_dir`` is the run directory).
      run_dir: the run directory.
      lowered: the lowered (possibly stacked) game.
      state: the final (or interrupted) solver state, device arrays.
      metrics: every evaluation record of the run (earlier segments included on resume).
      final: the last record (``None`` if interrupted before the first evaluation).
      members: one label per batch member (``[]`` for a single run).
      profiles: the average profile of every member (one for a single run).
      best_member: index of the member with the lowest final metric (written as profile.npz;
        with an abstraction, the lowest full-game metric of the lifted profiles).
      iteration: iterations done.
      interrupted: stopped by Ctrl-C, SIGTERM or a KeyboardInterrupt from ``progress``
        before the last iteration.
      stopped_by: ``"SIGINT"`` or ``"SIGTERM"`` when a signal stopped the run, else ``None``.
      reached_target: the run stopped before ``solver.iterations`` because an evaluation's
        metric was at or below ``run.stop_at`` (a checkpoint is written there).
      resumed_from: the checkpoint iteration a resumed run started from, else ``None``.
      compile_seconds: compile time of this process's chunk and evaluation.
      wall_seconds: wall time of the run, over all its resumed segments.
      iterations_per_second: this process's iterations over their time (evaluations,
        checkpoints and compilation excluded); ``None`` if it ran none.
      abstraction: with ``game.abstraction``, one row per member (``abstraction.json``):
        sizes, the metric inside the abstraction and the lifted profile's in the full game.
      sampled_chance: under sampled chance (``solver.chance``), the host's figures
        (:meth:`jaxcfr.engine.sampled_chance.SampledChanceRunner.report`); else ``None``.
    """
    config: Config
    run_dir: Path
    lowered: LoweredGame
    state: SolverState
    metrics: list[dict[str, Any]]
    final: dict[str, Any] | None
    members: list[str]
    profiles: list[Profile]
    best_member: int
    iteration: int
    interrupted: bool
    resumed_from: int | None
    compile_seconds: float
    wall_seconds: float
    iterations_per_second: float | None = None
    abstraction: list[dict[str, Any]] | None = None
    stopped_by: str | None = None
    sampled_chance: dict[str, Any] | None = None
    resolve: dict[str, Any] | None = None   # [resolve]'s report (resolve.json), if it ran
    reached_target: bool = False


# -- game and members -------------------------------------------------------------
def build_lowered(config: Config, status=None) -> LoweredGame:
    """Lower the config's game, or stack its games (``game.names``, or a list of
    abstractions; public trees, or ``game.boards``: :func:`public_stack`), through the
    cache of lowered games unless ``game.cache`` is false (abstracted games are not
    cached); an abstracted member is named
    ``"<game> | <abstraction>"``; ``status`` (optional, see
    :func:`jaxcfr.engine.loop.lower_reporting`) hears about each."""
    stacked = public_stack(config, status)
    if stacked is not None:
        return stacked
    parts = []
    for s, a in config.game.members:
        extra = {} if a is None else {"abstraction": load_abstraction(a)}
        parts.append(lower_reporting(s, status, cache=config.game.cache,
                                     sort_infosets=config.game.sort_infosets,
                                     name=s if a is None else f"{s} | {a}", **extra))
    return stack(parts) if config.game.batched else parts[0]


def public_stack(config: Config, status=None) -> PublicStack | None:
    """The config's batch as one :class:`~jaxcfr.lowering.public_stack.PublicStack` when
    its games are public trees (``game.names`` of them, or ``game.boards``), else
    ``None``: each member lowered through the cache of lowered games (``game.cache``) and
    told to ``status``, then padded to one shape (members of ranked and dense terminals
    are all lowered ranked). A batch that mixes public and history trees, or public trees
    with an abstraction, is refused naming the key and the member."""
    g = config.game
    if not g.batched:
        return None
    key = "game.boards" if g.boards is not None else "game.names"
    strings = g.strings
    first = public_game_of(strings[0])

    def mixed(s: str) -> ArgumentError:
        return ArgumentError(f"{key}: the members are public trees and history trees mixed; "
                             f"{s!r} is not a public tree (give every member tree='public', "
                             "or none)", key)
    if first is None:
        other = next((s for s in strings[1:] if public_game_of(s) is not None), None)
        if other is not None:
            raise mixed(strings[0])
        return None
    if g.abstracted:
        raise ArgumentError(f"{key}: a stack of public trees is solved on its public trees, "
                            "without game.abstraction or game.bucketing", key)

    def game_at(b: int):                     # members loaded one at a time, as needed
        x = first if b == 0 else public_game_of(strings[b])
        if x is None:
            raise mixed(strings[b])
        return x

    count, many = len(strings), len(strings) > STATUS_MEMBERS
    told = None if many else status          # a few members: each told to status

    def lowered_at(b: int, terminals: str = "auto", merges: bool = True):
        if terminals == "auto":              # as stacked: named, each on its merged tree
            return lower_public_reporting(game_at(b), told, text=strings[b], cache=g.cache,
                                          name=strings[b], merges=merges)  # (the cache)
        return lower_public(game_at(b), terminals=terminals, name=strings[b], merges=merges)

    def progress(done: int, count: int) -> None:
        if many and status is not None:
            status.phase(f"lowering {count:,} members", done, count)
    try:
        stacked = lower_stack(lowered_at, count, what="members",     # (MemoryBudgetError)
                              progress=progress,
                              **config.make_solver().state_size(config.run.precision))
    except StackError as e:
        raise ArgumentError(f"{key}: {e}", key) from None
    pots = [pot_of(game_at(b)) for b in range(count)]  # hold'em spots: metrics in % of pot
    return dataclasses.replace(stacked, pots=None if None in pots else tuple(pots))


#: A stack of more members than this reports its lowering as one count, not member by
#: member.
STATUS_MEMBERS = 8


# -- the run ----------------------------------------------------------------------
def _compute_mismatch(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """How config ``a`` (TOML-shaped) differs from ``b`` (a checkpoint's) in what is
    computed; a key one of them lacks (a checkpoint written before the key existed) is
    its default."""
    out = []
    for key in compute_keys(a, b):
        section, _, field = key.partition(".")
        x = a.get(section, {}).get(field, key_default(key))
        y = b.get(section, {}).get(field, key_default(key))
        if jsonable(x) != jsonable(y):
            out.append(f"{key} ({y!r} in the checkpoint, {x!r} now)")
    return out


def _parameter_set(runner: RunnerProtocol, config: Config) -> dict[str, Any]:
    """The run's parameter set by name (every parameter of the solver, defaults included),
    as a checkpoint records it."""
    return jsonable(runner.solver.settings(config.run_parameters()))


def _parameter_mismatch(runner: RunnerProtocol, config: Config,
                        recorded: dict[str, Any] | None) -> list[str]:
    """How the parameter set a checkpoint recorded differs from this run's (nothing for a
    checkpoint that recorded none: format 3 and older)."""
    if recorded is None:
        return []
    now = _parameter_set(runner, config)
    return [f"parameter {k} ({recorded.get(k)!r} in the checkpoint, {now.get(k)!r} now)"
            for k in sorted(set(now) | set(recorded)) if recorded.get(k) != now.get(k)]


def lock_digest(config: Config) -> str | None:
    """The SHA-256 of ``solver.lock``'s entries (the lock file's JSON written back in
    canonical form: spacing and key order aside), or ``None`` for an unlocked run; a
    checkpoint records it, and a run resumes only under the same lock."""
    if config.solver.lock is None:
        return None
    config.lock()                                       # (LockError: not a lock file)
    entries = json.loads(config.lock_bytes().decode("utf-8-sig"))
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _lock_mismatch(recorded: str | None, config: Config) -> str:
    if recorded is None:
        return (f"no node lock (the run has solver.lock = {config.solver.lock!r} now); a "
                "lock changes what is solved: start a new run")
    if config.solver.lock is None:
        return ("a node lock (lock.json in the run directory; the config has no solver.lock "
                "now): resume with the run's own config.toml")
    return (f"another node lock (its entries differ from {config.solver.lock!r}: SHA-256 "
            f"{recorded[:12]}... in the checkpoint, {lock_digest(config)[:12]}... now)")


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def train(config: Config, *, out_dir: str | None = None, progress: ProgressFn | None = None,
          resume: str | None = None, handle_sigint: bool = True,
          log: Callable[[str], None] = _stderr, status=None,
          cluster: Cluster | None = None) -> TrainResult:
    """Run ``config``; write the run directory; return a :class:`TrainResult`.

    Args:
      config: a :class:`~jaxcfr.runs.Config`.
      out_dir: the run directory (default ``config.run.out_dir``, else
        ``runs/<config name>-<timestamp>``); it must be new, empty, or a run directory
        without a checkpoint (see :meth:`RunDir.check_new`).
      progress: ``progress(iteration, metrics)``, called after every compiled chunk
        (``metrics=None``) and every evaluation (the record written to
        ``metrics.jsonl``). Raising ``KeyboardInterrupt`` from it stops the run
        like Ctrl-C (checkpoint written, ``interrupted=True``).
      resume: a run directory to continue from its newest valid checkpoint (from
        iteration 0 when it has none yet).
      handle_sigint: defer Ctrl-C and SIGTERM to the end of the running chunk (main
        thread only).
      log: where warnings and notices go (default stderr).
      status: told about lowering (with node counts) and compiling: an object with
        ``begin``, ``update`` and ``end`` (``jaxcfr.runs.progress.make_status()``).
      cluster: run over several processes (:class:`~jaxcfr.engine.distributed.Cluster`;
        ``jax.distributed`` is started here if it is not yet): every process calls
        ``train`` with the same config and the same ``out_dir`` (or ``resume``).

    Raises:
      CheckpointError: ``resume``'s checkpoint is of another game, format version or
        solver configuration, or every checkpoint there is corrupt.
      FileExistsError: ``out_dir`` already holds a run, or other files.
      RunDirBusy: another process is running this directory.
    """
    wall_start = time.perf_counter()
    if cluster is not None:
        cluster.initialize()                         # before anything touches a device
    writer = cluster is None or cluster.is_writer
    config = check_config(config)
    if cluster is not None and resume is None and not (out_dir or config.run.out_dir):
        raise ArgumentError("a run over several processes needs its run directory named "
                            "(--out, run.out_dir): every process must name the same one")
    with contextlib.ExitStack() as held:
        with together("open the run directory"):
            if resume is not None:
                run = RunDir.existing(resume, writer)
                if writer:
                    held.enter_context(run.lock())
            else:
                run = RunDir(out_dir or config.run.out_dir or default_run_dir(config.name),
                             writer)
                if writer:
                    run.check_new()                  # before the work of lowering
        result = _train(config, run, resume is not None, progress, handle_sigint, log, status,
                        wall_start, cluster)
        if cluster is not None:
            # every process returns once the writer wrote the profiles, the plot and
            # [resolve]'s files (as long as that takes: a dead process ends the run)
            wait_for_every_process("the end of train")
        return result


def build_runner(config: Config, status=None, mesh=None) -> RunnerProtocol:
    """The runner of ``config`` (:func:`jaxcfr.api.runners.make_runner`, the one builder):
    full-width over the lowered game(s), or sampled chance (``solver.chance``; ``auto``
    samples a game whose chance cannot be enumerated); ``mesh``: shard it (not under
    sampled chance). A batch of games is lowered and stacked first."""
    if config.game.batched:
        game, lower_kwargs = build_lowered(config, status), {}
    else:
        game, abstraction = config.game.members[0]
        lower_kwargs = {"cache": config.game.cache, "sort_infosets": config.game.sort_infosets,
                        "name": game if abstraction is None else f"{game} | {abstraction}"}
        if abstraction is not None:
            lower_kwargs["abstraction"] = load_abstraction(abstraction)
    try:
        return make_runner(game, config.options(), status=status, mesh=mesh,
                           spell=config_spelling, label=config.game.name,
                           check_sampled=lambda because: check_sampled_chance(config,
                                                                              because=because),
                           **lower_kwargs)
    except LockError as e:                   # the lock's rows against the game: which file
        raise LockError(lock_blamed(f"solver.lock = {config.solver.lock!r}", str(e)),
                        "solver.lock") from None


def batch_over_devices(config: Config, devices: int) -> None:
    """Raise ``ArgumentError`` (before anything is lowered) when ``config``'s batch cannot
    be shared out evenly over ``devices`` devices, as the runner over a mesh of them needs:
    a batch of games is sharded over its games, a batch of settings or seeds over those
    (one game without a batch is split over the devices, and fits any count)."""
    if config.game.batched:
        members, what = len(config.game.members), "games"
    else:
        lists = [len(v) for v in config.run_parameters().values() if isinstance(v, list)]
        if not lists:
            return
        members, what = max(lists), "settings or seeds"
    if members % devices:
        fewer = members - members % devices
        more = fewer + devices
        raise ArgumentError(
            f"a batch of {members} {what} cannot be shared out evenly over the run's {devices} "
            f"devices (every process's): give a multiple of {devices} members "
            f"({', '.join(str(m) for m in (fewer, more) if m)}, ...), or run over fewer devices "
            "(XLA_FLAGS=--xla_force_host_platform_device_count on CPUs, CUDA_VISIBLE_DEVICES "
            "on GPUs)")


def _train(config: Config, run: RunDir, resume: bool, progress, handle_sigint, log, status,
           wall_start: float, cluster: Cluster | None) -> TrainResult:
    if cluster is not None:
        import jax
        batch_over_devices(config, jax.device_count())       # before the work of lowering
    with together("lower the game and build the runner"):
        runner = build_runner(config, status, mesh=None if cluster is None else batch_mesh())
    try:
        return _train_with(config, run, resume, runner, progress, handle_sigint, log, status,
                           wall_start)
    finally:
        runner.close()


def _train_with(config: Config, run: RunDir, resume: bool, runner, progress, handle_sigint,
                log, status, wall_start: float) -> TrainResult:
    if not resume:
        # Created only now that the run can start; re-checked under the lock (another
        # process may have started in the same directory meanwhile).
        with contextlib.ExitStack() as held:
            with together("create the run directory"):
                if run.writer:
                    held.enter_context(RunDir.create(run.path).lock())
                    if run.check_new():
                        log(f"{run.path} holds a run that never wrote a checkpoint: starting "
                            "it afresh")
            return _iterate(config, run, runner, None, progress, handle_sigint, log, status,
                            wall_start)
    fp = runner.fingerprint()
    with together("read the checkpoint to resume from"):     # every process reads it
        ckpt = checkpoint.load_latest(run.checkpoints, fingerprint=fp, warn=log,
                                      game=config.to_dict().get("game", {}))
        if ckpt is None:
            log(f"{run.path} has no checkpoint yet: starting from iteration 0")
        else:
            bad = _compute_mismatch(config.to_dict(), ckpt.meta.get("config", {}))
            bad += _parameter_mismatch(runner, config, ckpt.meta.get("parameters"))
            recorded = ckpt.meta.get("lock")              # absent: an unlocked run
            if recorded != lock_digest(config):
                bad.append(_lock_mismatch(recorded, config))
            if bad:
                raise CheckpointError(f"checkpoint {ckpt.path} was written with another "
                                      f"solver configuration: {'; '.join(bad)}")
            if ckpt.iteration > config.solver.iterations:       # before any compilation
                raise CheckpointError(
                    f"the run {run.path} already has {ckpt.iteration} iterations, more than "
                    f"solver.iterations = {config.solver.iterations}: resume with more to go "
                    f"on (--set solver.iterations=N, N > {ckpt.iteration}), or use the run as "
                    f"it is")
    check_same(-1 if ckpt is None else ckpt.iteration, "the checkpoint to resume from "
               "(is the run directory on a file system every process sees?)")
    return _iterate(config, run, runner, ckpt, progress, handle_sigint, log, status, wall_start)


def _iterate(config: Config, run: RunDir, runner: RunnerProtocol, ckpt, progress,
             handle_sigint, log, status, wall_start: float) -> TrainResult:
    """Compile and iterate in the (locked) run directory, from ``ckpt`` or from 0."""
    config = dataclasses.replace(config, run=dataclasses.replace(
        config.run, out_dir=str(run.path.resolve())))
    lowered = runner.lowered
    fp = runner.fingerprint()
    digest = lock_digest(config)
    if config.solver.lock is not None:
        # the lock travels with the run: a copy in the run directory, which the run's own
        # config names (relative to it), so that --resume RUN_DIR plays the same lock
        text = config.lock_bytes().decode("utf-8-sig")
        if run.writer and Path(config.solver.lock).resolve() != run.lock_file.resolve():
            atomic_write_text(run.lock_file, text)
        written = dataclasses.replace(config, solver=dataclasses.replace(
            config.solver, lock=run.lock_file.name))
    else:
        written = config
    if run.writer:
        atomic_write_text(run.config, to_toml(written))

    if ckpt is not None:
        try:
            runner.restore_host(ckpt.meta.get("host"))
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"checkpoint {ckpt.path}: its host state does not fit this "
                                  f"run: {e}") from None
    state = runner.init()
    if ckpt is not None:
        state = _restore(runner, state, ckpt)
    start = iteration_of(state)
    state, compile_seconds = compile_reporting(runner, state, status)
    labels = runner.member_labels()
    wall_before = float(ckpt.meta.get("wall_seconds", 0.0)) if ckpt is not None else 0.0
    metrics = run.read_metrics(upto=start) if ckpt is not None else []
    run.write_metrics(metrics)

    if progress is not None:
        progress(start, None)

    def wall() -> float:
        return wall_before + time.perf_counter() - wall_start

    def save(it: int, st) -> None:
        arrays = {k: to_host(v) for k, v in st.arrays().items()}    # on every process
        if not run.writer:
            return
        extra = {"wall_seconds": wall(), "members": labels,
                 "parameters": _parameter_set(runner, config), "lock": digest}
        host = runner.host_state()            # sampled chance: the rows numbered, the shapes
        if host is not None:
            extra["host"] = host
        checkpoint.save(run.checkpoints, arrays, iteration=it, fingerprint=fp,
                        config=config.to_dict(), keep=config.run.keep_checkpoints, extra=extra)

    def on_record(rec):
        run.append_metrics(rec)
        metrics.append(rec)
        if progress is not None:
            progress(rec["iteration"], rec)

    saved = [start if ckpt is not None else None]

    def on_checkpoint(it, st):
        save(it, st)
        saved[0] = it

    with DeferredStop(handle_sigint, log) as guard:
        hooks = Hooks(on_chunk=None if progress is None else (lambda it: progress(it, None)),
                      on_record=on_record, on_checkpoint=on_checkpoint,
                      stop_requested=lambda: any_process(guard.requested))
        try:
            # resumed where an evaluation already met run.stop_at (a run that stopped
            # there, or a target now above its metric): it is reached, nothing to run
            last = metrics[-1] if ckpt is not None and metrics else None
            if (config.run.stop_at is not None and last is not None
                    and last["iteration"] == start
                    and at_or_below(last["metric"], config.run.stop_at)):
                out = LoopResult(state, start, [], False, 0, 0.0, reached=True)
            else:
                out = run_loop(runner, state, total=config.solver.iterations,
                               eval_every=config.run.eval_every,
                               checkpoint_every=config.run.checkpoint_every, hooks=hooks,
                               compile_seconds=compile_seconds, wall=wall,
                               stop_at=config.run.stop_at)
        except KeyboardInterrupt:
            log(f"aborted; the last checkpoint ({saved[0]}) is intact")
            raise
        if saved[0] != out.iteration:
            save(out.iteration, out.state)
        profiles = runner.profiles(out.state)
        rows = None
        if config.game.abstracted and run.writer:
            try:
                rows = _lift(run, config, lowered, profiles, metrics)
            except GameError as e:       # e.g. the full game is over the memory budget
                log(f"warning: the lifted profiles were not evaluated in the full game: {e}")
        best = _write_profiles(run, profiles, labels, metrics, rows)
        if isinstance(lowered, PublicStack) and run.writer and metrics:
            _write_spots(run, config, lowered, metrics[-1])
        if run.writer:
            _write_plot(run, config, metrics, labels, log, rows)
    resolved = None
    # after the guard: Ctrl-C stops it
    if config.resolve is not None and not out.interrupted and run.writer:
        from jaxcfr.runs.resolving import resolve_after_training
        resolved = resolve_after_training(run.path, config, lowered, profiles[best], log,
                                          status)
    return TrainResult(
        config=config, run_dir=run.path, lowered=lowered, state=out.state, metrics=metrics,
        final=metrics[-1] if metrics else None, members=labels, profiles=profiles,
        best_member=best, iteration=out.iteration, interrupted=out.interrupted,
        resumed_from=start if ckpt is not None else None, compile_seconds=compile_seconds,
        wall_seconds=wall(),
        iterations_per_second=out.iterations / out.seconds if out.seconds > 0 else None,
        abstraction=rows, stopped_by=guard.signal_name, sampled_chance=runner.report(),
        resolve=resolved, reached_target=out.reached)


def _restore(runner: RunnerProtocol, template: SolverState,
             ckpt: checkpoint.Checkpoint) -> SolverState:
    """``ckpt``'s state, checked against the run's zero state ``template``. A checkpoint
    may hold tables the solver does not keep (written before states held only the tables
    their solver reads) or lack its sums' compensation: :meth:`Solver.state_of` says
    which are dropped, folded in or taken as zero, and what cannot be resumed."""
    arrays = ckpt.arrays
    fields = template.arrays()
    unknown = set(arrays) - set(SolverState._fields)
    if unknown or "iteration" not in arrays:
        raise CheckpointError(f"checkpoint {ckpt.path} holds {sorted(arrays)}, the solver state "
                              f"has {sorted(fields)}")
    for name in arrays:
        want, got = fields.get(name, template.regret), arrays[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CheckpointError(
                f"checkpoint {ckpt.path}: {name} is {got.dtype}{list(got.shape)}, the run needs "
                f"{want.dtype}{list(want.shape)} (another precision or batch, or "
                f"run.hand_buckets?)")
    if np.any(np.asarray(arrays["iteration"]) != ckpt.iteration):
        raise checkpoint.CheckpointCorruptError(
            f"checkpoint {ckpt.path}: iteration {np.asarray(arrays['iteration']).tolist()} != "
            f"sidecar's {ckpt.iteration}")
    try:
        return runner.restore(arrays)
    except ArgumentError as e:
        raise CheckpointError(f"checkpoint {ckpt.path} does not fit the run's solver: "
                              f"{e}") from None


def _lift(run: RunDir, config: Config, lowered: LoweredGame, profiles: list[Profile],
          metrics) -> list[dict[str, Any]]:
    """Lift every member's profile to its full game, evaluate it there, write the table.

    Each abstract profile is re-labelled with its full game's string (so that ``jaxcfr
    eval`` evaluates it, lifted, in the full game); the best member's lifted profile is
    written as ``lifted.npz`` and the rows as ``abstraction.json``.
    """
    members = config.game.members
    per_game = len(profiles) // len(members)                 # settings per game
    games = lowered.members if lowered.batch_size is not None else (lowered,)
    final = metrics[-1]["metric"] if metrics else None
    fulls: dict[str, LoweredGame] = {}
    rows, lifted = [], []
    for m, profile in enumerate(profiles):
        game, abstraction = members[m // per_game]
        if game not in fulls:
            fulls[game] = lower_reporting(game, cache=config.game.cache,
                                          sort_infosets=config.game.sort_infosets, name=game)
        table, row = lifted_row(profile, games[m // per_game], fulls[game],
                                abstraction=abstraction, precision=config.run.precision,
                                abstract_metric=final[m] if isinstance(final, list) else final)
        profile.game = game
        lifted.append((fulls[game], table))
        rows.append({"member": m, **row})
    best = int(np.argmin([np.inf if r["full_game_metric"] is None else r["full_game_metric"]
                          for r in rows]))
    full, table = lifted[best]
    lifted_profile = Profile.from_lowered(full, table)
    lifted_profile.game = rows[best]["game"]
    lifted_profile.save(run.path / "lifted.npz")
    atomic_write_text(run.path / "abstraction.json", json.dumps(rows, indent=1))
    return rows


def _write_profiles(run: RunDir, profiles: list[Profile], labels, metrics,
                    rows: list[dict[str, Any]] | None) -> int:
    best = 0
    if labels and metrics:
        final = [np.inf if v is None else v for v in metrics[-1]["metric"]]
        if rows is not None:                 # abstractions compare in the full game
            final = [np.inf if r["full_game_metric"] is None else r["full_game_metric"]
                     for r in rows]
        best = int(np.argmin(final))
        if not run.writer:
            return best
        run.profiles.mkdir(exist_ok=True)
        for m, p in enumerate(profiles):
            p.save(run.profiles / f"member-{m:03d}.npz")
    if run.writer:
        profiles[best].save(run.profile)
    return best


def _write_spots(run: RunDir, config: Config, stacked: PublicStack, final) -> None:
    """``spots.json``: a stack of public trees' last evaluation, one row per member (games
    outer, a batch of settings inner): its label, game string (and board, with
    ``game.boards``), exploitability (or NashConv) and values in chips and, for poker
    spots (the stack's ``pots``), in percent of its pot."""
    boards = None
    if config.game.boards is not None:
        from jaxcfr.runs.boards import chosen_boards
        boards = chosen_boards(config.game.name, config.game.boards)
    rows = []
    per_game = len(final["metric"]) // stacked.batch_size    # settings per game (inner)
    for m, label in enumerate(final["members"]):
        b = m // per_game
        game = stacked.members[b]
        row = {"member": m, "label": label, "game": game.name,
               "board": None if boards is None else boards[b],
               "metric_name": final["metric_name"], "metric": final["metric"][m],
               "exploitability": (None if final["exploitability"] is None
                                  else final["exploitability"][m]),
               "values": final["values"][m], "pot": None, "metric_pot_percent": None,
               "values_pot_percent": None}
        if stacked.pots is not None:
            pot = float(stacked.pots[b])
            row.update(pot=pot, metric_pot_percent=(None if row["metric"] is None
                                                    else 100 * row["metric"] / pot),
                       values_pot_percent=[100 * v / pot for v in row["values"]])
        rows.append(row)
    atomic_write_text(run.path / "spots.json", json.dumps(
        {"iteration": final["iteration"], "spots": rows}, indent=1))


def _write_plot(run: RunDir, config: Config, metrics, labels, log, rows=None) -> None:
    if not config.run.plot:
        return
    try:
        from jaxcfr.runs.plot import plot_convergence
    except ImportError:
        log("matplotlib is not installed: skipping convergence.png")
        return
    buf = io.BytesIO()
    games = (f"{config.game.name} on {len(config.game.strings)} boards"
             if config.game.boards is not None else ", ".join(config.game.strings))
    full = None if rows is None else [r["full_game_metric"] for r in rows]
    if plot_convergence(metrics, buf, title=f"{games}: {config.solver.algorithm}",
                        members=labels or None, full_game=full):
        atomic_write_bytes(run.plot, buf.getvalue())
