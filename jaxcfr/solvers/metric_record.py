"""The metric record's keys, in one place.

Every evaluation of a run becomes one record with the keys :data:`RECORD_KEYS`, in that
order: a line of ``metrics.jsonl``, an entry of ``SolveResult.metrics``, the argument of a
progress callback, the ``final`` object of the ``--json`` outputs
(:func:`jaxcfr.engine.loop.make_record` writes it; ``docs/runs.md``, "Metric records",
says what each key means). Its metrics are those of an evaluation, :data:`METRIC_KEYS`
(what :func:`jaxcfr.evaluate` returns, and what a sampled-chance run estimates in their
place); :data:`TIMING_KEYS` are measured, not computed (they differ from run to run);
under sampled chance its ``estimates`` entry is the host value estimates' record, with the
keys :data:`ESTIMATE_KEYS` (:meth:`jaxcfr.profiles.value_estimates.ProfileEstimates.record`).
"""

from typing import Any

import numpy as np

__all__ = ["METRIC_KEYS", "TIMING_KEYS", "RECORD_KEYS", "ESTIMATE_KEYS", "metrics"]

#: The keys of an evaluation (:func:`jaxcfr.solvers.analytics.evaluate`'s result), in
#: order (:func:`metrics` writes them).
METRIC_KEYS = ("values", "best_response_values", "nash_conv", "exploitability", "nash_gap",
               "metric_name", "metric")
#: The record's keys that are measured, not computed.
TIMING_KEYS = ("iterations_per_second", "compile_seconds", "wall_seconds")
#: The keys of every metric record, in order.
RECORD_KEYS = ("iteration", "metric", "metric_name", "exploitability", "nash_conv", "nash_gap",
               "values", "best_response_values", "members") + TIMING_KEYS + ("estimates",)
#: The keys of a record's ``estimates`` entry (plain JSON values; ``"estimate": true``).
ESTIMATE_KEYS = ("values", "values_interval", "values_stderr", "gain_lower_bound",
                 "gain_interval", "gain_stderr", "gain_in_sample", "nash_conv_lower_bound",
                 "nash_conv_interval", "exploitability_lower_bound", "exploitability_interval",
                 "samples", "train_samples", "confidence", "seed", "method", "estimate")


def metrics(values: Any, best_response_values: Any, nash_conv: Any, exploitability: Any = None,
            nash_gap: Any = None, *, players_axis: int = 0) -> dict[str, Any]:
    """An evaluation's metrics, the keys :data:`METRIC_KEYS` in order, with the tightest
    metric: the mean of the two players' gaps to the known value ``nash_gap`` (named
    ``exploitability``), else ``exploitability``, else ``nash_conv``.

    Args:
      values, best_response_values: ``[(B,) P, *b]`` each player's value and best-response
        value (host arrays).
      nash_conv: ``[(B,) *b]``.
      exploitability: NashConv / 2 for a two-player constant-sum game, else ``None``.
      nash_gap: ``[(B,) 2, *b]`` each best response's value minus the game's equilibrium
        value, else ``None``.
      players_axis: the axis ``P`` of ``nash_gap`` (1 for a stack).
    """
    if nash_gap is not None:
        metric_name = "exploitability"
        metric = (np.take(nash_gap, 0, axis=players_axis) / 2
                  + np.take(nash_gap, 1, axis=players_axis) / 2)
    elif exploitability is not None:
        metric_name, metric = "exploitability", exploitability
    else:
        metric_name, metric = "nash_conv", nash_conv
    given = {"values": values, "best_response_values": best_response_values,
             "nash_conv": nash_conv, "exploitability": exploitability, "nash_gap": nash_gap,
             "metric_name": metric_name, "metric": metric}
    return {key: given[key] for key in METRIC_KEYS}
