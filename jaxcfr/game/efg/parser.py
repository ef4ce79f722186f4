"""Parsing .efg text: a fast one-regex-per-node path, and a token parser for the rest
(and for every error message, with line and column)."""

from __future__ import annotations

import gc
import re
from fractions import Fraction

from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE
from jaxcfr.game.protocol import CHANCE, TERMINAL
from jaxcfr.game.efg.tree import (_END, _NUMBER, _STRING, _STRING_FULL, _TOKEN, MAX_INTEGER_DIGITS,
                             EfgError, EfgInfoset, EfgOutcome, EfgTree, _describe, _exact,
                             _integer_ok, _normalize_labels, _NumberError, _position, _unquote)


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
                v = fcache[w] = _exact(w)
            except _NumberError:
                return None                  # the token parser reports it, with its position
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


def _parse_fast(text: str) -> EfgTree | None:
    """The tree of ``text``, or ``None`` when :func:`_parse_tokens` must decide."""
    try:
        return _FastParser(text).parse()
    except _GiveUp:
        return None


class _GiveUp(Exception):
    """The fast path met something unusual or wrong: the token parser decides."""


class _FastParser:
    """The fast path's steps: the header, then one regex match per node (its place in the
    tree, its head, its information set, its outcome). It accepts a subset of what the
    token parser accepts and builds the same tree; anything else raises :class:`_GiveUp`.
    """

    def __init__(self, text: str):
        self.text = text
        self.rows: list[tuple] = []       # (kind, player, infoset, parent, label, outcome, start)
        self.children: list[int] = []
        self.returns: dict[int, tuple[Fraction, ...]] = {}
        self.infosets: list[list] = []
        self.iset_raw: list[tuple[str, str]] = []
        self.iset_sizes: list[int] = []
        self.p_isets: dict[tuple[int, int], int] = {}
        self.c_isets: dict[int, int] = {}
        self.outcomes: dict[int, EfgOutcome] = {}
        self.out_raw: dict[int, tuple[str, str]] = {}
        self.fcache: dict[str, Fraction] = {}
        self.icache: dict[str, int] = {}   # int() is slow next to a dict look-up
        # Open nodes that still expect children: [node, next child slot, end slot, payoffs
        # so far]. A node leaves the stack as soon as its last child starts.
        self.stack: list[list] = []

    def integer(self, token: str) -> int:
        """A digit token's value (callers look in ``icache`` first: most are there)."""
        if len(token) > MAX_INTEGER_DIGITS:
            raise _GiveUp
        v = self.icache[token] = int(token)
        return v

    def parse(self) -> EfgTree:
        end = self.header()
        stack, children, add_row = self.stack, self.children, self.rows.append
        iget = self.icache.get
        node = -1
        par, acc = -1, None
        # findall scans from the end of the header: every non-blank character is part of a
        # node or is junk, so a list free of junk is the whole text, node after node.
        for (plab, pnum, pset, clab, cset, tlab, ilab, ibody, onum, olab, obody,
             junk) in _FAST_NODE.findall(self.text, end):
            if junk:
                raise _GiveUp
            node += 1
            if stack:                     # the node is the next child of the top of the stack
                top = stack[-1]
                par, acc, slot = top[0], top[3], top[1]
                children[slot] = node
                slot += 1
                if slot == top[2]:
                    stack.pop()
                else:
                    top[1] = slot
            elif node:
                raise _GiveUp             # trailing nodes after a complete tree
            if tlab:
                if ilab:
                    raise _GiveUp
                nkind, pl, iset, node_label = TERMINAL_NODE, TERMINAL, -1, tlab
            elif plab:
                nkind, node_label = DECISION, plab
                pl, iset = self.infoset(False, pnum, pset, ilab, ibody)
            else:
                nkind, node_label = CHANCE_NODE, clab
                pl, iset = self.infoset(True, None, cset, ilab, ibody)
            out_num = iget(onum)
            if out_num is None:
                out_num = self.integer(onum)
            if olab or out_num:
                acc = self.outcome(out_num, olab, obody, acc)
            if iset >= 0:
                start = len(children)
                k = self.iset_sizes[iset]
                children.extend([-1] * k)
                stack.append([node, start, start + k, acc])
                add_row((nkind, pl, iset, par, node_label, out_num, start))
            else:
                self.returns[node] = acc or self.zero
                add_row((nkind, pl, iset, par, node_label, out_num, -1))
        if stack or node < 0:
            raise _GiveUp
        return _finish(self.title, self.comment, self.raw_players, self.rows, children,
                       self.returns, self.infosets, self.outcomes)

    def header(self) -> int:
        """The title, players and comment; where the nodes start."""
        m = _FAST_HEADER.match(self.text)
        if m is None:
            raise _GiveUp
        self.title = _unquote(m.group(2))
        self.raw_players = [_unquote(x) for x in _STRINGS.findall(m.group(3))]
        self.comment = "" if m.group(4) is None else _unquote(m.group(4))
        num_players = len(self.raw_players)
        if not num_players:
            raise _GiveUp
        self.payoff_body = re.compile(r"\s*+" + r"\s*+,?+\s*+".join(["(" + _W + ")"] * num_players)
                                      + r"\s*+,?+\s*+")
        self.zero = (Fraction(0),) * num_players
        return m.end()

    def infoset(self, chance: bool, pnum: str | None, pset: str, ilab: str,
                ibody: str) -> tuple[int, int]:
        """A player or chance node's ``(player, infoset row)``: defined by its first node's
        action list, which a later node may repeat exactly (or omit)."""
        iget = self.icache.get
        if chance:
            pl = CHANCE
            iset_num = iget(pset)
            if iset_num is None:
                iset_num = self.integer(pset)
            iset = self.c_isets.get(iset_num)
        else:
            pl = iget(pnum)
            if pl is None:
                pl = self.integer(pnum)
            if not 1 <= pl <= len(self.raw_players):
                raise _GiveUp
            pl -= 1
            iset_num = iget(pset)
            if iset_num is None:
                iset_num = self.integer(pset)
            iset = self.p_isets.get((pl, iset_num))
        if not ilab:
            if iset is None:
                raise _GiveUp
            return pl, iset
        if iset is None:
            parsed = _fast_body(ibody, chance, self.fcache)
            if parsed is None:
                raise _GiveUp
            acts, probs = parsed
            if chance:
                if sum(probs) != 1 or any(p < 0 for p in probs):
                    raise _GiveUp
                iset = self.c_isets[iset_num] = len(self.infosets)
            else:
                iset = self.p_isets[(pl, iset_num)] = len(self.infosets)
            self.infosets.append([pl, iset_num, ilab, acts, probs])
            self.iset_raw.append((ilab, ibody))
            self.iset_sizes.append(len(acts))
            return pl, iset
        raw = self.iset_raw[iset]
        if raw[0] != ilab:
            raise _GiveUp
        if raw[1] != ibody:
            parsed = _fast_body(ibody, chance, self.fcache)
            known = self.infosets[iset]
            if parsed is None or parsed[0] != known[3] or parsed[1] != known[4]:
                raise _GiveUp
        return pl, iset

    def outcome(self, out_num: int, olab: str, obody: str, acc):
        """The payoffs accumulated down to a node with outcome ``out_num`` (> 0), defined
        at its first use (``olab``, ``obody``), which a later use may repeat exactly."""
        if olab:
            if out_num == 0:
                raise _GiveUp
            raw = self.out_raw.get(out_num)
            if raw is None or raw[0] != olab or raw[1] != obody:
                pm = self.payoff_body.fullmatch(obody)
                if pm is None:
                    raise _GiveUp
                pays = _fast_numbers(pm.groups(), self.fcache)
                if pays is None:
                    raise _GiveUp
                if raw is None:
                    self.outcomes[out_num] = EfgOutcome(olab, pays)
                    self.out_raw[out_num] = (olab, obody)
                elif self.outcomes[out_num] != (olab, pays):
                    raise _GiveUp
            own = self.outcomes[out_num].payoffs
        else:
            known = self.outcomes.get(out_num)
            if known is None:
                raise _GiveUp
            own = known.payoffs
        return own if acc is None else tuple([a + b for a, b in zip(acc, own)])


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


