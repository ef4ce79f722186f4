"""Writes tests/fixtures/holdem/peer_river_readme.json.gz: postflop-solver on the issue's
river spot (board Td9d6h5c2s, its README ranges, pot 100, stack 200, the example's sizes),
the oracle of tests/test_holdem_spot.py.

Usage (pf_bench built by shared/peers/postflop-solver/build.sh)::

    python benchmarks/peers/holdem_river_fixture.py PATH/TO/pf_bench [--iterations 200]
    python benchmarks/peers/holdem_river_fixture.py PATH/TO/pf_bench --ranges full --iterations 100

It runs ``pf_bench river readme 100 200 N 1 PREFIX`` on one thread and keeps the
exploitability after every iteration, the final values (net of the pot share), best
response values and exploitability, and the final average strategy of every decision
node per hand (7 decimals, as the driver prints them).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import pathlib
import re
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pf_bench")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--ranges", choices=("readme", "full"), default="readme")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    args.out = args.out or str(ROOT / f"tests/fixtures/holdem/peer_river_{args.ranges}.json.gz")
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "river")
        out = subprocess.run([args.pf_bench, "river", args.ranges, "100", "200",
                              str(args.iterations), "1", prefix], capture_output=True, text=True,
                             check=True, env={**os.environ, "RAYON_NUM_THREADS": "1"}).stdout
        trace = [[int(a), float(b)] for a, b in
                 (line.split() for line in open(prefix + "_trace.txt"))]
        strategies, node = {}, None
        for line in open(prefix + "_all_strategies.txt"):
            if line.startswith("# node"):
                m = re.match(r"# node \[(.*)\] player (\d) actions \[(.*)\]", line.strip())
                node = {"player": int(m.group(2)), "actions": m.group(3).split(", "),
                        "hands": {}}
                strategies[m.group(1)] = node
            else:
                hand, *probs = line.split()
                node["hands"][hand] = [round(float(p), 6) for p in probs]
    m = re.search(r"final: current_ev\(oop,ip\)=\(([-\d.]+),([-\d.]+)\).*br_ev\(oop,ip\)="
                  r"\(([-\d.]+),([-\d.]+)\) exploitability=([-\d.]+)", out)
    final = {"values": [float(m.group(1)), float(m.group(2))],
             "best_response_values": [float(m.group(3)), float(m.group(4))],
             "exploitability": float(m.group(5)), "iterations": args.iterations}
    hands = re.search(r"hands: oop=(\d+) ip=(\d+)", out)
    data = {"peer": "b-inary/postflop-solver 9d1509f, shared/peers/postflop-solver/pf_bench.rs",
            "spot": {"board": "Td9d6h5c2s", "ranges": args.ranges, "pot": 100, "stack": 200,
                     "bets": "60%, e, a", "raises": "2.5x", "river_donk": "50%",
                     "add_allin": 1.5, "force_allin": 0.15, "merging": 0.1},
            "hands": [int(hands.group(1)), int(hands.group(2))],
            "trace": trace, "final": final, "strategies": strategies}
    with gzip.GzipFile(args.out, "wb", mtime=0) as raw, io.TextIOWrapper(raw) as f:
        json.dump(data, f)
    print(f"{len(trace)} iterations, {len(strategies)} decision nodes -> {args.out}")


if __name__ == "__main__":
    main()
