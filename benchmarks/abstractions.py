#!/usr/bin/env python
"""The full-game table of abstractions: bet menus of no-limit Leduc, bucketings of Leduc(13).

For each abstraction of a game: the abstracted game's histories and information sets,
the training iterations and times (lowering, compiling, iterating; each abstraction
trained alone, so the times are its own), the exploitability inside the abstraction
(best responses restricted to it), and the exact full-game exploitability of the
lifted profile by elimination (the seed's rule), by action translation (where the
abstraction translates: the bet menus) and by nested re-solving (``--resolve``, once
subgame re-solving exists: issue 19). The first rows are the full game itself and
the uniform profile, for scale. ``--batch`` also trains each table's members as one
stacked run and prints its time.

Usage::

    python benchmarks/abstractions.py                          # both tables (docs/abstraction.md)
    python benchmarks/abstractions.py --table menus --markdown # no-limit Leduc only, Markdown
    python benchmarks/abstractions.py --game "nolimit_leduc(stack=6)" \\
        --abstraction "bet_menu(fractions=[1.0])" --iterations 500
    python benchmarks/abstractions.py --table menus --resolve subgames  # fill the re-solving column
    python benchmarks/abstractions.py --resolve mypkg.resolve:nested     # ... with your own

``--resolve subgames`` re-solves every subgame after a raise the menu dropped, in the
full game, nested (Brown & Sandholm 2017), with ``jaxcfr.subgames`` (issue 19: on main
since its merge 0f17e09; this branch predates it, so the option says so until the two
are merged): Maxmargin gadget, 1000 CFR+ iterations per subgame, against the abstract
blueprint, as ``benchmarks/subgames.py`` does. ``--resolve MODULE:FUNCTION`` names any
``function(result) -> Profile``: given a :class:`jaxcfr.AbstractedResult` (the
blueprint: ``result.profile`` lifted, ``result.abstract_profile``, ``result.abstraction``,
``result.lowered``, ``result.full``), it returns a profile of the full game, evaluated
exactly like the other columns. Rows without dropped actions (bucketings) read n/a.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import time

import jax
import numpy as np

import jaxcfr

#: No-limit Leduc's bet menus (stack 8), largest first; identity is the full game.
MENUS = (
    "bet_menu(fractions=[0.25, 0.5, 0.75, 1.0, 1.5, 2.0])",
    "bet_menu(fractions=[0.5, 1.0])",
    "bet_menu(fractions=[1.0])",
    "bet_menu(fractions=[])",
)
#: Leduc(13)'s bucketings: lossless, then lossy with and without perfect recall.
BUCKETINGS = (
    "suit_isomorphism",
    "rank_buckets(buckets=8)",
    "rank_buckets(buckets=8, recall=False)",
    "rank_buckets(buckets=4)",
    "rank_buckets(buckets=4, recall=False)",
)
TABLES = {"menus": ("nolimit_leduc", MENUS), "buckets": ("leduc_poker(ranks=13)", BUCKETINGS)}
HEAD = ["abstraction", "histories", "infosets", "iterations", "lower s", "compile s",
        "train s (it/s)", "lift s", "expl. (abstract)", "full game: elimination",
        "translation", "nested re-solving"]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", choices=("menus", "buckets", "both"), default="both")
    p.add_argument("--game", help="a game of your own (with --abstraction)")
    p.add_argument("--abstraction", action="append", dest="abstractions",
                   help="an abstraction or bucketing string (repeatable)")
    p.add_argument("--algorithm", default="cfr+")
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--precision", default="float32")
    p.add_argument("--batch", action="store_true", help="also train each table as one stacked "
                   "run")
    p.add_argument("--resolve", metavar="subgames|MODULE:FUNCTION",
                   help="nested re-solving: 'subgames' (jaxcfr.subgames, Maxmargin), or "
                        "function(AbstractedResult) -> full-game Profile")
    p.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.add_argument("--json", metavar="PATH", help="also write every row as JSON")
    args = p.parse_args(argv)
    if args.game:
        tables = [(args.game, tuple(args.abstractions or ()))]
    else:
        names = ("menus", "buckets") if args.table == "both" else (args.table,)
        tables = [TABLES[n] for n in names]
    resolve = None
    if args.resolve == "subgames":
        resolve = nested_resolving
    elif args.resolve:
        resolve = _load_function(args.resolve)
    out = []
    for game, members in tables:
        rows = table(game, members, args, resolve)
        out.append({"game": game, "rows": rows})
        print(f"\n{game}, {args.algorithm}, {args.iterations} iterations, {args.precision}")
        _print(rows, args.markdown)
        if args.batch:
            start = time.perf_counter()
            batch = jaxcfr.train_abstracted(game, list(members), args.algorithm,
                                            args.iterations, precision=args.precision)
            s = batch[0].solve
            print(f"one stacked run of {len(batch)}: compile {s.compile_seconds:.1f} s, "
                  f"{s.iterations_per_second:,.0f} it/s, {s.seconds:.1f} s of iterations, "
                  f"{time.perf_counter() - start:.1f} s in all")
    print(f"\n{platform.machine()}, {os.cpu_count()} CPUs, jaxcfr {jaxcfr.__version__}, "
          f"jax {jax.__version__}, {jax.default_backend()}, {time.strftime('%Y-%m-%d')}; "
          "times are wall-clock seconds")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)


def table(game: str, members, args, resolve=None) -> list[dict]:
    """The rows of one game's table (dicts, see :data:`HEAD`)."""
    start = time.perf_counter()
    full = jaxcfr.lower(jaxcfr.load_game(game), name=game)
    lower_seconds = time.perf_counter() - start
    mask = full.tensors.legal_mask
    uniform = jaxcfr.evaluate(full, mask / mask.sum(axis=1, keepdims=True),
                              dtype=args.precision)["exploitability"]
    solved = jaxcfr.solve(full, args.algorithm, args.iterations, precision=args.precision)
    rows = [{"abstraction": "full game", "histories": full.num_nodes,
             "infosets": sum(full.infosets_per_player), "iterations": args.iterations,
             "lower": lower_seconds, "compile": solved.compile_seconds,
             "train": solved.seconds, "its": solved.iterations_per_second,
             "abstract": _f(solved.final["exploitability"]),
             "elimination": _f(solved.final["exploitability"])},
            {"abstraction": "uniform profile", "elimination": _f(uniform)}]
    for text in members:
        start = time.perf_counter()
        r = jaxcfr.train_abstracted(game, text, args.algorithm, args.iterations,
                                    precision=args.precision)
        total = time.perf_counter() - start
        s = r.solve
        row = {"abstraction": text, "histories": r.lowered.num_nodes,
               "infosets": sum(r.lowered.infosets_per_player), "iterations": args.iterations,
               "lower": r.lower_seconds, "compile": s.compile_seconds, "train": s.seconds,
               "its": s.iterations_per_second,
               "lift": total - r.lower_seconds - s.compile_seconds - s.seconds,
               "abstract": _f(r.abstract_final["exploitability"]),
               "imperfect_recall": r.row["imperfect_recall"],
               "elimination": _f(r.elimination_exploitability),
               "translation": _f(r.translation_exploitability),
               "unreached": r.unreached, "translated_infosets": r.row["translated_infosets"]}
        if resolve is not None and r.row["translated_infosets"] + r.unreached:
            profile = resolve(r)
            row["resolving"] = _f(jaxcfr.evaluate_profile(profile, r.full,
                                                          precision=args.precision)[
                "exploitability"])
        elif resolve is not None:
            row["resolving"] = "n/a"
        rows.append(row)
        print(f"  {text}: done in {total:.1f} s", flush=True)
    return rows


