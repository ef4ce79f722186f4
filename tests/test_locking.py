"""Node locking (``lock=``; :mod:`jaxcfr.solvers.locking`, :mod:`jaxcfr.api.locks`).

Oracles:

* Kuhn poker with player 0 locked to a known equilibrium (Kuhn's family at alpha = 1/3,
  all of player 0's rows, or only its first moves): the locked rows' average is the lock
  exactly, the value is the game's -1/18, and player 0's strategy stays unexploitable
  (player 1's unrestricted best response against it is worth 1/18);
* player 0's whole strategy locked (a random one) on Kuhn and Leduc: player 1's value
  converges to its exact best-response value against that strategy, which the
  restricted metrics report exactly, equal to jaxcfr's unrestricted best response and
  to OpenSpiel's ``BestResponsePolicy``; player 0's restricted best response is its own
  value (it cannot deviate);
* the same lock on the history tree and on the public tree of Kuhn gives the same
  restricted metrics;
* a hold'em river spot with OOP's root locked to all-in: the node keeps the lock, OOP's
  value falls below its unlocked equilibrium value (a restriction can only cost the
  restricted player), IP's value converges to its best response against the locked
  strategy (:func:`jaxcfr.solvers.public.best_response_public`), IP calls with its set;
* a new lock does not recompile (trace counts), on both trees;
* bad locks: specific errors.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.tracing import TRACES
from jaxcfr.api.locks import LockError, resolve_lock
from jaxcfr.solvers.locking import evaluate_locked

try:
    from tests.cfr_cases import KUHN_P0
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    from cfr_cases import KUHN_P0


def _rows(lowered, keys):
    return [lowered.infoset_keys.index((0, k)) for k in keys]


@pytest.mark.parametrize("keys", [tuple(KUHN_P0), ("0|0|", "0|2|")])
def test_kuhn_locked_to_an_equilibrium_stays_an_equilibrium(keys):
    lock = {k: KUHN_P0[k] for k in keys}
    result = jaxcfr.solve("kuhn_poker", "cfr+", 2000, lock=lock, precision="float64")
    low = result.lowered
    for k, row in zip(keys, _rows(low, keys)):
        got = dict(zip(low.infoset_actions[row], result.average_strategy[row]))
        for a, p in lock[k].items():
            assert got[a] == pytest.approx(p, abs=1e-12)
    final = result.final
    assert final["values"][0] == pytest.approx(-1 / 18, abs=1e-3)
    assert final["exploitability"] < 1e-3                       # the restricted game's
    free = jaxcfr.evaluate(low, result.average_strategy, dtype="float64")
    # player 0 is still an equilibrium strategy of the whole game
    assert free["best_response_values"][1] == pytest.approx(1 / 18, abs=1e-3)
    if len(keys) == len(KUHN_P0):       # every row of player 0 fixed: exactly unexploitable
        assert free["best_response_values"][1] == pytest.approx(1 / 18, abs=1e-9)


def _random_player0(lowered, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for (player, key), actions in zip(lowered.infoset_keys, lowered.infoset_actions):
        if player == 0:
            p = rng.dirichlet(np.ones(len(actions)))
            out[key] = dict(zip(actions, p))
    return out


def _openspiel_br_value(name, lowered, table, player):
    pyspiel = pytest.importorskip("pyspiel")
    from open_spiel.python.algorithms import best_response
    profile = jaxcfr.Profile.from_lowered(lowered, table)
    game = pyspiel.load_game(name)
    policy = profile.to_openspiel(game)
    return best_response.BestResponsePolicy(game, player, policy).value(
        game.new_initial_state())


@pytest.mark.parametrize("name,iterations,tol", [("kuhn_poker", 2000, 2e-3),
                                                  ("leduc_poker", 400, 2e-2)])
def test_locking_a_whole_player_gives_the_other_its_best_response_value(name, iterations,
                                                                         tol):
    low = jaxcfr.lower(jaxcfr.load_game(name))
    lock = _random_player0(low, 3)
    result = jaxcfr.solve(low, "cfr+", iterations, lock=lock, precision="float64")
    final = result.final
    table = result.average_strategy
    free = jaxcfr.evaluate(low, table, dtype="float64")
    br1 = free["best_response_values"][1]           # player 1's rows play no part in it
    assert final["best_response_values"][1] == pytest.approx(br1, abs=1e-9)
    assert final["best_response_values"][0] == pytest.approx(final["values"][0], abs=1e-12)
    assert final["values"][1] == pytest.approx(br1, abs=tol)    # the solve finds it
    assert _openspiel_br_value(name, low, table, 1) == pytest.approx(br1, abs=1e-9)
    # a best response to player 0 alone: player 1's half of the solve does not matter
    other = table.copy()
    rows1 = [r for r, (p, _) in enumerate(low.infoset_keys) if p == 1]
    other[rows1] = low.tensors.legal_mask[rows1] / low.tensors.legal_mask[rows1].sum(
        1, keepdims=True)
    again = evaluate_locked(low, other, resolve_lock(low, lock))
    assert again["best_response_values"][1] == pytest.approx(br1, abs=1e-9)


def test_history_and_public_trees_lock_alike():
    from jaxcfr_games.public_kuhn import PublicKuhn
    low = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    lock = _random_player0(low, 5)
    history = jaxcfr.solve(low, "cfr+", 300, lock=lock, precision="float64")
    public_lock = {(() if k.endswith("|") else ("pass", "bet"), int(k.split("|")[1])): v
                   for k, v in lock.items()}
    public = jaxcfr.solve_public(PublicKuhn(), "cfr+", 300, lock=public_lock,
                                 precision="float64")
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_allclose(public.final[key], history.final[key], atol=1e-9)
    for (player, hand, hist), probs in public.profile().items():
        if player == 0:
            k = f"0|{hand}|{'pb' if hist else ''}"
            assert probs == pytest.approx(lock[k], abs=1e-12)


SPOT = "holdem_spot(board='QhJd8c5s3h', ranges=('AA,AKs:0.5,72o', 'KK,QQ:0.5'))"


def test_a_locked_holdem_river_node_keeps_its_strategy_and_is_exploited():
    from jaxcfr.solvers.public import best_response_public, evaluate_public
    low = jaxcfr.lower_public(jaxcfr.load_game(SPOT))
    free = jaxcfr.solve_public(low, "cfr+", 200, precision="float64")
    lock = {((), "*"): {"AllIn(200)": 1.0}}           # OOP shoves every hand
    locked = jaxcfr.solve_public(low, "cfr+", 200, lock=lock, precision="float64")
    for hand in low.hands.labels[0]:
        assert locked.strategy(0, hand) == {"Check": 0.0, "Bet(60)": 0.0, "AllIn(200)": 1.0}
    # a restriction costs the restricted player: below its equilibrium value
    assert locked.final["values"][0] < free.final["best_response_values"][0] - 1.0
    # IP's value is its best response against the shove, which the metrics report
    br = best_response_public(low, locked.average_strategy, 1)
    exact = evaluate_public(low, br)["values"][1]
    assert locked.final["best_response_values"][1] == pytest.approx(exact, abs=1e-9)
    assert locked.final["values"][1] == pytest.approx(exact, abs=0.05)
    for hand in ("QsQd", "QdQc"):                                   # a set calls
        assert locked.strategy(1, hand, ("AllIn(200)",))["Call"] > 0.99


def test_hand_classes_and_card_names_on_holdem():
    low = jaxcfr.lower_public(jaxcfr.load_game(SPOT))
    lock = resolve_lock(low, {((), "AA"): {"Check": 1.0}, ("", "AKs"): {"Bet(60)": 1.0},
                              ("Check", "KK"): {"Bet(60)": 0.25, "Check": 0.75}})
    t = low.tensors
    labels = low.hands.labels
    rows = {labels[0][r - int(t.node_base[0])] for r in np.flatnonzero(lock.mask)
            if r < int(t.node_base[0]) + len(labels[0])}
    assert rows == {h for h in labels[0] if h[0] == "A"}             # 6 AA + 4 AKs
    assert int(lock.mask.sum()) == 10 + 6                            # and 6 KK at Check
    both = resolve_lock(low, {((), "AK"): {"Check": 1.0}})
    assert int(both.mask.sum()) == 4                                 # AKs only in range


def test_a_new_lock_does_not_recompile():
    jaxcfr.solve("kuhn_poker", "cfr+", 50, lock={"0|0|": {"bet": 1.0}})
    before = TRACES.snapshot()
    again = jaxcfr.solve("kuhn_poker", "cfr+", 50,
                         lock={"0|1|": {"bet": 0.5, "pass": 0.5}, "1|2|p": {"pass": 1}})
    assert "chunk" not in TRACES.since(before)
    assert again.average_strategy[again.lowered.infoset_keys.index((1, "1|2|p"))][0] == 1.0


def test_a_new_lock_does_not_recompile_on_a_public_tree():
    low = jaxcfr.lower_public(jaxcfr.load_game(SPOT))
    first = jaxcfr.solve_public(low, "cfr+", 10, lock={((), "*"): {"Check": 1.0}})
    before = TRACES.snapshot()
    second = jaxcfr.solve_public(low, "cfr+", 10, lock={(("Check",), "*"): {"Check": 1.0}})
    assert not [name for name in TRACES.since(before) if "chunk" in name]
    assert second.strategy(1, "KsKh", ("Check",)) == {"Check": 1.0, "Bet(60)": 0.0,
                                                       "AllIn(200)": 0.0}
    assert first.strategy(1, "KsKh", ("Check",))["Check"] < 1.0
    assert first.strategy(0, "AsAh")["Check"] == 1.0


@pytest.mark.parametrize("lock,match", [
    ({"0|9|": {"bet": 1.0}}, r"unknown information set '0\|9\|'.*closest"),
    ({"0|0|": {"raise": 1.0}}, "'raise' is not a legal action at player 0's .*pass, bet"),
    ({"0|0|": {"bet": 0.5, "pass": 0.4}}, "sum to 0.9, not 1"),
    ({"0|0|": {"bet": -0.5, "pass": 1.5}}, "finite number >= 0"),
    ({"0|0|": {}}, "must map actions to probabilities"),
    ({}, "names no information set"),
    ([("0|0|", {"bet": 1})], "must map information sets"),
])
def test_bad_locks_on_a_history_tree(lock, match):
    with pytest.raises(jaxcfr.ArgumentError if hasattr(jaxcfr, "ArgumentError")
                       else ValueError, match=match):
        jaxcfr.solve("kuhn_poker", "cfr+", 2, lock=lock)


@pytest.mark.parametrize("lock,match", [
    ({(("Raise",), "*"): {"Check": 1.0}}, "'Raise' is not a public action"),
    ({(("Check", "Check"), "*"): {"Check": 1.0}}, "not a decision"),
    ({((), "KK"): {"Check": 1.0}}, "'KK' is not a hand of player 0"),
    ({((), "AA"): {"Call": 1.0}}, "'Call' is not a legal action"),
    ({(1, "AA", ()): {"Check": 1.0}}, "player 1 does not act"),
    ({"AA": {"Check": 1.0}}, r"is \(public history, hand\)"),
])
def test_bad_locks_on_a_public_tree(lock, match):
    low = jaxcfr.lower_public(jaxcfr.load_game(SPOT))
    with pytest.raises(LockError, match=match):
        resolve_lock(low, lock)


TURN_SPOT = ("holdem_spot(board='Td9d6h5d', ranges=('AA', 'KK'), bets='a', raises='a', "
             "isomorphism=False)")


@pytest.mark.parametrize("lock,match", [
    ({(("Check", "Check", "2c", "Raise"), "*"): {"Check": 1.0}},
     "'Raise' is not a public action or outcome after 'Check, Check, 2c' "
     r"\(there: Check, AllIn\(200\)\)"),
    ({(("Check", "Check", "Td"), "*"): {"Check": 1.0}},
     r"'Td' is not a public action or outcome after 'Check, Check' \(there: 2c, 2d, "),
    ({(("Check", "Check", "2c", "Check", "Check"), "*"): {"Check": 1.0}},
     "the node after 'Check, Check, 2c, Check, Check' is not a decision"),
    ({(1, "AA", ("Check", "Check", "2c")): {"Check": 1.0}},
     r"player 1 does not act after 'Check, Check, 2c' \(player 0 does\)"),
    ({(("Check", "Check", "2c"), "QQ"): {"Check": 1.0}},
     "'QQ' is not a hand of player 0 at 'Check, Check, 2c'"),
])
def test_bad_locks_below_a_dealt_card_name_the_card(lock, match):
    """A lock's refusal on a hold'em turn writes the public history as a lock takes it,
    dealt cards by name ('Check, Check, 2c'), never as the tree's card numbers."""
    low = jaxcfr.lower_public(jaxcfr.load_game(TURN_SPOT))
    with pytest.raises(LockError, match=match) as e:
        resolve_lock(low, lock)
    assert "('Check'" not in str(e.value)                    # no tuple of card numbers


