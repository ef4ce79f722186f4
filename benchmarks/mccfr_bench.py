#!/usr/bin/env python
"""Monte Carlo estimators against the exact one: cost per iteration, and exploitability
against CPU time. Writes the tables of docs/mccfr.md (as ``mccfr.json``) and ``mccfr.png`` into
``--out`` (default ``runs/mccfr_bench``, beside other runs; ``--out docs`` updates the docs).

Usage::

    python benchmarks/mccfr_bench.py                       # everything (about 15 minutes)
    python benchmarks/mccfr_bench.py --costs --games leduc_poker
    python benchmarks/mccfr_bench.py --race "leduc_poker(ranks=10)" --budget 20
    python benchmarks/mccfr_bench.py --target-only        # iterations to 0.05 on Leduc
    python benchmarks/mccfr_bench.py --peer               # against OpenSpiel's C++ MCCFR
    python benchmarks/mccfr_bench.py --peer --only throughput   # (or compile, fresh, seeds)
    python benchmarks/mccfr_bench.py --peer --only walk    # depth first against level by level
    python benchmarks/mccfr_bench.py --peer --only fresh --fresh-games leduc_poker
    python benchmarks/mccfr_bench.py --peer --only compile_fresh  # each compile its own process
    python benchmarks/mccfr_bench.py --peer --only race --seeds 1 2 3   # Leduc to 0.1, seeded

An entry is ``algorithm/sampling[/samples[/counts]]``: ``cfr/external/4096/counts`` runs
4,096 external-sampling traversals per player and iteration as counts over the whole tree
(:mod:`jaxcfr.kernels.counts`), ``cfr/external/64`` 64 traversals one by one.

The peer figures (``--peer``, into ``mccfr.json`` under ``peer``): sampled traversals per
second of jaxcfr (``samples`` traversals per traverser and iteration in one compiled step,
one by one or as counts) and of OpenSpiel's ``ExternalSamplingMCCFRSolver`` /
``OutcomeSamplingMCCFRSolver`` (one traversal per player and iteration), interleaved A B A
B in one process, wall and CPU seconds; compile seconds of the exact, external and outcome
chunks; wall seconds from a fresh process (imports and compilation included) to a target
exploitability, both sides in fresh processes, interleaved; exploitability after 10,000
iterations over 20 seeds.

Costs are CPU seconds per iteration (``time.process_time``: the machine is shared, so
wall time is noisier), best of 5 repeats, steady state, compilation excluded; every
estimator of a game is timed interleaved with the others in the same process.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

import jax

import jaxcfr
from benchkit.fresh import fresh_python
from benchkit.racing import plot_race, timed
from benchkit.timing import clocks

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMES = ("none", "chance", "external", "outcome")
COST_GAMES = ("leduc_poker", "liars_dice", "goofspiel(cards=6)")
TARGET = ("cfr/none", "cfr+/none", "lcfr/chance/16", "lcfr/external/16", "lcfr/outcome/64")
RACE = ("cfr/none", "cfr+/none", "cfr/chance/16", "lcfr/chance/16", "cfr/external/16",
        "lcfr/external/16", "lcfr/outcome/64")


def costs(game: str, algorithm: str = "cfr+", repeats: int = 5) -> dict[str, float]:
    """CPU milliseconds per iteration of each estimator (best of ``repeats``)."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    runners = {}
    for scheme in SCHEMES:
        runner = jaxcfr.Runner(lowered, jaxcfr.make_solver(algorithm, sampling=scheme),
                               {"seed": 0}, chunk=50)
        state, _ = runner.compile(runner.init())
        runners[scheme] = [runner, state]
    best = {scheme: float("inf") for scheme in SCHEMES}
    for _ in range(repeats):
        for scheme, entry in runners.items():
            runner, state = entry
            # about 0.5 s of work per measurement
            n = 50 if scheme == "none" else 500
            start = time.process_time()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            best[scheme] = min(best[scheme], (time.process_time() - start) / n * 1e3)
            entry[1] = state
    return {"game": game, "nodes": lowered.num_nodes, "algorithm": algorithm,
            "ms_per_iteration": best}


