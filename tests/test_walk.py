"""Monte Carlo traversals depth first (``walk="depth"``; :mod:`jaxcfr.kernels.walk`).

Oracles: a slow NumPy walk written here from the textbook recursion (Lanctot et al. 2009:
``v(h) = u(h) + sum over taken children of (p / q) v(c)``, regret ``W(h) (x(h, a) -
sigma(h) . x(h, .))`` with ``W = pi_-i / Q``) that consumes the same uniform numbers in the
same order (depth first, children in slot order): the kernel's regret and strategy-sum
contributions must equal it to 1e-12 in float64; the exact regrets (the mean of many
sampled estimates within 5 standard errors); exploitability bounds after a stated number
of iterations; compile once (a second chunk compiles nothing); bounds that hold every
walk. Every random number comes from a fixed seed: the tests are deterministic.
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
from jaxcfr.kernels import subtree, walk
from jaxcfr.kernels.keys import fold
from jaxcfr.solvers import estimators
from jaxcfr.tensors import DECISION, to_device

try:
    from tests.sampling_checks import assert_unbiased
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from sampling_checks import assert_unbiased


@functools.cache
def _lowered(name: str) -> jaxcfr.LoweredGame:
    return jaxcfr.lower(jaxcfr.load_game(name))


def _policy(lowered, seed: int, members: int = 1):
    """A random strictly positive regret table (every legal action has some mass) as the
    flat ``[I * A * B]`` policy of ``members`` members, and its strategy ``[B, I, A]``."""
    rows, actions = lowered.tensors.legal_mask.shape
    regret = (np.random.default_rng(seed).uniform(0.2, 1.5, size=(rows, actions, members))
              * lowered.tensors.legal_mask[..., None])
    legal = jnp.asarray(lowered.tensors.legal_mask)
    policy = estimators.LazyStrategy(jnp.asarray(regret.reshape(-1)),
                                     jnp.zeros(rows * actions * members), legal, members, False)
    sigma = np.maximum(regret, 0) / np.maximum(regret, 0).sum(axis=1, keepdims=True)
    sigma = np.where(lowered.tensors.legal_mask[..., None], sigma, 0)
    return policy, np.moveaxis(sigma, -1, 0)


def reference_walk(lowered, scheme, sigma, traverser, numbers, eps, samples):
    """The NumPy oracle: one traversal of ``scheme`` for ``traverser`` (``None``: chance
    sampling of all) from ``numbers`` (read in depth-first order, one per draw), strategy
    ``sigma [I, A]``; returns its regret and strategy-sum contributions ``[I, A]`` divided
    by ``samples`` (a member's estimate is the mean of its draws)."""
    t = lowered.tensors
    parent, kind, owner = (np.asarray(x) for x in (t.parent, t.node_kind, t.node_player))
    rows, actions = t.legal_mask.shape
    num = lowered.num_players
    children = [[] for _ in parent]
    for c in np.flatnonzero(parent >= 0):
        children[parent[c]].append(c)
    slot = np.asarray(t.edge_index) % actions
    regret, average = np.zeros((rows, actions)), np.zeros((rows, actions))
    draws = iter(numbers)

    def enumerates(h):
        return bool(np.asarray(scheme.enumerates(kind[h:h + 1], owner[h:h + 1],
                                                 traverser))[0])

    def visit(h, reach, q_reach):
        """v(h) [P]: the walk below h (reach [P + 1]: own reaches, q_reach: Q(h))."""
        value = np.asarray(t.payoff[h], np.float64).copy()
        kids = children[h]
        if not kids:
            return value
        row = t.node_infoset[h]
        p = np.array([(sigma[row, slot[c]] if kind[h] == DECISION else 1.0)
                      * t.chance_prob[c] for c in kids])
        if enumerates(h):
            taken, q = list(range(len(kids))), np.ones(len(kids))
        else:
            q = p.copy()
            if scheme.name == "outcome" and kind[h] == DECISION and owner[h] == traverser:
                q = eps / len(kids) + (1 - eps) * p
            u = next(draws)
            cdf = np.cumsum(q)
            over = np.flatnonzero(cdf > u * cdf[-1])
            taken = [over[0] if len(over) else np.flatnonzero(q > 0)[-1]]
        x = np.zeros(actions)
        for j in taken:
            c = kids[j]
            mover = owner[h] if kind[h] == DECISION else num
            child_reach = reach.copy()
            child_reach[mover] *= p[j]
            v = visit(c, child_reach, q_reach * q[j])
            value += p[j] / q[j] * v
            x[slot[c]] = v[min(mover, num - 1)] / q[j]
        if kind[h] == DECISION:
            i = owner[h]
            mask = np.asarray(t.legal_mask[row])
            if traverser is None or i == traverser:
                others = np.prod(np.delete(reach, i))
                regret[row] += np.where(mask, others / q_reach
                                        * (x - sigma[row] @ x), 0) / samples
            target = i if traverser is None else scheme.average_target(traverser, num)
            if i == target:
                weight = {"external": 1.0, "chance": reach[i],
                          "outcome": reach[i] / q_reach}[scheme.name]
                average[row] += weight * sigma[row] / samples
        return value
    visit(0, np.ones(num + 1), 1.0)
    return regret, average


def _depth_first(lowered, scheme, samples, members, seed):
    """Inside ``precision.scope(np.float64)``: the tensors and structure on the device, a
    random policy of ``members`` members and its strategy ``[B, I, A]`` (:func:`_policy`),
    the depth-first estimator of ``scheme`` with ``samples`` draws and its sample tables."""
    t, s = to_device(lowered.tensors, np.float64), lowered.structure
    policy, sigma = _policy(lowered, seed, members)
    est, tables = estimators.ESTIMATORS[scheme](samples=samples, walk="depth").prepare(lowered)
    return t, s, policy, sigma, est, subtree.SampleTables(*(jnp.asarray(x) for x in tables))


def _assert_the_reference_walks(lowered, est, got, sigma, numbers, eps, samples):
    """Member ``b``'s regret and strategy-sum contributions in ``got`` (``[I, A, B]``) equal,
    to 1e-12, the sum of the NumPy walks of each traverser's blocks of numbers (``numbers``:
    traverser, ``None`` for all -> ``[B, samples * draws]``) with exploration ``eps[b]``;
    returns each member's reference regret ``[I, A]``."""
    draws, regrets = est.bounds.draws, []
    for b in range(len(eps)):
        parts = [reference_walk(lowered, est, sigma[b], i, u[b, k * draws:(k + 1) * draws],
                                eps[b], samples)
                 for i, u in numbers.items() for k in range(samples)]
        for field, want in zip((got.regret, got.average), (sum(p[f] for p in parts)
                                                           for f in (0, 1))):
            np.testing.assert_allclose(np.asarray(field)[..., b], want, rtol=1e-12,
                                       atol=1e-12)
        regrets.append(sum(p[0] for p in parts))
    return regrets


CASES = [("kuhn_poker", "external", 0), ("kuhn_poker", "outcome", 1),
         ("kuhn_poker", "chance", None), ("leduc_poker", "external", 1),
         ("leduc_poker", "outcome", 0), ("liars_dice(sides=3)", "external", 0),
         pytest.param("kuhn_poker(players=3)", "external", 2, marks=pytest.mark.slow),
         pytest.param("liars_dice(sides=3)", "outcome", 1, marks=pytest.mark.slow)]


@pytest.mark.parametrize("game, scheme, player", CASES)
def test_the_walk_equals_the_reference_walk(game, scheme, player):
    """Two members x three draws each, in float64: every member's regret and strategy-sum
    contributions equal the mean of the NumPy walks of its three blocks of numbers."""
    lowered = _lowered(game)
    rows, actions = lowered.tensors.legal_mask.shape
    members, samples = 2, 3
    with precision.scope(np.float64):
        t, s, policy, sigma, est, tables = _depth_first(lowered, scheme, samples, members, 4)
        who = None if player is None else jnp.asarray(player)
        eps = jnp.asarray([0.6, 0.3])
        keys = jax.random.split(jax.random.key(11), members)
        numbers = np.asarray(est.uniforms(keys, jnp.float64))
        got = jax.jit(lambda u: estimators.densify(est.from_walks(
            t, s, policy, who, u, eps, tables), rows, actions, members))(jnp.asarray(numbers))
    regrets = _assert_the_reference_walks(lowered, est, got, sigma, {player: numbers},
                                          [float(e) for e in eps], samples)
    assert all(np.abs(r).max() > 0.01 for r in regrets)          # not a trivial oracle


SIMULTANEOUS = [("kuhn_poker", "external"), ("kuhn_poker", "outcome"), ("kuhn_poker", "chance"),
                ("kuhn_poker(players=3)", "external"), ("kuhn_poker(players=3)", "outcome"),
                ("leduc_poker", "external"), ("leduc_poker", "outcome"),
                ("leduc_poker", "chance")]


@pytest.mark.parametrize("game, scheme", SIMULTANEOUS)
def test_a_simultaneous_update_walks_every_traverser_in_one_loop(game, scheme):
    """A simultaneous update (``player=None``), two members x two draws, float64: the
    traversers' lanes step under one loop (one ``while`` whose lanes are traversers x
    members x draws), and its estimate equals, to 1e-12, both the traversers walked one
    loop each (the vmap over the traverser of the level-by-level path's shape) and the
    NumPy walks of each traverser's numbers (chance sampling: one walk of all players)."""
    lowered = _lowered(game)
    rows, actions = lowered.tensors.legal_mask.shape
    num, members, samples = lowered.num_players, 2, 2
    with precision.scope(np.float64):
        t, s, policy, sigma, est, tables = _depth_first(lowered, scheme, samples, members, 5)
        eps = [0.5, 0.25]
        hp = jaxcfr.make_solver("cfr", sampling="outcome").hyperparams(exploration=eps)
        keys = jax.random.split(jax.random.key(3), members)

        def fused(keys):
            return estimators.densify(est.estimate(t, s, policy, None, keys, hp, tables),
                                      rows, actions, members)

        def one_loop_each(keys):
            # the traversers walked apart: one loop per traverser, vmapped (the path before;
            # chance sampling walks all players at once: the one traversal), over the
            # bound's slots (a row estimate, not a pool's capped one)
            e = jnp.broadcast_to(jnp.reshape(est.epsilon(hp), -1), (members,))
            bound = dataclasses.replace(est, pool=0)
            if scheme == "chance":
                return estimators.densify(bound._traverse(t, s, policy, None, keys, e, tables),
                                          rows, actions, members)
            parts = jax.vmap(lambda i: bound._traverse(t, s, policy, i, fold(keys, i), e,
                                                       tables))(jnp.arange(num))
            return estimators.densify(estimators.RowEstimate(
                *(x.reshape((-1,) + x.shape[2:]) for x in parts)), rows, actions, members)
        got = jax.jit(fused)(keys)
        apart = jax.jit(one_loop_each)(keys)
        loops = [e for e in jax.make_jaxpr(fused)(keys).jaxpr.eqns        # the walks'
                 if e.primitive.name == "while"                # (not a pool's chunks)
                 and e.params["body_jaxpr"].jaxpr.outvars[1].aval.dtype == bool]
        who = [None] if scheme == "chance" else list(range(num))
        numbers = {i: np.asarray(est.uniforms(keys if i is None else fold(keys, i),
                                              jnp.float64)) for i in who}
    assert len(loops) == 1
    done = loops[0].params["body_jaxpr"].jaxpr.outvars[1].aval     # the lanes' done flags
    assert done.shape == (len(who) * members * samples,)
    _assert_the_reference_walks(lowered, est, got, sigma, numbers,
                                [e if scheme == "outcome" else 0.0 for e in eps], samples)
    for field in ("regret", "average"):
        np.testing.assert_allclose(np.asarray(getattr(got, field)),
                                   np.asarray(getattr(apart, field)), rtol=1e-12, atol=1e-12)
    assert np.abs(np.asarray(got.regret)).max() > 0.01              # not a trivial oracle


@pytest.mark.parametrize("game, scheme", [("leduc_poker", "external"),
                                          ("leduc_poker", "outcome"), ("kuhn_poker", "chance")])
def test_lanes_that_take_the_next_traversal_walk_the_same_traversals(game, scheme):
    """Fewer lanes than traversals (``lanes=1`` and ``5`` for 2 traversers x 2 members x 8
    draws, or 16 under chance sampling), each taking the next traversal not yet walked
    when its own ends: the same estimate as one lane per traversal to 1e-12 (float64),
    every recorded node once (the same total count), each lane within its slots; and
    :func:`walk.lane_count` refills only from ``REFILL_FROM`` traversals."""
    lowered = _lowered(game)
    rows, actions = lowered.tensors.legal_mask.shape
    members, samples = 2, 8
    with precision.scope(np.float64):
        t, s, policy, _, est, tables = _depth_first(lowered, scheme, samples, members, 4)
        chance = scheme == "chance"
        who = None if chance else jnp.arange(s.num_players)
        eps = jnp.asarray([0.6, 0.3])
        keys = jax.random.split(jax.random.key(11), members)
        u = (est.uniforms(keys, jnp.float64) if chance else
             jax.vmap(lambda i: est.uniforms(fold(keys, i), jnp.float64))(who))

        def dense(lanes):
            w = walk.walk(t, tables, est.bounds, est, policy.rows, members, u, who, eps,
                          s.num_players, lanes=lanes)
            e = est._slot_estimate(t, s.num_players, w.traverser, w.node, w.valid, w.member,
                                   w.x, w.sigma, w.reach, w.sample_reach, samples)
            return estimators.densify(e, rows, actions, members), w.count
        want, count = jax.jit(lambda: dense(None))()
        for lanes in (1, 5):
            got, got_count = jax.jit(lambda: dense(lanes))()            # noqa: B023
            assert got_count.shape == (lanes,)
            assert int(got_count.sum()) == int(count.sum())
            for field in ("regret", "average"):
                np.testing.assert_allclose(np.asarray(getattr(got, field)),
                                           np.asarray(getattr(want, field)),
                                           rtol=1e-12, atol=1e-12)
    assert np.abs(np.asarray(want.regret)).max() > 0.01              # not a trivial oracle
    assert count.shape == ((1 if chance else 2) * members * samples,)
    assert walk.lane_count(walk.REFILL_FROM - 1) == walk.REFILL_FROM - 1
    assert walk.lane_count(4096) == 4096 // walk.PER_LANE


def test_a_walk_records_only_the_nodes_its_update_reads():
    """Kuhn: an outcome-sampling trajectory holds 2 or 3 decisions, of which the update
    reads only the traverser's (its regrets, its strategy sums): at most 2, the plan's
    slots; chance sampling of every player reads all of them (at most 4: the root, both
    replies, the opener's last word); the slots of a simultaneous update hold exactly the
    finished nodes of the traverser and of the player it averages for."""
    lowered = _lowered("kuhn_poker")
    plans = {name: estimators.ESTIMATORS[name](walk="depth").prepare(lowered)[0].bounds
             for name in ("outcome", "chance")}
    assert (plans["outcome"].slots, plans["chance"].slots) == (2, 4)
    kind = np.asarray(lowered.tensors.node_kind)
    owner = np.asarray(lowered.tensors.node_player)
    out = estimators.OutcomeSampling()
    assert not np.asarray(walk.recorded(out, kind, owner, 0, 2))[owner == 1].any()
    assert np.array_equal(np.asarray(walk.recorded(out, kind, owner, None, 2)),
                          kind == DECISION)


def test_bounds_hold_for_every_walk():
    """Leduc, external sampling: the plan has one frame per level, and 200 walks of each
    traverser (one key each) finish between 1 and ``slots`` decision nodes (a walk past
    the bound would overwrite its last slot)."""
    lowered = _lowered("leduc_poker")
    est, tables = estimators.ExternalSampling(walk="depth").prepare(lowered)
    plan = est.bounds
    assert plan.depth == len(lowered.level_start) - 1
    t, s = to_device(lowered.tensors, np.float32), lowered.structure
    tables = subtree.SampleTables(*(jnp.asarray(x) for x in tables))
    policy, _ = _policy(lowered, 1, 200)

    @jax.jit
    def used(keys, player):
        u = est.uniforms(keys, jnp.float32)
        w = walk.walk(t, tables, plan, est, policy.rows, 200, u, player,
                      jnp.zeros(200), s.num_players)
        return w.valid.reshape(200, plan.slots).sum(axis=1)
    most = max(int(np.asarray(used(jax.random.split(jax.random.key(i), 200),
                                   jnp.asarray(i))).max()) for i in (0, 1))
    assert 0 < most <= plan.slots


@pytest.mark.parametrize("name, player, scheme, draws", [
    ("kuhn_poker", None, "external", 20_000), ("kuhn_poker", 1, "outcome", 20_000),
    ("kuhn_poker", None, "chance", 10_000),
    pytest.param("liars_dice(dice=1, sides=3)", 0, "external", 4_000,
                 marks=pytest.mark.slow)])
def test_walked_regrets_are_unbiased(name, player, scheme, draws):
    """The mean of ``draws`` walked estimates (one key per batch member) is the exact
    counterfactual regret within 5 standard errors."""
    lowered = _lowered(name)
    t, s = to_device(lowered.tensors, np.float32), lowered.structure
    rows, actions = lowered.tensors.legal_mask.shape
    policy, sigma = _policy(lowered, 0, draws)
    one, sigma0 = _policy(lowered, 0, 1)
    who = None if player is None else jnp.asarray(player)
    exact = np.asarray(estimators.Exact().estimate(
        t, s, jnp.asarray(sigma0[0], jnp.float32), who).regret)
    # the same strategy in every member
    tiled = jnp.repeat(one.regret, draws)
    policy = policy._replace(regret=tiled, prediction=jnp.zeros_like(tiled))
    est, tables = estimators.ESTIMATORS[scheme](walk="depth").prepare(lowered)
    tables = subtree.SampleTables(*(jnp.asarray(x) for x in tables))
    hp = jaxcfr.make_solver("cfr", sampling="outcome").hyperparams(exploration=[0.6] * draws)
    got = jax.jit(lambda keys: estimators.densify(
        est.estimate(t, s, policy, who, keys, hp, tables), rows, actions, draws).regret)(
            jax.random.split(jax.random.key(7), draws))
    assert_unbiased(np.moveaxis(np.asarray(got, np.float64), -1, 0), exact)


@pytest.mark.parametrize("scheme, algorithm, samples, iterations, bound", [
    ("external", "cfr", 16, 3000, 0.01), ("outcome", "lcfr", 64, 3000, 0.02),
    ("chance", "cfr", 16, 3000, 0.01)])
def test_kuhn_converges_depth_first(scheme, algorithm, samples, iterations, bound):
    """Kuhn: below the stated exploitability for each of 2 seeds (measured: external
    0.0046, outcome 0.015, chance 0.0064 with seed 0 at 2,000 iterations)."""
    result = jaxcfr.solve(_lowered("kuhn_poker"), algorithm, iterations,
                          estimator=jaxcfr.ESTIMATORS[scheme](samples=samples, walk="depth"),
                          seed=[0, 1])
    assert max(result.final["exploitability"]) < bound, result.final


@pytest.mark.slow
def test_leduc_below_0_1_depth_first():
    """Leduc, external sampling, 64 traversals per player and iteration, CFR: below 0.1
    after 2,000 iterations (OpenSpiel's one traversal per iteration: 0.27 after 10,000)."""
    result = jaxcfr.solve(_lowered("leduc_poker"), "cfr", 2000,
                          estimator=jaxcfr.ExternalSampling(samples=64, walk="depth"), seed=0,
                          device=jaxcfr.DeviceOptions(chunk=500))
    assert result.final["exploitability"] < 0.1, result.final["exploitability"]


# -- the pool: the lanes' output slots below the static bound, with the exact way out -------
def test_a_pool_holds_the_used_slots_in_their_order():
    """Kuhn, external sampling, 16 lanes (members) for traverser 0, float32: pooled into
    59 slots (the bound: 64; the walks use at most 59 with this seed), the pool holds every
    used slot of the bound's layout, in its order (lane after lane, slot after slot), field
    by field, and invalid slots after them; the regrets and strategy-sum contributions
    scattered from the pool are those scattered from the bound's slots, bit for bit; chunks
    of 8 slots from the 0th, 8th, ... used slot hold every used slot once, in order."""
    lowered, lanes, size = _lowered("kuhn_poker"), 16, 59
    t, s = to_device(lowered.tensors, np.float32), lowered.structure
    est, tables = estimators.ExternalSampling(walk="depth").prepare(lowered)
    tables = subtree.SampleTables(*(jnp.asarray(x) for x in tables))
    policy, _ = _policy(lowered, 2, lanes)

    def dense(v):                                 # the estimate of walked slots [I, A, B]
        return estimators.densify(est._slot_estimate(
            t, s.num_players, jnp.asarray(0), v.node, v.valid, v.member, v.x, v.sigma,
            v.reach, v.sample_reach, 1), *lowered.tensors.legal_mask.shape, lanes)

    @jax.jit
    def run(keys):
        w = walk.walk(t, tables, est.bounds, est, policy.rows, lanes,
                      est.uniforms(keys, jnp.float32), jnp.asarray(0), jnp.zeros(lanes),
                      s.num_players)
        p = walk.pooled(w, size)
        chunks = [walk.pooled(w, 8, 8 * i) for i in range(8)]      # 64 slots: all of them
        return w, p, dense(w), dense(p), jnp.concatenate([c.node for c in chunks])
    w, p, bound, got, chunked = run(jax.random.split(jax.random.key(2), lanes))
    count, valid = np.asarray(w.count), np.asarray(w.valid)
    assert np.array_equal(valid.reshape(lanes, -1).sum(axis=1), count)
    used = int(count.sum())
    assert lanes < used < size < valid.size               # fits, with padding, below the bound
    assert np.array_equal(np.asarray(p.valid), np.arange(size) < used)
    for field in ("node", "member", "x", "sigma", "reach", "sample_reach"):
        have, want = np.asarray(getattr(p, field)), np.asarray(getattr(w, field))
        assert np.array_equal(have[:used], want[valid]), field
        assert not np.asarray(have[used:], float).any(), field
    for field in ("regret", "average"):
        assert np.array_equal(np.asarray(getattr(got, field)),
                              np.asarray(getattr(bound, field))), field
    assert np.abs(np.asarray(bound.regret)).max() > 0.01         # not a trivial oracle
    # chunks of 8 from slot 0, 8, 16, ...: every used slot once, in order
    assert np.array_equal(np.asarray(chunked)[:used], np.asarray(w.node)[valid])


def test_pool_size_follows_the_probe_and_the_option():
    """The probe of Liar's dice external sampling: random walks finish far fewer recorded
    nodes than the bound (609), so the default pool of 128 lanes is a fraction of 128 x 609;
    ``pool=k`` gives k slots a lane (a multiple of 8), ``pool=0`` and any pool at or above
    the bound give the bound (no pool)."""
    plan = estimators.ExternalSampling(walk="depth").prepare(_lowered("liars_dice"))[0].bounds
    assert plan.slots == 609 and 0 < plan.mean < plan.most < plan.slots
    assert 128 * plan.mean < walk.pool_size(plan, 128, None) < 128 * plan.slots // 4
    assert walk.pool_size(plan, 2, None) >= plan.most + plan.mean
    assert walk.pool_size(plan, 128, 3) == 384
    assert walk.pool_size(plan, 2, 0) == walk.pool_size(plan, 2, 10_000) == 2 * 609
    with pytest.raises(jaxcfr.ArgumentError, match="pool"):
        estimators.ExternalSampling(walk="depth", pool=-1)


@pytest.mark.parametrize("game, scheme, samples, pools, algorithm, alternating", [
    ("kuhn_poker", "external", 4, (1,), "cfr", False),
    ("kuhn_poker", "external", 4, (1,), "cfr", True),
    ("leduc_poker", "external", 8, (1, 10, None), "cfr", False),
    ("leduc_poker", "external", 8, (1, 10, None), "cfr", True),
    ("leduc_poker", "external", 8, (1, 10), "pcfr+", True),
    ("leduc_poker", "outcome", 8, (1, None), "cfr", False),
    # 256 traversals a step: lanes that take the next traversal (walk.lane_count)
    pytest.param("leduc_poker", "outcome", 128, (1, None), "cfr", False,
                 marks=pytest.mark.slow)])
def test_a_pool_gives_the_bound_s_tables_bit_for_bit(game, scheme, samples, pools, algorithm,
                                                     alternating):
    """Every pool (one a lane: every step overflows into many chunks; Leduc external's 10 a
    lane, near the walks' mean: some steps fit, some take two chunks; the probe's: most
    fit) gives the regret, strategy-sum and prediction tables of the bound (``pool=0``)
    after 30 iterations bit for bit, same seeds, two members (simultaneous or alternating;
    regret matching, or predictive RM+: a rule applied once a row across chunks)."""
    lowered = _lowered(game)
    tables = {}
    for pool in (0,) + pools:
        solver = jaxcfr.make_solver(algorithm, alternating=alternating,
                                    estimator=estimators.ESTIMATORS[scheme](
                                        samples=samples, walk="depth", pool=pool))
        runner = jaxcfr.Runner(lowered, solver, {"seed": [3, 4]}, chunk=30)
        state = runner.advance(runner.init(), 30)
        tables[pool] = [np.asarray(x) for x in state.tables.values()]
    assert np.abs(tables[0][0]).max() > 0.01                       # not a trivial oracle
    for pool in pools:
        for have, want in zip(tables[pool], tables[0]):
            assert np.array_equal(have, want), pool
