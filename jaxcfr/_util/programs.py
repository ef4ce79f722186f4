"""Compiled programs kept on disk under a key made before tracing: a later process skips
tracing and lowering, not only XLA's compile.

JAX's persistent compilation cache (which :mod:`jaxcfr.engine.compilation_cache` turns
on) keys a program by its lowered module, so a process that finds a program there has
still traced and lowered it (Leduc's chunk and evaluation: about 0.3 s of a warm
process's 1.1 s; ``docs/benchmarks.md``, cold start). :func:`call` runs a jitted
function through a cache keyed instead by everything that decides its program before
tracing:

* the function (module and name) and the source of every module whose code tracing can
  run: the whole ``jaxcfr`` package, and the modules of the classes in the static
  arguments and in the arguments' pytree structure (a user's estimator, say);
* the static arguments, spelled out field by field (a value that cannot be spelled out
  plainly, a function for instance, keeps the call off this cache);
* every array argument's shape, dtype and weak type, and the pytree structure;
* JAX and jaxlib's versions, Python's, the backend (platform, its version, the device
  kind), ``XLA_FLAGS`` and every JAX configuration value in effect (64-bit mode
  included, which :func:`jaxcfr._util.precision.scope` sets per thread) but those of
  :data:`IGNORED_CONFIG` (logging, the caches' settings).

An entry is the serialized executable (``jax.experimental.serialize_executable``) with its
pytree structures, one file written atomically in ``jaxcfr-programs/`` under JAX's cache
directory, written only after a fresh compile (an executable that JAX's own cache
loaded serializes without its code). A call whose arguments do not match the
executable's types fails loudly (JAX checks them); an entry that cannot be read or
loaded is removed and the program compiled again. The cache is used only where JAX's is on (its directory set) and for
programs of one process on one device; elsewhere :func:`call` is the plain jitted call.
Programs found in this process are kept (one per key), so a second runner of the same
shapes neither traces nor compiles.

Example::

    >>> out = call(jitted_fn, (tensors, state), {"chunk": 64})   # jitted_fn(tensors, state, chunk=64)
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import logging
import os
import pickle
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from jaxcfr._util.atomic import atomic_write_bytes

__all__ = ["call", "key_of", "DIRECTORY", "FORMAT_VERSION", "IGNORED_CONFIG", "RARELY_RUN_CPU"]

#: The folder of entries under JAX's compilation-cache directory.
DIRECTORY = "jaxcfr-programs"
#: Part of every key: bumped when an entry's layout changes.
FORMAT_VERSION = 1

#: XLA options of a program that runs once or a few times a run (:func:`call`'s
#: ``rarely``), on a CPU: its compile time counts more than its speed. LLVM's level 0
#: and XLA's older loop emitters compiled Leduc's evaluation in 0.17 s of CPU instead of
#: 0.57 s (Liar's dice: 0.26 s instead of 1.2 s) and ran it in 0.4 ms instead of 0.3 ms
#: (docs/benchmarks.md, cold start).
RARELY_RUN_CPU = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}

#: JAX configuration values left out of the key: logging, dumps and the caches' own
#: settings, which change no program (every other value is in the key, known or not).
IGNORED_CONFIG = frozenset({
    "jax_log_compiles", "jax_logging_level", "jax_debug_log_modules", "jax_explain_cache_misses",
    "jax_pprint_use_color", "jax_traceback_filtering", "jax_tracer_error_num_traceback_frames",
    "jax_captured_constants_report_frames", "jax_captured_constants_warn_bytes",
    "jax_dump_ir_to", "jax_dump_ir_modes", "jax_compilation_cache_dir",
    "jax_enable_compilation_cache", "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes", "jax_compilation_cache_max_size",
    "jax_raise_persistent_cache_errors", "jax_compilation_cache_check_contents"})

_log = logging.getLogger(__name__)
_PACKAGE = Path(__file__).resolve().parents[1]
_found: dict[tuple, Any] = {}              # this process's programs (see call)
_sources: dict[str, str] = {}              # module name -> sha256 of its source
_lock = threading.Lock()


class _Unkeyable(Exception):
    """A static argument or an array that the key cannot spell out."""


def call(fn: Callable, args: tuple, static: dict[str, Any], *, rarely: bool = False,
         traced: Callable[[], None] | None = None):
    """``fn(*args, **static)`` for a ``jax.jit`` function ``fn`` whose static arguments are
    the keywords ``static``: from the programs of this process, else from disk (arguments
    on one device, one process, JAX's cache on), else compiled (and kept).

    ``rarely``: the program runs once or a few times a run (an evaluation, a profile, a
    check): on a CPU it is compiled with :data:`RARELY_RUN_CPU`, wherever its arguments
    live (the options change float rounding: one run split over devices or processes
    must compute what one device computes). ``traced`` (optional) is called once the
    program no longer needs Python's lock to be made: after tracing and lowering, before
    XLA's compile (at once when it was found). Arguments that are not all device arrays
    take the plain jitted call.
    """
    try:
        platform, one_device, signature = _signature(args)
    except _Unkeyable:
        if traced is not None:
            traced()
        return fn(*args, **static)
    options = RARELY_RUN_CPU if rarely and platform == "cpu" else None
    import jax._src.config as config
    # what jax.jit's own cache tells programs apart by: the function, the static arguments
    # (by value), the arguments' structure and types, the configuration that tracing reads
    memo = (fn, tuple(sorted(static.items())), signature, config.trace_context(), rarely)
    program = _found.get(memo)
    if program is None:
        program = _find_or_compile(fn, args, static, options, traced, one_device)
        _found[memo] = program
    elif traced is not None:
        traced()
    return program(*args)


def _signature(args: tuple):
    """The arguments' platform, whether they all live on one device, and their structure
    and types (shape, dtype, weak type, sharding)."""
    import jax
    leaves, treedef = jax.tree_util.tree_flatten(args)
    out, devices = [treedef], set()
    for x in leaves:
        aval, sharding = getattr(x, "aval", None), getattr(x, "sharding", None)
        if aval is None or sharding is None:
            raise _Unkeyable(type(x))
        devices |= sharding.device_set
        out.append((aval.shape, aval.dtype, aval.weak_type, sharding))
    if not devices:
        raise _Unkeyable("no array")
    return next(iter(devices)).platform, len(devices) == 1, tuple(out)


def _find_or_compile(fn, args, static, options, traced, one_device: bool):
    directory = _directory() if one_device else None
    path = None
    if directory is not None:
        try:
            path = directory / f"{key_of(fn, args, static, options)}.bin"
        except _Unkeyable:
            path = None
    if path is not None:
        program = _load(path)
        if program is not None:
            return program
    hits = _hits()
    lowered = fn.lower(*args, **static)
    if traced is not None:
        traced()
    program = lowered.compile(compiler_options=options) if options else lowered.compile()
    # JAX's cache had it: an executable loaded from there serializes without its code (it
    # fails to run once loaded again), so only a fresh compile is kept
    if path is not None and _hits() == hits:
        _keep(program, path)
    return program


def _directory() -> Path | None:
    import jax
    base = jax.config.jax_compilation_cache_dir
    if not base or not jax.config.jax_enable_compilation_cache or jax.process_count() != 1:
        return None
    return Path(base) / DIRECTORY


def _load(path: Path):
    """The program kept in ``path``, or ``None`` (none, or a bad entry: removed)."""
    from jax.experimental import serialize_executable
    try:
        with open(path, "rb") as f:
            payload, in_tree, out_tree = pickle.load(f)
        return serialize_executable.deserialize_and_load(payload, in_tree, out_tree)
    except FileNotFoundError:
        return None
    except Exception as e:             # noqa: BLE001 - a bad entry is dropped, compiled again
        _log.warning("jaxcfr: compiled program %s could not be loaded (%s); compiling it",
                     path.name, e)
        path.unlink(missing_ok=True)
        return None


def _keep(program, path: Path) -> None:
    from jax.experimental import serialize_executable
    try:
        data = pickle.dumps(serialize_executable.serialize(program))
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
    except Exception as e:             # noqa: BLE001 - the run goes on without the entry
        _log.warning("jaxcfr: compiled program %s not kept (%s)", path.name, e)


_local = threading.local()          # .hits: JAX compilation-cache hits of this thread
_listening = False


def _hits() -> int:
    """JAX's persistent-cache hits in this thread so far (JAX reports them in the thread
    that compiles)."""
    global _listening
    if not _listening:
        import jax.monitoring

        def listener(event: str, **_) -> None:
            if event == "/jax/compilation_cache/cache_hits":
                _local.hits = getattr(_local, "hits", 0) + 1
        with _lock:
            if not _listening:
                jax.monitoring.register_event_listener(listener)
                _listening = True
    return getattr(_local, "hits", 0)


def key_of(fn: Callable, args: tuple, static: dict[str, Any],
           compiler_options: dict | None = None) -> str:
    """The key of ``fn(*args, **static)``'s program (see the module docstring)."""
    import jax
    import jaxlib
    leaves, treedef = jax.tree_util.tree_flatten(args)
    modules = {_PACKAGE.name, getattr(fn, "__module__", "")}
    parts = [f"format={FORMAT_VERSION}", f"fn={fn.__module__}.{fn.__qualname__}",
             f"static={_spell(static, modules)}", f"tree={treedef}",
             f"options={_spell(compiler_options or {}, modules)}"]
    for node in _node_types(treedef):
        modules.add(node.__module__)
    for x in leaves:
        aval = getattr(x, "aval", None)
        sharding = getattr(x, "sharding", None)
        if aval is None or len(getattr(sharding, "device_set", ())) != 1:
            raise _Unkeyable(type(x))
        parts.append(f"{aval.str_short()}:{aval.weak_type}:{sharding!r}")
    backend = jax.devices()[0]
    parts += [f"jax={jax.__version__}", f"jaxlib={jaxlib.__version__}", f"python={sys.version}",
              f"platform={backend.platform}:{backend.client.platform_version}:"
              f"{backend.device_kind}:{len(jax.devices())}",
              f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')}"]
    config = sorted((k, repr(v)) for k, v in jax.config.values.items() if k not in IGNORED_CONFIG)
    parts.append(f"config={config}")
    parts += [f"source {m}={_module_digest(m)}" for m in sorted(modules)]
    name = getattr(fn, "__name__", "program").strip("_") or "program"
    return f"{name}-{hashlib.sha256(chr(10).join(parts).encode()).hexdigest()}"


def _spell(value, modules: set[str]) -> str:
    """A plain, complete spelling of a static argument (the modules of its classes go into
    ``modules``)."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return repr(value)
    if isinstance(value, enum.Enum):
        modules.add(type(value).__module__)
        return f"{type(value).__qualname__}.{value.name}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        modules.add(type(value).__module__)
        fields = ", ".join(f"{f.name}={_spell(getattr(value, f.name), modules)}"
                           for f in dataclasses.fields(value))
        return f"{type(value).__module__}.{type(value).__qualname__}({fields})"
    if isinstance(value, (tuple, list)):
        modules.add(type(value).__module__)
        items = ", ".join(_spell(v, modules) for v in value)
        return f"{type(value).__qualname__}[{items}]"
    if isinstance(value, dict):
        items = ", ".join(f"{_spell(k, modules)}: {_spell(v, modules)}"
                          for k, v in sorted(value.items(), key=lambda kv: repr(kv[0])))
        return f"dict{{{items}}}"
    raise _Unkeyable(type(value))


def _node_types(treedef) -> list[type]:
    """The classes of every node of a pytree structure."""
    out = []
    data = treedef.node_data()
    if data is not None:
        out.append(data[0])
    for child in treedef.children():
        out += _node_types(child)
    return out


def _module_digest(name: str) -> str:
    """sha256 of a module's source (of every ``.py`` file of the ``jaxcfr`` package), read
    once per process."""
    with _lock:
        digest = _sources.get(name)
        if digest is None:
            if name == _PACKAGE.name:
                root, files = _PACKAGE, sorted(_PACKAGE.rglob("*.py"))
            else:
                file = getattr(sys.modules.get(name), "__file__", None)
                if file is None:            # builtins and the like: Python's version says it
                    return "-"
                root, files = Path(file).parent, [Path(file)]
            h = hashlib.sha256()
            for file in files:
                h.update(f"{file.relative_to(root)}:".encode())
                h.update(hashlib.sha256(file.read_bytes()).digest())
            digest = _sources[name] = h.hexdigest()
    return digest
