"""Lowering benchmarks: walk speed (serial and parallel), the cache, memory per node, and
the cost per node against a plain walk of the same game.

Three measurements (``python benchmarks/bench.py --lowering`` / ``--memory`` run the first two):

* ``speed``: nodes per second of ``jaxcfr.lower`` with 1 worker and with several,
  side by side in the same run (best of ``--repeats``), with the CPU seconds of the
  parent and of the worker processes; then the cache: storing the entry and loading it.
* ``memory``: per game, in a fresh process each: the host's peak while lowering
  (``VmHWM`` after resetting it, minus the resident size before), the lowered game
  kept, and the peak of a short solve (compile, two chunks of CFR+, one evaluation),
  plus XLA's memory analysis of the compiled chunk and evaluation; each beside
  :func:`jaxcfr.memory_footprint`, in bytes per node. On a CPU the device is the host.
* ``nodes``: nodes per CPU-second of this process (one worker) of ``jaxcfr.lower``, of
  its walk alone, of the game calls the walk makes and nothing else (the contract's
  floor), and of a plain Python walk of the same game (kind, moves, the acting player's
  key, returns: what any enumeration asks); in interleaved rounds, best of ``--repeats``;
  on Liar's dice, Goofspiel-6, Leduc with 13 ranks and chains of 2,500 to 100,000 moves.

Usage::

    python benchmarks/bench_lowering.py speed --games liars_dice "goofspiel(cards=6)" --workers 1 2
    python benchmarks/bench_lowering.py speed --workers 1 2 16 --breakdown   # the parent's phases
    python benchmarks/bench_lowering.py memory --games leduc_poker liars_dice --json memory.json
    python benchmarks/bench_lowering.py nodes --chains 2500 10000 100000 --json nodes.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

SPEED_GAMES = ["liars_dice", "goofspiel(cards=6)", "liars_dice(sides=7)"]
MEMORY_GAMES = ["leduc_poker", "goofspiel(cards=5)", "liars_dice", "kuhn_poker(players=5)",
                "goofspiel(cards=6)", "liars_dice(sides=7)"]
NODE_GAMES = ["liars_dice", "goofspiel(cards=6)", "leduc_poker(ranks=13)"]
CHAINS = [2_500, 10_000, 100_000]


# -- speed -------------------------------------------------------------------------------
def _cpu() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


class _Phases:
    """The parent's CPU seconds (``time.process_time``) in the parallel walk's phases, while
    active: ``cut`` (the top walk), ``merge`` (the parts as they arrive, unpickling
    included: overlapped with the workers' walk), ``finish`` (the levels put together
    after the last part), ``build`` (the tensors), ``walk`` (the serial walk, 1 worker)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.undo: list = []

    def __enter__(self):
        from jaxcfr.lowering import lower, parallel, parts
        for owner, name, phase in ((parallel, "cut", "cut"), (parts.Merge, "add_part", "merge"),
                                   (parts.Merge, "finish", "finish"), (lower, "_build", "build"),
                                   (lower, "walk", "walk"), (parallel.pickle, "loads", "merge")):
            self._wrap(owner, name, phase)
        return self

    def _wrap(self, owner, name, phase) -> None:
        real = getattr(owner, name)
        seconds = self.seconds

        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return real(*args, **kwargs)
            finally:
                seconds[phase] = seconds.get(phase, 0.0) + time.process_time() - start
        setattr(owner, name, timed)
        self.undo.append((owner, name, real))

    def __exit__(self, *exc):
        for owner, name, real in reversed(self.undo):
            setattr(owner, name, real)


