#!/usr/bin/env python
"""CPU time of the ``jaxcfr`` command answering a mistake (issue 33, item 3): a wrong option,
a missing file, a misplaced run directory, each run as a fresh ``jaxcfr`` process.

Usage::

    python benchmarks/mistake_bench.py                # every case, 5 repeats, best of them
    python benchmarks/mistake_bench.py --repeats 3

Prints one line per case: the CPU seconds of the process (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``, the median of the repeats), whether JAX was imported
(one more run with ``-X importtime``: a line naming ``jax``), its exit status and the error
line. Nothing is
written anywhere. CPU time, not wall: the machine may be shared; a mistake should answer
in under 0.3 s of CPU.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile

from benchkit.fresh import fresh_python

#: (case, arguments): mistakes a first user makes.
CASES = [
    ("bad int", ["validate", "kuhn_poker", "--trajectories", "x"]),
    ("unknown option", ["games", "--jsn"]),
    ("missing argument", ["inspect"]),
    ("no such config", ["train", "missing.toml"]),
    ("no such run dir", ["train", "--resume", "missing-run"]),
    ("--out with --resume", ["train", "c.toml", "--out", "a", "--resume", "b"]),
    ("no such profile", ["eval", "missing.npz"]),
    ("no abstraction", ["abstract", "kuhn_poker"]),
    ("unknown command", ["slove", "kuhn_poker"]),
    ("solve: option typo", ["solve", "kuhn_poker", "--iteratons", "5"]),
    ("resolve: no such profile", ["resolve", "kuhn_poker", "missing.npz", "--at-depth", "2"]),
    ("estimate: no such profile", ["estimate", "kuhn_poker", "missing.npz"]),
    ("solve: --iterations 0", ["solve", "kuhn_poker", "--iterations", "0"]),
    ("solve: unknown algorithm", ["solve", "kuhn_poker", "--algorithm", "cfrr"]),
    ("estimate: --samples 1", ["estimate", "kuhn_poker", "--samples", "1"]),
    ("resolve: unknown algorithm", ["resolve", "kuhn_poker", "p.npz", "--at", "0",
                                    "--algorithm", "cfrr"]),
    ("train: config key typo", ["train", "typo.toml"]),
    ("train: --set key typo", ["train", "typo.toml", "--set", "solver.iteratons=5"]),
    ("plot: no such run", ["plot", "missing-run"]),
    ("solve: --alpha on cfr+", ["solve", "leduc_poker", "--alpha", "-1"]),
    ("solve: --horizon 0", ["solve", "kuhn_poker", "--algorithm", "hs-pcfr+", "--horizon", "0"]),
    ("train: solver.horizon 0", ["train", "horizon.toml"]),
]
#: Files the cases read, written into the bench's empty working directory.
FILES = {"typo.toml": '[game]\nname = "kuhn_poker"\n[solver]\nalpah = 1.5\n',
         "horizon.toml": '[game]\nname = "kuhn_poker"\n[solver]\nalgorithm = "hs-pcfr+"\n'
                         'horizon = 0\n'}
LAUNCH = ["-c", "from jaxcfr.cli.launch import console_main; console_main()"]


def run_case(argv: list[str], cwd: str, importtime: bool = False
             ) -> tuple[float, bool, int, str]:
    """``(CPU seconds, whether JAX was imported (only asked with importtime), exit status,
    the error line)`` of one fresh ``jaxcfr`` process."""
    out = fresh_python([*(["-X", "importtime"] if importtime else []), *LAUNCH, *argv],
                       cwd=cwd, timeout=600, env=dict(os.environ, JAXCFR_NO_CACHE="1"))
    lines = out.stderr.splitlines()
    jax = any(re.search(r"\|\s*jax$", line) for line in lines)
    said = [line for line in lines if not line.startswith("import time:")]
    return out.cpu_s, jax, out.returncode, (said[-1] if said else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        for name, text in FILES.items():
            with open(os.path.join(cwd, name), "w", encoding="utf-8") as f:
                f.write(text)
        print(f"{'case':28} {'CPU s':>6}  JAX  status  error line")
        for name, argv in CASES:
            cpu = statistics.median(run_case(argv, cwd)[0] for _ in range(args.repeats))
            _, jax, status, line = run_case(argv, cwd, importtime=True)
            print(f"{name:28} {cpu:6.2f}  {'yes' if jax else 'no ':3}  {status:6}  {line[:90]}")


if __name__ == "__main__":
    main()
