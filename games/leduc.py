"""Leduc hold'em (2 players), with OpenSpiel's ``leduc_poker`` rules and a configurable deck.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("leduc_poker(ranks=4)")
    >>> len(game.chance_outcomes())
    8
"""

from __future__ import annotations

import functools

from jaxcfr.game import CHANCE, LARGEST_TREE, TERMINAL, Game, GameError, too_large

__all__ = ["LeducPoker", "Deck", "SuitIsomorphism", "RankBuckets"]

FOLD = "fold"
CALL = "call"
RAISE = "raise"
_LETTER = {FOLD: "f", CALL: "c", RAISE: "r"}
# Rank names: the top ``ranks`` of 2..K (J Q K by default), or 2..A for a full 13-rank deck.
_RANK_NAMES = "23456789TJQK"
_SUIT_NAMES = "shdc"
_MAX_RAISES = 2


class _Node:
    """A node of the betting automaton: everything but the cards (shared, never mutated).

    ``player`` is the player to act, CHANCE (a card is dealt next) or TERMINAL;
    ``legal`` the legal actions; ``next`` the node after each action (after any
    card at a chance node); ``letter`` the key letter per action; at terminal
    nodes ``folder`` is the player who folded (-1 at a showdown) and ``ante``
    the chips each player put in.
    """

    __slots__ = ("player", "legal", "next", "letter", "folder", "ante")

    def __init__(self, player, legal=(), folder=-1, ante=(1, 1)):
        self.player = player
        self.legal = legal
        self.next = {}
        self.letter = {}
        self.folder = folder
        self.ante = ante


def _betting_tree(raise_sizes: tuple) -> _Node:
    """The betting automaton from the first private card on (OpenSpiel's rules, 2 players)."""

    def betting(rnd, player, stakes, ante, raises, calls):
        facing = stakes > ante[player]
        can_raise = raises < _MAX_RAISES
        node = _Node(player, (FOLD,) * facing + (CALL,) + (RAISE,) * can_raise)
        for action in node.legal:
            node.letter[action] = _LETTER[action]
            if action == FOLD:
                node.next[action] = _Node(TERMINAL, folder=player, ante=ante)
                continue
            new_ante = list(ante)
            if action == CALL:
                new_ante[player] = stakes
                new_ante = tuple(new_ante)
                done = (raises == 0 and calls + 1 == 2) or (raises > 0 and calls + 1 == 1)
                if not done:
                    child = betting(rnd, 1 - player, stakes, new_ante, raises, calls + 1)
                elif rnd == 0:
                    child = _Node(CHANCE)  # the public card, then round 2 from player 0
                    child.next[None] = betting(1, 0, stakes, new_ante, 0, 0)
                else:
                    child = _Node(TERMINAL, ante=new_ante)
            else:
                new_stakes = stakes + raise_sizes[rnd]
                new_ante[player] = new_stakes
                child = betting(rnd, 1 - player, new_stakes, tuple(new_ante), raises + 1, 0)
            node.next[action] = child
        return node

    deal1 = _Node(CHANCE)
    deal1.next[None] = betting(0, 0, 1, (1, 1), 0, 0)
    deal0 = _Node(CHANCE)
    deal0.next[None] = deal1
    return deal0


