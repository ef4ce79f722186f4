"""What serialising the evaluation's warm-up costs (issue 31, 2026-12-07): the Runner
evaluates a zero state in a thread while the first chunks run only where the memory
budget holds both programs (``jaxcfr.lowering.public.evaluation_overlap_fits``); under a
tighter budget the evaluation compiles when first due, between chunks.

Paired and interleaved, each run in a fresh process (no program in memory) with the
persistent compilation cache off: ``jaxcfr.solve`` of ``--game`` (default the README
turn) with ``postflop-dcfr``, ``--iterations`` iterations evaluated every
``--eval-every``, once under a budget of the overlapped count (the thread) and once one
byte under it (no thread), ``--rounds`` rounds; the medians of wall seconds to the end,
CPU seconds (the process's) and the final exploitability (the same in both, bit for bit).

    python benchmarks/evaluation_overlap.py [--rounds 3] [--game "holdem_spot(board='Td9d6h5c')"]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RUN = """
import json, resource, sys, time
import jaxcfr
start = time.perf_counter()
r = jaxcfr.solve(sys.argv[1], "postflop-dcfr", int(sys.argv[2]), eval_every=int(sys.argv[3]),
                 device=jaxcfr.DeviceOptions(compilation_cache=False))
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": u.ru_utime + u.ru_stime,
                  "exploitability": r.final["exploitability"]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="holdem_spot(board='Td9d6h5c')")
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import jaxcfr
    from jaxcfr.lowering.public import public_footprint
    size = jaxcfr.lower_public(jaxcfr.load_game(args.game)).public_size
    both = public_footprint(size, state_tables=2, overlapped=True).total
    budgets = {"overlapped": both, "serialised": both - 1}
    out: dict[str, list] = {k: [] for k in budgets}
    for _ in range(args.rounds):
        for name, budget in budgets.items():
            env = dict(os.environ, JAXCFR_MEMORY_BUDGET=str(budget))
            line = subprocess.run([sys.executable, "-c", RUN, args.game, str(args.iterations),
                                   str(args.eval_every)], env=env, check=True,
                                  capture_output=True, text=True).stdout.splitlines()[-1]
            out[name].append(json.loads(line))
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
          f"{os.getloadavg()[0]:.1f}; {args.game}, {args.iterations} iterations, evaluated "
          f"every {args.eval_every}, {args.rounds} rounds (medians)")
    for name, runs in out.items():
        print(f"{name:11s} wall {statistics.median(r['wall'] for r in runs):7.2f} s  cpu "
              f"{statistics.median(r['cpu'] for r in runs):7.2f} s  exploitability "
              f"{sorted({r['exploitability'] for r in runs})}")


if __name__ == "__main__":
    main()
