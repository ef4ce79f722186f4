"""Sampled chance: the host draws chance, lowers what follows, the device updates.

For a game whose chance cannot be enumerated (``chance_outcomes()`` is ``None``), or by
choice for any game, :class:`SampledChanceRunner` trains without ever lowering the
whole tree. Iteration ``t``:

1. The host draws ``draws`` chance samples: sample ``j`` answers every chance node of
   its tree with one ``sample_chance`` draw from ``Random(draw_seed(seed, t, j))``,
   so iteration ``t``'s samples are a function of the run's seed and ``t`` alone
   (reproducible, independent of the chunk length, nothing to carry in a checkpoint
   but the row table).
2. It lowers each draw: the chance nodes from the root to the first decision (the
   draw's *prefix*) are drawn, and the tree below is lowered as a
   :class:`jaxcfr.game.determinize.Determinized` game, so every decision below the drawn
   chance is enumerated and the whole contract is checked. A chance node further down
   keeps its listed outcomes where it lists them (``enumerate_listed``, the default:
   the expectation over them is exact, which only lowers the variance) and gets one
   draw of the same generator where it cannot (or always, with
   ``enumerate_listed=False``: chance-sampled CFR proper). When nothing below the
   prefix was drawn (dice poker: both rolls, then betting; Leduc: both cards, with the
   board enumerated), the lowered draw is a function of the prefix alone (the game is
   a function of its history), so it is cached on the prefix and a repeated prefix
   costs one dictionary look-up; this is not transposition caching (one history, not
   two that meet), so it needs no opt-in. Draws the cache does not hold are lowered by
   ``workers`` processes. Each draw is padded to the running capacity of each level
   (rounded up to a power of two: shapes, and so compiled programs, change rarely) and
   the draws of an iteration stand side by side.
3. Information-set keys map to rows of one global table that grows as new keys
   appear (capacity doubling, also the action width).
4. The device runs exact passes over the padded draws with the current strategy of
   the rows they touch (read from the global table), which is chance-sampled CFR:
   each draw counts with probability ``1 / draws`` at the root, so the counterfactual
   values are unbiased for the real game's, whatever the drawn paths' probabilities
   (``sample_chance`` draws from the game's own distribution, so the importance weight
   of every draw is ``p / q = 1``). The regret and averaging rules of the solver apply
   to the touched rows only (:meth:`jaxcfr.Solver.row_update`).

The host prepares chunk ``c + 1`` while the device runs chunk ``c`` (JAX dispatches
asynchronously); :attr:`SampledChanceRunner.timing` says how long the device waited
for the host.

The runner has :class:`jaxcfr.Runner`'s interface, so :func:`jaxcfr.solve` and
``jaxcfr train`` run it through the same loop. Evaluation: exact (the profile in the
lowered full game) when chance can be enumerated; otherwise Monte Carlo estimates with
intervals (:mod:`jaxcfr.profiles.value_estimates`), labelled as estimates.

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("leduc_poker", "cfr+", 2000, chance="sampled", seed=3)
    >>> result.final["exploitability"]            # exact: Leduc's chance is enumerable
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import hashlib
import json
import multiprocessing
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import precision as _precision
from jaxcfr._util.tracing import counted
from jaxcfr.engine.draws import (Draw, RowTable, Shape, assemble, lower_draw, pool_init,
                                 pool_lower)
from jaxcfr.engine.chance import DEFAULT_DRAWS, sampled_chance_rules
from jaxcfr.engine.jax_compilation_cache import use_compilation_cache
from jaxcfr.game.contract import check_protocol
from jaxcfr.game.validate import probe_blind_spots
from jaxcfr.game.determinize import draw_prefix, draw_seed
from jaxcfr.kernels.numerics import normalise
from jaxcfr.lowering.budget import default_memory_budget
from jaxcfr.profiles import value_estimates
from jaxcfr.solvers.metric_record import METRIC_KEYS
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.analytics import evaluate
from jaxcfr.solvers.estimators import DrawnForest
from jaxcfr.solvers.parameters import HyperParams
from jaxcfr.solvers.solver import TABLES, Rows, Solver, SolverState
from jaxcfr.tensors import GameTensors, LoweredGame, Structure, to_device

__all__ = ["SampledChanceRunner", "Timing"]

#: Held-out draws behind each estimate of a game whose chance cannot be enumerated.
DEFAULT_EVAL_DRAWS = 1000
#: Draws the estimates' best responses are fitted on (one empirical game per run).
DEFAULT_FIT_DRAWS = value_estimates.DEFAULT_TRAIN_SAMPLES
#: Lowered draws a runner keeps by default (see :class:`SampledChanceRunner`).
DEFAULT_CACHE_SIZE = 100_000


@dataclasses.dataclass
class Timing:
    """Where the wall time of the iterations went.

    A host thread draws and lowers the next iterations while the device runs the current
    chunk. ``wait_seconds`` is the wall time the device sat idle: waiting for draws,
    padding them and copying them over (``wall_seconds - device_seconds``).
    """
    host_seconds: float = 0.0       # drawing and lowering (on the host thread, overlapped)
    device_seconds: float = 0.0     # the device running chunks (compilation included)
    wall_seconds: float = 0.0
    iterations: int = 0
    draws_taken: int = 0            # draws used by the iterations (cached or lowered)
    lowered: int = 0                # draws lowered (not found in the cache; some ahead)

    @property
    def wait_seconds(self) -> float:
        return max(0.0, self.wall_seconds - self.device_seconds)

    @property
    def device_wait_fraction(self) -> float:
        """Share of the wall time the device waited for the host."""
        return self.wait_seconds / self.wall_seconds if self.wall_seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON values, with the rates."""
        return {"host_seconds": self.host_seconds, "device_seconds": self.device_seconds,
                "wait_seconds": self.wait_seconds, "wall_seconds": self.wall_seconds,
                "iterations": self.iterations, "draws_taken": self.draws_taken,
                "lowered": self.lowered,
                "draws_per_host_second": (self.draws_taken / self.host_seconds
                                          if self.host_seconds else None),
                "device_wait_fraction": self.device_wait_fraction}


