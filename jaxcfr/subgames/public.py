"""Re-solving at a public node of a public tree (a :class:`~jaxcfr.game.public.PublicGame`).

On a public tree the subgame at a public decision node ``s`` is rooted at a public state
by construction: its roots are the histories of ``s``, one per compatible tuple of hands.
The subgame is a :class:`PublicSubgame`, a ``PublicGame`` like any other (it lowers,
validates and solves on its public tree, and expands to the history tree of the same
gadget game), built from the blueprint's values at ``s`` (:class:`PublicContext`):

* each player's *range* at ``s``: ``prior(h) a(s, h) R(s, h)`` (prior weight, not blocked
  by the public chance so far, the blueprint's own reach of ``s`` holding ``h``);
* for a safe gadget, the opponent ``o``'s mass and counterfactual best-response value per
  hand: ``m(h) = c(s) prior_o(h) a_o(s, h) sum_x C(h, x) range_p(x)`` and ``CBV(h)``, its
  value at ``s`` when it best responds to the blueprint below
  (:func:`jaxcfr.solvers.public.range_values_public`): the history tree's ``m(I)`` and
  ``CBV(I)`` of the opponent's augmented set ``I``, which on a public tree is its hand at
  ``s`` (its information there).

The gadget is a :class:`~jaxcfr.subgames.gadgets.GadgetKind` (the same objects as for
history trees): the subgame deals its hands with
:meth:`~jaxcfr.subgames.gadgets.GadgetKind.deal_weights` (``reach_-o``: the opponent's
prior and the re-solver's range for a safe gadget; every range for ``unsafe``), so
chance picks a root with the gadget's ``root_probability``, and where the gadget
:attr:`~jaxcfr.subgames.gadgets.GadgetKind.offers_alternative` (``resolve``) the
opponent's first move, holding its hand, is ``"alternative"`` (the game ends: it gets
``CBV(h) / m(h)``, the re-solver the constant sum minus that; a
:class:`~jaxcfr.game.public.PayoffTable` over the hands) or ``"enter"`` (the public
subtree of ``s``). Gadgets whose opponent picks its set above the roots (``maxmargin``,
``reach``) are not public-tree constructions (on a public tree the opponent holds its
hand before it moves) and are refused here by name.

Every hand of the full game stays a hand of the subgame (its weight 0 where it cannot be
at ``s``), so rows line up with the full game's hand by hand and the re-solved rows of the
hands that can be there (``PublicLowered.live_rows``) are composed back over the
blueprint (:func:`compose_public`). Checked against the same subgame of the expanded
history tree (``tests/test_public_subgames.py``).

Example::

    >>> import jaxcfr
    >>> game = "leduc_poker(tree='public')"
    >>> blueprint = jaxcfr.solve(game, "cfr", 30).to_profile()
    >>> sub = jaxcfr.subgame(game, blueprint, ["call", "call", 2])   # a PublicSubgame
    >>> result = jaxcfr.subgames.resolve_subgames(game, blueprint, [["call", "call", 2]])
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.serialize import jsonable
from jaxcfr.api.public_stack import solve_public_stack
from jaxcfr.api.solve import solve
from jaxcfr.game.contract import CHANCE_NODE, TERMINAL, GameError, format_history
from jaxcfr.game.public import PayoffTable, PublicGame
from jaxcfr.lowering.public import PublicLowered, lower_public, public_game_of
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.parameters import single_setting
from jaxcfr.solvers.public import evaluate_public, range_values_public
from jaxcfr.subgames.gadgets import GadgetKind, gadget_kind
from jaxcfr.subgames.game import ALTERNATIVE, ENTER
from jaxcfr.subgames.names import BATCHING, batch_groups
from jaxcfr.subgames.result import ResolveResult
from jaxcfr.subgames.symmetry import TOLERANCE, subgame_renamings, symmetrise

__all__ = ["PublicGadget", "PublicSubgame", "PublicContext", "public_subgame",
           "resolve_public_subgames", "compose_public", "public_paths_after_chance",
           "public_paths_at_depth", "is_public", "select_public", "check_public_gadget"]


def is_public(game) -> bool:
    """Whether re-solving ``game`` runs on its public tree (a PublicGame, or a game string
    naming one: ``tree='public'``)."""
    return isinstance(game, (PublicGame, PublicLowered, PublicContext)) or (
        isinstance(game, str) and public_game_of(game) is not None)


@dataclasses.dataclass(frozen=True)
class PublicGadget:
    """The root of one public subgame, for one re-solving player.

    Attributes:
      kind: the gadget (:class:`~jaxcfr.subgames.gadgets.GadgetKind`).
      player: the re-solving player ``p`` (``None`` for ``unsafe``: every player).
      opponent: ``o`` (``None`` for ``unsafe``).
      node: the public node ``s`` of the full game; ``path`` its public history.
      weights: ``[P][H_q]`` the subgame's deal weights of each player's hands (0 where a
        hand cannot be at ``s``).
      mass: ``[H_o]`` ``m(h)`` of each opponent hand (full-game units; unsafe: ``[1]``,
        the blueprint's total reach of ``s``).
      alternative: ``[H_o]`` ``CBV(h) / m(h)`` (0 where ``m(h) = 0``; unsafe: ``[0]``).
      total: ``Z``, the sum of the masses (the safety bound's scale).
      safe: whether ``total`` times the gadget game's gap bounds ``o``'s gain.
      constant_sum: the sum of the players' payoffs at every terminal.
    """
    kind: GadgetKind
    player: int | None
    opponent: int | None
    node: int
    path: tuple
    weights: tuple
    mass: np.ndarray
    alternative: np.ndarray
    total: float
    safe: bool
    constant_sum: float = 0.0

    @property
    def prefix(self) -> tuple:
        """The gadget's public moves above the full game's node: ``("enter",)`` where it
        offers the opponent an alternative, else none."""
        return (ENTER,) if self.kind.offers_alternative else ()


_CHOICE, _ALTERNATIVE, _INSIDE = range(3)


@dataclasses.dataclass(frozen=True, eq=False)
class _Spec:
    """What every state of one public subgame shares (never changed)."""
    gadget: PublicGadget
    name: str
    alternative: PayoffTable | None        # the "alternative" terminal ([P, H0, H1])
    merges: bool                           # the game's chance_merges() are the subgame's
    unmerged: str | None                   # why a game that merges is walked here in full


class PublicSubgame(PublicGame):
    """The subgame of a public node with its gadget, as a PublicGame (module docstring);
    build it with :func:`jaxcfr.subgame` of a public game.

    Its public histories are those of the full game below the node, after ``"enter"``
    where the gadget offers the opponent an alternative; its hands are the full game's.
    With ``merges`` its chance nodes merge the outcomes the game merges
    (``chance_merges``: suit isomorphism), which is exact only when the gadget keeps the
    symmetry (:mod:`jaxcfr.subgames.symmetry`; :meth:`PublicContext.build` decides, and
    says in ``unmerged`` why a subgame is walked with every outcome).
    """

    __slots__ = ("_s", "_inner", "_stage")

    def __init__(self, state: PublicGame, gadget: PublicGadget, *, name: str = "",
                 merges: bool = False, unmerged: str | None = None):
        alternative = None
        if gadget.kind.offers_alternative:
            sizes = [len(w) for w in gadget.weights]
            alt = np.asarray(gadget.alternative, np.float64)
            table = np.zeros((2, sizes[0], sizes[1]))
            o, p = gadget.opponent, gadget.player
            table[o] = alt[:, None] if o == 0 else alt[None, :]
            table[p] = gadget.constant_sum - table[o]
            alternative = PayoffTable(table)
        self._s = _Spec(gadget, name or "public subgame", alternative, bool(merges), unmerged)
        self._inner = state.clone()
        self._stage = _CHOICE if alternative is not None else _INSIDE
        self.num_players = len(gadget.weights)

    @property
    def gadget(self) -> PublicGadget:
        return self._s.gadget

    @property
    def name(self) -> str:
        return self._s.name

    @property
    def merges(self) -> bool:
        """Whether the subgame merges the game's suit-isomorphic chance outcomes."""
        return self._s.merges

    @property
    def unmerged(self) -> str | None:
        """Why the subgame walks every chance outcome of a game that merges some (its
        gadget breaks the symmetry); ``None`` otherwise."""
        return self._s.unmerged

    def __repr__(self) -> str:
        return f"PublicSubgame({self._s.name}, stage={self._stage}, at={self._inner!r})"

    # -- the hands: the full game's, dealt with the gadget's weights ----------------------
    def hands(self, player):
        return self._inner.hands(player)

    def hand_weights(self, player):
        return [float(x) for x in self._s.gadget.weights[player]]

    def hand_cards(self, player):
        return self._inner.hand_cards(player)

    # -- the public state machine ----------------------------------------------------------
    def is_terminal(self):
        return self._stage == _ALTERNATIVE or (self._stage == _INSIDE and
                                               bool(self._inner.is_terminal()))

    def is_chance(self):
        return self._stage == _INSIDE and bool(self._inner.is_chance())

    def player_to_act(self):
        if self._stage == _CHOICE:
            return self._s.gadget.opponent
        if self._stage == _ALTERNATIVE:
            return TERMINAL
        return self._inner.player_to_act()

    def legal_actions(self):
        if self._stage == _CHOICE:
            return [ALTERNATIVE, ENTER]
        if self._stage == _ALTERNATIVE:
            return []
        return self._inner.legal_actions()

    def chance_outcomes(self):
        return self._inner.chance_outcomes() if self.is_chance() else None

    def chance_merges(self):
        return self._inner.chance_merges() if self._s.merges and self.is_chance() else None

    def outcome_cards(self, outcome):
        return self._inner.outcome_cards(outcome)

    def step(self, action):
        if self._stage == _CHOICE:
            if action == ALTERNATIVE:
                self._stage = _ALTERNATIVE
            elif action == ENTER:
                self._stage = _INSIDE
            else:
                raise GameError(f"illegal action {action!r}; legal: {[ALTERNATIVE, ENTER]}",
                                rule="illegal-action")
            return
        if self._stage == _ALTERNATIVE:
            raise GameError(f"the game is over; cannot play {action!r}", rule="illegal-action")
        self._inner.step(action)

    def clone(self):
        new = object.__new__(PublicSubgame)
        new._s, new._inner, new._stage = self._s, self._inner.clone(), self._stage
        new.num_players = self.num_players
        return new

    def terminal_value(self):
        if self._stage == _ALTERNATIVE:
            return self._s.alternative
        return self._inner.terminal_value()


class PublicContext:
    """A public game, lowered, with a blueprint and its range values (built once, shared by
    every subgame of one call).

    Args:
      game: a game string naming a public tree (``tree='public'``) or a PublicGame.
      blueprint: a :class:`jaxcfr.Profile` of it (keys ``(player, (hand, public
        history))``: ``result.to_profile()`` of a public solve, or a profile of the
        expanded history tree) or an ``[I, A]`` strategy table of its public tree.
      lowered: the game's :class:`PublicLowered` when already lowered (the command line's,
        from the cache of lowered games).
    """

    def __init__(self, game, blueprint, *, lowered: PublicLowered | None = None):
        if isinstance(game, PublicContext):
            raise TypeError("give the game, not a PublicContext (pass it as context=)")
        root = public_game_of(game) if isinstance(game, (str, os.PathLike)) else game
        if isinstance(root, PublicLowered):
            raise ValueError("re-solving a public tree steps the game to the subgame's node: "
                             "give the PublicGame (or its game string), with its lowered form "
                             "as lowered= if you have it")
        if not isinstance(root, PublicGame):
            raise TypeError(f"not a public tree: {game!r}")
        self.root = root
        name = game if isinstance(game, str) else type(game).__name__
        # the composed profile need not keep the suit symmetry that merged chance
        # outcomes rely on (a subgame under one card of a class is not re-solved under
        # the others, a gadget may break it): the full game is walked with every
        # outcome, and a blueprint table of the merged tree is read through it (each
        # history from its representative). Each subgame itself is lowered merged where
        # its gadget keeps the symmetry (build(): jaxcfr.subgames.symmetry).
        merged = lowered if lowered is not None and lowered.merged else None
        if lowered is None or merged is not None:
            lowered = lower_public(root, name=name, merges=False)
        self.full = lowered
        if not isinstance(blueprint, Profile) and np.shape(blueprint) != np.shape(
                lowered.tensors.legal_mask):
            merged = merged or lower_public(root, name=name)
            if merged.merged:
                blueprint = Profile.from_lowered(merged, _blueprint_table(merged, blueprint))
        self.table = _blueprint_table(self.full, blueprint)
        self._values = None

    @property
    def name(self) -> str:
        return self.full.name or "game"

    @property
    def values(self) -> tuple[np.ndarray, np.ndarray]:
        """``(reach [N, P, H], best [P, N, H])`` of the blueprint (computed on first use,
        on the device; :func:`jaxcfr.solvers.public.range_values_public`)."""
        if self._values is None:
            self._values = range_values_public(self.full, self.table)
        return self._values

    # -- naming public nodes ------------------------------------------------------------
    def node(self, path: Sequence, *, by_text: bool = False) -> int:
        """The public decision node a public path (actions and public chance outcomes from
        the root) leads to; ``by_text``: labels compared by ``str()``.

        Raises:
          GameError: ``subgame-path``, naming the path and the position.
        """
        t = self.full.tensors
        node = 0
        for i, x in enumerate(path):
            lo = int(t.first_child[node])
            kids = range(lo, lo + int(t.child_count[node]))
            same = (lambda a: str(a) == str(x)) if by_text else (lambda a: _same(a, x))
            match = [c for c in kids if same(self.full.node_action[c])]
            if not match:
                legal = [self.full.node_action[c] for c in kids]
                raise GameError(f"{x!r} (position {i} of the public path {list(path)}) is not "
                                f"a public action or outcome there; legal: {legal}",
                                rule="subgame-path", history=tuple(path[:i]))
            node = match[0]
        if t.node_base[node] < 0:
            what = "a chance node" if self.full.node_kind[node] == CHANCE_NODE else "a terminal"
            raise GameError(f"the public path {list(path)} ends at {what}: a subgame starts "
                            "at a public decision node", rule="subgame-path",
                            history=tuple(path))
        return int(node)

    def nodes(self, at, *, by_text: bool = False) -> list[int]:
        """The distinct public decision nodes of ``at``: one public path, or a list of
        them, or node numbers."""
        out: list[int] = []
        for item in _paths(self, at):
            n = int(item) if isinstance(item, (int, np.integer)) else self.node(item,
                                                                                by_text=by_text)
            if n not in out:
                out.append(n)
        return out

    # -- gadgets and subgames -----------------------------------------------------------
    def gadget(self, node: int, kind: GadgetKind, player: int | None) -> PublicGadget | None:
        """The gadget of public node ``node`` for re-solver ``player`` (``None`` where the
        blueprint reaches none of its roots by ``player`` and chance)."""
        full, t = self.full, self.full.tensors
        reach, best = self.values
        P = full.num_players
        sizes = [len(x) for x in full.hands.labels]
        alive = np.asarray(t.alive[t.node_path[node]], np.float64)                  # [P, H]
        prior = np.asarray(t.weights, np.float64) * alive                          # [P, H]
        ranges = prior * reach[node]                                               # [P, H]
        weights = kind.deal_weights(prior, ranges, player)                          # [P, H]
        weights = [weights[q, :sizes[q]] for q in range(P)]
        dealt = full.hands.compatible.astype(np.float64)
        for q in range(P):
            shape = [1] * P
            shape[q] = -1
            dealt = dealt * weights[q].reshape(shape)
        if not dealt.sum() > 0:
            if not kind.safe:
                raise GameError(f"the blueprint never reaches the public node after "
                                f"{format_history(full.history(node))}: unsafe re-solving has "
                                "no beliefs there (a safe gadget needs only the other "
                                "players' reach)", rule="subgame-unreached",
                                history=full.history(node))
            return None
        for q in range(P):                        # hands of no tuple that can be dealt: out
            others = tuple(a for a in range(P) if a != q)
            weights[q] = np.where((dealt > 0).any(axis=others), weights[q], 0.0)
        chance = float(t.chance_reach[node])
        constant = float(full.constant_sum or 0.0)
        path = full.history(node)
        if not kind.safe:
            total = chance * float(dealt.sum()) / full.hands.deal_total
            return PublicGadget(kind, None, None, node, path, tuple(weights),
                                np.asarray([total]), np.zeros(1), total, False, constant)
        o = 1 - player
        compat = full.compatibility                                                # C / Z
        if o == 1:
            compat = compat.T                                                      # [H_o, H_p]
        mass = chance * prior[o, :sizes[o]] * (compat @ ranges[player, :sizes[player]])
        mass = np.where(weights[o] > 0, mass, 0.0)
        cbv = best[o, node, :sizes[o]]
        with np.errstate(invalid="ignore", divide="ignore"):
            alternative = np.where(mass > 0, cbv / np.where(mass > 0, mass, 1.0), 0.0)
        return PublicGadget(kind, player, o, node, path, tuple(weights), mass, alternative,
                            float(mass.sum()), True, constant)

    def build(self, gadget: PublicGadget, *, merges: bool = True,
              tolerance: float = TOLERANCE["float64"]) -> PublicSubgame:
        """The :class:`PublicSubgame` of ``gadget``: the game stepped to its node.

        Where the game merges chance outcomes below the node (suit isomorphism) and
        ``merges``, the subgame merges them too if its gadget keeps the symmetry within
        the relative ``tolerance`` (:func:`jaxcfr.subgames.symmetry.symmetrise`; its
        gadget is then the symmetrised one); else it walks every outcome, and says why
        (``PublicSubgame.unmerged``)."""
        state = self.root.clone()
        for x in gadget.path:
            state.step(x)
        who = "every player" if gadget.player is None else f"player {gadget.player}"
        name = (f"subgame({self.name} @ {','.join(map(str, gadget.path))}; "
                f"{gadget.kind.name} for {who})")
        renamings = subgame_renamings(state) if merges else []
        if not renamings:
            return PublicSubgame(state, gadget, name=name)
        symmetric, why = symmetrise(gadget, renamings, tolerance)
        if symmetric is None:
            return PublicSubgame(state, gadget, name=name, unmerged=why)
        return PublicSubgame(state, symmetric, name=name, merges=True)


def check_public_gadget(gadget, lowered: PublicLowered) -> GadgetKind:
    """The gadget ``gadget`` names, if it is a public-tree construction that ``lowered``
    allows; a clear error otherwise."""
    kind = gadget_kind(gadget).check(lowered)
    if not kind.public_tree:
        raise ValueError(f"the {kind.name!r} gadget lets the opponent pick its augmented "
                         "information set above the roots, before it holds a hand: a public "
                         "tree deals the hands first, so it has no such move. On a public "
                         "tree use gadget='resolve' (safe) or 'unsafe', or re-solve the "
                         "expanded history tree (jaxcfr.expand_public(game)) with it")
    return kind


def public_subgame(game, blueprint, at, *, gadget: str | GadgetKind = "resolve",
                   player: int | None = None, depth_limit=None, continuations=1,
                   abstraction=None, context: PublicContext | None = None) -> PublicSubgame:
    """:func:`jaxcfr.subgame` of a public tree: the subgame at the public node a public path
    leads to, with its gadget, as a :class:`PublicSubgame` (``player``: the re-solving
    player of a safe gadget, default the one to act there). It merges the game's
    suit-isomorphic chance outcomes below the node where its gadget keeps the symmetry
    at float64's tolerance (``.merges``; else ``.unmerged`` says why:
    :meth:`PublicContext.build`)."""
    _refuse_options(depth_limit, continuations, abstraction)
    context = context or PublicContext(game, blueprint)
    kind = check_public_gadget(gadget, context.full)
    node = context.nodes(_single(at))[0]
    if kind.safe:
        player = int(context.full.tensors.node_player[node]) if player is None else player
        if isinstance(player, bool) or player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
    g = context.gadget(node, kind, player if kind.safe else None)
    if g is None:
        path = list(context.full.history(node))
        raise GameError(f"the blueprint reaches no root of the subgame at {path} by player "
                        f"{player} and chance: player {player}'s strategy there cannot change "
                        "its exploitability, so there is nothing to re-solve for it",
                        rule="subgame-unreached", history=tuple(path))
    return context.build(g)


def compose_public(full: PublicLowered, blueprint: np.ndarray,
                   pieces: Sequence[tuple[PublicLowered, np.ndarray, Sequence[int], int, tuple]]
                   ) -> np.ndarray:
    """The blueprint's ``[I, A]`` table of ``full`` with the pieces' rows put in.

    Args:
      pieces: ``(subgame lowered, its [I_s, A_s] table, players whose rows to take, the
        full game's node of the subgame's root, the gadget's public moves above it
        (:attr:`PublicGadget.prefix`))`` per re-solved public subgame. A row is
        taken where the subgame can hold the hand (``live_rows``: the history tree's
        information sets); the gadget's own decision is left out. A subgame lowered
        with merged outcomes gives every history below them from its representative's
        rows, each hand at its renamed hand (as :meth:`PublicLowered.locate` reads it).
    Returns:
      A new ``[I, A]`` table; a row two pieces both give is an error (``ValueError``).
    """
    table = np.array(blueprint, dtype=np.float64, copy=True)
    given: dict[int, int] = {}
    sizes = [len(x) for x in full.hands.labels]
    ft = full.tensors
    for k, (member, strategy, players, node, prefix) in enumerate(pieces):
        strategy = np.asarray(strategy)
        live = member.live_rows()
        mt = member.tensors
        for u, v, hands in _node_map(member, full, node, prefix):
            q = int(mt.node_player[u])
            if mt.node_base[u] < 0 or q not in players:
                continue
            n = len(full.node_actions[v])
            for h in range(sizes[q]):
                row = int(mt.node_base[u]) + int(hands[q][h])
                if not live[row]:
                    continue
                target = int(ft.node_base[v]) + h
                if given.get(target, k) != k:
                    raise ValueError(f"player {q}'s information set {full.row_keys()[target]!r}"
                                     " is re-solved by two subgames: they overlap")
                given[target] = k
                table[target] = 0.0
                table[target, :n] = strategy[row, :n]
    return table


def resolve_public_subgames(game, blueprint, at, *, gadget: str | GadgetKind = "resolve",
                            algorithm="cfr+", iterations: int = 1000, depth_limit=None,
                            continuations=1, abstraction=None, precision: str = "float32",
                            batching: str = "auto", evaluate_profiles: bool = True,
                            context: PublicContext | None = None,
                            progress: Callable[[str, int, int], None] | None = None,
                            merges: bool = True, **solve_options) -> ResolveResult:
    """:func:`jaxcfr.subgames.resolve_subgames` of a public tree: re-solve the public
    subgames at ``at`` (public paths, or public node numbers) against ``blueprint``, in
    stacked compiled runs (:func:`jaxcfr.solve_public` of a list), and compose them into
    a profile of the full game, evaluated on its public tree. Options as
    ``resolve_subgames``; ``depth_limit``, ``continuations`` and ``abstraction`` are for
    history trees only (refused here).

    A subgame below which the game merges suit-isomorphic chance outcomes is solved on
    its merged tree when its gadget keeps the symmetry (within
    :data:`jaxcfr.subgames.symmetry.TOLERANCE` of ``precision``; ``merges=False``: never),
    and read back at every history of the full game through the merged outcomes; else
    on every outcome. ``subgames[i]["merged"]`` counts its merged outcomes,
    ``["unmerged"]`` says why a subgame that could merge did not."""
    _refuse_options(depth_limit, continuations, abstraction)
    arguments.positive_int("iterations", iterations)
    tell = progress or (lambda phase, done, total: None)
    single_setting(solve_options, why="resolve", because="the subgames are the batch")
    if batching not in BATCHING:
        raise ValueError(f"batching must be one of {', '.join(BATCHING)}, got {batching!r}")
    seconds: dict[str, float] = {}
    start = tick = time.perf_counter()
    context = context or PublicContext(game, blueprint)
    full = context.full
    kind = check_public_gadget(gadget, full)
    nodes = context.nodes(at)
    if not nodes:
        raise ValueError("resolve() needs at least one path")
    _check_disjoint(full, nodes)
    context.values
    seconds["values"] = time.perf_counter() - tick
    tick = time.perf_counter()
    plans, skipped = [], []
    tell("building gadget games", 0, len(nodes))
    for done, n in enumerate(nodes, 1):
        for player in kind.resolvers():
            g = context.gadget(n, kind, player)
            if g is None:
                skipped.append((full.history(n), player, "the blueprint reaches none of its "
                                "roots by this player and chance: its strategy there cannot "
                                "matter"))
            else:
                plans.append(g)
        tell("building gadget games", done, len(nodes))
    tolerance = TOLERANCE.get(str(precision), TOLERANCE["float32"])
    games = [context.build(g, merges=merges, tolerance=tolerance) for g in plans]
    plans = [g.gadget for g in games]                  # symmetrised where merged
    seconds["build"] = time.perf_counter() - tick
    tick = time.perf_counter()
    terminals = "ranked" if full.ranked else "dense"
    lowered = []
    for g in games:
        tell("lowering subgames", len(lowered), len(games))
        lowered.append(lower_public(g, name=g.name, terminals=terminals))
    tell("lowering subgames", len(lowered), len(games))
    seconds["lower"] = time.perf_counter() - tick
    tick = time.perf_counter()
    tables, nash_conv, stacks, groups = _solve_all(lowered, algorithm, iterations, precision,
                                                   batching, solve_options, tell)
    seconds["solve"] = time.perf_counter() - tick
    seconds["compile"] = float(sum(s["compile_seconds"] for s in stacks))
    tick = time.perf_counter()
    everyone = tuple(range(full.num_players))
    pieces = [(low, table, everyone if g.player is None else (g.player,), g.node, g.prefix)
              for low, table, g in zip(lowered, tables, plans)]
    composed = compose_public(full, context.table, pieces)
    profile = Profile.from_lowered(full, composed)
    profile.game = full.name or None
    seconds["compose"] = time.perf_counter() - tick
    bound = float(sum(g.total * max(nc, 0.0) for g, nc in zip(plans, nash_conv)) / 2) \
        if kind.safe else None
    metrics = base = None
    tick = time.perf_counter()
    if evaluate_profiles:
        tell("evaluating", 0, 2)
        metrics = jsonable(evaluate_public(full, composed, dtype=precision))
        tell("evaluating", 1, 2)
        base = jsonable(evaluate_public(full, context.table, dtype=precision))
        tell("evaluating", 2, 2)
    seconds["evaluate"] = time.perf_counter() - tick
    seconds["total"] = time.perf_counter() - start
    subgames = [{"path": list(g.path), "roots": int(_roots(g, full)), "player": g.player,
                 "gadget": g.kind.name, "nodes": low.num_nodes,
                 "infosets": int(sum(low.rows_per_player)), "nash_conv": nc,
                 "mass": g.total, "stack": groups[i], "tree": "public",
                 "merged": len(low.merged), "unmerged": game.unmerged}
                for i, (g, low, nc, game) in enumerate(zip(plans, lowered, nash_conv, games))]
    return ResolveResult(profile=profile, table=composed, blueprint_table=context.table,
                         lowered=full, subgames=subgames, skipped=skipped, bound=bound,
                         metrics=metrics, blueprint_metrics=base, seconds=seconds,
                         stacks=stacks)


def public_paths_after_chance(game, count: int) -> list[tuple]:
    """One public path per public decision node that starts right after the ``count``-th
    public chance event (the private deal is not one: public Leduc's second round is 1)."""
    full = _lowered(game)
    count = arguments.positive_int("after_chance", count)
    t = full.tensors
    events = _chance_events(full)
    out = []
    for n in np.flatnonzero(t.node_base >= 0):
        par = int(t.parent[n])
        if par >= 0 and full.node_kind[par] == CHANCE_NODE and events[n] == count:
            out.append(full.history(int(n)))
    if not out:
        there = sorted({int(events[n]) for n in np.flatnonzero(t.node_base >= 0)
                        if t.parent[n] >= 0 and full.node_kind[int(t.parent[n])] == CHANCE_NODE})
        raise ValueError(f"no public decision node starts right after public chance event "
                         f"{count} of {full.name or 'the game'}: " +
                         (f"they start after public chance events "
                          f"{', '.join(map(str, there))} (the private deal is not counted)"
                          if there else "it has no public chance before a decision"))
    return out


def public_paths_at_depth(game, depth: int) -> list[tuple]:
    """One public path per public decision node ``depth`` public moves below the root."""
    full = _lowered(game)
    depth = arguments.nonnegative_int("at_depth", depth)
    levels = full.level_start
    if depth + 1 >= len(levels):
        raise ValueError(f"{full.name or 'the game'}'s public tree is {len(levels) - 2} moves "
                         f"deep; no decision lies at depth {depth}")
    t = full.tensors
    out = [full.history(n) for n in range(levels[depth], levels[depth + 1])
           if t.node_base[n] >= 0]
    if not out:
        raise ValueError(f"no public decision node lies at depth {depth} of "
                         f"{full.name or 'the game'}")
    return out


def select_public(context: PublicContext, *, at=None, after_chance: int | None = None,
                  at_depth: int | None = None, off_menu: bool = False,
                  by_text: bool = False) -> list[list]:
    """:func:`jaxcfr.subgames.select` of a public tree (the command line's and a run
    config's ``[resolve]``): one public path per public decision node named by public
    paths (``at``), after the ``after_chance``-th public chance event or at public depth
    ``at_depth``; exactly one. ``off_menu`` is refused (public trees have no
    abstractions)."""
    if off_menu:
        raise ValueError("off_abstraction re-solves after an abstraction's dropped actions; "
                         "public trees have no abstractions")
    given = [x for x in (at, after_chance, at_depth) if x is not None]
    if len(given) != 1:
        raise ValueError("name the subgames one way: paths (at), after_chance or at_depth")
    if at is not None:
        nodes = context.nodes(list(at), by_text=by_text)
    elif after_chance is not None:
        nodes = context.nodes([list(p) for p in public_paths_after_chance(context, after_chance)])
    else:
        nodes = context.nodes([list(p) for p in public_paths_at_depth(context, at_depth)])
    return [list(context.full.history(n)) for n in nodes]


# -- helpers ----------------------------------------------------------------------------
def _refuse_options(depth_limit, continuations, abstraction) -> None:
    if depth_limit is not None:
        raise ValueError("depth-limited re-solving (depth_limit=) is for history trees; a "
                         "public subgame is re-solved to the end")
    if not (isinstance(continuations, (int, np.integer)) and int(continuations) == 1):
        raise ValueError("continuations= goes with depth_limit=, for history trees only")
    if abstraction is not None:
        raise ValueError("nested re-solving (abstraction=) is for history trees; public trees "
                         "have no abstractions")


def _blueprint_table(lowered: PublicLowered, blueprint) -> np.ndarray:
    if isinstance(blueprint, Profile):
        table, counts = blueprint.table(lowered)
        if len(blueprint) and counts["rows"] and not counts["found"]:
            raise ValueError(f"the blueprint has none of the {counts['rows']} information sets "
                             f"of {lowered.name or 'the game'} (keys (player, (hand, public "
                             "history))): it is a profile of another game or of another "
                             "representation")
        return table
    table = np.asarray(blueprint, dtype=np.float64)
    if table.shape != lowered.tensors.legal_mask.shape:
        raise ValueError(f"blueprint table of shape {table.shape} does not fit the public "
                         f"tree's [I, A] = {lowered.tensors.legal_mask.shape}")
    return table


def _same(a, b) -> bool:
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - labels that do not compare
        return False


def _single(at):
    return at if isinstance(at, (int, np.integer)) else [at]


def _paths(context: PublicContext, at) -> list:
    """``at`` as a list of items: one public path, or a list of paths / node numbers."""
    if isinstance(at, (int, np.integer)):
        return [at]
    if isinstance(at, str):
        raise ValueError(f"a public path is a list of actions, not the string {at!r}")
    items = list(at)
    many = bool(items) and all(isinstance(x, (list, tuple)) for x in items)
    if many and not all(isinstance(x, list) for x in items):
        try:                                   # tuples: a path of tuple labels, or paths
            context.node(tuple(items))
            return [tuple(items)]
        except GameError:
            pass
    return items if many else [items]


def _lowered(game) -> PublicLowered:
    if isinstance(game, PublicContext):
        return game.full
    if isinstance(game, PublicLowered):
        return game
    root = public_game_of(game) if isinstance(game, str) else game
    if not isinstance(root, (PublicGame, PublicLowered)):
        raise TypeError(f"not a public tree: {game!r}")
    return root if isinstance(root, PublicLowered) else lower_public(
        root, name=game if isinstance(game, str) else "")


def _chance_events(full: PublicLowered) -> np.ndarray:
    """``[N]`` the public chance nodes above each node."""
    t = full.tensors
    out = np.zeros(full.num_nodes, np.int64)
    for n in range(1, full.num_nodes):               # parents come first (depth order)
        par = int(t.parent[n])
        out[n] = out[par] + (full.node_kind[par] == CHANCE_NODE)
    return out


def _node_map(member: PublicLowered, full: PublicLowered, node: int, prefix: tuple
              ) -> list[tuple[int, int, tuple]]:
    """``[(member node, full node, hands)]`` of the member's public tree below the gadget's
    moves ``prefix``, from ``node`` of the full game (unmerged): every public node of
    the member as the unmerged tree has it (:meth:`PublicLowered.expanded`: through a
    merged outcome, the representative's node), ``hands`` ``[P]`` of ``[H_p]`` the
    member's hand each hand is read at there (identity off merged outcomes)."""
    ft = full.tensors

    def kids(n):
        lo = int(ft.first_child[n])
        return {full.node_action[c]: c for c in range(lo, lo + int(ft.child_count[n]))}

    k = len(prefix)
    at: dict[tuple, int] = {}                          # member history -> full node
    out = []
    for u, history, hands in member.expanded():        # parents come before children
        if tuple(history[:k]) != tuple(prefix):
            continue
        v = node if len(history) == k else kids(at[history[:-1]])[history[-1]]
        at[history] = v
        out.append((u, v, hands))
    return out


def _check_disjoint(full: PublicLowered, nodes: Sequence[int]) -> None:
    """Refuse subgames of which one lies below another's node."""
    chosen = set(nodes)
    parent = full.tensors.parent
    for n in nodes:
        a = int(parent[n])
        while a >= 0:
            if a in chosen:
                raise ValueError(f"the subgames at {format_history(full.history(a))} and "
                                 f"{format_history(full.history(n))} overlap (one lies inside "
                                 "the other): re-solve nested subgames one after another, "
                                 "each against the profile the previous one composed")
            a = int(parent[a])


def _roots(g: PublicGadget, full: PublicLowered) -> int:
    """The number of histories (tuples of hands) the subgame deals."""
    dealt = full.hands.compatible.copy()
    for q, w in enumerate(g.weights):
        shape = [1] * len(g.weights)
        shape[q] = -1
        dealt = dealt & (np.asarray(w) > 0).reshape(shape)
    return int(dealt.sum())


def _solve_all(lowered: list[PublicLowered], algorithm, iterations, precision, batching,
               options, tell):
    """Solve every public subgame, grouped into stacks; per game its table and NashConv."""
    groups = batch_groups([low.num_nodes for low in lowered], batching)
    tables: list[Any] = [None] * len(lowered)
    nash_conv = [0.0] * len(lowered)
    which = [0] * len(lowered)
    stacks = []
    for k, members in enumerate(groups):
        tell("solving subgames", k, len(groups))
        if len(members) == 1:
            result = solve(lowered[members[0]], algorithm, iterations, precision=precision,
                           **options)
            per = [result]
        else:
            stacked = solve_public_stack([lowered[i] for i in members], algorithm, iterations,
                                         precision=precision, **options)
            per = [stacked.member(b) for b in range(len(members))]
            result = stacked
        for b, i in enumerate(members):
            tables[i] = np.asarray(per[b].average_strategy)
            nash_conv[i] = float(np.asarray(per[b].final["nash_conv"]).reshape(-1)[0])
            which[i] = k
        stacks.append({"members": len(members),
                       "nodes": int(sum(lowered[i].num_nodes for i in members)),
                       "seconds": result.seconds + result.compile_seconds,
                       "compile_seconds": result.compile_seconds,
                       "iterations_per_second": result.iterations_per_second})
    tell("solving subgames", len(groups), len(groups))
    return tables, nash_conv, stacks, which
