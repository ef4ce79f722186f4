"""Values of fixed behaviour profiles on the host, below chance that is drawn.

The Monte Carlo analytics (:mod:`jaxcfr.profiles.value_estimates`) need, for one draw of chance,
what ``K`` fixed profiles are worth to every player. Two ways, both unbiased for the
real game's values when the draws follow ``sample_chance``:

* :func:`walk_values`: the *exact* expectation over the players' strategies below the
  drawn chance. Every decision is enumerated (weighted by each profile's
  probabilities); a chance node is answered by one outcome of ``sample_chance(rng)``
  (drawn the first time the walk meets it), or, with ``enumerate_chance=True``, by all
  of its listed outcomes where ``chance_outcomes()`` lists them. Chance is then the
  only source of variance.
* :func:`trajectory_values`: one trajectory per profile (chance drawn, actions drawn
  from the profile): cheap where the decision tree below a draw is too large to walk,
  noisier. The ``K`` trajectories share their random numbers (common random numbers),
  so differences between profiles are less noisy than the values themselves.

Transpositions: where the game opts in (``caches_transpositions()`` is true, so
``state_hash()`` is a proven transposition key), :func:`walk_values` memoises the value
of every state it finishes on ``state_hash()`` and reuses it when another history
reaches the same state; where it does not, it never does (a game whose
``state_hash`` collides across histories that differ for some player would otherwise
get wrong values). A memoised subtree's drawn chance is shared by the histories that
reach it, which keeps each history's expectation (and so the estimate) unbiased.

Every node is read through :func:`jaxcfr.game.contract.inspect_node`, so a game that breaks
the contract gets the same ``GameError`` (rule and history) as from ``lower``.

Shapes: ``K`` profiles, ``P`` players, ``n`` legal actions at a node.

Example::

    >>> import random, jaxcfr
    >>> from jaxcfr.profiles.host_values import PolicySet, walk_values
    >>> game = jaxcfr.load_game("kuhn_poker")
    >>> uniform = PolicySet(lambda player, key, legal: [1 / len(legal)] * len(legal))
    >>> walk_values(game, uniform, random.Random(0))          # [1, 2]: one deal drawn
"""

from __future__ import annotations

import random
from typing import Any, Callable, Hashable, Mapping, Sequence

import numpy as np

from jaxcfr.game import contract
from jaxcfr.game.contract import (CHANCE_NODE, TERMINAL_NODE, GameError,
                             inspect_node, reraise_as_game_error)

__all__ = ["PolicySet", "PolicyError", "WalkStats", "WalkTooLarge", "walk_values",
           "trajectory_values"]

#: ``policy(player, key, legal_actions) -> probabilities`` aligned with ``legal_actions``
#: (a sequence, or a mapping action -> probability): :meth:`jaxcfr.Profile.distribution`.
Policy = Callable[[int, Hashable, tuple], Any]


class PolicyError(ValueError):
    """A policy answered something that is not a distribution over the legal actions."""


class WalkTooLarge(Exception):
    """A walk met more nodes than its ``limit`` (internal: the caller picks another method)."""


class WalkStats:
    """Counters of the walks that were given this object (added up over walks)."""

    __slots__ = ("nodes", "hits", "draws")

    def __init__(self):
        self.nodes = 0     # states read (memo hits included)
        self.hits = 0      # states whose value came from the transposition memo
        self.draws = 0     # chance outcomes drawn with sample_chance

    def __repr__(self) -> str:
        return f"WalkStats(nodes={self.nodes}, hits={self.hits}, draws={self.draws})"


