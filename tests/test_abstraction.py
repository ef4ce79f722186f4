"""Action abstraction: Abstracted, its checks, lowering that prunes, lifting, blueprints, batches.

Oracles: the unabstracted game (``Identity`` must change nothing, bit for bit); the
NumPy reference CFR run on the ``Abstracted`` game itself (it sees only the kept
actions through ``legal_actions``); lifting rules recomputed by hand from the
profile; the reference best responses on the full game tree for the lifted
profile's exploitability; separate runs for every member of a batch.

The games are small (no-limit Leduc with a stack of 4: 17,077 histories), the
abstractions are listed once (``MENUS``) and the runs are in float64, so that the tests
share compiled programs. float64 also keeps a batch member equal to its separate run
to 1e-9: in float32 the two differ by rounding (the forest sums in another order) and
CFR+ amplifies that (1e-7 after 5 iterations, 5e-4 in the regrets after 50 here).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import jaxcfr
from jaxcfr import Abstracted, GameError, Identity
from jaxcfr.profiles.lifting import lift_table
from jaxcfr.runs import config_from_dict
from jaxcfr_games.nolimit_leduc import BetMenu, NoLimitLeduc

try:
    from tests import broken_games as bg
    from tests import reference_cfr as R
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg
    import reference_cfr as R

GAME = "nolimit_leduc(stack=4)"
#: The abstractions of GAME the tests train (in this order, so batches share programs).
MENUS = ("bet_menu(fractions=[])", "bet_menu(fractions=[1.0])",
         "bet_menu(fractions=[0.5], all_in=False)")
BATCH = list(MENUS[:2])
RTOL = 1e-9
F64 = "float64"


class Rule:
    """An abstraction given by a function of the (wrapped) state."""

    def __init__(self, fn):
        self.fn = fn

    def actions(self, state, player):
        return self.fn(state)


def _close(a, b, what="", rtol=RTOL):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = float(np.abs(b).max()) or 1.0      # the table's own scale (tiny sums)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=what)


def _dealt(game, *actions):
    state = game.clone()
    for a in actions:
        state.step(a)
    return state


# -- Identity changes nothing ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", GAME])
def test_identity_lowers_and_solves_bit_for_bit(name):
    game = jaxcfr.load_game(name)
    plain, wrapped = jaxcfr.lower(game), jaxcfr.lower(Abstracted(game, Identity()))
    for field, x, y in zip(plain.tensors._fields, plain.tensors, wrapped.tensors):
        assert x.dtype == y.dtype and np.array_equal(x, y), field
    for attr in ("level_start", "infoset_keys", "infoset_actions", "node_action", "nash_value",
                 "constant_sum", "br_rounds"):
        assert getattr(plain, attr) == getattr(wrapped, attr), attr
    assert np.array_equal(plain.preorder, wrapped.preorder)
    if name != "kuhn_poker":
        return                        # one solve is enough: the tensors are the same
    a = jaxcfr.solve(plain, "cfr+", 100, eval_every=50)
    b = jaxcfr.solve(wrapped, "cfr+", 100, eval_every=50)
    assert np.array_equal(a.average_strategy, b.average_strategy)
    timing = ("iterations_per_second", "compile_seconds", "wall_seconds")
    assert [{k: v for k, v in r.items() if k not in timing} for r in a.metrics] == \
           [{k: v for k, v in r.items() if k not in timing} for r in b.metrics]


# -- the wrapper -------------------------------------------------------------------------------
def test_the_wrapper_forwards_everything_but_legal_actions():
    full = NoLimitLeduc(stack=4)
    game = Abstracted(full, BetMenu((1.0,)))
    assert game.num_players == 2 and game.is_chance() and game.legal_actions() == []
    assert game.chance_outcomes() == full.chance_outcomes()
    state = _dealt(game, 0, 2)
    inner = _dealt(full, 0, 2)
    assert state.history == (0, 2)
    assert inner.legal_actions() == ["c", "r2", "r3", "r4"]
    assert state.legal_actions() == ["c", "r3", "r4"]           # pot (to 3) and all-in
    assert state.player_to_act() == 0 and state.infoset_key(1) == inner.infoset_key(1)
    assert state.stack == 4 and state.spent == (1, 1)          # read from the wrapped state
    copy = state.clone()
    copy.step("r3")
    assert copy.legal_actions() == ["f", "c", "r4"] and state.legal_actions()[0] == "c"
    for a in ("r4", "c"):                                         # all-in, called
        copy.step(a)
    assert copy.is_chance()
    copy.step(4)                                                  # Ks: queen beats jack
    assert copy.is_terminal() and copy.terminal_returns() == (-4.0, 4.0) == _dealt(
        full, 0, 2, "r3", "r4", "c", 4).terminal_returns()
    # An abstraction changes the game's value; Identity does not.
    kuhn = jaxcfr.load_game("kuhn_poker")
    assert Abstracted(kuhn, Identity()).nash_value() == kuhn.nash_value()
    assert Abstracted(kuhn, Rule(lambda s: s.legal_actions()[:1])).nash_value() is None
    jaxcfr.validate(game)
    assert isinstance(BetMenu(), jaxcfr.Abstraction) and isinstance(Identity(), jaxcfr.Abstraction)
    with pytest.raises(TypeError, match="actions"):
        Abstracted(full, object())


# -- each GameError, naming the history ------------------------------------------------------
KEPT_AT_H = {                       # player 0's decision after the coin "H" (Toy)
    "abstraction-empty": [],
    "abstraction-duplicate": ["a", "a"],
    "abstraction-illegal": ["a", "z"],
}


@pytest.mark.parametrize("rule", sorted(KEPT_AT_H))
def test_a_bad_kept_set_is_reported_with_its_history(rule):
    def keep(state):
        return KEPT_AT_H[rule] if state.h == ("H",) else state.legal_actions()
    game = Abstracted(bg.Toy(), Rule(keep))
    state = game.clone()
    state.step("H")
    for check in (state.legal_actions, lambda: state.clone().step("a"),
                  lambda: jaxcfr.lower(game),
                  lambda: jaxcfr.lower(bg.Toy(), abstraction=Rule(keep)),
                  lambda: jaxcfr.validate(game)):
        with pytest.raises(GameError) as info:
            check()
        assert info.value.rule == rule and info.value.history == ("H",)
        assert "history: H" in str(info.value)


def test_a_step_outside_the_kept_set_is_refused():
    game = Abstracted(bg.Toy(), Rule(lambda s: ["a"] if len(s.h) == 1 else s.legal_actions()))
    state = _dealt(game, "T")
    assert state.legal_actions() == ["a"]
    for action in ("b", "z", None):            # legal but dropped; illegal everywhere
        with pytest.raises(GameError) as info:
            state.clone().step(action)
        assert info.value.rule == "abstraction-step" and info.value.history == ("T",)
    state.step("a")
    assert state.history == ("T", "a")


@pytest.mark.parametrize("kept_at_t", [["y", "x"], ["x"]])
def test_the_kept_actions_must_agree_across_an_information_set(kept_at_t):
    """Player 1 cannot see the coin: keeping by the coin breaks the order / set rule."""
    keep = Rule(lambda s: kept_at_t if s.h == ("T", "a") else s.legal_actions())
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Abstracted(bg.Toy(), keep))
    assert info.value.rule == "abstraction-order" and info.value.infoset == "1|a"
    assert info.value.history in ({("T", "a")})            # met after ("H", "a") in pre-order
    assert "same information set" in str(info.value)


@pytest.mark.parametrize("broken", [bg.InconsistentActionOrder, bg.EmptyLegalActions,
                                    bg.DuplicateLegalActions, bg.UnhashableActions])
def test_the_wrapped_games_own_contract_is_checked_first(broken):
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Abstracted(broken(), Identity()))
    assert info.value.rule == broken.RULE and info.value.history in broken.HISTORIES


# -- lowering walks only the kept actions ----------------------------------------------------
class CountedLeduc(NoLimitLeduc):
    """No-limit Leduc that counts every ``step`` (the walker probes terminals once too)."""
    __slots__ = ()
    steps = [0]

    def step(self, action):
        CountedLeduc.steps[0] += 1
        super().step(action)


def test_lowering_never_walks_below_a_dropped_action():
    menu = jaxcfr.load_abstraction(MENUS[1])
    game = Abstracted(CountedLeduc(stack=4), menu)
    size = jaxcfr.probe_size(game)          # its random probes step too: not counted
    CountedLeduc.steps[0] = 0
    lowered = jaxcfr.lower(game, size=size, probe=False)   # (the clone probe steps too)
    terminals = int((lowered.tensors.node_kind == jaxcfr.tensors.TERMINAL_NODE).sum())
    assert CountedLeduc.steps[0] == lowered.num_nodes - 1 + terminals
    full = jaxcfr.lower(jaxcfr.load_game(GAME))
    assert (lowered.num_nodes, full.num_nodes) == (5_797, 17_077)
    assert (lowered.max_actions, full.max_actions) == (3, 4)
    # Rows hold the kept actions in the abstraction's order; every history is a real one.
    game = jaxcfr.load_game(GAME)
    for (player, key), acts in zip(lowered.infoset_keys, lowered.infoset_actions):
        node = lowered.infoset_members(lowered.row_of(player, key))[0]
        state = _dealt(game, *lowered.history(int(node)))
        assert state.infoset_key(player) == key
        assert list(acts) == menu.actions(state, player)
    # lower(game, abstraction=...) is the same mechanism
    same = jaxcfr.lower(game, abstraction=menu)
    assert all(np.array_equal(x, y) for x, y in zip(same.tensors, lowered.tensors))
    assert same.name == "NoLimitLeduc | " + repr(menu) and lowered.nash_value is None


def test_the_abstracted_solve_matches_the_reference_cfr_on_the_abstracted_game():
    game = Abstracted(jaxcfr.load_game(GAME), jaxcfr.load_abstraction(MENUS[0]))
    lowered = jaxcfr.lower(game)
    result = jaxcfr.solve(lowered, "cfr+", 30, precision=F64)
    reference = R.ReferenceCFR(R.Tree(game), "cfr+").run(30).average()
    _close(result.average_strategy, R.table_from_profile(lowered, reference))


# -- lifting -----------------------------------------------------------------------------------
def test_lifting_zeroes_dropped_actions_renormalises_and_falls_back_to_uniform():
    full_game = jaxcfr.load_game(GAME)
    small = jaxcfr.lower(Abstracted(full_game, jaxcfr.load_abstraction(MENUS[1])))
    rng = np.random.default_rng(0)
    probs = rng.random((len(small.infoset_keys), small.max_actions)) * 3   # not normalised
    probs[0] = 0.0                                         # no mass: uniform over all legal
    probs[1, :] = 0.0
    probs[1, 0] = 2.0                                      # pure after renormalising
    abstract = jaxcfr.Profile(small.infoset_keys, small.infoset_actions, probs)
    lifted = jaxcfr.lift(abstract, GAME)
    full = jaxcfr.lower(full_game)
    assert lifted.keys == full.infoset_keys and lifted.actions == full.infoset_actions
    kept = dict(zip(small.infoset_keys, small.infoset_actions))
    row_of = {k: r for r, k in enumerate(small.infoset_keys)}
    unreached = 0
    for (player, key), legal in zip(full.infoset_keys, full.infoset_actions):
        got = lifted.policy(player, key)
        assert list(got) == list(legal) and math.isclose(sum(got.values()), 1.0)
        if (player, key) not in kept:
            unreached += 1
            expect = {a: 1 / len(legal) for a in legal}
        else:
            w = dict(zip(kept[(player, key)], probs[row_of[(player, key)]]))
            total = sum(w.values())
            expect = ({a: w.get(a, 0.0) / total for a in legal} if total > 0
                      else {a: 1 / len(legal) for a in legal})
        assert got == pytest.approx(expect, abs=1e-12), key
    first, second = small.infoset_keys[0], small.infoset_keys[1]
    assert lifted.policy(*first) == {a: 1 / len(full.infoset_actions[full.row_of(*first)])
                                     for a in full.infoset_actions[full.row_of(*first)]}
    assert max(lifted.policy(*second).values()) == 1.0
    assert 0 < unreached < len(full.infoset_keys)
    _, counts = lift_table(abstract, full)
    assert counts == {"rows": len(full.infoset_keys), "found": len(small.infoset_keys),
                      "translated": 0, "missing": unreached}


def test_lifting_refuses_a_profile_of_another_game():
    kuhn = jaxcfr.solve("kuhn_poker", "cfr+", 10).profile
    with pytest.raises(ValueError, match="does not have"):
        jaxcfr.lift(kuhn, GAME)
    with pytest.raises(ValueError, match="full game"):
        jaxcfr.lift(kuhn, Abstracted(jaxcfr.load_game("kuhn_poker"), Identity()))


def test_a_profile_maps_between_the_full_and_the_abstracted_actions():
    full_game = jaxcfr.load_game(GAME)
    menu = jaxcfr.load_abstraction(MENUS[1])
    state = _dealt(full_game, 0, 2)
    key = state.infoset_key(0)
    profile = jaxcfr.Profile([(0, key)], [("c", "r3", "r4")], [[0.0, 1.0, 3.0]])
    assert profile.distribution(0, key, state.legal_actions()) == \
        pytest.approx([0, 0, 0.25, 0.75])                          # lifted: r2 dropped
    assert all(profile.act(state, rng) in ("r3", "r4") for rng in range(20))
    wide = jaxcfr.Profile([(0, key)], [("c", "r2", "r3", "r4")], [[0.5, 0.5, 0.0, 0.0]])
    small_state = _dealt(Abstracted(full_game, menu), 0, 2)       # restricted: c only
    assert wide.distribution(0, key, small_state.legal_actions()) == pytest.approx([1, 0, 0])
    assert wide.act(small_state, 0) == "c"


# -- blueprints --------------------------------------------------------------------------------
def test_an_identity_blueprint_is_the_unabstracted_solve():
    result = jaxcfr.train_abstracted("kuhn_poker", Identity(), iterations=100)
    plain = jaxcfr.solve("kuhn_poker", "cfr+", 100)
    assert result.unreached == 0 and result.lowered.num_nodes == plain.lowered.num_nodes
    assert result.exploitability == pytest.approx(plain.final["exploitability"], abs=1e-6)
    assert result.abstract_final["exploitability"] == plain.final["exploitability"]
    # float32 rows, renormalised in float64 by the lifting
    _close(result.profile.probs, plain.profile.probs, rtol=1e-6)


def test_a_blueprints_full_game_exploitability_is_exact():
    result = jaxcfr.train_abstracted(GAME, MENUS[0], iterations=30, precision=F64)
    assert math.isfinite(result.exploitability) and result.exploitability > 0
    assert result.abstract_final["exploitability"] < 0.05 < result.exploitability
    # the reference best responses on the full tree, for the lifted profile
    tree = R.Tree(jaxcfr.load_game(GAME))
    reference = {k: np.asarray(list(result.profile.policy(*k).values())) for k in tree.infosets}
    conv, values, _ = R.nash_conv(tree, reference)
    assert result.exploitability == pytest.approx(conv / 2, rel=1e-9)
    _close(result.metrics["values"], values)
    # the abstract profile, evaluated in the full game, is lifted on the fly (by elimination)
    assert jaxcfr.evaluate_profile(result.abstract_profile, GAME, precision=F64)[
        "exploitability"] == pytest.approx(result.elimination_exploitability, abs=1e-12)
    assert result.row["rule"] == "translation" and \
        result.exploitability == result.translation_exploitability
    assert result.profile.game == GAME and result.full.name == GAME


def test_a_batch_of_abstractions_equals_separate_runs():
    batch = jaxcfr.train_abstracted(GAME, BATCH, iterations=30, precision=F64)
    assert [r.label for r in batch] == BATCH
    assert batch[0].solve is batch[1].solve and batch[0].solve.lowered.batch_size == 2
    for member in batch:
        alone = jaxcfr.train_abstracted(GAME, member.label, iterations=30, precision=F64)
        assert alone.lowered.num_nodes == member.lowered.num_nodes
        _close(member.abstract_profile.probs, alone.abstract_profile.probs, member.label)
        _close(member.profile.probs, alone.profile.probs, member.label)
        for k in ("exploitability", "nash_conv", "values"):
            _close(member.metrics[k], alone.metrics[k], f"{member.label} {k}")
        _close(member.abstract_final["metric"], alone.abstract_final["metric"])
    table = jaxcfr.format_table(batch)
    assert table.splitlines()[1].startswith("full game (nolimit_leduc(stack=4))")
    assert all(label in table for label in BATCH) and "17,077" in table
    # the full game's figure leads, labelled as such (issue 18, item 7)
    head = table.splitlines()[0]
    assert head.index("full-game exploitability (lifted)") < \
        head.index("exploitability inside the abstraction")
    assert jaxcfr.format_table(batch[0]).splitlines()[2].startswith(BATCH[0])


def test_a_blueprint_needs_enumerable_chance():
    with pytest.raises(GameError, match="train_abstracted needs enumerable chance") as info:
        jaxcfr.train_abstracted("sampled_dice_poker(dice=1, sides=3)", Identity(), iterations=1)
    assert info.value.rule == "chance-not-enumerable"


def test_a_blueprint_refuses_hyperparameter_lists_and_abstracted_games():
    with pytest.raises(ValueError, match="one value of alpha"):
        jaxcfr.train_abstracted("kuhn_poker", Identity(), "dcfr", 1, alpha=[1.0, 2.0])
    with pytest.raises(ValueError, match="separately"):
        jaxcfr.train_abstracted(Abstracted(jaxcfr.load_game("kuhn_poker"), Identity()),
                                Identity(), iterations=1)


# -- abstraction strings and run configs ---------------------------------------------------------
def test_abstraction_strings():
    assert jaxcfr.load_abstraction("identity") == Identity()
    menu = jaxcfr.load_abstraction("bet_menu(fractions=[0.5, 1], all_in=False)")
    assert isinstance(menu, BetMenu) and menu.fractions == (0.5, 1.0) and not menu.all_in
    assert isinstance(jaxcfr.load_abstraction("jaxcfr_games.nolimit_leduc:BetMenu"), BetMenu)
    for bad, match in (("nope", "unknown abstraction"), ("bet_menu(size=2)", "size"),
                       ("bet_menu(fractions=[0])", "positive"),
                       ("jaxcfr_games.kuhn:KuhnPoker", "neither an actions"), ("1x", "parse")):
        with pytest.raises(GameError, match=match) as info:
            jaxcfr.load_abstraction(bad)
        assert info.value.rule == "abstraction-string"


def test_config_abstraction_key():
    one = config_from_dict({"game": {"name": GAME, "abstraction": MENUS[1]}})
    assert one.game.members == ((GAME, MENUS[1]),) and not one.game.batched
    many = config_from_dict({"game": {"name": GAME}},
                            overrides=[f"game.abstraction={list(MENUS)!r}".replace("'", '"')])
    assert many.game.members == tuple((GAME, m) for m in MENUS) and many.game.batched
    both = config_from_dict({"game": {"names": ["kuhn_poker", "leduc_poker"],
                                      "abstraction": "identity"}})
    assert both.game.members == (("kuhn_poker", "identity"), ("leduc_poker", "identity"))
    for game, match in (({"name": GAME, "abstraction": "nope"}, "game.abstraction: .*unknown"),
                        ({"names": [GAME, GAME], "abstraction": list(MENUS)}, "one game.name"),
                        ({"name": GAME, "abstraction": 3}, "game.abstraction: expected")):
        with pytest.raises(jaxcfr.runs.ConfigError, match=match):
            config_from_dict({"game": game})


def test_a_training_run_lifts_and_compares_its_abstractions(tmp_path):
    config = config_from_dict({"game": {"name": GAME, "abstraction": BATCH},
                               "solver": {"iterations": 30},
                               "run": {"eval_every": 30, "plot": False, "precision": F64}})
    result = jaxcfr.train(config, out_dir=str(tmp_path / "run"), progress=None,
                          handle_sigint=False, log=lambda msg: None)
    rows = result.abstraction
    assert [r["abstraction"] for r in rows] == BATCH
    batch = jaxcfr.train_abstracted(GAME, BATCH, iterations=30, precision=F64)
    for row, member, profile in zip(rows, batch, result.profiles):
        assert row["histories"] == member.lowered.num_nodes and row["full_histories"] == 17_077
        assert row["unreached_infosets"] == member.unreached
        assert row["full_game_metric"] == pytest.approx(member.exploitability, abs=1e-6)
        assert profile.game == GAME                # jaxcfr eval measures it in the full game
        assert jaxcfr.evaluate_profile(profile, precision=F64)["exploitability"] == \
            pytest.approx(member.elimination_exploitability, abs=1e-6)
    best = int(np.argmin([r["full_game_metric"] for r in rows]))
    assert result.best_member == best
    lifted = jaxcfr.Profile.load(result.run_dir / "lifted.npz")
    assert lifted.game == GAME and len(lifted) == rows[best]["full_infosets"]
    assert (result.run_dir / "abstraction.json").exists()


def test_abstraction_runs_lead_with_full_game_figures(tmp_path, capsys):
    """The summary, the table and the plot of an abstraction run show the lifted profile's
    full-game exploitability first, labelled; the metric inside an abstraction (its best
    responses may use only the kept actions) is labelled so (issue 18, item 7)."""
    from jaxcfr.cli import app
    from jaxcfr.runs.plot import convergence_figure
    config = tmp_path / "menus.toml"
    config.write_text(f'[game]\nname = "{GAME}"\nabstraction = {list(BATCH)!r}\n'
                      .replace("'", '"') + '[solver]\niterations = 30\n'
                      '[run]\neval_every = 30\nquiet = true\n')
    assert app.main(["train", str(config), "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    rows = json.loads((tmp_path / "run" / "abstraction.json").read_text())
    best = min(rows, key=lambda r: r["full_game_metric"])
    first = next(line for line in out.splitlines() if line.startswith("exploitability"))
    assert "in the full game" in first and f"{best['full_game_metric']:.6g}" in first
    assert first.index("in the full game") < first.index("inside the abstraction")
    assert "full-game exploitability (lifted)" in out
    metrics = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    fig = convergence_figure(metrics, members=[r["abstraction"] for r in rows],
                             full_game=[r["full_game_metric"] for r in rows])
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.endswith("full game (lifted)") for t in labels), labels
    assert any(t.endswith("inside the abstraction") for t in labels), labels
    assert (tmp_path / "run" / "convergence.png").exists()
