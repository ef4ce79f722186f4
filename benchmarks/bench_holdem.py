"""Hold'em spots side by side with postflop-solver: CPU milliseconds per iteration, interleaved.

For each spot, jaxcfr's ``postflop-dcfr`` on the public tree (float32, one compiled chunk
of iterations, compilation excluded: ``jaxcfr.solve_public``'s inner loop) and the peer's
``pf_bench`` (b-inary's postflop-solver, one thread: ``RAYON_NUM_THREADS=1``; see
``shared/peers/postflop-solver/README.md``) run in turns, ``--rounds`` times each, so both
see the same machine load. Each side's figure is CPU time: jaxcfr's is this process's
(``time.process_time``, every thread of XLA's pool), the peer's is its own count of
``solve_step``'s CPU seconds (its clock ticks at 10 ms, so it runs enough iterations for
about 0.3 s). ``cores`` is CPU over wall: the cores a side kept busy. The table reports
each side's fastest round (the least disturbed by the other processes of a shared
machine) and the median.

Usage::

    python benchmarks/bench_holdem.py                      # the three spots, 3 rounds (~90 s)
    python benchmarks/bench_holdem.py --spots river_full --rounds 5
    python benchmarks/bench_holdem.py --peer ''            # jaxcfr alone

Spots (the peer driver's names): ``river_full`` (Td9d6h5c2s, every combination, 1,081 hands
each), ``river_readme`` (its README ranges, 175 + 252 hands), ``turn_readme`` (Td9d6h5c,
175 + 256 hands, 2,085 public nodes); pot 100, stack 200, the sizes of its example.
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
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr_games.holdem.spot import HoldemSpot

from benchkit import postflop
from benchkit.public_chunk import public_chunk

#: name: (spot, jaxcfr iterations per round, pf_bench arguments, peer iterations per round)
SPOTS = {
    "river_full": (lambda: HoldemSpot(ranges=(np.ones(1326), np.ones(1326))), 200,
                   ("river", "full"), 2500),
    "river_readme": (lambda: HoldemSpot(), 1000, ("river", "readme"), 10000),
    "turn_readme": (lambda: HoldemSpot(board="Td9d6h5c"), 10, ("turn", "readme"), 80),
    # a turn that keeps clubs ~ spades (the 5c above pins clubs), without and with the
    # merge of suit-isomorphic river cards (jaxcfr alone: the peer's driver has no such spot)
    "turn_5d": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=False), 10, None, 0),
    "turn_5d_iso": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=True), 10, None, 0),
}


def _jaxcfr_round(run, iterations: int) -> tuple[float, float]:
    """CPU and wall seconds of one compiled chunk of ``iterations``."""
    cpu, wall = time.process_time(), time.perf_counter()
    jax.block_until_ready(run())
    return time.process_time() - cpu, time.perf_counter() - wall


def _peer_round(peer: str, args: tuple, iterations: int) -> tuple[float, float]:
    """The peer's own CPU and wall seconds of ``iterations`` of ``solve_step``."""
    return postflop.totals(postflop.run(peer, (*args, "100", "200"), iterations, iterations),
                           iterations)


def bench(name: str, rounds: int, peer: str | None) -> dict:
    make, iterations, peer_args, peer_iterations = SPOTS[name]
    lowered = jaxcfr.lower_public(make())
    dtype = np.dtype(np.float32)
    solver = public_solver(jaxcfr.postflop_dcfr())
    out = {"spot": name, "nodes": lowered.num_nodes, "merged": len(lowered.merged),
           "hands": list(lowered.structure.hands),
           "jaxcfr_iterations": iterations, "peer_iterations": peer_iterations}
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        hp = solver.hyperparams(dtype)
        state = solver.init(tensors, dtype=dtype)
        clock = time.process_time()
        compiled = public_chunk.lower(tensors, state, hp, solver=solver,
                                      structure=lowered.structure, count=iterations).compile()
        out["jaxcfr_compile_cpu_s"] = time.process_time() - clock

        def run():
            return compiled(tensors, state, hp).regret
        run()                                                              # warm
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(_jaxcfr_round(run, iterations))
            if peer and peer_args:
                theirs.append(_peer_round(peer, peer_args, peer_iterations))
    for side, runs, n in (("jaxcfr", ours, iterations), ("peer", theirs, peer_iterations)):
        if not runs:
            continue
        cpu = np.asarray([c for c, _ in runs]) * 1e3 / n
        wall = np.asarray([w for _, w in runs]) * 1e3 / n
        out[f"{side}_cpu_ms_min"] = round(float(cpu.min()), 4)
        out[f"{side}_cpu_ms_median"] = round(float(np.median(cpu)), 4)
        out[f"{side}_cores"] = round(float(np.median(cpu / np.maximum(wall, 1e-12))), 2)
    if theirs:
        out["ratio_cpu_min"] = round(out["jaxcfr_cpu_ms_min"] / max(out["peer_cpu_ms_min"],
                                                                    1e-9), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spots", nargs="+", default=list(SPOTS), choices=SPOTS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--peer", default=postflop.default_binary(),
                        help=f"pf_bench's path (default ${postflop.ENV}; '' for none)")
    args = parser.parse_args()
    if args.peer and not os.path.exists(args.peer):
        parser.error(f"--peer {args.peer}: no such file (build the peer: docs/holdem.md, "
                     "'Building the peer'; '' for jaxcfr alone)")
    peer = args.peer or None
    load = os.getloadavg()[0]
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load {load:.1f}, {jax.devices()[0].platform}, "
        f"jax {jax.__version__}", "peer": peer}), flush=True)
    for name in args.spots:
        print(json.dumps(bench(name, args.rounds, peer)), flush=True)


if __name__ == "__main__":
    main()
