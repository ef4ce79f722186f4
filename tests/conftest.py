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

# JAX's persistent compilation cache (on by default in jaxcfr.Runner): off in the test
# process, whose compile-counting tests (test_compile_once) must see every compile, and a
# temporary directory, never the user's ~/.cache/jaxcfr/xla, for the subprocesses of
# tests/test_compilation_cache.py, which turn it on.
_XLA_CACHE = tempfile.TemporaryDirectory(prefix="jaxcfr-test-xla-cache-")
os.environ["JAXCFR_COMPILATION_CACHE_DIR"] = _XLA_CACHE.name
os.environ["JAXCFR_NO_COMPILATION_CACHE"] = "1"
