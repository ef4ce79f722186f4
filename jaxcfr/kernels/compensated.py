"""Compensated summation: a running sum kept as a pair ``(total, error)`` that loses nothing.

Why: a CFR average adds ``weight(t) * s_t`` to a sum that grows like ``t^(gamma + 1)``
while each increment grows like ``t^gamma``, so after ``t`` iterations an increment is
about ``(gamma + 1) / t`` of the sum. In float32 (24-bit mantissa) at ``t = 64,000`` that
is a few hundred units in the last place of the sum: every addition rounds away up to a
fraction of the increment, and because successive increments are alike the rounding is
biased the same way iteration after iteration (Leduc CFR+ in float32 got *worse* after
about 40,000 iterations while float64 kept improving). Rescaling the weights does not
help: the ratio of increment to sum is what matters, not their size.

The pair ``(total, error)`` holds the sum as ``total + error`` with ``|error|`` at most
half an ulp of ``total`` (Knuth's two-sum; Kahan's compensated summation): an increment
is added to the small ``error`` first, where it loses nothing that matters, and the pair
is renormalised with :func:`two_sum`. The sum is then accurate to about one rounding of
the final ``total``, whatever the number of additions. Cost: one more table and a few
elementwise operations per update.

One rule for both update paths: dense tables (:func:`add`) and rows scattered into flat
tables (:func:`scatter_add`, where a position may be listed several times).

Example::

    >>> total, error = add(total, error, increment)      # [I, A, *b] each
    >>> value = total + error                            # or total alone: error is tiny
"""

from __future__ import annotations

import jax

__all__ = ["two_sum", "add", "scatter_add"]


def two_sum(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e == a + b`` exactly (Knuth; any order
    of magnitude of ``a`` and ``b``). Elementwise; XLA does not reassociate floats, so the
    error term survives compilation."""
    s = a + b
    b_part = s - a
    a_part = s - b_part
    return s, (a - a_part) + (b - b_part)


def add(total: jax.Array, error: jax.Array, increment: jax.Array
        ) -> tuple[jax.Array, jax.Array]:
    """The pair ``(total, error)`` plus ``increment`` (all the same shape, or broadcastable
    against ``total``): the increment goes into the error term, then the pair is
    renormalised."""
    return two_sum(total, error + increment)


def scatter_add(total: jax.Array, error: jax.Array, index: jax.Array, increment: jax.Array
                ) -> tuple[jax.Array, jax.Array]:
    """:func:`add` of ``increment`` at positions ``index`` of flat tables ``total``,
    ``error`` ``[K]``; ``index`` and ``increment`` have one shape (e.g. ``[M, A]``), and a
    position listed several times gets the sum of its increments (scattered into the
    error term first, then renormalised once per position: every copy of a position
    computes the same pair). ``index`` may be a tuple over a multi-dimensional view of the
    tables (e.g. ``(row, slice(None), member)`` over ``[I, A, B]``); positions out of range
    (a sample's unused capacity) are dropped."""
    return renormalise_at(total, error.at[index].add(increment, mode="drop"), index)


def renormalise_at(total: jax.Array, error: jax.Array, index) -> tuple[jax.Array, jax.Array]:
    """The pair ``(total, error)`` with each position at ``index`` renormalised
    (:func:`two_sum` of its total and error; out of range: dropped). Idempotent: a
    renormalised pair renormalises to itself, so a position listed again (in this call or
    a later one) keeps its pair."""
    s, e = two_sum(total.at[index].get(mode="clip"), error.at[index].get(mode="clip"))
    return total.at[index].set(s, mode="drop"), error.at[index].set(e, mode="drop")