def entry_solver(entry: str) -> jaxcfr.Solver:
    """The solver of an ``algorithm/sampling[/samples[/how]]`` entry: ``how`` is
    ``counts`` (the traversals as counts), ``levels`` (one by one, level by level),
    ``depth`` (one by one, depth first, the walks' output slots pooled) or ``bound``
    (depth first over the static bound's slots, ``pool=0``: the walk before the pool);
    default: levels."""
    parts = entry.split("/")
    algorithm, scheme = parts[0], parts[1]
    samples = int(parts[2]) if len(parts) > 2 else 1
    how = parts[3] if len(parts) > 3 else "levels"
    if scheme == "none":
        return jaxcfr.make_solver(algorithm)
    cls = jaxcfr.ESTIMATORS[scheme]
    estimator = (cls(samples=samples, counts=True) if how == "counts"
                 else cls(samples=samples, walk="depth", pool=0) if how == "bound"
                 else cls(samples=samples, walk=how))
    return jaxcfr.make_solver(algorithm, estimator=estimator)


def _entry_runner(lowered, entry: str, seed: int = 0, chunk: int = 50):
    """A compiled runner for an entry (:func:`entry_solver`), its state, the scheme."""
    scheme = entry.split("/")[1]
    runner = jaxcfr.Runner(lowered, entry_solver(entry), {"seed": seed}, chunk=chunk)
    state, _ = runner.compile(runner.init())
    return runner, state, scheme


def race(game: str, budget: float, entries=RACE) -> dict[str, list]:
    """Exploitability after growing CPU time, per ``algorithm/sampling[/samples]`` entry."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    out = {}
    for entry in entries:
        runner, state, scheme = _entry_runner(lowered, entry)
        points = timed(runner, state, budget, 25 if scheme == "none" else 250,
                       lambda st: float(runner.evaluate(st)["exploitability"]),
                       clock=time.process_time)
        out[entry] = points
        print(entry, points[-1], flush=True)
    return out


def to_target(game: str, target: float, entries=TARGET, limit: float = 120.0) -> dict:
    """Iterations and CPU seconds each entry needs to bring the exact exploitability of
    its average profile below ``target`` (checked every 10% more iterations; ``None``
    past ``limit`` CPU seconds)."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    out = {}
    for entry in entries:
        runner, state, scheme = _entry_runner(lowered, entry)
        done, spent, n, expl = 0, 0.0, 10, float("inf")
        while expl >= target and spent < limit:
            start = time.process_time()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            spent += time.process_time() - start
            done += n
            expl = float(runner.evaluate(state)["exploitability"])
            n = max(10, int(done * 0.1))
        out[entry] = {"iterations": done if expl < target else None,
                      "cpu_seconds": spent if expl < target else None, "exploitability": expl}
        print(entry, out[entry], flush=True)
    return out


# -- against OpenSpiel's C++ MCCFR ------------------------------------------------------------
PEER_GAMES = ("leduc_poker", "liars_dice")
#: jaxcfr's traversals per traverser and iteration in the throughput comparison
PEER_SAMPLES = {"external": ("1", "64", "512", "64/counts", "4096/counts"),
                "outcome": ("1", "256", "4096", "4096/counts", "65536/counts")}
#: the fresh-process race: target exploitability per game, jaxcfr's entry per scheme
FRESH_TARGET = {"leduc_poker": 0.1, "liars_dice": 0.05}
FRESH_ENTRY = {"external": ("cfr/external/64", "cfr/external/64/depth",
                             "cfr/external/4096/counts"),
               "outcome": ("cfr/outcome/1024", "cfr/outcome/1024/depth",
                           "cfr/outcome/65536/counts")}


def _peer_solver(game: str, scheme: str, seed: int = 1):
    import pyspiel
    cls = (pyspiel.ExternalSamplingMCCFRSolver if scheme == "external"
           else pyspiel.OutcomeSamplingMCCFRSolver)
    return cls(pyspiel.load_game(game), seed=seed)


