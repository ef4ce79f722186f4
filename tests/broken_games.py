"""Small deliberately broken games, one per contract rule (shared by validate and lowering tests).

Every fixture is the tiny valid game :class:`Toy` with exactly one node (or one
information set) broken, so that any checker, random or exhaustive, reports the
same rule at the same history. Each class states what a checker must report:

* ``RULE``: the ``GameError.rule`` expected.
* ``HISTORIES``: the set of acceptable ``GameError.history`` values (one path,
  except where two histories clash and either can be found second).
* ``VALIDATE_DETECTS``: whether :func:`jaxcfr.validate` (a random probe) can see
  the violation; ``False`` for what only the exhaustive lowering can check.
* ``LOWER_RULE``: the rule an exact lowering (which requires enumerable chance)
  reports, where it differs from ``RULE``; read it with :func:`lower_rule`.

``NeverEnds`` runs forever: it is for ``validate``'s trajectory limit only.

``BROKEN_GAMES`` lists the fixtures ``validate`` must reject, ``BLIND_SPOTS``
those it must accept but ``jaxcfr.lower`` must reject. ``PROBED`` are breaches no
single node shows (issue 18: sampling that disagrees with ``chance_outcomes()``, a
``copy.copy`` clone, a wrong transposition key, a bad ``nash_value()``): ``validate``
must reject them; ``LOWER_RULE = None`` where lowering cannot see them.

The valid toy game::

    chance: coin "H" | "T" (1/2 each), seen by player 0 only
      player 0: "a" | "b"
        after "a": player 1 (sees "a", not the coin): "x" | "y" -> terminal
        after "b": chance "lo" (1/3) | "hi" (2/3), public
                   player 1: "x" | "y" -> terminal
    returns: player 0 gets coin * move * scale, player 1 the negation, with
    coin = +1 for "H", -1 for "T"; move = +1 for "x", -1 for "y";
    scale = 2 after "hi", else 1.
"""

from __future__ import annotations

import copy
import math
import random

import numpy as np

from jaxcfr import CHANCE, TERMINAL, Game, GameError

__all__ = ["Toy", "BROKEN_GAMES", "BLIND_SPOTS", "PROBED", "NeverEnds", "NotAGame",
           "ZeroPlayers", "NumpyPlayer", "RaisingSampler", "lower_rule", "ALL_HISTORIES"]


def lower_rule(cls) -> str | None:
    """The rule an exact lowering must report for the fixture ``cls`` (``None``: lowering
    accepts it)."""
    if "LOWER_RULE" in vars(cls) and cls.LOWER_RULE is None:
        return None
    return getattr(cls, "LOWER_RULE", None) or cls.RULE


