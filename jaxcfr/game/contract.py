"""The game contract: its vocabulary and its per-node rules.

The vocabulary (:data:`CHANCE`, :data:`TERMINAL`, :class:`GameError`) is what a
game implementation needs besides :class:`jaxcfr.Game`; the rules are checked by
:func:`jaxcfr.validate` (on random trajectories) and :func:`jaxcfr.lower` (on every
node). :func:`inspect_node` reads one state through the protocol, checks every
node-local rule and returns what it read, so that callers never ask the game twice.

This module imports nothing else of jaxcfr: the protocol (:mod:`jaxcfr.game.protocol`), the
probe (:mod:`jaxcfr.validate`) and the walker (:mod:`jaxcfr.lowering.lower`) all build on it.
"""

from __future__ import annotations

import math
import numbers
import os
import traceback
from typing import Any, Callable, Hashable, NamedTuple, NoReturn, Sequence

__all__ = ["CHANCE", "TERMINAL", "GameError", "format_history", "DECISION", "CHANCE_NODE",
           "TERMINAL_NODE", "NodeInfo", "inspect_node", "check_protocol",
           "check_terminal_step_refused", "player_to_act_consistent", "hashable_key",
           "CHANCE_SUM_TOLERANCE", "MAX_TRAJECTORY_LENGTH", "PROTOCOL_METHODS",
           "game_exception", "reraise_as_game_error", "check_clone_independent", "clone_error",
           "node_snapshot",
           "real_number", "acting_player", "check_nash_value"]

