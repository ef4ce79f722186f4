#!/usr/bin/env python
"""Subgame solving measured: Leduc blueprints re-solved per gadget, batched against one by one,
depth limits, and nested re-solving of no-limit Leduc's off-menu subgames.

Sections (each prints a Markdown table; ``--json PATH`` writes every figure, ``--plot PATH``
the figure of docs/subgames.md):

* ``leduc``: CFR blueprints of Leduc after 1 .. 1000 iterations; each with every
  second-round public state (30 of them) re-solved by each gadget (60 gadget games for a
  safe gadget, 30 for unsafe, in one compiled run): the blueprint's exact exploitability,
  the composed profile's, and the safety bound.
* ``timing``: those 60 gadget games solved in one stacked run against one by one (cold:
  compiling; warm: compiled), and ``nolimit_timing`` the same for no-limit Leduc's 466
  off-menu gadget games of the reference menu (stacked by size against one by one).
* ``depth``: Leduc's first-round subgame re-solved with depth limits (1 and 3
  continuations at the frontier).
* ``nolimit``: blueprints trained on bet-size menus of no-limit Leduc (stack 8), lifted
  (``jaxcfr.lift``), then every subgame after a raise the menu dropped re-solved in the full
  game (nested re-solving): exact full-game exploitability before and after, per gadget.

Usage::

    python benchmarks/subgames.py --json docs/subgames.json --plot docs/subgames.png
    python benchmarks/subgames.py --only leduc,timing --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr.subgames import Context, off_abstraction, paths_after_chance, resolve_subgames

SAFE = ("resolve", "maxmargin", "reach")
MENUS = ("bet_menu(fractions=[0.25, 0.5, 0.75, 1.0, 1.5, 2.0])",
         "bet_menu(fractions=[0.5, 1.0])", "bet_menu(fractions=[1.0])", "bet_menu(fractions=[])")


def leduc(args, out):
    low = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker")
    paths = paths_after_chance(low, 3)
    rows = []
    for it in ((1, 3, 10, 30, 100) if args.quick else (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)):
        blueprint = jaxcfr.solve(low, "cfr", it, precision="float64").profile
        context = Context(low, blueprint)
        row = {"blueprint_iterations": it}
        for gadget in SAFE + ("unsafe",):
            r = resolve_subgames(low, blueprint, paths, gadget=gadget, iterations=args.iterations,
                                 precision="float64", context=context)
            row["blueprint"] = r.blueprint_metrics["exploitability"]
            row[gadget] = r.metrics["exploitability"]
            row[gadget + "_bound"] = r.bound
        rows.append(row)
        print(" ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in row.items()), flush=True)
    out["leduc"] = {"public_states": len(paths), "iterations": args.iterations, "rows": rows}
    print(f"\nLeduc, every second-round public state ({len(paths)}) re-solved with CFR+ "
          f"({args.iterations} iterations); exact exploitability:\n")
    print("| blueprint CFR it. | blueprint | resolve | maxmargin | reach | unsafe |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['blueprint_iterations']} | {r['blueprint']:.4g} | "
              + " | ".join(f"{r[g]:.4g}" for g in SAFE + ("unsafe",)) + " |")


def _timed(full, blueprint, paths, context, iterations, batchings):
    """Each batching twice: cold (compiling) and warm (the programs compiled)."""
    rows = {}
    for batching in batchings:
        row = {}
        for run in ("cold", "warm"):
            r = resolve_subgames(full, blueprint, paths, gadget="maxmargin",
                                 iterations=iterations, batching=batching, context=context,
                                 evaluate_profiles=False)
            row.update({"gadget_games": len(r.subgames), "compiled_runs": len(r.stacks),
                        f"{run}_solve_seconds": r.seconds["solve"],
                        f"{run}_compile_seconds": r.seconds["compile"],
                        "lower_seconds": r.seconds["lower"]})
        rows[batching] = row
        print(batching, row, flush=True)
    return rows


def _timing_table(rows, what):
    print(f"\n{what} (wall seconds of the solves; cold: compiling included):\n")
    print("| how | compiled runs | cold | of it compiling | warm |")
    print("|---|---|---|---|---|")
    names = {"one": "one stacked run", "auto": "stacked by size", "each": "one by one"}
    for batching, r in rows.items():
        print(f"| {names[batching]} | {r['compiled_runs']} | {r['cold_solve_seconds']:.1f} | "
              f"{r['cold_compile_seconds']:.1f} | {r['warm_solve_seconds']:.1f} |")


def timing(args, out):
    low = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker")
    paths = paths_after_chance(low, 3)
    blueprint = jaxcfr.solve(low, "cfr", 30).profile
    rows = _timed(low, blueprint, paths, Context(low, blueprint), args.iterations,
                  ("one", "each"))
    out["timing"] = rows
    _timing_table(rows, f"Leduc, {rows['one']['gadget_games']} gadget games (maxmargin), "
                  f"{args.iterations} CFR+ iterations each")


def nolimit_timing(args, out):
    name, menu = "nolimit_leduc", MENUS[1]
    root = jaxcfr.load_game(name)
    full = jaxcfr.lower(root, name=name)
    abstraction = jaxcfr.load_abstraction(menu)
    small = jaxcfr.lower(jaxcfr.Abstracted(root, abstraction))
    blueprint = jaxcfr.solve(small, "cfr+", args.blueprint_iterations).profile
    paths = off_abstraction(full, abstraction, abstract=small)
    context = Context(full, blueprint, abstraction=small, root=root)
    rows = _timed(full, blueprint, paths, context, args.iterations, ("auto", "each"))
    out["nolimit_timing"] = rows
    _timing_table(rows, f"No-limit Leduc, `{menu}`: the {rows['auto']['gadget_games']} "
                  f"off-menu gadget games (maxmargin), {args.iterations} CFR+ iterations each")


def depth(args, out):
    game = jaxcfr.load_game("leduc_poker")
    low = jaxcfr.lower(game, name="leduc_poker")
    blueprint = jaxcfr.solve(low, "cfr", 30, precision="float64").profile
    paths = [list(p) for p in jaxcfr.subgames.paths_at_depth(low, 2)]    # the whole game
    context = Context(low, blueprint, root=game)
    rows = []
    for limit in (2, 4, 6, None):
        for k in ((1, 2, 4) if limit is not None else (1,)):
            r = resolve_subgames(low, blueprint, paths, gadget="resolve",
                                 iterations=args.iterations, precision="float64",
                                 depth_limit=limit, continuations=k, context=context)
            rows.append({"depth_limit": limit, "continuations": k,
                         "blueprint": r.blueprint_metrics["exploitability"],
                         "resolved": r.metrics["exploitability"],
                         "nodes": sum(s["nodes"] for s in r.subgames)})
            print(rows[-1], flush=True)
    out["depth"] = rows
    print("\nLeduc, the first-round public state (every deal) re-solved (Resolve) against a "
          "CFR-30 blueprint, depth-limited:\n")
    print("| depth limit | continuations | gadget-game nodes | blueprint | re-solved |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['depth_limit'] or 'none'} | {r['continuations']} | {r['nodes']:,} | "
              f"{r['blueprint']:.4g} | {r['resolved']:.4g} |")


def nolimit(args, out):
    name = "nolimit_leduc"
    root = jaxcfr.load_game(name)
    start = time.perf_counter()
    full = jaxcfr.lower(root, name=name)
    print(f"lowered {name} in {time.perf_counter() - start:.1f} s", flush=True)
    rows = []
    for menu in (MENUS[1:2] if args.quick else MENUS):
        abstraction = jaxcfr.load_abstraction(menu)
        small = jaxcfr.lower(jaxcfr.Abstracted(root, abstraction))
        start = time.perf_counter()
        blueprint = jaxcfr.solve(small, "cfr+", args.blueprint_iterations).profile
        train = time.perf_counter() - start
        paths = off_abstraction(full, abstraction, abstract=small)
        context = Context(full, blueprint, abstraction=small, root=root)
        row = {"menu": menu, "histories": small.num_nodes, "off_menu_states": len(paths),
               "blueprint_seconds": train}
        for gadget in SAFE:
            r = resolve_subgames(full, blueprint, paths, gadget=gadget,
                                 iterations=args.iterations, context=context)
            row["lifted"] = r.blueprint_metrics["exploitability"]
            row[gadget] = r.metrics["exploitability"]
            row[gadget + "_seconds"] = r.seconds["total"]
            row[gadget + "_compile"] = r.seconds["compile"]
            row["gadget_games"] = len(r.subgames)
            row["subgame_nodes"] = sum(s["nodes"] for s in r.subgames)
            row["compiled_runs"] = len(r.stacks)
            print(menu, gadget, f"{row['lifted']:.4g} -> {row[gadget]:.4g}",
                  f"{r.seconds['total']:.0f} s", flush=True)
        rows.append(row)
    out["nolimit"] = {"blueprint_iterations": args.blueprint_iterations,
                      "iterations": args.iterations, "rows": rows}
    print(f"\nNo-limit Leduc (stack 8), CFR+ blueprint ({args.blueprint_iterations} it.) on a "
          f"menu, every off-menu subgame re-solved ({args.iterations} CFR+ it.); exact "
          "full-game exploitability:\n")
    print("| menu | histories | off-menu public states | lifted | resolve | maxmargin | reach "
          "| seconds (resolve) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| `{r['menu']}` | {r['histories']:,} | {r['off_menu_states']} | "
              f"{r['lifted']:.3g} | " + " | ".join(f"{r[g]:.3g}" for g in SAFE)
              + f" | {r['resolve_seconds']:.0f} |")


def plot(out, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2 if "nolimit" in out else 1, figsize=(11, 4.2), squeeze=False)
    if "leduc" in out:
        ax = axes[0, 0]
        rows = out["leduc"]["rows"]
        x = [r["blueprint_iterations"] for r in rows]
        ax.plot(x, [r["blueprint"] for r in rows], "k-o", label="blueprint (CFR)")
        for gadget, style in zip(SAFE + ("unsafe",), ("-s", "-^", "-v", "--x")):
            ax.plot(x, [r[gadget] for r in rows], style, label=f"re-solved: {gadget}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("blueprint: CFR iterations")
        ax.set_ylabel("exploitability (chips)")
        ax.set_title("Leduc: every second-round public state re-solved")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, which="both")
    if "nolimit" in out:
        ax = axes[0, 1]
        rows = out["nolimit"]["rows"]
        labels = [r["menu"].replace("bet_menu(fractions=", "").rstrip(")") for r in rows]
        width = 0.2
        xs = np.arange(len(rows))
        ax.bar(xs - 1.5 * width, [r["lifted"] for r in rows], width, label="lifted blueprint")
        for i, gadget in enumerate(SAFE):
            ax.bar(xs + (i - 0.5) * width, [r[gadget] for r in rows], width,
                   label=f"+ off-menu re-solved: {gadget}")
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_xlabel("bet menu (pot fractions; all-in always)")
        ax.set_ylabel("full-game exploitability (chips)")
        ax.set_title("No-limit Leduc: nested re-solving")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, axis="y", which="both")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="leduc,timing,depth,nolimit,nolimit_timing",
                   help="comma-separated sections (default: all)")
    p.add_argument("--iterations", type=int, default=1000, help="CFR+ iterations per re-solve")
    p.add_argument("--blueprint-iterations", type=int, default=1000,
                   help="CFR+ iterations of the no-limit blueprints")
    p.add_argument("--quick", action="store_true", help="fewer blueprints and menus")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--plot", help="write the figure here (needs matplotlib)")
    args = p.parse_args(argv)
    out = {"machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.processor() or '?'})",
           "jax": jax.__version__, "device": str(jax.devices()[0]),
           "date": time.strftime("%Y-%m-%d"), "command": "python benchmarks/subgames.py "
           + " ".join(argv if argv is not None else __import__("sys").argv[1:])}
    sections = {"leduc": leduc, "timing": timing, "depth": depth, "nolimit": nolimit,
                "nolimit_timing": nolimit_timing}
    for name in args.only.split(","):
        start = time.perf_counter()
        sections[name.strip()](args, out)
        print(f"({name}: {time.perf_counter() - start:.0f} s wall)\n", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    if args.plot:
        plot(out, args.plot)


if __name__ == "__main__":
    main()
