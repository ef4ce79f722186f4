"""Profiles: save / load round trip, act(), strategy tables, OpenSpiel export, ``jaxcfr eval``."""

import json
import random

import numpy as np
import pytest

import jaxcfr
from jaxcfr import Profile
from jaxcfr.cli.app import main as cli_main
from jaxcfr.profiles.profile import decode_label, encode_label
from jaxcfr import evaluate_profile

KUHN = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"), name="kuhn_poker")


def _random_profile(lowered, seed=0):
    """A profile of ``lowered`` with random (non-uniform) rows."""
    rng = np.random.default_rng(seed)
    mask = np.asarray(lowered.tensors.legal_mask)
    probs = rng.random(mask.shape) * mask
    probs /= probs.sum(axis=1, keepdims=True)
    return Profile.from_lowered(lowered, probs)


def test_labels_round_trip_through_json():
    for x in ["a", 3, -1.5, True, None, b"\x00k", (1, "b", (2, b"x")), ()]:
        enc = json.loads(json.dumps(encode_label(x)))
        assert decode_label(enc) == x and type(decode_label(enc)) is type(x)
    with pytest.raises(TypeError, match="frozenset"):
        encode_label(frozenset([1]))


def test_save_load_round_trip_keeps_keys_labels_and_probs(tmp_path):
    keys = [(0, "0|1|pb"), (1, 7), (0, ("p", 0, 3)), (1, (b"ab", (1, 2)))]
    actions = [("pass", "bet"), (0, 1, 2), (("raise", 2), ("call",)), (True, None)]
    probs = np.array([[0.25, 0.75, 0], [0.2, 0.3, 0.5], [1, 0, 0], [0.5, 0.5, 0]])
    p = Profile(keys, actions, probs, game="kuhn_poker")
    path = p.save(tmp_path / "prof.npz")
    assert path.exists() and (tmp_path / "prof.json").exists()
    for name in ("prof.npz", "prof.json", "prof"):
        q = Profile.load(tmp_path / name)
        assert q.keys == p.keys and q.actions == p.actions and q.game == "kuhn_poker"
        assert q.probs.tobytes() == p.probs.tobytes()
    q = Profile.load(path)
    assert q.policy(0, ("p", 0, 3)) == {("raise", 2): 1.0, ("call",): 0.0}
    assert q.policy(1, (b"ab", (1, 2))) == {True: 0.5, None: 0.5}
    assert not list(tmp_path.glob(".*.tmp"))


