"""Information abstraction: Bucketed, the bucket contract, the imperfect-recall opt-in, lifting.

Oracles: Leduc's suit isomorphism is lossless, so a profile trained on the buckets and
lifted must equal full-game training (iterate for iterate while the runs agree, and in
exploitability to solver precision) with exactly half the rows; the bucket rules name
the two information sets that break them; the perfect-recall check refuses every game
without perfect recall unless a bucketing declares it; separate runs for every member
of a batch. Small games (Leduc: 9,457 histories; 4 ranks, lowered only: 26,049) in
float64, solved with one set of options so that the tests share compiled programs.
"""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import pytest

import jaxcfr
from jaxcfr import Abstracted, Bucketed, GameError, Identity, bucket_by
from jaxcfr.cli.app import main
from jaxcfr.game.bucketing import Composite, imperfect_recall_declared
from jaxcfr.runs import ConfigError, config_from_dict
from jaxcfr_games.leduc import RankBuckets, SuitIsomorphism

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "efg"
F64 = "float64"
LEDUC = "leduc_poker"
SMALL = "leduc_poker(ranks=4)"


def _leduc():
    return jaxcfr.load_game(LEDUC)


# -- the wrapper and the bucket contract ---------------------------------------------------------
def test_the_wrapper_forwards_everything_but_the_key():
    game = _leduc()
    wrapped = Bucketed(_leduc(), SuitIsomorphism())      # it steps the state it wraps
    assert wrapped.num_players == 2 and wrapped.is_chance()
    assert wrapped.chance_outcomes() == game.chance_outcomes()
    for a in (1, 2):
        wrapped.step(a)
        game.step(a)
    assert wrapped.legal_actions() == game.legal_actions() and wrapped.player_to_act() == 0
    assert game.infoset_key(0) == "0|Jh|" and wrapped.infoset_key(0) == "0|Ja|"
    copy = wrapped.clone()
    copy.step("call")
    assert wrapped.legal_actions() == game.legal_actions()           # the clone is independent
    assert wrapped.nash_value() is None and wrapped.tree_size() == game.tree_size()
    assert wrapped.name == "LeducPoker | suit_isomorphism"
    jaxcfr.validate(Bucketed(_leduc(), SuitIsomorphism()))
    assert isinstance(SuitIsomorphism(), jaxcfr.Bucketing)
    with pytest.raises(TypeError, match="bucket"):
        Bucketed(_leduc(), Identity())


def _bets_by_length(player, key):
    """Round-1 bets forgotten but for their number: player 1 after a check ("c") and
    after a raise ("r", facing a bet: it may fold) share a bucket."""
    parts = key.split("|")
    parts[2] = str(len(parts[2]))
    return "|".join(parts)


def test_a_bucket_with_different_legal_actions_names_both_information_sets():
    merge = bucket_by(_bets_by_length)
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Bucketed(_leduc(), merge))
    e = info.value
    assert e.rule == "bucket-actions" and e.history == (0, 1, "raise")
    assert "player 1's information sets '1|Jh|c' and '1|Jh|r'" in str(e)
    assert "bucket '1|Jh|1'" in str(e) and "['call', 'raise'] and ['fold', 'call', 'raise']" \
        in str(e)
    with pytest.raises(GameError, match="bucket-actions"):      # the probe sees it too
        jaxcfr.validate(Bucketed(_leduc(), merge))


def test_a_bucket_must_be_hashable():
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Bucketed(_leduc(), bucket_by(lambda player, key: [key])))
    assert info.value.rule == "bucket-key" and "not hashable" in str(info.value)
    assert info.value.history == (0, 1)


# -- lossless: Leduc's suit isomorphism ----------------------------------------------------------
ITERATIONS = 200


@pytest.fixture(scope="module")
def isomorphic():
    """``(full, its solve, bucketed, its solve)``: Leduc and its suit isomorphism, CFR+."""
    full = jaxcfr.lower(_leduc(), name=LEDUC)
    small = jaxcfr.lower(Bucketed(_leduc(), SuitIsomorphism()))
    return (full, jaxcfr.solve(full, "cfr+", ITERATIONS, eval_every=50, precision=F64),
            small, jaxcfr.solve(small, "cfr+", ITERATIONS, eval_every=50, precision=F64))


