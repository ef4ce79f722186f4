"""A batch gives each member exactly its unbatched result.

(a) a stack of different games; (b) one game with a batch of hyper-parameters (also
through ``jaxcfr.solve``); (c) a batch of random profiles through the analytics (the
solvers draw no random numbers: CFR's iterates are deterministic, so a batch of
seeds has nothing to vary yet); (d) the batch axis sharded over 4 fake CPU devices
(in a subprocess: ``--xla_force_host_platform_device_count`` must be set before
JAX starts) gives the unsharded result.
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
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
    import reference_cfr as R

RTOL = 1e-5
ITERATIONS = 50


def _close(a, b, what):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = float(np.abs(b).max()) or 1.0      # the table's own scale (tiny sums)
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=RTOL * scale, err_msg=what)


def _fields(state):
    """The tables the state holds (:func:`cfr_cases.folded_tables`)."""
    return C.folded_tables(state.tables)


# -- (a) a stack of different games ---------------------------------------------------------
def test_stack_members_equal_their_unbatched_runs():
    solver = jaxcfr.cfr_plus()
    batch = C.runner("SMALL", solver)
    state = batch.advance(batch.init(), ITERATIONS)
    assert state.regret.shape[0] == len(C.SMALL)
    batched = _fields(state)
    batched_avg = batch.profile(state)
    metrics = C.evaluate_table("SMALL", batched_avg)
    for b, member in C.member_rows("SMALL"):
        single = C.runner(C.SMALL[b], solver)
        s = single.advance(single.init(), ITERATIONS)
        n, a = member.num_rows, member.max_actions
        for f, v in _fields(s).items():
            _close(batched[f][b, :n, :a], v, f"{C.SMALL[b]} {f}")
            assert not batched[f][b, n:].any() and not batched[f][b, :, a:].any()
        single_avg = single.profile(s)
        _close(batched_avg[b, :n, :a], single_avg, f"{C.SMALL[b]} average")
        conv, values, _ = R.nash_conv(C.tree(C.SMALL[b]), R.profile_from_table(member, single_avg))
        _close(metrics["values"][b], values, f"{C.SMALL[b]} values")
        _close(metrics["nash_conv"][b], conv, f"{C.SMALL[b]} nash_conv")
    # jaxcfr.stack keeps each member's row numbering: unstack_rows recovers them
    from jaxcfr.lowering.stack import unstack_rows
    parts = unstack_rows(C.small_stack(), batched_avg)
    assert [p.shape[0] for p in parts] == [m.num_rows for _, m in C.member_rows("SMALL")]


# -- (b) a batch of hyper-parameters --------------------------------------------------------
HP = {"alpha": [1.0, 1.5, 2.0], "gamma": [1.0, 2.0, 3.0]}


def test_hyperparameter_batch_members_equal_unbatched_runs():
    solver = jaxcfr.dcfr()
    batch = C.runner("kuhn_poker", solver, HP)
    state = batch.advance(batch.init(), ITERATIONS)
    assert state.regret.shape[-1] == 3
    batched = _fields(state)
    for h, (alpha, gamma) in enumerate(zip(HP["alpha"], HP["gamma"])):
        # one unbatched runner: the hyper-parameters are traced, so every setting reuses it
        single = jaxcfr.Runner(C.lowered("kuhn_poker"), solver, {"alpha": alpha, "gamma": gamma})
        s = single.advance(single.init(), ITERATIONS)
        for f, v in _fields(s).items():
            _close(batched[f][..., h], v, f"alpha={alpha} gamma={gamma} {f}")
        # and both agree with the reference
        ref = R.ReferenceCFR(C.tree("kuhn_poker"), "dcfr", alpha=alpha, gamma=gamma).run(10)
        s10 = single.advance(single.init(), 10)
        np.testing.assert_allclose(np.asarray(s10.regret, np.float64),
                                   C.state_table(C.lowered("kuhn_poker"), ref.regret),
                                   rtol=1e-4, atol=1e-5)


def test_solve_with_a_list_of_hyperparameters():
    result = jaxcfr.solve("kuhn_poker", "dcfr", ITERATIONS, alpha=HP["alpha"],
                          gamma=HP["gamma"])
    assert result.average_strategy.shape[-1] == 3
    assert result.profile is None               # a batch has no single keyed profile
    values = np.asarray(result.final["values"])
    assert values.shape == (3, 2)                  # one row per member (record format)
    assert result.final["members"] == ["alpha=1 gamma=1", "alpha=1.5 gamma=2",
                                       "alpha=2 gamma=3"]
    batch = C.runner("kuhn_poker", jaxcfr.dcfr(), HP)
    state = batch.advance(batch.init(), ITERATIONS)
    _close(result.average_strategy, batch.profile(state), "solve vs Runner")
    _close(result.final["nash_conv"], batch.evaluate(state)["nash_conv"], "nash_conv")


def test_unequal_hyperparameter_batches_are_refused():
    with pytest.raises(ValueError, match="one length"):
        jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.dcfr(), {"alpha": [1.0, 2.0],
                                                              "gamma": [1.0, 2.0, 3.0]})


# -- (c) a batch of random profiles through the analytics --------------------------------------
def test_random_profile_batch_equals_one_by_one():
    name = "kuhn_poker"
    lowered, tree = C.lowered(name), C.tree(name)
    rng = np.random.default_rng(2024)
    profiles = [R.random_profile(tree, rng) for _ in range(3)]
    tables = np.stack([R.table_from_profile(lowered, p) for p in profiles], axis=-1)  # [I, A, 3]
    # evaluated as a batch (the trailing axis a batch of hyper-parameters would use) ...
    batch = jaxcfr.evaluate(lowered, tables)
    for h, prof in enumerate(profiles):
        one = C.evaluate_table(name, tables[..., h])
        conv, values, br = R.nash_conv(tree, prof)
        for key in ("values", "best_response_values", "nash_conv"):
            _close(np.asarray(batch[key])[..., h], one[key], key)
        _close(one["values"], values, "values vs reference")
        _close(one["nash_conv"], conv, "nash_conv vs reference")


# -- (d) sharding the batch axis over devices -------------------------------------------------
_SHARDING_SCRIPT = textwrap.dedent("""
    import json, sys
    import jax, numpy as np
    sys.path.insert(0, sys.argv[1])
    import jaxcfr
    import cfr_cases as C
    assert jax.device_count() == 4, jax.devices()
    meshes = {"make_mesh": jax.make_mesh((4,), ("batch",)),      # jax's default axis types
              "batch_mesh": jaxcfr.engine.runner.batch_mesh(4)}
    out = {}

    def run(tag, lowered, solver, hp, evaluate):
        for mesh_name, mesh in meshes.items():
            key = f"{tag}/{mesh_name}"
            try:
                runner = jaxcfr.Runner(lowered, solver, hp, mesh=mesh)
                state = runner.advance(runner.init(), ITERATIONS)
                metrics = runner.evaluate(state) if evaluate else None
            except Exception as e:  # reported, asserted on by the test
                out[key] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                continue
            out[key] = {"devices": len(state.regret.sharding.device_set),
                        "spec": str(state.regret.sharding.spec),
                        "state": {f: np.asarray(x).tolist()
                                  for f, x in state.tables.items()},
                        "nash_conv": None if metrics is None else metrics["nash_conv"].tolist()}

    ITERATIONS = int(sys.argv[2])
    # a stack of 4 different games: the leading batch axis is sharded
    run("stack", C.small_stack(), jaxcfr.cfr_plus(), None, evaluate=True)
    # one game, 4 hyper-parameter settings: the trailing batch axis is sharded
    run("hyperparameters", C.lowered("kuhn_poker"), jaxcfr.dcfr(), json.loads(sys.argv[3]),
        evaluate=False)
    # a batch that does not divide over the devices: a clear error, before any compiling
    try:
        jaxcfr.Runner(jaxcfr.stack([C.lowered("kuhn_poker")] * 2), jaxcfr.cfr_plus(),
                      mesh=meshes["batch_mesh"])
        uneven = None
    except ValueError as e:
        uneven = str(e)
    print(json.dumps(out))
    print(json.dumps({"uneven": uneven}))