def throughput(game: str, scheme: str, samples=None, rounds: int = 3,
               seconds: float = 1.0) -> dict:
    """Traversals per second (per traverser: one iteration of OpenSpiel is one traversal per
    player, one of jaxcfr ``samples`` per player), best of ``rounds``, jaxcfr and OpenSpiel
    interleaved; about ``seconds`` of work per measurement."""
    samples = PEER_SAMPLES[scheme] if samples is None else samples
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    sides = {}
    for k in samples:
        runner, state, _ = _entry_runner(lowered, f"cfr/{scheme}/{k}")
        sides[f"jaxcfr x{k}"] = [runner, state, int(k.split("/")[0]), 10]
    peer = _peer_solver(game, scheme)
    sides["openspiel"] = [peer, None, 1, 1000]
    best = {name: {"wall": 0.0, "cpu": 0.0} for name in sides}
    for _ in range(rounds):
        for name, entry in sides.items():
            thing, state, k, n = entry
            if state is None:
                def work():
                    for _ in range(n):
                        thing.run_iteration()
            else:
                def work():
                    entry[1] = thing.advance(entry[1], n)
                    jax.block_until_ready(entry[1])
            wall, cpu = clocks(work)
            best[name]["wall"] = max(best[name]["wall"], n * k / wall)
            best[name]["cpu"] = max(best[name]["cpu"], n * k / cpu)
            entry[3] = max(1, int(n * seconds / max(wall, 1e-3)))     # next: about `seconds`
    peer_rate = best["openspiel"]
    updates = {name: {clock: rate / sides[name][2] for clock, rate in b.items()}
               for name, b in best.items()}
    out = {"game": game, "scheme": scheme, "traversals_per_second": best,
           "updates_per_second": updates,
           "updates_ratio_cpu": {n: u["cpu"] / updates["openspiel"]["cpu"]
                                 for n, u in updates.items()},
           "ratio_wall": {n: b["wall"] / peer_rate["wall"] for n, b in best.items()},
           "ratio_cpu": {n: b["cpu"] / peer_rate["cpu"] for n, b in best.items()}}
    print(json.dumps(out), flush=True)
    return out


#: the programs :func:`compile_seconds` compiles (``scheme[/how]``, :func:`entry_solver`)
COMPILE_ENTRIES = ("none", "external", "outcome", "external/counts", "outcome/counts",
                   "external/depth", "outcome/depth")


def compile_seconds(game: str, samples: int = 64, rounds: int = 5,
                    entries=COMPILE_ENTRIES) -> dict:
    """Seconds to compile one chunk of the exact, external and outcome CFR programs (the
    sampled ones with ``samples`` traversals one by one, and as counts): ``rounds``
    interleaved rounds (every program once per round, from its lowered form; the
    persistent cache off), each program's median and every round's seconds; the ratio to
    the exact program's median."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    seconds = {entry: [] for entry in entries}
    for _ in range(rounds):
        for entry in entries:
            scheme, _, how = entry.partition("/")
            name = f"cfr/{scheme}/{samples}" + (f"/{how}" if how else "")
            jax.clear_caches()          # else a later round's compile is a lookup
            runner = jaxcfr.Runner(lowered, entry_solver(name), {"seed": 0}, chunk=50)
            program = runner.chunk_program(runner.init())
            start = time.perf_counter()
            program.compile()
            seconds[entry].append(time.perf_counter() - start)
    out = {entry: statistics.median(s) for entry, s in seconds.items()}
    ratio = {entry: out[entry] / out["none"] for entry in entries}
    print(json.dumps({"game": game, "compile_seconds": out, "ratio_to_exact": ratio}),
          flush=True)
    return {"game": game, "samples": samples, "compile_seconds": out,
            "ratio_to_exact": ratio, "rounds": seconds}


def compile_one(game: str, entry: str, samples: int = 1) -> None:
    """One program's compile, in this (fresh) process (run as a child by
    :func:`compile_fresh`): prints the seconds to trace and lower it and to compile it,
    wall and CPU (``time.process_time``: XLA's compile threads included)."""
    scheme, _, how = entry.partition("/")
    name = f"cfr/{scheme}/{samples}" + (f"/{how}" if how else "")
    algorithm = "cfr+" if scheme == "none+" else "cfr"
    solver = (jaxcfr.make_solver(algorithm) if scheme.startswith("none")
              else entry_solver(name))
    runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game(game), name=game), solver,
                           {"seed": 0}, chunk=50)
    state = runner.init()
    wall, cpu = time.perf_counter(), time.process_time()
    program = runner.chunk_program(state)
    lower_wall, lower_cpu = time.perf_counter() - wall, time.process_time() - cpu
    wall, cpu = time.perf_counter(), time.process_time()
    program.compile()
    print(json.dumps({"game": game, "entry": entry, "lower_wall": lower_wall,
                      "lower_cpu": lower_cpu, "compile_wall": time.perf_counter() - wall,
                      "compile_cpu": time.process_time() - cpu}), flush=True)


