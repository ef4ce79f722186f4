"""Per member of a stack of public trees: node locks and solver parameters, one step.

Oracles: each member's own solve with its own lock and its own parameters. In float64,
after every iteration, the member's tables (unpadded) equal the single game's locked
update with the same lock and the same parameters to 1e-12, its locked rows' average is
the lock, and its metrics from the stack's (restricted) evaluation equal the single
game's :func:`~jaxcfr.solvers.locking.evaluate_public_locked`. Through
:func:`jaxcfr.solve_public`, the Runner and ``jaxcfr train`` (``solver.combine =
"members"``, ``solver.lock`` on ``game.boards``) every member equals
:func:`jaxcfr.solve_public` of its spot alone with its lock and parameters; a second
chunk, another lock and other parameter values compile nothing.
"""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.api.locks import ForMember, resolve_lock, resolve_stack_lock
from jaxcfr.lowering.public_stack import stack_public, stack_public_rows, unstack_public_rows
from jaxcfr.runs import ConfigError, train
from jaxcfr.runs.config import config_from_dict
from jaxcfr.solvers.locking import Lock, LockError, evaluate_public_locked
from jaxcfr.solvers.parameters import along_members
from jaxcfr.solvers.presets import make_solver
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr.solvers.public_stack import (evaluate_public_stack_locked, stack_device_lock,
                                         stack_device_tensors, stack_init, stack_update)
from jaxcfr_games.holdem.spot import HoldemSpot
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc

try:
    from tests.test_compile_once import count_compiles
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from test_compile_once import count_compiles

F64 = np.float64
SMALL = ("QQ+,AKs,AQs,KQs,JTs", "JJ-99,AJs+,KJs,T9s,98s")
BOARDS = ("Td9d6h5c2s", "AsKd6h5c2s")
SPOT = ("holdem_spot(ranges=('QQ+,AKs,AQs,KQs,JTs', 'JJ-99,AJs+,KJs,T9s,98s'), pot=100, "
        "stack=200, bets='60%', raises='', add_allin=0)")

_single = jax.jit(lambda solver, t, s, state, hp, lock: solver.update(t, s, state, hp,
                                                                       lock=lock),
                  static_argnums=(0, 2))


@pytest.fixture(scope="module")
def kuhn():
    return jaxcfr.lower_public(PublicKuhn())


@pytest.fixture(scope="module")
def small(kuhn):
    """Public Kuhn, public Leduc (3 ranks), Kuhn again: other trees and hand counts."""
    return [kuhn, jaxcfr.lower_public(PublicLeduc(ranks=3)), kuhn]


@pytest.fixture(scope="module")
def spots():
    return [jaxcfr.lower_public(HoldemSpot(board=b, ranges=SMALL, pot=100, stack=200,
                                           bets="60%", raises="", add_allin=0))
            for b in BOARDS]


