"""Kuhn poker for 2 to 7 players, with OpenSpiel's ``kuhn_poker`` rules.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("kuhn_poker(players=3)")
    >>> game.chance_outcomes()
    [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)]
"""

from __future__ import annotations

import functools
import math

from jaxcfr.game import CHANCE, LARGEST_TREE, TERMINAL, Game, GameError, too_large

__all__ = ["KuhnPoker"]

PASS = "pass"
BET = "bet"
_ACTIONS = (PASS, BET)
_LETTER = {PASS: "p", BET: "b"}


class _Rules:
    """Per-game constants shared by every state of one game (never mutated)."""

    def __init__(self, players: int):
        self.players = players
        self.deck = players + 1
        # Chance outcomes per tuple of cards dealt so far, filled lazily.
        self.outcomes: dict[tuple, tuple] = {}
        # infoset-key prefix per (player, card); card == deck stands for "not dealt yet".
        self.prefix = tuple(tuple(f"{p}|{c}|" for c in range(self.deck)) + (f"{p}|?|",)
                            for p in range(players))
        # Showdown table per final betting sequence, filled lazily.
        self.showdowns: dict[str, tuple] = {}

    def chance(self, dealt: tuple) -> tuple:
        """``(outcomes, cards left)`` after the cards ``dealt``."""
        entry = self.outcomes.get(dealt)
        if entry is None:
            left = [c for c in range(self.deck) if c not in dealt]
            p = 1.0 / len(left)
            entry = self.outcomes[dealt] = (tuple((c, p) for c in left), frozenset(left))
        return entry

    def showdown(self, hist: str, first_bettor: int) -> tuple:
        """``(players in the showdown, returns if player i wins, per i)`` for a final ``hist``."""
        entry = self.showdowns.get(hist)
        if entry is None:
            n = self.players
            if first_bettor < 0:
                in_hand = [True] * n
            else:
                # The first bettor, and every player whose one move after the bet was "bet".
                in_hand = [p == first_bettor or hist[p if p > first_bettor else n + p] == "b"
                           for p in range(n)]
            paid = [2 if in_hand[p] and first_bettor >= 0 else 1 for p in range(n)]
            pot = sum(paid)
            returns = tuple(tuple(float((pot if p == w else 0) - paid[p]) for p in range(n))
                            for w in range(n))
            entry = self.showdowns[hist] = (tuple(p for p in range(n) if in_hand[p]), returns)
        return entry


