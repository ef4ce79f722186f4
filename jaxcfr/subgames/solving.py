"""Building, stacking and solving subgames, and the entry points ``subgame`` and ``resolve``.

:func:`subgame` builds one subgame with its gadget as a :class:`~jaxcfr.subgames.game.
SubgameGame`. :func:`resolve_subgames` builds the subgames of many paths (paths in one
public state share one subgame), one game per re-solving player for a safe gadget (both
players of a two-player game, each against the other's gadget) or one for ``unsafe``,
lowers them, stacks games of similar sizes and solves every stack in one compiled run
(:func:`jaxcfr.solve` of :func:`jaxcfr.stack`), and composes the re-solved strategies over
the blueprint (:mod:`jaxcfr.subgames.compose`). :func:`resolve` returns only the composed
:class:`jaxcfr.Profile`.

Everything the gadgets read comes from the lowered full game and the blueprint's exact
counterfactual best-response values (:func:`jaxcfr.solvers.analytics.counterfactual_values`),
computed once per call on the device.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.subgames import paths_after_chance, resolve_subgames
    >>> blueprint = jaxcfr.solve("leduc_poker", "cfr", 30).profile
    >>> result = resolve_subgames("leduc_poker", blueprint, paths_after_chance("leduc_poker", 3),
    ...                           gadget="resolve", iterations=300)
    >>> result.metrics["exploitability"] <= result.blueprint_metrics["exploitability"] + result.bound
    True
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Sequence

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.serialize import jsonable
from jaxcfr.api.solve import solve
from jaxcfr.game.abstraction import Abstracted
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import load_game
from jaxcfr.lowering.lower import as_lowered, lower
from jaxcfr.lowering.stack import stack
from jaxcfr.profiles.lifting import as_abstraction
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.analytics import counterfactual_values, evaluate
from jaxcfr.subgames import frontier as _frontier
from jaxcfr.subgames.closure import PublicState, TreeIndex, public_state
from jaxcfr.subgames.closure import after_chance as after_chance_states
from jaxcfr.subgames.closure import at_depth as at_depth_states
from jaxcfr.subgames.compose import check_disjoint, compose
from jaxcfr.subgames.gadgets import (GADGETS, Gadget, Nested, assign_gifts, build_gadget,
                                     check_gadget)
from jaxcfr.subgames.game import SubgameGame
from jaxcfr.tensors import DECISION, LoweredGame

__all__ = ["subgame", "resolve", "resolve_subgames", "ResolveResult", "Context", "GADGETS",
           "BATCHING", "off_abstraction", "paths_at_depth", "paths_after_chance", "select"]

#: How :func:`resolve_subgames` groups subgame games into compiled runs.
BATCHING = ("auto", "one", "each")


class Context:
    """A full game, lowered, with a blueprint and its counterfactual values (built once,
    shared by every subgame of one call).

    Args:
      game: a game string, a Game or a LoweredGame (the full game).
      blueprint: a :class:`jaxcfr.Profile` (of the full game or of an abstraction of it:
        it is lifted by action label) or a ``[I, A]`` strategy table of the lowered game.
      abstraction: the abstraction the blueprint was trained on (an abstraction, its
        string, or the abstracted game lowered): nested subgames after its dropped actions
        take their alternatives from it.
      root: the game's root state when ``game`` is its LoweredGame (optional: for a
        declared ``public_key()``, multi-valued frontiers and lowering the abstraction).
    """

    def __init__(self, game, blueprint, *, abstraction=None, root=None):
        self.root = root
        if isinstance(game, (str, os.PathLike)):
            self.root = load_game(os.fspath(game))
            self.full = lower(self.root, name=os.fspath(game))
        elif isinstance(game, LoweredGame):
            self.full = game
        else:
            self.root = game
            self.full = as_lowered(game)
        if self.full.batch_size is not None:
            raise ValueError("subgames are cut from a single game, not a stack")
        self.index = TreeIndex(self.full)
        self.profile = blueprint if isinstance(blueprint, Profile) else None
        self.table = _table(self.full, blueprint)
        self._values = None
        self.nested = None
        if abstraction is not None:
            small = abstraction if isinstance(abstraction, LoweredGame) else None
            if small is None:
                if self.root is None:
                    raise ValueError("nested re-solving lowers the abstracted game: give the "
                                     "game itself (not only its lowered form), or the "
                                     "abstracted game lowered as abstraction=")
                small = lower(Abstracted(self.root, as_abstraction(abstraction)), workers=1)
            abstract_table = _table(small, blueprint)
            self.nested = Nested(small, counterfactual_values(small, abstract_table))

    @property
    def values(self):
        """The blueprint's counterfactual values (computed on first use, on the device)."""
        if self._values is None:
            self._values = counterfactual_values(self.full, self.table)
        return self._values

    @property
    def name(self) -> str:
        return self.full.name or "game"

    def states(self, at, *, by_text: bool = False) -> list[PublicState]:
        """The distinct public states of ``at`` (one path, a list of paths, node numbers or
        :class:`PublicState` objects); ``by_text``: labels compared by ``str()``."""
        out, seen = [], set()
        for item in _paths(self.index, at):
            state = item if isinstance(item, PublicState) else public_state(
                self.index, item, game=self.root, by_text=by_text)
            if state.key not in seen:
                seen.add(state.key)
                out.append(state)
        return out

    def gadget(self, state: PublicState, kind: str, player: int | None) -> Gadget | None:
        return build_gadget(kind, self.index, state, self.values, player, nested=self.nested,
                            path=state.path)

    def frontier(self, roots: np.ndarray, depth_limit: int, continuations, chooser: int
                 ) -> tuple[dict, dict]:
        """``(node -> [P, k] values, node -> chooser's key)`` of the frontier below ``roots``."""
        nodes = _frontier.frontier_nodes(self.index, roots, depth_limit)
        tables = _continuations(self.full, self.table, chooser, continuations)
        values = _frontier.continuation_values(self.full, tables, nodes)
        keys = {}
        if len(tables) > 1:
            keys = dict(zip(nodes.tolist(), _frontier.frontier_keys(self.index, nodes, chooser,
                                                                    self.root)))
        return dict(zip(nodes.tolist(), values)), keys

    def build(self, state: PublicState, gadget: Gadget, depth_limit, continuations
              ) -> SubgameGame:
        frontier = keys = None
        if depth_limit is not None:
            chooser = gadget.opponent
            if chooser is None:
                chooser = 1 - int(self.index.player[state.node]) \
                    if self.full.num_players == 2 else int(self.index.player[state.node])
            frontier, keys = self.frontier(gadget.roots, depth_limit, continuations, chooser)
        who = "every player" if gadget.player is None else f"player {gadget.player}"
        name = (f"subgame({self.name} @ {','.join(map(str, state.path))}; {gadget.kind} for "
                f"{who}" + (f"; depth {depth_limit}" if depth_limit is not None else "") + ")")
        return SubgameGame(self.index, gadget, depth_limit=depth_limit, frontier=frontier,
                           frontier_key=keys, name=name)