def _lockstep(lowered, algorithm, iterations, locks=None, settings=None, mapped=None):
    """The stack of ``lowered`` with per-member ``locks`` (mappings or None) and
    ``settings`` (one dict of parameters per member) against each member's own locked
    update, after every iteration (see the module; ``mapped``: the stack's layout,
    ``None`` the backend's: ``maps_members``)."""
    stack = stack_public(lowered)
    B = stack.batch_size
    solver = public_solver(make_solver(algorithm))
    own_locks = [None if x is None else resolve_lock(g, x)
                 for g, x in zip(lowered, locks or [None] * B)]
    settings = settings or [{}] * B
    lists = {k: [s[k] for s in settings] for k in settings[0]}
    with precision.scope(F64):
        tensors = stack_device_tensors(stack, F64)
        host_lock = resolve_stack_lock(stack, locks) if locks is not None else None
        lock = stack_device_lock(host_lock, F64)
        hp = along_members(solver.hyperparams(F64, **lists), B)
        state = stack_init(solver, stack, dtype=F64)
        singles = [public_device_tensors(g, F64) for g in lowered]
        own = [solver.init(t, dtype=F64) for t in singles]
        own_hp = [solver.hyperparams(F64, **s) for s in settings]
        device = [None if x is None else stack_device_lock(x, F64) for x in own_locks]
        for it in range(iterations):
            state = stack_update(tensors, state, hp, lock, solver=solver,
                                 structure=stack.structure, per_member=True, mapped=mapped)
            own = [_single(solver, t, g.structure, s, h, k)
                   for t, g, s, h, k in zip(singles, lowered, own, own_hp, device)]
            regret = unstack_public_rows(stack, state.regret)
            sums = unstack_public_rows(stack, state.strategy_sum)
            for b, s in enumerate(own):
                for name, mine, theirs in (("regret", regret[b], s.regret),
                                           ("strategy sum", sums[b], s.strategy_sum)):
                    theirs = np.asarray(theirs)
                    assert mine.shape == theirs.shape
                    np.testing.assert_allclose(
                        mine, theirs, rtol=0, atol=1e-12 * max(1.0, np.abs(theirs).max()),
                        err_msg=f"member {b} {name}, iteration {it + 1}")
    if host_lock is not None:
        ev = evaluate_public_stack_locked(stack, state.strategy_sum, host_lock)
        average = unstack_public_rows(stack, np.asarray(state.strategy_sum))
        for b, (g, k) in enumerate(zip(lowered, own_locks)):
            if k is None:
                continue
            alone = evaluate_public_locked(g, np.asarray(own[b].strategy_sum), k)
            for key in ("values", "best_response_values", "nash_conv"):
                np.testing.assert_allclose(ev[key][b], alone[key], rtol=1e-12, atol=1e-14)
            rows = np.asarray(k.mask, bool)
            table = average[b][rows] / average[b][rows].sum(axis=1, keepdims=True)
            np.testing.assert_array_equal(table, np.asarray(k.strategy)[rows])
    return stack, state


def test_each_locked_member_is_its_own_locked_solve(kuhn):
    # Kuhn twice, each with its own lock (the K always bets; after a pass, a mix)
    _lockstep([kuhn, kuhn], "cfr+", 3, [{((), 2): {"bet": 1.0}},
                                        {(("pass",), "*"): {"pass": 0.25, "bet": 0.75}}])


def test_each_member_runs_with_its_own_parameters(kuhn):
    # DCFR's alpha, beta and gamma differing per member, one compiled step (with locks
    # too: the slow test below, and the Runner's test)
    settings = [{"alpha": 1.5, "beta": 0.0, "gamma": 2.0},
                {"alpha": 3.0, "beta": -1.0, "gamma": 1.0}]
    _lockstep([kuhn, kuhn], "dcfr", 3, None, settings)


@pytest.mark.slow
@pytest.mark.parametrize("mapped", [True, False])
def test_both_layouts_carry_each_members_lock_and_parameters(kuhn, mapped):
    # members one after another (a CPU's layout, which the tests above take) and vmapped
    # (a device's), forced either way
    settings = [{"alpha": 1.5, "beta": 0.0, "gamma": 2.0},
                {"alpha": 3.0, "beta": -1.0, "gamma": 1.0}]
    _lockstep([kuhn, kuhn], "dcfr", 3, [{((), 2): {"bet": 1.0}}, None], settings, mapped)


@pytest.mark.slow
def test_members_of_other_trees_with_their_own_locks_and_parameters(small):
    # Kuhn, Leduc, Kuhn: other trees and hand counts (padding), a member without a lock
    settings = [{"alpha": 1.5, "beta": 0.0, "gamma": 2.0},
                {"alpha": 3.0, "beta": -1.0, "gamma": 1.0},
                {"alpha": 0.5, "beta": 0.5, "gamma": 4.0}]
    _lockstep(small, "dcfr", 5, [{((), 2): {"bet": 1.0}}, None,
                                 {(("pass",), "*"): {"pass": 0.25, "bet": 0.75}}], settings)


