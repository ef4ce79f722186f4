"""Device bytes per node resident during a CFR+ run with evaluations (issue 32, item 2).

Sums the ``nbytes`` of every live JAX array (``jax.live_arrays()``) after lowering (the
baseline: nothing on the device), then after a :class:`jaxcfr.Runner` is made, a few
chunks run and the run evaluated (the state, the step's tensors and tables, and whatever
the evaluation left), and splits the figure into the runner's step tensors, its state
and the rest. Float32, one game per invocation::

    python benchmarks/bench_device_memory.py "liars_dice(sides=6)"

On a CPU the device is the host; the count is the same on a GPU (the arrays are the same).
"""

from __future__ import annotations

import argparse
import gc
import json


def _live_bytes() -> int:
    import jax
    gc.collect()
    return int(sum(a.nbytes for a in jax.live_arrays()))


def _tree_bytes(tree) -> int:
    import jax
    return int(sum(x.nbytes for x in jax.tree_util.tree_leaves(tree) if hasattr(x, "nbytes")))


def measure(game: str, iterations: int = 4, sequence_form: bool = True) -> dict:
    import jaxcfr
    lowered = jaxcfr.lower(jaxcfr.load_game(game))
    nodes = lowered.num_nodes
    base = _live_bytes()
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=2,
                           sequence_form=sequence_form, compilation_cache=False)
    state = runner.init()
    state = runner.advance(state, iterations)
    metrics = runner.evaluate(state)
    state = runner.advance(state, iterations)
    metrics = runner.evaluate(state)
    resident = _live_bytes() - base
    step = _tree_bytes(runner.step_tensors)
    st = _tree_bytes(state)
    return {"game": game, "nodes": nodes, "rows": lowered.num_rows,
            "actions": lowered.max_actions, "sequence_form": sequence_form,
            "resident_bytes_per_node": round(resident / nodes, 1),
            "step_tensors_per_node": round(step / nodes, 1),
            "state_per_node": round(st / nodes, 1),
            "other_per_node": round((resident - step - st) / nodes, 1),
            "exploitability": float(metrics["metric"])}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", nargs="?", default="liars_dice(sides=6)")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--node-passes", action="store_true",
                        help="step on the node passes instead of the sequence form")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.game, args.iterations, not args.node_passes)))


if __name__ == "__main__":
    main()
