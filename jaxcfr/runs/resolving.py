"""A run's ``[resolve]`` section: re-solve subgames of the trained profile, write the result.

After training, :func:`resolve_after_training` re-solves the subgames the section names
against the run's (best) profile with :func:`jaxcfr.subgames.resolve_subgames`: in the
full game, with the run's abstraction (``game.abstraction``) for nested subgames. It
writes ``resolved.npz`` / ``resolved.json`` (the composed profile, a profile like any
other: ``jaxcfr eval`` reads it) and ``resolve.json`` (the report: the subgames, both
profiles' exact metrics, the safety bound, the timings). A public tree
(``tree='public'``) is re-solved on its public tree (:mod:`jaxcfr.subgames.public`;
``at`` public paths, ``after_chance`` counting public chance events).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from jaxcfr._util.atomic import atomic_write_text
from jaxcfr.engine.loop import lower_public_reporting, lower_reporting
from jaxcfr.game.registry import load_game
from jaxcfr.profiles.profile import Profile
from jaxcfr.runs.config import Config
from jaxcfr.subgames.closure import parse_path
from jaxcfr.subgames import Context, resolve_subgames, select
from jaxcfr.subgames.public import PublicContext, is_public, select_public
from jaxcfr.tensors import LoweredGame

__all__ = ["resolve_after_training"]


def resolve_after_training(run_path, config: Config, lowered: LoweredGame, profile: Profile,
                           log: Callable[[str], None], status=None) -> dict[str, Any]:
    """Re-solve ``config.resolve``'s subgames against ``profile`` (trained on ``lowered``);
    write ``resolved.npz`` and ``resolve.json`` into ``run_path``; return the report.
    ``status`` (optional, :class:`jaxcfr.runs.progress.Status`) shows lowering and the
    phases of re-solving (:meth:`~jaxcfr.runs.progress.Status.phase`)."""
    r = config.resolve
    game = config.game.name
    root = load_game(game)
    at = None if r.at is None else [parse_path(a) for a in r.at]
    if is_public(root):                   # re-solved on the public tree
        full = lower_public_reporting(root, status, text=game, cache=config.game.cache,
                                      name=game)
        context = PublicContext(root, profile, lowered=full)
        states = select_public(context, at=at, after_chance=r.after_chance,
                               at_depth=r.at_depth, off_menu=r.off_abstraction, by_text=True)
    else:
        full = lower_reporting(game, status, cache=config.game.cache,
                               sort_infosets=config.game.sort_infosets, name=game)
        abstraction = lowered if config.game.abstraction is not None else None
        context = Context(full, profile, root=root, abstraction=abstraction)
        states = select(context, at=at, after_chance=r.after_chance, at_depth=r.at_depth,
                        off_menu=r.off_abstraction, by_text=True)
    log(f"re-solving {len(states)} public states ({r.gadget}, {r.algorithm}, "
        f"{r.iterations} iterations)")
    result = resolve_subgames(full, profile, states, gadget=r.gadget, algorithm=r.algorithm,
                              iterations=r.iterations, depth_limit=r.depth_limit,
                              continuations=r.continuations, precision=config.run.precision,
                              batching=r.batching, context=context,
                              progress=None if status is None else status.phase)
    result.profile.game = game
    result.profile.save(run_path / "resolved.npz")
    report = result.report()
    report["public_states"] = len(states)
    atomic_write_text(run_path / "resolve.json", json.dumps(report, indent=1))
    name = report["metrics"]["metric_name"]
    log(f"re-solved: {name} {report['blueprint_metrics']['metric']:.6g} (blueprint) -> "
        f"{report['metrics']['metric']:.6g} ({run_path / 'resolved.npz'})")
    return report
