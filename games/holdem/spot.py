"""``holdem_spot``: a heads-up no-limit hold'em postflop spot as a public-tree game.

A spot is a board (flop, turn or river), both players' ranges, a starting pot, an
effective stack and a bet tree (:mod:`.bets`, postflop-solver's conventions). As a
:class:`~jaxcfr.game.PublicGame`:

* hands: each player's combinations of positive weight that the board does not block
  (labels ``"AsKs"``, high card first; weights from the range; cards for card removal);
* public play: the bet tree's actions, named as postflop-solver prints them
  (``"Check"``, ``"Bet(60)"``, ``"Raise(150)"``, ``"AllIn(200)"``, ``"Fold"``,
  ``"Call"``); between streets the next card is public chance (an int card, uniform over
  the cards neither the board nor the two hands hold: ``1 / (48 - board)`` given the
  hands), which blocks the hands holding it; an all-in before the river deals every
  card to come, exactly;
* terminals: a fold is a :class:`~jaxcfr.game.Fold` and a showdown a
  :class:`~jaxcfr.game.Showdown` of hand strengths on the final board (:mod:`.strength`).

Payoffs are net of each player's half of the starting pot, as the postflop solvers
report values: the folder loses ``pot / 2`` plus what it put in since, a showdown moves
``pot / 2`` plus each player's bets. Values and exploitability are in chips; divide by
``pot`` for a fraction of the pot.

The defaults are the spot of issue 31 and of the peer's driver
(``shared/peers/postflop-solver``): board Td9d6h5c2s, its README ranges, pot 100, stack
200, bets ``"60%, e, a"``, raises ``"2.5x"``, river donk ``"50%"``, thresholds 1.5,
0.15 and 0.1.

Example::

    >>> import jaxcfr
    >>> spot = jaxcfr.load_game("holdem_spot(board='Td9d6h5c2s', pot=100, stack=200)")
    >>> result = jaxcfr.solve_public(spot, "postflop-dcfr", 200)
"""

from __future__ import annotations

import numpy as np

from jaxcfr.game import (CHANCE, TERMINAL, Fold, GameError, PublicCounts, PublicGame,
                         Showdown)

from .bets import STREETS, BetTree, build_tree, tree_config, tree_size
from .cards import (HANDS, NUM_CARDS, BoardError, HoldemError, board_str, card_str, hand_str,
                    parse_board)
from .isomorphism import card_classes, hand_permutation, permute_card, suit_symmetries
from .ranges import parse_range, range_hands
from .strength import board_strengths

__all__ = ["HoldemSpot", "README_RANGES", "LARGEST_PUBLIC_TREE"]

#: The ranges of postflop-solver's README example (OOP, IP).
README_RANGES = ("66+,A8s+,A5s-A4s,AJo+,K9s+,KQo,QTs+,JTs,96s+,85s+,75s+,65s,54s",
                 "QQ-22,AQs-A2s,ATo+,K5s+,KJo+,Q8s+,J8s+,T7s+,96s+,86s+,75s+,64s+,53s+")


#: The most public nodes a spot may have (bet-tree lines times the cards dealt below them,
#: suit-isomorphic cards once), counted before a node is built: 4.6 times the README
#: flop's 436,618; lowering walks about 10,000 (README ranges) to 35,000 (a few hands)
#: public nodes per CPU second here, so a spot at the limit lowers in one to four minutes.
LARGEST_PUBLIC_TREE = 2_000_000


def _weights(r, player: int) -> np.ndarray:
    if isinstance(r, str):
        return parse_range(r)
    try:
        w = np.asarray(r, np.float64)
    except (TypeError, ValueError):               # ['a', ...], [[1], [1, 2]]
        w = None
    if w is None or w.shape != (len(HANDS),):
        raise HoldemError(f"ranges[{player}] must be a range string or 1,326 weights from 0 "
                          f"to 1, got {type(r).__name__}"
                          + ("" if w is None else f" of shape {w.shape}"))
    bad = ~((w >= 0) & (w <= 1))                  # NaN and inf too; as a range string's
    if bad.any():                                 # ':weight' (parse_range)
        h = int(np.argmax(bad))
        raise HoldemError(f"ranges[{player}]: a weight is from 0 to 1, got {float(w[h])!r} for "
                          f"{hand_str(h)} (entry {h})")
    return w


