"""The CFR family as one configured core: ``(init, update)`` pairs of pure functions.

An update is three parts: an *estimator* (:mod:`jaxcfr.solvers.estimators`: exact
full-width passes, or a sampling scheme) that yields instantaneous regrets and averaging
contributions, a *regret rule* and an *averaging rule* (:mod:`jaxcfr.solvers.rules`). A
:class:`Solver` holds the three parts and the update order (alternating or
simultaneous). The numbers that vary between runs are the parts' own traced parameters
(:mod:`jaxcfr.solvers.parameters`: each part declares its names, defaults and checks;
the solver's :attr:`Solver.parameters` gather them), passed as :class:`HyperParams`, so
one compiled step serves every setting and a batch of settings (or seeds) at once. The
presets (CFR, CFR+, LCFR, DCFR, PCFR+, DCFR+, PDCFR+, HS-PCFR+) pair the parts:
:mod:`jaxcfr.solvers.presets`.

Per iteration ``t`` (1-based), with instantaneous regret ``r_t`` and averaging
contribution ``s_t`` (the owner's reach times the strategy, or its estimate)::

    R_t = regret_rule(R_{t-1} + r_t, t)    (regret_rule(R_{t-1}, t) + r_t: before_adding)
    S_t = S_{t-1} + weight(t) s_t          (compensated: kernels.compensated; a rule that
                                            decays multiplies S_{t-1} by decay(t) first)
    sigma_{t+1} = RM(R_t [+ r_t if predictive])

The strategy sums are kept as a compensated pair (``strategy_sum + strategy_error``):
late increments are a small fraction of the sum, and plain float32 addition rounds them
away (biased, iteration after iteration), so long float32 runs got worse. A solver may
keep plain sums instead (:attr:`Solver.compensate` false: ``postflop-dcfr``, as the peer
it follows), and a state holds only the tables its solver reads (:attr:`Solver.tables`).

With alternating updates the players take turns inside an iteration, each seeing
the strategies the others just updated; simultaneous updates value every player
against the same strategy.

Two paths run the rules: a dense estimator's tables are folded in whole (``[I, A, *b]``);
a sparse estimator's touched rows are scattered in (:meth:`Solver.row_update`), so that
nothing is ``O(I * A)`` per iteration except a rule that changes every row (discounting).

Example::

    >>> import jaxcfr
    >>> solver = jaxcfr.cfr_plus()
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> state = solver.init(lowered)
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.arguments import ArgumentError
from jaxcfr._util.host_arrays import on_device
from jaxcfr._util.precision import dtype_of
from jaxcfr.kernels import compensated, passes
from jaxcfr.kernels.keys import fold, iteration_keys
from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.solvers.estimators import (Estimator, Exact, LazyStrategy, RowEstimate,
                                       over_chunks, rows_of)
from jaxcfr.solvers.locking import Lock, apply as apply_lock, lock_sums
from jaxcfr.solvers.parameters import (HyperParams, Parameter, check_values, declared,
                                       make_hyperparams, shown, without_values)
from jaxcfr.solvers.rules import AveragingRule, PolynomialAverage, RegretMatching, RegretRule
from jaxcfr.tensors import GameTensors, Structure

__all__ = ["Solver", "SolverState", "TABLES", "Carry", "HyperParams", "Rows", "SEED",
           "current_strategy", "average_strategy", "StateProfile"]

#: The run's own traced parameter (every solver takes it; the parts declare theirs).
SEED = Parameter("seed", 0, "PRNG seed of the sampling (iteration t draws from "
                 "fold_in(key(seed), t)); a list: a batch of seeds", arguments.seed,
                 integer=True)


class Rows(NamedTuple):
    """What :meth:`Solver.row_update` needs to know about the table's rows."""
    legal: jax.Array   # [I, A] bool legal actions
    owner: jax.Array   # [I] int32 the row's player (NO_PLAYER for sink / unused rows)


