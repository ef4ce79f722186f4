"""The sections of ``scripts/gpu_check.py``: what each measures, and how.

One :class:`Measure` per run holds the lowered games (each lowered once, its seconds kept
for every figure of it) and one method per section; a method measures its items in order
of interest, asks its :class:`gpu_plan.SectionClock` before each and records a figure or a
skip for every item. Only public or stable APIs are used (``jaxcfr.Runner``,
``jaxcfr.stack``, ``jaxcfr.SampledChanceRunner``, ``jaxcfr.batch_mesh``, estimator
objects, ``jaxcfr.lowering.lower.as_lowered``); the byte counts read the sequence-form
tables a runner carries when it has them, else build them (``jaxcfr.kernels.sequence``).

``worker(spec, out)`` is the determinism subprocess (the CPU side, with
``JAX_PLATFORMS=cpu``, and on a GPU the run under ``--xla_gpu_deterministic_ops``).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import jax
import numpy as np

import jaxcfr
import profile_passes
from jaxcfr.lowering.lower import as_lowered

#: A timed round is at most this many chunks.
MAX_CHUNKS = 64
#: Trees at least this large are lowered by ``--workers`` processes (smaller: one; Liar's dice
#: and Goofspiel-6 are above it).
PARALLEL_NODES = 250_000
FIELDS = ("regret", "strategy_sum", "prediction")
#: float64 on the device against float64 on the CPU, after ``float64_iterations``.
FLOAT64_TOLERANCE = 1e-10


def block(x):
    return jax.block_until_ready(x)


def steady_state(runner, state, rounds: int, target: float, clock) -> tuple[dict, object]:
    """Compile (first chunk), warm up (second chunk), then time ``rounds`` rounds of about
    ``target`` seconds each (whole chunks); the median round counts. Fewer rounds (at least
    two) when the section's time runs out."""
    chunk = runner.chunk
    start = time.perf_counter()
    state = block(runner.advance(state, chunk))
    first = time.perf_counter() - start
    start = time.perf_counter()
    state = block(runner.advance(state, chunk))
    warm = (time.perf_counter() - start) / chunk
    n = max(1, min(MAX_CHUNKS, round(target / max(warm * chunk, 1e-9)))) * chunk
    samples = []
    for _ in range(rounds):
        if len(samples) >= 2 and clock.left() < 1.5 * n * warm:
            break
        start = time.perf_counter()
        state = block(runner.advance(state, n))
        samples.append((time.perf_counter() - start) / n)
    ms = statistics.median(samples) * 1e3
    return {"ms_per_iteration": ms, "samples_ms": [round(s * 1e3, 6) for s in samples],
            "rounds": len(samples), "iterations_per_round": n,
            "iterations_timed": n * len(samples), "first_chunk_s": first,
            "compile_s": max(0.0, first - warm * chunk)}, state


def game_bytes(lowered, itemsize: int = 4, predictive: bool = False) -> int:
    """Bytes a CFR+ iteration of one (unstacked) game must move: its sequence-form tables
    built here (``profile_passes.iteration_bytes``)."""
    from jaxcfr.kernels.sequence import sequence_tables
    seq = sequence_tables(lowered.tensors, lowered.level_start, lowered.num_players)
    return profile_passes.iteration_bytes(seq, lowered.num_rows, lowered.max_actions,
                                          lowered.num_players, itemsize=itemsize,
                                          predictive=predictive)


def exact_bytes(runner, lowered) -> int:
    """Bytes an iteration of ``runner`` must move (``profile_passes.iteration_bytes``) from
    the tables it steps: a forest counts its padding; a stack sharing one tree
    (``leaf_value [P, T, B]`` beside unbatched indices) its indices once and its floats per
    member; a vmapped stack (``[B, ...]`` tables) its padded members."""
    seq = getattr(getattr(runner, "step_tensors", None), "sequence", None)
    itemsize = np.dtype(runner.dtype).itemsize
    predictive = bool(runner.solver.predictive)
    if seq is None:                    # no tables on the runner: count the game's own
        return game_bytes(lowered, itemsize, predictive) * (lowered.batch_size or 1)
    rows = int(np.shape(seq.row_ancestors)[-2])
    actions = int(np.shape(runner.step_tensors.legal_mask)[-1])
    batched = np.ndim(seq.row_parent) == 2
    members = int(np.shape(seq.row_parent)[0]) if batched else (
        int(np.shape(seq.leaf_value)[2]) if np.ndim(seq.leaf_value) == 3 else 1)
    return profile_passes.iteration_bytes(seq, rows, actions, lowered.num_players,
                                          itemsize=itemsize, members=members,
                                          predictive=predictive)


