"""CPU time per iteration of a locked hold'em turn solved on the merged (suit-isomorphic)
public tree against the unmerged one (docs/holdem.md "Node locking", "Locks on the merged
tree").

The README's turn spot on Td9d6h5d (clubs ~ spades; README ranges, default bet tree) with
a lock that keeps the suit symmetry (whole hand classes, both cards of a river class
alike): each tree lowered, resolved (:func:`jaxcfr.api.locks.symmetric_lock` on the
merged one, :func:`~jaxcfr.api.locks.resolve_lock` on the unmerged one), its locked
chunk of ``--iterations`` compiled, then the two run in turns, ``--rounds`` times each
(interleaved: both see the same load), CPU and wall seconds of each chunk. Prints one
JSON line.

    python benchmarks/bench_merged_lock.py --rounds 5 --iterations 10
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
from jaxcfr.api.locks import resolve_lock, symmetric_lock
from jaxcfr.engine.runner import Runner
from jaxcfr_games.holdem.spot import HoldemSpot

#: A lock that keeps the clubs-spades symmetry of Td9d6h5d: classes at the root and
#: after a check, and the rivers 2c and 2s (one class) alike after a check-check.
LOCK = {((), "AA"): {"Check": 1.0},
        ((), "KK"): {"Check": 0.5, "Bet(62)": 0.5},
        (("Check",), "QQ"): {"Check": 1.0},
        ("Check, Check, 2c", "*"): {"Check": 1.0},
        ("Check, Check, 2s", "*"): {"Check": 1.0}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10)
    args = parser.parse_args()
    runs = {}
    for name, iso in (("unmerged", False), ("merged", True)):
        cpu = time.process_time()
        lowered = jaxcfr.lower_public(HoldemSpot(board="Td9d6h5d", isomorphism=iso))
        lower_cpu = time.process_time() - cpu
        cpu = time.process_time()
        lock = symmetric_lock(lowered, LOCK) if iso else resolve_lock(lowered, LOCK)
        resolve_cpu = time.process_time() - cpu
        assert lock is not None, "the lock keeps the symmetry"
        runner = Runner(lowered, jaxcfr.postflop_dcfr(), precision="float32",
                        chunk=args.iterations)
        runner.set_lock(lock)
        state = runner.init()
        cpu = time.process_time()
        state, _ = runner.compile(state)
        state = jax.block_until_ready(runner.advance(state, args.iterations))     # warm
        runs[name] = {"runner": runner, "state": state, "cpu": [], "wall": [],
                      "nodes": lowered.num_nodes, "merged": len(lowered.merged),
                      "locked_rows": int(np.asarray(lock.mask).sum()),
                      "compile_cpu_s": round(time.process_time() - cpu, 2),
                      "lower_cpu_s": round(lower_cpu, 2), "resolve_cpu_s": round(resolve_cpu, 3)}
    for _ in range(args.rounds):
        for r in runs.values():
            cpu, wall = time.process_time(), time.perf_counter()
            r["state"] = jax.block_until_ready(r["runner"].advance(r["state"],
                                                                   args.iterations))
            r["cpu"].append((time.process_time() - cpu) * 1e3 / args.iterations)
            r["wall"].append((time.perf_counter() - wall) * 1e3 / args.iterations)
    out = {"when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "load": [round(x, 2) for x in os.getloadavg()], "iterations": args.iterations}
    for name, r in runs.items():
        out[name] = {"nodes": r["nodes"], "merged_outcomes": r["merged"],
                     "locked_rows": r["locked_rows"], "lower_cpu_s": r["lower_cpu_s"],
                     "resolve_cpu_s": r["resolve_cpu_s"], "compile_cpu_s": r["compile_cpu_s"],
                     "cpu_ms_min": round(min(r["cpu"]), 2),
                     "cpu_ms_median": round(float(np.median(r["cpu"])), 2),
                     "wall_ms_median": round(float(np.median(r["wall"])), 2)}
    for r in runs.values():
        r["runner"].close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
