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
    >>> before = result.blueprint_metrics["exploitability"]
    >>> result.metrics["exploitability"] <= before + result.bound
    True
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from jaxcfr._util import arguments
from jaxcfr._util.serialize import jsonable
from jaxcfr.api.solve import solve
from jaxcfr.game.contract import GameError
from jaxcfr.lowering.lower import lower
from jaxcfr.lowering.stack import stack
from jaxcfr.profiles.profile import Profile
from jaxcfr.solvers.analytics import evaluate
from jaxcfr.solvers.parameters import single_setting
from jaxcfr.subgames.compose import check_disjoint, compose
from jaxcfr.subgames.context import Context, depth_limit_of, single
from jaxcfr.subgames.gadgets import GADGETS, GadgetKind, assign_gifts, check_gadget
from jaxcfr.subgames.public import (PublicContext, is_public, public_subgame,
                                    resolve_public_subgames)
from jaxcfr.subgames.result import ResolveResult
from jaxcfr.subgames.game import SubgameGame
from jaxcfr.tensors import LoweredGame

__all__ = ["subgame", "resolve", "resolve_subgames", "ResolveResult", "GADGETS", "BATCHING"]

from jaxcfr.subgames.names import BATCHING, batch_groups  # noqa: E402  (JAX-free names)