def test_what_cannot_be_locked():
    lock = {"0|0|": {"bet": 1.0}}
    with pytest.raises(ValueError, match="full-width estimator"):
        jaxcfr.solve("kuhn_poker", "cfr", 2, lock=lock,
                     estimator=jaxcfr.ExternalSampling(samples=1))
    with pytest.raises(ValueError, match="sampled chance"):
        jaxcfr.solve("kuhn_poker", "cfr", 2, lock=lock, chance="sampled")


def test_the_command_line_reads_a_lock_file(tmp_path, capsys):
    from jaxcfr.cli import app
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"infoset": k, "strategy": v} for k, v in KUHN_P0.items()]))
    assert app.main(["solve", "kuhn_poker", "--iterations", "300", "--lock", str(path),
                     "--json", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert data["values"][0] == pytest.approx(-1 / 18, abs=5e-3)
    assert data["lock"] == str(path)
    spot = tmp_path / "spot.json"
    spot.write_text(json.dumps([{"history": [], "hand": "AA", "strategy": {"Check": 1}},
                                {"history": "Check", "strategy": {"Check": 1}}]))
    assert app.main(["solve", SPOT, "--iterations", "20", "--lock", str(spot), "--grid", "",
                     "--json", "--quiet"]) == 0
    grid = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["grid"]
    assert grid["frequencies"][0][0] == [1.0, 0.0, 0.0]            # AA checks
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"infoset": "0|0|", "strategy": {"bet": 2}}]))
    assert app.main(["solve", "kuhn_poker", "--iterations", "2", "--lock", str(bad),
                     "--quiet"]) == 2
    assert "sum to 2, not 1" in capsys.readouterr().err
    assert app.main(["solve", "kuhn_poker", "--lock", str(tmp_path / "none.json")]) == 2
    assert "cannot read the lock file" in capsys.readouterr().err


