"""docs/architecture.md's "where a change goes", proved from outside the package.

Each part is defined here, in the test file, and runs through the library's own entry
points without any edit inside ``jaxcfr`` (the regret rule with a parameter of its own is
``tests/test_parameters.py``'s).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr.engine.chance import ChanceMode, ExactChance, SampledChance
from jaxcfr.engine.seam import Mapped, Shared, Single, choose_seam
from jaxcfr.kernels import values as values_module
from jaxcfr.kernels.values import KERNELS, SequenceForm, register_kernel
from jaxcfr.solvers.monte_carlo import MonteCarlo
from jaxcfr.subgames.gadgets import GadgetKind
from jaxcfr.tensors import CHANCE_NODE, DECISION


# -- a Monte Carlo scheme ------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class EveryNode(MonteCarlo):
    """A scheme that enumerates every node: its sampled subtree is the whole tree, every
    ``q`` is 1, so its estimate is the exact counterfactual regret of the traverser."""
    name: ClassVar[str] = "every-node"

    def enumerates(self, kind, owner, traverser):
        return (kind == DECISION) | (kind == CHANCE_NODE)

    def may_sample(self, kind):
        return kind != kind

    def average_weight(self, own, sample_reach):
        return own


@dataclasses.dataclass(frozen=True)
class OthersSampled(MonteCarlo):
    """External sampling with chance enumerated: the traverser's decisions and chance are
    enumerated, only the other players' decisions are sampled (unbiased: the importance
    weights of the package's sampled subtrees)."""
    name: ClassVar[str] = "others-sampled"

    def enumerates(self, kind, owner, traverser):
        return (kind == CHANCE_NODE) | ((kind == DECISION) & (owner == traverser))

    def average_target(self, player, num_players):
        return (player + 1) % num_players

    def average_weight(self, own, sample_reach):
        return jnp.ones_like(own)


@pytest.fixture(scope="module")
def kuhn():
    return jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))


@pytest.mark.parametrize("algorithm", ["cfr+", "cfr"])     # alternating, simultaneous
def test_a_scheme_defined_outside_runs_through_solve(kuhn, algorithm):
    """A scheme that samples nothing is the exact estimator: the same average strategy."""
    exact = jaxcfr.solve(kuhn, algorithm, 40)
    mine = jaxcfr.solve(kuhn, algorithm, 40, estimator=EveryNode(), seed=3)
    np.testing.assert_allclose(mine.average_strategy, exact.average_strategy, atol=2e-5)
    assert mine.solver.estimator.name == "every-node"


def test_a_sampling_scheme_defined_outside_converges(kuhn):
    """Sampling the opponents only (chance enumerated): Kuhn's exploitability falls to
    what external sampling reaches in as many iterations."""
    result = jaxcfr.solve(kuhn, "cfr+", 600, estimator=OthersSampled(samples=2), seed=0)
    assert result.final["exploitability"] < 0.02
    first = jaxcfr.solve(kuhn, "cfr+", 1, estimator=OthersSampled(samples=2), seed=0)
    assert first.final["exploitability"] > 0.1


# -- a chance mode -------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SampledAbove(ChanceMode):
    """Sample chance when the game's tree has more than ``nodes`` nodes, else lower it."""
    nodes: float = 1e6
    name: ClassVar[str] = "sampled-above"

    def choose(self, game, status=None, **lower_kwargs):
        size = jaxcfr.probe_size(jaxcfr.load_game(game) if isinstance(game, str) else game)
        mode = SampledChance(self.draws) if size.nodes > self.nodes else ExactChance()
        return mode.choose(game, status, **lower_kwargs)

    def when_sampling(self, check):
        check(f"the tree has more than {self.nodes:g} nodes")


def test_a_chance_mode_defined_outside_decides_exact_or_sampled():
    exact = jaxcfr.solve("kuhn_poker", "cfr+", 20, chance=SampledAbove(nodes=1e6))
    assert exact.chance == "exact"
    np.testing.assert_array_equal(exact.average_strategy,
                                  jaxcfr.solve("kuhn_poker", "cfr+", 20).average_strategy)
    sampled = jaxcfr.solve("kuhn_poker", "cfr+", 20, chance=SampledAbove(nodes=10, draws=3),
                           seed=2)
    assert sampled.chance == "sampled"
    same = jaxcfr.solve("kuhn_poker", "cfr+", 20, chance=jaxcfr.Chance("sampled", draws=3),
                        seed=2)
    np.testing.assert_array_equal(sampled.average_strategy, same.average_strategy)
    # what sampled chance cannot be combined with is checked once it samples, with the reason
    with pytest.raises(jaxcfr.ArgumentError, match="more than 10 nodes"):
        jaxcfr.solve("kuhn_poker", "cfr+", 20, chance=SampledAbove(nodes=10), seed=[1, 2])


# -- a gadget ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Margin(GadgetKind):
    """Maxmargin written outside the package: the opponent picks an augmented set and its
    payoffs below are shifted by minus the set's value under the blueprint."""
    name: ClassVar[str] = "margin"
    opponent_picks: ClassVar[bool] = True

    def payoffs(self, gadget, chosen, values):
        shift = float(gadget.alternative[chosen])
        values[gadget.opponent] -= shift
        values[gadget.player] += shift
        return values

    def top_nodes(self, gadget):
        return gadget.num_sets


