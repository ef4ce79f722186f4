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

With ``--tables`` the child then builds the sequence form's tables (what a CFR run on the
default kernel does next, :func:`jaxcfr.kernels.sequence.sequence_tables`, float32) and
also reports ``tables_peak_per_node`` (the highest RSS of lowering and tables together,
per node), ``tables_per_node`` (the tables' own bytes) and ``tables_cpu_s``.

Usage: ``python benchmarks/bench_lowering_memory.py [--tables] [GAME ...]`` (default
``liars_dice(sides=7)`` and ``goofspiel(cards=6)``; about 30 s each on a quiet core;
``liars_dice(sides=8)``, 8.4M nodes, about a minute and 1.3 GB).
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
if sys.argv[2:] == ["tables"]:
    from jaxcfr.kernels.sequence import sequence_tables
    start = time.process_time()
    tables = sequence_tables(t, lowered.level_start, lowered.num_players, np.float32)
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    held = sum(
        a.nbytes for f in tables for a in (f if isinstance(f, tuple) else (f,)))
    print(json.dumps({"game": sys.argv[1], "nodes": n,
                      "tables_peak_per_node": round((peak - base) / n, 1),
                      "tables_per_node": round(held / n, 1), "tables_cpu_s": round(cpu, 1)}))
"""


def main(games, tables: bool = False) -> None:
    for game in games:
        out = fresh_python(["-c", CHILD, game] + (["tables"] if tables else []), check=True)
        for line in out.stdout.strip().splitlines()[-(2 if tables else 1):]:
            print(json.dumps(json.loads(line)))


if __name__ == "__main__":
    args = sys.argv[1:]
    with_tables = "--tables" in args
    args = [a for a in args if a != "--tables"]
    main(args or GAMES, tables=with_tables)
