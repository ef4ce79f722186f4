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
from jaxcfr.solvers.monte_carlo import MonteCarlo
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
