"""Gambit ``.efg`` extensive-form game files: read them as a :class:`jaxcfr.Game`, write any
enumerable game as one.

The format (Gambit's "EFG 2 R" / "EFG 2 D" savefile)::

    EFG 2 R "title" { "Player 1" "Player 2" }
    "optional comment"

    c "node" 1 "deal" { "H" 1/2 "T" 1/2 } 0
    p "node" 1 1 "infoset" { "A" "B" } 0
    t "node" 1 "outcome" { 1, -1 }
    t "" 1
    ...

Nodes come in pre-order. ``c``: chance node (chance infoset number, then its name
and ``{ "action" probability ... }`` at first use). ``p``: player node (1-based
player number, infoset number, then the infoset name and ``{ "action" ... }`` at
first use; later nodes of the same infoset may repeat an identical list or omit
it). ``t``: terminal node. Every node ends with an outcome number (0 = none),
followed by ``"outcome name" { payoff ... }`` at the outcome's first use.
Outcomes on non-terminal nodes add up along the path to every leaf below.
Numbers are integers, decimals (``.80``, ``1e3``) or rationals (``1/3``), all
read exactly as :class:`fractions.Fraction`.

Example::

    >>> import jaxcfr
    >>> game = jaxcfr.load_game("tests/fixtures/efg/authored_kuhn_poker.efg")
    >>> game.num_players, game.title[:10]
    (2, 'Kuhn poker')
    >>> text = jaxcfr.efg.dumps(game)        # and back: jaxcfr.efg.loads(text)

Strings are read as Gambit reads them: ``\\"`` stands for a quote, any other
backslash is kept as it is (so a label cannot end with a backslash). Empty or
repeated action labels within one information set (and empty or repeated player
names) are made unique the way Gambit does it: ``label_1``, ``label_2``, ...
(skipping names already in use).
"""

from __future__ import annotations

import collections
import collections.abc
import gc
import math
import os
import re
from fractions import Fraction
from numbers import Integral, Rational
from typing import Any, Hashable, NamedTuple, Sequence

from jaxcfr.contract import (CHANCE_NODE, DECISION, TERMINAL_NODE, CHANCE_SUM_TOLERANCE,
                             hashable_key, inspect_node)
from jaxcfr.game import CHANCE, TERMINAL, Game, GameError

__all__ = ["EfgError", "EfgGame", "EfgTree", "EfgInfoset", "EfgOutcome", "EfgNode",
           "load", "loads", "dump", "dumps"]


class EfgError(GameError):
    """A malformed ``.efg`` file.

    The message reads ``path:line:column: what was expected and what was found``;
    ``rule`` is ``"efg-syntax"`` or a more specific ``"efg-..."`` name.

    Attributes:
      path, line, column: where (1-based line and column; column counts characters).
    """

    def __init__(self, message: str, *, rule: str = "efg-syntax", path: str = "<string>",
                 line: int = 0, column: int = 0):
        self.path = path
        self.line = line
        self.column = column
        super().__init__(f"{path}:{line}:{column}: {message}", rule=rule)


# ---------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------

# A string is terminated by a '"' that does not follow a backslash (Gambit's rule); an
# unterminated string runs to the end of the text. Everything else that is not
# whitespace is a brace, a comma, or a "word" (symbols and numbers).
_STRING = r'"[^"\\]*+(?:\\++[\s\S][^"\\]*+)*+"'
_TOKEN = re.compile(_STRING + r'|"[\s\S]*|[{},]|[^\s{},"]++')
_STRING_FULL = re.compile(_STRING)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+/[0-9]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
#: Padding after the last token.
_END = "\x00end"


def _unquote(tok: str) -> str:
    s = tok[1:-1]
    if "\\" in s:
        s = s.replace('\\"', '"')
    return s


def _describe(tok: str | None) -> str:
    if tok is None or tok == _END:
        return "end of file"
    if tok[0] == '"':
        s = tok if len(tok) <= 40 else tok[:37] + '..."'
        return f"string {s}"
    if tok in ("{", "}", ","):
        return f"'{tok}'"
    s = tok if len(tok) <= 40 else tok[:37] + "..."
    return f"{s!r}"


def _position(text: str, tok_index: int) -> tuple[int, int]:
    """1-based (line, column) of token ``tok_index`` (the end of the text if past the end)."""
    offset = len(text)
    for k, m in enumerate(_TOKEN.finditer(text)):
        if k == tok_index:
            offset = m.start()
            break
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


# ---------------------------------------------------------------------------
# The parsed tree
# ---------------------------------------------------------------------------

class EfgInfoset(NamedTuple):
    """One information set (chance ones included) as the file gives it."""
    player: int                 # 0-based player, or CHANCE
    number: int                 # the infoset number in the file
    label: str
    actions: tuple[str, ...]    # unique labels (made unique if the file repeats one)
    raw_actions: tuple[str, ...]  # labels exactly as in the file
    probs: tuple[Fraction, ...] | None  # chance probabilities (exact), None for players


class EfgOutcome(NamedTuple):
    """One outcome: its label and one exact payoff per player."""
    label: str
    payoffs: tuple[Fraction, ...]


