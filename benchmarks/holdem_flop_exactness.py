"""The flop spot's exactness against postflop-solver, at a size a test cannot afford.

On Td9d6h with ``bench_holdem``'s ``SMALL_RANGES`` (34 + 26 hands, pot 100, stack 200, the
peer's example's sizes; 436,618 public nodes once the suit-isomorphic cards are merged),
the peer (``postflop_strategy_dump``, one thread, built beside ``pf_bench``: ``--peer`` or
``$JAXCFR_PF_BENCH``) solves ``--iterations`` iterations and writes its average strategy
at each of its 266,576 decision nodes (every card) and its exploitability after each
iteration; this program then

1. reads that strategy into jaxcfr's rows (each merged class's representative card) and
   evaluates it on the public tree (float32): the peer's values, best-response values and
   exploitability should come back;
2. solves the spot with jaxcfr's ``postflop-dcfr`` for the same iterations (float32,
   exploitability every ``--every``): its exploitability beside the peer's, and whether its
   game value lies in the peer's bracket (``|v - v_peer| <= e + e_peer``).

Prints one JSON line per part. Usage::

    python benchmarks/holdem_flop_exactness.py --iterations 30 --every 10

tests/test_holdem_spot.py checks the same on a flop behind a stack of 40 (83,022 nodes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import time

import numpy as np

import jaxcfr
from jaxcfr_games.holdem.cards import card_str
from jaxcfr_games.holdem.spot import HoldemSpot

from bench_holdem import SMALL_RANGES
from benchkit import memory, postflop


def _plain(x):
    return np.asarray(x).tolist()


def peer_table(lowered, strategies: dict) -> np.ndarray:
    """``[rows, A]`` the peer's strategies (``postflop.strategy_dump``) at jaxcfr's
    decision nodes, found by their public history; other rows play the first action."""
    t = lowered.tensors
    table = np.zeros(t.legal_mask.shape)
    table[:, 0] = 1.0
    for n in np.flatnonzero(t.node_base >= 0):
        path = ",".join(card_str(x) if isinstance(x, int) else x for x in lowered.history(int(n)))
        player, rows = strategies[path]
        if player != int(t.node_player[n]):
            raise RuntimeError(f"node [{path}]: the peer's player {player}, jaxcfr's "
                               f"{int(t.node_player[n])}")
        base = int(t.node_base[n])
        table[base:base + len(rows), :rows.shape[1]] = rows
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", default=postflop.default_binary(),
                        help=f"pf_bench's path (default ${postflop.ENV})")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--stack", type=int, default=200)
    args = parser.parse_args()
    dumper = postflop.dumper_beside(args.peer)
    if not dumper:
        parser.error("no postflop_strategy_dump beside --peer (docs/holdem.md, 'Building the "
                     "peer')")
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "load": os.getloadavg()[0], "iterations": args.iterations,
        "stack": args.stack}), flush=True)
    wall = time.perf_counter()
    data = postflop.strategy_dump(dumper, "Td9d6h", SMALL_RANGES, 100, args.stack,
                                  args.iterations, trace=True)
    peer_wall = time.perf_counter() - wall
    spot = HoldemSpot(board="Td9d6h", ranges=SMALL_RANGES, stack=args.stack)
    lowered = jaxcfr.lower_public(spot)
    if [list(spot.hands(p)) for p in (0, 1)] != data["hands"]:
        raise RuntimeError("the two sides' hands differ")
    table = peer_table(lowered, data["strategies"])
    nodes = len(data["strategies"])
    del data["strategies"]
    ev = jaxcfr.evaluate_public(lowered, table, dtype="float32")
    final = data["final"]
    print(json.dumps({"part": "the peer's strategy evaluated", "peer_decision_nodes": nodes,
                      "jaxcfr_decision_nodes": int((lowered.tensors.node_base >= 0).sum()),
                      "public_nodes": lowered.num_nodes, "ranked": lowered.ranked,
                      "peer": final, "peer_wall_s": round(peer_wall, 1),
                      "jaxcfr": {k: ev[k] for k in ("values", "best_response_values",
                                                    "exploitability")},
                      "exploitability_difference": abs(ev["exploitability"]
                                                       - final["exploitability"])},
                     default=_plain), flush=True)
    result = jaxcfr.solve_public(lowered, "postflop-dcfr", args.iterations,
                                 eval_every=args.every, chunk=args.every)
    ours = {m["iteration"]: m["exploitability"] for m in result.metrics}
    end = result.final
    bracket = end["exploitability"] + final["exploitability"]
    print(json.dumps({"part": "postflop-dcfr beside the peer",
                      "trajectory": [[i, e, data["trace"][i - 1]] for i, e in ours.items()],
                      "values": [end["values"][0], final["values"][0]],
                      "bracket": bracket,
                      "in_bracket": abs(end["values"][0] - final["values"][0]) <= bracket,
                      "peak_rss": memory.peak_rss()}, default=_plain), flush=True)


if __name__ == "__main__":
    main()
