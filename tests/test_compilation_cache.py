"""JAX's persistent compilation cache: on by default in the API, in jaxcfr's directory, off
on request; the evaluation compiling beside the first chunk; and jaxcfr's own cache of
compiled programs keyed before tracing (:mod:`jaxcfr._util.program_cache`): a second process
neither traces nor compiles the chunk and the evaluation, and computes the same run; a bad
entry is compiled again; the key changes with everything that decides the program.

The cache is a per-process JAX setting, so each case runs in a fresh subprocess with its own
temporary directory (conftest keeps the test process itself off the cache and out of the
user's home).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import program_cache
from jaxcfr.engine import jax_compilation_cache

_SOLVE = """
import hashlib, json, jax, jax.monitoring, jaxcfr
from jaxcfr._util.tracing import TRACES
events = {"hits": 0, "traced": 0}
def listener(event, **kwargs):
    if event == "/jax/compilation_cache/cache_hits":
        events["hits"] += 1
def durations(event, duration, **kwargs):
    if event == "/jax/core/compile/jaxpr_trace_duration":
        events["traced"] += 1
jax.monitoring.register_event_listener(listener)
jax.monitoring.register_event_duration_secs_listener(durations)
r = jaxcfr.solve("kuhn_poker", "cfr+", 20, **ARGS)
print(json.dumps({"hits": events["hits"], "traced": events["traced"],
                  "dir": jax.config.jax_compilation_cache_dir,
                  "metric": float(r.final["metric"]), "traces": TRACES.snapshot(),
                  "average": hashlib.sha256(r.average_strategy.tobytes()).hexdigest()}))
