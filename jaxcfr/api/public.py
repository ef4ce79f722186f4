"""``jaxcfr.solve_public``: solve a PublicGame on its public tree, in one call.

A public tree is a representation the seam chooses (:mod:`jaxcfr.engine.seam`: its value
kernel is :class:`~jaxcfr.kernels.values.PublicTree`), so it runs through the same
:class:`~jaxcfr.engine.runner.Runner` as any game (:func:`jaxcfr.solve`,
``jaxcfr solve``, ``jaxcfr train``): compiled once, in chunks, with progress,
checkpoints and resume, and the average profile evaluated exactly on the public tree
(values, best responses, NashConv, exploitability) every ``eval_every`` iterations and
at the end. :func:`solve_public` is :func:`jaxcfr.solve` with the public estimator
(:class:`~jaxcfr.solvers.public.PublicExact`; every regret and averaging rule
unchanged: rows are rows) and ``chunk`` as an argument.

Example::

    >>> import jaxcfr
    >>> from jaxcfr_games.public_kuhn import PublicKuhn
    >>> result = jaxcfr.solve_public(PublicKuhn(), "cfr+", 1000)
    >>> round(result.final["values"][0], 3)
    -0.056
"""

from __future__ import annotations

from typing import Any

from jaxcfr._util.arguments import positive_int
from jaxcfr.api.public_result import PublicSolveResult
from jaxcfr.api.solve import DeviceOptions, Report, solve
from jaxcfr.engine.runner import DEFAULT_CHUNK
from jaxcfr.game.public import PublicGame
from jaxcfr.lowering.public import PublicLowered, public_game_of
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_solver
from jaxcfr.solvers.solver import Solver

__all__ = ["solve_public", "PublicSolveResult", "public_game_of"]


def solve_public(game: PublicGame | PublicLowered, algorithm: str | Solver = "cfr+",
                 iterations: int = 1000, *, precision: str = "float32",
                 eval_every: int | None = None, target: float | None = None,
                 chunk: int = DEFAULT_CHUNK, hand_buckets: bool = True,
                 report: Report | None = None, lock=None,
                 **parameters: Any) -> PublicSolveResult:
    """Solve a PublicGame on its public tree (see the module).

    Args:
      game: a :class:`~jaxcfr.game.public.PublicGame`, one lowered by
        :func:`~jaxcfr.lowering.public.lower_public`, or a game string naming one.
      algorithm: a preset name (``"cfr+"``, ``"dcfr"``, ...) or an exact Solver.
      iterations: CFR iterations.
      precision: ``"float32"`` or ``"float64"``.
      eval_every: evaluate every this many iterations (default: only at the end).
      target: stop at the first evaluation whose metric is at or below it (``iterations``
        is then the most it runs; ``result.reached_target``): as :func:`jaxcfr.solve`'s.
      chunk: iterations per compiled call (at most; :data:`~jaxcfr.engine.runner.DEFAULT_CHUNK`
        by default, as :func:`jaxcfr.solve` and ``jaxcfr train``: the same compiled program,
        so a spot one of them compiled is found in the compilation cache by the others).
      hand_buckets: pad the hands to buckets so that other boards of the same bet tree
        run the same compiled program (:class:`~jaxcfr.api.solve.DeviceOptions`'s
        ``hand_buckets``; the result is the unpadded game's, its numbers the same up to
        float summation order); ``False``: the game's own hand counts.
      report: :class:`jaxcfr.Report` (a callback per evaluation, progress).
      lock: node locking (:mod:`jaxcfr.api.locks`): ``{(public history, hand):
        {action: probability}}`` (hand ``None`` or ``"*"``: the whole node; on hold'em
        also classes such as ``"AKs"``), a lock file's path, or a
        :class:`~jaxcfr.solvers.locking.Lock`: as :func:`jaxcfr.solve`'s ``lock``.
      parameters: the solver's traced parameters (``alpha=2``, ``gamma=1``); lists of
        one length are a batch of settings solved by one compiled step.
    """
    if public_game_of(game) is None:
        raise TypeError(f"solve_public() takes a PublicGame, a lowered one or a game string "
                        f"naming one, got {game!r} (jaxcfr.solve takes any game)")
    solver = public_solver(make_solver(algorithm))
    return solve(game, solver, iterations, precision=precision, eval_every=eval_every,
                 target=target, device=DeviceOptions(chunk=positive_int("chunk", chunk),
                                       hand_buckets=hand_buckets),
                 report=report, lock=lock, **parameters)
