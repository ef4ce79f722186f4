"""A game state that wraps another one and answers the protocol with it.

:class:`Wrapper` forwards every required method of the :class:`~jaxcfr.game.Game`
protocol to the wrapped state, ``self.game``; a wrapper overrides only what it changes:
:class:`~jaxcfr.Abstracted` the legal actions and steps, :class:`~jaxcfr.Bucketed` the
information-set keys, :class:`~jaxcfr.game.determinize.Determinized` chance. The
optional methods (``nash_value``, ``tree_size``, ``state_hash``,
``caches_transpositions``, ``public_key``) are each wrapper's own decision (a change of
the game may change what they mean), so they are not forwarded here: without an
override they are :class:`~jaxcfr.game.Game`'s defaults. ``clone`` is each wrapper's.
"""

from __future__ import annotations

from typing import Any, Hashable, Sequence

from jaxcfr.game.protocol import Game

__all__ = ["Wrapper"]


class Wrapper(Game):
    """A :class:`~jaxcfr.game.Game` answering with the wrapped state ``self.game`` (set by
    the subclass; see the module)."""

    __slots__ = ()
    game: Any

    @property
    def num_players(self) -> int:
        return self.game.num_players

    def is_terminal(self) -> bool:
        return self.game.is_terminal()

    def is_chance(self) -> bool:
        return self.game.is_chance()

    def player_to_act(self) -> int:
        return self.game.player_to_act()

    def chance_outcomes(self):
        return self.game.chance_outcomes()

    def sample_chance(self, rng):
        return self.game.sample_chance(rng)

    def legal_actions(self) -> list:
        return self.game.legal_actions()

    def step(self, action: Hashable) -> None:
        self.game.step(action)

    def terminal_returns(self) -> Sequence[float]:
        return self.game.terminal_returns()

    def infoset_key(self, player: int) -> Hashable:
        return self.game.infoset_key(player)