def test_suit_isomorphism_halves_the_rows_and_is_lossless(isomorphic):
    full, trained, small, bucketed = isomorphic
    assert small.num_nodes == full.num_nodes == 9457
    assert small.infosets_per_player == (234, 234) and full.infosets_per_player == (468, 468)
    # inside the buckets, record for record: equal while the iterates agree (50 iterations),
    # then to solver precision (CFR+ amplifies the rounding of sums taken in another order)
    got = [r["exploitability"] for r in bucketed.metrics]
    want = [r["exploitability"] for r in trained.metrics]
    assert got[0] == pytest.approx(want[0], rel=1e-9)
    assert got == pytest.approx(want, rel=1e-3)
    # lifted, as unexploitable in the full game as full-game training
    lifted = jaxcfr.lift(bucketed.profile, full, bucketing="suit_isomorphism")
    assert lifted.keys == full.infoset_keys
    metrics = jaxcfr.evaluate_profile(lifted, full, precision=F64)
    assert metrics["exploitability"] == pytest.approx(got[-1], rel=1e-9)
    assert metrics["exploitability"] == pytest.approx(want[-1], rel=1e-3)


def test_lifting_a_bucketed_profile(isomorphic):
    full, _, _, bucketed = isomorphic
    profile = bucketed.profile
    lifted = jaxcfr.lift(profile, LEDUC, bucketing=SuitIsomorphism())
    for (player, key), acts in zip(full.infoset_keys, full.infoset_actions):
        bucket = SuitIsomorphism().bucket(player, key)
        assert lifted.policy(player, key) == pytest.approx(profile.policy(player, bucket))
    same = jaxcfr.lift(profile, full, abstraction="suit_isomorphism")   # the same, by string
    np.testing.assert_array_equal(same.probs, lifted.probs)
    with pytest.raises(ValueError, match="bucketing="):
        jaxcfr.lift(profile, LEDUC)
    with pytest.raises(ValueError, match="two bucketings"):
        jaxcfr.lift(profile, LEDUC, abstraction="suit_isomorphism",
                    bucketing="suit_isomorphism")
    with pytest.raises(ValueError, match="does not have"):
        jaxcfr.lift(profile, "kuhn_poker", bucketing="suit_isomorphism")
    with pytest.raises(ValueError, match="full game"):
        jaxcfr.lift(profile, Bucketed(_leduc(), SuitIsomorphism()))


# -- the imperfect-recall opt-in -----------------------------------------------------------------
def test_imperfect_recall_passes_only_when_declared():
    forgetful = RankBuckets(2, ranks=4, recall=False)
    assert forgetful.imperfect_recall
    undeclared = bucket_by(forgetful.bucket)                   # the same buckets, undeclared
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Bucketed(jaxcfr.load_game(SMALL), undeclared))
    assert info.value.rule == "perfect-recall" and "imperfect_recall=True" in str(info.value)
    declared = [Bucketed(jaxcfr.load_game(SMALL), undeclared, imperfect_recall=True),
                Bucketed(jaxcfr.load_game(SMALL), forgetful),
                Bucketed(jaxcfr.load_game(SMALL), bucket_by(forgetful.bucket,
                                                            imperfect_recall=True))]
    sizes = {jaxcfr.lower(g).infosets_per_player for g in declared}
    assert sizes == {(36, 36)}
    # serial and parallel lowering agree (a declared game is walked in one process)
    assert jaxcfr.lower(declared[0], workers=2).infosets_per_player == (36, 36)
    # the same buckets with recall need no declaration
    assert jaxcfr.lower(Bucketed(jaxcfr.load_game(SMALL), RankBuckets(2, ranks=4))
                        ).infosets_per_player == (66, 66)


def test_imperfect_recall_is_stepped_by_the_node_passes():
    # The sequence form reads a row's own sequence at one member: under imperfect recall it
    # would compute other values (forced here: 0.98 apart after 20 iterations).
    lowered = jaxcfr.lower(Bucketed(_leduc(), RankBuckets(2, ranks=3, recall=False)))
    assert not lowered.perfect_recall and not jaxcfr.stack([lowered, lowered]).perfect_recall
    assert jaxcfr.lower(Bucketed(_leduc(), RankBuckets(2, ranks=3))).perfect_recall

    def run(game, sequence_form):
        runner = jaxcfr.Runner(game, jaxcfr.make_solver("cfr+"), precision=F64,
                               sequence_form=sequence_form)
        return np.asarray(runner.profile(runner.advance(runner.init(), 20)))
    nodes = run(lowered, False)
    np.testing.assert_array_equal(run(lowered, True), nodes)       # the default: node passes
    wrong = run(dataclasses.replace(lowered, perfect_recall=True), True)
    assert np.abs(wrong - nodes).max() > 0.1
    # ... and evaluated by them: no sequence form, the node passes' best response
    from jaxcfr.solvers.analytics import device_tensors
    assert not hasattr(device_tensors(lowered, np.float64), "sequence")
    assert hasattr(device_tensors(dataclasses.replace(lowered, perfect_recall=True),
                                  np.float64), "sequence")
    ev = jaxcfr.evaluate(lowered, nodes, dtype=F64)
    same = jaxcfr.evaluate(lowered, nodes, dtype=F64, sequence_form=False)
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_array_equal(ev[key], same[key], err_msg=key)


