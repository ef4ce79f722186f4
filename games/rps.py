"""Rock-paper-scissors and matching pennies, as sequential games with hidden moves.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("rock_paper_scissors")
    >>> game.step("rock"); game.step("paper"); game.terminal_returns()
    (-1.0, 1.0)
"""

from __future__ import annotations

from jaxcfr.game import TERMINAL, Game, GameError

__all__ = ["MatrixGame", "RockPaperScissors", "MatchingPennies"]

_RPS = ("rock", "paper", "scissors")
_PENNIES = ("heads", "tails")


class MatrixGame(Game):
    """A two-player zero-sum matrix game played sequentially with the first move hidden.

    Player 0 picks a row, then player 1 picks a column without seeing it;
    player 0 receives ``payoff[row][column]`` and player 1 its negation.
    Subclasses set ``ACTIONS`` (shared by both players, in their canonical
    order) and ``PAYOFF``.

    The information-set key of player ``p`` is ``"p|"`` followed by their own
    move once made: player 1's key never contains player 0's move.
    """

    __slots__ = ("_moves",)
    num_players = 2
    ACTIONS: tuple = ()
    PAYOFF: dict = {}

    def __init__(self):
        self._moves = ()

    def clone(self) -> "MatrixGame":
        new = _new(type(self))
        new._moves = self._moves
        return new

    def is_terminal(self) -> bool:
        return len(self._moves) == 2

    def is_chance(self) -> bool:
        return False

    def player_to_act(self) -> int:
        n = len(self._moves)
        return TERMINAL if n == 2 else n

    def legal_actions(self) -> list:
        return [] if len(self._moves) == 2 else list(self.ACTIONS)

    def step(self, action) -> None:
        if len(self._moves) == 2:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if not isinstance(action, str) or action not in self.ACTIONS:
            raise GameError(f"illegal action {action!r}; legal: {list(self.ACTIONS)}",
                            rule="illegal-action")
        self._moves = self._moves + (action,)

    def terminal_returns(self) -> tuple:
        if len(self._moves) != 2:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        u = float(self.PAYOFF[self._moves])
        return (u, -u)

    def infoset_key(self, player: int) -> str:
        moves = self._moves
        return f"{player}|{moves[player]}" if player < len(moves) else f"{player}|"

    def nash_value(self):
        return (0.0, 0.0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(moves={self._moves})"


class RockPaperScissors(MatrixGame):
    """Rock-paper-scissors, sequentialised: player 1 moves without seeing player 0's move.

    Actions ``"rock"``, ``"paper"``, ``"scissors"`` (in that order) for both
    players. Rock beats scissors, scissors beat paper, paper beats rock: the
    winner gets +1, the loser -1; a tie gives 0 to both. The unique equilibrium
    is uniform play; ``nash_value()`` is ``(0, 0)``.
    """

    __slots__ = ()
    ACTIONS = _RPS
    # (i - j) % 3 == 1: action i beats action j.
    PAYOFF = {(a, b): (0, 1, -1)[(i - j) % 3]
              for i, a in enumerate(_RPS) for j, b in enumerate(_RPS)}


class MatchingPennies(MatrixGame):
    """Matching pennies, sequentialised: player 1 moves without seeing player 0's move.

    Actions ``"heads"``, ``"tails"`` (in that order) for both players. Player 0
    (the matcher) gets +1 and player 1 -1 if the pennies match, and the reverse
    if they differ. The unique equilibrium is uniform play; ``nash_value()`` is
    ``(0, 0)``.
    """

    __slots__ = ()
    ACTIONS = _PENNIES
    PAYOFF = {(a, b): (1 if a == b else -1) for a in _PENNIES for b in _PENNIES}


_new = object.__new__
