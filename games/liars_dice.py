"""Liar's dice (2 players), with OpenSpiel's ``liars_dice`` rules.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("liars_dice(dice=1, sides=6)")
    >>> for face in (3, 6):
    ...     game.step(face)
    >>> game.legal_actions()[:3]
    ['1-1', '1-2', '1-3']
"""

from __future__ import annotations

import math

from jaxcfr.game import CHANCE, LARGEST_TREE, TERMINAL, Game, GameError, too_large

__all__ = ["LiarsDice"]

LIAR = "liar"


class _Rules:
    """Per-game constants shared by every state of one game (never mutated)."""

    def __init__(self, dice: int, sides: int):
        self.dice = dice
        self.sides = sides
        self.total = 2 * dice
        # Bid i (OpenSpiel's action id) is quantity i // sides + 1 of face i % sides + 1.
        self.bids = tuple((i // sides + 1, i % sides + 1) for i in range(self.total * sides))
        self.labels = tuple(f"{q}-{f}" for q, f in self.bids)
        self.index = {label: i for i, label in enumerate(self.labels)}
        self.index[LIAR] = len(self.labels)
        # Legal actions after the bid with id ``last`` (row 0: nothing bid yet).
        self.legal = (self.labels,) + tuple(self.labels[last + 1:] + (LIAR,)
                                            for last in range(len(self.labels)))
        p = 1.0 / sides
        self.outcomes = tuple((face, p) for face in range(1, sides + 1))
        sep = "" if sides <= 9 else ","
        self.dice_text = lambda rolls: sep.join(str(f) for f in sorted(rolls))


class LiarsDice(Game):
    """Two-player liar's dice, as OpenSpiel's ``liars_dice(numdice=dice, dice_sides=sides)``.

    Rules:

    * Each player rolls ``dice`` dice with faces ``1..sides``, hidden from the
      opponent: one chance node per die, player 0's dice first, each uniform
      over the faces; the chance action is the face (an ``int``).
    * Player 0 then bids first and the players alternate. A bid ``"q-f"``
      claims that at least ``q`` of all ``2 * dice`` dice show face ``f``.
      Bids are ranked as OpenSpiel's ``reset-face`` rule: by quantity, then by
      face (``1-1 < 1-2 < ... < 1-sides < 2-1 < ...``), and each bid must be
      strictly higher than the previous one. Instead of bidding a player may
      call ``"liar"``, except as the very first move. Legal actions are listed
      as the higher bids in rank order, then ``"liar"``.
    * On ``"liar"`` all dice are shown. Faces equal to ``sides`` are wild: they
      count towards any bid. If at least ``q`` dice match the last bid
      ``q-f``, the bidder wins, otherwise the caller wins; the winner gets +1
      and the loser -1.

    The information-set key of player ``p`` is ``"p|dice|bids"``: their own
    dice as a sorted multiset (as OpenSpiel: the order the dice came out in
    carries no information, and no decision happens while they roll), then
    the public bids, e.g. ``"0|25| 1-3 2-6"``. With ``dice=1, sides=6`` the tree
    has 294,883 histories and 24,576 information sets, as OpenSpiel's.
    """

    __slots__ = ("_r", "_rolls", "_pub", "_last", "_dice_key", "_player", "_returns")
    num_players = 2

    def __init__(self, dice: int = 1, sides: int = 6):
        if isinstance(dice, bool) or not isinstance(dice, int) or dice < 1:
            raise ValueError(f"liars_dice: dice (per player) must be an integer >= 1, got {dice!r}")
        if isinstance(sides, bool) or not isinstance(sides, int) or sides < 2:
            raise ValueError(f"liars_dice: sides must be an integer >= 2, got {sides!r}")
        if 2 * dice * sides > 64 or _tree_size(dice, sides) > LARGEST_TREE:
            # (more than 64 bids make more than 2**65 nodes: not worth counting exactly)
            allowed = [s for s in range(2, 33) if _tree_size(min(dice, 32), s) <= LARGEST_TREE]
            most_dice = max(d for d in range(1, 33) if _tree_size(d, 2) <= LARGEST_TREE)
            where = (f"with dice={dice}, sides must be 2" if allowed == [2] else
                     f"with dice={dice}, sides may be 2..{allowed[-1]}" if allowed else
                     f"dice may be 1..{most_dice}")
            what = f"dice={dice}, sides={sides}"
            why = (too_large(what, _tree_size(dice, sides)) if 2 * dice * sides <= 64 else
                   f"{what} make more than 2**65 nodes")
            raise ValueError(f"liars_dice: {why}; {where}")
        self._r = _Rules(dice, sides)
        self._rolls = ()        # faces rolled so far: player 0's dice, then player 1's
        self._pub = ""          # public bid history, " 1-3 2-6 liar"
        self._last = -1         # id of the last bid, -1 before any bid
        self._dice_key = None   # per-player key prefixes, once all dice are rolled
        self._player = CHANCE
        self._returns = None

    def clone(self) -> "LiarsDice":
        new = _new(type(self))
        new._r = self._r
        new._rolls = self._rolls
        new._pub = self._pub
        new._last = self._last
        new._dice_key = self._dice_key
        new._player = self._player
        new._returns = self._returns
        return new

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._player == TERMINAL

    def is_chance(self) -> bool:
        return self._player == CHANCE

    def player_to_act(self) -> int:
        return self._player

    # -- moves -------------------------------------------------------------
    def chance_outcomes(self):
        return list(self._r.outcomes) if self._player == CHANCE else None

    def legal_actions(self) -> list:
        if self._player < 0:
            return []
        return list(self._r.legal[self._last + 1])

    def step(self, action) -> None:
        p = self._player
        r = self._r
        if p == TERMINAL:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if p == CHANCE:
            if isinstance(action, bool) or not isinstance(action, int) or \
                    not 1 <= action <= r.sides:
                raise GameError(f"{action!r} is not a die face 1..{r.sides}", rule="illegal-action")
            rolls = self._rolls = self._rolls + (action,)
            if len(rolls) == r.total:
                d = r.dice
                self._dice_key = (f"0|{r.dice_text(rolls[:d])}|", f"1|{r.dice_text(rolls[d:])}|")
                self._player = 0
            return
        i = r.index.get(action, -1) if isinstance(action, str) else -1
        if i <= self._last or (i == len(r.labels) and self._last < 0):
            raise GameError(f"illegal action {action!r}; legal: {self.legal_actions()}",
                            rule="illegal-action")
        self._pub += " " + action
        if i == len(r.labels):
            quantity, face = r.bids[self._last]
            wild = r.sides
            matches = sum(1 for f in self._rolls if f == face or f == wild)
            # The bidder is the opponent of the caller p.
            caller_wins = matches < quantity
            self._returns = (1.0, -1.0) if caller_wins == (p == 0) else (-1.0, 1.0)
            self._player = TERMINAL
        else:
            self._last = i
            self._player = 1 - p

    def terminal_returns(self) -> tuple:
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        if self._dice_key is not None:
            return self._dice_key[player] + self._pub
        d = self._r.dice
        return f"{player}|{self._r.dice_text(self._rolls[player * d:(player + 1) * d])}|"

    def tree_size(self):
        """The node count of the whole tree (at the root; ``None`` below it)."""
        if self._rolls:
            return None
        return _tree_size(self._r.dice, self._r.sides)

    def infoset_count(self):
        """The information sets of the whole tree (at the root; ``None`` below it)."""
        if self._rolls:
            return None
        return _infoset_count(self._r.dice, self._r.sides)

    def __repr__(self) -> str:
        return f"LiarsDice(rolls={self._rolls}, bids={self._pub!r})"


_new = object.__new__


def _tree_size(dice: int, sides: int) -> int:
    """Nodes of the tree: the rolls (``sides ** k`` chance nodes at depth ``k``), then per
    outcome every increasing sequence of the ``2 * dice * sides`` bids, each but the
    empty one also ended by ``"liar"``: ``2 ** (bids + 1) - 1`` nodes."""
    bids = 2 * dice * sides
    rolls = sum(sides ** k for k in range(2 * dice))
    return rolls + sides ** (2 * dice) * (2 ** (bids + 1) - 1)


def _infoset_count(dice: int, sides: int) -> int:
    """Information sets of the tree: a player's own dice (a multiset of ``dice`` faces,
    ``C(sides + dice - 1, dice)`` of them) and every increasing sequence of the
    ``2 * dice * sides`` bids after which that player bids (even lengths for player 0,
    odd for player 1: ``2 ** (bids - 1)`` each)."""
    return 2 * math.comb(sides + dice - 1, dice) * 2 ** (2 * dice * sides - 1)
