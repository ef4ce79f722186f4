"""``jaxcfr.solve_public``: solve a PublicGame on its public tree, in one call.

The public tree is lowered once (:func:`jaxcfr.lowering.public.lower_public`), any
exact preset or :class:`~jaxcfr.Solver` runs on it with
:class:`~jaxcfr.solvers.public.PublicExact` as its estimator (every regret and
averaging rule unchanged: rows are rows), ``chunk`` iterations per compiled call, and
the average profile is evaluated exactly on the public tree (values, best responses,
NashConv, exploitability) every ``eval_every`` iterations and at the end.
``jaxcfr.solve`` hands a PublicGame (or a lowered one) to this function.

Example::

    >>> import jaxcfr
    >>> from jaxcfr_games.public_kuhn import PublicKuhn
    >>> result = jaxcfr.solve_public(PublicKuhn(), "cfr+", 1000)
    >>> round(result.final["values"][0], 3)
    -0.056
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import jax
import numpy as np

from jaxcfr._util import precision as precisions
from jaxcfr._util.arguments import ArgumentError, positive_int
from jaxcfr._util.host_arrays import to_host
from jaxcfr.game.contract import GameError
from jaxcfr.game.public import PublicGame
from jaxcfr.game.registry import load_game, parse_game_string
from jaxcfr.lowering.public import PublicLowered, lower_public
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import evaluate_public, public_device_tensors, public_solver
from jaxcfr.solvers.solver import Solver, SolverState

__all__ = ["solve_public", "PublicSolveResult", "public_game_of", "solve_public_with"]


@dataclasses.dataclass(repr=False)
class PublicSolveResult:
    """What :func:`solve_public` returns.

    Attributes:
      lowered: the lowered public tree.
      solver: the solver (its estimator :class:`~jaxcfr.solvers.public.PublicExact`).
      state: the final solver state (device arrays, ``[I, A]`` tables).
      average_strategy: ``[I, A]`` the average profile, rows (player, public node, hand).
      metrics: one record per evaluation: ``iteration``, ``values`` ``[P]``,
        ``best_response_values`` ``[P]``, ``nash_conv``, ``exploitability``.
      final: the last record.
      seconds: wall time of the iterations and evaluations (first compilation included).
    """
    lowered: PublicLowered
    solver: Solver
    state: SolverState
    average_strategy: np.ndarray
    metrics: list
    final: dict
    seconds: float

    def strategy(self, player: int, hand, history: tuple = ()) -> dict:
        """The average strategy of ``player`` holding ``hand`` (a label) at the public
        decision node reached by ``history`` (public actions and outcomes): action -> p."""
        lowered = self.lowered
        node = _node_of(lowered, tuple(history))
        t = lowered.tensors
        if t.node_base[node] < 0 or t.node_player[node] != player:
            raise ArgumentError(f"player {player} does not act after {history!r}")
        try:
            h = lowered.hands.labels[player].index(hand)
        except ValueError:
            raise ArgumentError(f"{hand!r} is not one of player {player}'s hands") from None
        row = self.average_strategy[t.node_base[node] + h]
        return dict(zip(lowered.node_actions[node], (float(x) for x in row)))

    def __repr__(self) -> str:
        f = self.final
        return (f"PublicSolveResult({self.solver.name} on {self.lowered.name}: "
                f"{f['iteration']} iterations, nash_conv {f['nash_conv']:.4g})")


def _node_of(lowered: PublicLowered, history: tuple) -> int:
    node = 0
    t = lowered.tensors
    for x in history:
        children = np.flatnonzero(t.parent == node)
        match = [c for c in children if lowered.node_action[c] == x]
        if not match:
            raise ArgumentError(f"{x!r} is not a public action or outcome after "
                                f"{lowered.history(node)!r}")
        node = int(match[0])
    return node


def public_game_of(game: Any) -> PublicGame | PublicLowered | None:
    """``game`` when it is a public tree (a PublicGame, a lowered one, or a game string
    with ``tree="public"``, loaded), else ``None``."""
    if isinstance(game, (PublicGame, PublicLowered)):
        return game
    if isinstance(game, str) and "tree" in game:
        try:
            _, params = parse_game_string(game.strip())
        except GameError:
            return None
        if params.get("tree") == "public":
            return load_game(game)
    return None


def solve_public_with(game: Any, given: dict) -> PublicSolveResult:
    """:func:`jaxcfr.solve`'s arguments (``given``, by name) for a public tree: the
    ones a public-tree solve takes go to :func:`solve_public`; the others must be left
    at their defaults."""
    for name, default in (("estimator", None), ("chance", "auto"), ("load", None),
                          ("report", None)):
        if given.get(name, default) is not default and given.get(name) != default:
            raise ArgumentError(f"{name} is not taken by a public-tree solve (leave it out: "
                                "public trees are solved exactly, on the device, in one "
                                "process)", argument=name)
    solver = make_solver(given["algorithm"], alternating=given.get("alternating"))
    device = given.get("device")
    return solve_public(public_game_of(game), solver, given["iterations"],
                        precision=given["precision"], eval_every=given["eval_every"],
                        chunk=device.chunk if device is not None else 100,
                        **given.get("parameters", {}))


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count"))
def _chunk(tensors, state, hp, *, solver, structure, count):
    carry = jax.lax.fori_loop(0, count, lambda _, c: solver.step(tensors, structure, c, hp),
                              solver.start(tensors, state))
    return carry.state


def solve_public(game: PublicGame | PublicLowered, algorithm: str | Solver = "cfr+",
                 iterations: int = 1000, *, precision: str = "float32",
                 eval_every: int | None = None, chunk: int = 100,
                 **parameters: Any) -> PublicSolveResult:
    """Solve a PublicGame on its public tree (see the module).

    Args:
      game: a :class:`~jaxcfr.game.public.PublicGame`, or one lowered by
        :func:`~jaxcfr.lowering.public.lower_public`.
      algorithm: a preset name (``"cfr+"``, ``"dcfr"``, ...) or an exact Solver.
      iterations: CFR iterations.
      precision: ``"float32"`` or ``"float64"``.
      eval_every: evaluate every this many iterations (default: only at the end).
      chunk: iterations per compiled call.
      parameters: the solver's traced parameters (``alpha=2``, ``gamma=1``).
    """
    iterations = positive_int("iterations", iterations)
    chunk = positive_int("chunk", chunk)
    every = iterations if eval_every is None else positive_int("eval_every", eval_every)
    dtype = precisions.dtype_of(precision)
    for name, value in parameters.items():
        if isinstance(value, (list, tuple, np.ndarray)):
            raise ArgumentError(f"solve_public takes one value per parameter ({name}="
                                f"{value!r}): a batch of settings is not supported on public "
                                "trees yet", argument=name)
    lowered = game if isinstance(game, PublicLowered) else lower_public(game)
    solver = public_solver(make_solver(algorithm))
    start = time.perf_counter()
    records = []
    with precisions.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        hp = solver.hyperparams(dtype, **parameters)
        state = solver.init(tensors, dtype=dtype)
        done = 0
        while done < iterations:
            stop = min(iterations, (done // every + 1) * every)
            while done < stop:
                n = min(chunk, stop - done)
                state = _chunk(tensors, state, hp, solver=solver, structure=lowered.structure,
                               count=n)
                done += n
            ev = evaluate_public(lowered, state.strategy_sum, dtype=dtype, tensors=tensors)
            records.append({"iteration": done, "values": ev["values"].tolist(),
                            "best_response_values": ev["best_response_values"].tolist(),
                            "nash_conv": float(ev["nash_conv"]),
                            "exploitability": None if ev["exploitability"] is None
                            else float(ev["exploitability"])})
        average = to_host(solver.average_strategy(tensors, state), dtype=np.float64)
    return PublicSolveResult(lowered, solver, state, average, records, records[-1],
                             time.perf_counter() - start)

