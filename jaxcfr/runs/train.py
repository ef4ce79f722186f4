"""Training runs: ``train(config, out_dir=..., progress=...)`` and the script entry point.

One run lowers the config's game (or stacks several), builds the solver, and
iterates in compiled chunks, evaluating every ``run.eval_every`` iterations and
checkpointing every ``run.checkpoint_every``. Segment boundaries are absolute
multiples of those cadences, so a resumed run executes exactly the same sequence
of compiled chunks as an uninterrupted one and ends bit for bit equal.

Ctrl-C (SIGINT) is deferred to the end of the running chunk: the run then writes
a checkpoint and returns with ``interrupted=True`` (a second Ctrl-C aborts at
once; the last checkpoint stays intact).

Example::

    >>> from jaxcfr.runs import load_config, train
    >>> result = train(load_config("configs/kuhn.toml"), out_dir="runs/kuhn-demo")
    >>> result.final["exploitability"]
"""

from __future__ import annotations

import dataclasses
import io
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import numpy as np

from jaxcfr.atomic import atomic_write_bytes, atomic_write_text
from jaxcfr.engine import Runner
from jaxcfr.lowering import LoweredGame, lower
from jaxcfr.profile import Profile
from jaxcfr.registry import load_game
from jaxcfr.serialize import jsonable
from jaxcfr.runs import checkpoint
from jaxcfr.runs.checkpoint import CheckpointError
from jaxcfr.runs.config import COMPUTE_KEYS, Config, to_toml
from jaxcfr.runs.rundir import RunDir, default_run_dir
from jaxcfr.solvers import SolverState, make_solver
from jaxcfr.stack import stack

__all__ = ["train", "TrainResult", "build_lowered", "member_labels", "main"]

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
      best_member: index of the member with the lowest final metric (written as profile.npz).
      iteration: iterations done.
      interrupted: stopped by Ctrl-C / KeyboardInterrupt before the last iteration.
      resumed_from: the checkpoint iteration a resumed run started from, else ``None``.
      compile_seconds: compile time of this process's chunk and evaluation.
      wall_seconds: wall time of the run, over all its resumed segments.
      iterations_per_second: this process's iterations over their time (evaluations,
        checkpoints and compilation excluded); ``None`` if it ran none.
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


# -- game and members -------------------------------------------------------------
def build_lowered(config: Config) -> LoweredGame:
    """Lower the config's game, or stack its games (``game.names``)."""
    parts = [lower(load_game(s), sort_infosets=config.game.sort_infosets, name=s)
             for s in config.game.strings]
    return stack(parts) if config.game.names is not None else parts[0]


def member_labels(config: Config) -> list[str]:
    """Labels of the batch members, games outer, hyper-parameter settings inner ([] if single)."""
    games = list(config.game.names) if config.game.names is not None else [None]
    settings = config.solver.settings() or [None]
    if games == [None] and settings == [None]:
        return []
    out = []
    for g in games:
        for s in settings:
            hp = " ".join(f"{k}={v:g}" for k, v in s.items()) if s else ""
            out.append(" ".join(x for x in (g, hp) if x))
    return out


def _per_member(x: np.ndarray, batched: bool, players: bool) -> np.ndarray:
    """``[(B,) (P,) *H]`` -> ``[M, (P)]`` with members games-outer."""
    x = np.asarray(x, dtype=np.float64)
    if players:
        x = np.moveaxis(x, 1 if batched else 0, -1)
        return x.reshape(-1, x.shape[-1])
    return x.reshape(-1)


def _record(runner: Runner, state, iteration: int, labels: list[str]) -> dict[str, Any]:
    ev = runner.evaluate(state)
    batched = runner.games_batched
    single = not labels

    def pick(x, players=False):
        if x is None:
            return None
        m = _per_member(x, batched, players)
        return m[0].tolist() if single else m.tolist()

    rec = {"iteration": int(iteration), "exploitability": pick(ev["exploitability"]),
           "nash_conv": pick(ev["nash_conv"]), "metric": pick(ev["metric"]),
           "metric_name": ev["metric_name"], "values": pick(ev["values"], True)}
    if not single:
        rec["members"] = list(labels)
    return jsonable(rec)


# -- the run ----------------------------------------------------------------------
class _SigintGuard:
    """Defer the first SIGINT to a chunk boundary (main thread only); the second one aborts."""

    def __init__(self, enabled: bool, say: Callable[[str], None]):
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.requested = False
        self.say = say
        self.previous = None

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.say("interrupt: stopping after the current chunk and writing a checkpoint "
                 "(Ctrl-C again to abort at once)")

    def __enter__(self):
        if self.enabled:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            signal.signal(signal.SIGINT, self.previous)
        return False