#: the programs of :func:`compile_fresh`: the exact CFR and CFR+ steps, then the walks
COMPILE_FRESH_ENTRIES = ("none", "none+", "external/depth", "outcome/depth",
                         "external/levels", "outcome/levels")


def compile_fresh(game: str, rounds: int = 3, entries=COMPILE_FRESH_ENTRIES,
                  samples: int = 1) -> dict:
    """Each program of ``entries`` (``scheme[/how]``; ``none``: exact CFR, ``none+``: exact
    CFR+) compiled in a fresh process of its own (persistent cache off), interleaved over
    ``rounds`` rounds: the medians of the trace-and-lower and the compile seconds, wall
    and CPU, and the compile's ratios to the exact steps' (CPU, then wall)."""
    runs = {entry: [] for entry in entries}
    for _ in range(rounds):
        for entry in entries:
            out = fresh_python([__file__, "--compile-one", game, entry, str(samples)],
                               check=True,
                               env={**os.environ, "JAXCFR_NO_COMPILATION_CACHE": "1"})
            runs[entry].append(out.last_json())
    med = {entry: {key: statistics.median(r[key] for r in rs)
                   for key in ("lower_wall", "lower_cpu", "compile_wall", "compile_cpu")}
           for entry, rs in runs.items()}
    ratio = {base: {entry: {clock: m[f"compile_{clock}"] / med[base][f"compile_{clock}"]
                            for clock in ("cpu", "wall")} for entry, m in med.items()}
             for base in ("none", "none+") if base in med}
    out = {"game": game, "samples": samples, "median": med, "ratio": ratio, "runs": runs}
    print(json.dumps({"game": game, "median": med, "ratio": ratio}), flush=True)
    return out


def fresh_run(side: str, game: str, scheme: str, target: float, entry: str) -> None:
    """jaxcfr's side of the fresh-process race (run as a child process): iterate until the
    exploitability is below ``target``, checking after 1.3x more iterations each time;
    prints seconds since the process started (imports, lowering, compilation included)."""
    start = float(sys.argv[sys.argv.index("--started") + 1])
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    done, n, expl = 0, 10, float("inf")
    k = entry.split("/")[2]
    runner = jaxcfr.Runner(jaxcfr.lower(jaxcfr.load_game(game), name=game),
                           entry_solver(entry), {"seed": seed}, chunk=100)
    state = runner.init()
    while expl >= target:
        state = runner.advance(state, n)
        done += n
        expl = float(runner.evaluate(state)["exploitability"])
        n = max(10, int(done * 0.3))
    traversals = done * int(k)
    print(json.dumps({"side": side, "game": game, "scheme": scheme, "entry": entry,
                      "seed": seed, "iterations": done, "traversals_per_player": traversals,
                      "exploitability": expl, "wall": time.time() - start}), flush=True)


#: OpenSpiel's side of the fresh-process race: no JAX imported (argv: game, scheme, target,
#: start time, seed); the same check schedule (1.3x more iterations each time)
PEER_FRESH = """
import json, sys, time
import pyspiel
game, scheme, target, start = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
seed = int(sys.argv[5]) if len(sys.argv) > 5 else 1
g = pyspiel.load_game(game)
cls = (pyspiel.ExternalSamplingMCCFRSolver if scheme == "external"
       else pyspiel.OutcomeSamplingMCCFRSolver)
solver, done, n, expl = cls(g, seed=seed), 0, 100, float("inf")
while expl >= target:
    for _ in range(n):
        solver.run_iteration()
    done += n
    expl = pyspiel.exploitability(g, solver.average_policy())
    n = max(100, int(done * 0.3))
print(json.dumps({"side": "openspiel", "game": game, "scheme": scheme, "seed": seed,
                  "iterations": done,
                  "traversals_per_player": done, "exploitability": expl,
                  "wall": time.time() - start}))
"""