def test_the_solver_core_plays_and_averages_the_lock():
    # Solver.update with a Lock: after every iteration the locked rows' current strategy
    # and strategy sums are the lock, their regrets 0; a sampling estimator refuses it
    from jaxcfr.solvers.locking import Lock
    from jaxcfr.tensors import to_device
    low = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    host = resolve_lock(low, KUHN_P0)
    lock = Lock(host.strategy.astype(np.float32), host.mask)
    solver = jaxcfr.cfr_plus()
    tensors = to_device(low.tensors, np.float32)
    hp = solver.hyperparams()
    state = solver.init(tensors)
    for _ in range(5):
        state = solver.update(tensors, low.structure, state, hp, lock=lock)
        np.testing.assert_allclose(np.asarray(solver.strategy(tensors, state, lock))[host.mask],
                                   host.strategy[host.mask], atol=1e-7)
        sums = np.asarray(state.strategy_sum)[host.mask]
        np.testing.assert_allclose(sums, host.strategy[host.mask], atol=1e-7)
        assert not np.asarray(state.regret)[host.mask].any()
    sampled = jaxcfr.Solver("mc", estimator=jaxcfr.ExternalSampling(samples=1))
    prepared, arrays = sampled.estimator.prepare(low)
    sampled = jaxcfr.Solver("mc", estimator=prepared)
    with pytest.raises(ValueError, match="full-width estimator"):
        sampled.update(tensors, low.structure, sampled.init(tensors),
                       sampled.hyperparams(seed=0), arrays, lock=lock)


