#!/usr/bin/env python
"""Every GPU figure of issue 21 in one process, within one time budget, written as it comes.

Usage (on the GPU machine; a bare checkout is enough, JAX must be installed)::

    python benchmarks/gpu_check.py --out gpu-results                # everything, 480 s budget
    python benchmarks/gpu_check.py --out gpu-results --only exact stacks --budget 200
    python benchmarks/gpu_check.py --small --budget 120 --out /tmp/g  # the same code, tiny sizes
    python benchmarks/gpu_check.py --list                           # the plan, nothing run

Sections, in order (each skippable with ``--skip``, or chosen with ``--only``):

``lowering``
    the games the other sections need, lowered on all cores (``workers=os.cpu_count()`` for
    trees of a million nodes and more) through the cache of lowered games; before the
    accelerator is opened, so the walk's worker processes fork a process without its threads.
``machine``
    the device (``jax.devices()[0].device_kind``), JAX, the host, ``nvidia-smi``, and the
    streaming bandwidth measured on the device beside the ``--bandwidth`` assumed.
``exact``
    steady-state ms per iteration of CFR, CFR+, DCFR and PCFR+ (CFR+ on every game first)
    on Leduc, Liar's dice with 6, 7 and 8 sides and Goofspiel-6, with the lowering seconds.
``sampling``
    external and outcome sampling on Liar's dice and Goofspiel-6.
``stacks``
    Leduc stacks of 256, 1,024 and 4,096 (per game-iteration), and a forest of different
    trees (Leduc with 3..6 ranks, 16 of each) against one Leduc tree of about the same size.
``seeds``
    64 seeds in one step against one seed, external and outcome sampling (subtrees per
    second: one per traverser, iteration and seed).
``sampled_chance``
    ``sampled_dice_poker`` by sampled chance: draws per second and the device's waiting
    share (``SampledChanceRunner.report()``), 16 and 64 draws per iteration.
``split``
    one game split over the devices present (``jaxcfr.batch_mesh()``; one device: the
    1-device mesh) against the same game unsplit.
``determinism``
    two runs and a resumed run bit for bit, on the device; float64 on the device against
    float64 on the CPU (a subprocess with ``JAX_PLATFORMS=cpu``) to about 1e-10 after a few
    dozen iterations; on a GPU, two runs under ``--xla_gpu_deterministic_ops`` too.

Every figure carries the device, the date, the command, the iterations timed and the
steady-state ms per iteration (compilation excluded: a first chunk compiles, a second warms
up, then the median of ``--rounds`` timed rounds of about ``--target`` seconds each), and,
for the exact kernels, the bandwidth bound: the bytes an iteration must move
(``profile_passes.sequence_bytes``: the sequence form's tensors, each once) at
``--bandwidth`` GB/s, and the ratio of the time to it. Sampled estimators get a rough
bound from their subtrees' capacity (the slots written and read once).

The budget (``--budget`` seconds, counted from the script's start) is shared: each section
gets its weight's part of what is left when it starts, skips the items that no longer fit
(recorded with the reason) and leaves what it does not use to the later sections; a hard
stop at the budget itself (a timer thread) marks the section that overstayed, ends the
subprocesses and exits at once. Files under ``--out``:
``figures.jsonl`` (one line per figure, written at once), ``<section>.json`` (rewritten
atomically after each figure) and ``gpu.md`` (the tables, ready for docs/benchmarks.md).
Exit status: 0 done (items may be skipped for time), 1 a section failed, 2 the hard stop.

The parts (the package ``benchkit.gpu``): the budget, the writer and the tables in
``plan``; timing and byte counts in ``timing``; the sections in ``measure``, ``layouts``
(stacks, the forest, the split game) and ``determinism``. docs/benchmarks.md ("On a GPU") says
how to run it on a lent machine and what to do with the files.
"""

from __future__ import annotations

import time

