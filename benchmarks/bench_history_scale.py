"""A big history-tree game, lowered and solved to a target exploitability (issue 32, item 6).

One process: lower the game (default ``liars_dice(sides=9)``: 42,467,257 nodes, 2,359,296
information sets), report the lowering's CPU seconds and peak resident memory per node,
then solve it with a preset (default ``dcfr``) on the default value kernel (the sequence
form), evaluating the exploitability of the average strategy every ``--every`` iterations
until it is at or below ``--target`` (default 1e-3) or ``--max-iterations`` are run.

Prints one JSON line per check and a summary line (the last line), each a JSON object:

* first, ``{"phase": "lowering", "game", "nodes", "infosets", "lowering_cpu_s",
  "lowering_peak_bytes", "lowering_peak_per_node"}``: CPU seconds of this process and its
  workers; the peak is the process's highest RSS (``ru_maxrss``) during lowering above its
  RSS after importing jaxcfr and loading the game (a fresh process: ``python
  benchmarks/bench_history_scale.py``; called in a process that was larger before, the
  figure is a lower bound of nothing useful);
* per check, ``{"phase": "check", "iteration", "exploitability", "solve_cpu_s",
  "evaluate_cpu_s", "rss_bytes"}``: cumulative CPU seconds of the iterations (the compile
  excluded) and of the evaluations so far;
* last, ``{"phase": "summary", ..., "reached", "iterations", "exploitability",
  "compile_cpu_s", "solve_cpu_s", "evaluate_cpu_s", "cpu_s_per_iteration",
  "cpu_s_per_iteration_with_evaluation", "process_peak_bytes"}``.

CPU seconds, not wall: the project's machine is shared (give ``uptime``'s load beside the
figures). ``liars_dice(sides=9)`` needs 15 CPU-minutes and peaked at 7.84 GB before the
sequence tables were built narrow (about 6.6 GB expected since, not measured; docs/lowering.md
"Liar's dice with nine sides, solved"); ``--sides 4`` runs in seconds.

Usage::

    python benchmarks/bench_history_scale.py                       # liars_dice(sides=9), dcfr
    python benchmarks/bench_history_scale.py --sides 7 --every 25
    python benchmarks/bench_history_scale.py --game "goofspiel(cards=5)" --preset cfr+
"""

from __future__ import annotations

import argparse
import json
import time

from benchkit.arguments import TARGET, checked_game, checked_preset, count
from benchkit.memory import peak_rss, rss
from benchkit.timing import cpu_seconds

__all__ = ["main"]


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", help="a game spec (default liars_dice(sides=SIDES))")
    parser.add_argument("--sides", type=count("--sides"), default=9,
                        help="liar's dice sides (default 9)")
    parser.add_argument("--preset", default="dcfr", help="solver preset (default dcfr)")
    parser.add_argument("--target", type=TARGET, default=1e-3,
                        help="stop at this exploitability or below (default 1e-3)")
    parser.add_argument("--every", type=count("--every"), default=25,
                        help="iterations between evaluations (default 25)")
    parser.add_argument("--max-iterations", type=count("--max-iterations"), default=2000,
                        help="stop after this many iterations (default 2000)")
    parser.add_argument("--workers", type=int, default=None,
                        help="lowering workers (default: the library's choice)")
    parser.add_argument("--precision", default="float32", choices=("float32", "float64"))
    args = parser.parse_args(argv)
    checked_preset(parser, "--preset", args.preset)         # before the (long) lowering
    checked_game(parser, "--game", args.game or f"liars_dice(sides={args.sides})")
    return args


def main(argv=None, emit=print) -> list[dict]:
    """Run the benchmark with command-line arguments ``argv``; each record goes to ``emit``
    as one JSON line, and the records are returned (lowering, checks, summary)."""
    args = _arguments(argv)
    import gc

    import jax

    import jaxcfr

    records = []

    def report(record):
        records.append(record)
        emit(json.dumps(record))

    spec = args.game or f"liars_dice(sides={args.sides})"
    game = jaxcfr.load_game(spec)
    gc.collect()
    base = rss()
    start = cpu_seconds(children=True)
    lowered = jaxcfr.lower(game, name=spec, workers=args.workers)
    lowering_cpu = cpu_seconds(children=True) - start
    lowering_peak = max(peak_rss() - base, 0)
    nodes = lowered.num_nodes
    report({"phase": "lowering", "game": spec, "nodes": nodes,
            "infosets": lowered.num_rows - 1, "lowering_cpu_s": round(lowering_cpu, 1),
            "lowering_peak_bytes": lowering_peak,
            "lowering_peak_per_node": round(lowering_peak / nodes, 1)})

    solver = jaxcfr.make_solver(args.preset)
    runner = jaxcfr.Runner(lowered, solver, precision=args.precision, chunk=args.every,
                           compilation_cache=False)
    solve_cpu = evaluate_cpu = 0.0
    exploitability = float("inf")
    iteration = 0
    with runner:
        start = cpu_seconds(children=True)
        state, _ = runner.compile(runner.init())
        compile_cpu = cpu_seconds(children=True) - start
        while iteration < args.max_iterations:
            step = min(args.every, args.max_iterations - iteration)
            start = cpu_seconds(children=True)
            state = jax.block_until_ready(runner.advance(state, step))
            solve_cpu += cpu_seconds(children=True) - start
            iteration += step
            start = cpu_seconds(children=True)
            metrics = runner.evaluate(state)
            value = metrics["exploitability"]
            if value is None:
                value = metrics["nash_conv"]
            exploitability = float(value)
            evaluate_cpu += cpu_seconds(children=True) - start
            report({"phase": "check", "iteration": iteration,
                    "exploitability": exploitability, "solve_cpu_s": round(solve_cpu, 3),
                    "evaluate_cpu_s": round(evaluate_cpu, 3), "rss_bytes": rss()})
            if exploitability <= args.target:
                break
    report({"phase": "summary", "game": spec, "preset": args.preset, "nodes": nodes,
            "infosets": lowered.num_rows - 1, "target": args.target,
            "reached": exploitability <= args.target, "iterations": iteration,
            "exploitability": exploitability, "lowering_cpu_s": round(lowering_cpu, 1),
            "lowering_peak_per_node": round(lowering_peak / nodes, 1),
            "compile_cpu_s": round(compile_cpu, 1), "solve_cpu_s": round(solve_cpu, 1),
            "evaluate_cpu_s": round(evaluate_cpu, 1),
            "cpu_s_per_iteration": round(solve_cpu / max(iteration, 1), 4),
            "cpu_s_per_iteration_with_evaluation":
                round((solve_cpu + evaluate_cpu) / max(iteration, 1), 4),
            "process_peak_bytes": peak_rss(), "date": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                 time.gmtime())})
    return records


if __name__ == "__main__":
    main()
