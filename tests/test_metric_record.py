"""The metric record's keys live in one place (jaxcfr.solvers.metric_record); every producer
writes exactly them: a solve's records (single and batched), the run loop's, and an
evaluation. (Sampled chance's records: tests/test_chance_sampling.py.)"""

from __future__ import annotations

import jaxcfr
from jaxcfr.solvers.metric_record import ESTIMATE_KEYS, METRIC_KEYS, RECORD_KEYS, TIMING_KEYS


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
