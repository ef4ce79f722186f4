"""Sampled chance: the host draws chance, lowers what follows, the device updates.

For a game whose chance cannot be enumerated (``chance_outcomes()`` is ``None``), or by
choice for any game, :class:`SampledChanceRunner` trains without ever lowering the
whole tree. Iteration ``t``:

1. The host draws ``draws`` chance samples: sample ``j`` answers every chance node of
   its tree with one ``sample_chance`` draw from ``Random(draw_seed(seed, t, j))``,
   so iteration ``t``'s samples are a function of the run's seed and ``t`` alone
   (reproducible, independent of the chunk length, nothing to carry in a checkpoint
   but the row table).
2. It lowers them as :class:`jaxcfr.determinize.EmpiricalChance` games (one per part:
   ``parts`` processes lower the parts side by side when the host is the bottleneck),
   so every decision below a drawn chance path is enumerated and the whole contract
   is checked, and pads each part to the running capacity of each level (rounded up
   to a power of two: shapes, and so compiled programs, change rarely).
3. Information-set keys map to rows of one global table that grows as new keys
   appear (capacity doubling, also the action width).
4. The device runs exact passes over the padded parts with the current strategy of
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
lowered full game) when chance can be enumerated; otherwise estimates
(:mod:`jaxcfr.estimates` when present).

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("leduc_poker", "cfr+", 2000, chance="sampled", seed=3)
    >>> result.final["exploitability"]            # exact: Leduc's chance is enumerable
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math
import multiprocessing
import os
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr import estimators
from jaxcfr import precision as _precision
from jaxcfr.determinize import EmpiricalChance, draw_seed
from jaxcfr.lowering import lower
from jaxcfr.passes import gather as take
from jaxcfr.profile import Profile
from jaxcfr.solvers import HyperParams, Rows, Solver, SolverState
from jaxcfr.stack import pad
from jaxcfr.tensors import NO_PLAYER, GameTensors, LoweredGame, Structure, to_device

__all__ = ["SampledChanceRunner", "RowTable", "Timing", "DEFAULT_DRAWS"]

#: Chance samples per iteration by default.
DEFAULT_DRAWS = 16


def _bucket(n: int) -> int:
    """The capacity for ``n``: the next power of two (at least 1)."""
    return 1 << max(0, int(n) - 1).bit_length()


class RowTable:
    """The global information-set rows: ``(player, key) -> row``, growing.

    Row 0 is the sink (no owner, one legal slot), so a padded part's sink and padding
    rows map to it. ``capacity`` (rows) and ``width`` (actions) grow by doubling.
    """

    def __init__(self):
        self.index: dict[tuple, int] = {}
        self.keys: list[tuple] = [None]          # row -> (player, key); row 0: the sink
        self.actions: list[tuple] = [("",)]
        self.owner: list[int] = [NO_PLAYER]
        self.capacity = 64
        self.width = 1

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, lowered: LoweredGame) -> np.ndarray:
        """The global row of each of ``lowered``'s rows ``[I]`` (its sink: 0), adding new ones."""
        out = np.zeros(lowered.num_rows, dtype=np.int32)
        for r, (key, acts) in enumerate(zip(lowered.infoset_keys, lowered.infoset_actions)):
            row = self.index.get(key)
            if row is None:
                row = self.index[key] = len(self.keys)
                self.keys.append(key)
                self.actions.append(tuple(acts))
                self.owner.append(int(key[0]))
            elif self.actions[row] != tuple(acts):
                from jaxcfr.contract import GameError
                raise GameError(f"information set {key[1]!r} of player {key[0]} lists actions "
                                f"{list(acts)} in one draw and {list(self.actions[row])} in "
                                "another", rule="infoset-actions", infoset=key[1])
            out[r] = row
        self.width = max(self.width, _bucket(lowered.max_actions))
        self.capacity = max(self.capacity, _bucket(len(self.keys)))
        return out

    def legal(self) -> np.ndarray:
        """``[capacity, width]`` bool: each row's legal slots (unused rows: slot 0)."""
        out = np.zeros((self.capacity, self.width), dtype=bool)
        lengths = np.asarray([len(a) for a in self.actions])
        out[:len(lengths)] = np.arange(self.width)[None, :] < lengths[:, None]
        out[len(lengths):, 0] = True
        return out

    def owners(self) -> np.ndarray:
        out = np.full(self.capacity, NO_PLAYER, dtype=np.int32)
        out[:len(self.owner)] = self.owner
        return out

    def state(self) -> dict[str, Any]:
        """JSON-able (with :func:`jaxcfr.profile.encode_label`) contents, for checkpoints."""
        from jaxcfr.profile import encode_label
        return {"keys": [[int(p), encode_label(k)] for p, k in self.keys[1:]],
                "actions": [[encode_label(a) for a in acts] for acts in self.actions[1:]],
                "capacity": self.capacity, "width": self.width}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> "RowTable":
        from jaxcfr.profile import decode_label
        table = cls()
        for (p, k), acts in zip(data["keys"], data["actions"]):
            key = (int(p), decode_label(k))
            table.index[key] = len(table.keys)
            table.keys.append(key)
            table.actions.append(tuple(decode_label(a) for a in acts))
            table.owner.append(int(p))
        table.capacity, table.width = int(data["capacity"]), int(data["width"])
        return table