def race_median(runs: list[dict], key: str) -> float | None:
    """The median of ``key`` (``wall``, ``cpu``) over one side's runs of :func:`fresh`, a
    run stopped at the limit counting as never finished (``inf``); ``None`` for no runs."""
    values = [float("inf") if r.get("wall") is None else r[key] for r in runs]
    return statistics.median(values) if values else None


def fresh(game: str, scheme: str, rounds: int = 2, limit: float = 180.0,
          entries=None, seeds=(1,)) -> dict:
    """Wall seconds from a fresh process to ``FRESH_TARGET[game]``, jaxcfr's entries
    (``entries``, default ``FRESH_ENTRY[scheme]``) and OpenSpiel interleaved (each a new
    process; JAX's persistent compilation cache off), once per round and seed (the same
    seed on both sides); a run past ``limit`` seconds is stopped and recorded as
    ``{"wall": None}``. Each run also has its CPU seconds (``cpu``: the child's user and
    system time, seen from outside), and each side the medians over its runs."""
    entries = FRESH_ENTRY[scheme] if entries is None else tuple(entries)
    runs = {**{entry: [] for entry in entries}, "openspiel": []}
    for _ in range(rounds):
        for seed in seeds:
            for side in runs:
                target = str(FRESH_TARGET[game])
                args = ([__file__, "--fresh-run", "jaxcfr", game, scheme, target, side,
                         "--started", str(time.time()), "--seed", str(seed)]
                        if side != "openspiel"
                        else ["-c", PEER_FRESH, game, scheme, target, str(time.time()),
                              str(seed)])
                try:
                    out = fresh_python(args, check=True, timeout=limit,
                                       env={**os.environ, "JAXCFR_NO_COMPILATION_CACHE": "1"})
                    runs[side].append({**out.last_json(), "cpu": out.cpu_s,
                                       "load_average": os.getloadavg()[0]})
                except subprocess.TimeoutExpired:
                    runs[side].append({"side": side, "seed": seed, "wall": None,
                                       "limit": limit})
                print(json.dumps(runs[side][-1]), flush=True)
    result = {"game": game, "scheme": scheme, "target": FRESH_TARGET[game],
              "seeds": list(seeds), "runs": runs,
              "median_wall": {side: race_median(r, "wall") for side, r in runs.items()},
              "median_cpu": {side: race_median(r, "cpu") for side, r in runs.items()}}
    print(json.dumps(result), flush=True)
    return result


def seeds_study(iterations: int = 10_000, seeds: int = 20) -> dict:
    """Leduc, external sampling, one traversal per player and iteration: exploitability after
    ``iterations`` over ``seeds`` seeds, OpenSpiel C++ against jaxcfr simultaneous (the
    ``cfr`` preset) and alternating (OpenSpiel's order); Welch's t statistic against
    OpenSpiel."""
    import numpy as np
    import pyspiel
    game = pyspiel.load_game("leduc_poker")
    values = {"openspiel": []}
    for seed in range(seeds):
        solver = _peer_solver("leduc_poker", "external", seed)
        for _ in range(iterations):
            solver.run_iteration()
        values["openspiel"].append(pyspiel.exploitability(game, solver.average_policy()))
    # one traversal per player and iteration (one by one; as counts, where one traversal's
    # count is one draw per node: the same estimator), then 64 per iteration for the same
    # number of traversals (one by one, independent; as counts, coupled)
    runs = (("jaxcfr simultaneous", False, jaxcfr.ExternalSampling(), 1),
            ("jaxcfr alternating", True, jaxcfr.ExternalSampling(), 1),
            ("jaxcfr alternating, counts", True, jaxcfr.ExternalSampling(counts=True), 1),
            ("jaxcfr alternating x64", True, jaxcfr.ExternalSampling(samples=64), 64),
            ("jaxcfr alternating x64, counts", True,
             jaxcfr.ExternalSampling(samples=64, counts=True), 64))
    for label, alternating, estimator, k in runs:
        solver = jaxcfr.Solver("cfr", jaxcfr.RegretMatching(), alternating=alternating,
                               estimator=estimator)
        result = jaxcfr.solve("leduc_poker", solver, iterations // k, seed=list(range(seeds)),
                              device=jaxcfr.DeviceOptions(chunk=1000))
        values[label] = [float(x) for x in result.final["exploitability"]]
    stats = {}
    peer = np.asarray(values["openspiel"])
    for label, vals in values.items():
        v = np.asarray(vals)
        se = v.std(ddof=1) / np.sqrt(len(v))
        t = (v.mean() - peer.mean()) / np.sqrt(se ** 2 + (peer.std(ddof=1) ** 2) / len(peer))
        stats[label] = {"mean": float(v.mean()), "stderr": float(se),
                        "welch_t_vs_openspiel": float(t) if label != "openspiel" else 0.0}
    out = {"game": "leduc_poker", "iterations": iterations, "seeds": seeds, "stats": stats,
           "values": values}
    print(json.dumps(stats), flush=True)
    return out