# Game states are annotated Any: the protocol (jaxcfr.game.protocol) imports this module, so
# importing Game here, even under TYPE_CHECKING, would close an import loop (the loop check in
# tests/test_structure.py reads every import).

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
        when unknown (e.g. raised inside ``step`` before the caller added it). A game
        that can rebuild its path may pass a function of no arguments that returns it:
        it is called when the history is first read (an error that is raised and caught
        on every terminal node, such as refusing ``step`` there, then costs no path).
      infoset: the information-set key involved, when there is one.
    """

    # A walk that probes ``step`` at every terminal node makes and catches one GameError
    # per terminal: the fields are slots (no instance dictionary to make and free, a
    # third of the error's cost), and the message is rendered by __str__, when shown.
    __slots__ = ("rule", "_history", "infoset", "detail")

    def __init__(self, message: str, *, rule: str | None = None,
                 history: Sequence[Any] | Callable[[], Sequence[Any]] | None = None,
                 infoset: Any = None):
        # (Exception.__new__ has already stored ``args``.)
        self.rule = rule
        self._history = history if history is None or callable(history) else tuple(history)
        self.infoset = infoset
        self.detail = message

    def __reduce__(self):
        # Exceptions pickle their instance dictionary, which holds no slots.
        state = dict(self.__dict__)
        state.update(rule=self.rule, _history=self.history, infoset=self.infoset,
                     detail=self.detail)
        return type(self), self.args, state

    @property
    def history(self) -> tuple | None:
        if callable(self._history):
            self._history = tuple(self._history())
        return self._history

    def __str__(self) -> str:
        return self._render()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._render()!r})"

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
        public = callable(getattr(game, "hands", None)) and \
            callable(getattr(game, "terminal_value", None))
        hint = ("; it is a PublicGame: jaxcfr.lower_public / jaxcfr.solve_public take it, "
                "and jaxcfr.expand_public(game) is its history tree") if public else ""
        raise GameError(f"{type(game).__name__} does not implement the jaxcfr.Game protocol "
                        f"(missing {', '.join(missing)}){hint}", rule="protocol")
    players = getattr(game, "num_players", None)
    if isinstance(players, bool) or not isinstance(players, int) or players < 1:
        raise GameError(f"num_players is {players!r} (must be a positive integer)",
                        rule="num-players")
    return players


def _fail(rule: str, message: str, history: Sequence[Any], infoset: Any = None):
    raise GameError(message, rule=rule, history=history, infoset=infoset)


def _is_bool(x: Any) -> bool:
    """A Python or NumPy bool (NumPy's is not a ``bool`` subclass)."""
    return isinstance(x, bool) or (type(x).__module__ == "numpy" and
                                   type(x).__name__ in ("bool", "bool_"))


def real_number(x: Any) -> float | None:
    """``float(x)`` for a real number (int, float, Fraction, Decimal, NumPy scalars), else None.

    Strings are not numbers here (``float("1")`` would accept them), nor are bools.
    Raises ``OverflowError`` for an integer or fraction too large for a float.
    """
    if isinstance(x, (str, bytes, bytearray)) or _is_bool(x) or \
            not hasattr(type(x), "__float__"):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def acting_player(player: Any, num_players: int) -> int | None:
    """``player`` as an int if it is an integer in ``0..num_players-1`` (NumPy integers
    too, bools not), else None."""
    if _is_bool(player) or not isinstance(player, numbers.Integral):
        return None
    player = int(player)
    return player if 0 <= player < num_players else None


def _unequal_to_itself(key: Any) -> bool:
    """Whether ``key`` (or a part of a tuple / frozenset key) is not equal to itself (NaN)."""
    if isinstance(key, (str, bytes, int)):
        return False
    if isinstance(key, (tuple, frozenset)):
        return any(_unequal_to_itself(k) for k in key)
    try:
        return bool(key != key)
    except Exception:  # noqa: BLE001 - a key that cannot compare to itself is no key
        return True


#: Source files of the checks themselves: an exception raised in them is a jaxcfr bug,
#: not the game's (see game_exception).
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CHECKER_FILES = {os.path.join(_PACKAGE, *name.split("/"))
                  for name in ("game/contract.py", "game/validate.py", "game/probes.py",
                               "game/determinize.py", "lowering/lower.py",
                               "profiles/host_values.py")}


def game_exception(exc: BaseException, history: Sequence[Any]) -> GameError | None:
    """The GameError for an exception the game's own code raised, or None for one of ours.

    The message names the exception and the innermost frame of the game's code
    (``KeyError: 'x' in legal_actions() at mygame.py:42``), under the rule
    ``game-exception`` with ``history``.
    """
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames or os.path.abspath(frames[-1].filename) in _CHECKER_FILES:
        return None
    where = frames[-1]
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return GameError(f"the game raised {detail} in {where.name}() at "
                     f"{os.path.basename(where.filename)}:{where.lineno}",
                     rule="game-exception", history=history)


def reraise_as_game_error(exc: BaseException, history: Sequence[Any]) -> NoReturn:
    """Raise ``exc``, caught around a game's code at ``history``, as the contract reports it.

    The one owner of "a game's exception becomes a GameError with its history" (the
    probe, the walks, the determinizer; call it in an ``except Exception`` clause): a
    :class:`GameError` without a history gets ``history`` (its traceback suppressed); an
    exception the game's own code raised becomes the ``game-exception`` GameError of
    :func:`game_exception` (caused by it); any other, ours, propagates unchanged.
    """
    if isinstance(exc, GameError):
        if exc.history is None:
            raise exc.with_context(history=history) from None
        raise exc
    err = game_exception(exc, history)
    if err is None:
        raise exc
    raise err from exc


def node_snapshot(state: Any, info: "NodeInfo") -> tuple:
    """What a state reports at a node (kind, player, actions, probabilities, returns, the
    acting player's key): equal before and after anything that must not change it."""
    key = state.infoset_key(info.player) if info.kind == DECISION else None
    return (bool(state.is_terminal()), bool(state.is_chance()), info.kind, info.player,
            info.actions, info.probs, info.returns, key)


def check_clone_independent(state: Any, info: "NodeInfo", action: Any, num_players: int,
                            history: Sequence[Any]) -> None:
    """Stepping a clone of ``state`` must leave ``state`` as it was (rule ``clone``).

    Catches clones that share a mutable history (or any other state) with their
    original: the random probe and the exhaustive walk both step clones.
    """
    before = node_snapshot(state, info)
    probe = state.clone()
    if probe is state:
        _fail("clone", "clone() returned the state itself (it must return an independent copy)",
              history)
    probe.step(action)
    again = inspect_node(state, num_players, history)
    if node_snapshot(state, again) != before:
        raise clone_error(action, history)


def clone_error(action: Any, history: Sequence[Any]) -> GameError:
    """The ``clone`` rule's error: stepping a clone with ``action`` changed the original."""
    return GameError(f"stepping a clone with {action!r} changed the original state (clone() "
                     "must return an independent copy: copy mutable histories and lists)",
                     rule="clone", history=history)


def inspect_node(state: Any, num_players: int, history: Sequence[Any],
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
        returns = _returns(state.terminal_returns(), num_players, history)
        again = _returns(state.terminal_returns(), num_players, history)
        if again != returns:
            _fail("nondeterministic", f"terminal_returns() gave {returns}, then {again} at the "
                  "same history (a game must be deterministic: randomness belongs in chance "
                  "nodes)", history)
        actions = tuple(state.legal_actions())
        if actions:
            _fail("terminal-legal-actions", f"legal_actions() must be empty at a terminal node, "
                  f"got {list(actions)}", history)
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
                      "chance_outcomes() is None: this chance node cannot be enumerated, and "
                      "lowering the whole tree needs every chance node's outcomes and "
                      "probabilities", history)
            return NodeInfo(CHANCE_NODE, CHANCE, (), None, None)
        outcomes = list(outcomes)
        if not outcomes:
            _fail("chance-empty", "chance_outcomes() is empty", history)
        try:
            chance_actions = tuple(a for a, _ in outcomes)
            probs = tuple(real_number(p) for _, p in outcomes)
        except (TypeError, ValueError):
            _fail("chance-outcomes", f"chance_outcomes() must be (action, probability) pairs, "
                  f"got {outcomes!r}", history)
        except OverflowError:
            _fail("chance-probability", "a chance probability is too large for a float", history)
        if None in probs:
            _fail("chance-outcomes", f"chance_outcomes() must pair each action with a number, "
                  f"got {outcomes!r}", history)
        _hashable_actions(chance_actions, "chance_outcomes()", history)
        for a, p in zip(chance_actions, probs):
            if not math.isfinite(p) or p < 0:
                _fail("chance-probability",
                      f"chance outcome {a!r} has probability {p} (must be finite and >= 0)",
                      history)
        total = math.fsum(probs)
        if abs(total - 1.0) > CHANCE_SUM_TOLERANCE:
            _fail("chance-sum", f"chance probabilities sum to {total!r}, not 1", history)
        if len(set(chance_actions)) != len(chance_actions):
            _fail("chance-duplicate",
                  f"chance_outcomes() repeats an outcome: {list(chance_actions)}", history)
        return NodeInfo(CHANCE_NODE, CHANCE, chance_actions, probs, None)

    if outcomes is not None:
        _fail("decision-chance-outcomes",
              "chance_outcomes() must be None at a decision node", history)
    if not actions:
        _fail("decision-empty", "legal_actions() is empty at a non-terminal decision node", history)
    _hashable_actions(actions, "legal_actions()", history)
    if len(set(actions)) != len(actions):
        _fail("decision-duplicate", f"legal_actions() repeats an action: {list(actions)}", history)
    raw = state.player_to_act()
    player = acting_player(raw, num_players)
    if player is None:
        _fail("player", f"player_to_act() is {raw!r} at a decision node "
              f"(must be an integer in 0..{num_players - 1})", history)
    return NodeInfo(DECISION, player, actions, None, None)


def _returns(raw: Any, num_players: int, history: Sequence[Any]) -> tuple:
    """``terminal_returns()`` as floats, or the ``terminal-returns`` error."""
    try:
        items = list(raw)
    except TypeError:
        _fail("terminal-returns", f"terminal_returns() is not a sequence of numbers: {raw!r}",
              history)
    try:
        returns = tuple(real_number(r) for r in items)
    except OverflowError:
        _fail("terminal-returns", "terminal_returns() holds a number too large for a float "
              f"(over {_FLOAT_MAX:.3g})", history)
    if None in returns:
        bad = items[returns.index(None)]
        _fail("terminal-returns", f"terminal_returns() must be numbers, got {bad!r} "
              f"({type(bad).__name__}) in {raw!r}", history)
    if len(returns) != num_players:
        _fail("terminal-returns",
              f"terminal_returns() has {len(returns)} entries for {num_players} players", history)
    if not all(math.isfinite(r) for r in returns):
        _fail("terminal-returns", f"terminal_returns() is not finite: {returns}", history)
    return returns


_FLOAT_MAX = 1.7976931348623157e308


def _hashable_actions(actions: tuple, where: str, history: Sequence[Any]) -> None:
    for a in actions:
        try:
            hash(a)
        except TypeError:
            _fail("action-hashable", f"{where} lists {a!r}, which is not hashable (actions "
                  "must be hashable: use a tuple, not a list)", history)


def check_nash_value(game: Any, num_players: int) -> tuple[float, float] | None:
    """``game.nash_value()`` at the root as two floats, or ``None`` (rule ``nash-value``).

    It is only read for two-player games; there it must be ``None`` or two finite numbers
    (player 0's and player 1's equilibrium values).
    """
    if num_players != 2:
        return None
    try:
        raw = game.nash_value()
    except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule and history
        reraise_as_game_error(exc, ())
    if raw is None:
        return None
    try:
        items = list(raw)
    except TypeError:
        items = None
    try:
        values = None if items is None else [real_number(v) for v in items]
    except OverflowError:
        values = None
    if values is None or len(values) != 2 or None in values or \
            not all(math.isfinite(v) for v in values):
        _fail("nash-value", f"nash_value() is {raw!r}: it must be None or two finite numbers "
              "(each player's equilibrium value)", ())
    return values[0], values[1]


def check_terminal_step_refused(state: Any, history: Sequence[Any]) -> None:
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


def player_to_act_consistent(state: Any, info: NodeInfo, history: Sequence[Any]) -> None:
    """``player_to_act()`` agrees with the node type."""
    p = state.player_to_act()
    if info.kind == CHANCE_NODE and p != CHANCE:
        _fail("player", f"player_to_act() is {p!r} at a chance node (must be CHANCE={CHANCE})",
              history)
    if info.kind == TERMINAL_NODE and p != TERMINAL:
        _fail("player", f"player_to_act() is {p!r} at a terminal node "
              f"(must be TERMINAL={TERMINAL})", history)


def hashable_key(key: Hashable, history: Sequence[Any], player: int) -> Hashable:
    """Return ``key`` if it is hashable and equal to itself, else raise a GameError."""
    try:
        hash(key)
    except TypeError:
        _fail("infoset-key", f"infoset_key({player}) is not hashable: {key!r}", history)
    if _unequal_to_itself(key):
        _fail("infoset-key", f"infoset_key({player}) is not equal to itself (a NaN?): {key!r}",
              history)
    return key
