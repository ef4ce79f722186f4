"""Profile one iteration: time each pass, count the bytes it must move, compare with the bound.

For one game, on the default JAX device:

* each piece of a CFR+ half-step, jitted alone and timed (best of ``--repeats``): the
  sequence form (realisation weights, the leaf pass, each level of the row pass, the
  table updates) and the node passes it replaced (edge probabilities, reach pass,
  value pass, action values), the value pass also level by level;
* the whole iteration in the engine's compiled chunk;
* the bytes each piece must read and write at least (every array it touches once),
  and the memory-bandwidth bound of an iteration: those bytes over the device's
  bandwidth, measured by streaming over a 256 MiB array (or given with ``--bandwidth GB/s``);
* with ``--split D``: the collectives of one iteration of the game split over ``D``
  devices (fake CPU devices unless real ones are there) and the bytes they move, read
  from the compiled program.

Usage::

    python benchmarks/profile_passes.py liars_dice --json profile.json
    python benchmarks/profile_passes.py "liars_dice(dice=1, sides=8)" --bandwidth 4800   # H200
    python benchmarks/profile_passes.py leduc_poker --split 4
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time


def _best(fn, *args, repeats: int) -> float:
    import jax
    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def bandwidth_gbs(repeats: int) -> float:
    """Streaming bandwidth of the default device, GB/s: 8 in-place passes (read and
    write) over a 256 MiB array inside one compiled loop (no allocation in the timing)."""
    import jax
    import jax.numpy as jnp
    x = jnp.ones(64 * 2**20, jnp.float32)
    passes = 8
    run = jax.jit(lambda x: jax.lax.fori_loop(0, passes, lambda i, y: y * 0.999 + 0.001, x),
                  donate_argnums=0)
    holder = [run(x)]

    def again():
        holder[0] = run(holder[0])
        return holder[0]
    ms = _best(again, repeats=repeats)
    return 2 * passes * x.nbytes / (ms * 1e-3) / 1e9


#: Names of the sequence-form pieces of a half-step, as :func:`profile` times them.
RM, WEIGHTS, LEAVES, UPDATES, PREDICTION = (
    "regret matching [I, A]", "realisation weights [I, K] gathers",
    "leaf pass [T] (gather, sorted scatter)", "regret + table updates [I, A]",
    "prediction read and written [I, A]")


def sequence_bytes(tables, rows: int, actions: int, players: int, *, itemsize: int = 4,
                   members: int = 1, predictive: bool = False) -> dict[str, int]:
    """The bytes one half-step of the sequence form must move at least, per piece.

    Every array a piece reads or writes, counted once: indices (4 bytes) and masks
    (1 byte) once, floats (``itemsize`` bytes) once per member of a stack that shares
    one tree (``members``: the trailing batch of ``payoff``/the state). ``tables`` is a
    :class:`jaxcfr.kernels.sequence.SequenceTables` (only its shapes are read: ``T`` leaves
    ``leaf_own [P, T]``, ``K`` ancestors ``row_ancestors [I, K]``, the level widths
    ``level_rows[d] [P, R_d]``). ``predictive`` adds the prediction table (PCFR+).

    With ``members=1`` and ``itemsize=4`` these are the byte counts :func:`profile` prints.
    """
    f, ia, b = itemsize, rows * actions, members
    leaves = int(tables.leaf_own.shape[-1])
    ancestors = (int(tables.row_ancestors.shape[-1]) if tables.row_ancestors is not None
                 else max(len(tables.level_rows), 1))      # (a lean device's: derived)
    out = {
        RM: ia + b * ia * 2 * f,                                   # mask; regret in, strategy out
        WEIGHTS: rows * ancestors * 4 + b * (rows * ancestors * f + rows * f),
        # indices (own + others) of T leaves; their values, the others' gathered weights,
        # the scattered product; the weights x and values q [I, A]
        LEAVES: leaves * players * 4
        + b * (leaves * (f + (players - 1) * f + 2 * f) + 2 * ia * f),
    }
    for d, level in enumerate(tables.level_rows):
        width = int(level.shape[-1])
        # member and parent indices; strategy and q of the members, q of the parents, v
        out[f"row pass, level {d + 1} [{width} rows]"] = width * 2 * 4 \
            + b * width * (3 * actions * f + f)
    out[UPDATES] = ia + b * ia * 7 * f
    if predictive:
        out[PREDICTION] = b * ia * 2 * f
    return out


def iteration_bytes(tables, rows: int, actions: int, players: int, **kw) -> int:
    """Bytes of one alternating iteration: one half-step per player (:func:`sequence_bytes`)."""
    return players * sum(sequence_bytes(tables, rows, actions, players, **kw).values())


def profile(game: str, repeats: int, bandwidth: float | None) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxcfr
    from jaxcfr.kernels import numerics
    from jaxcfr.kernels import passes
    from jaxcfr.kernels import sequence
    from jaxcfr.tensors import to_device

    lowered = jaxcfr.lower(jaxcfr.load_game(game))
    t = to_device(lowered.tensors, np.float32)
    s = lowered.structure
    tables = sequence.sequence_tables(lowered.tensors, lowered.level_start, s.num_players)
    seq = jax.tree_util.tree_map(jnp.asarray, tables)
    rows, actions = lowered.num_rows, lowered.max_actions
    n, p = lowered.num_nodes, s.num_players
    leaves = tables.leaf_own.shape[1]
    ia = rows * actions
    mask = t.legal_mask
    rng = np.random.default_rng(0)
    raw = jnp.asarray(rng.random((rows, actions)) - 0.3, jnp.float32)
    strategy = passes.regret_matching(raw, mask)
    player = jnp.asarray(0)
    f4 = 4
    pieces = {}

    def piece(name, fn, args, nbytes):
        pieces[name] = {"ms": _best(jax.jit(fn), *args, repeats=repeats), "bytes": int(nbytes)}

    # -- the sequence form (what the solver runs) --
    counted = sequence_bytes(tables, rows, actions, p)
    piece(RM, lambda r: passes.regret_matching(r, mask), (raw,), counted[RM])
    piece(WEIGHTS, lambda st: sequence.realisation_weights(seq, st), (strategy,),
          counted[WEIGHTS])
    weight = sequence.realisation_weights(seq, strategy)

    def leaf_pass(st, w):
        x = (w[:, None] * st).reshape(-1)
        own = seq.leaf_own[0]
        value = seq.leaf_value[0]
        for j in range(p - 1):
            value = value * x.at[seq.leaf_others[0, j]].get(mode="promise_in_bounds")
        return jnp.zeros(ia).at[own].add(value, indices_are_sorted=True,
                                         mode="promise_in_bounds")
    piece(LEAVES, leaf_pass, (strategy, weight), counted[LEAVES])
    q = leaf_pass(strategy, weight)
    for d, level in enumerate(seq.level_rows):
        width = int(level.shape[1])

        def row_level(q, st, level=level):
            members = level[0]
            v = numerics.action_sum(st[members] * q.reshape(rows, actions)[members])
            return q.at[seq.row_parent[members]].add(v, mode="promise_in_bounds")
        name = f"row pass, level {d + 1} [{width} rows]"
        piece(name, row_level, (q, strategy), counted[name])
    piece("counterfactual values (whole, one player)",
          lambda st: sequence.counterfactual_action_values(seq, st, player[None], p),
          (strategy,), 0)
    piece(UPDATES,
          lambda q, st, r: (jnp.maximum(r + numerics.instantaneous_regret(q, st, mask), 0),
                            r * 0.5 + st), (q.reshape(rows, actions), strategy, raw),
          counted[UPDATES])
    # -- the node passes (what it replaced; still used by the analytics) --
    piece("node: edge probabilities [N]", lambda st: passes.edge_probabilities(t, st),
          (strategy,), n * (2 * f4 + f4) + ia * f4)
    edge = passes.edge_probabilities(t, strategy)
    piece("node: reach pass [N, P+1]", lambda e: passes.reach_pass(t, s, e), (edge,),
          n * (f4 + f4 + f4 + (p + 1) * f4))
    piece("node: value pass [N]", lambda e: passes.value_pass(t, s, e, player[None]), (edge,),
          n * (f4 + f4 + p * f4 + 2 * f4))
    reach = passes.reach_pass(t, s, edge)
    values = passes.value_pass(t, s, edge, player[None])
    piece("node: action values [N] -> [I, A]",
          lambda r, v: passes.action_values(t, s, passes.opponent_reach(r), v, rows, actions,
                                            player[None]), (reach, values),
          n * ((p + 1) * f4 + 3 * f4 + f4) + ia * f4)
    levels = s.level_start
    for d in range(len(levels) - 2, 0, -1):
        lo, hi, end = levels[d - 1], levels[d], levels[d + 1]

        def value_level(e, v, lo=lo, hi=hi, end=end):
            child = slice(hi, end)
            return passes.segment_sum(e[child] * v, t.parent[child] - lo, hi - lo,
                                      sorted_ids=True)
        piece(f"node: value pass level {d} [{end - hi} nodes]", value_level,
              (edge, jnp.ones(end - hi)), (end - hi) * 3 * f4 + (hi - lo) * f4)
    # -- the whole iteration, in the engine --
    out = {"game": game, "nodes": n, "leaves": leaves, "rows": rows, "actions": actions,
           "players": p, "pieces": pieces}
    for name, solver in (("cfr+", jaxcfr.cfr_plus()), ("cfr", jaxcfr.cfr())):
        for sequence_form in (True, False):
            runner = jaxcfr.Runner(lowered, solver, chunk=16, sequence_form=sequence_form)
            holder = [runner.advance(runner.init(), 16)]

            def chunk():
                holder[0] = runner.advance(holder[0], 16)
                return holder[0]
            key = f"{name} iteration ({'sequence form' if sequence_form else 'node passes'})"
            out[key + " ms"] = _best(chunk, repeats=max(2, repeats // 4)) / 16
    # the least an alternating iteration must move: per half-step the leaf pass, the row
    # passes, weights, regret matching and the table updates (each array once)
    half = sum(v["bytes"] for k, v in pieces.items() if not k.startswith("node"))
    out["bytes per CFR+ iteration (sequence form)"] = 2 * half
    node_half = sum(v["bytes"] for k, v in pieces.items() if k.startswith("node: ")
                    and "level" not in k) + pieces["regret + table updates [I, A]"]["bytes"] \
        + pieces["regret matching [I, A]"]["bytes"]
    out["bytes per CFR+ iteration (node passes)"] = 2 * node_half
    out["bandwidth GB/s"] = bandwidth or bandwidth_gbs(repeats)
    out["bandwidth source"] = "given" if bandwidth else "measured (8 in-place passes over 256 MiB)"
    for kind in ("sequence form", "node passes"):
        bound = out[f"bytes per CFR+ iteration ({kind})"] / (out["bandwidth GB/s"] * 1e9) * 1e3
        out[f"bound ms per CFR+ iteration ({kind})"] = bound
    import jax as _jax
    device = _jax.devices()[0]
    out["device"] = f"{device.platform}: {getattr(device, 'device_kind', device)}"
    return out


_COLLECTIVE = re.compile(r"= (\(?[^=]*?\)?) (all-gather|all-reduce|reduce-scatter|"
                         r"collective-permute|all-to-all)(-start)?\(")
_SHAPE = re.compile(r"(f32|f64|s32|u32|pred|s8|bf16|f16)\[([0-9,]*)\]")
_BYTES = {"f32": 4, "f64": 8, "s32": 4, "u32": 4, "pred": 1, "s8": 1, "bf16": 2, "f16": 2}


def collectives(game: str, devices: int) -> dict:
    """Collectives of one chunk of CFR+ on ``game`` split over ``devices`` devices."""
    import jax
    import jax.numpy as jnp

    import jaxcfr
    from jaxcfr.engine.runner import _run_chunk
    lowered = jaxcfr.lower(jaxcfr.load_game(game))
    out = {}
    for sequence_form in (True, False):
        runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=1,
                               mesh=jaxcfr.batch_mesh(devices), sequence_form=sequence_form)
        with runner.scope():
            text = _run_chunk.lower(
                runner.step_tensors, runner.init(), runner.hp, jnp.asarray(1, jnp.int32),
                solver=runner.solver.static_key(), structure=runner.step_structure,
                layout=runner.layout, chunk=1).compile().as_text()
        found = {}
        for shapes, op, _ in _COLLECTIVE.findall(text):
            size = sum(_BYTES[dt] * int(jnp.prod(jnp.asarray([int(x) for x in dims.split(",")
                                                               if x] or [1])))
                       for dt, dims in _SHAPE.findall(shapes))
            entry = found.setdefault(op, {"count": 0, "bytes": 0})
            entry["count"] += 1
            entry["bytes"] += int(size)
        kind = "sequence form" if sequence_form else "node passes"
        out[kind] = {"collectives per iteration": found,
                     "bytes per iteration (per device, output sizes)":
                         sum(v["bytes"] for v in found.values()),
                     "rows x actions x 4 bytes": runner.device_lowered.num_rows
                     * lowered.max_actions * 4}
    del jax
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", help="a game string, e.g. liars_dice or leduc_poker")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--bandwidth", type=float, help="device bandwidth in GB/s (else measured)")
    parser.add_argument("--split", type=int, default=0,
                        help="also list the collectives of the game split over this many devices")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    if args.split:
        flag = f"--xla_force_host_platform_device_count={args.split}"
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()
    result = profile(args.game, args.repeats, args.bandwidth)
    if args.split:
        result["split"] = {"devices": args.split, **collectives(args.game, args.split)}
    for key, value in result.items():
        if key == "pieces":
            for name, piece in value.items():
                rate = piece["bytes"] / (piece["ms"] * 1e-3) / 1e9 if piece["bytes"] else 0
                print(f"  {name:44s} {piece['ms']:9.4f} ms  {piece['bytes'] / 1e6:8.2f} MB  "
                      f"{rate:6.1f} GB/s")
        else:
            print(f"{key}: {json.dumps(value) if isinstance(value, dict) else value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