def bench_speed(game_string: str, workers: list[int], repeats: int,
                breakdown: bool = False) -> dict:
    import contextlib

    import jaxcfr
    from jaxcfr.lowering import cache
    game = jaxcfr.load_game(game_string)
    out: dict = {"game": game_string, "walk": {}}
    for _ in range(repeats):
        for w in workers:
            gc.collect()
            phases = _Phases() if breakdown else contextlib.nullcontext()
            with phases:
                cpu0, child0 = _cpu()
                start = time.perf_counter()
                lowered = jaxcfr.lower(game, workers=w, memory_budget=1 << 50)
                wall = time.perf_counter() - start
                cpu1, child1 = _cpu()
            best = out["walk"].get(w)
            if best is None or wall < best["seconds"]:
                out["walk"][w] = {"seconds": wall, "nodes_per_second": lowered.num_nodes / wall,
                                  "cpu_parent": cpu1 - cpu0, "cpu_workers": child1 - child0}
                if breakdown:
                    out["walk"][w]["phases"] = phases.seconds
    out["nodes"] = lowered.num_nodes
    serial = out["walk"].get(1)
    for w, r in out["walk"].items():
        r["speedup"] = serial["seconds"] / r["seconds"] if serial else None
    with tempfile.TemporaryDirectory() as directory:
        start = time.perf_counter()
        cache.lower_cached(game_string, directory, lambda g: lowered, name=game_string)
        store = time.perf_counter() - start
        hits = []
        for _ in range(repeats):
            start = time.perf_counter()
            _, status = cache.lower_cached(game_string, directory, jaxcfr.lower,
                                           name=game_string)
            hits.append(time.perf_counter() - start)
            assert status.startswith("hit"), status
        size = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    out["cache"] = {"store_seconds": store, "hit_seconds": min(hits), "entry_bytes": size}
    return out