class PolicySet:
    """``K`` behaviour profiles that agree except at a few players' information sets.

    Profile 0 is ``base``; profile ``k >= 1`` is ``base`` except that player
    ``overrides[k - 1][0]`` plays the pure action of index ``overrides[k - 1][1][key]``
    (in ``legal_actions()`` order) at every information set ``key`` the table lists
    (a best response computed on drawn chance: see :mod:`jaxcfr.profiles.value_estimates`).

    ``base``'s answers are checked (one finite, non-negative weight per legal action,
    not all zero), normalised, and cached per information set for the set's life, so
    ``base`` must depend on ``(player, key, legal_actions)`` alone.
    """

    def __init__(self, base: Policy, overrides: Sequence[tuple[int, Mapping]] = ()):
        self.base = base
        self.overrides = tuple((int(p), table) for p, table in overrides)
        self.size = 1 + len(self.overrides)
        self._rows: dict = {}

    def matrix(self, player: int, key: Hashable, legal: tuple) -> np.ndarray:
        """``[K, n]``: each profile's probabilities at ``player``'s information set ``key``."""
        return self.row(player, key, legal)[0]

    def row(self, player: int, key: Hashable, legal: tuple) -> tuple[np.ndarray, tuple]:
        """``([K, n] probabilities, indices of the actions some profile plays)``."""
        cached = self._rows.get((player, key))
        if cached is not None and cached[0] == legal:
            return cached[1]
        probs = _checked(self.base(player, key, legal), player, key, legal)
        rows = np.repeat(probs[None, :], self.size, axis=0)
        for k, (owner, table) in enumerate(self.overrides, start=1):
            if owner == player and key in table:
                rows[k] = 0.0
                rows[k, table[key]] = 1.0
        played = tuple(int(j) for j in np.flatnonzero(rows.any(axis=0)))
        self._rows[(player, key)] = (legal, (rows, played))
        return rows, played


def _checked(raw, player: int, key, legal: tuple) -> np.ndarray:
    """``raw`` (a sequence, or a mapping action -> weight) as a distribution ``[n]``."""
    if isinstance(raw, Mapping):
        unknown = [a for a in raw if a not in legal]
        if unknown:
            raise PolicyError(f"the policy gives {unknown!r} at player {player}'s information "
                             f"set {key!r}, whose legal actions are {list(legal)}")
        raw = [raw.get(a, 0.0) for a in legal]
    probs = np.asarray(raw, dtype=np.float64).reshape(-1)
    if probs.shape != (len(legal),):
        raise PolicyError(f"the policy gives {probs.size} probabilities at player {player}'s "
                         f"information set {key!r}, which has {len(legal)} legal actions")
    total = probs.sum()
    if not (np.all(np.isfinite(probs)) and np.all(probs >= 0) and total > 0):
        raise PolicyError(f"the policy's probabilities {probs.tolist()} at player {player}'s "
                         f"information set {key!r} are not finite, non-negative weights with "
                         "a positive sum")
    return probs / total


def _drawn(state, rng: random.Random) -> tuple[Any, float]:
    """One outcome of ``sample_chance(rng)``, its probability checked like the walk's."""
    action, prob = state.sample_chance(rng)
    prob = contract.real_number(prob)
    if prob is None or not 0.0 < prob <= 1.0:
        raise GameError(f"sample_chance() returned probability {prob!r} (must be in (0, 1])",
                        rule="chance-probability")
    return action, prob


def walk_values(game, policies: PolicySet, rng: random.Random, *,
                enumerate_chance: bool = False, transpositions: bool = True,
                limit: int | None = None, stats: WalkStats | None = None) -> np.ndarray:
    """``[K, P]``: each profile's exact expected value below ``game`` given the draws.

    Values are ``[K, P]`` at inner nodes and ``[P]`` at terminals (the same for every
    profile); an action no profile plays is not walked.

    Args:
      game: the state to start from (not modified).
      policies: the ``K`` profiles.
      rng: draws chance (``sample_chance(rng)``), once per chance node met, in the
        walk's fixed order (depth first, actions in order): the result is a function
        of ``rng``'s state.
      enumerate_chance: take the expectation over the outcomes of every chance node
        that lists them (``chance_outcomes()``), drawing only where it is ``None``.
      transpositions: memoise on ``state_hash()`` when the game opts in with
        ``caches_transpositions()`` (never otherwise); ``False``: never.
      limit: raise :class:`WalkTooLarge` after this many states.
      stats: counters to add this walk's nodes, memo hits and draws to.

    Raises:
      GameError: the game broke the contract (rule and history named).
    """
    num_players = contract.check_protocol(game)
    memo = {} if transpositions and game.caches_transpositions() else None
    stats = WalkStats() if stats is None else stats
    frames: list[list] = []
    try:
        return _walk(game.clone(), policies, rng, num_players, enumerate_chance, memo,
                     limit, stats, frames)
    except (WalkTooLarge, PolicyError):
        raise
    except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule and history
        reraise_as_game_error(exc, _path(frames))


