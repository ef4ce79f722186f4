"""Stacks against one game: game-iterations per CPU second of a Leduc stack of B games.

In one process, one runner per stack size (compiled first), timed in interleaved rounds
(1, 2, 4, ..., 64, 1, 2, ...: the machine's load falls on every size alike); each round
runs about ``--work`` game-iterations, and the median round counts. CPU seconds (user +
system of this process, every thread) are the measure: the machine is shared, and CPU
time moves less than the wall under load; the wall is recorded beside it. Prints each
size's layout (``map``: members one after another; ``shared``: batch on a trailing axis)
and its ratio to one game, and the load average before and after.

Usage::

    python benchmarks/bench_stacks.py --json stacks.json
    PYTHONPATH=/tmp/main python benchmarks/bench_stacks.py      # another source tree
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import jax
import numpy as np

import jaxcfr


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="leduc_poker")
    p.add_argument("--sizes", default="1,2,4,8,12,16,32,64,128")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--work", type=int, default=2048, help="game-iterations per round")
    p.add_argument("--json")
    args = p.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    lowered = jaxcfr.lower(jaxcfr.load_game(args.game))
    runners = {}
    for b in sizes:
        game = lowered if b == 1 else jaxcfr.stack([lowered] * b)
        try:
            runner = jaxcfr.Runner(game, jaxcfr.cfr_plus(), compilation_cache=False)
        except TypeError:                     # a source tree from before the option
            runner = jaxcfr.Runner(game, jaxcfr.cfr_plus())
        state = runner.advance(runner.init(), runner.chunk)
        jax.block_until_ready(state)
        runners[b] = [runner, state]
    samples = {b: [] for b in sizes}
    walls = {b: [] for b in sizes}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        for b in sizes:
            runner, state = runners[b]
            n = max(runner.chunk, args.work // b)
            start, wall = time.process_time(), time.perf_counter()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            samples[b].append(n * b / (time.process_time() - start))
            walls[b].append(n * b / (time.perf_counter() - wall))
            runners[b][1] = state
    load_after = os.getloadavg()
    one = float(np.median(samples[sizes[0]]))
    one_wall = float(np.median(walls[sizes[0]]))
    table = {}
    for b in sizes:
        med, med_wall = float(np.median(samples[b])), float(np.median(walls[b]))
        table[b] = {"layout": getattr(runners[b][0], "layout", "?"),
                    "game_iterations_per_cpu_second": med, "over_one_game": med / one,
                    "game_iterations_per_wall_second": med_wall,
                    "over_one_game_wall": med_wall / one_wall,
                    "samples": samples[b], "wall_samples": walls[b]}
        print(f"B={b:3d} {table[b]['layout']:7s} {med:9.0f} game-it/CPU-s "
              f"{med / one:5.2f}x one game   {med_wall:9.0f} game-it/wall-s "
              f"{med_wall / one_wall:5.2f}x", flush=True)
    print(f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "machine": platform.platform(),
                       "cpus": os.cpu_count(), "load_average": [load_before, load_after],
                       "source": os.path.dirname(jaxcfr.__file__), "game": args.game,
                       "table": table}, f, indent=1)


if __name__ == "__main__":
    main()
