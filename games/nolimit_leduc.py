"""No-limit Leduc hold'em (2 players): every integer bet size, and a bet-size abstraction.

The full game lets a player raise to any whole number of chips up to the stack, so
it has many more actions and histories than limit Leduc; :class:`BetMenu` keeps
fold, call, a few pot-fraction raises and all-in, the usual poker action
abstraction. The rules are ACPC's no-limit rules, as OpenSpiel's ``universal_poker``
plays them (see :class:`NoLimitLeduc`).

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("nolimit_leduc(stack=6)")
    >>> state = game.clone(); state.step(0); state.step(1)
    >>> state.legal_actions()
    ['c', 'r2', 'r3', 'r4', 'r5', 'r6']
    >>> BetMenu(fractions=(1.0,)).actions(state, 0)          # fold/call, pot, all-in
    ['c', 'r3', 'r6']
"""

from __future__ import annotations

from jaxcfr.game import CHANCE, TERMINAL, Game, GameError, pseudo_harmonic, too_large

from .leduc import Deck

__all__ = ["NoLimitLeduc", "BetMenu", "FOLD", "CALL"]

#: Fold (legal only when facing a bet).
#: The largest deck (as Leduc's) and stack the constructor takes: past them the rules'
#: tables alone take minutes to build (a stack of 10 chips already makes 1,145,677
#: histories; a larger game is refused before lowering by the memory budget's probe).
MAX_DECK = 150
MAX_STACK = 1000

FOLD = "f"
#: Check, or call the bet faced.
CALL = "c"
# A raise to ``n`` chips in total (ante included) is the action ``f"r{n}"`` (ACPC's notation).


def raise_to(action) -> int | None:
    """The chips a raise action puts in in total (``"r5"`` -> 5); ``None`` for fold and call."""
    return int(action[1:]) if isinstance(action, str) and action[:1] == "r" else None


def _is_raise(action) -> bool:
    """Whether ``action`` is a raise label ``"r<chips>"``."""
    return isinstance(action, str) and action[:1] == "r" and action[1:].isdigit()


class _Rules(Deck):
    """Per-game constants shared by every state of one game (never mutated)."""

    def __init__(self, ranks: int, suits: int, stack: int, ante: int):
        super().__init__(ranks, suits)
        self.stack = stack
        self.ante = ante
        start = _Betting(self, 0, 0, (ante, ante), min_to=2 * ante)
        self.root = _Betting(self, CHANCE, 0, (ante, ante), after=_Betting(
            self, CHANCE, 0, (ante, ante), after=start))


class _Betting:
    """A node of the betting automaton: everything but the cards.

    Shared by every deal that reaches it and never changed once made; children are
    made on first use (the automaton of a deep stack is large, a run visits what it
    needs). ``player`` is the player to act, CHANCE (a card is dealt next; ``after``
    is the node that follows) or TERMINAL (``folder``: who folded, -1 at a
    showdown). ``spent`` are the chips each player has put in, ``min_to`` the least
    a raise must reach (ACPC's ``minNoLimitRaiseTo``), ``called`` how many acting
    players have called the current bet (ACPC's ``numCalled``).
    """

    __slots__ = ("rules", "player", "round", "spent", "min_to", "called", "folder", "after",
                 "legal", "_children")

    def __init__(self, rules: _Rules, player: int, rnd: int, spent: tuple, *, min_to: int = 0,
                 called: int = 0, folder: int = -1, after: "_Betting | None" = None):
        self.rules = rules
        self.player = player
        self.round = rnd
        self.spent = spent
        self.min_to = min_to
        self.called = called
        self.folder = folder
        self.after = after
        self.legal = self._legal() if player >= 0 else ()
        self._children: dict = {}

    def _legal(self) -> tuple:
        stack, spent, p = self.rules.stack, self.spent, self.player
        top = max(spent)
        actions = [FOLD] if spent[p] < top else []
        actions.append(CALL)
        if sum(s < stack for s in spent) > 1:          # someone left to call a raise
            low = self.min_to
            if low > stack:                            # too short for a full raise: all-in only
                low = stack if top < stack else stack + 1
            actions.extend(f"r{n}" for n in range(low, stack + 1))
        return tuple(actions)

    def child(self, action) -> "_Betting":
        """The node after ``action`` (which must be in ``legal``)."""
        node = self._children.get(action)
        if node is None:
            node = self._children[action] = self._make(action)
        return node

    def _make(self, action) -> "_Betting":
        r, p, spent, rnd = self.rules, self.player, self.spent, self.round
        top = max(spent)
        if action == FOLD:
            return _Betting(r, TERMINAL, rnd, spent, folder=p)
        new = list(spent)
        if action == CALL:
            new[p] = top
            new = tuple(new)
            called = self.called + 1
            acting = sum(s < r.stack for s in new)
            if called < acting:
                return _Betting(r, 1 - p, rnd, new, min_to=self.min_to, called=called)
            if rnd == 1:
                return _Betting(r, TERMINAL, rnd, new)
            # End of round 1: deal the public card; bet again unless someone is all-in.
            after = (_Betting(r, 0, 1, new, min_to=top + r.ante) if acting > 1
                     else _Betting(r, TERMINAL, 1, new))
            return _Betting(r, CHANCE, rnd, new, after=after)
        to = raise_to(action)
        new[p] = to
        return _Betting(r, 1 - p, rnd, tuple(new), min_to=max(self.min_to, 2 * to - top),
                        called=1 if to < r.stack else 0)


