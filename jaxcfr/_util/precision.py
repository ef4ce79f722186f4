"""Floating-point precision of a run: one name, one dtype, one scope.

A run asks for ``"float32"`` (the default) or ``"float64"``. The dtype goes to every
array the run makes, and every device call of the run happens inside
:func:`scope`, which sets JAX's 64-bit mode for that call only (``jax.enable_x64``
as a context manager): a float64 run never changes what a later float32 run in the
same process computes, and a float32 run inside a process started with
``JAX_ENABLE_X64=1`` computes exactly what it computes in a fresh one.

Example::

    >>> from jaxcfr import precision
    >>> dtype = precision.dtype_of("float64")
    >>> with precision.scope(dtype):
    ...     x = jax.numpy.zeros(3, dtype)          # float64 here, and only here
"""

from __future__ import annotations

import contextlib

import numpy as np

__all__ = ["PRECISIONS", "dtype_of", "scope"]

#: Precision names and their dtypes.
PRECISIONS = {"float32": np.dtype(np.float32), "float64": np.dtype(np.float64)}


def dtype_of(precision) -> np.dtype:
    """The dtype of a precision name (``"float32"`` / ``"float64"``) or of a float dtype."""
    if isinstance(precision, str):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, "
                             f"got {precision!r}")
        return PRECISIONS[precision]
    dtype = np.dtype(precision)
    if dtype not in PRECISIONS.values():
        raise ValueError(f"precision must be float32 or float64, got {dtype}")
    return dtype


def scope(dtype) -> contextlib.AbstractContextManager:
    """Context in which JAX's 64-bit mode is on exactly when ``dtype`` is float64."""
    import jax                      # here: the command line reads PRECISIONS before JAX
    return jax.enable_x64(dtype_of(dtype) == np.float64)
