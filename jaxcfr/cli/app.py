"""The ``jaxcfr`` command line: games, validate, inspect, solve (and train / eval, see runs).

Errors are printed as one line (``jaxcfr: error: ...``) with a non-zero exit
status; ``--traceback`` (anywhere on the line, or ``JAXCFR_TRACEBACK=1``) shows the
Python traceback. Ctrl-C exits with status 130 and SIGTERM with 143, at any moment.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import time
from typing import Callable, NoReturn, Sequence

import numpy as np

from jaxcfr._util.arguments import positive_int
from jaxcfr.cli.abstract import add_abstract_arguments, run_abstract
from jaxcfr.cli.estimate import add_estimate_arguments, run_estimate
from jaxcfr.cli.resolve import add_resolve_arguments, run_resolve
from jaxcfr._util.precision import PRECISIONS
from jaxcfr.cli.train import add_eval_arguments, add_train_arguments, run_eval, run_train
from jaxcfr.cli.version import version_line
from jaxcfr._util.serialize import jsonable
from jaxcfr._util.signals import RaisingInterrupts, exit_now, exit_status

__all__ = ["main", "exit_with", "build_parser", "COMMANDS"]

DESCRIPTION = """\
Solve imperfect-information extensive-form games (poker, dice, Gambit .efg files,
your own Python games) with the counterfactual-regret-minimisation family: CFR, CFR+,
LCFR, DCFR, PCFR+, DCFR+, PDCFR+ (jitted JAX steps, on CPU or GPU)."""
EPILOG = """examples:
  jaxcfr games                               the games and their parameters
  jaxcfr validate "leduc_poker(ranks=4)"     check a game against the contract
  jaxcfr inspect liars_dice                  sizes of the lowered game
  jaxcfr solve kuhn_poker --iterations 1000  solve it and print the metrics
  jaxcfr train configs/leduc.toml            a run from a config: checkpoints, metrics, plot
  jaxcfr train --resume runs/leduc-...       continue a run
  jaxcfr eval runs/leduc-.../profile.npz     metrics of a saved profile
  jaxcfr estimate sampled_dice_poker P.npz   estimated metrics (games too large to lower)
  jaxcfr resolve leduc_poker P.npz --after-chance 3   re-solve every second-round subgame
  jaxcfr abstract nolimit_leduc --abstraction "bet_menu(fractions=[1.0])"
                                             train an abstraction, lift it, full-game metrics