# -- memory ------------------------------------------------------------------------------
def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_peak() -> None:
    """Reset VmHWM to the current resident size (Linux: ``echo 5 > clear_refs``)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def measure_memory(game_string: str, workers: int = 1) -> dict:
    """Measured in this process: run it in a fresh one (see ``memory`` below)."""
    import jax

    import jaxcfr
    from jaxcfr.solvers.analytics import _metrics
    jax.numpy.zeros(1).block_until_ready()            # start the backend first
    game = jaxcfr.load_game(game_string)
    gc.collect()
    base = _status("VmRSS")
    _reset_peak()
    lowered = jaxcfr.lower(game, workers=workers, memory_budget=1 << 50)
    lowering_peak = _status("VmHWM") - base
    gc.collect()
    kept = _status("VmRSS") - base
    n, rows, a, p = lowered.num_nodes, lowered.num_rows, lowered.max_actions, lowered.num_players
    host_tables = (lowered.preorder.nbytes + 8 * len(lowered.node_action)
                   + sum(sys.getsizeof(k) for _, k in lowered.infoset_keys))
    base2 = _status("VmRSS")
    _reset_peak()
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
    state, _ = runner.compile(runner.init())
    state = runner.advance(state, 2 * runner.chunk)
    runner.evaluate(state)
    jax.block_until_ready(state)
    solve_peak = _status("VmHWM") - base2
    # XLA's own accounting of the two compiled programs.
    with runner.scope():
        chunk = runner.chunk_program(state).compile().memory_analysis()
        table = runner._profile(state, True)
        # the evaluation the run makes: its kernel on its tensors (the sequence form's
        # tables, no node arrays, where the run keeps those on the host)
        metrics = _metrics.lower(runner._evaluation_tensors(), table,
                                 jax.numpy.asarray(lowered.br_rounds),
                                 structure=lowered.structure, games_batched=False,
                                 normalise=False, values=runner.evaluation_values
                                 ).compile().memory_analysis()

    def stats(m) -> dict:
        return {k: int(getattr(m, f"{k}_size_in_bytes")) for k in
                ("argument", "output", "temp", "alias", "generated_code")}

    est = jaxcfr.memory_footprint(n, rows, a, p)
    return {"game": game_string, "workers": workers, "nodes": n, "rows": rows,
            "max_actions": a, "players": p,
            "measured": {"lowering_peak": lowering_peak, "lowered_kept": kept,
                         "lowered_tensors": lowered.nbytes, "host_tables": host_tables,
                         "solve_peak": solve_peak, "chunk": stats(chunk),
                         "evaluate": stats(metrics)},
            "estimate": est._asdict()}


def memory(games: list[str], workers: int) -> list[dict]:
    """One fresh process per game (resident sizes are per process)."""
    out = []
    for g in games:
        proc = subprocess.run([sys.executable, __file__, "_one", g, str(workers)],
                              capture_output=True, text=True, check=False)
        if proc.returncode:
            print(proc.stderr, file=sys.stderr)
            continue
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def _per_node(x: float, n: int) -> str:
    return f"{x / n:7.1f}"


def print_memory(results: list[dict]) -> None:
    print("bytes per node: measured (estimate)")
    print(f"{'game':24} {'nodes':>11} {'lowering peak':>18} {'kept':>8} {'tensors':>8} "
          f"{'solve peak':>18} {'XLA chunk+eval':>15} {'total':>18}")
    for r in results:
        n, m, e = r["nodes"], r["measured"], r["estimate"]
        xla = (m["chunk"]["argument"] + m["chunk"]["temp"] + m["evaluate"]["temp"])
        total = max(m["lowering_peak"], m["lowered_kept"] + m["solve_peak"])
        print(f"{r['game']:24} {n:>11,} {_per_node(m['lowering_peak'], n)} "
              f"({_per_node(e['lowering'], n)}) {_per_node(m['lowered_kept'], n)} "
              f"{_per_node(m['lowered_tensors'], n)} {_per_node(m['solve_peak'], n)} "
              f"({_per_node(e['device'], n)}) {_per_node(xla, n):>15} "
              f"{_per_node(total, n)} ({_per_node(e['total'], n)})")


def print_speed(results: list[dict]) -> None:
    for r in results:
        walk = "  ".join(f"{w} worker{'s' if w > 1 else ''}: {x['nodes_per_second']:,.0f} n/s "
                         f"({x['seconds']:.2f} s, x{x['speedup']:.2f}, cpu {x['cpu_parent']:.2f}"
                         f"+{x['cpu_workers']:.2f} s)" for w, x in sorted(r["walk"].items()))
        c = r["cache"]
        print(f"{r['game']:22} {r['nodes']:>11,} nodes  {walk}")
        print(f"{'':22} cache: store {c['store_seconds']:.2f} s, hit {c['hit_seconds']:.3f} s, "
              f"entry {c['entry_bytes'] / r['nodes']:.1f} B/node")
        for w, x in sorted(r["walk"].items()):
            if "phases" in x:
                ph = x["phases"]
                rest = x["cpu_parent"] - sum(ph.values())
                print(f"{'':22} {w} worker{'s' if w > 1 else ''}, parent CPU s: "
                      + ", ".join(f"{k} {v:.3f}" for k, v in ph.items()) + f", other {rest:.3f}")


# -- per node: lowering against a plain walk of the same game --------------------------------
def _chain(length: int):
    """``length`` decisions of one player, "go" on or "stop": a path ``length`` moves deep
    with an information set per move (where a history built per new row is quadratic)."""
    from jaxcfr import TERMINAL, Game, GameError

    class Chain(Game):
        num_players = 1

        def __init__(self, at: int = 0):
            self.at = at            # moves made; -1 - moves once stopped

        def clone(self):
            return Chain(self.at)

        def is_terminal(self):
            return self.at < 0

        def is_chance(self):
            return False

        def player_to_act(self):
            return TERMINAL if self.at < 0 else 0

        def chance_outcomes(self):
            return None

        def sample_chance(self, rng):
            raise GameError("no chance here")

        def legal_actions(self):
            return [] if self.at < 0 else ["go", "stop"] if self.at < length - 1 else ["stop"]

        def step(self, action):
            if action not in self.legal_actions():
                raise GameError(f"illegal action {action!r}", rule="illegal-action")
            self.at = self.at + 1 if action == "go" else -1 - self.at

        def terminal_returns(self):
            return (float(-1 - self.at),)

        def infoset_key(self, player):
            return self.at

    return Chain()


def plain_walk(game, contract: bool = False) -> int:
    """Every node of ``game``, asking what any enumeration asks (kind, moves, the acting
    player's key, returns) and checking nothing; the number of nodes. With ``contract``,
    also the game calls the lowering walk makes for the contract's rules (at a terminal:
    node type, player, the returns twice, no legal actions, ``step`` refused; at a
    decision: its chance outcomes), recording nothing: the contract's floor."""
    from jaxcfr import GameError
    stack, nodes = [game.clone()], 0
    while stack:
        state = stack.pop()
        nodes += 1
        if state.is_terminal():
            state.terminal_returns()
            if contract:
                state.is_chance(), state.player_to_act(), state.legal_actions()
                state.terminal_returns()
                try:
                    state.step(None)
                except GameError:
                    pass
            continue
        if state.is_chance():
            actions = [a for a, _ in state.chance_outcomes()]
            if contract:
                state.legal_actions(), state.player_to_act()
        else:
            actions = tuple(state.legal_actions()) if contract else state.legal_actions()
            if contract:
                state.chance_outcomes()
            state.infoset_key(state.player_to_act())
        for a in actions:
            child = state.clone()
            child.step(a)
            stack.append(child)
    return nodes


