"""The PublicGame protocol: a game dealt as private hands, then played in public.

In poker, liar's dice and many bidding games chance deals each player a private hand
and everything after is public: the players' actions, public chance (a board card)
and the end of the game. The history tree of such a game is its *public tree* copied
once per pair of hands; a :class:`PublicGame` describes the public tree once, and the
hands beside it, so that jaxcfr keeps one vector over each player's hands per public
node (:mod:`jaxcfr.lowering.public`, :mod:`jaxcfr.kernels.public`).

A ``PublicGame`` object is a *public state* (like :class:`jaxcfr.Game`, ``step``
moves it in place and ``clone`` copies it) and, at every state, says:

* ``hands(player)``: the player's possible private hands (hashable labels, distinct),
  ``hand_weights(player)`` their prior weights (finite, non-negative, some positive;
  default uniform), and ``hand_cards(player)``: the cards each hand holds (a tuple of
  ints per hand, or ``None``: hands never block each other). Two hands can be dealt
  together exactly when their cards are disjoint; the deal then picks the pair
  ``(h0, h1)`` with probability ``w0(h0) w1(h1) / Z`` (``Z`` the sum over the
  compatible pairs). Dealing from one deck without replacement is this rule.
* ``is_terminal()``, ``is_chance()``, ``player_to_act()`` (``0``, ``1``,
  :data:`~jaxcfr.game.CHANCE` or :data:`~jaxcfr.game.TERMINAL`), ``legal_actions()``
  (the same for every hand: the state is public), ``step(action)`` and ``clone()``.
* At a public chance node ``chance_outcomes()`` lists ``(outcome, probability)``;
  ``outcome_cards(outcome)`` (default: none) the cards the outcome shows. An outcome
  that shows a card of a hand cannot happen with that hand: it *blocks* it. The
  probabilities are those of the outcomes given any pair of compatible hands: for every
  such pair, the outcomes that block neither hand sum to 1 (a board card dealt from
  the cards left: each of the ``n`` cards the hands do not hold has ``1 / n``).
* At a terminal ``terminal_value()`` is the payoff as an operator on the hands
  (:class:`Fold`, :class:`Showdown` or :class:`PayoffTable`).

Two to eight players (``num_players``); with more than two, terminals are ``Fold`` and
``PayoffTable`` over the hand tuples (``Showdown`` takes two).

How to choose between this and :class:`jaxcfr.Game`: write a ``PublicGame`` when chance
deals each player a hand once, at the start, and every later move and chance outcome is
seen by every player (poker, liar's dice, bidding and signalling games); it keeps
``public nodes x hands`` entries where the history tree has ``public nodes x hand
pairs``. Everything else (private moves later in the game, hidden actions, imperfect
recall) is a ``Game``.
:func:`jaxcfr.game.public_expand.expand` turns any ``PublicGame`` into the ``Game``
of the same game (its history tree), which is how its results are checked.

Example::

    class Coin(PublicGame):                 # each player holds heads or tails
        def hands(self, player): return ["H", "T"]
        ...
"""

from __future__ import annotations

import abc
from typing import Hashable, NamedTuple, Sequence

from jaxcfr.game.public_values import TERMINAL_OPERATORS, Fold, PayoffTable, Showdown

__all__ = ["PublicGame", "PublicCounts", "Fold", "Showdown", "PayoffTable",
           "TERMINAL_OPERATORS"]


class PublicCounts(NamedTuple):
    """A public tree's sizes, counted without walking it (:meth:`PublicGame.public_counts`;
    merged outcomes walked once); what a game does not count is left at its default."""
    nodes: int                          # public nodes
    decisions: tuple[int, ...] = ()     # decision nodes per player (empty: not counted)
    terminals: int = 0                  # terminal nodes
    max_actions: int = 0                # the most actions at one decision


class PublicGame(abc.ABC):
    """A public state of a game of private hands and public play (see the module for
    the contract)."""

    #: Number of players (2 to 8).
    num_players: int = 2

    # -- the hands (the same at every state) ---------------------------------
    @abc.abstractmethod
    def hands(self, player: int) -> Sequence[Hashable]:
        """Player ``player``'s possible private hands (labels; their order indexes them)."""

    def hand_weights(self, player: int) -> Sequence[float]:
        """Prior weights of ``hands(player)`` (default: uniform)."""
        return [1.0] * len(self.hands(player))

    def hand_cards(self, player: int) -> Sequence[tuple[int, ...]] | None:
        """The cards each hand holds (compatibility and blocking), or ``None``: hands
        never block each other and no public outcome blocks a hand."""
        return None

    # -- the public state machine --------------------------------------------
    @abc.abstractmethod
    def is_terminal(self) -> bool:
        """Whether the game is over."""

    @abc.abstractmethod
    def is_chance(self) -> bool:
        """Whether public chance moves here."""

    @abc.abstractmethod
    def player_to_act(self) -> int:
        """The player to move, ``CHANCE`` or ``TERMINAL``."""

    @abc.abstractmethod
    def legal_actions(self) -> list[Hashable]:
        """Legal actions at a decision (empty elsewhere), in their canonical order."""

    def chance_outcomes(self) -> list[tuple[Hashable, float]] | None:
        """``[(outcome, probability), ...]`` at a chance node (see the module), else None."""
        return None

    def outcome_cards(self, outcome: Hashable) -> tuple[int, ...]:
        """The cards a public chance outcome shows (hands holding one are blocked)."""
        return ()

    def chance_merges(self) -> dict | None:
        """At a chance node, the outcomes whose subtrees are another outcome's up to a
        renaming of the hands (suit isomorphism): ``{outcome: (representative,
        sources)}``, ``sources`` per player ``[H_p]`` ints: every player's value (and
        strategy) of hand ``h`` after ``outcome`` is that of hand ``sources[p][h]`` after
        ``representative``, for every profile that is itself symmetric (which CFR keeps
        from its symmetric start). The lowering walks the representatives only and reads
        each merged outcome's values from its representative's, permuted
        (:class:`~jaxcfr.tensors.PublicTensors`' ``merge_*``). Default ``None``: none.

        An entry may carry a third element, ``renaming``: ``{later step: its
        counterpart}``, the public actions and outcomes after ``outcome`` renamed to
        those after ``representative`` (a hold'em card dealt later gets its suits renamed
        by the same permutation); a step it does not name is unchanged (two-element
        entries: every later step). Readers of a profile map a public history through a
        merged outcome with it (``PublicLowered.locate``)."""
        return None

    def public_counts(self) -> PublicCounts | None:
        """The public tree a walk from this state meets (merged outcomes walked once,
        :meth:`chance_merges`), where the game counts it without walking: the lowering
        checks the memory budget against the least these counts imply before the walk
        (:func:`jaxcfr.lowering.public.lower_public`). Default ``None``: not counted."""
        return None

    @abc.abstractmethod
    def step(self, action: Hashable) -> None:
        """Apply an action or a chance outcome in place (GameError if not legal)."""

    @abc.abstractmethod
    def clone(self) -> "PublicGame":
        """An independent copy of this state."""

    @abc.abstractmethod
    def terminal_value(self) -> Fold | Showdown | PayoffTable:
        """The payoff at a terminal, as an operator on the hands."""

    def nash_value(self) -> tuple[float, float] | None:
        """Closed-form equilibrium value, or ``None``."""
        return None

    # -- provided -------------------------------------------------------------
    def validate(self, trajectories: int = 256, seed: int = 0) -> None:
        """Probe the contract on random public trajectories; GameError if broken."""
        from jaxcfr.game.public_contract import validate_public
        validate_public(self, trajectories=trajectories, seed=seed)
