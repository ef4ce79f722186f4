"""Determinism and precision: what is bit for bit, and what agrees to how much.

Each case runs CFR+ on a game in a *fresh process* (so compilation happens anew) and
returns the solver state; the cases are then compared:

* ``twice``: the same run twice (same device, same chunk): expected bit for bit;
* ``resumed``: half the iterations, the state through host memory (as a checkpoint is),
  a new process, the other half: expected bit for bit with the uninterrupted run;
* ``chunk``: the same run with another chunk length: bit for bit when the compiled
  iteration is the same program;
* ``float64`` against ``float32``; ``node passes`` against the sequence form; a
  ``stack`` member and a game ``split`` over 4 (fake) devices against the single run:
  how far apart (float rounding in another order);
* with a GPU: CPU against GPU in float32 and float64, and the GPU run twice with and
  without ``--xla_gpu_deterministic_ops`` (XLA's scatter-add on a GPU uses atomics, so
  sums may be added in another order from run to run).

Usage::

    python benchmarks/determinism.py --json determinism.json           # CPU (this machine)
    python benchmarks/determinism.py --gpu --json gpu-determinism.json   # on a GPU machine
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from jaxcfr.solvers.solver import SolverState

FIELDS = SolverState._fields[:-1]        # the state's tables (not the iteration)


def worker(spec: dict, out_path: str) -> None:
    """Run one case and save its state (and metrics) to ``out_path`` (.npz)."""
    import jax
    import numpy as np

    import jaxcfr
    lowered = jaxcfr.lower(jaxcfr.load_game(spec["game"]))
    mesh = None
    if spec.get("split"):
        mesh = jaxcfr.batch_mesh(spec["split"])
    if spec.get("stack"):
        lowered = jaxcfr.stack([lowered] * spec["stack"])
    device = jax.devices(spec["platform"])[0] if spec.get("platform") else jax.devices()[0]
    with jax.default_device(device):
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), precision=spec["precision"],
                               chunk=spec["chunk"], mesh=mesh,
                               sequence_form=spec.get("sequence_form", True))
        if spec.get("resume_from"):
            with np.load(spec["resume_from"]) as f:
                state = runner.restore({k: f[k] for k in f.files if k in FIELDS + ("iteration",)})
        else:
            state = runner.init()
        state = runner.advance(state, spec["iterations"])
        arrays = {f: np.asarray(x) for f, x in state.tables.items()}   # those it keeps
        arrays["iteration"] = np.asarray(state.iteration)
        if spec.get("stack"):
            arrays = {k: v[0] for k, v in arrays.items()}
        if spec.get("split"):
            rows = runner.lowered.num_rows
            arrays = {k: v[:rows] if v.ndim else v for k, v in arrays.items()}
        metrics = runner.evaluate(state)
        arrays["exploitability"] = np.asarray(metrics["exploitability"]).reshape(-1)[:1]
        arrays["average"] = runner.profile(state)[0] if spec.get("stack") else \
            runner.profile(state)
        arrays["device"] = np.asarray(f"{device.platform}: {getattr(device, 'device_kind', '')}")
    np.savez(out_path, **arrays)


def run_case(spec: dict, env_extra: dict | None = None) -> dict:
    import numpy as np
    handle, path = tempfile.mkstemp(suffix=".npz")
    os.close(handle)
    env = dict(os.environ, **(env_extra or {}))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker",
                           json.dumps(spec), path], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"case {spec} failed:\n{proc.stderr[-2000:]}")
    with np.load(path) as f:
        out = {k: f[k] for k in f.files}
    out["path"] = path
    return out


def compare(a: dict, b: dict) -> dict:
    import numpy as np
    keys = tuple(k for k in FIELDS if k in a or k in b) + ("average",)
    same = all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in keys)
    diff = {k: float(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64))))
            for k in keys}
    return {"bit_for_bit": bool(same), "max_abs_difference": diff,
            "exploitability": [float(a["exploitability"][0]), float(b["exploitability"][0])]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--gpu", action="store_true", help="also compare CPU and GPU")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker[0]), args.worker[1])
        return 0
    import numpy as np
    n, half = args.iterations, args.iterations // 2
    base = {"game": args.game, "iterations": n, "precision": "float32", "chunk": 64}
    cpu = {"platform": "cpu"} if args.gpu else {}
    results: dict = {"game": args.game, "iterations": n, "algorithm": "cfr+"}

    def report(name, a, b):
        results[name] = compare(a, b)
        r = results[name]
        print(f"{name:48s} bit for bit: {str(r['bit_for_bit']):5s}  max |diff| "
              f"{max(r['max_abs_difference'].values()):.3g}  exploitability "
              f"{r['exploitability'][0]:.6g} / {r['exploitability'][1]:.6g}", flush=True)

    one = run_case({**base, **cpu})
    report("twice (float32, CPU)", one, run_case({**base, **cpu}))
    first = run_case({**base, **cpu, "iterations": half})
    report("resumed at the half (float32, CPU)", one,
           run_case({**base, **cpu, "iterations": n - half, "resume_from": first["path"]}))
    report("chunk 64 against chunk 7 (float32, CPU)", one, run_case({**base, **cpu, "chunk": 7}))
    f64 = run_case({**base, **cpu, "precision": "float64"})
    report("twice (float64, CPU)", f64, run_case({**base, **cpu, "precision": "float64"}))
    report("float32 against float64 (CPU)", one, f64)
    report("node passes against sequence form (float32)", one,
           run_case({**base, **cpu, "sequence_form": False}))
    report("node passes against sequence form (float64)", f64,
           run_case({**base, **cpu, "precision": "float64", "sequence_form": False}))
    report("stack member (x4) against single (float32)", one, run_case({**base, **cpu,
                                                                         "stack": 4}))
    fake = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") +
                          " --xla_force_host_platform_device_count=4").strip()}
    report("split over 4 CPU devices against one (float32)", one,
           run_case({**base, "platform": "cpu", "split": 4}, fake))
    report("split over 4 CPU devices against one (float64)", f64,
           run_case({**base, "platform": "cpu", "split": 4, "precision": "float64"}, fake))
    if args.gpu:
        gpu = run_case(base)
        results["gpu_device"] = str(gpu["device"])
        report("GPU twice (float32)", gpu, run_case(base))
        first = run_case({**base, "iterations": half})
        report("GPU resumed at the half (float32)", gpu,
               run_case({**base, "iterations": n - half, "resume_from": first["path"]}))
        det = {"XLA_FLAGS": (os.environ.get("XLA_FLAGS", "") +
                             " --xla_gpu_deterministic_ops=true").strip()}
        g1 = run_case(base, det)
        report("GPU twice, --xla_gpu_deterministic_ops (float32)", g1, run_case(base, det))
        report("GPU against CPU (float32)", gpu, one)
        g64 = run_case({**base, "precision": "float64"})
        report("GPU twice (float64)", g64, run_case({**base, "precision": "float64"}))
        report("GPU against CPU (float64)", g64, f64)
    for value in results.values():
        if isinstance(value, dict):
            value["max_abs_difference"] = {k: float(v) for k, v in
                                           value["max_abs_difference"].items()}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2, default=lambda x: np.asarray(x).tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
