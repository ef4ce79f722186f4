"""Writes tests/fixtures/holdem/peer_trees.json.gz: postflop-solver's bet trees of randomized
spots, the oracle of tests/test_holdem_tree.py, and peer_ranges.json.gz: its weights of
randomized range strings (tests/test_holdem_cards.py).

Usage (the peer's tree dumper built as benchmarks/peers/postflop_tree_dump.rs says)::

    python benchmarks/peers/holdem_tree_fixture.py PATH/TO/postflop_tree_dump [--spots 240]

Each spot is one line of the dumper's input (``state|pot|stack|12 size strings|turn_donk|
river_donk|add_allin|force_allin|merging``); the fixture keeps the line and the dumper's
output for it (the tree, or its error). Spots whose tree has more than 3,000 nodes are
drawn again (the fixture stays small); about one in ten has a malformed size, so that
the two parsers are compared on what they refuse too.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import pathlib
import random
import subprocess
import sys

#: Where the fixtures come from (written into each).
PEER = "b-inary/postflop-solver 9d1509f, benchmarks/peers/postflop_tree_dump.rs"

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BETS = ["25%", "33%", "50%", "60%", "67%", "75%", "100%", "125%", "150%", "200%", "300%",
        "e", "2e", "3e", "e100%", "2e75%", "3e150%", "a", "20c", "50c", "1c", "112.5%", "0%"]
RAISES = ["2x", "2.5x", "3x", "3.5x", "4x", "1.5x", "50%", "100%", "e", "2e", "e200%", "a",
          "20c", "30c3r", "10c2r", "40c1r", "60%"]
BAD = ["2.5x", "-30%", "1a", "0e", "12.3c", "e%", "", "bet", "1x", "3e7", "10c10", "c3r",
       "0c0r", "101e", "+42%", "1e2e3", "a1", "50"]
BAD_RAISE = ["0x", "x", "12c3.4r", "123c101r", "2.7e", "%"]


def sizes(rng, pool, most, bad_pool):
    k = rng.randint(0, most)
    out = rng.sample(pool, k)
    if bad_pool and rng.random() < 0.007:
        out.insert(rng.randint(0, len(out)), rng.choice(bad_pool))
    sep = rng.choice([", ", ",", " , "])
    text = sep.join(out)
    if out and rng.random() < 0.1:
        text += ","
    return text.upper() if rng.random() < 0.05 else text


def spot(rng) -> str:
    state = rng.choice(["river", "river", "turn", "turn", "flop"])
    pot = rng.choice([rng.randint(1, 20), rng.randint(20, 400), 100])
    stack = max(1, int(pot * rng.choice([0.1, 0.3, 0.7, 1, 1.5, 2, 3, 5, 10, 25]) *
                       rng.uniform(0.8, 1.2)))
    most_bets, most_raises = {"river": (3, 2), "turn": (2, 2), "flop": (2, 1)}[state]
    fields = [state, str(pot), str(stack)]
    for _ in range(3):                      # flop, turn, river
        for _ in range(2):                  # OOP, IP
            fields.append(sizes(rng, BETS, most_bets, BAD))
            fields.append(sizes(rng, RAISES, most_raises, BAD + BAD_RAISE))
    for _ in range(2):                      # turn and river donk sizes
        fields.append("-" if rng.random() < 0.5 else sizes(rng, BETS, 2, BAD))
    fields.append(rng.choice(["0", "0", "1.5", "0.5", "2", "3"]))
    fields.append(rng.choice(["0", "0.15", "0.1", "0.3", "0"]))
    fields.append(rng.choice(["0", "0.1", "0.2", "0.05", "0"]))
    return "|".join(fields)


RANKS = "AKQJT98765432"


def range_group(rng) -> str:
    r = sorted(rng.sample(range(13), 2))
    hi, lo = RANKS[r[0]], RANKS[r[1]]
    pair = RANKS[rng.randrange(13)]
    suit = rng.choice(["s", "o", ""])
    kind = rng.randrange(8)
    if kind == 0:
        g = pair + pair + rng.choice(["", "+"])
    elif kind == 1:
        lo2 = RANKS[rng.randrange(min(RANKS.index(pair) + 1, 12), 13)]
        g = f"{pair}{pair}-{lo2}{lo2}"
    elif kind == 2:
        g = f"{hi}{lo}{suit}" + rng.choice(["", "+"])
    elif kind == 3:
        lo2 = RANKS[rng.randrange(min(RANKS.index(lo) + 1, 12), 13)]
        g = f"{hi}{lo}{suit}-{hi}{lo2}{suit}"
    elif kind == 4:
        gap = r[1] - r[0]
        k = rng.randrange(min(r[0] + 1, 12 - gap), 13 - gap)
        g = f"{hi}{lo}{suit}-{RANKS[k]}{RANKS[k + gap]}{suit}"
    elif kind == 5:
        s1, s2 = rng.sample("cdhs", 2)
        g = f"{hi}{s1}{lo}{s2}" if rng.random() < 0.8 else f"{pair}{s1}{pair}{s2}"
    elif kind == 6:
        g = rng.choice(["AKs", "QQ+", "T9s+", "ATo+", "KQo-JTo", "A5s-A2s", "22+", "K2+"])
    else:                                   # malformed, now and then
        g = rng.choice(["AKx", "KAs", "AAs", "QQ-KK", "A2s-A5s", "AKs-KQo", "AsAs", "ZZ",
                        "AK:1.5", "AK:-1", "AKo+:", "A", "AKs--AQs", "T9s-86s", "AhKh+x",
                        "AKs-AKs", "7c7c", "99-99"])
    if rng.random() < 0.3:
        g += ":" + rng.choice(["0.5", "0.25", "1", "0", ".75", "0.333", "1.", "0.1234"])
    if rng.random() < 0.1:
        g = g.replace("-", " - ").replace(":", " : ")
    return g


def range_text(rng) -> str:
    groups = [range_group(rng) for _ in range(rng.randint(1, 8))]
    if rng.random() > 0.15:                 # most strings well formed
        groups = [g for g in groups if not any(b in g for b in (
            "AKx", "KAs", "AAs", "QQ-KK", "A2s-A5s", "AKs-KQo", "AsAs", "ZZ", "1.5", "-1",
            ":,", "AKs--", "T9s-86s", "+x", "AKs-AKs", "7c7c", "99-99"))
            and g not in ("A", "AKo+:")] or ["AA"]
    return rng.choice([",", ", ", " ,"]).join(groups)


def run_peer(peer: str, lines: list[str]) -> list[list[str]]:
    out = subprocess.run([peer], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    blocks, current = [], None
    for line in out:
        if line.startswith("SPOT "):
            current = []
        elif line.startswith("END "):
            blocks.append(current)
        else:
            current.append(line)
    assert len(blocks) == len(lines)
    return blocks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer")
    ap.add_argument("--spots", type=int, default=240)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--out", default=str(ROOT / "tests/fixtures/holdem/peer_trees.json.gz"))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    chosen: list[tuple[str, list[str]]] = []
    while len(chosen) < args.spots:
        lines = [spot(rng) for _ in range(50)]
        for line, block in zip(lines, run_peer(args.peer, lines)):
            if len(block) <= 3000 and len(chosen) < args.spots:
                chosen.append((line, block))
    with gzip.GzipFile(args.out, "wb", mtime=0) as raw, io.TextIOWrapper(raw) as f:
        json.dump({"peer": PEER,
                   "spots": [{"input": line, "output": block} for line, block in chosen]}, f)
    texts = [range_text(rng) for _ in range(400)]
    blocks = run_peer(args.peer, ["RANGE " + t for t in texts])
    ranges_out = pathlib.Path(args.out).with_name("peer_ranges.json.gz")
    with gzip.GzipFile(ranges_out, "wb", mtime=0) as raw, io.TextIOWrapper(raw) as f:
        json.dump({"peer": PEER,
                   "ranges": [{"input": t, "output": b[0] if b else ""}
                              for t, b in zip(texts, blocks)]}, f)
    refused = sum(1 for b in blocks if b and b[0].startswith("ERROR"))
    print(f"{len(texts)} ranges ({refused} refused) -> {ranges_out}")
    errors = sum(1 for _, b in chosen if b and b[0].startswith("ERROR"))
    nodes = sum(len(b) for _, b in chosen)
    print(f"{len(chosen)} spots ({errors} refused), {nodes} nodes -> {args.out}")


if __name__ == "__main__":
    main()
