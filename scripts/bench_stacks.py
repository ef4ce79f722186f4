"""Stacks against one game: game-iterations per CPU second of a Leduc stack of B games.

In one process, one runner per stack size (compiled first), timed in interleaved rounds
(1, 2, 4, ..., 64, 1, 2, ...: the machine's load falls on every size alike); each round
runs about ``--work`` game-iterations, and the median round counts. CPU seconds (user +
system of this process, every thread) are the measure: the machine is shared, and CPU
time moves less than the wall under load. Prints each size's layout (``map``: members
one after another; ``shared``: batch on a trailing axis) and its ratio to one game.

Usage::

    python scripts/bench_stacks.py --json stacks.json
    PYTHONPATH=/tmp/main python scripts/bench_stacks.py      # another source tree
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
    p.add_argument("--sizes", default="1,2,4,8,12,16,32,64")
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
    for _ in range(args.rounds):
        for b in sizes:
            runner, state = runners[b]
            n = max(runner.chunk, args.work // b)
            start = time.process_time()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            samples[b].append(n * b / (time.process_time() - start))
            runners[b][1] = state
    one = float(np.median(samples[sizes[0]]))
    table = {}
    for b in sizes:
        med = float(np.median(samples[b]))
        table[b] = {"layout": getattr(runners[b][0], "layout", "?"),
                    "game_iterations_per_cpu_second": med, "over_one_game": med / one,
                    "samples": samples[b]}
        print(f"B={b:3d} {table[b]['layout']:7s} {med:9.0f} game-it/CPU-s  "
              f"{med / one:5.2f}x one game", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "machine": platform.platform(),
                       "cpus": os.cpu_count(), "load_average": os.getloadavg(),
                       "source": os.path.dirname(jaxcfr.__file__), "game": args.game,
                       "table": table}, f, indent=1)


if __name__ == "__main__":
    main()
