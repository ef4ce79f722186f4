"""Benchmarks: jaxcfr and its peers on the same machine, same game, same iterations.

For every game and algorithm, each solver of ``bench_peers.PEERS`` is built in its own
worker process (setup, lowering and compilation are reported but not counted per
iteration) and then:

1. **equal work**: each peer runs the same number of iterations from scratch and reports
   the exploitability of its current iterate (where it exposes one) and of its average
   strategy; they are compared with a float64 jaxcfr run of as many iterations, on the
   current iterate when both have one (the averaging conventions differ: LiteEFG's linear
   average starts its weights differently), else on the average. ``equal``: within 1e-6
   relative; ``equal (float32)``: within 1e-2 where one side computes in float32 (the
   timed jaxcfr run, OpenSpiel's JAX CFR); ``close``: within 20%; else ``MISMATCH``;
2. **timing**: the peers are timed in interleaved rounds (peer A, B, C, A, B, C, ...),
   each round ``n`` iterations sized to about ``--target`` seconds, and the best round
   counts (the machine may be shared: interleaving spreads its load over every peer,
   and the best of ``--repeats`` rounds is the least disturbed).

Batches (jaxcfr only): a stack of ``B`` identical Leduc games and a ``B``-setting DCFR
grid against one game, per game-iteration. ``--large``: ``liars_dice(dice=1,
sides=7/8/9)``, Goofspiel-6 and Leduc stacks of 256 to 4096 (jaxcfr only unless
``--peers`` is given). ``--gpu`` insists on a GPU (the default device otherwise: JAX
picks a GPU when one is installed); ``--cpu`` forces the CPU.

Usage::

    python benchmarks/bench.py                                   # CPU table: 4 games, every peer
    python benchmarks/bench.py --games leduc --algorithms cfr+ --json leduc.json
    python benchmarks/bench.py --gpu --large --json gpu.json --markdown gpu.md
    python benchmarks/bench.py --lowering               # nodes/s, serial and parallel; the cache
    python benchmarks/bench.py --memory                 # bytes per node, measured and estimated
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time

from benchkit import peers as bench_peers

DEFAULT_GAMES = ["kuhn", "leduc", "liars_dice", "goofspiel6"]
LARGE_GAMES = ["liars_dice7", "liars_dice8", "liars_dice9", "goofspiel6"]
LARGE_STACKS = [256, 1024, 4096]
EQUAL, EQUAL32, CLOSE = 1e-6, 1e-2, 0.2
#: Peers that compute in float32 (the timed jaxcfr run included).
FLOAT32_PEERS = {"jaxcfr", "jaxcfr_node_passes", "openspiel_jax"}


class Worker:
    """One peer in its own process; ``call`` sends a request and waits at most ``timeout``."""

    def __init__(self, peer: str, game: str, algorithm: str, options: dict, timeout: float):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=bench_peers.serve,
                                   args=(child, peer, game, algorithm, options), daemon=True)
        self.process.start()
        status, self.setup_seconds, self.info = self._receive(timeout, "setup")
        if status != "ok":
            self.close()
            raise RuntimeError(self.setup_seconds)

    def _receive(self, timeout: float, what: str):
        if not self.conn.poll(timeout):
            self.close()
            raise TimeoutError(f"{what} did not finish in {timeout:.0f} s")
        message = self.conn.recv()
        if message[0] == "ready":
            return ("ok",) + tuple(message[1:])
        return message

    def call(self, timeout: float, *request):
        self.conn.send(request)
        status, value = self._receive(timeout, request[0])[:2]
        if status != "ok":
            raise RuntimeError(value)
        return value

    def close(self) -> None:
        if self.process.is_alive():
            try:
                self.conn.send(("stop",))
            except (BrokenPipeError, OSError):
                pass
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()


def start_workers(specs: dict, game: str, algorithm: str, budget: float) -> tuple[dict, dict]:
    """Build each peer (one at a time); returns ``(workers, skipped reasons)``."""
    workers, skipped = {}, {}
    for label, (peer, options) in specs.items():
        try:
            workers[label] = Worker(peer, game, algorithm, options, budget)
        except (RuntimeError, TimeoutError) as e:
            skipped[label] = str(e)
            print(f"    {label}: skipped ({e})", flush=True)
    return workers, skipped


def equal_work(workers: dict, iterations: int, budget: float, skipped: dict) -> dict:
    """Every peer runs ``iterations`` from scratch: ``{label: {"current", "average"}}``
    (jaxcfr's also carries its float64 reference run's under ``"float64"``)."""
    out = {}
    for label, w in list(workers.items()):
        try:
            need = iterations - int(w.info.get("iterations_done", 0))
            start = time.perf_counter()
            w.call(budget, "step", need)
            value = w.call(budget - (time.perf_counter() - start), "exploitability")
            out[label] = value
        except (RuntimeError, TimeoutError) as e:
            skipped[label] = f"equal-work run: {e}"
            print(f"    {label}: skipped ({e})", flush=True)
            workers.pop(label).close()
    return out


def interleaved_timing(workers: dict, target: float, repeats: int, budget: float,
                       skipped: dict) -> dict:
    """Best seconds per iteration of each worker, measured in interleaved rounds."""
    sizes, samples = {}, {label: [] for label in workers}

    def run(label, n):
        try:
            return workers[label].call(budget, "step", n)
        except (RuntimeError, TimeoutError) as e:
            skipped[label] = f"timing: {e}"
            print(f"    {label}: skipped ({e})", flush=True)
            workers.pop(label).close()
            samples.pop(label)
            return None

    for label in list(workers):
        one = run(label, 1)
        if one is not None:
            sizes[label] = max(1, min(4096, int(round(target / max(one, 1e-7)))))
    for _ in range(repeats):
        for label in list(workers):
            seconds = run(label, sizes[label])
            if seconds is not None:
                samples[label].append(seconds / sizes[label])
    return {label: {"ms_per_iteration": min(s) * 1e3, "iterations_per_round": sizes[label],
                    "samples_ms": [round(x * 1e3, 6) for x in s]} for label, s in samples.items()}


def verdict(values: dict, reference: dict, float32: bool) -> dict:
    """Compare a peer's exploitabilities with the float64 reference run's."""
    kind = "current" if values.get("current") is not None else "average"
    rel = abs(values[kind] - reference[kind]) / max(abs(reference[kind]), 1e-12)
    word = ("equal" if rel <= EQUAL else "equal (float32)" if float32 and rel <= EQUAL32
            else "close" if rel <= CLOSE else "MISMATCH")
    return {"equal_work": word, "compared": kind, "relative_difference": rel}


def bench_game(game: str, args) -> dict:
    entry: dict = {"algorithms": {}}
    peers = {"jaxcfr": ("jaxcfr", {})}
    if args.node_passes:
        peers["jaxcfr_node_passes"] = ("jaxcfr", {"sequence_form": False})
    peers.update({p: (p, {}) for p in args.peers if p != "jaxcfr"})
    for algorithm in args.algorithms:
        print(f"  {algorithm}", flush=True)
        workers, skipped = start_workers(peers, game, algorithm, args.peer_budget)
        try:
            if "jaxcfr" in workers:
                info = workers["jaxcfr"].info
                entry.update({k: info[k] for k in ("nodes", "infosets", "lower_seconds",
                                                   "device") if k in info})
                entry.setdefault("compile_seconds", {})[algorithm] = info.get("compile_seconds")
            check = args.check_iterations or (64 if entry.get("nodes", 0) < 100_000 else 8)
            values = equal_work(workers, check, args.peer_budget, skipped)
            reference = values.get("jaxcfr", {}).pop("float64", None)
            setup = {label: w.setup_seconds for label, w in workers.items()}
            timing = interleaved_timing(workers, args.target, args.repeats, args.peer_budget,
                                        skipped)
        finally:
            for w in workers.values():
                w.close()
        ours = timing.get("jaxcfr", {}).get("ms_per_iteration")
        result = {}
        for label in list(timing) + list(skipped):
            if label in skipped:
                result[label] = {"skipped": skipped[label]}
                continue
            r = dict(timing[label], setup_seconds=setup[label],
                     check_iterations=check, exploitability=values[label])
            if label != "jaxcfr" and ours:
                r["jaxcfr_speedup"] = r["ms_per_iteration"] / ours
            if reference is not None:
                r.update(verdict(values[label], reference, label in FLOAT32_PEERS))
            result[label] = r
            speed = "" if label == "jaxcfr" or not ours else \
                f"  (jaxcfr {r['jaxcfr_speedup']:.1f}x faster)"
            check_text = "" if reference is None else (
                f"; after {check}: {r['compared']} {values[label][r['compared']]:.9g} "
                f"{r['equal_work']}")
            print(f"    {label:16s} {r['ms_per_iteration']:10.4f} ms/it{speed}{check_text}",
                  flush=True)
        if reference is not None:
            print(f"    float64 reference after {check}: current {reference['current']:.9g}, "
                  f"average {reference['average']:.9g}", flush=True)
        entry["algorithms"][algorithm] = result
    return entry


def bench_batches(sizes: list[int], args) -> dict:
    """Leduc: stacks of ``B`` games and ``B``-setting grids against one game (jaxcfr)."""
    specs = {"single": ("jaxcfr", {})}
    for b in sizes:
        specs[f"stack x{b}"] = ("jaxcfr", {"stack": b, "chunk": 16})
        if not args.large:
            specs[f"grid x{b}"] = ("jaxcfr", {"grid": b, "chunk": 16})
    workers, skipped = start_workers(specs, "leduc", "cfr+", args.peer_budget)
    try:
        members = {label: w.info.get("members", 1) for label, w in workers.items()}
        timing = interleaved_timing(workers, args.target, args.repeats, args.peer_budget,
                                    skipped)
    finally:
        for w in workers.values():
            w.close()
    single = timing.get("single", {}).get("ms_per_iteration")
    out = {}
    for label, r in timing.items():
        r["members"] = members[label]
        r["ms_per_game_iteration"] = r["ms_per_iteration"] / members[label]
        if single:
            r["speedup_over_sequential"] = single / r["ms_per_game_iteration"]
        out[label] = r
        print(f"  leduc {label:12s} {r['ms_per_game_iteration']:9.5f} ms per game-iteration"
              f" ({r.get('speedup_over_sequential', float('nan')):.2f}x one game at a time)",
              flush=True)
    out.update({label: {"skipped": why} for label, why in skipped.items()})
    return out


def markdown(results: dict) -> str:
    """The CPU / GPU table of docs/benchmarks.md from a results dict."""
    peers = ["jaxcfr", "jaxcfr_node_passes", "openspiel_cpp", "openspiel_python",
             "openspiel_jax", "liteefg"]
    present = {p for entry in results["games"].values()
               for res in entry.get("algorithms", {}).values() for p in res}
    peers = [p for p in peers if p in present]
    lines = [f"Measured {results['date']} on {results['machine']['summary']}; "
             f"`{results['command']}`.", "",
             "| game (histories) | algorithm | " + " | ".join(peers) + " | equal work |",
             "|---|---|" + "---|" * len(peers) + "---|"]
    for game, entry in results["games"].items():
        for algorithm, res in entry.get("algorithms", {}).items():
            cells, checks = [], []
            for p in peers:
                r = res.get(p)
                if r is None:
                    cells.append("–")
                elif "skipped" in r:
                    cells.append("n/a")
                else:
                    speed = "" if p == "jaxcfr" else f" ({r['jaxcfr_speedup']:.0f}x)"
                    cells.append(f"{r['ms_per_iteration']:.4g}{speed}")
                    if "equal_work" in r:
                        checks.append(f"{p} {r['equal_work']}")
            lines.append(f"| {game} ({entry.get('nodes', 0):,}) | {algorithm} | "
                         + " | ".join(cells) + " | " + "; ".join(checks) + " |")
    if results.get("batches"):
        lines += ["", "| Leduc batch | ms per game-iteration | vs one game at a time |",
                  "|---|---|---|"]
        for label, r in results["batches"].items():
            if "skipped" not in r:
                lines.append(f"| {label} | {r['ms_per_game_iteration']:.5f} | "
                             f"{r.get('speedup_over_sequential', float('nan')):.2f}x |")
    return "\n".join(lines) + "\n"


def machine() -> dict:
    info = {"platform": platform.platform(), "processor": platform.processor() or
            platform.machine(), "python": sys.version.split()[0], "cpus": os.cpu_count()}
    # asked in a subprocess: JAX in this process would hold the accelerator the workers need
    probe = ("import jax, json; print(json.dumps([jax.__version__, [f'{d.platform}: '"
             "f'{getattr(d, \"device_kind\", d)}' for d in jax.devices()]]))")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             timeout=300, check=True).stdout
        info["jax"], info["devices"] = json.loads(out.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        info["devices"] = [f"jax unavailable: {e}"]
    try:
        with open("/proc/cpuinfo") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        info["cpu_model"] = names[0] if names else ""
    except OSError:
        pass
    info["summary"] = f"{info.get('cpu_model') or info['processor']} ({info['cpus']} cores), " \
                      f"{', '.join(info['devices'])}, JAX {info.get('jax', '?')}"
    return info


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    for flag, what in (("--lowering", "speed"), ("--memory", "memory")):
        if flag in argv:       # lowering speed and the cache / memory per node
            import bench_lowering
            argv.remove(flag)
            return bench_lowering.main([what, *argv])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=list(bench_peers.GAMES))
    parser.add_argument("--algorithms", nargs="+", default=["cfr+", "cfr"], choices=["cfr+", "cfr"])
    parser.add_argument("--peers", nargs="*", choices=list(bench_peers.PEERS),
                        help="default: every peer (none with --large)")
    parser.add_argument("--large", action="store_true", help="the large set (see above)")
    parser.add_argument("--batch", type=int, nargs="*", default=None,
                        help="Leduc batch sizes (default 64; 256 1024 4096 with --large)")
    parser.add_argument("--node-passes", action="store_true",
                        help="also time jaxcfr on the node passes (the kernel before the "
                             "sequence form), as one more peer")
    parser.add_argument("--gpu", action="store_true", help="fail unless JAX's device is a GPU")
    parser.add_argument("--cpu", action="store_true", help="run JAX on the CPU")
    parser.add_argument("--repeats", type=int, default=10, help="interleaved timing rounds")
    parser.add_argument("--target", type=float, default=0.25, help="seconds per timed round")
    parser.add_argument("--check-iterations", type=int, default=0,
                        help="iterations of the equal-work check (default 64; 8 past 100k nodes)")
    parser.add_argument("--peer-budget", type=float, default=300,
                        help="seconds a peer may take to set up or to run the check")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--markdown", help="write the tables to this file")
    args = parser.parse_args(argv)
    if args.cpu:
        os.environ["JAX_PLATFORMS"] = "cpu"        # inherited by the worker processes
    # several JAX workers may be alive at once: none may grab most of a GPU's memory
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    games = args.games or (LARGE_GAMES if args.large else DEFAULT_GAMES)
    if args.peers is None:
        args.peers = [] if args.large else list(bench_peers.PEERS)
    sizes = args.batch if args.batch is not None else (LARGE_STACKS if args.large else [64])

    results = {"machine": machine(), "date": time.strftime("%Y-%m-%d"),
               "command": "python benchmarks/bench.py " + " ".join(argv),
               "games": {}, "batches": {}}
    devices = results["machine"]["devices"]
    print(f"{results['date']}: {results['machine']['summary']}", flush=True)
    if args.gpu and not any(d.startswith(("gpu", "cuda", "rocm")) for d in devices):
        print(f"--gpu: JAX sees no GPU ({devices})", file=sys.stderr)
        return 2
    for game in games:
        print(f"{game}", flush=True)
        results["games"][game] = bench_game(game, args)
    if sizes:
        results["batches"] = bench_batches(sizes, args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