START = time.monotonic()          # the budget counts from here: imports included

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
# several processes may share the device (the determinism subprocesses): none takes most
# of its memory up front
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def bootstrap() -> None:
    """Measure this checkout's code, installed or not (the GPU machine has JAX but not this
    project): the repository root first on the path (so ``jaxcfr`` is this checkout's, ahead
    of any installed one), and ``games/`` loaded as ``jaxcfr_games`` unless the importable
    ``jaxcfr_games`` already is this checkout's."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    games = ROOT / "games"
    spec = importlib.util.find_spec("jaxcfr_games")
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent == games:
        return
    spec = importlib.util.spec_from_file_location(
        "jaxcfr_games", games / "__init__.py", submodule_search_locations=[str(games)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["jaxcfr_games"] = module
    spec.loader.exec_module(module)


bootstrap()
from benchkit.gpu.measure import Measure  # noqa: E402
from benchkit.gpu.plan import Budget, Column, Results  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Sizes:
    """What each section measures (``FULL`` on a GPU, ``SMALL`` for the CPU)."""
    exact_games: tuple[str, ...]
    presets: tuple[str, ...]
    sampling_games: tuple[str, ...]
    estimators: tuple[str, ...]
    stack_game: str
    stacks: tuple[int, ...]
    forest_ranks: tuple[int, ...]
    forest_copies: int
    seed_game: str
    seeds: int
    sampled_game: str
    draws: tuple[int, ...]
    split_game: str
    determinism_game: str
    determinism_iterations: int        # float32: two runs, a resumed run
    float64_iterations: int            # float64 against the CPU (before the runs drift apart)
    rounds: int                        # timed rounds (the median counts)
    target: float                      # seconds per timed round
    sampled_chunk: int


FULL = Sizes(
    exact_games=("leduc_poker", "liars_dice", "liars_dice(dice=1, sides=7)",
                 "liars_dice(dice=1, sides=8)", "goofspiel(cards=6)"),
    presets=("cfr+", "cfr", "dcfr", "pcfr+"),
    sampling_games=("liars_dice", "goofspiel(cards=6)"), estimators=("external", "outcome"),
    stack_game="leduc_poker", stacks=(256, 1024, 4096), forest_ranks=(3, 4, 5, 6),
    forest_copies=16, seed_game="liars_dice", seeds=64, sampled_game="sampled_dice_poker",
    draws=(16, 64), split_game="liars_dice", determinism_game="leduc_poker",
    determinism_iterations=500, float64_iterations=50, rounds=5, target=0.2, sampled_chunk=50)
SMALL = Sizes(
    exact_games=("kuhn_poker", "leduc_poker", "liars_dice(dice=1, sides=3)"),
    presets=FULL.presets, sampling_games=("leduc_poker", "liars_dice(dice=1, sides=3)"),
    estimators=FULL.estimators, stack_game="leduc_poker", stacks=(4, 16), forest_ranks=(3, 4),
    forest_copies=2, seed_game="leduc_poker", seeds=8,
    sampled_game="sampled_dice_poker(dice=2, sides=4)", draws=(4, 16), split_game="leduc_poker",
    determinism_game="leduc_poker", determinism_iterations=60, float64_iterations=20,
    rounds=3, target=0.02, sampled_chunk=10)

#: Section -> (weight of the budget, heading).
SECTIONS = {
    "lowering": (40, "Lowering (host, parallel walk, cache)"),
    "machine": (8, "Machine"),
    "exact": (150, "Exact CFR family, steady state"),
    "sampling": (45, "Monte Carlo estimators"),
    "stacks": (70, "Stacks and a forest of different trees"),
    "seeds": (35, "A batch of seeds in one step"),
    "sampled_chance": (35, "Sampled chance"),
    "split": (20, "One game split over the devices"),
    "determinism": (50, "Determinism"),
}
#: Part of the budget kept back from the sections' shares (at least 5 s): the last item of
#: a section may overrun its share, and the hard stop comes at the budget itself.
RESERVE = 0.05

_TIME = [Column("ms / iteration", "ms_per_iteration"),
         Column("bound ms", "bound_ms"), Column("x bound", "ratio_to_bound", "x")]
COLUMNS = {
    "lowering": [Column("game", "game", "text"), Column("nodes", "nodes", "int"),
                 Column("rows", "rows", "int"), Column("workers", "workers", "int"),
                 Column("seconds", "lowering_s", "f2"), Column("nodes/s", "nodes_per_s", "int"),
                 Column("cache", "cache_status", "text")],
    "machine": [Column("device", "device", "text"), Column("platform", "platform", "text"),
                Column("devices", "device_count", "int"), Column("JAX", "jax", "text"),
                Column("host", "host", "text"),
                Column("streaming GB/s (measured)", "measured_bandwidth_gbs", "int"),
                Column("GB/s assumed for the bounds", "bandwidth_gbs", "int")],
    "exact": [Column("game", "game", "text"), Column("nodes", "nodes", "int"),
              Column("algorithm", "preset", "text"), *_TIME,
              Column("lowering s", "lowering_s", "f2"), Column("setup s", "setup_s", "f2"),
              Column("first chunk s", "first_chunk_s", "f2"),
              Column("iterations timed", "iterations_timed", "int")],
    "sampling": [Column("game", "game", "text"), Column("estimator", "estimator", "text"),
                 Column("ms / iteration", "ms_per_iteration"),
                 Column("subtrees / s", "subtrees_per_s", "int"),
                 Column("rough bound ms", "bound_ms"), Column("x bound", "ratio_to_bound", "x"),
                 Column("iterations timed", "iterations_timed", "int")],
    "stacks": [Column("what", "item", "text"), Column("members", "members", "int"),
               Column("nodes (real)", "nodes", "int"), *_TIME,
               Column("µs / game-iteration", "us_per_game_iteration"),
               Column("against", "versus", "text"), Column("ratio", "ratio", "x"),
               Column("stack s", "stack_s", "f2"), Column("setup s", "setup_s", "f2"),
               Column("iterations timed", "iterations_timed", "int")],
    "seeds": [Column("game", "game", "text"), Column("estimator", "estimator", "text"),
              Column("seeds", "seeds", "int"), Column("ms / iteration", "ms_per_iteration"),
              Column("subtrees / s", "subtrees_per_s", "int"),
              Column("against one seed", "ratio", "x"),
              Column("iterations timed", "iterations_timed", "int")],
    "sampled_chance": [Column("game", "game", "text"), Column("draws / it.", "draws", "int"),
                       Column("ms / iteration", "ms_per_iteration"),
                       Column("draws / s", "draws_per_s", "int"),
                       Column("device waiting", "device_wait_share", "pct"),
                       Column("rows", "rows", "int"), Column("cache hits", "cache_hits", "int"),
                       Column("iterations timed", "iterations_timed", "int")],
    "split": [Column("game", "game", "text"), Column("devices", "devices", "int"),
              Column("ms / iteration", "ms_per_iteration"),
              Column("unsplit ms", "unsplit_ms"), Column("ratio", "ratio", "x"),
              Column("iterations timed", "iterations_timed", "int")],
    "determinism": [Column("case", "item", "text"), Column("bit for bit", "bit_for_bit"),
                    Column("max abs difference", "max_abs_difference"),
                    Column("within", "tolerance"), Column("holds", "holds"),
                    Column("exploitability", "exploitability", "text")],
}


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="gpu-results", help="directory of the result files")
    parser.add_argument("--budget", type=float, default=480.0,
                        help="seconds for the whole run, start-up included (default 480)")
    parser.add_argument("--small", action="store_true",
                        help="tiny sizes, the same code path (for the CPU)")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run these sections")
    parser.add_argument("--skip", nargs="+", choices=list(SECTIONS), default=[],
                        help="leave these sections out")
    parser.add_argument("--bandwidth", type=float, default=4800.0,
                        help="device bandwidth in GB/s for the bounds (default 4800: an H200)")
    parser.add_argument("--games", nargs="+", help="the exact section's games (game strings)")
    parser.add_argument("--presets", nargs="+", help="the exact section's algorithms")
    parser.add_argument("--rounds", type=int, help="timed rounds per figure")
    parser.add_argument("--target", type=float, help="seconds per timed round")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache", help="directory of the lowered-game cache (default: jaxcfr's)")
    cache.add_argument("--no-cache", action="store_true", help="lower every game anew")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="lowering processes for the large games (default: every core)")
    parser.add_argument("--set", nargs="+", default=[], metavar="FIELD=VALUE",
                        help="change a size of the plan (see --list), VALUE in JSON or a "
                             "plain string: --set seeds=128 'draws=[16]' split_game=leduc_poker")
    parser.add_argument("--list", action="store_true", help="print the plan and exit")
    parser.add_argument("--worker", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not args.budget > 0:
        parser.error(f"--budget must be positive, got {args.budget:g}")
    if args.rounds is not None and args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.target is not None and not args.target > 0:
        parser.error(f"--target must be positive, got {args.target:g}")
    sizes = SMALL if args.small else FULL
    changes = {k: v for k, v in (("exact_games", tuple(args.games or ()) or None),
                                 ("presets", tuple(args.presets or ()) or None),
                                 ("rounds", args.rounds), ("target", args.target))
               if v is not None}
    fields = {f.name: f for f in dataclasses.fields(Sizes)}
    for item in args.set:
        name, eq, text = item.partition("=")
        if not eq or name not in fields:
            parser.error(f"--set {item!r}: expected FIELD=VALUE with FIELD one of "
                         f"{', '.join(fields)}")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        kind = type(getattr(sizes, name))
        if kind is tuple:
            value = tuple(value) if isinstance(value, list) else (value,)
        elif not isinstance(value, kind) and not (kind is float and isinstance(value, int)):
            parser.error(f"--set {item!r}: {name} takes a {kind.__name__}")
        changes[name] = value
    return args, dataclasses.replace(sizes, **changes)


def selected(args) -> list[str]:
    chosen = args.only or list(SECTIONS)
    return [s for s in SECTIONS if s in chosen and s not in args.skip]


def header(results: Results) -> list[str]:
    c = results.common
    m = results.sections.get("machine", {}).get("figures") or [{}]
    measured = m[0].get("measured_bandwidth_gbs")
    lines = [f"## On a GPU: {c.get('device') or '(no device opened)'} ({c.get('date')})", "",
             f"`{c.get('command')}`; JAX {c.get('jax', '?')}, float32 unless said; "
             f"{c.get('host', '')}; jaxcfr "
             f"{(c.get('code') or {}).get('commit') or 'from a checkout without git'}.",
             f"Bounds: the bytes each iteration must move (`profile_passes.sequence_bytes`) at "
             f"{c.get('bandwidth_gbs', 0):,.0f} GB/s"
             + (f" (streaming measured on the device: {measured:,.0f} GB/s)" if measured else "")
             + "; steady state is the median of timed rounds after a compiling and a warm-up "
               "chunk."]
    return lines


def commit() -> str | None:
    """The checkout's commit (and ``+changes`` when its tracked files differ), if git is there."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def host_summary() -> str:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        model = names[0] if names else model
    except OSError:
        pass
    return f"host {model}, {os.cpu_count()} cores"


