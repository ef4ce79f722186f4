"""``jaxcfr solve GAME``: solve a game with the options of :func:`jaxcfr.solve` and print the
metrics, one line each or one JSON object (:mod:`jaxcfr.cli.app` lists the command)."""

from __future__ import annotations

import contextlib
import argparse
import json
import sys

import numpy as np

from jaxcfr._util.arguments import ArgumentError, command_line_spelling, command_line_type, \
    positive_float
from jaxcfr._util.precision import PRECISIONS
from jaxcfr._util.serialize import jsonable
from jaxcfr.cli.options import GAME_HELP, add_cache_arguments, target_line

__all__ = ["add_solve_arguments", "run_solve"]


def add_solve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    from jaxcfr.solvers.names import ALIASES, ESTIMATOR_NAMES, PRESET_NAMES
    p.add_argument("--algorithm", default="cfr+",
                   help=f"one of {', '.join(PRESET_NAMES)}; any case, also spelled "
                        f"{', '.join(ALIASES)} (default: cfr+)")
    p.add_argument("--iterations", type=int, default=1000,
                   help="iterations to run (default: 1000)")
    add_parameter_arguments(p)
    order = p.add_mutually_exclusive_group()
    order.add_argument("--alternating", dest="alternating", action="store_true", default=None,
                       help="update the players one after the other (default: the preset's)")
    order.add_argument("--simultaneous", dest="alternating", action="store_false",
                       help="update all players at once")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32",
                   help="floating-point precision (default: float32)")
    p.add_argument("--eval-every", type=int, metavar="N",
                   help="evaluate and print the metrics every N iterations (default: only at "
                        "the end)")
    p.add_argument("--target", metavar="METRIC",
                   type=command_line_type(positive_float, "--target", float),
                   help="stop at the first evaluation (--eval-every) whose metric (the "
                        "exploitability, where the game has one; every member's in a batch) "
                        "is at or below METRIC: --iterations is then the most it runs "
                        "(jaxcfr train's --target)")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.add_argument("--sampling", choices=ESTIMATOR_NAMES, default="none",
                   help="the estimator: exact passes (none) or Monte Carlo (chance, external, "
                        "outcome); default: none")
    p.add_argument("--samples", type=int, default=1,
                   help="subtrees a sampling estimator draws per player and iteration "
                        "(default: 1)")
    p.add_argument("--counts", action="store_true",
                   help="run the samples as counts in one pass over the whole tree (its cost "
                        "does not grow with --samples; same expectation, less variance)")
    from jaxcfr.solvers.names import WALK_NAMES
    p.add_argument("--walk", choices=WALK_NAMES, default="levels",
                   help="how a sampling estimator's traversals one by one run: built level "
                        "by level, or walked depth first (compiles faster; other draws of "
                        "the same seed); default: levels (docs/mccfr.md)")
    p.add_argument("--pool", type=int, metavar="SLOTS",
                   help="with --walk depth: output slots a lane of the walks shares after "
                        "its walk (0: the static bound, no pool); default: sized by a probe "
                        "of random walks. The same tables whatever the pool: a step that "
                        "needs more runs further chunks (docs/mccfr.md 'The output pool')")
    from jaxcfr.engine.chance_options import CHANCE_CHOICES, DEFAULT_DRAWS
    p.add_argument("--chance", choices=CHANCE_CHOICES, default="auto",
                   help="lower the whole tree (exact), or let the host draw chance and lower "
                        "what follows (sampled); auto: exact where chance can be enumerated "
                        "(default: auto)")
    p.add_argument("--draws", type=int, default=DEFAULT_DRAWS,
                   help=f"chance draws per iteration under sampled chance (default: "
                        f"{DEFAULT_DRAWS})")
    p.add_argument("--grid", metavar="HISTORY",
                   help="a hold'em spot: print the 13x13 hand grid of the strategy at the "
                        "public node reached by HISTORY (actions and dealt cards separated "
                        "by commas, e.g. 'Check, Bet(60)'; '' the root)")
    p.add_argument("--grid-out", metavar="PATH",
                   help="write the --grid grid as CSV (PATH.csv: one row per combination), "
                        "JSON (PATH.json) or a picture (PATH.png, .svg, .pdf: one colour "
                        "band per action in each cell; needs matplotlib)")
    p.add_argument("--lock", metavar="FILE.json",
                   help="node locking: fix strategies at chosen information sets and solve "
                        "the rest (a JSON list of {\"infoset\": KEY, \"strategy\": "
                        "{ACTION: P}} or, on a public tree, {\"history\": [...], \"hand\": "
                        "\"AKs\", \"strategy\": {...}}; docs/holdem.md 'Node locking'); the "
                        "metrics are the restricted game's")
    p.add_argument("--boards", metavar="SPEC",
                   help="a hold'em spot on many boards, solved as one stack in one compiled "
                        "step, with a table of exploitability per board: "
                        "river:TURN (every river card, river:Td9d6h5c), turn:FLOP, "
                        "random:COUNT[:CARDS[:SEED]] or boards separated by commas; the "
                        "game's own board is replaced (docs/holdem.md 'Stacks of boards')")
    p.add_argument("--per-board", metavar="NAME=X,X,...", action="append", default=[],
                   help="with --boards: one value of the solver's parameter NAME per board, "
                        "in the order of --boards, in the same compiled step (e.g. "
                        "--per-board alpha=1.5,2,3 on three boards; repeatable; a parameter "
                        "given as --NAME X is every board's)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (lowering, compiling, iterating)")
    add_cache_arguments(p)


