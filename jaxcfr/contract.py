"""The game contract: its vocabulary and its per-node rules.

The vocabulary (:data:`CHANCE`, :data:`TERMINAL`, :class:`GameError`) is what a
game implementation needs besides :class:`jaxcfr.Game`; the rules are checked by
:func:`jaxcfr.validate` (on random trajectories) and :func:`jaxcfr.lower` (on every
node). :func:`inspect_node` reads one state through the protocol, checks every
node-local rule and returns what it read, so that callers never ask the game twice.

This module imports nothing else of jaxcfr: the protocol (:mod:`jaxcfr.game`), the
probe (:mod:`jaxcfr.validate`) and the walker (:mod:`jaxcfr.lowering`) all build on it.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, NamedTuple, Sequence

__all__ = ["CHANCE", "TERMINAL", "GameError", "format_history", "DECISION", "CHANCE_NODE",
           "TERMINAL_NODE", "NodeInfo", "inspect_node", "check_protocol",
           "check_terminal_step_refused", "player_to_act_consistent", "hashable_key",
           "CHANCE_SUM_TOLERANCE", "MAX_TRAJECTORY_LENGTH", "PROTOCOL_METHODS"]

#: ``player_to_act()`` at a chance node.
CHANCE = -1
#: ``player_to_act()`` at a terminal node.
TERMINAL = -4


def format_history(history: Sequence[Any]) -> str:
    """The action path from the root, as printed in error messages."""
    if not history:
        return "<root>"
    return " -> ".join(str(a) for a in history)


class GameError(Exception):
    """A game broke the contract, or a move was refused.

    Attributes:
      rule: short name of the rule broken (e.g. ``"chance-sum"``), or ``None``.
      history: the action path from the root to the offending node, or ``None``
        when unknown (e.g. raised inside ``step`` before the caller added it).
      infoset: the information-set key involved, when there is one.
    """

    def __init__(self, message: str, *, rule: str | None = None,
                 history: Sequence[Any] | None = None, infoset: Any = None):
        self.rule = rule
        self.history = None if history is None else tuple(history)
        self.infoset = infoset
        self.detail = message
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.rule:
            parts.append(f"[{self.rule}]")
        parts.append(self.detail)
        if self.history is not None:
            parts.append(f"(history: {format_history(self.history)})")
        if self.infoset is not None:
            parts.append(f"(information set: {self.infoset!r})")
        return " ".join(parts)

    def with_context(self, *, history: Sequence[Any] | None = None,
                     infoset: Any = None) -> "GameError":
        """A copy of this error with the history / infoset filled in if missing."""
        return GameError(
            self.detail, rule=self.rule,
            history=self.history if self.history is not None else history,
            infoset=self.infoset if self.infoset is not None else infoset)


# Host node kinds, as read by inspect_node (the lowered ``node_kind`` uses the same codes,
# plus ``jaxcfr.tensors.PADDING``).
DECISION = 0
CHANCE_NODE = 1
TERMINAL_NODE = 2

#: A trajectory longer than this is reported as a game that never ends.
MAX_TRAJECTORY_LENGTH = 1_000_000
#: How far chance probabilities may sum from 1 (float rounding of exact rationals).
CHANCE_SUM_TOLERANCE = 1e-9


class NodeInfo(NamedTuple):
    """What :func:`inspect_node` read at one state."""
    kind: int                      # DECISION / CHANCE_NODE / TERMINAL_NODE
    player: int                    # acting player; CHANCE or TERMINAL otherwise
    actions: tuple                 # legal actions, or chance outcomes' actions
    probs: tuple | None            # chance probabilities (None: not enumerable / not chance)
    returns: tuple | None          # terminal returns (None elsewhere)

#: The methods every game state must provide (the abstract methods of ``jaxcfr.Game``).
PROTOCOL_METHODS = ("is_terminal", "is_chance", "player_to_act", "chance_outcomes",
                    "sample_chance", "legal_actions", "step", "clone", "terminal_returns",
                    "infoset_key")


def check_protocol(game: Any) -> int:
    """Check that ``game`` looks like a game state; return its number of players.

    Any object with the protocol's methods and a positive ``num_players`` is accepted
    (subclassing :class:`jaxcfr.Game` is the easy way to get there).

    Raises:
      GameError: ``protocol`` (a method is missing) or ``num-players``.
    """
    missing = [m for m in PROTOCOL_METHODS if not callable(getattr(game, m, None))]
    if missing:
        raise GameError(f"{type(game).__name__} does not implement the jaxcfr.Game protocol "
                        f"(missing {', '.join(missing)})", rule="protocol")
    players = getattr(game, "num_players", None)
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise GameError(f"num_players is {players!r} (must be a positive integer)",
                        rule="num-players")
    return players


def _fail(rule: str, message: str, history: Sequence[Any], infoset: Any = None):
    raise GameError(message, rule=rule, history=history, infoset=infoset)


def inspect_node(state: Game, num_players: int, history: Sequence[Any],
                 *, require_enumerable: bool = False) -> NodeInfo:
    """Check the node-local rules at ``state`` and return what it reported.

    Args:
      state: the state to check.
      num_players: the game's number of players.
      history: the action path from the root (for error messages only).
      require_enumerable: raise if chance here cannot be enumerated.

    Raises:
      GameError: naming the rule broken and ``history``.
    """
    try:
        terminal = bool(state.is_terminal())
        chance = bool(state.is_chance())
    except GameError as e:
        raise e.with_context(history=history)
    if terminal and chance:
        _fail("node-type", "is_terminal() and is_chance() are both true", history)
    if terminal:
        returns = state.terminal_returns()
        try:
            returns = tuple(float(r) for r in returns)
        except (TypeError, ValueError):
            _fail("terminal-returns", f"terminal_returns() is not a sequence of numbers: {returns!r}",
                  history)
        if len(returns) != num_players:
            _fail("terminal-returns",
                  f"terminal_returns() has {len(returns)} entries for {num_players} players", history)
        if not all(math.isfinite(r) for r in returns):
            _fail("terminal-returns", f"terminal_returns() is not finite: {returns}", history)
        return NodeInfo(TERMINAL_NODE, TERMINAL, (), None, returns)

    actions = tuple(state.legal_actions())
    outcomes = state.chance_outcomes()
    if chance:
        if actions:
            _fail("chance-legal-actions",
                  f"legal_actions() must be empty at a chance node, got {list(actions)}", history)
        if outcomes is None:
            if require_enumerable:
                _fail("chance-not-enumerable",
                      "chance_outcomes() is None: this chance node cannot be enumerated "
                      "(exact lowering needs enumerable chance; use sampled chance)", history)
            return NodeInfo(CHANCE_NODE, CHANCE, (), None, None)
        outcomes = list(outcomes)
        if not outcomes:
            _fail("chance-empty", "chance_outcomes() is empty", history)
        try:
            chance_actions = tuple(a for a, _ in outcomes)
            probs = tuple(float(p) for _, p in outcomes)
        except (TypeError, ValueError):
            _fail("chance-outcomes", f"chance_outcomes() must be (action, probability) pairs, "
                  f"got {outcomes!r}", history)
        for a, p in zip(chance_actions, probs):
            if not math.isfinite(p) or p < 0:
                _fail("chance-probability",
                      f"chance outcome {a!r} has probability {p} (must be finite and >= 0)", history)
        total = math.fsum(probs)
        if abs(total - 1.0) > CHANCE_SUM_TOLERANCE:
            _fail("chance-sum", f"chance probabilities sum to {total!r}, not 1", history)
        if len(set(chance_actions)) != len(chance_actions):
            _fail("chance-duplicate", f"chance_outcomes() repeats an outcome: {list(chance_actions)}",
                  history)
        return NodeInfo(CHANCE_NODE, CHANCE, chance_actions, probs, None)

    if outcomes is not None:
        _fail("decision-chance-outcomes",
              "chance_outcomes() must be None at a decision node", history)
    if not actions:
        _fail("decision-empty", "legal_actions() is empty at a non-terminal decision node", history)
    if len(set(actions)) != len(actions):
        _fail("decision-duplicate", f"legal_actions() repeats an action: {list(actions)}", history)
    player = state.player_to_act()
    if not isinstance(player, int) or not 0 <= player < num_players:
        _fail("player", f"player_to_act() is {player!r} at a decision node "
              f"(must be in 0..{num_players - 1})", history)
    return NodeInfo(DECISION, player, actions, None, None)


def check_terminal_step_refused(state: Game, history: Sequence[Any]) -> None:
    """``step`` at a terminal node must raise :class:`GameError` (and nothing else)."""
    probe = state.clone()
    try:
        probe.step(None)
    except GameError:
        return
    except Exception as e:  # noqa: BLE001 - any other exception is a contract failure
        _fail("terminal-step", f"step() at a terminal node raised {type(e).__name__}: {e} "
              "(it must raise GameError)", history)
    _fail("terminal-step", "step() at a terminal node was accepted (it must raise GameError)",
          history)


def player_to_act_consistent(state: Game, info: NodeInfo, history: Sequence[Any]) -> None:
    """``player_to_act()`` agrees with the node type."""
    p = state.player_to_act()
    if info.kind == CHANCE_NODE and p != CHANCE:
        _fail("player", f"player_to_act() is {p!r} at a chance node (must be CHANCE={CHANCE})",
              history)
    if info.kind == TERMINAL_NODE and p != TERMINAL:
        _fail("player", f"player_to_act() is {p!r} at a terminal node "
              f"(must be TERMINAL={TERMINAL})", history)


def hashable_key(key: Hashable, history: Sequence[Any], player: int) -> Hashable:
    """Return ``key`` if it is hashable, else raise a GameError."""
    try:
        hash(key)
    except TypeError:
        _fail("infoset-key", f"infoset_key({player}) is not hashable: {key!r}", history)
    return key