def main(argv=None, *, start: float | None = None) -> int:
    """Run the plan (``argv``: the command line's words); ``start``: the clock value the
    budget counts from (the script passes its own start; by default now)."""
    args, sizes = parse(sys.argv[1:] if argv is None else list(argv))
    if args.worker:
        from benchkit.gpu.determinism import worker
        worker(json.loads(args.worker[0]), args.worker[1])
        return 0
    sections = selected(args)
    if args.list:
        for name in SECTIONS:
            mark = "run " if name in sections else "skip"
            print(f"{mark} {name:15s} weight {SECTIONS[name][0]:4d}  {SECTIONS[name][1]}")
        print(json.dumps(dataclasses.asdict(sizes), indent=1))
        return 0
    import jax
    command = "python benchmarks/gpu_check.py " + " ".join(shlex.quote(a) for a in
                                                        (sys.argv[1:] if argv is None else argv))
    import jaxcfr
    import jaxcfr_games
    common = {"device": None, "date": time.strftime("%Y-%m-%d"),
              "command": command.strip(), "jax": jax.__version__, "host": host_summary(),
              "bandwidth_gbs": args.bandwidth, "small": args.small,
              "code": {"jaxcfr": str(Path(jaxcfr.__file__).parent),
                       "jaxcfr_games": str(Path(jaxcfr_games.__file__).parent),
                       "commit": commit()}}
    results = Results(args.out, common, COLUMNS, {k: v[1] for k, v in SECTIONS.items()},
                      header=header)
    budget = Budget(args.budget, start=time.monotonic() if start is None else start,
                    reserve=min(max(5.0, RESERVE * args.budget), args.budget / 4))
    measure = Measure(args, sizes, results, budget)

    def note_the_rest(reason_selected: str) -> None:
        for name in SECTIONS:
            if name not in results.sections:
                if name in sections:
                    results.not_selected(name, reason_selected)
                else:
                    results.not_selected(name, "left out by --only / --skip", keep_file=True)

    finishing = threading.Lock()

    def hard_stop():
        # At the budget, whatever the main thread is doing (a compilation, a device call):
        # every file is already current (each figure rewrote them), so mark the section that
        # was running, end the subprocesses and leave at once. No exception is raised into
        # JAX, whose state it could break (a crash at exit was seen when one was).
        if not finishing.acquire(blocking=False):
            return                                   # the run is ending by itself
        print(f"hard stop: the budget of {args.budget:g} s is spent", flush=True)
        for name, section in list(results.sections.items()):
            if section["status"] == "running":
                results.finish(name, "stopped: the run's budget was spent")
        note_the_rest("the run's budget was spent before it started")
        measure.close()
        results.close()
        os._exit(2)
    timer = threading.Timer(max(0.1, budget.left()), hard_stop)
    timer.daemon = True
    timer.start()
    status = 0
    print(f"{common['date']}: budget {args.budget:g} s, sections {', '.join(sections)}; "
          f"results in {results.out}/", flush=True)
    try:
        for name in SECTIONS:
            if name not in sections:
                results.not_selected(name, "left out by --only / --skip", keep_file=True)
                continue
            if name != "lowering":
                measure.open_device()          # after the lowering's forks, before the rest
            after = sum(SECTIONS[s][0] for s in sections[sections.index(name) + 1:])
            clock = budget.section(name, SECTIONS[name][0], after)
            results.start(name, clock.share)
            print(f"== {name} ({clock.share:.0f} s share, {budget.left():.0f} s left)",
                  flush=True)
            try:
                getattr(measure, name)(clock)
                results.finish(name, "done")
            except Exception:                              # noqa: BLE001 - recorded, go on
                text = traceback.format_exc()
                print(text, file=sys.stderr, flush=True)
                results.finish(name, "failed", text)
                status = 1
    finally:
        timer.cancel()
        finishing.acquire()                          # a hard stop under way ends the process
        measure.close()
        results.close()
    print(f"done in {budget.spent():.0f} s of {args.budget:g}: {results.out}/gpu.md", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(start=START))
