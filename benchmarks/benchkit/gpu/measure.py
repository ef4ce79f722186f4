"""The sections of ``benchmarks/gpu_check.py``: what each measures, and how.

One :class:`Measure` per run holds the lowered games (each lowered once, its seconds kept
for every figure of it) and one method per section (the stacks and the split game in
:mod:`benchkit.gpu.layouts`, determinism in :mod:`benchkit.gpu.determinism`); a method
measures its items in order of interest, asks its :class:`benchkit.gpu.plan.SectionClock`
before each and records a figure or a skip for every item. Only public or stable APIs are
used (``jaxcfr.Runner``, ``jaxcfr.stack``, ``jaxcfr.SampledChanceRunner``,
``jaxcfr.batch_mesh``, estimator objects, ``jaxcfr.lowering.lower.as_lowered``); the byte
counts read the sequence-form tables a runner carries when it has them, else build them
(:mod:`benchkit.gpu.timing`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import traceback

import jax

import jaxcfr
import profile_passes
from benchkit.gpu.determinism import Determinism
from benchkit.gpu.layouts import Layouts
from benchkit.gpu.timing import (MAX_CHUNKS, block, closest_leduc, exact_bytes, sampled_bytes,
                        steady_state, version)
from jaxcfr.lowering.lower import as_lowered

#: Trees at least this large are lowered by ``--workers`` processes (smaller: one; Liar's dice
#: and Goofspiel-6 are above it).
PARALLEL_NODES = 250_000


class Measure(Layouts, Determinism):
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
        size = jaxcfr.probe_size(jaxcfr.load_game(text))
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

        def wanted(name):
            return (chosen is None or name in chosen) and name not in self.args.skip

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
            jaxcfr.probe_size(jaxcfr.load_game(f"leduc_poker(ranks={r})")).nodes
            for r in self.sizes.forest_ranks)
        return closest_leduc(total)

    # -- sections --------------------------------------------------------------------------
    def lowering(self, clock) -> None:
        host = f"host ({os.cpu_count()} cores)"

        def one(text):
            lowered, info = self.lower(text)
            return {"game": text, **info, "device": host}
        games = sorted(self.games_needed(),
                       key=lambda g: jaxcfr.probe_size(jaxcfr.load_game(g)).nodes)
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
                            jaxlib=version("jaxlib"),
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