def _path(frames: list[list]) -> tuple:
    """The action path of the innermost frame (frame[5] is the action into it)."""
    return tuple(f[5] for f in frames[1:])


def _walk(root, policies: PolicySet, rng, num_players: int, enumerate_chance: bool, memo,
          limit, stats: WalkStats, frames: list) -> np.ndarray:
    """Depth first, iteratively. A frame is ``[state, edges, next, acc, memo key, action
    into it, weight of that action]``; ``edges`` are ``(action, weight)`` with weight a
    float (chance) or ``[K]`` (decisions), zero-weight actions left out."""
    K, P = policies.size, num_players
    max_depth = contract.MAX_TRAJECTORY_LENGTH
    state, action, weight = root, None, 1.0
    while True:
        # -- open ``state``: a finished value (terminal, memo hit) or a new frame
        stats.nodes += 1
        if limit is not None and stats.nodes > limit:
            raise WalkTooLarge(limit)
        if len(frames) > max_depth:
            raise GameError(f"trajectory longer than {max_depth} moves", rule="termination")
        key = state.state_hash() if memo is not None else None
        value = None if memo is None else memo.get(key)
        if value is not None:
            stats.hits += 1
        else:
            frames.append([state, (), 0, None, key, action, weight])   # for error paths
            info = inspect_node(state, P, None)
            if info.kind == TERMINAL_NODE:
                frames.pop()
                value = np.asarray(info.returns, dtype=np.float64)     # [P], the same for all K
                if memo is not None:
                    memo[key] = value
            else:
                if info.kind == CHANCE_NODE:
                    if enumerate_chance and info.probs is not None:
                        edges = [(a, p) for a, p in zip(info.actions, info.probs) if p > 0]
                    else:
                        edges = [(_drawn(state, rng)[0], 1.0)]
                        stats.draws += 1
                else:
                    probs, played = policies.row(info.player, state.infoset_key(info.player),
                                                 info.actions)
                    edges = [(info.actions[j], probs[:, j]) for j in played]
                frames[-1][1] = edges
                frames[-1][3] = np.zeros((K, P))
        # -- add finished values to their parents; step into the next child
        while True:
            if value is not None:
                if not frames:
                    return np.array(np.broadcast_to(value, (K, P)))
                f = frames[-1]
                w = weight if np.ndim(weight) == 0 else weight[:, None]
                f[3] += w * value
                value = None
            f = frames[-1]
            state, edges, i = f[0], f[1], f[2]
            if i < len(edges):
                action, weight = edges[i]
                f[2] = i + 1
                # the last child may take the state itself: its frame needs only the action
                state = state.clone() if i + 1 < len(edges) else state
                try:
                    state.step(action)
                except GameError as e:
                    raise e.with_context(history=_path(frames) + (action,)) from None
                break
            frames.pop()
            value, weight = f[3], f[6]
            if memo is not None:
                memo[f[4]] = value


def trajectory_values(game, policies: PolicySet, seed: int) -> np.ndarray:
    """``[K, P]``: the returns of one trajectory per profile, drawn with ``Random(seed)``.

    Chance is drawn with ``sample_chance`` and each profile's actions from its
    probabilities; all ``K`` trajectories start from the same random state, so they
    agree until the profiles first choose differently.
    """
    num_players = contract.check_protocol(game)
    out = np.zeros((policies.size, num_players))
    for k in range(policies.size):
        rng, state, history = random.Random(seed), game.clone(), []
        try:
            while True:
                if len(history) > contract.MAX_TRAJECTORY_LENGTH:
                    raise GameError(f"trajectory longer than {contract.MAX_TRAJECTORY_LENGTH} "
                                    "moves", rule="termination")
                info = inspect_node(state, num_players, None)
                if info.kind == TERMINAL_NODE:
                    out[k] = info.returns
                    break
                if info.kind == CHANCE_NODE:
                    action = _drawn(state, rng)[0]
                else:
                    probs = policies.matrix(info.player, state.infoset_key(info.player),
                                            info.actions)[k]
                    cumulative = np.cumsum(probs)
                    j = int(np.searchsorted(cumulative, rng.random() * cumulative[-1],
                                            side="right"))
                    action = info.actions[min(j, len(probs) - 1)]
                history.append(action)
                state.step(action)
        except PolicyError:
            raise
        except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule
            reraise_as_game_error(exc, tuple(history))
    return out
