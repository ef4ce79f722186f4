"""Cold start: Leduc CFR+ for 450 iterations from a fresh process, against the peers.

Each round starts, one after another (interleaved, so the machine's load falls on all
alike), fresh processes of:

* ``jaxcfr_cold``: ``jaxcfr.solve("leduc_poker", "cfr+", 450)`` with an empty
  compilation cache (a new directory each round);
* ``jaxcfr_warm``: the same, its cache filled by that round's cold run (any second run);
* ``jaxcfr_nocache``: the same with ``JAXCFR_NO_COMPILATION_CACHE=1``;
* ``before_cold`` and ``before_warm`` (with ``--before DIR``: another source tree, e.g.
  ``git archive`` of main, on ``PYTHONPATH``): its cold and warm runs, a cache of their own;
* ``openspiel_cpp``: ``pyspiel.CFRPlusSolver`` for 450 iterations and
  ``pyspiel.exploitability`` of its average policy;
* ``liteefg``: LiteEFG's CFR+ graph for 450 iterations and its exploitability (when
  ``LiteEFG`` is importable).

Each process's wall time is measured from outside (start to exit) with its CPU time
(user + system, from the OS, all its threads; CPU over wall is the cores it kept busy),
and each reports its own phases (imports, solve, compile) and the exploitability
reached. The table gives medians and, per round, each wall time over OpenSpiel's.

Python bytecode: the children write and read it under a private prefix
(``PYTHONPYCACHEPREFIX`` in a temporary directory, ``PYTHONDONTWRITEBYTECODE`` unset), and
one untimed run of every peer comes first (jaxcfr's compilation cache of it thrown away), so
that every peer imports compiled modules as an installed package does, also where the
environment turns bytecode off (``PYTHONDONTWRITEBYTECODE=1`` cost jaxcfr about 0.1 s of
compiling its own sources in every process; the peers' installed modules have theirs).

With ``--programs``: instead, XLA's compile seconds per program of one cold solve (this
tree, and the ``--before`` tree), in fresh processes with the caches off and the
evaluation's thread run in line, so that the programs compile one after another: the
process's CPU seconds during each ``backend_compile_and_load``, medians over the rounds.

Usage::

    python benchmarks/bench_cold.py --rounds 5 --json cold.json
    git archive main | tar -x -C /tmp/main && python benchmarks/bench_cold.py --before /tmp/main
    python benchmarks/bench_cold.py --programs --rounds 3 --before /tmp/main
"""

from __future__ import annotations

import argparse
import atexit
import datetime
import json
import os
import platform
import shutil
import tempfile

from benchkit.fresh import fresh_python

ITERATIONS = 450

JAXCFR = """
import json, time
t0 = time.perf_counter()
import jaxcfr
r = jaxcfr.solve("leduc_poker", "cfr+", {n})
t1 = time.perf_counter()
print(json.dumps({{"solve_s": t1 - t0, "compile_s": r.compile_seconds,
                   "iterate_s": r.seconds, "metric": float(r.final["metric"])}}))
"""

OPENSPIEL = """
import json, time
t0 = time.perf_counter()
import pyspiel
game = pyspiel.load_game("leduc_poker")
solver = pyspiel.CFRPlusSolver(game)
for _ in range({n}):
    solver.evaluate_and_update_policy()
metric = pyspiel.exploitability(game, solver.average_policy())
print(json.dumps({{"solve_s": time.perf_counter() - t0, "metric": float(metric)}}))
"""

LITEEFG = """
import contextlib, io, json, time
t0 = time.perf_counter()
import LiteEFG, pyspiel
from LiteEFG.baselines.CFRplus import graph
with contextlib.redirect_stdout(io.StringIO()):
    g = graph()
    env = LiteEFG.OpenSpielEnv(pyspiel.load_game("leduc_poker"), traverse_type="Enumerate",
                               regenerate=False)
    env.set_graph(g)
    strategy = g.current_strategy()
    for _ in range({n}):
        g.update_graph(env)
        env.update_strategy(strategy, update_best=False)
    metric = sum(env.exploitability(strategy, "linear-avg-iterate")) / 2
print(json.dumps({{"solve_s": time.perf_counter() - t0, "metric": float(metric)}}))
"""


