"""No-limit Leduc hold'em: ACPC rules played by hand, parity with OpenSpiel's universal_poker,
and the bet-size menu abstraction. (The generic contract tests of tests/test_games.py run on
it too: it is in their GAME_STRINGS.)"""

from __future__ import annotations


import numpy as np
import pytest

import jaxcfr
from jaxcfr import Abstracted, GameError
from jaxcfr_games.nolimit_leduc import BetMenu, NoLimitLeduc

try:
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import reference_cfr as R


def play(game, *actions):
    state = game.clone()
    for a in actions:
        state.step(a)
    return state


# -- the rules, by hand ------------------------------------------------------------------------
def test_no_limit_betting_follows_the_acpc_rules():
    game = NoLimitLeduc(stack=8)
    state = play(game, 0, 3)                       # Js to player 0, Qh to player 1
    assert state.legal_actions() == ["c"] + [f"r{n}" for n in range(2, 9)]
    state.step("r3")                               # raise by 2: the next raise adds 2 or more
    assert state.legal_actions() == ["f", "c", "r5", "r6", "r7", "r8"]
    assert state.spent == (3, 1) and state.infoset_key(1) == "1|Qh|r3"
    state.step("c")
    assert state.is_chance() and [c for c, _ in state.chance_outcomes()] == [1, 2, 4, 5]
    state.step(4)                                  # Ks: round 2, player 0 first
    assert state.player_to_act() == 0 and state.infoset_key(0) == "0|Js|r3c|Ks|"
    assert state.legal_actions() == ["c", "r4", "r5", "r6", "r7", "r8"]   # at least the ante
    state.step("r4")
    assert state.legal_actions() == ["f", "c", "r5", "r6", "r7", "r8"]
    state.step("r5")                               # raised by 1: the minimum stays 1
    assert state.legal_actions() == ["f", "c", "r6", "r7", "r8"]
    state.step("f")                                # player 0 gives up the 4 chips put in
    assert state.is_terminal() and state.terminal_returns() == (-4.0, 4.0)


def test_all_in_skips_the_remaining_betting():
    game = NoLimitLeduc(stack=6)
    state = play(game, 4, 0, "r6")                 # player 0 (Ks) all-in at once
    assert state.legal_actions() == ["f", "c"]     # nothing left to raise into
    state.step("c")
    assert state.is_chance()
    state.step(2)                                  # the public card (Qs), then showdown at once
    assert state.is_terminal() and state.terminal_returns() == (6.0, -6.0)     # K beats J
    short = play(game, 4, 0, "r3")
    assert short.legal_actions() == ["f", "c", "r5", "r6"]
    short.step("r5")                               # too short for a full re-raise (to 7): all-in
    assert short.legal_actions() == ["f", "c", "r6"]
    assert play(game, 1, 0, "c", "c", 4, "c", "c").terminal_returns() == (0.0, 0.0)  # J vs J


def test_bad_parameters():
    for kwargs, match in (({"stack": 0}, "stack"), ({"ante": 0}, "ante"), ({"ranks": 1}, "ranks"),
                          ({"stack": 3, "ante": 4}, "stack"), ({"ranks": 2, "suits": 1}, "deck")):
        with pytest.raises(ValueError, match=match):
            NoLimitLeduc(**kwargs)
    with pytest.raises(GameError):
        play(NoLimitLeduc(), 0, 1, "r1")           # below the minimum raise


# -- OpenSpiel's universal_poker -----------------------------------------------------------------
def _universal_poker(ranks, suits, stack, ante):
    return (f"openspiel:universal_poker(betting=nolimit,numPlayers=2,numRounds=2,"
            f"blind={ante} {ante},firstPlayer=1 1,numSuits={suits},numRanks={ranks},"
            f"numHoleCards=1,numBoardCards=0 1,stack={stack} {stack},bettingAbstraction=fullgame)")


