"""Where a public tree's iteration goes: one solver step split into its parts.

Each part is its own jitted program on the game's device tensors (float32 by default),
run once to compile, then timed ``--repeats`` times (the least CPU and wall seconds
kept; CPU is ``time.process_time``, every thread of this process):

* ``step``: one whole iteration of ``--preset`` (``Solver.step``, every player);
* ``estimate``: one player's exact estimate (``PublicExact.estimate``: the reach and
  value passes over ``[N, H]`` hand vectors, and the regrets written into the rows'
  ``[I, A]`` layout), split into ``reach`` (edge probabilities and the reach pass),
  ``value`` (one player's value pass with its terminals) and the rest (``estimate``
  less those two: the action values by slot, the instantaneous regret and the
  ``[D, A, H] -> [I, A]`` transposes);
* ``regret_matching``: the current strategy from the regrets, on ``[I, A]``;
* ``tables``: what is left of the step (``step`` less one estimate per player and one
  regret matching): the rule's updates of the four ``[I, A]`` solver tables.

The ``[I, A]`` parts (``regret_matching``, ``tables`` and the rest of ``estimate``) are
``A`` columns wide for every row, however few of them are legal; ``legal_fraction`` says
how many are.

Usage::

    python benchmarks/profile_public_step.py            # liars_dice(sides=9, tree='public')
    python benchmarks/profile_public_step.py --game "leduc_poker(ranks=13, tree='public')"
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import time

import jax
import numpy as np

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.kernels import public as kernels
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.solver import current_strategy

from benchkit.arguments import checked_game, checked_preset, count


def _timed(fn, repeats: int) -> tuple[float, float]:
    """``(cpu s, wall s)`` of ``fn()`` (its result waited for), least of ``repeats``."""
    jax.block_until_ready(fn())                                          # compile + warm
    best_cpu = best_wall = float("inf")
    for _ in range(repeats):
        cpu, wall = time.process_time(), time.perf_counter()
        jax.block_until_ready(fn())
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_cpu, best_wall


def profile(game: str, preset: str = "dcfr", repeats: int = 3, dtype: str = "float32",
            warm_iterations: int = 10) -> dict:
    """The parts of one iteration of ``preset`` on the public game ``game``, each
    ``{"cpu_s", "wall_s"}``, after ``warm_iterations`` iterations (a non-uniform
    strategy)."""
    dtype = np.dtype(dtype)
    public = jaxcfr.lower_public(jaxcfr.load_game(game))
    s = public.structure
    solver = public_solver(make_solver(preset))
    with precision.scope(dtype):
        t = public_device_tensors(public, dtype)
        hp = solver.hyperparams(dtype)
        state = solver.init(t, dtype=dtype)

        # the tensors and the state are arguments, never constants baked into a program
        step = jax.jit(lambda t, st, hp: solver.step(t, s, solver.start(t, st), hp).state)
        for _ in range(warm_iterations):
            state = step(t, state, hp)
        strategy = jax.jit(lambda t, st: current_strategy(t, st, solver.predictive))
        current = strategy(t, state)
        player = jax.numpy.asarray(0, jax.numpy.int32)
        estimate = jax.jit(lambda t, c, p: solver.estimator.estimate(t, s, c, p).regret)
        edge_of = jax.jit(lambda t, c: kernels.edge_probabilities(t, s, c))
        reach_of = jax.jit(lambda t, c: kernels.reach_pass(t, s, kernels.edge_probabilities(
            t, s, c)))
        value_of = jax.jit(lambda t, e, r, p: kernels.value_pass(t, s, e, r, p))
        edge, reach = edge_of(t, current), reach_of(t, current)
        times = {"step": _timed(lambda: step(t, state, hp), repeats),
                 "estimate": _timed(lambda: estimate(t, current, player), repeats),
                 "reach": _timed(lambda: reach_of(t, current), repeats),
                 "value": _timed(lambda: value_of(t, edge, reach, player), repeats),
                 "regret_matching": _timed(lambda: strategy(t, state), repeats)}
    P = s.num_players
    out = {"game": game, "preset": preset, "dtype": str(dtype),
           "public_nodes": public.num_nodes, "rows": public.num_rows,
           "actions": int(public.tensors.legal_mask.shape[1]),
           "legal_fraction": float(np.mean(public.tensors.legal_mask))}
    for k, (cpu, wall) in times.items():
        out[k] = {"cpu_s": cpu, "wall_s": wall}
    for clock in ("cpu_s", "wall_s"):
        rest = out["estimate"][clock] - out["reach"][clock] - out["value"][clock]
        out.setdefault("estimate_rest", {})[clock] = rest
        tables = out["step"][clock] - P * out["estimate"][clock] - out["regret_matching"][clock]
        out.setdefault("tables", {})[clock] = tables
        # the [I, A]-wide work: the step less the [N, H] passes (reach and value per player)
        wide = out["step"][clock] - P * (out["reach"][clock] + out["value"][clock])
        out.setdefault("rows_share", {})[clock] = wide / out["step"][clock]
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="liars_dice(sides=9, tree='public')")
    parser.add_argument("--preset", default="dcfr")
    parser.add_argument("--repeats", type=count("--repeats"), default=3)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    checked_preset(parser, "--preset", args.preset)         # before the (long) lowering
    checked_game(parser, "--game", args.game, public=True)
    print(json.dumps({"date": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="minutes"), "machine": f"{platform.processor() or platform.machine()}, "
        f"{jax.devices()[0].platform}, jax {jax.__version__}",
        "load_average": os.getloadavg()}))
    print(json.dumps(profile(args.game, args.preset, args.repeats, args.dtype)))


if __name__ == "__main__":
    main()