def test_a_gadget_defined_outside_resolves_like_the_one_it_restates(kuhn):
    from jaxcfr.subgames import resolve_subgames
    blueprint = jaxcfr.solve(kuhn, "cfr", 20).profile
    at = [[2, 0, "pass"], [1, 2, "pass"]]
    mine = resolve_subgames(kuhn, blueprint, at, gadget=Margin(), iterations=30)
    theirs = resolve_subgames(kuhn, blueprint, at, gadget="maxmargin", iterations=30)
    np.testing.assert_array_equal(mine.table, theirs.table)
    assert [s["gadget"] for s in mine.subgames] == ["margin"] * len(mine.subgames)
    assert mine.bound == theirs.bound and mine.bound is not None


# -- a value kernel for one backend --------------------------------------------------------
class FakeBackendSequenceForm(SequenceForm):
    """A backend's own sequence-form kernel: here the library's, counting its calls."""
    calls: ClassVar[list] = []

    def counterfactual_action_values(self, t, s, current, players):
        FakeBackendSequenceForm.calls.append(len(FakeBackendSequenceForm.calls))
        return super().counterfactual_action_values(t, s, current, players)


def test_a_kernel_for_one_backend_is_one_class_and_one_entry(kuhn, monkeypatch):
    """register_kernel puts the class in the one choice table; choose_seam picks it for
    that backend only, and a solver stepped with it gives the library's tables."""
    monkeypatch.setitem(KERNELS, ("fake-backend", "sequences"), FakeBackendSequenceForm)
    estimator = jaxcfr.Exact()
    seam = choose_seam(kuhn, estimator, backend="fake-backend")
    assert type(seam.values) is FakeBackendSequenceForm
    assert type(seam.layout) is Single
    assert type(choose_seam(kuhn, estimator, backend="cpu").values) is SequenceForm
    # the choice for a stack: the layout is the backend's to choose too (a CPU maps a
    # small stack member by member; any other backend vmaps it or shares its tree)
    pair = jaxcfr.stack([kuhn, kuhn])
    assert type(choose_seam(pair, estimator, backend="cpu").layout) is Mapped
    assert type(choose_seam(pair, estimator, backend="fake-backend").layout) is Shared
    # the kernel runs where the library's would, with the same result
    import jax
    solver = jaxcfr.cfr_plus()
    mine = dataclasses.replace(solver, estimator=jaxcfr.Exact(values=seam.values))
    runner = jaxcfr.Runner(kuhn, solver)
    state = runner.init()
    step = jax.jit(lambda st: mine.update(runner.step_tensors, runner.step_structure, st,
                                          runner.hp))
    ours = jax.jit(lambda st: runner.step_solver.update(runner.step_tensors,
                                                        runner.step_structure, st, runner.hp))
    a, b = step(state), ours(state)
    assert FakeBackendSequenceForm.calls
    for x, y in zip(a, b):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_register_kernel_takes_only_kernels(monkeypatch):
    monkeypatch.setattr(values_module, "KERNELS", dict(KERNELS))
    with pytest.raises(TypeError, match="ValueKernel subclass"):
        register_kernel("fake-backend", "sequences", object)
    register_kernel("fake-backend", "nodes", FakeBackendSequenceForm)
    assert values_module.KERNELS[("fake-backend", "nodes")] is FakeBackendSequenceForm


# -- a command -------------------------------------------------------------------------------
_COMMAND_MODULE = '''
"""jaxcfr nodes GAME: the number of histories of a game (a command from outside)."""

def add_nodes_arguments(parser):
    parser.add_argument("game")
    parser.add_argument("--player", type=int, default=None)


def run_nodes(args):
    import jaxcfr
    lowered = jaxcfr.lower(jaxcfr.load_game(args.game))
    if args.player is not None and not 0 <= args.player < lowered.structure.num_players:
        raise ValueError(f"--player {args.player}: the game has "
                         f"{lowered.structure.num_players} players")
    print(f"{args.game}: {lowered.num_nodes} nodes")
    return 0
'''


def test_a_command_defined_outside_is_one_module_and_one_entry(tmp_path, monkeypatch, capsys):
    from jaxcfr.cli import app
    (tmp_path / "outside_nodes_command.py").write_text(_COMMAND_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(app.COMMAND_MODULES, "nodes",
                        ("outside_nodes_command", "count a game's histories"))
    assert app.main(["nodes", "kuhn_poker"]) == 0
    assert capsys.readouterr().out == (
        f"kuhn_poker: {jaxcfr.lower(jaxcfr.load_game('kuhn_poker')).num_nodes} nodes\n")
    # its mistakes get the one-line error and exit status of every command
    assert app.main(["nodes", "kuhn_poker", "--player", "5"]) == 2
    assert capsys.readouterr().err.strip() == (
        "jaxcfr: error: --player 5: the game has 2 players")
    # and it is listed in the help with its line
    assert "count a game's histories" in app.build_parser().format_help()