class SolverState(NamedTuple):
    """Solver state; ``*b`` are trailing batch axes (hyper-parameters, seeds).

    Only the tables the solver reads are held (:attr:`Solver.tables`): the others are
    ``None`` (an empty pytree: nothing traced, stored or copied). ``strategy_error`` is
    there when the solver compensates its sums (:attr:`Solver.compensate`),
    ``prediction`` when its regret rule is predictive.
    """
    regret: jax.Array          # [I, A, *b] accumulated (discounted, floored) regret
    strategy_sum: jax.Array    # [I, A, *b] sum of weight(t) x own-reach-weighted strategies
                               #            (only each row's proportions matter)
    strategy_error: jax.Array | None  # [I, A, *b] its compensation: the exact sum is
                               #            strategy_sum + strategy_error (kernels.compensated);
                               #            None: plain float sums (Solver.compensate false)
    prediction: jax.Array | None  # [I, A, *b] last instantaneous regret (predictive rules;
                               #            None under the others)
    iteration: jax.Array       # [] int32  iterations done

    @property
    def tables(self) -> dict[str, jax.Array]:
        """The ``[I, A, *b]`` tables held, by field name (``None`` ones left out)."""
        return {f: x for f, x in zip(TABLES, self[:-1]) if x is not None}

    def arrays(self) -> dict[str, jax.Array]:
        """The tables held and the iteration, by field name (what a checkpoint stores)."""
        return dict(self.tables, iteration=self.iteration)

    def map_tables(self, fn, iteration=None) -> "SolverState":
        """``fn`` applied to every ``[I, A, *b]`` table held (the iteration kept, or
        replaced; an absent table stays ``None``)."""
        return SolverState(*(None if x is None else fn(x) for x in self[:-1]),
                           self.iteration if iteration is None else iteration)


#: The state's table fields, in order (:meth:`SolverState.tables` holds those present).
TABLES = SolverState._fields[:-1]


class Carry(NamedTuple):
    """What a loop of iterations carries from one to the next (:meth:`Solver.start`,
    :meth:`Solver.step`): the state and, for a dense estimator, its current strategy
    (regret-matched once, then again after each half-step)."""
    state: SolverState
    strategy: jax.Array | None   # [I, A, *b] current_strategy of ``state`` (None: sparse)


