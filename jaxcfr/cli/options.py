"""What several commands share: the GAME argument's help, the lowering cache's options,
lowering a game for a command with its status line, and the ``--target`` summary line
(``jaxcfr solve``, with or without ``--boards``)."""

from __future__ import annotations

import argparse

from jaxcfr._util.arguments import positive_int

__all__ = ["GAME_HELP", "add_cache_arguments", "lower_for_cli", "heavy", "target_line"]

GAME_HELP = ("a game: a name from `jaxcfr games` (kuhn_poker, leduc_poker(ranks=4)), a .efg "
             "file, module:Class (imports and runs that module) or openspiel:NAME")


def add_cache_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="walk the game even if the cache of lowered games has it "
                        "(~/.cache/jaxcfr/lowered; JAXCFR_NO_CACHE=1 turns it off)")
    p.add_argument("--workers", type=int, help="processes that walk the tree "
                   "(default: all cores for a large game)")


def lower_for_cli(args, status, sort: bool = True, report: dict | None = None):
    """``args.game`` lowered through the cache (unless --no-cache), telling ``status``;
    ``report["cache"]`` says what the cache did."""
    from jaxcfr.engine.loop import lower_reporting
    if args.workers is not None:
        positive_int("--workers", args.workers)
    return lower_reporting(args.game, status, cache=not args.no_cache, sort_infosets=sort,
                           workers=args.workers, report=report)


def heavy() -> None:
    """What a command calls once its own cheap checks (arguments, files) have passed and
    its heavy work begins: JAX's persistent compilation cache, turned on (this imports
    JAX; everything before it answers a mistake without JAX)."""
    from jaxcfr._util.signals import exiting_at_once
    with exiting_at_once("jaxcfr"):      # a signal in JAX's import ends the process at once
        from jaxcfr.engine.jax_compilation_cache import enable_compilation_cache
        enable_compilation_cache()


def target_line(reached: bool, final: dict, target: float, several: bool = False) -> str:
    """The summary line of ``--target``: the iteration it was reached at, or not reached in
    the iterations run (``final``: the last record; ``several``: a batch or a stack, whose
    every member had to reach it)."""
    name, it = final["metric_name"], final["iteration"]
    if not reached:
        return (f"target          not reached in {it} iterations: {name} above {target:g}"
                + (" for some member" if several else ""))
    if several:
        return f"target          reached at iteration {it}: every member's {name} <= {target:g}"
    return f"target          reached at iteration {it}: {name} {final['metric']:.6g} <= {target:g}"
