"""Test-session setup: the cache of lowered games lives in a temporary directory.

The command line and ``jaxcfr.train`` use the cache by default; the tests (and the
subprocesses they start, which inherit the environment) must neither read a user's
cache nor write into it.
"""

from __future__ import annotations

import os
import sys
import tempfile

import pytest

_CACHE = tempfile.TemporaryDirectory(prefix="jaxcfr-test-cache-")
os.environ["JAXCFR_LOWERING_CACHE_DIR"] = _CACHE.name

# JAX's persistent compilation cache (on by default in jaxcfr.Runner): off in the test
# process, whose compile-counting tests (test_compile_once) must see every compile, and a
# temporary directory, never the user's ~/.cache/jaxcfr/xla, for the subprocesses of
# tests/test_compilation_cache.py, which turn it on.
_XLA_CACHE = tempfile.TemporaryDirectory(prefix="jaxcfr-test-xla-cache-")
os.environ["JAXCFR_COMPILATION_CACHE_DIR"] = _XLA_CACHE.name
os.environ["JAXCFR_NO_COMPILATION_CACHE"] = "1"


_SLOW_LIST = os.path.join(os.path.dirname(__file__), "slow.txt")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test file's last test (and its fixtures' teardown): let go of every program
    it compiled (``jax.clear_caches()``, which forgets jaxcfr's kept programs too). Each
    loaded executable holds memory maps of its code (a dozen or so on a CPU); one process
    running the whole slow set kept thousands and reached the kernel's limit
    (``vm.max_map_count``, 65530), where XLA's next compile crashed (SIGSEGV,
    docs/subgames.md "A crash found: memory maps"). Files share no compiled program on
    purpose: under ``-n auto --dist loadfile`` each runs in whichever worker takes it."""
    yield
    if nextitem is not None and nextitem.path == item.path and _maps() < MAPS_CLEARED_AT:
        return
    _forget_programs()


#: Inside a file, its programs are let go too once the process holds this many memory maps
#: (the kernel's limit is 65,530): a file of many heavy cases (the public blocks' slow
#: set: about 1,100 maps a case) reached the limit by itself and crashed in XLA's compile.
MAPS_CLEARED_AT = 30_000


def _maps() -> int:
    """How many memory maps this process holds (0 where /proc does not say)."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return 0


def _forget_programs() -> None:
    """Let go of every compiled program (JAX's caches, jaxcfr's kept programs, the test
    helpers' kept runners), after any evaluation compile still running has ended."""
    if "jax" in sys.modules:
        import gc
        import threading
        import jax
        for thread in threading.enumerate():      # (a runner not closed: its compile ends)
            if thread.name == "jaxcfr-compile-evaluation":
                thread.join()
        jax.clear_caches()
        for name in ("cfr_cases", "tests.cfr_cases"):     # its runners hold programs too:
            cases = sys.modules.get(name)                  # one kept into the next file
            if cases is not None:                          # skips that file's compile,
                cases._runner.cache_clear()                # which its tests count
        gc.collect()


def pytest_collection_modifyitems(config, items):
    """Mark the tests listed in tests/slow.txt ``slow`` (the default run leaves them out)."""
    with open(_SLOW_LIST) as f:
        listed = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
    _check_listed(config, items, listed)


def _check_listed(config, items, listed) -> None:
    """Fail the run when tests/slow.txt names a test that its file no longer has (a
    renamed test, or a new parameter in its id): the heavy case it meant to leave out
    would run in the default set unnoticed. Checked for the files collected whole (not
    when the command line names single tests)."""
    if any("::" in str(arg) for arg in config.args):
        return
    ids = {item.nodeid for item in items}
    files = {nodeid.split("::")[0] for nodeid in ids}
    stale = sorted(n for n in listed if n.split("::")[0] in files and n not in ids)
    if stale:
        raise pytest.UsageError("tests/slow.txt names tests that do not exist (renamed, or "
                                "their parameters changed): " + ", ".join(stale))


# ``JAXCFR_TEST_CPU=FILE``: append each test's CPU seconds (this process's threads and the
# subprocesses it waited for; module fixtures count to the first test that uses them) to
# FILE as ``seconds<TAB>node id`` lines: which tests to mark slow, measured on a shared
# machine where wall-clock durations mislead.
if os.environ.get("JAXCFR_TEST_CPU"):
    import resource
    import time

    def _cpu() -> float:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        start = _cpu()
        yield
        with open(os.environ["JAXCFR_TEST_CPU"], "a") as out:
            out.write(f"{_cpu() - start:.3f}\t{item.nodeid}\n")