def nested_resolving(result, gadget: str = "maxmargin", iterations: int = 1000):
    """The blueprint of ``result`` with every subgame after a dropped action re-solved in
    the full game, nested (``jaxcfr.subgames``, issue 19), composed: a full-game Profile."""
    try:
        from jaxcfr.subgames import Context, off_abstraction, resolve_subgames
    except ImportError:
        raise SystemExit("--resolve subgames needs jaxcfr.subgames (issue 19), which this "
                         "checkout does not have yet: merge main, or pass MODULE:FUNCTION") \
            from None
    root = jaxcfr.load_game(result.full.name)
    paths = off_abstraction(result.full, result.abstraction, abstract=result.lowered)
    context = Context(result.full, result.abstract_profile, abstraction=result.lowered,
                      root=root)
    return resolve_subgames(result.full, result.abstract_profile, paths, gadget=gadget,
                            iterations=iterations, context=context).profile


def _load_function(text: str):
    module, _, name = text.partition(":")
    return getattr(importlib.import_module(module), name)


def _f(x):
    return None if x is None else float(np.asarray(x))


def _cells(r: dict) -> list[str]:
    def num(key, fmt):
        return "" if r.get(key) is None else format(r[key], fmt)

    def expl(key):
        v = r.get(key)
        return "" if v is None else v if isinstance(v, str) else f"{v:.3g}"
    abstract = expl("abstract") + ("*" if r.get("imperfect_recall") else "")
    translation = expl("translation") or ("n/a" if "translation" in r else "")
    resolving = expl("resolving") or ("pending" if r.get("histories") and
                                      r["abstraction"] != "full game" else "")
    train = "" if r.get("train") is None else f"{r['train']:.1f} ({r['its']:,.0f})"
    return [r["abstraction"], num("histories", ","), num("infosets", ","),
            num("iterations", ","), num("lower", ".1f"), num("compile", ".1f"), train,
            num("lift", ".1f"), abstract, expl("elimination"), translation, resolving]


def _print(rows: list[dict], markdown: bool) -> None:
    body = [_cells(r) for r in rows]
    if markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + "|".join("---" for _ in HEAD) + "|")
        for line in body:
            print("| " + " | ".join(f"`{x}`" if i == 0 and "(" in x or x.endswith("_isomorphism")
                                    and i == 0 else x for i, x in enumerate(line)) + " |")
        return
    widths = [max(len(x) for x in col) for col in zip(HEAD, *body)]
    for line in [HEAD] + body:
        print("  ".join(x.ljust(w) if i == 0 else x.rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))


if __name__ == "__main__":
    main()
