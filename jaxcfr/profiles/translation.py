"""Lifting through action translation: off-menu histories answered by the ones they map to.

Lifting by elimination (:mod:`jaxcfr.profiles.lifting`) plays uniformly wherever the
abstracted game never went: behind every action the abstraction dropped. With an
abstraction that defines ``translate(state, player, action)``,
:func:`translated_table` instead follows every history of the full game on the
abstracted game: each real history is a distribution over *translated* histories
(histories of the abstracted game, weighted by translation probabilities), built
move by move from the root:

* a chance outcome is replayed on every translated history;
* a player's action ``a`` is replayed as itself where the translated history keeps
  it, and as ``translate(translated state, player, a)`` where it does not (a
  dropped action, or one that is not even legal there: the translated state may
  differ from the real one, e.g. in the pot); without translation it is lost;
* a translated history that cannot follow (its node is of another kind or player,
  or refuses the move) is lost.

At a real decision node the acting player's strategy is the mixture of the
abstracted profile's strategies at the translated histories' information sets,
weighted by their probabilities and renormalised over the histories that are not
lost (uniform when all are: elimination's rule); an abstract action that is not
legal in the real state is mapped onto the real state's kept actions by
``translate`` too (its mass is dropped if it cannot be). Renormalising rather than
playing the lost weight uniformly is a measured choice: on no-limit Leduc (stack 6,
three menus) it took the lifted profiles' full-game exploitability from 0.55, 0.52
and 0.0013 to 0.22, 0.13 and 0.0013. Every member of a real
information set must translate to the same mixture (translation must depend only
on what the acting player observes): otherwise a :class:`GameError`
(``translation-infoset``) names the two histories. On the histories the abstraction
keeps the result is elimination's.

The walk runs over the lowered full game's node table (no real state is stepped,
except to map abstract actions back); abstract states are made once per translated
history and memoised. Cost: one Python step per full-game node (no-limit Leduc,
353,797 histories: a few seconds).

Example::

    >>> import jaxcfr
    >>> menu = jaxcfr.load_abstraction("bet_menu(fractions=[1.0])")
    >>> small = jaxcfr.solve(jaxcfr.Abstracted(jaxcfr.load_game("nolimit_leduc(stack=4)"),
    ...                                        menu), "cfr+", 200).profile
    >>> lifted = jaxcfr.lift(small, "nolimit_leduc(stack=4)", abstraction=menu)  # translate
"""

from __future__ import annotations

import math
from typing import Callable, Hashable

import numpy as np

from jaxcfr.game.abstraction import check_translation, has_translate, kept_actions
from jaxcfr.game.contract import GameError, format_history
from jaxcfr.profiles.profile import Profile
from jaxcfr.tensors import CHANCE_NODE, DECISION, LoweredGame

__all__ = ["translated_table", "TranslatedTree"]

#: How far two members' mixtures may differ (translation weights are products of floats).
MIXTURE_TOLERANCE = 1e-9
_LOST = -1


