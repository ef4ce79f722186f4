"""Shared test cases for the solver / analytics / batching tests: games, trees, runners.

Compilation dominates the runtime of these tests (seconds per distinct solver and
padded shape), so every test module builds its runners here, cached by
``(game, solver, hyper-parameters)``: modules that need the same compiled program
get the same :class:`jaxcfr.Runner` (and jit's cache is shared anyway).

``SMALL`` is one stack of four small two-player zero-sum games (Kuhn poker, the
different-depths ``.efg`` fixture, rock-paper-scissors, matching pennies): one
compiled step per solver covers all four.
"""

from __future__ import annotations

import functools
import os
import pathlib

import numpy as np

import jaxcfr
from jaxcfr.engine.runner import DEFAULT_CHUNK

try:
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import reference_cfr as R

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES_EFG = HERE / "fixtures" / "efg"
DIFFERENT_DEPTHS_EFG = FIXTURES_EFG / "different_depths.efg"
#: The project's shared data: ``shared/`` beside the checkout, or ``$JAXCFR_SHARED``.
SHARED = pathlib.Path(os.environ.get("JAXCFR_SHARED") or HERE.parents[1] / "shared")
#: The Gambit test files (absent on machines without the shared data).
SHARED_EFG = SHARED / "efg"

#: Kuhn poker's equilibrium for player 0 at alpha = 1/3 (Kuhn 1950), by information set:
#: cards J, Q, K are 0, 1, 2; jaxcfr's Kuhn keys are "player|card|history".
KUHN_ALPHA = 1 / 3
KUHN_P0 = {"0|0|": {"bet": KUHN_ALPHA, "pass": 1 - KUHN_ALPHA},
           "0|1|": {"pass": 1.0},
           "0|2|": {"bet": 3 * KUHN_ALPHA, "pass": 1 - 3 * KUHN_ALPHA},
           "0|0|pb": {"pass": 1.0},
           "0|1|pb": {"bet": KUHN_ALPHA + 1 / 3, "pass": 2 / 3 - KUHN_ALPHA},
           "0|2|pb": {"bet": 1.0}}

#: The members of the SMALL stack, in order.
SMALL = ("kuhn_poker", "different_depths", "rock_paper_scissors", "matching_pennies")


def efg_loader_available() -> bool:
    try:
        import jaxcfr.efg  # noqa: F401
    except ImportError:
        return False
    return True


def make_game(name: str) -> jaxcfr.Game:
    """A fresh root state: a game string, or ``"different_depths"`` (the .efg fixture)."""
    if name == "different_depths":
        if efg_loader_available():
            return jaxcfr.load_game(str(DIFFERENT_DEPTHS_EFG))
        return R.DifferentDepths()
    return jaxcfr.load_game(name)


@functools.cache
def lowered(name: str) -> jaxcfr.LoweredGame:
    return jaxcfr.lower(make_game(name), name=name)


@functools.cache
def tree(name: str) -> R.Tree:
    return R.Tree(make_game(name))


@functools.cache
def small_stack() -> jaxcfr.LoweredGame:
    return jaxcfr.stack([lowered(n) for n in SMALL])


def lowered_or_stack(name: str) -> jaxcfr.LoweredGame:
    return small_stack() if name == "SMALL" else lowered(name)


def _freeze(hp: dict | None) -> tuple:
    return tuple(sorted((k, tuple(v) if isinstance(v, (list, tuple)) else v)
                        for k, v in (hp or {}).items()))


@functools.cache
def _runner(name: str, solver: jaxcfr.Solver, hp: tuple, chunk: int) -> jaxcfr.Runner:
    return jaxcfr.Runner(lowered_or_stack(name), solver,
                         {k: list(v) if isinstance(v, tuple) else v for k, v in hp},
                         chunk=chunk)


def runner(name: str, solver: jaxcfr.Solver, hp: dict | None = None,
           chunk: int = DEFAULT_CHUNK) -> jaxcfr.Runner:
    """A cached Runner of game ``name`` (or ``"SMALL"``, the stack)."""
    return _runner(name, solver, _freeze(hp), chunk)


def evaluate_table(name: str, table) -> dict:
    """Exact metrics (:func:`jaxcfr.evaluate`) of a profile ``table`` ``[(B,) I, A, *H]``."""
    return jaxcfr.evaluate(lowered_or_stack(name), table)