class EfgNode(NamedTuple):
    """A read-only view of one node of an :class:`EfgTree`."""
    index: int
    kind: int                   # DECISION, CHANCE_NODE or TERMINAL_NODE (jaxcfr.contract)
    label: str
    player: int                 # 0-based player, CHANCE or TERMINAL
    infoset: int                # index into EfgTree.infosets, -1 at a terminal
    outcome: int                # outcome number in the file (0 = none)
    parent: int                 # -1 at the root
    children: tuple[int, ...]
    returns: tuple[Fraction, ...] | None  # accumulated payoffs, terminals only


class EfgTree:
    """A parsed ``.efg`` file as flat per-node lists (node 0 is the root, pre-order).

    Attributes:
      title, comment, player_names, num_players: the header.
      kind, player, infoset, parent, label, outcome: one entry per node.
      child_start: per node, where its children start in ``children`` (-1 at terminals);
        a node has ``len(infosets[infoset[n]].actions)`` children.
      children: the flat child list.
      returns: terminal node -> accumulated exact payoffs (sum of the outcomes on its path).
      infosets: every information set, in order of first appearance.
      outcomes: outcome number -> :class:`EfgOutcome`.
    """

    __slots__ = ("title", "comment", "player_names", "num_players", "kind", "player",
                 "infoset", "parent", "label", "outcome", "child_start", "children",
                 "returns", "infosets", "outcomes", "action_index", "float_chance",
                 "_float_returns")

    def __init__(self, *, title, comment, player_names, kind, player, infoset, parent, label,
                 outcome, child_start, children, returns, infosets, outcomes):
        self.title = title
        self.comment = comment
        self.player_names = tuple(player_names)
        self.num_players = len(self.player_names)
        self.kind = kind
        self.player = player
        self.infoset = infoset
        self.parent = parent
        self.label = label
        self.outcome = outcome
        self.child_start = child_start
        self.children = children
        self.returns = returns
        self.infosets = infosets
        self.outcomes = outcomes
        # Many information sets share one action list: share its index dict too.
        by_actions: dict[tuple, dict] = {}
        self.action_index = [by_actions.get(s.actions) or
                             by_actions.setdefault(s.actions,
                                                   {a: k for k, a in enumerate(s.actions)})
                             for s in infosets]
        self.float_chance = [None if s.probs is None else
                             tuple((a, float(p)) for a, p in zip(s.actions, s.probs))
                             for s in infosets]
        self._float_returns: dict[int, tuple[float, ...]] = {}

    @property
    def num_nodes(self) -> int:
        return len(self.kind)

    def children_of(self, node: int) -> tuple[int, ...]:
        start = self.child_start[node]
        if start < 0:
            return ()
        k = len(self.infosets[self.infoset[node]].actions)
        return tuple(self.children[start:start + k])

    def path(self, node: int) -> tuple:
        """The actions from the root to ``node``: labels at decision and chance nodes."""
        out = []
        parent, infoset, infosets = self.parent, self.infoset, self.infosets
        while True:
            up = parent[node]
            if up < 0:
                break
            out.append(infosets[infoset[up]].actions[self.children_of(up).index(node)])
            node = up
        out.reverse()
        return tuple(out)

    def node(self, index: int) -> EfgNode:
        return EfgNode(index, self.kind[index], self.label[index], self.player[index],
                       self.infoset[index], self.outcome[index], self.parent[index],
                       self.children_of(index), self.returns.get(index))

    def nodes(self) -> list[EfgNode]:
        """Every node, in file (pre-)order."""
        return [self.node(i) for i in range(self.num_nodes)]

    def infosets_of(self, player: int) -> list[EfgInfoset]:
        """The information sets of ``player`` (0-based, or CHANCE)."""
        return [s for s in self.infosets if s.player == player]

    def float_returns(self, node: int) -> tuple[float, ...]:
        r = self._float_returns.get(node)
        if r is None:
            r = self._float_returns[node] = tuple(float(x) for x in self.returns[node])
        return r


def _normalize_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """Make labels unique and non-empty the way Gambit does (``label_1``, ``label_2``, ...)."""
    if len(set(labels)) == len(labels) and "" not in labels:
        return tuple(labels)
    counts: dict[str, int] = {}
    for s in labels:
        counts[s] = counts.get(s, 0) + 1
    used = set(labels)
    visited: dict[str, int] = {}
    out = []
    for s in labels:
        if counts[s] == 1 and s != "":
            out.append(s)
            continue
        while True:
            visited[s] = visited.get(s, 0) + 1
            candidate = f"{s}_{visited[s]}"
            if candidate not in used:
                break
        used.add(candidate)
        out.append(candidate)
    return tuple(out)


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------

# -- fast path ----------------------------------------------------------------
# One regex match per node. It accepts a subset of what the token parser accepts (tokens
# separated the usual way) and builds the same tree; on anything unusual or wrong it gives
# up and the token parser runs instead (and reports the error, if there is one).

