"""A stack of hold'em spots on its members' merged (suit-isomorphic) trees against the same
stack walking every card: CPU time and memory per spot, paired in one process.

Both stacks (``jaxcfr.stack_public(spots)`` and ``stack_public(spots, merges=False)``)
are lowered and their ``postflop-dcfr`` chunk of ``--iterations`` iterations compiled
first; then the two run in turns, ``--rounds`` times each (the machine's load falls on
both alike), and the medians and the fastest rounds are reported: CPU ms per
spot-iteration (``time.process_time`` of this process around the compiled call), the
stack's device bytes per spot (its tensors and the solver state's tables, float32), its
padded public nodes, the merged outcomes, the lowering CPU seconds, and the last round's
exploitability (mean and worst, percent of the pot) of each.

``--sides merged,rows,unmerged`` adds ``rows``: the merged stack as it was before
2026-12-07 (``stack_public(spots, blocks=False)``: members whose decision counts differ
padded with rowless decisions, so stepped on the row path), run in turns with the others
(the per-player-block padding's before and after in one process).

``--other-bets SIZES`` gives every second board those bet sizes (another tree: a stack
of river boards whose members differ in their decisions per player).

``--boards`` is a spec as ``jaxcfr solve --boards`` takes it: ``random:64`` (64 river
boards: a river spot deals no card, so nothing merges and both stacks are the same),
``turn:Td9d6d`` (every turn of a flop), ``random:16:4`` (random turn boards).

Usage::

    python benchmarks/bench_merged_stack.py --boards random:64 --iterations 100
    python benchmarks/bench_merged_stack.py --boards turn:Td9d6h --spots 16 --iterations 10
    python benchmarks/bench_merged_stack.py --boards turn:Td9d6d --spots 16 --iterations 10 \
        --sides merged,rows
    python benchmarks/bench_merged_stack.py --boards random:64 --iterations 100 \
        --other-bets "33%, 75%, a" --sides merged,rows
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
from jaxcfr._util import precision
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_solver
from jaxcfr_games.holdem.boards import board_spots, parse_boards

from benchkit.memory import tree_bytes
from benchkit.stack_chunk import compile_stack


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="random:64")
    ap.add_argument("--spots", type=int, default=None, help="the first this many boards")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", default=None)
    ap.add_argument("--sides", default="merged,unmerged",
                    help="which stacks, in turns: merged, rows (merged, padded decisions "
                         "rowless: the row path, as before 2026-12-07), unmerged")
    ap.add_argument("--other-bets", default=None,
                    help="every second board's bet sizes (e.g. '33%%, 75%%, a'): members of "
                         "another tree, with other decision counts per player")
    args = ap.parse_args(argv)
    boards = parse_boards(args.boards)[:args.spots]
    spots = board_spots(boards)
    if args.other_bets:                   # every second board another tree
        spots[1::2] = board_spots(boards[1::2], bets=args.other_bets)
    solver = public_solver(make_solver("postflop-dcfr"))
    dtype = np.float32
    sides = {}
    with precision.scope(dtype):
        kinds = {"merged": {}, "rows": {"blocks": False}, "unmerged": {"merges": False}}
        names = args.sides.split(",")
        if not names or any(n not in kinds for n in names):
            ap.error(f"--sides takes some of {', '.join(kinds)}, got {args.sides!r}")
        lowered = {}                      # merged members, lowered once for both sides
        for name in names:
            cpu = time.process_time()
            given = lowered.get(kinds[name].get("merges", True), spots)
            stack = jaxcfr.stack_public(given, **kinds[name])
            lowered.setdefault(kinds[name].get("merges", True), list(stack.members))
            lowering = time.process_time() - cpu
            sides[name] = {"stack": stack, "lowering_cpu_s": lowering, "cpu": [], "state": None,
                           "chunk": compile_stack(stack, solver, args.iterations, dtype)}
        load = [os.getloadavg()[0]]
        for r in range(args.rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                s = sides[name]
                s["state"], _, cpu = s["chunk"].run()
                s["cpu"].append(cpu)
            print(f"round {r + 1}: " + ", ".join(
                f"{n} {1e3 * sides[n]['cpu'][-1] / (len(spots) * args.iterations):.4f}"
                for n in sides) + " CPU-ms per spot-iteration", flush=True)
        load.append(os.getloadavg()[0])
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                  timespec="minutes"),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, JAX "
                         f"{jax.__version__} {jax.default_backend()}",
              "load_before_after": load, "boards": args.boards, "other_bets": args.other_bets,
              "spots": len(spots),
              "iterations": args.iterations, "rounds": args.rounds}
    for name, s in sides.items():
        stack, tensors, zero = s["stack"], s["chunk"].tensors, s["chunk"].zero
        per = [1e3 * c / (len(spots) * args.iterations) for c in s["cpu"]]
        ev = jaxcfr.evaluate_public_stack(stack, s["state"].strategy_sum, dtype="float32")
        exploit = 100 * np.asarray(ev["exploitability"]) / np.asarray([x.pot for x in spots])
        report[name] = {
            "cpu_ms_per_spot_iteration_median": float(np.median(per)),
            "cpu_ms_per_spot_iteration_fastest": float(min(per)),
            "device_bytes_per_spot": (tree_bytes(tensors) + tree_bytes(zero)) / len(spots),
            "tensor_bytes_per_spot": tree_bytes(tensors) / len(spots),
            "padded_nodes": stack.num_nodes, "rows": stack.num_rows,
            "per_player_block": stack.structure.player_decisions != (),
            "member_nodes_min_max": [min(m.num_nodes for m in stack.members),
                                     max(m.num_nodes for m in stack.members)],
            "merged_outcomes": sum(len(m.merged) for m in stack.members),
            "lowering_cpu_s": s["lowering_cpu_s"], "compile_s": s["chunk"].compile_s,
            "exploitability_pot_percent_mean": float(exploit.mean()),
            "exploitability_pot_percent_max": float(exploit.max())}
    for a, b in (("merged", "unmerged"), ("merged", "rows")):
        if a in report and b in report:
            m, u = report[a], report[b]
            report[f"{a}_over_{b}"] = {
                "cpu_median": m["cpu_ms_per_spot_iteration_median"]
                / u["cpu_ms_per_spot_iteration_median"],
                "cpu_fastest": m["cpu_ms_per_spot_iteration_fastest"]
                / u["cpu_ms_per_spot_iteration_fastest"],
                "device_bytes": m["device_bytes_per_spot"] / u["device_bytes_per_spot"]}
    print(json.dumps(report, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
