"""The solvers ``benchmarks/bench.py`` times, each run the way its own documentation runs it.

Every peer is a small class with the same three methods, built inside its own worker
process (so a slow or memory-hungry setup can be stopped without losing the run):

* ``__init__(game, algorithm)``: the setup (loading, tree walks, compilation), not timed
  per iteration;
* ``step(n)``: ``n`` more iterations, finished (device work included) when it returns;
* ``exploitability()``: ``{"current": ..., "average": ...}``, the exploitability
  (NashConv / 2, OpenSpiel's ``exploitability``) of the current iterate (``None`` where
  the peer does not expose it) and of the average strategy, for the equal-work check:
  identical iterates prove identical work, whatever each peer's averaging convention;
* ``iterations_done``: iterations the setup already ran (OpenSpiel's JAX CFR compiles by
  running one), counted in the equal-work check.

How each peer is driven (from its own documentation and examples):

* ``jaxcfr``: :class:`jaxcfr.Runner` (jitted chunks of iterations, float32);
* ``openspiel_cpp``: ``pyspiel.CFRPlusSolver`` / ``pyspiel.CFRSolver`` and
  ``evaluate_and_update_policy()`` once per iteration
  (``open_spiel/python/examples/cfr_cpp_example.py``);
* ``openspiel_python``: ``open_spiel.python.algorithms.cfr`` (``cfr_example.py``);
* ``openspiel_jax``: ``open_spiel.python.jax.cfr.jax_cfr.JaxCFR.multiple_steps``;
* ``liteefg``: the ``LiteEFG.baselines.CFRplus`` graph on ``OpenSpielEnv(traverse_type=
  "Enumerate")``, the strategy node built once before the loop, and per iteration
  ``graph.update_graph(env)`` then ``env.update_strategy(strategy)``, as LiteEFG's
  ``baselines/utils.py:train`` does (its ``current_strategy()`` returns that same node).

Algorithms: ``cfr+`` is alternating RM+ with linear averaging everywhere; ``cfr`` is
vanilla CFR with *alternating* updates, OpenSpiel's default (jaxcfr runs
``cfr(alternating=True)`` to do the same work). LiteEFG's CFR baseline updates both
players at once, which is less work per iteration, so it is not timed against ``cfr``.
"""

from __future__ import annotations

import contextlib
import io
import time

#: Game name -> (jaxcfr game string, OpenSpiel game string or None).
GAMES = {
    "kuhn": ("kuhn_poker", "kuhn_poker"),
    "leduc": ("leduc_poker", "leduc_poker"),
    "liars_dice": ("liars_dice(dice=1, sides=6)", "liars_dice(numdice=1,dice_sides=6)"),
    "liars_dice7": ("liars_dice(dice=1, sides=7)", "liars_dice(numdice=1,dice_sides=7)"),
    "liars_dice8": ("liars_dice(dice=1, sides=8)", "liars_dice(numdice=1,dice_sides=8)"),
    "liars_dice9": ("liars_dice(dice=1, sides=9)", "liars_dice(numdice=1,dice_sides=9)"),
    "goofspiel5": ("goofspiel(cards=5)", "turn_based_simultaneous_game(game=goofspiel("
                   "imp_info=True,num_cards=5,points_order=descending,returns_type=win_loss))"),
    "goofspiel6": ("goofspiel(cards=6)", "turn_based_simultaneous_game(game=goofspiel("
                   "imp_info=True,num_cards=6,points_order=descending,returns_type=win_loss))"),
}


class Jaxcfr:
    """jaxcfr: a Runner on the default JAX device (``stack`` copies of the game stacked, or
    a ``grid`` of DCFR settings)."""
    iterations_done = 0

    def __init__(self, game: str, algorithm: str, stack: int = 1, grid: int = 0,
                 sequence_form: bool = True, chunk: int = 64):
        import jax
        import numpy as np

        import jaxcfr
        self._jax = jax
        start = time.perf_counter()
        lowered = jaxcfr.lower(jaxcfr.load_game(GAMES[game][0]))
        self.lower_seconds = time.perf_counter() - start
        self.nodes = lowered.num_nodes
        self.infosets = list(lowered.infosets_per_player)
        if stack > 1:
            lowered = jaxcfr.stack([lowered] * stack)
        solver = jaxcfr.make_solver(algorithm, alternating=True)
        hyper = {"alpha": np.linspace(1.0, 2.0, grid).tolist()} if grid else None
        if grid:
            solver = jaxcfr.dcfr()
        self.runner = jaxcfr.Runner(lowered, solver, hyper, chunk=chunk,
                                    sequence_form=sequence_form)
        self.state, self.compile_seconds = self.runner.compile(self.runner.init())
        self.done = 0
        self.members = self.runner.batch_members
        device = jax.devices()[0]
        self.device = f"{device.platform}: {getattr(device, 'device_kind', device)}"

    def step(self, n: int) -> None:
        self.state = self.runner.advance(self.state, n)
        self._jax.block_until_ready(self.state)
        self.done += n

    def exploitability(self) -> dict:
        """This (float32) run's values, and a float64 run's after as many iterations (the
        reference of the equal-work check: the peers compute in float64)."""
        import jaxcfr
        out = _jaxcfr_values(self.runner, self.state)
        exact = jaxcfr.Runner(self.runner.lowered, self.runner.solver, precision="float64")
        out["float64"] = _jaxcfr_values(exact, exact.advance(exact.init(), self.done))
        return out


