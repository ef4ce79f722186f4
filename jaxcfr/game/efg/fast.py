"""The fast path of the .efg reader: one regex match per node.

It accepts a subset of what the token parser (:mod:`jaxcfr.game.efg.parser`) accepts
(tokens separated the usual way) and builds the same tree; on anything unusual or wrong
it gives up (:class:`_GiveUp`) and the token parser runs instead (and reports the error,
if there is one, with its line and column).
"""

from __future__ import annotations

import re
from fractions import Fraction

from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE
from jaxcfr.game.protocol import CHANCE, TERMINAL
from jaxcfr.game.efg.tree import (_NUMBER, _STRING, MAX_INTEGER_DIGITS, EfgOutcome, EfgTree,
                                  _exact, _finish, _NumberError, _unquote)

__all__ = ["_parse_fast"]

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
