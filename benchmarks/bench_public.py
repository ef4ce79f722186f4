"""Public tree against history tree on the same game: lowering, bytes, time per iteration.

For each game: lower it both ways (CPU seconds: ``time.process_time``), count the host
bytes of the lowered tensors and the device bytes a CFR+ run holds (the game's device
tensors, the sequence-form tables for the history tree, and the four solver tables),
then time CFR+ iterations (float32, alternating; the same jitted loop of
``Solver.step`` for both, after a warm-up that compiles it): wall and CPU milliseconds
per iteration. The history tree runs on the sequence form, as ``jaxcfr.solve`` does.
Finally both profiles' exploitability after the same iterations (they are the same
game: they agree to float32 rounding).

Usage::

    python benchmarks/bench_public.py                      # leduc(ranks=13), liars_dice(1, 6)
    python benchmarks/bench_public.py --games leduc13 --iterations 200
    python benchmarks/bench_public.py --games liars9 --public-only   # too large as histories

Each game takes well under 2 minutes on a 2-core CPU (except ``--games liars9``). A small
game is lowered both ways first, so that imports do not count in the first game's figures.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.solvers.analytics import device_tensors
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr_games.public_leduc import PublicLeduc
from jaxcfr_games.public_liars_dice import PublicLiarsDice

from benchkit.public_chunk import public_chunk
from benchkit.timing import cpu_seconds

GAMES = {
    "leduc13": ("leduc_poker(ranks=13)", lambda: PublicLeduc(ranks=13)),
    "leduc": ("leduc_poker", lambda: PublicLeduc()),
    "liars6": ("liars_dice(dice=1, sides=6)", lambda: PublicLiarsDice(1, 6)),
    "liars9": ("liars_dice(dice=1, sides=9)", lambda: PublicLiarsDice(1, 9)),
}


def _bytes(tree) -> int:
    return int(sum(np.asarray(x).nbytes if not hasattr(x, "nbytes") else x.nbytes
                   for x in jax.tree_util.tree_leaves(tree)))


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the parallel lowering's
    workers)."""
    return cpu_seconds(children=True)


def _time(solver, tensors, structure, iterations, dtype):
    hp = solver.hyperparams(dtype)
    state = solver.init(tensors, dtype=dtype)
    state = public_chunk(tensors, state, hp, solver=solver, structure=structure, count=iterations)
    jax.block_until_ready(state.regret)                                  # compile + warm
    cpu, wall = time.process_time(), time.perf_counter()
    state = public_chunk(tensors, state, hp, solver=solver, structure=structure, count=iterations)
    jax.block_until_ready(state.regret)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return state, 1e3 * wall / iterations, 1e3 * cpu / iterations


def bench(key: str, iterations: int, public_only: bool) -> dict:
    name, make = GAMES[key]
    dtype = np.dtype(np.float32)
    out = {"game": name}
    cpu, wall = _cpu(), time.perf_counter()
    public = jaxcfr.lower_public(make())
    out["public_lowering_cpu_s"] = _cpu() - cpu
    out["public_lowering_wall_s"] = time.perf_counter() - wall
    out["public_nodes"] = public.num_nodes
    out["public_rows"] = public.num_rows
    out["public_host_bytes"] = public.nbytes
    base = jaxcfr.cfr_plus()
    with precision.scope(dtype):
        pt = public_device_tensors(public, dtype)
        ps = public_solver(base)
        state, wall, cpu_ms = _time(ps, pt, public.structure, iterations, dtype)
        out["public_device_bytes"] = _bytes(pt) + _bytes(state[:-1])
        out["public_ms_per_iteration_wall"] = wall
        out["public_ms_per_iteration_cpu"] = cpu_ms
        out["public_exploitability"] = float(jaxcfr.evaluate_public(
            public, state.strategy_sum, dtype="float64")["exploitability"])
    if public_only:
        return out
    cpu, wall = _cpu(), time.perf_counter()
    history = jaxcfr.lower(jaxcfr.load_game(name))
    out["history_lowering_cpu_s"] = _cpu() - cpu
    out["history_lowering_wall_s"] = time.perf_counter() - wall
    out["history_nodes"] = history.num_nodes
    out["history_rows"] = history.num_rows
    out["history_host_bytes"] = history.nbytes
    with precision.scope(dtype):
        ht = device_tensors(history, dtype)
        state, wall, cpu_ms = _time(base, ht, history.structure, iterations, dtype)
        out["history_device_bytes"] = _bytes(ht) + _bytes(state[:-1])
        out["history_ms_per_iteration_wall"] = wall
        out["history_ms_per_iteration_cpu"] = cpu_ms
        out["history_exploitability"] = float(jaxcfr.evaluate(
            history, state.strategy_sum, dtype="float64", normalise=True)["exploitability"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["leduc13", "liars6"], choices=GAMES)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--public-only", action="store_true")
    args = parser.parse_args()
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].platform}, jax {jax.__version__}"}))
    # imports and first-use costs out of the first game's lowering figures
    from jaxcfr_games.public_kuhn import PublicKuhn
    jaxcfr.lower_public(PublicKuhn())
    jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    for key in args.games:
        print(json.dumps(bench(key, args.iterations, args.public_only)), flush=True)


if __name__ == "__main__":
    main()