_W = r'[^\s{},"]++'
_FAST_HEADER = re.compile(
    r'\s*+EFG\s++2\s++([RD])\s*+(' + _STRING + r')\s*+\{((?:\s*+' + _STRING + r')*+)\s*+\}'
    r'(?:\s*+(' + _STRING + r'))?')
_FAST_NODE = re.compile(
    # (?<!\s): findall retries at every blank after a failed match; this keeps that linear.
    r'(?<!\s)\s++(?:p\s++(' + _STRING + r')\s++([0-9]++)\s++([0-9]++)'
    r'|c\s++(' + _STRING + r')\s++([0-9]++)'
    r'|t\s++(' + _STRING + r'))'
    r'(?:\s*+(' + _STRING + r')\s*+\{([^{}"]*+(?:' + _STRING + r'[^{}"]*+)*+)\})?'
    r'\s++([0-9]++)'
    r'(?:\s*+(' + _STRING + r')\s*+\{([^{}"]*+)\})?'
    # Anything else that is not whitespace: the fast path gives up.
    r'|(\S)')
_FAST_PLAYER_BODY = re.compile(r'(?:\s*+' + _STRING + r')++\s*+')
_FAST_CHANCE_BODY = re.compile(r'(?:\s*+' + _STRING + r'\s*+' + _W + r')++\s*+')
_FAST_PAIR = re.compile(r'(' + _STRING + r')\s*+(' + _W + r')')
_STRINGS = re.compile(_STRING)


def _fast_numbers(words, fcache):
    out = []
    for w in words:
        v = fcache.get(w)
        if v is None:
            if not _NUMBER.fullmatch(w):
                return None
            try:
                v = fcache[w] = Fraction(w)
            except ZeroDivisionError:
                return None
        out.append(v)
    return tuple(out)


def _fast_body(body, chance, fcache):
    """(raw action tokens, probabilities or None) of an action list, or None if malformed."""
    if chance:
        if not _FAST_CHANCE_BODY.fullmatch(body):
            return None
        pairs = _FAST_PAIR.findall(body)
        probs = _fast_numbers([p for _, p in pairs], fcache)
        if probs is None:
            return None
        return tuple(a for a, _ in pairs), probs
    if not _FAST_PLAYER_BODY.fullmatch(body):
        return None
    return tuple(_STRINGS.findall(body)), None


def _parse_fast(text: str) -> EfgTree | None:  # noqa: C901 - one flat loop, for speed
    """The tree of ``text``, or ``None`` when :func:`_parse_tokens` must decide."""
    m = _FAST_HEADER.match(text)
    if m is None:
        return None
    title = _unquote(m.group(2))
    raw_players = [_unquote(x) for x in _STRINGS.findall(m.group(3))]
    comment = "" if m.group(4) is None else _unquote(m.group(4))
    num_players = len(raw_players)
    if not num_players:
        return None
    payoff_body = re.compile(r"\s*+" + r"\s*+,?+\s*+".join(["(" + _W + ")"] * num_players)
                             + r"\s*+,?+\s*+")
    zero = (Fraction(0),) * num_players

    rows: list[tuple] = []                # (kind, player, infoset, parent, label, outcome, start)
    children: list[int] = []
    returns: dict[int, tuple[Fraction, ...]] = {}
    infosets: list[list] = []
    iset_raw: list[tuple[str, str]] = []
    iset_sizes: list[int] = []
    p_isets: dict[tuple[int, int], int] = {}
    c_isets: dict[int, int] = {}
    outcomes: dict[int, EfgOutcome] = {}
    out_raw: dict[int, tuple[str, str]] = {}
    fcache: dict[str, Fraction] = {}
    icache: dict[str, int] = {}           # int() is slow next to a dict look-up
    iget = icache.get
    # Open nodes that still expect children: [node, next child slot, end slot, payoffs so far].
    # A node leaves the stack as soon as its last child starts.
    stack: list[list] = []
    push, pop, add_row = stack.append, stack.pop, rows.append
    node = -1
    par = -1
    acc = None

    # findall scans from the end of the header: every non-blank character is part of a node
    # or is junk, so a list free of junk is the whole text, node after node.
    for (plab, pnum, pset, clab, cset, tlab, ilab, ibody, onum, olab, obody,
         junk) in _FAST_NODE.findall(text, m.end()):
        if junk:
            return None
        node += 1
        if stack:
            top = stack[-1]
            par = top[0]
            acc = top[3]
            slot = top[1]
            children[slot] = node
            slot += 1
            if slot == top[2]:
                pop()
            else:
                top[1] = slot
        elif node:
            return None                   # trailing nodes after a complete tree
        if tlab:
            if ilab:
                return None
            node_label = tlab
            pl = TERMINAL
            iset = -1
            nkind = TERMINAL_NODE
        else:
            if plab:
                chance = False
                pl = iget(pnum)
                if pl is None:
                    pl = icache[pnum] = int(pnum)
                if not 1 <= pl <= num_players:
                    return None
                pl -= 1
                iset_num = iget(pset)
                if iset_num is None:
                    iset_num = icache[pset] = int(pset)
                iset = p_isets.get((pl, iset_num))
                node_label = plab
                nkind = DECISION
            else:
                chance = True
                pl = CHANCE
                iset_num = iget(cset)
                if iset_num is None:
                    iset_num = icache[cset] = int(cset)
                iset = c_isets.get(iset_num)
                node_label = clab
                nkind = CHANCE_NODE
            if ilab:
                if iset is None:
                    parsed = _fast_body(ibody, chance, fcache)
                    if parsed is None:
                        return None
                    acts, probs = parsed
                    if chance:
                        if sum(probs) != 1 or any(p < 0 for p in probs):
                            return None
                        iset = c_isets[iset_num] = len(infosets)
                    else:
                        iset = p_isets[(pl, iset_num)] = len(infosets)
                    infosets.append([pl, iset_num, ilab, acts, probs])
                    iset_raw.append((ilab, ibody))
                    iset_sizes.append(len(acts))
                else:
                    raw = iset_raw[iset]
                    if raw[0] != ilab:
                        return None
                    if raw[1] != ibody:
                        parsed = _fast_body(ibody, chance, fcache)
                        known = infosets[iset]
                        if parsed is None or parsed[0] != known[3] or parsed[1] != known[4]:
                            return None
            elif iset is None:
                return None

        out_num = iget(onum)
        if out_num is None:
            out_num = icache[onum] = int(onum)
        if olab:
            if out_num == 0:
                return None
            raw = out_raw.get(out_num)
            if raw is None or raw[0] != olab or raw[1] != obody:
                pm = payoff_body.fullmatch(obody)
                if pm is None:
                    return None
                pays = _fast_numbers(pm.groups(), fcache)
                if pays is None:
                    return None
                if raw is None:
                    outcomes[out_num] = EfgOutcome(olab, pays)
                    out_raw[out_num] = (olab, obody)
                elif outcomes[out_num] != (olab, pays):
                    return None
            own = outcomes[out_num].payoffs
            acc = own if acc is None else tuple([a + b for a, b in zip(acc, own)])
        elif out_num:
            known = outcomes.get(out_num)
            if known is None:
                return None
            own = known.payoffs
            acc = own if acc is None else tuple([a + b for a, b in zip(acc, own)])

        if iset >= 0:
            start = len(children)
            k = iset_sizes[iset]
            children.extend([-1] * k)
            push([node, start, start + k, acc])
            add_row((nkind, pl, iset, par, node_label, out_num, start))
        else:
            returns[node] = acc or zero
            add_row((nkind, pl, iset, par, node_label, out_num, -1))

    if stack or node < 0:
        return None
    return _finish(title, comment, raw_players, rows, children, returns, infosets, outcomes)


