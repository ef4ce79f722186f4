"""``jaxcfr validate GAME``: the contract probed on random trajectories, then whether and how
the game fits (:mod:`jaxcfr.cli.app` lists the command)."""

from __future__ import annotations

import argparse

from jaxcfr._util.arguments import positive_int
from jaxcfr.cli.options import GAME_HELP

__all__ = ["add_validate_arguments", "run_validate"]


def add_validate_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("--trajectories", type=int, default=256,
                   help="random root-to-leaf trajectories to probe (default: 256)")
    p.add_argument("--seed", type=int, default=0, help="seed of the probe (default: 0)")


def run_validate(args) -> int:
    from jaxcfr.lowering.budget import default_memory_budget, describe_fit
    from jaxcfr.game.registry import load_game
    from jaxcfr.lowering.size import probe_size
    from jaxcfr.game.validate import validate_game_with
    positive_int("--trajectories", args.trajectories)
    game = load_game(args.game)
    from jaxcfr.game.public import PublicGame
    if isinstance(game, PublicGame):            # a public tree (docs/public_trees.md)
        from jaxcfr.lowering.public import least_public_size
        game.validate(trajectories=args.trajectories, seed=args.seed)
        print(f"{args.game}: conforms as a public tree ({args.trajectories} public "
              f"trajectories, seed {args.seed}); `jaxcfr inspect` lowers it")
        least = least_public_size(game)
        if least is not None:
            print(f"{args.game}: {_public_fit(least, default_memory_budget())}")
        return 0
    validate_game_with(game, trajectories=args.trajectories, seed=args.seed)
    print(f"{args.game}: conforms ({args.trajectories} trajectories, seed {args.seed})")
    size = probe_size(game)
    if size is None and _meets_listless_chance(game, args.seed):
        print(f"{args.game}: its chance cannot be enumerated (chance_outcomes() is None), so "
              "it is not lowered whole: `jaxcfr solve` and `jaxcfr train` train it by "
              "sampling chance, with estimated metrics (`jaxcfr estimate` for a saved profile)")
    elif size is None:
        print(f"{args.game}: size not estimated (a random probe of it took too many steps or "
              "failed): `jaxcfr inspect` lowers it and says")
    else:
        print(f"{args.game}: {describe_fit(size, game.num_players, default_memory_budget())[1]}")
    return 0


def _meets_listless_chance(game, seed: int, trajectories: int = 16) -> bool:
    """Whether random trajectories of ``game`` meet a chance node without listed outcomes."""
    import random
    rng = random.Random(seed)
    for _ in range(trajectories):
        state = game.clone()
        for _ in range(100_000):
            if state.is_terminal():
                break
            if state.is_chance():
                outcomes = state.chance_outcomes()
                if outcomes is None:
                    return True
                action = rng.choices([a for a, _ in outcomes], [p for _, p in outcomes])[0]
            else:
                action = rng.choice(list(state.legal_actions()))
            state.step(action)
    return False


def _public_fit(size, budget: int) -> str:
    """A public tree's least size counted before the walk
    (:func:`~jaxcfr.lowering.public.least_public_size`) against ``budget``, by preset."""
    from jaxcfr.lowering.budget import format_bytes
    from jaxcfr.lowering.public import public_footprint
    presets = (("postflop-dcfr", 2), ("cfr+", 3), ("pcfr+", 4))
    needs = [public_footprint(size, state_tables=k).total for _, k in presets]
    sizes = (f"{size.nodes:,} public nodes counted ({size.decisions:,} decisions, "
             f"{size.terminals:,} terminals; up to {size.hands:,} hands per player): at "
             "least " + ", ".join(f"{format_bytes(n)} with {p}" for (p, _), n in
                                  zip(presets, needs))
             + f" (float32) to lower and solve, against the memory budget of "
             f"{format_bytes(budget)}")
    over = [p for (p, _), n in zip(presets, needs) if n > budget]
    if not over:
        return f"{sizes}: within it"
    if len(over) == len(presets):
        return (f"too large to lower: {sizes}: a solve is refused before the walk (set "
                "JAXCFR_MEMORY_BUDGET=BYTES to raise it)")
    return f"{sizes}: {', '.join(over)} refused before the walk"
