"""``jaxcfr.solve_public`` of a stack: many public-tree games in one compiled step.

``solve_public([game, game, ...])`` (or a :class:`~jaxcfr.lowering.public_stack.
PublicStack`) pads the games to one shape (:func:`~jaxcfr.lowering.public_stack.
stack_public`), runs ``chunk`` iterations of the solver on every member per compiled
call (one game's step vmapped over the members,
:mod:`jaxcfr.solvers.public_stack`) and evaluates every member exactly. The members
may differ in anything a public tree holds: board, ranges, bet sizes, tree shape and
hand counts. Each member's trajectory is its own separate solve's (in float64 to
rounding, ``tests/test_public_stack.py``).

Per member, in the same compiled step: node locking (``lock=``: one lock for every
member where its nodes exist, or one per member; :func:`jaxcfr.api.locks.
resolve_stack_lock`), and the solver's parameters (``per_member=True``: each list gives
one value per member, ``alpha=[1.5, 2, 3]`` on a stack of three, where a plain list is a
batch of settings every member runs). Each such member is its own solve with its own
lock and parameters (``tests/test_public_stack_members.py``).

Example::

    >>> import jaxcfr
    >>> from jaxcfr_games.holdem.boards import board_spots, river_boards
    >>> result = jaxcfr.solve_public(board_spots(river_boards("Td9d6h5c")), "postflop-dcfr", 100)
    >>> result.final["exploitability"]           # [48]: one per river card, in chips
    >>> result.member(0).strategy(0, "AsAh")     # one spot as a PublicSolveResult
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import numpy as np

from jaxcfr._util import precision as precisions
from jaxcfr._util.arguments import ArgumentError, positive_int, stop_target
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr.api.locks import locked_stack, unmerged_note
from jaxcfr.api.public import PublicSolveResult
from jaxcfr.api.public import solve_public as solve_public_tree
from jaxcfr.engine.loop import at_or_below
from jaxcfr.lowering.public_stack import PublicStack, stack_public, unstack_public_rows
from jaxcfr.solvers.parameters import along_members
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_solver
from jaxcfr.solvers.public_stack import (evaluate_public_stack, evaluate_public_stack_locked,
                                         stack_average_strategy, stack_chunk,
                                         stack_device_lock, stack_device_tensors, stack_init)
from jaxcfr.solvers.solver import Solver, SolverState

__all__ = ["solve_public", "solve_public_stack", "PublicStackResult"]


def solve_public(game, algorithm: str | Solver = "cfr+", iterations: int = 1000,
                 **options: Any):
    """``jaxcfr.solve_public``: one public tree (a PublicGame or a lowered one:
    :func:`jaxcfr.api.public.solve_public`, a :class:`PublicSolveResult`) or a stack
    (a list of them, or a :class:`PublicStack`: :func:`solve_public_stack`, a
    :class:`PublicStackResult`), with the same options."""
    if isinstance(game, (list, tuple, PublicStack)):
        return solve_public_stack(game, algorithm, iterations, **options)
    return solve_public_tree(game, algorithm, iterations, **options)


@dataclasses.dataclass(repr=False)
class PublicStackResult:
    """What :func:`solve_public_stack` (``solve_public`` of a list of games) returns.

    Attributes:
      stack: the padded stack (its ``members``: each game's :class:`PublicLowered`).
      solver: the solver (its estimator :class:`~jaxcfr.solvers.public.PublicExact`).
      state: the final solver state, padded: tables ``[B, I, A, *b]``, iteration ``[B]``.
      average_strategy: ``[B, I, A, *b]`` every member's average profile, padded
        (:meth:`member` gives one member's, unpadded).
      metrics: one record per evaluation: ``iteration``, ``values`` and
        ``best_response_values`` ``[B, P, *b]``, ``nash_conv`` and ``exploitability``
        ``[B, *b]`` (lists), and ``exploitability_pot_percent`` ``[B, *b]`` when every
        member game has a ``pot`` (hold'em spots), else ``None``.
      final: the last record.
      seconds: wall time of the iterations and evaluations (compilation excluded).
      compile_seconds: time to compile the chunks.
      iterations_per_second: iterations of the whole stack per second of the chunks.
      reached_target: the run stopped at an evaluation where every member's metric was
        at or below ``target`` (at ``final["iteration"]``).
      lock: the stack's host lock (strategy ``[B, I, A]``, mask ``[B, I]``), or ``None``;
        the metrics are then each member's restricted game's.
    """
    stack: PublicStack
    solver: Solver
    state: SolverState
    average_strategy: np.ndarray
    metrics: list
    final: dict
    seconds: float
    compile_seconds: float = 0.0
    iterations_per_second: float = 0.0
    reached_target: bool = False
    lock: Any = None

    @property
    def batch_size(self) -> int:
        return self.stack.batch_size

    def member(self, b: int) -> PublicSolveResult:
        """Member ``b`` as a :class:`~jaxcfr.api.public.PublicSolveResult` of its own
        game: its unpadded state and average strategy, its records."""
        if not isinstance(b, (int, np.integer)) or not 0 <= b < self.batch_size:
            raise ArgumentError(f"member must be an int in [0, {self.batch_size}), got {b!r}")
        b = int(b)
        lowered = self.stack.members[b]

        def own(table):
            return unstack_public_rows(self.stack, table)[b]
        state = self.state.map_tables(lambda x: own(to_host(x)),
                                      np.asarray(self.state.iteration)[b])
        records = [_member_record(r, b) for r in self.metrics]
        return PublicSolveResult(lowered, self.solver, state, own(self.average_strategy),
                                 records, records[-1], self.seconds, self.compile_seconds,
                                 self.iterations_per_second,
                                 reached_target=self.reached_target)

    def __repr__(self) -> str:
        conv = np.asarray(self.final["nash_conv"], np.float64)
        return (f"PublicStackResult({self.solver.name} on {self.batch_size} games: "
                f"{self.final['iteration']} iterations, nash_conv max {conv.max():.4g})")


def _member_record(record: dict, b: int) -> dict:
    out = dict(record)
    for key in ("values", "best_response_values", "nash_conv", "exploitability", "metric",
                "exploitability_pot_percent"):
        if out.get(key) is not None:
            out[key] = out[key][b]
    out.pop("exploitability_pot_percent", None)
    return out


def solve_public_stack(games, algorithm: str | Solver = "cfr+", iterations: int = 1000, *,
                       precision: str = "float32", eval_every: int | None = None,
                       target: float | None = None, chunk: int = 100,
                       terminals: str = "auto", callback=None, lock=None,
                       per_member: bool = False, member_labels=None, merges: bool = True,
                       note=None, **parameters: Any) -> PublicStackResult:
    """Solve a stack of public-tree games in one compiled step (see the module).

    Args:
      games: a :class:`PublicStack`, or a list of PublicGames and lowered ones (stacked
        by :func:`~jaxcfr.lowering.public_stack.stack_public` with ``terminals`` and
        ``merges``: each PublicGame on its merged, suit-isomorphic tree unless
        ``merges=False``, as one spot is solved).
      algorithm, iterations, precision, eval_every, chunk: as :func:`jaxcfr.solve_public`.
      target: stop at the first evaluation where every member's metric is at or below it
        (``result.reached_target``): as :func:`jaxcfr.solve`'s; needs ``eval_every``.
      callback: called with every evaluation's record.
      lock: node locking per member (:func:`jaxcfr.api.locks.resolve_stack_lock`): one
        lock (a mapping, a lock file) applied to every member where its nodes exist, a
        list of one lock (or ``None``) per member, or ``{member index or name: lock}``;
        a member's metrics are then its restricted game's.
      member_labels: further names of the members a lock may use (their boards), or None.
      note: called with one line when a lock breaks the suit symmetry of merged members
        (those are then lowered again and solved walking every outcome, as one spot's
        lock is: :func:`jaxcfr.api.locks.locked_stack`).
      per_member: the parameters' lists give one value per member (each list as long
        as the stack), in one compiled step, instead of a batch of settings.
      parameters: the solver's traced parameters, shared by every member (lists of one
        length: a batch of settings, a trailing axis ``*b`` of every table; with
        ``per_member``, one value per member).
    """
    iterations = positive_int("iterations", iterations)
    chunk = positive_int("chunk", chunk)
    every = iterations if eval_every is None else positive_int("eval_every", eval_every)
    target = stop_target("target", target, "eval_every", eval_every)
    solver = public_solver(make_solver(algorithm))
    if isinstance(games, PublicStack):
        stack = games
    elif isinstance(games, (list, tuple)):
        if not games:
            raise ArgumentError("solve_public needs at least one game to stack")
        try:            # the budget counts this solver's state in the run's floats
            stack = stack_public(games, terminals=terminals, merges=merges,
                                 **solver.state_size(precision))
        except ValueError as e:
            raise ArgumentError(str(e)) from None
    else:
        raise ArgumentError(f"a stack is a PublicStack or a list of public-tree games, "
                            f"got {type(games).__name__}")
    dtype = precisions.dtype_of(precision)
    stack, host_lock, unmerged = locked_stack(stack, lock, member_labels)
    if unmerged and note is not None:
        note(unmerged_note(stack, unmerged, member_labels))
    per_member = bool(per_member)
    start = time.perf_counter()
    records: list = []
    compiled: dict[int, Any] = {}
    compile_seconds = run_seconds = 0.0
    with precisions.scope(dtype):
        tensors = stack_device_tensors(stack, dtype)
        device_lock = stack_device_lock(host_lock, dtype)
        hp = solver.hyperparams(dtype, **parameters)
        if per_member:
            hp = along_members(hp, stack.batch_size, place=on_device)
            batch = ()
        else:
            batch = np.broadcast_shapes(*(np.shape(x) for x in jax.tree_util.tree_leaves(hp)))
        state = stack_init(solver, stack, batch, dtype)
        done, reached = 0, False
        while done < iterations and not reached:
            stop = min(iterations, (done // every + 1) * every)
            while done < stop:
                n = min(chunk, stop - done)
                if n not in compiled:
                    clock = time.perf_counter()
                    compiled[n] = stack_chunk.lower(tensors, state, hp, device_lock,
                                                    solver=solver, structure=stack.structure,
                                                    count=n, per_member=per_member).compile()
                    compile_seconds += time.perf_counter() - clock
                clock = time.perf_counter()
                state = compiled[n](tensors, state, hp, device_lock)
                jax.block_until_ready(state.regret)
                run_seconds += time.perf_counter() - clock
                done += n
            if host_lock is None:
                ev = evaluate_public_stack(stack, state.strategy_sum, dtype=dtype,
                                           tensors=tensors)
            else:
                ev = evaluate_public_stack_locked(stack, state.strategy_sum, host_lock,
                                                  dtype=dtype, tensors=tensors)
            records.append(_record(done, ev, stack.pots))
            if callback is not None:
                callback(records[-1])
            reached = target is not None and at_or_below(records[-1]["metric"], target)
        average = to_host(stack_average_strategy(tensors, state), dtype=np.float64)
    return PublicStackResult(stack, solver, state, average, records, records[-1],
                             time.perf_counter() - start - compile_seconds, compile_seconds,
                             done / max(run_seconds, 1e-12), reached_target=reached,
                             lock=host_lock)


def _record(done: int, ev: dict, pots) -> dict:
    exploit = None if ev["exploitability"] is None else ev["exploitability"]
    percent = None
    if exploit is not None and pots is not None:
        shape = (-1,) + (1,) * (exploit.ndim - 1)
        percent = (100 * exploit / np.asarray(pots, np.float64).reshape(shape)).tolist()
    nash_conv = ev["nash_conv"].tolist()
    return {"iteration": done, "values": ev["values"].tolist(),
            "best_response_values": ev["best_response_values"].tolist(),
            "nash_conv": nash_conv,
            "exploitability": None if exploit is None else exploit.tolist(),
            "exploitability_pot_percent": percent,
            "metric": nash_conv if exploit is None else exploit.tolist(),
            "metric_name": "nash_conv" if exploit is None else "exploitability",
            "members": None, "estimates": None}
