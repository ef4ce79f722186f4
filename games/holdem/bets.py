"""The bet tree of a heads-up postflop spot, in the conventions the postflop solvers share.

Written from b-inary/postflop-solver's ``src/bet_size.rs`` and ``src/action_tree.rs``
(commit 9d1509f) so that a spot defined there is rebuilt here exactly (same actions, same
amounts, same order; ``tests/test_holdem_tree.py`` compares both on randomized spots).

Bet sizes (:func:`parse_sizes`), a comma-separated list, case-insensitive:

===========  ==============================================================================
``60%``      a fraction of the pot (after the call, for a raise: ``prev + pot * 60%``)
``2.5x``     a multiple of the bet faced (raises only)
``100c``     a constant number of chips (a raise adds it to the bet faced); ``20c3r``: only
             while at most 3 bets were made on this street (a raise cap, raises only)
``e``        the geometric size: the same fraction of the pot on every remaining street
             (flop 3, turn 2, river 1) ends all-in; ``2e`` over 2 streets; ``3e150%`` at
             most 150% of the pot; for a raise, the streets less the bets made so far
===========  ==============================================================================

``a`` is all-in. A tree (:func:`build_tree`) takes sizes per street and player
(:class:`TreeConfig`), donk sizes for the turn and the river (OOP's first bet after it
called on the previous street; ``None``: its ordinary bet sizes), and three thresholds:
``add_allin`` (add all-in when it is at most this many pots), ``force_allin`` (a bet
that leaves at most this fraction of the pot behind after a call becomes all-in) and
``merging`` (PioSOLVER's merging of close sizes: keep the largest, drop every size ``y``
with ``(1 + x) / (1 + y) < 1 + merging``, go on from the next kept one).

Amounts are whole chips (``int``); a bet or raise amount is what the player has put in
on this street after it (postflop-solver's ``Bet(amount)``, ``Raise(amount)``,
``AllIn(amount)``). Rounding is Rust's (half away from zero), not Python's.

Players: 0 is OOP (acts first on every street), 1 is IP.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Sequence

from .cards import HoldemError

__all__ = ["BetSize", "parse_sizes", "Action", "TreeConfig", "tree_config", "BetNode",
           "BetTree", "build_tree", "TreeSize", "tree_size", "STREETS", "FOLD", "CHECK",
           "CALL", "BET", "RAISE", "ALLIN"]

#: Street names, by board size 3, 4, 5.
STREETS = ("flop", "turn", "river")

# -- bet sizes -------------------------------------------------------------------------------
POT, PREV, ADD, GEOMETRIC, ALL_IN = range(5)      # postflop-solver's BetSize variants, in order


@dataclasses.dataclass(frozen=True, order=True)
class BetSize:
    """One bet size: ``kind`` (``POT``, ``PREV``, ``ADD``, ``GEOMETRIC``, ``ALL_IN``, in the
    order postflop-solver sorts them), ``value`` (the pot fraction, the multiple, the chips,
    the streets; 0 for ``e``: the streets left) and ``cap`` (``ADD``: the raise cap, 0 none;
    ``GEOMETRIC``: the largest pot fraction, ``inf`` none)."""
    kind: int
    value: float = 0.0
    cap: float = 0.0

    def __str__(self) -> str:
        if self.kind == POT:
            return f"{_num(self.value * 100)}%"
        if self.kind == PREV:
            return f"{_num(self.value)}x"
        if self.kind == ADD:
            return f"{int(self.value)}c" + (f"{int(self.cap)}r" if self.cap else "")
        if self.kind == GEOMETRIC:
            return ((f"{int(self.value)}" if self.value else "") + "e"
                    + (f"{_num(self.cap * 100)}%" if math.isfinite(self.cap) else ""))
        return "a"


def _num(x: float) -> str:
    return f"{x:g}" if x == round(x, 6) else repr(x)


_FLOAT = re.compile(r"[0-9]+|[0-9]+\.[0-9]*|[0-9]*\.[0-9]+")


def _float(text: str) -> float | None:
    """Rust's ``str::parse::<f64>`` after postflop-solver's refusal of signs and letters."""
    return float(text) if _FLOAT.fullmatch(text) else None


def _size(token: str, is_raise: bool) -> BetSize:
    """postflop-solver's ``bet_size_from_str``; the error says what is wrong."""
    s = token.lower()
    bad = f"invalid bet size {token!r}"
    if s.endswith("x"):
        if not is_raise:
            raise HoldemError(f"{token!r}: a multiple of the previous bet is for raises only")
        x = _float(s[:-1])
        if x is None:
            raise HoldemError(bad + ": a multiple is a number and 'x', e.g. '2.5x'")
        if x <= 1.0:
            raise HoldemError(f"{token!r}: the multiple must be greater than 1")
        return BetSize(PREV, x)
    if "c" in s:
        parts = s.split("c")
        if len(parts) != 2:
            raise HoldemError(bad + ": a constant size is chips and 'c', e.g. '100c' or '20c3r'")
        add = _float(parts[0])
        if add is None:
            raise HoldemError(bad + ": a constant size is chips and 'c', e.g. '100c'")
        if add != math.trunc(add):
            raise HoldemError(f"{token!r}: a constant size is a whole number of chips")
        if add > 2 ** 31 - 1:
            raise HoldemError(f"{token!r}: a constant size must be less than 2^31")
        cap = 0
        if parts[1]:
            if not is_raise:
                raise HoldemError(f"{token!r}: a raise cap is for raises only")
            if not parts[1].endswith("r"):
                raise HoldemError(bad + ": a raise cap is a number and 'r', e.g. '20c3r'")
            c = _float(parts[1][:-1])
            if c is None:
                raise HoldemError(bad + ": a raise cap is a number and 'r', e.g. '20c3r'")
            if c != math.trunc(c) or c == 0:
                raise HoldemError(f"{token!r}: the raise cap must be a positive whole number")
            if c > 100:
                raise HoldemError(f"{token!r}: the raise cap must be at most 100")
            cap = int(c)
        return BetSize(ADD, add, cap)
    if "e" in s:
        parts = s.split("e")
        if len(parts) != 2:
            raise HoldemError(bad + ": a geometric size is 'e', '2e' or '2e150%'")
        streets = 0
        if parts[0]:
            n = _float(parts[0])
            if n is None:
                raise HoldemError(bad + ": a geometric size is 'e', '2e' or '2e150%'")
            if n != math.trunc(n) or n == 0:
                raise HoldemError(f"{token!r}: the number of streets must be a positive "
                                  "whole number")
            if n > 100:
                raise HoldemError(f"{token!r}: the number of streets must be at most 100")
            streets = int(n)
        most = math.inf
        if parts[1]:
            m = _float(parts[1][:-1]) if parts[1].endswith("%") else None
            if m is None:
                raise HoldemError(bad + ": the largest geometric size is a percentage of "
                                  "the pot, e.g. '2e150%'")
            most = m / 100.0
        return BetSize(GEOMETRIC, streets, most)
    if s.endswith("%"):
        p = _float(s[:-1])
        if p is None:
            raise HoldemError(bad + ": a pot fraction is a number and '%', e.g. '60%'")
        return BetSize(POT, p / 100.0)
    if s == "a":
        return BetSize(ALL_IN)
    raise HoldemError(bad + ": sizes end in '%' (pot), 'x' (raises: times the bet faced), "
                      "'c' (chips), 'e' (geometric) or are 'a' (all-in)")


