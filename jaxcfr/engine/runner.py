"""The runner: jitted ``lax.scan`` chunks of solver updates, exact evaluation between chunks.

Everything a compiled function reads is an argument: the lowered tensors, the
solver state, the hyper-parameters and the number of iterations to run. Only
the *shape* facts are static (the solver's structure flags, the level slices, the
chunk length), so the second chunk of a run, a new hyper-parameter value, or
another game of the same padded shape compiles nothing.

Batch axes: a stacked game (``jaxcfr.stack``) puts a leading ``[B]`` axis on the
tensors and the state, handled by ``jax.vmap``; a batch of hyper-parameter
settings puts a trailing ``[H]`` axis on the state (``[I, A, H]``), so that
every index gather reads contiguous rows.

Example::

    >>> import jaxcfr
    >>> runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game("kuhn_poker")), jaxcfr.cfr_plus())
    >>> state = runner.advance(runner.init(), 100)
    >>> metrics = runner.evaluate(state)      # jaxcfr.evaluate of the average profile

Precision: every device call of a Runner happens inside :func:`jaxcfr._util.precision.scope`
of its dtype, so a float64 runner never changes what a float32 one computes.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import precision as _precision
from jaxcfr._util.host_arrays import on_device, to_host
from jaxcfr._util import program_cache
from jaxcfr._util.arguments import ArgumentError, positive_int
from jaxcfr._util.tracing import counted
from jaxcfr.engine.jax_compilation_cache import enable_compilation_cache, use_compilation_cache
from jaxcfr.engine.loop import state_is_finite
from jaxcfr.kernels.numerics import check_payoff_range
from jaxcfr.engine.seam import Layout, choose_seam
from jaxcfr.lowering.stack import pad_to_multiple
from jaxcfr.profiles.profile import Profile
from jaxcfr.lowering.public_stack import PublicStack
from jaxcfr.solvers import analytics, public_blocks
from jaxcfr.solvers.locking import Lock, evaluate_locked, evaluate_public_locked
from jaxcfr.solvers.parameters import along_members
from jaxcfr.solvers.public_stack import evaluate_public_stack_locked, member_step, members
from jaxcfr.solvers.solver import HyperParams, Solver, SolverState, StateProfile
from jaxcfr.tensors import (LoweredGame, PublicTensors, Structure, fingerprint, to_device,
                            without_nodes)

__all__ = ["Runner", "DEFAULT_CHUNK", "batch_mesh", "enable_compilation_cache"]

#: Iterations per compiled chunk (the last chunk of a run skips its unused steps).
DEFAULT_CHUNK = 64


@functools.partial(jax.jit, static_argnames=("solver", "structure", "layout", "chunk",
                                             "per_member"),
                   donate_argnames=("state",))
@counted("chunk")
def _run_chunk(tensors, state: SolverState, hp: HyperParams, n: jax.Array, arrays,
               lock=None, *, solver: Solver, structure: Structure, layout: Layout, chunk: int,
               per_member: bool = False) -> SolverState:
    """``n`` (traced, at most ``chunk``) iterations of ``solver``.

    ``arrays``: what the solver's (prepared) estimator reads besides the tensors, e.g. a
    sampling estimator's child tables (``None`` for the exact estimator).

    ``layout`` (:class:`jaxcfr.engine.seam.Layout`) says how ``tensors`` hold a stack's
    state ``[B, I, A, *H]`` and steps it. ``lock``: a single game's
    :class:`~jaxcfr.solvers.locking.Lock` (traced; ``None``: nothing locked), or on a
    stack of public trees its members' (``[B, I, A]``, ``[B, I]``). ``per_member``: on
    such a stack, ``hp``'s values are ``[B]``, one setting per member. A stack's lock
    and per-member parameters travel with each member's tensors through the layout
    (:func:`jaxcfr.solvers.public_stack.member_step`).
    """
    steps = jnp.minimum(n, chunk)
    own = layout.stacked and (lock is not None or per_member)
    member_of, member_start = member_step(solver, structure, hp, lock, per_member)

    def iterate(t, st, arr, step, start):
        """``steps`` iterations (``Solver.step`` carries the current strategy along; one
        public tree's alternating run keeps its tables per player: public_blocks; so does
        each member of a stack of public trees stepped one after another)."""
        if public_blocks.applies(solver, t, structure, lock):
            return public_blocks.iterate(solver, t, structure, st, hp, steps,
                                         padding=layout.stacked)
        carry = jax.lax.fori_loop(0, steps, lambda i, c: step(t, c, arr), start(t, st))
        return carry.state

    def step(t, carry, arr):
        if own:                                 # (tensors, (lock, hp)) of one member
            return member_of(t[0], carry, arr, t[1])
        return solver.step(t, structure, carry, hp, arr, lock)

    def start(t, st):
        if own:
            return member_start(t[0], st, t[1])
        return solver.start(t, st, lock)

    # a loop of traced length n <= chunk: the last chunk of a run skips its unused steps
    # without a per-step conditional (which would copy the state every iteration)
    packed = (tensors, members(lock, hp, per_member)) if own else tensors
    return layout.iterate(packed, state, arrays, iterate, step, start)


def _fit_rows(table: np.ndarray, rows: int) -> np.ndarray:
    """``table [I', ...]`` with ``rows`` rows: zero rows added, or all-zero rows dropped."""
    if table.shape[0] < rows:
        pad = np.zeros((rows - table.shape[0],) + table.shape[1:], table.dtype)
        return np.concatenate([table, pad])
    if table.shape[0] > rows and not table[rows:].any():
        return table[:rows]
    return table


@functools.partial(jax.jit, static_argnames=("games_batched", "predictive", "average"))
def _profile(tensors, state: SolverState, *, games_batched: bool, predictive: bool,
             average: bool) -> jax.Array:
    """The average (normalised strategy sum) or current (regret-matched) profile."""
    fn = StateProfile(predictive, average)
    return (jax.vmap(fn) if games_batched else fn)(tensors, state)


def batch_mesh(num_devices: int | None = None, axis: str = "batch"):
    """A one-axis mesh over the first ``num_devices`` devices (all by default) for ``Runner``.

    Under ``jax.distributed`` (:mod:`jaxcfr.engine.distributed`) these are the devices of
    every process: the mesh is global.

    Tests fake several CPU devices with
    ``XLA_FLAGS=--xla_force_host_platform_device_count=4``.
    """
    from jax.sharding import AxisType
    n = num_devices or len(jax.devices())
    return jax.make_mesh((n,), (axis,), axis_types=(AxisType.Auto,))


class Runner:
    """A lowered game, a solver and its run parameters on the device, ready to iterate.

    It implements :class:`jaxcfr.engine.protocol.RunnerProtocol` (what the run loop,
    ``solve`` and ``train`` call).

    Args:
      lowered: a LoweredGame (single or stacked), or a public tree
        (:class:`~jaxcfr.lowering.public.PublicLowered`: the seam chooses its value
        kernel, :class:`~jaxcfr.kernels.values.PublicTree`; full-width solvers only).
      solver: a :class:`~jaxcfr.solvers.solver.Solver`.
      parameters: optional dict of the solver's traced parameters by name
        (:attr:`~jaxcfr.solvers.solver.Solver.parameters`: the parts' own, e.g.
        ``alpha``, ``gamma``, ``exploration``, and ``seed``; checked by their
        declarations); a sequence value makes a batch of settings on a trailing axis
        ``[H]`` (every given sequence has the same length; scalars are shared by the
        batch).
      precision: ``"float32"`` (default) or ``"float64"``, scoped to this runner's calls.
      chunk: iterations per compiled chunk.
      mesh: optional ``jax.sharding.Mesh`` with one axis: the batch axis (the stack's
        leading ``B``, else the trailing hyper-parameter ``H``) is sharded over it; a
        single game without a batch is split instead: its nodes, rows and leaves are
        sharded (padded to a multiple of the device count; see ``docs/benchmarks.md``).
      sequence_form: step a dense estimator on the sequence form
        (:mod:`jaxcfr.kernels.sequence`: passes over leaves and rows; the default) rather than
        the node passes of :mod:`jaxcfr.kernels.passes` (same values up to float rounding).
      compilation_cache: keep compiled programs on disk for later processes (``True``:
        :func:`~jaxcfr.engine.jax_compilation_cache.default_cache_dir`; a directory; ``False``:
        do not turn it on; see :mod:`jaxcfr.engine.jax_compilation_cache`).
      per_member: on a stack of public trees
        (:class:`~jaxcfr.lowering.public_stack.PublicStack`), the parameters' lists give
        one value per member (each as long as the stack; scalars every member's) instead
        of a batch of settings: the values ``[B]`` are traced and vmapped with the
        members' tensors (:func:`~jaxcfr.solvers.parameters.along_members`), the state
        stays ``[B, I, A]``.
    """

    chance = "exact"
    compiles_ahead = True
    #: node locking (:meth:`set_lock`; None: nothing locked)
    lock = None

    def __init__(self, lowered: LoweredGame, solver: Solver, parameters: dict | None = None,
                 *, precision: str = "float32", chunk: int = DEFAULT_CHUNK, mesh=None,
                 sequence_form: bool = True, compilation_cache: bool | str = True,
                 per_member: bool = False, overlap_evaluation: bool = True):
        self.compilation_cache = use_compilation_cache(compilation_cache)
        #: evaluate a zero state in a thread while the first chunks run (:meth:`compile`);
        #: ``False`` where the memory budget does not hold both programs' temporaries at
        #: once (``jaxcfr.lowering.public.evaluation_overlap_fits``): the evaluation then
        #: compiles when first due, between chunks
        self.overlap_evaluation = bool(overlap_evaluation)
        self._evaluation_compile: threading.Thread | None = None
        self._evaluation_abandoned = threading.Event()   # the thread's work is no longer wanted
        self._chunk_compiled = None        # the chunk's program, once looked up (_chunk)
        self.evaluation_compile_seconds: float | None = None
        self.dtype = _precision.dtype_of(precision)
        self.lowered = lowered
        self.solver = solver
        self.chunk = positive_int("chunk", chunk)
        self.games_batched = lowered.batch_size is not None
        parameters = solver.check_parameters(dict(parameters or {}))
        self.settings = {k: v for k, v in parameters.items()
                         if isinstance(v, list)}       # the parameters that vary in the batch
        self.per_member = bool(per_member)
        if self.per_member and (not isinstance(lowered, PublicStack) or mesh is not None):
            raise ArgumentError("per-member parameters take a stack of public trees in one "
                                "process (no mesh)", argument="per_member")
        with self.scope():
            self.hp: HyperParams = solver.hyperparams(self.dtype, **parameters)
            if self.per_member:                # one setting per member: [B], along the stack
                self.hp = along_members(self.hp, lowered.batch_size, place=on_device)
            self.hp_batch: tuple[int, ...] = () if self.per_member else self.hp.batch_shape
        if mesh is not None:
            # jax.make_mesh defaults to Explicit axes, under which the batched gathers need
            # per-op out_sharding; the passes are written for sharding propagation (Auto).
            from jax.sharding import AxisType, Mesh
            if any(t != AxisType.Auto for t in mesh.axis_types):
                mesh = Mesh(mesh.devices, mesh.axis_names,
                            axis_types=(AxisType.Auto,) * len(mesh.axis_names))
        self.mesh = mesh
        # One game on a mesh (no batch to shard) is split over the devices: its node and
        # row axes (and the value kernel's tables) are sharded, padded to a multiple of
        # the device count with inert nodes and rows (profile() drops those rows). Under a
        # sampling estimator it is replicated instead: one program over several members'
        # tables at once only for an estimator that draws nothing (a sampling one draws
        # each member's numbers from its own key: each member equals its separate run).
        merged = solver.estimator.dense and not solver.estimator.seeded
        self.split_game = (mesh is not None and not self.games_batched and not self.hp_batch
                           and merged)
        if mesh is not None and not self.split_game:
            members = lowered.batch_size if self.games_batched else (self.hp_batch or (1,))[0]
            if members % mesh.devices.size:
                what = "games" if self.games_batched else "settings or seeds"
                raise ValueError(
                    f"a batch of {members} {what} cannot be shared out evenly over the mesh's "
                    f"{mesh.devices.size} devices: give a multiple of {mesh.devices.size} "
                    "members, or a mesh of fewer devices")
        self.device_lowered = (pad_to_multiple(lowered, mesh.devices.size) if self.split_game
                               else lowered)
        self.structure = self.device_lowered.structure
        # the value kernel and the stack's layout, chosen once
        self.values, self.layout, self.evaluation_values = choose_seam(
            self.device_lowered, solver.estimator, sharded=mesh is not None,
            sequence_form=sequence_form)
        check_payoff_range(self.values.payoffs(lowered.tensors), self.dtype,
                           lowered.name or "the game")
        # the estimator's host preparation: its static facts go into the (static) solver,
        # its arrays are traced arguments of the step; it computes with the chosen kernel
        estimator, arrays = solver.estimator.prepare(self.device_lowered)
        estimator = dataclasses.replace(estimator, values=self.values)
        self.step_solver = dataclasses.replace(solver, estimator=estimator).static_key()
        # the node arrays ([N]: parent, payoff, ...) go to the device only where something
        # there reads them: not where the layout steps these very tensors with a kernel
        # (the sequence form) and an estimator (the exact one) that read only the rows and
        # the kernel's tables; then they stay on the host until asked (node_tensors())
        self.nodes_on_device = not (self.layout.own_tensors and not self.values.reads_nodes
                                    and not estimator.reads_nodes)
        self._node_tensors = None
        host_tensors = self.device_lowered.tensors
        if not self.nodes_on_device:
            host_tensors = without_nodes(host_tensors)
        with self.scope():
            self.arrays = jax.tree_util.tree_map(on_device, arrays)
            self.tensors = to_device(host_tensors, self.dtype)
            if mesh is not None:
                self.tensors = self._shard(self.tensors, batched_last=False)
                self.hp = self._shard(self.hp, batched_last=True)
                self.arrays = self._shard(self.arrays, batched_last=False)
            host, self.step_structure = self.layout.host(self.device_lowered)
            self.step_tensors = (self.tensors if self.layout.own_tensors
                                 else to_device(host, self.dtype))
            self.step_tensors = self._with_tables(host)

    def _with_tables(self, host):
        """The step tensors carrying the value kernel's tables of ``host`` (their NumPy
        form), placed (and sharded) like the tensors."""
        multiple = self.mesh.devices.size if self.split_game else 1
        tables = self.values.tables(host, self.step_structure, self.dtype,
                                    stacked=self.layout.stacked, multiple=multiple)
        if tables is None:
            return self.step_tensors
        if not self.nodes_on_device:
            tables = self.values.device_tables(tables)
        tables = jax.tree_util.tree_map(
            lambda x: on_device(x, self.dtype if x.dtype.kind == "f" else None), tables)
        if self.mesh is not None:
            tables = self._shard(tables, batched_last=False,
                                 axes=self.values.split_axes(tables) if self.split_game
                                 else None)
        return self.values.attach(self.step_tensors, tables)

    def node_tensors(self):
        """The tensors with their node arrays, on the device and placed like
        :attr:`tensors`: those very tensors where the run placed the node arrays
        (:attr:`nodes_on_device`), else copied when first asked (the locked game's
        evaluation walks the nodes) and kept from then on."""
        if self.nodes_on_device:
            return self.tensors
        if self._node_tensors is None:
            with self.scope():
                tensors = to_device(self.device_lowered.tensors, self.dtype)
                if self.mesh is not None:
                    tensors = self._shard(tensors, batched_last=False)
            self._node_tensors = tensors
        return self._node_tensors

    def __repr__(self) -> str:
        batch = f", {self.hp_batch[0]} settings" if self.hp_batch else ""
        return (f"Runner({self.solver!r} on {self.lowered!r}, {self.dtype.name}{batch}, "
                f"chunk {self.chunk})")

    def scope(self):
        """The precision scope every device call of this runner runs in."""
        return _precision.scope(self.dtype)

    @property
    def batch_members(self) -> int:
        """Games times settings: the number of separate runs this one stands for."""
        games = self.lowered.batch_size or 1
        return games * (self.hp_batch[0] if self.hp_batch else 1)

    def member_labels(self) -> list[str]:
        """One label per batch member, games outer and settings inner (``[]`` if single)."""
        games = [g.name for g in self.lowered.members] if self.games_batched else [None]
        if self.per_member:                    # each game with its own setting
            return [" ".join([g] + [f"{k}={v[b]:g}" for k, v in self.settings.items()])
                    for b, g in enumerate(games)]
        n = self.hp_batch[0] if self.hp_batch else 0
        settings = [" ".join(f"{k}={v[i]:g}" for k, v in self.settings.items())
                    for i in range(n)] or [None]
        if games == [None] and settings == [None]:
            return []
        return [" ".join(x for x in (g, s) if x) for g in games for s in settings]

    def _shard(self, tree, batched_last: bool, axes=None):
        """Place ``tree`` on ``self.mesh``: a stack's leading ``B`` axis is sharded; with
        ``batched_last``, a trailing hyper-parameter axis ``H`` is sharded instead; a split
        game shards axis 0 (its nodes or rows), or the axis ``axes`` gives per leaf."""
        from jax.sharding import NamedSharding, PartitionSpec
        axis = self.mesh.axis_names[0]

        def place(x, split=0):
            spec = PartitionSpec()
            if self.games_batched and x.ndim >= 1:
                spec = PartitionSpec(axis)
            elif batched_last and self.hp_batch and x.ndim >= 1:
                spec = PartitionSpec(*([None] * (x.ndim - 1) + [axis]))
            elif self.split_game and x.ndim >= 1:
                spec = PartitionSpec(*([None] * split + [axis]))
            return jax.device_put(x, NamedSharding(self.mesh, spec))
        if axes is not None:
            return jax.tree_util.tree_map(place, tree, axes)
        return jax.tree_util.tree_map(place, tree)

    # -- state -------------------------------------------------------------
    def init(self) -> SolverState:
        """Zero state: ``[I, A, *H]``, or ``[B, I, A, *H]`` for a stacked game."""
        with self.scope():
            state = self.solver.init(self.device_lowered.tensors, self.hp_batch, dtype=self.dtype)
            if self.games_batched:
                b = self.lowered.batch_size
                state = jax.tree_util.tree_map(
                    lambda x: on_device(np.broadcast_to(np.asarray(x), (b,) + x.shape)), state)
            if self.mesh is not None:
                state = self._shard(state, batched_last=True)
        return state

    def host_state(self) -> None:
        """Nothing: the state's arrays are the whole run."""
        return None

    def restore_host(self, host) -> None:
        """Nothing to take (a checkpoint of this runner has no host state)."""
        if host is not None:
            raise ValueError("this run keeps no host state, but the checkpoint has one (it was "
                             "written by a sampled-chance run)")

    def fingerprint(self) -> str:
        """The lowered game's (:func:`jaxcfr.tensors.fingerprint`)."""
        return fingerprint(self.lowered)

    def restore(self, arrays: dict[str, np.ndarray]) -> SolverState:
        """A state from host arrays (a checkpoint), on the device in this runner's dtype.

        A split game's padding rows are added (or dropped, when they are all zero) so
        that states move between split and unsplit runners of the same game. Tables the
        solver does not keep are dropped or folded in (:meth:`Solver.state_of`); an entry
        of ``None`` (a table a :class:`SolverState` does not hold) is no table.
        """
        rows = self.device_lowered.num_rows
        arrays = {f: x for f, x in arrays.items() if x is not None}   # None: a table not held
        if not self.games_batched:
            arrays = {f: _fit_rows(np.asarray(x), rows) if f != "iteration" else x
                      for f, x in arrays.items()}
        with self.scope():
            state = self.solver.state_of(arrays, jnp.asarray)
            if self.mesh is not None:
                state = self._shard(state, batched_last=True)
        return state

    def advance(self, state: SolverState, iterations: int) -> SolverState:
        """Run ``iterations`` more iterations (in compiled chunks)."""
        left = int(iterations)
        with self.scope():
            while left > 0:
                n = min(left, self.chunk)
                state = self._chunk(state, n)
                left -= n
        return state

    def _chunk(self, state: SolverState, n: int, lower: bool = False, traced=None):
        args = (self.step_tensors, state, self.hp, on_device(np.int32(n)), self.arrays,
                self.lock)
        static = dict(solver=self.step_solver, structure=self.step_structure,
                      layout=self.layout, chunk=self.chunk, per_member=self.per_member)
        if lower:
            return _run_chunk.lower(*args, **static)
        if self._chunk_compiled is not None:
            try:
                return self._chunk_compiled(*args)
            except TypeError:       # the arguments' types changed (checked before it runs)
                self._chunk_compiled = None
        # found on disk before tracing, where it can be; kept, since looking it up hashes
        # every argument
        self._chunk_compiled = program_cache.program(_run_chunk, args, static, traced=traced)
        if self._chunk_compiled is None:
            return program_cache.call(_run_chunk, args, static, traced=traced)
        return self._chunk_compiled(*args)

    def chunk_program(self, state: SolverState):
        """The chunk's ``jax.stages.Lowered`` program (e.g. ``.compile().memory_analysis()``)."""
        with self.scope():
            return self._chunk(state, 1, lower=True)

    def compile(self, state: SolverState) -> tuple[SolverState, float]:
        """Compile the chunk (running zero iterations); returns its seconds.

        The evaluation compiles at the same time, in a thread of its own, on a zero state
        of the same shapes, while the chunk compiles and the first chunks run: the first
        :meth:`evaluate` waits for it (its seconds: ``evaluation_compile_seconds``). The
        thread starts tracing once the chunk is traced (tracing holds Python's lock, XLA's
        compile does not). It never outlives the run: where the chunk's compile fails, it
        is told to stop and joined before the error goes on; :meth:`close` (which
        :func:`jaxcfr.solve` and ``jaxcfr train`` call however the run ends, and ``with
        Runner(...)`` calls on leaving) joins it too. Not over several processes
        (``jax.distributed``), nor where :attr:`overlap_evaluation` is off (the memory
        budget holds one program's temporaries at a time): there it compiles when first
        due.
        """
        # (over several processes, evaluating runs collectives: from a thread they could
        # interleave with the chunk's in another order on each process and deadlock, so
        # there the evaluation compiles when it is first due, in order on every process)
        traced = threading.Event()
        if (self._evaluation_compile is None and not self._evaluation_abandoned.is_set()
                and jax.process_count() == 1 and self.overlap_evaluation):
            self._evaluation_compile = threading.Thread(
                target=self._compile_evaluation, args=(traced,),
                name="jaxcfr-compile-evaluation", daemon=True)
            self._evaluation_compile.start()
        start = time.perf_counter()
        compiled = False
        try:
            with self.scope():
                state = self._chunk(state, 0, traced=traced.set)
                jax.block_until_ready(state)
            compiled = True
        finally:
            if not compiled:         # no run follows: the thread stops, and ends before we go on
                self._evaluation_abandoned.set()
            traced.set()
            if not compiled:
                self._wait_for_evaluation_compile()
        return state, time.perf_counter() - start

    def _compile_evaluation(self, chunk_traced: threading.Event) -> None:
        """Compile (or load) every evaluation program on a zero state, and the run loop's
        finiteness check of the state: the profile is run (a cheap program), the metrics'
        program made without running it (on the README turn that run cost 0.4 CPU-s, as
        much as a real evaluation); a locked run's evaluation is run once, as before. Each
        step is skipped once the work is abandoned (:meth:`close`, a failed chunk compile)."""
        chunk_traced.wait()
        start = time.perf_counter()
        abandoned = self._evaluation_abandoned.is_set
        try:
            if abandoned():
                return
            state = self.init()
            if abandoned():
                return
            if self.lock is None:              # the programs made, the evaluation not run
                with self.scope():
                    self._profile(state, True)
                analytics.prepare_evaluation(
                    self.device_lowered, state, dtype=self.dtype,
                    tensors=self._evaluation_tensors(), values=self.evaluation_values,
                    profile=StateProfile(self.solver.predictive, True))
            else:
                self._evaluate(state)
            if abandoned():
                return
            with self.scope():
                state_is_finite(state)
        except Exception:       # noqa: BLE001 - evaluate() itself raises it, in the caller
            pass
        self.evaluation_compile_seconds = time.perf_counter() - start

    def _wait_for_evaluation_compile(self) -> None:
        thread = self._evaluation_compile
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    # -- metrics -----------------------------------------------------------
    def profile(self, state: SolverState, average: bool = True) -> np.ndarray:
        """The average (or current) strategy on the host: ``[(B,) I, A, *H]``."""
        with self.scope():
            table = to_host(self._profile(state, average))    # gathered from every process
        return table[:self.lowered.num_rows] if self.split_game else table

    def profiles(self, state: SolverState) -> list[Profile]:
        """The average profile of every member, games outer and settings inner."""
        table = self.profile(state)                                  # [(B,) I, A, *H]
        games = self.lowered.members if self.games_batched else (self.lowered,)
        # a stack of public trees pads its members' rows: each member's own table
        own = getattr(self.lowered, "member_tables", None)
        tables = own(table) if own is not None else table
        out = []
        for b, game in enumerate(games):
            t = tables[b] if self.games_batched else table
            for h in (range(self.hp_batch[0]) if self.hp_batch else [None]):
                out.append(Profile.from_lowered(game, t if h is None else t[..., h]))
        return out

    def report(self) -> None:
        """No figures of its own (its speed is in the metric records)."""
        return None

    def close(self) -> None:
        """Stop and join the evaluation's compile thread (:meth:`compile`): a compile
        under way finishes first; what it has not begun is skipped. Iterating and
        evaluating afterwards are still allowed (what was not compiled compiles when due)."""
        self._evaluation_abandoned.set()
        self._wait_for_evaluation_compile()

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _profile(self, state: SolverState, average: bool) -> jax.Array:
        return program_cache.call(_profile, (self.tensors, state), dict(
            games_batched=self.games_batched, predictive=self.solver.predictive,
            average=average), rarely=True)

    def evaluate(self, state: SolverState, average: bool = True) -> dict[str, Any]:
        """:func:`jaxcfr.evaluate` of the average (or current) profile: see there for the keys.

        Shapes: ``values`` ``[(B,) P, *H]``, ``nash_conv`` ``[(B,) *H]``, ...
        """
        self._wait_for_evaluation_compile()
        return self._evaluate(state, average)

    def set_lock(self, lock) -> None:
        """Lock rows (:class:`~jaxcfr.solvers.locking.Lock` of host tables ``[I, A]``,
        ``[I]`` of the lowered game, or ``[B, I, A]``, ``[B, I]`` of a stack of public
        trees: :func:`jaxcfr.api.locks.resolve_stack_lock`; ``None``: unlock): the chunks
        play it, evaluations are the restricted game's
        (:func:`jaxcfr.solvers.locking.evaluate_locked`; a stack: each member's). A
        traced argument: a new lock does not recompile. One game or a stack of public
        trees, full width, one process."""
        if lock is not None:
            public_stack = isinstance(self.lowered, PublicStack)
            if (self.games_batched and not public_stack) or self.split_game:
                raise ArgumentError("node locking takes one game or a stack of public trees "
                                    "(not a stack of history trees, not split over "
                                    "devices)", argument="lock")
            want = tuple(self.lowered.tensors.legal_mask.shape)
            if np.shape(lock.strategy) != want or np.shape(lock.mask) != want[:-1]:
                raise ArgumentError(f"a Lock of tables {np.shape(lock.strategy)} and "
                                    f"{np.shape(lock.mask)} does not fit the game's "
                                    f"{want}", argument="lock")
            if not self.solver.estimator.dense:
                raise ArgumentError(f"node locking needs a full-width estimator, not "
                                    f"{self.solver.estimator.describe()}", argument="lock")
            with self.scope():
                lock = Lock(on_device(np.asarray(lock.strategy), self.dtype),
                            on_device(np.asarray(lock.mask, bool)))
        self.lock = lock

    def _evaluate(self, state: SolverState, average: bool = True) -> dict[str, Any]:
        if self.lock is not None:              # the restricted game's metrics
            with self.scope():
                table = self._profile(state, average)
            if isinstance(self.lowered, PublicStack):
                locked = evaluate_public_stack_locked
            elif isinstance(self.tensors, PublicTensors):
                locked = evaluate_public_locked
            else:
                locked = evaluate_locked
            return locked(self.lowered, table, self.lock, dtype=self.dtype,
                          tensors=self.node_tensors())
        # the profile made inside the evaluation's program: no [I, A] table of its own
        # held beside the program's temporaries (the README flop: 0.59 GB less at its peak)
        return analytics.evaluate(self.device_lowered, state, dtype=self.dtype,
                                  tensors=self._evaluation_tensors(),
                                  values=self.evaluation_values,
                                  profile=StateProfile(self.solver.predictive, average))

    def _evaluation_tensors(self):
        """The tensors the evaluation reads (with :attr:`evaluation_values`, the kernel
        :func:`~jaxcfr.engine.seam.choose_seam` chose for them): the step's where the
        layout steps these very tensors (one game, or a stack stepped as such), else the
        node tensors (a forest, a shared-structure stack)."""
        return self.step_tensors if self.layout.own_tensors else self.tensors
