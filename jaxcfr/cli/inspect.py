"""``jaxcfr inspect GAME``: lower a game (or load it from the cache) and print its sizes
(:mod:`jaxcfr.cli.app` lists the command); a public tree (``tree='public'``) is lowered
as one (:mod:`jaxcfr.lowering.public`)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from jaxcfr._util.serialize import jsonable
from jaxcfr.cli.options import GAME_HELP, add_cache_arguments, lower_for_cli

__all__ = ["add_inspect_arguments", "run_inspect"]


def add_inspect_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-sort", action="store_true",
                   help="keep first-met information-set order (default: Gambit's canonical order)")
    add_cache_arguments(p)


def run_inspect(args) -> int:
    from jaxcfr.runs.progress import make_status
    start, report = time.perf_counter(), {}
    # inspect prints its own summary: the status line only where it is redrawn in place
    from jaxcfr.api.public import public_game_of
    public = public_game_of(args.game)
    with make_status(quiet=not sys.stderr.isatty(), stream=sys.stderr) as status:
        if public is not None:                  # a public tree (docs/public_trees.md)
            from jaxcfr.engine.loop import lower_public_reporting
            lowered = lower_public_reporting(public, status, text=args.game,
                                             cache=not args.no_cache, report=report,
                                             name=args.game)
        else:
            lowered = lower_for_cli(args, status, sort=not args.no_sort, report=report)
    seconds = time.perf_counter() - start
    cached = report["cache"]
    sizes = lowered.sizes()
    sizes["seconds"] = seconds
    sizes["players"] = lowered.num_players
    sizes["nodes_per_second"] = sizes["nodes"] / seconds if seconds > 0 else None
    sizes["cache"] = cached
    if args.json:
        print(json.dumps({"game": args.game, **jsonable(sizes)}))
    else:
        what = "loading time " if cached.startswith("hit") else "lowering time"
        print(f"game            {args.game}")
        print(f"players         {lowered.num_players}")
        print(f"nodes           {sizes['nodes']:,}"
              + (" (public tree)" if public is not None else ""))
        if public is not None:
            print(f"hands           {', '.join(map(str, sizes['hands']))} (per player; "
                  f"{sizes['terminals']} terminals)")
        print(f"infosets        {', '.join(f'{n:,}' for n in sizes['infosets'])} (per player)")
        print(f"max actions     {sizes['max_actions']}")
        print(f"depth           {sizes['depth']}")
        print(f"tensor bytes    {sizes['bytes']:,}")
        print(f"{what}   {seconds:.3f} s ({sizes['nodes_per_second'] or 0:,.0f} nodes/s)")
        print(f"cache           {cached}")
    return 0
