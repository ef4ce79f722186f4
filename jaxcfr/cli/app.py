"""The ``jaxcfr`` command line: the parser over every command (each in its own module), errors
and exit statuses.

Errors are printed as one line (``jaxcfr: error: ...``) with a non-zero exit
status; ``--traceback`` (anywhere on the line, or ``JAXCFR_TRACEBACK=1``) shows the
Python traceback. Ctrl-C exits with status 130 and SIGTERM with 143, at any moment.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn, Sequence

import importlib

from jaxcfr._util.native_stderr import NativeStderrFilter
from jaxcfr._util.signals import RaisingInterrupts, exit_now, exit_status
from jaxcfr.cli.version import version_line

__all__ = ["main", "exit_with", "build_parser", "COMMANDS", "COMMAND_MODULES", "command"]

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
  jaxcfr plot runs/a runs/b --x seconds      several runs on one convergence plot
  jaxcfr plot runs/a --strategy '0|??|'      a strategy heat map of matching infosets
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

#: name -> (its module, help). The module has ``add_<name>_arguments(parser)`` and
#: ``run_<name>(args) -> exit status`` (eval's are in train's module) and is imported only
#: for the command on the line: a mistake in the arguments is answered before JAX is
#: imported, where the command's options can be told without it.
COMMAND_MODULES: dict[str, tuple[str, str]] = {
    "games": ("jaxcfr.cli.games", "list the games and their parameters"),
    "validate": ("jaxcfr.cli.validate", "probe a game's contract on random trajectories"),
    "inspect": ("jaxcfr.cli.inspect", "lower a game and print its sizes"),
    "solve": ("jaxcfr.cli.solve", "solve a game and print metrics"),
    "train": ("jaxcfr.cli.train", "train from a TOML run config (checkpoints, metrics, plot)"),
    "eval": ("jaxcfr.cli.train", "exploitability / NashConv and values of a saved profile"),
    "estimate": ("jaxcfr.cli.estimate", "estimated values and best-response-gain lower "
                 "bounds of a profile, with confidence intervals (games too large to lower)"),
    "resolve": ("jaxcfr.cli.resolve",
                "re-solve the subgames of a blueprint (safely) and compare the profiles"),
    "abstract": ("jaxcfr.cli.abstract", "train abstractions (bet menus, bucketings) of a game, "
                 "lift them and compare them in the full game"),
    "plot": ("jaxcfr.cli.plot", "draw run directories: several runs on one convergence plot, "
             "a sweep as a grid, or a strategy heat map of a profile (--strategy)"),
}


def command(name: str) -> tuple[Callable[[argparse.ArgumentParser], None],
                                 Callable[[argparse.Namespace], int], str]:
    """``(add_arguments(parser), run(args) -> exit status, help)`` of command ``name``
    (imports its module)."""
    module_name, help_text = COMMAND_MODULES[name]
    module = importlib.import_module(module_name)
    return (getattr(module, f"add_{name}_arguments"), getattr(module, f"run_{name}"),
            help_text)


#: The commands, by name (what ``jaxcfr --help`` lists).
COMMANDS = COMMAND_MODULES


# -- entry point ----------------------------------------------------------
def _version() -> str:
    return version_line()


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """``--traceback``, accepted before and after the command (``SUPPRESS``: a subcommand's
    absent flag does not reset the top-level one)."""
    parser.add_argument("--traceback", action="store_true",
                        default=False if top else argparse.SUPPRESS,
                        help="show the Python traceback of an error")


def build_parser(only: Sequence[str] | None = None, describe: bool = True
                 ) -> argparse.ArgumentParser:
    """The parser of every command; ``only``: give only these commands their arguments (and
    import only their modules; the others are listed by name and help); ``describe=False``:
    the line does not ask for help, so options described by heavy modules (``solve``'s
    parameters) may be made from their names alone (each subparser's ``describe``)."""
    parser = argparse.ArgumentParser(prog="jaxcfr", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     allow_abbrev=False)
    parser.add_argument("--version", action="version", version=_version())
    _common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                title="commands")
    for name, (_, help_text) in COMMAND_MODULES.items():
        p = sub.add_parser(name, help=help_text, description=help_text[:1].upper() + help_text[1:]
                           + ".", allow_abbrev=False)
        p.describe = describe                 # (read by add_<name>_arguments)
        if only is None or name in only:
            command(name)[0](p)
        _common_options(p, top=False)
    return parser


def _command_named(argv: Sequence[str]) -> str | None:
    """The command on the line: its first word that names one (options come before it only
    as ``--traceback``, ``--version``, ``--help``, which take no value)."""
    return next((a for a in argv if a in COMMAND_MODULES), None)


def main(argv: Sequence[str] | None = None) -> int:
    """``jaxcfr COMMAND ...``: returns the exit status (0 done, 2 error, 130 interrupted,
    143 terminated). Only the command's own module is imported to read its arguments."""
    argv = list(sys.argv[1:] if argv is None else argv)
    name = _command_named(argv)
    parser = build_parser(only=() if name is None else (name,),
                          describe=any(a in ("-h", "--help") for a in argv))
    args = parser.parse_args(argv)
    return _execute(command(args.command)[1], args, "jaxcfr", args.traceback)


def exit_with(status: int) -> NoReturn:
    """End the process with ``status``; after an interruption without interpreter shutdown
    (:func:`jaxcfr._util.signals.exit_now`: XLA may still be compiling on its threads)."""
    if status in (130, 143):
        exit_now(status)
    sys.exit(status)


def train_script(argv: Sequence[str] | None = None, *, default_config: str | None = None,
                 prog: str = "train.py") -> int:
    """``train.py [CONFIG] [--set k=v ...] [--out DIR] [--resume DIR] [--quiet]``."""
    from jaxcfr.cli.train import add_train_arguments, run_train
    parser = argparse.ArgumentParser(prog=prog, description="Train from a run config "
                                     "(TOML); see docs/runs.md.", allow_abbrev=False)
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
    interrupts = RaisingInterrupts()
    try:
        # XLA's "Very slow compile?" banner is dropped from the C-level stderr (all passes
        # with --traceback)
        with interrupts, NativeStderrFilter(enabled=not show_tb):
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
