"""Stacks of public trees solved on their members' merged (suit-isomorphic) trees
(docs/holdem.md "Stacks on merged trees").

Oracles: in float64, after every iteration, each member's regrets, strategy sums and
metrics equal its own merged solve's to 1e-12 (members merged, unmerged and without
chance side by side, their merged outcomes padded level by level); the merged stack's
values, best-response values, NashConv and every member's profile (keyed by the unmerged
game's information sets) equal the stack lowered with ``merges=False`` to 1e-9 (the
two-suit game of tests/test_public_merged_profiles.py) and to a stated tolerance after
convergence on hold'em turns (monotone, paired, two-tone and rainbow boards); a lock that
keeps a member's symmetry is solved on its merged tree and one that breaks it on the
member lowered again without merging, each member equal to its own locked solve.
Members of other decision counts per player (merged differently, other trees), padded
to the stack's player blocks and stepped per player block, equal the stack of rowless
padded decisions (``blocks=False``: the row path) bit for bit (1e-12 on hold'em) and
their own solves, their padding rows never moving (docs/holdem.md "Members of other
decision counts per player block").
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr.api.locks import (BrokenSymmetry, ForMember, locked_stack, resolve_lock,
                              symmetric_lock)
from jaxcfr._util import precision
from jaxcfr.solvers import public_blocks
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import evaluate_public, public_device_tensors, public_solver
from jaxcfr.solvers.public_stack import (evaluate_public_stack, stack_device_tensors,
                                         stack_init, stack_update)
from jaxcfr.tensors import NO_PLAYER, PublicTensors
from jaxcfr_games.holdem.spot import HoldemSpot
from jaxcfr.lowering.public import lower_public
from jaxcfr.lowering.public_stack import (stack_public, stack_public_rows,
                                          unstack_public_rows)
from jaxcfr_games.holdem.boards import board_spots
from jaxcfr_games.public_kuhn import PublicKuhn
from cli_mistakes import run_cli as _cli
from test_merged_locks import SYMMETRIC
from jaxcfr.profiles.profile import Profile
from test_public_merged_profiles import TwoBoards, symmetric_table
from test_public_stack import F64, SMALL, _lockstep, _single

#: Breaks the suit symmetry: locked below one card of a class, not below the other.
BREAKING = {(("check", 3), None): {"bet": 1.0}}

#: Turn boards: monotone (three suits alike), paired (hearts ~ clubs), two-tone (clubs ~
#: spades), rainbow (no symmetry: nothing merged).
TURNS = ["Td9d6d5d", "Td9d6h6c", "Td9d6h5h", "Td9c6h2d"]
TURN_SPOT = dict(ranges=SMALL, bets="a", raises="a", river_donk=None)


@pytest.mark.slow
def test_merged_members_solve_as_alone():
    # merged, without chance and unmerged members side by side: the merged outcomes of
    # each level padded to the member with the most there
    stack = _lockstep([TwoBoards(), PublicKuhn(), TwoBoards(merge=False), TwoBoards()],
                      "cfr+", 5, merges=True)
    assert [len(m.merged) for m in stack.members] == [6, 0, 0, 6]
    # members of other decision counts, stepped per player block (cfr+ alternates)
    assert len({m.structure.player_decisions for m in stack.members}) == 3
    assert stack.structure.player_decisions == stack.members[2].structure.player_decisions
    spans = stack.structure.merges
    assert spans and sum(b - a for a, b in spans) == 6
    assert stack.tensors.merge_source.shape[:2] == (4, 6)


def _agree(a, b, tol):
    for key in ("values", "best_response_values", "nash_conv", "exploitability"):
        np.testing.assert_allclose(np.asarray(a.final[key], float),
                                   np.asarray(b.final[key], float), rtol=0, atol=tol,
                                   err_msg=key)


def _same_profiles(a, b, tol):
    for m in range(a.batch_size):
        pa, pb = a.member(m).profile(), b.member(m).profile()
        assert set(pa) == set(pb)
        assert max(abs(pa[k][x] - pb[k][x]) for k in pa for x in pa[k]) < tol


@pytest.mark.slow
def test_a_merged_stack_reports_the_unmerged_stacks_figures():
    games = [TwoBoards(), PublicKuhn(), TwoBoards()]
    merged = jaxcfr.solve_public(games, "cfr+", 30, precision="float64")
    walked = jaxcfr.solve_public(games, "cfr+", 30, precision="float64", merges=False)
    assert merged.stack.num_nodes < walked.stack.num_nodes
    assert merged.stack.members[0].merged and not walked.stack.members[0].merged
    _agree(merged, walked, 1e-9)
    _same_profiles(merged, walked, 1e-9)
    # a member's profile, keyed by the unmerged game, evaluates there to its figures
    ev = merged.member(2).to_profile().evaluate(TwoBoards(merge=False),
                                                precision="float64")
    assert ev["nash_conv"] == pytest.approx(merged.final["nash_conv"][2], abs=1e-9)


@pytest.mark.slow
def test_locks_per_member_keep_or_break_the_symmetry():
    games = [TwoBoards(), TwoBoards(), PublicKuhn()]
    notes = []
    # one lock on every member where it exists: symmetric, so both stay merged
    kept = jaxcfr.solve_public(games[:2], "cfr+", 20, precision="float64", lock=SYMMETRIC,
                               note=notes.append)
    assert notes == [] and all(m.merged for m in kept.stack.members)
    alone = jaxcfr.solve_public(TwoBoards(), "cfr+", 20, precision="float64",
                                lock=SYMMETRIC)
    assert alone.lowered.merged
    for b in (0, 1):
        np.testing.assert_allclose(kept.final["values"][b], alone.final["values"],
                                   rtol=0, atol=1e-12)
        assert kept.final["exploitability"][b] == pytest.approx(
            alone.final["exploitability"], abs=1e-12)
    # one per member: member 0's breaks the symmetry (lowered again, every card walked),
    # member 1's keeps it; each is its own locked solve
    mixed = jaxcfr.solve_public(games, "cfr+", 20, precision="float64",
                                lock=[BREAKING, SYMMETRIC, None], note=notes.append)
    assert [bool(m.merged) for m in mixed.stack.members] == [False, True, False]
    assert len(notes) == 1 and "breaks the suit symmetry of member 0 (" in notes[0]
    broken = jaxcfr.solve_public(TwoBoards(), "cfr+", 20, precision="float64",
                                 lock=BREAKING)
    assert not broken.lowered.merged
    for b, own in ((0, broken), (1, alone)):
        np.testing.assert_allclose(mixed.final["values"][b], own.final["values"],
                                   rtol=0, atol=1e-12)
        assert mixed.final["exploitability"][b] == pytest.approx(
            own.final["exploitability"], abs=1e-12)
        pa, pb = mixed.member(b).profile(), own.profile()
        assert set(pa) == set(pb)
        assert max(abs(pa[k][x] - pb[k][x]) for k in pa for x in pa[k]) < 1e-12
    # the Runner (jaxcfr.solve of a stack) decides the same way (a lock's entries per
    # member: a lock file's "member")
    per = {**{ForMember(0, k): v for k, v in BREAKING.items()},
           **{ForMember(1, k): v for k, v in SYMMETRIC.items()}}
    runner = jaxcfr.solve(stack_public(games), "cfr+", 20, precision="float64", lock=per)
    np.testing.assert_allclose(np.asarray(runner.final["values"], float),
                               np.asarray(mixed.final["values"], float), rtol=0, atol=1e-12)


def test_a_merged_stack_evaluates_each_member_as_its_unmerged_game():
    # one evaluation of a stack: the merged game beside its unmerged tree (no merged
    # outcomes: all its entries are padding) and Kuhn (no chance); a random profile
    # symmetric above the merged cards, read on the unmerged tree's rows, has there the
    # merged member's values, best-response values and NashConv
    merged, plain = lower_public(TwoBoards()), lower_public(TwoBoards(merge=False))
    stack = stack_public([merged, plain, lower_public(PublicKuhn())])
    assert [len(m.merged) for m in stack.members] == [6, 0, 0]
    spans = stack.structure.merges
    assert spans and sum(b - a for a, b in spans) == 6
    assert stack.tensors.merge_source.shape[:2] == (3, 6)
    table = symmetric_table(merged)
    full, counts = Profile.from_lowered(merged, table).table(plain)
    assert counts["missing"] == 0
    kuhn = stack.members[2].tensors.legal_mask.astype(float)
    ev = evaluate_public_stack(stack, stack_public_rows(stack, [table, full, kuhn]))
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_allclose(ev[key][0], ev[key][1], rtol=0, atol=1e-12, err_msg=key)
    assert float(ev["nash_conv"][0]) > 1e-2


def test_a_lock_per_member_keeps_or_breaks_each_members_symmetry():
    stack = stack_public([TwoBoards(), TwoBoards(), TwoBoards(merge=False)])
    # one lock on every member, symmetric: the merged ones stay merged, each locked as
    # symmetric_lock locks it alone
    same, lock, unmerged = locked_stack(stack, SYMMETRIC)
    assert same is stack and unmerged == ()
    alone = symmetric_lock(stack.members[0], SYMMETRIC)
    for b in (0, 1):
        assert np.array_equal(unstack_public_rows(stack, lock.strategy)[b], alone.strategy)
    plain = resolve_lock(stack.members[2], SYMMETRIC)
    assert np.array_equal(unstack_public_rows(stack, lock.mask[..., None])[2][:, 0],
                          plain.mask)
    # member 0's breaks it: lowered again without merging, the others kept
    again, lock, unmerged = locked_stack(stack, [BREAKING, SYMMETRIC, None])
    assert unmerged == (0,) and again is not stack
    assert [bool(m.merged) for m in again.members] == [False, True, False]
    assert again.members[0].num_nodes == lower_public(TwoBoards(merge=False)).num_nodes
    assert again.unmerged is stack.unmerged and again.pots == stack.pots
    # a stack of lowered members cannot lower them again: refused, naming merges=False
    lowered = stack_public(list(stack.members))
    assert lowered.unmerged is None
    with pytest.raises(BrokenSymmetry, match="breaks the suit symmetry of member 0 .*"
                                             "merges=False"):
        locked_stack(lowered, [BREAKING, None, None])
    assert locked_stack(lowered, SYMMETRIC)[0] is lowered


@pytest.mark.slow
def test_holdem_turn_spots_on_merged_trees_solve_as_alone():
    spots = board_spots(TURNS, **TURN_SPOT)
    stack = _lockstep(spots, "postflop-dcfr", 3, "ranked", merges=True)
    assert [len(m.merged) > 0 for m in stack.members] == [True, True, True, False]
    # other decision counts (a monotone turn merges three suits, the others two or none),
    # each member padded to the stack's player blocks and stepped per player block
    assert len({m.structure.player_decisions for m in stack.members}) > 1
    assert stack.structure.player_decisions == max(m.structure.player_decisions
                                                   for m in stack.members)
    assert stack.structure.legal_groups != ()


@pytest.mark.slow
def test_holdem_turn_stack_merged_converges_to_the_unmerged_stack():
    # agreement per iteration is floating point's (docs/holdem.md "Profiles after a merged
    # card"): after convergence the figures agree to a small part of the pot (seen
    # 2026-12-06: 0.05 chips of NashConv on Td9d6h6c, 1e-4 to 2e-3 on the others)
    spots = board_spots(TURNS, **TURN_SPOT)
    merged = jaxcfr.solve_public(spots, "postflop-dcfr", 300, precision="float64")
    walked = jaxcfr.solve_public(spots, "postflop-dcfr", 300, precision="float64",
                                 merges=False)
    assert max(merged.final["exploitability_pot_percent"]) < 0.1
    assert max(walked.final["exploitability_pot_percent"]) < 0.1
    # (the profiles themselves need not agree: a hand indifferent between actions may mix
    # them in any way; tests above compare them where the two solves are exact)
    for key, tol in (("values", 0.05), ("best_response_values", 0.05), ("nash_conv", 0.1),
                     ("exploitability", 0.05)):                        # chips, pot 100
        np.testing.assert_allclose(np.asarray(merged.final[key], float),
                                   np.asarray(walked.final[key], float), rtol=0, atol=tol,
                                   err_msg=key)


@pytest.mark.slow
def test_boards_on_the_command_line_are_solved_merged(capsys, tmp_path):
    spot = ("holdem_spot(board='Td9d6d5d', ranges=('QQ+,AKs,AQs,KQs,JTs', 'JJ-99,AJs+,KJs,"
            "T9s,98s'), bets='a', raises='a', river_donk=None)")
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps([{"history": [], "hand": "KK", "strategy": {"Check": 1}},
                                {"history": [], "hand": "AsAh", "member": "Td9d6h6c",
                                 "strategy": {"Check": 1}}]))
    boards = TURNS[:3]
    status, out, err = _cli(capsys, "solve", spot, "--boards", ",".join(boards),
                            "--algorithm", "postflop-dcfr", "--iterations", "10",
                            "--precision", "float64", "--lock", str(lock), "--json")
    assert status == 0, err
    assert "breaks the suit symmetry of member Td9d6h6c:" in err
    shown = json.loads(out)
    ref = jaxcfr.solve_public(board_spots(boards, **TURN_SPOT), "postflop-dcfr", 10,
                              precision="float64", lock=str(lock),
                              member_labels=tuple(boards))
    assert [bool(m.merged) for m in ref.stack.members] == [True, False, True]
    np.testing.assert_allclose(shown["exploitability"], ref.final["exploitability"],
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(shown["values"], ref.final["values"], rtol=1e-12, atol=0)


@pytest.mark.slow
def test_train_keeps_each_boards_merged_tree_where_its_lock_keeps_the_symmetry(tmp_path):
    # jaxcfr train: game.boards of turns, solver.lock with an entry that breaks one
    # board's symmetry; the run's stack is solve_public's (each member decided alike)
    from jaxcfr.runs.config import config_from_dict
    from jaxcfr.runs.train import train
    spot = ("holdem_spot(ranges=('QQ+,AKs,AQs,KQs,JTs', 'JJ-99,AJs+,KJs,T9s,98s'), "
            "bets='a', raises='a', river_donk=None)")
    boards = TURNS[:2]
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"history": [], "hand": "KK", "strategy": {"Check": 1}},
                                {"history": [], "hand": "AsAh", "member": boards[1],
                                 "strategy": {"Check": 1}}]))
    config = config_from_dict({
        "name": "merged", "game": {"name": spot, "boards": boards},
        "solver": {"algorithm": "cfr+", "iterations": 10, "lock": str(path)},
        "run": {"eval_every": 10, "chunk": 5, "precision": "float64", "quiet": True,
                "plot": False}})
    run = train(config, out_dir=str(tmp_path / "run"))
    assert [bool(m.merged) for m in run.lowered.members] == [True, False]
    ref = jaxcfr.solve_public(board_spots(boards, **TURN_SPOT), "cfr+", 10,
                              precision="float64", lock=str(path),
                              member_labels=tuple(boards))
    np.testing.assert_allclose(np.asarray(run.final["exploitability"], float),
                               ref.final["exploitability"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(run.final["values"], float),
                               np.asarray(ref.final["values"], float), rtol=1e-10,
                               atol=1e-12)
    rows = json.loads((tmp_path / "run" / "spots.json").read_text())["spots"]
    assert [r["board"] for r in rows] == boards


def test_members_of_other_decision_counts_are_padded_to_the_stacks_player_blocks():
    # the merged game (67 decisions a player), Kuhn (2) and the unmerged game (133): each
    # member padded, player by player and legal group by legal group, to the stack's
    # count, so every member has the stack's blocks (stepped per player block; the slow
    # tests above check every member against its own solve after every iteration)
    from jaxcfr.solvers import public_blocks
    from jaxcfr.solvers.presets import make_solver
    from jaxcfr.solvers.public import public_solver
    from jaxcfr.tensors import NO_PLAYER, PublicTensors
    members = [lower_public(g) for g in (TwoBoards(), PublicKuhn(), TwoBoards(merge=False))]
    assert len({m.structure.player_decisions for m in members}) == 3
    stack = stack_public(members)
    s = stack.structure
    assert s.player_decisions == members[2].structure.player_decisions == (133, 133)
    assert s.legal_groups == members[2].structure.legal_groups
    H = s.hands
    assert stack.num_rows == sum(d * h for d, h in zip(s.player_decisions, H)) + 1
    solver = public_solver(make_solver("cfr+"))
    for b, m in enumerate(members):
        t = PublicTensors(*(np.asarray(x)[b] for x in stack.tensors))
        assert public_blocks.applies(solver, t, s)
        d = int(m.tensors.decision_node.shape[0])
        owner = t.node_player[t.decision_node]                       # [D]
        assert (np.bincount(owner, minlength=2) == s.player_decisions).all()
        # the padded decisions: read as their player's, no child, rows all padding
        # (no owner, slot 0 alone), their nodes real decisions of that player
        assert (owner[:d] == m.tensors.decision_player[:-1]).all()
        assert (t.child_of[d:] == stack.num_nodes).all()
        rows = np.arange(t.decision_row[d], t.decision_row[-1])
        assert len(rows) == sum(H[p] for p in owner[d:])
        assert (t.infoset_player[rows] == NO_PLAYER).all()
        assert (t.legal_mask[rows][:, 1:] == 0).all()
        assert (t.node_base[t.node_base >= 0] < t.decision_row[d]).all()
        # every member's groups are the stack's: its decisions' counts of actions legal
        # for their player's hands (kernels.public.slots' count), padded ones included
        legal = np.where((t.hand_count[owner] > 0)[:, None], t.decision_legal[:-1],
                         np.arange(stack.max_actions) == 0)
        count = legal.sum(axis=1)
        assert tuple(tuple((int(k), int((count[owner == p] == k).sum()))
                           for k in np.unique(count[owner == p])) for p in range(2)) \
            == s.legal_groups
    # each member's rows are where they were: the stack's tables unstack to its own
    table = np.random.default_rng(0).random(stack.tensors.legal_mask.shape)
    back = unstack_public_rows(stack, table)
    assert [x.shape for x in back] == [m.tensors.legal_mask.shape for m in members]
    np.testing.assert_array_equal(stack_public_rows(stack, back)[0][:members[0].num_rows - 1],
                                  table[0][:members[0].num_rows - 1])



def test_padded_player_blocks_that_cost_too_many_rows_leave_the_row_path(monkeypatch):
    import jaxcfr.lowering.public_stack as lowering
    members = [lower_public(g) for g in (TwoBoards(), TwoBoards(merge=False))]
    monkeypatch.setattr(lowering, "BLOCK_ROWS_SLACK", 0.9)
    stack = stack_public(members)
    assert stack.structure.player_decisions == stack.structure.legal_groups == ()
    assert stack.num_rows == members[1].num_rows                   # the rowless layout
    assert stack.tensors.decision_node.shape[1] == members[1].tensors.decision_node.shape[0]


def _blocks_as_rows(games, algorithm, iterations, terminals="dense", merges=False, *,
                    alone=True, evaluate=False, exact=True, vmapped=False):
    """Step ``games`` (members of other decision counts per player) as one stack padded
    to player blocks (stepped per player block) and as the stack of rowless padded
    decisions (``blocks=False``: the row path), in float64, and check after every
    iteration that each member's tables are the same in both (bit for bit where
    ``exact``, else to 1e-12 of the table's largest entry: hold'em's programs fuse
    differently, tests/test_public_blocks.py) and, with ``alone``, its own solve's to
    1e-12; that every padding row (padded decisions' and padding hands', nobody's) stays
    0 in every table (nothing reaches or updates it); with ``evaluate``, that the last
    strategy sums' values, best-response values, NashConv and exploitability agree
    (blocks, rows and, with ``alone``, each member's own evaluation). ``vmapped``: the
    padded stack also stepped under ``jax.vmap`` (the row path on the blocks' layout, as
    a GPU runs it), its tables the blocks' and its padding rows 0 too."""
    lowered = [lower_public(g, terminals=terminals, merges=merges) for g in games]
    assert len({m.structure.player_decisions for m in lowered}) > 1
    stacks = stack_public(lowered), stack_public(lowered, blocks=False)
    assert stacks[0].structure.player_decisions != () == stacks[1].structure.player_decisions
    mapped = (True, True) + ((False,) if vmapped else ())
    stacks += stacks[:1] if vmapped else ()
    solver = public_solver(make_solver(algorithm))
    assert solver.alternating                    # (else the row path in both)
    nobody = np.asarray(stacks[0].tensors.infoset_player) == NO_PLAYER       # [B, I]
    B = len(games)
    with precision.scope(F64):
        hp = solver.hyperparams(F64)
        tensors = [stack_device_tensors(s, F64) for s in stacks]
        states = [stack_init(solver, s, dtype=F64) for s in stacks]
        singles = [public_device_tensors(g, F64) for g in lowered] if alone else []
        own = [solver.init(t, dtype=F64) for t in singles]
        assert all(public_blocks.applies(solver, PublicTensors(*(x[b] for x in tensors[0])),
                                         stacks[0].structure) for b in range(B))
        for it in range(iterations):
            states = [stack_update(t, x, hp, solver=solver, structure=s.structure, mapped=m)
                      for t, x, s, m in zip(tensors, states, stacks, mapped)]
            own = [_single(solver, t, g.structure, x, hp)
                   for t, g, x in zip(singles, lowered, own)]
            assert states[0].tables.keys() == states[1].tables.keys()
            for field in states[0].tables:
                for x in states[::2]:                          # blocks (and vmapped)
                    assert not np.asarray(getattr(x, field))[nobody].any(), \
                        f"{field}: a padding row moved"
                ours, *others = (unstack_public_rows(s, getattr(x, field))
                                 for s, x in zip(stacks, states))
                for b in range(B):
                    what = f"member {b} {field}, iteration {it + 1}"
                    scale = 1e-12 * max(1.0, np.abs(ours[b]).max())
                    for other, name in zip(others, ("rows", "vmapped")):
                        if exact:
                            assert np.array_equal(ours[b], other[b]), f"{what} ({name})"
                        np.testing.assert_allclose(other[b], ours[b], rtol=0, atol=scale,
                                                   err_msg=f"{what} ({name})")
                    if alone:
                        np.testing.assert_allclose(getattr(own[b], field), ours[b], rtol=0,
                                                   atol=scale, err_msg=what + " (alone)")
            for x in states:
                assert np.asarray(x.iteration).tolist() == [it + 1] * B
        if evaluate:
            ev = [evaluate_public_stack(s, x.strategy_sum, tensors=t)
                  for s, x, t in zip(stacks[:2], states[:2], tensors[:2])]
            for key in ("values", "best_response_values", "nash_conv", "exploitability"):
                ours, theirs = (np.asarray(e[key], float) for e in ev)
                if exact:
                    assert np.array_equal(ours, theirs), key
                np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14,
                                           err_msg=key)
                for b, (g, x) in enumerate(zip(lowered, own)):
                    e = evaluate_public(g, x.strategy_sum, tensors=singles[b])
                    np.testing.assert_allclose(ours[b], np.asarray(e[key], float),
                                               rtol=1e-12, atol=1e-14, err_msg=f"{key} {b}")
    return stacks[0]


def test_members_of_other_decision_counts_step_per_player_block_as_by_rows():
    # Kuhn (2 decisions a player, 3 hands) beside the merged two-suit game (67, 6 hands):
    # Kuhn padded with 65 decisions a player of H_p rows each, nothing in them moving;
    # both members' tables the row path's bit for bit (the row path is checked against
    # each member's own solve in tests/test_public_stack.py; the slow cases below check
    # the blocks against the own solves too, more members, hold'em, the metrics). Two
    # programs compiled: about 16 CPU-s, the least a stacked chunk compiles in
    stack = _blocks_as_rows([PublicKuhn(), TwoBoards()], "cfr+", 3, merges=True, alone=False)
    assert stack.structure.player_decisions == (67, 67)


@pytest.mark.slow
def test_mixed_members_per_player_block_evaluate_as_by_rows_and_alone():
    # the two-suit game merged, Kuhn and the game unmerged (67, 2 and 133 decisions a
    # player), predictions; vmapped too (the row path on the padded blocks)
    _blocks_as_rows([TwoBoards(), PublicKuhn(), TwoBoards(merge=False)], "pcfr+", 5,
                    evaluate=True, vmapped=True)


@pytest.mark.slow
def test_holdem_turns_of_other_decision_counts_per_player_block_as_by_rows():
    # a flop's turn cards merged differently (monotone: three suits alike, paired, two-
    # tone, rainbow: none), the postflop solvers' discounts and average resets
    stack = _blocks_as_rows(board_spots(TURNS, **TURN_SPOT), "postflop-dcfr", 3, "ranked",
                            merges=True, evaluate=True, exact=False, vmapped=True)
    assert stack.structure.legal_groups != ()


@pytest.mark.slow
def test_holdem_rivers_of_other_trees_per_player_block_as_by_rows():
    # other bet sizes (another tree: other decisions per player) beside other boards and
    # ranges (other hand counts)
    games = [HoldemSpot(board="Td9d6h5c2s", ranges=SMALL, bets="33%, 75%, a"),
             HoldemSpot(board="AsKd6h5c2s", ranges=SMALL),
             HoldemSpot(board="Td9d6h5cQs", ranges=("AA,KK,AKs", SMALL[1]))]
    _blocks_as_rows(games, "dcfr", 4, "ranked", alone=False, evaluate=True, exact=False)
