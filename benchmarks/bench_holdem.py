"""Hold'em spots side by side with postflop-solver: CPU per iteration, to a target, memory.

For each spot, jaxcfr's ``postflop-dcfr`` on the public tree (float32, compiled chunks of
iterations, compilation excluded: ``jaxcfr.solve_public``'s inner loop) and the peer's
``pf_bench`` (b-inary's postflop-solver, one thread: ``RAYON_NUM_THREADS=1``; see
``shared/peers/postflop-solver/README.md``) run in turns, ``--rounds`` times each, so both
see the same machine load. Each side's figure is CPU time: jaxcfr's is this process's
(``time.process_time``, every thread of XLA's pool), the peer's is its own count of
``solve_step``'s CPU seconds (its clock ticks at 10 ms, so it runs enough iterations for
about 0.3 s). ``cores`` is CPU over wall: the cores a side kept busy.

A compiled chunk of jaxcfr pays a fixed cost besides its iterations (the tables into
per-player blocks and back, the starting strategy, the legal mask), and a run (``jaxcfr
solve``, ``train``, the Runner) pays it once per ``DEFAULT_CHUNK`` (64) iterations. So each
round times two chunk lengths of the spot (``SPOTS``: a short one and a long one, at most
``DEFAULT_CHUNK``; a chunk called again until a timing holds enough iterations, the rivers'
few milliseconds; the two in alternating order), then the peer. From the two chunks' CPU
(``chunk_costs``): ``jaxcfr_slope_cpu_ms`` (CPU per iteration, the chunks' difference over
their lengths' difference), ``jaxcfr_fixed_cpu_ms`` (CPU per chunk beside its iterations)
and ``jaxcfr_run_cpu_ms`` (CPU per iteration a run in chunks of ``DEFAULT_CHUNK`` pays:
the slope plus the fixed cost over 64; where the long chunk is 64, exactly its CPU per
iteration). The ``_min`` figures come from each chunk's fastest round (the least disturbed
by the other processes of a shared machine), the ``_median`` ones from each chunk's median
round; the peer's likewise. ``ratio_run_cpu_min`` (what a user's run pays against the peer),
``ratio_slope_cpu_min`` (the iterations alone) and ``ratio_short_cpu_min`` (the short chunk's
CPU per iteration, fixed cost included: on the turns the figure this benchmark reported as
``ratio_cpu_min`` until 2026-12-07, its chunks of 2 iterations on the full-range turn and 10
on the README turn; the rivers' chunks were 200 and 1,000 iterations long) are each against
the peer's fastest round (``_median``: against its median round).

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

    python benchmarks/bench_holdem.py                      # all but turn_full, 3 rounds
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
compile CPU seconds (both chunks); the peer's ``memory_usage()`` (from
``postflop_strategy_dump``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import platform
import shutil
import tempfile
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.engine.runner import DEFAULT_CHUNK
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_device_tensors, public_metrics, public_solver
from jaxcfr_games.holdem.spot import README_RANGES, HoldemSpot

from benchkit import memory, postflop
from jaxcfr._util.arguments import command_line_type, positive_float

from benchkit.arguments import checked_preset, count
from benchkit.fresh import fresh_process, fresh_python
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


@dataclasses.dataclass(frozen=True)
class Chunks:
    """jaxcfr's chunks of one spot: two lengths (``short`` < ``long`` <= ``DEFAULT_CHUNK``)
    and the least iterations one timing holds (a chunk called again until then)."""
    short: int
    long: int
    least: int = 1

    def calls(self, length: int) -> int:
        """How many calls of a chunk of ``length`` one timing makes."""
        return max(1, -(-self.least // length))


#: name: (spot, jaxcfr's :class:`Chunks`, pf_bench arguments or a :class:`Dumped` spot, peer
#: iterations per round)
SPOTS = {
    "river_full": (lambda: HoldemSpot(ranges=(np.ones(1326), np.ones(1326))),
                   Chunks(4, 64, 256), ("river", "full"), 2500),
    "river_readme": (lambda: HoldemSpot(), Chunks(4, 64, 640), ("river", "readme"), 10000),
    "turn_readme": (lambda: HoldemSpot(board="Td9d6h5c"), Chunks(10, 64), ("turn", "readme"),
                    80),
    "turn_full": (lambda: HoldemSpot(board="Td9d6h5c", ranges=(np.ones(1326), np.ones(1326))),
                  Chunks(2, 64), ("turn", "full"), 20),
    # a turn that keeps clubs ~ spades (the 5c above pins clubs), without and with the
    # merge of suit-isomorphic river cards (jaxcfr alone: the peer's driver has no such spot)
    "turn_5d": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=False), Chunks(4, 64), None, 0),
    "turn_5d_iso": (lambda: HoldemSpot(board="Td9d6h5d", isomorphism=True), Chunks(4, 64),
                    None, 0),
    # the flops' long chunks are short (seconds an iteration): their run figure extrapolates
    "flop_small": (lambda: HoldemSpot(board="Td9d6h", ranges=SMALL_RANGES), Chunks(2, 4),
                   Dumped("Td9d6h", SMALL_RANGES), 40),
    "flop_readme": (lambda: HoldemSpot(board="Td9d6h"), Chunks(1, 2), ("flop", "readme"), 3),
}


def chunk_costs(short: int, long: int, cpu_short: float, cpu_long: float,
                chunk: int = DEFAULT_CHUNK) -> tuple[float, float, float]:
    """The per-iteration slope, the fixed cost per chunk and the cost per iteration of a
    run in chunks of ``chunk``, from one chunk of ``short`` iterations costing ``cpu_short``
    and one of ``long`` costing ``cpu_long`` (a chunk of ``n`` costs ``fixed + n slope``; any
    unit; under noise the fixed cost may come out negative)."""
    if not 0 <= short < long:
        raise ValueError(f"chunk lengths {short}, {long}: need 0 <= short < long")
    slope = (cpu_long - cpu_short) / (long - short)
    fixed = cpu_short - short * slope
    return slope, fixed, slope + fixed / chunk


def _jaxcfr_round(run, calls: int) -> tuple[float, float]:
    """CPU and wall seconds of ``calls`` compiled chunks, one after another, each waited
    for (as a run waits for each chunk's state)."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
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
    make, chunks, peer_args, peer_iterations = SPOTS[name]
    lengths = (chunks.short, chunks.long)
    out = {"spot": name, "jaxcfr_chunks": list(lengths),
           "jaxcfr_calls": [chunks.calls(n) for n in lengths], "run_chunk": DEFAULT_CHUNK,
           "peer_iterations": peer_iterations}
    if peer and peer_args:
        out["peer_memory_usage_bytes"] = peer_memory(peer, peer_args)
    clock = time.process_time()
    try:
        lowered = jaxcfr.lower_public(make())
    except MemoryBudgetError as e:                 # the peer alone (flop_readme, small hosts)
        out["jaxcfr_error"] = str(e)
        theirs = [_peer_round(peer, peer_args, peer_iterations)
                  for _ in range(rounds if peer and peer_args else 0)]
        return _summary(out, {}, theirs)
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
        compiled = {n: public_chunk.lower(tensors, state, hp, solver=solver,
                                          structure=lowered.structure, count=n).compile()
                    for n in lengths}
        out["jaxcfr_compile_cpu_s"] = time.process_time() - clock
        out["jaxcfr_tensor_bytes"], out["jaxcfr_state_bytes"] = _nbytes(tensors), _nbytes(state)
        out["jaxcfr_chunk_temp_bytes"] = max(
            int(getattr(c.memory_analysis(), "temp_size_in_bytes", 0) or 0)
            for c in compiled.values())

        held = [state]                      # the chunks donate it: each call's output

        def runner(n):
            def call():
                held[0] = compiled[n](tensors, held[0], hp)
                return held[0].regret
            return call
        for n in lengths:
            jax.block_until_ready(runner(n)())                             # warm
        ours, theirs = {n: [] for n in lengths}, []
        for r in range(rounds):
            for n in lengths[::-1] if r % 2 else lengths:                  # alternate order
                cpu, wall = _jaxcfr_round(runner(n), chunks.calls(n))
                ours[n].append((cpu / chunks.calls(n), wall / chunks.calls(n)))
            if peer and peer_args:
                theirs.append(_peer_round(peer, peer_args, peer_iterations))
    out["jaxcfr_peak_rss"] = memory.peak_rss()
    return _summary(out, ours, theirs)


def _summary(out: dict, ours: dict, theirs: list) -> dict:
    """``out`` with jaxcfr's CPU ms per chunk (``ours``: length -> [(CPU, wall) seconds of
    one chunk per round]), its slope, fixed cost and run cost (``chunk_costs``) from each
    chunk's fastest and median round, and the peer's CPU ms per iteration (``theirs``: its
    [(CPU, wall) seconds] per round), fastest round and median; cores each side kept busy."""
    if ours:
        (short, s_runs), (long, l_runs) = sorted(ours.items())
        for stat, f in (("min", np.min), ("median", np.median)):
            cs, cl = (1e3 * float(f([c for c, _ in runs])) for runs in (s_runs, l_runs))
            slope, fixed, run = chunk_costs(short, long, cs, cl, out["run_chunk"])
            out[f"jaxcfr_chunk_cpu_ms_{stat}"] = [round(cs, 3), round(cl, 3)]
            out[f"jaxcfr_short_cpu_ms_{stat}"] = round(cs / max(short, 1), 4)
            out[f"jaxcfr_slope_cpu_ms_{stat}"] = round(slope, 4)
            out[f"jaxcfr_fixed_cpu_ms_{stat}"] = round(fixed, 3)
            out[f"jaxcfr_run_cpu_ms_{stat}"] = round(run, 4)
        runs = s_runs + l_runs
        out["jaxcfr_cores"] = round(float(np.median(
            [c / max(w, 1e-12) for c, w in runs])), 2)
    if theirs:
        n = out["peer_iterations"]
        cpu = np.asarray([c for c, _ in theirs]) * 1e3 / n
        wall = np.asarray([w for _, w in theirs]) * 1e3 / n
        out["peer_cpu_ms_min"] = round(float(cpu.min()), 4)
        out["peer_cpu_ms_median"] = round(float(np.median(cpu)), 4)
        out["peer_cores"] = round(float(np.median(cpu / np.maximum(wall, 1e-12))), 2)
    if ours and theirs:
        for stat in ("min", "median"):
            peer_ms = max(out[f"peer_cpu_ms_{stat}"], 1e-9)
            for figure in ("run", "slope", "short"):
                out[f"ratio_{figure}_cpu_{stat}"] = round(
                    out[f"jaxcfr_{figure}_cpu_ms_{stat}"] / peer_ms, 2)
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



# -- --fresh: what a user feels, a fresh process from import to answer ---------------------

#: One fresh process of jaxcfr solving a spot to the target, timed from inside by phases: its
#: imports, the lowering, the chunk's compile (``Runner.compile``: tracing, lowering to
#: StableHLO, XLA, or a load from the persistent cache), the evaluation's compile (in its
#: thread beside the chunk's, or when first due), the iterations (``Runner.advance``, its
#: state waited for: a run waits for it at its next evaluation), the evaluations
#: (``Runner.evaluate`` less any wait for that compile), and XLA's compile per
#: program (``backend_compile_and_load``: wall seconds, and the process's CPU while it ran,
#: which counts the other thread too where two overlap); JAX's trace and StableHLO seconds
#: from its own monitoring events. ``FRONT`` is ``cli`` (``jaxcfr train CONFIG --set
#: game.name=GAME --set run.eval_every=CHECK --target GOAL``, a run directory in a temporary
#: folder) or ``api`` (``jaxcfr.solve_public(GAME, "postflop-dcfr", MOST, eval_every=CHECK,
#: target=GOAL)``). SERIAL ``1``: the evaluation is compiled when first due, after the chunk's
#: compile (``Runner.overlap_evaluation`` off; the same run otherwise), so that each
#: program's CPU seconds are its own, its compile inside ``evaluations``. Argv: FRONT GAME
#: CONFIG CHECK MOST GOAL SERIAL.
FRESH_CHILD = r"""
import os, sys, time
def cpu():
    t = os.times(); return t.user + t.system
T0, C0 = time.perf_counter(), cpu()
import json, tempfile, threading
front, game, config, check, most, goal, serial = sys.argv[1:8]
phases, programs, events = {}, {}, {}
def add(name, c, w):
    p = phases.setdefault(name, [0.0, 0.0]); p[0] += c; p[1] += w
def timed(name, fn):
    def wrapped(*a, **k):
        c, w = cpu(), time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            add(name, cpu() - c, time.perf_counter() - w)
    return wrapped
import jax
from jax._src import compiler
compile_and_load = compiler.backend_compile_and_load
def compiling(backend, module, *a, **k):
    name = str(module.operation.attributes["sym_name"]).strip('"')
    c, w = cpu(), time.perf_counter()
    try:
        return compile_and_load(backend, module, *a, **k)
    finally:
        p = programs.setdefault(name, {"n": 0, "cpu_s": 0.0, "wall_s": 0.0})
        p["n"] += 1; p["cpu_s"] += cpu() - c; p["wall_s"] += time.perf_counter() - w
compiler.backend_compile_and_load = compiling
def event(name, seconds, **_):
    e = events.setdefault(name.rsplit("/", 1)[-1], [0, 0.0]); e[0] += 1; e[1] += seconds
jax.monitoring.register_event_duration_secs_listener(event)
import jaxcfr
from jaxcfr.engine import loop, runner
R = runner.Runner
advance = R.advance                  # waited for: its time, not the next evaluation's
R.advance = timed("iterations", lambda *a, **k: jax.block_until_ready(advance(*a, **k)))
R._wait_for_evaluation_compile = timed("evaluation_compile_wait", R._wait_for_evaluation_compile)
R.evaluate = timed("evaluations_and_wait", R.evaluate)
R.compile = timed("chunk_compile", R.compile)
R._compile_evaluation = timed("evaluation_compile", R._compile_evaluation)
if serial == "1":                       # the evaluation compiled when first due, not beside
    init = R.__init__
    def serialised(self, *a, **k):
        init(self, *a, **k)
        self.overlap_evaluation = False
    R.__init__ = serialised
loop.lower_public = timed("lowering", loop.lower_public)
if front == "cli":
    from jaxcfr.cli.app import main
else:
    solve_public = jaxcfr.solve_public
add("imports", cpu() - C0, time.perf_counter() - T0)
out = tempfile.mkdtemp(prefix="bench-fresh-")
if front == "cli":
    import contextlib, io
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        status = main(["train", config, "--set", f"game.name={game!r}", "--set",
                       f"run.eval_every={check}", "--set", f"solver.iterations={most}",
                       "--target", goal, "--out", os.path.join(out, "run"), "--quiet",
                       "--json"])
    final = json.loads(text.getvalue().strip().splitlines()[-1])
    iterations, metric = final["iteration"], final["final"]["exploitability"]
else:
    r = solve_public(game, "postflop-dcfr", int(most), eval_every=int(check),
                     target=float(goal))
    iterations, metric = r.final["iteration"], float(r.final["exploitability"])
e = phases.pop("evaluations_and_wait", [0.0, 0.0])
wait = phases.get("evaluation_compile_wait", [0.0, 0.0])
phases["evaluations"] = [e[0] - wait[0], e[1] - wait[1]]
phases["total_inside"] = [cpu() - C0, time.perf_counter() - T0]
print(json.dumps({"iterations": iterations, "exploitability": metric, "phases": phases,
                  "programs": programs, "jax_events": events}))
"""

#: Another board of each spot's bet tree (the same pot, stack and sizes; other hand counts:
#: 175 + 251 on the river against 175 + 252, 178 + 259 on the turn against 175 + 256): does a
#: warm cache serve it?
OTHER_BOARD = {"river_readme": "Td9d6h5c3s", "turn_readme": "Td9d6h4c"}
#: The command line's config of each spot (``jaxcfr train``).
CONFIG = {"river_readme": "configs/river.toml", "turn_readme": "configs/turn.toml"}
#: jaxcfr's fresh processes of each round, in order: ``FRONT_CACHE`` with cache ``cold`` (an
#: empty cache directory of its own: a first run, which fills it), ``warm`` (the directory
#: ``cold`` filled), ``other`` (that directory, :data:`OTHER_BOARD`'s spot) and ``off``
#: (``JAXCFR_NO_CACHE=1``: the compilation cache and the cache of lowered games off).
FRESH_VARIANTS = ("cli_cold", "cli_warm", "cli_other", "cli_off",
                  "api_cold", "api_warm", "api_other", "api_off")


def fresh_jaxcfr(variant: str, game: str, config: str, check: int, most: int, goal: float,
                 caches: dict, serial: bool = False) -> dict:
    """One fresh process of ``variant`` (:data:`FRESH_VARIANTS`: its front and cache) solving
    ``game`` (a game string; ``config``: the command line's TOML, its ``game.name`` set to
    ``game``) to ``goal`` (the metric, chips), checked every ``check`` iterations, at most
    ``most``: what it reports (:data:`FRESH_CHILD`) with its wall and CPU seconds from
    outside. ``caches``: each front's cache directory, made by its ``cold`` run;
    ``serial``: the evaluation compiled after the chunk, not beside it (:data:`FRESH_CHILD`)."""
    front, cache = variant.split("_")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXCFR_")}
    env["JAX_PLATFORMS"] = "cpu"
    if cache == "off":
        env["JAXCFR_NO_CACHE"] = "1"
    else:                                   # the front's own directory, filled by its cold run
        if cache == "cold":
            caches[front] = tempfile.mkdtemp(prefix=f"bench-fresh-{front}-")
        env["XDG_CACHE_HOME"] = caches[front]
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = fresh_python(["-c", FRESH_CHILD, front, game, config, str(check), str(most),
                        str(goal), "1" if serial else "0"], env=env,
                       cwd=tempfile.gettempdir(), check=True)
    rec = run.last_json()
    rec.update(variant=variant, game=game, wall_s=run.wall_s, cpu_s=run.cpu_s)
    return rec


def _fresh_peer(peer: str, peer_args: tuple, iterations: int, check: int) -> dict:
    """The peer's fresh process: build the spot, ``iterations`` of ``solve_step`` and its
    exploitability every ``check`` (``pf_bench``, one thread), timed from outside."""
    run = fresh_process([peer, *peer_args, "100", "200", str(iterations), str(check)],
                        env=dict(os.environ, RAYON_NUM_THREADS="1"), check=True)
    seen = postflop.checks(run.stdout)
    return {"variant": "peer", "iterations": seen[-1][0], "exploitability": seen[-1][1],
            "wall_s": run.wall_s, "cpu_s": run.cpu_s, "steps_cpu_s_ticks": seen[-1][3],
            "eval_wall_s": postflop.evaluations(run.stdout)[1]}


def fresh(name: str, rounds: int, peer: str | None, target: float, check: int, most: int,
          variants: list[str], serial: bool = False, board: str | None = None,
          other_board: str | None = None) -> dict:
    """``--fresh`` of one spot: :data:`FRESH_VARIANTS`' fresh processes and the peer's, in
    turns, ``rounds`` times, each solving to ``target`` percent of the pot (checked every
    ``check``): :func:`fresh_summary` of them. ``board`` (default the spot's) is the board
    of every variant but ``*_other``, whose board is ``other_board`` (default
    :data:`OTHER_BOARD`'s); the peer solves the spot's own board (``--peer ''`` where
    ``board`` is another)."""
    make, _, peer_args, _ = SPOTS[name]
    goal = target / 100 * make().pot
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    config = os.path.join(here, CONFIG[name])
    peer_iterations = None
    if peer and peer_args:                  # the peer's iterations to the target, as checked
        hits = [c for c in postflop.checks(postflop.run(peer, (*peer_args, "100", "200"),
                                                         most, check)) if c[1] <= goal]
        peer_iterations = hits[0][0] if hits else most
    runs = {v: [] for v in variants + (["peer"] if peer_iterations else [])}
    for _ in range(rounds):
        caches: dict = {}
        try:
            for v in variants:
                here_board = ((other_board or OTHER_BOARD[name]) if v.endswith("_other")
                              else board or _BOARDS[peer_args[0]])
                runs[v].append(fresh_jaxcfr(v, f"holdem_spot(board='{here_board}')", config,
                                            check, most, goal, caches, serial))
                _say(name, runs[v][-1])
            if peer_iterations:
                runs["peer"].append(_fresh_peer(peer, peer_args, peer_iterations, check))
                _say(name, runs["peer"][-1])
        finally:
            for d in caches.values():
                shutil.rmtree(d, ignore_errors=True)
    return {"spot": name, "target_pot_percent": target, "check_every": check,
            "rounds": rounds, "serial": serial, "variants": fresh_summary(runs)}


def fresh_summary(runs: dict[str, list[dict]]) -> dict:
    """Per variant (``runs``: variant -> one record per round, ``"peer"`` among them or
    not): the medians of its wall and CPU seconds, iterations and exploitability, the cores
    it kept busy (median CPU over median wall), the medians of its phases' [CPU, wall]
    seconds, of each program's compiles (count, CPU, wall) and of JAX's event seconds; and,
    where the peer ran, each round's CPU and wall over the peer's of that round."""
    out = {}
    med = lambda xs: round(float(np.median(xs)), 3)  # noqa: E731
    for v, recs in runs.items():
        s = {k: _median(recs, k) for k in ("wall_s", "cpu_s", "iterations", "exploitability")}
        s["cores"] = s["cpu_s"] / max(s["wall_s"], 1e-12)
        s["game"] = recs[0].get("game")
        if "phases" in recs[0]:
            s["phases"] = {p: [med([r["phases"].get(p, [0, 0])[i] for r in recs])
                               for i in (0, 1)]
                           for p in dict.fromkeys(k for r in recs for k in r["phases"])}
            s["programs"] = {p: {f: med([r["programs"].get(p, {f: 0})[f] for r in recs])
                                 for f in ("n", "cpu_s", "wall_s")}
                             for p in dict.fromkeys(k for r in recs for k in r["programs"])}
            s["jax_events"] = {e: med([r["jax_events"].get(e, [0, 0])[1] for r in recs])
                               for e in dict.fromkeys(k for r in recs for k in r["jax_events"])}
        if runs.get("peer") and v != "peer":
            s["over_peer_cpu"] = [round(r["cpu_s"] / p["cpu_s"], 1)
                                  for r, p in zip(recs, runs["peer"])]
            s["over_peer_wall"] = [round(r["wall_s"] / p["wall_s"], 1)
                                   for r, p in zip(recs, runs["peer"])]
        out[v] = s
    return out


def _say(name: str, rec: dict) -> None:
    print(f"# {name} {rec['variant']:10s} wall {rec['wall_s']:7.2f} s  cpu {rec['cpu_s']:7.2f} s"
          f"  {rec['iterations']} it  exploitability {rec['exploitability']:.4f}  "
          f"load {os.getloadavg()[0]:.1f}", flush=True)


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
    parser.add_argument("--fresh", nargs="*", metavar="VARIANT", default=None,
                        help="time fresh processes from import to answer, to --to-target "
                        "(default 0.5), against the peer's fresh process; VARIANTs of "
                        f"{', '.join(FRESH_VARIANTS)} (default all)")
    parser.add_argument("--serial", action="store_true",
                        help="with --fresh: jaxcfr's evaluation compiled after its chunk, "
                        "not beside it, so that each phase's CPU seconds are its own")
    parser.add_argument("--board", default=None, help="with --fresh: the board of every "
                        "variant but *_other (default the spot's; the same pot, stack and "
                        "bet tree)")
    parser.add_argument("--other-board", default=None, help="with --fresh: the board of the "
                        f"*_other variants (default {OTHER_BOARD}; e.g. another suit "
                        "pattern's)")
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
    if args.fresh is not None:
        bad = sorted(set(args.fresh) - set(FRESH_VARIANTS))
        if bad or not set(args.spots or ()) <= set(CONFIG):
            parser.error(f"--fresh: variants of {FRESH_VARIANTS}, spots of {tuple(CONFIG)}")
    if args.fresh is not None:
        default = list(CONFIG)
    elif args.to_target is None:
        default = [n for n in SPOTS if n != "turn_full"]
    else:
        default = ["river_full", "river_readme", "turn_readme"]
    spots = args.spots or default
    peer = args.peer or None
    load = os.getloadavg()
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load {load[0]:.1f}, {jax.devices()[0].platform}, "
        f"jax {jax.__version__}", "peer": peer}), flush=True)
    for name in spots:
        if args.fresh is not None:
            print(json.dumps(fresh(name, args.rounds, peer, args.to_target or 0.5,
                                   args.check_every, args.most,
                                   list(args.fresh or FRESH_VARIANTS), args.serial,
                                   args.board, args.other_board)),
                  flush=True)
            continue
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