class Toy(Game):
    """The valid toy game (see the module docstring); ``h`` is the action path."""

    num_players = 2
    RULE: str | None = None
    HISTORIES: set = set()
    VALIDATE_DETECTS = True

    def __init__(self):
        self.h = ()

    def clone(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    # The node kinds, by history length and content.
    def _kind(self) -> str:
        h = self.h
        n = len(h)
        if n == 0:
            return "coin"
        if n == 1:
            return "p0"
        if n == 2:
            return "p1" if h[1] == "a" else "size"
        if n == 3:
            return "end" if h[1] == "a" else "p1"
        return "end"

    def is_terminal(self):
        return self._kind() == "end"

    def is_chance(self):
        return self._kind() in ("coin", "size")

    def player_to_act(self):
        kind = self._kind()
        return {"coin": CHANCE, "size": CHANCE, "end": TERMINAL, "p0": 0, "p1": 1}[kind]

    def chance_outcomes(self):
        kind = self._kind()
        if kind == "coin":
            return [("H", 0.5), ("T", 0.5)]
        if kind == "size":
            return [("lo", 1 / 3), ("hi", 2 / 3)]
        return None

    def legal_actions(self):
        kind = self._kind()
        if kind == "p0":
            return ["a", "b"]
        if kind == "p1":
            return ["x", "y"]
        return []

    def step(self, action):
        kind = self._kind()
        if kind == "end":
            raise GameError("game over", rule="illegal-action")
        # The valid game's outcomes, so that a fixture's broken list never breaks step.
        legal = [a for a, _ in Toy.chance_outcomes(self)] if kind in ("coin", "size") \
            else self.legal_actions()
        if action not in legal:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.h = self.h + (action,)

    def terminal_returns(self):
        h = self.h
        u = (1 if h[0] == "H" else -1) * (1 if h[-1] == "x" else -1) * (2 if "hi" in h else 1)
        return (float(u), float(-u))

    def infoset_key(self, player):
        h = self.h
        return f"{player}|" + "/".join(h if player == 0 else h[1:])

    def __repr__(self):
        return f"{type(self).__name__}{self.h}"


# --------------------------------------------------------------------------------------------
# Node types and terminal nodes
# --------------------------------------------------------------------------------------------

class TerminalAndChance(Toy):
    """One terminal node also claims to be a chance node."""
    RULE, HISTORIES = "node-type", {("T", "b", "hi", "y")}

    def is_chance(self):
        return self.h in self.HISTORIES or super().is_chance()


class NonFiniteReturns(Toy):
    """One terminal node returns NaN."""
    RULE, HISTORIES = "terminal-returns", {("H", "a", "x")}

    def terminal_returns(self):
        return (math.nan, 0.0) if self.h in self.HISTORIES else super().terminal_returns()


class InfiniteReturns(Toy):
    """One terminal node returns an infinite payoff."""
    RULE, HISTORIES = "terminal-returns", {("T", "b", "lo", "x")}

    def terminal_returns(self):
        return (math.inf, -math.inf) if self.h in self.HISTORIES else super().terminal_returns()


class WrongNumberOfReturns(Toy):
    """One terminal node returns three payoffs in a two-player game."""
    RULE, HISTORIES = "terminal-returns", {("T", "a", "y")}

    def terminal_returns(self):
        return (1.0, -1.0, 0.0) if self.h in self.HISTORIES else super().terminal_returns()


class NonNumericReturns(Toy):
    """One terminal node returns strings."""
    RULE, HISTORIES = "terminal-returns", {("H", "b", "lo", "x")}

    def terminal_returns(self):
        return ("win", "lose") if self.h in self.HISTORIES else super().terminal_returns()


class StringReturns(Toy):
    """One terminal node returns numbers written as strings (``float()`` would take them)."""
    RULE, HISTORIES = "terminal-returns", {("T", "a", "x")}

    def terminal_returns(self):
        return ("1", "-1") if self.h in self.HISTORIES else super().terminal_returns()


class HugeIntegerReturns(Toy):
    """One terminal node returns an integer too large for a float."""
    RULE, HISTORIES = "terminal-returns", {("H", "b", "hi", "y")}

    def terminal_returns(self):
        return (10 ** 400, -10 ** 400) if self.h in self.HISTORIES else super().terminal_returns()


class NondeterministicReturns(Toy):
    """One terminal node returns something else on every call."""
    RULE, HISTORIES = "nondeterministic", {("H", "a", "y")}

    def __init__(self):
        super().__init__()
        self.calls = [0]                  # shared by clones: counts every call

    def terminal_returns(self):
        if self.h in self.HISTORIES:
            self.calls[0] += 1
            return (float(self.calls[0]), -float(self.calls[0]))
        return super().terminal_returns()


class LegalActionsAtTerminal(Toy):
    """One terminal node still lists legal actions."""
    RULE, HISTORIES = "terminal-legal-actions", {("T", "b", "lo", "y")}

    def legal_actions(self):
        return ["x", "y"] if self.h in self.HISTORIES else super().legal_actions()


class StepAcceptedAtTerminal(Toy):
    """``step`` silently accepts a move at one terminal node."""
    RULE, HISTORIES = "terminal-step", {("H", "a", "y")}

    def step(self, action):
        if self.h in self.HISTORIES:
            return
        super().step(action)


class TerminalStepWrongError(Toy):
    """``step`` at one terminal node raises KeyError instead of GameError."""
    RULE, HISTORIES = "terminal-step", {("T", "a", "x")}

    def step(self, action):
        if self.h in self.HISTORIES:
            raise KeyError(action)
        super().step(action)


# --------------------------------------------------------------------------------------------
# Chance nodes
# --------------------------------------------------------------------------------------------

class _BadChance(Toy):
    """Base: replace the chance outcomes at the node ``HISTORIES`` names by ``OUTCOMES``."""
    OUTCOMES: list = []

    def chance_outcomes(self):
        if self.h in self.HISTORIES:
            return list(self.OUTCOMES)
        return super().chance_outcomes()

    def step(self, action):
        if self.h in self.HISTORIES:  # accept anything, so only the outcome list is at fault
            self.h = self.h + (action,)
            return
        super().step(action)


class NegativeChanceProbability(_BadChance):
    """A chance node with a negative probability (the list still sums to 1)."""
    RULE, HISTORIES = "chance-probability", {("H", "b")}
    OUTCOMES = [("lo", -0.5), ("hi", 1.5)]


class NonFiniteChanceProbability(_BadChance):
    """The root chance node has a NaN probability."""
    RULE, HISTORIES = "chance-probability", {()}
    OUTCOMES = [("H", math.nan), ("T", 0.5)]


class InfiniteChanceProbability(_BadChance):
    """A chance node has an infinite probability."""
    RULE, HISTORIES = "chance-probability", {("T", "b")}
    OUTCOMES = [("lo", math.inf), ("hi", 0.5)]


class ChanceNotSummingToOne(_BadChance):
    """A chance node whose probabilities sum to 0.75."""
    RULE, HISTORIES = "chance-sum", {("T", "b")}
    OUTCOMES = [("lo", 0.25), ("hi", 0.5)]


class EmptyChanceOutcomes(_BadChance):
    """A chance node with no outcomes."""
    RULE, HISTORIES = "chance-empty", {("H", "b")}
    OUTCOMES = []


class DuplicateChanceOutcomes(_BadChance):
    """A chance node listing the same outcome twice (probabilities still sum to 1)."""
    RULE, HISTORIES = "chance-duplicate", {("T", "b")}
    OUTCOMES = [("lo", 0.5), ("lo", 0.5)]


class MalformedChanceOutcomes(_BadChance):
    """The root chance node lists bare probabilities instead of (action, probability) pairs."""
    RULE, HISTORIES = "chance-outcomes", {()}
    OUTCOMES = [0.5, 0.5]


class LegalActionsAtChance(Toy):
    """A chance node that also reports legal actions."""
    RULE, HISTORIES = "chance-legal-actions", {("H", "b")}

    def legal_actions(self):
        return ["lo", "hi"] if self.h in self.HISTORIES else super().legal_actions()


class SamplingNotImplemented(Toy):
    """A non-enumerable chance node (outcomes ``None``) without a ``sample_chance`` override."""
    RULE, HISTORIES = "chance-sampling", {("T", "b")}
    LOWER_RULE = "chance-not-enumerable"

    def chance_outcomes(self):
        return None if self.h in self.HISTORIES else super().chance_outcomes()


class BadSampledProbability(Toy):
    """A non-enumerable chance node whose ``sample_chance`` reports probability 0."""
    RULE, HISTORIES = "chance-probability", {("H", "b")}
    LOWER_RULE = "chance-not-enumerable"

    def chance_outcomes(self):
        return None if self.h in self.HISTORIES else super().chance_outcomes()

    def sample_chance(self, rng: random.Random):
        if self.h in self.HISTORIES:
            return ("lo", 0.0)
        return super().sample_chance(rng)


# --------------------------------------------------------------------------------------------
# Decision nodes and players
# --------------------------------------------------------------------------------------------

class ChanceOutcomesAtDecision(Toy):
    """Player 0's decision node also reports chance outcomes."""
    RULE, HISTORIES = "decision-chance-outcomes", {("T",)}

    def chance_outcomes(self):
        return [("a", 1.0)] if self.h in self.HISTORIES else super().chance_outcomes()


class EmptyLegalActions(Toy):
    """A non-terminal decision node without legal actions."""
    RULE, HISTORIES = "decision-empty", {("H", "a")}

    def legal_actions(self):
        return [] if self.h in self.HISTORIES else super().legal_actions()


class DuplicateLegalActions(Toy):
    """A decision node listing the same action twice."""
    RULE, HISTORIES = "decision-duplicate", {("T", "a")}

    def legal_actions(self):
        return ["x", "x"] if self.h in self.HISTORIES else super().legal_actions()


class BadPlayerAtDecision(Toy):
    """A decision node whose player is out of range."""
    RULE, HISTORIES = "player", {("H",)}

    def player_to_act(self):
        return 2 if self.h in self.HISTORIES else super().player_to_act()


class BoolPlayer(Toy):
    """Player 1's decision node says ``True`` acts (a bool is not a player number)."""
    RULE, HISTORIES = "player", {("T", "a")}

    def player_to_act(self):
        return True if self.h in self.HISTORIES else super().player_to_act()


class UnhashableActions(Toy):
    """Player 0's decision node lists lists as actions."""
    RULE, HISTORIES = "action-hashable", {("H",)}

    def legal_actions(self):
        return [["a"], ["b"]] if self.h in self.HISTORIES else super().legal_actions()


class GameRaisesKeyError(Toy):
    """``legal_actions`` raises a KeyError (a bug in the game's own code) at one node."""
    RULE, HISTORIES = "game-exception", {("T", "b", "hi")}

    def legal_actions(self):
        if self.h in self.HISTORIES:
            return {"x": ["x", "y"]}["y"]
        return super().legal_actions()


class BadPlayerAtChance(Toy):
    """The root chance node says player 0 acts."""
    RULE, HISTORIES = "player", {()}

    def player_to_act(self):
        return 0 if self.h in self.HISTORIES else super().player_to_act()


class BadPlayerAtTerminal(Toy):
    """A terminal node says player 1 acts."""
    RULE, HISTORIES = "player", {("T", "a", "x")}

    def player_to_act(self):
        return 1 if self.h in self.HISTORIES else super().player_to_act()


# --------------------------------------------------------------------------------------------
# Information sets
# --------------------------------------------------------------------------------------------

class InconsistentActionOrder(Toy):
    """Player 1's information set ``"1|a"`` lists its actions in a coin-dependent order.

    Player 1 cannot see the coin, so ``("H", "a")`` and ``("T", "a")`` share the
    key, but the second lists ``["y", "x"]``. Either history can be met second.
    """
    RULE, HISTORIES = "infoset-actions", {("H", "a"), ("T", "a")}
    INFOSET = "1|a"

    def legal_actions(self):
        return ["y", "x"] if self.h == ("T", "a") else super().legal_actions()


class UnhashableInfosetKey(Toy):
    """Player 1's key at one node is a list."""
    RULE, HISTORIES = "infoset-key", {("H", "b", "lo")}

    def infoset_key(self, player):
        if self.h in self.HISTORIES:
            return list(self.h)
        return super().infoset_key(player)


class NaNInfosetKey(Toy):
    """Player 1's key at one node holds a NaN: it is not equal to itself."""
    RULE, HISTORIES = "infoset-key", {("T", "b", "hi")}

    def infoset_key(self, player):
        if self.h in self.HISTORIES:
            return ("size", math.nan)
        return super().infoset_key(player)


class SharedHistory(Toy):
    """``clone()`` shares one mutable history list with the original (a classic bug)."""
    RULE, HISTORIES = "clone", {()}

    def __init__(self):
        self.h = []

    def step(self, action):
        kind = self._kind()
        if kind == "end":
            raise GameError("game over", rule="illegal-action")
        self.h.append(action)                    # clone() copied the reference: shared

    def infoset_key(self, player):
        return f"{player}|" + "/".join(self.h if player == 0 else self.h[1:])


# --------------------------------------------------------------------------------------------
# Whole-game failures (no node to blame, or a runaway path)
# --------------------------------------------------------------------------------------------

class NeverEnds(Game):
    """One player says "go" forever; ``validate`` reports the first 20 moves."""
    RULE, HISTORIES = "termination", {("go",) * 20}
    num_players = 1

    def __init__(self):
        self.moves = 0

    def clone(self):
        new = NeverEnds()
        new.moves = self.moves
        return new

    def is_terminal(self):
        return False

    def is_chance(self):
        return False

    def player_to_act(self):
        return 0

    def legal_actions(self):
        return ["go"]

    def step(self, action):
        if action != "go":
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.moves += 1

    def terminal_returns(self):
        raise GameError("not terminal")

    def infoset_key(self, player):
        return self.moves


class NotAGame:
    """Has the methods but does not subclass :class:`jaxcfr.Game`."""
    RULE, HISTORIES = "protocol", {None}
    num_players = 2


class ZeroPlayers(Toy):
    """``num_players`` is 0."""
    RULE, HISTORIES = "num-players", {None}
    num_players = 0


# --------------------------------------------------------------------------------------------
# Valid for the random probe, invalid for the exhaustive lowering
# --------------------------------------------------------------------------------------------

class NotEnumerableChance(Toy):
    """A chance node that can only be sampled: fine for ``validate``, not for exact lowering."""
    RULE, HISTORIES = "chance-not-enumerable", {("H", "b")}
    VALIDATE_DETECTS = False

    def chance_outcomes(self):
        return None if self.h in self.HISTORIES else super().chance_outcomes()

    def sample_chance(self, rng: random.Random):
        if self.h in self.HISTORIES:
            return ("lo", 1 / 3) if rng.random() < 1 / 3 else ("hi", 2 / 3)
        return super().sample_chance(rng)


class ForgetsOwnAction(Toy):
    """Player 1 moves twice after ``"b"`` and forgets its first move: no perfect recall.

    After ``(c, "b", size, m)`` player 1 moves again (``"x"``/``"y"``) with the
    key ``"1|b/size/again"``, the same for both of its earlier moves ``m``. The
    legal actions agree, so only the exhaustive strong-recall check sees it;
    ``RULE`` is the name ``jaxcfr.lower`` is expected to use.
    """
    RULE = "perfect-recall"
    HISTORIES = {(c, "b", s, m) for c in "HT" for s in ("lo", "hi") for m in "xy"}
    VALIDATE_DETECTS = False

    def _kind(self):
        h = self.h
        if len(h) == 4 and h[1] == "b":
            return "p1"
        if len(h) == 5:
            return "end"
        return super()._kind()

    def infoset_key(self, player):
        h = self.h
        if player == 1 and len(h) == 4 and h[1] == "b":
            return f"1|b/{h[2]}/again"
        return super().infoset_key(player)


class AbsentMinded(Toy):
    """Player 0's information set at ``(c,)`` recurs after its own move ``"a"``.

    After ``(c, "a")`` it is player 0's turn again with the same key as at
    ``(c,)`` and the same legal actions: absent-mindedness, which only the
    exhaustive strong-recall check detects.
    """
    RULE = "absent-minded"
    HISTORIES = {("H", "a"), ("T", "a")}
    VALIDATE_DETECTS = False

    def _kind(self):
        h = self.h
        if len(h) == 2 and h[1] == "a":
            return "p0"
        if len(h) == 3 and h[1] == "a":
            return "end"
        return super()._kind()

    def infoset_key(self, player):
        h = self.h
        if player == 0 and len(h) == 2 and h[1] == "a":
            return f"0|{h[0]}"
        return super().infoset_key(player)

    def terminal_returns(self):
        h = self.h
        u = (1 if h[0] == "H" else -1) * (1 if h[-1] == "a" else -1)
        return (float(u), float(-u))


BROKEN_GAMES = [
    TerminalAndChance, NonFiniteReturns, InfiniteReturns, WrongNumberOfReturns,
    NonNumericReturns, StringReturns, HugeIntegerReturns, NondeterministicReturns,
    LegalActionsAtTerminal, StepAcceptedAtTerminal, TerminalStepWrongError,
    NegativeChanceProbability, NonFiniteChanceProbability, InfiniteChanceProbability,
    ChanceNotSummingToOne, EmptyChanceOutcomes, DuplicateChanceOutcomes,
    MalformedChanceOutcomes, LegalActionsAtChance, SamplingNotImplemented, BadSampledProbability,
    ChanceOutcomesAtDecision, EmptyLegalActions, DuplicateLegalActions,
    BadPlayerAtDecision, BoolPlayer, UnhashableActions, GameRaisesKeyError, BadPlayerAtChance,
    BadPlayerAtTerminal, InconsistentActionOrder, UnhashableInfosetKey, NaNInfosetKey,
    SharedHistory,
]

BLIND_SPOTS = [NotEnumerableChance, ForgetsOwnAction, AbsentMinded]


# --------------------------------------------------------------------------------------------
# Breaches no single node shows (PROBED)
# --------------------------------------------------------------------------------------------

def _all_histories() -> set:
    out, stack = set(), [Toy()]
    while stack:
        s = stack.pop()
        out.add(s.h)
        actions = [a for a, _ in s.chance_outcomes()] if s.is_chance() else s.legal_actions()
        for a in actions:
            c = s.clone()
            c.step(a)
            stack.append(c)
    return out


#: Every history of the toy game.
ALL_HISTORIES = _all_histories()


class BiasedSampling(Toy):
    """``sample_chance`` at the coin says "H" with probability 1/2 but draws it 9 times in 10:
    exact solvers and sampled chance would solve two different games."""
    RULE, HISTORIES, LOWER_RULE = "chance-sampling", {()}, None

    def sample_chance(self, rng):
        if not self.h:
            return ("H", 0.5) if rng.random() < 0.9 else ("T", 0.5)
        return super().sample_chance(rng)


class SampledOutcomeNotListed(Toy):
    """``sample_chance`` at the size node draws an outcome ``chance_outcomes()`` never lists."""
    RULE, HISTORIES, LOWER_RULE = "chance-sampling", {("H", "b"), ("T", "b")}, None

    def sample_chance(self, rng):
        if len(self.h) == 2:
            return ("huge", 1 / 3)
        return super().sample_chance(rng)


class ShallowCopyClone(Toy):
    """``clone()`` is ``copy.copy``: the clone shares the ``stakes`` dict that ``step`` writes,
    so stepping one state changes the payoffs of the others (the node itself looks the same)."""
    RULE, HISTORIES = "clone", {()}          # lowering probes it too (issue 33)

    def __init__(self):
        self.h = ()
        self.stakes = {"pot": 1}

    def clone(self):
        return copy.copy(self)

    def step(self, action):
        super().step(action)
        if action in ("a", "b", "x", "y"):
            self.stakes["pot"] += 1

    def terminal_returns(self):
        u, v = super().terminal_returns()
        return (u * self.stakes["pot"], v * self.stakes["pot"])


class WrongStateHash(Toy):
    """``caches_transpositions()`` but ``state_hash()`` is the depth: different states share it."""
    RULE, LOWER_RULE = "transposition", None
    HISTORIES = ALL_HISTORIES - {()}

    def state_hash(self):
        return len(self.h)

    def caches_transpositions(self):
        return True


class ThreeNashValues(Toy):
    """``nash_value()`` has three entries in a two-player game."""
    RULE, HISTORIES = "nash-value", {()}

    def nash_value(self):
        return (0.0, 0.0, 0.0)


PROBED = [BiasedSampling, SampledOutcomeNotListed, ShallowCopyClone, WrongStateHash,
          ThreeNashValues]


class RaisingSampler(Toy):
    """The size node cannot be listed and ``sample_chance`` there raises now and then (once
    in 2,000 draws): ``validate``'s 256 trajectories pass, a sampled run meets it."""

    def chance_outcomes(self):
        return None if len(self.h) == 2 else super().chance_outcomes()

    def sample_chance(self, rng):
        if len(self.h) == 2:
            if rng.random() < 1 / 2000:
                raise RuntimeError("the dealer dropped the deck")
            return ("lo", 1 / 3) if rng.random() < 1 / 3 else ("hi", 2 / 3)
        return super().sample_chance(rng)


class NumpyPlayer(Toy):
    """Valid: players are NumPy integers (what a game that keeps its state in arrays returns)."""

    def player_to_act(self):
        p = super().player_to_act()
        return np.int64(p) if p >= 0 else p