@pytest.mark.slow
def test_an_unlocked_member_of_a_locked_stack_is_bit_for_bit_unlocked(small):
    stack, state = _lockstep(small[:2], "cfr+", 3, [{((), 2): {"bet": 1.0}}, None])
    free = jaxcfr.solve_public(small[:2], "cfr+", 3, precision="float64", chunk=3)
    np.testing.assert_array_equal(np.asarray(state.strategy_sum)[1],
                                  np.asarray(free.state.strategy_sum)[1])


def _padded(stack, locks):
    """Per-member host locks (or None) as the stack's ``(strategy, mask)``."""
    shapes = [g.tensors.legal_mask.shape for g in stack.members]
    mask = [np.zeros(x, bool) if k is None else
            np.broadcast_to(np.asarray(k.mask)[:, None], x) for k, x in zip(locks, shapes)]
    strategy = [np.zeros(x) if k is None else k.strategy for k, x in zip(locks, shapes)]
    return stack_public_rows(stack, strategy), stack_public_rows(stack, mask, False)[..., 0]


def test_one_lock_applies_wherever_its_nodes_exist():
    # the second spot bets the pot too (another tree): that node exists there only
    spots = [jaxcfr.lower_public(HoldemSpot(board=b, ranges=SMALL, pot=100, stack=200,
                                            bets=bets, raises="", add_allin=0))
             for b, bets in zip(BOARDS, ("60%", "60%,100%"))]
    stack = stack_public(spots)
    everywhere = {((), "AA"): {"Bet(60)": 1.0}}
    allin = {(("Bet(100)",), "*"): {"Call": 0.5, "Fold": 0.5}}
    shared = resolve_stack_lock(stack, {**everywhere, **allin})
    strategy, mask = _padded(stack, [resolve_lock(spots[0], everywhere),
                                     resolve_lock(spots[1], {**everywhere, **allin})])
    np.testing.assert_array_equal(shared.mask, mask)
    np.testing.assert_array_equal(shared.strategy, strategy)
    assert mask[1].sum() > mask[0].sum() > 0
    with pytest.raises(LockError, match="no member of the stack has it"):
        resolve_stack_lock(stack, {(("Check", "Bet(100)", "Bet(60)"), "*"): {"Call": 1.0}})
    with pytest.raises(LockError, match="member 1 .*'Raise' is not a legal action"):
        resolve_stack_lock(stack, {**everywhere, ForMember(1, ((), "*")): {"Raise": 1.0}})


def test_a_lock_by_member_index_name_or_board(spots, tmp_path):
    stack = stack_public(spots)
    one = {((), "*"): {"Check": 1.0}}
    by_index = resolve_stack_lock(stack, {1: one})
    by_list = resolve_stack_lock(stack, [None, one])
    by_name = resolve_stack_lock(stack, {spots[1].name: one}) if \
        spots[0].name != spots[1].name else by_index
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"history": "", "member": BOARDS[1],
                                 "strategy": {"Check": 1}}]))
    by_board = resolve_stack_lock(stack, str(path), BOARDS)
    for lock in (by_list, by_name, by_board):
        np.testing.assert_array_equal(lock.mask, by_index.mask)
        np.testing.assert_array_equal(lock.strategy, by_index.strategy)
    assert not by_index.mask[0].any() and by_index.mask[1].sum() == len(
        spots[1].hands.labels[0])
    with pytest.raises(LockError, match="names no member"):
        resolve_stack_lock(stack, {"Qs": one})
    # a board spelt otherwise (any case, as --boards reads it) names the same member
    for spelt in (BOARDS[1].lower(), "AsKd6h5c2S", " AsKd 6h5c2s"):
        path.write_text(json.dumps([{"history": "", "member": spelt,
                                     "strategy": {"Check": 1}}]))
        again = resolve_stack_lock(stack, str(path), BOARDS)
        np.testing.assert_array_equal(again.mask, by_index.mask)
        np.testing.assert_array_equal(again.strategy, by_index.strategy)
    # a board of no member: the error shows the members' boards
    path.write_text(json.dumps([{"history": "", "member": "AsKd6h5c3s",
                                 "strategy": {"Check": 1}}]))
    with pytest.raises(LockError, match=f"names no member.*as written there: {BOARDS[0]}, "
                                        f"{BOARDS[1]}"):
        resolve_stack_lock(stack, str(path), BOARDS)
    with pytest.raises(LockError, match="one per member: 1 for a stack of 2"):
        resolve_stack_lock(stack, [one])
    with pytest.raises(LockError, match="applies to a stack"):
        resolve_lock(spots[0], {ForMember(0, ((), "*")): {"Check": 1.0}})
    with pytest.raises(LockError, match="does not fit the stack"):
        resolve_stack_lock(stack, Lock(np.zeros((2, 3)), np.zeros(2, bool)))


