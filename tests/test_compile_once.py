"""One compiled step serves a whole run: later chunks (the shorter last one included), new
hyper-parameter values and other games of the same padded shape compile nothing.

Two independent witnesses: ``jaxcfr._util.tracing.TRACES`` (how often the jitted chunk /
evaluation bodies were traced) and JAX's own backend-compile events
(``jax.monitoring``), which also catch a compile that reuses a trace.
"""

from __future__ import annotations

import contextlib

import jax
import jax.monitoring
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.tracing import TRACES
from jaxcfr.tensors import to_device

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C

_BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"


@contextlib.contextmanager
def count_compiles():
    """Yields a dict: ``traces`` (chunk + evaluate, filled on exit) and ``compiles``."""
    out = {"compiles": 0, "names": []}

    def listener(event, duration, **kwargs):
        if event == _BACKEND_COMPILE:
            out["compiles"] += 1
            out["names"].append(kwargs.get("fun_name", "?"))

    before = TRACES.snapshot()
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        yield out
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
        out["traces"] = TRACES.since(before)


def _warm(runner: jaxcfr.Runner):
    """The first chunk and the first evaluation (these may compile) plus a fresh state."""
    state = runner.advance(runner.init(), runner.chunk)
    runner.evaluate(state)
    state = runner.advance(runner.init(), 1)
    jax.block_until_ready(state)
    return state


def _assert_nothing_compiled(counts):
    assert counts["traces"] == {}, counts
    assert counts["compiles"] == 0, counts


def test_later_chunks_compile_nothing():
    runner = C.runner("kuhn_poker", jaxcfr.cfr_plus())
    state = _warm(runner)
    with count_compiles() as counts:
        state = runner.advance(state, 2 * runner.chunk + 17)      # full chunks, then a short one
        state = runner.advance(state, 5)                           # another short one
        metrics = runner.evaluate(state)
        jax.block_until_ready(state)
    _assert_nothing_compiled(counts)
    assert int(state.iteration) == 1 + 2 * runner.chunk + 22
    assert np.isfinite(metrics["nash_conv"])


def test_trace_counts_see_a_new_shape():
    """The witnesses work: a shape never seen before is traced and compiled."""
    runner = jaxcfr.Runner(C.lowered("matching_pennies"), jaxcfr.cfr_plus(), chunk=3)
    with count_compiles() as counts:
        jax.block_until_ready(runner.advance(runner.init(), 4))
    assert counts["traces"].get("chunk") == 1 and counts["compiles"] >= 1, counts


def test_new_hyperparameter_values_compile_nothing():
    lowered = C.lowered("kuhn_poker")
    first = C.runner("kuhn_poker", jaxcfr.dcfr(), {"alpha": 1.5, "gamma": 2.0})
    _warm(first)
    results = []
    with count_compiles() as counts:
        for alpha, beta, gamma in [(1.1, 0.5, 1.0), (3.0, 0.0, 4.0)]:
            runner = jaxcfr.Runner(lowered, jaxcfr.dcfr(),
                                   {"alpha": alpha, "beta": beta, "gamma": gamma})
            state = runner.advance(runner.init(), 20)
            results.append(runner.evaluate(state)["nash_conv"])
    _assert_nothing_compiled(counts)
    assert results[0] != results[1]          # the new values were really used


def test_new_values_of_a_parts_own_parameters_compile_nothing():
    """A schedule's parameters (HS-PCFR+'s, declared by its averaging rule) and another
    preset default are values, not program: neither compiles anything."""
    lowered = C.lowered("kuhn_poker")
    _warm(C.runner("kuhn_poker", jaxcfr.hs_pcfr_plus(), {"horizon": 100.0}))
    results = []
    with count_compiles() as counts:
        for solver, values in [(jaxcfr.hs_pcfr_plus(), {"horizon": 40.0, "gamma_drop": 0.0}),
                               (jaxcfr.hs_pcfr_plus(gamma=15.0), {})]:
            runner = jaxcfr.Runner(lowered, solver, values)
            state = runner.advance(runner.init(), 20)
            results.append(runner.evaluate(state)["nash_conv"])
    _assert_nothing_compiled(counts)
    assert results[0] != results[1]          # the new values were really used


