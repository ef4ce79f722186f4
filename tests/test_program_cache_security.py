"""jaxcfr's compiled programs on disk (:mod:`jaxcfr._util.program_cache`) against careless and
hostile entries: nothing read from ``jaxcfr-programs/`` runs Python code. An entry is a
header in JSON and the executable's pickle, read by an unpickler that names only
:data:`~jaxcfr._util.program_cache.EXECUTABLE_GLOBALS`; a hostile, cut, foreign or loose entry
is refused (removed, logged in one line) and the program compiled again: the run goes on
and computes the same.

The first tests call the module's reader and writer directly on a temporary directory (the
test process keeps JAX's cache off); the last ones place entries under the exact keys a
solve looks up, in fresh processes with the cache on (as tests/test_compilation_cache.py).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import pickle
import shutil
import stat
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxcfr._util import program_cache
from jaxcfr.engine import jax_compilation_cache


@functools.partial(jax.jit, static_argnames=("scale",))
def _affine(x, y, *, scale):
    return {"sum": x * scale + y, "pair": (x - y, None)}


def _kept(directory, scale: float = 2.0):
    """A fresh compile of ``_affine`` kept under its key in ``directory``: (path, key,
    arguments' structure, modules, arguments)."""
    args = (jnp.arange(6, dtype=jnp.float32).reshape(3, 2), jnp.ones((3, 2), jnp.float32))
    static = {"scale": scale}
    key, modules = program_cache._key(_affine, args, static)
    in_tree = jax.tree_util.tree_structure((args, {}))
    program = _affine.lower(*args, **static).compile()
    path = directory / f"{key}.bin"
    program_cache._keep(program, path, key, in_tree, modules)
    return path, key, in_tree, modules, args


def _entry(key: str, payload: bytes, out="*", **changes) -> bytes:
    """An entry with a well-formed header (what a hostile writer who read the code writes)."""
    header = {"format": program_cache.FORMAT_VERSION, "key": key, "out": out,
              "bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest(), **changes}
    return program_cache.MAGIC + json.dumps(header).encode() + b"\n" + payload


def _write(path, data: bytes) -> None:
    path.write_bytes(data)
    path.chmod(0o600)


class _Reduce:
    """Pickles as ``fn(*args)``: what a hostile pickle runs when it is loaded."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _hostile(marker) -> dict[str, bytes]:
    """Pickles that create ``marker`` when unpickled without restriction."""
    touch = f"open({str(marker)!r}, 'w').close()"
    return {
        "os.system": pickle.dumps(_Reduce(os.system, f"touch {marker}")),
        "builtins.exec": pickle.dumps(_Reduce(exec, touch)),
        "builtins.eval, protocol 0": pickle.dumps(_Reduce(eval, touch), protocol=0),
        "subprocess.Popen": pickle.dumps(_Reduce(subprocess.Popen, ["touch", str(marker)])),
        # inside the tuple an executable's pickle holds, after an allowed global
        "nested": pickle.dumps((_Reduce(np.dtype, "float32"), _Reduce(exec, touch), False)),
        # INST (protocol 0): the class is looked up and called
        "INST": b"(S'touch " + str(marker).encode() + b"'\nios\nsystem\n.",
    }


def _refused(caplog, path) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if "refused" in r.getMessage() and path.name in r.getMessage()]


# -- the reader and the writer -----------------------------------------------------------------
def test_an_entry_is_written_user_only_and_loads_what_was_compiled(tmp_path):
    path, key, in_tree, modules, args = _kept(tmp_path / "cache" / program_cache.DIRECTORY)
    assert path.read_bytes().startswith(program_cache.MAGIC)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    program = program_cache._load(path, key, in_tree, modules)
    assert program is not None
    got, want = program(*args), _affine(*args, scale=2.0)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    np.testing.assert_array_equal(got["sum"], want["sum"])
    np.testing.assert_array_equal(got["pair"][0], want["pair"][0])


def test_every_global_an_entry_names_is_allowed(tmp_path):
    """What :data:`EXECUTABLE_GLOBALS` lists is what a real entry names (no more)."""
    path, *_ = _kept(tmp_path)
    data = path.read_bytes()
    payload = data[data.index(b"\n", len(program_cache.MAGIC)) + 1:]
    named = set()

    class Listing(program_cache._ExecutableUnpickler):
        def find_class(self, module, name):
            named.add((module, name))
            return super().find_class(module, name)

    Listing(payload, jax.devices()[0].client, code=False).load()
    assert named and named <= program_cache.EXECUTABLE_GLOBALS


@pytest.mark.parametrize("how", list(_hostile("m")))
def test_a_hostile_executable_is_refused_without_running_it(tmp_path, caplog, how):
    path, key, in_tree, modules, _ = _kept(tmp_path)
    marker = tmp_path / "marker"
    _write(path, _entry(key, _hostile(marker)[how]))
    with caplog.at_level(logging.WARNING, logger=program_cache.__name__):
        assert program_cache._load(path, key, in_tree, modules) is None
    assert not marker.exists()
    assert not path.exists()                                  # removed
    (message,) = _refused(caplog, path)
    assert "may not hold" in message and "\n" not in message


def test_the_old_format_a_plain_pickle_is_refused_without_running_it(tmp_path, caplog):
    """Format 1 was ``pickle.dump((payload, in_tree, out_tree))``: read with ``pickle.load``."""
    path, key, in_tree, modules, _ = _kept(tmp_path)
    marker = tmp_path / "marker"
    _write(path, pickle.dumps((_Reduce(os.system, f"touch {marker}"), None, None)))
    with caplog.at_level(logging.WARNING, logger=program_cache.__name__):
        assert program_cache._load(path, key, in_tree, modules) is None
    assert not marker.exists() and not path.exists()
    assert "not a jaxcfr program entry" in _refused(caplog, path)[0]


def test_state_is_never_set_on_a_class(tmp_path):
    """BUILD on an allowed class (``jax.P.__eq__ = numpy.dtype``) would change it for the
    whole process: refused before it is set."""
    path, key, in_tree, modules, _ = _kept(tmp_path)
    payload = (b"\x80\x04cjax\nP\n" + b"N}\x8c\x06__eq__cnumpy\ndtype\ns\x86b.")
    before = jax.P.__dict__.get("__eq__")
    _write(path, _entry(key, payload))
    assert program_cache._load(path, key, in_tree, modules) is None
    assert jax.P.__dict__.get("__eq__") is before and not path.exists()
    with pytest.raises(program_cache._Refused, match="sets the state"):
        program_cache._ExecutableUnpickler(payload, jax.devices()[0].client).load()


@pytest.mark.parametrize("out", [
    ["posix:system", None, []],                                 # a module not in the key
    ["subprocess:Popen", None, ["*"]],
    ["builtins:eval", None, ["*"]],                             # not one of the containers
    ["jaxcfr._util.program_cache:_load", None, []],                   # in the key: not a class
    ["jaxcfr.solvers.analytics:Evaluation", None, ["*"]],       # a named tuple, wrong arity
    ["builtins:NoneType", None, ["*"]],
    ["builtins:dict", ["a", "a"], ["*", "*"]],
    ["builtins:tuple", "aux", ["*"]],
    "not a tree",
])
def test_an_output_structure_names_only_containers_and_named_tuples_of_the_key(tmp_path,
                                                                             caplog, out):
    path, key, in_tree, modules, _ = _kept(tmp_path)
    data = path.read_bytes()
    payload = data[data.index(b"\n", len(program_cache.MAGIC)) + 1:]
    _write(path, _entry(key, payload, out=out))
    with caplog.at_level(logging.WARNING, logger=program_cache.__name__):
        assert program_cache._load(path, key, in_tree, modules) is None
    assert not path.exists() and _refused(caplog, path)


def _cut_and_changed(path, key):
    data = path.read_bytes()
    end = data.index(b"\n", len(program_cache.MAGIC))
    header, payload = json.loads(data[len(program_cache.MAGIC):end]), data[end + 1:]
    flipped = bytearray(payload)
    flipped[len(payload) // 2] ^= 1
    return {
        "empty": (b"", "not a jaxcfr program entry"),
        "magic cut": (data[:5], "not a jaxcfr program entry"),
        "header cut": (data[:end - 3], "header is cut short"),
        "payload cut": (data[:len(data) // 2], "cut short or changed"),
        "last byte cut": (data[:-1], "cut short or changed"),
        "a byte changed": (data[:end + 1] + bytes(flipped), "cut short or changed"),
        "format 1": (_entry(key, payload, out=header["out"], format=1),
                     f"format 1, not {program_cache.FORMAT_VERSION}"),
        "format 3": (_entry(key, payload, out=header["out"], format=3),
                     f"format 3, not {program_cache.FORMAT_VERSION}"),
        # another key: the last digit changed (whatever it was: "0" when it was not)
        "another key": (_entry(key[:-1] + ("1" if key.endswith("0") else "0"), payload,
                               out=header["out"]), "another key"),
        "header not JSON": (program_cache.MAGIC + b"{not json\n" + payload, "not JSON"),
    }


def test_a_cut_changed_or_other_format_entry_is_refused(tmp_path, caplog):
    path, key, in_tree, modules, args = _kept(tmp_path)
    cases = _cut_and_changed(path, key)
    for name, (data, reason) in cases.items():
        caplog.clear()
        _write(path, data)
        with caplog.at_level(logging.WARNING, logger=program_cache.__name__):
            assert program_cache._load(path, key, in_tree, modules) is None, name
        assert not path.exists(), name
        (message,) = _refused(caplog, path)
        assert reason in message, (name, message)
    # and kept again, it loads
    _kept(tmp_path)
    assert program_cache._load(path, key, in_tree, modules) is not None


def test_a_foreign_loose_or_odd_file_is_refused(tmp_path, caplog, monkeypatch):
    if not hasattr(os, "getuid"):
        pytest.skip("POSIX owners and modes")
    path, key, in_tree, modules, _ = _kept(tmp_path)
    good = path.read_bytes()

    def refused(reason):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger=program_cache.__name__):
            assert program_cache._load(path, key, in_tree, modules) is None
        (message,) = _refused(caplog, path)
        assert reason in message, message
        assert not os.path.lexists(path)

    for mode in (0o620, 0o602, 0o666):
        _write(path, good)
        path.chmod(mode)
        refused(f"writable by group or others: mode {mode:04o}")
    _write(path, good)
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    refused(f"owned by uid {uid}, not by this user")
    monkeypatch.undo()
    elsewhere = tmp_path / "elsewhere.bin"
    _write(elsewhere, good)
    path.symlink_to(elsewhere)
    refused("a symbolic link")
    if hasattr(os, "mkfifo"):
        os.mkfifo(path, 0o600)                                   # (would block a plain open)
        refused("not a regular file")
    _write(path, good)                                         # readable by others: fine
    path.chmod(0o644)
    assert program_cache._load(path, key, in_tree, modules) is not None


def test_an_executable_naming_what_entries_may_not_hold_is_not_kept(tmp_path, caplog,
                                                                     monkeypatch):
    """(another JAX version may pickle other classes: the entry is not written, so that it
    is not refused by every later process)"""
    monkeypatch.setattr(program_cache, "EXECUTABLE_GLOBALS",
                        program_cache.EXECUTABLE_GLOBALS - {("numpy", "dtype")})
    monkeypatch.setattr(program_cache, "_not_kept", set())
    with caplog.at_level(logging.DEBUG, logger=program_cache.__name__):
        path, *_ = _kept(tmp_path)
    assert not path.exists()
    assert any("not kept" in r.getMessage() and "numpy.dtype" in r.getMessage()
               for r in caplog.records)
    # at debug level only: the line never reaches a user (issue 33, item 8)
    assert not [r for r in caplog.records if "not kept" in r.getMessage()
                and r.levelno >= logging.INFO]


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class _Pair:
    a: jax.Array
    b: jax.Array


@jax.jit
def _pair(x):
    return _Pair(x, x + 1)


def test_an_output_structure_that_cannot_be_spelled_is_not_kept(tmp_path, caplog,
                                                                monkeypatch):
    monkeypatch.setattr(program_cache, "_not_kept", set())
    x = jnp.ones(3)
    key, modules = program_cache._key(_pair, (x,), {})
    path = tmp_path / f"{key}.bin"
    with caplog.at_level(logging.DEBUG, logger=program_cache.__name__):
        program_cache._keep(_pair.lower(x).compile(), path, key,
                       jax.tree_util.tree_structure(((x,), {})), modules)
    assert not path.exists()
    assert any("not kept" in m for m in caplog.messages)
    assert all(r.levelno == logging.DEBUG for r in caplog.records if "not kept" in r.getMessage())


# -- entries under the keys a solve looks up, in fresh processes -------------------------------
_SOLVE = """
import hashlib, json, jaxcfr
from jaxcfr._util.tracing import TRACES
r = jaxcfr.solve("kuhn_poker", "cfr+", 20)
print(json.dumps({"metric": float(r.final["metric"]), "traces": TRACES.snapshot(),
                  "average": hashlib.sha256(r.average_strategy.tobytes()).hexdigest()}))
"""


def _fresh(cache, **more) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXCFR_")}
    env.update(JAX_PLATFORMS="cpu", **{jax_compilation_cache.CACHE_DIR_ENV: str(cache)}, **more)
    out = subprocess.run([sys.executable, "-c", _SOLVE], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one solve, and what that solve computed (what a solve without the
    cache computes)."""
    cache = tmp_path_factory.mktemp("filled") / "xla"
    first, _ = _fresh(cache)
    names = sorted(os.listdir(cache / program_cache.DIRECTORY))
    assert len(names) == 4, names          # the chunk, the evaluation, the profile, the check
    off = tmp_path_factory.mktemp("off") / "xla"
    without, _ = _fresh(off, **{jax_compilation_cache.OFF_ENV: "1"})
    assert not off.exists()
    assert (without["metric"], without["average"]) == (first["metric"], first["average"])
    return cache, first


def _copy(filled, tmp_path):
    cache = tmp_path / "xla"
    shutil.copytree(filled[0], cache)
    entries = cache / program_cache.DIRECTORY
    return cache, {name.split("-")[0]: entries / name for name in os.listdir(entries)}


def test_hostile_entries_under_the_keys_a_solve_looks_up_run_nothing(filled, tmp_path):
    cache, entries = _copy(filled, tmp_path)
    markers = {name: tmp_path / f"marker-{name}" for name in entries}
    hostile = {
        # the format of before: a plain pickle, which pickle.load ran
        "run_chunk": pickle.dumps((_Reduce(os.system, f"touch {markers['run_chunk']}"),
                                   None, None)),
        "metrics": _entry(entries["metrics"].name[:-4],
                          _hostile(markers["metrics"])["os.system"]),
        "profile": _entry(entries["profile"].name[:-4],
                          _hostile(markers["profile"])["builtins.exec"]),
        "all_finite": _entry(entries["all_finite"].name[:-4],
                             _hostile(markers["all_finite"])["subprocess.Popen"]),
    }
    for name, data in hostile.items():
        _write(entries[name], data)
    second, stderr = _fresh(cache)
    assert not [m for m in markers.values() if m.exists()]
    assert (second["metric"], second["average"]) == (filled[1]["metric"], filled[1]["average"])
    refused = [line for line in stderr.splitlines() if "refused" in line]
    assert len(refused) == 4, stderr[-3000:]
    for name, path in entries.items():           # gone, or a fresh compile kept in its place
        assert _gone_or_kept_again(path, hostile[name]), name


def _gone_or_kept_again(path, bad: bytes) -> bool:
    """(a copied cache misses JAX's own entries, whose key holds the directory: the program
    is compiled afresh and kept again)"""
    if not path.exists():
        return True
    data = path.read_bytes()
    return (data != bad and data.startswith(program_cache.MAGIC)
            and stat.S_IMODE(path.stat().st_mode) == 0o600)


def test_cut_other_format_and_loose_entries_in_a_solve_are_compiled_again(filled, tmp_path):
    cache, entries = _copy(filled, tmp_path)
    chunk = entries["run_chunk"].read_bytes()
    _write(entries["run_chunk"], chunk[:len(chunk) // 2])
    evaluation = entries["metrics"].read_bytes()
    end = evaluation.index(b"\n", len(program_cache.MAGIC))
    header = json.loads(evaluation[len(program_cache.MAGIC):end])
    header["format"] = program_cache.FORMAT_VERSION + 1
    _write(entries["metrics"], program_cache.MAGIC + json.dumps(header).encode() + evaluation[end:])
    entries["profile"].chmod(0o666)
    bad = {name: path.read_bytes() for name, path in entries.items() if name != "all_finite"}
    second, stderr = _fresh(cache)
    assert (second["metric"], second["average"]) == (filled[1]["metric"], filled[1]["average"])
    # the chunk and the evaluation traced again, the check loaded as kept
    assert second["traces"].get("chunk") == 1 and second["traces"].get("evaluate") == 1
    refused = [line for line in stderr.splitlines() if "refused" in line]
    assert len(refused) == 3, stderr[-3000:]
    assert any("cut short" in line for line in refused)
    version = program_cache.FORMAT_VERSION
    assert any(f"format {version + 1}, not {version}" in line for line in refused)
    assert any("writable by group or others" in line for line in refused)
    for name, data in bad.items():
        assert _gone_or_kept_again(entries[name], b"" if name == "profile" else data), name


def test_a_refused_entry_is_written_again_where_jaxs_cache_serves_the_compile(tmp_path):
    """In place (JAX's own entries are there: its cache serves the compile, which serializes
    without its code): the refused chunk is compiled afresh once and kept, so that the next
    process loads it instead of refusing nothing and tracing again (issue 33, item 8)."""
    cache = tmp_path / "xla"
    first, _ = _fresh(cache)
    entries = {n.split("-")[0]: cache / program_cache.DIRECTORY / n
               for n in os.listdir(cache / program_cache.DIRECTORY)}
    chunk = entries["run_chunk"].read_bytes()
    _write(entries["run_chunk"], chunk[:len(chunk) // 2])
    second, stderr = _fresh(cache)
    assert [line for line in stderr.splitlines() if "refused" in line], stderr[-2000:]
    assert entries["run_chunk"].exists(), "the refused entry was not written again"
    third, stderr = _fresh(cache)
    assert "refused" not in stderr and "chunk" not in third["traces"], (stderr, third)
    assert (first["metric"], first["average"]) == (second["metric"], second["average"]) \
        == (third["metric"], third["average"])
