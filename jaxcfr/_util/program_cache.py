"""The program cache: jaxcfr's compiled programs kept on disk under a key made before
tracing, so that a later process skips tracing and lowering, not only XLA's compile.

JAX's persistent compilation cache (which :mod:`jaxcfr.engine.jax_compilation_cache` turns
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

An entry is one file written atomically in ``jaxcfr-programs/`` under JAX's cache
directory, only after a fresh compile (an executable that JAX's own cache loaded
serializes without its code), user-only (0600, the directory 0700): :data:`MAGIC`, a
JSON header line (:data:`FORMAT_VERSION`, the key, the output's pytree structure, the
payload's length and sha256) and the payload of ``jax.experimental.serialize_executable``
(the executable and its argument types, a pickle). A call whose arguments do not match the
executable's types fails loudly (JAX checks them). The cache is used only where JAX's is
on (its directory set) and for programs of one process on one device; elsewhere
:func:`call` is the plain jitted call. Programs found in this process are kept (one per
key, the :data:`KEPT` most recently used), so a second runner of the same shapes neither
traces nor compiles; ``jax.clear_caches()`` forgets them with JAX's own (every loaded
executable holds memory maps of its code, a dozen or so on a CPU: a process that keeps
thousands of them reaches the kernel's limit, ``vm.max_map_count``, and XLA's next
compile fails to map its code and crashes, SIGSEGV; ``docs/subgames.md``). A program whose
arguments span the devices of several processes (``jax.distributed``) runs collectives:
the processes meet (:func:`jaxcfr._util.meet.meet`) before its first run.

Trust. An entry holds machine code that runs when the program does, like every entry of
JAX's own cache in the same directory: the directory is to be as private as the user's
code (its default, ``~/.cache/jaxcfr/xla``, is created 0700); a shared or copied cache is
trusted with the user's account. What an entry may not do is run Python code while it is
read (``pickle.load`` and JAX's ``deserialize_and_load`` would run whatever a pickle
names). So nothing of an entry is unpickled but the executable's payload, by
:class:`_ExecutableUnpickler`, which looks up only the JAX and NumPy names of
:data:`EXECUTABLE_GLOBALS` (listed from real entries), imports nothing else, never sets
state on a class or a function and loads one executable for this backend's devices; the
arguments' pytree structure is the caller's, the output's is rebuilt from the header out
of Python's containers and named tuples of modules whose source is in the key (nothing is
imported). An entry is refused when it is not a regular file (a link, a pipe), is not
owned by the user or is writable by group or others (as ssh refuses a private key), its
magic, format, key, length or sha256 do not match, or its payload or structure name
anything else; a refused entry is removed, logged in one line (``jaxcfr: compiled program
NAME refused (REASON); removed, compiling it again``) and the program compiled again: the
run goes on and computes the same, and the entry is written again (where JAX's own cache
serves that compile, the program is compiled afresh once, with :data:`FRESH_COMPILE`, so
that the refusal is not met by every later process). An executable whose pickle names
anything else (another JAX version's) is not kept (logged at debug level: it is this
module's business, not the user's). ``tests/test_program_cache_security.py``.

Example (``jitted_fn(tensors, state, chunk=64)``)::

    >>> out = call(jitted_fn, (tensors, state), {"chunk": 64})
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import errno
import functools
import hashlib
import importlib
import io
import json
import logging
import os
import pickle
import stat
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from jaxcfr._util.atomic import atomic_write_bytes
from jaxcfr._util.meet import meet, other_processes, running

__all__ = ["call", "program", "key_of", "clear", "DIRECTORY", "FORMAT_VERSION", "MAGIC",
           "EXECUTABLE_GLOBALS", "IGNORED_CONFIG", "RARELY_RUN_CPU", "KEPT"]

#: The folder of entries under JAX's compilation-cache directory.
DIRECTORY = "jaxcfr-programs"
#: Part of every key and of every entry's header: bumped when an entry's layout changes.
FORMAT_VERSION = 2
#: The first bytes of every entry.
MAGIC = b"jaxcfr-program\n"
_MAX_HEADER = 1 << 20

#: Every global the pickle of an entry's executable may name (module, name): what JAX
#: 0.10 pickles for the chunk, the evaluation, the profile and the finiteness check of
#: single games and stacks, float32 and float64, seed batches, exact, external and
#: outcome sampling (listed from real entries). An entry naming anything else is refused;
#: an executable naming anything else is not kept (another JAX version may need more).
EXECUTABLE_GLOBALS = frozenset({
    ("jax", "P"),
    ("jax._src.core", "ManualAxisType"),
    ("jax._src.core", "MemorySpace"),
    ("jax._src.core", "ShapedArray"),
    ("jax._src.interpreters.pxla", "AllArgsInfo"),
    ("jax._src.interpreters.pxla", "UnloadedMeshExecutable"),
    ("jax._src.layout", "Layout"),
    ("jax._src.linear_util", "DebugInfo"),
    ("jax._src.mesh", "AbstractMesh"),
    ("jax._src.named_sharding", "_unpickle_named_sharding"),
    ("jax._src.sharding_impls", "_unpickle_single_device_sharding"),
    ("jax._src.stages", "ArgInfo"),
    ("jaxlib._jax", "DeviceList"),
    ("numpy", "dtype"),
})

#: XLA options of a program that runs once or a few times a run (:func:`call`'s
#: ``rarely``), on a CPU: its compile time counts more than its speed. LLVM's level 0
#: and XLA's older loop emitters compiled Leduc's evaluation in 0.17 s of CPU instead of
#: 0.57 s (Liar's dice: 0.26 s instead of 1.2 s) and ran it in 0.4 ms instead of 0.3 ms
#: (docs/benchmarks.md, cold start).
RARELY_RUN_CPU = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}
#: A compiler option at its default value: the program it compiles is the same, but JAX's
#: cache key is not, so the compile is a fresh one (which serializes with its code). Used
#: once after a refused entry, where JAX's cache served the compile.
FRESH_COMPILE = {"xla_embed_ir_in_executable": False}

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

#: How many programs this process keeps (:func:`program`), the most recently used: a
#: runner uses four to six (its chunk, profile, evaluation and finiteness check).
KEPT = 256

_log = logging.getLogger(__name__)
_PACKAGE = Path(__file__).resolve().parents[1]


_CacheInfo = collections.namedtuple("_CacheInfo", "hits misses maxsize currsize")


class _Programs:
    """This process's programs by key, at most :data:`KEPT`, the least recently used
    dropped first (its executable is freed once nothing else holds it). It has the
    methods by which ``jax.clear_caches()`` clears the caches registered with it."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._programs: collections.OrderedDict[tuple, Any] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._registered = False
        self.hits = self.misses = 0

    def get(self, key: tuple):
        with self._lock:
            found = self._programs.get(key)
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
                self._programs.move_to_end(key)
            return found

    def put(self, key: tuple, program) -> None:
        with self._lock:
            self._programs[key] = program
            self._programs.move_to_end(key)
            while len(self._programs) > self.maxsize:
                self._programs.popitem(last=False)
        if not self._registered:           # (JAX is imported by now)
            self._registered = True
            try:
                from jax._src import util
                util.register_cache(self, "jaxcfr._util.program_cache")
            except (ImportError, AttributeError):   # another JAX: clear() still does it
                pass

    def __len__(self) -> int:
        return len(self._programs)

    def cache_clear(self) -> None:
        with self._lock:
            self._programs.clear()

    def cache_info(self):
        return _CacheInfo(self.hits, self.misses, self.maxsize, len(self._programs))

    def cache_keys(self) -> list[tuple]:
        with self._lock:
            return list(self._programs)


