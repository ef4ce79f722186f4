"""A public run's resident memory phase by phase: where ``jaxcfr.solve``'s peak is.

One ``jaxcfr.solve`` of a game string (default the README flop, ``holdem_spot`` on
Td9d6h with the README ranges) with ``postflop-dcfr``, float32, a few iterations in chunks
of 1 and one evaluation at the end, hand buckets on or off (``--no-buckets``), no
compilation cache (every program compiled, as a user's first run). A thread samples the
process's resident bytes every 20 ms; the report gives the highest in each phase
(compiling, each chunk, the evaluation that follows the last chunk, the end of
``solve``: the result's profile and, hand buckets on, its unpadded tables) and the
process's peak (``getrusage``)::

    python benchmarks/bench_run_peak.py --cache /tmp/lowered     # the README flop
    python benchmarks/bench_run_peak.py --no-buckets --cache /tmp/lowered

``--cache DIR`` keeps the lowered game in the cache of lowered games (the README flop's
walk: about 50 CPU-s, done once); its peak is lowering's, below the run's. One run per
process, one process at a time (a flop takes several GB): measure the peak in fresh
processes (docs/holdem.md, "A flop run's peak with its evaluation").
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time

try:
    from benchkit import memory
except ImportError:     # run from the repository root
    from benchmarks.benchkit import memory

README_FLOP = "holdem_spot(board='Td9d6h')"


class _Phases:
    """The highest resident bytes in each phase, sampled by a daemon thread."""

    def __init__(self, every: float = 0.02):
        self.phase, self.order, self.peaks = "start", ["start"], {"start": 0}
        self.every = every
        self.start = time.perf_counter()
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while True:
            self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), memory.rss())
            time.sleep(self.every)

    def mark(self, phase: str) -> None:
        self.peaks[self.phase] = max(self.peaks.get(self.phase, 0), memory.rss())
        if phase not in self.peaks:
            self.order.append(phase)
        self.peaks[phase] = max(self.peaks.get(phase, 0), memory.rss())
        self.phase = phase
        print(f"[{time.perf_counter() - self.start:7.1f} s, {time.process_time():7.1f} "
              f"CPU-s] {memory.rss() / 1e9:.2f} GB -> {phase}", file=sys.stderr, flush=True)


class _Status:
    """``solve``'s status: each begin and end a phase."""

    def __init__(self, phases: _Phases):
        self.phases = phases

    def begin(self, message: str) -> None:
        self.phases.mark(message)

    def end(self, message: str) -> None:
        self.phases.mark(message)

    def update(self, *args, **kwargs) -> None:
        pass

    def note(self, message: str) -> None:
        print(f"note: {message}", file=sys.stderr, flush=True)

    def nodes(self, label: str):
        return lambda *args, **kwargs: None


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=README_FLOP)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--no-buckets", action="store_true")
    parser.add_argument("--cache", default=None, help="the cache of lowered games")
    args = parser.parse_args(argv)
    phases = _Phases()
    import jaxcfr
    phases.mark("imported")

    def progress(iteration, record):
        phases.mark(f"after iteration {iteration}'s {'evaluation' if record else 'chunk'}"
                    + ("" if record or iteration < args.iterations else
                       " (the evaluation)"))

    result = jaxcfr.solve(
        args.game, "postflop-dcfr", args.iterations, eval_every=args.iterations,
        device=jaxcfr.DeviceOptions(chunk=1, hand_buckets=not args.no_buckets,
                                    compilation_cache=False),
        load=jaxcfr.LoadOptions(cache=args.cache),
        report=jaxcfr.Report(status=_Status(phases), progress=progress))
    phases.mark("solve returned")
    out = {"game": args.game, "hand_buckets": not args.no_buckets,
           "exploitability": result.final["exploitability"],
           "peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "cpu_seconds": round(time.process_time(), 1),
           "phases": {p: phases.peaks[p] for p in phases.order}}
    print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