class Prepared(NamedTuple):
    """A chunk of ``k`` iterations, ready for the device (host arrays)."""
    tensors: GameTensors      # [k, N'] each iteration's padded draws side by side
    rowmaps: np.ndarray       # [k, I'] the global row of every row there
    legal: np.ndarray         # [G, A] the global rows' legal slots
    owners: np.ndarray        # [G] the global rows' players
    structure: Structure      # the level slices of one iteration's draws


class _Iteration(NamedTuple):
    """One iteration's draws, numbered and padded (on the host thread)."""
    draws: list[Draw]
    rows: int                 # global rows once they are numbered
    shape: Shape              # grown to hold every draw up to this iteration
    tensors: GameTensors      # [N'] the draws padded to ``shape``, side by side
    rowmap: np.ndarray        # [I'] the global row of every row there


class SampledChanceRunner:
    """Chance-sampled CFR with the host drawing chance: a :class:`jaxcfr.Runner` stand-in.

    Args:
      game: the root state (its chance may or may not be enumerable).
      solver: a :class:`jaxcfr.Solver` (its regret and averaging rules; ``sampling`` must
        be ``"none"``: chance is what this runner samples).
      parameters: the solver's parameter values by name: one setting, no lists
        (:func:`~jaxcfr.solvers.parameters.single_setting`; and one seed per run).
      precision: ``"float32"`` or ``"float64"``.
      chunk: iterations per compiled call.
      draws: chance draws per iteration.
      workers: processes lowering the draws the cache does not hold (1: the host thread).
      cache_size: draws kept lowered, keyed by their chance prefix (0: no cache).
      enumerate_listed: below a draw's prefix, keep the listed outcomes of chance nodes
        that list them (exact expectation: lower variance, larger draws, and cacheable
        draws); ``False``: draw every chance node (chance-sampled CFR proper).
      exact: the lowered full game, for exact evaluation (``None``: estimates).
      eval_draws: held-out draws behind each estimate when ``exact`` is ``None``.
      fit_draws: draws the estimates' best responses are fitted on (``None``, and
        ``eval_draws=None``: sized by :func:`jaxcfr.profiles.value_estimates.run_draws` from the
        draws consumed by the iteration evaluated, a step function of it: a resumed run
        estimates as the uninterrupted one; ``JAXCFR_ESTIMATES=quick`` for smoke tests).
      name: the game's name in messages.
      compilation_cache: as :class:`jaxcfr.Runner`'s
        (:mod:`jaxcfr.engine.jax_compilation_cache`).
    """

    chance = "sampled"
    games_batched = False
    batch_members = 1
    compiles_ahead = False            # shapes follow the draws: the first chunk compiles

    def __init__(self, game, solver: Solver, parameters: dict | None = None, *,
                 precision: str = "float32", chunk: int = 64, draws: int = DEFAULT_DRAWS,
                 workers: int = 1, cache_size: int = DEFAULT_CACHE_SIZE,
                 exact: LoweredGame | None = None, name: str = "",
                 eval_draws: int | None = None, fit_draws: int | None = None,
                 enumerate_listed: bool = True, compilation_cache: bool | str = True):
        self.compilation_cache = use_compilation_cache(compilation_cache)
        parameters = solver.check_parameters(dict(parameters or {}))
        sampled_chance_rules(estimator=solver.estimator, parameters=parameters)
        # it draws with sample_chance and lowers clones of the game: probed here, where the
        # path starts (validate's probes; the draws' walks cannot see either)
        probe_blind_spots(game, check_protocol(game), transpositions=False, sampling=True)
        self.game, self.solver = game, solver
        self.step_solver = dataclasses.replace(solver, estimator=DrawnForest()).static_key()
        self.name = name or getattr(game, "name", "") or type(game).__name__
        self.dtype = _precision.dtype_of(precision)
        self.chunk, self.draws = int(chunk), int(draws)
        self.workers, self.cache_size = max(1, int(workers)), int(cache_size)
        self.eval_draws, self.fit_draws = eval_draws, fit_draws    # None: value_estimates.run_draws
        self.enumerate_listed = bool(enumerate_listed)
        self._budget = default_memory_budget()      # each draw's walk is checked against it
        self.seed = int(parameters.get("seed", 0))
        self.exact = self.lowered = exact        # what train / solve read, if any
        self.num_players = int(game.num_players)
        with self.scope():
            self.hp = solver.hyperparams(self.dtype, **parameters)
        self.table = RowTable()
        self.shape = Shape()
        self.rows = 1                  # global rows numbered by the iterations consumed
        self.timing = Timing()
        self.cache_hits = 0
        self._cache: dict[tuple, Draw] = {}       # chance prefix -> lowered draw
        self._padded: dict[tuple, tuple] = {}      # prefix -> shape, padded, rowmap
        self._ahead = self.shape       # the host thread's shape: grown over the draws made
        self._futures: dict[int, concurrent.futures.Future] = {}
        self._drawn = 0                # iterations handed to the host thread
        self._thread = self._pool = None
        self._empirical = None         # the estimates' empirical game, lowered once

    def __repr__(self) -> str:
        return (f"SampledChanceRunner({self.solver!r} on {self.name}, {self.draws} draws per "
                f"iteration, {self.rows - 1:,} rows so far, {self.dtype.name})")

    def scope(self):
        """The run's precision, scoped (:func:`jaxcfr._util.precision.scope`)."""
        return _precision.scope(self.dtype)

    def member_labels(self) -> list[str]:
        return []

    # -- host ------------------------------------------------------------------------------
    def _draw_iteration(self, iteration: int) -> _Iteration:
        """Iteration ``iteration``'s draws, lowered (from the cache where it can), their
        rows numbered. Runs on the host thread, one iteration after the other."""
        start = time.perf_counter()
        seeds = [draw_seed(self.seed, iteration, j) for j in range(self.draws)]
        out: list[Draw | None] = [None] * len(seeds)
        missing = []
        for j, seed in enumerate(seeds):
            hit = self._cache.get(draw_prefix(self.game, seed)[0]) if self.cache_size else None
            if hit is not None:
                self.cache_hits += 1
                out[j] = hit
            else:
                missing.append(j)
        if self.workers > 1 and len(missing) > 1:
            if self._pool is None:
                # spawned, not forked: this process runs JAX's threads
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("spawn"),
                    initializer=pool_init,
                    initargs=(self.game, self.enumerate_listed, self._budget))
            lowered = list(self._pool.map(pool_lower, [seeds[j] for j in missing]))
        else:
            lowered = [lower_draw(self.game, seeds[j], self.enumerate_listed, self._budget)
                       for j in missing]
        for j, (prefix, g, pure) in zip(missing, lowered):
            # nothing drawn below the prefix: the draw is a function of the prefix alone
            if pure and prefix in self._cache:   # an earlier draw of this iteration
                out[j] = self._cache[prefix]
                continue
            cached = pure and len(self._cache) < self.cache_size
            out[j] = Draw(g, self.table.rows(g), prefix if cached else None)
            if cached:
                self._cache[prefix] = out[j]
        rows = len(self.table)
        self._ahead = self._ahead.grown(out, rows)
        tensors, rowmap = assemble(out, self._ahead, self._padded)
        self.timing.host_seconds += time.perf_counter() - start
        self.timing.lowered += len(missing)
        return _Iteration(out, rows, self._ahead, tensors, rowmap)

    def _request(self, upto: int) -> None:
        """Hand iterations up to ``upto`` to the host thread (in order; once each)."""
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(1, "jaxcfr-draws")
        while self._drawn < upto:
            self._drawn += 1
            self._futures[self._drawn] = self._thread.submit(self._draw_iteration, self._drawn)

    def prepare(self, iterations: range) -> Prepared:
        """The draws of ``iterations`` (consecutive, the next ones), padded to the shape
        grown to hold them (the host thread padded each iteration to the shape of its
        time: redone here only for iterations from before the shape last grew); the shape
        and the rows in use advance past them."""
        self._request(iterations[-1])
        drawn = [self._futures.pop(t).result() for t in iterations]
        self.rows, self.shape = drawn[-1].rows, drawn[-1].shape
        shape = self.shape
        parts = [(it.tensors, it.rowmap) if it.shape == shape else
                 assemble(it.draws, shape, self._padded) for it in drawn]
        starts = np.concatenate([[0], np.cumsum(shape.widths)]) * self.draws
        return Prepared(GameTensors(*(np.stack(x) for x in zip(*(t for t, _ in parts)))),
                        np.stack([m for _, m in parts]),
                        self.table.legal(self.rows, shape.capacity, shape.width),
                        self.table.owners(self.rows, shape.capacity),
                        Structure(tuple(int(x) for x in starts), self.num_players))

    # -- state -----------------------------------------------------------------------------
    def init(self) -> SolverState:
        """Zeros of the current shape (``[G, A]``)."""
        with self.scope():
            # one buffer per table the solver keeps: it is donated
            return SolverState(**{f: jnp.zeros((self.shape.capacity, self.shape.width),
                                               self.dtype) if f in self.solver.tables
                                  else None for f in TABLES},
                               iteration=jnp.asarray(0, jnp.int32))

    def _grow(self, state: SolverState) -> SolverState:
        """``state`` padded to the current ``[G, A]`` (zeros in the new rows and slots)."""
        rows, actions = state.regret.shape
        if (rows, actions) == (self.shape.capacity, self.shape.width):
            return state
        with self.scope():
            return state.map_tables(lambda x: jnp.zeros(
                (self.shape.capacity, self.shape.width), self.dtype).at[:rows, :actions].set(x))

    def host_state(self) -> dict[str, Any]:
        """What a checkpoint keeps besides the arrays (JSON): the rows numbered so far and
        the padded shape. The draws need nothing: iteration ``t``'s are a function of the
        seed and ``t``."""
        return {"rows": self.table.state(self.rows), "widths": list(self.shape.widths),
                "part_rows": self.shape.part_rows, "capacity": self.shape.capacity,
                "width": self.shape.width, "draws": self.draws, "seed": self.seed,
                "enumerate_listed": self.enumerate_listed}

    def restore_host(self, host: dict[str, Any] | None) -> None:
        """Take a checkpoint's :meth:`host_state` (before :meth:`init`), as if this runner
        had run to it."""
        if not isinstance(host, dict):
            raise ValueError("the checkpoint has no sampled-chance host state (the rows "
                             "numbered so far)")
        mine = {"draws": self.draws, "seed": self.seed, "enumerate_listed": self.enumerate_listed}
        theirs = {k: host.get(k) for k in mine}
        if theirs != mine:
            raise ValueError(f"the checkpoint's sampled chance was {theirs}, this run's is {mine}")
        self.close()
        self.table = RowTable.from_state(host["rows"])
        self.rows = len(self.table)
        self.shape = Shape(tuple(int(w) for w in host["widths"]), int(host["part_rows"]),
                           int(host["capacity"]), int(host["width"]))
        self._cache.clear()                     # its row maps follow another numbering
        self._padded.clear()
        self._ahead = self.shape
        self._drawn = None                      # set from the state's iteration by restore

    def fingerprint(self) -> str:
        """What a checkpoint must match: the game string and the sampling (nothing is
        lowered, or not what is trained)."""
        text = json.dumps(["sampled chance", self.name, self.draws, self.enumerate_listed])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def restore(self, arrays: dict[str, np.ndarray]) -> SolverState:
        """A state from a checkpoint's arrays (after :meth:`restore_host`)."""
        with self.scope():
            state = self.solver.state_of(arrays, jnp.asarray)
        self._drawn = int(np.asarray(state.iteration))
        return state

    # -- iterating -------------------------------------------------------------------------
    def compile(self, state: SolverState) -> tuple[SolverState, float]:
        """Nothing is compiled ahead: shapes follow the draws (the first chunk compiles, and
        a chunk after the shape grew)."""
        return state, 0.0

    def advance(self, state: SolverState, iterations: int) -> SolverState:
        """Run ``iterations`` more iterations, ``chunk`` per compiled call; the host thread
        draws the next chunk's iterations meanwhile (and after the last, speculatively)."""
        done = int(np.asarray(state.iteration))
        if self._drawn is None or self._drawn < done:
            self._drawn = done
        end = done + int(iterations)
        wall = time.perf_counter()
        for a in range(done + 1, end + 1, self.chunk):
            chunk = range(a, min(a + self.chunk, end + 1))
            ready = self.prepare(chunk)
            self._request(min(chunk[-1] + self.chunk, end + self.chunk))    # the next chunk
            state = self._grow(state)
            t0 = time.perf_counter()
            with self.scope():
                state = _run(to_device(ready.tensors, self.dtype), jnp.asarray(ready.rowmaps),
                             jnp.asarray(ready.legal), jnp.asarray(ready.owners), state,
                             self.hp, solver=self.step_solver,
                             structure=ready.structure)
                jax.block_until_ready(state)
            self.timing.device_seconds += time.perf_counter() - t0
            self.timing.iterations += len(chunk)
            self.timing.draws_taken += len(chunk) * self.draws
        self.timing.wall_seconds += time.perf_counter() - wall
        return state

    def report(self) -> dict[str, Any]:
        """The host's figures (JSON): rows so far, draws per iteration, cache hits and
        :class:`Timing`."""
        return {"rows": self.rows - 1, "draws": self.draws, "cache_hits": self.cache_hits,
                "cached_draws": len(self._cache), "workers": self.workers,
                **self.timing.as_dict()}

    # -- metrics ---------------------------------------------------------------------------
    def profile_table(self, state: SolverState, average: bool = True) -> Profile:
        """The average (or current) profile of the rows numbered so far, keyed by
        information set; its ``game`` is the run's game string when it has one."""
        rows, width = self.rows, state.regret.shape[1]
        legal = self.table.legal(rows, rows, width)
        weights = np.asarray(state.strategy_sum if average else state.regret, np.float64)
        if not average and self.solver.predictive:
            weights = weights + np.asarray(state.prediction, np.float64)
        probs = normalise(weights[:rows], legal)     # current: regret matching
        return Profile(self.table.keys[1:rows], self.table.actions[1:rows], probs[1:],
                       game=self.name)

    def profiles(self, state: SolverState) -> list[Profile]:
        """The one member's average profile (:meth:`profile_table`)."""
        return [self.profile_table(state)]

    def profile(self, state: SolverState, average: bool = True) -> np.ndarray:
        """``[R, A]``: :meth:`profile_table`'s probabilities (rows without the sink)."""
        return np.asarray(self.profile_table(state, average).probs)

    def evaluate(self, state: SolverState, average: bool = True) -> dict[str, Any]:
        """Exact metrics in the lowered full game (:func:`jaxcfr.evaluate`), or estimates."""
        profile = self.profile_table(state, average)
        if self.exact is not None:
            table, _ = profile.table(self.exact)
            return evaluate(self.exact, table, dtype=self.dtype)
        return _estimated_metrics(self, profile, int(np.max(np.asarray(state.iteration))))

    def close(self) -> None:
        """Stop the host thread and the worker processes, and forget what was drawn ahead
        (its rows included), so that iterating on gives the uninterrupted run's bits."""
        for pool in (self._thread, self._pool):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self._thread = self._pool = None
        self._futures.clear()
        self._drawn = None
        if len(self.table) > self.rows:
            self.table.truncate(self.rows)
            self._cache.clear()                 # their row maps may name forgotten rows
            self._padded.clear()
        self._ahead = self.shape


