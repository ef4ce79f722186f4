"""Lowering is linear in the depth of a tree: counted calls, never seconds.

A walk that builds a node's history (O(depth)) on the happy path, say once per new
information set, is quadratic on a chain of moves: doubling the chain quadruples its
calls. These tests count every Python and C call made while lowering (``sys.setprofile``)
on chains of two lengths, and the nodes the parallel walk's cut search walks, so they
fail on a quadratic walk whatever the machine's speed. The unbounded game's
``termination`` error is counted the same way.
"""

from __future__ import annotations

import importlib
import sys

import pytest

import jaxcfr
from jaxcfr import GameError, efg
from jaxcfr.lowering import parallel
from jaxcfr.lowering.size import TreeSize

try:
    from tests import broken_games as bg
    from tests.test_lowering import Chain
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg
    from test_lowering import Chain

#: Calls made while lowering a chain twice as long, at most this many times as many
#: (linear: about 2; quadratic: about 4).
LINEAR = 2.3


def _calls(fn) -> int:
    """Python and C function calls made by ``fn()`` (an exception it raises is fine)."""
    count = 0

    def profile(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    except GameError:
        pass
    finally:
        sys.setprofile(None)
    return count


@pytest.mark.parametrize("length", [2_000])
def test_lowering_a_chain_is_linear_in_its_depth(length):
    short = _calls(lambda: jaxcfr.lower(Chain(length), workers=1))
    long = _calls(lambda: jaxcfr.lower(Chain(2 * length), workers=1))
    assert long <= LINEAR * short, (short, long)


def _efg_chain(depth: int) -> str:
    """A one-player .efg file: ``depth`` decisions "stop" or "go" (its terminal nodes
    refuse ``step`` with an error that can name its history)."""
    lines = ['EFG 2 R "chain" { "solo" }', '""']
    for k in range(depth):
        lines += [f'p "" 1 {k + 1} "" {{ "stop" "go" }} 0', f't "" {k + 1} "" {{ {k} }}']
    return "\n".join(lines + [f't "" {depth + 1} "" {{ {depth} }}'])


def test_lowering_an_efg_chain_is_linear_in_its_depth():
    short, long = (efg.loads(_efg_chain(n)) for n in (2_000, 4_000))
    counts = [_calls(lambda g=g: jaxcfr.lower(g, workers=1)) for g in (short, long)]
    assert counts[1] <= LINEAR * counts[0], counts


def test_the_termination_rule_is_linear_in_the_depth(monkeypatch):
    contract = importlib.import_module("jaxcfr.game.contract")
    counts = []
    for limit in (2_000, 4_000):
        monkeypatch.setattr(contract, "MAX_TRAJECTORY_LENGTH", limit)
        counts.append(_calls(lambda: jaxcfr.lower(bg.NeverEnds(), workers=1)))
    assert counts[1] <= LINEAR * counts[0], counts
    with pytest.raises(GameError) as info:
        jaxcfr.lower(bg.NeverEnds(), workers=1)
    assert info.value.rule == "termination" and info.value.history == ("go",) * 20


def test_the_cut_search_walks_a_bounded_top(monkeypatch):
    """A chain cut for parallel lowering: each depth tried walks the top again, so the
    search must stop after walking a few times the largest top allowed in all."""
    size = TreeSize(nodes=400_000, stderr=0.0, probes=0, max_depth=0, max_actions=2,
                    exact=True)
    cap = 400_000 / 50                    # the largest top for a tree of this size
    bound = (parallel.SEARCH_TOPS + 1) * cap
    walked = []
    walk = parallel.walk

    def counted(*args, **kwargs):
        enum = walk(*args, **kwargs)
        walked.append(len(enum))
        assert sum(walked) <= bound, f"{len(walked)} tops walked, {sum(walked):,} nodes"
        return enum

    monkeypatch.setattr(parallel, "walk", counted)
    top = parallel.cut(Chain(200_000), 1, None, workers=2, size=size)
    assert top.frontier and len(top) <= cap


def test_a_deep_chain_lowers_whole():
    lowered = jaxcfr.lower(Chain(50_000), workers=1)
    assert lowered.depth == 50_000 and lowered.num_nodes == 100_000
    assert lowered.infosets_per_player == (50_000,)
    assert len(lowered.history(lowered.num_nodes - 1)) == 50_000


def test_an_abstracted_chain_steps_without_copying_its_history():
    """The wrapper's path is shared cells, not a tuple copied at every step (that was
    quadratic in depth); its history is built only when asked for (errors)."""
    state = jaxcfr.Abstracted(Chain(50_000), jaxcfr.Identity())
    before = state._path
    for _ in range(49_999):
        state.step("go")
    assert state._path[1] is not None and state.clone()._path is state._path
    assert len(state.history) == 49_999 and before is None
    with pytest.raises(GameError, match="abstraction-step") as e:
        state.step("go")                          # only "stop" is left
    assert len(e.value.history) == 49_999
    short = _calls(lambda: jaxcfr.lower(jaxcfr.Abstracted(Chain(2_000), jaxcfr.Identity()),
                                        workers=1))
    long = _calls(lambda: jaxcfr.lower(jaxcfr.Abstracted(Chain(4_000), jaxcfr.Identity()),
                                       workers=1))
    assert long <= LINEAR * short, (short, long)
