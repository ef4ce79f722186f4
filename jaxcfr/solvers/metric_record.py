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

__all__ = ["METRIC_KEYS", "TIMING_KEYS", "RECORD_KEYS", "ESTIMATE_KEYS"]

#: The keys of an evaluation (:func:`jaxcfr.solvers.analytics.evaluate`'s result).
METRIC_KEYS = ("values", "best_response_values", "nash_conv", "exploitability", "nash_gap",
               "metric", "metric_name")
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
