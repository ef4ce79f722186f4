"""How ``benchmarks/gpu_check.py`` times a figure and counts its bandwidth bound.

* :func:`steady_state`: compile (first chunk), warm up (second chunk), time whole-chunk
  rounds of about a target length; the median round counts.
* :func:`exact_bytes` / :func:`game_bytes`: the bytes an exact iteration must move, from the
  sequence-form tables (``profile_passes.iteration_bytes``); :func:`sampled_bytes`: a rough
  count for the sampling estimators, from their capacity plan.
"""

from __future__ import annotations

import importlib.metadata
import statistics
import time

import jax
import numpy as np

import jaxcfr
import profile_passes

#: A timed round is at most this many chunks.
MAX_CHUNKS = 64


def block(x):
    return jax.block_until_ready(x)


def steady_state(runner, state, rounds: int, target: float, clock) -> tuple[dict, object]:
    """Compile (first chunk), warm up (second chunk), then time ``rounds`` rounds of about
    ``target`` seconds each (whole chunks); the median round counts. Fewer rounds (at least
    two) when the section's time runs out."""
    chunk = runner.chunk
    start = time.perf_counter()
    state = block(runner.advance(state, chunk))
    first = time.perf_counter() - start
    start = time.perf_counter()
    state = block(runner.advance(state, chunk))
    warm = (time.perf_counter() - start) / chunk
    n = max(1, min(MAX_CHUNKS, round(target / max(warm * chunk, 1e-9)))) * chunk
    samples = []
    for _ in range(rounds):
        if len(samples) >= 2 and clock.left() < 1.5 * n * warm:
            break
        start = time.perf_counter()
        state = block(runner.advance(state, n))
        samples.append((time.perf_counter() - start) / n)
    ms = statistics.median(samples) * 1e3
    return {"ms_per_iteration": ms, "samples_ms": [round(s * 1e3, 6) for s in samples],
            "rounds": len(samples), "iterations_per_round": n,
            "iterations_timed": n * len(samples), "first_chunk_s": first,
            "compile_s": max(0.0, first - warm * chunk)}, state


def game_bytes(lowered, itemsize: int = 4, predictive: bool = False) -> int:
    """Bytes a CFR+ iteration of one (unstacked) game must move: its sequence-form tables
    built here (``profile_passes.iteration_bytes``)."""
    from jaxcfr.kernels.sequence import sequence_tables
    seq = sequence_tables(lowered.tensors, lowered.level_start, lowered.num_players)
    return profile_passes.iteration_bytes(seq, lowered.num_rows, lowered.max_actions,
                                          lowered.num_players, itemsize=itemsize,
                                          predictive=predictive)


def exact_bytes(runner, lowered) -> int:
    """Bytes an iteration of ``runner`` must move (``profile_passes.iteration_bytes``) from
    the tables it steps: a forest counts its padding; a stack sharing one tree
    (``leaf_value [P, T, B]`` beside unbatched indices) its indices once and its floats per
    member; a vmapped stack (``[B, ...]`` tables) its padded members."""
    values = getattr(runner, "values", None)         # (a sampled-chance runner has none)
    seq = None if values is None else values.sequences(runner.step_tensors)
    itemsize = np.dtype(runner.dtype).itemsize
    predictive = bool(runner.solver.predictive)
    if seq is None:                    # no tables on the runner: count the game's own
        return game_bytes(lowered, itemsize, predictive) * (lowered.batch_size or 1)
    rows = int(np.shape(seq.row_parent)[-1])
    actions = int(np.shape(runner.step_tensors.legal_mask)[-1])
    batched = np.ndim(seq.row_parent) == 2
    members = int(np.shape(seq.row_parent)[0]) if batched else (
        int(np.shape(seq.leaf_value)[2]) if np.ndim(seq.leaf_value) == 3 else 1)
    return profile_passes.iteration_bytes(seq, rows, actions, lowered.num_players,
                                          itemsize=itemsize, members=members,
                                          predictive=predictive)


def sampled_bytes(runner, lowered) -> int | None:
    """A rough bound for a sampling estimator: every slot of its sampled forest (node,
    valid, parent, member: 13 bytes; p, q, the strategy row, reach and values) written and
    read once, and a touched row's two tables read and written, per traverser. ``None``
    when the estimator's plan is not readable."""
    plan = getattr(getattr(getattr(runner, "step_solver", None), "estimator", None), "plan", None)
    if plan is None:
        return None
    f = np.dtype(runner.dtype).itemsize
    p, a = lowered.num_players, lowered.max_actions
    members = runner.batch_members
    slots = members * plan.samples * sum(plan.capacity)
    per_slot = 2 * (13 + (2 + a) * f + (2 * p + 1) * f) + 4 * a * f
    return p * slots * per_slot


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def closest_leduc(nodes: float, limit: int = 75) -> str:
    """The ``leduc_poker(ranks=R)`` whose tree is closest in size to ``nodes``."""
    best = None
    for ranks in range(3, limit + 1):
        text = f"leduc_poker(ranks={ranks})"
        size = jaxcfr.probe_size(jaxcfr.load_game(text)).nodes
        if best is None or abs(size - nodes) < abs(best[1] - nodes):
            best = (text, size)
        if size > nodes:
            break
    return best[0]
