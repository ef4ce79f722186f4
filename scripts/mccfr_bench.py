#!/usr/bin/env python
"""Monte Carlo estimators against the exact one: cost per iteration, and exploitability
against CPU time. Writes docs/mccfr.md's tables (as JSON) and docs/mccfr.png.

Usage::

    python scripts/mccfr_bench.py                       # everything (about 15 minutes)
    python scripts/mccfr_bench.py --costs --games leduc_poker
    python scripts/mccfr_bench.py --race "leduc_poker(ranks=10)" --budget 20
    python scripts/mccfr_bench.py --target-only        # iterations to 0.05 on Leduc

Costs are CPU seconds per iteration (``time.process_time``: the machine is shared, so
wall time is noisier), best of 5 repeats, steady state, compilation excluded; every
estimator of a game is timed interleaved with the others in the same process.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import jax

import jaxcfr
from racing import plot_race, timed

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCHEMES = ("none", "chance", "external", "outcome")
COST_GAMES = ("leduc_poker", "liars_dice", "goofspiel(cards=6)")
TARGET = ("cfr/none", "cfr+/none", "lcfr/chance/16", "lcfr/external/16", "lcfr/outcome/64")
RACE = ("cfr/none", "cfr+/none", "cfr/chance/16", "lcfr/chance/16", "cfr/external/16",
        "lcfr/external/16", "lcfr/outcome/64")


def costs(game: str, algorithm: str = "cfr+", repeats: int = 5) -> dict[str, float]:
    """CPU milliseconds per iteration of each estimator (best of ``repeats``)."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    runners = {}
    for scheme in SCHEMES:
        runner = jaxcfr.Runner(lowered, jaxcfr.make_solver(algorithm, sampling=scheme),
                               {"seed": 0}, chunk=50)
        state, _ = runner.compile(runner.init())
        runners[scheme] = [runner, state]
    best = {scheme: float("inf") for scheme in SCHEMES}
    for _ in range(repeats):
        for scheme, entry in runners.items():
            runner, state = entry
            # about 0.5 s of work per measurement
            n = 50 if scheme == "none" else 500
            start = time.process_time()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            best[scheme] = min(best[scheme], (time.process_time() - start) / n * 1e3)
            entry[1] = state
    return {"game": game, "nodes": lowered.num_nodes, "algorithm": algorithm,
            "ms_per_iteration": best}


def _entry_runner(lowered, entry: str):
    """A compiled runner for an ``algorithm/sampling[/samples]`` entry, its state, the scheme."""
    parts = entry.split("/")
    algorithm, scheme = parts[0], parts[1]
    samples = int(parts[2]) if len(parts) > 2 else 1
    runner = jaxcfr.Runner(lowered, jaxcfr.make_solver(algorithm, sampling=scheme,
                                                       samples=samples), {"seed": 0}, chunk=50)
    state, _ = runner.compile(runner.init())
    return runner, state, scheme


def race(game: str, budget: float, entries=RACE) -> dict[str, list]:
    """Exploitability after growing CPU time, per ``algorithm/sampling[/samples]`` entry."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    out = {}
    for entry in entries:
        runner, state, scheme = _entry_runner(lowered, entry)
        points = timed(runner, state, budget, 25 if scheme == "none" else 250,
                       lambda st: float(runner.evaluate(st)["exploitability"]),
                       clock=time.process_time)
        out[entry] = points
        print(entry, points[-1], flush=True)
    return out


def to_target(game: str, target: float, entries=TARGET, limit: float = 120.0) -> dict:
    """Iterations and CPU seconds each entry needs to bring the exact exploitability of
    its average profile below ``target`` (checked every 10% more iterations; ``None``
    past ``limit`` CPU seconds)."""
    lowered = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    out = {}
    for entry in entries:
        runner, state, scheme = _entry_runner(lowered, entry)
        done, spent, n, expl = 0, 0.0, 10, float("inf")
        while expl >= target and spent < limit:
            start = time.process_time()
            state = runner.advance(state, n)
            jax.block_until_ready(state)
            spent += time.process_time() - start
            done += n
            expl = float(runner.evaluate(state)["exploitability"])
            n = max(10, int(done * 0.1))
        out[entry] = {"iterations": done if expl < target else None,
                      "cpu_seconds": spent if expl < target else None, "exploitability": expl}
        print(entry, out[entry], flush=True)
    return out


def plot(results: dict[str, list], path: pathlib.Path, title: str) -> None:
    plot_race(results, path, title, "CPU seconds (compilation excluded)", "exploitability",
              solid=lambda entry: entry.endswith("/none"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--costs", action="store_true", help="only the cost table")
    parser.add_argument("--games", nargs="*", default=list(COST_GAMES))
    parser.add_argument("--race", default="leduc_poker(ranks=10)", help="the race's game")
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per entry")
    parser.add_argument("--out", default=str(ROOT / "docs"))
    parser.add_argument("--target-only", action="store_true",
                        help="only the iterations to 0.05 on Leduc, added to mccfr.json")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    if args.target_only:
        results = json.loads((out / "mccfr.json").read_text())
        results["target"] = {"game": "leduc_poker", "target": 0.05,
                             "entries": to_target("leduc_poker", 0.05)}
        (out / "mccfr.json").write_text(json.dumps(results, indent=1) + "\n")
        return
    results = {"date": time.strftime("%Y-%m-%d"), "jax": jax.__version__,
               "costs": [costs(g) for g in args.games]}
    for c in results["costs"]:
        print(json.dumps(c), flush=True)
    if not args.costs:
        results["race"] = {"game": args.race, "budget": args.budget,
                           "points": race(args.race, args.budget)}
        plot(results["race"]["points"], out / "mccfr.png",
             f"{args.race}: exploitability against CPU time")
        results["target"] = {"game": "leduc_poker", "target": 0.05,
                             "entries": to_target("leduc_poker", 0.05)}
    (out / "mccfr.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