@pytest.mark.parametrize("ranks,suits,stack,ante", [(3, 2, 4, 1), (4, 1, 6, 2)])
def test_the_tree_is_openspiels_universal_poker(ranks, suits, stack, ante):
    pytest.importorskip("pyspiel")
    ours = jaxcfr.load_game(f"nolimit_leduc(ranks={ranks}, suits={suits}, stack={stack}, "
                            f"ante={ante})")
    theirs = jaxcfr.load_game(_universal_poker(ranks, suits, stack, ante))
    a, b = jaxcfr.lower(ours), jaxcfr.lower(theirs)
    for key in ("nodes", "infosets", "max_actions", "depth"):
        assert a.sizes()[key] == b.sizes()[key], key
    # Same returns and information structure: equal values and best responses to uniform.
    if stack == 4:
        uniform = [lo.tensors.legal_mask / lo.tensors.legal_mask.sum(1, keepdims=True)
                   for lo in (a, b)]
        ea, eb = (jaxcfr.evaluate(lo, u, dtype="float64") for lo, u in zip((a, b), uniform))
        for k in ("values", "best_response_values"):
            np.testing.assert_allclose(ea[k], eb[k], rtol=1e-12, atol=1e-12)
    else:
        ta, tb = R.Tree(ours), R.Tree(theirs)
        _, va, bra = R.nash_conv(ta, R.uniform_profile(ta))
        _, vb, brb = R.nash_conv(tb, R.uniform_profile(tb))
        np.testing.assert_allclose([va, bra], [vb, brb], rtol=1e-12, atol=1e-12)


@pytest.mark.slow                               # lowers the default game (2-3 s)
def test_default_sizes():
    lowered = jaxcfr.lower(jaxcfr.load_game("nolimit_leduc"))
    assert lowered.sizes()["nodes"] == 353_797
    assert lowered.infosets_per_player == (15_240, 15_240) and lowered.max_actions == 8


# -- the bet-size menu -------------------------------------------------------------------------
def test_the_menu_keeps_fold_call_pot_fractions_and_all_in():
    game = NoLimitLeduc(stack=8)
    root = play(game, 0, 3)
    assert BetMenu((0.5, 1.0)).actions(root, 0) == ["c", "r2", "r3", "r8"]   # bet 1: pot 2
    assert BetMenu((1.0,), all_in=False).actions(root, 0) == ["c", "r3"]
    assert BetMenu((), all_in=True).actions(root, 0) == ["c", "r8"]
    facing = play(root, "r3")                       # pot after calling 6: half pot -> 6
    assert BetMenu((0.5, 1.0)).actions(facing, 1) == ["f", "c", "r6", "r8"]  # pot -> 9: 8
    assert BetMenu((0.5, 0.55)).actions(facing, 1) == ["f", "c", "r6", "r8"]  # r6 kept once
    called = play(facing, "c", 4)                   # round 2 opens: checking is kept
    assert BetMenu((1.0,)).actions(called, 0) == ["c", "r8"]              # 3 + 6 = 9: 8
    all_in = play(root, "r8")
    assert BetMenu((0.5, 1.0)).actions(all_in, 1) == ["f", "c"]           # nothing to raise
    with pytest.raises(ValueError):
        BetMenu((-1.0,))
    with pytest.raises(ValueError):
        BetMenu((), all_in=False)


def test_the_menu_shrinks_the_game_and_passes_the_exhaustive_checks():
    full = NoLimitLeduc(stack=5)
    sizes = {}
    for fractions in ((), (1.0,), (0.5, 1.0)):
        small = Abstracted(full, BetMenu(fractions))
        jaxcfr.validate(small)
        sizes[fractions] = jaxcfr.lower(small).num_nodes   # every history: order checked
    assert sizes[()] < sizes[(1.0,)] < sizes[(0.5, 1.0)] < jaxcfr.lower(full).num_nodes == 41_197