@dataclasses.dataclass
class Timing:
    """Where the wall time of the iterations went. The host prepares chunk ``c + 1`` on a
    thread while the device runs chunk ``c``; ``wait_seconds`` is the time the device
    then sat idle because chunk ``c + 1`` was not ready yet."""
    host_seconds: float = 0.0       # drawing, lowering, padding (overlapped with the device)
    wait_seconds: float = 0.0       # the device idle, waiting for the host
    wall_seconds: float = 0.0
    iterations: int = 0
    draws: int = 0

    @property
    def device_wait_fraction(self) -> float:
        """Share of the wall time the device waited for the host."""
        return self.wait_seconds / self.wall_seconds if self.wall_seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"host_seconds": self.host_seconds, "wait_seconds": self.wait_seconds,
                "wall_seconds": self.wall_seconds, "iterations": self.iterations,
                "draws_per_second": self.draws / self.host_seconds if self.host_seconds else None,
                "device_wait_fraction": self.device_wait_fraction}


class Prepared(NamedTuple):
    """A chunk of iterations, ready for the device (host arrays)."""
    tensors: GameTensors      # [k, N'] padded parts side by side
    rowmaps: np.ndarray       # [k, I'] global row of every forest row
    legal: np.ndarray         # [G, A] the global rows' legal slots
    owners: np.ndarray        # [G] the global rows' players
    structure: Structure      # the forest's level slices


# -- host: drawing and lowering ------------------------------------------------------------
def _lower_part(game, seeds) -> LoweredGame:
    return lower(EmpiricalChance(game, seeds), sort_infosets=False, name="draws", workers=1,
                 size=None, memory_budget=1 << 62)


_POOL_GAME = None


def _pool_init(game) -> None:
    global _POOL_GAME
    _POOL_GAME = game


def _pool_lower(seeds) -> LoweredGame:
    return _lower_part(_POOL_GAME, seeds)


