"""The Game protocol: what a game must provide for jaxcfr to solve it.

A ``Game`` object is a *state* of an extensive-form game: the root state is the
game itself, ``step`` moves it down the tree in place and ``clone`` copies it.
The contract (checked by :func:`jaxcfr.validate` on random trajectories and
exhaustively by :func:`jaxcfr.lower`) is:

* ``is_terminal()`` and ``is_chance()`` are never both true.
* At a terminal node ``terminal_returns()`` gives one finite payoff per player
  (numbers, not strings; the same on every call), ``legal_actions()`` is empty,
  and ``step`` raises :class:`GameError`.
* At a chance node ``legal_actions()`` is empty and either
  ``chance_outcomes()`` lists ``(action, probability)`` pairs (non-empty,
  finite, non-negative, duplicate-free, summing to 1), or it returns ``None``
  (chance that cannot be enumerated) and the node is driven by
  ``sample_chance(rng)``.
* At a decision node ``legal_actions()`` is non-empty and duplicate-free and
  ``chance_outcomes()`` is ``None``; ``player_to_act()`` is an integer (NumPy
  integers too, not a bool) in ``0..num_players-1``.
* Actions are hashable. ``infoset_key(player)`` is hashable, equal to itself (no
  NaN), identical for histories the player cannot distinguish and different
  otherwise; every history that shares a key has the same ordered
  ``legal_actions()`` (that order indexes regrets and strategies).
* ``clone()`` is independent: stepping a clone leaves the original as it was.
* Any other exception from the game's own methods is reported as the rule
  ``game-exception``, with the history and the game's line that raised it.

Example::

    class Coin(Game):
        '''Chance flips a coin, player 0 guesses it without seeing it.'''
        num_players = 1
        def __init__(self):
            self.history = ()
        ...
"""

from __future__ import annotations

import abc
import hashlib
import random
from typing import Hashable, Sequence

from jaxcfr.game.contract import CHANCE, TERMINAL, GameError, format_history

__all__ = ["Game", "GameError", "CHANCE", "TERMINAL", "format_history", "LARGEST_TREE",
           "too_large", "same_action"]

#: The most nodes a reference game's parameters may give: about what one large machine
#: lowers (tens of GB of host memory, minutes on 16 cores) and solves (10-25 GB on a GPU).
LARGEST_TREE = 250_000_000


def too_large(what: str, nodes: int | None) -> str:
    """Why parameters are refused: ``"<what> make a tree of N nodes, more than ..."``
    (``nodes=None``: too many to count cheaply, ``"far more than ..."``)."""
    size = "far more" if nodes is None else f"a tree of {nodes:,} nodes, more"
    return (f"{what} make {size} than the {LARGEST_TREE:,} a reference game may have "
            "(about what one large machine lowers and solves)")

class Game(abc.ABC):
    """A state of an imperfect-information extensive-form game.

    Subclasses implement the abstract methods; the others have defaults.
    Actions are hashable, printable values; strategies are indexed by an
    action's position in ``legal_actions()``, never by the action itself.
    """

    #: Number of players (chance excluded).
    num_players: int = 2

    # -- node type ---------------------------------------------------------
    @abc.abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over at this state."""

    @abc.abstractmethod
    def is_chance(self) -> bool:
        """Whether chance moves at this state."""

    @abc.abstractmethod
    def player_to_act(self) -> int:
        """The player to move (0-based), :data:`CHANCE` or :data:`TERMINAL`."""

    # -- chance ------------------------------------------------------------
    def chance_outcomes(self) -> list[tuple[Hashable, float]] | None:
        """``[(action, probability), ...]`` at an enumerable chance node, else ``None``."""
        return None

    def sample_chance(self, rng: random.Random) -> tuple[Hashable, float]:
        """Draw one chance outcome: ``(action, probability of that action)``.

        The default samples from ``chance_outcomes()``; games whose chance
        cannot be enumerated override it and draw directly.
        """
        outcomes = self.chance_outcomes()
        if outcomes is None:
            raise GameError("chance_outcomes() is None and sample_chance() is not overridden",
                            rule="chance-sampling")
        u = rng.random()
        acc = 0.0
        for action, p in outcomes:
            acc += p
            if u < acc:
                return action, p
        action, p = outcomes[-1]
        return action, p

    def nash_value(self) -> tuple[float, float] | None:
        """Closed-form equilibrium value of a 2-player zero-sum game, or ``None``."""
        return None

    def tree_size(self) -> int | None:
        """The exact number of nodes of the tree below this state, when the game can count
        them cheaply (optional; ``None``: unknown). Said before lowering and checked
        against the memory budget; without it :func:`jaxcfr.probe_size` probes."""
        return None

    def infoset_count(self) -> int | None:
        """The exact number of information sets (all players together) in the tree below
        this state, when the game can count them cheaply (optional; ``None``: unknown). The
        memory budget counts them before the walk, so that a game whose rows push it over
        the budget is refused at once."""
        return None

    # -- decisions ---------------------------------------------------------
    @abc.abstractmethod
    def legal_actions(self) -> list[Hashable]:
        """Legal actions at a decision node, in the canonical order; empty elsewhere."""

    @abc.abstractmethod
    def step(self, action: Hashable) -> None:
        """Apply ``action`` (a legal action or a chance outcome) in place.

        Raises:
          GameError: at a terminal node, or for an action that is not legal.
        """

    @abc.abstractmethod
    def clone(self) -> "Game":
        """An independent copy of this state."""

    @abc.abstractmethod
    def terminal_returns(self) -> Sequence[float]:
        """One payoff per player at a terminal node."""

    @abc.abstractmethod
    def infoset_key(self, player: int) -> Hashable:
        """What ``player`` knows here: equal exactly for indistinguishable histories."""

    # -- provided ----------------------------------------------------------
    def validate(self, trajectories: int = 256, seed: int = 0) -> None:
        """Probe the contract on random trajectories; raise :class:`GameError` if broken."""
        from jaxcfr.game.validate import validate_game_with
        validate_game_with(self, trajectories=trajectories, seed=seed)

    def state_hash(self) -> int:
        """An observable-position hash: the hash of every player's information-set key.

        Not a transposition key in general (see :meth:`caches_transpositions`).
        """
        h = hashlib.blake2b(digest_size=8)
        h.update(repr((self.player_to_act(),
                       tuple(self.infoset_key(p) for p in range(self.num_players)))).encode())
        return int.from_bytes(h.digest(), "little")

    def caches_transpositions(self) -> bool:
        """Whether ``state_hash`` is a proven-safe transposition key (default ``False``)."""
        return False

    def public_key(self) -> Hashable | None:
        """The public state (optional; ``None``: not declared): a hashable key, equal exactly
        for the histories at one depth that no player can tell apart from each other,
        transitively (in poker: the public actions and cards). Subgames use it for their
        root sets (:func:`jaxcfr.subgame`, checked against the information sets); without
        it they compute the closure from the lowered game's information sets."""
        return None


def same_action(x: Hashable, y: Hashable) -> bool:
    """Whether ``x`` and ``y`` are the same action: the same object, or ``x == y`` true.
    A comparison that raises (an array against a label, say) means different."""
    if x is y:
        return True
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - e.g. an array compared with a label
        return False