def parse_sizes(text, is_raise: bool = False, what: str = "bet sizes") -> tuple[BetSize, ...]:
    """The sizes of a comma-separated list (``"60%, e, a"``), sorted as postflop-solver
    sorts them; a list of strings is taken as already split. ``""``: none. A bad size
    raises :class:`HoldemError` naming it and its ``position`` in ``text``."""
    if isinstance(text, (list, tuple)):
        text = ", ".join(str(t) for t in text)
    if not isinstance(text, str):
        raise HoldemError(f"{what} must be a string such as '60%, e, a', got {text!r}")
    pieces, start = [], 0
    for raw in text.split(","):
        lead = len(raw) - len(raw.lstrip())
        pieces.append((raw.strip(), start + lead))
        start += len(raw) + 1
    if pieces[-1][0] == "":
        pieces.pop()                          # a trailing comma (or an empty list)
    out = []
    for token, position in pieces:
        try:
            out.append(_size(token, is_raise))
        except HoldemError as e:
            raise HoldemError(f"{what} {text!r}, at position {position}: {e}",
                              position) from None
    return tuple(sorted(out))


# -- actions ---------------------------------------------------------------------------------
FOLD, CHECK, CALL, BET, RAISE, ALLIN = range(1, 7)   # postflop-solver's Action variants
_NAMES = {FOLD: "Fold", CHECK: "Check", CALL: "Call", BET: "Bet", RAISE: "Raise",
          ALLIN: "AllIn"}