class SampledChanceRunner:
    """Chance-sampled CFR with the host drawing chance: a :class:`jaxcfr.Runner` stand-in.

    Args:
      game: the root state (its chance may or may not be enumerable).
      solver: a :class:`jaxcfr.Solver` (its regret and averaging rules; ``sampling`` must
        be ``"none"``: chance is what this runner samples).
      hyperparams: ``alpha`` / ``beta`` / ``gamma`` scalars and ``seed`` (batches of
        settings or seeds are not supported here).
      draws: chance samples per iteration.
      parts: processes lowering the draws (1: this process).
      exact: the lowered full game, for exact evaluation (``None``: estimates).
    """

    games_batched = False
    hp_batch = ()
    batch_members = 1
    layout = "sampled-chance"

    def __init__(self, game, solver: Solver, hyperparams: dict | None = None, *,
                 precision: str = "float32", chunk: int = 64, draws: int = DEFAULT_DRAWS,
                 parts: int = 1, exact: LoweredGame | None = None, name: str = ""):
        if solver.sampling != "none":
            raise ValueError("sampled chance runs chance-sampled CFR itself: the solver's "
                             f"sampling must be 'none', got {solver.sampling!r}")
        hyperparams = dict(hyperparams or {})
        if any(np.ndim(v) for v in hyperparams.values()):
            raise ValueError("sampled chance takes one setting and one seed per run "
                             "(no batches of settings or seeds)")
        self.game, self.solver, self.name = game, solver, name or type(game).__name__
        self.dtype = _precision.dtype_of(precision)
        self.chunk, self.draws, self.parts = int(chunk), int(draws), max(1, int(parts))
        self.seed = int(hyperparams.pop("seed", 0))
        self.exact = exact
        self.num_players = int(game.num_players)
        self.table = RowTable()
        self.widths: list[int] = []      # node capacity per level of one part
        self.part_rows = 1
        self.timing = Timing()
        with self.scope():
            self.hp = solver.hyperparams(**hyperparams, seed=self.seed, dtype=self.dtype)
        self._pool = None
        self._thread = None
        self.lowered = exact                # what train / evaluate_profile read, if any

    def __repr__(self) -> str:
        return (f"SampledChanceRunner({self.solver!r} on {self.name}, {self.draws} draws per "
                f"iteration, {len(self.table) - 1:,} rows so far, {self.dtype.name})")

    def scope(self):
        return _precision.scope(self.dtype)

    def member_labels(self) -> list[str]:
        return []

    # -- host ------------------------------------------------------------------------------
    def _part_seeds(self, iteration: int) -> list[list[int]]:
        seeds = [draw_seed(self.seed, iteration, j) for j in range(self.draws)]
        per = math.ceil(self.draws / self.parts)
        return [seeds[i:i + per] for i in range(0, self.draws, per)]

    def _lower_parts(self, iteration: int) -> list[LoweredGame]:
        groups = self._part_seeds(iteration)
        if self.parts == 1 or len(groups) == 1:
            return [_lower_part(self.game, g) for g in groups]
        if self._pool is None:
            ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
            self._pool = concurrent.futures.ProcessPoolExecutor(
                self.parts, mp_context=ctx, initializer=_pool_init, initargs=(self.game,))
        return list(self._pool.map(_pool_lower, groups))

    def prepare(self, iterations: range) -> Prepared:
        """Draw, lower and pad the parts of ``iterations``; grow the rows and capacities."""
        start = time.perf_counter()
        drawn = []
        for t in iterations:
            lowered = self._lower_parts(t)
            maps = [self.table.rows(g) for g in lowered]
            for g in lowered:
                widths = list(np.diff(g.level_start))
                if len(widths) > len(self.widths):
                    self.widths += [1] * (len(widths) - len(self.widths))
                widths += [0] * (len(self.widths) - len(widths))
                self.widths = [max(c, _bucket(w)) for c, w in zip(self.widths, widths)]
                self.part_rows = max(self.part_rows, _bucket(g.num_rows))
            drawn.append((lowered, maps))
        tensors, rowmaps = [], []
        for lowered, maps in drawn:
            padded = [pad(g, self.widths, self.part_rows, self.table.width) for g in lowered]
            maps = [np.concatenate([m, np.zeros(self.part_rows - len(m), np.int32)])
                    for m in maps]
            tensors.append(_forest(padded, self.widths))
            rowmaps.append(np.concatenate(maps))
        parts = len(drawn[0][0])
        starts = np.concatenate([[0], np.cumsum(self.widths)]) * parts
        out = Prepared(GameTensors(*(np.stack(x) for x in zip(*tensors))), np.stack(rowmaps),
                       self.table.legal(), self.table.owners(),
                       Structure(tuple(int(x) for x in starts), self.num_players))
        self.timing.host_seconds += time.perf_counter() - start
        return out

    # -- state -----------------------------------------------------------------------------
    def init(self) -> SolverState:
        return self._zeros(self.table.capacity, self.table.width, 0)

    def _zeros(self, rows: int, actions: int, iteration: int) -> SolverState:
        with self.scope():
            z = jnp.zeros((rows, actions), self.dtype)
            return SolverState(z, z, z, jnp.asarray(iteration, jnp.int32))

    def _grow(self, state: SolverState, capacity: int, width: int) -> SolverState:
        """Pad the state to ``[capacity, width]`` (zeros in the new rows and slots)."""
        rows, actions = state.regret.shape
        if (rows, actions) == (capacity, width):
            return state
        with self.scope():
            grown = [jnp.zeros((capacity, width), self.dtype).at[:rows, :actions].set(x)
                     for x in state[:3]]
        return SolverState(*grown, state.iteration)

    def restore(self, arrays: dict[str, np.ndarray], host: dict[str, Any] | None = None
                ) -> SolverState:
        """A state from a checkpoint's arrays and host state (:meth:`host_state`)."""
        if host is not None:
            self.table = RowTable.from_state(host["rows"])
            self.widths = [int(w) for w in host["widths"]]
            self.part_rows = int(host["part_rows"])
        with self.scope():
            return SolverState(*(jnp.asarray(arrays[f]) for f in SolverState._fields))

    def host_state(self) -> dict[str, Any]:
        """What a checkpoint must keep besides the arrays: the row table and capacities."""
        return {"rows": self.table.state(), "widths": list(self.widths),
                "part_rows": self.part_rows, "draws": self.draws, "seed": self.seed}

    # -- iterating -------------------------------------------------------------------------
    def compile(self, state: SolverState) -> tuple[SolverState, float]:
        """Nothing to compile ahead: shapes follow the draws (the first chunk compiles)."""
        return state, 0.0

    def advance(self, state: SolverState, iterations: int) -> SolverState:
        """Run ``iterations`` more iterations in chunks; a host thread prepares the next
        chunk while the device runs the current one."""
        done = int(np.asarray(state.iteration))
        end = done + int(iterations)
        wall = time.perf_counter()
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(1, "jaxcfr-draws")
        chunks = [range(a, min(a + self.chunk, end + 1))
                  for a in range(done + 1, end + 1, self.chunk)]
        future = self._thread.submit(self.prepare, chunks[0]) if chunks else None
        for c, chunk in enumerate(chunks):
            waited = time.perf_counter()
            ready = future.result()
            if c:                                  # the device finished chunk c - 1 already
                self.timing.wait_seconds += time.perf_counter() - waited
            future = (self._thread.submit(self.prepare, chunks[c + 1])
                      if c + 1 < len(chunks) else None)
            state = self._grow(state, *ready.legal.shape)
            with self.scope():
                state = _run(to_device(ready.tensors, self.dtype), jnp.asarray(ready.rowmaps),
                             jnp.asarray(ready.legal), jnp.asarray(ready.owners), state,
                             self.hp, solver=self.solver.static_key(),
                             structure=ready.structure)
                jax.block_until_ready(state)
            self.timing.iterations += len(chunk)
            self.timing.draws += len(chunk) * self.draws
        self.timing.wall_seconds += time.perf_counter() - wall
        return state

    # -- metrics ---------------------------------------------------------------------------
    def profile_table(self, state: SolverState) -> Profile:
        """The average profile over the rows seen so far, keyed by information set."""
        table = np.asarray(state.strategy_sum, np.float64)
        legal = self.table.legal()[:table.shape[0], :table.shape[1]]
        from jaxcfr.numerics import normalise
        probs = normalise(table, legal)[1:len(self.table)]
        return Profile(self.table.keys[1:], self.table.actions[1:], probs, game=self.name)

    def profile(self, state: SolverState, average: bool = True) -> np.ndarray:
        return np.asarray(self.profile_table(state).probs)

    def evaluate(self, state: SolverState, average: bool = True) -> dict[str, Any]:
        """Exact metrics in the lowered full game (:func:`jaxcfr.evaluate`), or estimates."""
        from jaxcfr.analytics import evaluate
        profile = self.profile_table(state)
        if self.exact is not None:
            table, _ = profile.table(self.exact)
            return evaluate(self.exact, table, dtype=self.dtype)
        return _estimated_metrics(self.game, profile, self.seed, int(np.asarray(
            state.iteration)))

    def close(self) -> None:
        """Stop the host thread and worker processes."""
        for pool in (self._thread, self._pool):
            if pool is not None:
                pool.shutdown(cancel_futures=True)
        self._thread = self._pool = None


