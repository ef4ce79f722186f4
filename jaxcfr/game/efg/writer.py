"""Writing any enumerable jaxcfr Game as a Gambit .efg file: ``dump`` / ``dumps``."""

from __future__ import annotations

import collections
import collections.abc
import math
import os
from fractions import Fraction
from numbers import Integral, Rational
from typing import Any, Hashable, Sequence

from jaxcfr.game.contract import (CHANCE_NODE, CHANCE_SUM_TOLERANCE, TERMINAL_NODE, hashable_key,
                             inspect_node)
from jaxcfr.game.efg.game import EfgGame
from jaxcfr.game.efg.tree import _normalize_labels
from jaxcfr.game.protocol import Game, GameError


# ---------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------

def _quote(s: Any) -> str:
    s = str(s)
    if s.endswith("\\"):
        raise GameError(f"label {s!r} ends with a backslash, which the .efg format cannot "
                        "write", rule="efg-label")
    return '"' + s.replace('"', '\\"') + '"'


def _fmt_exact(x: Fraction) -> str:
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def _fmt_payoff(x: Any) -> str:
    if isinstance(x, bool):
        x = int(x)
    if isinstance(x, Integral):
        return str(int(x))
    if isinstance(x, Rational):
        return _fmt_exact(Fraction(x.numerator, x.denominator))
    f = float(x)
    if not math.isfinite(f):
        raise GameError(f"payoff {x!r} is not finite", rule="terminal-returns")
    if f.is_integer() and abs(f) < 2 ** 53:
        return str(int(f))
    return repr(f)  # shortest decimal that reads back as the same float


def _exact_prob(p: Any) -> Fraction:
    if isinstance(p, Rational) and not isinstance(p, bool):
        return Fraction(p.numerator, p.denominator)
    f = float(p)
    q = Fraction(f).limit_denominator(10 ** 9)
    return q if float(q) == f else Fraction(f)


def _exact_probs(probs: Sequence[Any], history) -> list[Fraction]:
    exact = [_exact_prob(p) for p in probs]
    total = sum(exact)
    if total != 1:
        if abs(float(total) - 1.0) > CHANCE_SUM_TOLERANCE:
            raise GameError(f"chance probabilities sum to {float(total)!r}, not 1",
                            rule="chance-sum", history=history)
        # Within float rounding of 1: the file needs an exact 1, so the largest one absorbs it.
        k = max(range(len(exact)), key=lambda j: exact[j])
        exact[k] = 1 - (total - exact[k])
    return exact


def _unique_labels(keys: Sequence[Hashable], label_of=lambda key: key) -> set:
    """The keys that occur once, and those whose label is empty (Gambit allows any number
    of empty labels)."""
    counts = collections.Counter(keys)
    return {k for k, c in counts.items() if c == 1 or label_of(k) == ""}


class _LazyPath(collections.abc.Sequence):
    """The action path to a node of :func:`dumps`' walk, built only when read."""

    def __init__(self, parents: list[int], actions: list[Any], node: int):
        self._parents, self._actions, self._node, self._path = parents, actions, node, None

    def _get(self) -> tuple:
        if self._path is None:
            out, node = [], self._node
            while self._parents[node] >= 0:
                out.append(self._actions[node])
                node = self._parents[node]
            self._path = tuple(reversed(out))
        return self._path

    def __getitem__(self, k):
        return self._get()[k]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self):
        return iter(self._get())


def _gambit_label(s: str) -> str:
    """``s`` as a label Gambit 16.7 accepts: printable ASCII (others become ``?``; a
    backslash becomes ``/``), no leading, trailing or doubled spaces."""
    if not (s.isascii() and s.isprintable() and "\\" not in s and s.strip(" ") == s
            and "  " not in s):
        s = "".join(ch if " " <= ch <= "~" else "?" for ch in s).replace("\\", "/")
        s = " ".join(s.split())
    return s