def test_a_locked_public_batch_of_settings():
    from jaxcfr_games.public_kuhn import PublicKuhn
    lock = {((), 0): {"bet": 1.0}}
    batch = jaxcfr.solve_public(PublicKuhn(), "dcfr", 200, alpha=[1.0, 2.0], lock=lock,
                                precision="float64")
    for k, alpha in enumerate((1.0, 2.0)):
        one = jaxcfr.solve_public(PublicKuhn(), "dcfr", 200, alpha=alpha, lock=lock,
                                  precision="float64")
        np.testing.assert_allclose(batch.average_strategy[..., k], one.average_strategy,
                                   atol=1e-12)
        assert batch.final["exploitability"][k] == pytest.approx(one.final["exploitability"],
                                                                 abs=1e-12)
    assert batch.strategy(0, 0)["bet"] == [1.0, 1.0]


@pytest.mark.parametrize("entry, words", [
    ({"history": [], "hand": ["AA"]}, "'hand' is one hand or class ('AsKs', 'AKs', '*'), "
                                      "got ['AA']"),
    ({"history": [[]], "hand": "AA"}, "a 'history' step is an action or a dealt card (a "
                                      "string or a card number), got []"),
    ({"history": [True], "hand": "AA"}, "a 'history' step is an action or a dealt card"),
    ({"history": 5, "hand": "AA"}, "'history' is a list of steps or a string"),
    ({"history": {}, "hand": "AA"}, "'history' is a list of steps or a string"),
    ({"history": [], "hand": "AA", "player": "0"}, "'player' is a player's index (0, 1, "
                                                   "...), got '0'"),
    ({"history": [], "player": True}, "'player' is a player's index"),
    ({"history": [], "player": -1}, "'player' is a player's index"),
    ({"infoset": {"a": 1}}, "'infoset' is an information set's key (a string), got "
                            "{'a': 1}"),
    ({"infoset": None}, "'infoset' is an information set's key"),
    ({"infoset": 1.5}, "'infoset' is an information set's key"),
])
def test_a_lock_files_malformed_entry_is_named_by_file_and_index(tmp_path, entry, words):
    """A lock file's entry of the wrong shape is one LockError naming the file, the entry
    and the field (2026-12-06: a list as a hand or a history step was an internal
    TypeError, 'unhashable type: list'; a string player an internal ValueError)."""
    from jaxcfr.api.locks import read_lock_file
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"infoset": "0|0|", "strategy": {"bet": 1}},
                                {**entry, "strategy": {"Check": 1}}]))
    with pytest.raises(LockError) as info:
        read_lock_file(path)
    assert str(info.value).startswith(f"entry 1 of the lock file {str(path)!r}: ")
    assert words in str(info.value)


