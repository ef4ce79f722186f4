"""JSON-safe values for what jaxcfr prints and writes (metrics, ``--json`` output)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["jsonable"]


def jsonable(x: Any) -> Any:
    """NumPy scalars / arrays to JSON values; non-finite floats to ``None``."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (np.integer, int)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x