def subgame(game, blueprint, at, *, gadget: str = "resolve", depth_limit: int | None = None,
            player: int | None = None, continuations=1, abstraction=None) -> SubgameGame:
    """The subgame at a history, with its gadget, as a :class:`jaxcfr.Game`.

    Args:
      game: the full game (a game string, a Game, or its LoweredGame).
      blueprint: a :class:`jaxcfr.Profile` of it (or of an abstraction of it), or a
        ``[I, A]`` strategy table of the lowered game.
      at: the path: a list of the game's actions from the root, chance outcomes included;
        it must end at a decision.
      gadget: ``"resolve"``, ``"maxmargin"``, ``"reach"`` (safe: two-player zero-sum
        games) or ``"unsafe"`` (:mod:`jaxcfr.subgames.gadgets`).
      depth_limit: cut the subgame this many moves below its roots; the frontier is worth
        the blueprint's continuation values (:mod:`jaxcfr.subgames.frontier`).
      player: the re-solving player of a safe gadget (default: the one to act at ``at``).
      continuations: with ``depth_limit``, the opponent's continuation strategies at the
        frontier: ``1`` (the blueprint), ``k`` (the blueprint and ``k - 1`` biased
        versions) or a list of ``[I, A]`` tables / Profiles.
      abstraction: the blueprint's abstraction (nested subgames, see :class:`Context`).
    Returns:
      A :class:`~jaxcfr.subgames.game.SubgameGame`: it lowers, validates and solves like
      any game; its profile's rows are keyed like the full game's.
    Raises:
      GameError: ``subgame-path`` (not a legal path, or one that ends at a terminal or
        chance node), ``subgame-unreached`` (nothing to re-solve there).
      ValueError: a safe gadget on a game that is not two-player zero-sum.
    """
    context = Context(game, blueprint, abstraction=abstraction)
    kind = check_gadget(gadget, context.full)
    depth_limit = _depth_limit(depth_limit)
    state = context.states(_single(at))[0]
    if kind != "unsafe":
        player = int(context.index.player[state.node]) if player is None else int(player)
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
    g = context.gadget(state, kind, None if kind == "unsafe" else player)
    if g is None:
        raise GameError(f"the blueprint reaches no root of the subgame at {list(state.path)} "
                        f"by player {player} and chance: player {player}'s strategy there "
                        "cannot change its exploitability, so there is nothing to re-solve "
                        "for it", rule="subgame-unreached", history=state.path)
    g = assign_gifts([g], context.values, context.nested)[0]
    return context.build(state, g, depth_limit, continuations)