def sampled_bytes(runner, lowered) -> int | None:
    """A rough bound for a sampling estimator: every slot of its sampled forest (node,
    valid, parent, member: 13 bytes; p, q, the strategy row, reach and values) written and
    read once, and a touched row's two tables read and written, per traverser. ``None``
    when the estimator's plan is not readable."""
    plan = getattr(getattr(getattr(runner, "step_solver", None), "estimator", None), "plan", None)
    if plan is None:
        return None
    f = np.dtype(runner.dtype).itemsize
    p, a = lowered.num_players, lowered.max_actions
    members = runner.batch_members
    slots = members * plan.samples * sum(plan.capacity)
    per_slot = 2 * (13 + (2 + a) * f + (2 * p + 1) * f) + 4 * a * f
    return p * slots * per_slot


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def closest_leduc(nodes: float, limit: int = 75) -> str:
    """The ``leduc_poker(ranks=R)`` whose tree is closest in size to ``nodes``."""
    best = None
    for ranks in range(3, limit + 1):
        text = f"leduc_poker(ranks={ranks})"
        size = jaxcfr.estimate_size(jaxcfr.load_game(text)).nodes
        if best is None or abs(size - nodes) < abs(best[1] - nodes):
            best = (text, size)
        if size > nodes:
            break
    return best[0]


