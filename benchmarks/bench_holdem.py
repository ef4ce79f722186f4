"""Hold'em spots side by side with postflop-solver: CPU per iteration, to a target, memory.

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

With ``--to-target`` (a percentage of the pot, 0.5 by default) each side instead solves
each spot from scratch in a fresh process until its exploitability, checked every
``--check-every`` iterations (the same checks on both sides), is at most that share of the
pot, ``--rounds`` times, in turns: jaxcfr's child (this program with ``--child``) lowers
the spot, compiles a chunk of ``--check-every`` iterations and a float32 exploitability,
then alternates chunks and evaluations, each timed apart (as the peer times ``solve_step``
apart from ``compute_exploitability``); the peer is ``pf_bench SPOT ITERATIONS CHECK``.
Reported per side: the iterations to the target, the CPU (and wall) seconds of the solving
steps to it (lowering, compiling and evaluations apart), the evaluations' seconds, and the
memory: jaxcfr's device tensors and solver state (bytes of the arrays, and XLA's temporary
bytes of the compiled chunk) and its process's peak resident bytes above its baseline (after
importing JAX and jaxcfr, before the spot); the peer's own ``memory_usage()`` and its
process's peak resident bytes above its baseline (a run of 0 iterations: the game built,
its tables not allocated). The peer's CPU clock ticks at 10 ms, too coarse for the rivers'
few milliseconds, so its CPU to the target is also given as the iterations times its CPU per
iteration, from a long run in the same round (the per-iteration mode's figure).

Usage::

    python benchmarks/bench_holdem.py                      # the three spots, 3 rounds (~90 s)
    python benchmarks/bench_holdem.py --spots river_full --rounds 5
    python benchmarks/bench_holdem.py --peer ''            # jaxcfr alone
    python benchmarks/bench_holdem.py --to-target --presets postflop-dcfr pcfr+ --rounds 3
    python benchmarks/bench_holdem.py --to-target 0.1 --spots turn_full --rounds 1

Spots (the peer driver's names): ``river_full`` (Td9d6h5c2s, every combination, 1,081 hands
each), ``river_readme`` (its README ranges, 175 + 252 hands), ``turn_readme`` (Td9d6h5c,
175 + 256 hands, 2,085 public nodes), ``turn_full`` (Td9d6h5c, 1,128 hands each); pot 100,
stack 200, the sizes of its example. Flops (Td9d6h, 436,618 public nodes once the
suit-isomorphic cards are merged): ``flop_readme`` (180 + 265 hands; jaxcfr's solve needs
more memory than most machines have: where it does not fit the budget, the line reports
the error and times the peer alone) and ``flop_small`` (34 + 26 hands, ``SMALL_RANGES``:
``pf_bench`` knows only its two range sets, so the peer runs it through
``postflop_strategy_dump``, built beside it, and its CPU per iteration is the difference of
a run of ``1 + N`` iterations and one of 1, each building the game and writing its strategy
to ``/dev/null``). The per-iteration mode also reports each side's memory: jaxcfr's device
tensors and solver state, XLA's temporaries of the compiled chunk and its lowering and
compile CPU seconds; the peer's ``memory_usage()`` (from ``postflop_strategy_dump``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import platform
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_device_tensors, public_metrics, public_solver
from jaxcfr_games.holdem.spot import README_RANGES, HoldemSpot

from benchkit import memory, postflop
from jaxcfr._util.arguments import command_line_type, positive_float

from benchkit.arguments import checked_preset, count
from benchkit.fresh import fresh_python
from benchkit.public_chunk import public_chunk

#: ``type=`` of ``--to-target``: a percentage of the pot above 0.
PERCENT = command_line_type(positive_float, "--to-target", float)

#: Small ranges for a flop both sides solve on a 2-core machine (OOP's, IP's: 34 and 26 hands
#: on Td9d6h; those of tests/test_holdem_spot.py's turn and flop spots).
SMALL_RANGES = ("AA,KK,T9s,87s,65s,AQo:0.5", "QQ,JJ,A5s,KQs,76s,T8s")


@dataclasses.dataclass(frozen=True)
class Dumped:
    """A spot the peer solves through ``postflop_strategy_dump`` (any board and ranges; its
    example's sizes), where ``pf_bench``'s two range sets do not reach."""
    board: str
    ranges: tuple[str, str]
    pot: int = 100
    stack: int = 200


#: name: (spot, jaxcfr iterations per round, pf_bench arguments or a :class:`Dumped` spot,
#: peer iterations per round)
SPOTS = {
    "river_full": (lambda: HoldemSpot(ranges=(np.ones(1326), np.ones(1326))), 200,
                   ("river", "full"), 2500),
    "river_readme": (lambda: HoldemSpot(), 1000, ("river", "readme"), 10000),
    "turn_readme": (lambda: HoldemSpot(board="Td9d6h5c"), 10, ("turn", "readme"), 80),
    "turn_full": (lambda: HoldemSpot(board="Td9d6h5c", ranges=(np.ones(1326), np.ones(1326))),
                  2, ("turn", "full"), 20),
    # a turn that keeps clubs ~ spades (the 5c above pins clubs), without and with the
    # merge of suit-isomorphic river cards (jaxcfr alone: the peer's driver has no such spot)
    "turn_5d": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=False), 10, None, 0),
    "turn_5d_iso": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=True), 10, None, 0),
    "flop_small": (lambda: HoldemSpot(board="Td9d6h", ranges=SMALL_RANGES), 3,
                   Dumped("Td9d6h", SMALL_RANGES), 40),
    "flop_readme": (lambda: HoldemSpot(board="Td9d6h"), 1, ("flop", "readme"), 3),
}


def _jaxcfr_round(run, iterations: int) -> tuple[float, float]:
    """CPU and wall seconds of one compiled chunk of ``iterations``."""
    cpu, wall = time.process_time(), time.perf_counter()
    jax.block_until_ready(run())
    return time.process_time() - cpu, time.perf_counter() - wall


def _peer_round(peer: str, args: tuple | Dumped, iterations: int) -> tuple[float, float]:
    """The peer's own CPU and wall seconds of ``iterations`` of ``solve_step`` (a
    :class:`Dumped` spot: the difference of two runs of ``postflop_strategy_dump``)."""
    if isinstance(args, Dumped):
        dumper = postflop.dumper_beside(peer)
        if not dumper:
            raise RuntimeError(f"no postflop_strategy_dump beside {peer} (docs/holdem.md, "
                               "'Building the peer')")
        spot = (dumper, args.board, args.ranges, args.pot, args.stack)
        one, many = postflop.dump_cpu(*spot, 1), postflop.dump_cpu(*spot, 1 + iterations)
        return many[0] - one[0], many[1] - one[1]
    return postflop.totals(postflop.run(peer, (*args, "100", "200"), iterations, iterations),
                           iterations)


def bench(name: str, rounds: int, peer: str | None) -> dict:
    make, iterations, peer_args, peer_iterations = SPOTS[name]
    out = {"spot": name, "jaxcfr_iterations": iterations, "peer_iterations": peer_iterations}
    if peer and peer_args:
        out["peer_memory_usage_bytes"] = peer_memory(peer, peer_args)
    clock = time.process_time()
    try:
        lowered = jaxcfr.lower_public(make())
    except MemoryBudgetError as e:                 # the peer alone (flop_readme, small hosts)
        out["jaxcfr_error"] = str(e)
        theirs = [_peer_round(peer, peer_args, peer_iterations)
                  for _ in range(rounds if peer and peer_args else 0)]
        return _summary(out, [], theirs)
    dtype = np.dtype(np.float32)
    solver = public_solver(jaxcfr.postflop_dcfr())
    out.update({"nodes": lowered.num_nodes, "merged": len(lowered.merged),
                "hands": list(lowered.structure.hands),
                "jaxcfr_lower_cpu_s": round(time.process_time() - clock, 2)})
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        hp = solver.hyperparams(dtype)
        state = solver.init(tensors, dtype=dtype)
        clock = time.process_time()
        compiled = public_chunk.lower(tensors, state, hp, solver=solver,
                                      structure=lowered.structure, count=iterations).compile()
        out["jaxcfr_compile_cpu_s"] = time.process_time() - clock
        out["jaxcfr_tensor_bytes"], out["jaxcfr_state_bytes"] = _nbytes(tensors), _nbytes(state)
        out["jaxcfr_chunk_temp_bytes"] = int(getattr(compiled.memory_analysis(),
                                                     "temp_size_in_bytes", 0) or 0)

        def run():
            return compiled(tensors, state, hp).regret
        run()                                                              # warm
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(_jaxcfr_round(run, iterations))
            if peer and peer_args:
                theirs.append(_peer_round(peer, peer_args, peer_iterations))
    out["jaxcfr_peak_rss"] = memory.peak_rss()
    return _summary(out, ours, theirs)


def _summary(out: dict, ours: list, theirs: list) -> dict:
    """``out`` with each side's CPU ms per iteration (fastest round, median) and cores."""
    for side, runs in (("jaxcfr", ours), ("peer", theirs)):
        n = out[f"{side}_iterations"]
        if not runs:
            continue
        cpu = np.asarray([c for c, _ in runs]) * 1e3 / n
        wall = np.asarray([w for _, w in runs]) * 1e3 / n
        out[f"{side}_cpu_ms_min"] = round(float(cpu.min()), 4)
        out[f"{side}_cpu_ms_median"] = round(float(np.median(cpu)), 4)
        out[f"{side}_cores"] = round(float(np.median(cpu / np.maximum(wall, 1e-12))), 2)
    if ours and theirs:
        out["ratio_cpu_min"] = round(out["jaxcfr_cpu_ms_min"] / max(out["peer_cpu_ms_min"],
                                                                    1e-9), 2)
    return out