def bench_nodes(what: str | int, repeats: int) -> dict:
    """Nodes per CPU-second of lowering, the walk, the contract's calls and a plain walk."""
    import jaxcfr
    from jaxcfr.lowering.walk import walk
    game = _chain(what) if isinstance(what, int) else jaxcfr.load_game(what)
    runs = {"lower": lambda: jaxcfr.lower(game, workers=1, memory_budget=1 << 50).num_nodes,
            "walk": lambda: len(walk(game, game.num_players, None)),
            "contract": lambda: plain_walk(game, contract=True), "plain": lambda: plain_walk(game)}
    best: dict[str, float] = {}
    for _ in range(repeats):
        for name, run in runs.items():
            gc.collect()
            start = time.process_time()
            nodes = run()
            best[name] = min(best.get(name, float("inf")), time.process_time() - start)
    return {"game": what if isinstance(what, str) else f"chain({what:,})", "nodes": nodes,
            "cpu_seconds": best, "nodes_per_cpu_second": {k: nodes / v for k, v in best.items()},
            "lower_over_plain": best["lower"] / best["plain"]}


def print_nodes(results: list[dict]) -> None:
    print("nodes per CPU-second (this process, 1 worker); lowering's CPU over a plain walk's")
    print(f"{'game':24} {'nodes':>11} {'lower':>10} {'walk':>10} {'contract':>10} "
          f"{'plain walk':>11} {'lower/plain':>11}")
    for r in results:
        v = r["nodes_per_cpu_second"]
        print(f"{r['game']:24} {r['nodes']:>11,} {v['lower']:>10,.0f} {v['walk']:>10,.0f} "
              f"{v['contract']:>10,.0f} {v['plain']:>11,.0f} {r['lower_over_plain']:>10.2f}x")


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] == "_one":
        print(json.dumps(measure_memory(argv[1], int(argv[2]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("speed", "memory", "nodes"))
    parser.add_argument("--games", nargs="+")
    parser.add_argument("--chains", nargs="*", type=int, default=CHAINS,
                        help="nodes: chain lengths (moves)")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, os.cpu_count() or 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true",
                        help="speed: the parent's CPU seconds by phase of the parallel walk")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    machine = {"machine": platform.machine(), "processor": platform.processor(),
               "cores": os.cpu_count(), "python": platform.python_version(),
               "date": time.strftime("%Y-%m-%d")}
    print(json.dumps(machine))
    if args.what == "speed":
        results = [bench_speed(g, args.workers, args.repeats, args.breakdown)
                   for g in args.games or SPEED_GAMES]
        print_speed(results)
    elif args.what == "nodes":
        games = (args.games if args.games is not None else NODE_GAMES) + list(args.chains)
        results = [bench_nodes(g, args.repeats) for g in games]
        print_nodes(results)
    else:
        results = memory(args.games or MEMORY_GAMES, args.workers[0])
        print_memory(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