def _next_stop(it: int, total: int, eval_every: int, checkpoint_every: int) -> int:
    stops = [total, (it // eval_every + 1) * eval_every]
    if checkpoint_every:
        stops.append((it // checkpoint_every + 1) * checkpoint_every)
    return min(stops)


def _compute_mismatch(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    out = []
    for key in COMPUTE_KEYS:
        section, _, field = key.partition(".")
        x = a.get(section, {}).get(field)
        y = b.get(section, {}).get(field)
        if jsonable(x) != jsonable(y):
            out.append(f"{key} ({y!r} in the checkpoint, {x!r} now)")
    return out


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def train(config: Config, *, out_dir: str | None = None, progress: ProgressFn | None = None,
          resume: str | None = None, handle_sigint: bool = True,
          log: Callable[[str], None] = _stderr) -> TrainResult:
    """Run ``config``; write the run directory; return a :class:`TrainResult`.

    Args:
      config: a :class:`~jaxcfr.runs.Config`.
      out_dir: the run directory (default ``config.run.out_dir``, else
        ``runs/<config name>-<timestamp>``); must not hold a run already.
      progress: ``progress(iteration, metrics)``, called after every compiled chunk
        (``metrics=None``) and every evaluation (the record written to
        ``metrics.jsonl``). Raising ``KeyboardInterrupt`` from it stops the run
        like Ctrl-C (checkpoint written, ``interrupted=True``).
      resume: a run directory to continue from its newest valid checkpoint.
      handle_sigint: defer Ctrl-C to the end of the running chunk (main thread only).
      log: where warnings and notices go (default stderr).

    Raises:
      CheckpointError: ``resume`` has no valid checkpoint, or one of another game,
        format version or solver configuration.
      FileExistsError: ``out_dir`` already holds a run.
    """
    wall_start = time.perf_counter()
    if resume is not None:
        run = RunDir.existing(resume)
    else:
        run = RunDir.create(out_dir or config.run.out_dir or default_run_dir(config.name))
    config = dataclasses.replace(config, run=dataclasses.replace(
        config.run, out_dir=str(run.path.resolve())))
    lowered = build_lowered(config)
    fp = checkpoint.fingerprint(lowered)
    ckpt = None
    if resume is not None:
        ckpt = checkpoint.load_latest(run.checkpoints, fingerprint=fp, warn=log)
        if ckpt is None:
            raise CheckpointError(f"{run.path} has no checkpoint to resume from")
        bad = _compute_mismatch(config.to_dict(), ckpt.meta.get("config", {}))
        if bad:
            raise CheckpointError(f"checkpoint {ckpt.path} was written with another solver "
                                  f"configuration: {'; '.join(bad)}")
    atomic_write_text(run.config, to_toml(config))

    solver = make_solver(config.solver.algorithm, alternating=config.solver.alternating)
    runner = Runner(lowered, solver, config.solver.hyperparams(),
                    precision=config.run.precision, chunk=config.run.chunk)
    state = runner.init()
    if ckpt is not None:
        state = _restore(state, ckpt)
    start = _iteration(state)
    state, compile_seconds = runner.compile(state)
    labels = member_labels(config)
    wall_before = float(ckpt.meta.get("wall_seconds", 0.0)) if ckpt is not None else 0.0
    metrics = run.read_metrics(upto=start) if ckpt is not None else []
    run.write_metrics(metrics)

    if progress is not None:
        progress(start, None)

    def wall() -> float:
        return wall_before + time.perf_counter() - wall_start

    def save(it: int, st) -> None:
        host = {k: np.asarray(v) for k, v in st._asdict().items()}
        checkpoint.save(run.checkpoints, host, iteration=it, fingerprint=fp,
                        config=config.to_dict(), keep=config.run.keep_checkpoints,
                        extra={"wall_seconds": wall(), "members": labels})

    total = config.solver.iterations
    eval_every, ckpt_every, chunk = (config.run.eval_every, config.run.checkpoint_every,
                                     config.run.chunk)
    it, saved = start, (start if ckpt is not None else None)
    seg_iters, seg_seconds = 0, 0.0
    run_iters, run_seconds = 0, 0.0
    interrupted, state_ok = False, True
    with _SigintGuard(handle_sigint, log) as guard:
        try:
            while it < total and not guard.requested:
                stop = _next_stop(it, total, eval_every, ckpt_every)
                while it < stop and not guard.requested:
                    n = min(chunk, stop - it)
                    t0 = time.perf_counter()
                    state_ok = False
                    state = runner.advance(state, n)
                    jax.block_until_ready(state)
                    state_ok = True
                    seg_seconds += time.perf_counter() - t0
                    seg_iters += n
                    run_seconds += time.perf_counter() - t0
                    run_iters += n
                    it += n
                    if progress is not None and not guard.requested:
                        progress(it, None)
                if it < stop:
                    break                                   # interrupted mid-segment
                if it % eval_every == 0 or it == total:
                    rec = _record(runner, state, it, labels)
                    rec["iterations_per_second"] = (seg_iters / seg_seconds
                                                    if seg_seconds > 0 else None)
                    rec["compile_seconds"] = compile_seconds
                    rec["wall_seconds"] = wall()
                    seg_iters, seg_seconds = 0, 0.0
                    run.append_metrics(rec)
                    metrics.append(rec)
                    if progress is not None:
                        progress(it, rec)
                if ckpt_every and it % ckpt_every == 0 and it < total:
                    save(it, state)
                    saved = it
        except KeyboardInterrupt:
            if not state_ok:
                log(f"aborted; the last checkpoint ({saved}) is intact")
                raise
            interrupted = True
        interrupted = interrupted or (guard.requested and it < total)
        if saved != it:
            save(it, state)
        profiles, best = _write_profiles(run, runner, lowered, state, labels, metrics)
        _write_plot(run, config, metrics, labels, log)
    return TrainResult(
        config=config, run_dir=run.path, lowered=lowered, state=state, metrics=metrics,
        final=metrics[-1] if metrics else None, members=labels, profiles=profiles,
        best_member=best, iteration=it, interrupted=interrupted,
        resumed_from=start if ckpt is not None else None, compile_seconds=compile_seconds,
        wall_seconds=wall(),
        iterations_per_second=run_iters / run_seconds if run_seconds > 0 else None)


def _restore(template: SolverState, ckpt: checkpoint.Checkpoint) -> SolverState:
    arrays = ckpt.arrays
    fields = template._fields
    if set(arrays) != set(fields):
        raise CheckpointError(f"checkpoint {ckpt.path} holds {sorted(arrays)}, the solver state "
                              f"has {sorted(fields)}")
    out = []
    for name in fields:
        want, got = getattr(template, name), arrays[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CheckpointError(
                f"checkpoint {ckpt.path}: {name} is {got.dtype}{list(got.shape)}, the run needs "
                f"{want.dtype}{list(want.shape)} (another precision or batch?)")
        out.append(jax.numpy.asarray(got))
    state = SolverState(*out)
    if np.any(np.asarray(state.iteration) != ckpt.iteration):
        raise checkpoint.CheckpointCorruptError(
            f"checkpoint {ckpt.path}: iteration {np.asarray(state.iteration).tolist()} != "
            f"sidecar's {ckpt.iteration}")
    return state


def _iteration(state: SolverState) -> int:
    """Iterations done (``iteration`` is ``[B]`` for a stacked game, all equal)."""
    return int(np.asarray(state.iteration).reshape(-1)[0])


def _write_profiles(run: RunDir, runner: Runner, lowered: LoweredGame, state, labels,
                    metrics) -> tuple[list[Profile], int]:
    table = runner.profile(state)                           # [(B,) I, A, *H]
    games = lowered.members if lowered.batch_size is not None else (lowered,)
    hp = runner.hp_batch
    profiles = []
    for b, g in enumerate(games):
        t = table[b] if lowered.batch_size is not None else table
        for h in (range(hp[0]) if hp else [None]):
            profiles.append(Profile.from_lowered(g, t if h is None else t[..., h]))
    best = 0
    if labels and metrics:
        final = [np.inf if v is None else v for v in metrics[-1]["metric"]]
        best = int(np.argmin(final))
        run.profiles.mkdir(exist_ok=True)
        for m, p in enumerate(profiles):
            p.save(run.profiles / f"member-{m:03d}.npz")
    profiles[best].save(run.profile)
    return profiles, best


def _write_plot(run: RunDir, config: Config, metrics, labels, log) -> None:
    if not config.run.plot:
        return
    try:
        from jaxcfr.runs.plot import plot_convergence
    except ImportError:
        log("matplotlib is not installed: skipping convergence.png")
        return
    buf = io.BytesIO()
    games = ", ".join(config.game.strings)
    if plot_convergence(metrics, buf, title=f"{games}: {config.solver.algorithm}",
                        members=labels or None):
        atomic_write_bytes(run.plot, buf.getvalue())


# -- script entry point -----------------------------------------------------------
def main(argv: Sequence[str] | None = None, *, default_config: str | None = None,
         prog: str = "train.py") -> int:
    """``train.py [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR] [--quiet]``.

    Returns the exit status: 0 done, 130 interrupted (checkpoint written), 2 error.
    """
    import argparse
    from jaxcfr.game import GameError
    from jaxcfr.runs.cli import add_train_arguments, run_train
    parser = argparse.ArgumentParser(prog=prog, description="Train from a run config "
                                     "(TOML); see docs/runs.md.")
    add_train_arguments(parser, default_config=default_config)
    args = parser.parse_args(argv)
    try:
        return run_train(args)
    except KeyboardInterrupt:
        print(f"{prog}: aborted", file=sys.stderr)
        return 130
    except (GameError, ValueError, OSError, KeyError) as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2