_found = _Programs(KEPT)                   # this process's programs (see call)
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
    XLA's compile (at once when it was found, in this process or on disk). Arguments that
    are not all device arrays take the plain jitted call (``traced`` after it).
    """
    found = program(fn, args, static, rarely=rarely, traced=traced)
    if found is not None:
        return found(*args)
    out = fn(*args, **static)
    if traced is not None:
        traced()
    return out


def clear() -> None:
    """Forget the programs this process kept (``jax.clear_caches()`` does it too, with
    JAX's own caches); the entries on disk stay."""
    _found.cache_clear()


def program(fn: Callable, args: tuple, static: dict[str, Any], *, rarely: bool = False,
            traced: Callable[[], None] | None = None):
    """The compiled program :func:`call` runs for these arguments (a
    ``jax.stages.Compiled``: call it with ``args``), or ``None`` where they are not all
    device arrays. A caller that runs it often keeps it: looking it up flattens and
    hashes every argument (tens of microseconds a call), and the program itself checks
    its arguments' types (``TypeError`` when they changed: look it up again)."""
    try:
        platform, devices, signature = _signature(args)
    except _Unkeyable:
        return None
    options = RARELY_RUN_CPU if rarely and platform == "cpu" else None
    import jax._src.config as config
    # what jax.jit's own cache tells programs apart by: the function, the static arguments
    # (by value), the arguments' structure and types, the configuration that tracing reads
    memo = (fn, tuple(sorted(static.items())), signature, config.trace_context(), rarely)
    found = _found.get(memo)
    if found is None:
        found = _find_or_compile(fn, args, static, options, traced, devices)
        _found.put(memo, found)
        if running() is not None and other_processes(devices):
            # a program over several processes runs collectives: the processes meet before
            # its first run, each having compiled it (gloo waits only 30 s: _util/meet.py)
            meet(f"the first run of {getattr(fn, '__name__', 'a program')}")
    elif traced is not None:
        traced()
    return found


def _signature(args: tuple):
    """The arguments' platform, the devices they live on (a frozenset), and their
    structure and types (shape, dtype, weak type, sharding)."""
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
    return next(iter(devices)).platform, frozenset(devices), tuple(out)


def _find_or_compile(fn, args, static, options, traced, devices: frozenset):
    # (kept only for one device: an entry is loaded onto the device of the arguments)
    directory = _directory() if len(devices) == 1 else None
    path = key = modules = in_tree = None
    if directory is not None:
        try:
            key, modules = _key(fn, args, static, options)
        except _Unkeyable:
            key = None
    if key is not None:
        import jax
        path = directory / f"{key}.bin"
        # the executable's argument structure: what ``Compiled`` flattens a call into
        in_tree = jax.tree_util.tree_structure((args, {}))
        program = _load(path, key, in_tree, modules, device=next(iter(devices)))
        refused = path in _refused
        if program is not None:
            if traced is not None:
                traced()
            return program
    hits = _hits()
    lowered = fn.lower(*args, **static)
    if traced is not None:
        traced()
    program = lowered.compile(compiler_options=options) if options else lowered.compile()
    # JAX's cache had it: an executable loaded from there serializes without its code (it
    # fails to run once loaded again), so only a fresh compile is kept
    if path is not None and _hits() != hits and refused:
        hits = _hits()                  # a refused entry is written again: compiled afresh
        program = lowered.compile(compiler_options={**(options or {}), **FRESH_COMPILE})
    if path is not None and _hits() == hits:
        _keep(program, path, key, in_tree, modules)
    return program


def _directory() -> Path | None:
    import jax
    base = jax.config.jax_compilation_cache_dir
    if not base or not jax.config.jax_enable_compilation_cache or jax.process_count() != 1:
        return None
    return Path(base) / DIRECTORY


# -- entries -----------------------------------------------------------------------------------
class _Refused(Exception):
    """An entry that is not loaded (the message says why, in a few words)."""


def _load(path: Path, key: str, in_tree, modules: frozenset[str], device=None):
    """The program kept in ``path``, loaded onto ``device`` (default: the backend's first),
    or ``None``: none, or an entry refused (removed, logged in one line; the caller
    compiles the program again)."""
    try:
        data = _read(path)
    except FileNotFoundError:
        return None
    except Exception as e:             # noqa: BLE001 - refused (below)
        return _refuse(path, e)
    try:
        out_tree, payload = _parse(data, key, modules)
        return _deserialize(payload, in_tree, out_tree, device)
    except Exception as e:             # noqa: BLE001 - a refused entry is dropped, compiled again
        return _refuse(path, e)


#: The entries this process refused (written again once compiled: see the module docstring).
_refused: set[Path] = set()


def _refuse(path: Path, e: Exception) -> None:
    reason = str(e) if isinstance(e, _Refused) else f"{type(e).__name__}: {e}"
    _log.warning("jaxcfr: compiled program %s refused (%s); removed, compiling it again",
                 path.name, _first_line(reason))
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
    _refused.add(path)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "?"
    return line if len(line) <= 200 else line[:199] + "…"


def _read(path: Path) -> bytes:
    """The bytes of ``path``: a regular file (not a link), owned by this user and writable
    by no one else (as ssh asks of a private key)."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_BINARY", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as e:                 # (a link, a file this user may not read)
        if e.errno == errno.ELOOP:
            raise _Refused("a symbolic link") from None
        raise _Refused(f"cannot be opened: {e.strerror}") from None
    with os.fdopen(fd, "rb") as f:       # the checks are of the file read, not of its name
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("not a regular file")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise _Refused(f"owned by uid {st.st_uid}, not by this user")
        if hasattr(os, "getuid") and st.st_mode & 0o022:
            raise _Refused(f"writable by group or others: mode {stat.S_IMODE(st.st_mode):04o}")
        return f.read()


def _entry(key: str, out_tree, payload: bytes) -> bytes:
    """An entry's bytes: :data:`MAGIC`, a JSON header line, the executable's payload."""
    header = {"format": FORMAT_VERSION, "key": key, "out": _spell_tree(out_tree),
              "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    return MAGIC + json.dumps(header, separators=(",", ":")).encode() + b"\n" + payload


def _parse(data: bytes, key: str, modules: frozenset[str]):
    """An entry's output structure and executable payload (see :func:`_entry`)."""
    if not data.startswith(MAGIC):
        raise _Refused("not a jaxcfr program entry")
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + _MAX_HEADER)
    if end < 0:
        raise _Refused("its header is cut short")
    try:
        header = json.loads(data[len(MAGIC):end])
    except (ValueError, RecursionError):
        raise _Refused("its header is not JSON") from None
    if not isinstance(header, dict):
        raise _Refused("its header is not JSON")
    if header.get("format") != FORMAT_VERSION:
        raise _Refused(f"format {header.get('format')!r}, not {FORMAT_VERSION}")
    if header.get("key") != key:
        raise _Refused("written under another key")
    payload = data[end + 1:]
    if (len(payload) != header.get("bytes")
            or hashlib.sha256(payload).hexdigest() != header.get("sha256")):
        raise _Refused("cut short or changed since written")
    return _unspell_tree(header.get("out"), modules), payload