def dumps(game: Game, *, gambit_labels: bool = True) -> str:
    """The game tree below ``game`` (a state; usually the root) as ``EFG 2 R`` text.

    The tree is enumerated in pre-order. Each (player, ``infoset_key``) gets an infoset
    number per player in order of first appearance, and its action list is written at
    its first node only; each chance node gets its own chance infoset; each distinct
    terminal payoff vector becomes one outcome. Probabilities are written as exact
    rationals, payoffs as integers, exact rationals or shortest round-tripping decimals.
    For an :class:`EfgGame` the exact Fractions, title, comment, player names and
    node/infoset labels are kept (outcomes on inner nodes are summed into the leaves).

    Gambit (16.7 and later) accepts only labels of printable ASCII without leading,
    trailing or doubled spaces, and no two nodes, nor two information sets of one player,
    with the same non-empty label. With ``gambit_labels`` (the default) labels are made to
    fit: other characters become ``?``, a backslash ``/``, spaces are trimmed, and node and
    information-set labels that would clash are left empty. With ``gambit_labels=False``
    every label is written exactly as it is (``loads`` reads it back unchanged); empty or
    repeated action labels are still made unique (Gambit's ``label_1``, ``label_2``).

    Raises:
      GameError: a contract violation, chance that cannot be enumerated, or a label the
        format cannot hold (one that ends with a backslash, when ``gambit_labels`` is off).
    """
    return _Writer(game, gambit_labels).text()