def test_the_opt_in_is_the_only_way_past_the_perfect_recall_check():
    myerson = jaxcfr.efg.load(FIXTURES / "myerson.efg")
    same = bucket_by(lambda player, key: key)
    refused = [myerson, Abstracted(myerson, Identity()), Bucketed(myerson, same),
               Abstracted(Bucketed(myerson, same), Identity())]
    myerson.imperfect_recall = True       # an attribute of the game itself is no declaration
    for game in refused:
        assert not imperfect_recall_declared(game)
        with pytest.raises(GameError) as info:
            jaxcfr.lower(game)
        assert info.value.rule == "perfect-recall", game
    for game in (Bucketed(myerson, same, imperfect_recall=True),
                 Abstracted(Bucketed(myerson, same, imperfect_recall=True), Identity())):
        assert imperfect_recall_declared(game)
        jaxcfr.lower(game)                                      # accepted
    # absent-mindedness is refused even so
    driver = jaxcfr.efg.load(FIXTURES / "gilboa1997_fig1_absent_minded_driver.efg")
    with pytest.raises(GameError) as info:
        jaxcfr.lower(Bucketed(driver, same, imperfect_recall=True))
    assert info.value.rule == "absent-minded"


def test_a_batch_of_bucketings_lossless_and_lossy_equals_separate_runs(isomorphic):
    labels = ["suit_isomorphism", "rank_buckets(buckets=2, ranks=3)"]
    batch = jaxcfr.train_abstracted(LEDUC, bucketing=labels, iterations=ITERATIONS,
                                    eval_every=50, precision=F64)
    forgetful = jaxcfr.train_abstracted(LEDUC, bucketing="rank_buckets(buckets=2, ranks=3, "
                                        "recall=False)", iterations=ITERATIONS,
                                        eval_every=50, precision=F64)
    assert batch[0].solve is batch[1].solve and batch[0].solve.lowered.batch_size == 2
    rows = [r.row for r in batch + [forgetful]]
    assert [r["abstraction"] for r in rows[:2]] == labels
    assert [r["infosets"] for r in rows] == [468, 102, 72] and rows[0]["full_infosets"] == 936
    assert [r["imperfect_recall"] for r in rows] == [False, False, True]
    full = isomorphic[1].final["exploitability"]
    assert batch[0].exploitability == pytest.approx(full, rel=1e-3)          # lossless
    for r in batch + [forgetful]:
        assert r.unreached == 0 and r.translation_exploitability is None
        assert len(r.profile) == 936
    assert batch[1].exploitability > 100 * full and forgetful.exploitability > 100 * full
    table = jaxcfr.format_table(batch + [forgetful])
    assert "n/a" in table and "*" in table                     # no translation; approximate
    # a member of the batch is its own separate run (this one shares the fixture's program)
    alone = jaxcfr.train_abstracted(LEDUC, bucketing=labels[0], iterations=ITERATIONS,
                                    eval_every=50, precision=F64)
    np.testing.assert_allclose(batch[0].profile.probs, alone.profile.probs, atol=1e-9)
    assert batch[0].exploitability == pytest.approx(alone.exploitability, rel=1e-9)


# -- strings, combinations, configs, the command line --------------------------------------------
def test_bucketing_strings_and_combinations():
    assert isinstance(jaxcfr.load_abstraction("suit_isomorphism"), SuitIsomorphism)
    ranks = jaxcfr.load_abstraction("rank_buckets(buckets=4)")
    assert (ranks.buckets, ranks.ranks, ranks.recall) == (4, 13, True)
    assert ranks.bucket(0, "0|Ah|rc|As|r") == "0|b3|rc|s3|r"
    by = jaxcfr.load_abstraction("bucket_by(function='operator:add', imperfect_recall=True)")
    assert by.bucket(1, 2) == 3 and by.imperfect_recall
    both = jaxcfr.load_abstraction("bet_menu(fractions=[1.0]) + suit_isomorphism")
    assert isinstance(both, Composite) and callable(both.translate)
    assert repr(both) == "BetMenu(fractions=(1.0,), all_in=True) + suit_isomorphism"
    for bad, match in (("identity + bet_menu()", "one action abstraction and one bucketing"),
                       ("rank_buckets(buckets=0)", "buckets must be"),
                       # a word is truthy: 'false' would have kept the recall silently
                       ("rank_buckets(recall='false')", "recall must be True or False, got "
                                                        "'false'"),
                       ("bet_menu(all_in='no')", "all_in must be True or False, got 'no'"),
                       ("bucket_by(function='nope:f')", "cannot import"),
                       ("suit_isomorphism + ", "parse")):
        with pytest.raises(GameError, match=match) as info:
            jaxcfr.load_abstraction(bad)
        assert info.value.rule == "abstraction-string"
    game = jaxcfr.load_game("nolimit_leduc(stack=4)")
    lowered = jaxcfr.lower(game, abstraction=both)              # Bucketed(Abstracted(...))
    alone = jaxcfr.lower(Abstracted(game, both.action_abstraction))
    assert lowered.num_nodes == alone.num_nodes and lowered.num_rows - 1 == \
        (alone.num_rows - 1) // 2


