"""``jaxcfr resolve GAME PROFILE``: re-solve subgames of a blueprint and report both profiles.

The subgames are named by paths (``--at 0,1,call,call,2``, repeatable; labels compared as
text), by every public state after the K-th chance event (``--after-chance K``) or at a
depth (``--at-depth D``), or by every subgame after an action an abstraction dropped
(``--off-abstraction ABSTRACTION``: the blueprint was trained on it; nested re-solving).
A public tree (``leduc_poker(tree='public')``) is re-solved on its public tree
(:mod:`jaxcfr.subgames.public`): ``--at`` takes public paths (``call,call,2``: no private
deal), ``--after-chance K`` counts public chance events (public Leduc's second round: 1),
``--at-depth D`` public moves; ``--gadget resolve`` or ``unsafe``. A gadget game below
suit-isomorphic chance outcomes (a hold'em turn) runs on the merged tree where its gadget
keeps the symmetry (:mod:`jaxcfr.subgames.symmetry`); the ``isomorphism`` line (JSON
``merged_games``, ``unmerged``) says how many did, and why the others did not.
They are solved in stacked compiled runs (:func:`jaxcfr.subgames.resolve_subgames`) and
the blueprint's and the composed profile's exact metrics in the full game are printed;
``--out PATH`` saves the composed profile. :mod:`jaxcfr.cli.app` lists the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from jaxcfr._util import arguments

__all__ = ["add_resolve_arguments", "run_resolve", "isomorphism_line"]


def add_resolve_arguments(p: argparse.ArgumentParser) -> None:
    from jaxcfr._util.precision import PRECISIONS
    from jaxcfr.subgames.names import BATCHING, GADGETS
    p.add_argument("game", help="the full game (a game string or a .efg path; a public tree, "
                   "e.g. \"leduc_poker(tree='public')\", is re-solved at public nodes: public "
                   "paths, public chance events)")
    p.add_argument("profile", help="the blueprint: a saved profile (.npz / .json / stem) or a "
                   "run directory (its profile.npz)")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--at", action="append", metavar="PATH",
                       help="a path from the root, actions and chance outcomes separated by "
                            "commas (e.g. 0,1,call,call,2); repeat for more subgames")
    where.add_argument("--after-chance", type=int, metavar="K",
                       help="every public state that starts right after the K-th chance "
                            "event (Leduc's second round: 3)")
    where.add_argument("--at-depth", type=int, metavar="D",
                       help="every public state whose decisions lie D moves from the root")
    where.add_argument("--off-abstraction", metavar="ABSTRACTION",
                       help="every subgame after an action this abstraction (the blueprint's) "
                            "dropped, e.g. 'bet_menu(fractions=[0.5, 1.0])'")
    p.add_argument("--gadget", choices=GADGETS, default="resolve",
                   help="the gadget: resolve, maxmargin, reach (safe, two-player zero-sum) or "
                        "unsafe (default: resolve)")
    p.add_argument("--algorithm", default="cfr+", help="the preset that re-solves (default: cfr+)")
    p.add_argument("--iterations", type=int, default=1000,
                   help="iterations of every re-solve (default: 1000)")
    p.add_argument("--depth-limit", type=int, metavar="N",
                   help="cut every subgame N moves below its roots (frontier: blueprint values)")
    p.add_argument("--continuations", type=int, default=1, metavar="K",
                   help="with --depth-limit: the opponent picks among K continuation "
                        "strategies at the frontier (default: 1, the blueprint)")
    p.add_argument("--batching", choices=BATCHING, default="auto",
                   help="auto: one compiled run per group of similar sizes; one: all in one "
                        "run; each: one run per subgame game (default: auto)")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32")
    p.add_argument("--out", metavar="PATH", help="save the composed profile (PATH.npz + .json)")
    p.add_argument("--no-cache", action="store_true",
                   help="lower the game even if the cache of lowered games has it")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_resolve(args: argparse.Namespace) -> int:
    from jaxcfr.cli.options import heavy
    from jaxcfr.cli.train import require_profile
    from jaxcfr.solvers.names import resolve_algorithm
    resolve_algorithm(args.algorithm, "--algorithm")
    arguments.positive_int("--iterations", args.iterations)
    arguments.positive_int("--continuations", args.continuations)
    if args.depth_limit is not None:
        arguments.positive_int("--depth-limit", args.depth_limit)
    path = Path(args.profile)
    path = path / "profile.npz" if path.is_dir() else path
    require_profile(path)
    heavy()
    from jaxcfr.engine.loop import lower_reporting
    from jaxcfr.game.registry import load_game
    from jaxcfr.profiles.profile import Profile
    from jaxcfr.subgames.closure import parse_path
    from jaxcfr.subgames import Context, resolve_subgames, select
    from jaxcfr._util.bars import on_terminal
    from jaxcfr.runs.progress import make_status
    from jaxcfr.subgames.public import is_public
    blueprint = Profile.load(path)
    root = load_game(args.game)
    public = is_public(root)
    # on a terminal: lowering, the phases of re-solving and compiling as bars (a log file
    # gets the result lines only, as before)
    with make_status(quiet=not on_terminal(sys.stderr)) as status:
        if public:
            full, context, states = _public_context(args, root, blueprint, status)
        else:
            full = lower_reporting(args.game, status, cache=not args.no_cache, name=args.game)
            context = Context(full, blueprint, root=root, abstraction=args.off_abstraction)
            states = select(context, at=None if args.at is None else
                            [parse_path(a) for a in args.at], after_chance=args.after_chance,
                            at_depth=args.at_depth, off_menu=args.off_abstraction is not None,
                            by_text=True)
        result = resolve_subgames(full, blueprint, states, gadget=args.gadget,
                                  algorithm=args.algorithm, iterations=args.iterations,
                                  depth_limit=args.depth_limit,
                                  continuations=args.continuations, precision=args.precision,
                                  batching=args.batching, context=context,
                                  progress=status.phase)
    saved = None
    if args.out:
        result.profile.game = args.game
        saved = str(result.profile.save(args.out))
    report = result.report()
    out = {"game": args.game, "profile": str(path), "gadget": args.gadget,
           "algorithm": args.algorithm, "iterations": args.iterations,
           "public_states": len(states), "subgame_games": len(result.subgames),
           "blueprint": report["blueprint_metrics"], "resolved": report["metrics"],
           "bound": report["bound"], "seconds": report["seconds"], "stacks": report["stacks"],
           "skipped": len(result.skipped), "out": saved,
           "tree": "public" if public else "history",
           "merged_games": sum(bool(x.get("merged")) for x in result.subgames),
           "unmerged": [x["unmerged"] for x in result.subgames if x.get("unmerged")]}
    if args.json:
        print(json.dumps(out))
        return 0
    name = out["resolved"]["metric_name"]
    print(f"game            {args.game}")
    print(f"blueprint       {path}")
    print(f"subgames        {len(states)} public {'nodes' if public else 'states'}, "
          f"{len(result.subgames)} gadget games "
          f"({args.gadget}; {len(result.skipped)} re-solves with nothing to do), "
          f"{len(result.stacks)} compiled runs")
    print(f"{name:<15} {out['blueprint']['metric']:.6g} (blueprint) -> "
          f"{out['resolved']['metric']:.6g} (re-solved)")
    line = isomorphism_line(result.subgames)
    if line:
        print(f"isomorphism     {line}")
    if out["bound"] is not None:
        print(f"guarantee       at most {out['bound']:.3g} above the blueprint (safe gadget: "
              "the gadget games' NashConv times their mass)")
    print(f"time            {result.seconds['total']:.1f} s ({result.seconds['solve']:.1f} s "
          f"solving, {result.seconds['compile']:.1f} s of it compiling)")
    if saved:
        print(f"saved           {saved}")
    return 0


def isomorphism_line(subgames: list[dict]) -> str | None:
    """What the gadget games ``subgames`` (``ResolveResult.subgames``) did with the game's
    suit isomorphism: how many ran on merged trees, how many walked every chance outcome
    because they break the symmetry (and the first one's reason); ``None`` where no game
    could merge (a history tree, a game without merges, nothing merged below the nodes)."""
    merged = sum(bool(x.get("merged")) for x in subgames)
    broken = [x["unmerged"] for x in subgames if x.get("unmerged")]
    if not merged and not broken:
        return None
    line = f"{merged} of {len(subgames)} gadget games on merged trees (suit isomorphism)"
    if broken:
        line += (f"; {len(broken)} break the suit symmetry (every chance outcome walked): "
                 f"{broken[0]}")
    return line


def _public_context(args, root, blueprint, status):
    """A public tree's ``(lowered, PublicContext, public paths)`` for the command's flags
    (:func:`jaxcfr.subgames.public.select_public`)."""
    from jaxcfr.engine.loop import lower_public_reporting
    from jaxcfr.subgames.closure import parse_path
    from jaxcfr.subgames.public import PublicContext, select_public
    if args.depth_limit is not None:
        raise ValueError("--depth-limit is for history trees; a public subgame is re-solved "
                         "to the end")
    full = lower_public_reporting(root, status, text=args.game, cache=not args.no_cache,
                                  name=args.game)
    context = PublicContext(root, blueprint, lowered=full)
    paths = select_public(context, at=None if args.at is None else
                          [parse_path(a) for a in args.at], after_chance=args.after_chance,
                          at_depth=args.at_depth, off_menu=args.off_abstraction is not None,
                          by_text=True)
    return full, context, paths
