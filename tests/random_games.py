"""Random valid games for the property-based suite, and a wrapper that breaks one node.

:class:`RandomGame` builds a random finite tree from a seed: chance nodes with random
probabilities, decision nodes of 1 to 3 players, terminal payoffs (zero-sum for two
players). Perfect recall holds by construction: a player's information-set key is
``(player, its own (key, action) sequence, an observation)``, so every history in an
information set has the same own sequence (and no set repeats on a path: the
sequence grows). Histories that share a key get the same number of actions, drawn once
per key. Action labels are strings, integers or tuples, depending on the seed.

:class:`Injected` wraps any game and breaks exactly one rule of the contract at one
history; :data:`VIOLATIONS` lists the ways, by node kind, with the rule a checker
must report.

Example::

    game = RandomGame(seed=3, players=2)
    jaxcfr.lower(game)                                     # fine
    jaxcfr.lower(Injected(game, ("c1", 0), "nan-returns"))   # GameError [terminal-returns]
"""

from __future__ import annotations

import math
import random
from typing import Any, Hashable

from jaxcfr import CHANCE, TERMINAL, Game, GameError

__all__ = ["RandomGame", "Injected", "VIOLATIONS", "paths_by_kind"]

_TERMINAL, _CHANCE, _DECISION = "t", "c", "d"


class RandomGame(Game):
    """A random game tree (see the module docstring); ``node`` indexes the shared tree."""

    def __init__(self, seed: int, players: int = 2, max_depth: int = 5,
                 max_nodes: int = 200):
        self.num_players = players
        self.seed = seed
        self.tree: list[tuple] = []
        rng = random.Random(seed)
        style = rng.randrange(3)
        self._label = [lambda i: f"a{i}", lambda i: i, lambda i: ("act", i)][style]
        self._actions_of: dict[Hashable, int] = {}
        self._build(rng, 0, ((),) * players, max_depth, max_nodes)
        self.node = 0

    # -- construction ------------------------------------------------------------
    def _build(self, rng: random.Random, depth: int, own: tuple, max_depth: int,
               max_nodes: int) -> int:
        index = len(self.tree)
        self.tree.append(None)                                  # filled below (pre-order)
        room = len(self.tree) < max_nodes
        if depth > 0 and (depth >= max_depth or not room or rng.random() < 0.25):
            self.tree[index] = (_TERMINAL, TERMINAL, (), None, (), self._returns(rng), None)
            return index
        if rng.random() < 0.3:
            k = rng.randint(2, 3)
            weights = [rng.randint(1, 4) for _ in range(k)]
            probs = tuple(w / sum(weights) for w in weights)
            actions = tuple(f"c{i}" for i in range(k))
            children = tuple(self._build(rng, depth + 1, own, max_depth, max_nodes)
                             for _ in actions)
            self.tree[index] = (_CHANCE, CHANCE, actions, probs, children, None, None)
            return index
        player = rng.randrange(self.num_players)
        key = (player, own[player], rng.randrange(2))           # own sequence + observation
        n = self._actions_of.setdefault(key, rng.randint(1, 3))
        actions = tuple(self._label(i) for i in range(n))
        children = tuple(
            self._build(rng, depth + 1, own[:player] + (own[player] + ((key, a),),)
                        + own[player + 1:], max_depth, max_nodes)
            for a in actions)
        self.tree[index] = (_DECISION, player, actions, None, children, None, key)
        return index

    def _returns(self, rng: random.Random) -> tuple[float, ...]:
        if self.num_players == 2:
            u = float(rng.randint(-4, 4))
            return (u, -u)
        return tuple(float(rng.randint(-3, 3)) for _ in range(self.num_players))

    # -- the protocol ------------------------------------------------------------
    def clone(self):
        new = object.__new__(RandomGame)
        new.__dict__.update(self.__dict__)
        return new

    def is_terminal(self):
        return self.tree[self.node][0] == _TERMINAL

    def is_chance(self):
        return self.tree[self.node][0] == _CHANCE

    def player_to_act(self):
        return self.tree[self.node][1]

    def chance_outcomes(self):
        kind, _, actions, probs, _, _, _ = self.tree[self.node]
        return list(zip(actions, probs)) if kind == _CHANCE else None

    def legal_actions(self):
        kind, _, actions, _, _, _, _ = self.tree[self.node]
        return list(actions) if kind == _DECISION else []

    def step(self, action):
        kind, _, actions, _, children, _, _ = self.tree[self.node]
        if kind == _TERMINAL:
            raise GameError("the game is over", rule="illegal-action")
        try:
            self.node = children[actions.index(action)]
        except ValueError:
            raise GameError(f"illegal action {action!r}", rule="illegal-action") from None

    def terminal_returns(self):
        return self.tree[self.node][5]

    def infoset_key(self, player):
        kind, acting, _, _, _, _, key = self.tree[self.node]
        return key if kind == _DECISION and acting == player else ("elsewhere", self.node)

    def __repr__(self):
        return f"RandomGame(seed={self.seed}, players={self.num_players}, node={self.node})"


def paths_by_kind(game: Game) -> dict[str, list[tuple]]:
    """Every history of ``game`` by node kind: ``{"t": [...], "c": [...], "d": [...]}``,
    each with its probability under uniform decisions (what ``jaxcfr.validate`` plays)."""
    out: dict[str, list[tuple]] = {_TERMINAL: [], _CHANCE: [], _DECISION: []}
    stack = [(game.clone(), (), 1.0)]
    while stack:
        state, path, reach = stack.pop()
        if state.is_terminal():
            out[_TERMINAL].append((path, reach))
            continue
        if state.is_chance():
            out[_CHANCE].append((path, reach))
            moves = state.chance_outcomes()
        else:
            out[_DECISION].append((path, reach))
            acts = state.legal_actions()
            moves = [(a, 1.0 / len(acts)) for a in acts]
        for a, p in moves:
            child = state.clone()
            child.step(a)
            stack.append((child, path + (a,), reach * p))
    return out


