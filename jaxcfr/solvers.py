"""The CFR family as one configured core: ``(init, update)`` pairs of pure functions.

A :class:`Solver` fixes the *structure* of the update (regret floor, discounting,
prediction, alternating or simultaneous); the numbers that vary between runs
(``alpha``, ``beta``, ``gamma``) live in :class:`HyperParams` and are traced, so
one compiled step serves every setting and a batch of settings at once.

Per iteration ``t`` (1-based), for the updated players' rows, with instantaneous
regret ``r_t`` and own-reach-weighted strategy ``s_t``::

    R_t = floor(discount_t(R_{t-1} + r_t))       discount: x * t^a / (t^a + 1), a = alpha
                                                  for x > 0 and beta for x < 0 (if enabled);
                                                  floor: max(., 0) under RM+
    S_t = S_{t-1} * ((t - 1) / t)^gamma + s_t     average weight of iteration t ~ t^gamma
    sigma_{t+1} = RM(R_t [+ r_t if predictive])

Presets (published defaults): ``cfr()``, ``cfr_plus()``, ``linear_cfr()``,
``dcfr(1.5, 0, 2)``, ``pcfr_plus()`` (gamma 2), ``dcfr_plus(1.5, 4)`` and
``pdcfr_plus(2.3, 5)`` (Xu et al., 2024).

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

from jaxcfr import passes
from jaxcfr.lowering import GameTensors

__all__ = ["Solver", "SolverState", "HyperParams", "cfr", "cfr_plus", "linear_cfr", "dcfr",
           "pcfr_plus", "dcfr_plus", "pdcfr_plus", "ALGORITHMS", "make_solver"]


class HyperParams(NamedTuple):
    """Traced hyper-parameters; scalars, or ``[*b]`` for a batch of settings."""
    alpha: jax.Array   # positive-regret discount exponent
    beta: jax.Array    # negative-regret discount exponent
    gamma: jax.Array   # averaging exponent: iteration t weighs t^gamma


class SolverState(NamedTuple):
    """Solver state; ``*b`` are trailing batch axes (hyper-parameters, seeds)."""
    regret: jax.Array          # [I, A, *b] accumulated (discounted, floored) regret
    strategy_sum: jax.Array    # [I, A, *b] weighted sum of own-reach-weighted strategies
    prediction: jax.Array      # [I, A, *b] last instantaneous regret (predictive variants)
    iteration: jax.Array       # [] int32  iterations done


@dataclasses.dataclass(frozen=True)
class Solver:
    """One member of the CFR family (hashable: it is static in compiled code).

    Attributes:
      name: preset name.
      regret_floor: clip accumulated regret at 0 (RM+).
      discount: discount accumulated regret by alpha / beta.
      predictive: play RM(R + last instantaneous regret).
      alternating: update players one after another, each seeing the others' new strategy.
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

    def static_key(self) -> "Solver":
        """This solver without its name and default numbers: what compiled code depends on."""
        return dataclasses.replace(self, name="", alpha=0.0, beta=0.0, gamma=0.0)

    def hyperparams(self, alpha=None, beta=None, gamma=None, dtype=jnp.float32) -> HyperParams:
        """Hyper-parameters (defaults from the preset); arrays give a batch of settings."""
        pick = lambda v, d: jnp.asarray(d if v is None else v, dtype=dtype)  # noqa: E731
        return HyperParams(pick(alpha, self.alpha), pick(beta, self.beta), pick(gamma, self.gamma))

    def init(self, tensors: GameTensors, batch_shape: tuple[int, ...] = (),
             dtype=None) -> SolverState:
        """Zero state for one game's tensors (``[I, A]`` from ``legal_mask``)."""
        if hasattr(tensors, "tensors"):       # a LoweredGame
            tensors = tensors.tensors
        rows, actions = tensors.legal_mask.shape[-2:]
        dtype = dtype or jnp.result_type(float)
        shape = (rows, actions) + tuple(batch_shape)
        return SolverState(jnp.zeros(shape, dtype), jnp.zeros(shape, dtype),
                           jnp.zeros(shape, dtype), jnp.zeros((), jnp.int32))

    def strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """The current strategy ``[I, A, *b]`` (what iteration ``t + 1`` plays)."""
        return current_strategy(tensors, state, self.predictive)

    def update(self, tensors: GameTensors, structure: passes.Structure, state: SolverState,
               hp: HyperParams) -> SolverState:
        """One iteration of this solver. Pure; jit and vmap it freely."""
        t = state.iteration + 1
        tf = t.astype(state.regret.dtype)
        rows, actions = tensors.legal_mask.shape
        mask = tensors.legal_mask & tensors.abstraction_mask
        owners = tensors.infoset_player
        ndim = state.regret.ndim
        m = passes.trail(mask, ndim)
        avg_decay = jnp.power((tf - 1) / tf, hp.gamma)
        if self.discount:
            pos = 1 / (1 + jnp.power(tf, -hp.alpha))
            neg = 1 / (1 + jnp.power(tf, -hp.beta))

        def half_step(players, selected, tables):
            """Update the rows ``selected`` ([I] bool) from one pass valuing ``players``."""
            regret, strategy_sum, prediction = tables
            current = self.strategy(tensors, SolverState(regret, strategy_sum, prediction,
                                                         state.iteration))
            edge = passes.edge_probabilities(tensors, current)
            reach = passes.reach_pass(tensors, structure, edge)
            values = passes.value_pass(tensors, structure, edge, players)
            q = passes.action_values(tensors, structure, passes.opponent_reach(reach), values,
                                     rows, actions, players)
            v = (current * q).sum(axis=1, keepdims=True)
            inst = jnp.where(m, q - v, 0)                                    # [I, A, *b]
            new_regret = regret + inst
            if self.discount:
                new_regret = new_regret * jnp.where(new_regret > 0, pos, neg)
            if self.regret_floor:
                new_regret = jnp.maximum(new_regret, 0)
            own = passes.own_reach_at_rows(tensors, reach)                  # [I, *b]
            new_sum = strategy_sum * avg_decay + own[:, None] * current
            sel = passes.trail(selected, ndim)
            return (jnp.where(sel, new_regret, regret), jnp.where(sel, new_sum, strategy_sum),
                    jnp.where(sel, inst, prediction))

        tables = (state.regret, state.strategy_sum, state.prediction)
        if self.alternating:
            # one compiled body for every player: the player index is traced
            def body(player, tables):
                return half_step(player[None], owners == player, tables)
            tables = jax.lax.fori_loop(0, structure.num_players, body, tables)
        else:
            tables = half_step(tuple(range(structure.num_players)), owners >= 0, tables)
        regret, strategy_sum, prediction = tables
        return SolverState(regret, strategy_sum, prediction, t)

    def average_strategy(self, tensors: GameTensors, state: SolverState) -> jax.Array:
        """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
        return average_strategy(tensors, state)


def current_strategy(tensors: GameTensors, state: SolverState, predictive: bool) -> jax.Array:
    """Regret matching on the regrets (plus the prediction when ``predictive``): ``[I, A, *b]``."""
    mask = tensors.legal_mask & tensors.abstraction_mask
    regret = state.regret + state.prediction if predictive else state.regret
    return passes.regret_matching(regret, mask)


def average_strategy(tensors: GameTensors, state: SolverState) -> jax.Array:
    """Normalised ``strategy_sum``: ``[I, A, *b]`` (uniform where never reached)."""
    return normalise(state.strategy_sum, tensors.legal_mask & tensors.abstraction_mask)


def normalise(weights: jax.Array, mask: jax.Array) -> jax.Array:
    """Rows of non-negative ``weights`` ``[I, A, *b]`` scaled to sum 1 over ``mask``."""
    m = passes.trail(mask, weights.ndim)
    w = jnp.where(m, jnp.maximum(weights, 0), 0)
    total = w.sum(axis=1, keepdims=True)
    count = m.sum(axis=1, keepdims=True).astype(weights.dtype)
    return jnp.where(total > 0, w / jnp.where(total > 0, total, 1), jnp.where(m, 1 / count, 0))


def cfr(alternating: bool = False) -> Solver:
    """Vanilla CFR: regret matching, uniform averaging (simultaneous by default)."""
    return Solver("cfr", alternating=alternating, gamma=0.0)


def cfr_plus(alternating: bool = True) -> Solver:
    """CFR+ (Tammelin 2014): RM+, alternating updates, linear averaging."""
    return Solver("cfr+", regret_floor=True, alternating=alternating, gamma=1.0)


def linear_cfr(alternating: bool = False) -> Solver:
    """Linear CFR (Brown & Sandholm 2019): iteration t weighs t in regrets and average."""
    return Solver("lcfr", discount=True, alternating=alternating, alpha=1.0, beta=1.0, gamma=1.0)


def dcfr(alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
         alternating: bool = False) -> Solver:
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


ALGORITHMS = {"cfr": cfr, "cfr+": cfr_plus, "lcfr": linear_cfr, "dcfr": dcfr,
              "pcfr+": pcfr_plus, "dcfr+": dcfr_plus, "pdcfr+": pdcfr_plus}
_ALIASES = {"cfr_plus": "cfr+", "cfrplus": "cfr+", "linear_cfr": "lcfr", "pcfr_plus": "pcfr+",
            "pcfrplus": "pcfr+", "dcfr_plus": "dcfr+", "pdcfr_plus": "pdcfr+"}


def make_solver(name: str, *, alternating: bool | None = None, **defaults) -> Solver:
    """A preset by name (``cfr``, ``cfr+``, ``lcfr``, ``dcfr``, ``pcfr+``, ``dcfr+``, ``pdcfr+``).

    ``defaults`` override the preset's default alpha / beta / gamma.
    """
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; choose one of {', '.join(ALGORITHMS)}")
    solver = ALGORITHMS[key]()
    changes = {k: float(v) for k, v in defaults.items() if v is not None}
    bad = set(changes) - {"alpha", "beta", "gamma"}
    if bad:
        raise ValueError(f"unknown hyper-parameter(s) {sorted(bad)} for {key}")
    if alternating is not None:
        changes["alternating"] = bool(alternating)
    return dataclasses.replace(solver, **changes)