def add_parameter_arguments(p: argparse.ArgumentParser) -> None:
    """One option per traced parameter the algorithm and estimator choices declare
    (:func:`jaxcfr.solvers.presets.named_parameters`) and ``--seed``, named and described
    by the declarations; a comma-separated list is a batch run by one compiled step.

    The declarations live with the solvers (they import JAX): unless the parser is built
    to show its help (``p.describe``, set by :func:`jaxcfr.cli.app.build_parser` when the
    line asks for ``--help``), the options are made from their JAX-free names
    (:data:`jaxcfr.solvers.names.PARAMETER_NAMES`) with a short help, so that a mistake on
    the line is answered before JAX is imported."""
    group = p.add_argument_group("the solver's parameters (a list 1,1.5,2: a batch of "
                                 "settings run by one compiled step)")
    if not getattr(p, "describe", True):
        from jaxcfr.solvers.names import PARAMETER_NAMES
        for name in PARAMETER_NAMES:
            group.add_argument(command_line_spelling(name), type=_numbers, metavar="X[,X...]",
                               help="a parameter of the algorithm or the estimator")
        group.add_argument("--seed", type=_numbers, metavar="S[,S...]", help="PRNG seed")
        return
    from jaxcfr.solvers.presets import named_parameters
    from jaxcfr.solvers.solver import SEED
    for name, takers in named_parameters().items():
        group.add_argument(command_line_spelling(name), type=_numbers, metavar="X[,X...]",
                           help=_parameter_help(takers))
    group.add_argument("--seed", type=_numbers, metavar="S[,S...]",
                       help=f"{SEED.doc} (default: {SEED.default})")


def _parameter_help(takers) -> str:
    """A parameter's help from its declarations: each meaning with who takes it, then the
    default (one value, or the preset's)."""
    from jaxcfr.solvers.parameters import shown
    docs: dict[str, list[str]] = {}
    for who, p in takers:
        docs.setdefault(p.doc, []).append(who)
    defaults = {p.default for _, p in takers}
    default = shown(defaults.pop()) if len(defaults) == 1 else "the preset's"
    return "; ".join(f"{doc} ({', '.join(who)})" for doc, who in docs.items()) + \
        f"; default: {default} (README 'Algorithms')"


