"""``jaxcfr games``: the registered games, their parameters and one line on each
(:mod:`jaxcfr.cli.app` lists the command)."""

from __future__ import annotations

import argparse
import inspect
import json

from jaxcfr._util.serialize import jsonable

__all__ = ["add_games_arguments", "run_games"]


def add_games_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run_games(args) -> int:
    from jaxcfr.game.registry import game_parameters, registered_games
    rows = []
    for name, ctor in registered_games().items():
        params = {k: (None if v is inspect.Parameter.empty else v)
                  for k, v in game_parameters(ctor).items()}
        rows.append({"name": name, "parameters": params, "description": _summary(ctor)})
    if args.json:
        print(json.dumps(jsonable({"games": rows})))
        return 0
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        params = ", ".join(f"{k}={v!r}" for k, v in r["parameters"].items()) or "-"
        print(f"{r['name']:<{width}}  {params}")
        if r["description"]:
            print(f"{'':<{width}}  {r['description']}")
    print("\nAlso: a Gambit .efg file, module:Class(k=v), openspiel:NAME(k=v) "
          "(with OpenSpiel installed).")
    return 0


def _summary(ctor) -> str:
    """The first sentence of a docstring, on one line, without reST markup."""
    paragraph = " ".join((inspect.getdoc(ctor) or "").split("\n\n")[0].split())
    sentence = paragraph.split(". ")[0].rstrip(".")
    return sentence.replace("``", "") + ("." if sentence else "")