def _nbytes(tree) -> int:
    return int(sum(x.nbytes for x in jax.tree_util.tree_leaves(tree)))


@functools.partial(jax.jit, static_argnames=("solver", "structure"))
def _exploitability(tensors, state, *, solver, structure):
    """The average profile's exploitability ``[]`` (NashConv / 2, chips), as the peer's."""
    values, best = public_metrics(tensors, solver.average_strategy(tensors, state),
                                  structure=structure)
    return (best - values).sum(axis=0) / 2


def child(name: str, preset: str, target: float, check: int, most: int) -> dict:
    """One fresh process's solve of spot ``name`` with ``preset`` until the exploitability
    is at most ``target`` percent of the pot (checked every ``check`` iterations, at most
    ``most``): iterations, seconds and memory (the module's ``--to-target``)."""
    jax.block_until_ready(jax.numpy.zeros(8) + 1)                     # the runtime is up
    base = memory.rss()
    cpu = time.process_time()
    spot = SPOTS[name][0]()
    lowered = jaxcfr.lower_public(spot)
    lower_cpu = time.process_time() - cpu
    dtype = np.dtype(np.float32)
    solver = public_solver(make_solver(preset))
    structure = lowered.structure
    goal = target / 100 * spot.pot
    with precision.scope(dtype):
        tensors = public_device_tensors(lowered, dtype)
        hp = solver.hyperparams(dtype)
        state = solver.init(tensors, dtype=dtype)
        before_compile = memory.peak_rss() - base                  # lowering, tensors, state
        cpu = time.process_time()
        chunk = public_chunk.lower(tensors, state, hp, solver=solver, structure=structure,
                                   count=check).compile()
        evaluate = _exploitability.lower(tensors, state, solver=solver,
                                         structure=structure).compile()
        compile_cpu = time.process_time() - cpu
        temp = chunk.memory_analysis()
        first = float(evaluate(tensors, state))                         # iteration 0, warm
        steps_cpu = steps_wall = eval_cpu = eval_wall = 0.0
        done, trace, reached = 0, [(0, first)], None
        while done < most:
            cpu, wall = time.process_time(), time.perf_counter()
            state = jax.block_until_ready(chunk(tensors, state, hp))
            steps_cpu += time.process_time() - cpu
            steps_wall += time.perf_counter() - wall
            done += check
            cpu, wall = time.process_time(), time.perf_counter()
            exploitability = float(evaluate(tensors, state))
            eval_cpu += time.process_time() - cpu
            eval_wall += time.perf_counter() - wall
            trace.append((done, exploitability))
            if exploitability <= goal:
                reached = done
                break
    return {"spot": name, "preset": preset, "hands": list(structure.hands),
            "nodes": lowered.num_nodes, "rows": int(lowered.tensors.legal_mask.shape[0]),
            "actions": int(lowered.tensors.legal_mask.shape[1]),
            "target_chips": goal, "reached_at": reached, "iterations": done,
            "exploitability": trace[-1][1], "trace": trace[1::max(1, len(trace) // 10)],
            "steps_cpu_s": steps_cpu, "steps_wall_s": steps_wall,
            "eval_cpu_s": eval_cpu, "eval_wall_s": eval_wall, "evaluations": len(trace) - 1,
            "lower_cpu_s": lower_cpu, "compile_cpu_s": compile_cpu,
            "tensor_bytes": _nbytes(tensors), "state_bytes": _nbytes(state),
            "table_bytes": int(state.regret.nbytes),
            "chunk_temp_bytes": int(getattr(temp, "temp_size_in_bytes", 0) or 0),
            "peak_rss_above_base": memory.peak_rss() - base, "base_rss": base,
            "peak_rss_before_compile_above_base": before_compile,
            "rss_after_above_base": memory.rss() - base}


#: The peer driver's spots as boards and ranges (``postflop_strategy_dump``'s arguments).
_BOARDS = {"river": "Td9d6h5c2s", "turn": "Td9d6h5c", "flop": "Td9d6h"}
_RANGES = {"readme": README_RANGES, "full": ("22+,A2+,K2+,Q2+,J2+,T2+,92+,82+,72+,62+,52+,"
                                             "42+,32",) * 2}


def peer_memory(peer: str, args: tuple | Dumped) -> int | None:
    """The peer's exact ``memory_usage()`` bytes of spot ``args`` (``pf_bench`` prints it
    to 0.1 MiB), from ``postflop_strategy_dump`` when it is built beside ``pf_bench``."""
    dumper = postflop.dumper_beside(peer)
    if not dumper:
        return None
    if isinstance(args, Dumped):
        return postflop.memory_of(dumper, args.board, args.ranges, args.pot, args.stack)[0]
    return postflop.memory_of(dumper, _BOARDS[args[0]], _RANGES[args[1]], 100, 200)[0]


def peer_to_target(peer: str, args: tuple, target: float, check: int, most: int,
                   base_peak: int) -> dict:
    """The peer's solve of one spot until its exploitability is at most ``target`` percent
    of the pot (pot 100), checked every ``check`` iterations, at most ``most``."""
    out, peak = postflop.run_measured(peer, (*args, "100", "200"), most, check)
    goal = target / 100 * 100
    seen = postflop.checks(out)
    hit = next((c for c in seen if c[1] <= goal), None)
    evaluations, eval_wall = postflop.evaluations(out)
    return {"reached_at": hit[0] if hit else None,
            "iterations": hit[0] if hit else seen[-1][0],
            "exploitability": hit[1] if hit else seen[-1][1],
            "steps_wall_s": (hit or seen[-1])[2], "steps_cpu_s_ticks": (hit or seen[-1])[3],
            "eval_wall_s": eval_wall, "evaluations": evaluations,
            "memory_usage_bytes": peer_memory(peer, args) or postflop.memory_usage(out),
            "peak_rss_above_base": None if peak is None else peak - base_peak,
            "base_rss": base_peak}


def _median(runs: list[dict], key: str):
    values = [r[key] for r in runs if r.get(key) is not None]
    return float(np.median(values)) if values else None


def to_target(name: str, presets: list[str], target: float, check: int, most: int,
              rounds: int, peer: str | None) -> list[dict]:
    """``--to-target`` of one spot: every preset's fresh process and the peer's, in turns,
    ``rounds`` times; one summary per preset (medians over the rounds)."""
    _, _, peer_args, peer_iterations = SPOTS[name]
    peer = peer if peer_args and not isinstance(peer_args, Dumped) else None  # pf_bench's
    base_peak = postflop.run_measured(peer, (*peer_args, "100", "200"), 0, 1)[1] if peer else 0
    ours = {p: [] for p in presets}
    theirs, per_iteration = [], []
    for _ in range(rounds):
        for preset in presets:
            run = fresh_python([os.path.abspath(__file__), "--child", name, preset,
                                "--to-target", str(target), "--check-every", str(check),
                                "--most", str(most)], check=True)
            ours[preset].append(run.last_json())
        if peer:
            theirs.append(peer_to_target(peer, peer_args, target, check, most, base_peak))
            cpu, _ = _peer_round(peer, peer_args, peer_iterations)
            per_iteration.append(cpu / peer_iterations)
    out = []
    peer_summary = None
    if theirs:
        peer_cpu = float(np.median(per_iteration))
        peer_summary = {k: _median(theirs, k) for k in (
            "reached_at", "iterations", "exploitability", "steps_wall_s", "steps_cpu_s_ticks",
            "eval_wall_s", "memory_usage_bytes", "peak_rss_above_base")}
        peer_summary["cpu_ms_per_iteration"] = 1e3 * peer_cpu
        peer_summary["steps_cpu_s"] = peer_cpu * peer_summary["iterations"]
    for preset, runs in ours.items():
        summary = {"spot": name, "preset": preset, "target_pot_percent": target,
                   "check_every": check, "rounds": rounds, "hands": runs[0]["hands"],
                   "nodes": runs[0]["nodes"], "rows": runs[0]["rows"]}
        summary.update({k: _median(runs, k) for k in (
            "reached_at", "iterations", "exploitability", "steps_cpu_s", "steps_wall_s",
            "eval_cpu_s", "eval_wall_s", "lower_cpu_s", "compile_cpu_s", "tensor_bytes",
            "state_bytes", "table_bytes", "chunk_temp_bytes", "peak_rss_above_base",
            "peak_rss_before_compile_above_base", "rss_after_above_base")})
        summary["cores"] = summary["steps_cpu_s"] / max(summary["steps_wall_s"], 1e-12)
        summary["cpu_ms_per_iteration"] = 1e3 * summary["steps_cpu_s"] / summary["iterations"]
        summary["trace"] = runs[-1]["trace"]
        if peer_summary:
            summary["peer"] = peer_summary
            summary["ratio_steps_cpu"] = summary["steps_cpu_s"] / max(
                peer_summary["steps_cpu_s"], 1e-12)
            summary["ratio_device_bytes"] = (summary["tensor_bytes"] + summary["state_bytes"]
                                             ) / peer_summary["memory_usage_bytes"]
        out.append(summary)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spots", nargs="+", default=None, choices=SPOTS,
                        help="default: every spot but turn_full (with --to-target: the "
                        "rivers and turn_readme)")
    parser.add_argument("--rounds", type=count("--rounds"), default=3)
    parser.add_argument("--peer", default=postflop.default_binary(),
                        help=f"pf_bench's path (default ${postflop.ENV}; '' for none)")
    parser.add_argument("--to-target", type=PERCENT, nargs="?", const=0.5, default=None,
                        metavar="PERCENT", help="solve each spot to this exploitability, "
                        "percent of the pot (default 0.5), in fresh processes")
    parser.add_argument("--presets", nargs="+", default=["postflop-dcfr"],
                        help="jaxcfr's presets with --to-target (default postflop-dcfr)")
    parser.add_argument("--check-every", type=count("--check-every"), default=10,
                        help="iterations between exploitability checks, both sides (>= 10: "
                        "the peer prints every check)")
    parser.add_argument("--most", type=count("--most"), default=2000,
                        help="at most this many iterations with --to-target")
    parser.add_argument("--child", nargs=2, metavar=("SPOT", "PRESET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, args.to_target or 0.5, args.check_every,
                               args.most)), flush=True)
        return
    presets = [checked_preset(parser, "--presets", p) for p in args.presets]
    if args.peer and not os.path.exists(args.peer):
        parser.error(f"--peer {args.peer}: no such file (build the peer: docs/holdem.md, "
                     "'Building the peer'; '' for jaxcfr alone)")
    if args.to_target is not None and args.check_every < 10 and args.peer:
        parser.error("--check-every below 10 with the peer: pf_bench prints only some checks")
    spots = args.spots or ([n for n in SPOTS if n != "turn_full"] if args.to_target is None
                           else ["river_full", "river_readme", "turn_readme"])
    peer = args.peer or None
    load = os.getloadavg()
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load {load[0]:.1f}, {jax.devices()[0].platform}, "
        f"jax {jax.__version__}", "peer": peer}), flush=True)
    for name in spots:
        if args.to_target is None:
            print(json.dumps(bench(name, args.rounds, peer)), flush=True)
            continue
        for summary in to_target(name, presets, args.to_target, args.check_every, args.most,
                                 args.rounds, peer):
            print(json.dumps(summary), flush=True)
    print(json.dumps({"load_average_at_end": [round(x, 2) for x in os.getloadavg()]}),
          flush=True)


if __name__ == "__main__":
    main()
