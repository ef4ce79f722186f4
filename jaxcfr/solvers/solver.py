"""The CFR family as one configured core: ``(init, update)`` pairs of pure functions.

An update is three parts: an *estimator* (:mod:`jaxcfr.solvers.estimators`: exact
full-width passes, or a sampling scheme) that yields instantaneous regrets and averaging
contributions, a *regret rule* and an *averaging rule* (:mod:`jaxcfr.solvers.rules`). A
:class:`Solver` holds the three parts and the update order (alternating or
simultaneous); the numbers that vary between runs live in :class:`HyperParams` and are
traced, so one compiled step serves every setting and a batch of settings (or seeds) at
once. The presets (CFR, CFR+, LCFR, DCFR, PCFR+, DCFR+, PDCFR+) pair the parts:
:mod:`jaxcfr.solvers.presets`.

Per iteration ``t`` (1-based), with instantaneous regret ``r_t`` and averaging
contribution ``s_t`` (the owner's reach times the strategy, or its estimate)::

    R_t = regret_rule(R_{t-1} + r_t, t)
    S_t = S_{t-1} + weight(t) s_t          (compensated: kernels.compensated)
    sigma_{t+1} = RM(R_t [+ r_t if predictive])

The strategy sums are kept as a compensated pair (``strategy_sum + strategy_error``):
late increments are a small fraction of the sum, and plain float32 addition rounds them
away (biased, iteration after iteration), so long float32 runs got worse.

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
from jaxcfr._util.arguments import ArgumentError, finite_float
from jaxcfr._util.host_arrays import on_device
from jaxcfr.kernels import compensated, passes
from jaxcfr.kernels.keys import fold, iteration_keys
from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.solvers.estimators import Estimator, Exact, Policy, RowEstimate, rows_of
from jaxcfr.solvers.rules import AveragingRule, PolynomialAverage, RegretMatching, RegretRule
from jaxcfr.tensors import GameTensors, Structure

__all__ = ["Solver", "SolverState", "Carry", "HyperParams", "Rows", "HYPERPARAMETERS",
           "RUN_PARAMETERS", "DEFAULT_EXPLORATION", "check_run_parameters",
           "current_strategy", "average_strategy"]

#: The traced hyper-parameters a preset's defaults can be overridden with.
HYPERPARAMETERS = ("alpha", "beta", "gamma")
#: Every traced per-run number (:class:`HyperParams`); a sequence makes a batch.
RUN_PARAMETERS = HYPERPARAMETERS + ("exploration", "seed")
#: Outcome sampling's exploration (epsilon) by default, as in Lanctot et al. 2009 and OpenSpiel.
DEFAULT_EXPLORATION = 0.6


class HyperParams(NamedTuple):
    """Traced per-run numbers; scalars, or ``[*b]`` for a batch of settings (or seeds)."""
    alpha: jax.Array        # positive-regret discount exponent
    beta: jax.Array         # negative-regret discount exponent
    gamma: jax.Array        # averaging exponent: iteration t weighs t^gamma
    exploration: jax.Array  # outcome sampling's epsilon (other estimators ignore it)
    seed: jax.Array         # int32 PRNG seed (the exact estimator ignores it)


def check_run_parameters(values: dict, spell=str) -> dict:
    """A run's traced numbers checked by their rules (the one place every entry point's
    go through: ``jaxcfr.solve``, :class:`jaxcfr.Runner`, configs, the command line).

    ``values`` maps names of :data:`RUN_PARAMETERS` to a number or a sequence of them (a
    batch); ``None`` means the preset's default and is dropped. Returns the values (a
    sequence as a list). Errors name each argument as ``spell`` renders it; a list of
    seeds is checked as ``spell("seeds")`` (here seeds may repeat: a batch crosses
    settings with seeds).
    """
    unknown = sorted(set(values) - set(RUN_PARAMETERS))
    if unknown:
        raise ArgumentError(f"unknown run parameter(s) {', '.join(map(spell, unknown))}; "
                            f"known: {', '.join(map(spell, RUN_PARAMETERS))}",
                            argument=spell(unknown[0]))
    rules = {**{k: finite_float for k in HYPERPARAMETERS}, "exploration": arguments.exploration,
             "seed": arguments.seed}
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        batch = np.ndim(value) > 0 and not isinstance(value, str)
        spelled = spell("seeds" if name == "seed" and batch else name)
        items = [rules[name](spelled, x) for x in (np.ravel(value) if batch else [value])]
        if batch and not items:
            raise ArgumentError(f"{spelled} must not be an empty list", argument=spelled)
        out[name] = items if batch else items[0]
    return out


class Rows(NamedTuple):
    """What :meth:`Solver.row_update` needs to know about the table's rows."""
    legal: jax.Array   # [I, A] bool legal actions
    owner: jax.Array   # [I] int32 the row's player (NO_PLAYER for sink / unused rows)