#: the walk study (``--only walk``): jaxcfr's traversals one by one, depth first and level
#: by level, one and a batch per traverser and iteration, against OpenSpiel (issue 32)
#: (512 traversals per player: 1,024 a step, so depth first walks them on 256 lanes that
#: each take the next traversal when theirs ends: kernels.walk.lane_count)
WALK_SAMPLES = ("1/depth", "1/bound", "1/levels", "64/depth", "64/bound", "64/levels",
                "512/depth", "512/levels")


def walk_study(games=PEER_GAMES, rounds: int = 2) -> dict:
    """The depth-first walk against the level-by-level builder and OpenSpiel's C++:
    compile seconds of one chunk (one traversal per player, one round) and strategy
    updates (iterations) per CPU second, interleaved (:func:`throughput`); about a minute
    per game and scheme on a shared 2-core machine."""
    entries = COMPILE_ENTRIES + ("external/bound", "outcome/bound")
    return {"compile": [compile_seconds(g, samples=1, rounds=1, entries=entries)
                        for g in games],
            "throughput": [throughput(g, s, samples=WALK_SAMPLES, rounds=rounds)
                           for g in games for s in ("external", "outcome")]}


#: the fresh-process races of ``--peer`` (game, scheme, rounds)
FRESH_RACES = (("leduc_poker", "external", 2), ("leduc_poker", "outcome", 2),
               ("liars_dice", "outcome", 1), ("liars_dice", "external", 1))


#: the seeded race (``--only race``): Leduc to 0.1, external sampling, jaxcfr's walks
#: (level by level and depth first at x64, depth first at x512) and counts (x4096)
RACE_ENTRIES = ("cfr/external/64", "cfr/external/64/depth", "cfr/external/512/depth",
                "cfr/external/4096/counts")


def peer(out: pathlib.Path, only: str | None = None, fresh_games=None,
         seeds=(1, 2, 3)) -> None:
    """The peer figures into ``out / "mccfr.json"`` under ``peer`` (merged by part; each
    part's date and load average under ``peer["when"][part]``). The whole process keeps
    off the persistent compilation cache (compile seconds are compiles, not loads; the
    fresh-process children are kept off it too). ``fresh_games``: the games of the
    fresh-process races (default: all of :data:`FRESH_RACES`); a part run on fewer games
    than before keeps the others' earlier results."""
    os.environ["JAXCFR_NO_COMPILATION_CACHE"] = "1"
    path = out / "mccfr.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    section = results.setdefault("peer", {})
    section["jax"] = jax.__version__
    parts = {
        "throughput": lambda: [throughput(g, s) for g in PEER_GAMES
                               for s in ("external", "outcome")],
        "compile": lambda: [compile_seconds(g) for g in PEER_GAMES],
        "fresh": lambda: [fresh(g, scheme, rounds=r) for g, scheme, r in FRESH_RACES
                          if fresh_games is None or g in fresh_games],
        "seeds": seeds_study,
        "walk": walk_study,
        "compile_fresh": lambda: [compile_fresh(g) for g in PEER_GAMES],
        "race": lambda: fresh("leduc_poker", "external", rounds=1, entries=RACE_ENTRIES,
                              seeds=seeds)}
    for name, run in parts.items():
        if only == name or (only is None and name not in ("walk", "compile_fresh", "race")):
            when = {"date": time.strftime("%Y-%m-%d %H:%M"),
                    "load_average_before": list(os.getloadavg())}
            result = run()
            if name == "fresh" and fresh_games is not None:      # keep the other games'
                result += [r for r in section.get(name, []) if r["game"] not in fresh_games]
            section[name] = result
            when["load_average_after"] = list(os.getloadavg())
            section.setdefault("when", {})[name] = when
            path.write_text(json.dumps(results, indent=1) + "\n")