class Deck:
    """A Leduc deck of ``ranks * suits`` cards and its deals (shared, never mutated).

    Card ``c`` (an ``int``) has rank ``c // suits`` (OpenSpiel: 0,1 = J; 2,3 = Q;
    4,5 = K) and a label such as ``"Js"`` (``"rank.suit"`` past 13 ranks or 4 suits).
    ``prefix[p][c]`` is player ``p``'s information-set key prefix ``"p|label|"``
    (``c == deck``: not dealt yet). Also used by :mod:`jaxcfr_games.nolimit_leduc`.
    """

    def __init__(self, ranks: int, suits: int):
        self.ranks = ranks
        self.suits = suits
        self.deck = ranks * suits
        self.rank = tuple(c // suits for c in range(self.deck))
        if ranks <= 13 and suits <= len(_SUIT_NAMES):
            rank_names = _RANK_NAMES[12 - ranks:] if ranks <= 12 else _RANK_NAMES + "A"
            self.label = tuple(rank_names[c // suits] + _SUIT_NAMES[c % suits]
                               for c in range(self.deck))
        else:
            self.label = tuple(f"{c // suits}.{c % suits}" for c in range(self.deck))
        # infoset-key prefix per (player, card); card == deck stands for "not dealt yet".
        self.prefix = tuple(tuple(f"{p}|{self.label[c]}|" for c in range(self.deck))
                            + (f"{p}|?|",) for p in range(2))
        self.outcomes: dict[tuple, tuple] = {}

    def chance(self, dealt: tuple) -> tuple:
        """``(outcomes, cards left)`` after the cards ``dealt``."""
        entry = self.outcomes.get(dealt)
        if entry is None:
            left = [c for c in range(self.deck) if c not in dealt]
            p = 1.0 / len(left)
            entry = self.outcomes[dealt] = (tuple((c, p) for c in left), frozenset(left))
        return entry

    def showdown(self, cards: tuple) -> int:
        """The winner of a showdown of ``cards = (card 0, card 1, public)``; -1 for a split.

        A private card that pairs the public card's rank wins; otherwise the higher
        private rank; equal ranks (or both pairing) split.
        """
        rank = self.rank
        public = rank[cards[2]]
        s0 = (rank[cards[0]] == public, rank[cards[0]])
        s1 = (rank[cards[1]] == public, rank[cards[1]])
        return 0 if s0 > s1 else 1 if s1 > s0 else -1


class _Rules(Deck):
    """Per-game constants shared by every state of one game (never mutated)."""

    def __init__(self, ranks: int, suits: int, raise_sizes: tuple[int, int]):
        super().__init__(ranks, suits)
        self.raise_sizes = raise_sizes
        self.root = _betting_tree(raise_sizes)


class LeducPoker(Game):
    """Leduc hold'em for two players, as OpenSpiel's ``leduc_poker`` (default parameters).

    Rules:

    * The deck holds ``ranks * suits`` cards (``ranks >= 2``, ``suits >= 1``, at
      least 3 cards); card ``c`` (an ``int``) has rank ``c // suits`` (default:
      3 ranks J < Q < K, 2 suits, 6 cards). Both players ante 1 chip.
    * Chance deals a private card to player 0, then to player 1, then (after
      the first betting round) one public card: three chance nodes, each
      uniform over the cards left in the deck; the chance action is the card.
    * Two betting rounds, each started by player 0. Actions, in this order,
      are ``"fold"`` (legal only when facing a bet), ``"call"`` (call, or check
      when not facing a bet) and ``"raise"`` (call, then add ``raise_sizes[0]``
      = 2 chips in round 1 or ``raise_sizes[1]`` = 4 chips in round 2; at most
      two raises per round). A round ends when both players have checked, or
      when a raise has been called; a fold ends the game.
    * Showdown: a player whose private card pairs the public card's rank wins;
      otherwise the higher private rank wins; equal ranks (or both pairing,
      with 3+ suits) split the pot.
      Returns are chips won minus chips put in.

    With the defaults the tree has 9,457 histories and 936 information sets,
    as OpenSpiel's. The information-set key of player ``p`` is
    ``"p|card|round-1 bets"`` and, once the public card is out,
    ``"p|card|round-1 bets|public card|round-2 bets"``, with cards written
    rank+suit (e.g. ``"Js"``; as ``"rank.suit"`` numbers past 13 ranks or 4
    suits) and bets as letters ``f``/``c``/``r``, e.g. ``"1|Qh|rc|Ks|r"``.
    ``nash_value()`` is ``None`` (no closed form).
    """

    __slots__ = ("_r", "_cards", "_pub", "_node", "_returns")
    num_players = 2

    def __init__(self, ranks: int = 3, suits: int = 2, raise_sizes: tuple = (2, 4)):
        if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 2:
            raise ValueError(f"leduc_poker: ranks must be an integer >= 2, got {ranks!r}")
        if isinstance(suits, bool) or not isinstance(suits, int) or suits < 1:
            raise ValueError(f"leduc_poker: suits must be an integer >= 1, got {suits!r}")
        if ranks * suits < 3:
            raise ValueError(f"leduc_poker: the deck needs at least 3 cards, "
                             f"got ranks*suits = {ranks * suits}")
        if ranks * suits > _most_cards():
            why = too_large(f"ranks*suits = {ranks * suits} cards",
                            _tree_size(ranks * suits))
            raise ValueError(f"leduc_poker: {why}; the deck may hold 3..{_most_cards()} cards")
        try:
            sizes = tuple(raise_sizes)
        except TypeError:
            sizes = ()
        if len(sizes) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0
                                      for s in sizes):
            raise ValueError(f"leduc_poker: raise_sizes must be two positive integers, "
                             f"got {raise_sizes!r}")
        self._r = _Rules(ranks, suits, sizes)
        self._cards = ()          # (player 0 card, player 1 card, public card), as dealt
        self._pub = ""            # public key part: round-1 bets [| public card | round-2 bets]
        self._node = self._r.root  # where the betting stands (a shared automaton node)
        self._returns = None

    def clone(self) -> "LeducPoker":
        new = _new(type(self))
        new._r = self._r
        new._cards = self._cards
        new._pub = self._pub
        new._node = self._node
        new._returns = self._returns
        return new

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
        try:
            child = node.next[action]
        except (KeyError, TypeError):
            raise GameError(f"illegal action {action!r}; legal: {list(node.legal)}",
                            rule="illegal-action") from None
        self._pub += node.letter[action]
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
        self._node = self._node.next[None]

    def _payoff(self, end: _Node) -> tuple:
        if end.folder >= 0:
            lost = float(end.ante[end.folder])
            return (-lost, lost) if end.folder == 0 else (lost, -lost)
        winner = self._r.showdown(self._cards)
        win = float(end.ante[0])  # both put in the same at a showdown
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

    def tree_size(self):
        """The node count of the whole tree (at the root; ``None`` below it)."""
        return _tree_size(self._r.deck) if not self._cards else None

    def __repr__(self) -> str:
        return f"LeducPoker(cards={self._cards}, bets={self._pub!r})"


_new = object.__new__


@functools.lru_cache(maxsize=None)
def _tree_size(deck: int) -> int:
    """Nodes of the tree with a deck of ``deck`` cards: the betting automaton walked once,
    each chance node counted with the cards left (the shape does not depend on which)."""
    seen: dict[tuple[int, int], int] = {}

    def count(node: _Node, left: int) -> int:
        key = (id(node), left)
        if key not in seen:
            if node.player == TERMINAL:
                seen[key] = 1
            elif node.player == CHANCE:
                seen[key] = 1 + left * count(node.next[None], left - 1)
            else:
                seen[key] = 1 + sum(count(child, left) for child in node.next.values())
        return seen[key]

    return count(_betting_tree((2, 4)), deck)


@functools.lru_cache(maxsize=None)
def _most_cards() -> int:
    """The largest deck whose tree has at most ``LARGEST_TREE`` nodes."""
    lo, hi = 3, 4
    while _tree_size(hi) <= LARGEST_TREE:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _tree_size(mid) <= LARGEST_TREE else (lo, mid)
    return lo


# -- bucketings (information abstraction) ------------------------------------------------------
def _key_parts(key) -> list[str] | None:
    """``"p|card|bets[|public|bets]"`` split at ``|``; ``None`` before the private card."""
    if not isinstance(key, str):
        return None
    parts = key.split("|")
    if len(parts) not in (3, 5) or parts[1] == "?":
        return None
    return parts


def _rank_suit(label: str) -> tuple[str, str]:
    """A card label's rank and suit (``"Qh"`` -> ``("Q", "h")``, ``"3.1"`` -> ``("3", "1")``)."""
    if "." in label:
        rank, _, suit = label.partition(".")
        return rank, suit
    return label[:-1], label[-1:]


class SuitIsomorphism:
    """Leduc's suit isomorphism: a lossless bucketing (a ``jaxcfr.Bucketing``).

    Suits never change a Leduc payoff and chance deals every card alike, so two
    information sets that differ only by a renaming of the suits are strategically
    the same. The bucket writes the private card's suit as ``a`` and the public
    card's as ``a`` (the same suit) or ``b`` (another): ``"1|Qh|rc|Ks|r"`` and
    ``"1|Qs|rc|Kh|r"`` are both ``"1|Qa|rc|Kb|r"``. With two suits every bucket holds
    exactly two information sets: half the rows (936 -> 468 in Leduc), and a profile
    trained on the buckets and lifted is as unexploitable as one trained in the full
    game. The keys of :class:`LeducPoker` and of no-limit Leduc both qualify.
    """

    def bucket(self, player: int, key):
        parts = _key_parts(key)
        if parts is None:
            return key
        rank, suit = _rank_suit(parts[1])
        sep = "." if "." in parts[1] else ""
        parts[1] = f"{rank}{sep}a"
        if len(parts) == 5:
            public, public_suit = _rank_suit(parts[3])
            parts[3] = f"{public}{sep}{'a' if public_suit == suit else 'b'}"
        return "|".join(parts)

    def __repr__(self) -> str:
        return "suit_isomorphism"


class RankBuckets:
    """Rank and hand-strength buckets for Leduc with many ranks: a lossy bucketing.

    In the first round the private card's rank falls in one of ``buckets`` groups of
    neighbouring ranks (``rank * buckets // ranks``). Once the public card is out the
    hand's strength is its chance of winning (ties half) against a card drawn
    uniformly from the rest of the deck, and the bucket is the strength's percentile
    among all deals, cut into ``buckets`` equal parts. Suits are dropped (they never
    matter). With ``recall=True`` the second-round bucket keeps the first-round one,
    so players remember their card's group (perfect recall); with ``recall=False`` it
    does not, as practical card abstractions do: the bucketing declares imperfect
    recall (``imperfect_recall`` is true) and lowering accepts it.

    Keys: ``"p|b<group>|bets"``, then ``"p|b<group>|bets|s<strength>|bets"`` (or
    ``"p|bets|s<strength>|bets"`` without recall).

    Args:
      buckets: groups per round (>= 1).
      ranks, suits: the deck of the :class:`LeducPoker` it buckets (default the
        13-rank deck of ``leduc_poker(ranks=13)``).
      recall: keep the first-round group in the second round.
    """

    def __init__(self, buckets: int = 4, ranks: int = 13, suits: int = 2, recall: bool = True):
        for name, value, least in (("buckets", buckets, 1), ("ranks", ranks, 2),
                                   ("suits", suits, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"rank_buckets: {name} must be an integer >= {least}, "
                                 f"got {value!r}")
        if not isinstance(recall, bool):        # 'no' and 'false' are truthy
            raise ValueError(f"rank_buckets: recall must be True or False, got {recall!r}")
        if ranks * suits < 3:
            raise ValueError("rank_buckets: the deck needs at least 3 cards")
        self.buckets, self.ranks, self.suits = buckets, ranks, suits
        self.recall = bool(recall)
        self.imperfect_recall = not self.recall
        deck = Deck(ranks, suits)
        self._rank = {_rank_suit(label)[0]: deck.rank[c] for c, label in enumerate(deck.label)}
        self._strength = self._strength_buckets()

    def _strength_buckets(self) -> dict[tuple[int, int], int]:
        """``(private rank, public rank) -> strength bucket``, percentiles over all deals."""
        n, s = self.ranks, self.suits
        strength, weight = {}, {}
        for mine in range(n):
            for public in range(n):
                if mine == public and s < 2:
                    continue
                left = [s - (o == mine) - (o == public) for o in range(n)]
                total = sum(left)
                ours = (mine == public, mine)
                win = sum(c * ((ours > (o == public, o)) + 0.5 * (ours == (o == public, o)))
                          for o, c in enumerate(left))
                strength[mine, public] = win / total
                weight[mine, public] = s * (s - 1) if mine == public else s * s
        total = sum(weight.values())
        out = {}
        for pair, hs in strength.items():
            below = sum(w for q, w in weight.items() if strength[q] < hs)
            equal = sum(w for q, w in weight.items() if strength[q] == hs)
            mid = (below + equal / 2) / total
            out[pair] = min(int(mid * self.buckets), self.buckets - 1)
        return out

    def bucket(self, player: int, key):
        parts = _key_parts(key)
        if parts is None:
            return key
        mine = self._rank_of(parts[1])
        group = f"b{mine * self.buckets // self.ranks}"
        if len(parts) == 3:
            return f"{parts[0]}|{group}|{parts[2]}"
        strength = f"s{self._strength[mine, self._rank_of(parts[3])]}"
        if self.recall:
            return f"{parts[0]}|{group}|{parts[2]}|{strength}|{parts[4]}"
        return f"{parts[0]}|{parts[2]}|{strength}|{parts[4]}"

    def _rank_of(self, label: str) -> int:
        rank = self._rank.get(_rank_suit(label)[0])
        if rank is None:
            raise ValueError(f"{self!r} does not know the card {label!r}: it buckets "
                             f"leduc_poker(ranks={self.ranks}, suits={self.suits})")
        return rank

    def __repr__(self) -> str:
        return (f"rank_buckets(buckets={self.buckets}, ranks={self.ranks}, suits={self.suits}, "
                f"recall={self.recall})")
