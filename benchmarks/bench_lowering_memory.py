"""Host bytes per node of lowering (issue 32, item 1): peak and kept, one game per process.

Each game is lowered in a fresh process (serial walk, ``workers=1``). Figures are resident
memory (RSS, ``/proc/self/statm`` and ``getrusage``'s ``ru_maxrss``), above the process's
RSS after importing jaxcfr and loading the game:

* ``peak``: the highest RSS during lowering, per node;
* ``kept``: RSS after lowering (the ``LoweredGame`` alive, a full collection done), per node;
* ``counted``: the ``LoweredGame``'s own bytes, counted (array ``nbytes``, the host
  tables' ``sys.getsizeof``; the pre-order numbers only once read), per node; ``tensors``
  the ``GameTensors`` alone, as held (compact host forms count what they hold),
  ``dense_tensors`` as the device sees them.

Usage: ``python benchmarks/bench_lowering_memory.py [GAME ...]`` (default ``liars_dice(sides=7)``
and ``goofspiel(cards=6)``; about 30 s each on a quiet core; ``liars_dice(sides=8)``, 8.4M
nodes, about a minute and 1.3 GB).
"""

from __future__ import annotations

import json
import sys

from benchkit.fresh import fresh_python

GAMES = ("liars_dice(sides=7)", "goofspiel(cards=6)")

CHILD = r"""
import gc, json, os, resource, sys, time
import numpy as np
import jaxcfr

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def deep(x, seen):
    if id(x) in seen:
        return 0
    seen.add(id(x))
    if isinstance(x, np.ndarray):
        return x.nbytes
    n = sys.getsizeof(x)
    if isinstance(x, (tuple, list)):
        n += sum(deep(v, seen) for v in x)
    elif hasattr(x, "__slots__"):
        n += sum(deep(getattr(x, s), seen) for s in x.__slots__ if hasattr(x, s))
    return n

game = jaxcfr.load_game(sys.argv[1])
gc.collect()
base = rss()
start = time.process_time()
lowered = jaxcfr.lower(game, workers=1, memory_budget=1 << 40)
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
gc.collect()
kept = rss()
n = lowered.num_nodes
t = lowered.tensors
seen = set()
tensors = sum(a.nbytes for a in t)          # held (a compact host form: what it holds)
dense = sum(np.asarray(a, jaxcfr.tensors.WIDE_DTYPES.get(f)).nbytes for f, a in zip(t._fields, t))
# (the pre-order numbers: what they hold, 0 until read; see jaxcfr.lowering.preorder)
counted = tensors + lowered.preorder.nbytes + sum(
    deep(getattr(lowered, f), seen) for f in ("node_action", "infoset_keys", "infoset_actions"))
print(json.dumps({"game": sys.argv[1], "nodes": n, "rows": lowered.num_rows,
                  "peak_per_node": round((peak - base) / n, 1),
                  "kept_per_node": round((kept - base) / n, 1),
                  "counted_per_node": round(counted / n, 1),
                  "tensors_per_node": round(tensors / n, 1),
                  "dense_tensors_per_node": round(dense / n, 1), "lowering_cpu_s": round(cpu, 1)}))
"""


def main(games) -> None:
    for game in games:
        print(json.dumps(fresh_python(["-c", CHILD, game], check=True).last_json()))


if __name__ == "__main__":
    main(sys.argv[1:] or GAMES)