@dataclasses.dataclass(frozen=True)
class Solver:
    """One member of the CFR family (hashable: it is static in compiled code).

    Attributes:
      name: preset name.
      regret: the regret rule (:mod:`jaxcfr.solvers.rules`).
      average: the averaging rule.
      estimator: the estimator (:mod:`jaxcfr.solvers.estimators`; default exact).
      alternating: update players one after another, each seeing the others' new strategy.
      compensate: keep the strategy sums as a compensated pair (``strategy_sum +
        strategy_error``, :mod:`jaxcfr.kernels.compensated`: nothing rounded away in long
        float32 runs); false: plain float sums, one table less (what postflop-solver
        does, and its preset).

    The state holds the tables the solver reads (:attr:`tables`): ``strategy_error``
    only when it compensates, ``prediction`` only under a predictive regret rule.

    The traced numbers are the parts' own (:mod:`jaxcfr.solvers.parameters`): the
    solver's :attr:`parameters` are those its regret rule, averaging rule and estimator
    declare (their values in the parts are the defaults), and the run's ``seed``.
    """
    name: str
    regret: RegretRule = RegretMatching()
    average: AveragingRule = PolynomialAverage()
    estimator: Estimator = Exact()
    alternating: bool = False
    compensate: bool = True

    def __post_init__(self):
        seen: dict[str, str] = {"seed": "the solver"}
        for part in self.parts:
            for p in declared(part):
                if p.name in seen:
                    raise ArgumentError(f"{type(part).__name__} and {seen[p.name]} both "
                                        f"declare a parameter {p.name!r}: one name, one "
                                        "meaning per solver")
                seen[p.name] = type(part).__name__
                if p.default is not None:          # None: a compiled step's key
                    p.check(p.name, p.default)
        if not self.estimator.dense:
            needs = [what for what, needed in (
                ("a regret rule applied before the new regret is added",
                 self.regret.before_adding),
                ("an average that decays", self.average.decays),
                ("an average not weighted by reach", not self.average.reach_weighted))
                if needed]
            if needs:
                raise ArgumentError(f"{self.name or 'this solver'} has {' and '.join(needs)}: "
                                    f"it needs a full-width estimator, not "
                                    f"{self.estimator.describe()}")

    @property
    def parts(self) -> tuple:
        """The regret rule, the averaging rule and the estimator."""
        return (self.regret, self.average, self.estimator)

    @property
    def part_parameters(self) -> tuple[Parameter, ...]:
        """The parts' traced parameters, their values in the parts as defaults."""
        return tuple(p for part in self.parts for p in declared(part))

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        """Every traced parameter of a run of this solver: the parts' and :data:`SEED`."""
        return self.part_parameters + (SEED,)

    def __repr__(self) -> str:
        order = "alternating" if self.alternating else "simultaneous"
        values = "".join(f", {p.name}={shown(p.default)}" for p in self.part_parameters)
        est = "" if isinstance(self.estimator, Exact) else f", {self.estimator.describe()}"
        plain = "" if self.compensate else ", plain sums"
        return f"Solver({self.name}: {self.regret.describe()}, {order}{values}{est}{plain})"

    @property
    def predictive(self) -> bool:
        """Whether the current strategy is regret matching of ``R + r_t`` (PRM+)."""
        return self.regret.predictive

    @property
    def tables(self) -> tuple[str, ...]:
        """The state's tables this solver reads and keeps (:data:`TABLES` in order): the
        regrets and strategy sums, the sums' compensation when it compensates, the
        prediction when predictive; the others are ``None`` in its states."""
        keep = {"regret": True, "strategy_sum": True, "strategy_error": self.compensate,
                "prediction": self.predictive}
        return tuple(f for f in TABLES if keep[f])

    def state_size(self, precision) -> dict[str, int]:
        """What the memory budget counts of this solver's state in ``precision`` (a name
        or a dtype), as keywords of the public-tree budget checks
        (:func:`jaxcfr.lowering.public.lower_public`,
        :func:`jaxcfr.lowering.public_stack.lower_stack`): ``state_tables``, its ``[I, A]``
        tables (postflop-dcfr 2, cfr+ 3, pcfr+ 4), and ``float_bytes``."""
        return {"state_tables": len(self.tables),
                "float_bytes": int(dtype_of(precision).itemsize)}

    def state_of(self, arrays, convert=None) -> SolverState:
        """A state of this solver from arrays by field name (a checkpoint's, a state's
        :meth:`SolverState.arrays`), each passed through ``convert`` (e.g. onto the
        device; default: as they are).

        Arrays of a run that kept other tables (checkpoints written before states held
        only the tables their solver reads kept all four): a ``prediction`` this solver
        does not read must be zero (as every non-predictive run kept it) and is dropped;
        a ``strategy_error`` it does not keep is added into ``strategy_sum`` (the exact
        sum, rounded once); a missing ``strategy_error`` is zero (a sum without its
        compensation, exactly). A missing regret, sum or prediction it reads raises
        :class:`ArgumentError`.
        """
        arrays = dict(arrays)
        extra = [f for f in TABLES if f in arrays and f not in self.tables]
        if "prediction" in extra:
            if np.any(np.asarray(arrays["prediction"])):
                raise ArgumentError(f"the state holds a nonzero prediction table, which "
                                    f"{self._owner()} does not read (not a predictive rule): "
                                    "it was written by another solver")
            del arrays["prediction"]
        if "strategy_error" in extra:
            total = np.asarray(arrays["strategy_sum"])
            arrays["strategy_sum"] = (total.astype(np.float64) + np.asarray(
                arrays.pop("strategy_error"), np.float64)).astype(total.dtype)
        if "strategy_error" in self.tables and "strategy_error" not in arrays \
                and "strategy_sum" in arrays:
            arrays["strategy_error"] = np.zeros_like(np.asarray(arrays["strategy_sum"]))
        missing = [f for f in self.tables + ("iteration",) if f not in arrays]
        if missing:
            raise ArgumentError(f"the state has no {', '.join(missing)}, which "
                                f"{self._owner()} reads")
        convert = convert or (lambda x: x)
        return SolverState(**{f: convert(arrays[f]) if f in self.tables else None
                              for f in TABLES}, iteration=convert(arrays["iteration"]))

    def static_key(self) -> "Solver":
        """This solver without its name and its parameters' values: what compiled code
        depends on."""
        return dataclasses.replace(self, name="", regret=without_values(self.regret),
                                   average=without_values(self.average),
                                   estimator=without_values(self.estimator))

    def with_defaults(self, spell=str, **values) -> "Solver":
        """This solver with its parts' parameter values replaced (checked; ``None`` keeps
        one): e.g. ``jaxcfr.dcfr().with_defaults(alpha=2)``."""
        given = check_values(self.part_parameters, values, spell, self._owner())
        for name, value in given.items():
            if isinstance(value, list):
                raise ArgumentError(f"{spell(name)}: a default is one value (a list is a "
                                    "batch of runs: give it to the run)", argument=spell(name))
        parts = [dataclasses.replace(part, **{p.name: given[p.name] for p in declared(part)
                                              if p.name in given}) for part in self.parts]
        return dataclasses.replace(self, regret=parts[0], average=parts[1], estimator=parts[2])

    def check_parameters(self, values, spell=str) -> dict:
        """A run's parameter values checked by their declarations (``None``: the default,
        dropped; a sequence: a batch, as a list); errors name them as ``spell`` renders
        them and list what this solver takes."""
        return check_values(self.parameters, values, spell, self._owner())

    def settings(self, values) -> dict:
        """Every parameter of a run by name: ``values`` (checked) over the defaults, what a
        checkpoint records of its run."""
        given = self.check_parameters(values)
        return {p.name: given.get(p.name, p.default) for p in self.parameters}

    def _owner(self) -> str:
        est = "" if isinstance(self.estimator, Exact) else f" with {self.estimator.describe()}"
        return f"{self.name or 'the solver'}{est}"

    def hyperparams(self, dtype=np.float32, **values) -> HyperParams:
        """The traced parameters of a run: ``values`` over the defaults, each a scalar or
        ``[H]`` (lists of one length: a batch of settings or seeds), on the device."""
        # (made on the host and copied: nothing compiles before the chunk)
        return make_hyperparams(self.parameters, self.check_parameters(values), dtype,
                                on_device)

    def init(self, tensors: GameTensors, batch_shape: tuple[int, ...] = (),
             dtype=np.float32) -> SolverState:
        """Zero state for one game's tensors (``[I, A]`` from ``legal_mask``)."""
        if hasattr(tensors, "tensors"):       # a LoweredGame
            tensors = tensors.tensors
        rows, actions = tensors.row_shape
        return self.zeros((rows, actions) + tuple(batch_shape), (), dtype)

    def check_state(self, state: SolverState) -> None:
        """:class:`ArgumentError` unless ``state`` holds the tables this solver reads
        (:attr:`tables`; a prediction it does not read may be there: it is carried
        through unchanged). Structural, so it costs nothing under ``jax.jit``."""
        held = set(state.tables)
        missing = [f for f in self.tables if f not in held]
        extra = [f for f in held - set(self.tables) if f != "prediction"]
        if missing or extra:
            raise ArgumentError(f"the state holds {', '.join(sorted(held))}; "
                                f"{self._owner()} keeps {', '.join(self.tables)}: make its "
                                "state with solver.init, or solver.state_of(arrays)")

    def zeros(self, shape: tuple[int, ...], iterations: tuple[int, ...] = (),
              dtype=np.float32) -> SolverState:
        """Zero state of tables ``shape`` (e.g. ``[I, A, *b]``, or ``[B, I, A, *b]`` for a
        stack) and iteration counts ``iterations`` (``()``, or ``[B]``), on the device:
        the tables this solver reads (:attr:`tables`), one buffer each."""
        return SolverState(**{f: on_device(np.zeros(shape, dtype)) if f in self.tables
                              else None for f in TABLES},
                           iteration=on_device(np.zeros(iterations, np.int32)))

    def strategy(self, tensors: GameTensors, state: SolverState,
                 lock: Lock | None = None) -> jax.Array:
        """The current strategy ``[I, A, *b]`` (what iteration ``t + 1`` plays; the lock
        at locked rows)."""
        return apply_lock(current_strategy(tensors, state, self.predictive), lock)

    def average_strategy(self, tensors: GameTensors, state: SolverState,
                         lock: Lock | None = None) -> jax.Array:
        """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached; the
        lock at locked rows)."""
        return apply_lock(average_strategy(tensors, state), lock)

    def update(self, tensors: GameTensors, structure: Structure, state: SolverState,
               hp: HyperParams, arrays=None, lock: Lock | None = None) -> SolverState:
        """One iteration of this solver: a pure function of arrays.

        ``structure`` (the level slices, the player count) is static: under ``jax.jit``
        pass it, and the solver, as static arguments (``static_argnames``), everything
        else traced. ``arrays``: what the estimator's :meth:`~Estimator.prepare` made
        (``None`` for the exact estimator); its static facts must be in
        ``self.estimator`` (the prepared estimator). A loop of iterations calls
        :meth:`step` (the same iteration, on what the loop carries).

        ``lock``: a :class:`~jaxcfr.solvers.locking.Lock` (traced: a new lock does not
        recompile; ``None``: no row locked): the locked rows play the lock at every
        iteration and their average is the lock (:mod:`jaxcfr.solvers.locking`);
        full-width estimators only.
        """
        return self.step(tensors, structure, self.start(tensors, state, lock), hp, arrays,
                         lock).state

    def start(self, tensors: GameTensors, state: SolverState,
              lock: Lock | None = None) -> Carry:
        """The :class:`Carry` of ``state``, for a loop of :meth:`step` calls (``state``
        holds this solver's tables: :meth:`check_state`)."""
        self.check_state(state)
        return Carry(state, self.strategy(tensors, state, lock) if self.estimator.dense
                     else None)

    def step(self, tensors: GameTensors, structure: Structure, carry: Carry, hp: HyperParams,
             arrays=None, lock: Lock | None = None) -> Carry:
        """One iteration, as :meth:`update`, from and to what a loop carries (``lock``:
        as :meth:`update`'s, the same at every step of the loop).

        Example::

            >>> carry = jax.lax.fori_loop(0, n, lambda i, c: solver.step(
            ...     tensors, structure, c, hp), solver.start(tensors, state))
            >>> state = carry.state
        """
        if self.estimator.dense:
            return self._dense_step(tensors, structure, carry, hp, arrays, lock)
        if lock is not None:
            raise ArgumentError(f"node locking needs a full-width estimator, not "
                                f"{self.estimator.describe()}", argument="lock")
        rows = Rows(tensors.legal_mask, tensors.infoset_player)

        def estimate(policy, player, keys, flat_hp):
            return self.estimator.estimate(tensors, structure, policy, player, keys, flat_hp,
                                           arrays)
        return Carry(self.row_update(rows, structure.num_players, carry.state, hp, estimate),
                     None)

    def _alternate_players(self, num_players: int, half_step, acc, keys,
                           unroll: bool = False):
        """Alternating: each player in turn (a traced player); else all at once.

        One compiled body in a loop over the players by default (the least to compile);
        ``unroll``: one body per player, in sequence, which XLA's CPU backend runs up to
        2.3x faster on batched tables ``[I, A, B]`` (measured on Leduc, B = 64: the loop
        carries and copies the tables), for twice the compile time.
        """
        if not self.alternating:
            return half_step(None, keys, acc)

        def body(player, acc):
            return half_step(player, None if keys is None else fold(keys, player), acc)
        if unroll:
            for player in range(num_players):
                acc = body(jnp.asarray(player, jnp.int32), acc)
            return acc
        return jax.lax.fori_loop(0, num_players, body, acc)

    def _dense_step(self, tensors, structure, carry: Carry, hp, arrays=None,
                    lock: Lock | None = None) -> Carry:
        """Whole tables: every row of the updated player gets the estimate."""
        state = carry.state
        t = state.iteration + 1
        tf = t.astype(state.regret.dtype)
        ndim = state.regret.ndim
        legal = trail(tensors.legal_mask, ndim)
        weight = self.average.weight(tf, hp)                                       # [*b]
        decay = self.average.decay(tf, hp) if self.average.decays else None        # [*b]
        unroll = ndim > 2                                         # batched tables [I, A, *b]
        # a sampling estimator's keys: one per batch member, [*b]
        keys = (iteration_keys(jnp.broadcast_to(hp.seed, state.regret.shape[2:]), t)
                if self.estimator.seeded else None)

        def half_step(player, keys, acc):
            """Update ``player``'s rows (every player's for ``None``) from one estimate."""
            regret, strategy_sum, strategy_error, prediction, current = acc
            est = self.estimator.estimate(tensors, structure, current, player, keys, hp, arrays)
            inst = jnp.where(legal, est.regret, 0)                           # [I, A, *b]
            sel = trail(rows_of(tensors, player), ndim)
            averaged = trail(est.average_rows, ndim)
            # the rows averaged get the owner's reach x strategy, or the strategy itself
            contribution = est.average if self.average.reach_weighted else current
            new_regret, total, error, new_prediction = self.fold(
                acc[:4], inst, contribution, tf, hp, weight, decay)
            tables = (jnp.where(sel, new_regret, regret),
                      jnp.where(averaged, total, strategy_sum),
                      None if error is None else jnp.where(averaged, error, strategy_error),
                      # only a predictive rule reads it (the others keep none: None)
                      jnp.where(sel, new_prediction, prediction) if self.predictive
                      else prediction)
            tables = lock_sums(tables, lock)          # the locked rows' average: the lock
            return tables + (self._rematched(tensors, current, tables, player, unroll, lock),)

        acc = self._alternate_players(structure.num_players, half_step,
                                      tuple(state[:-1]) + (carry.strategy,), keys, unroll)
        return Carry(SolverState(*acc[:-1], t), acc[-1])

    def fold(self, tables: tuple, inst: jax.Array, contribution: jax.Array, tf: jax.Array,
             hp: HyperParams, weight: jax.Array, decay: jax.Array | None) -> tuple:
        """The rules applied to an updated player's entries: ``tables`` (the state's
        ``regret``, ``strategy_sum``, ``strategy_error``, ``prediction``, each ``[R, A, *b]``
        or any layout with the batch axes ``*b`` last, e.g. a public tree's blocks
        ``[D_p, A, H_p, *b]``; ``None`` where the solver keeps no such table), the
        instantaneous regret ``inst`` and the averaging ``contribution`` (both that shape)
        of iteration ``tf``, its averaging ``weight`` and ``decay`` (``[*b]``; ``None``: no
        decay). Returns the four new tables, ``None`` where absent (elementwise: the
        entries of other players are the caller's to keep; a prediction the rule does not
        read is passed through)."""
        regret, strategy_sum, strategy_error, prediction = tables
        kept = strategy_sum if decay is None else strategy_sum * decay
        if self.compensate:
            kept_error = strategy_error if decay is None else strategy_error * decay
            total, error = compensated.add(kept, kept_error, weight * contribution)
        else:                                   # a plain float sum
            total, error = kept + weight * contribution, None
        new_regret = (self.regret(regret, tf, hp) + inst if self.regret.before_adding
                      else self.regret(regret + inst, tf, hp))
        return new_regret, total, error, inst if self.predictive else prediction

    def _rematched(self, tensors, current: jax.Array, tables, player, by_rows: bool,
                   lock: Lock | None = None) -> jax.Array:
        """The current strategy ``[I, A, *b]`` after a half-step of ``player`` changed the
        state's ``tables``.

        ``by_rows`` (with the sequence form's ``player_rows``): ``current`` with that
        player's rows matched again and written into it (a scatter of those rows), which
        the next half-step then reads, in the same program, wherever it needs the strategy;
        returned as a whole matched table inside the program, the strategy was recomputed
        inside each of those reads (the realisation weights, the leaf and row passes, the
        regret update: a quarter of a 64-game Leduc stack's iteration). Otherwise the whole
        table: in the players' loop it is the loop's carry, written anyway, and one pass
        costs less than a scatter of one game's rows.
        """
        matched = self.strategy(tensors, SolverState(*tables, None), lock)
        rows = (None if not by_rows or player is None
                else self.estimator.values.player_rows(tensors, player))
        if rows is None:                         # [R], padded with rows >= I
            return matched
        updates = matched.at[rows].get(mode="fill", fill_value=0, indices_are_sorted=True,
                                       unique_indices=True)                  # [R, A, *b]
        return current.at[rows].set(updates, mode="drop", indices_are_sorted=True,
                                    unique_indices=True)

    def row_update(self, rows: Rows, num_players: int, state: SolverState, hp: HyperParams,
                   estimate: Callable[..., RowEstimate]) -> SolverState:
        """One iteration from estimates that list the rows they touched (sparse).

        ``estimate(policy, player, keys, hp) -> RowEstimate`` (or a
        :class:`~jaxcfr.solvers.estimator_protocol.CappedEstimate`: applied chunk by
        chunk, the same tables bit for bit) reads the current strategy
        lazily from ``policy`` (only the rows it visits are regret-matched); ``keys`` are
        the half-step's PRNG keys ``[B]`` and ``hp`` the hyper-parameters per member
        ``[B]``. Only the rows it returns are written, except under a regret rule that
        changes every row (:attr:`~jaxcfr.solvers.rules.RegretRule.every_row`:
        discounting decays every row of the player every iteration).
        """
        t = state.iteration + 1
        tf = t.astype(state.regret.dtype)
        shape = state.regret.shape                                   # [I, A, *b]
        num_rows, actions = shape[:2]
        members = int(np.prod(shape[2:], dtype=int))
        flat_hp = hp.map(lambda x: jnp.broadcast_to(x, shape[2:]).reshape(-1))
        keys = iteration_keys(flat_hp.seed, t)                                   # [B]
        weight = self.average.weight(tf, flat_hp)                                # [B]
        owner = rows.owner

        def rows_of_player(player):             # [I * A * B] bool
            mine = owner >= 0 if player is None else owner == player
            return jnp.repeat(mine, actions * members)

        def half_step(player, keys, acc):
            # the estimate is applied chunk by chunk (over_chunks: one chunk unless it is a
            # CappedEstimate that overflowed), phase by phase, so that chunks add what one
            # scatter of all their slots would, in the same order, bit for bit: sums first,
            # then what reads them (the regret rule, the compensated renormalisation)
            regret, strategy_sum, strategy_error, prediction = acc   # [I * A * B] each
            # (strategy_error: None unless compensated; prediction: None unless predictive)
            policy = LazyStrategy(regret, prediction, rows.legal, members, self.predictive)
            est = estimate(policy, player, keys, flat_hp)
            if self.predictive:                 # the row's most recent sampled regret
                prediction = over_chunks(est, lambda e, p: policy.set_rows(
                    p, e.regret_row, e.member, jnp.zeros_like(e.regret)), prediction)

            # the sums' increments go into the compensation (renormalised below), or
            # straight into the sums when not compensated
            into = strategy_error if self.compensate else strategy_sum

            def add(e, tables):
                new, into, prediction = tables
                new = policy.add_rows(new, e.regret_row, e.member, e.regret)
                into = policy.add_rows(into, e.average_row, e.member,
                                       weight[e.member][:, None] * e.average)
                if self.predictive:
                    prediction = policy.add_rows(prediction, e.regret_row, e.member, e.regret)
                return new, into, prediction
            new, into, prediction = over_chunks(est, add, (regret, into, prediction))
            if self.compensate:
                strategy_error = into
            else:
                strategy_sum = into
            if self.regret.every_row:           # dense: every row of the player changes
                applied = self.regret(new.reshape(-1, members), tf, flat_hp).reshape(-1)
                new = jnp.where(rows_of_player(player), applied, new)
            elif type(self.regret).__call__ is not RegretRule.__call__:   # not the identity
                def rule(e, tables):            # once a row: a later chunk skips it
                    table, ruled = tables
                    at = e.regret_row * members + e.member
                    slot_hp = flat_hp.map(lambda x: x[e.member][:, None])
                    row = jnp.where(ruled[at], num_rows, e.regret_row)          # dropped
                    table = policy.set_rows(table, row, e.member, self.regret(
                        policy.take_rows(table, e.regret_row, e.member), tf, slot_hp))
                    return table, ruled.at[at].set(True)
                new, _ = over_chunks(est, rule, (new, jnp.zeros(num_rows * members, bool)))
            if self.compensate:
                strategy_sum, strategy_error = over_chunks(
                    est, lambda e, pair: policy.renormalise_rows(*pair, e.average_row,
                                                                 e.member),
                    (strategy_sum, strategy_error))
            return new, strategy_sum, strategy_error, prediction

        flat = state.map_tables(lambda x: x.reshape(-1))
        acc = self._alternate_players(num_players, half_step, tuple(flat[:-1]), keys)
        return SolverState(*acc, t).map_tables(lambda x: x.reshape(shape))


def current_strategy(tensors: GameTensors, state: SolverState, predictive: bool) -> jax.Array:
    """Regret matching on the regrets (plus the prediction when ``predictive``): ``[I, A, *b]``."""
    regret = state.regret + state.prediction if predictive else state.regret
    return passes.regret_matching(regret, tensors.legal_mask)


def average_strategy(tensors: GameTensors, state: SolverState) -> jax.Array:
    """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
    return normalise(state.strategy_sum, tensors.legal_mask)


@dataclasses.dataclass(frozen=True)
class StateProfile:
    """Which profile of a state: the average (:func:`average_strategy`) or the current
    (:func:`current_strategy`, with the prediction when ``predictive``). A static argument
    of the programs that make the profile inside them (a Runner's profile and its
    evaluation, :func:`jaxcfr.solvers.analytics.evaluate`'s ``profile``); called on a
    state of one game: ``[I, A, *b]``."""
    predictive: bool = False
    average: bool = True

    def __call__(self, tensors: GameTensors, state: "SolverState") -> jax.Array:
        return (average_strategy(tensors, state) if self.average
                else current_strategy(tensors, state, self.predictive))