def test_per_member_parameters_need_one_value_per_member(small):
    with pytest.raises(jaxcfr.ArgumentError, match="alpha has 2 values for a stack of 3"):
        jaxcfr.solve_public(small, "dcfr", 2, per_member=True, alpha=[1.0, 2.0])


@pytest.mark.parametrize("members", [2, pytest.param(16, marks=pytest.mark.slow)])
def test_the_runner_steps_locks_and_settings_as_solve_public_does(kuhn, members):
    # the Runner carries them through its layout: a stack of public trees is mapped on a
    # CPU whatever its size (jaxcfr.engine.seam; vmapped elsewhere: the vmapped step's
    # locks and settings, tests/test_public_stack.py); solve_public's stack (checked
    # above) is the oracle
    from jaxcfr.engine.seam import Mapped
    stack = stack_public([kuhn] * members)
    locks = [{((), b % 3): {"bet": 1.0}} if b % 2 else None for b in range(members)]
    alpha = [1.0 + b / 4 for b in range(members)]
    runner = jaxcfr.Runner(stack, public_solver(make_solver("dcfr")), {"alpha": alpha},
                           precision="float64", chunk=4, per_member=True)
    assert type(runner.layout) is Mapped
    runner.set_lock(resolve_stack_lock(stack, locks))
    state = runner.advance(runner.init(), 6)
    ref = jaxcfr.solve_public(stack, "dcfr", 6, precision="float64", chunk=4, lock=locks,
                              per_member=True, alpha=alpha)
    for field in ("regret", "strategy_sum"):
        want = np.asarray(getattr(ref.state, field))
        np.testing.assert_allclose(np.asarray(getattr(state, field)), want, rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(runner.evaluate(state)["nash_conv"], ref.final["nash_conv"],
                               rtol=1e-12)
    assert runner.member_labels()[1].endswith("alpha=1.25")
    # compile once: more chunks, another lock, other values per member reuse the programs
    with count_compiles() as counts:
        state = runner.advance(state, 2 * 4 + 3)
        runner.set_lock(resolve_stack_lock(stack, locks[::-1]))
        with runner.scope():
            runner.hp = along_members(runner.solver.hyperparams(runner.dtype, alpha=alpha[
                ::-1]), members)
        state = runner.advance(state, 4)
        runner.evaluate(state)
        jax.block_until_ready(state)
    assert counts["traces"] == {} and counts["compiles"] == 0, counts


def _config(iterations=20, **solver):
    return config_from_dict({
        "name": "members", "game": {"name": SPOT, "boards": list(BOARDS)},
        "solver": {"algorithm": "dcfr", "iterations": iterations, **solver},
        "run": {"eval_every": 10, "chunk": 8, "precision": "float64", "quiet": True,
                "plot": False}})


def test_the_config_spells_per_member_settings_as_a_sweep():
    c = _config(combine="members", alpha=[1.5, 3.0])
    assert c.options().per_member and c.options().parameters["alpha"] == [1.5, 3.0]
    with pytest.raises(ConfigError, match="one value per member: lists of 2"):
        _config(combine="members", alpha=[1.5, 3.0, 2.0])
    # the list of the wrong length is named, and the --set that gave it is blamed
    # (2026-12-06: "solver.combine: ... got 3", whichever list it was)
    with pytest.raises(ConfigError) as info:
        config_from_dict({"game": {"name": SPOT, "boards": list(BOARDS)},
                          "solver": {"algorithm": "dcfr", "combine": "members",
                                     "alpha": [1.5, 3.0]}},
                         overrides=["solver.gamma=[1, 2, 3]"])
    assert str(info.value) == ("--set solver.gamma=[1, 2, 3]: solver.gamma: 3 values; "
                               "solver.combine = 'members' needs one value per member: "
                               "lists of 2 values (the stack's members)")
    with pytest.raises(ConfigError, match="this run has one game"):
        config_from_dict({"game": {"name": "kuhn_poker"},
                          "solver": {"algorithm": "dcfr", "combine": "members"}})


@pytest.mark.slow
def test_train_locks_and_sets_each_board_as_its_own_solve(tmp_path, spots):
    # jaxcfr train: game.boards, solver.combine = "members", solver.lock (one entry on
    # every board, one on the second board only); each board is solve_public alone
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([
        {"history": "", "hand": "AA", "strategy": {"Bet(60)": 1}},
        {"history": "Check", "member": BOARDS[1], "strategy": {"Check": 0.5, "Bet(60)": 0.5}}]))
    settings = {"alpha": [1.5, 3.0], "gamma": [2.0, 1.0]}
    run = train(_config(combine="members", lock=str(path), **settings),
                out_dir=str(tmp_path / "run"))
    entries = json.loads(path.read_text())
    for b, spot in enumerate(spots):
        lock = {(e["history"], e.get("hand")): e["strategy"] for e in entries
                if e.get("member") in (None, BOARDS[b])}
        alone = jaxcfr.solve_public(spot, "dcfr", 20, precision="float64", lock=lock,
                                    alpha=settings["alpha"][b], gamma=settings["gamma"][b])
        np.testing.assert_allclose(run.final["exploitability"][b],
                                   alone.final["exploitability"], rtol=1e-10)
        np.testing.assert_allclose(run.final["values"][b], alone.final["values"],
                                   rtol=1e-10)
        sums = run.lowered.member_tables(np.asarray(run.state.strategy_sum))[b]
        total = sums.sum(axis=1)
        reached = total > 0
        np.testing.assert_allclose(sums[reached] / total[reached, None],
                                   alone.average_strategy[reached], rtol=0, atol=1e-10)


