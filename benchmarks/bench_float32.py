"""Float32 drift and the step's speed: long CFR+ runs in float32 against float64.

``--drift``: Leduc CFR+ for ``--iterations`` (64,000) in float32 and in float64, the
exploitability at eight points of each (the float32 average evaluated in float64 too, so
that the evaluation's own rounding is not mistaken for the solver's).

``--speed``: the steady-state iterations per second of the float32 step (compiled
first; the best of ``--repeats`` rounds of ``--rounds`` iterations, CPU seconds per
iteration beside the wall). Run it under two source trees interleaved (A B A B ...) to
compare them (``PYTHONPATH=other/tree python benchmarks/bench_float32.py --speed``).

Usage::

    python benchmarks/bench_float32.py --drift --json drift.json
    python benchmarks/bench_float32.py --speed --game leduc_poker --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import jaxcfr
from jaxcfr.solvers import analytics


def drift(game: str, iterations: int, points: int = 8) -> dict:
    lowered = jaxcfr.lower(jaxcfr.load_game(game))
    out = {}
    for precision in ("float32", "float64"):
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), precision=precision, chunk=256)
        state, done, rows = runner.init(), 0, []
        for k in range(1, points + 1):
            target = iterations * k // points
            state = runner.advance(state, target - done)
            done = target
            table = runner.profile(state).astype(np.float64)
            rows.append({"iteration": done, "metric": float(runner.evaluate(state)["metric"]),
                         "metric_float64_eval": float(
                             analytics.evaluate(lowered, table, dtype="float64")["metric"])})
            print(precision, rows[-1], flush=True)
        out[precision] = rows
    last = {p: out[p][-1]["metric_float64_eval"] for p in out}
    out["ratio_float32_to_float64"] = last["float32"] / last["float64"]
    print(f"after {iterations} iterations: float32 {last['float32']:.3g}, float64 "
          f"{last['float64']:.3g}, ratio {out['ratio_float32_to_float64']:.2f}")
    return out


def speed(game: str, rounds: int, repeats: int) -> dict:
    lowered = jaxcfr.lower(jaxcfr.load_game(game))
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=256)
    state = runner.advance(runner.init(), 256)              # compiled, warm
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        state = runner.advance(state, rounds)
        state.regret.block_until_ready()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    out = {"game": game, "source": os.path.dirname(jaxcfr.__file__),
           "iterations_per_second": rounds / best_wall, "cpu_us_per_iteration":
           1e6 * best_cpu / rounds, "wall_us_per_iteration": 1e6 * best_wall / rounds}
    print(json.dumps(out), flush=True)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--drift", action="store_true")
    p.add_argument("--speed", action="store_true")
    p.add_argument("--game", default="leduc_poker")
    p.add_argument("--iterations", type=int, default=64_000)
    p.add_argument("--rounds", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json")
    args = p.parse_args(argv)
    out = {}
    if args.drift:
        out["drift"] = drift(args.game, args.iterations)
    if args.speed:
        out["speed"] = speed(args.game, args.rounds, args.repeats)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