class _ScaledKuhn(type(C.make_game("kuhn_poker"))):
    """Kuhn poker with every payoff tripled: a different game, the same tree shape."""

    __slots__ = ()

    def clone(self):
        # games.KuhnPoker.clone() builds a KuhnPoker, dropping a subclass's overrides
        new = super().clone()
        new.__class__ = type(self)
        return new

    def terminal_returns(self):
        return tuple(3.0 * x for x in super().terminal_returns())

    def nash_value(self):
        return (-3 / 18, 3 / 18)


def test_another_game_of_the_same_shape_compiles_nothing():
    base = C.runner("kuhn_poker", jaxcfr.cfr_plus())
    _warm(base)
    other = jaxcfr.lower(_ScaledKuhn())
    assert other.tensors.parent.shape == C.lowered("kuhn_poker").tensors.parent.shape
    with count_compiles() as counts:
        runner = jaxcfr.Runner(other, jaxcfr.cfr_plus())
        state = runner.advance(runner.init(), 100)
        metrics = runner.evaluate(state)
        base_state = base.advance(base.init(), 100)
        base_metrics = base.evaluate(base_state)
    _assert_nothing_compiled(counts)
    # the new tensors were used (not baked into the program): values scale by 3
    np.testing.assert_allclose(metrics["values"], 3 * base_metrics["values"], rtol=1e-4,
                               atol=1e-6)


def test_another_stack_of_the_same_shape_compiles_nothing():
    base = C.runner("SMALL", jaxcfr.cfr_plus())
    _warm(base)
    members = list(C.small_stack().members)
    members[0] = jaxcfr.lower(_ScaledKuhn())               # same shapes, other payoffs
    other = jaxcfr.stack(members)
    with count_compiles() as counts:
        runner = jaxcfr.Runner(other, jaxcfr.cfr_plus())
        state = runner.advance(runner.init(), 10)
        jax.block_until_ready(state)
    _assert_nothing_compiled(counts)


def test_max_traces_of_the_step():
    """chex's guard on a jitted solver step: one trace for many calls and games."""
    chex = pytest.importorskip("chex")
    solver = jaxcfr.cfr_plus()
    lowered = C.lowered("kuhn_poker")
    structure = lowered.structure

    @jax.jit
    @chex.assert_max_traces(n=1)
    def step(tensors, state, hp):
        return solver.update(tensors, structure, state, hp)

    hp = solver.hyperparams()
    for game in (lowered, jaxcfr.lower(_ScaledKuhn())):
        tensors = to_device(game.tensors, np.float32)
        state = solver.init(tensors)
        for _ in range(3):
            state = step(tensors, state, hp)
    assert int(state.iteration) == 3


@pytest.mark.parametrize("sampling, samples, counts", [
    ("external", 4, False), ("outcome", 8, False), ("external", 64, True),
    ("outcome", 256, True), ("external", 4, "depth"), ("outcome", 8, "depth")],
    ids=["external", "outcome", "external-counts", "outcome-counts", "external-depth",
         "outcome-depth"])
def test_monte_carlo_compiles_once_for_every_seed(sampling, samples, counts):
    """A sampled run's seed and iteration keys are arguments: later chunks (a short one
    too) and a run with another seed compile nothing, and the seed is really used (the
    depth-first walk too: its loop bounds are static facts of the game, not of a draw)."""
    lowered = C.lowered("kuhn_poker")
    if counts == "depth":
        solver = jaxcfr.make_solver("cfr", estimator=jaxcfr.ESTIMATORS[sampling](
            samples=samples, walk="depth"))
    else:
        solver = jaxcfr.make_solver("cfr", sampling=sampling, samples=samples, counts=counts)
    first = jaxcfr.Runner(lowered, solver, {"seed": 0}, chunk=8)
    state = _warm(first)
    with count_compiles() as compiled:
        state = first.advance(state, 2 * first.chunk + 3)
        other = jaxcfr.Runner(lowered, solver, {"seed": 7}, chunk=8)
        moved = other.advance(other.init(), 2 * other.chunk + 4)
        again = first.advance(first.init(), 2 * first.chunk + 4)
        jax.block_until_ready((state, moved, again))
    _assert_nothing_compiled(compiled)
    assert not np.array_equal(np.asarray(moved.regret), np.asarray(again.regret))