def _parse(text: str, source: str) -> EfgTree:
    """Parse ``text``: the fast node-at-a-time path, or the token parser where it gives up."""
    # Parsing allocates many small objects and frees none: the cyclic collector would only
    # re-scan them over and over (a third of the time on big files).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        tree = _parse_fast(text)
        return tree if tree is not None else _parse_tokens(text, source)
    finally:
        if gc_was_enabled:
            gc.enable()


def _parse_tokens(text: str, source: str) -> EfgTree:  # noqa: C901 - one flat loop, for speed
    """The reference parser: token by token, with exact error positions."""
    toks = _TOKEN.findall(text)
    n = len(toks)

    def fail(at: int, message: str, rule: str = "efg-syntax"):
        line, column = _position(text, at)
        raise EfgError(message, rule=rule, path=source, line=line, column=column)

    if n and toks[-1][0] == '"' and not _STRING_FULL.fullmatch(toks[-1]):
        fail(n - 1, "unterminated string: no closing '\"' before the end of the file",
             "efg-string")
    # Sentinels past the end: every look-ahead below stays in range and fails on them.
    toks.extend([_END] * 8)

    def expected(at: int, what: str, rule: str = "efg-syntax"):
        found = toks[at] if at < n else None
        if found is None and rule == "efg-syntax":
            rule = "efg-truncated"
        fail(at, f"expected {what}, found {_describe(found)}", rule)

    icache: dict[str, int] = {}

    def integer(at: int, what: str) -> int:
        t = toks[at]
        if not (t.isascii() and t.isdigit()):
            expected(at, what)
        v = icache[t] = int(t)
        return v

    fcache: dict[str, Fraction] = {}

    def number(at: int, what: str) -> Fraction:
        t = toks[at]
        if not _NUMBER.fullmatch(t):
            expected(at, what, "efg-number" if t[0] not in '"{},\x00' else "efg-syntax")
        try:
            v = Fraction(t)
        except ZeroDivisionError:
            fail(at, f"expected {what}, found {t!r} (zero denominator)", "efg-number")
        fcache[t] = v
        return v

    # -- header --------------------------------------------------------------
    if toks[0] != "EFG":
        expected(0, "'EFG' (file type)")
    if toks[1] != "2":
        expected(1, "'2' (only EFG version 2 is supported)")
    if toks[2] not in ("R", "D"):
        expected(2, "'R' or 'D' (data type)")
    if toks[3][0] != '"':
        expected(3, "the game title (a quoted string)")
    title = _unquote(toks[3])
    if toks[4] != "{":
        expected(4, "'{' opening the player list")
    i = 5
    raw_players = []
    while toks[i][0] == '"':
        raw_players.append(_unquote(toks[i]))
        i += 1
    if toks[i] != "}":
        expected(i, "a player name (a quoted string) or '}'")
    if not raw_players:
        fail(i, "expected at least one player, found '}'", "efg-players")
    i += 1
    comment = ""
    if toks[i][0] == '"':
        comment = _unquote(toks[i])
        i += 1
    num_players = len(raw_players)
    zero = (Fraction(0),) * num_players

    # -- nodes ---------------------------------------------------------------
    rows: list[tuple] = []                # (kind, player, infoset, parent, label, outcome, start)
    children: list[int] = []
    returns: dict[int, tuple[Fraction, ...]] = {}
    infosets: list[list] = []             # [player, number, label, raw_actions, probs]
    iset_sizes: list[int] = []
    p_isets: dict[tuple[int, int], int] = {}
    c_isets: dict[int, int] = {}
    outcomes: dict[int, EfgOutcome] = {}
    stack: list[list] = []                # [node, next child slot, end slot, accumulated payoffs]
    icache_get = icache.get
    fcache_get = fcache.get
    node = -1

    while True:
        node += 1
        if stack:
            top = stack[-1]
            children[top[1]] = node
            top[1] += 1
            par = top[0]
            acc = top[3]
        else:
            par = -1
            acc = None
        t = toks[i]
        if t == "p" or t == "c":
            chance = t == "c"
            node_label = toks[i + 1]
            if node_label[0] != '"':
                expected(i + 1, "a node label (a quoted string)")
            i += 2
            if chance:
                pl = CHANCE
            else:
                pl = icache_get(toks[i])
                if pl is None:
                    pl = integer(i, "a player number")
                if not 1 <= pl <= num_players:
                    fail(i, f"player number {pl} is out of range (the file has "
                         f"{num_players} player{'s' if num_players != 1 else ''})", "efg-player")
                pl -= 1
                i += 1
            iset_tok = i
            iset_num = icache_get(toks[i])
            if iset_num is None:
                iset_num = integer(i, "an information set number")
            i += 1
            iset = c_isets.get(iset_num) if chance else p_isets.get((pl, iset_num))
            if toks[i][0] == '"':
                iset_label = toks[i]
                brace = i + 1
                if toks[brace] != "{":
                    expected(brace, "'{' opening the action list")
                i += 2
                j = i
                if chance:
                    probs = []
                    while toks[i][0] == '"':
                        p = fcache_get(toks[i + 1])
                        if p is None:
                            p = number(i + 1, "a probability (number)")
                        probs.append(p)
                        i += 2
                    acts = tuple(toks[j:i:2])
                else:
                    while toks[i][0] == '"':
                        i += 1
                    acts = tuple(toks[j:i])
                if toks[i] != "}":
                    expected(i, "an action label (a quoted string) or '}'" if acts else
                             "an action label (a quoted string)")
                if not acts:
                    expected(i, "an action label (a quoted string)")
                i += 1
                if iset is None:
                    if chance:
                        probs = tuple(probs)
                        for k, p in enumerate(probs):
                            if p < 0:
                                fail(brace + 2 + 2 * k, f"chance probability {p} is negative",
                                     "efg-chance-prob")
                        total = sum(probs)
                        if total != 1:
                            fail(brace, f"chance probabilities of information set {iset_num} "
                                 f"sum to {total}, not exactly 1", "efg-chance-sum")
                        iset = c_isets[iset_num] = len(infosets)
                        infosets.append([CHANCE, iset_num, iset_label, acts, probs])
                    else:
                        iset = p_isets[(pl, iset_num)] = len(infosets)
                        infosets.append([pl, iset_num, iset_label, acts, None])
                    iset_sizes.append(len(acts))
                else:
                    known = infosets[iset]
                    if known[3] != acts or known[2] != iset_label or (
                            chance and known[4] != tuple(probs)):
                        _mismatch(fail, brace, chance, pl, iset_num, known, iset_label, acts,
                                  probs if chance else None)
            elif iset is None:
                if toks[i][0] == "\x00":
                    expected(i, "an information set name (a quoted string)")
                who = ("chance information set" if chance else
                       f"information set {iset_num} of player {pl + 1}")
                fail(iset_tok, f"{who} is used before it is defined (its first node must "
                     f"give its name and action list); found {_describe(toks[i])}",
                     "efg-infoset-undefined")
            k_children = iset_sizes[iset]
            nkind = CHANCE_NODE if chance else DECISION
        elif t == "t":
            node_label = toks[i + 1]
            if node_label[0] != '"':
                expected(i + 1, "a node label (a quoted string)")
            i += 2
            pl = TERMINAL
            iset = -1
            k_children = 0
            nkind = TERMINAL_NODE
        else:
            expected(i, "a node ('c', 'p' or 't')")

        # -- outcome --
        out_num = icache_get(toks[i])
        if out_num is None:
            out_num = integer(i, "an outcome number")
        i += 1
        if toks[i][0] == '"':
            out_tok = i - 1
            if out_num == 0:
                fail(i, "outcome 0 (no outcome) cannot have a name or payoffs",
                     "efg-outcome")
            out_label = toks[i]
            if toks[i + 1] != "{":
                expected(i + 1, "'{' opening the payoff list")
            i += 2
            pays = []
            for _ in range(num_players):
                p = fcache_get(toks[i])
                if p is None:
                    p = number(i, f"a payoff (number) for player {len(pays) + 1} of "
                               f"{num_players}")
                pays.append(p)
                i += 1
                if toks[i] == ",":
                    i += 1
            if toks[i] != "}":
                expected(i, f"'}}' closing the {num_players} payoffs")
            i += 1
            pays = tuple(pays)
            known = outcomes.get(out_num)
            if known is None:
                outcomes[out_num] = known = EfgOutcome(out_label, pays)
            elif known.payoffs != pays or known.label != out_label:
                fail(out_tok, f"outcome {out_num} was defined as {_unquote(known.label)!r} "
                     f"{{{', '.join(str(p) for p in known.payoffs)}}}, here "
                     f"{_unquote(out_label)!r} {{{', '.join(str(p) for p in pays)}}}",
                     "efg-outcome-mismatch")
            own = known.payoffs
            acc = own if acc is None else tuple(a + b for a, b in zip(acc, own))
        elif out_num:
            known = outcomes.get(out_num)
            if known is None:
                fail(i - 1, f"outcome {out_num} is used before it is defined (its first use "
                     f"must give its name and payoffs); found {_describe(toks[i])}",
                     "efg-outcome-undefined")
            own = known.payoffs
            acc = own if acc is None else tuple(a + b for a, b in zip(acc, own))

        if k_children:
            start = len(children)
            rows.append((nkind, pl, iset, par, node_label, out_num, start))
            children.extend([-1] * k_children)
            stack.append([node, start, start + k_children, acc])
        else:
            rows.append((nkind, pl, iset, par, node_label, out_num, -1))
            returns[node] = zero if acc is None else acc
            while stack:
                top = stack[-1]
                if top[1] != top[2]:
                    break
                stack.pop()
            else:
                break

    if i < n:
        expected(i, "end of file (the tree is complete)", "efg-trailing")

    return _finish(title, comment, raw_players, rows, children, returns, infosets, outcomes)


