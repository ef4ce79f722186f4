"""Estimated analytics for games too large to lower: values and best-response gains.

When a game cannot be lowered (chance that cannot be enumerated, or a tree too large),
:func:`jaxcfr.evaluate` cannot compute a profile's exact metrics. These functions
*estimate* them by Monte Carlo over chance, with confidence intervals. They are
estimates, labelled as such everywhere (``ValueEstimate.estimate`` is ``True``; the record
has ``"estimate": true``), never exact values.

What is estimated, for a profile ``sigma`` and each player ``i``:

* ``values[i]``: ``v_i(sigma)``, the expected value. Each of ``samples`` independent
  draws answers chance with ``sample_chance`` and takes the *exact* expectation over
  the players' strategies below the drawn chance (every decision enumerated;
  ``method="exact"``), which leaves chance as the only source of variance; where the
  decision tree below one draw is too large to walk (``method="auto"`` tries one
  draw with an independent seed, up to ``max_nodes`` states), each draw is instead one
  sampled trajectory (``method="trajectories"``: noisier, same expectation). With
  ``enumerate_chance=True`` chance nodes that list their outcomes are enumerated too
  (only non-enumerable chance is drawn): lower variance, larger walks. The draws are
  unbiased, so the interval (``mean +- t * stderr``, Student's t, ``confidence``)
  covers the exact value in about ``confidence`` of the seeds.
* ``gains[i]``: an estimated *lower bound* on player ``i``'s best-response gain
  ``max_b v_i(b, sigma_-i) - v_i(sigma)``. A best response ``b_i`` is computed exactly
  (:func:`jaxcfr.solvers.analytics.best_responses`) on an *empirical* game: ``train_samples``
  draws of chance under one chance root (:class:`jaxcfr.game.determinize.EmpiricalChance`,
  lowered). Outside the information sets those draws reach, ``b_i`` plays ``sigma_i``.
  ``b_i`` is then a fixed strategy, and its gain ``v_i(b_i, sigma_-i) - v_i(sigma)`` is
  estimated on *fresh* draws (the same ``samples`` held-out draws as the values, paired),
  so the estimate is unbiased for ``b_i``'s gain, which is at most the true
  best-response gain. So the true gain is at least ``gains[i].value`` in expectation,
  and at least ``gains[i].low`` with probability about ``(1 + confidence) / 2``. How
  far below the true gain it lies depends on how well ``train_samples`` draws cover
  the information sets that matter; it is not an estimate of the gain itself.
* ``nash_conv``: the sum of the gains (per draw), so a lower bound on NashConv in the
  same sense; ``exploitability`` is half of it for two-player constant-sum games
  (judged on the empirical game's terminals).
* ``gains_in_sample[i]``: the best response's gain on the training draws themselves:
  optimistic (in expectation at least the true gain, since the response was fitted
  to those draws), with no interval; with ``gains`` it brackets the true gain.

Seeds: held-out draw ``k`` uses ``random.Random(draw_seed(seed, 1, k))``, training draw
``j`` ``draw_seed(seed, 2, j)``, the ``auto`` probe ``draw_seed(seed, 3)``: a result is a
function of the arguments alone. Transpositions: where the game opts in
(``caches_transpositions()``), the walks memoise on ``state_hash()``
(:mod:`jaxcfr.profiles.host_values`); where it does not, never.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("sampled_dice_poker(dice=2, sides=6)")
    >>> jaxcfr.estimate_values(game, None, samples=500, seed=0)        # uniform profile
    >>> est = jaxcfr.estimate_profile(game, None, samples=500, train_samples=500)
    >>> est.record()["gain_lower_bound"]                                # [g0, g1]
"""

from __future__ import annotations

import math
import os
import random
from statistics import NormalDist
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from jaxcfr._util import arguments
from jaxcfr.solvers.analytics import best_responses
from jaxcfr.game.contract import GameError, check_protocol
from jaxcfr.game.validate import probe_blind_spots
from jaxcfr.game.determinize import (Determinized, EmpiricalChance, chance_below, draw_prefix,
                                    draw_seed)
