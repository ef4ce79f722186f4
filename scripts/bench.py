"""Benchmarks: jaxcfr against its peers on the same machine, same game, same iterations.

Measures, for each game: lowering speed, compile time, and milliseconds per
iteration of CFR and CFR+ (steady state, best of ``--repeats``), a batch of
identical games (``jaxcfr.stack``) and a batch of hyper-parameter settings; and
the peers that are installed: OpenSpiel's C++ ``CFRSolver`` / ``CFRPlusSolver``,
OpenSpiel's JAX CFR, and LiteEFG's CFR+.

Usage::

    python scripts/bench.py                          # Leduc and Liar's dice, all peers
    python scripts/bench.py --games leduc goofspiel6 --json bench.json
    python scripts/bench.py --lowering               # nodes/s, serial and parallel; the cache
    python scripts/bench.py --memory                 # bytes per node, measured and estimated
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time

import jax
import numpy as np

import jaxcfr

GAMES = {
    # name: (jaxcfr game string, OpenSpiel game string)
    "kuhn": ("kuhn_poker", "kuhn_poker"),
    "leduc": ("leduc_poker", "leduc_poker"),
    "liars_dice": ("liars_dice(dice=1, sides=6)", "liars_dice(numdice=1,dice_sides=6)"),
    "goofspiel5": ("goofspiel(cards=5)", "turn_based_simultaneous_game(game=goofspiel("
                   "imp_info=True,num_cards=5,points_order=descending,returns_type=win_loss))"),
    "goofspiel6": ("goofspiel(cards=6)", "turn_based_simultaneous_game(game=goofspiel("
                   "imp_info=True,num_cards=6,points_order=descending,returns_type=win_loss))"),
}


def _time_iterations(step, iterations: int, repeats: int) -> float:
    """Best seconds per iteration of ``step(iterations)`` over ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        step(iterations)
        best = min(best, (time.perf_counter() - start) / iterations)
    return best


def bench_jaxcfr(lowered, algorithm: str, iterations: int, repeats: int,
                 hyper: dict | None = None) -> dict:
    runner = jaxcfr.Runner(lowered, jaxcfr.make_solver(algorithm), hyper)
    state, compile_seconds = runner.compile(runner.init())
    holder = [state]

    def step(n):
        holder[0] = runner.advance(holder[0], n)
        jax.block_until_ready(holder[0])

    step(runner.chunk)   # warm
    per_iteration = _time_iterations(step, iterations, repeats)
    metric = runner.evaluate(holder[0])["metric"]
    return {"ms_per_iteration": per_iteration * 1e3, "compile_seconds": compile_seconds,
            "final_metric": np.asarray(metric).reshape(-1).tolist()[:4]}


def bench_openspiel_cpp(os_game: str, algorithm: str, iterations: int, repeats: int):
    import pyspiel
    game = pyspiel.load_game(os_game)
    solver = (pyspiel.CFRPlusSolver if algorithm == "cfr+" else pyspiel.CFRSolver)(game)

    def step(n):
        for _ in range(n):
            solver.evaluate_and_update_policy()

    step(1)
    return {"ms_per_iteration": _time_iterations(step, iterations, repeats) * 1e3}


def bench_openspiel_jax(os_game: str, algorithm: str, iterations: int, repeats: int):
    import pyspiel
    from open_spiel.python.jax.cfr.jax_cfr import JaxCFR
    game = pyspiel.load_game(os_game)
    plus = algorithm == "cfr+"
    solver = JaxCFR(game, regret_matching_plus=plus, alternating_updates=plus,
                    linear_averaging=plus)
    start = time.perf_counter()
    solver.multiple_steps(1)
    compile_seconds = time.perf_counter() - start

    def step(n):
        solver.multiple_steps(n)
        jax.block_until_ready(solver.regrets)

    return {"ms_per_iteration": _time_iterations(step, iterations, repeats) * 1e3,
            "compile_seconds": compile_seconds}


def bench_liteefg(os_game: str, algorithm: str, iterations: int, repeats: int):
    import contextlib
    import io

    import LiteEFG
    import pyspiel
    if algorithm != "cfr+":
        raise NotImplementedError("only CFR+ is benchmarked for LiteEFG")
    from LiteEFG.baselines.CFRplus import graph as cfr_plus_graph
    with contextlib.redirect_stdout(io.StringIO()):     # LiteEFG prints banners
        graph = cfr_plus_graph()
        env = LiteEFG.OpenSpielEnv(pyspiel.load_game(os_game), traverse_type="Enumerate",
                                   regenerate=False)
        env.set_graph(graph)

    def step(n):
        for _ in range(n):
            graph.update_graph(env)
            env.update_strategy(graph.current_strategy())

    step(1)
    return {"ms_per_iteration": _time_iterations(step, iterations, repeats) * 1e3}