def _deserialize(payload: bytes, in_tree, out_tree, device=None):
    """``jax.experimental.serialize_executable.deserialize_and_load`` through
    :class:`_ExecutableUnpickler` (the pytree structures are the caller's), onto
    ``device`` (default: the backend's first): the one device of the program's arguments.
    (JAX's default, every device of the backend, makes an executable that expects one
    shard per device: with ``--xla_force_host_platform_device_count=2`` a one-device
    program then failed, "Expected args to execute_sharded_on_local_devices to have 2
    shards".)"""
    import jax
    from jax._src.interpreters import pxla
    from jax._src.stages import ArgInfo
    device = jax.devices()[0] if device is None else device
    loaded = _ExecutableUnpickler(payload, device.client, devices=(device,)).load()
    if not (type(loaded) is tuple and len(loaded) == 3):
        raise _Refused("not an executable")
    unloaded, args_info_flat, no_kwargs = loaded
    if (type(unloaded) is not pxla.UnloadedMeshExecutable or type(no_kwargs) is not bool
            or type(args_info_flat) is not list
            or not all(type(a) is ArgInfo for a in args_info_flat)
            or len(args_info_flat) != in_tree.num_leaves):
        raise _Refused("not an executable of these arguments")
    args_info = in_tree.unflatten(args_info_flat)
    return jax.stages.Compiled(unloaded.load(), [], args_info, out_tree, no_kwargs=no_kwargs)


