"""``jaxcfr train`` and ``jaxcfr eval``: their arguments and what they run (:mod:`jaxcfr.cli.app`
lists them with the other commands)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from jaxcfr.game.contract import GameError
from jaxcfr._util.arguments import command_line_type, positive_float
from jaxcfr._util.precision import PRECISIONS
from jaxcfr._util.signals import INTERRUPTED, exit_status
from jaxcfr.cli.options import heavy

__all__ = ["add_train_arguments", "run_train", "add_eval_arguments", "run_eval",
           "INTERRUPTED", "add_trust_argument", "profile_path", "profile_and_game",
           "require_profile"]


# -- train ------------------------------------------------------------------------
def add_train_arguments(p: argparse.ArgumentParser, default_config: str | None = None) -> None:
    p.add_argument("config", nargs="?", default=default_config,
                   help="TOML run config (with --resume: default RUN_DIR/config.toml)"
                   + (f"; default: {default_config}" if default_config else ""))
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config key, e.g. solver.iterations=500 (repeatable; "
                        "VALUE is a TOML literal, else a string; KEY= with no value puts "
                        "the key back to its default; keys: docs/runs.md)")
    p.add_argument("--out", metavar="DIR", help="run directory, new or empty (default: "
                   "run.out_dir, else runs/<name>-<time>)")
    p.add_argument("--resume", metavar="RUN_DIR",
                   help="continue RUN_DIR from its newest valid checkpoint (from iteration 0 "
                        "if it has none yet)")
    p.add_argument("--target", metavar="METRIC", type=command_line_type(
                       positive_float, "--target", float),
                   help="stop at the first evaluation whose metric (the exploitability, "
                        "where the game has one) is at or below METRIC (run.stop_at)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.add_argument("--json", action="store_true", help="print the final metrics as one JSON object")
    add_trust_argument(p, "the config (or RUN_DIR's config)")
    add_cluster_arguments(p)


def add_cluster_arguments(p: argparse.ArgumentParser) -> None:
    """``--coordinator``, ``--num-processes``, ``--process-id`` and the timeouts of a run over
    several processes (``docs/distributed.md``)."""
    g = p.add_argument_group("over several processes (jax.distributed; docs/distributed.md)")
    g.add_argument("--coordinator", metavar="HOST:PORT",
                   help="process 0's address, the same on every process "
                        "(default: $JAX_COORDINATOR_ADDRESS)")
    g.add_argument("--num-processes", metavar="N", type=int,
                   help="processes in the run (default: $JAX_NUM_PROCESSES)")
    g.add_argument("--process-id", metavar="K", type=int,
                   help="this process's index, 0..N-1; process 0 writes the run directory "
                        "(default: $JAX_PROCESS_ID)")
    g.add_argument("--initialization-timeout", metavar="SECONDS", type=int, default=60,
                   help="wait at most this long for every process to join (default 60)")
    g.add_argument("--heartbeat-timeout", metavar="SECONDS", type=int, default=20,
                   help="a process silent this long counts as dead and the run ends on every "
                        "process (default 20)")


def cluster_of(args: argparse.Namespace):
    """The :class:`~jaxcfr.engine.distributed.Cluster` the options (or the environment)
    describe, ``None`` for a run in one process."""
    import os
    if args.coordinator is None and args.num_processes is None and args.process_id is None \
            and not any(os.environ.get(v) for v in ("JAX_COORDINATOR_ADDRESS",
                                                     "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")):
        return None                              # one process: nothing to import
    from jaxcfr._util.arguments import command_line_spelling
    from jaxcfr.engine.distributed import Cluster
    return Cluster.from_options(args.coordinator, args.num_processes, args.process_id,
                                initialization_timeout=args.initialization_timeout,
                                heartbeat_timeout=args.heartbeat_timeout,
                                spell=command_line_spelling)


def add_trust_argument(p: argparse.ArgumentParser, where: str) -> None:
    p.add_argument("--trust-code", action="store_true",
                   help=f"load a module:Class game or abstraction that {where} names: this "
                        "imports and runs that Python module (without it only registered "
                        "games, .efg files and openspiel: games are read from files)")


def run_train(args: argparse.Namespace) -> int:
    if args.resume and args.out:
        raise ValueError("--out and --resume exclude each other (a resumed run stays in RUN_DIR)")
    config_path = args.config
    if args.resume:
        config_path = config_path or _run_dir_config(args.resume)
    if config_path is None:
        raise ValueError("give a CONFIG file (or --resume RUN_DIR)")
    if not Path(config_path).is_file():
        raise FileNotFoundError(f"no config file {config_path}" if not Path(config_path).exists()
                                else f"{config_path} is not a file (CONFIG is a .toml file)")
    from jaxcfr.runs.schema import check_file_keys
    check_file_keys(config_path, list(args.overrides))   # misspelt keys: before JAX
    cluster = cluster_of(args)
    if cluster is not None:
        from jaxcfr.cli.supervise import tell_supervisor
        cluster.initialize()            # before anything touches a device
        tell_supervisor("joined")
    heavy()
    from jaxcfr.runs.config import load_config
    from jaxcfr.lowering.public import public_game_of
    from jaxcfr.runs.progress import make_progress, make_status, pot_of
    from jaxcfr.runs.rundir import RunDir
    from jaxcfr.runs.train import train
    if args.resume:
        RunDir.existing(args.resume)
    overrides = list(args.overrides)
    if args.quiet:
        overrides.append("run.quiet=true")
    if args.target is not None:
        overrides.append(f"run.stop_at={args.target!r}")
    config = load_config(config_path, overrides=overrides, trust_code=args.trust_code)
    # a poker spot (holdem_spot): the exploitability also in percent of its pot (a stack
    # of spots: each member's in percent of its own)
    pot = _pots(config, public_game_of, pot_of)
    display = make_progress(config.solver.iterations, quiet=config.run.quiet, stream=sys.stderr,
                            pot=pot)
    try:
        with make_status(quiet=config.run.quiet, stream=sys.stderr) as status:
            result = _train_or_lost(cluster, lambda: train(
                config, out_dir=args.out, resume=args.resume, progress=display, status=status,
                cluster=cluster), args.out or args.resume or config.run.out_dir)
    finally:
        display.close()
    if args.json:
        print(json.dumps({"run_dir": str(result.run_dir), "iteration": result.iteration,
                          "interrupted": result.interrupted,
                          "reached_target": result.reached_target, "members": result.members,
                          "final": result.final, "abstraction": result.abstraction}))
    else:
        _print_summary(result, pot)
    status = 0
    if result.reached_target and not args.json:
        print(f"stopped at iteration {result.iteration}: the metric reached run.stop_at = "
              f"{result.config.run.stop_at:g}", file=sys.stderr)
    if result.interrupted:
        what = "terminated" if result.stopped_by == "SIGTERM" else "interrupted"
        print(f"{what} at iteration {result.iteration}; checkpoint written. Resume with:\n"
              f"  jaxcfr train --resume {result.run_dir}", file=sys.stderr)
        status = exit_status(stopped_by=result.stopped_by)
    if cluster is not None:
        _leave_together(status)
    return status


def _leave_together(status: int) -> None:
    """The end of a process of a run over several processes, its output printed: JAX's
    log lines from here on go to the supervisor's log; wait for every process to reach
    its end (the writer's plot, profiles and output included: minutes on a loaded machine
    are waited for, a dead process ends the others within ``--heartbeat-timeout``); tell
    the supervisor that the run finished with ``status``; then shut ``jax.distributed``
    down, its shutdown barrier (bounded by ``--heartbeat-timeout``) met by every process
    at once. (Left to the exit, the barrier expired under load while process 0 still drew
    the plot, and JAX's service ended both processes of a finished run.)"""
    from jaxcfr.cli.supervise import divert_native_stderr, tell_supervisor
    from jaxcfr.engine.distributed import shutdown, wait_for_every_process
    sys.stdout.flush()
    sys.stderr.flush()
    divert_native_stderr()
    wait_for_every_process("the end of the run")
    tell_supervisor(f"finished {status}")
    shutdown()


def _run_dir_config(path: str) -> Path:
    """``RUN_DIR/config.toml``, with what :meth:`jaxcfr.runs.RunDir.existing` says of a
    RUN_DIR that is none, said before JAX is imported (``jaxcfr.runs`` imports it)."""
    run = Path(path)
    if not run.exists():
        raise FileNotFoundError(f"no run directory {run}")
    if not run.is_dir():
        raise NotADirectoryError(f"{run} is a file; --resume takes a run directory "
                                 "(the --out of an earlier run)")
    if not (run / "config.toml").is_file():
        raise FileNotFoundError(f"{run} is not a run directory (it has no config.toml); "
                                "--resume takes the --out of an earlier run")
    return run / "config.toml"


def _train_or_lost(cluster, run, run_dir):
    """``run()``; over several processes, a collective that fails because a peer is gone
    (gloo's "Connection closed by peer", the coordination service's errors) becomes a
    :class:`~jaxcfr.engine.distributed.DistributedError` that says so and how to go on."""
    if cluster is None:
        return run()
    import jax
    from jaxcfr.cli.supervise import advice
    from jaxcfr.engine.distributed import DistributedError
    try:
        return run()
    except jax.errors.JaxRuntimeError as e:
        detail = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        if "gloo" in detail.lower() and ("timed out" in detail.lower()
                                         or "DEADLINE_EXCEEDED" in detail):
            why = ("a collective waited longer than gloo's 30 s for another process (a limit "
                   "inside XLA; docs/distributed.md)")
        else:
            why = "another process died, was stopped or cannot be reached"
        raise DistributedError(
            f"process {cluster.process_id} of {cluster.num_processes} lost the run: {why} "
            f"({detail[:160]}); {advice(run_dir)}") from e


def _exploitability(e, pot: float | None) -> str:
    """An exploitability as printed, in percent of the pot too for a poker spot (``pot``,
    :func:`~jaxcfr.runs.progress.pot_of`): ``"0.0123  (0.0123% of the pot 100)"``."""
    from jaxcfr.runs.progress import pot_percent
    share = (f"  ({pot_percent(e, pot)} of the pot {pot:g})"
             if pot is not None and isinstance(e, float) else "")
    return f"{_fmt(e)}{share}"


def _fmt(x: Any) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, list):
        return ", ".join(_fmt(v) for v in x)
    return f"{x:.6g}"


