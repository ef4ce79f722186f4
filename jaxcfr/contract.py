"""Per-node contract checks, shared by :func:`jaxcfr.validate` and :func:`jaxcfr.lower`.

:func:`inspect_node` reads one state through the Game protocol, checks every
node-local rule of the contract and returns what it read, so that callers never
ask the game twice.
"""

from __future__ import annotations

import math
from typing import Any, Hashable, NamedTuple, Sequence

from jaxcfr.game import CHANCE, TERMINAL, Game, GameError

__all__ = ["DECISION", "CHANCE_NODE", "TERMINAL_NODE", "PADDING", "NodeInfo",
           "inspect_node", "check_terminal_step_refused", "CHANCE_SUM_TOLERANCE"]

# Node kinds, as stored in ``LoweredGame.node_kind``.
DECISION = 0
CHANCE_NODE = 1
TERMINAL_NODE = 2
PADDING = 3

#: How far chance probabilities may sum from 1 (float rounding of exact rationals).
CHANCE_SUM_TOLERANCE = 1e-9


class NodeInfo(NamedTuple):
    """What :func:`inspect_node` read at one state."""
    kind: int                      # DECISION / CHANCE_NODE / TERMINAL_NODE
    player: int                    # acting player; CHANCE or TERMINAL otherwise
    actions: tuple                 # legal actions, or chance outcomes' actions
    probs: tuple | None            # chance probabilities (None: not enumerable / not chance)
    returns: tuple | None          # terminal returns (None elsewhere)


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