class _Spot:
    """What every state of one spot shares (never mutated after construction, except the
    caches of strengths and showdown operators)."""

    def __init__(self, board, ranges, pot, stack, bets, raises, turn_donk, river_donk,
                 add_allin, force_allin, merging, isomorphism):
        self.board = parse_board(board)
        street = len(self.board) - 3
        self.config = tree_config(street, pot, stack, bets, raises, turn_donk=turn_donk,
                                  river_donk=river_donk, add_allin=add_allin,
                                  force_allin=force_allin, merging=merging)
        if not isinstance(ranges, (tuple, list)) or len(ranges) != 2:
            raise HoldemError(f"ranges must be a pair (OOP's, IP's), got {ranges!r}")
        self.index, self.weights, self.labels, self.cards = [], [], [], []
        full = []
        for p in range(2):
            w = _weights(ranges[p], p)
            full.append(w)
            idx = range_hands(w, self.board)
            if not len(idx):
                error = BoardError if w.any() else HoldemError   # empty: on any board
                raise error(f"{('OOP', 'IP')[p]}'s range has no hand the board "
                            f"{board_str(self.board)} leaves")
            self.index.append(idx)
            self.weights.append(tuple(float(x) for x in w[idx]))
            self.labels.append(tuple(hand_str(i) for i in idx))
            self.cards.append(tuple(HANDS[i] for i in idx))
        self.half_pot = self.config.pot / 2
        self._strengths: dict = {}
        self._showdowns: dict = {}
        # suit isomorphism: the permutations fixing the board and both ranges (identity
        # alone when off), the merges of each board's chance node (cached by board)
        self.symmetries = suit_symmetries(self.board, full) if isomorphism else []
        self._merges: dict = {}
        self._counts: PublicCounts | None = None
        # counted before it is built: a public tree past LARGEST_PUBLIC_TREE is refused at
        # once, with its size and the setting that makes it large
        self.size = tree_size(self.config, repeats=self.repeats(),
                              public_limit=LARGEST_PUBLIC_TREE)
        self.tree: BetTree = build_tree(self.config, self.size)
        self.actions = [tuple(str(a) for a in n.actions) for n in self.tree.nodes]

    def counts(self) -> PublicCounts:
        """:meth:`HoldemSpot.public_counts` (counted once)."""
        if self._counts is None:
            repeats = (1,) + self.repeats()
            nodes = terminals = widest = 0
            decisions = [0, 0]
            for n in self.tree.nodes:
                r = repeats[n.street - self.config.street]
                nodes += r
                if n.kind == "decision":
                    decisions[n.player] += r
                    widest = max(widest, len(n.actions))
                elif n.terminal:
                    terminals += r
            self._counts = PublicCounts(nodes, tuple(decisions), terminals, widest)
        return self._counts

    def _group(self, board: tuple) -> list:
        """The symmetries that fix ``board`` (as a set): those a chance node there merges by."""
        shown = set(board)
        return [g for g in self.symmetries if {permute_card(g, c) for c in board} == shown]

    def repeats(self) -> tuple[int, int]:
        """How many times the public tree repeats a bet-tree node below one card dealt
        (the cards to deal, one per suit-isomorphic class) and below two (the pairs of
        them, the second card's classes on the board the first makes):
        ``bets.TreeSize.public_nodes``."""
        if len(self.board) == 5:
            return (1, 1)
        classes = card_classes(self.board, self._group(self.board))
        if len(self.board) == 4:
            return (len(classes), 1)
        return (len(classes), sum(len(card_classes(b, self._group(b))) for b in
                                  (self.board + (rep,) for rep, _ in classes)))

    def merges(self, board: tuple) -> dict:
        """``{card: (representative, (sources_0, sources_1), renaming)}`` of the chance
        node after ``board`` (:meth:`HoldemSpot.chance_merges`): one symmetry ``g`` taking
        the representative to the card gives both the hands' sources (``g^-1(h)``) and
        the renaming of the cards dealt later (``{card: g^-1(card)}``)."""
        out = self._merges.get(board)
        if out is None:
            group = self._group(board)
            out = {}
            for rep, members in card_classes(board, group):
                for m in members[1:]:
                    g = next(g for g in group if permute_card(g, rep) == m)
                    inverse = tuple(int(i) for i in np.argsort(g))
                    out[m] = (rep, tuple(np.argsort(hand_permutation([g], rep, m, idx))
                                         for idx in self.index),
                              {c: permute_card(inverse, c) for c in range(NUM_CARDS)})
            self._merges[board] = out
        return out

    def showdown(self, board: tuple, stake: float) -> Showdown:
        key = (board, stake)
        s = self._showdowns.get(key)
        if s is None:
            full = self._strengths.get(board)
            if full is None:
                full = self._strengths[board] = board_strengths(board).astype(np.float64)
            s = self._showdowns[key] = Showdown(stake, tuple(full[i] for i in self.index))
        return s


