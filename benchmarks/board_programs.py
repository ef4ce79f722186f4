"""How many compiled programs a user's boards of one bet tree need (no compiling).

Every card that completes ``--base`` (a flop: its turns; a turn: its rivers) is lowered
with the spot's ranges and bet tree (default the README's, ``holdem_spot``'s defaults)
and padded as the runners pad it with hand buckets on
(``lower_public(outcome_steps=)``, ``bucket_hands``); its ``program_key`` (the static
structure and every tensor's shape) says which compiled chunk it runs. Printed (one JSON
line): the boards, their distinct pairs of hand counts and trees, the distinct program
keys, and what the padding costs: the hands (both players') and the public nodes over
the unpadded game's, averaged over the boards and at most.

Usage::

    python benchmarks/board_programs.py --base Td9d6h              # every turn card
    python benchmarks/board_programs.py --base Td9d6h5c            # every river card
    python benchmarks/board_programs.py --base Td9d6h --outcome-steps 0 --smaller-steps 16
                                                                   # the rule before
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import jaxcfr
from jaxcfr.lowering.public_buckets import (HAND_STEPS, OUTCOME_STEPS, SMALLER_STEPS,
                                            bucket_hands, program_key)

RANKS, SUITS = "AKQJT98765432", "cdhs"


def next_cards(base: str) -> list[str]:
    """Every card not on ``base`` (a board string such as ``"Td9d6h"``)."""
    used = {base[i:i + 2] for i in range(0, len(base), 2)}
    return [r + s for r in RANKS for s in SUITS if r + s not in used]


def census(base: str, spot: str, outcome_steps: int, hand_steps: int,
           smaller_steps: int) -> dict:
    """The programs of every board ``base + card`` (see the module)."""
    rows = []
    for card in next_cards(base):
        game = jaxcfr.load_game(spot.format(board=base + card))
        plain = jaxcfr.lower_public(game)
        walked = jaxcfr.lower_public(game, outcome_steps=outcome_steps) if outcome_steps \
            else plain
        padded = bucket_hands(walked, hand_steps, smaller_steps)
        real = [len(x) for x in plain.hands.labels]
        rows.append({"card": card, "hands": real, "nodes": plain.num_nodes,
                     "padded_hands": list(padded.structure.hands),
                     "padded_nodes": padded.num_nodes, "key": program_key(padded)})
    more_hands = [sum(r["padded_hands"]) / sum(r["hands"]) - 1 for r in rows]
    more_nodes = [r["padded_nodes"] / r["nodes"] - 1 for r in rows]
    programs: dict = {}
    for r in rows:
        programs.setdefault(r["key"], []).append(r["card"])
    return {"base": base, "boards": len(rows),
            "hand_count_pairs": len({tuple(r["hands"]) for r in rows}),
            "trees": len({r["nodes"] for r in rows}), "programs": len(programs),
            "boards_per_program": sorted((len(v) for v in programs.values()), reverse=True),
            "more_hands_mean_pct": round(100 * float(np.mean(more_hands)), 2),
            "more_hands_max_pct": round(100 * float(np.max(more_hands)), 2),
            "more_nodes_mean_pct": round(100 * float(np.mean(more_nodes)), 2),
            "more_nodes_max_pct": round(100 * float(np.max(more_nodes)), 2),
            "outcome_steps": outcome_steps, "hand_steps": hand_steps,
            "smaller_steps": smaller_steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="Td9d6h", help="a flop or a turn (default Td9d6h)")
    parser.add_argument("--spot", default="holdem_spot(board='{board}')",
                        help="the game string, {board} for the board (default the README "
                        "spot)")
    parser.add_argument("--outcome-steps", type=int, default=OUTCOME_STEPS)
    parser.add_argument("--hand-steps", type=int, default=HAND_STEPS)
    parser.add_argument("--smaller-steps", type=int, default=SMALLER_STEPS)
    args = parser.parse_args()
    start = time.process_time()
    out = census(args.base, args.spot, args.outcome_steps, args.hand_steps,
                 args.smaller_steps)
    out["cpu_s"] = round(time.process_time() - start, 1)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
