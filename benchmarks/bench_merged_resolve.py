"""CPU time of a hold'em turn subgame re-solved on its merged (suit-isomorphic) public
tree against the unmerged one (docs/subgames.md "Public subgames on the merged tree",
docs/holdem.md).

The README's turn spot on Td9d6h5d (clubs ~ spades; README ranges, default bet tree):
a blueprint solved merged (``--blueprint`` iterations of postflop-dcfr, float32), then
the subgame after OOP's check with the resolve gadget for each player (two gadget games:
:class:`~jaxcfr.subgames.public.PublicContext.build`, ``merges=True`` and ``False``).
Per tree: the build and lowering CPU seconds, the tensors' bytes and the solver state's
(regrets, strategy sums: the memory a re-solve holds), the public nodes; then
each gadget game's chunk of ``--iterations`` compiled and the four chunks run in turns,
``--rounds`` times (interleaved: the same load for all), CPU ms per iteration of the two
games together. Last, ``--whole`` end-to-end re-solves (``resolve_subgames``, compile
included), merged and unmerged alternately. Prints one JSON line.

    python benchmarks/bench_merged_resolve.py --rounds 5 --iterations 10 --whole 1
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
from jaxcfr.engine.runner import Runner
from jaxcfr.lowering.public import lower_public
from jaxcfr.subgames import resolve_subgames
from jaxcfr.subgames.gadgets import gadget_kind
from jaxcfr.subgames.public import PublicContext
from jaxcfr.subgames.symmetry import TOLERANCE
from jaxcfr_games.holdem.spot import HoldemSpot

AT = ["Check"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--blueprint", type=int, default=50)
    parser.add_argument("--whole", type=int, default=1, help="end-to-end re-solves each")
    parser.add_argument("--whole-iterations", type=int, default=100)
    args = parser.parse_args()
    spot = HoldemSpot(board="Td9d6h5d")
    cpu = time.process_time()
    blueprint = jaxcfr.solve(spot, "postflop-dcfr", args.blueprint).to_profile()
    blueprint_cpu = time.process_time() - cpu
    cpu = time.process_time()
    context = PublicContext(spot, blueprint)
    node = context.node(AT)
    gadgets = [context.gadget(node, gadget_kind("resolve"), p) for p in (0, 1)]
    context_cpu = time.process_time() - cpu
    runs = {}
    for name, merges in (("unmerged", False), ("merged", True)):
        cpu = time.process_time()
        games = [context.build(g, merges=merges, tolerance=TOLERANCE["float32"])
                 for g in gadgets]
        build_cpu = time.process_time() - cpu
        cpu = time.process_time()
        lowered = [lower_public(g, name=g.name, terminals="ranked") for g in games]
        lower_cpu = time.process_time() - cpu
        assert all(bool(low.merged) == merges for low in lowered), [g.unmerged for g in games]
        runners, states = [], []
        cpu = time.process_time()
        for low in lowered:
            runner = Runner(low, jaxcfr.cfr_plus(), precision="float32", chunk=args.iterations)
            state, _ = runner.compile(runner.init())
            states.append(jax.block_until_ready(runner.advance(state, args.iterations)))
            runners.append(runner)
        runs[name] = {"runners": runners, "states": states, "cpu": [], "wall": [],
                      "nodes": [low.num_nodes for low in lowered],
                      "merged_outcomes": [len(low.merged) for low in lowered],
                      "tensor_bytes": [low.nbytes for low in lowered],
                      "state_bytes": [sum(x.nbytes for x in jax.tree_util.tree_leaves(s))
                                      for s in states],
                      "build_cpu_s": round(build_cpu, 3), "lower_cpu_s": round(lower_cpu, 2),
                      "compile_cpu_s": round(time.process_time() - cpu, 2)}
    for _ in range(args.rounds):
        for r in runs.values():
            cpu, wall = time.process_time(), time.perf_counter()
            r["states"] = [jax.block_until_ready(run.advance(s, args.iterations))
                           for run, s in zip(r["runners"], r["states"])]
            r["cpu"].append((time.process_time() - cpu) * 1e3 / args.iterations)
            r["wall"].append((time.perf_counter() - wall) * 1e3 / args.iterations)
    for r in runs.values():
        for run in r["runners"]:
            run.close()
    whole: dict[str, list] = {"unmerged": [], "merged": []}
    for _ in range(args.whole):
        for name, merges in (("unmerged", False), ("merged", True)):
            cpu = time.process_time()
            res = resolve_subgames(spot, None, [AT], context=context, merges=merges,
                                   iterations=args.whole_iterations, algorithm="cfr+",
                                   evaluate_profiles=False)
            whole[name].append(round(time.process_time() - cpu, 2))
            assert all(bool(s["merged"]) == merges for s in res.subgames)
    out = {"when": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores",
           "load": [round(x, 2) for x in os.getloadavg()], "iterations": args.iterations,
           "blueprint_cpu_s": round(blueprint_cpu, 2), "context_cpu_s": round(context_cpu, 2),
           "whole_iterations": args.whole_iterations}
    for name, r in runs.items():
        out[name] = {k: r[k] for k in ("nodes", "merged_outcomes", "tensor_bytes", "state_bytes",
                                       "build_cpu_s",
                                       "lower_cpu_s", "compile_cpu_s")}
        out[name].update(cpu_ms_min=round(min(r["cpu"]), 2),
                         cpu_ms_median=round(float(np.median(r["cpu"])), 2),
                         wall_ms_median=round(float(np.median(r["wall"])), 2),
                         whole_cpu_s=whole[name])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
