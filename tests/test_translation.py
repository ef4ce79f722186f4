"""Action translation: translate() on the abstraction protocol, pseudo-harmonic bet sizes,
lifting through translation.

Oracles: Ganzfried and Sandholm's formula at points worked by hand (and the point
81/173 of a peer's test); the distribution rule checked on every betting state of a
small no-limit Leduc; a hand-made game whose dropped action is an exact twin of a
kept one, where the translated profile must equal full-game training (and
elimination must not); the exact full-game exploitability of no-limit Leduc's lifted
profiles (stack 4: 17,077 histories; the runs share the programs of
tests/test_abstraction.py).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import jaxcfr
from jaxcfr import Abstracted, Game, GameError, TERMINAL, pseudo_harmonic
from jaxcfr.game.abstraction import check_translation
from jaxcfr_games.nolimit_leduc import BetMenu, raise_to

F64 = "float64"
GAME = "nolimit_leduc(stack=4)"


# -- a game where translation is exact ---------------------------------------------------------
class TwinBet(Game):
    """Chance deals player 0 a high or a low card (1/2 each). Player 0 checks (``k``: a
    showdown for the ante, 1), bets (``b``) or bets with the twin label ``b2`` (the same
    bet). Player 1 sees the bet, not the card, and folds (player 0 wins 1) or calls (a
    showdown for 2). Equilibrium: player 1 calls 2/3; player 0 bets high, bluffs 1/3 low."""

    num_players = 2

    def __init__(self):
        self.moves = ()

    def clone(self):
        new = TwinBet()
        new.moves = self.moves
        return new

    def is_terminal(self):
        m = self.moves
        return len(m) == 2 and m[1] == "k" or len(m) == 3

    def is_chance(self):
        return not self.moves

    def player_to_act(self):
        if self.is_terminal():
            return TERMINAL
        return -1 if self.is_chance() else len(self.moves) - 1

    def chance_outcomes(self):
        return [("H", 0.5), ("L", 0.5)] if self.is_chance() else None

    def legal_actions(self):
        if self.is_chance() or self.is_terminal():
            return []
        return ["k", "b", "b2"] if len(self.moves) == 1 else ["f", "c"]

    def step(self, action):
        legal = [a for a, _ in self.chance_outcomes()] if self.is_chance() else \
            self.legal_actions()
        if action not in legal:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.moves = self.moves + (action,)

    def terminal_returns(self):
        card, *rest = self.moves
        win = 1.0 if card == "H" else -1.0
        if rest == ["k"]:
            return (win, -win)
        if rest[1] == "f":
            return (1.0, -1.0)
        return (2 * win, -2 * win)

    def infoset_key(self, player):
        if player == 0:
            return f"0|{self.moves[0]}" if self.moves else "0|"
        return f"1|{self.moves[1]}" if len(self.moves) > 1 else "1|"


class DropTwin:
    """Keeps ``k`` and ``b``; the twin ``b2`` translates to ``b`` (exact: it is the same bet)."""

    def __init__(self, translated=(("b", 1.0),)):
        self.translated = list(translated)

    def actions(self, state, player):
        return [a for a in state.legal_actions() if a != "b2"]

    def translate(self, state, player, action):
        return [(action, 1.0)] if action != "b2" else self.translated


@pytest.fixture(scope="module")

def small():
    """CFR+ on TwinBet without the twin."""
    return jaxcfr.solve(Abstracted(TwinBet(), DropTwin()), "cfr+", 2000, precision=F64)


def test_translation_is_exact_on_twin_actions(small):
    full = jaxcfr.lower(TwinBet())
    trained = jaxcfr.solve(full, "cfr+", 2000, precision=F64)
    lifted = jaxcfr.lift(small.profile, TwinBet(), abstraction=DropTwin())   # translates
    eliminated = jaxcfr.lift(small.profile, TwinBet(), abstraction=DropTwin(), translate=False)
    exact = trained.final["exploitability"]
    got = jaxcfr.evaluate_profile(lifted, full, precision=F64)["exploitability"]
    assert exact < 1e-3 and got < 1e-3 and got == pytest.approx(exact, abs=1e-3)
    # elimination leaves player 1 uniform behind the twin: player 0 bluffs there
    assert jaxcfr.evaluate_profile(eliminated, full, precision=F64)["exploitability"] > 0.1
    # the lifted profile is full-game training's, with the twins' mass on the kept one
    calls = trained.profile.policy(1, "1|b")["c"]
    assert calls == pytest.approx(2 / 3, abs=1e-2)
    assert trained.profile.policy(1, "1|b2") == pytest.approx(trained.profile.policy(1, "1|b"))
    for key in ("1|b", "1|b2"):
        assert lifted.policy(1, key) == pytest.approx(trained.profile.policy(1, key), abs=1e-2)
    for card in "HL":
        want = trained.profile.policy(0, f"0|{card}")
        got = lifted.policy(0, f"0|{card}")
        assert got["b2"] == 0 and got["b"] == pytest.approx(want["b"] + want["b2"], abs=1e-2)
        assert got["k"] == pytest.approx(want["k"], abs=1e-2)


def test_a_translation_must_be_a_distribution_over_kept_actions(small):
    profile = small.profile
    for bad, why in (((("b2", 1.0),), "not one of the kept actions"),
                     ((("b", 0.5),), "sum to 0.5"),
                     ((("b", -0.5), ("k", 1.5)), "not a finite non-negative"),
                     (("b",), "list of \\(kept action, probability\\) pairs")):
        with pytest.raises(GameError, match=why) as info:
            jaxcfr.lift(profile, TwinBet(), abstraction=DropTwin(bad))
        assert info.value.rule == "translation" and info.value.history == ("H",)


def test_a_translation_may_depend_only_on_what_the_player_observes(small):
    class ByCard(DropTwin):                  # the translation reads player 0's card
        def translate(self, state, player, action):
            return [("b" if state.moves[0] == "H" else "k", 1.0)]
    profile = small.profile
    with pytest.raises(GameError) as info:
        jaxcfr.lift(profile, TwinBet(), abstraction=ByCard())
    assert info.value.rule == "translation-infoset" and "1|b2" in str(info.value)


def test_lift_options(small):
    profile = small.profile
    seed = jaxcfr.lift(profile, TwinBet())                          # no abstraction: the seed's
    np.testing.assert_array_equal(seed.probs, jaxcfr.lift(
        profile, TwinBet(), abstraction=DropTwin(), translate=False).probs)

    class NoTranslate:
        actions = DropTwin.actions
    with pytest.raises(ValueError, match="translate=True needs"):
        jaxcfr.lift(profile, TwinBet(), abstraction=NoTranslate(), translate=True)
    with pytest.raises(ValueError, match="translate=True needs"):
        jaxcfr.lift(profile, TwinBet(), translate=True)
    assert jaxcfr.lift(profile, TwinBet(), abstraction=NoTranslate()).probs.tolist() == \
        seed.probs.tolist()                                         # None: elimination


# -- the pseudo-harmonic mapping ---------------------------------------------------------------
def test_pseudo_harmonic_is_ganzfried_and_sandholms_formula():
    # f(x) = (B - x)(1 + A) / ((B - A)(1 + x)): the probability of the smaller size A
    assert pseudo_harmonic(0.73, 0.5, 1.0) == pytest.approx(81 / 173, abs=1e-15)
    assert pseudo_harmonic(0.75, 0.5, 1.0) == pytest.approx(3 / 7, abs=1e-15)
    assert pseudo_harmonic(1.5, 1.0, 3.5) == pytest.approx(0.64, abs=1e-15)
    assert pseudo_harmonic(2.0, 1.0, 3.0) == pytest.approx(1 / 3, abs=1e-15)
    assert pseudo_harmonic(0.5, 0.0, 1.0) == pytest.approx(1 / 3, abs=1e-15)
    assert pseudo_harmonic(0.5, 0.5, 1.0) == 1.0 and pseudo_harmonic(1.0, 0.5, 1.0) == 0.0
    assert pseudo_harmonic(0.1, 0.5, 1.0) == 1.0 and pseudo_harmonic(7.0, 0.5, 1.0) == 0.0
    xs = np.linspace(0.5, 1.0, 11)
    fs = [pseudo_harmonic(x, 0.5, 1.0) for x in xs]
    assert all(a > b for a, b in zip(fs, fs[1:]))                   # decreasing in x
    with pytest.raises(ValueError, match="a < b"):
        pseudo_harmonic(0.5, 1.0, 1.0)


def test_bet_menu_translates_by_the_formula_at_a_state():
    game = jaxcfr.load_game("nolimit_leduc")                         # stack 8
    state = game.clone()
    for a in (0, 2):
        state.step(a)
    menu = BetMenu((1.0,))                                           # pot and all-in
    assert menu.actions(state, 0) == ["c", "r3", "r8"]
    assert _split(menu.translate(state, 0, "r4")) == (["r3", "r8"], pytest.approx([0.64, 0.36]))
    assert menu.translate(state, 0, "r2") == [("r3", 1.0)]           # below: the smallest
    assert menu.translate(state, 0, "r8") == [("r8", 1.0)] and \
        menu.translate(state, 0, "c") == [("c", 1.0)]
    assert menu.translate(state, 0, "f") == [("c", 1.0)]             # nothing to fold to
    state.step("r5")                                                 # facing 5: pot 10
    assert menu.actions(state, 1) == ["f", "c", "r8"]
    assert menu.translate(state, 1, "r7") == [("r8", 1.0)]           # the only raise kept
    assert menu.translate(state, 1, "r5") == [("c", 1.0)]            # raise to the bet: call
    wide = BetMenu((0.5, 1.0, 2.0))
    state = game.clone()
    for a in (0, 2, "r3"):                                           # facing 3: pot 6
        state.step(a)
    assert wide.actions(state, 1) == ["f", "c", "r6", "r8"]          # half pot, pot = all-in
    x, lo, hi = (7 - 3) / 6, (6 - 3) / 6, (8 - 3) / 6
    p = (hi - x) * (1 + lo) / ((hi - lo) * (1 + x))
    assert _split(wide.translate(state, 1, "r7")) == (["r6", "r8"], pytest.approx([p, 1 - p]))


def test_bet_menu_translations_are_distributions_over_kept_actions():
    menus = [jaxcfr.load_abstraction(m) for m in (
        "bet_menu(fractions=[0.5, 1.0])", "bet_menu(fractions=[])",
        "bet_menu(fractions=[0.75], all_in=False)")]
    game = jaxcfr.load_game("nolimit_leduc(stack=5)")
    full = jaxcfr.lower(game)
    labels = ["f", "c"] + [f"r{n}" for n in range(1, 7)]           # legal or not
    for (row, acts), menu in itertools.product(enumerate(full.infoset_actions), menus):
        node = int(full.infoset_members(row)[0])
        state = game.clone()
        for a in full.history(node):
            state.step(a)
        player = state.player_to_act()
        kept = menu.actions(state, player)
        bet = max(state.spent)
        raises = [(raise_to(a) - bet) / (2 * bet) for a in kept if raise_to(a) is not None]
        for action in labels:
            out = menu.translate(state, player, action)
            pairs = check_translation(out, kept, action)            # raises if it is not one
            assert sum(p for _, p in pairs) == pytest.approx(1.0, abs=1e-12)
            if action in kept:
                assert out == [(action, 1.0)]
            n = raise_to(action)
            if n is not None and action in acts and action not in kept and len(raises) > 1 \
                    and raises[0] < (n - bet) / (2 * bet) < raises[-1]:
                x = (n - bet) / (2 * bet)
                hi = next(i for i, r in enumerate(raises) if r > x)
                assert dict(out)[[a for a in kept if raise_to(a) is not None][hi - 1]] == \
                    pytest.approx(pseudo_harmonic(x, raises[hi - 1], raises[hi]), abs=1e-12)


# -- no-limit Leduc: translation against elimination -------------------------------------------
def test_translation_beats_elimination_in_nolimit_leduc():
    menu = "bet_menu(fractions=[1.0])"
    result = jaxcfr.train_abstracted(GAME, menu, iterations=30, precision=F64)
    row = result.row
    assert row["rule"] == "translation" and result.profile is not None
    assert 3 * result.translation_exploitability < result.elimination_exploitability
    assert row["translated_infosets"] > 0 and row["unreached_infosets"] < 1008
    # where the abstracted game goes, translation is elimination
    full = result.full
    seed = jaxcfr.lift(result.abstract_profile, full, abstraction=menu, translate=False)
    kept = set(result.abstract_profile.keys)
    for (player, key) in kept:
        assert result.profile.policy(player, key) == pytest.approx(seed.policy(player, key),
                                                                   abs=1e-12)
    # the lifted profile's metrics are exact in the full game
    assert jaxcfr.evaluate_profile(result.profile, full, precision=F64)["exploitability"] == \
        pytest.approx(result.exploitability, rel=1e-12)


def _split(translated) -> tuple[list, list]:
    """``[(action, probability), ...]`` as its actions and its probabilities (pytest.approx
    compares flat sequences only, from pytest 9.2)."""
    return [a for a, _ in translated], [p for _, p in translated]