from jaxcfr.profiles.host_values import (PolicySet, WalkStats, WalkTooLarge, trajectory_values,
                                         walk_values)
from jaxcfr.lowering.lower import lower
from jaxcfr.kernels.numerics import normalise
from jaxcfr.profiles.profile import Profile
# METHODS, DEFAULT_TRAIN_SAMPLES, DEFAULT_SAMPLES, MAX_NODES: read by the command line
# without JAX
from jaxcfr.profiles.value_estimate_options import (DEFAULT_SAMPLES, DEFAULT_TRAIN_SAMPLES,
                                              MAX_NODES, METHODS, check_options)
from jaxcfr.game.registry import load_game
from jaxcfr.tensors import LoweredGame

__all__ = ["ValueEstimate", "ProfileEstimates", "Empirical", "estimate_values", "estimate_profile",
           "estimate_record", "empirical_game", "interval", "run_draws", "METHODS"]

#: A trainer's estimates (sampled chance, :func:`run_draws`) fit on this many times the
#: draws its training consumed, within ``[MIN_TRAIN_SAMPLES, DEFAULT_TRAIN_SAMPLES]``, and
#: hold out as many as it consumed, within ``[MIN_SAMPLES, DEFAULT_SAMPLES]``.
TRAIN_SAMPLES_PER_DRAW = 4
MIN_TRAIN_SAMPLES, MIN_SAMPLES = 1000, 200
#: ``JAXCFR_ESTIMATES=quick``: (fitting, held-out) draws for smoke tests.
QUICK_DRAWS = (200, 100)
#: ``JAXCFR_ESTIMATES``: how large a trainer's estimates are (see :func:`run_draws`).
ESTIMATE_SIZES = ("proportionate", "full", "quick")
# Streams of draw_seed(seed, stream, index).
_HELD_OUT, _TRAIN, _PROBE = 1, 2, 3


class ValueEstimate(NamedTuple):
    """A Monte Carlo estimate with its confidence interval (an estimate, not an exact value)."""
    value: float       # the mean of the draws
    low: float         # the interval: value -+ t_{samples-1} * stderr
    high: float
    stderr: float      # standard error of the mean
    samples: int       # independent draws
    confidence: float  # the interval's nominal coverage
    estimate: bool = True

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {k: (float(v) if isinstance(v, (float, np.floating)) else v)
                for k, v in self._asdict().items()}