class KuhnPoker(Game):
    """Kuhn poker, exactly as OpenSpiel's ``kuhn_poker`` (any of its player counts).

    Rules (``N = players``):

    * The deck holds ``N + 1`` cards ranked ``0 < 1 < ... < N``. Every player
      antes 1 chip.
    * Chance deals one private card to each player in turn, player 0 first:
      ``N`` chance nodes, each uniform over the cards still in the deck; the
      chance action is the card dealt (an ``int``).
    * Betting, one round, player 0 first, each player acting in seat order with
      actions ``"pass"`` and ``"bet"`` (in that order). Before anyone bets,
      ``"bet"`` puts 1 chip in and ``"pass"`` checks. Once somebody has bet,
      each other player gets exactly one more turn (continuing round the table
      until it returns to the first bettor): ``"bet"`` calls 1 chip and
      ``"pass"`` folds.
    * If nobody bets, every player shows down; otherwise the first bettor and
      the players who called show down. The highest card among them takes the
      pot: a player's return is ``pot - contribution`` if they win, else
      ``-contribution``.

    The information-set key of player ``p`` is ``"p|card|history"`` where
    ``card`` is their card (``?`` before it is dealt) and ``history`` the
    public betting letters (``p`` pass, ``b`` bet), e.g. ``"1|2|pb"``.
    For 2 players ``nash_value()`` is ``(-1/18, 1/18)``.
    """

    __slots__ = ("_r", "num_players", "_cards", "_hist", "_first_bettor", "_returns")

    def __init__(self, players: int = 2):
        most = _most_players()
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= most:
            why = ""
            if isinstance(players, int) and players > most:
                n = players if players <= 16 else most + 1
                why = f": {too_large(f'{n} players', _tree_size(n))}"
            raise ValueError(f"kuhn_poker: players must be an integer in 2..{most}, got "
                             f"{players!r}{why}")
        self._setup(players)

    def _setup(self, players: int) -> None:
        self._r = _Rules(players)
        self.num_players = players
        self._cards = ()          # cards dealt so far, by seat
        self._hist = ""           # betting letters, one per decision
        self._first_bettor = -1
        self._returns = None      # set once the game is over

    def tree_size(self):
        """The node count of the whole tree (at the root; ``None`` below it)."""
        if self._cards or self._hist:
            return None
        return _tree_size(self.num_players)

    def clone(self) -> "KuhnPoker":
        new = _new(type(self))
        new._r = self._r
        new.num_players = self.num_players
        new._cards = self._cards
        new._hist = self._hist
        new._first_bettor = self._first_bettor
        new._returns = self._returns
        return new

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._returns is not None

    def is_chance(self) -> bool:
        return len(self._cards) < self.num_players

    def player_to_act(self) -> int:
        if self._returns is not None:
            return TERMINAL
        if len(self._cards) < self.num_players:
            return CHANCE
        return len(self._hist) % self.num_players

    # -- moves -------------------------------------------------------------
    def chance_outcomes(self):
        if len(self._cards) < self.num_players:
            return list(self._r.chance(self._cards)[0])
        return None

    def legal_actions(self) -> list:
        if self._returns is not None or len(self._cards) < self.num_players:
            return []
        return [PASS, BET]

    def step(self, action) -> None:
        if self._returns is not None:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        n = self.num_players
        if len(self._cards) < n:
            try:
                legal = action in self._r.chance(self._cards)[1]
            except TypeError:  # unhashable
                legal = False
            if not legal:
                raise GameError(f"{action!r} is not a card left in the deck "
                                f"(dealt: {list(self._cards)})", rule="illegal-action")
            self._cards = self._cards + (action,)
            return
        letter = _LETTER.get(action) if isinstance(action, str) else None
        if letter is None:
            raise GameError(f"illegal action {action!r}; legal: {list(_ACTIONS)}",
                            rule="illegal-action")
        player = len(self._hist) % n
        if letter == "b" and self._first_bettor < 0:
            self._first_bettor = player
        self._hist += letter
        fb = self._first_bettor
        if (fb < 0 and len(self._hist) == n) or (fb >= 0 and len(self._hist) == n + fb):
            self._returns = self._payoff()

    def _payoff(self) -> tuple:
        contenders, returns = self._r.showdown(self._hist, self._first_bettor)
        cards = self._cards
        winner = max(contenders, key=cards.__getitem__)
        return returns[winner]

    def terminal_returns(self) -> tuple:
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        cards = self._cards
        card = cards[player] if player < len(cards) else self._r.deck
        return self._r.prefix[player][card] + self._hist

    def nash_value(self):
        return (-1.0 / 18.0, 1.0 / 18.0) if self.num_players == 2 else None

    def __repr__(self) -> str:
        return f"KuhnPoker(players={self.num_players}, cards={self._cards}, history={self._hist!r})"


_new = object.__new__


@functools.lru_cache(maxsize=None)
def _tree_size(players: int) -> int:
    """Nodes of the ``players``-player tree: the deal, then one betting tree per deal (its
    shape does not depend on the cards; it is walked once with the game's own rules)."""
    deck = players + 1
    dealing = sum(math.perm(deck, k) for k in range(players))
    state = _new(KuhnPoker)
    state._setup(players)
    state._cards = tuple(range(players))
    stack, betting = [state], 0
    while stack:
        s = stack.pop()
        betting += 1
        for action in s.legal_actions():
            child = s.clone()
            child.step(action)
            stack.append(child)
    return dealing + math.perm(deck, players) * betting


@functools.lru_cache(maxsize=None)
def _most_players() -> int:
    """The most players whose tree has at most ``LARGEST_TREE`` nodes."""
    n = 2
    while _tree_size(n + 1) <= LARGEST_TREE:
        n += 1
    return n
