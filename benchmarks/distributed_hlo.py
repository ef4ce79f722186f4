"""Communication per iteration of a run over several processes, read from the compiled chunk.

``python benchmarks/distributed_hlo.py`` starts 2 processes x 2 CPU devices on the loopback
(gloo), builds the runner of each case over the global mesh of 4, compiles its chunk and
counts the collectives (all-reduce, all-gather, reduce-scatter, collective-permute,
all-to-all) in the optimized HLO text: those inside the iteration loop's body (and what
it calls) run once per iteration; the rest once per chunk. Bytes are the collectives'
result sizes (what each device receives). Also times a few chunks (wall, loopback; the
machine's load is not controlled). Prints one JSON object per case (process 0).

    python benchmarks/distributed_hlo.py [--iterations 20]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

CASES = {
    "batch of 4 Leduc games": ["leduc_poker", "leduc_poker(raise_sizes=(2,6))",
                               "leduc_poker(raise_sizes=(1,4))", "leduc_poker(raise_sizes=(4,8))"],
    "Liar's dice(1 die, 4 sides) split": ["liars_dice(dice=1, sides=4)"],
}
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all")
_BYTES = {"f32": 4, "f64": 8, "s32": 4, "u32": 4, "s8": 1, "u8": 1, "pred": 1, "s64": 8,
          "bf16": 2, "f16": 2}


def _computations(text: str) -> dict[str, list[str]]:
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{\s*$", line)
        if m and not line.startswith(" "):
            name = m.group(1)
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return out


def _called(lines: list[str]) -> set[str]:
    found = set()
    for line in lines:
        for m in re.finditer(r"(?:to_apply|calls|body|condition)=%?([\w.\-]+)", line):
            found.add(m.group(1))
        for m in re.finditer(r"branch_computations=\{([^}]*)\}", line):
            found.update(x.strip().lstrip("%") for x in m.group(1).split(","))
    return found


def _size(shape: str) -> int:
    total = 0
    for dtype, dims in re.findall(r"(\w+)\[([\d,]*)\]", shape):
        n = 1
        for d in filter(None, dims.split(",")):
            n *= int(d)
        total += n * _BYTES.get(dtype, 4)
    return total


def count(text: str) -> dict:
    comps = _computations(text)
    bodies = set()
    for lines in comps.values():
        for line in lines:
            if " while(" in line:
                m = re.search(r"body=%?([\w.\-]+)", line)
                if m:
                    bodies.add(m.group(1))
    inside, todo = set(), list(bodies)
    while todo:
        c = todo.pop()
        if c in inside or c not in comps:
            continue
        inside.add(c)
        todo.extend(_called(comps[c]))

    def tally(names):
        ops: dict[str, list[int]] = {}
        for c in names:
            for line in comps[c]:
                m = re.search(r"= (\S+(?:\{[^}]*\})?|\([^)]*\)) (" + "|".join(COLLECTIVES)
                              + r")(?:-start)?\(", line)
                if m:
                    ops.setdefault(m.group(2), []).append(_size(m.group(1)))
        return {k: {"ops": len(v), "bytes": sum(v)} for k, v in sorted(ops.items())}
    return {"per_iteration": tally(inside), "per_chunk_outside_the_loop":
            tally(set(comps) - inside)}


def worker(pid: int, port: int, iterations: int) -> None:
    from jaxcfr.engine.distributed import Cluster
    Cluster(f"127.0.0.1:{port}", 2, pid, 60, 20).initialize()
    import jax
    import jaxcfr
    for label, names in CASES.items():
        parts = [jaxcfr.lower(jaxcfr.load_game(n)) for n in names]
        lowered = jaxcfr.stack(parts) if len(parts) > 1 else parts[0]
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), mesh=jaxcfr.batch_mesh(), chunk=10)
        state = runner.init()
        text = runner.chunk_program(state).compile().as_text()
        state, compile_seconds = runner.compile(state)
        state = runner.advance(state, 10)
        jax.block_until_ready(state)
        t0 = time.perf_counter()
        state = runner.advance(state, iterations)
        jax.block_until_ready(state)
        seconds = time.perf_counter() - t0
        if pid == 0:
            print(json.dumps({"case": label, "devices": jax.device_count(),
                              "processes": jax.process_count(), **count(text),
                              "iterations_per_second": iterations / seconds,
                              "compile_seconds": compile_seconds}), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--process-id", type=int, help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.process_id is not None:
        worker(args.process_id, args.port, args.iterations)
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    procs = [subprocess.Popen([sys.executable, __file__, "--process-id", str(k), "--port",
                               str(port), "--iterations", str(args.iterations)], env=env,
                              stderr=subprocess.DEVNULL) for k in (0, 1)]
    for q in procs:
        q.wait(timeout=900)


if __name__ == "__main__":
    main()
