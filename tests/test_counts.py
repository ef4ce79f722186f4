"""Monte Carlo traversals as counts (``counts=True``; :mod:`jaxcfr.kernels.counts`).

Oracles: the traversals the sparse kernels walk one by one (from the counts of the nodes
they reach, the dense formula must give the mean of their estimates to float64 rounding),
the exact regrets (the mean of many count estimates must equal them within a stated
number of standard errors), the sampling probabilities (mean counts), separate runs (the
same seed again bit for bit; a seed batch member to float rounding), uninterrupted runs
(resume) and exploitability bounds after a stated number of iterations. Every random
number comes from a fixed seed: the tests are deterministic.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.kernels import counts, passes, sequence, subtree
from jaxcfr.kernels.values import SequenceForm
from jaxcfr.runs import config_from_dict, train
from jaxcfr.solvers import estimators
from jaxcfr.tensors import to_device

try:
    from tests.sampling_checks import Z_TOLERANCE, assert_unbiased
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from sampling_checks import Z_TOLERANCE, assert_unbiased


@functools.cache
def _lowered(name: str) -> jaxcfr.LoweredGame:
    return jaxcfr.lower(jaxcfr.load_game(name))


def _strategy(lowered, seed=0):
    """A random strictly positive strategy ``[I, A]`` (every legal action has some mass)
    and its regret-matching policy (for the sparse kernels)."""
    rows, actions = lowered.tensors.legal_mask.shape
    regret = (np.random.default_rng(seed).uniform(0.5, 1.5, size=(rows, actions))
              * lowered.tensors.legal_mask)
    legal = jnp.asarray(lowered.tensors.legal_mask)
    policy = estimators.LazyStrategy(jnp.asarray(regret.reshape(-1)), jnp.zeros(rows * actions),
                               legal, 1, False)
    return policy.rows(jnp.arange(rows), jnp.zeros(rows, jnp.int32)), policy


_SLOW = pytest.mark.slow
CASES = [("kuhn_poker", "chance", None), ("kuhn_poker", "external", 0),
         ("kuhn_poker", "outcome", 1),
         pytest.param("leduc_poker", "chance", None, marks=_SLOW),
         pytest.param("leduc_poker", "external", 0, marks=_SLOW),
         pytest.param("leduc_poker", "outcome", 1, marks=_SLOW),
         pytest.param("liars_dice(sides=3)", "chance", 0, marks=_SLOW),
         pytest.param("liars_dice(sides=3)", "outcome", 0, marks=_SLOW),
         pytest.param("kuhn_poker(players=3)", "chance", None, marks=_SLOW),
         pytest.param("kuhn_poker(players=3)", "external", 1, marks=_SLOW),
         ("kuhn_poker(players=3)", "outcome", 2)]


@pytest.mark.parametrize("game, scheme, player", CASES)
def test_counts_give_the_mean_of_the_traversals_they_count(game, scheme, player):
    """K = 7 traversals walked one by one (the sparse kernels, from one member's numbers);
    the counts of the nodes they reach, through the count formula, give the mean of their
    regrets to float64 rounding (it is the same sum, regrouped by leaf), by the sequence
    form and by the node passes alike; the averaging contributions are the exact
    estimator's (own reach times strategy)."""
    lowered = _lowered(game)
    rows, actions = lowered.tensors.legal_mask.shape
    with precision.scope(np.float64):
        t, s = to_device(lowered.tensors, np.float64), lowered.structure
        seq = jax.tree_util.tree_map(jnp.asarray, sequence.sequence_tables(
            lowered.tensors, s.level_start, s.num_players, np.float64))
        sequenced = sequence.with_sequences(t, seq)
        sigma, policy = _strategy(lowered)
        walked, tables = estimators.make_estimator(scheme, samples=7).prepare(lowered)
        tables = subtree.SampleTables(*(jnp.asarray(x) for x in tables))
        counted = dataclasses.replace(walked, counts=True, plan=None)
        who = None if player is None else jnp.asarray(player)

        @jax.jit
        def run(key):
            eps = jnp.asarray([0.6])
            u = walked.uniforms(key[None], jnp.float64)
            one_by_one = estimators.densify(estimators.MonteCarlo.from_uniforms(
                walked, t, s, policy, who, u, eps, tables), rows, actions)
            sub = subtree.build_subtree(t, tables, walked.plan, walked, policy.rows, 1, u, who,
                                        eps)
            n = passes.segment_sum(sub.valid.astype(jnp.float64), sub.node,
                                   t.parent.shape[0])
            return (one_by_one.regret[..., 0], counted.from_counts(t, s, sigma, who, n, eps[0]),
                    dataclasses.replace(counted, values=SequenceForm()).from_counts(
                        sequenced, s, sigma, who, n, eps[0]),
                    estimators.Exact().estimate(t, s, sigma, who), n[0])
        expected, by_nodes, by_sequences, exact, root = run(jax.random.key(3))
    mine = np.asarray(estimators.rows_of(t, who))
    expected = np.asarray(expected)[mine]
    for est in (by_nodes, by_sequences):
        np.testing.assert_allclose(np.asarray(est.regret)[mine], expected, rtol=1e-12,
                                   atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(np.asarray(est.average)[mine],
                                   np.asarray(exact.average)[mine], rtol=1e-12, atol=1e-15)
        assert np.array_equal(np.asarray(est.average_rows), mine)
    assert np.abs(expected).max() > 0.05 and float(root) == 7


def _counts(lowered, scheme, player, samples, keys, seed=0):
    """Counts ``[N, R]`` of ``R`` count passes (one per key) at a random strategy, with the
    split's bounds and the sampling weights."""
    est, tables = estimators.make_estimator(scheme, samples, counts=True).prepare(lowered)
    tables = counts.CountTables(*(jnp.asarray(x) for x in tables))
    t = to_device(lowered.tensors, np.float32)
    sigma, _ = _strategy(lowered, seed)
    current = jnp.broadcast_to(sigma[..., None], sigma.shape + keys.shape)
    p = passes.edge_probabilities(t, current)
    who = None if player is None else jnp.asarray(player)
    eps = jnp.full(keys.shape, 0.6, jnp.float32)
    weight = est.node_weights(t, p, est.sampling_table(current, t.legal_mask, eps), who)
    enum = est.enumerates(t.node_kind, t.node_player, who)

    @jax.jit
    def run(keys, weight):
        bounds = counts.split_bounds(tables, est.width, weight)
        return counts.traversal_counts(t, tables, bounds, enum, samples,
                                       counts.node_uniforms(keys, tables, who, jnp.float32))
    return np.asarray(run(keys, weight)), np.asarray(weight[:, 0]), np.asarray(enum)


@pytest.mark.parametrize("scheme, player, samples", [
    ("external", 0, 1), ("external", 1, 37), ("outcome", 0, 1), ("outcome", 1, 4096),
    ("chance", None, 5)])
def test_a_split_keeps_every_traversal_and_strays_at_most_one(scheme, player, samples):
    """At every node: the children's counts are integers adding up to the parent's (every
    child gets the parent's at an enumerating node), a child of probability 0 gets none,
    and each child gets ``floor(n q)`` or one more; with one traversal of outcome
    sampling exactly one leaf is reached."""
    lowered = _lowered("leduc_poker")
    t = lowered.tensors
    n, weight, enum = _counts(lowered, scheme, player, samples,
                              jax.random.split(jax.random.key(1), 16))
    child = np.flatnonzero(t.parent >= 0)
    parent = t.parent[child]
    assert np.array_equal(n, np.round(n)) and (n >= 0).all() and (n[0] == samples).all()
    sums = np.zeros_like(n)
    np.add.at(sums, parent, n[child])
    internal = np.unique(parent)
    sampling = internal[~enum[internal]]
    np.testing.assert_array_equal(sums[sampling], n[sampling])
    copied = child[enum[parent]]
    np.testing.assert_array_equal(n[copied], n[t.parent[copied]])
    # each sampled child: floor(n q) or one more, with q its share of its siblings' weight
    total = np.zeros(len(t.parent))
    np.add.at(total, parent, weight[child])
    free = child[~enum[parent]]
    q = weight[free] / total[t.parent[free]]
    mean = n[t.parent[free]] * q[:, None]
    assert ((n[free] >= np.floor(mean - 1e-3)) & (n[free] <= np.ceil(mean + 1e-3))).all()
    assert (n[free][q == 0] == 0).all()
    if scheme == "outcome" and samples == 1:
        leaves = t.node_kind == jaxcfr.tensors.TERMINAL_NODE
        assert (n[leaves].sum(axis=0) == 1).all()


def test_mean_counts_are_the_sampling_reach():
    """Over 4,000 count passes the mean count at each node is ``K`` times the probability
    that one traversal reaches it (the product of the sampling probabilities on its path,
    enumerated edges counting 1), within 5 standard errors."""
    lowered = _lowered("leduc_poker")
    t, s = lowered.tensors, lowered.structure
    samples, runs = 5, 4000
    n, weight, enum = _counts(lowered, "external", 1, samples,
                              jax.random.split(jax.random.key(2), runs))
    child = np.flatnonzero(t.parent >= 0)
    total = np.zeros(len(t.parent))
    np.add.at(total, t.parent[child], weight[child])
    q = np.ones(len(t.parent))
    q[child] = np.where(enum[t.parent[child]], 1, weight[child] / total[t.parent[child]])
    reach = np.ones(len(t.parent))
    for lo, hi in zip(s.level_start[1:-1], s.level_start[2:]):
        reach[lo:hi] = reach[t.parent[lo:hi]] * q[lo:hi]
    expected = samples * reach
    # a node reached a few times in 4,000 passes has a poor sample variance: a count that
    # is mostly 0 or 1 has a variance of about its mean, so that is the floor
    stderr = np.sqrt(np.maximum(n.var(axis=1), expected) / runs)
    error = np.abs(n.mean(axis=1) - expected)
    bad = error > Z_TOLERANCE * stderr + 1e-6
    assert not bad.any(), (bad.sum(), error.max())
    assert (n.var(axis=1) > 0).sum() > 1000              # the counts do vary


@pytest.mark.parametrize("name, player, scheme, samples", [
    pytest.param("kuhn_poker", None, "chance", 1, marks=pytest.mark.slow),
    ("kuhn_poker", None, "external", 3),
    ("kuhn_poker", 1, "outcome", 1),
    pytest.param("liars_dice(sides=3)", None, "chance", 2, marks=pytest.mark.slow),
    pytest.param("liars_dice(sides=3)", 0, "external", 16, marks=pytest.mark.slow),
    pytest.param("liars_dice(sides=3)", None, "outcome", 64, marks=pytest.mark.slow),
    pytest.param("leduc_poker", 1, "outcome", 256, marks=pytest.mark.slow)])
def test_count_regrets_are_unbiased(name, player, scheme, samples):
    """The mean of 4,000 count estimates (each the mean of ``samples`` coupled traversals)
    equals the exact regrets within 5 standard errors at every (row, action)."""
    lowered = _lowered(name)
    t, s = to_device(lowered.tensors, np.float32), lowered.structure
    sigma, _ = _strategy(lowered)
    draws = 4000
    who = None if player is None else jnp.asarray(player)
    exact = np.asarray(estimators.Exact().estimate(t, s, sigma, who).regret)
    est, tables = estimators.make_estimator(scheme, samples, counts=True).prepare(lowered)
    tables = counts.CountTables(*(jnp.asarray(x) for x in tables))
    hp = jaxcfr.make_solver("cfr", sampling="outcome").hyperparams(exploration=[0.6] * draws)
    current = jnp.broadcast_to(sigma[..., None], sigma.shape + (draws,))
    regret = jax.jit(lambda keys: est.estimate(t, s, current, who, keys, hp, tables).regret)(
        jax.random.split(jax.random.key(7), draws))
    assert_unbiased(np.moveaxis(np.asarray(regret, np.float64), -1, 0), exact)


@pytest.mark.slow
def test_counts_have_less_variance_than_independent_traversals():
    """Leduc, external sampling, 64 traversals per estimate, 300 estimates each: the summed
    variance of the regret estimates is below that of 64 independent traversals
    (measured: 0.92 of it; the coupling acts where counts are large, near the root) and
    both estimate the same regrets."""
    lowered = _lowered("leduc_poker")
    t, s = to_device(lowered.tensors, np.float32), lowered.structure
    rows, actions = lowered.tensors.legal_mask.shape
    sigma, policy = _strategy(lowered, seed=4)
    draws, player = 300, jnp.asarray(0)
    hp = jaxcfr.make_solver("cfr", sampling="outcome").hyperparams(exploration=[0.6] * draws)
    keys = jax.random.split(jax.random.key(11), draws)
    est, tables = estimators.make_estimator("external", 64, counts=True).prepare(lowered)
    tables = counts.CountTables(*(jnp.asarray(x) for x in tables))
    current = jnp.broadcast_to(sigma[..., None], sigma.shape + (draws,))
    counted = np.asarray(jax.jit(lambda k: est.estimate(t, s, current, player, k, hp,
                                                        tables).regret)(keys))
    walk, wtables = estimators.make_estimator("external", 64).prepare(lowered)
    wtables = subtree.SampleTables(*(jnp.asarray(x) for x in wtables))
    tiled = jnp.asarray(np.repeat(np.asarray(policy.regret), draws))
    many = policy._replace(regret=tiled, prediction=jnp.zeros_like(tiled), members=draws)
    walked = np.asarray(jax.jit(lambda k: estimators.densify(
        walk.estimate(t, s, many, player, k, hp, wtables), rows, actions, draws).regret)(keys))
    ratio = counted.var(axis=-1).sum() / walked.var(axis=-1).sum()
    assert ratio < 1.0, ratio
    assert np.abs(counted.mean(-1) - walked.mean(-1)).max() < 0.1


# -- runs -------------------------------------------------------------------------------------
#: The Kuhn runs of each scheme: its algorithm; 64 traversals per player and iteration as
#: counts, 1,000 iterations, three seeds in one batch.
KUHN_ALGORITHMS = {"chance": "cfr", "external": "cfr", "outcome": "lcfr"}


@functools.cache
def kuhn_run(scheme: str, seeds=(0, 1, 2), chunk: int = 64) -> jaxcfr.SolveResult:
    seed = list(seeds) if len(seeds) > 1 else seeds[0]
    return jaxcfr.solve(_lowered("kuhn_poker"), KUHN_ALGORITHMS[scheme], 1000,
                        estimator=jaxcfr.ESTIMATORS[scheme](samples=64, counts=True),
                        device=jaxcfr.DeviceOptions(chunk=chunk), seed=seed)


def _tables(result, member=None) -> dict[str, np.ndarray]:
    out = {f: np.asarray(getattr(result.state, f)) for f in ("regret", "strategy_sum")}
    return out if member is None else {f: x[..., member] for f, x in out.items()}


@pytest.mark.parametrize("scheme", ("chance", "external", "outcome"))
def test_kuhn_below_0_01_with_counts(scheme):
    """Measured: chance and external sampling (CFR) 0.0008-0.004, outcome sampling (Linear
    CFR) 0.0006-0.0047."""
    result = kuhn_run(scheme)
    assert max(result.final["exploitability"]) < 0.01, (scheme, result.final)
    tables = _tables(result)
    assert not np.array_equal(tables["regret"][..., 0], tables["regret"][..., 1])


@pytest.mark.slow
def test_a_count_run_is_its_seed_whatever_the_chunk_and_a_batch_member_follows_its_run():
    """Bit for bit: the same run again, and with other chunk lengths. A seed batch member
    equals its separate run to float rounding (XLA may round a batched program's sums
    differently; the exact estimator's members happen to agree bit for bit, but a count is
    a ceil of rounded numbers, so once a rounding difference changes a split the two runs
    go apart like two seeds): compared over the first 10 iterations."""
    single = kuhn_run("outcome", seeds=(2,))
    for f, x in _tables(single).items():
        np.testing.assert_array_equal(x, _tables(kuhn_run("outcome", seeds=(2,), chunk=9))[f])
        np.testing.assert_array_equal(x, _tables(kuhn_run.__wrapped__("outcome", (2,)))[f])
    lowered = _lowered("kuhn_poker")
    solver = jaxcfr.make_solver("lcfr", sampling="outcome", samples=64, counts=True)
    batch = jaxcfr.Runner(lowered, solver, {"seed": [0, 1, 2]}, chunk=10)
    one = jaxcfr.Runner(lowered, solver, {"seed": 2}, chunk=10)
    member = batch.advance(batch.init(), 10)
    alone = one.advance(one.init(), 10)
    for f in ("regret", "strategy_sum"):
        np.testing.assert_allclose(np.asarray(getattr(member, f))[..., 2],
                                   np.asarray(getattr(alone, f)), rtol=1e-5, atol=1e-5)


def test_leduc_below_0_05_with_external_counts():
    """CFR+ with 1,024 external-sampling traversals per player and iteration as counts:
    300 iterations (measured: 0.0113)."""
    result = jaxcfr.solve(_lowered("leduc_poker"), "cfr+", 300,
                          estimator=jaxcfr.ExternalSampling(samples=1024, counts=True), seed=0)
    assert result.final["exploitability"] < 0.05, result.final["exploitability"]


def test_resume_with_counts_is_bit_for_bit(tmp_path):
    raw = {"game": {"name": "kuhn_poker"},
           "solver": {"algorithm": "lcfr", "iterations": 64, "sampling": "outcome",
                      "samples": 100, "counts": True},
           "run": {"eval_every": 32, "checkpoint_every": 32, "chunk": 16, "quiet": True,
                   "plot": False, "seed": 3}}
    whole = train(config_from_dict(raw), out_dir=str(tmp_path / "whole"))

    def interrupt(iteration, record):
        if iteration >= 32:
            raise KeyboardInterrupt
    part = train(config_from_dict(raw), out_dir=str(tmp_path / "part"), progress=interrupt)
    assert part.interrupted and part.iteration == 32
    rest = train(config_from_dict(raw), resume=str(tmp_path / "part"))
    for f in ("regret", "strategy_sum"):
        np.testing.assert_array_equal(np.asarray(getattr(rest.state, f)),
                                      np.asarray(getattr(whole.state, f)))
    # counts change what is computed: the checkpoint refuses a run without them
    other = dict(raw, solver=dict(raw["solver"], counts=False))
    with pytest.raises(jaxcfr.runs.CheckpointError, match="solver.counts"):
        train(config_from_dict(other), resume=str(tmp_path / "part"))


def test_bad_count_arguments_are_refused():
    with pytest.raises(jaxcfr.ArgumentError, match="counts.*sampling"):
        jaxcfr.make_solver("cfr", counts=True)
    with pytest.raises(jaxcfr.ArgumentError, match="at most 16,777,216"):
        jaxcfr.OutcomeSampling(samples=2 ** 24 + 1, counts=True)
    with pytest.raises(jaxcfr.ArgumentError, match="at most 16,777,216"):
        jaxcfr.make_solver("cfr", sampling="outcome", samples=2 ** 24 + 1, counts=True)
    with pytest.raises(jaxcfr.ArgumentError, match="counts"):
        jaxcfr.make_solver("cfr", sampling="outcome", counts="yes")
    with pytest.raises(jaxcfr.ArgumentError, match="not both"):
        jaxcfr.make_solver("cfr", estimator=jaxcfr.ExternalSampling(), counts=True)
    # solve() takes the estimator as an object: the old keywords say so
    with pytest.raises(jaxcfr.ArgumentError, match=r"no counts any more: give estimator="):
        jaxcfr.solve("kuhn_poker", "cfr", 10, counts=True)