def _keep(program, path: Path, key: str, in_tree, modules: frozenset[str]) -> None:
    """Write ``program``'s entry (user-only: 0600 in a 0700 directory), if
    :func:`_load` will take it back."""
    from jax.experimental import serialize_executable
    try:
        payload, compiled_in, out_tree = serialize_executable.serialize(program)
        if compiled_in != in_tree:
            raise _Refused(f"its arguments' structure {compiled_in} is not {in_tree}")
        if _unspell_tree(_spell_tree(out_tree), modules) != out_tree:
            raise _Refused(f"its output structure {out_tree} cannot be spelled")
        import jax
        _ExecutableUnpickler(payload, jax.devices()[0].client, code=False).load()
        data = _entry(key, out_tree, payload)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write_bytes(path, data, mode=0o600)
    except Exception as e:             # noqa: BLE001 - the run goes on without the entry
        reason = _first_line(str(e) or type(e).__name__)
        # the program runs all the same: this module's business, not the user's
        _not_kept.add(reason)
        _log.debug("jaxcfr: compiled program %s not kept (%s)", path.name, reason)


_not_kept: set[str] = set()


class _ExecutableUnpickler(pickle._Unpickler):       # the Python one: its BUILD can be checked
    """JAX's ``_JaxPjrtUnpickler`` (``jax.experimental.serialize_executable``) restricted to
    what an executable's pickle holds: the globals of :data:`EXECUTABLE_GLOBALS` (nothing
    else is imported or called), state set only on instances of those classes (never on a
    class or a function), one executable, loaded onto ``devices`` (default: every device of
    the backend). ``code=False``: the executable is not loaded (a check of what
    :func:`_keep` writes)."""

    def __init__(self, payload: bytes, backend, *, code: bool = True, devices=None):
        super().__init__(io.BytesIO(payload), fix_imports=False)
        self.backend, self.code, self.executables = backend, code, 0
        self.devices_by_id = {d.id: d for d in backend.devices()}
        from jax._src.lib import xla_client
        self.execution_devices = xla_client.DeviceList(
            tuple(backend.devices() if devices is None else devices))

    def find_class(self, module, name):
        if (module, name) not in EXECUTABLE_GLOBALS:
            raise _Refused(f"it refers to {module}.{name}, which an entry may not hold")
        return _executable_globals()[module, name]

    def persistent_load(self, pid):
        kind = pid[0] if type(pid) is tuple and pid else None
        if kind == "exec" and len(pid) == 2 and type(pid[1]) is bytes and not self.executables:
            self.executables += 1
            if not self.code:
                return None
            return self.backend.deserialize_executable(
                pid[1], executable_devices=self.execution_devices)
        if kind == "device" and len(pid) == 2 and type(pid[1]) is int:
            return self.devices_by_id[pid[1]]
        if kind == "client" and len(pid) == 1:
            return self.backend
        raise _Refused("it holds an unknown persistent object")

    def load_build(self):            # (the stack: ..., the object, its state)
        target = self.stack[-2] if len(self.stack) >= 2 else None
        # an instance (numpy.dtype makes its subclasses'), never a class or a function
        if isinstance(target, type) or not isinstance(target, _executable_classes()):
            raise _Refused(f"it sets the state of {type(target).__qualname__} "
                           f"{getattr(target, '__qualname__', '')}".rstrip())
        pickle._Unpickler.load_build(self)

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = load_build