PYCACHE = tempfile.mkdtemp(prefix="bench-cold-pycache-")
atexit.register(shutil.rmtree, PYCACHE, True)          # this run's bytecode, gone after it


PROGRAMS = """
import collections, json, os, threading, time
from jax._src import compiler
stats = collections.defaultdict(lambda: [0, 0.0, 0.0])
def cpu():
    t = os.times()
    return t.user + t.system
compile_and_load = compiler.backend_compile_and_load
def timed(backend, module, *args, **kwargs):
    name = str(module.operation.attributes["sym_name"]).strip('"')
    wall, start = time.perf_counter(), cpu()
    try:
        return compile_and_load(backend, module, *args, **kwargs)
    finally:
        s = stats[name]
        s[0] += 1; s[1] += time.perf_counter() - wall; s[2] += cpu() - start
compiler.backend_compile_and_load = timed
import jaxcfr
from jaxcfr.engine import runner
class InLine:                       # the evaluation's thread, run where it is started
    Event = threading.Event
    current_thread = staticmethod(threading.current_thread)
    class Thread:
        def __init__(self, target, args=(), **kwargs):
            self.target, self.args = target, args
        def start(self):
            for a in self.args:
                if isinstance(a, threading.Event):
                    a.set()
            self.target(*self.args)
        def join(self):
            pass
runner.threading = InLine
solve = jaxcfr.solve                # (imports the library)
start = cpu()
r = solve("leduc_poker", "cfr+", {n})
print(json.dumps({{"programs": {{k: {{"n": v[0], "wall_s": v[1], "cpu_s": v[2]}}
                                for k, v in stats.items()}},
                  "solve_cpu_s": cpu() - start, "metric": float(r.final["metric"])}}))
"""


def programs(args, here: str) -> None:
    """``--programs``: compile seconds per program, this tree and ``--before``'s."""
    trees = {"this tree": here, **({"before": args.before} if args.before else {})}
    runs = {label: [] for label in trees}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            runs[label].append(run(PROGRAMS.format(n=args.iterations),
                                   {"JAXCFR_NO_COMPILATION_CACHE": "1", "PYTHONPATH": tree},
                                   args.timeout))
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    out = {}
    for label, recs in runs.items():
        names = list(dict.fromkeys(k for r in recs for k in r["programs"]))
        table = {k: {f: med([r["programs"].get(k, {f: 0})[f] for r in recs])
                     for f in ("n", "cpu_s", "wall_s")} for k in names}
        total = {"n": med([sum(p["n"] for p in r["programs"].values()) for r in recs]),
                 "cpu_s": med([sum(p["cpu_s"] for p in r["programs"].values()) for r in recs]),
                 "solve_cpu_s": med([r["solve_cpu_s"] for r in recs])}
        out[label] = {"programs": table, "all": total}
        print(f"== {label} (medians of {args.rounds})")
        for k, v in table.items():
            print(f"  {k:28s} x{v['n']:<3.0f} CPU {v['cpu_s']:6.3f} s  wall {v['wall_s']:6.3f} s")
        print(f"  {'all':28s} x{total['n']:<3.0f} CPU {total['cpu_s']:6.3f} s  "
              f"(the solve without imports: {total['solve_cpu_s']:.3f} CPU s)")
    print(f"load average {os.getloadavg()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "programs": out,
                       "load_average": os.getloadavg(), "runs": runs}, f, indent=1)


