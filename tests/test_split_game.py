"""One game split over the devices of a mesh gives the one-device result.

A single game on a mesh (no stack, no batch of settings) has its node and row axes, and
the sequence form's leaves, sharded over the mesh axis (padded to a multiple of the
device count with inert nodes and rows). Checked on 4 fake CPU devices in a subprocess
(``--xla_force_host_platform_device_count`` must be set before JAX starts) against
the unsplit runs in this process: the solver state after 40 iterations, the average
profile and its exact metrics. Games: Leduc poker (CFR+, alternating) and the ``.efg``
game whose information sets span several depths (CFR, simultaneous); with
``JAXCFR_LONG_TESTS=1`` also Kuhn poker, 3-player Kuhn poker, and the node passes as well
as the sequence form.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxcfr

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C

ITERATIONS = 40
# float32; a split run sums in another order (partitioned reductions): relative to scale
RTOL = 1e-4
CASES = [("leduc_poker", "cfr+", True), ("different_depths", "cfr", True)]
if os.environ.get("JAXCFR_LONG_TESTS") == "1":       # slower to compile split: ~40 s more
    CASES += [("kuhn_poker", "cfr+", True), ("kuhn_poker(players=3)", "cfr+", True),
              ("kuhn_poker", "cfr+", False), ("leduc_poker", "cfr+", False)]

_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    sys.path.insert(0, sys.argv[1])
    import jaxcfr
    import cfr_cases as C
    assert jax.device_count() == 4, jax.devices()
    out = []
    for name, algorithm, sequence_form in json.loads(sys.argv[3]):
        runner = jaxcfr.Runner(C.lowered(name), jaxcfr.make_solver(algorithm),
                               mesh=jaxcfr.batch_mesh(4), sequence_form=sequence_form)
        state = runner.advance(runner.init(), int(sys.argv[2]))
        leaves = jax.tree_util.tree_leaves(runner.step_tensors)
        out.append({"devices": len(state.regret.sharding.device_set),
                    "spec": str(state.regret.sharding.spec),
                    "tensors_split": all(len(x.sharding.device_set) == 4 and
                                         str(x.sharding.spec) != "PartitionSpec()"
                                         for x in leaves if x.ndim),
                    "rows": int(state.regret.shape[0]),
                    "state": {f: np.asarray(x).tolist() for f, x in state.tables.items()},
                    "average": runner.profile(state).tolist(),
                    "nash_conv": float(runner.evaluate(state)["nash_conv"])})
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_split_game_equals_one_device():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.Popen([sys.executable, "-c", _SCRIPT, str(C.HERE), str(ITERATIONS),
                             json.dumps(CASES)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    expected = []
    for name, algorithm, sequence_form in CASES:        # one device, while the subprocess runs
        runner = jaxcfr.Runner(C.lowered(name), jaxcfr.make_solver(algorithm),
                               sequence_form=sequence_form)
        state = runner.advance(runner.init(), ITERATIONS)
        expected.append((runner, state))
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr[-3000:]
    results = json.loads(stdout.strip().splitlines()[-1])
    for (name, algorithm, sequence_form), res, (runner, state) in zip(CASES, results, expected):
        what = f"{name} {algorithm} {'sequence form' if sequence_form else 'node passes'}"
        lowered = C.lowered(name)
        # every array of the step lives in pieces on all 4 devices, rows padded to 4k
        assert res["devices"] == 4 and "batch" in res["spec"], (what, res["spec"])
        assert res["tensors_split"], what
        assert res["rows"] % 4 == 0 and res["rows"] >= lowered.num_rows, what
        assert set(res["state"]) == set(state.tables), what
        got, ref = C.folded_tables(res["state"]), C.folded_tables(state.tables)
        for f in ref:
            split = got[f]
            one = ref[f]
            scale = float(np.abs(one).max()) or 1.0      # the table's own scale
            np.testing.assert_allclose(split[:lowered.num_rows], one, rtol=RTOL,
                                       atol=RTOL * scale, err_msg=f"{what}: {f}")
            assert not split[lowered.num_rows:].any(), f"{what}: padding rows of {f}"
        np.testing.assert_allclose(res["average"], runner.profile(state), rtol=RTOL,
                                   atol=RTOL, err_msg=f"{what}: average")
        np.testing.assert_allclose(res["nash_conv"], float(runner.evaluate(state)["nash_conv"]),
                                   rtol=1e-4, atol=1e-6, err_msg=f"{what}: nash_conv")


def test_padding_keeps_the_game():
    """pad_to_multiple adds only inert nodes and rows: same metrics, same solver state."""
    from jaxcfr.lowering.stack import pad_to_multiple
    lowered = C.lowered("different_depths")
    padded = pad_to_multiple(lowered, 8)
    assert padded.num_nodes % 8 == 0 and padded.num_rows % 8 == 0
    assert padded.num_nodes > lowered.num_nodes and padded.num_rows > lowered.num_rows
    solver = jaxcfr.cfr_plus()
    a = jaxcfr.Runner(lowered, solver)
    b = jaxcfr.Runner(padded, solver)
    sa, sb = a.advance(a.init(), 25), b.advance(b.init(), 25)
    np.testing.assert_allclose(np.asarray(sb.regret)[:lowered.num_rows], np.asarray(sa.regret),
                               rtol=RTOL, atol=RTOL)
    assert not np.asarray(sb.regret)[lowered.num_rows:].any()
    np.testing.assert_allclose(b.evaluate(sb)["nash_conv"], a.evaluate(sa)["nash_conv"],
                               rtol=1e-5, atol=1e-7)