def member_rows(name: str) -> list[tuple[int, jaxcfr.LoweredGame]]:
    """``[(b, lowered member)]`` of ``name`` (one entry with ``b = None`` for a single game)."""
    if name == "SMALL":
        return list(enumerate(small_stack().members))
    return [(None, lowered(name))]


def member_names(name: str) -> list[str]:
    return list(SMALL) if name == "SMALL" else [name]


def state_table(lowered_member: jaxcfr.LoweredGame, table: dict) -> np.ndarray:
    """A reference ``{key: vector}`` as an ``[I, A]`` table of ``lowered_member`` (0 elsewhere)."""
    out = np.zeros((lowered_member.num_rows, lowered_member.max_actions))
    for r, (key, acts) in enumerate(zip(lowered_member.infoset_keys,
                                        lowered_member.infoset_actions)):
        out[r, :len(acts)] = table[key]
    return out


def pad_to(x: np.ndarray, rows: int, cols: int) -> np.ndarray:
    out = np.zeros((rows, cols) + x.shape[2:], dtype=x.dtype)
    out[:x.shape[0], :x.shape[1]] = x
    return out


def profile_table(name: str, profiles: list[dict]) -> np.ndarray:
    """``[(B,) I, A]`` device table of one reference profile per member of ``name``."""
    full = lowered_or_stack(name)
    rows, cols = full.num_rows, full.max_actions
    tables = []
    for (_, member), prof in zip(member_rows(name), profiles):
        t = R.table_from_profile(member, prof)
        t = pad_to(t, rows, cols)
        t[member.num_rows:, 0] = 1.0         # padding rows behave like sink rows
        tables.append(t)
    return np.stack(tables) if name == "SMALL" else tables[0]


# -- float64 (in-process: the precision is scoped to the runs that ask for it) --------------
FLOAT64_PARITY = (("pdcfr+", True), ("dcfr", False))    # (preset, alternating)
# Not Kuhn: its symmetric payoffs make some regrets exactly 0, and then float64 rounding
# noise (~1e-17) decides what RM+ plays (the float32 run happens to round to exact 0s).
FLOAT64_GAME = "different_depths"
FLOAT64_CHECKPOINTS = (1, 2, 10)
LARGE_PAYOFF_EFG = SHARED_EFG / "large_payoff_game.efg"


@functools.cache
def float64_parity(preset: str, alternating: bool) -> dict:
    """``{iteration: {field: table, "dtype": str}}`` of a float64 run on FLOAT64_GAME."""
    runner = jaxcfr.Runner(lowered(FLOAT64_GAME),
                           jaxcfr.make_solver(preset, alternating=alternating),
                           precision="float64")
    state, done, out = runner.init(), 0, {}
    for it in FLOAT64_CHECKPOINTS:
        state = runner.advance(state, it - done)
        done = it
        out[it] = {f: np.asarray(state.tables[f]) for f in ("regret", "strategy_sum",
                                                              "prediction") if f in state.tables}
        out[it]["dtype"] = str(state.regret.dtype)
    return out


@functools.cache
def float64_large() -> dict:
    """1000 float64 CFR+ iterations on the large-payoff Gambit game."""
    lowered_game = jaxcfr.lower(jaxcfr.load_game(str(LARGE_PAYOFF_EFG)))
    runner = jaxcfr.Runner(lowered_game, jaxcfr.cfr_plus(), precision="float64")
    state = runner.advance(runner.init(), 1000)
    metrics = runner.evaluate(state)
    return {"dtype": str(state.regret.dtype), "iterations": 1000,
            "average": runner.profile(state), "values": metrics["values"],
            "nash_conv": float(metrics["nash_conv"])}


def folded_tables(tables) -> dict:
    """``tables`` (name: array, a state's :attr:`~jaxcfr.SolverState.tables` or a
    checkpoint's) in float64 with the strategy sums as their exact compensated total
    (``strategy_sum + strategy_error``): the compensation alone is rounding residue, whose
    entries near 0 differ between programs that fuse differently, so runs are compared on
    the total."""
    out = {f: np.asarray(x, np.float64) for f, x in tables.items()}
    if "strategy_error" in out:
        out["strategy_sum"] = out["strategy_sum"] + out.pop("strategy_error")
    return out
