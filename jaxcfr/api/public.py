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
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr._util.tracing import counted
from jaxcfr.api.locks import resolve_lock
from jaxcfr.game.contract import GameError
from jaxcfr.game.public import PublicGame
from jaxcfr.game.registry import game_constructor, load_game, parse_game_string
from jaxcfr.lowering.public import PublicLowered, lower_public
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import (evaluate_public, hand_values_public,
                                   public_device_tensors, public_solver)
from jaxcfr.solvers.locking import Lock, evaluate_public_locked
from jaxcfr.solvers.solver import Solver, SolverState

__all__ = ["solve_public", "PublicSolveResult", "public_game_of",
           "solve_public_options"]


@dataclasses.dataclass(repr=False)
class PublicSolveResult:
    """What :func:`solve_public` returns.

    Attributes:
      lowered: the lowered public tree.
      solver: the solver (its estimator :class:`~jaxcfr.solvers.public.PublicExact`).
      state: the final solver state (device arrays, ``[I, A]`` tables).
      average_strategy: ``[I, A, *b]`` the average profile, rows (player, public node,
        hand); ``*b``: the batch of parameter settings (none for single values).
      metrics: one record per evaluation: ``iteration``, ``values`` ``[P, *b]``,
        ``best_response_values`` ``[P, *b]``, ``nash_conv`` ``[*b]``, ``exploitability``
        (lists; a float without a batch).
      final: the last record.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunks.
      iterations_per_second: iterations per second of the compiled chunks.
      chance: ``"exact"`` (as :class:`jaxcfr.SolveResult`'s).
    """
    lowered: PublicLowered
    solver: Solver
    state: SolverState
    average_strategy: np.ndarray
    metrics: list
    final: dict
    seconds: float
    compile_seconds: float = 0.0
    iterations_per_second: float = 0.0
    chance: str = "exact"

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
        row = self.average_strategy[t.node_base[node] + h]                   # [A, *b]
        return {a: (float(x) if np.ndim(x) == 0 else np.asarray(x).tolist())
                for a, x in zip(lowered.node_actions[node], row)}

    def hand_values(self, history: tuple = ()) -> dict:
        """Per-hand expected values at the public decision node reached by ``history``
        under the average profile (:func:`jaxcfr.solvers.public.hand_values_public`):
        ``{"player", "actions" [A], "hands" [H], "ev" [H], "action_ev" [H, A], "reach"
        [H], "strategy" [H, A]}`` (NaN where a hand cannot be there); one solve, no
        batch."""
        if np.ndim(self.average_strategy) != 2:
            raise ArgumentError("hand values are of one solve (no batch of settings)")
        node = _node_of(self.lowered, tuple(history))
        t = self.lowered.tensors
        if t.node_base[node] < 0:
            raise ArgumentError(f"the node after {tuple(history)!r} is not a decision")
        out = hand_values_public(self.lowered, self.average_strategy, node)
        player = int(t.node_player[node])
        return {"player": player, "actions": tuple(self.lowered.node_actions[node]),
                "hands": tuple(self.lowered.hands.labels[player]), **out}

    def profile(self) -> dict:
        """The average profile keyed by information set: ``{(player, hand label, public
        history): {action: probability}}`` for every hand that can hold at its node
        (``PublicLowered.live_rows``); with a batch, each probability is a list."""
        lowered = self.lowered
        live = lowered.live_rows()
        width = max(lowered.structure.hands)
        out = {}
        for row, key in enumerate(lowered.row_keys()):
            if key is None or not live[row]:
                continue
            player, (hand, history) = key
            node = int(lowered.tensors.decision_node[row // width])
            out[(player, hand, history)] = {
                a: (float(x) if np.ndim(x) == 0 else np.asarray(x).tolist())
                for a, x in zip(lowered.node_actions[node], self.average_strategy[row])}
        return out

    def __repr__(self) -> str:
        f = self.final
        conv = np.asarray(f["nash_conv"])
        shown = f"{float(conv):.4g}" if conv.ndim == 0 else str(np.round(conv, 6).tolist())
        return (f"PublicSolveResult({self.solver.name} on {self.lowered.name}: "
                f"{f['iteration']} iterations, nash_conv {shown})")


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
    with ``tree="public"`` or naming a game that only exists as a public tree, such as
    ``holdem_spot``, loaded), else ``None``. The one place that routes a game to the
    public solver (:func:`jaxcfr.solve`, ``jaxcfr solve``, ``jaxcfr inspect``)."""
    if isinstance(game, (PublicGame, PublicLowered)):
        return game
    if not isinstance(game, str):
        return None
    try:
        name, params = parse_game_string(game.strip())
    except GameError:
        return None
    if params.get("tree") == "public" or _public_only(name):
        return load_game(game)
    return None


def _public_only(name: str) -> bool:
    """Whether the registered game ``name`` is a PublicGame (it has no history tree)."""
    try:
        ctor = game_constructor(name)
    except GameError:
        return False
    return isinstance(ctor, type) and issubclass(ctor, PublicGame)


@functools.partial(jax.jit, static_argnames=("solver", "structure", "count"))
@counted("public_chunk")
def _chunk(tensors, state, hp, lock=None, *, solver, structure, count):
    """``count`` iterations; ``lock``: a traced :class:`~jaxcfr.solvers.locking.Lock`
    (a new lock does not recompile) or ``None``."""
    carry = jax.lax.fori_loop(0, count, lambda _, c: solver.step(tensors, structure, c, hp,
                                                                 lock=lock),
                              solver.start(tensors, state, lock))
    return carry.state


def solve_public(game: PublicGame | PublicLowered, algorithm: str | Solver = "cfr+",
                 iterations: int = 1000, *, precision: str = "float32",
                 eval_every: int | None = None, chunk: int = 100, lock=None,
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
      lock: node locking (:mod:`jaxcfr.api.locks`): ``{(public history, hand):
        {action: probability}}`` (hand ``None``: the whole node; on hold'em also classes
        such as ``"AKs"``), a lock file's path, or a
        :class:`~jaxcfr.solvers.locking.Lock`. The locked rows play the lock, the rest
        is solved, and the metrics are the restricted game's
        (:mod:`jaxcfr.solvers.locking`).
      parameters: the solver's traced parameters (``alpha=2``, ``gamma=1``); lists of
        one length are a batch of settings solved by one compiled step.
    """
    iterations = positive_int("iterations", iterations)
    chunk = positive_int("chunk", chunk)
    every = iterations if eval_every is None else positive_int("eval_every", eval_every)
    solver = public_solver(make_solver(algorithm))
    return _run(game, solver, iterations, every, precision, chunk, parameters, lock=lock)


def _record(done: int, ev: dict) -> dict:
    """An evaluation's record, with the keys of :func:`jaxcfr.solve`'s records that the
    command line and progress read."""
    exploit = None if ev["exploitability"] is None else ev["exploitability"].tolist()
    nash_conv = ev["nash_conv"].tolist()
    return {"iteration": done, "values": ev["values"].tolist(),
            "best_response_values": ev["best_response_values"].tolist(),
            "nash_conv": nash_conv, "exploitability": exploit,
            "metric": nash_conv if exploit is None else exploit,
            "metric_name": "nash_conv" if exploit is None else "exploitability",
            "members": None, "estimates": None}


#: compiled chunks by solver, structure, count and argument shapes: a second solve of the
#: same shapes (another lock, other parameter values) compiles nothing
_PROGRAMS: dict = {}


def _program(args: tuple, solver: Solver, structure, count: int):
    avals = tuple((tuple(x.shape), str(x.dtype)) for x in jax.tree_util.tree_leaves(args))
    layout = jax.tree_util.tree_structure(args)
    key = (solver, structure, count, avals, layout)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = _chunk.lower(*args, solver=solver, structure=structure,
                                      count=count).compile()
    return _PROGRAMS[key]


def _run(game, solver: Solver, iterations: int, every: int, precision, chunk: int,
         parameters: dict, callback=None, progress=None, lock=None) -> PublicSolveResult:
    """The loop of :func:`solve_public` (arguments checked): compiled chunks, an exact
    evaluation every ``every`` iterations (``callback(record)``; ``progress(done,
    record or None)`` after every chunk)."""
    dtype = precisions.dtype_of(precision)
    lowered = game if isinstance(game, PublicLowered) else lower_public(game)
    host_lock = resolve_lock(lowered, lock)
    start = time.perf_counter()
    records = []
    compiled: dict[int, Any] = {}
    compile_seconds = run_seconds = 0.0
    with precisions.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        hp = solver.hyperparams(dtype, **parameters)
        batch = np.broadcast_shapes(*(np.shape(x) for x in jax.tree_util.tree_leaves(hp)))
        state = solver.init(tensors, batch_shape=batch, dtype=dtype)
        device_lock = None if host_lock is None else Lock(
            on_device(np.asarray(host_lock.strategy), dtype),
            on_device(np.asarray(host_lock.mask, bool)))
        done = 0
        while done < iterations:
            stop = min(iterations, (done // every + 1) * every)
            while done < stop:
                n = min(chunk, stop - done)
                if n not in compiled:
                    clock = time.perf_counter()
                    compiled[n] = _program((tensors, state, hp, device_lock), solver,
                                           lowered.structure, n)
                    compile_seconds += time.perf_counter() - clock
                clock = time.perf_counter()
                state = compiled[n](tensors, state, hp, device_lock)
                jax.block_until_ready(state.regret)
                run_seconds += time.perf_counter() - clock
                done += n
                if progress is not None and done < stop:
                    progress(done, None)
            ev = (evaluate_public(lowered, state.strategy_sum, dtype=dtype, tensors=tensors)
                  if host_lock is None else
                  evaluate_public_locked(lowered, state.strategy_sum, host_lock, dtype=dtype,
                                         tensors=tensors))
            records.append(_record(done, ev))
            if callback is not None:
                callback(records[-1])
            if progress is not None:
                progress(done, records[-1])
        average = to_host(solver.average_strategy(tensors, state, device_lock),
                          dtype=np.float64)
    return PublicSolveResult(lowered, solver, state, average, records, records[-1],
                             time.perf_counter() - start - compile_seconds, compile_seconds,
                             iterations / max(run_seconds, 1e-12))


def solve_public_options(game: Any, options, report=None) -> PublicSolveResult:
    """:func:`jaxcfr.solve`'s checked options (``jaxcfr.api.solve.SolveOptions``, the
    command line's too) for a public tree: its solver, iterations, evaluations,
    precision, chunk and parameters; ``report``'s callback and progress are called as
    for any game. Sampling estimators and sampled chance are refused (public trees are
    solved full width); the cache of lowered games is not used (a public tree lowers
    in a fraction of its history tree's time)."""
    chance = options.chance           # (a Chance with .mode, or a chance-mode object)
    if getattr(chance, "mode", None) == "sampled" or getattr(chance, "name", None) == "sampled":
        raise ArgumentError("sampled chance does not apply to a public tree (its chance is "
                            "enumerated: the deal is the hand vectors)", argument="chance")
    if options.device.cluster is not None:
        raise ArgumentError("a public tree is solved in one process (no cluster)",
                            argument="cluster")
    solver = public_solver(options.solver)
    every = options.iterations if options.eval_every is None else options.eval_every
    parameters = {k: v for k, v in options.parameters.items() if v is not None}
    return _run(public_game_of(game), solver, options.iterations, every, options.precision,
                options.device.chunk, parameters,
                None if report is None else report.callback,
                None if report is None else report.progress, lock=options.lock)