def subgame(game, blueprint, at, *, gadget: str | GadgetKind = "resolve",
            depth_limit: int | None = None,
            player: int | None = None, continuations=1, abstraction=None) -> SubgameGame:
    """The subgame at a history, with its gadget, as a :class:`jaxcfr.Game`.

    Args:
      game: the full game (a game string, a Game, or its LoweredGame). A public tree (a
        PublicGame, or a game string with ``tree='public'``) is re-solved on its public
        tree (:mod:`jaxcfr.subgames.public`): ``at`` is then a public path (public actions
        and outcomes, no private deal), the gadget ``resolve`` or ``unsafe``, and the
        result a :class:`~jaxcfr.subgames.public.PublicSubgame`.
      blueprint: a :class:`jaxcfr.Profile` of it (or of an abstraction of it), or a
        ``[I, A]`` strategy table of the lowered game.
      at: the path: a list of the game's actions from the root, chance outcomes included;
        it must end at a decision.
      gadget: ``"resolve"``, ``"maxmargin"``, ``"reach"`` (safe: two-player zero-sum
        games) or ``"unsafe"``, or a gadget object (a
        :class:`~jaxcfr.subgames.gadgets.GadgetKind`; :mod:`jaxcfr.subgames.gadgets`).
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
    if is_public(game):
        return public_subgame(game, blueprint, at, gadget=gadget, player=player,
                              depth_limit=depth_limit, continuations=continuations,
                              abstraction=abstraction)
    context = Context(game, blueprint, abstraction=abstraction)
    kind = check_gadget(gadget, context.full)
    depth_limit = depth_limit_of(depth_limit)
    state = context.states(single(at))[0]
    if kind.safe:
        player = int(context.index.player[state.node]) if player is None else int(player)
        if player not in (0, 1):
            raise ValueError(f"player must be 0 or 1, got {player!r}")
    g = context.gadget(state, kind, player if kind.safe else None)
    if g is None:
        raise GameError(f"the blueprint reaches no root of the subgame at {list(state.path)} "
                        f"by player {player} and chance: player {player}'s strategy there "
                        "cannot change its exploitability, so there is nothing to re-solve "
                        "for it", rule="subgame-unreached", history=state.path)
    g = assign_gifts([g], context.values, context.nested)[0]
    return context.build(state, g, depth_limit, continuations)


def resolve_subgames(game, blueprint, at, *, gadget: str | GadgetKind = "resolve",
                     algorithm="cfr+",
                     iterations: int = 1000, depth_limit: int | None = None, continuations=1,
                     abstraction=None, precision: str = "float32", batching: str = "auto",
                     evaluate_profiles: bool = True, context: Context | None = None,
                     progress: Callable[[str, int, int], None] | None = None,
                     merges: bool = True, **solve_options) -> ResolveResult:
    """Re-solve the subgames of ``at`` against ``blueprint``, all in stacked compiled runs,
    and compose them into a profile of the full game.

    Args:
      game, blueprint, gadget, depth_limit, continuations, abstraction: as :func:`subgame`.
      at: one path, or a list of paths (paths in one public state share one subgame), or
        public states (:func:`paths_after_chance`, :func:`paths_at_depth`,
        :func:`off_abstraction` give lists of paths). Subgames must not overlap.
      algorithm, iterations, precision, solve_options: as :func:`jaxcfr.solve` (e.g.
        ``alternating``, ``chunk``): one setting, no lists
        (:func:`~jaxcfr.solvers.parameters.single_setting`).
      batching: ``"auto"`` (one compiled run per group of games within a factor 2 in
        size), ``"one"`` (every game in one run) or ``"each"`` (one run per game: the
        one-by-one baseline).
      evaluate_profiles: compute the blueprint's and the composed profile's exact metrics.
      context: a :class:`Context` already built for this game and blueprint (reused).
      progress: ``progress(phase, done, total)``, called as each phase starts (``done`` 0)
        and after each of its steps: ``"building gadget games"``, ``"lowering subgames"``
        (per game), ``"solving subgames"`` (per compiled run), ``"evaluating"`` (the two
        profiles); :meth:`jaxcfr.runs.progress.Status.phase` draws it.
      merges: a public tree's gadget games run on their merged tree where the game merges
        suit-isomorphic chance outcomes below the node and the gadget keeps the symmetry
        (:func:`~jaxcfr.subgames.public.resolve_public_subgames`); ``False``: every
        outcome. A history tree merges nothing (either value does the same).
    """
    if is_public(game) or isinstance(context, PublicContext):
        return resolve_public_subgames(
            game, blueprint, at, gadget=gadget, algorithm=algorithm, iterations=iterations,
            depth_limit=depth_limit, continuations=continuations, abstraction=abstraction,
            precision=precision, batching=batching, evaluate_profiles=evaluate_profiles,
            context=context, progress=progress, merges=merges, **solve_options)
    arguments.positive_int("iterations", iterations)
    tell = progress or (lambda phase, done, total: None)
    single_setting(solve_options, why="resolve", because="the subgames are the batch")
    if batching not in BATCHING:
        raise ValueError(f"batching must be one of {', '.join(BATCHING)}, got {batching!r}")
    seconds: dict[str, float] = {}
    start = tick = time.perf_counter()
    if context is None:
        context = Context(game, blueprint, abstraction=abstraction)
    kind = check_gadget(gadget, context.full)
    depth_limit = depth_limit_of(depth_limit)
    states = context.states(at)
    context.values
    seconds["values"] = time.perf_counter() - tick
    tick = time.perf_counter()
    if not states:
        raise ValueError("resolve() needs at least one path")
    check_disjoint(context.index, states)
    plans, skipped = [], []
    tell("building gadget games", 0, len(states))
    for done, s in enumerate(states, 1):
        tell("building gadget games", done - 1, len(states))
        for player in kind.resolvers():
            g = context.gadget(s, kind, player)
            if g is None:
                skipped.append((s.path, player, "the blueprint reaches none of its roots by "
                                "this player and chance: its strategy there cannot matter"))
            else:
                plans.append((s, g))
    gadgets = assign_gifts([g for _, g in plans], context.values, context.nested)
    games = [context.build(s, g, depth_limit, continuations)
             for (s, _), g in zip(plans, gadgets)]
    tell("building gadget games", len(states), len(states))
    seconds["build"] = time.perf_counter() - tick
    tick = time.perf_counter()
    lowered = []
    for g in games:
        tell("lowering subgames", len(lowered), len(games))
        lowered.append(lower(g, name=g.name, workers=1, probe=False))     # of a probed game
    tell("lowering subgames", len(lowered), len(games))
    seconds["lower"] = time.perf_counter() - tick
    tick = time.perf_counter()
    tables, nash_conv, stacks, groups = _solve_all(lowered, algorithm, iterations, precision,
                                                   batching, solve_options, tell)
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
    guaranteed = all(g.safe for g in gadgets) and kind.safe and depth_limit is None
    bound = float(sum(g.total * max(nc, 0.0) for g, nc in zip(gadgets, nash_conv)) / 2) \
        if guaranteed else None
    metrics = base = None
    tick = time.perf_counter()
    if evaluate_profiles:
        tell("evaluating", 0, 2)
        metrics = jsonable(evaluate(context.full, composed, dtype=precision))
        tell("evaluating", 1, 2)
        base = jsonable(evaluate(context.full, context.table, dtype=precision))
        tell("evaluating", 2, 2)
    seconds["evaluate"] = time.perf_counter() - tick
    seconds["total"] = time.perf_counter() - start
    subgames = [{"path": list(s.path), "roots": len(s.roots), "player": g.player,
                 "gadget": g.kind.name, "nodes": low.num_nodes,
                 "infosets": sum(low.infosets_per_player), "nash_conv": nc,
                 "mass": g.total, "stack": groups[i]}
                for i, ((s, _), g, low, nc) in enumerate(zip(plans, gadgets, lowered,
                                                              nash_conv))]
    return ResolveResult(profile=profile, table=composed, blueprint_table=context.table,
                         lowered=context.full, subgames=subgames, skipped=skipped, bound=bound,
                         metrics=metrics, blueprint_metrics=base, seconds=seconds,
                         stacks=stacks)


def resolve(game, blueprint, at, *, gadget: str | GadgetKind = "resolve", algorithm="cfr+",
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


# -- helpers ----------------------------------------------------------------------------
def _solve_all(lowered: list[LoweredGame], algorithm, iterations, precision, batching,
               options, tell):
    """Solve every game, grouped into stacks; per game its table and NashConv."""
    groups = batch_groups([low.num_nodes for low in lowered], batching)
    tables: list[Any] = [None] * len(lowered)
    nash_conv = [0.0] * len(lowered)
    which = [0] * len(lowered)
    stacks = []
    for k, members in enumerate(groups):
        tell("solving subgames", k, len(groups))
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
    tell("solving subgames", len(groups), len(groups))
    return tables, nash_conv, stacks, which