def _finish(title, comment, raw_players, rows, children, returns, infosets,
            outcomes) -> EfgTree:
    """Build the tree from one row per node ``(kind, player, infoset, parent, quoted label,
    outcome, child start)``; labels were kept quoted while parsing and are unquoted here."""
    kind, player, infoset, parent, label, outcome, child_start = (
        map(list, zip(*rows)) if rows else ([] for _ in range(7)))
    label = [s[1:-1] for s in label]
    if any("\\" in s for s in label):
        label = [s.replace('\\"', '"') for s in label]
    norm_cache: dict[tuple, tuple] = {}
    iset_objs = []
    for p, num, lab, acts, probs in infosets:
        norm = norm_cache.get(acts)
        if norm is None:
            raw = tuple(_unquote(a) for a in acts)
            norm = norm_cache[acts] = (raw, _normalize_labels(raw))
        iset_objs.append(EfgInfoset(p, num, _unquote(lab), norm[1], norm[0], probs))
    outcomes = {k: EfgOutcome(_unquote(o.label), o.payoffs) for k, o in outcomes.items()}
    return EfgTree(title=title, comment=comment, player_names=_normalize_labels(raw_players),
                   kind=kind, player=player, infoset=infoset, parent=parent, label=label,
                   outcome=outcome, child_start=child_start, children=children, returns=returns,
                   infosets=iset_objs, outcomes=outcomes)


