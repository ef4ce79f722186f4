"""Public tree against history tree on the same game: lowering, bytes, time per iteration.

For each game: lower it both ways (CPU seconds: ``time.process_time``), count the host
bytes of the lowered tensors and the device bytes a CFR+ run holds (the game's device
tensors, the sequence-form tables for the history tree, and the four solver tables),
then time CFR+ iterations (float32, alternating; the same jitted loop of
``Solver.step`` for both, after a warm-up that compiles it): wall and CPU milliseconds
per iteration. The history tree runs on the sequence form, as ``jaxcfr.solve`` does.
Finally both profiles' exploitability after the same iterations (they are the same
game: they agree to float32 rounding).

With ``--target EPS`` it instead measures iterations to a target on one public game
(``--game``, a game string): lowering (CPU seconds, the process's peak resident memory,
the host bytes of the lowered tensors), the device bytes of the step tensors and of the
solver state, then ``--preset`` (default ``dcfr``) in compiled chunks of ``--check-every``
iterations until the exploitability of the average strategy (float64 evaluation) is at
most ``EPS`` or ``--max-iterations`` are done: one JSON line per check and a summary
(iterations, solve CPU seconds without the checks and the one compilation, CPU seconds
per iteration).

Usage::

    python benchmarks/bench_public.py                      # leduc(ranks=13), liars_dice(1, 6)
    python benchmarks/bench_public.py --games leduc13 --iterations 200
    python benchmarks/bench_public.py --games liars9 --public-only   # too large as histories
    python benchmarks/bench_public.py --target 1e-3 --game "liars_dice(sides=9, tree='public')"

Each game takes well under 2 minutes on a 2-core CPU (except ``--games liars9``). A small
game is lowered both ways first, so that imports do not count in the first game's figures.
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
from jaxcfr.solvers.analytics import device_tensors
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr_games.public_leduc import PublicLeduc
from jaxcfr_games.public_liars_dice import PublicLiarsDice

from benchkit.arguments import TARGET, checked_game, checked_preset, count
from benchkit.memory import peak_rss
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


def to_target(game: str, target: float, *, preset: str = "dcfr", check_every: int = 50,
              max_iterations: int = 2000, dtype: str = "float32", emit=print) -> dict:
    """Lower the public game ``game`` (a game string), then run ``preset`` in compiled
    chunks of ``check_every`` iterations until the average strategy's exploitability
    (float64) is at most ``target`` or ``max_iterations`` are done. ``emit`` gets one
    dict per check; returns the summary (also emitted)."""
    if check_every < 1 or max_iterations < 1:
        raise ValueError("--check-every and --max-iterations must be at least 1")
    made = jaxcfr.load_game(game)
    if not isinstance(made, jaxcfr.PublicGame):
        raise ValueError(f"{game!r} is not a public game (add tree='public')")
    dtype = np.dtype(dtype)
    rss, cpu, wall = peak_rss(), _cpu(), time.perf_counter()
    public = jaxcfr.lower_public(made)
    out = {"game": game, "preset": preset, "dtype": str(dtype), "target": target,
           "lowering_cpu_s": _cpu() - cpu, "lowering_wall_s": time.perf_counter() - wall,
           "lowering_peak_rss_bytes_above_start": peak_rss() - rss,
           "public_nodes": public.num_nodes, "rows": public.num_rows,
           "actions": int(public.tensors.legal_mask.shape[1]),
           "legal_fraction": float(np.mean(public.tensors.legal_mask)),
           "host_bytes": public.nbytes}
    solver = public_solver(make_solver(preset))
    with precision.scope(dtype):
        tensors = public_device_tensors(public, dtype)
        state = solver.init(tensors, dtype=dtype)
        hp = solver.hyperparams(dtype)
        out["device_tensor_bytes"] = _bytes(tensors)
        out["device_state_bytes"] = _bytes(state[:-1])
        out["device_bytes"] = out["device_tensor_bytes"] + out["device_state_bytes"]
        cpu = _cpu()
        chunk = public_chunk.lower(tensors, state, hp, solver=solver, structure=public.structure,
                                   count=check_every).compile()
        out["compile_cpu_s"] = _cpu() - cpu
    emit({"lowered": out})
    with precision.scope(np.float64):
        checks = public_device_tensors(public, np.float64)
    solve_cpu = solve_wall = 0.0
    iterations, exploitability = 0, float("inf")
    while iterations < max_iterations and exploitability > target:
        cpu, wall = _cpu(), time.perf_counter()
        state = chunk(tensors, state, hp)
        jax.block_until_ready(state.regret)
        solve_cpu += _cpu() - cpu
        solve_wall += time.perf_counter() - wall
        iterations += check_every
        cpu = _cpu()
        exploitability = float(jaxcfr.evaluate_public(
            public, state.strategy_sum, dtype="float64", tensors=checks)["exploitability"])
        emit({"iteration": iterations, "exploitability": exploitability,
              "solve_cpu_s": round(solve_cpu, 3), "solve_wall_s": round(solve_wall, 3),
              "check_cpu_s": round(_cpu() - cpu, 3)})
    out.update(iterations=iterations, exploitability=exploitability,
               reached=exploitability <= target, solve_cpu_s=solve_cpu, solve_wall_s=solve_wall,
               cpu_s_per_iteration=solve_cpu / iterations, peak_rss_bytes=peak_rss(),
               load_average=list(os.getloadavg()))
    emit({"summary": out})
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["leduc13", "liars6"], choices=GAMES)
    parser.add_argument("--iterations", type=count("--iterations"), default=100)
    parser.add_argument("--public-only", action="store_true")
    parser.add_argument("--target", type=TARGET, metavar="EPS",
                        help="solve --game to exploitability EPS instead (iterations to a target)")
    parser.add_argument("--game", default="liars_dice(sides=9, tree='public')",
                        help="with --target: a public game string")
    parser.add_argument("--preset", default="dcfr", help="with --target: the solver preset")
    parser.add_argument("--check-every", type=count("--check-every"), default=50,
                        help="with --target: iterations per compiled chunk between checks")
    parser.add_argument("--max-iterations", type=count("--max-iterations"), default=2000,
                        help="with --target: stop here if the target is not reached")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"],
                        help="with --target: the solver's float type")
    args = parser.parse_args(argv)
    if args.target is not None:              # before the (long) lowering
        checked_preset(parser, "--preset", args.preset)
        checked_game(parser, "--game", args.game, public=True)
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].platform}, jax {jax.__version__}", "load_average": os.getloadavg()}))
    if args.target is not None:
        to_target(args.game, args.target, preset=args.preset, check_every=args.check_every,
                  max_iterations=args.max_iterations, dtype=args.dtype,
                  emit=lambda d: print(json.dumps(d), flush=True))
        return
    # imports and first-use costs out of the first game's lowering figures
    from jaxcfr_games.public_kuhn import PublicKuhn
    jaxcfr.lower_public(PublicKuhn())
    jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    for key in args.games:
        print(json.dumps(bench(key, args.iterations, args.public_only)), flush=True)


if __name__ == "__main__":
    main()