@pytest.mark.slow
def test_solve_public_of_locked_boards_equals_each_spot_alone(spots):
    lock = {((), "AA"): {"Bet(60)": 1.0}, (("Check",), "*"): {"Check": 0.5, "Bet(60)": 0.5}}
    stacked = jaxcfr.solve_public(spots, "postflop-dcfr", 30, precision="float64",
                                  lock=lock, per_member=True, alpha=[1.5, 3.0])
    for b, spot in enumerate(spots):
        alone = jaxcfr.solve_public(spot, "postflop-dcfr", 30, precision="float64",
                                    lock=lock, alpha=[1.5, 3.0][b])
        member = stacked.member(b)
        np.testing.assert_allclose(member.average_strategy, alone.average_strategy,
                                   rtol=0, atol=1e-12)
        assert member.final["exploitability"] == pytest.approx(
            alone.final["exploitability"], rel=1e-10)
        for hand in ("AsAh", "AdAc"):
            if hand in spot.hands.labels[0]:
                assert member.strategy(0, hand)["Bet(60)"] == 1.0


@pytest.mark.slow
def test_the_command_line_locks_a_stack_of_boards(tmp_path, capsys):
    from jaxcfr.cli import app
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"history": "", "member": BOARDS[1],
                                 "strategy": {"Check": 1}}]))
    args = ["solve", SPOT, "--boards", ",".join(BOARDS), "--iterations", "20",
            "--precision", "float64", "--json", "--quiet"]
    assert app.main(args) == 0
    free = json.loads(capsys.readouterr().out)
    assert app.main(args + ["--lock", str(path)]) == 0
    locked = json.loads(capsys.readouterr().out)
    assert locked["lock"] == str(path)
    assert locked["exploitability"][0] == pytest.approx(free["exploitability"][0], rel=1e-12)
    assert locked["values"][1] != pytest.approx(free["values"][1], abs=1e-3)