@functools.cache
def _executable_globals() -> dict[tuple[str, str], Any]:
    return {(m, n): getattr(importlib.import_module(m), n) for m, n in EXECUTABLE_GLOBALS}


@functools.cache
def _executable_classes() -> tuple[type, ...]:
    return tuple(x for x in _executable_globals().values() if isinstance(x, type))


def _spell_tree(treedef):
    """A pytree structure of Python's containers and named tuples in JSON: ``"*"`` for a
    leaf, else ``["module:qualname", aux, [children]]`` (``aux``: ``None`` or a list of
    dictionary keys)."""
    data = treedef.node_data()
    if data is None:
        return "*"
    cls, aux = data
    if not (cls in (tuple, list, dict, type(None)) or _named_tuple(cls)):
        raise _Unkeyable(f"{cls.__qualname__}, not a container or a named tuple")
    if not (aux is None or (type(aux) is list and all(type(k) in (str, int) for k in aux))):
        raise _Unkeyable(f"{cls.__qualname__}'s node data")
    return [f"{cls.__module__}:{cls.__qualname__}", aux,
            [_spell_tree(c) for c in treedef.children()]]


def _named_tuple(cls: type) -> bool:
    fields = getattr(cls, "_fields", None)
    return (issubclass(cls, tuple) and type(fields) is tuple
            and all(type(f) is str for f in fields))