def _pots(config, public_game_of, pot_of):
    """The starting pot of the run's poker spot, or one per member of a stack of spots
    (a tuple), in whose percent the exploitability is shown; else ``None``."""
    g = config.game
    if not g.batched:
        return pot_of(public_game_of(g.members[0][0]))
    if g.abstracted:
        return None
    strings = g.strings
    if g.boards is not None:                        # one spot on many boards: one pot
        pot = pot_of(public_game_of(strings[0]))
        return None if pot is None else (pot,) * len(strings)
    pots = tuple(pot_of(public_game_of(s)) for s in strings)
    return None if None in pots else pots


def _print_summary(result, pot=None) -> None:
    """The run's summary; ``pot``: a poker spot's (or one per member of a stack of
    spots), the exploitability also in percent."""
    final = result.final or {}
    cfg = result.config
    print(f"run directory   {result.run_dir}")
    rate = result.iterations_per_second
    sampled = result.sampled_chance
    compiled = ("compiled in the first chunks" if sampled else
                f"compile {result.compile_seconds:.1f} s")
    print(f"iterations      {result.iteration} of {cfg.solver.iterations} "
          f"({cfg.solver.algorithm}; {f'{rate:,.0f}' if rate else 'n/a'} it/s, {compiled}, "
          f"wall {result.wall_seconds:.1f} s)")
    if sampled:
        print(f"sampled chance  {sampled['draws']} draws per iteration, {sampled['rows']:,} "
              f"rows, {sampled['draws_per_host_second'] or 0:,.0f} draws per host second, "
              f"device waiting {100 * sampled['device_wait_fraction']:.0f}% of the time")
    if not final:
        return
    name = final["metric_name"]
    if result.abstraction:                  # the full game's figures lead (issue 18, item 7)
        _print_abstraction(result.abstraction, result.run_dir, result.best_member,
                           final.get("values"), bool(result.members))
    elif result.members:
        labels = result.members
        if cfg.game.boards is not None:             # one spot on many boards: the boards
            from jaxcfr.runs.boards import chosen_boards
            labels = list(chosen_boards(cfg.game.name, cfg.game.boards))
        pots = pot if isinstance(pot, tuple) and len(pot) == len(labels) else None
        width = max(len(m) for m in labels)
        share = f"  {'% of pot':>9}" if pots and name == "exploitability" else ""
        print(f"{'member':<{width}}  {name:>14}{share}  values")
        for m, label in enumerate(labels):
            star = " *" if m == result.best_member else ""
            metric = final["metric"][m]
            cell = (f"  {100 * metric / pots[m]:>8.4f}%" if share and metric is not None
                    else " " * len(share))
            print(f"{label:<{width}}  {_fmt(metric):>14}{cell}  "
                  f"{_fmt(final['values'][m])}{star}")
        print(f"(* best member: written to {result.run_dir / 'profile.npz'})")
    else:
        if final.get("exploitability") is not None:
            print(f"exploitability  {_exploitability(final['exploitability'], pot)}")
        if final.get("nash_conv") is not None:
            print(f"nash_conv       {_fmt(final['nash_conv'])}")
        if name not in ("exploitability", "nash_conv"):
            print(f"{name:<15} {_fmt(final['metric'])}")
        print(f"values          {_fmt(final['values'])}")
        est = final.get("estimates")
        if est:
            print(f"in-sample gains {_fmt(est['gain_in_sample'])} (optimistic)")
            print(f"                estimates over {est['samples']} held-out draws "
                  f"({100 * est['confidence']:g}% intervals in metrics.jsonl), not exact "
                  "values")
    if result.resolve:
        r = result.resolve
        print(f"re-solved       {r['public_states']} public states: {r['metrics']['metric_name']} "
              f"{_fmt(r['blueprint_metrics']['metric'])} -> {_fmt(r['metrics']['metric'])} "
              f"({result.run_dir / 'resolved.npz'}; report: {result.run_dir / 'resolve.json'})")