class Measure:
    """The lowered games and the sections of one run (see the module's docstring)."""

    def __init__(self, args, sizes, results, budget):
        self.args, self.sizes, self.results, self.budget = args, sizes, results, budget
        self.cache = None if args.no_cache else (args.cache or True)
        self.lowered: dict[str, tuple] = {}        # game string -> (LoweredGame, info)
        self.one_seed: dict[tuple, float] = {}     # (game, estimator) -> ms, one seed
        self.children: list[subprocess.Popen] = []

    def close(self) -> None:
        for child in self.children:
            if child.poll() is None:
                child.kill()
                child.wait()

    # -- helpers ---------------------------------------------------------------------------
    def bound(self, ms: float, nbytes: int | None) -> dict:
        if not nbytes:
            return {"bytes_per_iteration": None, "bound_ms": None, "ratio_to_bound": None}
        bound = nbytes / (self.args.bandwidth * 1e9) * 1e3
        return {"bytes_per_iteration": int(nbytes), "bound_ms": bound,
                "ratio_to_bound": ms / bound}

    def lower(self, text: str):
        """``(lowered, info)`` of a game string: lowered once per run, on all cores when
        large, through the cache; ``info``: seconds, workers, what the cache did."""
        if text in self.lowered:
            return self.lowered[text]
        size = jaxcfr.estimate_size(jaxcfr.load_game(text))
        workers = self.args.workers if size.nodes >= PARALLEL_NODES else 1
        report: dict = {}
        start = time.perf_counter()
        lowered = as_lowered(text, cache=self.cache, workers=workers, report=report)
        seconds = time.perf_counter() - start
        cache = report.get("cache", "off")
        info = {"lowering_s": seconds, "workers": workers, "cache": cache,
                "cache_status": cache.split(":")[0],
                "nodes": lowered.num_nodes, "rows": lowered.num_rows,
                "nodes_per_s": lowered.num_nodes / max(seconds, 1e-9)}
        self.lowered[text] = (lowered, info)
        return lowered, info

    def items(self, section: str, clock, items):
        """Run ``(key, label, fn)`` items: skip those that no longer fit, record a failure
        as a skip with its error (the section goes on), record ``fn()``'s figure."""
        for key, label, fn in items:
            if not clock.affords(key):
                self.results.skip(section, label, clock.why_not(key))
                continue
            start = time.perf_counter()
            try:
                figure = fn()
            except Exception as e:                         # noqa: BLE001 - recorded
                traceback.print_exc()
                self.results.skip(section, label, f"failed: {type(e).__name__}: {e}")
                figure = None
            clock.done(key, time.perf_counter() - start)
            if figure is not None:
                record = self.results.figure(section, item=label, **figure)
                print(f"  {label}: " + ", ".join(
                    f"{k}={record[k]:.4g}" if isinstance(record[k], float) else f"{k}={record[k]}"
                    for k in ("ms_per_iteration", "ratio_to_bound", "ratio", "bit_for_bit",
                              "max_abs_difference", "lowering_s") if record.get(k) is not None),
                      flush=True)

    def games_needed(self) -> list[str]:
        """Every game string the selected sections lower (once each)."""
        s = self.sizes
        chosen = set(self.args.only or []) or None
        wanted = lambda name: (chosen is None or name in chosen) and name not in self.args.skip
        games = []
        if wanted("determinism"):
            games.append(s.determinism_game)
        if wanted("stacks"):
            games += [s.stack_game] + [f"leduc_poker(ranks={r})" for r in s.forest_ranks]
        if wanted("split"):
            games.append(s.split_game)
        if wanted("seeds"):
            games.append(s.seed_game)
        if wanted("sampling"):
            games += list(s.sampling_games)
        if wanted("exact"):
            games += list(s.exact_games)
        if wanted("stacks"):
            games.append(self.forest_reference())
        return list(dict.fromkeys(games))

    def forest_reference(self) -> str:
        total = self.sizes.forest_copies * sum(
            jaxcfr.estimate_size(jaxcfr.load_game(f"leduc_poker(ranks={r})")).nodes
            for r in self.sizes.forest_ranks)
        return closest_leduc(total)

    # -- sections --------------------------------------------------------------------------
    def lowering(self, clock) -> None:
        host = f"host ({os.cpu_count()} cores)"

        def one(text):
            lowered, info = self.lower(text)
            return {"game": text, **info, "device": host}
        games = sorted(self.games_needed(),
                       key=lambda g: jaxcfr.estimate_size(jaxcfr.load_game(g)).nodes)
        self.items("lowering", clock, [(g, g, lambda g=g: one(g)) for g in games])

    def open_device(self) -> None:
        """Open the accelerator and name it in every figure from now on (once)."""
        if self.results.common.get("device") is None:
            device = jax.devices()[0]
            self.results.update_common(device=getattr(device, "device_kind", str(device)),
                                       platform=device.platform)

    def machine(self, clock) -> None:
        self.open_device()
        device = jax.devices()[0]
        kind = self.results.common["device"]
        smi = None
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm,"
                 "clocks.max.mem", "--format=csv,noheader"], capture_output=True, text=True,
                timeout=15).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            pass
        try:
            stats = device.memory_stats() or {}
        except Exception:                                  # noqa: BLE001 - not every backend
            stats = {}
        measured = profile_passes.bandwidth_gbs(repeats=5)
        self.results.figure("machine", item="device", device=kind, platform=device.platform,
                            device_count=len(jax.devices()),
                            devices=[str(d) for d in jax.devices()],
                            jaxlib=_version("jaxlib"),
                            python=sys.version.split()[0], nvidia_smi=smi,
                            bytes_limit=stats.get("bytes_limit"),
                            measured_bandwidth_gbs=measured,
                            note="Streaming: 8 in-place passes over a 256 MiB float32 array in "
                                 "one compiled loop (`profile_passes.bandwidth_gbs`).")

    def _exact_figure(self, text: str, preset: str, clock) -> dict:
        lowered, info = self.lower(text)
        start = time.perf_counter()
        runner = jaxcfr.Runner(lowered, jaxcfr.make_solver(preset))
        setup = time.perf_counter() - start
        timing, _ = steady_state(runner, runner.init(), self.sizes.rounds, self.sizes.target,
                                 clock)
        return {"game": text, "preset": preset, "nodes": lowered.num_nodes,
                "rows": lowered.num_rows, "lowering_s": info["lowering_s"],
                "lowering_workers": info["workers"], "setup_s": setup, **timing,
                **self.bound(timing["ms_per_iteration"], exact_bytes(runner, lowered))}

    def exact(self, clock) -> None:
        presets = sorted(self.sizes.presets, key=lambda p: p != "cfr+")     # CFR+ first
        self.items("exact", clock, [
            (text, f"{text} {preset}", lambda t=text, p=preset: self._exact_figure(t, p, clock))
            for preset in presets for text in self.sizes.exact_games])

    def _sampled(self, text: str, estimator: str, seeds: int, clock) -> dict:
        lowered, info = self.lower(text)
        solver = jaxcfr.make_solver("cfr+", sampling=estimator)
        runner = jaxcfr.Runner(lowered, solver,
                               {"seed": 0 if seeds == 1 else list(range(seeds))})
        timing, _ = steady_state(runner, runner.init(), self.sizes.rounds, self.sizes.target,
                                 clock)
        ms = timing["ms_per_iteration"]
        subtrees = seeds * lowered.num_players * solver.estimator.samples / (ms * 1e-3)
        return {"game": text, "estimator": estimator, "seeds": seeds, "nodes": lowered.num_nodes,
                "lowering_s": info["lowering_s"], "subtrees_per_s": subtrees, **timing,
                **self.bound(ms, sampled_bytes(runner, lowered)),
                "note": "Subtrees: one per traverser, iteration and seed (outcome sampling: "
                        "one trajectory each). Sampled bounds are rough: the sampled "
                        "forest's slots written and read once (capacity from the plan)."}

    def sampling(self, clock) -> None:
        def one(text, estimator):
            figure = self._sampled(text, estimator, 1, clock)
            self.one_seed[(text, estimator)] = figure
            return figure
        self.items("sampling", clock, [
            (f"{t} {e}", f"{t} {e}", lambda t=t, e=e: one(t, e))
            for t in self.sizes.sampling_games for e in self.sizes.estimators])

    def seeds(self, clock) -> None:
        game, n = self.sizes.seed_game, self.sizes.seeds

        def batch(estimator):
            one = self.one_seed.get((game, estimator)) or self._sampled(game, estimator, 1,
                                                                        clock)
            figure = self._sampled(game, estimator, n, clock)
            figure.update(ratio=figure["subtrees_per_s"] / one["subtrees_per_s"],
                          one_seed_ms=one["ms_per_iteration"],
                          note=f"Against one seed: subtrees per second of the {n}-seed batch "
                               "over one seed's (both in one compiled step each).")
            return figure
        self.items("seeds", clock, [(e, f"{game} {e} x{n} seeds", lambda e=e: batch(e))
                                    for e in self.sizes.estimators])

    def _stack_figure(self, lowered, clock, real_nodes, members, real_bytes=None):
        start = time.perf_counter()
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
        setup = time.perf_counter() - start
        timing, _ = steady_state(runner, runner.init(), self.sizes.rounds, self.sizes.target,
                                 clock)
        ms = timing["ms_per_iteration"]
        moved = exact_bytes(runner, lowered)
        return {"members": members, "nodes": real_nodes, "setup_s": setup,
                "us_per_game_iteration": ms * 1e3 / members, **timing,
                **self.bound(ms, moved if real_bytes is None else real_bytes),
                "padded_bytes_per_iteration": moved}

    def stacks(self, clock) -> None:
        s = self.sizes
        single, _ = self.lower(s.stack_game)
        first: dict = {}

        def stack(b):
            start = time.perf_counter()
            batch = jaxcfr.stack([single] * b)
            stacking = time.perf_counter() - start
            figure = self._stack_figure(batch, clock, single.num_nodes * b, b)
            figure["stack_s"] = stacking
            first.setdefault("us", figure["us_per_game_iteration"])
            first.setdefault("label", f"x{b}")
            figure.update(versus=f"{first['label']}, per game-iteration",
                          ratio=figure["us_per_game_iteration"] / first["us"])
            return figure

        def forest():
            members = [self.lower(f"leduc_poker(ranks={r})")[0] for r in s.forest_ranks]
            start = time.perf_counter()
            batch = jaxcfr.stack(members * s.forest_copies)
            stacking = time.perf_counter() - start
            real = s.forest_copies * sum(game_bytes(m) for m in members)
            nodes = s.forest_copies * sum(m.num_nodes for m in members)
            figure = self._stack_figure(batch, clock, nodes, len(members) * s.forest_copies,
                                        real_bytes=real)
            reference = self.forest_reference()
            tree, _ = self.lower(reference)
            one = self._stack_figure(tree, clock, tree.num_nodes, 1)
            per_node = (figure["ms_per_iteration"] / nodes) / (one["ms_per_iteration"] /
                                                               tree.num_nodes)
            figure.update(stack_s=stacking, reference=reference,
                          reference_nodes=tree.num_nodes,
                          reference_ms=one["ms_per_iteration"], versus=(
                              f"{reference} ({tree.num_nodes:,} nodes), per node"),
                          ratio=per_node,
                          note="The forest's bound counts the real trees' bytes; "
                               "`padded_bytes_per_iteration` is what its padded layout moves "
                               "(every member padded to the largest per level).")
            self.results.figure("stacks", item=f"{reference} (one tree, the forest's size)",
                                **{k: v for k, v in one.items() if k != "note"})
            return figure

        items = [("single", f"{s.stack_game} (one game)",
                  lambda: self._stack_figure(single, clock, single.num_nodes, 1))]
        items += [(f"x{b}", f"{s.stack_game} x{b}", lambda b=b: stack(b)) for b in s.stacks]
        label = (f"forest: leduc ranks {s.forest_ranks[0]}..{s.forest_ranks[-1]} "
                 f"x{s.forest_copies}")
        # the largest stack last: building it is most of the section's host time (stacking
        # 4,096 Leduc games and the runner's set-up took 50 + 37 s on a loaded 2-core host)
        items.insert(len(items) - 1 if len(s.stacks) > 1 else len(items),
                     ("forest", label, forest))
        self.items("stacks", clock, items)

    def sampled_chance(self, clock) -> None:
        from jaxcfr.solvers.presets import make_solver
        s = self.sizes

        def one(draws):
            game = jaxcfr.load_game(s.sampled_game)
            runner = jaxcfr.SampledChanceRunner(game, make_solver("lcfr"), {"seed": 0},
                                                draws=draws, chunk=s.sampled_chunk)
            try:
                start = time.perf_counter()
                state = block(runner.advance(runner.init(), 2 * s.sampled_chunk))
                first = time.perf_counter() - start
                before = runner.report()
                n = max(1, min(MAX_CHUNKS, round(s.target / max(
                    before["wall_seconds"] / max(before["iterations"], 1) * s.sampled_chunk,
                    1e-9)))) * s.sampled_chunk
                rounds = []
                for _ in range(s.rounds):
                    if len(rounds) >= 2 and clock.left() < 1.5 * rounds[-1]["wall"]:
                        break
                    a = runner.report()
                    state = block(runner.advance(state, n))
                    b = runner.report()
                    rounds.append({k: b[f"{k}_seconds"] - a[f"{k}_seconds"]
                                   for k in ("wall", "device", "wait", "host")}
                                  | {"draws": b["draws_taken"] - a["draws_taken"],
                                     "iterations": b["iterations"] - a["iterations"]})
                mid = sorted(rounds, key=lambda r: r["wall"])[len(rounds) // 2]
                final = runner.report()
            finally:
                runner.close()
            return {"game": s.sampled_game, "draws": draws, "first_chunks_s": first,
                    "ms_per_iteration": mid["wall"] / mid["iterations"] * 1e3,
                    "draws_per_s": mid["draws"] / mid["wall"],
                    "draws_per_host_s": mid["draws"] / mid["host"] if mid["host"] else None,
                    "device_wait_share": mid["wait"] / mid["wall"], "rounds": len(rounds),
                    "iterations_per_round": n, "iterations_timed": n * len(rounds),
                    "rows": final["rows"], "cache_hits": final["cache_hits"],
                    "report": final, **self.bound(0.0, None),
                    "bound_note": "none: the host's drawing and lowering set the pace",
                    "note": "Sampled chance: the median round by wall time; draws per wall "
                            "second and the share of it the device waited for the host "
                            "(differences of `SampledChanceRunner.report()` over the round; "
                            "a chunk that grew the shapes compiles inside it)."}
        self.items("sampled_chance", clock, [(f"x{d}", f"{s.sampled_game}, {d} draws",
                                              lambda d=d: one(d)) for d in s.draws])

    def split(self, clock) -> None:
        text = self.sizes.split_game

        def one():
            lowered, info = self.lower(text)
            mesh = jaxcfr.batch_mesh()
            devices = int(mesh.devices.size)
            plain = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
            alone, _ = steady_state(plain, plain.init(), self.sizes.rounds, self.sizes.target,
                                    clock)
            runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), mesh=mesh)
            timing, _ = steady_state(runner, runner.init(), self.sizes.rounds,
                                     self.sizes.target, clock)
            note = ("One device: the 1-device mesh (the split path: padding to a multiple of "
                    "1, sharded placement), not a speed-up." if devices == 1 else
                    f"Split over {devices} devices: nodes, rows and leaves sharded.")
            ms = timing["ms_per_iteration"]
            # each device moves its share of the bytes: the bound is theirs over D devices
            bound = self.bound(ms, exact_bytes(plain, lowered) / devices)
            return {"game": text, "devices": devices, "lowering_s": info["lowering_s"],
                    **timing, "unsplit_ms": alone["ms_per_iteration"],
                    "ratio": ms / alone["ms_per_iteration"], **bound, "note": note}
        self.items("split", clock, [("split", f"{text} over the devices", one)])

    def determinism(self, clock) -> None:
        s = self.sizes
        text, n, m = s.determinism_game, s.determinism_iterations, s.float64_iterations
        lowered, _ = self.lower(text)
        platform = jax.devices()[0].platform
        # the subprocesses start first and run while this process uses the device
        children = {"cpu": self.start_worker({"game": text, "cache": self.cache, "runs": [
            {"name": "f32", "precision": "float32", "iterations": n, "evaluate": True},
            {"name": "f64", "precision": "float64", "iterations": m}]}, {"JAX_PLATFORMS": "cpu"})}
        if platform == "gpu":
            flags = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_deterministic_ops=true").strip()
            children["deterministic"] = self.start_worker({"game": text, "cache": self.cache, "runs": [
                {"name": "a", "precision": "float32", "iterations": n},
                {"name": "b", "precision": "float32", "iterations": n}]}, {"XLA_FLAGS": flags})
        here = {}

        def run(name, precision, iterations, resume=None, evaluate=False):
            here[name] = run_case(lowered, precision, iterations, resume, evaluate)
            return here[name]

        def figure(a, b, tolerance=None, note=None, expected=True):
            """``expected``: bit for bit is what should hold (else only the figures count)."""
            c = compare(a, b)
            holds = (c["max_abs_difference"] <= tolerance if tolerance is not None
                     else c["bit_for_bit"] if expected else None)
            out = {**c, "tolerance": tolerance, "holds": holds, "device_platform": platform}
            if note:
                out["note"] = note
            return out

        def twice():
            return figure(run("one", "float32", n, evaluate=True), run("two", "float32", n))

        def resumed():
            half = run("half", "float32", n // 2)
            return figure(here["one"], run("resumed", "float32", n - n // 2, half))

        def cpu(kind):
            out = self.collect(children, "cpu", clock)
            if kind == "f64":
                return figure(run("f64", "float64", m), out["f64"], FLOAT64_TOLERANCE,
                              note=f"float64 against the CPU after {m} iterations (CFR+ "
                                   "amplifies a rounding difference about 10x every 20 "
                                   "iterations: docs/benchmarks.md, Determinism).")
            return figure(here["one"], out["f32"], expected=False,
                          note="float32 on two devices: expected to agree to rounding at first "
                               "and then drift (another summation order); the exploitabilities "
                               "are the figure.")

        def deterministic():
            out = self.collect(children, "deterministic", clock)
            return figure(out["a"], out["b"])

        items = [("run", f"{text}, {n} it., float32: the same run twice", twice),
                 ("run", f"resumed at {n // 2} (state through host memory, a new runner)",
                  resumed),
                 ("cpu", f"float64 on the device against float64 on the CPU, {m} it.",
                  lambda: cpu("f64")),
                 ("cpu32", f"float32 on the device against the CPU, {n} it.",
                  lambda: cpu("f32"))]
        if "deterministic" in children:
            items.append(("det", "twice under --xla_gpu_deterministic_ops (a subprocess)",
                          deterministic))
        self.items("determinism", clock, items)

    # -- subprocesses ----------------------------------------------------------------------
    def start_worker(self, spec: dict, env: dict):
        handle, path = tempfile.mkstemp(suffix=".npz", prefix="gpu-check-")
        os.close(handle)
        proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("gpu_check.py")),
                                 "--worker", json.dumps(spec), path],
                                env={**os.environ, **env}, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        proc.out_path = path
        self.children.append(proc)
        return proc

    def collect(self, children: dict, name: str, clock) -> dict:
        """The runs worker ``name`` saved: ``{run: {field: array}}`` (waited for once; the
        result replaces the process in ``children``)."""
        proc = children[name]
        if isinstance(proc, dict):
            return proc
        try:
            log, _ = proc.communicate(timeout=max(1.0, clock.left()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise RuntimeError("the subprocess did not finish within the section's share")
        if proc.returncode != 0:
            raise RuntimeError(f"the subprocess failed ({proc.returncode}): {log[-1500:]}")
        with np.load(proc.out_path) as f:
            arrays = {k: f[k] for k in f.files}
        os.unlink(proc.out_path)
        out: dict = {}
        for key, value in arrays.items():
            run, _, field = key.partition("/")
            out.setdefault(run, {})[field] = value
        children[name] = out
        return out


def run_case(lowered, precision: str, iterations: int, resume=None, evaluate=False) -> dict:
    """A CFR+ run of ``iterations`` on the default device (after ``resume``'s state, a
    dict of host arrays): the state's arrays and the average profile on the host."""
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), precision=precision)
    state = runner.restore({k: resume[k] for k in FIELDS + ("iteration",)}) if resume else \
        runner.init()
    state = block(runner.advance(state, iterations))
    out = {f: np.asarray(getattr(state, f)) for f in FIELDS + ("iteration",)}
    out["average"] = runner.profile(state)
    if evaluate:
        out["exploitability"] = np.asarray(float(runner.evaluate(state)["exploitability"]))
    return out


def compare(a: dict, b: dict) -> dict:
    """Bit for bit (every state table and the average, same dtype) and the largest difference."""
    keys = FIELDS + ("average",)
    same = all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in keys)
    diff = max(float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64)),
                            initial=0.0)) for k in keys)
    expl = [float(x["exploitability"]) for x in (a, b) if "exploitability" in x]
    return {"bit_for_bit": bool(same), "max_abs_difference": diff,
            "exploitability": " / ".join(f"{e:.4g}" for e in expl) or None}


def worker(spec: dict, out_path: str) -> None:
    """The determinism subprocess: lower ``spec["game"]``, run each of ``spec["runs"]`` on
    the default device (``JAX_PLATFORMS`` / ``XLA_FLAGS`` set by the parent), save them."""
    lowered = as_lowered(spec["game"], cache=spec.get("cache"))
    arrays = {}
    for run in spec["runs"]:
        out = run_case(lowered, run["precision"], run["iterations"],
                       evaluate=run.get("evaluate", False))
        arrays.update({f"{run['name']}/{k}": v for k, v in out.items()})
    np.savez(out_path, **arrays)