def _numbers(text: str):
    """``"1.5"`` -> 1.5, ``"1,2"`` -> [1, 2] (integers stay integers)."""
    def number(x: str):
        x = x.strip()
        try:
            return int(x)
        except ValueError:
            return float(x)
    try:
        items = [number(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or numbers separated by commas "
                                         f"(1,1.5,2), got {text!r}") from None
    return items if "," in text else items[0]


@contextlib.contextmanager
def _lock_blamed(path: str | None):
    """A :class:`~jaxcfr.solvers.locking.LockError` of the game's rows (an unknown
    information set, hand or action) names the ``--lock`` file it came from."""
    try:
        yield
    except ValueError as e:
        from jaxcfr.api.locks import LockError, lock_blamed
        if path is None or not isinstance(e, LockError):
            raise
        raise LockError(lock_blamed(f"--lock {path}", str(e)), "--lock") from None


def run_solve(args) -> int:
    from jaxcfr._util.arguments import draws, optional_positive_int, output_file, \
        positive_int, stop_target
    from jaxcfr.cli.options import heavy
    from jaxcfr.solvers.names import (PARAMETER_NAMES, check_named_parameters, check_walk,
                                      resolve_algorithm)
    # what can be checked without JAX first (the names as given on the line, the
    # parameters' names and values by their declared rules); the rest (the estimator's
    # options) by the API's rules below
    algorithm = resolve_algorithm(args.algorithm, "--algorithm")
    positive_int("--iterations", args.iterations)
    optional_positive_int("--eval-every", args.eval_every)
    stop_target("--target", args.target, "--eval-every", args.eval_every)
    positive_int("--samples", args.samples)
    draws("--draws", args.draws)
    check_walk(args.sampling, args.counts, args.walk, args.pool, command_line_spelling)
    check_named_parameters(algorithm, {name: getattr(args, name) for name in
                                       PARAMETER_NAMES + ("seed",)},
                           args.sampling, args.samples, args.counts, command_line_spelling)
    if args.workers is not None:
        positive_int("--workers", args.workers)
    boards = None
    if args.per_board and args.boards is None:
        raise ArgumentError("--per-board gives one value per board of --boards: give "
                            "--boards too", argument="--per-board")
    if args.boards is not None:                 # spec and spot checked, spots built: no JAX
        from jaxcfr.cli.boards import boards_spots, per_board_settings
        boards, spots = boards_spots(args)
        per_board = per_board_settings(args.per_board, boards, algorithm,
                                       {name: getattr(args, name) for name in
                                        PARAMETER_NAMES + ("seed",)})
    heavy()
    from jaxcfr.api.solve import LoadOptions, Report, SolveOptions, solve_with
    from jaxcfr.engine.chance import Chance
    from jaxcfr.runs.progress import (format_metric, make_progress, make_status, pot_of,
                                      pot_percent)
    from jaxcfr.solvers.estimators import make_estimator
    from jaxcfr.solvers.presets import named_parameters
    # every argument is checked before the (possibly long) lowering, by the rules the API
    # uses, and named as given here (--samples, not samples); the names are solve()'s
    spell = command_line_spelling
    lock = None
    if args.lock is not None:
        from jaxcfr.api.locks import read_lock_file
        lock = read_lock_file(args.lock)            # (LockError: blames --lock)
    parameters = {name: getattr(args, name) for name in list(named_parameters()) + ["seed"]}
    if boards is not None:
        from jaxcfr.cli.boards import run_boards
        with _lock_blamed(args.lock):
            return run_boards(args, boards, spots, parameters, lock, per_board)
    options = SolveOptions.check({
        "algorithm": args.algorithm, "iterations": args.iterations,
        "estimator": make_estimator(args.sampling, args.samples, spell, args.counts,
                                    args.walk, args.pool),
        "chance": Chance(args.chance, args.draws), "alternating": args.alternating,
        "eval_every": args.eval_every, "target": args.target, "precision": args.precision,
        "load": LoadOptions(cache=not args.no_cache, workers=args.workers),
        "lock": lock, "parameters": parameters}, spell)

    def report(m):
        if not args.json:
            e = m.get("exploitability")
            share = f"  ({pot_percent(e, pot)} of the pot)" if pot is not None and \
                isinstance(e, float) else ""
            print(f"iteration {m['iteration']:>8}  {format_metric(m)}{share}", flush=True)

    from jaxcfr.api.public import public_game_of
    if args.grid_out is not None and args.grid is None:
        raise ArgumentError("--grid-out writes the grid of --grid: give --grid too",
                            argument="--grid-out")
    from jaxcfr_games.holdem.grid_plot import FORMATS as PICTURES    # (NumPy only)
    formats = (".csv", ".json", *PICTURES)
    if args.grid_out is not None and not args.grid_out.lower().endswith(formats):
        raise ArgumentError(f"--grid-out is written as {', '.join(formats)}, got "
                            f"{args.grid_out!r}", argument="--grid-out")
    if args.grid_out is not None:              # before the solve whose grid it receives
        output_file("--grid-out", args.grid_out)
    history = None
    if args.grid is not None:
        from jaxcfr_games.holdem.grid import parse_history
        try:
            history = parse_history(args.grid)
        except ValueError as e:
            raise ArgumentError(f"--grid: {e}", argument="--grid") from None
    game = public_game_of(args.game) or args.game   # loaded once if it is a public tree
    if history is not None and pot_of(game) is None:
        raise ArgumentError(f"--grid: {args.game!r} is not a hold'em spot", argument="--grid")
    if history is not None and hasattr(game, "clone"):   # a PublicGame: walked, not solved
        from jaxcfr_games.holdem.grid import check_history
        try:
            check_history(game, history)
        except ValueError as e:
            raise ArgumentError(f"--grid: {e}", argument="--grid") from None
    pot = pot_of(game)
    display = make_progress(args.iterations, quiet=args.quiet, stream=sys.stderr, pot=pot)
    try:
        with make_status(quiet=args.quiet, stream=sys.stderr) as status:
            with _lock_blamed(args.lock):
                result = solve_with(game, options, Report(report, display, status),
                                    spell=spell)
    finally:
        display.close()
    final = result.final
    out = {"game": args.game, "algorithm": result.solver.name, "iterations": args.iterations,
           "alternating": result.solver.alternating, "sampling": result.solver.estimator.name,
           **sampled_traversals(result.solver.estimator),
           "chance": result.chance, "seed": options.parameters.get("seed", 0),
           "exploitability": final["exploitability"], "nash_conv": final["nash_conv"],
           "values": final["values"], "best_response_values": final["best_response_values"],
           "members": final["members"],
           "seconds": result.seconds, "compile_seconds": result.compile_seconds,
           "iterations_per_second": result.iterations_per_second,
           "iteration": final["iteration"]}
    if args.target is not None:               # where it stopped: final["iteration"]
        out["target"] = args.target
        out["reached_target"] = result.reached_target
        out["metric"] = final["metric"]       # what was compared (as the device computed it)
    if args.lock is not None:                 # the metrics are the restricted game's
        out["lock"] = args.lock
    if pot is not None:                       # a poker spot: also in percent of the pot
        out["pot"] = pot
        out["values_pot_percent"] = (100 * np.asarray(final["values"]) / pot).tolist()
        if final["exploitability"] is not None:
            out["exploitability_pot_percent"] = \
                (100 * np.asarray(final["exploitability"]) / pot).tolist()
    grid = None
    if history is not None:
        from jaxcfr_games.holdem.grid import hand_grid
        try:
            grid = hand_grid(result, history)
        except ValueError as e:
            raise ArgumentError(f"--grid: {e}", argument="--grid") from None
        out["grid"] = grid.to_json()
        if args.grid_out is not None:
            grid.write(args.grid_out)
    if result.chance == "sampled":
        out["draws"] = args.draws
        out["sampled_chance"] = result.sampled_chance
        if final["estimates"] is not None:
            out["estimates"] = final["estimates"]       # "estimate": true inside
    if args.json:
        print(json.dumps(jsonable(out)))
    elif final["members"]:                      # a batch of seeds: one line per seed
        name = final["metric_name"]
        width = max(len(m) for m in final["members"])
        print(f"{'member':<{width}}  {name:>14}  values")
        for m, label in enumerate(final["members"]):
            value = final["metric"][m]
            print(f"{label:<{width}}  {'n/a' if value is None else f'{value:.6g}':>14}  "
                  + ", ".join(f"{v:.6f}" for v in final["values"][m]))
        print(f"speed           {result.iterations_per_second:,.1f} iterations/s, all members "
              f"(compile {result.compile_seconds:.2f} s)")
        if args.target is not None:
            print(target_line(result.reached_target, final, args.target, several=True))
    else:
        values = ", ".join(f"{v:.6f}" for v in np.asarray(final["values"]).reshape(-1))
        est = final["estimates"]
        if est is not None:                 # chance that cannot be enumerated: estimates
            pct = f"{100 * est['confidence']:g}%"
            print(f"values          {values}  (estimates, {pct} intervals: "
                  + ", ".join(f"[{a:.4f}, {b:.4f}]" for a, b in est["values_interval"]) + ")")
            for p, (g, (a, b)) in enumerate(zip(est["gain_lower_bound"], est["gain_interval"])):
                print(f"gain p{p}         at least {g:.4g} ({pct} interval [{a:.4g}, {b:.4g}]; "
                      f"in-sample {est['gain_in_sample'][p]:.4g})")
            print(f"estimates       {est['samples']} held-out draws, best responses fitted on "
                  f"{est['train_samples']}; estimates, not exact values")
        elif pot is not None:
            print(f"values          {values} chips  ("
                  + ", ".join(pot_percent(v, pot) for v in np.asarray(final["values"]).reshape(-1))
                  + f" of the pot {pot:g})")
        else:
            print(f"values          {values}")
        if final["exploitability"] is not None:
            print(f"exploitability  {float(final['exploitability']):.6g}"
                  + ("" if pot is None else
                     f" chips  ({pot_percent(float(final['exploitability']), pot)} of the "
                     "pot)"))
        if final["nash_conv"] is not None:
            print(f"nash_conv       {float(np.asarray(final['nash_conv']).reshape(-1)[0]):.6g}")
        if args.target is not None:
            print(target_line(result.reached_target, final, args.target))
        if args.lock is not None:
            print(f"lock            {args.lock} (metrics of the restricted game: the locked "
                  "rows cannot deviate)")
        if result.chance == "sampled":
            sc = result.sampled_chance
            print(f"sampled chance  {args.draws} draws per iteration, {sc['rows']:,} rows, "
                  f"{sc['draws_per_host_second'] or 0:,.0f} draws per host second, device "
                  f"waiting {100 * sc['device_wait_fraction']:.0f}% of the time")
        print(f"speed           {result.iterations_per_second:,.1f} iterations/s "
              + ("(compiled within the first chunks)" if result.chance == "sampled" else
                 f"(compile {result.compile_seconds:.2f} s)"))
        if grid is not None:
            print()
            print(grid.text())
    return 0


def sampled_traversals(estimator) -> dict:
    """``samples``, ``counts``, ``walk`` and ``pool`` (``None``: probed) of a sampling
    estimator (nothing for the exact one)."""
    from jaxcfr.solvers.estimators import MonteCarlo
    if not isinstance(estimator, MonteCarlo):
        return {}
    return {"samples": estimator.samples, "counts": estimator.counts, "walk": estimator.walk,
            "pool": estimator.pool}
