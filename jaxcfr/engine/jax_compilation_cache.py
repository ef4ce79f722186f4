"""JAX's persistent compilation cache, on by default, in a directory of jaxcfr's own.

A compiled chunk or evaluation is written to disk the first time, so that a later
process (the same game's shapes, the same solver) loads it instead of compiling again:
on Leduc that is most of a short solve's wall time (``docs/benchmarks.md``, cold start).
:class:`jaxcfr.Runner` (so ``jaxcfr.solve``, ``solve_with``, ``jaxcfr.train``) and the
command line turn it on; nothing else in the process changes (only JAX's own cache
settings, which JAX keeps per process). Beside JAX's entries, in ``jaxcfr-programs/``,
jaxcfr keeps its chunk, evaluation, profile and finiteness check under a key made
before tracing (:mod:`jaxcfr._util.program_cache`), so that a later process neither traces
nor lowers them either (Leduc: a warm solve's 0.3 s); they follow this cache: on where
it is on, off where it is off.

Trust: the directory holds compiled machine code, which runs when a program does (JAX's
entries and jaxcfr's alike): keep it private, as the default is (created 0700; jaxcfr's
entries 0600); a cache shared with or copied from someone is trusted with your account.
Reading an entry runs no Python code: jaxcfr's are read by a restricted unpickler and
refused (removed, logged, compiled again) when hostile, cut, foreign or writable by
others (:mod:`jaxcfr._util.program_cache`, "Trust").

Where: ``$JAXCFR_COMPILATION_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxcfr/xla``, else
``~/.cache/jaxcfr/xla``. A cache directory the process already gave JAX
(``jax.config.update("jax_compilation_cache_dir", ...)``, ``JAX_COMPILATION_CACHE_DIR``)
is kept.

Off: ``JAXCFR_NO_COMPILATION_CACHE=1`` (or ``JAXCFR_NO_CACHE=1``, which also turns off
the cache of lowered games), or ``compilation_cache=False`` (``jaxcfr.solve(...,
compilation_cache=False)``, ``Runner(..., compilation_cache=False)``), which means "this
call does not turn it on": JAX reads its cache setting once per process, so a cache an
earlier call turned on stays on for the process (the environment variables are the way
to keep a whole process off it).

Example::

    >>> from jaxcfr.engine.jax_compilation_cache import enable_compilation_cache
    >>> enable_compilation_cache()          # '/home/me/.cache/jaxcfr/xla'
"""

from __future__ import annotations

import os

import jax

__all__ = ["enable_compilation_cache", "use_compilation_cache", "default_cache_dir",
           "CACHE_DIR_ENV", "OFF_ENV", "MIN_COMPILE_SECONDS"]

#: The environment variable naming the cache directory.
CACHE_DIR_ENV = "JAXCFR_COMPILATION_CACHE_DIR"
#: ``=1`` turns the compilation cache off for the whole process.
OFF_ENV = "JAXCFR_NO_COMPILATION_CACHE"
#: Programs that compile faster than this are not written by JAX. 0: every one, also the
#: small ones (jaxcfr's own are kept by :mod:`jaxcfr._util.program_cache` whatever their time).
MIN_COMPILE_SECONDS = 0.0


def default_cache_dir() -> str:
    """``$JAXCFR_COMPILATION_CACHE_DIR``, else ``$XDG_CACHE_HOME/jaxcfr/xla``, else
    ``~/.cache/jaxcfr/xla`` (``$JAXCFR_CACHE_DIR``, the older spelling, is read too)."""
    named = os.environ.get(CACHE_DIR_ENV) or os.environ.get("JAXCFR_CACHE_DIR")
    if named:
        return named
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jaxcfr", "xla")


def _off() -> bool:
    return os.environ.get(OFF_ENV) == "1" or os.environ.get("JAXCFR_NO_CACHE") == "1"


def enable_compilation_cache(path: str | os.PathLike | None = None) -> str | None:
    """Keep compiled programs in ``path`` (default :func:`default_cache_dir`) so that a
    later process skips XLA compilation. Returns the directory in use, or ``None`` when
    the cache is off (:data:`OFF_ENV`) or the directory cannot be made. A directory the
    process already gave JAX is kept (and returned)."""
    if _off():
        return None
    current = jax.config.jax_compilation_cache_dir
    if current:
        return current
    path = os.fspath(path) if path is not None else default_cache_dir()
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError:
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
    return path


def use_compilation_cache(option: bool | str | os.PathLike | None = True) -> str | None:
    """What a ``compilation_cache`` argument asks: ``True`` / ``None`` the default
    directory, a path that directory, ``False`` nothing (see the module docstring)."""
    if option is False:
        return None
    if option is True or option is None:
        return enable_compilation_cache()
    if isinstance(option, (str, os.PathLike)):
        return enable_compilation_cache(option)
    raise TypeError(f"compilation_cache must be True, False or a directory, got {option!r}")
