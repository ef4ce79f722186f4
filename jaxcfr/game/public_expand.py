"""A PublicGame as the ordinary ``Game`` of the same game: its history tree.

:func:`expand` is the oracle of the public-tree representation: the history tree a
:class:`~jaxcfr.game.public.PublicGame` stands for, solved by the ordinary lowering
and solvers, must give what the public tree gives (tests/test_public.py).

The expanded game: a root chance node deals the tuple of hands ``(h0, h1, ...)`` (the
action is the tuple of labels, one per player) with probability ``prod_p w_p(h_p) / Z``
over the compatible tuples of positive probability; then the public game is played, each public
chance node keeping the outcomes that block neither hand (with their probabilities,
which then sum to 1). Player ``p``'s information-set key is ``(own hand label,
public history)``, the public history being the tuple of public actions and outcomes
from the root (``(None, ())`` before the deal); ``public_key()`` is the public history.
Terminal returns are the terminal operator applied to the players' hands.

With ``deal="seat"`` the hands are dealt one player at a time instead, player 0 first
(one chance node per player, each hand with its probability given those dealt before:
the mass of the compatible tuples that extend it), in the order of ``hands(p)``: the
way OpenSpiel deals Kuhn's and Leduc's private cards, so that
:func:`jaxcfr.game.openspiel.tabular_policy` can walk this tree beside OpenSpiel's
(``Profile.to_openspiel`` of a public profile). The same game, the same information sets.
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np

from jaxcfr.game.contract import CHANCE, GameError
from jaxcfr.game.protocol import Game
from jaxcfr.game.public_values import Fold, PayoffTable, Showdown
from jaxcfr.game.public_contract import HandInfo, read_hands

__all__ = ["ExpandedGame", "expand", "terminal_payoff"]


def terminal_payoff(value, *hands: int) -> tuple[float, ...]:
    """The payoffs of terminal operator ``value`` when player ``p`` holds hand
    ``hands[p]`` (one index per player)."""
    if isinstance(value, Fold):
        return tuple(float(x) for x in value.payoffs)
    if isinstance(value, Showdown):
        i, j = hands
        a, b = float(value.strengths[0][i]), float(value.strengths[1][j])
        s = float(value.stake) * (1.0 if a > b else -1.0 if a < b else 0.0)
        return s, -s
    if isinstance(value, PayoffTable):
        t = np.asarray(value.payoffs, np.float64)
        return tuple(float(x) for x in t[(slice(None),) + tuple(hands)])
    raise GameError(f"not a terminal operator: {value!r}", rule="terminal-value")


class ExpandedGame(Game):
    """The history tree of a PublicGame (see the module)."""

    def __init__(self, public: Any, hands: HandInfo | None = None, deal: str = "tuple"):
        if deal not in ("tuple", "seat"):
            raise ValueError(f"deal must be 'tuple' or 'seat', got {deal!r}")
        self._by_seat = deal == "seat"
        self._prefix: tuple = ()            # deal="seat": the hands dealt so far
        self._public = public.clone()
        self._info = read_hands(public) if hands is None else hands
        self.num_players = self._info.num_players
        self._hands: tuple[int, ...] | None = None
        self._path: tuple = ()
        info = self._info
        deal = []
        if self.num_players == 2:
            w0, w1 = info.weights
            for i in range(len(w0)):
                for j in range(len(w1)):
                    p = w0[i] * w1[j] / info.deal_total
                    if info.compatible[i, j] and p > 0:
                        deal.append(((info.labels[0][i], info.labels[1][j]), (i, j), p))
        else:
            for ij in np.argwhere(info.compatible):
                ij = tuple(int(x) for x in ij)
                p = float(np.prod([info.weights[q][h] for q, h in enumerate(ij)])) \
                    / info.deal_total
                if p > 0:
                    deal.append((tuple(info.labels[q][h] for q, h in enumerate(ij)), ij, p))
        self._deal = deal
        self._deal_index = {labels: ij for labels, ij, _ in deal}
        self._dealt = info.dealt() if self._by_seat else None     # [H0, ..., H_{P-1}]

    def clone(self) -> "ExpandedGame":
        new = object.__new__(type(self))
        new._public = self._public.clone()
        new._info = self._info
        new.num_players = self.num_players
        new._by_seat = self._by_seat
        new._prefix = self._prefix
        new._dealt = self._dealt
        new._hands = self._hands
        new._path = self._path
        new._deal = self._deal
        new._deal_index = self._deal_index
        return new

    def is_terminal(self) -> bool:
        return self._hands is not None and bool(self._public.is_terminal())

    def is_chance(self) -> bool:
        return self._hands is None or bool(self._public.is_chance())

    def player_to_act(self) -> int:
        return CHANCE if self._hands is None else self._public.player_to_act()

    def _seat_outcomes(self) -> list:
        """``[(hand index, probability)]`` of the next seat's hand given those dealt."""
        sub = self._dealt[self._prefix]
        mass = sub.reshape(sub.shape[0], -1).sum(axis=1)
        total = mass.sum()
        return [(h, float(m / total)) for h, m in enumerate(mass) if m > 0]

    def chance_outcomes(self):
        if self._hands is None and self._by_seat:
            labels = self._info.labels[len(self._prefix)]
            return [(labels[h], p) for h, p in self._seat_outcomes()]
        if self._hands is None:
            return [(labels, p) for labels, _, p in self._deal]
        if not self._public.is_chance():
            return None
        cards = self._info.cards
        out = []
        for o, p in self._public.chance_outcomes():
            if cards is not None:
                shown = frozenset(self._public.outcome_cards(o))
                if any(cards[q][h] & shown for q, h in enumerate(self._hands)):
                    continue
            out.append((o, p))
        return out

    def legal_actions(self) -> list:
        if self._hands is None:
            return []
        return list(self._public.legal_actions())

    def step(self, action: Hashable) -> None:
        if self._hands is None and self._by_seat:
            labels = self._info.labels[len(self._prefix)]
            match = [h for h, _ in self._seat_outcomes() if labels[h] == action]
            if not match:
                raise GameError(f"{action!r} is not a hand of player {len(self._prefix)} "
                                "dealt here", rule="illegal-action")
            self._prefix = self._prefix + (match[0],)
            if len(self._prefix) == self.num_players:
                self._hands = self._prefix
            return
        if self._hands is None:
            try:
                self._hands = self._deal_index[action]
            except (KeyError, TypeError):
                raise GameError(f"{action!r} is not a pair of hands dealt here",
                                rule="illegal-action") from None
            return
        if self._public.is_chance():
            if action not in {o for o, _ in self.chance_outcomes()}:
                raise GameError(f"{action!r} is not a chance outcome here",
                                rule="illegal-action")
        self._public.step(action)
        self._path = self._path + (action,)

    def terminal_returns(self):
        if not self.is_terminal():
            raise GameError("terminal_returns() called at a non-terminal node",
                            rule="not-terminal")
        return terminal_payoff(self._public.terminal_value(), *self._hands)

    def infoset_key(self, player: int):
        if self._hands is None:
            return (None, ())
        return (self._info.labels[player][self._hands[player]], self._path)

    def public_key(self):
        return (self._hands is not None, self._path)

    def nash_value(self):
        return self._public.nash_value()

    def __repr__(self) -> str:
        return f"ExpandedGame({self._public!r}, hands={self._hands}, path={self._path})"


def expand(public: Any, deal: str = "tuple") -> ExpandedGame:
    """The history-tree ``Game`` of ``public`` (checked hands; see the module): the hands
    dealt as one tuple (``deal="tuple"``) or one player at a time (``"seat"``)."""
    return ExpandedGame(public, deal=deal)