@dataclasses.dataclass(frozen=True, order=True)
class Action:
    """A player's action: ``kind`` (``FOLD``, ``CHECK``, ``CALL``, ``BET``, ``RAISE``,
    ``ALLIN``, ordered as postflop-solver orders them) and ``amount`` (bets, raises, all-in:
    the player's chips in on this street after it)."""
    kind: int
    amount: int = 0

    def __str__(self) -> str:
        name = _NAMES[self.kind]
        return f"{name}({self.amount})" if self.kind >= BET else name

    @property
    def label(self) -> str:
        """A short label: ``fold``, ``check``, ``call``, ``bet 60``, ``raise 150``,
        ``allin 200``."""
        name = _NAMES[self.kind].lower()
        return f"{name} {self.amount}" if self.kind >= BET else name


def _round(x: float) -> int:
    """Rust's ``x.round() as i32``: half away from zero, saturating."""
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return 2 ** 31 - 1 if x > 0 else -2 ** 31
    r = math.floor(abs(x))
    r += 1 if abs(x) - r >= 0.5 else 0
    r = r if x >= 0 else -r
    return max(-2 ** 31, min(2 ** 31 - 1, r))


# -- the configuration -----------------------------------------------------------------------
Sizes = tuple[BetSize, ...]


@dataclasses.dataclass(frozen=True)
class TreeConfig:
    """postflop-solver's ``TreeConfig`` without rake.

    Attributes:
      street: the first street, 0 flop, 1 turn, 2 river (its ``initial_state``).
      pot: the starting pot, chips (> 0); the players put in half each.
      stack: the effective stack behind, chips (> 0).
      bets: ``[street][player]`` the sizes of a first bet.
      raises: ``[street][player]`` the sizes of a raise.
      donks: ``[street]`` OOP's donk sizes (``None``: its bet sizes; the flop has none).
      add_allin, force_allin, merging: the thresholds (module docstring; 0 disables).
    """
    street: int
    pot: int
    stack: int
    bets: tuple[tuple[Sizes, Sizes], ...]
    raises: tuple[tuple[Sizes, Sizes], ...]
    donks: tuple[Sizes | None, Sizes | None, Sizes | None] = (None, None, None)
    add_allin: float = 0.0
    force_allin: float = 0.0
    merging: float = 0.0

    def __post_init__(self):
        if self.street not in (0, 1, 2):
            raise HoldemError(f"the first street must be 0 (flop), 1 (turn) or 2 (river), "
                              f"got {self.street!r}")
        for name in ("pot", "stack"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 < v < 2 ** 31:
                raise HoldemError(f"{name} must be a positive whole number of chips, got {v!r}")
        for name in ("add_allin", "force_allin", "merging"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0 \
                    or not math.isfinite(v):
                raise HoldemError(f"{name} must be a non-negative number, got {v!r}")


def _per_street_player(value, what: str, is_raise: bool):
    """``[street][player]`` sizes from a string (every street, both players), a pair
    ``(oop, ip)`` (every street), or a dict by street name of either."""
    def pair(v, where):
        if isinstance(v, str) or v is None:
            s = parse_sizes(v or "", is_raise, f"{what}{where}")
            return (s, s)
        if isinstance(v, (list, tuple)) and len(v) == 2 and \
                all(isinstance(x, str) or x is None for x in v):
            return tuple(parse_sizes(x or "", is_raise, f"{what}{where}, "
                                     f"{('OOP', 'IP')[i]}") for i, x in enumerate(v))
        raise HoldemError(f"{what}{where} must be a string of sizes ('60%, e, a') or a pair "
                          f"of them (OOP's, IP's), got {v!r}")
    if isinstance(value, dict):
        unknown = set(value) - set(STREETS)
        if unknown:
            raise HoldemError(f"{what}: streets are {', '.join(STREETS)}, got "
                              f"{', '.join(map(repr, sorted(unknown, key=str)))}")
        return tuple(pair(value.get(s, ""), f" ({s})") for s in STREETS)
    p = pair(value, "")
    return (p, p, p)


def tree_config(street, pot: int, stack: int, bets="", raises="", *, turn_donk=None,
                river_donk=None, add_allin: float = 0.0, force_allin: float = 0.0,
                merging: float = 0.0) -> TreeConfig:
    """A :class:`TreeConfig` from the strings poker users write.

    ``street``: ``"flop"``, ``"turn"``, ``"river"`` or 0..2. ``bets`` / ``raises``: a size
    string for every street and both players, a pair ``(oop, ip)``, or a dict by street
    name (``{"flop": "33%", "turn": ("50%", "75%"), "river": "e"}``; a street left out has
    none). ``turn_donk`` / ``river_donk``: OOP's donk sizes (``None``: none, as
    postflop-solver's default).
    """
    if isinstance(street, str):
        if street not in STREETS:
            raise HoldemError(f"street must be one of {', '.join(STREETS)}, got {street!r}")
        street = STREETS.index(street)
    donks = (None,
             None if turn_donk is None else parse_sizes(turn_donk, False, "turn_donk"),
             None if river_donk is None else parse_sizes(river_donk, False, "river_donk"))
    return TreeConfig(street, pot, stack, _per_street_player(bets, "bets", False),
                      _per_street_player(raises, "raises", True), donks, add_allin,
                      force_allin, merging)


# -- the tree --------------------------------------------------------------------------------
@dataclasses.dataclass
class BetNode:
    """A node of the bet tree.

    Attributes:
      kind: ``"decision"``, ``"chance"`` (the next street's card; one node, cards not
        distinguished), ``"fold"`` or ``"showdown"``.
      street: 0 flop, 1 turn, 2 river.
      player: the player to act (decision), the one who folded (fold); else -1.
      bets: ``(oop, ip)`` chips each has put in since the spot started (beyond the pot).
      history: the actions from the root (chance nodes omitted, as postflop-solver).
      actions: the legal actions (decision) in postflop-solver's order.
      children: the node index after each action (chance: the one next street's node).
    """
    kind: str
    street: int
    player: int
    bets: tuple[int, int]
    history: tuple[Action, ...]
    actions: list[Action] = dataclasses.field(default_factory=list)
    children: list[int] = dataclasses.field(default_factory=list)

    @property
    def terminal(self) -> bool:
        return self.kind in ("fold", "showdown")


@dataclasses.dataclass
class _Info:
    """postflop-solver's ``BuildTreeInfo``."""
    prev_action: Action | None = None       # None: Action::None; "chance": Action::Chance
    chance: bool = False
    num_bets: int = 0
    allin_flag: bool = False
    oop_call_flag: bool = False
    stack: tuple[int, int] = (0, 0)
    prev_amount: int = 0

    def next(self, player: int, action: Action | None) -> "_Info":
        num_bets, allin_flag, oop_call = self.num_bets, self.allin_flag, self.oop_call_flag
        stack, prev_amount = list(self.stack), self.prev_amount
        if action is not None:
            if action.kind == CHECK:
                oop_call = False
            elif action.kind == CALL:
                num_bets = 0
                oop_call = player == 0
                stack[player] = stack[player ^ 1]
                prev_amount = 0
            elif action.kind in (BET, RAISE, ALLIN):
                to_call = stack[player] - stack[player ^ 1]
                num_bets += 1
                allin_flag = action.kind == ALLIN
                stack[player] -= action.amount - prev_amount + to_call
                prev_amount = action.amount
        return _Info(action, action is None, num_bets, allin_flag, oop_call, tuple(stack),
                     prev_amount)


@dataclasses.dataclass
class BetTree:
    """The bet tree of a :class:`TreeConfig`: ``nodes[0]`` is the root, children after their
    parent (pre-order)."""
    config: TreeConfig
    nodes: list[BetNode]

    def __len__(self) -> int:
        return len(self.nodes)

    def counts(self) -> dict[str, int]:
        """Nodes by kind."""
        out = {"decision": 0, "chance": 0, "fold": 0, "showdown": 0}
        for n in self.nodes:
            out[n.kind] += 1
        return out

    def dump(self) -> list[str]:
        """One line per node as ``benchmarks/peers/postflop_tree_dump.rs`` prints
        postflop-solver's tree (chance nodes folded into the decision after them)."""
        out = []

        def hist(h):
            return "[" + ", ".join(map(str, h)) + "]"

        def go(i, after_chance):
            n = self.nodes[i]
            bets = f"bets=[{n.bets[0]}, {n.bets[1]}]"
            if n.kind == "chance":
                return go(n.children[0], True)
            if n.terminal:
                out.append(f"T-{n.kind} {hist(n.history)} {bets}")
                return
            out.append(f"{'C+D' if after_chance else 'D'} {hist(n.history)} {bets} "
                       f"actions={hist(n.actions)}")
            for c in n.children:
                go(c, False)
        go(0, False)
        return out


#: The most nodes a bet tree (actions only, no cards) may have: postflop-solver's trees have
#: hundreds to thousands; 1-chip sizes behind a deep stack have billions, which building
#: node by node in Python would never finish.
LARGEST_BET_TREE = 1_000_000
#: The most actions on one line of a bet tree (the peer's deepest trees have about 20):
#: each node keeps its line, so a deeper tree costs its depth per node to build.
LONGEST_BET_LINE = 200


def _line(history, more: bool = False) -> str:
    """The first actions of a line as the tree names them, for a message."""
    return ", ".join(map(str, history[:6])) + (", ..." if len(history) > 6 or more else "")


def _children(config: TreeConfig, kind: str, street: int, player: int, info: _Info,
              amount: int) -> list[tuple]:
    """The children of a node (postflop-solver's ``build_tree_recursive``), in order:
    ``(action, kind, street, player, info, amount)`` each, ``action`` ``None`` below a
    chance node (its one next street's node); ``[]`` at a terminal. ``amount``:
    postflop-solver's ``node.amount``, the chips each player matched before this street's
    bets. One rule for :func:`build_tree` and :func:`tree_size`."""
    if kind in ("fold", "showdown"):
        return []
    if kind == "chance":
        nxt = street + 1
        child_info = info.next(0, None)
        if not info.allin_flag:
            return [(None, "decision", nxt, 0, child_info, amount)]
        return [(None, "chance" if street == 0 else "showdown", nxt, -1, child_info, amount)]
    out = []
    opponent = player ^ 1
    to_call = info.stack[player] - info.stack[opponent]
    for action in _actions(config, street, player, info, amount):
        if action.kind == FOLD:
            k, who = "fold", player
        elif action.kind == CHECK:
            if player == 0:
                k, who = "decision", opponent
            else:
                k, who = ("showdown" if street == 2 else "chance"), -1
        elif action.kind == CALL:
            k, who = ("showdown" if street == 2 else "chance"), -1
        else:
            k, who = "decision", opponent
        out.append((action, k, street, who, info.next(player, action), amount + (
            to_call if action.kind in (CALL, BET, RAISE, ALLIN) else 0)))
    return out


def _too_deep(config: TreeConfig, history, more: bool = False) -> HoldemError:
    """A line longer than ``LONGEST_BET_LINE``: ``history`` its first actions (``more``:
    it goes on past them)."""
    return HoldemError(f"a line of the bet tree is more than {LONGEST_BET_LINE} actions long "
                       f"(stack {config.stack}, pot {config.pot}; {_line(history, more)}): "
                       f"give larger sizes or a raise cap ('20c3r')")


@dataclasses.dataclass(frozen=True)
class TreeSize:
    """The size of a bet tree, counted before it is built (:func:`tree_size`).

    Attributes:
      nodes: the bet tree's nodes (``len(build_tree(config))``).
      dealt: ``[3]`` the bet tree's nodes below 0, 1 and 2 cards dealt since the spot's
        street: a public tree repeats those below one card once per card, those below two
        once per pair of cards (:meth:`public_nodes`).
      longest: the most actions on one line.
      bets: ``[3]`` per street (flop, turn, river), the most bets and raises on one line
        of the street's betting.
      widest: ``[3]`` per street, the most actions at one decision.
    """
    nodes: int
    dealt: tuple[int, int, int]
    longest: int
    bets: tuple[int, int, int]
    widest: tuple[int, int, int]
    #: ``{state key: [(child, its key)]}`` each betting state's children as counted
    #: (``_children``), which :func:`build_tree` reuses
    expansion: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def public_nodes(self, cards: int = 1, pairs: int = 1) -> int:
        """The public tree's nodes when ``cards`` first cards are dealt below the spot's
        street and ``pairs`` (card, next card) pairs below that."""
        return self.dealt[0] + self.dealt[1] * cards + self.dealt[2] * pairs


def _blame(config: TreeConfig, bets, widest, exact: bool = True) -> str:
    """Which setting makes a bet tree large, as a user would change it: the street whose
    betting is widest and deepest, its sizes, the bets on one line, a raise cap or none."""
    street = max(range(3), key=lambda s: (widest[s] * max(bets[s], 1), -s))

    def sizes(table):
        return ", ".join(sorted({str(x) for p in (0, 1) for x in table[street][p]})) or "none"
    capped = all(x.kind == ADD and x.cap for p in (0, 1) for x in config.raises[street][p])
    return (f"the {STREETS[street]}'s betting has up to {widest[street]} actions at a decision "
            f"(bets {sizes(config.bets)}; raises {sizes(config.raises)}) and "
            f"{'' if exact else 'at least '}{bets[street]} bets and raises on one line"
            f"{'' if capped else ', no raise cap'}, "
            f"behind a stack of {config.stack} ({config.stack / config.pot:.3g} pots): give "
            f"fewer sizes, larger raises, or chip raises with a cap ('20c3r')")


def _key(kind: str, street: int, player: int, info: _Info, amount: int) -> tuple:
    """What a node's subtree depends on (its betting state), hashable."""
    return (kind, street, player, info.prev_action, info.chance, info.num_bets,
            info.allin_flag, info.oop_call_flag, info.stack, info.prev_amount, amount)


def tree_size(config: TreeConfig, limit: int | None = None, *,
              repeats: tuple[int, int] = (1, 1), public_limit: int | None = None,
              what: str = "the public tree") -> TreeSize:
    """Count the bet tree of ``config`` without building it: each distinct betting state
    (stacks, the bet faced, the bets made, the chips matched, the street) is expanded
    once, however many lines reach it, and its count reused.

    ``repeats``: how many times the public tree repeats a node below one card and below
    two (:meth:`TreeSize.public_nodes`); with ``public_limit``, a public tree of more
    nodes is refused as soon as the states counted prove it (each distinct state is at
    least one node, repeated so), so a huge tree is refused in about the time of
    ``public_limit / repeats`` states.

    Raises:
      HoldemError: a line longer than ``LONGEST_BET_LINE`` actions, more than ``limit``
        bet-tree nodes (default ``LARGEST_BET_TREE``) or more than ``public_limit`` public
        nodes, naming the size and the setting that makes it large.
    """
    limit = LARGEST_BET_TREE if limit is None else limit
    weight = (1, *repeats)
    memo: dict = {}        # state key -> (nodes below 0, 1, 2 cards, the longest line)
    expansion: dict = {}   # state key -> [(child, its key)]
    most_bets, widest = [0, 0, 0], [0, 0, 0]
    seen = [0, 0]          # distinct states, and their public nodes (a lower bound)
    root = ("decision", config.street, 0, _Info(stack=(config.stack, config.stack)), 0)

    def key(state):
        return _key(*state)

    def refuse(nodes: int, public: int, exact: bool) -> HoldemError:
        why = _blame(config, most_bets, widest, exact)
        size = "" if exact else "at least "
        if nodes > limit:
            return HoldemError(f"the bet tree has {size}{nodes:,} nodes, more than "
                               f"{limit:,}: {why}")
        nxt = STREETS[min(config.street + 1, 2)]
        repeated = ("" if config.street == 2 else
                    f"; the {nxt}'s lines repeated for {repeats[0]:,} {nxt} cards" +
                    ("" if config.street == 1 else
                     f", the river's for {repeats[1]:,} pairs of turn and river cards") +
                    " (suit-isomorphic cards once)")
        return HoldemError(f"{what} has {size}{public:,} nodes, more than {public_limit:,} "
                           f"(a bet tree of {size}{nodes:,} nodes{repeated}): {why}")

    # depth first, the first child first (as build_tree), each state once; a stack entry:
    # [state, its key, the line to it as (action, parent line) links, its depth in
    # actions, its children (None before they are made)]
    todo = [[root, key(root), None, 0, None]]
    while todo:
        entry = todo[-1]
        state, k, line, depth, children = entry
        if k in memo:
            todo.pop()
            continue
        if children is None:                      # first visit: count it, push its children
            kind, street = state[0], state[1]
            level = street - config.street
            seen[0] += 1
            seen[1] += weight[level]
            most_bets[street] = max(most_bets[street], state[3].num_bets)
            children = entry[4] = expansion[k] = [(c, key(c[1:])) for c in
                                                  _children(config, *state)]
            if kind == "decision":
                widest[street] = max(widest[street], len(children))
            if seen[0] > limit or public_limit is not None and seen[1] > public_limit:
                raise refuse(seen[0], seen[1], False)
            for c, ck in reversed(children):
                d = depth + (c[0] is not None)
                link = (c[0], line) if c[0] is not None else line
                if ck in memo:
                    if d + memo[ck][1] > LONGEST_BET_LINE:
                        raise _too_deep(config, _unlink(link), more=True)
                    continue
                if d > LONGEST_BET_LINE:
                    raise _too_deep(config, _unlink(link))
                todo.append([c[1:], ck, link, d, None])
            continue
        todo.pop()                                # its children counted: sum them
        kind = state[0]
        level = state[1] - config.street
        dealt = [0, 0, 0]
        dealt[level] = 1
        longest = 0
        for c, ck in children:
            below, line_below = memo[ck]
            dealt = [x + y for x, y in zip(dealt, below)]
            longest = max(longest, line_below + (c[0] is not None))
        memo[k] = (tuple(dealt), longest)
        nodes = sum(dealt)
        if nodes > limit:
            raise refuse(nodes, 0, False)
    dealt, longest = memo[key(root)]
    size = TreeSize(sum(dealt), dealt, longest, tuple(most_bets), tuple(widest), expansion)
    if public_limit is not None and size.public_nodes(*repeats) > public_limit:
        raise refuse(size.nodes, size.public_nodes(*repeats), True)
    return size


def _unlink(line) -> tuple:
    out = []
    while line is not None:
        out.append(line[0])
        line = line[1]
    return tuple(reversed(out))


def build_tree(config: TreeConfig, size: TreeSize | None = None) -> BetTree:
    """postflop-solver's ``ActionTree::new`` (``build_tree_recursive`` and ``push_actions``),
    once :func:`tree_size` has counted it (a tree too large or too deep is refused before
    a node is built): ``size`` the count of ``config`` if the caller has it, whose
    expansion of each betting state the build reuses."""
    if size is None:
        size = tree_size(config)
    expansion = size.expansion
    nodes: list[BetNode] = []
    start = config.stack

    def add(kind, street, player, info: _Info, history) -> int:
        bets = (start - info.stack[0], start - info.stack[1])
        nodes.append(BetNode(kind, street, player, bets, history))
        return len(nodes) - 1

    def expand(i: int, info: _Info, amount: int) -> list[tuple[int, _Info, int]]:
        """Add node ``i``'s children; return each with its info and amount, in order."""
        node = nodes[i]
        out = []
        for (action, kind, street, who, child_info, child_amount), _ in expansion[
                _key(node.kind, node.street, node.player, info, amount)]:
            history = node.history if action is None else node.history + (action,)
            j = add(kind, street, who, child_info, history)
            if action is not None:
                node.actions.append(action)
            node.children.append(j)
            out.append((j, child_info, child_amount))
        return out

    # depth first as the peer's recursion numbers them (a node's children added together,
    # then each child's subtree in order), with a stack of our own: a line of 1-chip
    # raises is thousands of actions deep, past Python's recursion limit
    info = _Info(stack=(start, start))
    todo = [(add("decision", config.street, 0, info, ()), info, 0)]
    while todo:
        todo.extend(reversed(expand(*todo.pop())))
    # pre-order: children after their parent, subtrees contiguous
    order: list[int] = []
    todo_nodes = [0]
    while todo_nodes:
        i = todo_nodes.pop()
        order.append(i)
        todo_nodes.extend(reversed(nodes[i].children))
    index = {old: new for new, old in enumerate(order)}
    out = [nodes[i] for i in order]
    for n in out:
        n.children = [index[c] for c in n.children]
    return BetTree(config, out)


def _actions(config: TreeConfig, street: int, player: int, info: _Info,
             amount: int) -> list[Action]:
    """postflop-solver's ``push_actions``: the sorted, merged actions at a decision."""
    opponent = player ^ 1
    player_stack, opponent_stack = info.stack[player], info.stack[opponent]
    prev_amount = info.prev_amount
    to_call = player_stack - opponent_stack
    pot = config.pot + 2 * (amount + to_call)
    max_amount = opponent_stack + prev_amount
    min_amount = min(max(prev_amount + to_call, 1), max_amount)
    spr_after_call = opponent_stack / pot

    def geometric(streets: int, most: float) -> int:
        ratio = ((2.0 * spr_after_call + 1.0) ** (1.0 / streets) - 1.0) / 2.0
        return _round(pot * min(ratio, most))

    bets, donks = config.bets[street], config.donks[street]
    remaining = 3 - street
    actions: list[Action] = []

    def first_bets(sizes: Sequence[BetSize]):
        actions.append(Action(CHECK))
        for size in sizes:
            if size.kind == POT:
                actions.append(Action(BET, _round(pot * size.value)))
            elif size.kind == PREV:
                raise HoldemError("a multiple of the previous bet is for raises only")
            elif size.kind == ADD:
                actions.append(Action(BET, int(size.value)))
            elif size.kind == GEOMETRIC:
                actions.append(Action(BET, geometric(int(size.value) or remaining, size.cap)))
            else:
                actions.append(Action(ALLIN, max_amount))
        if max_amount <= _round(pot * config.add_allin):
            actions.append(Action(ALLIN, max_amount))

    if donks is not None and info.chance and info.oop_call_flag:
        first_bets(donks)
    elif info.prev_action is None or info.chance or info.prev_action.kind == CHECK:
        first_bets(bets[player])
    else:
        actions.append(Action(FOLD))
        actions.append(Action(CALL))
        if not info.allin_flag:
            for size in config.raises[street][player]:
                if size.kind == POT:
                    actions.append(Action(RAISE, prev_amount + _round(pot * size.value)))
                elif size.kind == PREV:
                    actions.append(Action(RAISE, _round(prev_amount * size.value)))
                elif size.kind == ADD:
                    if size.cap == 0 or info.num_bets <= size.cap:
                        actions.append(Action(RAISE, prev_amount + int(size.value)))
                elif size.kind == GEOMETRIC:
                    streets = int(size.value) or remaining
                    streets = max(streets - info.num_bets + 1, 1)
                    actions.append(Action(RAISE, prev_amount + geometric(streets, size.cap)))
                else:
                    actions.append(Action(ALLIN, max_amount))
            if max_amount <= prev_amount + _round(pot * config.add_allin):
                actions.append(Action(ALLIN, max_amount))

    def above_threshold(amount_: int) -> bool:
        new_pot = pot + 2 * (amount_ - prev_amount)
        return max_amount <= amount_ + _round(new_pot * config.force_allin)

    clamped_actions = []
    for a in actions:
        if a.kind in (BET, RAISE):
            clamped = min(max(a.amount, min_amount), max_amount)
            if above_threshold(clamped):
                a = Action(ALLIN, max_amount)
            elif clamped != a.amount:
                a = Action(a.kind, clamped)
        clamped_actions.append(a)
    actions = sorted(set(clamped_actions))
    return _merge(actions, pot, prev_amount, config.merging)


def _merge(actions: list[Action], pot: int, offset: int, param: float) -> list[Action]:
    """postflop-solver's ``merge_bet_actions``."""
    eps = 1e-12
    current = 2 ** 31 - 1
    out = []
    for a in reversed(actions):
        amount = a.amount if a.kind in (BET, RAISE, ALLIN) else -1
        if amount > 0:
            ratio = (amount - offset) / pot
            current_ratio = (current - offset) / pot
            threshold = (current_ratio - param) / (1.0 + param)
            if ratio < threshold * (1.0 - eps):
                out.append(a)
                current = amount
        else:
            out.append(a)
    return out[::-1]