def test_config_bucketing_key(tmp_path):
    one = config_from_dict({"game": {"name": LEDUC, "bucketing": "suit_isomorphism"}})
    assert one.game.members == ((LEDUC, "suit_isomorphism"),) and one.game.abstracted
    combos = config_from_dict({"game": {"name": "nolimit_leduc(stack=4)",
                                        "abstraction": ["bet_menu(fractions=[1.0])",
                                                        "bet_menu(fractions=[])"],
                                        "bucketing": "suit_isomorphism"}})
    assert [m for _, m in combos.game.members] == [
        "bet_menu(fractions=[1.0]) + suit_isomorphism", "bet_menu(fractions=[]) + "
        "suit_isomorphism"] and combos.game.batched
    for game, match in (({"name": LEDUC, "bucketing": "identity"}, "not a bucketing"),
                        ({"name": LEDUC, "bucketing": "nope"}, "unknown abstraction"),
                        ({"names": [LEDUC, LEDUC], "bucketing": ["suit_isomorphism"]},
                         "one game.name"),
                        ({"name": LEDUC, "abstraction": ["identity"],
                          "bucketing": ["suit_isomorphism"]}, "not both")):
        with pytest.raises(ConfigError, match=f"game.bucketing: .*{match}"):
            config_from_dict({"game": game})
    config = config_from_dict({"game": {"name": LEDUC, "bucketing": ["suit_isomorphism"]},
                               "solver": {"iterations": ITERATIONS},
                               "run": {"eval_every": 50, "plot": False, "precision": F64}})
    result = jaxcfr.train(config, out_dir=str(tmp_path / "run"), progress=None,
                          handle_sigint=False, log=lambda msg: None)
    row, = result.abstraction
    alone = jaxcfr.train_abstracted(LEDUC, bucketing="suit_isomorphism",
                                    iterations=ITERATIONS, eval_every=50, precision=F64)
    assert row["infosets"] == 468 and row["full_game_metric"] == pytest.approx(
        alone.exploitability, rel=1e-9)
    lifted = jaxcfr.Profile.load(result.run_dir / "lifted.npz")
    assert len(lifted) == 936 and lifted.game == LEDUC


def test_the_abstract_command(capsys):
    assert main(["abstract", LEDUC, "--bucketing", "suit_isomorphism", "--iterations", "20",
                 "--precision", F64, "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out)
    assert out["rows"][0]["infosets"] == 468 and out["rows"][0]["translation_metric"] is None
    assert main(["abstract", LEDUC, "--bucketing", "identity"]) == 2
    assert "is not a bucketing" in capsys.readouterr().err
    assert main(["abstract", LEDUC]) == 2
    assert "--abstraction or --bucketing" in capsys.readouterr().err


def test_training_a_bucketing_tells_its_phases():
    """Issue 33 item 8: bucketing a game is lowering each member with its buckets; the
    status hears the full game's lowering, each member's, the solve's compile and the
    lifting of every member, with its count (on a terminal: bars)."""
    import io
    from jaxcfr.runs.progress import Status
    stream = io.StringIO()
    status = Status(stream, tty=False, every=0.0)
    seen = []
    results = jaxcfr.train_abstracted(
        LEDUC, bucketing=["suit_isomorphism", "rank_buckets(buckets=2, ranks=3, suits=2)"],
        iterations=20, status=status, imperfect_recall=True,
        report=jaxcfr.Report(progress=lambda it, rec: seen.append(it), status=status))
    lines = stream.getvalue().splitlines()
    assert any(line.startswith(f"lowering {LEDUC} ...") for line in lines)
    for label in ("suit_isomorphism", "rank_buckets(buckets=2, ranks=3, suits=2)"):
        assert any(line.startswith(f"lowering {LEDUC} | {label} ...") for line in lines)
    assert "lifting to the full game and evaluating: 0/2" in lines
    assert "lifting to the full game and evaluating: 2/2" in lines
    assert seen and seen[-1] == 20
    assert len(results) == 2