PEERS = {"openspiel_cpp": bench_openspiel_cpp, "openspiel_jax": bench_openspiel_jax,
         "liteefg": bench_liteefg}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    for flag, what in (("--lowering", "speed"), ("--memory", "memory")):
        if flag in argv:       # lowering speed and the cache / memory per node
            import bench_lowering
            argv.remove(flag)
            return bench_lowering.main([what, *argv])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["leduc", "liars_dice"], choices=GAMES)
    parser.add_argument("--algorithms", nargs="+", default=["cfr", "cfr+"])
    parser.add_argument("--iterations", type=int, default=256)
    parser.add_argument("--peer-iterations", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64, help="batch size for the batched runs")
    parser.add_argument("--peers", nargs="*", default=list(PEERS), choices=list(PEERS))
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    results = {"machine": {"platform": platform.platform(), "processor": platform.processor(),
                           "python": sys.version.split()[0], "jax": jax.__version__,
                           "devices": [str(d) for d in jax.devices()]},
               "date": time.strftime("%Y-%m-%d"), "games": {}}
    for name in args.games:
        game_string, os_string = GAMES[name]
        start = time.perf_counter()
        lowered = jaxcfr.lower(jaxcfr.load_game(game_string))
        lower_seconds = time.perf_counter() - start
        entry = {"nodes": lowered.num_nodes, "infosets": list(lowered.infosets_per_player),
                 "lower_seconds": lower_seconds,
                 "nodes_per_second": lowered.num_nodes / lower_seconds, "jaxcfr": {}, "peers": {}}
        print(f"{name}: {lowered.num_nodes:,} nodes, lowered in {lower_seconds:.2f} s "
              f"({entry['nodes_per_second']:,.0f} nodes/s)", flush=True)
        iterations = args.iterations if lowered.num_nodes < 200_000 else max(8, args.iterations // 16)
        for algorithm in args.algorithms:
            r = bench_jaxcfr(lowered, algorithm, iterations, args.repeats)
            entry["jaxcfr"][algorithm] = r
            print(f"  jaxcfr {algorithm:5s} {r['ms_per_iteration']:9.4f} ms/it "
                  f"(compile {r['compile_seconds']:.1f} s)", flush=True)
        if args.batch > 1 and lowered.num_nodes < 200_000:
            batch = jaxcfr.stack([lowered] * args.batch)
            r = bench_jaxcfr(batch, "cfr+", max(8, iterations // 8), args.repeats)
            r["ms_per_game_iteration"] = r["ms_per_iteration"] / args.batch
            entry["jaxcfr"][f"cfr+ stack x{args.batch}"] = r
            print(f"  jaxcfr cfr+ stack x{args.batch}: {r['ms_per_game_iteration']:.4f} "
                  f"ms per game-iteration (compile {r['compile_seconds']:.1f} s)", flush=True)
            grid = {"alpha": np.linspace(1.0, 2.0, args.batch).tolist()}
            r = bench_jaxcfr(lowered, "dcfr", max(8, iterations // 8), args.repeats, grid)
            r["ms_per_game_iteration"] = r["ms_per_iteration"] / args.batch
            entry["jaxcfr"][f"dcfr grid x{args.batch}"] = r
            print(f"  jaxcfr dcfr grid x{args.batch}: {r['ms_per_game_iteration']:.4f} "
                  f"ms per setting-iteration (compile {r['compile_seconds']:.1f} s)", flush=True)
        for peer in args.peers:
            for algorithm in args.algorithms:
                try:
                    r = PEERS[peer](os_string, algorithm, args.peer_iterations, args.repeats)
                except (ImportError, NotImplementedError) as e:
                    print(f"  {peer} {algorithm}: skipped ({e})", flush=True)
                    continue
                entry["peers"][f"{peer} {algorithm}"] = r
                ours = entry["jaxcfr"][algorithm]["ms_per_iteration"]
                print(f"  {peer} {algorithm:5s} {r['ms_per_iteration']:9.4f} ms/it "
                      f"(jaxcfr is {r['ms_per_iteration'] / ours:.1f}x faster)", flush=True)
        results["games"][name] = entry
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
