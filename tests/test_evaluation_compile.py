"""The runner's evaluation-compile thread never outlives its run.

:meth:`jaxcfr.Runner.compile` compiles the evaluation in a thread of its own
(``jaxcfr-compile-evaluation``) while the chunk compiles. That thread is joined when the
run ends however it ends: :meth:`~jaxcfr.Runner.close` (which ``jaxcfr.solve`` calls in a
``finally``, and ``with Runner(...)`` on leaving), and a chunk compile that fails. A thread
left compiling after its run would compile into whatever the process does next.

To make "still alive" observable rather than a race, the thread's making of the metrics
program (``analytics.prepare_evaluation``: an unlocked run's warm-up compiles it without
running it) is held until the test releases it, :data:`HOLD` seconds after the run's end
began (:func:`calls`): without the joins, the thread is then certainly alive when the run
has ended.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import jaxcfr
from jaxcfr.engine import runner as runner_module
from jaxcfr.solvers import analytics

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C

NAME = "jaxcfr-compile-evaluation"
#: How long the thread's evaluation is held after the run's end began (seconds): far
#: longer than the run's end takes.
HOLD = 1.0


def _alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == NAME and t.is_alive()]


@pytest.fixture(autouse=True)
def _no_thread_before():
    for t in _alive():            # another test's (a runner it did not close): not ours
        t.join()
    yield


class Calls(list):
    """The evaluation steps that ran, in which thread: ``[(step, thread name)]`` (step
    ``prepare``: the metrics program made, not run; ``evaluate``: an evaluation run;
    ``finite``: the finiteness check); the thread's ``prepare`` waits for
    :meth:`release_later`."""

    def __init__(self):
        super().__init__()
        self.released = threading.Event()

    def release_later(self) -> None:
        threading.Timer(HOLD, self.released.set).start()


@pytest.fixture
def calls(monkeypatch):
    seen = Calls()
    evaluate = runner_module.Runner._evaluate
    prepare = analytics.prepare_evaluation
    finite = runner_module.state_is_finite

    def recorded_evaluate(self, state, average=True):
        seen.append(("evaluate", threading.current_thread().name))
        return evaluate(self, state, average)

    def held_prepare(*args, **kwargs):
        seen.append(("prepare", threading.current_thread().name))
        if threading.current_thread().name == NAME:
            assert seen.released.wait(60), "the test never released the evaluation"
        return prepare(*args, **kwargs)

    def recorded_finite(state):
        seen.append(("finite", threading.current_thread().name))
        return finite(state)

    monkeypatch.setattr(runner_module.Runner, "_evaluate", recorded_evaluate)
    monkeypatch.setattr(analytics, "prepare_evaluation", held_prepare)
    monkeypatch.setattr(runner_module, "state_is_finite", recorded_finite)
    return seen


def test_close_joins_the_thread_and_skips_what_it_has_not_begun(calls):
    runner = jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.cfr_plus())
    state, _ = runner.compile(runner.init())
    state = runner.advance(state, 4)              # a run that never evaluates
    calls.release_later()
    runner.close()
    assert not _alive()
    # the program under way was made (not run); the finiteness check after it was skipped
    assert [c for c in calls if c[1] == NAME] == [("prepare", NAME)]
    # evaluating after close still works (what was skipped compiles when due)
    metrics = runner.evaluate(runner.advance(state, 4))
    assert np.isfinite(metrics["exploitability"])
    runner.close()                                # twice: nothing left to do


def test_leaving_a_with_block_closes_the_runner(calls):
    with jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.cfr_plus()) as runner:
        state, _ = runner.compile(runner.init())
        runner.advance(state, 4)
        calls.release_later()
    assert not _alive()


def test_a_failed_chunk_compile_stops_and_joins_the_thread(calls, monkeypatch):
    runner = jaxcfr.Runner(C.lowered("kuhn_poker"), jaxcfr.cfr_plus())

    def failing_chunk(state, n, lower=False, traced=None):
        traced()                         # traced, then XLA's compile fails
        raise RuntimeError("compile failed")

    monkeypatch.setattr(runner, "_chunk", failing_chunk)
    calls.release_later()
    with pytest.raises(RuntimeError, match="compile failed"):
        runner.compile(runner.init())
    assert not _alive()
    assert not [c for c in calls if c == ("finite", NAME)]


def test_a_solve_that_ends_before_its_first_evaluation_joins_the_thread(calls):
    def progress(iteration, record):
        if iteration > 0:
            calls.release_later()
            raise RuntimeError("stopped by the caller")

    with pytest.raises(RuntimeError, match="stopped by the caller"):
        jaxcfr.solve(C.lowered("kuhn_poker"), "cfr+", 100,
                     device=jaxcfr.DeviceOptions(chunk=4),
                     report=jaxcfr.Report(progress=progress))
    assert not _alive()
    assert not [c for c in calls if c[0] == "finite" and c[1] == NAME]


def test_a_finished_solve_leaves_no_thread(calls):
    calls.released.set()
    result = jaxcfr.solve(C.lowered("kuhn_poker"), "cfr+", 8)
    assert not _alive()
    # the thread made the evaluation's program without running it, and the check; the
    # loop ran the evaluation once, in the caller's thread
    assert calls.count(("prepare", NAME)) == 1 and calls.count(("finite", NAME)) == 1
    assert ("evaluate", NAME) not in calls and calls.count(("evaluate", "MainThread")) == 1
    assert result.final["exploitability"] < 1