A GAME is a name from `jaxcfr games`, with parameters if it takes any
("kuhn_poker(players=3)"), a Gambit .efg file, module:Class (this imports and runs
that module; read from a file, it needs --trust-code), or an OpenSpiel game string
(openspiel:NAME(...)). Errors are one line; --traceback shows the Python
traceback. Ctrl-C exits with status 130 (train writes a checkpoint first).
More: README.md and docs/runs.md."""
GAME_HELP = ("a game: a name from `jaxcfr games` (kuhn_poker, leduc_poker(ranks=4)), a .efg "
             "file, module:Class (imports and runs that module) or openspiel:NAME")

#: name -> (add_arguments(parser), run(args) -> exit status, help).
COMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int], str]] = {}


# -- games ----------------------------------------------------------------
def _games_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _games(args) -> int:
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


COMMANDS["games"] = (_games_args, _games, "list the games and their parameters")


# -- validate -------------------------------------------------------------
def _validate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("--trajectories", type=int, default=256,
                   help="random root-to-leaf trajectories to probe (default: 256)")
    p.add_argument("--seed", type=int, default=0, help="seed of the probe (default: 0)")


def _validate(args) -> int:
    from jaxcfr.lowering.budget import default_memory_budget, describe_fit
    from jaxcfr.game.registry import load_game
    from jaxcfr.lowering.size import estimate_size
    from jaxcfr.game.validate import validate_game_with
    positive_int("--trajectories", args.trajectories)
    game = load_game(args.game)
    validate_game_with(game, trajectories=args.trajectories, seed=args.seed)
    print(f"{args.game}: conforms ({args.trajectories} trajectories, seed {args.seed})")
    size = estimate_size(game)
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


COMMANDS["validate"] = (_validate_args, _validate, "probe a game's contract on random trajectories")


# -- inspect --------------------------------------------------------------
def _inspect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--no-sort", action="store_true",
                   help="keep first-met information-set order (default: Gambit's canonical order)")
    _cache_args(p)


def _cache_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-cache", action="store_true",
                   help="walk the game even if the cache of lowered games has it "
                        "(~/.cache/jaxcfr/lowered; JAXCFR_NO_CACHE=1 turns it off)")
    p.add_argument("--workers", type=int, help="processes that walk the tree "
                   "(default: all cores for a large game)")


def _lower_for_cli(args, status, sort: bool = True, report: dict | None = None):
    """``args.game`` lowered through the cache (unless --no-cache), telling ``status``;
    ``report["cache"]`` says what the cache did."""
    from jaxcfr.engine.loop import lower_reporting
    if args.workers is not None:
        positive_int("--workers", args.workers)
    return lower_reporting(args.game, status, cache=not args.no_cache, sort_infosets=sort,
                           workers=args.workers, report=report)


def _inspect(args) -> int:
    from jaxcfr.runs.progress import make_status
    start, report = time.perf_counter(), {}
    # inspect prints its own summary: the status line only where it is redrawn in place
    with make_status(quiet=not sys.stderr.isatty(), stream=sys.stderr) as status:
        lowered = _lower_for_cli(args, status, sort=not args.no_sort, report=report)
    seconds = time.perf_counter() - start
    cached = report["cache"]
    sizes = lowered.sizes()
    sizes["seconds"] = seconds
    sizes["players"] = lowered.num_players
    sizes["nodes_per_second"] = sizes["nodes"] / seconds if seconds > 0 else None
    sizes["cache"] = cached
    if args.json:
        print(json.dumps({"game": args.game, **jsonable(sizes)}))
    else:
        what = "loading time " if cached.startswith("hit") else "lowering time"
        print(f"game            {args.game}")
        print(f"players         {lowered.num_players}")
        print(f"nodes           {sizes['nodes']:,}")
        print(f"infosets        {', '.join(f'{n:,}' for n in sizes['infosets'])} (per player)")
        print(f"max actions     {sizes['max_actions']}")
        print(f"depth           {sizes['depth']}")
        print(f"tensor bytes    {sizes['bytes']:,}")
        print(f"{what}   {seconds:.3f} s ({sizes['nodes_per_second'] or 0:,.0f} nodes/s)")
        print(f"cache           {cached}")
    return 0


COMMANDS["inspect"] = (_inspect_args, _inspect, "lower a game and print its sizes")


# -- solve ----------------------------------------------------------------
def _solve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("game", help=GAME_HELP)
    from jaxcfr.solvers.presets import ALGORITHMS
    from jaxcfr.solvers.solver import HYPERPARAMETERS
    from jaxcfr.solvers.presets import ALIASES
    p.add_argument("--algorithm", default="cfr+",
                   help=f"one of {', '.join(ALGORITHMS)}; any case, also spelled "
                        f"{', '.join(ALIASES)} (default: cfr+)")
    p.add_argument("--iterations", type=int, default=1000,
                   help="iterations to run (default: 1000)")
    for name in HYPERPARAMETERS:
        p.add_argument(f"--{name}", type=float,
                       help=f"{name} of the discounting / averaging rule (default: the "
                            "preset's, see README 'Algorithms')")
    order = p.add_mutually_exclusive_group()
    order.add_argument("--alternating", dest="alternating", action="store_true", default=None,
                       help="update the players one after the other (default: the preset's)")
    order.add_argument("--simultaneous", dest="alternating", action="store_false",
                       help="update all players at once")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32",
                   help="floating-point precision (default: float32)")
    p.add_argument("--eval-every", type=int, metavar="N",
                   help="evaluate and print the metrics every N iterations (default: only at "
                        "the end)")
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    from jaxcfr.solvers.estimators import ESTIMATORS
    from jaxcfr.solvers.solver import DEFAULT_EXPLORATION
    p.add_argument("--sampling", choices=tuple(ESTIMATORS), default="none",
                   help="the estimator: exact passes (none) or Monte Carlo (chance, external, "
                        "outcome); default: none")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument("--seed", type=int, default=0, help="PRNG seed (default: 0)")
    seeds.add_argument("--seeds", metavar="S,S,...",
                       help="a batch of seeds run by one compiled step, one figure per seed")
    p.add_argument("--exploration", type=float,
                   help=f"outcome sampling's epsilon (default: {DEFAULT_EXPLORATION})")
    p.add_argument("--samples", type=int, default=1,
                   help="subtrees a sampling estimator draws per player and iteration "
                        "(default: 1)")
    from jaxcfr.engine.sampled_chance import CHANCE_CHOICES, DEFAULT_DRAWS
    p.add_argument("--chance", choices=CHANCE_CHOICES, default="auto",
                   help="lower the whole tree (exact), or let the host draw chance and lower "
                        "what follows (sampled); auto: exact where chance can be enumerated "
                        "(default: auto)")
    p.add_argument("--draws", type=int, default=DEFAULT_DRAWS,
                   help=f"chance draws per iteration under sampled chance (default: "
                        f"{DEFAULT_DRAWS})")
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (lowering, compiling, iterating)")
    _cache_args(p)


def _solve(args) -> int:
    from jaxcfr._util.arguments import command_line_spelling
    from jaxcfr.api.solve import SolveOptions, solve_with
    from jaxcfr.runs.progress import format_metric, make_progress, make_status
    # every argument is checked before the (possibly long) lowering, by the rules the API
    # uses, and named as given here (--samples, not samples)
    options = SolveOptions.check(
        command_line_spelling, algorithm=args.algorithm, iterations=args.iterations,
        chance=args.chance, draws=args.draws, seed=args.seed, seeds=args.seeds,
        alpha=args.alpha, beta=args.beta, gamma=args.gamma, exploration=args.exploration,
        alternating=args.alternating, eval_every=args.eval_every, precision=args.precision,
        workers=args.workers, sampling=args.sampling, samples=args.samples)
    seeds = options.run_parameters["seed"] if args.seeds is not None else None

    def report(m):
        if not args.json:
            print(f"iteration {m['iteration']:>8}  {format_metric(m)}", flush=True)

    display = make_progress(args.iterations, quiet=args.quiet, stream=sys.stderr)
    try:
        with make_status(quiet=args.quiet, stream=sys.stderr) as status:
            result = solve_with(args.game, options, callback=report, progress=display,
                                status=status, cache=not args.no_cache,
                                spell=command_line_spelling)
    finally:
        display.close()
    final = result.final
    out = {"game": args.game, "algorithm": result.solver.name, "iterations": args.iterations,
           "alternating": result.solver.alternating, "sampling": result.solver.estimator.name,
           "chance": result.chance, "seed": seeds if seeds is not None else args.seed,
           "exploitability": final["exploitability"], "nash_conv": final["nash_conv"],
           "values": final["values"], "best_response_values": final["best_response_values"],
           "members": final["members"],
           "seconds": result.seconds, "compile_seconds": result.compile_seconds,
           "iterations_per_second": result.iterations_per_second}
    if result.chance == "sampled":
        out["draws"] = args.draws
        out["sampled_chance"] = result.sampled_chance
        if final["estimates"] is not None:
            out["estimates"] = final["estimates"]       # "estimate": true inside
    if args.json:
        print(json.dumps(jsonable(out)))
    elif final["members"]:                      # a batch of seeds: one line per seed
        name = final["metric_name"]
        width = max(len(m) for m in final["members"])
        print(f"{'member':<{width}}  {name:>14}  values")
        for m, label in enumerate(final["members"]):
            value = final["metric"][m]
            print(f"{label:<{width}}  {'n/a' if value is None else f'{value:.6g}':>14}  "
                  + ", ".join(f"{v:.6f}" for v in final["values"][m]))
        print(f"speed           {result.iterations_per_second:,.1f} iterations/s, all members "
              f"(compile {result.compile_seconds:.2f} s)")
    else:
        values = ", ".join(f"{v:.6f}" for v in np.asarray(final["values"]).reshape(-1))
        est = final["estimates"]
        if est is not None:                 # chance that cannot be enumerated: estimates
            pct = f"{100 * est['confidence']:g}%"
            print(f"values          {values}  (estimates, {pct} intervals: "
                  + ", ".join(f"[{a:.4f}, {b:.4f}]" for a, b in est["values_interval"]) + ")")
            for p, (g, (a, b)) in enumerate(zip(est["gain_lower_bound"], est["gain_interval"])):
                print(f"gain p{p}         at least {g:.4g} ({pct} interval [{a:.4g}, {b:.4g}]; "
                      f"in-sample {est['gain_in_sample'][p]:.4g})")
            print(f"estimates       {est['samples']} held-out draws, best responses fitted on "
                  f"{est['train_samples']}; estimates, not exact values")
        else:
            print(f"values          {values}")
        if final["exploitability"] is not None:
            print(f"exploitability  {float(final['exploitability']):.6g}")
        if final["nash_conv"] is not None:
            print(f"nash_conv       {float(np.asarray(final['nash_conv']).reshape(-1)[0]):.6g}")
        if result.chance == "sampled":
            sc = result.sampled_chance
            print(f"sampled chance  {args.draws} draws per iteration, {sc['rows']:,} rows, "
                  f"{sc['draws_per_host_second'] or 0:,.0f} draws per host second, device "
                  f"waiting {100 * sc['device_wait_fraction']:.0f}% of the time")
        print(f"speed           {result.iterations_per_second:,.1f} iterations/s "
              + ("(compiled within the first chunks)" if result.chance == "sampled" else
                 f"(compile {result.compile_seconds:.2f} s)"))
    return 0


COMMANDS["solve"] = (_solve_args, _solve, "solve a game and print metrics")
COMMANDS["train"] = (add_train_arguments, run_train,
                     "train from a TOML run config (checkpoints, metrics, plot)")
COMMANDS["eval"] = (add_eval_arguments, run_eval,
                    "exploitability / NashConv and values of a saved profile")


COMMANDS["estimate"] = (add_estimate_arguments, run_estimate,
                        "estimated values and best-response-gain lower bounds of a profile, "
                        "with confidence intervals (games too large to lower)")
COMMANDS["resolve"] = (add_resolve_arguments, run_resolve,
                       "re-solve the subgames of a blueprint (safely) and compare the profiles")
COMMANDS["abstract"] = (add_abstract_arguments, run_abstract,
                        "train abstractions (bet menus, bucketings) of a game, lift them and "
                        "compare them in the full game")


# -- entry point ----------------------------------------------------------
def _version() -> str:
    return version_line()


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """``--traceback``, accepted before and after the command (``SUPPRESS``: a subcommand's
    absent flag does not reset the top-level one)."""
    parser.add_argument("--traceback", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="show the Python traceback of an error")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxcfr", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=_version())
    _common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                title="commands")
    for name, (add_args, _, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:]
                           + ".")
        add_args(p)
        _common_options(p, top=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``jaxcfr COMMAND ...``: returns the exit status (0 done, 2 error, 130 interrupted,
    143 terminated)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return _execute(COMMANDS[args.command][1], args, "jaxcfr", args.traceback)


def exit_with(status: int) -> NoReturn:
    """End the process with ``status``; after an interruption without interpreter shutdown
    (:func:`jaxcfr._util.signals.exit_now`: XLA may still be compiling on its threads)."""
    if status in (130, 143):
        exit_now(status)
    sys.exit(status)


def train_script(argv: Sequence[str] | None = None, *, default_config: str | None = None,
                 prog: str = "train.py") -> int:
    """``train.py [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR] [--quiet]``."""
    parser = argparse.ArgumentParser(prog=prog, description="Train from a run config "
                                     "(TOML); see docs/runs.md.")
    add_train_arguments(parser, default_config=default_config)
    _common_options(parser, top=True)
    args = parser.parse_args(argv)
    return _execute(run_train, args, prog, args.traceback)


def describe_error(e: BaseException) -> str:
    """The one line a user sees for an error: ``error: ...`` (``internal error`` for a bug)."""
    from jaxcfr.game.protocol import GameError
    if isinstance(e, OSError) and e.strerror and e.filename is not None:
        # "No such file or directory: configs/config.toml", not "[Errno 2] ..."
        target = os.fsdecode(e.filename)
        if e.filename2 is not None:
            target += f" -> {os.fsdecode(e.filename2)}"
        return f"error: {e.strerror}: {target}"
    if isinstance(e, (GameError, ValueError, OSError, KeyError, ArithmeticError)):
        return f"error: {e.args[0] if isinstance(e, KeyError) and e.args else e}"
    return f"internal error ({type(e).__name__}): {e}"


def _execute(run: Callable[[argparse.Namespace], int], args: argparse.Namespace, prog: str,
             traceback: bool) -> int:
    """Run a command; errors become one line on stderr (the traceback only on request)."""
    show_tb = traceback or os.environ.get("JAXCFR_TRACEBACK") == "1"
    if getattr(args, "command", "train") in ("solve", "train", "eval", "estimate", "resolve",
                                             "abstract"):
        from jaxcfr.engine.compilation_cache import enable_compilation_cache
        enable_compilation_cache()
    interrupts = RaisingInterrupts()
    try:
        with interrupts:
            status = int(run(args) or 0)
    except KeyboardInterrupt as e:
        return _interrupted(prog, exit_status(e, stopped_by=interrupts.signal_name))
    except Exception as e:  # noqa: BLE001 - one line for the user, traceback on request
        if interrupts.signal_name is not None:       # the interrupt, turned into an error
            return _interrupted(prog, exit_status(stopped_by=interrupts.signal_name))
        if show_tb:
            raise
        print(f"{prog}: {describe_error(e)}", file=sys.stderr)
        return 2
    if interrupts.signal_name is not None and status == 0:    # seen too late to stop it
        return _interrupted(prog, exit_status(stopped_by=interrupts.signal_name))
    return status


def _interrupted(prog: str, status: int) -> int:
    print(f"{prog}: {'terminated' if status == 143 else 'interrupted'}", file=sys.stderr)
    return status