def _mismatch(fail, brace, chance, pl, iset_num, known, iset_label, acts, probs):
    who = ("chance information set" if chance else
           f"information set {iset_num} of player {pl + 1}")
    if known[3] != acts:
        fail(brace, f"{who} was defined with actions "
             f"{[_unquote(a) for a in known[3]]}, here {[_unquote(a) for a in acts]}",
             "efg-infoset-mismatch")
    if chance and known[4] != tuple(probs):
        fail(brace, f"{who} was defined with probabilities {[str(p) for p in known[4]]}, "
             f"here {[str(p) for p in probs]}", "efg-infoset-mismatch")
    fail(brace - 1, f"{who} was named {_unquote(known[2])!r}, here {_unquote(iset_label)!r}",
         "efg-infoset-mismatch")


# ---------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------

class EfgGame(Game):
    """A state of a game read from an ``.efg`` file: a node of the shared :class:`EfgTree`.

    Players are 0-based (the file's player ``k`` is player ``k - 1``). Decision actions
    are the information set's action labels; chance outcomes are ``(label, probability)``.
    ``infoset_key(p)`` is ``("p", p, number)`` at a node of player ``p``'s information set
    ``number`` (the same for all of its nodes, exactly as the file says) and
    ``("node", index)`` elsewhere: the file does not say what ``p`` knows there.
    """

    __slots__ = ("tree", "node_index", "num_players")

    def __init__(self, tree: EfgTree, node_index: int = 0):
        self.tree = tree
        self.node_index = node_index
        self.num_players = tree.num_players

    @property
    def history(self) -> tuple:
        """The actions from the root to this node (rebuilt from the tree on demand)."""
        return self.tree.path(self.node_index)

    # -- header ------------------------------------------------------------
    @property
    def title(self) -> str:
        return self.tree.title

    @property
    def comment(self) -> str:
        return self.tree.comment

    @property
    def player_names(self) -> tuple[str, ...]:
        return self.tree.player_names

    def nodes(self) -> list[EfgNode]:
        """The parsed tree, one :class:`EfgNode` per node in file order."""
        return self.tree.nodes()

    def root(self) -> "EfgGame":
        return EfgGame(self.tree)

    # -- Game protocol -----------------------------------------------------
    def is_terminal(self) -> bool:
        return self.tree.kind[self.node_index] == TERMINAL_NODE

    def is_chance(self) -> bool:
        return self.tree.kind[self.node_index] == CHANCE_NODE

    def player_to_act(self) -> int:
        return self.tree.player[self.node_index]

    def chance_outcomes(self):
        if self.tree.kind[self.node_index] != CHANCE_NODE:
            return None
        return list(self.tree.float_chance[self.tree.infoset[self.node_index]])

    def exact_chance_outcomes(self) -> list[tuple[str, Fraction]] | None:
        """``[(label, Fraction probability), ...]`` at a chance node, else ``None``."""
        if self.tree.kind[self.node_index] != CHANCE_NODE:
            return None
        s = self.tree.infosets[self.tree.infoset[self.node_index]]
        return list(zip(s.actions, s.probs))

    def legal_actions(self) -> list[str]:
        if self.tree.kind[self.node_index] != DECISION:
            return []
        return list(self.tree.infosets[self.tree.infoset[self.node_index]].actions)

    def step(self, action: Hashable) -> None:
        tree = self.tree
        node = self.node_index
        if tree.kind[node] == TERMINAL_NODE:
            raise GameError("step() at a terminal node", rule="terminal-step",
                            history=self.history)
        iset = tree.infoset[node]
        try:
            k = tree.action_index[iset].get(action)
        except TypeError:  # unhashable
            k = None
        if k is None:
            raise GameError(f"{action!r} is not one of {list(tree.infosets[iset].actions)}",
                            rule="illegal-action", history=self.history)
        self.node_index = tree.children[tree.child_start[node] + k]

    def clone(self) -> "EfgGame":
        return EfgGame(self.tree, self.node_index)

    def terminal_returns(self) -> tuple[float, ...]:
        if self.tree.kind[self.node_index] != TERMINAL_NODE:
            raise GameError("terminal_returns() at a non-terminal node", rule="terminal-returns",
                            history=self.history)
        return self.tree.float_returns(self.node_index)

    def exact_returns(self) -> tuple[Fraction, ...]:
        """The terminal payoffs as exact Fractions (sum of the outcomes on the path)."""
        if self.tree.kind[self.node_index] != TERMINAL_NODE:
            raise GameError("exact_returns() at a non-terminal node", rule="terminal-returns",
                            history=self.history)
        return self.tree.returns[self.node_index]

    def infoset_key(self, player: int) -> Hashable:
        tree = self.tree
        node = self.node_index
        if tree.kind[node] == DECISION and tree.player[node] == player:
            return ("p", player, tree.infosets[tree.infoset[node]].number)
        return ("node", node)

    def nash_value(self):
        return None

    def __repr__(self) -> str:
        return (f"EfgGame({self.tree.title!r}, node={self.node_index}, "
                f"history={list(self.history)!r})")


