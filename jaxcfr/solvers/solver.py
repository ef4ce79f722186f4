"""The CFR family as one configured core: ``(init, update)`` pairs of pure functions.

An update is three parts: an *estimator* (:mod:`jaxcfr.solvers.estimators`: exact
full-width passes, or a sampling scheme) that yields instantaneous regrets and
averaging contributions, a *regret rule* and an *averaging rule*. A
:class:`Solver` fixes the *structure* of the rules (regret floor, discounting,
prediction, alternating or simultaneous updates) and the estimator; the numbers that
vary between runs live in :class:`HyperParams` and are traced, so one compiled step
serves every setting and a batch of settings (or seeds) at once.

Per iteration ``t`` (1-based), with instantaneous regret ``r_t`` and averaging
contribution ``s_t`` (the owner's reach times the strategy, or its estimate)::

    S_t = S_{t-1} * ((t - 1) / t)^gamma + s_t     average weight of iteration t ~ t^gamma
    R_t = floor(discount_t(R_{t-1} + r_t))       discount: x * t^a / (t^a + 1), a = alpha
                                                  for x > 0 and beta for x < 0 (if enabled);
                                                  floor: max(., 0) under RM+
    sigma_{t+1} = RM(R_t [+ r_t if predictive])

With alternating updates the players take turns inside an iteration, each seeing
the strategies the others just updated; simultaneous updates value every player
against the same strategy.

The presets and their papers:

=========  ============  ============  ==========================  ==============
preset     update order  regret rule   averaging weight of iter t  constants
=========  ============  ============  ==========================  ==============
``cfr``    simultaneous  RM            1 (uniform)                 -
``cfr+``   alternating   RM+           t                           -
``lcfr``   alternating   RM, t-weight  t                           alpha=beta=gamma=1
``dcfr``   alternating   discounted    t^gamma                     1.5, 0, 2
``pcfr+``  alternating   PRM+          t^2                         gamma=2
``dcfr+``  alternating   discounted+   t^gamma                     alpha 1.5, gamma 4
``pdcfr+`` alternating   predictive    t^gamma                     alpha 2.3, gamma 5
=========  ============  ============  ==========================  ==============

References: Zinkevich et al. 2007 (CFR); Tammelin 2014 and Tammelin et al. 2015
(CFR+); Brown & Sandholm 2019 (LCFR, DCFR: alternating updates in all their
experiments); Farina, Kroer & Sandholm 2021 (PCFR+); Xu et al. 2024 (DCFR+, PDCFR+).

Example::

    >>> import jaxcfr
    >>> solver = jaxcfr.cfr_plus()
    >>> lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    >>> state = solver.init(lowered)
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxcfr.solvers import estimators
from jaxcfr.kernels import passes
from jaxcfr.kernels.numerics import normalise, trail
from jaxcfr.tensors import GameTensors, Structure

__all__ = ["Solver", "SolverState", "HyperParams", "cfr", "cfr_plus", "linear_cfr", "dcfr",
           "pcfr_plus", "dcfr_plus", "pdcfr_plus", "ALGORITHMS", "ALIASES", "HYPERPARAMETERS",
           "SAMPLING", "DEFAULT_EXPLORATION", "make_solver", "resolve_algorithm",
           "current_strategy", "average_strategy", "iteration_keys", "Rows"]

#: The traced hyper-parameters a preset's defaults can be overridden with.
HYPERPARAMETERS = ("alpha", "beta", "gamma")
#: Estimators by name (``none``: exact full-width passes; see :mod:`jaxcfr.solvers.estimators`).
SAMPLING = ("none", "chance", "external", "outcome")
#: Outcome sampling's exploration (epsilon) by default, as in Lanctot et al. 2009 and OpenSpiel.
DEFAULT_EXPLORATION = 0.6
#: Iterations per unit of averaging weight under sampling estimators (a power of two).
AVERAGE_SCALE = 2.0 ** 20


class HyperParams(NamedTuple):
    """Traced per-run numbers; scalars, or ``[*b]`` for a batch of settings (or seeds)."""
    alpha: jax.Array        # positive-regret discount exponent
    beta: jax.Array         # negative-regret discount exponent
    gamma: jax.Array        # averaging exponent: iteration t weighs t^gamma
    exploration: jax.Array  # outcome sampling's epsilon (other estimators ignore it)
    seed: jax.Array         # int32 PRNG seed (the exact estimator ignores it)


class Rows(NamedTuple):
    """What :meth:`Solver.row_update` needs to know about the table's rows."""
    legal: jax.Array   # [I, A] bool legal actions
    kept: jax.Array    # [I, A] bool actions kept by the abstraction
    owner: jax.Array   # [I] int32 the row's player (NO_PLAYER for sink / unused rows)