def _forest(parts: list[GameTensors], widths) -> GameTensors:
    """Padded parts (same shape) side by side, level by level (``stack.forest``'s layout)."""
    from jaxcfr.stack import forest
    levels = tuple(int(x) for x in np.concatenate([[0], np.cumsum(widths)]))
    fake = LoweredGame(tensors=GameTensors(*(np.stack(x) for x in zip(*parts))),
                       level_start=levels, num_players=0, infoset_keys=(), infoset_actions=(),
                       preorder=np.zeros(0, np.int64), node_action=(),
                       batch_size=len(parts))
    return forest(fake)[0]


def _estimated_metrics(game, profile: Profile, seed: int, iteration: int) -> dict[str, Any]:
    """Metrics of a game too large to lower: estimates (needs :mod:`jaxcfr.estimates`)."""
    try:
        from jaxcfr import estimates
    except ImportError:
        estimates = None
    out = {"values": None, "best_response_values": None, "nash_conv": None,
           "exploitability": None, "nash_gap": None, "metric": None,
           "metric_name": "estimated_gain", "estimates": None}
    if estimates is not None:
        est = estimates.estimate_metrics(game, profile, seed=draw_seed(seed, iteration, -1))
        out.update(estimates=est, values=est["values"],
                   metric=float(np.sum(est["gain_lower_bound"])))
    return out