class SolverState(NamedTuple):
    """Solver state; ``*b`` are trailing batch axes (hyper-parameters, seeds)."""
    regret: jax.Array          # [I, A, *b] accumulated (discounted, floored) regret
    strategy_sum: jax.Array    # [I, A, *b] sum of weight(t) x own-reach-weighted strategies
                               #            (only each row's proportions matter)
    strategy_error: jax.Array  # [I, A, *b] its compensation: the exact sum is
                               #            strategy_sum + strategy_error (kernels.compensated)
    prediction: jax.Array      # [I, A, *b] last instantaneous regret (predictive rules;
                               #            0 under the others)
    iteration: jax.Array       # [] int32  iterations done

    def map_tables(self, fn, iteration=None) -> "SolverState":
        """``fn`` applied to every ``[I, A, *b]`` table (the iteration kept, or replaced)."""
        return SolverState(*(fn(x) for x in self[:-1]),
                           self.iteration if iteration is None else iteration)


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
      alpha, beta, gamma: default hyper-parameters.
    """
    name: str
    regret: RegretRule = RegretMatching()
    average: AveragingRule = PolynomialAverage()
    estimator: Estimator = Exact()
    alternating: bool = False
    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 0.0

    def __repr__(self) -> str:
        order = "alternating" if self.alternating else "simultaneous"
        hp = f"alpha={self.alpha:g}, beta={self.beta:g}, gamma={self.gamma:g}"
        est = "" if isinstance(self.estimator, Exact) else f", {self.estimator.describe()}"
        return f"Solver({self.name}: {self.regret.describe()}, {order}, {hp}{est})"

    @property
    def predictive(self) -> bool:
        """Whether the current strategy is regret matching of ``R + r_t`` (PRM+)."""
        return self.regret.predictive

    def static_key(self) -> "Solver":
        """This solver without its name and default numbers: what compiled code depends on."""
        return dataclasses.replace(self, name="", alpha=0.0, beta=0.0, gamma=0.0)

    def hyperparams(self, alpha=None, beta=None, gamma=None, exploration=None, seed=None,
                    dtype=np.float32) -> HyperParams:
        """Hyper-parameters (defaults from the preset); sequences give a batch of settings."""
        # (made on the host and copied: nothing compiles before the chunk)
        pick = lambda v, d: on_device(np.asarray(d if v is None else v, dtype))  # noqa: E731
        return HyperParams(pick(alpha, self.alpha), pick(beta, self.beta),
                           pick(gamma, self.gamma), pick(exploration, DEFAULT_EXPLORATION),
                           on_device(np.asarray(0 if seed is None else seed, np.int32)))

    def init(self, tensors: GameTensors, batch_shape: tuple[int, ...] = (),
             dtype=np.float32) -> SolverState:
        """Zero state for one game's tensors (``[I, A]`` from ``legal_mask``)."""
        if hasattr(tensors, "tensors"):       # a LoweredGame
            tensors = tensors.tensors
        rows, actions = tensors.legal_mask.shape[-2:]
        shape = (rows, actions) + tuple(batch_shape)
        return SolverState(*(on_device(np.zeros(shape, dtype)) for _ in SolverState._fields[:-1]),
                           on_device(np.zeros((), np.int32)))

    def strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """The current strategy ``[I, A, *b]`` (what iteration ``t + 1`` plays)."""
        return current_strategy(tensors, state, self.predictive)

    def average_strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
        return average_strategy(tensors, state)

    def update(self, tensors: GameTensors, structure: Structure, state: SolverState,
               hp: HyperParams, arrays=None) -> SolverState:
        """One iteration of this solver: a pure function of arrays.

        ``structure`` (the level slices, the player count) is static: under ``jax.jit``
        pass it, and the solver, as static arguments (``static_argnames``), everything
        else traced. ``arrays``: what the estimator's :meth:`~Estimator.prepare` made
        (``None`` for the exact estimator); its static facts must be in
        ``self.estimator`` (the prepared estimator). A loop of iterations calls
        :meth:`step` (the same iteration, on what the loop carries).
        """
        return self.step(tensors, structure, self.start(tensors, state), hp, arrays).state

    def start(self, tensors: GameTensors, state: SolverState) -> Carry:
        """The :class:`Carry` of ``state``, for a loop of :meth:`step` calls."""
        return Carry(state, self.strategy(tensors, state) if self.estimator.dense else None)

    def step(self, tensors: GameTensors, structure: Structure, carry: Carry, hp: HyperParams,
             arrays=None) -> Carry:
        """One iteration, as :meth:`update`, from and to what a loop carries.

        Example::

            >>> carry = jax.lax.fori_loop(0, n, lambda i, c: solver.step(
            ...     tensors, structure, c, hp), solver.start(tensors, state))
            >>> state = carry.state
        """
        if self.estimator.dense:
            return self._dense_step(tensors, structure, carry, hp, arrays)
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

    def _dense_step(self, tensors, structure, carry: Carry, hp, arrays=None) -> Carry:
        """Whole tables: every row of the updated player gets the estimate."""
        state = carry.state
        t = state.iteration + 1
        tf = t.astype(state.regret.dtype)
        ndim = state.regret.ndim
        legal = trail(tensors.legal_mask, ndim)
        weight = self.average.weight(tf, hp)                                       # [*b]
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
            total, error = compensated.add(strategy_sum, strategy_error, weight * est.average)
            tables = (jnp.where(sel, self.regret(regret + inst, tf, hp), regret),
                      jnp.where(averaged, total, strategy_sum),
                      jnp.where(averaged, error, strategy_error),
                      # only a predictive rule reads it: others keep it at 0 (one table
                      # write less per half-step)
                      jnp.where(sel, inst, prediction) if self.predictive else prediction)
            return tables + (self._rematched(tensors, current, tables, player, unroll),)

        acc = self._alternate_players(structure.num_players, half_step,
                                      tuple(state[:-1]) + (carry.strategy,), keys, unroll)
        return Carry(SolverState(*acc[:-1], t), acc[-1])

    def _rematched(self, tensors, current: jax.Array, tables, player, by_rows: bool
                   ) -> jax.Array:
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
        matched = self.strategy(tensors, SolverState(*tables, None))
        seq = getattr(tensors, "sequence", None)
        if not by_rows or player is None or seq is None:
            return matched
        rows = seq.player_rows[player]                       # [R], padded with rows >= I
        updates = matched.at[rows].get(mode="fill", fill_value=0, indices_are_sorted=True,
                                       unique_indices=True)                  # [R, A, *b]
        return current.at[rows].set(updates, mode="drop", indices_are_sorted=True,
                                    unique_indices=True)

    def row_update(self, rows: Rows, num_players: int, state: SolverState, hp: HyperParams,
                   estimate: Callable[..., RowEstimate]) -> SolverState:
        """One iteration from estimates that list the rows they touched (sparse).

        ``estimate(policy, player, keys, hp) -> RowEstimate`` reads the current strategy
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
        flat_hp = HyperParams(*(jnp.broadcast_to(x, shape[2:]).reshape(-1) for x in hp))
        keys = iteration_keys(flat_hp.seed, t)                                   # [B]
        weight = self.average.weight(tf, flat_hp)                                # [B]
        owner = rows.owner

        def rows_of_player(player):             # [I * A * B] bool
            mine = owner >= 0 if player is None else owner == player
            return jnp.repeat(mine, actions * members)

        def half_step(player, keys, acc):
            regret, strategy_sum, strategy_error, prediction = acc   # [I * A * B] each
            policy = Policy(regret, prediction, rows.legal, members, self.predictive)
            est = estimate(policy, player, keys, flat_hp)
            row, member = est.regret_row, est.member
            new = policy.add_rows(regret, row, member, est.regret)
            if self.regret.every_row:           # dense: every row of the player changes
                applied = self.regret(new.reshape(-1, members), tf, flat_hp).reshape(-1)
                new = jnp.where(rows_of_player(player), applied, new)
            elif type(self.regret).__call__ is not RegretRule.__call__:   # not the identity
                slot_hp = HyperParams(*(x[member][:, None] for x in flat_hp))
                new = policy.set_rows(new, row, member, self.regret(
                    policy.take_rows(new, row, member), tf, slot_hp))
            if self.predictive:                 # the row's most recent sampled regret
                prediction = policy.add_rows(policy.set_rows(
                    prediction, row, member, jnp.zeros_like(est.regret)), row, member, est.regret)
            strategy_sum, strategy_error = policy.add_rows_compensated(
                strategy_sum, strategy_error, est.average_row, member,
                weight[member][:, None] * est.average)
            return new, strategy_sum, strategy_error, prediction

        acc = self._alternate_players(num_players, half_step,
                                      tuple(x.reshape(-1) for x in state[:-1]), keys)
        return SolverState(*(x.reshape(shape) for x in acc), t)


def current_strategy(tensors: GameTensors, state: SolverState, predictive: bool) -> jax.Array:
    """Regret matching on the regrets (plus the prediction when ``predictive``): ``[I, A, *b]``."""
    regret = state.regret + state.prediction if predictive else state.regret
    return passes.regret_matching(regret, tensors.legal_mask)


def average_strategy(tensors: GameTensors, state: SolverState) -> jax.Array:
    """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
    return normalise(state.strategy_sum, tensors.legal_mask)