def interval(draws, confidence: float = 0.95) -> ValueEstimate:
    """The mean of independent, identically distributed ``draws`` ``[n]`` (n >= 2) with a
    Student-t interval of nominal coverage ``confidence``."""
    x = np.asarray(draws, dtype=np.float64).reshape(-1)
    n = x.size
    if n < 2:
        raise ValueError(f"an interval needs at least 2 draws, got {n}")
    mean = float(x.mean())
    stderr = float(x.std(ddof=1) / math.sqrt(n))
    half = t_quantile((1 + confidence) / 2, n - 1) * stderr
    return ValueEstimate(mean, mean - half, mean + half, stderr, n, float(confidence))


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile for ``p`` in ``(0.5, 1)`` (Hill 1970, CACM algorithm 396;
    relative error below 1e-5 against SciPy for every ``df``)."""
    q = 2 * (1 - p)
    n = df
    if n == 1:
        return math.tan(math.pi * (p - 0.5))
    if n == 2:
        return math.sqrt(2 / (q * (2 - q)) - 2)
    a = 1 / (n - 0.5)
    b = 48 / (a * a)
    c = ((20700 * a / b - 98) * a - 16) * a + 96.36
    d = ((94.5 / (b + c) - 3) / b + 1) * math.sqrt(a * math.pi / 2) * n
    y = (d * q) ** (2 / n)
    if y > 0.05 + a:
        x = NormalDist().inv_cdf(q * 0.5)
        y = x * x
        if n < 5:
            c += 0.3 * (n - 4.5) * (x + 0.6)
        c = (((0.05 * d * x - 5) * x - 7) * x - 2) * x + b + c
        y = (((((0.4 * y + 6.3) * y + 36) * y + 94.5) / c - y - 3) / b + 1) * x
        y = math.expm1(a * y * y)
    else:
        y = (((1 / (((n + 6) / (n * y) - 0.089 * d - 0.822) * (n + 2) * 3) + 0.5 / (n + 4)) * y
              - 1) * (n + 1) / (n + 2) + 1 / y)
    return math.sqrt(n * y)


class ProfileEstimates(NamedTuple):
    """What :func:`estimate_profile` estimated (``P`` players); see the module docs."""
    values: tuple[ValueEstimate, ...]            # [P] v_i(sigma)
    gains: tuple[ValueEstimate, ...]             # [P] v_i(b_i, sigma_-i) - v_i(sigma), held out
    nash_conv: ValueEstimate                     # sum of the gains
    exploitability: ValueEstimate | None         # nash_conv / 2 (two-player constant-sum)
    gains_in_sample: tuple[float, ...]      # [P] the responses' gains on the training draws
    train_samples: int
    seed: int
    method: str                             # "exact" or "trajectories"
    stats: dict[str, int]                   # held-out walks: nodes, memo hits, draws
    responses: tuple[dict, ...]             # [P] the best responses b_i: {key: action}
                                            #     (sigma_i at the keys they do not list)

    def record(self) -> dict[str, Any]:
        """The estimates as plain JSON values, with the keys of
        :data:`~jaxcfr.solvers.metric_record.ESTIMATE_KEYS`."""
        ex = self.exploitability
        return {
            "values": [e.value for e in self.values],
            "values_interval": [[e.low, e.high] for e in self.values],
            "values_stderr": [e.stderr for e in self.values],
            "gain_lower_bound": [e.value for e in self.gains],
            "gain_interval": [[e.low, e.high] for e in self.gains],
            "gain_stderr": [e.stderr for e in self.gains],
            "gain_in_sample": list(self.gains_in_sample),
            "nash_conv_lower_bound": self.nash_conv.value,
            "nash_conv_interval": [self.nash_conv.low, self.nash_conv.high],
            "exploitability_lower_bound": None if ex is None else ex.value,
            "exploitability_interval": None if ex is None else [ex.low, ex.high],
            "samples": self.values[0].samples, "train_samples": self.train_samples,
            "confidence": self.values[0].confidence, "seed": self.seed,
            "method": self.method, "estimate": True}


def run_draws(consumed: int) -> tuple[int, int]:
    """``(train_samples, samples)`` for the estimates of a trainer whose training has
    consumed ``consumed`` chance draws (iterations x draws per iteration).

    ``JAXCFR_ESTIMATES`` chooses: ``proportionate`` (the default): with ``consumed``
    rounded up to a power of two (so that a run's curve changes its draws only a few
    times), fit on :data:`TRAIN_SAMPLES_PER_DRAW` times it and hold out as many, within
    the bounds above, so that a 50-iteration run's estimate costs seconds, not the
    minute 20,000 fitting draws take; ``full``: the largest (20,000 and 1,000) whatever
    the run; ``quick``: :data:`QUICK_DRAWS` (smoke tests: the bounds are then loose).
    Fewer fitting draws make the gain's lower bound looser, never invalid.
    """
    mode = os.environ.get("JAXCFR_ESTIMATES", "") or "proportionate"
    arguments.one_of("JAXCFR_ESTIMATES", mode, ESTIMATE_SIZES)
    if mode == "quick":
        return QUICK_DRAWS
    if mode == "full":
        return DEFAULT_TRAIN_SAMPLES, DEFAULT_SAMPLES
    consumed = 1 << max(0, int(consumed) - 1).bit_length()      # up to a power of two: the
    return (min(DEFAULT_TRAIN_SAMPLES, max(MIN_TRAIN_SAMPLES, TRAIN_SAMPLES_PER_DRAW * consumed)),
            min(DEFAULT_SAMPLES, max(MIN_SAMPLES, consumed)))      # sizes change seldom


def estimate_values(game, profile=None, *, samples: int = 1000, seed: int = 0,
                    confidence: float = 0.95, method: str = "auto",
                    enumerate_chance: bool = False, transpositions: bool = True,
                    max_nodes: int = MAX_NODES) -> tuple[ValueEstimate, ...]:
    """Each player's expected value under ``profile``, estimated over ``samples`` draws.

    Args:
      game: a Game (its root state) or a game string; its chance may be non-enumerable.
      profile: a :class:`jaxcfr.Profile` (information sets it lacks play uniformly), a
        path to a saved one, a callable ``policy(player, key, legal_actions)`` returning
        probabilities aligned with ``legal_actions`` (or ``{action: probability}``), or
        ``None`` (uniform).
      samples: independent draws of chance (at least 2).
      seed: the draws' seed (``0 .. 2**31 - 1``).
      confidence: the intervals' nominal coverage, in ``(0, 1)``.
      method: ``exact`` (expectation over the strategies below each draw), ``trajectories``
        (one sampled trajectory per draw) or ``auto`` (exact where one draw's walk fits
        ``max_nodes`` states).
      enumerate_chance: enumerate chance nodes that list their outcomes (``exact`` only).
      transpositions: memoise on ``state_hash()`` where the game opts in (never otherwise).
    Returns:
      ``[P]`` :class:`ValueEstimate` (the same held-out draws as :func:`estimate_profile`).
    """
    game, policies = _prepare(game, profile)
    samples, seed, confidence = _check(samples, seed, confidence, method, max_nodes)
    method = _pick(game, policies, method, seed, enumerate_chance, max_nodes)
    draws, _ = _held_out(game, policies, samples, seed, method, enumerate_chance,
                         transpositions)
    return tuple(interval(draws[:, 0, p], confidence) for p in range(draws.shape[2]))


def estimate_profile(game, profile=None, *, samples: int = 1000,
                     train_samples: int = DEFAULT_TRAIN_SAMPLES,
                     seed: int = 0, confidence: float = 0.95, method: str = "auto",
                     enumerate_chance: bool = False, transpositions: bool = True,
                     max_nodes: int = MAX_NODES, empirical: "Empirical | None" = None,
                     precision: str = "float64") -> ProfileEstimates:
    """Values and best-response-gain lower bounds of ``profile``, estimated (module docs).

    Args:
      train_samples: draws of the empirical game the best responses are computed on.
      empirical: that game already lowered (:func:`empirical_game` with the same
        ``game``, ``train_samples`` and ``seed``): lowering and compiling are then
        skipped, as in a trainer that evaluates every few iterations.
      precision: of the best-response passes on the device.
      Others: as :func:`estimate_values`.
    Returns:
      :class:`ProfileEstimates`; ``.record()`` gives the JSON record.
    """
    game, policies = _prepare(game, profile)
    samples, seed, confidence = _check(samples, seed, confidence, method, max_nodes)
    train_samples = arguments.positive_int("train_samples", train_samples)
    if empirical is None:
        empirical = empirical_game(game, train_samples, seed)
    train_samples, empirical = empirical.draws, empirical.lowered
    num_players = empirical.num_players
    br = best_responses(empirical, _table(empirical, policies), dtype=precision)
    overrides = [(p, _response(empirical, br.tables[p], p)) for p in range(num_players)]
    both = PolicySet(policies.base, [(p, {key: j for key, (_, j) in table.items()})
                                     for p, table in overrides])
    method = _pick(game, both, method, seed, enumerate_chance, max_nodes)
    draws, stats = _held_out(game, both, samples, seed, method, enumerate_chance,
                             transpositions)
    values = draws[:, 0, :]                                                  # [n, P]
    gains = np.stack([draws[:, 1 + p, p] - values[:, p] for p in range(num_players)], 1)
    nash_conv = interval(gains.sum(axis=1), confidence)
    exploitability = None
    if num_players == 2 and empirical.constant_sum is not None:
        exploitability = interval(gains.sum(axis=1) / 2, confidence)
    return ProfileEstimates(
        values=tuple(interval(values[:, p], confidence) for p in range(num_players)),
        gains=tuple(interval(gains[:, p], confidence) for p in range(num_players)),
        nash_conv=nash_conv, exploitability=exploitability,
        gains_in_sample=tuple(float(x) for x in br.best_response_values - br.values),
        train_samples=train_samples, seed=seed, method=method,
        stats={"nodes": stats.nodes, "hits": stats.hits, "draws": stats.draws},
        responses=tuple({key: empirical.infoset_actions[r][j] for key, (r, j) in table.items()}
                        for _, table in overrides))


def estimate_record(game, profile=None, **options) -> dict[str, Any]:
    """``estimate_profile(game, profile, **options).record()``: the JSON record of the
    estimates (keys :data:`~jaxcfr.solvers.metric_record.ESTIMATE_KEYS`;
    ``"estimate": true``)."""
    return estimate_profile(game, profile, **options).record()


class Empirical(NamedTuple):
    """An empirical game (:func:`empirical_game`): draws of chance under one root, lowered."""
    lowered: LoweredGame
    draws: int           # the draws it stands for (train_samples)
    seed: int


def empirical_game(game, train_samples: int = DEFAULT_TRAIN_SAMPLES, seed: int = 0, *,
                   enumerate_listed: bool = True) -> Empirical:
    """``train_samples`` draws of ``game``'s chance under one chance root, lowered.

    Draw ``j`` answers chance with ``sample_chance(Random(draw_seed(seed, 2, j)))``: its
    chance prefix (the chance from the root to the first decision) and, below it, the
    chance nodes that cannot list their outcomes; with ``enumerate_listed`` (the default)
    those that list them keep their outcomes, as the sampled-chance trainer's draws do,
    so the responses are fitted on the exact expectation there (``False``: every chance
    node is drawn). Information sets that several draws reach are one row. Draws that
    share their prefix with nothing drawn below it are one and the same tree: they are
    lowered once, with the weight of their number (the same empirical game, smaller: on
    Leduc, where only the public card lies below the deal and it lists its outcomes,
    20,000 draws are 30 trees, the exact game reweighted by the deals drawn). Reuse it
    across calls of :func:`estimate_profile` (``empirical=``) with the same seed.
    """
    game = load_game(game) if isinstance(game, str) else game
    train_samples = arguments.positive_int("train_samples", train_samples)
    probe_blind_spots(game, check_protocol(game), transpositions=False, sampling=True)
    seeds = [draw_seed(arguments.seed("seed", seed), _TRAIN, j) for j in range(train_samples)]
    groups: dict[tuple, list[int]] = {}       # prefix -> [representative seed, count]
    kept, counts = [], []
    for s in seeds:
        prefix, state, _ = draw_prefix(game, s)
        if prefix not in groups:
            drawn_below = chance_below(state, listed=not enumerate_listed)
            groups[prefix] = None if drawn_below else [s, 0]
        group = groups[prefix]
        if group is None:                      # chance below: every draw is its own tree
            kept.append(s)
            counts.append(1)
        else:
            group[1] += 1
    for prefix, group in groups.items():
        if group is not None:
            kept.append(group[0])
            counts.append(group[1])
    try:
        lowered = lower(EmpiricalChance(game, kept, counts, enumerate_listed=enumerate_listed),
                        workers=1,
                        name=f"{getattr(game, 'name', '') or type(game).__name__} "
                             f"({train_samples} draws)")
    except GameError as e:                 # the history starts with the draw: say it in words
        if not e.history or not isinstance(e.history[0], int):
            raise
        raise GameError(f"{e.detail} (in draw {e.history[0]} of the {len(kept)} the estimates "
                        f"fit best responses on, seed {seed})", rule=e.rule,
                        history=e.history[1:], infoset=e.infoset) from None
    return Empirical(lowered, train_samples, seed)


# -- helpers ----------------------------------------------------------------------
def _prepare(game, profile) -> tuple[Any, PolicySet]:
    if isinstance(game, (str, os.PathLike)):
        game = load_game(os.fspath(game))
    if isinstance(game, LoweredGame):
        raise TypeError("estimates need the game itself (a Game or a game string), not a "
                        "LoweredGame: use jaxcfr.evaluate for the exact metrics of a lowered game")
    # the estimates draw with sample_chance, clone, and memoise on state_hash() where the
    # game says so: what validate probes and these walks cannot see is probed here
    probe_blind_spots(game, check_protocol(game), sampling=True)
    if profile is None:
        base: Callable = _uniform
    elif isinstance(profile, Profile):
        base = profile.distribution
    elif isinstance(profile, (str, os.PathLike)):
        base = Profile.load(profile).distribution
    elif callable(profile):
        base = profile
    else:
        raise TypeError(f"profile must be a jaxcfr.Profile, a path to one, a callable "
                        f"policy(player, key, legal_actions) or None, got {type(profile).__name__}")
    return game, PolicySet(base)


def _uniform(player: int, key, legal: Sequence) -> list[float]:
    return [1.0 / len(legal)] * len(legal)


def _check(samples, seed, confidence, method, max_nodes) -> tuple[int, int, float]:
    return check_options(samples, seed, confidence, method, max_nodes)


def _pick(game, policies: PolicySet, method: str, seed: int, enumerate_chance: bool,
          max_nodes: int) -> str:
    """``auto``: exact when one probe draw (independent of the samples) fits ``max_nodes``."""
    if method != "auto":
        return method
    try:
        _walk_draw(game, policies, draw_seed(seed, _PROBE), enumerate_chance, True,
                   WalkStats(), limit=max_nodes)
    except WalkTooLarge:
        return "trajectories"
    return "exact"


def _held_out(game, policies: PolicySet, samples: int, seed: int, method: str,
              enumerate_chance: bool, transpositions: bool) -> tuple[np.ndarray, WalkStats]:
    """``[samples, K, P]``: every profile's value on each held-out draw."""
    stats = WalkStats()
    out = []
    for k in range(samples):
        s = draw_seed(seed, _HELD_OUT, k)
        if method == "exact":
            out.append(_walk_draw(game, policies, s, enumerate_chance, transpositions, stats))
        else:
            out.append(trajectory_values(game, policies, s))
    return np.stack(out), stats


