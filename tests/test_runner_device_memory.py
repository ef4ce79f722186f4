"""What a run keeps on the device: only what its value kernel and estimator read.

An exact run on the sequence form reads the rows and the sequence tables (leaves, rows),
never the node arrays: the Runner leaves those on the host (``Runner.nodes_on_device``
false; ``jaxcfr.tensors.without_nodes``), and ``Runner.node_tensors()`` copies them when a
walk of the nodes asks (a locked game's evaluation). Anything that reads the nodes (the
node passes, a counted Monte Carlo estimator, a forest's evaluation) still gets them.
"""

from __future__ import annotations

import gc

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.host_arrays import on_device
from jaxcfr.kernels import sequence
from jaxcfr.solvers.locking import Lock
from jaxcfr.tensors import NODE_FIELDS, to_device


@pytest.fixture(scope="module")
def leduc():
    return jaxcfr.lower(jaxcfr.load_game("leduc_poker"))


def _live_ids() -> set[int]:
    gc.collect()
    return {id(a) for a in jax.live_arrays()}


def _new_arrays(before: set[int]) -> list:
    gc.collect()
    return [a for a in jax.live_arrays() if id(a) not in before]


def _full_step_tensors(runner, lowered):
    """The step tensors as they were before: every node array and every table placed."""
    with runner.scope():
        tables = runner.values.tables(lowered.tensors, lowered.structure, runner.dtype,
                                      stacked=False)
        tables = jax.tree_util.tree_map(
            lambda x: on_device(x, runner.dtype if x.dtype.kind == "f" else None), tables)
        return runner.values.attach(to_device(lowered.tensors, runner.dtype), tables)


def test_an_exact_sequence_form_run_holds_no_node_sized_array(leduc):
    nodes = leduc.num_nodes
    sizes = {leduc.num_rows, leduc.num_rows * leduc.max_actions}
    assert nodes not in sizes            # (so a length-N axis can only be a node array)
    before = _live_ids()
    runner = jaxcfr.Runner(leduc, jaxcfr.cfr_plus(), chunk=4)
    assert not runner.nodes_on_device
    state = runner.advance(runner.init(), 8)
    metrics = runner.evaluate(state)
    held = _new_arrays(before)
    assert held, "the run holds its state and tables on the device"
    assert [a.shape for a in held if nodes in a.shape] == []
    assert all(getattr(runner.step_tensors, f) is None for f in NODE_FIELDS)
    assert runner.step_tensors.sequence.leaf_node is None
    assert runner.step_tensors.sequence.row_ancestors is None
    # the same metrics as the evaluation on every table and node array
    alone = jaxcfr.evaluate(leduc, runner.profile(state))
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_array_equal(metrics[key], alone[key])
    del state, metrics


def test_the_lean_step_is_bit_for_bit_the_full_one(leduc):
    runner = jaxcfr.Runner(leduc, jaxcfr.cfr_plus())
    full = _full_step_tensors(runner, leduc)
    state = runner.advance(runner.init(), 3)           # a non-uniform strategy

    def update(tensors):
        with runner.scope():
            return jax.jit(lambda t, st: runner.step_solver.update(
                t, runner.step_structure, st, runner.hp))(tensors, state)
    for x, y in zip(update(runner.step_tensors), update(full)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    # the derived ancestors are the host table's
    seq = runner.step_tensors.sequence
    np.testing.assert_array_equal(
        np.asarray(sequence.row_ancestors(seq, leduc.max_actions)),
        np.asarray(full.sequence.row_ancestors))


def test_a_walk_of_the_nodes_gets_them_when_it_asks(leduc):
    runner = jaxcfr.Runner(leduc, jaxcfr.cfr_plus())
    state = runner.advance(runner.init(), 4)
    nodes = runner.node_tensors()
    assert nodes.parent.shape == (leduc.num_nodes,)
    assert runner.node_tensors() is nodes                   # copied once, then kept
    # a locked game's evaluation walks the nodes: it runs, as on a runner that had them
    table = runner.profile(state)
    mask = np.zeros(leduc.num_rows, bool)
    mask[0] = True
    lock = Lock(table, mask)
    runner.set_lock(lock)
    locked = runner.evaluate(state)
    node_runner = jaxcfr.Runner(leduc, jaxcfr.cfr_plus(), sequence_form=False)
    assert node_runner.nodes_on_device and node_runner.node_tensors() is node_runner.tensors
    node_runner.set_lock(lock)
    expected = node_runner.evaluate(state)
    np.testing.assert_allclose(locked["nash_conv"], expected["nash_conv"], rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("solver, sequence_form", [
    (lambda: jaxcfr.cfr_plus(), False),                                     # node passes
    (lambda: jaxcfr.make_solver("cfr", sampling="outcome", samples=4, counts=True), True),
], ids=["node-passes", "counted-outcome-sampling"])
def test_whatever_reads_the_nodes_keeps_them(leduc, solver, sequence_form):
    runner = jaxcfr.Runner(leduc, solver(), sequence_form=sequence_form)
    assert runner.nodes_on_device
    assert runner.step_tensors.parent.shape[-1] == leduc.num_nodes
    state = runner.advance(runner.init(), 2)
    assert np.isfinite(runner.evaluate(state)["nash_conv"])


def test_a_stack_stepped_as_a_forest_keeps_the_node_tensors_for_its_evaluation():
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    leduc = jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    from jaxcfr.engine.seam import Forest, choose_seam
    stack = jaxcfr.stack([kuhn, leduc])
    runner = jaxcfr.Runner(stack, jaxcfr.cfr_plus())
    if not runner.layout.own_tensors:
        assert runner.nodes_on_device
        assert runner.tensors.parent is not None
    else:                                  # (a small stack on a CPU: member by member)
        assert not runner.nodes_on_device
    assert isinstance(choose_seam(stack, jaxcfr.cfr_plus().estimator,
                                  backend="gpu").layout, Forest)
    state = runner.advance(runner.init(), 2)
    runner.evaluate(state)
