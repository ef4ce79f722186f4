"""The metric record's keys live in one place (jaxcfr.solvers.metric_record); every producer
writes exactly them: a solve's records (single and batched, a public tree's too), the run
loop's, and an evaluation (the lowered game's and the public tree's, keys in order). (Sampled
chance's records: tests/test_chance_sampling.py.)"""

from __future__ import annotations

import numpy as np

import jaxcfr

from jaxcfr.solvers.metric_record import (ESTIMATE_KEYS, METRIC_KEYS, RECORD_KEYS, TIMING_KEYS,
                                          metrics)


def test_the_key_lists_fit_together():
    assert len(set(RECORD_KEYS)) == len(RECORD_KEYS)
    assert set(METRIC_KEYS) <= set(RECORD_KEYS) and set(TIMING_KEYS) <= set(RECORD_KEYS)
    assert "estimates" in RECORD_KEYS and "estimate" in ESTIMATE_KEYS


def test_a_solves_records_have_the_keys_in_order():
    result = jaxcfr.solve("kuhn_poker", "cfr+", 4, eval_every=2)
    assert len(result.metrics) == 2
    for record in result.metrics:
        assert tuple(record) == RECORD_KEYS
    assert result.final["members"] is None and result.final["estimates"] is None
    batched = jaxcfr.solve("kuhn_poker", "cfr+", 2, seed=[0, 1])
    assert tuple(batched.final) == RECORD_KEYS and len(batched.final["members"]) == 2


def test_an_evaluation_has_the_metric_keys():
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    result = jaxcfr.solve(lowered, "cfr", 2)
    assert set(jaxcfr.evaluate(lowered, result.average_strategy)) == set(METRIC_KEYS)


def test_evaluate_writes_the_metric_keys_in_order_with_the_tightest_metric():
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))      # states its value: the gap
    ev = jaxcfr.evaluate(lowered, jaxcfr.solve(lowered, "cfr", 2).average_strategy)
    assert tuple(ev) == METRIC_KEYS and ev["metric_name"] == "exploitability"
    assert ev["metric"] == ev["nash_gap"][0] / 2 + ev["nash_gap"][1] / 2


def test_a_public_trees_records_and_evaluation_have_the_keys_in_order():
    from jaxcfr_games.public_kuhn import PublicKuhn
    result = jaxcfr.solve_public(PublicKuhn(), "cfr+", 4, eval_every=2, chunk=2)
    assert len(result.metrics) == 2
    for record in result.metrics:
        assert tuple(record) == RECORD_KEYS
    lowered = jaxcfr.lower_public(PublicKuhn())
    ev = jaxcfr.evaluate_public(lowered, result.average_strategy)
    assert tuple(ev) == METRIC_KEYS
    # the run's last record and the host evaluation are one evaluation of one profile
    assert ev["metric_name"] == result.final["metric_name"]
    assert abs(float(ev["metric"]) - result.final["metric"]) < 1e-5
    assert abs(float(ev["nash_conv"]) - result.final["nash_conv"]) < 1e-5


def test_metrics_picks_the_tightest_known_metric():
    values, br = np.array([0.0, 0.0]), np.array([0.5, 0.25])
    conv = br.sum()
    assert metrics(values, br, conv)["metric_name"] == "nash_conv"
    assert metrics(values, br, conv)["metric"] == 0.75
    assert metrics(values, br, conv, conv / 2)["metric"] == 0.375
    gap = br - np.array([0.25, -0.25])                              # a known value (1/4, -1/4)
    both = metrics(values, br, conv, conv / 2, gap)
    assert tuple(both) == METRIC_KEYS
    assert (both["metric_name"], both["metric"]) == ("exploitability", 0.375)
    stacked = metrics(values[None], br[None], conv[None], None, np.array([[0.5, 0.0]]),
                      players_axis=1)
    assert stacked["metric"].tolist() == [0.25]