def loads(text: str, source: str = "<string>") -> EfgGame:
    """Parse ``.efg`` text; return the root state.

    Raises:
      EfgError: malformed input, with ``source:line:column`` in the message.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if text.startswith("\ufeff"):      # a byte-order mark
        text = text[1:]
    return EfgGame(_parse(text, source))


def load(path: str | os.PathLike) -> EfgGame:
    """Read an ``.efg`` file; return the root state.

    Raises:
      EfgError: malformed file (``path:line:column: ...``).
      GameError: the file cannot be read.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as e:
        raise GameError(f"cannot read {path}: {e.strerror or e}", rule="efg-file") from None
    return loads(text, path)


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
    num_players = int(game.num_players)
    if num_players < 1:
        raise GameError(f"num_players is {num_players}", rule="num-players")
    is_efg = isinstance(game, EfgGame)
    title = game.title if is_efg else str(getattr(game, "title", type(game).__name__))
    comment = game.comment if is_efg else str(getattr(game, "comment", "") or "")
    names = getattr(game, "player_names", None)
    if not names or len(names) != num_players:
        names = [f"Player {k + 1}" for k in range(num_players)]
    fix = _gambit_label if gambit_labels else str
    names = _normalize_labels([fix(str(x)) for x in names])
    # Gambit 16.7 refuses a file where two nodes share a non-empty label, or two information
    # sets of one player do: such labels of an EfgGame are left out (written as "").
    node_label_ok = iset_label_ok = None
    if is_efg:
        tree = game.tree
        node_label_ok = _unique_labels([fix(x) for x in tree.label])
        iset_label_ok = _unique_labels([(s.player, fix(s.label)) for s in tree.infosets],
                                       lambda key: key[1])
    out = [f"EFG 2 R {_quote(title)} {{ {' '.join(_quote(s) for s in names)} }}",
           _quote(comment), ""]
    append = out.append

    iset_numbers: list[dict[Hashable, tuple[int, tuple]]] = [{} for _ in range(num_players)]
    outcome_numbers: dict[tuple[str, ...], int] = {}
    chance_numbers: dict[int, int] = {}   # EfgGame chance infoset -> number in the output
    chance_count = 0
    # The path to each node is kept as parent links and rebuilt only for an error message
    # (copying a tuple per node would be quadratic in the depth).
    path_parent: list[int] = []
    path_action: list[Any] = []
    stack: list[tuple[Game, int, Any]] = [(game.clone(), -1, None)]
    while stack:
        state, up, action = stack.pop()
        me = len(path_parent)
        path_parent.append(up)
        path_action.append(action)
        hist = _LazyPath(path_parent, path_action, me)
        info = inspect_node(state, num_players, hist, require_enumerable=True)
        node_label = ""
        iset_label = ""
        if is_efg:
            tree = state.tree
            node_label = fix(tree.label[state.node_index])
            if node_label not in node_label_ok:
                node_label = ""
            if info.kind != TERMINAL_NODE:
                efg_iset = tree.infosets[tree.infoset[state.node_index]]
                iset_label = fix(efg_iset.label)
                if (efg_iset.player, iset_label) not in iset_label_ok:
                    iset_label = ""
        if info.kind == TERMINAL_NODE:
            if is_efg:
                pays = tuple(_fmt_exact(x) for x in state.exact_returns())
            else:
                raw = tuple(state.terminal_returns())
                pays = tuple(_fmt_payoff(x) for x in raw)
            num = outcome_numbers.get(pays)
            if num is None:
                num = outcome_numbers[pays] = len(outcome_numbers) + 1
                append(f't {_quote(node_label)} {num} "" {{ {", ".join(pays)} }}')
            else:
                append(f"t {_quote(node_label)} {num}")
            continue
        actions = info.actions
        # The labels a reader will see (Gambit's rule for empty or repeated ones).
        labels = _normalize_labels([fix(str(a)) for a in actions])
        if info.kind == CHANCE_NODE:
            if is_efg:
                # The file's chance information sets are kept (same actions, same probabilities).
                efg_num = tree.infoset[state.node_index]
                num = chance_numbers.get(efg_num)
                if num is not None:
                    append(f"c {_quote(node_label)} {num} 0")
                else:
                    chance_count += 1
                    num = chance_numbers[efg_num] = chance_count
                    probs = [p for _, p in state.exact_chance_outcomes()]
                    body = " ".join(f"{_quote(a)} {_fmt_exact(p)}" for a, p in zip(labels, probs))
                    append(f"c {_quote(node_label)} {num} {_quote(iset_label)} {{ {body} }} 0")
            else:
                chance_count += 1
                probs = _exact_probs(info.probs, hist)
                body = " ".join(f"{_quote(a)} {_fmt_exact(p)}" for a, p in zip(labels, probs))
                append(f"c {_quote(node_label)} {chance_count} {_quote(iset_label)} "
                       f"{{ {body} }} 0")
        else:
            pl = info.player
            key = hashable_key(state.infoset_key(pl), hist, pl)
            known = iset_numbers[pl].get(key)
            if known is None:
                num = len(iset_numbers[pl]) + 1
                iset_numbers[pl][key] = (num, actions)
                body = " ".join(_quote(a) for a in labels)
                append(f"p {_quote(node_label)} {pl + 1} {num} {_quote(iset_label)} "
                       f"{{ {body} }} 0")
            else:
                num, first_actions = known
                if first_actions != actions:
                    raise GameError(f"legal actions {list(actions)} differ from "
                                    f"{list(first_actions)} in the same information set",
                                    rule="infoset-actions", history=hist, infoset=key)
                append(f"p {_quote(node_label)} {pl + 1} {num} 0")
        # Children in reverse so that the first action is expanded first (pre-order);
        # the last one pushed reuses ``state`` itself.
        last = len(actions) - 1
        for k in range(last, -1, -1):
            a = actions[k]
            child = state if k == 0 else state.clone()
            try:
                child.step(a)
            except GameError as e:
                raise e.with_context(history=tuple(hist) + (a,))
            stack.append((child, me, a))
    out.append("")
    return "\n".join(out)


def dump(game: Game, path: str | os.PathLike, *, gambit_labels: bool = True) -> None:
    """Write :func:`dumps` of ``game`` to ``path``."""
    text = dumps(game, gambit_labels=gambit_labels)
    with open(os.fspath(path), "w", encoding="utf-8") as f:
        f.write(text)