class TranslatedTree:
    """The histories of the abstracted game that real histories translate to, by id.

    Id 0 is the root. Per id: the state (of the full game, reached by kept actions
    only), its kind and player, its parent and the action into it (for errors), and
    memoised children, kept actions, moves and keys.

    Args:
      game: the full game's root state (not modified).
      abstraction: the action abstraction (``actions``, and ``translate`` when
        ``translating``).
      key_of: ``key_of(player, infoset key) -> profile key`` (a bucketing, or the key).
    """

    def __init__(self, game, abstraction, translating: bool,
                 key_of: Callable[[int, Hashable], Hashable]):
        self.abstraction = abstraction
        self.translating = translating and has_translate(abstraction)
        self.key_of = key_of
        self.states: list = []
        self.kinds: list[int] = []
        self.players: list[int] = []
        self.parent: list[int] = []
        self.label: list = []
        self._child: dict = {}
        self._kept: dict[int, tuple] = {}
        self._moves: dict = {}
        self._keys: dict[int, Hashable] = {}
        self._add(game.clone(), _LOST, None)

    def _add(self, state, parent: int, label) -> int:
        if state.is_terminal():
            kind, player = 2, -1
        elif state.is_chance():
            kind, player = CHANCE_NODE, -1
        else:
            kind, player = DECISION, state.player_to_act()
        self.states.append(state)
        self.kinds.append(kind)
        self.players.append(player)
        self.parent.append(parent)
        self.label.append(label)
        return len(self.states) - 1

    def history(self, h: int) -> tuple:
        """The action path of translated history ``h``."""
        out = []
        while self.parent[h] != _LOST:
            out.append(self.label[h])
            h = self.parent[h]
        return tuple(reversed(out))

    def child(self, h: int, action) -> int:
        """The translated history after ``action`` at ``h`` (``-1``: refused)."""
        memo = (h, action)
        c = self._child.get(memo)
        if c is None:
            state = self.states[h].clone()
            try:
                state.step(action)
            except GameError:
                c = _LOST
            else:
                c = self._add(state, h, action)
            self._child[memo] = c
        return c

    def kept(self, h: int) -> tuple:
        """The kept actions at decision ``h`` (checked like lowering checks them)."""
        kept = self._kept.get(h)
        if kept is None:
            state = self.states[h]
            try:
                kept = kept_actions(self.abstraction, state, self.players[h],
                                    tuple(state.legal_actions()))
            except GameError as e:
                raise e.with_context(history=self.history(h)) from None
            self._kept[h] = kept
        return kept

    def moves(self, h: int, player: int, action) -> tuple:
        """``((translated history, probability), ...)`` after ``player`` plays ``action``
        at ``h``; ``()`` when ``h`` cannot follow it."""
        memo = (h, action)
        out = self._moves.get(memo)
        if out is not None:
            return out
        if self.kinds[h] != DECISION or self.players[h] != player:
            out = ()
        else:
            kept = self.kept(h)
            if action in kept:
                out = ((self.child(h, action), 1.0),)
            elif self.translating:
                pairs = self.translate(self.states[h], player, action, kept, self.history(h))
                out = tuple((self.child(h, k), q) for k, q in pairs)
            else:
                out = ()
            out = tuple((c, q) for c, q in out if c != _LOST)
        self._moves[memo] = out
        return out

    def deal(self, h: int, outcome) -> int:
        """The translated history after chance's ``outcome`` at ``h`` (``-1``: lost)."""
        return self.child(h, outcome) if self.kinds[h] == CHANCE_NODE else _LOST

    def key(self, h: int, player: int):
        """The profile key of ``player``'s information set at ``h``, or ``None`` when
        ``h`` is not ``player``'s decision."""
        if self.kinds[h] != DECISION or self.players[h] != player:
            return None
        key = self._keys.get(h)
        if key is None:
            key = self._keys[h] = self.key_of(player, self.states[h].infoset_key(player))
        return key

    def translate(self, state, player: int, action, kept: tuple, history: tuple) -> tuple:
        """The abstraction's translation of ``action`` at ``state``, checked."""
        try:
            return check_translation(self.abstraction.translate(state, player, action),
                                     kept, action)
        except GameError as e:
            raise e.with_context(history=history) from None


def translated_table(profile: Profile, full: LoweredGame, game, abstraction, *,
                     key_of: Callable[[int, Hashable], Hashable] | None = None,
                     translate: bool = True) -> tuple[np.ndarray, dict[str, int]]:
    """The ``[I, A]`` strategy table of ``full`` lifted from ``profile`` through translation.

    Args:
      profile: a profile of the abstracted game (of ``Abstracted(game, abstraction)``,
        possibly bucketed: then ``key_of`` maps an information-set key to its bucket).
      full: the full game, lowered (one game, not a stack).
      game: the full game's root state (the translated histories are stepped on it).
      abstraction: the action abstraction (with ``translate`` when ``translate``).
      translate: ``False`` follows only the kept actions (elimination through this
        walk; :func:`jaxcfr.lift` uses the faster key lookup for that).
    Returns:
      ``(table, counts)``: ``counts`` = ``{"rows", "found", "translated", "missing"}``:
      information sets of the full game, those whose own key (or bucket) the profile
      has, those it does not have that get a translated strategy, and those that get
      none (uniform).
    Raises:
      GameError: ``translation`` (``translate`` returned something that is not a
        distribution over the kept actions), ``translation-infoset`` (two members of a
        real information set translate differently), or an abstraction rule, naming
        the history.
    """
    if full.batch_size is not None:
        raise ValueError("translated_table() takes a single full game, not a stack")
    key_of = key_of or (lambda player, key: key)
    tree = TranslatedTree(game, abstraction, translate, key_of)
    t = full.tensors
    kind, owner, row_of = (np.asarray(x) for x in (t.node_kind, t.node_player, t.node_infoset))
    parent, labels = np.asarray(t.parent), full.node_action
    mask = np.asarray(t.legal_mask)
    table = mask / mask.sum(axis=1, keepdims=True)                           # uniform
    first: dict[int, tuple[dict, int]] = {}                                   # row -> (mix, node)
    counts = {"rows": len(full.infoset_keys), "found": 0, "translated": 0, "missing": 0}
    lists: list = [None] * full.num_nodes
    lists[0] = ((0, 1.0),)
    kind_l, owner_l, parent_l, row_l = kind.tolist(), owner.tolist(), parent.tolist(), \
        row_of.tolist()
    for n in range(full.num_nodes):
        if n:
            m = parent_l[n]
            lists[n] = _follow(tree, lists[m], kind_l[m], owner_l[m], labels[n])
        if kind_l[n] != DECISION:
            continue
        player, row = owner_l[n], row_l[n]
        mix: dict = {}
        for h, w in lists[n]:
            key = tree.key(h, player)
            if key is not None:
                mix[key] = mix.get(key, 0.0) + w
        seen = first.get(row)
        if seen is None:
            first[row] = (mix, n)
            table[row] = 0.0
            dist, kind_of_row = _strategy(profile, tree, full, game, n, player, row, mix,
                                          key_of)
            table[row, :len(dist)] = dist
            counts[kind_of_row] += 1
        elif not _same(seen[0], mix):
            raise GameError(
                f"two histories of player {player}'s information set "
                f"{full.infoset_keys[row][1]!r} translate differently: "
                f"{_describe(seen[0])} at history {_path(full, seen[1])}, {_describe(mix)} "
                "here (a translation may depend only on what the acting player observes)",
                rule="translation-infoset", history=full.history(n),
                infoset=full.infoset_keys[row][1])
    return table, counts