def _estimated_metrics(runner: "SampledChanceRunner", profile: Profile,
                       iteration: int) -> dict[str, Any]:
    """Metrics of a game whose chance cannot be enumerated: estimates
    (:func:`jaxcfr.profiles.value_estimates.estimate_profile`), labelled as such.

    The best responses are fitted on one empirical game (``fit_draws`` draws of the
    run's seed, lowered once per run) and valued on ``eval_draws`` held-out draws (the
    same ones at every evaluation, so that the curve moves with the profile, not with
    the draws): ``metric`` is the estimated lower bound on the exploitability (two
    players, constant sum) or on NashConv, ``values`` the estimated values;
    ``estimates`` holds the full record with the intervals and the in-sample gains (an
    optimistic estimate: the two bracket the true gain).
    """
    fit, held = value_estimates.run_draws(iteration * runner.draws)   # unless given: a function of
    fit, held = runner.fit_draws or fit, runner.eval_draws or held  # the iteration (resumes)
    if runner._empirical is None or runner._empirical.draws != fit:
        runner._empirical = value_estimates.empirical_game(runner.game, fit, runner.seed)
    est = value_estimates.estimate_profile(runner.game, profile, samples=held,
                                     train_samples=fit, seed=runner.seed,
                                     empirical=runner._empirical).record()
    bound = est["exploitability_lower_bound"]
    name = "exploitability_lower_bound"
    if bound is None:
        bound, name = est["nash_conv_lower_bound"], "nash_conv_lower_bound"
    out = dict.fromkeys(METRIC_KEYS)          # the metrics it cannot estimate stay None
    out.update(values=np.asarray(est["values"]), metric=float(bound), metric_name=name,
               estimates=est)
    return out


# -- device ---------------------------------------------------------------------------------
@functools.partial(jax.jit, static_argnames=("solver", "structure"), donate_argnames=("state",))
@counted("sampled-chance")
def _run(tensors: GameTensors, rowmaps: jax.Array, legal: jax.Array, owner: jax.Array,
         state: SolverState, hp: HyperParams, *, solver: Solver,
         structure: Structure) -> SolverState:
    """``k`` iterations, one per prepared batch (``tensors``, ``rowmaps``: ``[k, ...]``).

    Each: the solver's estimator (:class:`~jaxcfr.solvers.estimators.DrawnForest`: exact
    passes over the batch's forest with the current strategy of the global rows it
    touches), scattered onto the global table ``[G, A]`` by
    :meth:`jaxcfr.Solver.row_update`.
    """
    rows = Rows(legal, owner)

    def one(state, batch):
        t, rowmap = batch

        def estimate(policy, player, keys, flat_hp):
            return solver.estimator.estimate(t, structure, policy, player, keys, flat_hp,
                                             rowmap)
        return solver.row_update(rows, structure.num_players, state, hp, estimate), None

    state, _ = jax.lax.scan(one, state, (tensors, rowmaps))
    return state
