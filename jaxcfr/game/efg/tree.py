"""The parsed form of a Gambit .efg file: nodes, information sets, outcomes; tokens; the tree
built from the readers' rows (``_finish``)."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple, Sequence

from jaxcfr.game.protocol import GameError


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

# Bounds on the exact numbers the reader takes: longer numbers, larger exponents or
# values past the largest float would make exact arithmetic hang (1e30000000 has 30
# million digits), hit Python's 4,300-digit limit, or overflow to inf when converted.
#: The longest number (payoff or probability), in characters.
MAX_NUMBER_CHARS = 100
#: The largest decimal exponent (``1e400``: 400).
MAX_EXPONENT = 400
#: The longest player, information-set or outcome number, in digits.
MAX_INTEGER_DIGITS = 18
#: The largest magnitude a number may have: the largest float.
FLOAT_MAX = Fraction(1.7976931348623157e308)


class _NumberError(ValueError):
    """A number token the reader refuses; the message says why (the caller adds where)."""


def _exact(token: str) -> Fraction:
    """The exact value of a number token that matches ``_NUMBER``, within the bounds above.

    Raises:
      _NumberError: too long, exponent too large, magnitude past the largest float, or a
        zero denominator.
    """
    if len(token) > MAX_NUMBER_CHARS:
        raise _NumberError(f"a number of {len(token):,} characters (at most "
                           f"{MAX_NUMBER_CHARS} are read)")
    e = max(token.find("e"), token.find("E"))
    if e >= 0 and abs(int(token[e + 1:])) > MAX_EXPONENT:
        raise _NumberError(f"{_describe(token)}, whose exponent is out of range (at most "
                           f"{MAX_EXPONENT} either way)")
    try:
        value = Fraction(token)
    except ZeroDivisionError:
        raise _NumberError(f"{token!r} (zero denominator)") from None
    if abs(value) > FLOAT_MAX:
        raise _NumberError(f"{_describe(token)}, larger than the largest float "
                           f"({float(FLOAT_MAX):.4g})")
    return value


def _integer_ok(token: str) -> bool:
    """Whether a digit token is short enough to read (see ``MAX_INTEGER_DIGITS``)."""
    return len(token) <= MAX_INTEGER_DIGITS


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
    kind: int                   # DECISION, CHANCE_NODE or TERMINAL_NODE (jaxcfr.game.contract)
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
            try:
                r = tuple(float(x) for x in self.returns[node])
            except OverflowError:
                # Each payoff is bounded by the reader; only their sum along a path can get here.
                raise GameError("the outcomes on the path to this node add up to more than "
                                f"the largest float ({float(FLOAT_MAX):.4g})", rule="efg-number",
                                history=self.path(node)) from None
            self._float_returns[node] = r
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
