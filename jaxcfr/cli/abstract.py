"""``jaxcfr abstract GAME --abstraction A --bucketing B ...``: train abstractions, lift, compare.

Each ``--abstraction`` (an action abstraction, a bucketing, or ``"A + B"``) and each
``--bucketing`` is a member; several members are one stacked, compiled run
(:func:`jaxcfr.train_abstracted`). Prints, per member, the abstracted game's size, its
metric inside the abstraction, and the exact full-game metric of the profile lifted
by elimination and (where the abstraction translates) by translation
(:func:`jaxcfr.format_table`). :mod:`jaxcfr.cli.app` lists the command.
"""

from __future__ import annotations

import argparse
import json
import sys

from jaxcfr._util import arguments

__all__ = ["add_abstract_arguments", "run_abstract"]


def add_abstract_arguments(p: argparse.ArgumentParser) -> None:
    from jaxcfr._util.precision import PRECISIONS
    p.add_argument("game", help="the full game (its chance must be enumerable)")
    p.add_argument("--abstraction", action="append", default=[], metavar="A",
                   help="an abstraction string: bet_menu(fractions=[0.5, 1.0]), "
                        "suit_isomorphism, rank_buckets(buckets=4), \"A + B\", module:Class "
                        "(repeatable: a batch)")
    p.add_argument("--bucketing", action="append", default=[], metavar="B",
                   help="a bucketing for every abstraction (or, repeated, a batch of "
                        "bucketings)")
    p.add_argument("--algorithm", default="cfr+", help="the solver (default: cfr+)")
    p.add_argument("--iterations", type=int, default=1000,
                   help="iterations to run (default: 1000)")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32",
                   help="floating-point precision (default: float32)")
    p.add_argument("--no-translate", action="store_true",
                   help="lift by elimination only (default: also by translation where the "
                        "abstraction translates)")
    p.add_argument("--imperfect-recall", action="store_true",
                   help="accept bucketings that make players forget")
    p.add_argument("--out", metavar="PATH",
                   help="save the lifted profile of the best member (PATH.npz + PATH.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_abstract(args: argparse.Namespace) -> int:
    from jaxcfr.cli.options import heavy
    arguments.positive_int("--iterations", args.iterations)
    abstraction, bucketing = args.abstraction, args.bucketing
    if not abstraction and not bucketing:
        raise ValueError("give at least one --abstraction or --bucketing")
    if len(abstraction) > 1 and len(bucketing) > 1:
        raise ValueError("give several --abstraction or several --bucketing, not both "
                         "(a batch has one kind of members)")
    heavy()
    from jaxcfr._util.bars import on_terminal
    from jaxcfr.api.blueprint import format_table, train_abstracted
    from jaxcfr.api.solve import Report
    from jaxcfr.runs.progress import make_progress, make_status
    # on a terminal: lowering the full game and each member (bucketing every information
    # set), compiling, training and lifting as bars; a log file gets the result only
    quiet = not on_terminal(sys.stderr)
    display = make_progress(args.iterations, quiet=quiet, stream=sys.stderr)
    try:
        with make_status(quiet=quiet, stream=sys.stderr) as status:
            results = train_abstracted(
                args.game, _one_or_list(abstraction), args.algorithm, args.iterations,
                precision=args.precision, bucketing=_one_or_list(bucketing),
                translate=False if args.no_translate else None,
                imperfect_recall=args.imperfect_recall, status=status,
                report=Report(progress=display, status=status))
    finally:
        display.close()
    results = results if isinstance(results, list) else [results]
    best = min(results, key=lambda r: float("inf") if r.row["full_game_metric"] is None
               else r.row["full_game_metric"])
    saved = None
    if args.out:
        best.profile.game = args.game
        saved = str(best.profile.save(args.out))
    if args.json:
        print(json.dumps({"game": args.game, "algorithm": args.algorithm,
                          "iterations": args.iterations, "rows": [r.row for r in results],
                          "solve_seconds": results[0].solve.seconds,
                          "compile_seconds": results[0].solve.compile_seconds,
                          "saved": saved}))
        return 0
    print(format_table(results))
    s = results[0].solve
    print(f"{args.algorithm}, {args.iterations} iterations: {s.seconds:.1f} s "
          f"({s.iterations_per_second:,.0f} it/s, compile {s.compile_seconds:.1f} s)"
          + ("" if len(results) == 1 else f", {len(results)} members in one stacked run"))
    if saved:
        print(f"lifted profile of {best.label}: {saved}")
    return 0


def _one_or_list(values: list):
    return None if not values else values[0] if len(values) == 1 else values