@dataclasses.dataclass(repr=False)
class ResolveResult:
    """What :func:`resolve_subgames` returns.

    Attributes:
      profile: the composed profile of the full game (saved like any other).
      table: its ``[I, A]`` strategy table of ``lowered``; ``blueprint_table`` the blueprint's.
      lowered: the full game, lowered.
      subgames: one dict per subgame game: ``path`` (of the public state), ``roots``,
        ``player`` (the re-solver; ``None``: every player), ``gadget``, ``nodes``,
        ``infosets``, ``nash_conv`` (of the re-solved gadget game), ``mass`` (``Z``),
        ``stack`` (which compiled run solved it).
      skipped: ``(path, player, why)`` of each re-solve left out (nothing to re-solve).
      bound: the most the composed profile's exploitability can exceed the blueprint's
        (``sum of Z * NashConv / 2`` over the gadget games), where the gadgets guarantee it
        (safe, not depth-limited, not nested); else ``None``.
      metrics / blueprint_metrics: :func:`jaxcfr.evaluate` of the composed profile and of
        the blueprint in the full game (JSON values), when ``evaluate=True``.
      seconds: ``values`` (counterfactual values), ``build``, ``lower``, ``solve`` (compile
        included), ``compile``, ``compose``, ``evaluate``, ``total``.
      stacks: per compiled run: members, nodes of the stack, seconds, compile seconds.
    """
    profile: Profile
    table: np.ndarray
    blueprint_table: np.ndarray
    lowered: LoweredGame
    subgames: list[dict[str, Any]]
    skipped: list[tuple]
    bound: float | None
    metrics: dict[str, Any] | None
    blueprint_metrics: dict[str, Any] | None
    seconds: dict[str, float]
    stacks: list[dict[str, Any]]

    def __repr__(self) -> str:
        m = self.metrics
        shown = "" if m is None else (
            f", {m['metric_name']} {self.blueprint_metrics['metric']:.4g} -> {m['metric']:.4g}")
        return (f"ResolveResult({len(self.subgames)} subgame games in {len(self.stacks)} "
                f"compiled runs{shown})")

    def report(self) -> dict[str, Any]:
        """A JSON-ready summary (what ``jaxcfr resolve --json`` prints)."""
        return jsonable({"subgames": self.subgames, "skipped": [list(s) for s in self.skipped],
                         "bound": self.bound, "metrics": self.metrics,
                         "blueprint_metrics": self.blueprint_metrics, "seconds": self.seconds,
                         "stacks": self.stacks})