class SolverState(NamedTuple):
    """Solver state; ``*b`` are trailing batch axes (hyper-parameters, seeds)."""
    regret: jax.Array          # [I, A, *b] accumulated (discounted, floored) regret
    strategy_sum: jax.Array    # [I, A, *b] weighted sum of own-reach-weighted strategies (up
                               #            to a scale under sampling: only its rows'
                               #            proportions matter)
    prediction: jax.Array      # [I, A, *b] last instantaneous regret (predictive variants)
    iteration: jax.Array       # [] int32  iterations done


def iteration_keys(seed: jax.Array, iteration: jax.Array) -> jax.Array:
    """The PRNG keys of iteration ``iteration`` (1-based): ``fold_in(key(seed), t)``, ``[*b]``.

    Derived from the seed and the iteration alone (never carried in the state), so a
    run is reproducible from its seed, independent of the chunk length, and resumes
    bit for bit.
    """
    seed = jnp.asarray(seed)
    flat = seed.reshape(-1)
    keys = jax.vmap(lambda s: jax.random.fold_in(jax.random.key(s), iteration))(flat)
    return keys.reshape(seed.shape)


@dataclasses.dataclass(frozen=True)
class Solver:
    """One member of the CFR family (hashable: it is static in compiled code).

    Attributes:
      name: preset name.
      regret_floor: clip accumulated regret at 0 (RM+).
      discount: discount accumulated regret by alpha / beta.
      predictive: play RM(R + last instantaneous regret).
      alternating: update players one after another, each seeing the others' new strategy.
      sampling: the estimator (``"none"``: exact; see :data:`SAMPLING`).
      samples: subtrees a sampling estimator draws per traverser and iteration (averaged:
        less variance for more work per iteration).
      alpha, beta, gamma: default hyper-parameters.
    """
    name: str
    regret_floor: bool = False
    discount: bool = False
    predictive: bool = False
    alternating: bool = False
    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 0.0
    sampling: str = "none"
    samples: int = 1

    def __repr__(self) -> str:
        order = "alternating" if self.alternating else "simultaneous"
        hp = f"alpha={self.alpha:g}, beta={self.beta:g}, gamma={self.gamma:g}"
        sampling = "" if self.sampling == "none" else f", sampling={self.sampling}" + (
            f" x{self.samples}" if self.samples > 1 else "")
        return f"Solver({self.name}: {order}, {hp}{sampling})"

    def static_key(self) -> "Solver":
        """This solver without its name and default numbers: what compiled code depends on."""
        return dataclasses.replace(self, name="", alpha=0.0, beta=0.0, gamma=0.0)

    def hyperparams(self, alpha=None, beta=None, gamma=None, exploration=None, seed=None,
                    dtype=np.float32) -> HyperParams:
        """Hyper-parameters (defaults from the preset); sequences give a batch of settings."""
        pick = lambda v, d: jnp.asarray(d if v is None else v, dtype=dtype)  # noqa: E731
        return HyperParams(pick(alpha, self.alpha), pick(beta, self.beta),
                           pick(gamma, self.gamma), pick(exploration, DEFAULT_EXPLORATION),
                           jnp.asarray(0 if seed is None else seed, dtype=jnp.int32))

    def init(self, tensors: GameTensors, batch_shape: tuple[int, ...] = (),
             dtype=np.float32) -> SolverState:
        """Zero state for one game's tensors (``[I, A]`` from ``legal_mask``)."""
        if hasattr(tensors, "tensors"):       # a LoweredGame
            tensors = tensors.tensors
        rows, actions = tensors.legal_mask.shape[-2:]
        shape = (rows, actions) + tuple(batch_shape)
        return SolverState(jnp.zeros(shape, dtype), jnp.zeros(shape, dtype),
                           jnp.zeros(shape, dtype), jnp.zeros((), jnp.int32))

    def strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """The current strategy ``[I, A, *b]`` (what iteration ``t + 1`` plays)."""
        return current_strategy(tensors, state, self.predictive)

    def update(self, tensors: GameTensors, structure: Structure, state: SolverState,
               hp: HyperParams, tables=None, plan=None) -> SolverState:
        """One iteration of this solver. Pure; jit and vmap it freely.

        ``tables`` / ``plan``: a sampling estimator's child tables (traced) and static
        capacities (:func:`jaxcfr.kernels.subtree.child_tables`, :func:`~jaxcfr.kernels.subtree.make_plan`).
        """
        if self.sampling == "none":
            return self._exact_update(tensors, structure, state, hp)
        return self._sampled_update(tensors, structure, state, hp, tables, plan)

    def _discount(self, regret, hp: HyperParams, tf, tile=None):
        """The regret rule after adding this iteration's regret: discount, then floor.

        ``tile``: the tables are flat ``[I * A * B]``; the ``[*b]`` factors repeat this often.
        """
        if self.discount:
            pos = 1 / (1 + jnp.power(tf, -hp.alpha))
            neg = 1 / (1 + jnp.power(tf, -hp.beta))
            if tile is not None:
                pos, neg = (jnp.tile(jnp.broadcast_to(x, tile[1]).reshape(-1), tile[0])
                            for x in (pos, neg))
            regret = regret * jnp.where(regret > 0, pos, neg)
        if self.regret_floor:
            regret = jnp.maximum(regret, 0)
        return regret

    def _alternate_players(self, num_players: int, half_step, acc, keys):
        """Alternating: each player in turn (one compiled body, traced player); else all."""
        if not self.alternating:
            return half_step(None, keys, acc)

        def body(player, acc):
            return half_step(player, None if keys is None else _fold(keys, player), acc)
        return jax.lax.fori_loop(0, num_players, body, acc)

    def _exact_update(self, tensors, structure, state, hp) -> SolverState:
        """Dense tables: every row of the updated player gets the exact estimate."""
        t = state.iteration + 1
        tf = t.astype(state.regret.dtype)
        ndim = state.regret.ndim
        m = trail(tensors.legal_mask & tensors.abstraction_mask, ndim)
        avg_decay = jnp.power((tf - 1) / tf, hp.gamma)

        def half_step(player, key, acc):
            """Update ``player``'s rows (every player's for ``None``) from one estimate."""
            regret, strategy_sum, prediction = acc
            current = self.strategy(tensors, SolverState(regret, strategy_sum, prediction,
                                                         state.iteration))
            est = estimators.exact(tensors, structure, current, player)
            inst = jnp.where(m, est.regret, 0)                               # [I, A, *b]
            new_regret = self._discount(regret + inst, hp, tf)
            sel = trail(estimators.rows_of(tensors, player), ndim)
            new_sum = strategy_sum * avg_decay + est.average
            return (jnp.where(sel, new_regret, regret),
                    jnp.where(trail(est.average_rows, ndim), new_sum, strategy_sum),
                    jnp.where(sel, inst, prediction))

        acc = self._alternate_players(structure.num_players, half_step,
                                      (state.regret, state.strategy_sum, state.prediction),
                                      None)
        return SolverState(*acc, t)

    def _sampled_update(self, tensors, structure, state, hp, tables, plan) -> SolverState:
        """A Monte Carlo estimator's iteration: :meth:`row_update` of its estimates."""
        eps = jnp.broadcast_to(hp.exploration, state.regret.shape[2:]).reshape(-1)

        def estimate(policy, player, keys):
            return estimators.sampled(tensors, structure, policy, player, keys, eps, tables,
                                      plan)
        rows = Rows(tensors.legal_mask, tensors.abstraction_mask, tensors.infoset_player)
        return self.row_update(rows, structure.num_players, state, hp, estimate)

    def row_update(self, rows: "Rows", num_players: int, state: SolverState, hp: HyperParams,
                   estimate) -> SolverState:
        """One iteration from estimates that list the rows they touched (sparse).

        ``estimate(policy, player, keys) -> RowEstimate`` (:mod:`jaxcfr.solvers.estimators`) reads
        the current strategy lazily from ``policy`` (only the rows it visits are
        regret-matched); ``keys`` are the half-step's PRNG keys ``[B]``. Only the rows it
        returns are written; nothing is ``O(I * A)`` per iteration except the regret
        discount of the discounting presets (every row of the player decays every
        iteration).

        The averaging rule adds iteration ``t``'s contributions with weight
        ``(t / AVERAGE_SCALE)^gamma`` instead of decaying every row by
        ``((t - 1) / t)^gamma``: the same average (each row is normalised), without
        touching untouched rows. In float32 the weights neither overflow (sums stay
        finite past 10^9 iterations for gamma <= 5) nor matter where they underflow
        (only the first iterations' weights, for gamma > 6, which the average would
        give less than 2^-126 of its weight anyway).
        """
        t = state.iteration + 1
        dtype = state.regret.dtype
        tf = t.astype(dtype)
        shape = state.regret.shape                                   # [I, A, *b]
        num_rows, actions = shape[:2]
        members = int(np.prod(shape[2:], dtype=int))
        keys = iteration_keys(jnp.broadcast_to(hp.seed, shape[2:]), t).reshape(-1)
        # iteration t weighs t^gamma, measured in units of AVERAGE_SCALE iterations so
        # that neither early weights underflow nor late sums overflow (see above)
        weight = jnp.broadcast_to(jnp.power(tf / AVERAGE_SCALE, hp.gamma),
                                  shape[2:]).reshape(-1)                     # [B]
        owner = rows.owner

        def rows_of(player):                    # [I * A * B] bool
            mine = owner >= 0 if player is None else owner == player
            return jnp.repeat(mine, actions * members)

        def half_step(player, key, acc):
            regret, strategy_sum, prediction = acc                   # [I * A * B] each
            policy = estimators.Policy(regret, prediction, rows.legal, rows.kept, members,
                                       self.predictive)
            est = estimate(policy, player, key)
            at = policy.index(est.regret_row, est.member)
            new = regret.at[at].add(est.regret)
            if self.discount:                   # dense: every row of the player decays
                new = jnp.where(rows_of(player),
                                self._discount(new, hp, tf, (num_rows * actions, shape[2:])),
                                new)
            elif self.regret_floor:
                new = new.at[at].set(jnp.maximum(new[at], 0))
            if self.predictive:                 # the row's most recent sampled regret
                prediction = prediction.at[at].set(0).at[at].add(est.regret)
            avg = policy.index(est.average_row, est.member)
            strategy_sum = strategy_sum.at[avg].add(weight[est.member][:, None] * est.average)
            return new, strategy_sum, prediction

        acc = self._alternate_players(num_players, half_step, (
            state.regret.reshape(-1), state.strategy_sum.reshape(-1),
            state.prediction.reshape(-1)), keys)
        return SolverState(*(x.reshape(shape) for x in acc), t)

    def average_strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
        return average_strategy(tensors, state)