"""


def _fresh(env: dict, args: str = "{}") -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JAXCFR_")}
    clean.update(JAX_PLATFORMS="cpu", **env)
    out = subprocess.run([sys.executable, "-c", _SOLVE.replace("ARGS", args)],
                         capture_output=True, text=True, env=clean, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(path) -> list[str]:
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def test_solve_fills_the_cache_and_a_second_process_loads_from_it(tmp_path):
    cache = tmp_path / "xla"
    first = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert first["dir"] == str(cache)
    written = _entries(cache)
    assert written, "the first process wrote nothing"
    second = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    # every program loaded: from jaxcfr's programs (nothing traced) or JAX's cache (hits)
    assert first["traced"] > 0 and (second["traced"] == 0 or second["hits"] > 0)
    assert second["metric"] == first["metric"]          # the same program_cache, the same run


def test_a_process_with_several_devices_loads_a_kept_program_onto_its_arguments_device(
        tmp_path):
    # (issue 33 item 5) a process with 2 CPU devices kept its one-device chunk, and the next
    # such process loaded it onto both devices: "Expected args to execute_sharded_on_local_
    # devices to have 2 shards, got: [1, 1, ...]"
    env = {jax_compilation_cache.CACHE_DIR_ENV: str(tmp_path / "xla"),
           "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    first = _fresh(env)
    assert _entries(tmp_path / "xla" / "jaxcfr-programs"), "nothing kept"
    second = _fresh(env)
    assert second["traced"] == 0                     # loaded from jaxcfr's programs
    assert (second["metric"], second["average"]) == (first["metric"], first["average"])


def test_the_default_directory_is_under_xdg_cache_home(tmp_path):
    first = _fresh({"XDG_CACHE_HOME": str(tmp_path)})
    assert first["dir"] == str(tmp_path / "jaxcfr" / "xla")
    assert _entries(tmp_path / "jaxcfr" / "xla")


@pytest.mark.slow
def test_the_off_switches_write_nothing(tmp_path):
    for i, (env, args) in enumerate([({jax_compilation_cache.OFF_ENV: "1"}, "{}"),
                                     ({"JAXCFR_NO_CACHE": "1"}, "{}"),
                                     ({}, "{'device': jaxcfr.DeviceOptions(compilation_cache="
                                          "False)}")]):
        cache = tmp_path / f"xla{i}"
        out = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache), **env}, args)
        assert out["dir"] is None, (env, args)
        assert not _entries(cache), (env, args)


def test_a_directory_given_to_solve_is_used(tmp_path):
    cache = tmp_path / "mine"
    out = _fresh({}, f"{{'device': jaxcfr.DeviceOptions(compilation_cache={str(cache)!r})}}")
    assert out["dir"] == str(cache) and _entries(cache)


def test_default_cache_dir_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(jax_compilation_cache.CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv("JAXCFR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert jax_compilation_cache.default_cache_dir() == str(tmp_path / "jaxcfr" / "xla")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert jax_compilation_cache.default_cache_dir() == str(tmp_path / "home" / ".cache" / "jaxcfr"
                                                        / "xla")
    monkeypatch.setenv(jax_compilation_cache.CACHE_DIR_ENV, str(tmp_path / "named"))
    assert jax_compilation_cache.default_cache_dir() == str(tmp_path / "named")


def test_a_bad_option_is_refused():
    with pytest.raises(TypeError, match="compilation_cache"):
        jax_compilation_cache.use_compilation_cache(3)
    with pytest.raises(jaxcfr.ArgumentError, match="compilation_cache"):
        jaxcfr.solve("kuhn_poker", "cfr+", 2, device=jaxcfr.DeviceOptions(compilation_cache=3))


def test_the_evaluation_compiles_beside_the_chunk_and_evaluates_alike():
    """``compile`` returns after the chunk; the evaluation's thread has compiled it by the
    first ``evaluate``, which gives what a runner that never compiled ahead gives."""
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=8)
    state, seconds = runner.compile(runner.init())
    assert seconds >= 0
    state = runner.advance(state, 24)
    ahead = runner.evaluate(state)
    assert runner.evaluation_compile_seconds is not None
    plain = jaxcfr.Runner(lowered, jaxcfr.cfr_plus(), chunk=8)
    again = plain.evaluate(plain.advance(plain.init(), 24))
    for key in ("values", "best_response_values", "nash_conv"):
        np.testing.assert_array_equal(ahead[key], again[key])


# -- compiled programs keyed before tracing ----------------------------------------------------
def test_a_second_process_neither_traces_nor_compiles_the_chunk_and_the_evaluation(tmp_path):
    cache = tmp_path / "xla"
    first = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert first["traces"].get("chunk") == 1 and first["traces"].get("evaluate") == 1
    kept = _entries(cache / program_cache.DIRECTORY)
    assert len(kept) == 4, kept          # the chunk, the evaluation, the profile, the check
    second = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert second["traces"].get("chunk", 0) == 0 and second["traces"].get("evaluate", 0) == 0
    assert second["traced"] == 0                 # (nor the profile, nor the finiteness check)
    assert (second["metric"], second["average"]) == (first["metric"], first["average"])
    assert _entries(cache / program_cache.DIRECTORY) == kept


def test_a_bad_entry_is_dropped_and_compiled_again(tmp_path):
    cache = tmp_path / "xla"
    first = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    for name in _entries(cache / program_cache.DIRECTORY):
        (cache / program_cache.DIRECTORY / name).write_bytes(b"not a program")
    second = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert second["traces"].get("chunk") == 1 and second["traces"].get("evaluate") == 1
    assert (second["metric"], second["average"]) == (first["metric"], first["average"])
    # dropped, and written again: JAX's cache served the compile (its executables
    # serialize without their code), so each was compiled afresh once (issue 33, item 8);
    # the next process loads them and traces nothing
    again = _entries(cache / program_cache.DIRECTORY)
    assert len(again) == 4, again
    assert all((cache / program_cache.DIRECTORY / n).read_bytes() != b"not a program"
               for n in again)
    third = _fresh({jax_compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert third["traced"] == 0 and third["metric"] == first["metric"]


@functools.partial(jax.jit, static_argnames=("scale", "how"))
def _scaled(x, y, *, scale, how):
    return x * scale + y


def test_the_key_changes_with_what_decides_the_program():
    x, y = jnp.ones((3, 2), jnp.float32), jnp.zeros((3, 2), jnp.float32)
    base = program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ("a", 1)})
    assert program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ("a", 1)}) == base
    others = [
        program_cache.key_of(_scaled, (x, y), {"scale": 3.0, "how": ("a", 1)}),     # a static value
        program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ["a", 1]}),     # its type
        program_cache.key_of(_scaled, (jnp.ones((3, 3)), y), {"scale": 2.0, "how": ("a", 1)}),
        program_cache.key_of(_scaled, (x.astype(jnp.bfloat16), y), {"scale": 2.0, "how": ("a", 1)}),
        program_cache.key_of(_scaled, ((x,), y), {"scale": 2.0, "how": ("a", 1)}),  # the structure
        program_cache.key_of(_scaled, (jnp.asarray(1.0), y), {"scale": 2.0, "how": ("a", 1)}),
    ]
    with jax.default_matmul_precision("highest"):                      # a configuration value
        others.append(program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ("a", 1)}))
    with jax.log_compiles(True):                                       # (but not logging)
        assert program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ("a", 1)}) == base
    with jax.enable_x64(True):                                           # 64-bit mode
        others.append(program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": ("a", 1)}))
    assert len({base, *others}) == len(others) + 1
    # a solver spelled field by field: its numbers and its parts' classes are in the key
    solver = jaxcfr.cfr_plus().static_key()
    spelled = program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": solver})
    assert spelled != program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": jaxcfr.cfr(
    ).static_key()})
    assert spelled == program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": jaxcfr.cfr_plus(
    ).static_key()})


def test_what_the_key_cannot_spell_is_not_kept():
    x, y = jnp.ones(3, jnp.float32), jnp.zeros(3, jnp.float32)
    with pytest.raises(program_cache._Unkeyable):
        program_cache.key_of(_scaled, (x, y), {"scale": 2.0, "how": lambda v: v})
    with pytest.raises(program_cache._Unkeyable):
        program_cache.key_of(_scaled, (np.ones(3), y), {"scale": 2.0, "how": 1})  # not on a device
    # still computed: kept in this process only, or the plain jitted call
    out = program_cache.call(_scaled, (x, y), {"scale": 2.0, "how": lambda v: v})
    np.testing.assert_array_equal(out, 2 * np.ones(3))
    out = program_cache.call(_scaled, (np.ones(3), y), {"scale": 2.0, "how": 1}, rarely=True)
    np.testing.assert_array_equal(out, 2 * np.ones(3))


def test_a_rarely_run_program_computes_what_the_jitted_call_computes():
    """(on a CPU it compiles with RARELY_RUN_CPU: LLVM level 0, the older emitters)"""
    x = jnp.linspace(0, 1, 37, dtype=jnp.float32)
    y = jnp.cos(x)
    ours = program_cache.call(_scaled, (x, y), {"scale": 1.7, "how": 0}, rarely=True)
    np.testing.assert_allclose(ours, _scaled(x, y, scale=1.7, how=0), rtol=1e-6)


def test_the_process_keeps_a_bounded_number_of_programs_and_jax_clear_caches_frees_them(
        monkeypatch):
    """A kept program holds its loaded code (memory maps): the process keeps the
    :data:`~jaxcfr._util.program_cache.KEPT` most recently used, and ``jax.clear_caches()``
    (or :func:`~jaxcfr._util.program_cache.clear`) lets go of every one, so that the
    executable itself is freed (nothing else holds it)."""
    import gc
    import weakref
    kept = program_cache._Programs(3)
    monkeypatch.setattr(program_cache, "_found", kept)
    x, y = jnp.ones(3, jnp.float32), jnp.zeros(3, jnp.float32)
    programs = {}
    for scale in (1.0, 2.0, 3.0, 4.0):
        programs[scale] = weakref.ref(program_cache.program(_scaled, (x, y),
                                                            {"scale": scale, "how": 0}))
    assert len(kept) == 3
    gc.collect()
    assert programs[1.0]() is None                   # the least recently used: dropped, freed
    # a program used again is kept (found, not compiled again), the oldest other dropped
    assert program_cache.program(_scaled, (x, y), {"scale": 2.0, "how": 0}) is programs[2.0]()
    program_cache.program(_scaled, (x, y), {"scale": 5.0, "how": 0})
    gc.collect()
    assert programs[3.0]() is None and programs[2.0]() is not None
    jax.clear_caches()
    gc.collect()
    assert len(kept) == 0 and all(p() is None for p in programs.values())
    np.testing.assert_array_equal(program_cache.call(_scaled, (x, y), {"scale": 2.0, "how": 0}),
                                  2 * np.ones(3))    # compiled again when asked
    program_cache.clear()
    assert len(kept) == 0
