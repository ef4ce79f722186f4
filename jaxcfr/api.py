"""``jaxcfr.solve``: one call from a game to an average profile and its metrics.

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("kuhn_poker", algorithm="cfr+", iterations=1000)
    >>> round(float(result.final["values"][0]), 3)
    -0.056
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import jax
import numpy as np

from jaxcfr.engine import DEFAULT_CHUNK, Runner
from jaxcfr.game import Game
from jaxcfr.lowering import LoweredGame, lower
from jaxcfr.profile import Profile
from jaxcfr.registry import load_game
from jaxcfr.solvers import Solver, SolverState, make_solver

__all__ = ["solve", "SolveResult", "as_lowered"]


@dataclasses.dataclass
class SolveResult:
    """What :func:`solve` returns.

    Attributes:
      lowered: the lowered game.
      solver: the solver used.
      state: the final solver state (device arrays).
      average_strategy: ``[I, A]`` (``[(B,) I, A, *H]`` when batched) on the host.
      profile: the average profile keyed by information set (single game, no batch),
        else ``None``.
      metrics: one dict per evaluation (``iteration``, ``metric``, ``exploitability``,
        ``nash_conv``, ``values``, ``best_response_values``, ``seconds``).
      final: the last evaluation.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunk and the evaluation.
      iterations_per_second: steady-state iterations per second (evaluations excluded).
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


def as_lowered(game: Game | LoweredGame | str, **lower_kwargs) -> LoweredGame:
    """Accept a game string, a Game or a LoweredGame; return a LoweredGame."""
    if isinstance(game, LoweredGame):
        return game
    name = game if isinstance(game, str) else ""
    if isinstance(game, str):
        game = load_game(game)
    return lower(game, name=name, **lower_kwargs)


def solve(game: Game | LoweredGame | str, algorithm: str | Solver = "cfr+",
          iterations: int = 1000, *, eval_every: int | None = None,
          alternating: bool | None = None, alpha=None, beta=None, gamma=None,
          precision: str = "float32", chunk: int = DEFAULT_CHUNK,
          callback: Callable[[dict[str, Any]], None] | None = None) -> SolveResult:
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
        by the same compiled step.
      precision: ``"float32"`` or ``"float64"``.
      callback: called with each evaluation's metrics dict.
    """
    lowered = as_lowered(game)
    solver = algorithm if isinstance(algorithm, Solver) else make_solver(
        algorithm, alternating=alternating)
    if isinstance(algorithm, Solver) and alternating is not None:
        solver = dataclasses.replace(solver, alternating=alternating)
    hyper = {k: v for k, v in (("alpha", alpha), ("beta", beta), ("gamma", gamma))
             if v is not None}
    runner = Runner(lowered, solver, hyper, precision=precision, chunk=chunk)
    state, compile_seconds = runner.compile(runner.init())
    iterations = int(iterations)
    step = iterations if not eval_every else max(1, int(eval_every))
    metrics: list[dict[str, Any]] = []
    done, iterate_seconds, start = 0, 0.0, time.perf_counter()
    while True:
        n = min(step, iterations - done)
        t0 = time.perf_counter()
        state = runner.advance(state, n)
        jax.block_until_ready(state)
        iterate_seconds += time.perf_counter() - t0
        done += n
        record = runner.evaluate(state)
        record["iteration"] = done
        record["seconds"] = time.perf_counter() - start
        metrics.append(record)
        if callback is not None:
            callback(record)
        if done >= iterations:
            break
    average = runner.profile(state)
    profile = None
    if lowered.batch_size is None and average.ndim == 2:
        profile = Profile.from_lowered(lowered, average)
    return SolveResult(
        lowered=lowered, solver=solver, state=state, average_strategy=average, profile=profile,
        metrics=metrics, final=metrics[-1], seconds=time.perf_counter() - start,
        compile_seconds=compile_seconds,
        iterations_per_second=(iterations / iterate_seconds) if iterate_seconds > 0 else float("inf"))
