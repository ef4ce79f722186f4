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

import contextlib
import numbers
import os
import random
import sys
from typing import Any, Hashable

import numpy as np

from jaxcfr.game.protocol import CHANCE, TERMINAL, Game, GameError

__all__ = ["OpenSpielGame", "wrap", "load", "tabular_policy", "INSTALL_HINT"]

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
                        "(turn-based) game: load openspiel:turn_based_simultaneous_game("
                        f"game={game}) instead (in Python: wrap "
                        "pyspiel.convert_to_turn_based(game))", rule="openspiel-simultaneous")
    if not game_type.provides_information_state_string:
        raise GameError(f"OpenSpiel game {game} does not provide information_state_string, "
                        "which jaxcfr uses as the information-set key",
                        rule="openspiel-infoset")
    enumerable = game_type.chance_mode != pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    return OpenSpielGame(game.new_initial_state(), int(game.num_players()), enumerable)


def load(text: str) -> OpenSpielGame:
    """``"kuhn_poker(players=3)"`` -> the wrapped root state of that OpenSpiel game.

    The text goes to ``pyspiel.load_game`` unchanged, so every game string OpenSpiel
    accepts works here (bare-word values, game-valued parameters such as
    ``turn_based_simultaneous_game(game=goofspiel(num_cards=3))``).

    Raises:
      GameError: OpenSpiel is not installed, OpenSpiel refuses the string, or the game
        is simultaneous-move.
    """
    pyspiel = _pyspiel()
    text = text.strip()
    name = text.split("(", 1)[0].strip()
    if name not in pyspiel.registered_names():
        raise GameError(f"unknown OpenSpiel game {name!r} (see pyspiel.registered_names())",
                        rule="game-string")
    try:
        with _native_stderr_dropped():   # OpenSpiel also prints its error there: say it once
            game = pyspiel.load_game(text)
    except pyspiel.SpielError as e:
        raise GameError(f"cannot load openspiel:{text}: {_first_line(e)}",
                        rule="game-string") from None
    return wrap(game)


@contextlib.contextmanager
def _native_stderr_dropped():
    """Send what native code writes to file descriptor 2 nowhere, within the block."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def tabular_policy(profile, pyspiel_game, game: Game):
    """``profile`` (a :class:`jaxcfr.Profile` of ``game``) as an OpenSpiel ``TabularPolicy``.

    Both trees are walked in parallel, pairing the ``i``-th legal action (and chance
    outcome) of ours with the ``i``-th of OpenSpiel's, so our keys map to OpenSpiel's
    information-state strings whatever either side calls them.

    Args:
      profile: the profile to export.
      pyspiel_game: a ``pyspiel.Game`` or a game string for ``pyspiel.load_game``.
      game: our root state of the same game.
    Raises:
      ValueError: the trees differ (players, action counts, chance probabilities,
        returns), or one OpenSpiel information state gathers two of our information sets.
    """
    pyspiel = _pyspiel()
    from open_spiel.python import policy as os_policy
    if isinstance(pyspiel_game, str):
        pyspiel_game = pyspiel.load_game(pyspiel_game)
    mapping = _parallel_walk(game, pyspiel_game)
    tabular = os_policy.TabularPolicy(pyspiel_game)
    for info, (player, key, os_legal, legal) in mapping.items():
        index = tabular.state_lookup.get(info)
        if index is None:
            continue
        probs = profile.distribution(player, key, legal)
        row = np.zeros(tabular.action_probability_array.shape[1])
        row[list(os_legal)] = probs
        tabular.action_probability_array[index] = row
    return tabular


def _parallel_walk(game, pyspiel_game) -> dict[str, tuple]:
    """OpenSpiel info-state string -> (player, our key, OpenSpiel legal ids, our labels)."""
    root = pyspiel_game.new_initial_state()
    mapping: dict[str, tuple] = {}
    stack = [(game.clone(), root, ())]
    while stack:
        ours, theirs, path = stack.pop()

        def fail(msg):
            raise ValueError(f"trees differ after actions {list(path)}: {msg}")
        if ours.is_terminal() or theirs.is_terminal():
            if not (ours.is_terminal() and theirs.is_terminal()):
                fail("one side is terminal, the other is not")
            if not np.allclose(ours.terminal_returns(), theirs.returns(), atol=1e-9):
                fail(f"returns {list(ours.terminal_returns())} != {theirs.returns()}")
            continue
        if ours.is_chance() or theirs.is_chance_node():
            if not (ours.is_chance() and theirs.is_chance_node()):
                fail("one side is a chance node, the other is not")
            a = ours.chance_outcomes()
            b = theirs.chance_outcomes()
            if a is None or len(a) != len(b) or not np.allclose(
                    [p for _, p in a], [p for _, p in b], atol=1e-9):
                fail(f"chance outcomes {a} vs {b}")
            pairs = [(x, y) for (x, _), (y, _) in zip(a, b)]
        else:
            player = ours.player_to_act()
            if player != theirs.current_player():
                fail(f"player {player} to act here, OpenSpiel says {theirs.current_player()}")
            legal = list(ours.legal_actions())
            os_legal = list(theirs.legal_actions())
            if len(legal) != len(os_legal):
                fail(f"{len(legal)} legal actions {legal} vs OpenSpiel's {len(os_legal)}")
            key = ours.infoset_key(player)
            info = theirs.information_state_string(player)
            entry = (player, key, tuple(os_legal), tuple(legal))
            seen = mapping.setdefault(info, entry)
            if seen[:2] != entry[:2]:
                raise ValueError(f"OpenSpiel information state {info!r} holds two of our "
                                 f"information sets, {seen[1]!r} and {key!r}")
            pairs = list(zip(legal, os_legal))
        for x, y in reversed(pairs):
            a_state = ours.clone()
            a_state.step(x)
            stack.append((a_state, theirs.child(y), path + (x,)))
    return mapping
