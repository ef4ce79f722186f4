"""The ``determinism`` section of ``benchmarks/gpu_check.py``, and its subprocess.

On the device: the same CFR+ run twice and a run resumed at the half through host memory
(bit for bit expected); float64 on the device against float64 on the CPU after a few dozen
iterations (within :data:`FLOAT64_TOLERANCE`); float32 device against CPU (the
exploitabilities; no bit-for-bit expectation). The CPU side is a subprocess with
``JAX_PLATFORMS=cpu``, started first so that it runs while this process uses the device; on
a GPU a second subprocess runs twice under ``--xla_gpu_deterministic_ops``.
``worker(spec, out)`` is that subprocess's body (``gpu_check.py --worker SPEC OUT``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import jax
import numpy as np

import jaxcfr
from benchkit.gpu.timing import block
from jaxcfr.lowering.lower import as_lowered
from jaxcfr.solvers.solver import SolverState

FIELDS = SolverState._fields[:-1]        # the state's tables (not the iteration)
#: float64 on the device against float64 on the CPU, after ``float64_iterations``.
FLOAT64_TOLERANCE = 1e-10


class Determinism:
    """The ``determinism`` section (a mixin of :class:`benchkit.gpu.measure.Measure`)."""

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
            children["deterministic"] = self.start_worker(
                {"game": text, "cache": self.cache, "runs": [
                    {"name": "a", "precision": "float32", "iterations": n},
                    {"name": "b", "precision": "float32", "iterations": n}]},
                {"XLA_FLAGS": flags})
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
        check = Path(__file__).resolve().parents[2] / "gpu_check.py"
        proc = subprocess.Popen([sys.executable, str(check),
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
    state = (runner.restore({k: resume[k] for k in FIELDS + ("iteration",) if k in resume})
             if resume else runner.init())
    state = block(runner.advance(state, iterations))
    out = {f: np.asarray(x) for f, x in state.arrays().items()}      # the tables it keeps
    out["average"] = runner.profile(state)
    if evaluate:
        out["exploitability"] = np.asarray(float(runner.evaluate(state)["exploitability"]))
    return out


def compare(a: dict, b: dict) -> dict:
    """Bit for bit (every state table and the average, same dtype) and the largest difference."""
    keys = tuple(k for k in FIELDS if k in a or k in b) + ("average",)
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
