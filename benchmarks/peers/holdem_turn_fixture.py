"""Writes tests/fixtures/holdem/peer_turn_small.json.gz: postflop-solver on a turn spot with
small ranges (board Td9d6h5c, 33 and 25 hands, pot 100, stack 200, the example's sizes):
its exploitability after each of 30 iterations, its final values, best responses and
exploitability, and its final average strategy at every decision node through the 44 river
cards (6 decimals), the oracle of tests/test_holdem_spot.py.

Usage (postflop_strategy_dump built as benchmarks/peers/postflop_strategy_dump.rs says)::

    python benchmarks/peers/holdem_turn_fixture.py PATH/TO/postflop_strategy_dump
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
BOARD = "Td9d6h5c"
RANGES = ("AA,KK,T9s,87s,65s,AQo:0.5", "QQ,JJ,A5s,KQs,76s,T8s")
ITERATIONS = 30


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dumper")
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/holdem/peer_turn_small.json.gz"))
    args = ap.parse_args()
    out = subprocess.run([args.dumper, BOARD, *RANGES, "100", "200", str(ITERATIONS), "trace"],
                         capture_output=True, text=True, check=True).stdout
    trace, final, nodes, hands, node = [], {}, {}, {}, None
    for line in out.splitlines():
        head, *rest = line.split()
        if head == "trace":
            trace.append(float(rest[1]))
        elif head in ("ev", "br"):
            final[{"ev": "values", "br": "best_response_values"}[head]] = [float(x) for x in rest]
        elif head == "exploitability":
            final["exploitability"] = float(rest[0])
        elif head == "#":
            path = line[line.index("[") + 1:line.index("]")]
            player = int(line.split()[-1])
            node = nodes[path] = {"player": player, "strategy": []}
            hands.setdefault(player, [])
            node["hands"] = hands[player]
        else:
            if len(node["strategy"]) == len(node["hands"]):
                node["hands"].append(head)       # the first node of the player lists its hands
            node["strategy"].append([round(float(x), 6) for x in rest])
    for node in nodes.values():
        assert len(node.pop("hands")) == len(node["strategy"])
    data = {"peer": "b-inary/postflop-solver 9d1509f, benchmarks/peers/postflop_strategy_dump.rs",
            "spot": {"board": BOARD, "ranges": list(RANGES), "pot": 100, "stack": 200},
            "iterations": ITERATIONS, "hands": [hands[0], hands[1]], "trace": trace,
            "final": final, "strategies": nodes}
    with gzip.GzipFile(args.out, "wb", mtime=0) as raw, io.TextIOWrapper(raw) as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"{len(nodes)} decision nodes, {len(trace)} iterations -> {args.out}")


if __name__ == "__main__":
    main()