def _jaxcfr_values(runner, state) -> dict:
    import numpy as np
    return {k: float(np.max(runner.evaluate(state, average=avg)["exploitability"]))
            for k, avg in (("current", False), ("average", True))}


class OpenspielCpp:
    """OpenSpiel's C++ CFR / CFR+ through pyspiel."""
    iterations_done = 0

    def __init__(self, game: str, algorithm: str):
        import pyspiel
        self._pyspiel = pyspiel
        self.game = pyspiel.load_game(GAMES[game][1])
        cls = pyspiel.CFRPlusSolver if algorithm == "cfr+" else pyspiel.CFRSolver
        self.solver = cls(self.game)

    def step(self, n: int) -> None:
        for _ in range(n):
            self.solver.evaluate_and_update_policy()

    def exploitability(self) -> dict:
        return {k: float(self._pyspiel.exploitability(self.game, policy)) for k, policy in
                (("current", self.solver.current_policy()),
                 ("average", self.solver.average_policy()))}


class OpenspielPython:
    """OpenSpiel's Python CFR / CFR+ (``open_spiel.python.algorithms.cfr``)."""
    iterations_done = 0

    def __init__(self, game: str, algorithm: str):
        import pyspiel
        from open_spiel.python.algorithms import cfr
        self.game = pyspiel.load_game(GAMES[game][1])
        cls = cfr.CFRPlusSolver if algorithm == "cfr+" else cfr.CFRSolver
        self.solver = cls(self.game)

    def step(self, n: int) -> None:
        for _ in range(n):
            self.solver.evaluate_and_update_policy()

    def exploitability(self) -> dict:
        from open_spiel.python.algorithms import exploitability
        return {k: float(exploitability.exploitability(self.game, policy)) for k, policy in
                (("current", self.solver.current_policy()),
                 ("average", self.solver.average_policy()))}


class OpenspielJax:
    """OpenSpiel's JAX CFR (``open_spiel.python.jax.cfr.jax_cfr.JaxCFR``), float32."""

    def __init__(self, game: str, algorithm: str):
        import jax
        import pyspiel
        from open_spiel.python.jax.cfr.jax_cfr import JaxCFR
        self._jax = jax
        self.game = pyspiel.load_game(GAMES[game][1])
        plus = algorithm == "cfr+"
        self.solver = JaxCFR(self.game, regret_matching_plus=plus, alternating_updates=True,
                             linear_averaging=plus)
        self.step(1)          # compiles (jit_step is bound to this instance: one more compiles)
        self.iterations_done = 1

    def step(self, n: int) -> None:
        self.solver.multiple_steps(n)
        self._jax.block_until_ready(self.solver.regrets)

    def exploitability(self) -> dict:
        from open_spiel.python.algorithms import exploitability
        return {"current": None,                    # no accessor for the current iterate
                "average": float(exploitability.exploitability(self.game,
                                                               self.solver.average_policy()))}


class Liteefg:
    """LiteEFG's CFR+ graph on the OpenSpiel game, strategy node built once."""
    iterations_done = 0

    def __init__(self, game: str, algorithm: str):
        if algorithm != "cfr+":
            raise NotImplementedError("LiteEFG's CFR baseline updates both players at once "
                                      "(less work than alternating CFR): not compared")
        import LiteEFG
        import pyspiel
        from LiteEFG.baselines.CFRplus import graph
        with contextlib.redirect_stdout(io.StringIO()):           # LiteEFG prints banners
            self.graph = graph()
            self.env = LiteEFG.OpenSpielEnv(pyspiel.load_game(GAMES[game][1]),
                                            traverse_type="Enumerate", regenerate=False)
            self.env.set_graph(self.graph)
        self.strategy = self.graph.current_strategy()

    def step(self, n: int) -> None:
        for _ in range(n):
            self.graph.update_graph(self.env)
            self.env.update_strategy(self.strategy, update_best=False)

    def exploitability(self) -> dict:
        # per-player best-response gains (their sum is NashConv); LiteEFG's linear average
        # starts its weights differently from OpenSpiel's, its iterates are the same
        return {k: float(sum(self.env.exploitability(self.strategy, kind)) / 2) for k, kind in
                (("current", "last-iterate"), ("average", "linear-avg-iterate"))}


PEERS = {"jaxcfr": Jaxcfr, "openspiel_cpp": OpenspielCpp, "openspiel_python": OpenspielPython,
         "openspiel_jax": OpenspielJax, "liteefg": Liteefg}


def serve(conn, peer: str, game: str, algorithm: str, options: dict) -> None:
    """Worker process: build the peer, then answer ``step`` / ``exploitability`` / ``info``."""
    try:
        start = time.perf_counter()
        solver = PEERS[peer](game, algorithm, **options)
        info = {k: v for k, v in vars(solver).items()
                if isinstance(v, (int, float, str, list)) and not k.startswith("_")}
        info["iterations_done"] = getattr(solver, "iterations_done", 0)
        conn.send(("ready", time.perf_counter() - start, info))
    except Exception as e:  # reported to the orchestrator as a skip reason
        conn.send(("error", f"{type(e).__name__}: {e}", {}))
        return
    while True:
        message = conn.recv()
        try:
            if message[0] == "step":
                start = time.perf_counter()
                solver.step(message[1])
                conn.send(("ok", time.perf_counter() - start))
            elif message[0] == "exploitability":
                conn.send(("ok", solver.exploitability()))
            else:
                return
        except Exception as e:
            conn.send(("error", f"{type(e).__name__}: {e}"))