def _walk_draw(game, policies: PolicySet, seed: int, enumerate_chance: bool,
               transpositions: bool, stats: WalkStats, limit: int | None = None) -> np.ndarray:
    """``[K, P]``: one held-out draw's exact values. The chance prefix (root to the first
    decision) is drawn with ``Random(seed)``; below it, chance nodes that list their
    outcomes are enumerated (exact, so no variance from them) and the others drawn from
    the same generator, in the walk's order (so a game without listed chance below its
    prefix gets the draws it always got). ``enumerate_chance``: the prefix is enumerated
    too where it lists its outcomes."""
    if enumerate_chance:
        return walk_values(game, policies, random.Random(seed), enumerate_chance=True,
                           transpositions=transpositions, stats=stats, limit=limit)
    _, state, rng = draw_prefix(game, seed)
    return walk_values(Determinized(state, rng, enumerate_listed=True), policies, rng,
                       enumerate_chance=True, transpositions=transpositions, stats=stats,
                       limit=limit)


def _table(lowered: LoweredGame, policies: PolicySet) -> np.ndarray:
    """``[I, A]``: the base profile on ``lowered``'s rows (uniform on sink and padding)."""
    mask = np.asarray(lowered.tensors.legal_mask)
    table = normalise(np.zeros(mask.shape), mask)
    for r, ((player, key), legal) in enumerate(zip(lowered.infoset_keys,
                                                   lowered.infoset_actions)):
        table[r] = 0.0
        table[r, :len(legal)] = policies.matrix(player, key, tuple(legal))[0]
    return table


def _response(lowered: LoweredGame, table: np.ndarray, player: int) -> dict:
    """``{key: (row, action index)}``: ``player``'s rows of a best-response table."""
    return {key: (r, int(np.argmax(table[r, :len(lowered.infoset_actions[r])])))
            for r, (p, key) in enumerate(lowered.infoset_keys) if p == player}