def resolve_subgames(game, blueprint, at, *, gadget: str = "resolve", algorithm="cfr+",
                     iterations: int = 1000, depth_limit: int | None = None, continuations=1,
                     abstraction=None, precision: str = "float32", batching: str = "auto",
                     evaluate_profiles: bool = True, context: Context | None = None,
                     **solve_options) -> ResolveResult:
    """Re-solve the subgames of ``at`` against ``blueprint``, all in stacked compiled runs,
    and compose them into a profile of the full game.

    Args:
      game, blueprint, gadget, depth_limit, continuations, abstraction: as :func:`subgame`.
      at: one path, or a list of paths (paths in one public state share one subgame), or
        public states (:func:`paths_after_chance`, :func:`paths_at_depth`,
        :func:`off_abstraction` give lists of paths). Subgames must not overlap.
      algorithm, iterations, precision, solve_options: as :func:`jaxcfr.solve` (e.g.
        ``alternating``, ``chunk``; one hyper-parameter setting).
      batching: ``"auto"`` (one compiled run per group of games within a factor 2 in
        size), ``"one"`` (every game in one run) or ``"each"`` (one run per game: the
        one-by-one baseline).
      evaluate_profiles: compute the blueprint's and the composed profile's exact metrics.
      context: a :class:`Context` already built for this game and blueprint (reused).
    """
    arguments.positive_int("iterations", iterations)
    for k in ("alpha", "beta", "gamma", "seeds"):
        if np.ndim(solve_options.get(k)) > 0 or (k == "seeds" and solve_options.get(k)):
            raise ValueError(f"resolve takes one setting: give one value of {k}, not a list "
                             "(the subgames are the batch)")
    if batching not in BATCHING:
        raise ValueError(f"batching must be one of {', '.join(BATCHING)}, got {batching!r}")
    seconds: dict[str, float] = {}
    start = tick = time.perf_counter()
    if context is None:
        context = Context(game, blueprint, abstraction=abstraction)
    kind = check_gadget(gadget, context.full)
    depth_limit = _depth_limit(depth_limit)
    states = context.states(at)
    context.values
    seconds["values"] = time.perf_counter() - tick
    tick = time.perf_counter()
    if not states:
        raise ValueError("resolve() needs at least one path")
    check_disjoint(context.index, states)
    plans, skipped = [], []
    for s in states:
        for player in ((None,) if kind == "unsafe" else (0, 1)):
            g = context.gadget(s, kind, player)
            if g is None:
                skipped.append((s.path, player, "the blueprint reaches none of its roots by "
                                "this player and chance: its strategy there cannot matter"))
            else:
                plans.append((s, g))
    gadgets = assign_gifts([g for _, g in plans], context.values, context.nested)
    games = [context.build(s, g, depth_limit, continuations)
             for (s, _), g in zip(plans, gadgets)]
    seconds["build"] = time.perf_counter() - tick
    tick = time.perf_counter()
    lowered = [lower(g, name=g.name, workers=1) for g in games]
    seconds["lower"] = time.perf_counter() - tick
    tick = time.perf_counter()
    tables, nash_conv, stacks, groups = _solve_all(lowered, algorithm, iterations, precision,
                                                   batching, solve_options)
    seconds["solve"] = time.perf_counter() - tick
    seconds["compile"] = float(sum(s["compile_seconds"] for s in stacks))
    tick = time.perf_counter()
    pieces = [(low, table, (0, 1) if g.player is None and context.full.num_players == 2 else
               tuple(range(context.full.num_players)) if g.player is None else (g.player,))
              for low, table, g in zip(lowered, tables, gadgets)]
    composed = compose(context.full, context.table, pieces)
    profile = Profile.from_lowered(context.full, composed)
    profile.game = context.full.name or None
    seconds["compose"] = time.perf_counter() - tick
    guaranteed = all(g.safe for g in gadgets) and kind != "unsafe" and depth_limit is None
    bound = float(sum(g.total * max(nc, 0.0) for g, nc in zip(gadgets, nash_conv)) / 2) \
        if guaranteed else None
    metrics = base = None
    tick = time.perf_counter()
    if evaluate_profiles:
        metrics = jsonable(evaluate(context.full, composed, dtype=precision))
        base = jsonable(evaluate(context.full, context.table, dtype=precision))
    seconds["evaluate"] = time.perf_counter() - tick
    seconds["total"] = time.perf_counter() - start
    subgames = [{"path": list(s.path), "roots": len(s.roots), "player": g.player,
                 "gadget": g.kind, "nodes": low.num_nodes,
                 "infosets": sum(low.infosets_per_player), "nash_conv": nc,
                 "mass": g.total, "stack": groups[i]}
                for i, ((s, _), g, low, nc) in enumerate(zip(plans, gadgets, lowered,
                                                              nash_conv))]
    return ResolveResult(profile=profile, table=composed, blueprint_table=context.table,
                         lowered=context.full, subgames=subgames, skipped=skipped, bound=bound,
                         metrics=metrics, blueprint_metrics=base, seconds=seconds,
                         stacks=stacks)


