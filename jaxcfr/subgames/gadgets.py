"""The gadgets: what the opponent gets at a subgame's root, from the blueprint's values.

Notation (two players, zero-sum): ``p`` re-solves its strategy in the subgame, ``o`` is
the opponent. For a root ``r``, ``reach_-o(r)`` is the blueprint's reach of ``r`` by
``p`` and chance (``o``'s own moves excluded). The roots are grouped into ``o``'s
augmented information sets ``I`` (:func:`~jaxcfr.subgames.closure.player_components`),
each with mass ``m(I) = sum over r in I of reach_-o(r)`` and counterfactual best-response
value ``CBV(I) = sum over r in I of reach_-o(r) v_o(r)`` (``o`` best responds to the
blueprint below ``r``; :func:`jaxcfr.solvers.analytics.counterfactual_values`), exact.
``CBV(I) / m(I)`` is the value of ``I`` to ``o`` given that it is reached.

* ``resolve`` (Burch, Johanson & Bowling 2014): chance picks a root with probability
  ``reach_-o(r) / Z`` (``Z`` the total mass); at ``o``'s augmented set ``I`` it chooses
  ``alternative`` (the game ends, ``o`` gets ``CBV(I) / m(I)``) or ``enter``.
* ``maxmargin`` (Moravčík et al. 2016): ``o`` first picks a set ``I``, chance then picks
  a root of ``I`` with probability ``reach_-o(r) / m(I)``, and every payoff of ``o``
  below is shifted by ``-CBV(I) / m(I)`` (``p``'s by ``+``, so the game stays zero-sum):
  ``p`` maximises the least margin ``CBV(I)/m(I) - CBV'(I)/m(I)``.
* ``reach`` (Reach-Maxmargin, Brown & Sandholm 2017): Maxmargin with each set's
  alternative raised by the gifts of ``o``'s earlier mistakes: for each decision ``(J, a)``
  of ``o`` on the way to ``I`` (in the blueprint), the gift ``CBV(J) - CBV(J, a)`` (what
  ``o`` gave up by playing ``a``; unnormalised). A gift is divided evenly among all
  augmented sets below ``(J, a)`` of all subgames re-solved together, so the sum of what
  every set may take from one gift never exceeds it: the composed profile stays safe.
* ``unsafe``: chance picks a root with probability proportional to the blueprint's reach
  of it (every player and chance); no gadget decision; both players' strategies are kept.

Safety (the first three): ``o``'s best-response value in the full game against ``p``'s
composed strategy exceeds the blueprint's by at most ``Z * eps``, ``eps`` the re-solve's
exploitability gap in the gadget game (at most its NashConv): :attr:`Gadget.total` is ``Z``.

Each gadget is an object (:class:`GadgetKind`: :class:`Resolve`, :class:`Maxmargin`,
:class:`ReachMaxmargin`, :class:`Unsafe`), as estimators are: it builds its
:class:`Gadget` from the blueprint's values and says what the gadget game's top looks
like (:class:`jaxcfr.subgames.game.SubgameGame` asks it); a name (``gadget="reach"``,
``--gadget``, ``resolve.gadget``) is the user's spelling, turned into the object once by
:func:`gadget_kind` (:data:`GADGETS`, the one table of names).

Nested subgames (after an action the blueprint's abstraction dropped, Brown & Sandholm
2017, section 6): a root whose last move is ``o``'s dropped action at a history the
abstraction keeps takes as alternative ``o``'s CBV, given it is reached, of the
information set where ``o`` acted, in the abstracted game against the abstract blueprint:
``o`` should get no more from the dropped action than from its best kept one. Its gifts
come from the abstracted game too. This is a target, not a guarantee.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Sequence

import numpy as np

from jaxcfr.game.contract import GameError
from jaxcfr.solvers.analytics import CounterfactualValues
from jaxcfr.lowering.tree_index import TreeIndex
from jaxcfr.subgames.closure import PublicState, player_components
from jaxcfr.subgames import names
from jaxcfr.tensors import DECISION, LoweredGame

__all__ = ["GADGETS", "GadgetKind", "Resolve", "Maxmargin", "ReachMaxmargin", "Unsafe",
           "Gadget", "gadget_kind", "build_gadget", "assign_gifts", "Nested", "check_gadget"]


@dataclasses.dataclass(frozen=True)
class Gadget:
    """The root of one subgame game, for one re-solving player.

    Attributes:
      kind: the gadget (:class:`GadgetKind`).
      player: the re-solving player ``p`` (``None`` for ``unsafe``: every player).
      opponent: ``o`` (``None`` for ``unsafe``).
      roots: ``[R]`` the roots kept (positive weight), in pre-order.
      component: ``[R]`` ``o``'s augmented set of each root, ``0..K-1`` (0 for unsafe).
      probability: ``[R]`` chance's probability of each root: over all roots (resolve,
        unsafe) or within its set (maxmargin, reach).
      mass: ``[K]`` ``m(I)`` (unsafe: the blueprint's total reach of the roots).
      alternative: ``[K]`` ``o``'s alternative value of each set, given it is reached (the
        Resolve payoff, or the Maxmargin shift; gifts included for reach).
      total: ``Z``, the sum of the masses (the bound's scale).
      safe: whether :attr:`total` times the gadget game's gap bounds ``o``'s gain.
      edges: per set, ``o``'s decisions ``(row, slot)`` above it (for the gifts).
      gifts: ``[K]`` the unnormalised gift each set may take (reach; 0 otherwise).
      base: ``[K]`` ``CBV(I) / m(I)`` before gifts.
      constant_sum: the sum of the players' payoffs at every leaf.
    """
    kind: "GadgetKind"
    player: int | None
    opponent: int | None
    roots: np.ndarray
    component: np.ndarray
    probability: np.ndarray
    mass: np.ndarray
    alternative: np.ndarray
    total: float
    safe: bool
    edges: tuple = ()
    gifts: np.ndarray | None = None
    base: np.ndarray | None = None
    constant_sum: float = 0.0

    @property
    def num_sets(self) -> int:
        return int(self.mass.shape[0])


@dataclasses.dataclass(frozen=True)
class Nested:
    """The abstracted game a blueprint was trained on, for nested subgames' alternatives.

    Attributes:
      lowered: the abstracted game, lowered.
      values: :func:`~jaxcfr.solvers.analytics.counterfactual_values` of the abstract
        blueprint there.
      mass: ``[I]`` each abstract row's ``reach_-owner`` summed over its members.
    """
    lowered: LoweredGame
    values: CounterfactualValues

    @property
    def mass(self) -> np.ndarray:
        cached = self.__dict__.get("_mass")
        if cached is None:
            cached = _row_mass(self.lowered, self.values)
            object.__setattr__(self, "_mass", cached)
        return cached


@dataclasses.dataclass(frozen=True)
class GadgetKind:
    """What the opponent gets at a subgame's root: one object per gadget (module docstring).

    A new gadget is one subclass: its ``name``, whether it is ``safe`` and, where it
    differs from the safe default (chance picks a root among all, weighted by
    ``reach_-o``; no alternative; the full game's payoffs), :meth:`build`,
    :meth:`root_probability`, :attr:`opponent_picks`, :attr:`offers_alternative`,
    :meth:`payoffs`, :meth:`top_nodes`; to name it, its entry in :data:`GADGETS`.
    """
    #: The gadget's name where users spell it (``gadget="resolve"``, ``--gadget``).
    name: ClassVar[str] = ""
    #: Bounds the opponent's gain (two-player zero-sum games only): one gadget game per
    #: re-solving player, each against the other's gadget.
    safe: ClassVar[bool] = True
    #: At the top, the opponent picks one of its augmented sets (key
    #: ``("jaxcfr.gadget", "pick")``) and chance one of its roots; else chance picks a root.
    opponent_picks: ClassVar[bool] = False
    #: The opponent chooses ``alternative`` or ``enter`` at its augmented set (Resolve).
    offers_alternative: ClassVar[bool] = False
    #: Each set's alternative takes its share of the gifts above it (Reach-Maxmargin).
    takes_gifts: ClassVar[bool] = False

    def resolvers(self) -> tuple:
        """The re-solving players of a subgame: both (a safe gadget), or ``None``: every
        player in one game."""
        return (0, 1) if self.safe else (None,)

    def check(self, lowered: LoweredGame) -> "GadgetKind":
        """Itself if ``lowered`` allows this gadget; a clear error otherwise."""
        if self.safe and (lowered.num_players != 2 or lowered.constant_sum is None):
            why = (f"{lowered.num_players} players" if lowered.num_players != 2
                   else "payoffs that are not zero-sum (nor constant-sum)")
            raise ValueError(f"the {self.name!r} gadget is safe re-solving, which needs a "
                             f"two-player zero-sum game (the opponent's counterfactual "
                             f"best-response values bound its gain only there); "
                             f"{lowered.name or 'the game'} has {why}: use gadget='unsafe'")
        return self

    def build(self, index: TreeIndex, state: PublicState, values: CounterfactualValues,
              player: int | None, *, nested: Nested | None = None,
              path: Sequence = ()) -> Gadget | None:
        """The gadget of ``state`` for re-solver ``player`` (``None`` where nothing is to be
        re-solved: the blueprint reaches none of the roots for ``player``)."""
        lowered = index.lowered
        roots = state.roots
        reach = values.reach[roots]                                       # [R, P + 1]
        constant = float(lowered.constant_sum or 0.0)
        opponent = 1 - player
        others = np.delete(reach, opponent, axis=1).prod(axis=1)          # reach_-o  [R]
        keep = others > 0
        if not keep.any():
            return None
        roots, others = roots[keep], others[keep]
        component = player_components(index, roots, opponent)
        k = int(component.max()) + 1
        mass = np.bincount(component, weights=others, minlength=k)
        per_root = values.values[opponent, roots]                      # v_o(r), o best responds
        safe = True
        if nested is not None:
            alt_root, dropped = _nested_alternatives(index, roots, opponent, nested)
            per_root = np.where(dropped, alt_root, per_root)
            safe = not dropped.any()
        cbv = np.bincount(component, weights=others * per_root, minlength=k)
        base = cbv / mass
        edges = tuple(_edges(index, int(roots[np.flatnonzero(component == c)[0]]), opponent,
                             nested) for c in range(k))
        probability = self.root_probability(others, mass, component)
        return Gadget(self, player, opponent, roots, component, probability, mass,
                      base.copy(), float(mass.sum()), safe, edges, np.zeros(k), base, constant)

    def root_probability(self, others: np.ndarray, mass: np.ndarray,
                         component: np.ndarray) -> np.ndarray:
        """``[R]`` chance's probability of each root (``others``: ``reach_-o`` ``[R]``;
        ``mass`` ``[K]``; ``component`` ``[R]``): over all roots, or within its set where
        the opponent picks the set."""
        return others / (mass[component] if self.opponent_picks else others.sum())

    def payoffs(self, gadget: Gadget, chosen: int, values: list) -> list:
        """The gadget game's payoffs at a leaf below set ``chosen`` (``values``: the full
        game's there, one per player)."""
        return values

    def top_nodes(self, gadget: Gadget) -> int:
        """Nodes the gadget adds above the roots (besides the root of the gadget game)."""
        return 0

    # -- on a public tree (jaxcfr.subgames.public) -------------------------------------
    @property
    def public_tree(self) -> bool:
        """Whether the gadget is a public-tree construction: the roots of a public node are
        dealt by chance (the deal's weights, :meth:`deal_weights`) and the opponent's
        augmented sets are its hands there. A gadget where the opponent picks its set
        above the roots (:attr:`opponent_picks`) is not: on a public tree the opponent
        holds its hand before it moves."""
        return not self.opponent_picks

    def deal_weights(self, prior: np.ndarray, ranges: np.ndarray, player: int | None
                     ) -> np.ndarray:
        """``[P, H]`` the weights a public subgame deals its roots with
        (:meth:`root_probability` on a public tree): ``prior`` ``[P, H]`` is chance's
        (the prior weights, hands blocked at the node zeroed), ``ranges`` ``[P, H]`` the
        blueprint's ranges there (``prior`` times each player's own reach). A safe gadget
        deals by ``reach_-o``: the opponent's prior, the re-solver's range."""
        out = np.array(ranges, np.float64, copy=True)
        out[1 - player] = prior[1 - player]
        return out


@dataclasses.dataclass(frozen=True)
class Resolve(GadgetKind):
    """Resolve (Burch, Johanson & Bowling 2014): chance picks a root; the opponent takes
    its set's alternative or enters."""
    name: ClassVar[str] = "resolve"
    offers_alternative: ClassVar[bool] = True

    def top_nodes(self, gadget):
        return 2 * len(gadget.roots)


@dataclasses.dataclass(frozen=True)
class Maxmargin(GadgetKind):
    """Maxmargin (Moravčík et al. 2016): the opponent picks a set, its payoffs below are
    shifted by minus the set's alternative (the re-solver's by plus)."""
    name: ClassVar[str] = "maxmargin"
    opponent_picks: ClassVar[bool] = True

    def payoffs(self, gadget, chosen, values):
        shift = float(gadget.alternative[chosen])
        values[gadget.opponent] -= shift
        values[gadget.player] += shift
        return values

    def top_nodes(self, gadget):
        return gadget.num_sets


@dataclasses.dataclass(frozen=True)
class ReachMaxmargin(Maxmargin):
    """Reach-Maxmargin (Brown & Sandholm 2017): Maxmargin with each set's alternative
    raised by its share of the gifts of the opponent's earlier mistakes."""
    name: ClassVar[str] = "reach"
    takes_gifts: ClassVar[bool] = True


@dataclasses.dataclass(frozen=True)
class Unsafe(GadgetKind):
    """Unsafe re-solving: chance picks a root with the blueprint's reach of it (every
    player and chance); both players' strategies are re-solved, nothing is bounded."""
    name: ClassVar[str] = "unsafe"
    safe: ClassVar[bool] = False

    def build(self, index, state, values, player, *, nested=None, path=()):
        """Raises GameError ``subgame-unreached`` when the blueprint reaches no root."""
        roots = state.roots
        weight = values.reach[roots].prod(axis=1)
        total = float(weight.sum())
        if not total > 0:
            raise GameError(f"the blueprint never reaches the public state at {list(path)}: "
                            "unsafe re-solving has no beliefs there (a safe gadget needs only "
                            "the other players' reach)", rule="subgame-unreached",
                            history=tuple(path))
        keep = weight > 0
        return Gadget(self, None, None, roots[keep], np.zeros(int(keep.sum()), np.int64),
                      weight[keep] / total, np.asarray([total]), np.zeros(1), total, False,
                      constant_sum=float(index.lowered.constant_sum or 0.0))

    def deal_weights(self, prior, ranges, player):
        """The blueprint's reach of every root: every player's range."""
        return np.array(ranges, np.float64, copy=True)


#: Gadget name -> class, in the order the docs list them: the one table of gadget names
#: (``gadget=``, ``--gadget``, ``resolve.gadget``).
GADGETS: dict[str, type[GadgetKind]] = {
    "resolve": Resolve, "maxmargin": Maxmargin, "reach": ReachMaxmargin, "unsafe": Unsafe}
# the command line reads the names without JAX (jaxcfr.subgames.names): one list
assert tuple(GADGETS) == names.GADGETS, (tuple(GADGETS), names.GADGETS)
assert tuple(n for n, g in GADGETS.items() if g.safe) == names.SAFE_GADGETS


def gadget_kind(gadget: str | GadgetKind) -> GadgetKind:
    """The gadget a name spells (:data:`GADGETS`), or the gadget object itself."""
    if isinstance(gadget, GadgetKind):
        return gadget
    cls = GADGETS.get(gadget) if isinstance(gadget, str) else None
    if cls is None:
        raise ValueError(f"unknown gadget {gadget!r}: one of {', '.join(GADGETS)}")
    return cls()


def check_gadget(gadget: str | GadgetKind, lowered: LoweredGame) -> GadgetKind:
    """The gadget ``gadget`` names, if ``lowered`` allows it; a clear error otherwise."""
    return gadget_kind(gadget).check(lowered)


def build_gadget(kind: GadgetKind, index: TreeIndex, state: PublicState,
                 values: CounterfactualValues, player: int | None, *,
                 nested: Nested | None = None, path: Sequence = ()) -> Gadget | None:
    """:meth:`GadgetKind.build` of ``kind``.

    Raises:
      GameError: ``subgame-unreached`` for ``unsafe`` when the blueprint reaches no root.
    """
    return kind.build(index, state, values, player, nested=nested, path=path)


def assign_gifts(gadgets: Sequence[Gadget | None], values: CounterfactualValues,
                 nested: Nested | None = None) -> list[Gadget | None]:
    """Reach-Maxmargin: give every set of every ``reach`` gadget its share of the gifts
    above it (module docstring); other gadgets are returned as they are."""
    count: dict[tuple, int] = {}
    for g in gadgets:
        if g is not None and g.kind.takes_gifts:
            for edges in g.edges:
                for e in edges:
                    key = (g.opponent,) + e
                    count[key] = count.get(key, 0) + 1
    out = []
    for g in gadgets:
        if g is None or not g.kind.takes_gifts:
            out.append(g)
            continue
        gifts = np.zeros(g.num_sets)
        for c, edges in enumerate(g.edges):
            for source, row, slot in edges:
                cv = nested.values if source == "nested" else values
                gift = max(0.0, float(cv.infoset_values[row] - cv.action_values[row, slot]))
                gifts[c] += gift / count[(g.opponent, source, row, slot)]
        out.append(dataclasses.replace(g, gifts=gifts, alternative=g.base + gifts / g.mass))
    return out


# -- helpers ----------------------------------------------------------------------------
def _edges(index: TreeIndex, root: int, opponent: int, nested: Nested | None) -> tuple:
    """``o``'s decisions above ``root``: ``(source, row, slot)``, from the root down; above a
    nested root (after a dropped action) they are the abstracted game's rows."""
    out = []
    node = root
    while index.parent[node] >= 0:
        par = int(index.parent[node])
        if index.kind[par] == DECISION and int(index.player[par]) == opponent:
            out.append((int(index.row[par]), int(index.slot[node])))
        node = par
    out.reverse()
    if nested is not None:
        mapped = _to_abstract(index, out, nested)
        if mapped is not None:
            return mapped
    return tuple(("full", r, s) for r, s in out)


def _to_abstract(index: TreeIndex, edges, nested: Nested):
    """The edges as abstract ``(row, slot)``, if the last is dropped and the others kept."""
    if not edges:
        return None
    full = index.lowered
    out = []
    for i, (row, slot) in enumerate(edges):
        player, key = full.infoset_keys[row]
        label = full.infoset_actions[row][slot]
        try:
            arow = nested.lowered.row_of(player, key)
        except KeyError:
            return None
        kept = nested.lowered.infoset_actions[arow]
        last = i == len(edges) - 1
        if last:
            if label in kept:
                return None
        else:
            if label not in kept:
                return None
            out.append(("nested", arow, kept.index(label)))
    return tuple(out)


def _nested_alternatives(index: TreeIndex, roots: np.ndarray, opponent: int,
                         nested: Nested) -> tuple[np.ndarray, np.ndarray]:
    """``(alternative [R], dropped [R])``: for each root whose last move is ``o``'s dropped
    action at a history the abstraction keeps, ``o``'s CBV given it is reached of the
    abstract information set where it acted."""
    full = index.lowered
    alt = np.zeros(len(roots))
    dropped = np.zeros(len(roots), dtype=bool)
    mass = nested.mass
    for i, r in enumerate(roots):
        par = int(index.parent[r])
        if par < 0 or index.kind[par] != DECISION or int(index.player[par]) != opponent:
            continue
        player, key = full.infoset_keys[int(index.row[par])]
        label = full.node_action[int(r)]
        try:
            arow = nested.lowered.row_of(player, key)
        except KeyError:
            continue                                  # not a history the abstraction keeps
        if label in nested.lowered.infoset_actions[arow] or not mass[arow] > 0:
            continue
        alt[i] = nested.values.infoset_values[arow] / mass[arow]
        dropped[i] = True
    return alt, dropped


def _row_mass(lowered: LoweredGame, values: CounterfactualValues) -> np.ndarray:
    """``[I]`` each row's members' reach by everyone but its owner, summed."""
    t = lowered.tensors
    decision = np.flatnonzero(np.asarray(t.node_kind) == DECISION)
    owner = np.asarray(t.node_player)[decision]
    reach = values.reach[decision].copy()                             # [n, P + 1]
    reach[np.arange(len(decision)), owner] = 1.0                      # the owner's own moves out
    return np.bincount(np.asarray(t.node_infoset)[decision], weights=reach.prod(axis=1),
                       minlength=lowered.num_rows)