class NoLimitLeduc(Game):
    """No-limit Leduc hold'em for two players (ACPC no-limit betting).

    Rules:

    * The deck is Leduc's (:class:`jaxcfr_games.leduc.Deck`: ``ranks * suits``
      cards, default J Q K in 2 suits). Both players ante ``ante`` chips and may
      put in at most ``stack`` chips in all (ante included).
    * Chance deals a private card to player 0, then to player 1; after the first
      betting round, one public card. Each chance node is uniform over the cards
      left; the chance action is the card (an ``int``).
    * Two betting rounds, each started by player 0. Actions, in this order:
      ``"f"`` (fold; only when facing a bet), ``"c"`` (check, or call) and
      ``"r<n>"`` for every whole ``n`` from the minimum raise to ``stack``
      (raise to ``n`` chips in total). The minimum raise-to is the bet faced
      plus the larger of ``ante`` and the round's last raise increment (ACPC's
      rule), or all-in when the stack is shorter than that. A round ends when
      both players have checked, or a raise has been called; a fold ends the
      game. When a player is all-in the public card is dealt and the hand goes
      to showdown with no more betting.
    * Showdown: a private card that pairs the public card wins; otherwise the
      higher private rank; equal ranks split. Returns are chips won minus chips
      put in.

    This is OpenSpiel's ``universal_poker`` with ``betting=nolimit, numPlayers=2,
    numRounds=2, blind="A A", firstPlayer="1 1", numSuits=suits, numRanks=ranks,
    numHoleCards=1, numBoardCards="0 1", stack="S S"`` (``A = ante``,
    ``S = stack``): the same tree, information sets and returns (tested).

    Sizes (``jaxcfr inspect``): stack 4: 17,077 histories; stack 6: 90,997; stack 8
    (the default): 353,797 histories, 15,240 information sets per player, 8 actions
    at most; stack 10: 1,145,677. The reference abstraction ``BetMenu((0.5, 1.0))``
    keeps 31,237 of the default's histories.

    The information-set key of player ``p`` is ``"p|card|round-1 bets"`` and, once
    the public card is out, ``"p|card|round-1 bets|public card|round-2 bets"``,
    with bets in ACPC's letters (``"c"``, ``"r5"``, ``"f"``) and cards as in
    Leduc (``"Qh"``), e.g. ``"1|Qh|r3c|Ks|r6"``. ``nash_value()`` is ``None``.
    """

    __slots__ = ("_r", "_cards", "_pub", "_node", "_returns")
    num_players = 2

    def __init__(self, ranks: int = 3, suits: int = 2, stack: int = 8, ante: int = 1):
        for name, value, least in (("ranks", ranks, 2), ("suits", suits, 1), ("ante", ante, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"nolimit_leduc: {name} must be an integer >= {least}, "
                                 f"got {value!r}")
        if not 3 <= ranks * suits <= MAX_DECK:
            raise ValueError(f"nolimit_leduc: the deck needs 3 to {MAX_DECK} cards, got "
                             f"ranks*suits = {ranks * suits}")
        if isinstance(stack, bool) or not isinstance(stack, int) or not ante <= stack <= \
                MAX_STACK:
            raise ValueError(f"nolimit_leduc: stack must be an integer from ante ({ante}) to "
                             f"{MAX_STACK}, got {stack!r}" + (
                                 f": {too_large(f'stack={stack}', None)}"
                                 if isinstance(stack, int) and stack > MAX_STACK else ""))
        self._r = _Rules(ranks, suits, stack, ante)
        self._cards = ()          # (player 0 card, player 1 card, public card), as dealt
        self._pub = ""            # public key part: round-1 bets [| public card | round-2 bets]
        self._node = self._r.root
        self._returns = None

    def clone(self) -> "NoLimitLeduc":
        new = _new(type(self))
        new._r = self._r
        new._cards = self._cards
        new._pub = self._pub
        new._node = self._node
        new._returns = self._returns
        return new

    # -- what a bet-size abstraction reads -----------------------------------
    @property
    def stack(self) -> int:
        """The most chips a player may put in (ante included)."""
        return self._r.stack

    @property
    def spent(self) -> tuple[int, int]:
        """Chips each player has put in so far (ante included)."""
        return self._node.spent

    # -- node type ---------------------------------------------------------
    def is_terminal(self) -> bool:
        return self._node.player == TERMINAL

    def is_chance(self) -> bool:
        return self._node.player == CHANCE

    def player_to_act(self) -> int:
        return self._node.player

    # -- moves -------------------------------------------------------------
    def chance_outcomes(self):
        if self._node.player == CHANCE:
            return list(self._r.chance(self._cards)[0])
        return None

    def legal_actions(self) -> list:
        return list(self._node.legal)

    def step(self, action) -> None:
        node = self._node
        if node.player == CHANCE:
            self._deal(action)
            return
        if node.player == TERMINAL:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        if action not in node.legal:
            raise GameError(f"illegal action {action!r}; legal: {list(node.legal)}",
                            rule="illegal-action")
        child = node.child(action)
        self._pub += action
        self._node = child
        if child.player == TERMINAL:
            self._returns = self._payoff(child)

    def _deal(self, card) -> None:
        try:
            legal = card in self._r.chance(self._cards)[1]
        except TypeError:  # unhashable
            legal = False
        if not legal:
            raise GameError(f"{card!r} is not a card left in the deck (dealt: {list(self._cards)})",
                            rule="illegal-action")
        self._cards = self._cards + (card,)
        if len(self._cards) == 3:
            self._pub += "|" + self._r.label[card] + "|"
        self._node = self._node.after
        if self._node.player == TERMINAL:
            self._returns = self._payoff(self._node)

    def _payoff(self, end: _Betting) -> tuple:
        spent = end.spent
        if end.folder >= 0:
            lost = float(spent[end.folder])
            return (-lost, lost) if end.folder == 0 else (lost, -lost)
        winner = self._r.showdown(self._cards)
        win = float(spent[0])  # both put in the same at a showdown
        if winner == 0:
            return (win, -win)
        if winner == 1:
            return (-win, win)
        return (0.0, 0.0)

    def terminal_returns(self) -> tuple:
        if self._returns is None:
            raise GameError("terminal_returns() called at a non-terminal node", rule="not-terminal")
        return self._returns

    # -- information -------------------------------------------------------
    def infoset_key(self, player: int) -> str:
        cards = self._cards
        card = cards[player] if player < len(cards) else self._r.deck
        return self._r.prefix[player][card] + self._pub

    def public_key(self) -> tuple:
        """The public state: how many cards are dealt, and the public part of the keys
        (the bets, and the board once it is out)."""
        return (len(self._cards), self._pub)

    def __repr__(self) -> str:
        return f"NoLimitLeduc(cards={self._cards}, bets={self._pub!r})"


class BetMenu:
    """A bet-size action abstraction of :class:`NoLimitLeduc` (an ``jaxcfr.Abstraction``).

    Keeps fold and call wherever they are legal and, of the raises, for each
    fraction ``f`` in ``fractions`` the legal raise closest to a raise of ``f``
    times the pot (raise to ``b + f * 2b`` when the bet to call is ``b``: the pot
    after calling is ``2b``; ties go to the smaller raise), plus the all-in raise
    when ``all_in``. Kept actions are in the game's order, so the order is the
    same at every history of an information set. Two fractions may land on the
    same raise: it is kept once.

    Action translation (:meth:`translate`): a raise the menu dropped goes to the
    two kept raises around it by Ganzfried and Sandholm's pseudo-harmonic mapping
    (:func:`jaxcfr.game.pseudo_harmonic`), sizes as fractions of the pot; lifting
    uses it (``jaxcfr.lift(..., translate=True)``, the default for this menu).

    Example::

        >>> import jaxcfr
        >>> from jaxcfr_games.nolimit_leduc import BetMenu
        >>> game = jaxcfr.Abstracted(jaxcfr.load_game("nolimit_leduc"), BetMenu((0.5, 1.0)))
    """

    def __init__(self, fractions=(0.5, 1.0), all_in: bool = True):
        try:
            fractions = tuple(float(f) for f in fractions)
        except (TypeError, ValueError):
            raise ValueError(f"BetMenu: fractions must be a list of numbers, "
                             f"got {fractions!r}") from None
        if any(not f > 0 or f == float("inf") for f in fractions):
            raise ValueError(f"BetMenu: fractions must be positive and finite, got {fractions}")
        if not isinstance(all_in, bool):        # 'no' and 'false' are truthy
            raise ValueError(f"BetMenu: all_in must be True or False, got {all_in!r}")
        if not fractions and not all_in:
            raise ValueError("BetMenu: keep at least one raise (give fractions or all_in=True)")
        self.fractions = fractions
        self.all_in = bool(all_in)

    def actions(self, state: NoLimitLeduc, player: int) -> list:
        legal = state.legal_actions()
        other = next((a for a in legal if a not in (FOLD, CALL) and not _is_raise(a)), None)
        if other is not None or not hasattr(state, "spent"):
            raise GameError(
                f"bet_menu is a bet-size menu for no-limit games whose actions are fold "
                f"{FOLD!r}, call {CALL!r} and raises 'r<chips>' (nolimit_leduc); this game "
                + (f"has the action {other!r}" if other is not None else
                   "does not say what each player has put in (spent)")
                + f" among {legal!r}, so the menu matches nothing in it: use bet_menu on "
                "nolimit_leduc, or an abstraction written for this game",
                rule="abstraction-game")
        raises = [n for n in map(raise_to, legal) if n is not None]
        if not raises:
            return legal
        bet = max(state.spent)
        keep = {min(raises, key=lambda n: (abs(n - (bet + f * 2 * bet)), n))
                for f in self.fractions}
        if self.all_in:
            keep.add(raises[-1])
        return [a for a in legal if raise_to(a) is None or raise_to(a) in keep]

    def translate(self, state: NoLimitLeduc, player: int, action) -> list:
        """``[(kept action, probability), ...]`` for ``action`` at ``state``.

        A kept action is itself. A raise to ``n`` chips is the fraction
        ``x = (n - b) / 2b`` of the pot (``b`` the bet to call, as the menu's
        fractions): between the kept raises of fractions ``A < x < B`` it goes to
        ``A`` with probability ``(B - x)(1 + A) / ((B - A)(1 + x))`` and to ``B``
        with the rest; below the smallest kept raise to it, above the largest to
        that one. A raise where no raise is kept (or legal), a raise to no more
        than the bet to call (possible only off the real history), and a fold
        where there is no bet to fold to, are a call (check). ``action`` need not
        be legal at ``state`` (a real history replayed on a translated one, whose
        pot may differ: a raise is read in chips, "raise to n").
        """
        kept = self.actions(state, player)
        if action in kept:
            return [(action, 1.0)]
        to = raise_to(action)
        raises = [a for a in kept if raise_to(a) is not None]
        bet = max(state.spent)
        if to is None or not raises or to <= bet:
            return [(CALL, 1.0)]
        pot = 2 * bet
        x = (to - bet) / pot
        sizes = [(raise_to(a) - bet) / pot for a in raises]
        if x <= sizes[0]:
            return [(raises[0], 1.0)]
        if x >= sizes[-1]:
            return [(raises[-1], 1.0)]
        hi = next(i for i, size in enumerate(sizes) if size > x)
        p = pseudo_harmonic(x, sizes[hi - 1], sizes[hi])
        return [(raises[hi - 1], p), (raises[hi], 1.0 - p)]

    def __repr__(self) -> str:
        return f"BetMenu(fractions={self.fractions}, all_in={self.all_in})"


_new = object.__new__
