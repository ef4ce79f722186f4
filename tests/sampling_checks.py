"""The statistical check the Monte Carlo tests share (tests/test_mccfr.py, the traversals
one by one; tests/test_counts.py, as counts): a sampled estimator's mean against the
exact value, within a stated number of standard errors."""

from __future__ import annotations

import numpy as np

#: The mean of ``draws`` estimates must be within Z_TOLERANCE standard errors (plus ATOL) of
#: the exact regret at every (row, action). With ~100-1000 entries, |z| > 5 has probability
#: below 1e-3 for an unbiased estimator (all random numbers are seeded: the tests are
#: deterministic); a bias of 5 standard errors shows.
Z_TOLERANCE, ATOL = 5.0, 1e-3


def assert_unbiased(samples: np.ndarray, exact: np.ndarray) -> None:
    """``samples`` ``[draws, ...]`` (float64) estimate ``exact`` ``[...]``: their mean is
    within :data:`Z_TOLERANCE` standard errors (plus :data:`ATOL`) of it everywhere; the
    oracle is not trivially zero and the estimate does vary."""
    draws = samples.shape[0]
    mean = samples.mean(axis=0)
    stderr = samples.std(axis=0) / np.sqrt(draws)
    error = np.abs(mean - exact)
    bad = error > Z_TOLERANCE * stderr + ATOL
    assert not bad.any(), (f"{bad.sum()} of {bad.size} entries biased: max error "
                           f"{error.max():.4g}, stderr there {stderr[bad].max():.4g}")
    assert np.abs(exact).max() > 0.1                 # the oracle is not trivially zero
    assert samples.std(axis=0).max() > 0             # ... and the estimate does vary