def resolve(game, blueprint, at, *, gadget: str = "resolve", algorithm="cfr+",
            iterations: int = 1000, depth_limit: int | None = None, **options) -> Profile:
    """The blueprint with the subgames at ``at`` re-solved: a :class:`jaxcfr.Profile` of the
    full game (every option of :func:`resolve_subgames`; that function also returns the
    metrics, the safety bound and the timings).

    Example::

        >>> import jaxcfr
        >>> blueprint = jaxcfr.solve("kuhn_poker", "cfr", 20).profile
        >>> better = jaxcfr.resolve("kuhn_poker", blueprint, [[0, 1], [0, 2], [1, 0]],
        ...                         gadget="maxmargin", iterations=300)
    """
    return resolve_subgames(game, blueprint, at, gadget=gadget, algorithm=algorithm,
                            iterations=iterations, depth_limit=depth_limit,
                            evaluate_profiles=False, **options).profile


# -- many public states at once ---------------------------------------------------------
def select(context: Context, *, at=None, after_chance: int | None = None,
           at_depth: int | None = None, off_menu: bool = False,
           by_text: bool = False) -> list[PublicState]:
    """The public states a command line or a config names: paths (``at``), every state
    after the ``after_chance``-th chance event or at depth ``at_depth``, or every subgame
    after an action the context's abstraction dropped (``off_menu``); exactly one."""
    given = [x for x in (at, after_chance, at_depth) if x is not None] + ([1] if off_menu else [])
    if len(given) != 1:
        raise ValueError("name the subgames one way: paths (at), after_chance, at_depth or "
                         "off_abstraction")
    if at is not None:
        return context.states(list(at) if not isinstance(at, PublicState) else at,
                              by_text=by_text)
    if after_chance is not None:
        return after_chance_states(context.index, arguments.positive_int("after_chance",
                                                                         after_chance))
    if at_depth is not None:
        return at_depth_states(context.index, arguments.nonnegative_int("at_depth", at_depth))
    if context.nested is None:
        raise ValueError("the subgames after dropped actions need the blueprint's abstraction "
                         "(abstraction=)")
    return context.states(off_abstraction(context.full, None, abstract=context.nested.lowered))



def paths_at_depth(game, depth: int) -> list[tuple]:
    """One path per public state whose decisions lie ``depth`` moves from the root."""
    return [s.path for s in at_depth_states(TreeIndex(as_lowered(game)), int(depth))]


def paths_after_chance(game, count: int) -> list[tuple]:
    """One path per public state that starts right after the ``count``-th chance event
    (Leduc's second round: ``count=3``)."""
    return [s.path for s in after_chance_states(TreeIndex(as_lowered(game)), int(count))]


def off_abstraction(game, abstraction, *, abstract: LoweredGame | None = None) -> list[tuple]:
    """One path per public state that follows an action ``abstraction`` dropped at a
    history it keeps: the (maximal) subgames nested re-solving answers.

    Args:
      game: the full game (a game string, a Game or its LoweredGame).
      abstraction: an abstraction or its string (or ``abstract``: the abstracted game,
        lowered, to avoid lowering it again).
    """
    full = as_lowered(game)
    if abstract is None:
        root = load_game(game) if isinstance(game, (str, os.PathLike)) else game
        if isinstance(root, LoweredGame):
            raise ValueError("off_abstraction() lowers the abstracted game: give the game "
                             "itself, or abstract= (the abstracted game, lowered)")
        abstract = lower(Abstracted(root, as_abstraction(abstraction)), workers=1)
    index = TreeIndex(full)
    t = full.tensors
    kept = np.zeros(t.legal_mask.shape, dtype=bool)
    for row, (player, key) in enumerate(full.infoset_keys):
        try:
            small = abstract.infoset_actions[abstract.row_of(player, key)]
        except KeyError:
            continue
        labels = full.infoset_actions[row]
        kept[row, :len(labels)] = [a in small for a in labels]
    on = np.zeros(full.num_nodes, dtype=bool)
    on[0] = True
    levels = full.level_start
    for d in range(1, len(levels) - 1):
        lo, hi = levels[d], levels[d + 1]
        par = index.parent[lo:hi]
        decision = index.kind[par] == DECISION
        slot = np.minimum(index.slot[lo:hi], kept.shape[1] - 1)     # chance slots: unused
        edge = np.where(decision, kept[index.row[par], slot], True)
        on[lo:hi] = on[par] & edge
    par = np.maximum(index.parent, 0)
    seeds = np.flatnonzero(~on & on[par] & (index.parent >= 0) & (index.kind == DECISION))
    out, covered = [], np.zeros(full.num_nodes, dtype=bool)
    for s in seeds[np.argsort(index.pre[seeds], kind="stable")]:
        if covered[s]:
            continue
        state = public_state(index, int(s))
        covered[index.nodes_below(state.roots)] = True
        out.append(state.path)
    return out