def test_load_rejects_other_files(tmp_path):
    (tmp_path / "x.json").write_text('{"format": "something-else"}')
    with pytest.raises(ValueError, match="not a jaxcfr profile"):
        Profile.load(tmp_path / "x.npz")
    p = _random_profile(KUHN)
    p.save(tmp_path / "y")
    meta = json.loads((tmp_path / "y.json").read_text())
    meta["version"] = 99
    (tmp_path / "y.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="version"):
        Profile.load(tmp_path / "y")


def test_policy_api_is_unchanged():
    p = _random_profile(KUHN)
    key = KUHN.infoset_keys[0]
    dist = p.policy(*key)
    assert list(dist) == list(KUHN.infoset_actions[0]) and abs(sum(dist.values()) - 1) < 1e-12
    assert p.policy_strict(*key) == dist
    with pytest.raises(KeyError):
        p.policy(0, "nope")
    assert p.policy(0, "nope", legal_actions=["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert len(list(p.items())) == len(p) == 12


def _deal(*cards):
    state = jaxcfr.load_game("kuhn_poker")
    for c in cards:
        state.step(c)
    return state


def test_act_samples_the_profile():
    rows = [(0, "0|2|"), (1, "1|0|b")]
    p = Profile(rows, [("pass", "bet"), ("pass", "bet")], [[0.2, 0.8], [1.0, 0.0]])
    state = _deal(2, 0)
    rng = np.random.default_rng(0)
    draws = [p.act(state, rng) for _ in range(4000)]
    assert set(draws) == {"pass", "bet"}
    assert abs(draws.count("bet") / len(draws) - 0.8) < 0.03
    assert state.legal_actions() == ["pass", "bet"] and not state.is_terminal()  # untouched
    # a pure strategy, every kind of rng
    state.step("bet")
    for rng in (random.Random(1), 5, np.random.default_rng(2), None):
        assert p.act(state, rng) == "pass"
    # reproducible from a seed
    assert [p.act(_deal(2, 0), s) for s in range(20)] == [p.act(_deal(2, 0), s) for s in range(20)]


def test_act_is_uniform_for_an_unseen_key():
    p = Profile([], [], np.zeros((0, 2)))
    draws = [p.act(_deal(1, 2), s) for s in range(2000)]
    assert abs(draws.count("pass") / 2000 - 0.5) < 0.05


def test_act_refuses_chance_nodes_and_other_action_sets():
    p = Profile([(0, "0|2|")], [("check", "raise")], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="chance"):
        p.act(jaxcfr.load_game("kuhn_poker"), 0)
    with pytest.raises(ValueError, match="neither contains the other"):
        p.act(_deal(2, 0), 0)


def test_table_is_uniform_where_the_profile_has_no_row():
    full = _random_profile(KUHN)
    half = Profile(full.keys[:6], full.actions[:6], full.probs[:6])
    table, counts = half.table(KUHN)
    assert counts == {"rows": 12, "found": 6, "missing": 6}
    np.testing.assert_allclose(table[:6, :2], full.probs[:6, :2])
    np.testing.assert_allclose(table[6:12, :2], 0.5)


def test_evaluate_profile_matches_the_runner():
    p = _random_profile(KUHN, seed=3)
    ev = evaluate_profile(p, KUHN)
    assert ev["metric_name"] == "exploitability" and ev["found"] == 12
    assert ev["exploitability"] == pytest.approx(ev["nash_conv"] / 2)
    assert ev["values"][0] == pytest.approx(-ev["values"][1], abs=1e-6)
    # the uniform profile of Kuhn poker, known independently from OpenSpiel: 0.4583333
    uniform = evaluate_profile(Profile([], [], np.zeros((0, 2))), "kuhn_poker")
    assert uniform["exploitability"] == pytest.approx(0.458333333, abs=1e-6)
    assert uniform["missing"] == 12


def _edit_json(meta):
    meta["keys"][1] = [0, {"tuple": 7}]


@pytest.mark.parametrize("edit, probs, message", [
    # the sidecar edited by hand: each mistake names the file and the entry
    (lambda m: m.pop("keys"), None, r"p\.json: 'keys' must be a list, got nothing"),
    (lambda m: m.update(actions=None), None, r"p\.json: 'actions' must be a list, got None"),
    (lambda m: m["keys"].__setitem__(2, ["x", "1"]), None,
     r"p\.json: keys\[2\]: the player must be an index 0, 1, \.\.\., got 'x'"),
    (lambda m: m["keys"].__setitem__(2, [True, "1"]), None, r"keys\[2\]: .* got True"),
    (_edit_json, None, r"keys\[1\]: a tagged tuple .* got \{'tuple': 7\}"),
    (lambda m: m["keys"].__setitem__(3, m["keys"][0]), None,
     r"keys\[3\] repeats keys\[0\] \(player 0, '0\|0\|'\): each information set has one row"),
    (lambda m: m["actions"].__setitem__(0, ["pass", "bet", "x"]), None,
     r"p\.npz: row 0 \(player 0, '0\|0\|'\) has 3 actions but probs has 2 columns"),
    # the probabilities altered: NaN, negative, not a distribution (all were evaluated,
    # renormalised or read as uniform, without a word)
    (None, lambda q: q.__setitem__((4, 0), np.nan),
     r"p\.npz: row 4 \(player \d, '.*'\) holds NaN or inf: \{'pass': nan"),
    (None, lambda q: q.__setitem__(4, [1.5, -0.5]), r"row 4 .* holds a negative probability"),
    (None, lambda q: q.__setitem__(4, [0.25, 0.25]),
     r"row 4 .* holds probabilities that do not sum to 1: \{'pass': 0\.25, 'bet': 0\.25\}"),
])
def test_load_refuses_an_edited_profile_naming_the_entry(tmp_path, edit, probs, message):
    path = _random_profile(KUHN, seed=1).save(tmp_path / "p")
    if edit is not None:
        meta = json.loads((tmp_path / "p.json").read_text())
        edit(meta)
        (tmp_path / "p.json").write_text(json.dumps(meta))
    if probs is not None:
        table = np.load(path)["probs"]
        probs(table)
        np.savez(path, probs=table)
    with pytest.raises(ValueError, match=message):
        Profile.load(path)


def test_eval_command(tmp_path, capsys):
    p = _random_profile(KUHN, seed=4)
    p.save(tmp_path / "p.npz")
    assert cli_main(["eval", str(tmp_path / "p.npz"), "kuhn_poker", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exploitability"] == pytest.approx(evaluate_profile(p, KUHN)["exploitability"])
    assert cli_main(["eval", str(tmp_path / "p.npz")]) == 0          # the recorded game
    text = capsys.readouterr().out
    assert "exploitability" in text and "12 of 12" in text
    assert cli_main(["eval", str(tmp_path / "missing.npz"), "kuhn_poker"]) == 2


# -- OpenSpiel ---------------------------------------------------------------------
def test_to_openspiel_kuhn_has_the_same_exploitability():
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import exploitability
    game = pyspiel.load_game("kuhn_poker")
    for seed in (0, 1):
        p = _random_profile(KUHN, seed)
        policy = p.to_openspiel(game)
        theirs = exploitability.exploitability(game, policy)
        ours = evaluate_profile(p, KUHN)["exploitability"]
        assert theirs == pytest.approx(ours, abs=2e-6)
    # our keys map onto OpenSpiel's information states, probabilities by action index
    state = game.new_initial_state()
    state.apply_action(2)
    state.apply_action(0)
    row = policy.action_probability_array[policy.state_index(state)]
    np.testing.assert_allclose(row, list(p.policy(0, "0|2|").values()))


def test_to_openspiel_leduc_covers_every_information_state():
    pyspiel = pytest.importorskip("pyspiel")
    leduc = jaxcfr.lower(jaxcfr.load_game("leduc_poker"), name="leduc_poker")
    p = _random_profile(leduc, 5)
    policy = p.to_openspiel("leduc_poker")
    game = pyspiel.load_game("leduc_poker")
    # every OpenSpiel row was set from the profile (random rows are never uniform)
    assert len(policy.state_lookup) == len(p) == 936
    mask = policy.legal_actions_mask.astype(bool)
    probs = policy.action_probability_array
    uniform = (~mask | np.isclose(probs, 1 / mask.sum(axis=1, keepdims=True))).all(axis=1)
    assert not uniform.any()
    np.testing.assert_allclose(probs.sum(axis=1), 1)
    assert (probs[~mask] == 0).all()
    assert game.num_players() == 2


def test_to_openspiel_refuses_a_different_game():
    pytest.importorskip("pyspiel")
    p = _random_profile(KUHN)
    with pytest.raises(ValueError, match="trees differ"):
        p.to_openspiel("kuhn_poker(players=3)", game="kuhn_poker")


def test_to_openspiel_for_an_openspiel_game():
    pytest.importorskip("pyspiel")
    pytest.importorskip("jaxcfr.game.openspiel")
    lowered = jaxcfr.lower(jaxcfr.load_game("openspiel:kuhn_poker"), name="openspiel:kuhn_poker")
    p = _random_profile(lowered, 6)
    policy = p.to_openspiel("kuhn_poker")            # the game recorded in the profile
    for (player, key), dist in p.items():
        row = policy.action_probability_array[policy.state_lookup[key]]
        np.testing.assert_allclose(row[:len(dist)], list(dist.values()))


def test_a_profile_solved_from_a_loaded_game_records_its_string(tmp_path, capsys):
    """The README's ``lower(load_game(...))`` path: the game remembers the string it was
    loaded from, so the saved profile evaluates by itself (it recorded 'KuhnPoker')."""
    from jaxcfr.game.registry import game_string
    game = jaxcfr.load_game("leduc_poker(ranks=3)")
    assert game_string(game) == "leduc_poker(ranks=3)" and game_string(game.clone()) is None
    result = jaxcfr.solve(jaxcfr.lower(game), "cfr+", 20)
    saved = result.profile.save(tmp_path / "leduc.npz")
    loaded = Profile.load(saved)
    assert loaded.game == "leduc_poker(ranks=3)"
    want = jaxcfr.evaluate(result.lowered, result.average_strategy)["exploitability"]
    assert evaluate_profile(loaded)["exploitability"] == pytest.approx(want, rel=1e-5)
    kuhn = jaxcfr.solve(jaxcfr.load_game("kuhn_poker"), "cfr+", 20)
    saved = kuhn.profile.save(tmp_path / "kuhn.npz")
    capsys.readouterr()
    assert cli_main(["eval", str(saved), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["game"] == "kuhn_poker"


def test_a_game_object_without_a_string_says_at_save_time_how_to_make_it_loadable(tmp_path):
    from jaxcfr_games.kuhn import KuhnPoker
    profile = jaxcfr.solve(KuhnPoker(), "cfr+", 10).profile
    assert profile.game == "KuhnPoker"
    with pytest.warns(UserWarning, match=r"jaxcfr.load_game\('kuhn_poker'\) before solving"):
        saved = profile.save(tmp_path / "p.npz")
    with pytest.raises(ValueError, match=r"records the game 'KuhnPoker'.*'kuhn_poker'"):
        evaluate_profile(Profile.load(saved))
    assert evaluate_profile(Profile.load(saved), "kuhn_poker")["found"] == 12
    profile.game = "kuhn_poker"                        # what the warning says to do
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        saved = profile.save(tmp_path / "q.npz")
    assert evaluate_profile(Profile.load(saved))["found"] == 12


def test_a_files_label_encoder_is_encode_label():
    # Profile.save's encoder (strings and ints without a call) writes encode_label's JSON
    # for every kind of label: bools and ints apart, NumPy scalars, floats, bytes, nested
    # and named tuples, a str subclass
    import collections
    import json

    from jaxcfr.profiles.profile import _encode_label_fast, encode_label

    class Name(str):
        pass
    Pair = collections.namedtuple("Pair", "a b")
    labels = ["Call", Name("Bet"), 3, True, False, None, 1.5, np.int64(7), np.float32(0.25),
              b"\x00\xff", (), ("Check", 51, ("Bet(62)", True), 1.0, b"x"), Pair(1, "a"),
              ("AsAh", ("Check", "Bet(62)", "Call", 51))]
    for x in labels:
        assert json.dumps(_encode_label_fast(x)) == json.dumps(encode_label(x)), x
