"""``jaxcfr estimate GAME [PROFILE]``: estimated values and best-response-gain lower bounds.

For games :func:`jaxcfr.evaluate` cannot handle (chance that cannot be enumerated, trees
too large to lower): Monte Carlo estimates with confidence intervals
(:mod:`jaxcfr.profiles.value_estimates`), labelled as estimates. :mod:`jaxcfr.cli.app`
lists the command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxcfr._util import arguments

__all__ = ["add_estimate_arguments", "run_estimate"]


def add_estimate_arguments(p: argparse.ArgumentParser) -> None:
    from jaxcfr.profiles.value_estimate_options import DEFAULT_TRAIN_SAMPLES, MAX_NODES, METHODS
    p.add_argument("game", help="a game string (its chance may be non-enumerable)")
    p.add_argument("profile", nargs="?", help="a saved profile (.npz / .json / stem) or a run "
                   "directory (default: the uniform profile; GAME PROFILE and PROFILE GAME "
                   "are both accepted)")
    p.add_argument("--samples", type=int, default=1000,
                   help="held-out draws of chance the estimates average (default: 1000)")
    p.add_argument("--train-samples", type=int, default=DEFAULT_TRAIN_SAMPLES,
                   help="draws of chance the best responses are computed on (many more than "
                        f"the game's information sets; default: {DEFAULT_TRAIN_SAMPLES:,})")
    p.add_argument("--seed", type=int, default=0, help="seed of the draws (default: 0)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="nominal coverage of the intervals (default: 0.95)")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="value each draw by the exact expectation over the strategies, by one "
                        f"sampled trajectory, or auto: exact where a draw walks in {MAX_NODES:,} "
                        "states (default: auto)")
    p.add_argument("--enumerate-chance", action="store_true",
                   help="enumerate chance nodes that list their outcomes (draw only the others)")
    p.add_argument("--values-only", action="store_true",
                   help="estimate the values only (no best responses: nothing is lowered)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_estimate(args: argparse.Namespace) -> int:
    from jaxcfr.cli.options import heavy
    from jaxcfr.cli.train import profile_and_game, require_profile
    from jaxcfr.profiles.value_estimate_options import check_options
    arguments.positive_int("--train-samples", args.train_samples)
    check_options(args.samples, args.seed, args.confidence, args.method,
                  spell=arguments.command_line_spelling)
    if args.profile is not None:
        args.profile, args.game = profile_and_game(args.profile, args.game)
        path = Path(args.profile)
        require_profile(path / "profile.npz" if path.is_dir() else path)
    heavy()
    from jaxcfr.profiles.value_estimates import estimate_profile, estimate_values
    from jaxcfr.profiles.profile import Profile
    from jaxcfr.game.registry import load_game
    options = dict(samples=args.samples, seed=args.seed,
                   confidence=args.confidence, method=args.method,
                   enumerate_chance=args.enumerate_chance)
    game = load_game(args.game)
    profile, source = None, "uniform"
    if args.profile is not None:
        path = Path(args.profile)
        path = path / "profile.npz" if path.is_dir() else path
        profile, source = Profile.load(path), str(path)
    out = {"game": args.game, "profile": source}
    if args.values_only:
        values = _renamed(lambda: estimate_values(game, profile, **options))
        out.update({"values": [e.value for e in values],
                    "values_interval": [[e.low, e.high] for e in values],
                    "values_stderr": [e.stderr for e in values], "samples": values[0].samples,
                    "confidence": values[0].confidence, "seed": args.seed, "estimate": True})
    else:
        out.update(_renamed(lambda: estimate_profile(
            game, profile, train_samples=args.train_samples, **options).record()))
    if args.json:
        print(json.dumps(out))
        return 0
    _print(out)
    return 0


def _renamed(fn):
    """``fn()``, with the API's argument names in its errors as the command line's options."""
    try:
        return fn()
    except arguments.ArgumentError as e:
        message = str(e)
        for name in ("samples", "seed", "confidence"):
            if message.startswith(name + " "):
                raise arguments.ArgumentError("--" + message) from None
        raise


def _print(out: dict) -> None:
    conf = f"{out['confidence']:.0%}"
    draws = f"{out['samples']:,} held-out draws"
    if "train_samples" in out:
        draws += f", best responses on {out['train_samples']:,} other draws"
    print(f"game            {out['game']}")
    print(f"profile         {out['profile']}")
    print(f"draws           {draws} (seed {out['seed']}"
          + (f", {out['method']} values per draw)" if "method" in out else ")"))
    print(f"{'':<24}{'estimate':>12}  {conf} interval")
    rows = [(f"value p{p}", v, lo_hi) for p, (v, lo_hi) in
            enumerate(zip(out["values"], out["values_interval"]))]
    if "gain_lower_bound" in out:
        rows += [(f"gain lower bound p{p}", v, lo_hi) for p, (v, lo_hi) in
                 enumerate(zip(out["gain_lower_bound"], out["gain_interval"]))]
        rows.append(("nash_conv lower bound", out["nash_conv_lower_bound"],
                     out["nash_conv_interval"]))
        if out["exploitability_lower_bound"] is not None:
            rows.append(("exploitability l. b.", out["exploitability_lower_bound"],
                         out["exploitability_interval"]))
    for label, value, (lo, hi) in rows:
        print(f"{label:<24}{value:>12.6g}  [{lo:.6g}, {hi:.6g}]")
    print("(estimates by Monte Carlo over chance, not exact values: the gains are a best "
          "response's, found on other draws, so the true gains are at least these in "
          "expectation)" if "gain_lower_bound" in out else
          "(estimates by Monte Carlo over chance, not exact values)")