class HoldemSpot(PublicGame):
    """A heads-up no-limit hold'em postflop spot (see the module).

    Args:
      board: 3, 4 or 5 cards (``"Td9d6h"``); the street follows.
      ranges: ``(OOP's, IP's)``: range strings (``"66+,A8s+,AsKs:0.5"``) or ``[1326]``
        weights.
      pot: the starting pot, whole chips; stack: the effective stack behind.
      bets, raises: sizes (:func:`~.bets.tree_config`: one string, a pair (OOP, IP) or
        a dict by street).
      turn_donk, river_donk: OOP's donk sizes (``None``: none).
      add_allin, force_allin, merging: postflop-solver's thresholds.
      isomorphism: merge the suit-isomorphic cards dealt (:meth:`chance_merges`,
        :mod:`.isomorphism`): one subtree per class, exact (docs/holdem.md); on by
        default (it changes nothing where the board and ranges have no suit symmetry).
        Profiles read a history through a merged card from its representative, the
        suits renamed (``PublicLowered.locate``); ``False`` walks every card.
    """

    __slots__ = ("_s", "_node", "_dealt")

    def __init__(self, board="Td9d6h5c2s", ranges=README_RANGES, pot: int = 100,
                 stack: int = 200, bets="60%, e, a", raises="2.5x", turn_donk=None,
                 river_donk="50%", add_allin: float = 1.5, force_allin: float = 0.15,
                 merging: float = 0.1, isomorphism: bool = True):
        if not isinstance(isomorphism, bool):   # 'no' and 'false' are truthy
            raise ValueError(f"holdem_spot: isomorphism must be True or False, got "
                             f"{isomorphism!r}")
        try:
            self._s = _Spot(board, ranges, pot, stack, bets, raises, turn_donk, river_donk,
                            add_allin, force_allin, merging, bool(isomorphism))
        except BoardError as e:                 # this board's: another may take the spot
            raise BoardError(f"holdem_spot: {e}") from None
        except HoldemError as e:
            raise ValueError(f"holdem_spot: {e}") from None
        self._node = 0
        self._dealt: tuple[int, ...] = ()

    # -- hands ------------------------------------------------------------------
    def hands(self, player):
        return self._s.labels[player]

    def hand_weights(self, player):
        return self._s.weights[player]

    def hand_cards(self, player):
        return self._s.cards[player]

    # -- the public state machine ---------------------------------------------------
    @property
    def _here(self):
        return self._s.tree.nodes[self._node]

    def is_terminal(self):
        return self._here.terminal

    def is_chance(self):
        return self._here.kind == "chance"

    def player_to_act(self):
        n = self._here
        if n.terminal:
            return TERMINAL
        return CHANCE if n.kind == "chance" else n.player

    def legal_actions(self):
        return list(self._s.actions[self._node]) if self._here.kind == "decision" else []

    def board(self) -> tuple[int, ...]:
        """The cards on the board now (the spot's and those dealt since)."""
        return self._s.board + self._dealt

    def chance_outcomes(self):
        if self._here.kind != "chance":
            return None
        shown = set(self.board())
        left = [c for c in range(NUM_CARDS) if c not in shown]
        p = 1.0 / (len(left) - 4)           # given the two hands: the cards they do not hold
        return [(c, p) for c in left]

    def outcome_cards(self, outcome):
        return (outcome,)

    def chance_merges(self):
        """The cards to deal that a suit permutation fixing the board dealt so far and
        both ranges takes to a smaller card (its class's representative): ``{card:
        (representative, sources, renaming)}``, ``sources[p][h]`` the hand whose values
        after the representative are hand ``h``'s after the card (``g^-1(h)``),
        ``renaming`` the cards dealt later (``g^-1``). Empty without ``isomorphism`` or a
        symmetry."""
        if self._here.kind != "chance" or not self._s.symmetries:
            return None
        return self._s.merges(self.board())

    def public_counts(self):
        """The public tree's nodes, decisions per player, terminals and widest decision,
        suit-isomorphic cards once (each bet-tree node times the cards dealt above it:
        ``bets.TreeSize.public_nodes``); ``None`` below the root."""
        return self._s.counts() if self._node == 0 and not self._dealt else None

    def step(self, action):
        n = self._here
        if n.terminal:
            raise GameError(f"the hand is over; cannot play {action!r}", rule="illegal-action")
        if n.kind == "chance":
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) \
                    or not 0 <= action < NUM_CARDS or action in self.board():
                raise GameError(f"{action!r} is not a card left to deal (board "
                                f"{board_str(self.board())})", rule="illegal-action")
            self._dealt += (int(action),)
            self._node = n.children[0]
            return
        try:
            i = self._s.actions[self._node].index(action)
        except ValueError:
            raise GameError(f"illegal action {action!r}; legal: "
                            f"{list(self._s.actions[self._node])}",
                            rule="illegal-action") from None
        self._node = n.children[i]

    def clone(self):
        new = HoldemSpot.__new__(HoldemSpot)
        new._s, new._node, new._dealt = self._s, self._node, self._dealt
        return new

    def terminal_value(self):
        n = self._here
        if n.kind == "fold":
            lost = self._s.half_pot + n.bets[n.player]
            return Fold((-lost, lost) if n.player == 0 else (lost, -lost))
        if n.kind == "showdown":
            return self._s.showdown(self.board(), self._s.half_pot + n.bets[0])
        raise GameError("terminal_value() called at a non-terminal node", rule="not-terminal")

    # -- for users --------------------------------------------------------------------
    @property
    def tree(self) -> BetTree:
        """The bet tree (:mod:`.bets`)."""
        return self._s.tree

    @property
    def pot(self) -> int:
        return self._s.config.pot

    def hand_indices(self, player: int) -> np.ndarray:
        """``[H]`` the indices into :data:`~.cards.HANDS` of ``hands(player)``."""
        return self._s.index[player]

    def __repr__(self):
        street = STREETS[len(self.board()) - 3]
        dealt = "".join(card_str(c) for c in self._dealt)
        return (f"HoldemSpot({board_str(self._s.board)}{'+' + dealt if dealt else ''}, "
                f"{street}, node {self._node}, {len(self._s.labels[0])}+"
                f"{len(self._s.labels[1])} hands)")
