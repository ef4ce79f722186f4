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
                    if len(pnum) > MAX_INTEGER_DIGITS:
                        return None
                    pl = icache[pnum] = int(pnum)
                if not 1 <= pl <= num_players:
                    return None
                pl -= 1
                iset_num = iget(pset)
                if iset_num is None:
                    if len(pset) > MAX_INTEGER_DIGITS:
                        return None
                    iset_num = icache[pset] = int(pset)
                iset = p_isets.get((pl, iset_num))
                node_label = plab
                nkind = DECISION
            else:
                chance = True
                pl = CHANCE
                iset_num = iget(cset)
                if iset_num is None:
                    if len(cset) > MAX_INTEGER_DIGITS:
                        return None
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
            if len(onum) > MAX_INTEGER_DIGITS:
                return None
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
        if not _integer_ok(t):
            fail(at, f"expected {what}, found a number of {len(t):,} digits (at most "
                 f"{MAX_INTEGER_DIGITS} are read)", "efg-number")
        v = icache[t] = int(t)
        return v

    fcache: dict[str, Fraction] = {}

    def number(at: int, what: str) -> Fraction:
        t = toks[at]
        if not _NUMBER.fullmatch(t):
            expected(at, what, "efg-number" if t[0] not in '"{},\x00' else "efg-syntax")
        try:
            v = _exact(t)
        except _NumberError as e:
            fail(at, f"expected {what}, found {e}", "efg-number")
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