_BUILTIN_NODES = {"builtins:tuple": tuple, "builtins:list": list, "builtins:dict": dict,
                  "builtins:NoneType": type(None)}


def _unspell_tree(spelled, modules: frozenset[str]):
    """:func:`_spell_tree` undone: its classes are those of modules already imported whose
    source is in the key (``modules``), or Python's containers; nothing is imported."""
    import jax
    from jax._src import tree_util
    if spelled == "*":
        return jax.tree_util.tree_structure(0)
    if not (type(spelled) is list and len(spelled) == 3 and type(spelled[0]) is str
            and type(spelled[2]) is list):
        raise _Refused("its output structure is not one")
    name, aux, children = spelled
    cls = _BUILTIN_NODES.get(name)
    module, _, qualname = name.partition(":")
    if cls is None and module != "builtins" and (
            module in modules or module.split(".")[0] == _PACKAGE.name):
        cls = sys.modules.get(module)
        for part in qualname.split(".") if cls is not None else ():
            cls = vars(cls).get(part) if hasattr(cls, "__dict__") else None
    if not isinstance(cls, type):
        raise _Refused(f"its output structure names {name}, which an entry may not")
    if cls is dict:
        fits = (type(aux) is list and all(type(k) in (str, int) for k in aux)
                and len(set(aux)) == len(aux) == len(children))
    elif cls is type(None):
        fits = aux is None and not children
    elif cls in (tuple, list):
        fits = aux is None
    else:           # a named tuple (another node of the wrong arity crashes jaxlib)
        fits = (_named_tuple(cls) and aux is None
                and len(children) == len(cls._fields))
    if not fits:
        raise _Refused("its output structure is not one")
    return jax.tree_util.PyTreeDef.from_node_data_and_children(
        tree_util.default_registry, (cls, aux), [_unspell_tree(c, modules) for c in children])


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
    return _key(fn, args, static, compiler_options)[0]


def _key(fn: Callable, args: tuple, static: dict[str, Any],
         compiler_options: dict | None = None) -> tuple[str, frozenset[str]]:
    """:func:`key_of`, and the modules whose source is in the key."""
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
    return f"{name}-{hashlib.sha256(chr(10).join(parts).encode()).hexdigest()}", frozenset(modules)


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