def _follow(tree: TranslatedTree, entries: tuple, parent_kind: int, player: int,
            action) -> tuple:
    """The translated histories of a child from its parent's (merged by id)."""
    if not entries:
        return ()
    if parent_kind == DECISION:
        out = []
        for h, w in entries:
            for c, q in tree.moves(h, player, action):
                out.append((c, w * q))
    else:
        out = [(c, w) for c, w in ((tree.deal(h, action), w) for h, w in entries)
               if c != _LOST]
    if len(out) > 1:
        merged: dict[int, float] = {}
        for c, w in out:
            merged[c] = merged.get(c, 0.0) + w
        out = list(merged.items())
    return tuple(out)


def _strategy(profile: Profile, tree: TranslatedTree, full: LoweredGame, game, node: int,
              player: int, row: int, mix: dict, key_of) -> tuple[np.ndarray, str]:
    """The lifted distribution over ``row``'s legal actions, and how the row was found."""
    legal = tuple(full.infoset_actions[row])
    index = {a: i for i, a in enumerate(legal)}
    out = np.zeros(len(legal))
    weight = 0.0
    real_state = None
    for key, w in mix.items():
        r = profile.row(player, key)
        if r is None:
            continue
        weight += w
        acts = profile.actions[r]
        probs = np.maximum(np.asarray(profile.probs[r, :len(acts)], np.float64), 0.0)
        total = probs.sum()
        probs = probs / total if total > 0 else np.full(len(acts), 1.0 / len(acts))
        for a, q in zip(acts, probs.tolist()):
            if q == 0.0:
                continue
            i = index.get(a)
            if i is not None:
                out[i] += w * q
                continue
            # an abstract action the real state does not allow: translate it there
            if real_state is None:
                real_state = _replay(game, full.history(node))
            for k, q2 in _map_back(tree, real_state, player, a, full.history(node)):
                out[index[k]] += w * q * q2
    total = out.sum()                       # lost histories drop out: renormalise
    out = out / total if total > 0 else np.full(len(legal), 1.0 / len(legal))
    own = full.infoset_keys[row]
    if profile.row(player, key_of(player, own[1])) is not None:
        found = "found"
    else:
        found = "translated" if weight > 0 else "missing"
    return out, found


def _map_back(tree: TranslatedTree, state, player: int, action, history) -> tuple:
    """``action`` (not legal at the real ``state``) on ``state``'s kept actions, or ``()``."""
    if not tree.translating:
        return ()
    kept = kept_actions(tree.abstraction, state, player, tuple(state.legal_actions()))
    return tree.translate(state, player, action, kept, history)


def _replay(game, history: tuple):
    state = game.clone()
    for a in history:
        state.step(a)
    return state


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    return all(math.isclose(a[k], b[k], rel_tol=0, abs_tol=MIXTURE_TOLERANCE) for k in a)


def _describe(mix: dict) -> str:
    if not mix:
        return "nothing (uniform)"
    return ", ".join(f"{k!r} with {w:.4g}" for k, w in mix.items())


def _path(full: LoweredGame, node: int) -> str:
    return format_history(full.history(node))