def test_a_public_trees_blocks_compile_once():
    """A public tree's alternating run (its tables per player block inside the loop,
    ``jaxcfr.solvers.public_blocks``): later chunks and new hyper-parameter values compile
    nothing."""
    from jaxcfr_games.public_kuhn import PublicKuhn
    lowered = jaxcfr.lower_public(PublicKuhn())
    runner = jaxcfr.Runner(lowered, jaxcfr.dcfr(), chunk=8)
    state = _warm(runner)
    with count_compiles() as counts:
        state = runner.advance(state, 2 * runner.chunk + 3)
        other = jaxcfr.Runner(lowered, jaxcfr.dcfr(), {"alpha": 3.0, "gamma": 4.0}, chunk=8)
        moved = other.advance(other.init(), 2 * runner.chunk + 4)
        jax.block_until_ready((state, moved))
    _assert_nothing_compiled(counts)
    assert not np.array_equal(np.asarray(state.regret), np.asarray(moved.regret))


@pytest.mark.slow
def test_a_stack_of_other_decision_counts_compiles_once():
    """A stack whose members differ in decision count (the two-suit game merged and
    unmerged, Kuhn), each member padded to the stack's player blocks and stepped per
    player block: later chunks, and a stack of the same members in another order (the
    same padded shape), compile nothing."""
    from jaxcfr.lowering.public_stack import stack_public
    from jaxcfr_games.public_kuhn import PublicKuhn
    try:
        from tests.test_public_merged_profiles import TwoBoards
    except ImportError:
        from test_public_merged_profiles import TwoBoards
    members = [jaxcfr.lower_public(g) for g in (TwoBoards(), PublicKuhn(),
                                                TwoBoards(merge=False))]
    stack = stack_public(members)
    assert stack.structure.player_decisions == members[2].structure.player_decisions
    runner = jaxcfr.Runner(stack, jaxcfr.cfr_plus(), chunk=4)
    state = _warm(runner)
    other = jaxcfr.Runner(stack_public(members[::-1]), jaxcfr.cfr_plus(), chunk=4)
    with count_compiles() as counts:
        state = runner.advance(state, 2 * runner.chunk + 3)
        moved = other.advance(other.init(), 2 * runner.chunk)
        jax.block_until_ready((state, moved))
    _assert_nothing_compiled(counts)


def test_the_evaluation_warm_up_makes_its_programs_without_evaluating(monkeypatch):
    # the Runner's warm-up (compile's thread) compiles the evaluation on a zero state but
    # does not run it (on the README turn that run cost a real evaluation's 0.4 CPU-s):
    # the first evaluation then compiles nothing and gives what a cold runner gives
    from jaxcfr.solvers import analytics
    ran = []
    real = analytics.evaluate
    monkeypatch.setattr(analytics, "evaluate", lambda *a, **k: ran.append(1) or real(*a, **k))
    lowered = jaxcfr.lower_public(jaxcfr.load_game("kuhn_poker(tree='public')"))
    runner = jaxcfr.Runner(lowered, jaxcfr.postflop_dcfr(), chunk=8)
    state, _ = runner.compile(runner.init())
    runner._wait_for_evaluation_compile()
    assert ran == [] and runner.evaluation_compile_seconds is not None
    state = runner.advance(state, 8)
    jax.block_until_ready(state)
    with count_compiles() as counts:
        ahead = runner.evaluate(state)
    _assert_nothing_compiled(counts)
    assert ran == [1]
    plain = jaxcfr.Runner(lowered, jaxcfr.postflop_dcfr(), chunk=8, overlap_evaluation=False)
    again = plain.evaluate(plain.advance(plain.init(), 8))
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_array_equal(ahead[key], again[key])