# -- helpers ----------------------------------------------------------------------------
def _solve_all(lowered: list[LoweredGame], algorithm, iterations, precision, batching,
               options):
    """Solve every game, grouped into stacks; per game its table and NashConv."""
    order = sorted(range(len(lowered)), key=lambda i: -lowered[i].num_nodes)
    groups: list[list[int]] = []
    for i in order:
        if batching == "each" or not groups:
            groups.append([i])
        elif batching == "one" or 2 * lowered[i].num_nodes >= lowered[groups[-1][0]].num_nodes:
            groups[-1].append(i)
        else:
            groups.append([i])
    tables: list[Any] = [None] * len(lowered)
    nash_conv = [0.0] * len(lowered)
    which = [0] * len(lowered)
    stacks = []
    for k, members in enumerate(groups):
        batch = stack([lowered[i] for i in members]) if len(members) > 1 else lowered[members[0]]
        result = solve(batch, algorithm, iterations, precision=precision, **options)
        average = np.asarray(result.average_strategy)
        final = result.final["nash_conv"]
        for b, i in enumerate(members):
            low = lowered[i]
            table = average[b] if len(members) > 1 else average
            tables[i] = table[:low.num_rows, :low.max_actions]
            nash_conv[i] = float(final[b] if len(members) > 1 else np.asarray(final).reshape(-1)[0])
            which[i] = k
        stacks.append({"members": len(members), "nodes": int(batch.num_nodes) * len(members),
                       "seconds": result.seconds + result.compile_seconds,
                       "compile_seconds": result.compile_seconds,
                       "iterations_per_second": result.iterations_per_second})
    return tables, nash_conv, stacks, which


def _table(lowered: LoweredGame, blueprint) -> np.ndarray:
    if isinstance(blueprint, Profile):
        table, counts = blueprint.table(lowered)
        if len(blueprint) and counts["rows"] and not counts["found"]:
            raise ValueError(f"the blueprint has none of the {counts['rows']} information sets "
                             f"of {lowered.name or 'the game'}: it is a profile of another game")
        return table
    table = np.asarray(blueprint, dtype=np.float64)
    if table.shape != lowered.tensors.legal_mask.shape:
        raise ValueError(f"blueprint table of shape {table.shape} does not fit the game's "
                         f"[I, A] = {lowered.tensors.legal_mask.shape}")
    return table


def _continuations(full: LoweredGame, table: np.ndarray, chooser: int, continuations):
    if isinstance(continuations, (int, np.integer)) and not isinstance(continuations, bool):
        k = arguments.positive_int("continuations", int(continuations))
        return _frontier.biased(full, table, chooser, k)
    out = [table]
    for c in continuations:
        t = _table(full, c)
        mine = np.asarray(full.tensors.infoset_player) == chooser
        out.append(np.where(mine[:, None], t, table))
    return out


def _depth_limit(depth_limit):
    if depth_limit is None:
        return None
    return arguments.positive_int("depth_limit", depth_limit)


def _single(at):
    """One path (or node, or public state) as a list of one item for :meth:`Context.states`."""
    return at if isinstance(at, (PublicState, int, np.integer)) else [at]


def _paths(index: TreeIndex, at) -> list:
    """``at`` as a list of items: one path, or a list of paths / nodes / public states."""
    if isinstance(at, (PublicState, int, np.integer)):
        return [at]
    if isinstance(at, str):
        raise ValueError(f"a path is a list of actions, not the string {at!r}")
    items = list(at)
    many = items and all(isinstance(x, (list, tuple, PublicState)) for x in items)
    if many and not all(isinstance(x, list) or isinstance(x, PublicState) for x in items):
        try:                                  # tuples: a path of tuple labels, or paths
            index.decision_at(tuple(items))
            return [tuple(items)]
        except GameError:
            pass
    return items if many else [items]
