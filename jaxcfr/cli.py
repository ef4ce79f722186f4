"""The ``jaxcfr`` command line: validate, inspect, solve (and train / eval, see runs).

Errors are printed as one line (``jaxcfr: error: ...``) with a non-zero exit
status; ``--traceback`` (or ``JAXCFR_TRACEBACK=1``) shows the Python traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Callable, Sequence

import numpy as np

from jaxcfr.precision import PRECISIONS
from jaxcfr.runs.cli import add_eval_arguments, add_train_arguments, run_eval, run_train
from jaxcfr.serialize import jsonable

__all__ = ["main", "build_parser", "COMMANDS"]

#: name -> (add_arguments(parser), run(args) -> exit status, help).
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int], str]] = {}


# -- validate -------------------------------------------------------------
def _validate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="registered name (kuhn_poker, leduc_poker(ranks=4)), "
                   "module:Class, or a .efg path")
    p.add_argument("--trajectories", type=int, default=256, help="random trajectories (256)")
    p.add_argument("--seed", type=int, default=0)


def _validate(args) -> int:
    from jaxcfr.budget import default_memory_budget, describe_fit
    from jaxcfr.registry import load_game
    from jaxcfr.size import estimate_size
    from jaxcfr.validate import validate_game_with
    game = load_game(args.game)
    validate_game_with(game, trajectories=args.trajectories, seed=args.seed)
    print(f"{args.game}: conforms ({args.trajectories} trajectories, seed {args.seed})")
    size = estimate_size(game)
    if size is None:
        print(f"{args.game}: size not estimated (a random probe met chance that cannot be "
              "enumerated, or the game failed on it: `jaxcfr inspect` lowers it and says)")
    else:
        print(f"{args.game}: {describe_fit(size, game.num_players, default_memory_budget())[1]}")
    return 0


COMMANDS["validate"] = (_validate_args, _validate, "probe a game's contract on random trajectories")


# -- inspect --------------------------------------------------------------
def _inspect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="game string or .efg path")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-sort", action="store_true", help="keep first-met information-set order")
    _cache_args(p)


def _cache_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="walk the game even if the cache of lowered games has it "
                        "(~/.cache/jaxcfr/lowered; JAXCFR_NO_CACHE=1 turns it off)")
    p.add_argument("--workers", type=int, help="processes that walk the tree "
                   "(default: all cores for a large game)")


def _lower_for_cli(args, sort: bool = True):
    """``args.game`` lowered through the cache (unless --no-cache), with progress on stderr;
    returns ``(lowered, cache status)``."""
    from jaxcfr import cache
    from jaxcfr.lowering import lower
    from jaxcfr.registry import load_game
    from jaxcfr.runs.progress import LoweringProgress
    display = LoweringProgress(sys.stderr)
    options = dict(sort_infosets=sort, name=args.game, progress=display, log=display.log,
                   workers=args.workers)
    try:
        directory = None if args.no_cache else cache.resolve(True)
        if directory is None:
            return lower(load_game(args.game), **options), "off"
        return cache.lower_cached(args.game, directory, lambda g: lower(g, **options),
                                  name=args.game, sort=sort, log=display.log)
    finally:
        display.close()


def _inspect(args) -> int:
    start = time.perf_counter()
    lowered, cached = _lower_for_cli(args, sort=not args.no_sort)
    seconds = time.perf_counter() - start
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
        print(f"nodes           {sizes['nodes']:,}")
        print(f"infosets        {', '.join(f'{n:,}' for n in sizes['infosets'])} (per player)")
        print(f"max actions     {sizes['max_actions']}")
        print(f"depth           {sizes['depth']}")
        print(f"tensor bytes    {sizes['bytes']:,}")
        print(f"{what}   {seconds:.3f} s ({sizes['nodes_per_second'] or 0:,.0f} nodes/s)")
        print(f"cache           {cached}")
    return 0


COMMANDS["inspect"] = (_inspect_args, _inspect, "lower a game and print its sizes")


# -- solve ----------------------------------------------------------------
def _solve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help="game string or .efg path")
    from jaxcfr.solvers import ALGORITHMS, HYPERPARAMETERS
    p.add_argument("--algorithm", default="cfr+",
                   help=f"{', '.join(ALGORITHMS)} (default cfr+)")
    p.add_argument("--iterations", type=int, default=1000)
    for name in HYPERPARAMETERS:
        p.add_argument(f"--{name}", type=float, help="override the preset's default")
    order = p.add_mutually_exclusive_group()
    order.add_argument("--alternating", dest="alternating", action="store_true", default=None)
    order.add_argument("--simultaneous", dest="alternating", action="store_false")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32")
    p.add_argument("--eval-every", type=int, help="print metrics every N iterations")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    _cache_args(p)


def _solve(args) -> int:
    from jaxcfr.api import solve
    if args.iterations < 1:
        raise ValueError("--iterations must be at least 1")

    def report(m):
        if not args.json:
            print(f"iteration {m['iteration']:>8}  {m['metric_name']} {float(m['metric']):.6g}",
                  flush=True)

    lowered, _ = _lower_for_cli(args)
    result = solve(lowered, args.algorithm, args.iterations, eval_every=args.eval_every,
                   alternating=args.alternating, alpha=args.alpha, beta=args.beta,
                   gamma=args.gamma, precision=args.precision, callback=report)
    final = result.final
    out = {"game": args.game, "algorithm": result.solver.name, "iterations": args.iterations,
           "alternating": result.solver.alternating,
           "exploitability": final["exploitability"], "nash_conv": final["nash_conv"],
           "values": final["values"], "best_response_values": final["best_response_values"],
           "seconds": result.seconds, "compile_seconds": result.compile_seconds,
           "iterations_per_second": result.iterations_per_second}
    if args.json:
        print(json.dumps(jsonable(out)))
    else:
        values = ", ".join(f"{v:.6f}" for v in np.asarray(final["values"]).reshape(-1))
        print(f"values          {values}")
        if final["exploitability"] is not None:
            print(f"exploitability  {float(final['exploitability']):.6g}")
        print(f"nash_conv       {float(np.asarray(final['nash_conv']).reshape(-1)[0]):.6g}")
        print(f"speed           {result.iterations_per_second:,.1f} iterations/s "
              f"(compile {result.compile_seconds:.2f} s)")
    return 0


COMMANDS["solve"] = (_solve_args, _solve, "solve a game and print metrics")
COMMANDS["train"] = (add_train_arguments, run_train,
                     "train from a TOML run config (checkpoints, metrics, plot)")
COMMANDS["eval"] = (add_eval_arguments, run_eval,
                    "exploitability / NashConv and values of a saved profile")


# -- entry point ----------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxcfr", description=__doc__.splitlines()[0])
    parser.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (add_args, _, help_text) in COMMANDS.items():
        add_args(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``jaxcfr COMMAND ...``: returns the exit status (0 done, 2 error, 130 interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return _execute(COMMANDS[args.command][1], args, "jaxcfr", args.traceback)


def train_script(argv: Sequence[str] | None = None, *, default_config: str | None = None,
                 prog: str = "train.py") -> int:
    """``train.py [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR] [--quiet]``."""
    parser = argparse.ArgumentParser(prog=prog, description="Train from a run config "
                                     "(TOML); see docs/runs.md.")
    add_train_arguments(parser, default_config=default_config)
    parser.add_argument("--traceback", action="store_true", help="show tracebacks on errors")
    args = parser.parse_args(argv)
    return _execute(run_train, args, prog, args.traceback)


def _execute(run: Callable[[argparse.Namespace], int], args: argparse.Namespace, prog: str,
             traceback: bool) -> int:
    """Run a command; errors become one line on stderr (the traceback only on request)."""
    show_tb = traceback or os.environ.get("JAXCFR_TRACEBACK") == "1"
    if getattr(args, "command", "train") in ("solve", "train", "eval"):
        from jaxcfr.engine import enable_compilation_cache
        enable_compilation_cache()
    try:
        return int(run(args) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - one line for the user, traceback on request
        if show_tb:
            raise
        from jaxcfr.game import GameError
        kind = "error" if isinstance(e, (GameError, ValueError, OSError, KeyError)) else \
            f"internal error ({type(e).__name__})"
        print(f"{prog}: {kind}: {e}", file=sys.stderr)
        return 2
