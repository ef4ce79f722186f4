"""Test-session setup: the cache of lowered games lives in a temporary directory.

The command line and ``jaxcfr.train`` use the cache by default; the tests (and the
subprocesses they start, which inherit the environment) must neither read a user's
cache nor write into it.
"""

from __future__ import annotations

import os
import tempfile

_CACHE = tempfile.TemporaryDirectory(prefix="jaxcfr-test-cache-")
os.environ["JAXCFR_LOWERING_CACHE_DIR"] = _CACHE.name
