"""The hold'em bet tree counted before it is built (issue 31, 2026-12-07): what the count
costs a normal spot and how soon a spot too large is refused.

Paired, interleaved CPU seconds (``time.process_time``) in one process:

* ``build``: ``build_tree`` of ``--base`` (default ``main``: the builder before the count,
  read with ``git show``) against this tree's (``tree_size`` then the build), on the
  README river, the peer's turn and the README flop configurations, ``--rounds`` turns of
  each, the median reported;
* ``spot``: ``load_game`` of the same spots (ranges, isomorphism, the count and the build);
* ``refusal``: ``load_game`` of spots past the limits (1-chip sizes behind 150 chips on a
  turn; six bet and four raise sizes behind 10,000 chips on a flop), the CPU seconds until
  the refusal and its first words. The baseline of these is not re-run here: it built
  the bet tree and went on lowering (the turn: 136,802 bet-tree nodes in 3.5 CPU-s, then
  4.7 million public nodes in 136 CPU-s of ``lower_public``, 2026-12-07 06:59).

    python benchmarks/bet_tree_count.py [--rounds 7] [--base main]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jaxcfr
from jaxcfr_games.holdem import bets as new

CONFIGS = {   # name: tree_config arguments (the spots' own defaults)
    "readme_river": (("river", 100, 200, "60%, e, a", "2.5x"), {"river_donk": "50%"}),
    "peer_turn": (("turn", 100, 200, "60%, e, a", "2.5x"), {"river_donk": "50%"}),
    "readme_flop": (("flop", 100, 200, "60%, e, a", "2.5x"), {"river_donk": "50%"}),
}
THRESHOLDS = {"add_allin": 1.5, "force_allin": 0.15, "merging": 0.1}
SPOTS = {"readme_river": "holdem_spot", "peer_turn": "holdem_spot(board='Td9d6h5c')",
         "readme_flop": "holdem_spot(board='Td9d6h')"}
REFUSED = {
    "turn_1c_stack150": "holdem_spot(board='Td9d6h5c', ranges=('AA', 'KK'), bets='1c', "
                        "raises='1c', stack=150)",
    "flop_6x4_sizes_stack10000": "holdem_spot(board='Td9d6h', bets='25%,33%,50%,75%,100%,"
                                 "150%', raises='2x,2.5x,3x,4x', stack=10000)",
}


def _old_bets(base: str):
    """``games/holdem/bets.py`` at ``base``, as a module (its relative import made
    absolute)."""
    text = subprocess.run(["git", "show", f"{base}:games/holdem/bets.py"], check=True,
                          capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout
    text = text.replace("from .cards import", "from jaxcfr_games.holdem.cards import")
    path = os.path.join(tempfile.mkdtemp(), "old_bets.py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location("old_bets", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_bets"] = module                   # (dataclasses look it up)
    spec.loader.exec_module(module)
    return module


def _cpu(fn, repeat: int = 1) -> float:
    t = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - t) / repeat


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--base", default="main")
    args = p.parse_args(argv)
    old = _old_bets(args.base)
    out = {"utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
           "load": os.getloadavg(), "build": {}, "spot": {}, "refusal": {}}
    for name, (a, k) in CONFIGS.items():
        configs = {"before": old.tree_config(*a, **k, **THRESHOLDS),
                   "after": new.tree_config(*a, **k, **THRESHOLDS)}
        builds = {"before": old.build_tree, "after": new.build_tree}
        repeat = 200 if name != "readme_flop" else 20
        times: dict = {"before": [], "after": []}
        for _ in range(args.rounds):                   # interleaved
            for side in ("before", "after"):
                times[side].append(_cpu(lambda: builds[side](configs[side]), repeat))
        med = {s: statistics.median(v) for s, v in times.items()}
        out["build"][name] = {"nodes": len(new.build_tree(configs["after"])),
                              "before_ms": 1e3 * med["before"], "after_ms": 1e3 * med["after"],
                              "ratio": med["after"] / med["before"]}
    for name, spot in SPOTS.items():                    # the whole spot, this tree's code
        jaxcfr.load_game(spot)                          # (caches warmed)
        t = [_cpu(lambda: jaxcfr.load_game(spot)) for _ in range(args.rounds)]
        out["spot"][name] = {"load_game_ms": 1e3 * statistics.median(t)}
    for name, spot in REFUSED.items():
        t = time.process_time()
        try:
            jaxcfr.load_game(spot)
            said = "(not refused)"
        except (ValueError, jaxcfr.game.GameError) as e:
            said = str(e)
        out["refusal"][name] = {"cpu_s": time.process_time() - t, "said": said[:400]}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
