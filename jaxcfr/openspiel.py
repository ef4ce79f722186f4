"""OpenSpiel games as jaxcfr Games (needs the ``openspiel`` extra).

:func:`wrap` adapts any sequential (turn-based) OpenSpiel game; :func:`load`
reads a game string, and is what ``jaxcfr.load_game("openspiel:NAME(k=v)")``
calls. Actions are OpenSpiel's integer action ids (the same ids at chance
nodes); the information-set key of a player is OpenSpiel's
``information_state_string(player)``.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("openspiel:kuhn_poker(players=3)")
    >>> jaxcfr.lower(game).infosets_per_player
    (16, 16, 16)
"""

from __future__ import annotations

import numbers
import random
from typing import Any, Hashable

from jaxcfr.game import CHANCE, TERMINAL, Game, GameError
from jaxcfr.registry import parse_game_string

__all__ = ["OpenSpielGame", "wrap", "load", "INSTALL_HINT"]

INSTALL_HINT = "install the openspiel extra: pip install 'jaxcfr[openspiel]'"


def _pyspiel():
    try:
        import pyspiel
    except ImportError:
        raise GameError(f"OpenSpiel (pyspiel) is not installed; {INSTALL_HINT}",
                        rule="openspiel-missing") from None
    return pyspiel


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class OpenSpielGame(Game):
    """A state of an OpenSpiel game, through the jaxcfr Game protocol.

    Wraps a ``pyspiel.State``; ``step`` checks that the action is legal (OpenSpiel
    itself may accept an illegal action silently) and raises :class:`GameError`
    at a terminal node.
    """

    __slots__ = ("_state", "num_players", "_enumerable")

    def __init__(self, state, num_players: int, enumerable_chance: bool = True):
        self._state = state
        self.num_players = num_players
        self._enumerable = enumerable_chance

    @property
    def pyspiel_state(self):
        """The wrapped ``pyspiel.State`` (do not mutate it)."""
        return self._state

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._state.is_terminal()

    def is_chance(self) -> bool:
        return self._state.is_chance_node()

    def player_to_act(self) -> int:
        s = self._state
        if s.is_terminal():
            return TERMINAL
        if s.is_chance_node():
            return CHANCE
        return s.current_player()

    # -- chance ------------------------------------------------------------
    def chance_outcomes(self):
        s = self._state
        if not self._enumerable or not s.is_chance_node():
            return None
        return [(int(a), float(p)) for a, p in s.chance_outcomes()]

    def sample_chance(self, rng: random.Random) -> tuple[Hashable, float]:
        outcomes = [(int(a), float(p)) for a, p in self._state.chance_outcomes()]
        actions, probs = zip(*outcomes)
        i = rng.choices(range(len(actions)), weights=probs)[0]
        return actions[i], probs[i]

    # -- decisions ---------------------------------------------------------
    def legal_actions(self) -> list[int]:
        s = self._state
        if s.is_terminal() or s.is_chance_node():
            return []
        return list(s.legal_actions())

    def step(self, action: Hashable) -> None:
        s = self._state
        if s.is_terminal():
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if s.is_chance_node():
            legal = [a for a, _ in s.chance_outcomes()]
        else:
            legal = s.legal_actions()
        if isinstance(action, bool) or not isinstance(action, numbers.Integral) \
                or int(action) not in legal:
            raise GameError(f"illegal action {action!r}; legal: {list(legal)}",
                            rule="illegal-action")
        s.apply_action(int(action))

    def clone(self) -> "OpenSpielGame":
        return OpenSpielGame(self._state.clone(), self.num_players, self._enumerable)

    def terminal_returns(self) -> tuple[float, ...]:
        return tuple(float(r) for r in self._state.returns())

    def infoset_key(self, player: int) -> Hashable:
        return self._state.information_state_string(player)

    def __repr__(self) -> str:
        return f"OpenSpielGame({self._state.get_game()}, history={self._state.history()})"


def wrap(game: Any) -> OpenSpielGame:
    """The root state of a ``pyspiel.Game`` as a jaxcfr Game.

    Raises:
      GameError: for a simultaneous-move game (convert it first with
        ``pyspiel.convert_to_turn_based``) or one without information-state strings.
    """
    pyspiel = _pyspiel()
    game_type = game.get_type()
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise GameError(f"OpenSpiel game {game} is simultaneous-move; jaxcfr needs a sequential "
                        "(turn-based) game: wrap pyspiel.convert_to_turn_based(game) instead",
                        rule="openspiel-simultaneous")
    if not game_type.provides_information_state_string:
        raise GameError(f"OpenSpiel game {game} does not provide information_state_string, "
                        "which jaxcfr uses as the information-set key",
                        rule="openspiel-infoset")
    enumerable = game_type.chance_mode != pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    return OpenSpielGame(game.new_initial_state(), int(game.num_players()), enumerable)


def load(text: str) -> OpenSpielGame:
    """``"kuhn_poker(players=3)"`` -> the wrapped root state of that OpenSpiel game.

    Raises:
      GameError: OpenSpiel is not installed, the string does not parse, OpenSpiel
        does not know the game or a parameter, or the game is simultaneous-move.
    """
    pyspiel = _pyspiel()
    name, params = parse_game_string(text)
    for key, value in params.items():
        if not isinstance(value, (bool, int, float, str)):
            raise GameError(f"parameter {key}={value!r} of openspiel:{text}: OpenSpiel "
                            "parameters are numbers, booleans or strings", rule="game-string")
    if name not in pyspiel.registered_names():
        raise GameError(f"unknown OpenSpiel game {name!r} (see pyspiel.registered_names())",
                        rule="game-string")
    try:
        game = pyspiel.load_game(name, params) if params else pyspiel.load_game(name)
    except pyspiel.SpielError as e:
        raise GameError(f"cannot load openspiel:{text}: {_first_line(e)}",
                        rule="game-string") from None
    return wrap(game)
