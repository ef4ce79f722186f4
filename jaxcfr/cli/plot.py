"""``jaxcfr plot RUN [RUN...]``: several run directories on one convergence plot (iterations
or wall seconds on the x axis), or one sweep as a grid of small plots
(:mod:`jaxcfr.runs.compare`; :mod:`jaxcfr.cli.app` lists the command)."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["add_plot_arguments", "run_plot"]


def add_plot_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run directories (the --out of jaxcfr train)")
    p.add_argument("--x", choices=("iterations", "seconds"), default="iterations",
                   help="the x axis: iterations, or wall seconds since the run started "
                   "(default: iterations)")
    p.add_argument("--layout", choices=("auto", "one", "grid"), default="auto",
                   help="one: every run (and member) on one plot; grid: one sweep's members "
                   "as small plots; auto: a grid for one sweep, else one plot (default)")
    p.add_argument("--out", "-o", default="convergence.png", metavar="PATH",
                   help="the PNG to write (default: convergence.png here)")


def run_plot(args: argparse.Namespace) -> int:
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