# -- device ---------------------------------------------------------------------------------
@functools.partial(jax.jit, static_argnames=("solver", "structure"), donate_argnames=("state",))
def _run(tensors: GameTensors, rowmaps: jax.Array, legal: jax.Array, owner: jax.Array,
         state: SolverState, hp: HyperParams, *, solver: Solver,
         structure: Structure) -> SolverState:
    """``k`` iterations, one per prepared batch (``tensors``, ``rowmaps``: ``[k, ...]``).

    Each: exact passes over the batch's forest with the current strategy of the global
    rows it touches, scattered onto the global table ``[G, A]`` by
    :meth:`jaxcfr.Solver.row_update`.
    """
    rows = Rows(legal, legal, owner)

    def one(state, batch):
        t, rowmap = batch

        def estimate(policy, player, keys):
            return _forest_estimate(t, structure, rowmap, policy, player)
        return solver.row_update(rows, structure.num_players, state, hp, estimate), None

    state, _ = jax.lax.scan(one, state, (tensors, rowmaps))
    return state


def _forest_estimate(t: GameTensors, s: Structure, rowmap: jax.Array, policy, player
                     ) -> estimators.RowEstimate:
    """Exact counterfactual regrets of the forest's rows for ``player`` (``None``: all),
    listed by global row (chance-sampled CFR over the drawn parts; see the module)."""
    local_rows, actions = t.legal_mask.shape
    width = policy.legal.shape[1]
    zero = jnp.zeros(local_rows, jnp.int32)
    sigma = policy.rows(rowmap, zero)[:, :actions]                        # [I', A']
    est = estimators.exact(t, s, sigma, player)
    parts = s.level_start[1]                 # the forest's roots: its parts, each a mean
    mine = estimators.rows_of(t, player)
    pad_cols = lambda x: jnp.pad(x, ((0, 0), (0, width - actions)))     # noqa: E731
    regret = pad_cols(jnp.where(mine[:, None], est.regret, 0) / parts)
    average = pad_cols(jnp.where(est.average_rows[:, None], est.average, 0) / parts)
    sink = jnp.zeros_like(rowmap)
    return estimators.RowEstimate(zero, jnp.where(mine, rowmap, sink), regret,
                                  jnp.where(est.average_rows, rowmap, sink), average)
