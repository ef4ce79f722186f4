"""``jaxcfr plot RUN [RUN...]``: several run directories on one convergence plot (iterations
or wall seconds on the x axis), or one sweep as a grid of small plots
(:mod:`jaxcfr.runs.compare`); ``jaxcfr plot RUN --strategy PATTERN``: a strategy heat map of
the information sets of a run's (or a saved) profile whose keys match PATTERN
(:mod:`jaxcfr.runs.strategy_plot`). :mod:`jaxcfr.cli.app` lists the command."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_plot_arguments", "run_plot"]


def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run directories (the --out of jaxcfr train); with --strategy, one run "
                        "directory or saved profile (.npz)")
    p.add_argument("--x", choices=("iterations", "seconds"), default="iterations",
                   help="the x axis: iterations, or wall seconds since the run started "
                   "(default: iterations)")
    p.add_argument("--layout", choices=("auto", "one", "grid"), default="auto",
                   help="one: every run (and member) on one plot; grid: one sweep's members "
                   "as small plots; auto: a grid for one sweep, else one plot (default)")
    p.add_argument("--out", "-o", metavar="PATH",
                   help="the PNG to write (default: convergence.png here, strategy.png with "
                        "--strategy)")
    g = p.add_argument_group("a strategy heat map (one row per information set, one column "
                             "per action, colour = probability)")
    g.add_argument("--strategy", metavar="PATTERN",
                   help="draw the profile's information sets whose keys match PATTERN, a glob "
                        "on the key as text (* any text, ? one character, [..] one of): "
                        "'0|??|' is player 0's first move in Leduc; quote it in the shell")
    g.add_argument("--player", type=int, metavar="P",
                   help="only player P's information sets (with --strategy)")
    g.add_argument("--regex", action="store_true",
                   help="PATTERN is a regular expression searched in the key")
    g.add_argument("--max-rows", type=int, metavar="N",
                   help="refuse to draw more than N information sets (default: 100)")


def run_plot(args: argparse.Namespace) -> int:
    if args.strategy is not None:
        return run_strategy_plot(args)
    for option in ("player", "regex", "max_rows"):
        if getattr(args, option) is not None and getattr(args, option) is not False:
            raise ValueError(f"--{option.replace('_', '-')} selects the rows of --strategy: "
                             "give --strategy too")
    if args.out is None:
        args.out = "convergence.png"
    # every path is checked before matplotlib (or JAX) is imported
    for run in args.runs:
        path = Path(run)
        if not path.is_dir():
            raise FileNotFoundError(f"no run directory {run}")
        if not (path / "metrics.jsonl").is_file():
            raise FileNotFoundError(f"{run} is not a run directory with metrics (it has no "
                                    "metrics.jsonl)")
    out = Path(args.out)
    if out.is_dir():
        raise IsADirectoryError(f"--out {args.out} is a directory: name the PNG to write")
    if args.layout == "grid" and len(args.runs) != 1:
        raise ValueError(f"--layout grid draws one run's members; got {len(args.runs)} runs")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError("jaxcfr plot needs matplotlib: pip install 'jaxcfr[plot]'") from None
    from jaxcfr.runs.compare import plot_runs
    layout = plot_runs(args.runs, out, x=args.x, layout=args.layout)
    what = "grid of the members" if layout == "grid" else f"{len(args.runs)} run(s)"
    print(f"wrote {out} ({what}, against {args.x})")
    return 0


def run_strategy_plot(args: argparse.Namespace) -> int:
    """``jaxcfr plot RUN --strategy PATTERN``: the heat map of one profile's information sets
    (the arguments and paths checked before matplotlib and JAX are imported)."""
    from jaxcfr._util.arguments import nonnegative_int, positive_int
    from jaxcfr.cli.train import profile_path, require_profile
    if len(args.runs) != 1:
        raise ValueError(f"--strategy draws one profile: give one run directory or saved "
                         f"profile, got {len(args.runs)}")
    if not args.strategy:
        raise ValueError("--strategy needs a PATTERN (a glob such as '0|??|', or '*' for all)")
    from jaxcfr.runs.strategy_plot import MAX_ROWS         # (JAX-free until it is called)
    max_rows = MAX_ROWS if args.max_rows is None else positive_int("--max-rows", args.max_rows)
    if args.player is not None:
        nonnegative_int("--player", args.player)
    run = args.runs[0]
    if Path(run).is_dir():
        path = profile_path(run)
        if path is None:
            raise FileNotFoundError(f"{run} has no saved profile (profile.npz and "
                                    "profile.json; a run writes them when it ends)")
    else:
        path = Path(run)
        require_profile(path)
    out = Path(args.out or "strategy.png")
    if out.is_dir():
        raise IsADirectoryError(f"--out {out} is a directory: name the PNG to write")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ValueError("jaxcfr plot needs matplotlib: pip install 'jaxcfr[plot]'") from None
    from jaxcfr._util.signals import exiting_at_once
    with exiting_at_once("jaxcfr"):      # a signal in JAX's import ends the process at once
        from jaxcfr.profiles.profile import Profile
        from jaxcfr.runs.strategy_plot import plot_strategy
    profile = Profile.load(path)
    matrix = plot_strategy(profile, args.strategy, out, player=args.player, regex=args.regex,
                           max_rows=max_rows)
    rows, cols = matrix.probs.shape
    print(f"wrote {out} ({rows} information set{'s' if rows != 1 else ''} x {cols} "
          f"action{'s' if cols != 1 else ''})")
    return 0
