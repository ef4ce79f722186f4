"""Parsing .efg text: :func:`_parse` tries the fast path (:mod:`jaxcfr.game.efg.fast`) and
falls back on the token parser here, which reads every file the format allows and locates
every error message (line and column)."""

from __future__ import annotations

import gc
from fractions import Fraction

from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE
from jaxcfr.game.protocol import CHANCE, TERMINAL
from jaxcfr.game.efg.fast import _parse_fast
from jaxcfr.game.efg.tree import (_END, _NUMBER, _STRING_FULL, _TOKEN, MAX_INTEGER_DIGITS,
                                  EfgError, EfgOutcome, EfgTree, _describe, _exact, _finish,
                                  _integer_ok, _NumberError, _position, _unquote)

__all__ = ["_parse", "_parse_fast", "_parse_tokens"]


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


def _parse_tokens(text: str, source: str) -> EfgTree:
    """The reference parser: token by token, with exact error positions."""
    return _TokenParser(text, source).parse()


class _TokenParser:
    """The token parser's steps, top to bottom: the header, then one node at a time (its
    head, its information set's action list, its outcome, its place in the tree), then
    the end of the file. Every error names the token it was met at (line and column).

    ``i`` is the position in ``toks``; eight sentinels past the end keep every look-ahead
    in range (and fail there).
    """

    def __init__(self, text: str, source: str):
        self.text, self.source = text, source
        self.toks = toks = _TOKEN.findall(text)
        self.n = n = len(toks)
        if n and toks[-1][0] == '"' and not _STRING_FULL.fullmatch(toks[-1]):
            self.fail(n - 1, "unterminated string: no closing '\"' before the end of the file",
                      "efg-string")
        toks.extend([_END] * 8)
        self.icache: dict[str, int] = {}
        self.fcache: dict[str, Fraction] = {}
        self.i = 0

    # -- errors and single tokens ----------------------------------------------------------
    def fail(self, at: int, message: str, rule: str = "efg-syntax"):
        line, column = _position(self.text, at)
        raise EfgError(message, rule=rule, path=self.source, line=line, column=column)

    def expected(self, at: int, what: str, rule: str = "efg-syntax"):
        found = self.toks[at] if at < self.n else None
        if found is None and rule == "efg-syntax":
            rule = "efg-truncated"
        self.fail(at, f"expected {what}, found {_describe(found)}", rule)

    def integer(self, at: int, what: str) -> int:
        """The integer token at ``at`` (callers look in ``icache`` first: most are there)."""
        t = self.toks[at]
        if not (t.isascii() and t.isdigit()):
            self.expected(at, what)
        if not _integer_ok(t):
            self.fail(at, f"expected {what}, found a number of {len(t):,} digits (at most "
                      f"{MAX_INTEGER_DIGITS} are read)", "efg-number")
        v = self.icache[t] = int(t)
        return v

    def number(self, at: int, what: str) -> Fraction:
        """The exact number at ``at`` (callers look in ``fcache`` first)."""
        t = self.toks[at]
        if not _NUMBER.fullmatch(t):
            self.expected(at, what, "efg-number" if t[0] not in '"{},\x00' else "efg-syntax")
        try:
            v = _exact(t)
        except _NumberError as e:
            self.fail(at, f"expected {what}, found {e}", "efg-number")
        self.fcache[t] = v
        return v

    def label(self, at: int, what: str) -> str:
        """A quoted string at ``at`` (kept quoted)."""
        if self.toks[at][0] != '"':
            self.expected(at, what)
        return self.toks[at]

    # -- the file ----------------------------------------------------------------------------
    def parse(self) -> EfgTree:
        self.header()
        self.rows: list[tuple] = []       # (kind, player, infoset, parent, label, outcome, start)
        self.children: list[int] = []
        self.returns: dict[int, tuple[Fraction, ...]] = {}
        self.infosets: list[list] = []    # [player, number, label, raw_actions, probs]
        self.iset_sizes: list[int] = []
        self.p_isets: dict[tuple[int, int], int] = {}
        self.c_isets: dict[int, int] = {}
        self.outcomes: dict[int, EfgOutcome] = {}
        self.stack: list[list] = []       # [node, next child slot, end slot, payoffs so far]
        node = 0
        while self.node(node):
            node += 1
        if self.i < self.n:
            self.expected(self.i, "end of file (the tree is complete)", "efg-trailing")
        return _finish(self.title, self.comment, self.raw_players, self.rows, self.children,
                       self.returns, self.infosets, self.outcomes)

    def header(self) -> None:
        """``EFG 2 R "title" { "player" ... } ["comment"]``."""
        toks, expected = self.toks, self.expected
        if toks[0] != "EFG":
            expected(0, "'EFG' (file type)")
        if toks[1] != "2":
            expected(1, "'2' (only EFG version 2 is supported)")
        if toks[2] not in ("R", "D"):
            expected(2, "'R' or 'D' (data type)")
        self.title = _unquote(self.label(3, "the game title (a quoted string)"))
        if toks[4] != "{":
            expected(4, "'{' opening the player list")
        i = 5
        self.raw_players = []
        while toks[i][0] == '"':
            self.raw_players.append(_unquote(toks[i]))
            i += 1
        if toks[i] != "}":
            expected(i, "a player name (a quoted string) or '}'")
        if not self.raw_players:
            self.fail(i, "expected at least one player, found '}'", "efg-players")
        i += 1
        self.comment = ""
        if toks[i][0] == '"':
            self.comment = _unquote(toks[i])
            i += 1
        self.i = i
        self.num_players = len(self.raw_players)
        self.zero = (Fraction(0),) * self.num_players

    # -- one node ----------------------------------------------------------------------------
    def node(self, node: int) -> bool:
        """Read node ``node`` (pre-order); whether the tree still expects nodes."""
        stack = self.stack
        if stack:
            top = stack[-1]
            self.children[top[1]] = node
            top[1] += 1
            par, acc = top[0], top[3]
        else:
            par, acc = -1, None
        t = self.toks[self.i]
        if t == "p" or t == "c":
            nkind, pl, iset, node_label = self.inner_node(t == "c")
            k_children = self.iset_sizes[iset]
        elif t == "t":
            node_label = self.label(self.i + 1, "a node label (a quoted string)")
            self.i += 2
            nkind, pl, iset, k_children = TERMINAL_NODE, TERMINAL, -1, 0
        else:
            self.expected(self.i, "a node ('c', 'p' or 't')")
        out_num, acc = self.outcome(acc)
        if k_children:
            start = len(self.children)
            self.rows.append((nkind, pl, iset, par, node_label, out_num, start))
            self.children.extend([-1] * k_children)
            stack.append([node, start, start + k_children, acc])
            return True
        self.rows.append((nkind, pl, iset, par, node_label, out_num, -1))
        self.returns[node] = self.zero if acc is None else acc
        while stack:
            top = stack[-1]
            if top[1] != top[2]:
                return True
            stack.pop()
        return False

    def inner_node(self, chance: bool) -> tuple:
        """``p "label" player infoset [...]`` or ``c "label" infoset [...]``: the node's
        ``(kind, player, infoset row, quoted label)``."""
        node_label = self.label(self.i + 1, "a node label (a quoted string)")
        self.i += 2
        if chance:
            pl = CHANCE
        else:
            pl = self.icache.get(self.toks[self.i])
            if pl is None:
                pl = self.integer(self.i, "a player number")
            if not 1 <= pl <= self.num_players:
                self.fail(self.i, f"player number {pl} is out of range (the file has "
                          f"{self.num_players} player{'s' if self.num_players != 1 else ''})",
                          "efg-player")
            pl -= 1
            self.i += 1
        iset_tok = self.i
        iset_num = self.icache.get(self.toks[self.i])
        if iset_num is None:
            iset_num = self.integer(self.i, "an information set number")
        self.i += 1
        iset = self.c_isets.get(iset_num) if chance else self.p_isets.get((pl, iset_num))
        if self.toks[self.i][0] == '"':
            iset = self.action_list(chance, pl, iset_num, iset)
        elif iset is None:
            if self.toks[self.i][0] == "\x00":
                self.expected(self.i, "an information set name (a quoted string)")
            who = ("chance information set" if chance else
                   f"information set {iset_num} of player {pl + 1}")
            self.fail(iset_tok, f"{who} is used before it is defined (its first node must "
                      f"give its name and action list); found {_describe(self.toks[self.i])}",
                      "efg-infoset-undefined")
        return (CHANCE_NODE if chance else DECISION), pl, iset, node_label

    def action_list(self, chance: bool, pl: int, iset_num: int, iset: int | None) -> int:
        """``"infoset" { "action" [probability] ... }``: defines the information set at its
        first node, and must repeat it exactly at a later one. Returns its row."""
        toks = self.toks
        iset_label = toks[self.i]
        brace = self.i + 1
        if toks[brace] != "{":
            self.expected(brace, "'{' opening the action list")
        i = j = self.i + 2
        probs = []
        if chance:
            while toks[i][0] == '"':
                p = self.fcache.get(toks[i + 1])
                probs.append(self.number(i + 1, "a probability (number)") if p is None else p)
                i += 2
            acts = tuple(toks[j:i:2])
        else:
            while toks[i][0] == '"':
                i += 1
            acts = tuple(toks[j:i])
        if toks[i] != "}":
            self.expected(i, "an action label (a quoted string) or '}'" if acts else
                          "an action label (a quoted string)")
        if not acts:
            self.expected(i, "an action label (a quoted string)")
        self.i = i + 1
        if iset is None:
            return self.define_infoset(chance, pl, iset_num, iset_label, acts,
                                       tuple(probs) if chance else None, brace)
        known = self.infosets[iset]
        if known[3] != acts or known[2] != iset_label or (chance and known[4] != tuple(probs)):
            _mismatch(self.fail, brace, chance, pl, iset_num, known, iset_label, acts,
                      probs if chance else None)
        return iset

    def define_infoset(self, chance: bool, pl: int, iset_num: int, iset_label: str,
                       acts: tuple, probs: tuple | None, brace: int) -> int:
        """A new information set (chance probabilities non-negative, summing to exactly 1)."""
        if chance:
            for k, p in enumerate(probs):
                if p < 0:
                    self.fail(brace + 2 + 2 * k, f"chance probability {p} is negative",
                              "efg-chance-prob")
            total = sum(probs)
            if total != 1:
                self.fail(brace, f"chance probabilities of information set {iset_num} "
                          f"sum to {total}, not exactly 1", "efg-chance-sum")
            iset = self.c_isets[iset_num] = len(self.infosets)
        else:
            iset = self.p_isets[(pl, iset_num)] = len(self.infosets)
        self.infosets.append([pl, iset_num, iset_label, acts, probs])
        self.iset_sizes.append(len(acts))
        return iset

    def outcome(self, acc):
        """``number ["outcome" { payoff[,] ... }]``: the outcome number, and the payoffs
        accumulated down to this node."""
        toks = self.toks
        out_num = self.icache.get(toks[self.i])
        if out_num is None:
            out_num = self.integer(self.i, "an outcome number")
        self.i += 1
        i = self.i
        if toks[i][0] == '"':
            out_tok = i - 1
            if out_num == 0:
                self.fail(i, "outcome 0 (no outcome) cannot have a name or payoffs",
                          "efg-outcome")
            out_label = toks[i]
            if toks[i + 1] != "{":
                self.expected(i + 1, "'{' opening the payoff list")
            i += 2
            pays = []
            num_players = self.num_players
            for _ in range(num_players):
                p = self.fcache.get(toks[i])
                pays.append(self.number(i, f"a payoff (number) for player {len(pays) + 1} of "
                                        f"{num_players}") if p is None else p)
                i += 1
                if toks[i] == ",":
                    i += 1
            if toks[i] != "}":
                self.expected(i, f"'}}' closing the {num_players} payoffs")
            self.i = i + 1
            pays = tuple(pays)
            known = self.outcomes.get(out_num)
            if known is None:
                self.outcomes[out_num] = known = EfgOutcome(out_label, pays)
            elif known.payoffs != pays or known.label != out_label:
                self.fail(out_tok, f"outcome {out_num} was defined as "
                          f"{_unquote(known.label)!r} "
                          f"{{{', '.join(str(p) for p in known.payoffs)}}}, here "
                          f"{_unquote(out_label)!r} {{{', '.join(str(p) for p in pays)}}}",
                          "efg-outcome-mismatch")
        elif out_num:
            known = self.outcomes.get(out_num)
            if known is None:
                self.fail(i - 1, f"outcome {out_num} is used before it is defined (its first "
                          f"use must give its name and payoffs); found {_describe(toks[i])}",
                          "efg-outcome-undefined")
        else:
            return out_num, acc
        own = known.payoffs
        return out_num, (own if acc is None else tuple(a + b for a, b in zip(acc, own)))


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