def test_a_lock_file_reads_lists_as_keys_and_skips_a_byte_order_mark(tmp_path):
    from jaxcfr.api.locks import read_lock_file
    path = tmp_path / "lock.json"
    entries = [{"infoset": "0|0|", "strategy": {"bet": 1}},
               {"infoset": ["a", [1, 2]], "player": 1, "strategy": {"pass": 1}},
               {"history": ["Check", 3], "hand": "AA", "strategy": {"Check": 1}}]
    expected = {"0|0|": {"bet": 1}, (1, ("a", (1, 2))): {"pass": 1},
                (("Check", 3), "AA"): {"Check": 1}}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(entries).encode())   # Notepad's BOM
    assert read_lock_file(path) == expected
    path.write_bytes(b"\xff\xfe[\x00")                                   # UTF-16
    with pytest.raises(LockError, match="is not JSON \\(UTF-8 text\\)"):
        read_lock_file(path)
    path.write_text('"AA"')
    with pytest.raises(LockError, match=f"the lock file {str(path)!r} holds a list"):
        read_lock_file(path)
    path.write_text("[" * 100_000 + "]" * 100_000)          # (was an internal RecursionError)
    with pytest.raises(LockError, match="nests lists or objects too deeply"):
        read_lock_file(path)
    # a key twice in one object: JSON keeps the last, so this summed to 1 with 'pass' at 0.5
    path.write_text('[{"infoset": "0|1|", "strategy": {"pass": 0.5, "bet": 0.5, "pass": 0.5}}]')
    with pytest.raises(LockError, match=r"gives the key 'pass' twice in one object \({'pass': "
                                        r"\.\.\., 'bet': \.\.\., 'pass': \.\.\.}\): JSON "
                                        r"would keep the last one alone"):
        read_lock_file(path)


@pytest.mark.parametrize("p", ["1", True])
def test_a_probability_must_be_a_number_not_a_string_or_a_boolean(p):
    """``{"bet": "1"}`` and ``{"bet": true}`` in a lock file are mistakes, not 1
    (2026-12-06: ``float(p)`` took both)."""
    low = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    with pytest.raises(LockError, match=f"must be a number, got {p!r}"):
        resolve_lock(low, {"0|0|": {"bet": p}})
    assert resolve_lock(low, {"0|0|": {"bet": np.float32(1)}}).mask.sum() == 1


def test_the_game_s_lock_errors_name_the_lock_file_or_key(tmp_path, capsys):
    """``jaxcfr solve --lock`` and ``jaxcfr train``'s ``solver.lock``: an information set
    the game lacks is one line naming the option (key) and the file, status 2."""
    from jaxcfr.cli import app
    path = tmp_path / "lock.json"
    path.write_text(json.dumps([{"infoset": "0|9|", "strategy": {"pass": 1}}]))
    assert app.main(["solve", "kuhn_poker", "--iterations", "2", "--lock", str(path),
                     "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"jaxcfr: error: --lock {path}: unknown information set '0|9|'" in err
    config = tmp_path / "c.toml"
    config.write_text('[game]\nname = "kuhn_poker"\n[solver]\niterations = 2\n'
                      'lock = "lock.json"\n[run]\nquiet = true\nplot = false\n')
    assert app.main(["train", str(config), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"jaxcfr: error: solver.lock = {str(path)!r}: unknown information set" in err
    assert "Traceback" not in err
