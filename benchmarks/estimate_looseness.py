#!/usr/bin/env python
"""How loose the estimates' best-response-gain lower bound is, against exact values.

For a profile of a game whose chance can also be enumerated (a *twin*), the exact
exploitability is known; this prints it beside the held-out lower bound and the
in-sample (optimistic) estimate for several numbers of fitting draws, with the seconds
each estimate took. Figures go to docs/sampled_chance.md ("How loose the bound is").

Usage::

    python benchmarks/estimate_looseness.py            # the default cases (a few minutes)
"""

from __future__ import annotations

import argparse
import time

import jaxcfr
from jaxcfr.profiles import value_estimates

CASES = [
    # (game trained and estimated, its exact twin or None, algorithm, iterations)
    ("sampled_dice_poker(dice=2, sides=6)", "dice_poker(dice=2, sides=6)", "lcfr", 50),
    ("sampled_dice_poker(dice=2, sides=6)", "dice_poker(dice=2, sides=6)", "lcfr", 1000),
    ("leduc_poker", "leduc_poker", "cfr+", 200),
    ("sampled_dice_poker", None, "lcfr", 50),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", default="1000,3200,20000",
                        help="fitting draws to try (comma-separated)")
    parser.add_argument("--samples", type=int, default=1000, help="held-out draws")
    args = parser.parse_args()
    fits = [int(x) for x in args.fits.split(",")]
    print("| game | profile | exact expl. | fitting draws | held-out lower bound (± s.e.) "
          "| in-sample | seconds |")
    print("|---|---|---|---|---|---|---|")
    for game, twin, algorithm, iterations in CASES:
        chance = "exact" if twin == game else "auto"
        result = jaxcfr.solve(game, algorithm, iterations, chance=chance)
        exact = jaxcfr.evaluate_profile(result.profile, twin)["exploitability"] if twin else None
        root = jaxcfr.load_game(game)
        for fit in fits:
            start = time.perf_counter()
            est = value_estimates.estimate_profile(root, result.profile, samples=args.samples,
                                             train_samples=fit)
            seconds = time.perf_counter() - start
            ex = est.exploitability
            shown = "n/a" if exact is None else f"{exact:.4f}"
            print(f"| `{game}` | {algorithm} x {iterations} | {shown} | {fit:,} | "
                  f"{ex.value:.4f} (± {ex.stderr:.4f}) | {sum(est.gains_in_sample) / 2:.4f} | "
                  f"{seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
