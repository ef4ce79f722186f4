#!/usr/bin/env python
"""Abstractions of one game side by side: sizes, times, and metrics inside and in the full game.

For each abstraction: the abstracted game's size and lowering time, the solve's compile
time, iterations per second and wall time (each abstraction trained alone, so the times
are its own), the exploitability inside the abstraction (best responses restricted to the
kept actions), and the exact full-game exploitability of the lifted profile. The first
rows are the full game itself and the uniform profile, for scale. ``--batch`` also trains
all of them as one stacked run (one compiled step) and prints its total time.

Usage::

    python scripts/abstractions.py                              # no-limit Leduc, shipped menus
    python scripts/abstractions.py --iterations 500 --markdown  # a table for the README
    python scripts/abstractions.py --game "nolimit_leduc(stack=6)" \\
        --abstraction identity --abstraction "bet_menu(fractions=[1.0])" --batch
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import jax
import numpy as np

import jaxcfr

#: The abstractions the README reports for no-limit Leduc (identity: the full game).
DEFAULT_ABSTRACTIONS = (
    "identity",
    "bet_menu(fractions=[0.25, 0.5, 0.75, 1.0, 1.5, 2.0])",
    "bet_menu(fractions=[0.5, 1.0])",
    "bet_menu(fractions=[1.0])",
    "bet_menu(fractions=[])",
)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="nolimit_leduc")
    p.add_argument("--abstraction", action="append", dest="abstractions",
                   help=f"an abstraction string (repeatable; default: {DEFAULT_ABSTRACTIONS})")
    p.add_argument("--algorithm", default="cfr+")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--precision", default="float32")
    p.add_argument("--batch", action="store_true", help="also train all as one stacked run")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    abstractions = args.abstractions or list(DEFAULT_ABSTRACTIONS)

    start = time.perf_counter()
    full = jaxcfr.lower(jaxcfr.load_game(args.game), name=args.game)
    full_seconds = time.perf_counter() - start
    mask = full.tensors.legal_mask
    uniform = jaxcfr.evaluate(full, mask / mask.sum(axis=1, keepdims=True), dtype=args.precision)

    head = ["abstraction", "histories", "infosets", "actions", "lower s", "compile s",
            "it/s", "solve s", "expl. (abstract)", "expl. (full game, lifted)"]
    rows = [["full game", f"{full.num_nodes:,}", f"{sum(full.infosets_per_player):,}",
             str(full.max_actions), f"{full_seconds:.1f}", "", "", "", "", ""],
            ["uniform profile", "", "", "", "", "", "", "", "",
             _num(uniform["exploitability"])]]
    for text in abstractions:
        r = jaxcfr.train_abstracted(args.game, text, args.algorithm, args.iterations,
                                    precision=args.precision)
        s = r.solve
        rows.append([text, f"{r.lowered.num_nodes:,}", f"{sum(r.lowered.infosets_per_player):,}",
                     str(r.lowered.max_actions), f"{r.lower_seconds:.1f}",
                     f"{s.compile_seconds:.1f}", f"{s.iterations_per_second:,.0f}",
                     f"{s.seconds:.1f}", _num(r.abstract_final["exploitability"]),
                     _num(r.exploitability)])
    _print(head, rows, args.markdown)
    if args.batch:
        batch = jaxcfr.train_abstracted(args.game, abstractions, args.algorithm,
                                        args.iterations, precision=args.precision)
        s = batch[0].solve
        print(f"\none stacked run of {len(batch)} abstractions: compile {s.compile_seconds:.1f} s, "
              f"{s.iterations_per_second:,.0f} it/s, {s.seconds:.1f} s for {args.iterations} "
              "iterations")
        print(jaxcfr.format_table(batch))
    print(f"\n{args.algorithm}, {args.iterations} iterations, {args.precision}; "
          f"{platform.machine()}, {os.cpu_count()} CPUs, jaxcfr {jaxcfr.__version__}, "
          f"jax {jax.__version__}, {time.strftime('%Y-%m-%d')}")


def _num(x) -> str:
    return "n/a" if x is None else f"{float(np.asarray(x)):.3g}"


def _print(head, rows, markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for r in rows:
            print("| " + " | ".join(f"`{x}`" if i == 0 and "(" in x else x
                                    for i, x in enumerate(r)) + " |")
        return
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    for line in [head] + rows:
        print("  ".join(x.ljust(w) if i == 0 else x.rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))


if __name__ == "__main__":
    main()
