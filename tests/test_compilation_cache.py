"""JAX's persistent compilation cache: on by default in the API, in jaxcfr's directory, off
on request; and the evaluation compiling beside the first chunk.

The cache is a per-process JAX setting, so each case runs in a fresh subprocess with its own
temporary directory (conftest keeps the test process itself off the cache and out of the
user's home).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

import jaxcfr
from jaxcfr.engine import compilation_cache

_SOLVE = """
import json, jax, jax.monitoring, jaxcfr
events = {"hits": 0}
def listener(event, **kwargs):
    if event == "/jax/compilation_cache/cache_hits":
        events["hits"] += 1
jax.monitoring.register_event_listener(listener)
r = jaxcfr.solve("kuhn_poker", "cfr+", 20, **ARGS)
print(json.dumps({"hits": events["hits"], "dir": jax.config.jax_compilation_cache_dir,
                  "metric": float(r.final["metric"])}))
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
    first = _fresh({compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert first["dir"] == str(cache)
    written = _entries(cache)
    assert written, "the first process wrote nothing"
    second = _fresh({compilation_cache.CACHE_DIR_ENV: str(cache)})
    assert second["hits"] > 0
    assert second["metric"] == first["metric"]          # the same programs, the same run


def test_the_default_directory_is_under_xdg_cache_home(tmp_path):
    first = _fresh({"XDG_CACHE_HOME": str(tmp_path)})
    assert first["dir"] == str(tmp_path / "jaxcfr" / "xla")
    assert _entries(tmp_path / "jaxcfr" / "xla")


def test_the_off_switches_write_nothing(tmp_path):
    for i, (env, args) in enumerate([({compilation_cache.OFF_ENV: "1"}, "{}"),
                                     ({"JAXCFR_NO_CACHE": "1"}, "{}"),
                                     ({}, "{'compilation_cache': False}")]):
        cache = tmp_path / f"xla{i}"
        out = _fresh({compilation_cache.CACHE_DIR_ENV: str(cache), **env}, args)
        assert out["dir"] is None, (env, args)
        assert not _entries(cache), (env, args)


def test_a_directory_given_to_solve_is_used(tmp_path):
    cache = tmp_path / "mine"
    out = _fresh({}, f"{{'compilation_cache': {str(cache)!r}}}")
    assert out["dir"] == str(cache) and _entries(cache)


def test_default_cache_dir_reads_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv(compilation_cache.CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv("JAXCFR_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compilation_cache.default_cache_dir() == str(tmp_path / "jaxcfr" / "xla")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert compilation_cache.default_cache_dir() == str(tmp_path / "home" / ".cache" / "jaxcfr"
                                                        / "xla")
    monkeypatch.setenv(compilation_cache.CACHE_DIR_ENV, str(tmp_path / "named"))
    assert compilation_cache.default_cache_dir() == str(tmp_path / "named")


def test_a_bad_option_is_refused():
    import pytest
    with pytest.raises(TypeError, match="compilation_cache"):
        compilation_cache.use_compilation_cache(3)
    with pytest.raises(jaxcfr.ArgumentError, match="compilation_cache"):
        jaxcfr.solve("kuhn_poker", "cfr+", 2, compilation_cache=3)


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
