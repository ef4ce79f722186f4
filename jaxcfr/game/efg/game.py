"""``EfgGame``: a parsed .efg tree as a jaxcfr Game; ``load`` / ``loads``."""

from __future__ import annotations

import functools
import os
import re
from fractions import Fraction
from typing import Hashable

from jaxcfr._util.reading import read_bytes
from jaxcfr.game.contract import CHANCE_NODE, DECISION, TERMINAL_NODE
from jaxcfr.game.protocol import Game, GameError
from jaxcfr.game.efg.parser import _parse
from jaxcfr.game.efg.tree import EfgError, EfgNode, EfgTree


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

    @property
    def _path(self):
        """The history as a function, for an error to call when it is read (a walk probes
        ``step`` at every terminal node and drops the error)."""
        return functools.partial(self.tree.path, self.node_index)

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
                            history=self._path)
        iset = tree.infoset[node]
        try:
            k = tree.action_index[iset].get(action)
        except TypeError:  # unhashable
            k = None
        if k is None:
            raise GameError(f"{action!r} is not one of {list(tree.infosets[iset].actions)}",
                            rule="illegal-action", history=self._path)
        self.node_index = tree.children[tree.child_start[node] + k]

    def clone(self) -> "EfgGame":
        return EfgGame(self.tree, self.node_index)

    def terminal_returns(self) -> tuple[float, ...]:
        if self.tree.kind[self.node_index] != TERMINAL_NODE:
            raise GameError("terminal_returns() at a non-terminal node", rule="terminal-returns",
                            history=self._path)
        return self.tree.float_returns(self.node_index)

    def exact_returns(self) -> tuple[Fraction, ...]:
        """The terminal payoffs as exact Fractions (sum of the outcomes on the path)."""
        if self.tree.kind[self.node_index] != TERMINAL_NODE:
            raise GameError("exact_returns() at a non-terminal node", rule="terminal-returns",
                            history=self._path)
        return self.tree.returns[self.node_index]

    def infoset_key(self, player: int) -> Hashable:
        tree = self.tree
        node = self.node_index
        if tree.kind[node] == DECISION and tree.player[node] == player:
            return ("p", player, tree.infosets[tree.infoset[node]].number)
        return ("node", node)

    def nash_value(self):
        return None

    def tree_size(self) -> int | None:
        """The file's node count (at the root; ``None`` below it)."""
        return self.tree.num_nodes if self.node_index == 0 else None

    def __repr__(self) -> str:
        return (f"EfgGame({self.tree.title!r}, node={self.node_index}, "
                f"history={list(self.history)!r})")


def loads(text: str, source: str = "<string>") -> EfgGame:
    """Parse ``.efg`` text; return the root state.

    Raises:
      EfgError: malformed input, with ``source:line:column`` in the message.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):      # a byte-order mark
        text = text[1:]
    binary = _BINARY.search(text)
    head = text[:4096]
    undecodable = len(_UNDECODABLE.findall(head))
    if binary is None and undecodable > len(head) // 10:
        binary = _UNDECODABLE.search(head)
    if binary is not None:
        line = text.count("\n", 0, binary.start()) + 1
        column = binary.start() - (text.rfind("\n", 0, binary.start()) + 1) + 1
        what = (f"control character {binary.group()!r}" if _BINARY.match(binary.group()) else
                f"{undecodable} of its first {len(head)} characters are not UTF-8")
        raise EfgError(f"not a text file ({what}): an .efg file is Gambit's text format",
                       rule="efg-binary", path=source, line=line, column=column)
    return EfgGame(_parse(text, source))


#: Characters no text file holds: NUL and the other C0 controls but tab, newlines, form feed.
_BINARY = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
#: Bytes that are not UTF-8, as ``load`` reads them (surrogate escapes).
_UNDECODABLE = re.compile(r"[\udc80-\udcff]")


def load(path: str | os.PathLike) -> EfgGame:
    """Read an ``.efg`` file; return the root state.

    Raises:
      EfgError: malformed file (``path:line:column: ...``).
      GameError: the file cannot be read.
    """
    path = os.fspath(path)
    try:                                 # bounded: a link to /dev/zero never ends
        text = read_bytes(path).decode("utf-8", errors="surrogateescape")
    except OSError as e:
        raise GameError(f"cannot read {path}: {e.strerror or e}", rule="efg-file") from None
    return loads(text, path)