""")
HP4 = {"alpha": [1.0, 1.5, 2.0, 2.5], "gamma": [1.0, 2.0, 3.0, 4.0]}


def test_sharded_batch_equals_unsharded():
    """Sharded over a 4-device mesh (in a subprocess) == unsharded (here, already compiled)."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=4").strip()
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.Popen([sys.executable, "-c", _SHARDING_SCRIPT, str(C.HERE),
                             str(ITERATIONS), json.dumps(HP4)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # the unsharded references, while the subprocess compiles
    batch = C.runner("SMALL", jaxcfr.cfr_plus())
    stack_state = batch.advance(batch.init(), ITERATIONS)
    expected = {"stack": _fields(stack_state)}
    stack_conv = C.evaluate_table("SMALL", batch.profile(stack_state))["nash_conv"]
    singles = []
    for alpha, gamma in zip(HP4["alpha"], HP4["gamma"]):
        single = jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.dcfr(),
                               {"alpha": alpha, "gamma": gamma})
        singles.append(_fields(single.advance(single.init(), ITERATIONS)))
    expected["hyperparameters"] = {f: np.stack([s[f] for s in singles], axis=-1)
                                   for f in singles[0]}
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr[-3000:]
    out, uneven = (json.loads(line) for line in stdout.strip().splitlines()[-2:])
    assert uneven["uneven"] is not None and "batch of 2 games cannot be shared out evenly " \
        "over the mesh's 4 devices" in uneven["uneven"], uneven
    assert len(out) == 4, out
    for key, res in out.items():
        assert "error" not in res, (key, res)
        # the state stays sharded over all 4 devices and equals the unsharded run
        assert res["devices"] == 4 and "batch" in res["spec"], (key, res)
        got = C.folded_tables(res["state"])
        assert got.keys() == expected[key.split("/")[0]].keys(), (key, got.keys())
        for f, v in expected[key.split("/")[0]].items():
            _close(got[f], v, f"{key} {f}")
        if res["nash_conv"] is not None:
            _close(res["nash_conv"], stack_conv, f"{key} nash_conv")