def run(code: str, env_extra: dict, timeout: float) -> dict:
    """One fresh process: its wall and CPU seconds from outside, and what it printed."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JAXCFR_") and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(JAX_PLATFORMS="cpu", PYTHONPYCACHEPREFIX=PYCACHE, **env_extra)
    proc = fresh_python(["-c", code], env=env, cwd=tempfile.gettempdir(), check=True,
                        timeout=timeout)
    rec = proc.last_json()
    rec.update(wall_s=proc.wall_s, cpu_s=proc.cpu_s)
    return rec


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=ITERATIONS)
    p.add_argument("--before", help="another source tree to time (cold and warm), e.g. main's")
    p.add_argument("--no-liteefg", action="store_true")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--json")
    p.add_argument("--programs", action="store_true",
                   help="compile seconds per program instead (see the module docstring)")
    args = p.parse_args(argv)
    n = args.iterations
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args.programs:
        return programs(args, here)
    peers = ["jaxcfr_cold", "jaxcfr_warm", "jaxcfr_nocache"]
    if args.before:
        peers += ["before_cold", "before_warm"]
    peers.append("openspiel_cpp")
    try:
        import importlib.util
        if not args.no_liteefg and importlib.util.find_spec("LiteEFG") is not None:
            peers.append("liteefg")
    except ImportError:
        pass
    rows = {k: [] for k in peers}
    load_before = os.getloadavg()
    for r in range(-1, args.rounds):          # round -1: untimed, writes the bytecode
        cache = tempfile.mkdtemp(prefix="jaxcfr-cold-")
        cache_before = tempfile.mkdtemp(prefix="jaxcfr-cold-before-")
        try:
            for peer in peers:
                if r < 0 and peer in ("jaxcfr_warm", "before_warm"):
                    continue
                if peer in ("jaxcfr_cold", "jaxcfr_warm"):
                    rec = run(JAXCFR.format(n=n), {"JAXCFR_COMPILATION_CACHE_DIR": cache,
                                                   "PYTHONPATH": here}, args.timeout)
                elif peer == "jaxcfr_nocache":
                    rec = run(JAXCFR.format(n=n), {"JAXCFR_NO_COMPILATION_CACHE": "1",
                                                   "PYTHONPATH": here}, args.timeout)
                elif peer in ("before_cold", "before_warm"):
                    rec = run(JAXCFR.format(n=n), {"JAXCFR_COMPILATION_CACHE_DIR": cache_before,
                                                   "PYTHONPATH": args.before}, args.timeout)
                elif peer == "openspiel_cpp":
                    rec = run(OPENSPIEL.format(n=n), {}, args.timeout)
                else:
                    rec = run(LITEEFG.format(n=n), {}, args.timeout)
                if r < 0:
                    continue
                rows[peer].append(rec)
                print(f"round {r + 1} {peer:15s} wall {rec['wall_s']:6.2f} s  cpu "
                      f"{rec['cpu_s']:6.2f} s  exploitability {rec['metric']:.3g}", flush=True)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(cache_before, ignore_errors=True)
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    os_walls = [x["wall_s"] for x in rows["openspiel_cpp"]]
    table = {}
    print(f"\n{'peer':15s} {'wall s':>7s} {'cpu s':>7s} {'cores':>5s} {'/ OpenSpiel':>11s} "
          f"{'exploitability':>14s}   (medians of {args.rounds} rounds; ratio per round)")
    for peer, recs in rows.items():
        ratios = [x["wall_s"] / o for x, o in zip(recs, os_walls)]
        table[peer] = {"wall_s": med([x["wall_s"] for x in recs]),
                       "cpu_s": med([x["cpu_s"] for x in recs]),
                       "wall_over_openspiel": med(ratios),
                       "wall_over_openspiel_each": ratios,
                       "cores": med([x["cpu_s"] / x["wall_s"] for x in recs]),
                       "metric": med([x["metric"] for x in recs]),
                       **({"compile_s": med([x["compile_s"] for x in recs])}
                          if "compile_s" in recs[0] else {})}
        t = table[peer]
        print(f"{peer:15s} {t['wall_s']:7.2f} {t['cpu_s']:7.2f} {t['cores']:5.2f} "
              f"{t['wall_over_openspiel']:11.2f} {t['metric']:14.3g}")
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f} / {load_before[1]:.2f} / "
          f"{load_before[2]:.2f}, after {load_after[0]:.2f} / {load_after[1]:.2f} / "
          f"{load_after[2]:.2f} (1 / 5 / 15 min); {os.cpu_count()} cores")
    shutil.rmtree(PYCACHE, ignore_errors=True)
    out = {"date": datetime.date.today().isoformat(), "machine": platform.platform(),
           "cpus": os.cpu_count(), "load_average": load_after,
           "load_average_before": load_before, "iterations": n,
           "rounds": args.rounds, "table": table, "runs": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
