"""Stacks of public trees: every member solved in one compiled step is its own solve.

Oracles: each member's separate solve (the single-game public-tree update, already
checked against the history tree in ``tests/test_public.py``): in float64, after every
iteration, the member's regrets and strategy sums (unpadded) equal its own to 1e-12 and
its exploitability from the stack's evaluation equals its own evaluation, for members of
different tree shapes, hand counts, terminal operators (fold, showdown, payoff tables;
dense and ranked) and for hold'em river spots on different boards, ranges and bet sizes.
Padding changes nothing: a member stacked beside larger games gives the result of the
stack of itself alone, and the padded entries are inert (weight 0, blocked, unowned
rows, nodes nobody's child).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr._util.arguments import ArgumentError
from jaxcfr.lowering.public_stack import (PADDED_AXES, PublicStack, stack_public,
                                          unstack_public_rows)
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import evaluate_public, public_device_tensors, public_solver
from jaxcfr.solvers import public_blocks
from jaxcfr.solvers.public_stack import (evaluate_public_stack, stack_chunk,
                                         stack_device_tensors, stack_init, stack_update)
from jaxcfr.tensors import NO_PLAYER, PublicTensors
from jaxcfr_games.holdem.boards import (board_spots, next_boards, random_boards,
                                        river_boards, turn_boards)
from jaxcfr_games.holdem.cards import HoldemError, parse_board
from jaxcfr_games.holdem.spot import HoldemSpot
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc
from tests.random_public_games import RandomPublicGame

F64 = np.float64
SMALL = ("QQ+,AKs,AQs,KQs,JTs", "JJ-99,AJs+,KJs,T9s,98s")

_single = jax.jit(lambda solver, t, s, state, hp: solver.update(t, s, state, hp),
                  static_argnums=(0, 2))


def _lockstep(games, algorithm, iterations, terminals="dense", merges=False):
    """Solve ``games`` as one stack and each alone, in float64, and check after every
    iteration that each member's tables and metrics are its own solve's (``merges``:
    each member and its own solve on its merged, suit-isomorphic tree)."""
    lowered = [jaxcfr.lower_public(g, terminals=terminals, merges=merges) for g in games]
    stack = stack_public(lowered)
    solver = public_solver(make_solver(algorithm))
    with precision.scope(F64):
        tensors = stack_device_tensors(stack, F64)
        hp = solver.hyperparams(F64)
        state = stack_init(solver, stack, dtype=F64)
        singles = [public_device_tensors(g, F64) for g in lowered]
        own = [solver.init(t, dtype=F64) for t in singles]
        for it in range(iterations):
            state = stack_update(tensors, state, hp, solver=solver, structure=stack.structure)
            own = [_single(solver, t, g.structure, s, hp)
                   for t, g, s in zip(singles, lowered, own)]
            regret = unstack_public_rows(stack, state.regret)
            sums = unstack_public_rows(stack, state.strategy_sum)
            ev = evaluate_public_stack(stack, state.strategy_sum, tensors=tensors)
            for b, (g, s) in enumerate(zip(lowered, own)):
                r, ss = np.asarray(s.regret), np.asarray(s.strategy_sum)
                assert regret[b].shape == r.shape
                scale = max(1.0, np.abs(r).max())
                np.testing.assert_allclose(regret[b], r, rtol=0, atol=1e-12 * scale,
                                           err_msg=f"member {b} regret, iteration {it + 1}")
                np.testing.assert_allclose(sums[b], ss, rtol=0,
                                           atol=1e-12 * max(1.0, np.abs(ss).max()),
                                           err_msg=f"member {b} strategy sum, it {it + 1}")
                e = evaluate_public(g, ss)
                np.testing.assert_allclose(ev["nash_conv"][b], e["nash_conv"], rtol=1e-12,
                                           atol=1e-14)
                np.testing.assert_allclose(ev["values"][b], e["values"], rtol=1e-12,
                                           atol=1e-14)
                if e["exploitability"] is not None:
                    np.testing.assert_allclose(ev["exploitability"][b], e["exploitability"],
                                               rtol=1e-12, atol=1e-14)
            assert np.asarray(state.iteration).tolist() == [it + 1] * len(games)
    return stack


@pytest.mark.parametrize("algorithm", ["cfr", pytest.param("pcfr+", marks=pytest.mark.slow)])
def test_members_of_different_shapes_solve_as_alone(algorithm):
    # Kuhn (3 hands, 9 nodes), Leduc with 3 and 4 ranks (6 and 8 hands, other trees):
    # simultaneous (cfr) and alternating updates with predictions (pcfr+); discounting
    # and restarted averages in the hold'em test (postflop-dcfr)
    stack = _lockstep([PublicLeduc(ranks=3), PublicKuhn(), PublicLeduc(ranks=4)],
                      algorithm, 6)
    assert stack.batch_size == 3 and stack.structure.hands == (8, 8)
    assert len({m.num_nodes for m in stack.members}) == 3


@pytest.mark.slow
@pytest.mark.parametrize("terminals", ["dense", "ranked"])
def test_random_public_games_solve_as_alone(terminals):
    # payoff tables, public chance with and without cards, 1- and 2-card hands
    games = [RandomPublicGame(seed) for seed in (1, 4, 7)]
    stack = _lockstep(games, "cfr+", 4, terminals)
    assert stack.ranked == (terminals == "ranked")


@pytest.mark.slow
def test_holdem_river_spots_of_different_boards_ranges_and_sizes():
    # different boards (16 to 37 hands after card removal), other ranges, other bet sizes
    # (another tree shape), the ranked operators
    games = [HoldemSpot(board="Td9d6h5c2s", ranges=SMALL),
             HoldemSpot(board="AsKd6h5c2s", ranges=SMALL),
             HoldemSpot(board="Td9d6h5cQs", ranges=("AA,KK,AKs", SMALL[1])),
             HoldemSpot(board="Td9d6h5c2s", ranges=SMALL, bets="33%, 75%, a")]
    stack = _lockstep(games, "postflop-dcfr", 5, "ranked")
    assert len({m.structure.hands for m in stack.members}) == 3
    assert len({m.num_nodes for m in stack.members}) == 2
    # the other tree's decisions differ: every member padded to the stack's player
    # blocks, stepped per player block (postflop-dcfr alternates)
    assert len({m.structure.player_decisions for m in stack.members}) == 2
    assert stack.structure.player_decisions != ()


@pytest.mark.slow
def test_a_stack_of_one_tree_steps_each_member_per_player_block():
    # river boards of one spot: one tree, other hand counts (padding hands inside the
    # players' blocks stay inert); the stack counts each player's decisions, so each
    # member runs per player block (solvers.public_blocks), members one after another
    games = [HoldemSpot(board=b, ranges=SMALL) for b in ("Td9d6h5c2s", "AsKd6h5c2s",
                                                         "Td9d6h5cQs")]
    stack = _lockstep(games, "postflop-dcfr", 3, "ranked")
    alone = stack.members[0].structure
    assert len({m.structure.hands for m in stack.members}) == 3
    assert stack.structure.player_decisions == alone.player_decisions != ()
    assert stack.structure.legal_groups == alone.legal_groups
    # another tree (a member with other decisions): padded to the stack's player blocks
    # (each player's decisions of each count of legal actions: the most of any member),
    # per player block too (test_holdem_river_spots_of_different_boards_ranges_and_sizes
    # checks such a stack against each member's own solve)
    tree = jaxcfr.lower_public(HoldemSpot(board="Td9d6h5c2s", ranges=SMALL,
                                          bets="33%, 75%, a"), terminals="ranked",
                               merges=False)
    other = stack_public([stack.members[0], tree])
    assert tree.structure.player_decisions != alone.player_decisions
    assert other.structure.player_decisions == tuple(
        sum(max(dict(g[p]).get(k, 0) for g in (alone.legal_groups, tree.structure.legal_groups))
            for k in range(1, 8)) for p in range(2))


@pytest.mark.parametrize("game, dtype, mapped", [
    ("kuhn", F64, True),
    pytest.param("kuhn", F64, False, marks=pytest.mark.slow),
    pytest.param("river", F64, True, marks=pytest.mark.slow),
    pytest.param("river", F64, False, marks=pytest.mark.slow),
    pytest.param("river", np.float32, True, marks=pytest.mark.slow),
    pytest.param("river", np.float32, False, marks=pytest.mark.slow)])
def test_a_stack_of_copies_is_the_game_alone_bit_for_bit(game, dtype, mapped):
    # members one after another: the game's own per-player-block loop; vmapped: its row
    # path (the same programs on the same shapes, so the same bits)
    lowered = (jaxcfr.lower_public(PublicKuhn()) if game == "kuhn" else jaxcfr.lower_public(
        HoldemSpot(board="Td9d6h5c2s", ranges=SMALL), merges=False))
    s = lowered.structure
    stack = stack_public([lowered, lowered])
    assert stack.structure.player_decisions == s.player_decisions != ()
    solver = public_solver(make_solver("dcfr" if game == "kuhn" else "postflop-dcfr"))
    with precision.scope(dtype):
        t, hp = public_device_tensors(lowered, dtype), solver.hyperparams(dtype)
        start = solver.init(t, dtype=dtype)
        if mapped:
            alone = jax.jit(lambda t, st, hp: public_blocks.iterate(solver, t, s, st, hp, 4))
        else:
            alone = jax.jit(lambda t, st, hp: jax.lax.fori_loop(
                0, 4, lambda _, c: solver.step(t, s, c, hp), solver.start(t, st)).state)
        want = alone(t, start, hp)
        out = stack_chunk(stack_device_tensors(stack, dtype), stack_init(
            solver, stack, dtype=dtype), hp, solver=solver, structure=stack.structure,
            count=4, mapped=mapped)
        for field in ("regret", "strategy_sum"):
            for b in range(2):
                np.testing.assert_array_equal(np.asarray(getattr(out, field))[b],
                                              np.asarray(getattr(want, field)))


@pytest.mark.slow
def test_holdem_turn_spots_of_a_flop():
    # turn cards of a flop as turn spots: river cards as public chance blocking hands
    spots = board_spots(turn_boards("Td9d6h")[:2] + ["Td9d6hAs"], ranges=SMALL, bets="a",
                        raises="a", river_donk=None)
    stack = _lockstep(spots, "postflop-dcfr", 3, "ranked")
    assert [m.structure.hands for m in stack.members] == [(33, 34), (33, 34), (28, 31)]


def test_padding_changes_nothing():
    # a member beside larger games ends exactly as the stack of itself alone
    small = jaxcfr.lower_public(PublicKuhn())
    alone = jaxcfr.solve_public([small], "cfr+", 30, precision="float64", chunk=10)
    big = jaxcfr.solve_public([jaxcfr.lower_public(PublicLeduc(ranks=4)), small],
                              "cfr+", 30, precision="float64", chunk=10)
    a, b = alone.member(0), big.member(1)
    np.testing.assert_allclose(b.average_strategy, a.average_strategy, rtol=0, atol=1e-13)
    np.testing.assert_allclose(b.state.regret, a.state.regret, rtol=0, atol=1e-13)
    assert b.final["nash_conv"] == pytest.approx(a.final["nash_conv"], rel=1e-12)
    # and the stack of one is the single game's solve
    single = jaxcfr.solve_public(small, "cfr+", 30, precision="float64", chunk=10)
    np.testing.assert_allclose(a.average_strategy, single.average_strategy, rtol=0,
                               atol=1e-13)
    assert a.final["nash_conv"] == pytest.approx(single.final["nash_conv"], rel=1e-12)


def test_padded_entries_are_inert():
    members = [jaxcfr.lower_public(g) for g in (PublicKuhn(), PublicLeduc(ranks=4))]
    stack = stack_public(members)
    t = stack.tensors
    H = max(stack.structure.hands)
    kuhn = members[0]
    h = max(kuhn.structure.hands)                      # 3 hands of 8
    assert (t.weights[0, :, h:] == 0).all() and (t.alive[0, :, :, h:] == 0).all()
    assert (t.compat[0, h:] == 0).all() and (t.compat[0, :, h:] == 0).all()
    rows = t.infoset_player[0, :-1].reshape(-1, H)
    assert (rows[:, h:] == NO_PLAYER).all()
    assert (rows[kuhn.tensors.decision_node.shape[0]:] == NO_PLAYER).all()
    assert t.legal_mask[0][t.infoset_player[0] == NO_PLAYER][:, 1:].sum() == 0
    # Kuhn's real rows keep their owners and legal actions, moved to d * H + h
    d = kuhn.tensors.decision_node.shape[0]
    np.testing.assert_array_equal(
        rows[:d, :h].reshape(-1), kuhn.tensors.infoset_player[:-1])
    # padding nodes are nobody's child, not decisions, not terminals, chance reach 0
    real = np.zeros(stack.num_nodes, bool)
    real[t.first_child[0][t.child_count[0] > 0]] = True    # first children of real nodes
    counted = np.zeros(stack.num_nodes + 1, int)
    for n in range(stack.num_nodes):
        if t.child_count[0, n]:
            counted[t.first_child[0, n]:t.first_child[0, n] + t.child_count[0, n]] += 1
    assert counted[:-1].sum() == kuhn.num_nodes - 1
    padding = counted[:-1] == 0
    padding[0] = False                                        # the root
    assert padding.sum() == stack.num_nodes - kuhn.num_nodes
    assert (t.chance_reach[0][padding] == 0).all() and (t.node_base[0][padding] < 0).all()
    terminals = t.fold_node.shape[1] + t.show_node.shape[1] + t.table_node.shape[1]
    assert (t.leaf_index[0][padding] == terminals).all()
    # unstack is the inverse of the padding
    table = np.random.default_rng(0).random(t.legal_mask.shape)
    back = unstack_public_rows(stack, table)
    assert back[0].shape == kuhn.tensors.legal_mask.shape
    np.testing.assert_array_equal(back[0][:-1].reshape(d, h, -1),
                                  table[0, :-1].reshape(-1, H, table.shape[2])[:d, :h,
                                                                                :kuhn.max_actions])


def test_every_tensor_field_has_its_axes():
    assert set(PADDED_AXES) == set(PublicTensors._fields)
    lowered = jaxcfr.lower_public(PublicLeduc(ranks=3), terminals="ranked")
    for name, axes in PADDED_AXES.items():
        assert np.ndim(getattr(lowered.tensors, name)) == len(axes), name
    # the ranked operators never read the [H, H] compatibility: empty in a stack as alone
    assert stack_public([lowered, lowered]).tensors.compat.shape == (2, 0, 0)


def test_solve_public_of_a_list_gives_per_spot_results():
    spots = board_spots(["Td9d6h5c2s", "AsKd6h5c2s"], ranges=SMALL)
    result = jaxcfr.solve_public(spots, "postflop-dcfr", 20, eval_every=10)
    assert isinstance(result, jaxcfr.api.public_stack.PublicStackResult)
    assert [r["iteration"] for r in result.metrics] == [10, 20]
    exploit = result.final["exploitability"]
    assert len(exploit) == 2 and all(x >= 0 for x in exploit)
    assert result.final["exploitability_pot_percent"] == pytest.approx(
        [100 * x / 100 for x in exploit])
    one = result.member(1)
    assert one.final["exploitability"] == exploit[1]
    alone = jaxcfr.solve_public(spots[1], "postflop-dcfr", 20)
    assert one.final["exploitability"] == pytest.approx(alone.final["exploitability"],
                                                        rel=1e-3)
    row = one.strategy(0, one.lowered.hands.labels[0][0])
    assert sum(row.values()) == pytest.approx(1.0)
    with pytest.raises(ArgumentError, match="member"):
        result.member(2)


def test_bad_stacks_are_refused():
    with pytest.raises(ValueError, match="at least one"):
        stack_public([])
    with pytest.raises(ValueError, match="member 1 is a str"):
        stack_public([PublicKuhn(), "kuhn_poker"])
    mixed = [jaxcfr.lower_public(PublicLeduc(ranks=3), terminals="dense"),
             jaxcfr.lower_public(PublicLeduc(ranks=3), terminals="ranked")]
    with pytest.raises(ValueError, match="mix ranked and dense"):
        stack_public(mixed)
    with pytest.raises(ArgumentError, match="mix ranked and dense"):
        jaxcfr.solve_public(mixed, "cfr+", 1)
    with pytest.raises(ArgumentError, match="at least one"):
        jaxcfr.solve_public([], "cfr+", 1)
    with pytest.raises(ArgumentError, match="no member of the stack has it"):
        jaxcfr.solve_public([PublicKuhn(), PublicKuhn()], "cfr+", 1,
                            lock={("", "J"): {"p": 1.0}})
    # games lowered here agree on the operators by themselves
    stack = stack_public([PublicLeduc(ranks=3), mixed[1]])
    assert isinstance(stack, PublicStack) and stack.ranked


def test_boards():
    rivers = river_boards("Td9d6h5c")
    assert len(rivers) == 48 and len(set(rivers)) == 48
    assert all(r.startswith("Td9d6h5c") and len(set(parse_board(r))) == 5 for r in rivers)
    assert len(turn_boards("Td9d6h")) == 49
    assert next_boards("Td9d6h") == turn_boards("Td9d6h")
    boards = random_boards(64, seed=3)
    assert len({frozenset(parse_board(b)) for b in boards}) == 64
    assert boards == random_boards(64, seed=3) and boards != random_boards(64, seed=4)
    with pytest.raises(HoldemError, match="turn board"):
        river_boards("Td9d6h")
    with pytest.raises(HoldemError, match="no card comes next"):
        next_boards("Td9d6h5c2s")
    with pytest.raises(HoldemError, match="3, 4 or 5"):
        random_boards(2, cards=6)
    spots = board_spots(rivers[:2], ranges=SMALL, pot=60)
    assert [s.pot for s in spots] == [60, 60]
    assert stack_public(spots).pots == (60, 60)


def test_one_compiled_program_serves_stacks_of_one_padded_shape():
    # the stack's tables are arguments: the same members in another order (other tensors,
    # the same padded shape) reuse the compiled update
    a, b = jaxcfr.lower_public(PublicKuhn()), jaxcfr.lower_public(PublicLeduc(ranks=3))
    solver = public_solver(make_solver("cfr+"))
    sizes = []
    for members in ([a, b], [b, a]):
        stack = stack_public(members)
        with precision.scope(F64):
            tensors = stack_device_tensors(stack, F64)
            state = stack_init(solver, stack, dtype=F64)
            stack_update(tensors, state, solver.hyperparams(F64), solver=solver,
                         structure=stack.structure)
        sizes.append(stack_update._cache_size())
    assert sizes[1] == sizes[0]


def test_a_batch_of_settings_on_a_stack():
    # lists of parameter values: a trailing axis [B, *b] of every member's tables
    stacked = jaxcfr.solve_public([PublicKuhn(), PublicLeduc(ranks=3)], "dcfr", 20,
                                  precision="float64", alpha=[1.5, 2.0])
    assert np.shape(stacked.final["nash_conv"]) == (2, 2)
    alone = jaxcfr.solve_public(PublicLeduc(ranks=3), "dcfr", 20, precision="float64",
                                alpha=[1.5, 2.0])
    np.testing.assert_allclose(stacked.final["nash_conv"][1], alone.final["nash_conv"],
                               rtol=1e-12)
    assert stacked.member(1).average_strategy.shape == alone.average_strategy.shape


def test_a_stack_over_the_memory_budget_is_refused_before_its_other_members(monkeypatch):
    """A stack too large for the budget is refused as soon as its first members show it
    (the estimate is the padded member's footprint times the count, the runtime's share
    once), not after every member is lowered; a stack that fits is stacked as before."""
    from jaxcfr.lowering import public_stack as module
    from jaxcfr.lowering.budget import MemoryBudgetError
    from jaxcfr.lowering.public import public_footprint
    calls = []
    real = module.lower_public
    monkeypatch.setattr(module, "lower_public", lambda g, **k: calls.append(g) or real(g, **k))
    games = [PublicKuhn()] * 200
    one = jaxcfr.lower_public(PublicKuhn()).public_size
    need = module.stack_footprint([one], 200)
    assert need.device == public_footprint(one).device + 199 * (
        public_footprint(one).device - (256 << 20))
    with pytest.raises(MemoryBudgetError, match=r"a stack of 200 members .* over the memory "
                                                r"budget .*stack fewer members"):
        stack_public(games, memory_budget=need.total - 1)
    assert len(calls) == 1                          # refused after the first member
    calls.clear()
    assert stack_public(games[:3], memory_budget=need.total).batch_size == 3
    seen = []
    with pytest.raises(MemoryBudgetError, match="a stack of 200 spots"):
        module.precheck_stack(lambda b: seen.append(b) or jaxcfr.lower_public(games[b]), 200,
                              need.total - 1, what="spots")
    assert seen == sorted(set(seen)) and len(seen) == module.PRECHECK_MEMBERS
    assert seen[0] == 0 and seen[-1] == 199         # spread over the whole stack