def plot(results: dict[str, list], path: pathlib.Path, title: str) -> None:
    plot_race(results, path, title, "CPU seconds (compilation excluded)", "exploitability",
              solid=lambda entry: entry.endswith("/none"))


#: Where the figures go unless ``--out`` says otherwise: not docs/, which a run of the
#: benchmark should change only when asked (``--out docs``).
DEFAULT_OUT = pathlib.Path("runs") / "mccfr_bench"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", action="store_true", help="only the cost table")
    parser.add_argument("--games", nargs="*", default=list(COST_GAMES))
    parser.add_argument("--race", default="leduc_poker(ranks=10)", help="the race's game")
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per entry")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help=f"folder of mccfr.json and mccfr.png (default: {DEFAULT_OUT}; "
                             "--out docs updates the docs)")
    parser.add_argument("--target-only", action="store_true",
                        help="only the iterations to 0.05 on Leduc, added to mccfr.json")
    parser.add_argument("--peer", action="store_true",
                        help="only the figures against OpenSpiel, added to mccfr.json")
    parser.add_argument("--only", choices=("throughput", "compile", "fresh", "seeds", "walk",
                                           "compile_fresh", "race"),
                        help="with --peer: one part of them")
    parser.add_argument("--seeds", nargs="*", type=int, default=[1, 2, 3],
                        help="with --peer --only race: the seeds (each side, each seed)")
    parser.add_argument("--fresh-games", nargs="*",
                        help="with --peer --only fresh: these games' races only")
    parser.add_argument("--fresh-run", nargs=5, metavar=("SIDE", "GAME", "SCHEME", "TARGET",
                                                         "ENTRY"), help=argparse.SUPPRESS)
    parser.add_argument("--started", help=argparse.SUPPRESS)
    parser.add_argument("--seed", help=argparse.SUPPRESS)
    parser.add_argument("--compile-one", nargs=3, metavar=("GAME", "ENTRY", "SAMPLES"),
                        help=argparse.SUPPRESS)
    return parser


def main() -> None:
    args = build_parser().parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.fresh_run:
        side, game, scheme, target, entry = args.fresh_run
        fresh_run(side, game, scheme, float(target), entry)
        return
    if args.compile_one:
        game, entry, samples = args.compile_one
        compile_one(game, entry, int(samples))
        return
    if args.peer:
        peer(out, args.only, args.fresh_games, tuple(args.seeds))
        return
    if args.target_only:
        path = out / "mccfr.json"
        results = json.loads(path.read_text()) if path.exists() else {}
        results["target"] = {"game": "leduc_poker", "target": 0.05,
                             "entries": to_target("leduc_poker", 0.05)}
        (out / "mccfr.json").write_text(json.dumps(results, indent=1) + "\n")
        return
    results = {"date": time.strftime("%Y-%m-%d"), "jax": jax.__version__,
               "costs": [costs(g) for g in args.games]}
    for c in results["costs"]:
        print(json.dumps(c), flush=True)
    if not args.costs:
        results["race"] = {"game": args.race, "budget": args.budget,
                           "points": race(args.race, args.budget)}
        plot(results["race"]["points"], out / "mccfr.png",
             f"{args.race}: exploitability against CPU time")
        results["target"] = {"game": "leduc_poker", "target": 0.05,
                             "entries": to_target("leduc_poker", 0.05)}
    (out / "mccfr.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
