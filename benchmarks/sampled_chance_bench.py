#!/usr/bin/env python
"""Sampled chance: host throughput, device waiting, a race against full-width CFR, and
the transposition cache of the estimates. Writes ``sampled_chance.json`` and
``sampled_chance.png`` into ``--out`` (default ``runs/sampled_chance_bench``;
``--out docs`` updates the figures docs/sampled_chance.md quotes).

Usage::

    python benchmarks/sampled_chance_bench.py                 # everything (about 5 minutes)
    python benchmarks/sampled_chance_bench.py --throughput    # host throughput only
    python benchmarks/sampled_chance_bench.py --race-budget 30

* Throughput: draws lowered or taken from the cache per second of host time, and the
  fraction of wall time the device waited for the host, on Leduc (board enumerated: 30
  cacheable deals), Leduc with every chance node drawn (nothing cacheable: the walker's
  speed, with 1 and 2 lowering processes) and the default sampled dice poker (5 dice:
  252 x 252 deals).
* Race: dice poker with 3 dice of 6 sides (``dice_poker``, the enumerable twin of
  ``sampled_dice_poker``: same keys, same values) solved full-width (CFR+, LCFR) and by
  sampled chance on ``sampled_dice_poker(dice=3, sides=6)`` (LCFR, 16 and 64 draws per
  iteration), every profile evaluated exactly in the lowered twin; wall seconds
  (compilation included for sampled chance, whose shapes grow with the draws).
* Transpositions: ``estimate_values`` on ``dice_poker(dice=3, sides=6)`` with its listed
  chance enumerated, memoised on ``state_hash()`` (the game opts in) or not.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

import jax

import jaxcfr
from jaxcfr.engine.sampled_chance import SampledChanceRunner
from jaxcfr.solvers.presets import make_solver
from benchkit.racing import plot_race, timed

RACE_GAME, RACE_TWIN = "sampled_dice_poker(dice=3, sides=6)", "dice_poker(dice=3, sides=6)"


def throughput(game: str, iterations: int, **kw) -> dict:
    """The host's figures after ``iterations`` sampled-chance iterations of ``game``."""
    runner = SampledChanceRunner(jaxcfr.load_game(game), make_solver("lcfr"), {"seed": 0},
                                 chunk=50, **kw)
    start = time.perf_counter()
    state = runner.advance(runner.init(), iterations)
    jax.block_until_ready(state)
    seconds = time.perf_counter() - start
    report = runner.report()
    runner.close()
    out = {"game": game, **{k: v for k, v in kw.items()}, "iterations": iterations,
           "wall_seconds": seconds, **report}
    print(json.dumps(out), flush=True)
    return out


def race(budget: float) -> dict[str, list]:
    """Exploitability (exact, in the lowered twin) against wall seconds."""
    twin = jaxcfr.lower(jaxcfr.load_game(RACE_TWIN), name=RACE_TWIN)
    out = {}
    for algorithm in ("cfr+", "lcfr"):
        runner = jaxcfr.Runner(twin, make_solver(algorithm), chunk=10)
        state, _ = runner.compile(runner.init())
        points = timed(runner, state, budget, 2,
                        lambda st: float(runner.evaluate(st)["exploitability"]))
        out[f"{algorithm}, full width"] = points
        print(algorithm, points[-1], flush=True)
    for draws in (16, 64):
        runner = SampledChanceRunner(jaxcfr.load_game(RACE_GAME), make_solver("lcfr"),
                                     {"seed": 0}, draws=draws, chunk=50)
        points = timed(runner, runner.init(), budget, 20, lambda st: float(jaxcfr.evaluate(
            twin, runner.profile_table(st).table(twin)[0])["exploitability"]))
        out[f"lcfr, sampled chance, {draws} draws"] = points
        print(draws, points[-1], runner.report()["device_wait_fraction"], flush=True)
        runner.close()
    return out


def transpositions(samples: int = 2) -> dict:
    """Seconds of ``estimate_values`` with and without the transposition cache (every
    chance node of the twin lists its outcomes and is enumerated: each sample is one
    whole-tree walk, the same exact values)."""
    game = jaxcfr.load_game(RACE_TWIN)
    out = {"game": RACE_TWIN, "samples": samples}
    for memo in (False, True):
        start = time.perf_counter()
        est = jaxcfr.estimate_values(game, None, samples=samples, seed=0, method="exact",
                                     enumerate_chance=True, transpositions=memo)
        out["with" if memo else "without"] = time.perf_counter() - start
        out[f"values_{'with' if memo else 'without'}"] = [e.value for e in est]
    out["speed_up"] = out["without"] / out["with"]
    print(json.dumps(out), flush=True)
    return out


def plot(points: dict[str, list], path: pathlib.Path) -> None:
    plot_race(points, path, f"{RACE_TWIN}: full width against sampled chance", "wall seconds",
              "exploitability (exact)", solid=lambda entry: "full" in entry)


#: Where the figures go unless ``--out`` says otherwise: not docs/, which a run of the
#: benchmark should change only when asked (``--out docs``).
DEFAULT_OUT = pathlib.Path("runs") / "sampled_chance_bench"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--throughput", action="store_true", help="only the host figures")
    parser.add_argument("--race-budget", type=float, default=40.0,
                        help="wall seconds per race entry (default: 40)")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help=f"folder of sampled_chance.json and .png (default: {DEFAULT_OUT}; "
                             "--out docs updates the docs)")
    return parser


def main() -> None:
    args = build_parser().parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {"date": time.strftime("%Y-%m-%d"), "jax": jax.__version__, "throughput": [
        throughput("leduc_poker", 1000, draws=16),
        throughput("leduc_poker", 100, draws=16, enumerate_listed=False),
        throughput("leduc_poker", 100, draws=16, enumerate_listed=False, workers=2),
        throughput("sampled_dice_poker", 1000, draws=16),
        throughput("sampled_dice_poker", 200, draws=16, cache_size=0),
    ]}
    if not args.throughput:
        results["transpositions"] = transpositions()
        results["race"] = race(args.race_budget)
        plot(results["race"], out / "sampled_chance.png")
    (out / "sampled_chance.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
