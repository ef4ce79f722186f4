"""Golden tables: a refactor's bit-for-bit check of every path a solve can take.

``python benchmarks/golden.py run OUT.npz`` runs, on small games (Kuhn, Leduc, a small
Liar's dice), each preset, each Monte Carlo estimator (one by one and as counts, under an
alternating and a simultaneous update), the node passes beside the sequence form, sampled
chance, a subgame re-solve with each gadget, sweeps of settings and seeds (one compiled
step each) and every stack layout (map, vmap, shared, forest), a few iterations each, and
writes every table (regrets, strategy sums, their errors, predictions, averages, metric
values) to ``OUT.npz``, one key per ``case/table``.

``python benchmarks/golden.py compare BEFORE.npz AFTER.npz`` prints the largest absolute
difference of each case and exits 1 unless every table is exactly equal (same keys,
shapes, dtypes and bits; NaN equal to NaN).

Keep golden outputs out of the repository. A run takes about a minute on two cores.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

ITERATIONS = 4
DICE = "liars_dice(dice=1, sides=3)"


def _state(out: dict, case: str, state) -> None:
    for field, table in state.arrays().items():       # the tables its solver keeps
        out[f"{case}/{field}"] = np.asarray(table)


def _records(out: dict, case: str, records) -> None:
    from jaxcfr.solvers.metric_record import TIMING_KEYS    # measured, not computed
    for i, record in enumerate(records):
        for key, value in record.items():
            if key in TIMING_KEYS or value is None or isinstance(value, str):
                continue
            try:
                array = np.asarray(value, dtype=np.float64)
            except (TypeError, ValueError):
                continue
            out[f"{case}/record{i}/{key}"] = array


def _solved(out: dict, case: str, result) -> None:
    _state(out, case, result.state)
    out[f"{case}/average"] = np.asarray(result.average_strategy)
    _records(out, case, result.metrics)


def run(path: str) -> None:
    # a program or lowered game kept on disk must not stand in for the code under test
    os.environ["JAXCFR_NO_CACHE"] = "1"
    import jaxcfr
    from jaxcfr.subgames import resolve_subgames

    out: dict[str, Any] = {}
    solve = jaxcfr.solve
    kuhn, leduc = (jaxcfr.lower(jaxcfr.load_game(g)) for g in ("kuhn_poker", "leduc_poker"))

    for preset in jaxcfr.ALGORITHMS:                      # every preset, exact, sequence form
        _solved(out, f"preset/{preset}/kuhn", solve(kuhn, preset, ITERATIONS, eval_every=2))
    for preset in ("cfr", "cfr+", "pdcfr+"):
        _solved(out, f"preset/{preset}/leduc", solve(leduc, preset, ITERATIONS))
    _solved(out, "preset/cfr+/dice", solve(DICE, "cfr+", ITERATIONS))

    for cls in (jaxcfr.ChanceSampling, jaxcfr.ExternalSampling, jaxcfr.OutcomeSampling):
        for counts in (False, True):
            est = cls(samples=2, counts=counts)
            tag = f"estimator/{est.name}{'-counts' if counts else ''}"
            _solved(out, f"{tag}/leduc-cfr+", solve(leduc, "cfr+", ITERATIONS, estimator=est,
                                                     seed=3))
            _solved(out, f"{tag}/kuhn-cfr", solve(kuhn, "cfr", ITERATIONS, estimator=est,
                                                  seed=5))
            if counts:                                          # counts on the node passes
                runner = jaxcfr.Runner(leduc, jaxcfr.make_solver("dcfr", estimator=est),
                                       {"seed": 1}, sequence_form=False)
                _state(out, f"{tag}/leduc-dcfr-nodes",
                       runner.advance(runner.init(), ITERATIONS))

    # depth-first walks (jaxcfr.kernels.walk): each scheme, the output pool's chunks (a
    # pool of 1 slot a lane: every step overflows), lanes that take the next traversal
    # (256 traversals a step and more), predictive and compensated tables, Liar's dice
    walks = [(cls(samples=2, walk="depth"), game, preset, seed)
             for cls in (jaxcfr.ChanceSampling, jaxcfr.ExternalSampling,
                         jaxcfr.OutcomeSampling)
             for game, preset, seed in ((leduc, "cfr+", 3), (kuhn, "cfr", 5))]
    walks += [(jaxcfr.ExternalSampling(samples=2, walk="depth", pool=1), leduc, preset, 6)
              for preset in ("cfr", "pcfr+")]
    walks += [(jaxcfr.OutcomeSampling(samples=8, walk="depth", pool=1), leduc, "cfr+", 7),
              (jaxcfr.ExternalSampling(samples=128, walk="depth"), kuhn, "cfr", 8),
              (jaxcfr.OutcomeSampling(samples=128, walk="depth"), leduc, "lcfr", 9),
              (jaxcfr.ExternalSampling(walk="depth"), DICE, "cfr", 10),
              (jaxcfr.OutcomeSampling(samples=4, walk="depth"), DICE, "cfr+", 11)]
    for i, (est, game, preset, seed) in enumerate(walks):
        _solved(out, f"walk/{i}-{est.name}-x{est.samples}-pool{est.pool}/{preset}",
                solve(game, preset, ITERATIONS, estimator=est, seed=seed))

    runner = jaxcfr.Runner(leduc, jaxcfr.make_solver("pcfr+"), sequence_form=False)
    _state(out, "nodes/pcfr+/leduc", runner.advance(runner.init(), ITERATIONS))

    for game, tag in (("leduc_poker", "leduc"), (DICE, "dice")):
        _solved(out, f"chance/sampled/{tag}", solve(
            game, "cfr+", ITERATIONS, chance=jaxcfr.Chance("sampled", draws=3), seed=2))
    _solved(out, "chance/sampled-lcfr/leduc", solve("leduc_poker", "lcfr", ITERATIONS,
                                                    chance="sampled", seed=4))
    _solved(out, "chance/exact/leduc", solve("leduc_poker", "cfr+", ITERATIONS, chance="exact"))

    _solved(out, "sweep/dcfr-alpha/leduc", solve(leduc, "dcfr", ITERATIONS,
                                                  alpha=[1.0, 1.5, 2.0], gamma=[2.0, 2.0, 3.0]))
    _solved(out, "sweep/seeds-external/leduc", solve(
        leduc, "cfr+", ITERATIONS, estimator=jaxcfr.ExternalSampling(samples=2), seed=[0, 1]))
    _solved(out, "sweep/exploration/kuhn", solve(
        kuhn, "cfr+", ITERATIONS, estimator=jaxcfr.OutcomeSampling(counts=True),
        exploration=[0.3, 0.6], seed=[7, 8]))

    small = jaxcfr.lower(jaxcfr.load_game("leduc_poker(ranks=3)"))
    stacks = {"map": [kuhn, small], "shared": [kuhn] * 16, "forest": [kuhn, small] * 8}
    for layout, games in stacks.items():
        _solved(out, f"layout/{layout}", solve(jaxcfr.stack(games), "cfr+", ITERATIONS))
    _solved(out, "layout/vmap", solve(jaxcfr.stack([kuhn, small]), "cfr+", ITERATIONS,
                                      estimator=jaxcfr.ExternalSampling(), seed=1))

    blueprint = solve(kuhn, "cfr", 20).profile
    for gadget in ("resolve", "maxmargin", "reach", "unsafe"):
        result = resolve_subgames(kuhn, blueprint, [[2, 0, "pass"], [1, 2, "pass"]],
                                  gadget=gadget, iterations=ITERATIONS)
        out[f"gadget/{gadget}/table"] = np.asarray(result.table)
        out[f"gadget/{gadget}/nash_conv"] = np.asarray(
            [s["nash_conv"] for s in result.subgames], dtype=np.float64)
        _records(out, f"gadget/{gadget}", [result.metrics])
    np.savez_compressed(path, **out)
    print(f"{len(out)} tables of {len({k.rsplit('/', 1)[0] for k in out})} cases -> {path}")


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")))
    return bool(np.array_equal(a, b))


def compare(before: str, after: str) -> int:
    a, b = np.load(before), np.load(after)
    ok = True
    for key in sorted(set(a.files) - set(b.files)):
        print(f"MISSING in {after}: {key}")
        ok = False
    for key in sorted(set(b.files) - set(a.files)):
        print(f"NEW in {after}: {key}")
        ok = False
    cases: dict[str, float] = {}
    for key in sorted(set(a.files) & set(b.files)):
        x, y = a[key], b[key]
        case = key.rsplit("/", 1)[0]
        if not _equal(x, y):
            ok = False
            diff = (float(np.nanmax(np.abs(x.astype(np.float64) - y.astype(np.float64))))
                    if x.shape == y.shape else float("inf"))
            print(f"DIFFERS {key}: shape {x.shape}/{y.shape} dtype {x.dtype}/{y.dtype} "
                  f"max abs {diff:.3g}")
            cases[case] = max(cases.get(case, 0.0), diff)
        else:
            cases.setdefault(case, 0.0)
    for case, diff in cases.items():
        print(f"{case:50s} max abs diff {diff:.3g}")
    print("ALL EQUAL" if ok else "NOT EQUAL")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