class _Writer:
    """The steps of :func:`dumps`, top to bottom: the header (title, comment, players, and
    for an :class:`EfgGame` which of its labels may be kept), then the tree in pre-order,
    one line per node (terminal, chance or player), each checked by ``inspect_node``."""

    def __init__(self, game: Game, gambit_labels: bool):
        self.num_players = num_players = int(game.num_players)
        if num_players < 1:
            raise GameError(f"num_players is {num_players}", rule="num-players")
        self.game = game
        self.is_efg = is_efg = isinstance(game, EfgGame)
        self.fix = fix = _gambit_label if gambit_labels else str
        # Gambit 16.7 refuses a file where two nodes share a non-empty label, or two
        # information sets of one player do: such labels of an EfgGame are left out
        # (written as "").
        self.node_label_ok = self.iset_label_ok = None
        if is_efg:
            tree = game.tree
            self.node_label_ok = _unique_labels([fix(x) for x in tree.label])
            self.iset_label_ok = _unique_labels([(s.player, fix(s.label)) for s in tree.infosets],
                                                lambda key: key[1])
        self.out = self.header()
        self.iset_numbers: list[dict[Hashable, tuple[int, tuple]]] = \
            [{} for _ in range(num_players)]
        self.outcome_numbers: dict[tuple[str, ...], int] = {}
        self.chance_numbers: dict[int, int] = {}   # EfgGame chance infoset -> number written
        self.chance_count = 0
        # The path to each node is kept as parent links and rebuilt only for an error
        # message (copying a tuple per node would be quadratic in the depth).
        self.path_parent: list[int] = []
        self.path_action: list[Any] = []

    def header(self) -> list[str]:
        game, is_efg, num_players = self.game, self.is_efg, self.num_players
        title = game.title if is_efg else str(getattr(game, "title", type(game).__name__))
        comment = game.comment if is_efg else str(getattr(game, "comment", "") or "")
        names = getattr(game, "player_names", None)
        if not names or len(names) != num_players:
            names = [f"Player {k + 1}" for k in range(num_players)]
        names = _normalize_labels([self.fix(str(x)) for x in names])
        return [f"EFG 2 R {_quote(title)} {{ {' '.join(_quote(s) for s in names)} }}",
                _quote(comment), ""]

    def text(self) -> str:
        """Walk the tree in pre-order, one line per node; the whole file."""
        stack: list[tuple[Game, int, Any]] = [(self.game.clone(), -1, None)]
        while stack:
            state, up, action = stack.pop()
            me = len(self.path_parent)
            self.path_parent.append(up)
            self.path_action.append(action)
            hist = _LazyPath(self.path_parent, self.path_action, me)
            info = inspect_node(state, self.num_players, hist, require_enumerable=True)
            node_label, iset_label = self.labels(state, info)
            if info.kind == TERMINAL_NODE:
                self.terminal(state, node_label)
                continue
            # The labels a reader will see (Gambit's rule for empty or repeated ones).
            labels = _normalize_labels([self.fix(str(a)) for a in info.actions])
            if info.kind == CHANCE_NODE:
                self.chance(state, info, labels, node_label, iset_label, hist)
            else:
                self.decision(state, info, labels, node_label, iset_label, hist)
            # Children in reverse so that the first action is expanded first (pre-order);
            # the last one pushed reuses ``state`` itself.
            actions = info.actions
            for k in range(len(actions) - 1, -1, -1):
                a = actions[k]
                child = state if k == 0 else state.clone()
                try:
                    child.step(a)
                except GameError as e:
                    raise e.with_context(history=tuple(hist) + (a,))
                stack.append((child, me, a))
        self.out.append("")
        return "\n".join(self.out)

    def labels(self, state, info) -> tuple[str, str]:
        """The node's label and its information set's, as written (an EfgGame's own, where
        Gambit accepts them; empty otherwise)."""
        if not self.is_efg:
            return "", ""
        tree = state.tree
        node_label = self.fix(tree.label[state.node_index])
        if node_label not in self.node_label_ok:
            node_label = ""
        iset_label = ""
        if info.kind != TERMINAL_NODE:
            efg_iset = tree.infosets[tree.infoset[state.node_index]]
            iset_label = self.fix(efg_iset.label)
            if (efg_iset.player, iset_label) not in self.iset_label_ok:
                iset_label = ""
        return node_label, iset_label

    def terminal(self, state, node_label: str) -> None:
        """``t``: each distinct payoff vector is one outcome, written at its first use."""
        if self.is_efg:
            pays = tuple(_fmt_exact(x) for x in state.exact_returns())
        else:
            pays = tuple(_fmt_payoff(x) for x in tuple(state.terminal_returns()))
        num = self.outcome_numbers.get(pays)
        if num is None:
            num = self.outcome_numbers[pays] = len(self.outcome_numbers) + 1
            self.out.append(f't {_quote(node_label)} {num} "" {{ {", ".join(pays)} }}')
        else:
            self.out.append(f"t {_quote(node_label)} {num}")

    def chance(self, state, info, labels, node_label: str, iset_label: str, hist) -> None:
        """``c``: its own chance information set (an EfgGame keeps the file's), with exact
        probabilities."""
        if self.is_efg:
            # The file's chance information sets are kept (same actions, same probabilities).
            efg_num = state.tree.infoset[state.node_index]
            num = self.chance_numbers.get(efg_num)
            if num is not None:
                self.out.append(f"c {_quote(node_label)} {num} 0")
                return
            self.chance_count += 1
            num = self.chance_numbers[efg_num] = self.chance_count
            probs = [p for _, p in state.exact_chance_outcomes()]
        else:
            self.chance_count += 1
            num = self.chance_count
            probs = _exact_probs(info.probs, hist)
        body = " ".join(f"{_quote(a)} {_fmt_exact(p)}" for a, p in zip(labels, probs))
        self.out.append(f"c {_quote(node_label)} {num} {_quote(iset_label)} {{ {body} }} 0")

    def decision(self, state, info, labels, node_label: str, iset_label: str, hist) -> None:
        """``p``: an information set number per (player, key) in order of first appearance,
        its action list at its first node only."""
        pl, actions = info.player, info.actions
        key = hashable_key(state.infoset_key(pl), hist, pl)
        known = self.iset_numbers[pl].get(key)
        if known is None:
            num = len(self.iset_numbers[pl]) + 1
            self.iset_numbers[pl][key] = (num, actions)
            body = " ".join(_quote(a) for a in labels)
            self.out.append(f"p {_quote(node_label)} {pl + 1} {num} {_quote(iset_label)} "
                            f"{{ {body} }} 0")
            return
        num, first_actions = known
        if first_actions != actions:
            raise GameError(f"legal actions {list(actions)} differ from "
                            f"{list(first_actions)} in the same information set",
                            rule="infoset-actions", history=hist, infoset=key)
        self.out.append(f"p {_quote(node_label)} {pl + 1} {num} 0")


def dump(game: Game, path: str | os.PathLike, *, gambit_labels: bool = True) -> None:
    """Write :func:`dumps` of ``game`` to ``path``."""
    text = dumps(game, gambit_labels=gambit_labels)
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        f.write(text)