def _fold(keys: jax.Array, data) -> jax.Array:
    """``fold_in(key, data)`` for every key of a ``[*b]`` key array."""
    flat = keys.reshape(-1)
    return jax.vmap(lambda k: jax.random.fold_in(k, data))(flat).reshape(keys.shape)


def current_strategy(tensors: GameTensors, state: SolverState, predictive: bool) -> jax.Array:
    """Regret matching on the regrets (plus the prediction when ``predictive``): ``[I, A, *b]``."""
    regret = state.regret + state.prediction if predictive else state.regret
    return passes.regret_matching(regret, tensors.legal_mask & tensors.abstraction_mask)


def average_strategy(tensors: GameTensors, state: SolverState) -> jax.Array:
    """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
    return normalise(state.strategy_sum, tensors.legal_mask & tensors.abstraction_mask)


# -- presets -------------------------------------------------------------------------
def cfr(alternating: bool = False) -> Solver:
    """Vanilla CFR (Zinkevich et al. 2007): regret matching, uniform averaging, simultaneous."""
    return Solver("cfr", alternating=alternating, gamma=0.0)


def cfr_plus(alternating: bool = True) -> Solver:
    """CFR+ (Tammelin 2014): RM+, alternating updates, linear averaging."""
    return Solver("cfr+", regret_floor=True, alternating=alternating, gamma=1.0)


def linear_cfr(alternating: bool = True) -> Solver:
    """Linear CFR (Brown & Sandholm 2019): iteration t weighs t in regrets and average."""
    return Solver("lcfr", discount=True, alternating=alternating, alpha=1.0, beta=1.0, gamma=1.0)


def dcfr(alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
         alternating: bool = True) -> Solver:
    """Discounted CFR (Brown & Sandholm 2019), defaults alpha 1.5, beta 0, gamma 2."""
    return Solver("dcfr", discount=True, alternating=alternating, alpha=alpha, beta=beta,
                  gamma=gamma)


def pcfr_plus(gamma: float = 2.0, alternating: bool = True) -> Solver:
    """Predictive CFR+ (Farina, Kroer & Sandholm 2021): predictive RM+, quadratic averaging."""
    return Solver("pcfr+", regret_floor=True, predictive=True, alternating=alternating,
                  gamma=gamma)


def dcfr_plus(alpha: float = 1.5, gamma: float = 4.0, alternating: bool = True) -> Solver:
    """DCFR+ (Xu et al. 2024): RM+ with positive regrets discounted by alpha."""
    return Solver("dcfr+", regret_floor=True, discount=True, alternating=alternating,
                  alpha=alpha, beta=0.0, gamma=gamma)


def pdcfr_plus(alpha: float = 2.3, gamma: float = 5.0, alternating: bool = True) -> Solver:
    """PDCFR+ (Xu et al. 2024): predictive DCFR+."""
    return Solver("pdcfr+", regret_floor=True, discount=True, predictive=True,
                  alternating=alternating, alpha=alpha, beta=0.0, gamma=gamma)


#: Preset name -> constructor: the one list of algorithm names (CLI, configs, API).
ALGORITHMS = {"cfr": cfr, "cfr+": cfr_plus, "lcfr": linear_cfr, "dcfr": dcfr,
              "pcfr+": pcfr_plus, "dcfr+": dcfr_plus, "pdcfr+": pdcfr_plus}
#: Other spellings accepted for a preset name.
ALIASES = {"cfr_plus": "cfr+", "cfrplus": "cfr+", "linear_cfr": "lcfr", "pcfr_plus": "pcfr+",
           "pcfrplus": "pcfr+", "dcfr_plus": "dcfr+", "pdcfr_plus": "pdcfr+"}


def resolve_algorithm(name: str) -> str:
    """The preset name of ``name`` (case-insensitive; aliases accepted); ValueError if unknown."""
    if not isinstance(name, str):
        raise ValueError(f"algorithm must be a name, got {name!r}")
    key = ALIASES.get(name.lower(), name.lower())
    if key not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of {', '.join(ALGORITHMS)}")
    return key


def resolve_sampling(name: str) -> str:
    """``name`` if it is a known estimator (:data:`SAMPLING`), else ValueError."""
    if name not in SAMPLING:
        raise ValueError(f"unknown sampling {name!r}; choose one of {', '.join(SAMPLING)}")
    return name


def make_solver(name: str, *, alternating: bool | None = None, sampling: str | None = None,
                samples: int | None = None, **defaults) -> Solver:
    """A preset by name (:data:`ALGORITHMS`, :data:`ALIASES`).

    ``defaults`` override the preset's default alpha / beta / gamma; ``sampling``
    picks the estimator (default exact) and ``samples`` how many subtrees it draws per
    traverser and iteration.
    """
    solver = ALGORITHMS[resolve_algorithm(name)]()
    changes = {k: float(v) for k, v in defaults.items() if v is not None}
    bad = set(changes) - set(HYPERPARAMETERS)
    if bad:
        raise ValueError(f"unknown hyper-parameter(s) {sorted(bad)} for {solver.name}; "
                         f"known: {', '.join(HYPERPARAMETERS)}")
    if alternating is not None:
        changes["alternating"] = bool(alternating)
    if sampling is not None:
        changes["sampling"] = resolve_sampling(sampling)
    if samples is not None:
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a positive integer, got {samples!r}")
        changes["samples"] = samples
    return dataclasses.replace(solver, **changes)