def _print_abstraction(rows, run_dir, best: int, values, batched: bool) -> None:
    """Per abstraction: the lifted profile's metric in the full game (first), its metric
    inside the abstraction and its size; then where the lifted profile is."""
    from jaxcfr.api.blueprint import format_table
    full = rows[best]
    name = full["metric_name"].replace("_", " ")
    print(f"{name:<15} {_fmt(full['full_game_metric'])} in the full game (the lifted "
          f"profile{' of the best member' if batched else ''}; "
          f"{_fmt(full['abstract_metric'])} inside the abstraction)")
    print(format_table(rows))
    print(f"(lifted profile{' of the best member' if batched else ''}: "
          f"{run_dir / 'lifted.npz'}; table: {run_dir / 'abstraction.json'}; the metric "
          "inside an abstraction lets best responses use only its kept actions)")


# -- eval -------------------------------------------------------------------------
def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("profile", help="a saved profile (.npz / .json / stem) or a run directory "
                   "(PROFILE GAME and GAME PROFILE are both accepted)")
    p.add_argument("game", nargs="?", help="game string or .efg path (default: the profile's game)")
    p.add_argument("--precision", choices=tuple(PRECISIONS), default="float32")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_trust_argument(p, "the profile records (when GAME is not given)")


def profile_path(text: str | None) -> Path | None:
    """The profile ``text`` names (a ``.npz`` / ``.json`` / stem of a saved profile, or a run
    directory holding ``profile.npz``), or ``None`` when it names none."""
    if text is None:
        return None
    path = Path(text)
    if path.is_dir():
        return path / "profile.npz" if (path / "profile.json").is_file() else None
    base = path.with_suffix("") if path.suffix in (".npz", ".json") else path
    return path if base.with_name(base.name + ".json").is_file() else None


