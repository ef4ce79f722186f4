"""A stack of hold'em river spots in one compiled step against postflop-solver, spot by spot.

jaxcfr solves ``--spots`` river spots (random boards, ``random_boards(seed=0)``; the
peer driver's README ranges, pot 100, stack 200, its bet sizes: ``holdem_spot``'s
defaults) as one stack (``jaxcfr.solve_public`` of a list: one game's ``postflop-dcfr``
step on every member), ``--iterations`` iterations per spot in one compiled
call (``--layout``: on a CPU the members one after another, each per player block, as
``jaxcfr.solve_public`` runs them; ``vmapped`` the layout of before, all members at once).
The peer (``pf_bench river readme``, one thread: its solver never parallelises a
river spot) solves its river spot (board Td9d6h5c2s, the same ranges and sizes) for
``--peer-iterations`` iterations, exploitability checked every ``--iterations``
(evaluations timed apart by the driver); its CPU seconds per iteration times
``--iterations`` is its CPU cost of one spot. The two run interleaved, ``--rounds``
times each, on the same machine; the medians are reported.

Figures: spots per CPU-second (CPU: ``time.process_time`` of this process around the
compiled call, compilation and lowering excluded on both sides; the peer's own
``iter_cpu_total``), the cores each side used (CPU / wall), each side's exploitability
after ``--iterations`` (percent of the pot: jaxcfr's mean and worst over the stack),
jaxcfr's lowering, stacking and compile seconds and its device bytes per spot (tensors
and the solver state's float32 tables: two for postflop-dcfr) beside the peer's
``memory_usage`` (its own figure of its float32 storage, for each of the same boards and
ranges when its ``postflop_strategy_dump`` is built beside ``pf_bench``:
``benchkit.postflop.memory_of``),
and each side's process: jaxcfr's peak resident bytes above its baseline (after importing
JAX and jaxcfr) per spot, the peer's above a run of 0 iterations (its game built, its
tables not allocated) for its one spot.

Usage::

    python benchmarks/bench_public_stack.py                  # 64 spots, 200 iterations, 3 rounds
    python benchmarks/bench_public_stack.py --spots 16 --rounds 1 --json out.json

About two minutes on the loaded 2-core development machine with the defaults (25 s of
it compiling the stack's step under that load).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_solver
from jaxcfr.solvers.public_stack import maps_members
from jaxcfr_games.holdem.boards import board_spots, random_boards
from jaxcfr_games.holdem.spot import README_RANGES

from benchkit import memory, postflop
from benchkit.stack_chunk import compile_stack


def run_peer(binary: str, iterations: int, check: int) -> dict:
    """Two ``pf_bench river readme`` runs: ``iterations`` with one check at the end (the
    driver stops at the check after its exploitability targets, so the timed run checks
    once) for the CPU and wall per iteration and the memory; ``check`` iterations for the
    exploitability after them."""
    spot = ("river", "readme", "100", "200")
    out, peak = postflop.run_measured(binary, spot, iterations, iterations)
    cpu, wall = postflop.totals(out, iterations)
    mem = re.search(r"memory_usage\(\): uncompressed=([\d.]+) MiB", out)
    at = re.search(rf"iter {check} exploitability=([\d.]+)",
                   postflop.run(binary, spot, check, check))
    base = postflop.run_measured(binary, spot, 0, 1)[1]
    return {"cpu_per_iteration": cpu / iterations, "wall_per_iteration": wall / iterations,
            "exploitability": float(at.group(1)), "memory_mib": float(mem.group(1)),
            "peak_rss_above_base": None if peak is None else peak - base}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spots", type=int, default=64)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--peer-iterations", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer", default=postflop.default_binary(),
                    help=f"pf_bench's path (default ${postflop.ENV})")
    ap.add_argument("--terminals", default="auto", choices=("auto", "ranked", "dense"),
                    help="the public tree's terminal operators (auto: ranked from 64 hands)")
    ap.add_argument("--layout", default="auto", choices=("auto", "mapped", "vmapped"),
                    help="how the stack's step runs its members (auto: the backend's, "
                         "maps_members: one after another on a CPU, per player block)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if not args.peer:
        ap.error(f"give the peer's pf_bench: --peer PATH or ${postflop.ENV} (docs/holdem.md, "
                 "'Building the peer')")

    jax.block_until_ready(jax.numpy.zeros(8) + 1)                     # the runtime is up
    base_rss = memory.rss()
    clock, cpu = time.perf_counter(), time.process_time()
    boards = random_boards(args.spots, seed=0)
    spots = board_spots(boards)
    stack = jaxcfr.stack_public(spots, terminals=args.terminals)
    lowering = {"wall": time.perf_counter() - clock, "cpu": time.process_time() - cpu}
    solver = public_solver(make_solver("postflop-dcfr"))
    dtype = np.float32
    with precision.scope(dtype):
        mapped = {"auto": None, "mapped": True, "vmapped": False}[args.layout]
        chunk = compile_stack(stack, solver, args.iterations, dtype, mapped)
        tensor_bytes, state_bytes = (memory.tree_bytes(chunk.tensors),
                                     memory.tree_bytes(chunk.zero))
        device_bytes = tensor_bytes + state_bytes

        ours, peers = [], []
        for r in range(args.rounds):
            peers.append(run_peer(args.peer, args.peer_iterations, args.iterations))
            state, wall, cpu = chunk.run()
            ours.append({"wall": wall, "cpu": cpu})
            print(f"round {r + 1}: jaxcfr {ours[-1]['cpu']:.2f} CPU-s "
                  f"({ours[-1]['wall']:.2f} s wall) for {args.spots} spots; peer "
                  f"{1e3 * peers[-1]['cpu_per_iteration']:.4f} CPU-ms per iteration", flush=True)
    rss_after = memory.rss() - base_rss
    peak_rss = memory.peak_rss() - base_rss
    ev = jaxcfr.evaluate_public_stack(stack, state.strategy_sum, dtype="float32")
    dumper = postflop.dumper_beside(args.peer)
    peer_memory = [postflop.memory_of(dumper, b, README_RANGES, 100, 200)[0]
                   for b in boards] if dumper else []
    exploit = 100 * np.asarray(ev["exploitability"]) / np.asarray(stack.pots)

    cpu = float(np.median([o["cpu"] for o in ours]))
    wall = float(np.median([o["wall"] for o in ours]))
    peer_cpu = float(np.median([p["cpu_per_iteration"] for p in peers]))
    peer_wall = float(np.median([p["wall_per_iteration"] for p in peers]))
    hands = [m.structure.hands for m in stack.members]
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                   f"load {os.getloadavg()[0]:.1f}, JAX {jax.__version__} "
                   f"{jax.default_backend()}",
        "spots": args.spots, "iterations": args.iterations,
        "terminals": "ranked" if stack.ranked else "dense",
        "layout": ("mapped" if maps_members() else "vmapped") if mapped is None
        else args.layout,
        "player_blocks": bool(stack.structure.player_decisions),
        "hands_min_max": [min(min(h) for h in hands), max(max(h) for h in hands)],
        "jaxcfr": {"cpu_s": cpu, "wall_s": wall, "cores": cpu / wall,
                   "spots_per_cpu_s": args.spots / cpu,
                   "cpu_ms_per_spot_iteration": 1e3 * cpu / (args.spots * args.iterations),
                   "exploitability_pot_percent_mean": float(exploit.mean()),
                   "exploitability_pot_percent_max": float(exploit.max()),
                   "lowering_and_stacking_cpu_s": lowering["cpu"],
                   "compile_s": chunk.compile_s,
                   "device_bytes_per_spot": device_bytes / args.spots,
                   "tensor_bytes_per_spot": tensor_bytes / args.spots,
                   "state_bytes_per_spot": state_bytes / args.spots,
                   "peak_rss_above_base_per_spot": peak_rss / args.spots,
                   "rss_after_solve_above_base_per_spot": rss_after / args.spots},
        "peer": {"cpu_s_per_spot": peer_cpu * args.iterations,
                 "cores": peer_cpu / peer_wall,
                 "spots_per_cpu_s": 1.0 / (peer_cpu * args.iterations),
                 "cpu_ms_per_iteration": 1e3 * peer_cpu,
                 "exploitability_pot_percent": 100 * peers[-1]["exploitability"] / 100,  # pot 100
                 "memory_bytes": peers[-1]["memory_mib"] * 2 ** 20,
                 "memory_usage_bytes_same_boards_mean": (float(np.mean(peer_memory))
                                                         if peer_memory else None),
                 "memory_usage_bytes_same_boards_max": (max(peer_memory)
                                                        if peer_memory else None),
                 "peak_rss_above_base_one_spot": peers[-1]["peak_rss_above_base"]},
    }
    if peer_memory:
        report["ratio_device_bytes_per_spot"] = (report["jaxcfr"]["device_bytes_per_spot"]
                                                 / float(np.mean(peer_memory)))
    report["ratio_spots_per_cpu_s"] = (report["jaxcfr"]["spots_per_cpu_s"]
                                       / report["peer"]["spots_per_cpu_s"])
    print(json.dumps(report, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