# -- one broken node ------------------------------------------------------------------
class _Raises(Exception):
    """Stands for a bug in a game's own code."""


def _step_accepted(state, action):
    return None                                     # a terminal step that silently succeeds


#: kind -> {violation: rule}. Every violation breaks one rule at one node only.
VIOLATIONS: dict[str, dict[str, str]] = {
    _TERMINAL: {"string-returns": "terminal-returns", "nan-returns": "terminal-returns",
                "too-many-returns": "terminal-returns", "huge-int-returns": "terminal-returns",
                "random-returns": "nondeterministic",
                "terminal-legal-actions": "terminal-legal-actions",
                "terminal-step-accepted": "terminal-step", "also-chance": "node-type",
                "terminal-player": "player", "raises": "game-exception"},
    _CHANCE: {"negative-probability": "chance-probability", "sum-not-one": "chance-sum",
              "duplicate-outcome": "chance-duplicate", "no-outcomes": "chance-empty",
              "chance-legal-actions": "chance-legal-actions",
              "unhashable-outcome": "action-hashable", "chance-player": "player",
              "not-enumerable": "chance-not-enumerable", "raises": "game-exception",
              "clone-is-self": "clone"},
    _DECISION: {"duplicate-actions": "decision-duplicate", "no-actions": "decision-empty",
                "decision-chance-outcomes": "decision-chance-outcomes",
                "bool-player": "player", "player-out-of-range": "player",
                "unhashable-key": "infoset-key", "nan-key": "infoset-key",
                "unhashable-action": "action-hashable", "raises": "game-exception",
                "clone-is-self": "clone"},
}


class Injected(Game):
    """``inner`` with one violation at ``target`` (a history); elsewhere it is ``inner``.

    ``validate`` finds ``not-enumerable`` acceptable (the node is sampled): only an exact
    lowering must refuse it.
    """

    def __init__(self, inner: Game, target: tuple, violation: str, path: tuple = ()):
        self.inner = inner
        self.num_players = inner.num_players
        self.target = target
        self.violation = violation
        self.path = path
        self.calls = [0]                    # shared by clones: for random-returns

    def _here(self, violation: str) -> bool:
        return self.violation == violation and self.path == self.target

    def clone(self):
        if self._here("clone-is-self"):
            return self
        new = Injected(self.inner.clone(), self.target, self.violation, self.path)
        new.calls = self.calls
        return new

    def is_terminal(self):
        if self._here("raises"):
            raise _Raises("a bug in the game")
        return self.inner.is_terminal()

    def is_chance(self):
        return self._here("also-chance") or self.inner.is_chance()

    def player_to_act(self):
        p = self.inner.player_to_act()
        if self._here("terminal-player") or self._here("chance-player"):
            return 0
        if self._here("bool-player"):
            return bool(p)
        if self._here("player-out-of-range"):
            return self.num_players
        return p

    def chance_outcomes(self):
        out = self.inner.chance_outcomes()
        if self.path != self.target:
            return out
        v = self.violation
        if v == "negative-probability":
            (a, p), (b, q) = out[0], out[1]
            return [(a, p - 1.0), (b, q + 1.0)] + out[2:]
        if v == "sum-not-one":
            return [(a, p / 2) for a, p in out]
        if v == "duplicate-outcome":
            return [(out[0][0], p) for _, p in out]
        if v == "no-outcomes":
            return []
        if v == "unhashable-outcome":
            return [([a], p) for a, p in out]
        if v == "not-enumerable":
            return None
        if v == "decision-chance-outcomes":
            return [(a, 1.0 / len(self.inner.legal_actions()))
                    for a in self.inner.legal_actions()]
        return out

    def sample_chance(self, rng):
        if self._here("not-enumerable"):
            outcomes = self.inner.chance_outcomes()
            return outcomes[rng.randrange(len(outcomes))]
        return self.inner.sample_chance(rng)

    def legal_actions(self):
        acts = list(self.inner.legal_actions())
        if self.path != self.target:
            return acts
        v = self.violation
        if v == "terminal-legal-actions":
            return ["more"]
        if v == "chance-legal-actions":
            return [a for a, _ in self.inner.chance_outcomes()]
        if v == "duplicate-actions":
            return acts + acts[:1]
        if v == "no-actions":
            return []
        if v == "unhashable-action":
            return [[a] for a in acts]
        return acts

    def step(self, action):
        if self._here("terminal-step-accepted"):
            return
        self.inner.step(action)
        self.path = self.path + (action,)

    def terminal_returns(self):
        r = tuple(self.inner.terminal_returns())
        if self.path != self.target:
            return r
        v = self.violation
        if v == "string-returns":
            return tuple(str(x) for x in r)
        if v == "nan-returns":
            return (math.nan,) + r[1:]
        if v == "too-many-returns":
            return r + (0.0,)
        if v == "huge-int-returns":
            return (10 ** 400,) + r[1:]
        if v == "random-returns":
            self.calls[0] += 1
            return (r[0] + self.calls[0],) + r[1:]
        return r

    def infoset_key(self, player):
        key = self.inner.infoset_key(player)
        if self._here("unhashable-key"):
            return [key]
        if self._here("nan-key"):
            return (key, math.nan)
        return key

    def __repr__(self):
        return f"Injected({self.inner!r}, {self.violation} at {self.target})"


def is_enumerable_violation(violation: str) -> bool:
    """Whether ``jaxcfr.validate`` (a probe that samples chance) must see the violation."""
    return violation != "not-enumerable"


def describe(value: Any) -> str:
    return repr(value)