def require_profile(path: str | Path) -> None:
    """``FileNotFoundError`` (what :meth:`jaxcfr.Profile.load` says) when nothing of a saved
    profile is at ``path``: answered before JAX is imported. What is there is read later."""
    path = Path(path)
    base = path.with_suffix("") if path.suffix in (".npz", ".json") else path
    if not (path.exists() or base.with_name(base.name + ".json").exists()
            or base.with_name(base.name + ".npz").exists()):
        raise FileNotFoundError(f"no profile {path}")


def profile_and_game(first: str, second: str | None) -> tuple[str, str | None]:
    """``(profile, game)`` from two positional arguments in either order (``eval PROFILE
    GAME`` and ``estimate GAME PROFILE`` are the documented ones; the other order is read
    the same way when exactly one of the two names a saved profile)."""
    if second is not None and profile_path(first) is None and profile_path(second) is not None:
        return second, first
    return first, second


def run_eval(args: argparse.Namespace) -> int:
    args.profile, args.game = profile_and_game(args.profile, args.game)
    path = Path(args.profile)
    if path.is_dir():
        path = path / "profile.npz"
    require_profile(path)
    heavy()
    from jaxcfr.lowering.public import public_game_of
    from jaxcfr.profiles.profile import Profile, evaluate_profile
    from jaxcfr.runs.progress import pot_of
    profile = Profile.load(path)
    try:
        out = evaluate_profile(profile, args.game, precision=args.precision,
                               trust_code=args.trust_code)
    except GameError as e:
        if e.rule != "chance-not-enumerable":
            raise
        game = args.game or profile.game or "GAME"
        raise GameError(f"{e.detail}; its exact metrics cannot be computed: `jaxcfr estimate "
                        f"'{game}' {path}` estimates them", rule=e.rule,
                        history=e.history) from None
    out["profile"] = str(path)
    # a poker spot (the game evaluate_profile loaded, run no code it did not run): the
    # exploitability in percent of the pot too, as solve and train print it
    pot = pot_of(public_game_of(out["game"]))
    if pot is not None:
        out["pot"] = pot
        if out.get("exploitability") is not None:
            out["exploitability_pot_percent"] = 100 * out["exploitability"] / pot
    if out["missing"]:
        print(f"warning: {out['missing']} of {out['rows']} information sets of {out['game']} "
              "are not in the profile; they play uniformly", file=sys.stderr)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"profile         {path} ({out['found']} of {out['rows']} information sets; "
          f"{out['missing']} played uniformly)")
    print(f"game            {out['game']}")
    if out.get("exploitability") is not None:
        print(f"exploitability  {_exploitability(out['exploitability'], pot)}")
    print(f"nash_conv       {_fmt(out['nash_conv'])}")
    print(f"values          {_fmt(out['values'])}")
    print(f"best responses  {_fmt(out['best_response_values'])}")
    return 0
