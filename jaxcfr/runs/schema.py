"""The keys a run config takes, and its solver's parameters' values, checked without JAX: what
``jaxcfr train`` answers about a misspelt key (in the file or a ``--set``), a parameter the
algorithm does not take or a value its rule refuses (``solver.horizon = 0``) before anything
heavy is imported (:mod:`jaxcfr.solvers.names` holds the rules).

:mod:`jaxcfr.runs.config` checks on import that these keys are its dataclasses' fields
(one list of keys, two readers), and gives the same messages for what it checks later
(types, values).

Example::

    >>> check_keys({"solver": {"alpah": 1.5}}, "leduc.toml")
    Traceback (most recent call last):
    ConfigError: leduc.toml: unknown key solver.alpah (did you mean solver.alpha?); ...
"""

from __future__ import annotations

import difflib
import tomllib
from typing import Any, Sequence

from jaxcfr._util.arguments import ArgumentError
from jaxcfr._util.reading import read_bytes
from jaxcfr.solvers.names import (ESTIMATOR_NAMES, PARAMETER_NAMES, check_named_parameters,
                                  check_walk, resolve_algorithm)

__all__ = ["ConfigError", "SECTION_KEYS", "TOP_LEVEL_KEYS", "check_keys", "check_file_keys",
           "check_solver_values", "read_override", "read_toml"]


class ConfigError(ValueError):
    """A config file or override is invalid (unknown key, wrong type, bad value)."""


#: ``[section]`` -> its keys (the solver's parameters, :data:`PARAMETER_NAMES`, besides).
SECTION_KEYS = {
    "game": ("name", "names", "sort_infosets", "cache", "abstraction", "bucketing", "boards"),
    "solver": ("algorithm", "iterations", "alternating", "combine", "sampling", "samples",
               "counts", "walk", "pool", "chance", "draws", "lock"),
    "run": ("eval_every", "stop_at", "checkpoint_every", "keep_checkpoints", "precision", "out_dir",
            "seed", "seeds", "chunk", "hand_buckets", "quiet", "plot"),
    "resolve": ("gadget", "algorithm", "iterations", "at", "after_chance", "at_depth",
                "off_abstraction", "depth_limit", "continuations", "batching"),
}
#: Keys outside the sections.
TOP_LEVEL_KEYS = ("name", "description")


def keys_of(section: str) -> list[str]:
    """The keys of ``[section]`` (the solver's: its fields and every parameter name)."""
    return list(SECTION_KEYS[section]) + (list(PARAMETER_NAMES) if section == "solver" else [])


def all_keys() -> list[str]:
    """Every key a config takes, dotted (``solver.iterations``)."""
    return list(TOP_LEVEL_KEYS) + [f"{s}.{k}" for s in SECTION_KEYS for k in keys_of(s)]


def did_you_mean(key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def check_section_key(section: str, key: str, where: str) -> None:
    """ConfigError unless ``[section]`` takes ``key`` (``where`` starts the message)."""
    known = keys_of(section)
    if key in known:
        return
    hint = did_you_mean(key, known)
    hint = hint.replace("mean ", f"mean {section}.") if hint else ""
    extra = (f", and the parameters of the algorithms' parts: {', '.join(PARAMETER_NAMES)}"
             if section == "solver" else "")
    raise ConfigError(f"{where}: unknown key {section}.{key}{hint}; the keys of [{section}] "
                      f"are {', '.join(SECTION_KEYS[section])}{extra}")


def check_override_key(text: str) -> None:
    """ConfigError unless the key of ``--set KEY=VALUE`` ``text`` is one a config takes."""
    key, sep, _ = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {text}: expected KEY=VALUE, e.g. solver.iterations=500")
    section, _, field = key.partition(".")
    if section in SECTION_KEYS and field:
        check_section_key(section, field, f"--set {text}")
    elif key not in TOP_LEVEL_KEYS:
        raise ConfigError(f"--set {text}: unknown key {key!r}{did_you_mean(key, all_keys())}; "
                          f"expected SECTION.KEY with SECTION one of {', '.join(SECTION_KEYS)}")


def check_keys(raw: dict[str, Any], source: str, overrides: Sequence[str] = ()) -> None:
    """ConfigError for the first key of ``raw`` (a TOML-shaped dict read from ``source``)
    or of ``overrides`` that no config takes; types and values are checked later, by
    :func:`jaxcfr.runs.config.config_from_dict`."""
    for text in overrides:
        check_override_key(text)
    for key, value in raw.items():
        if key in SECTION_KEYS:
            if isinstance(value, dict):
                for field in value:
                    check_section_key(key, field, source)
        elif key not in TOP_LEVEL_KEYS:
            known = list(TOP_LEVEL_KEYS) + list(SECTION_KEYS)
            raise ConfigError(f"{source}: unknown key {key!r}"
                              f"{did_you_mean(key, known + all_keys())} (the top level takes "
                              f"{', '.join(known)})")
    check_solver_values(raw, source, overrides)


def check_solver_values(raw: dict[str, Any], source: str, overrides: Sequence[str] = ()
                        ) -> None:
    """ConfigError (the message :func:`jaxcfr.runs.config.config_from_dict` gives) for a
    ``[solver]`` parameter of ``raw`` or ``overrides`` that the algorithm and estimator do
    not take, or whose value the parameter's rule refuses, and for a ``solver.walk`` /
    ``solver.pool`` that :func:`jaxcfr.solvers.names.check_walk` refuses. What this cannot
    judge without JAX (a wrong type, an unknown algorithm or estimator) is left to the
    config's rules."""
    solver = dict(raw["solver"]) if isinstance(raw.get("solver"), dict) else {}
    given: dict[str, str] = {}                     # key -> the --set that gave its value
    for text in overrides:
        key, value = read_override(text)
        section, _, field = key.partition(".")
        if section == "solver" and field:
            if value is None:                      # KEY= : back to the default
                solver.pop(field, None)
            else:
                solver[field] = value
            given[key] = f"--set {text}"
    sampling, samples = solver.get("sampling", "none"), solver.get("samples", 1)
    counts = solver.get("counts", False)
    try:
        algorithm = resolve_algorithm(solver.get("algorithm", "cfr+"))
    except ArgumentError:
        return
    if sampling not in ESTIMATOR_NAMES or not isinstance(counts, bool) or \
            type(samples) is not int or samples < 1 or (counts and sampling == "none"):
        return                          # (the estimator's own rules answer first, later)
    walk, pool = solver.get("walk", "levels"), solver.get("pool")
    if isinstance(walk, str) and (pool is None or type(pool) is int):   # (else: by type)
        try:
            check_walk(sampling, counts, walk, pool, lambda name: f"solver.{name}")
        except ArgumentError as e:         # blamed on the --set that made the conflict
            keys = [e.argument] + _WALK_PARTNERS.get(e.argument, [])
            raise ConfigError(f"{next((given[k] for k in keys if k in given), source)}: "
                              f"{e}") from None
    values = {}
    for name in PARAMETER_NAMES:
        if name in solver:
            value = _as_numbers(solver[name])
            if value is None:
                return                              # a wrong type: the config's rules say so
            values[name] = value
    try:
        check_named_parameters(algorithm, values, sampling, samples, counts,
                               lambda name: f"solver.{name}", seed=False)
    except ArgumentError as e:
        raise ConfigError(f"{given.get(e.argument, source)}: {e}") from None


#: The keys whose value, with the key's own, makes a walk or pool mistake of
#: :func:`jaxcfr.solvers.names.check_walk` (``solver.pool`` with a ``--set solver.walk``).
_WALK_PARTNERS = {"solver.walk": ["solver.sampling", "solver.counts"],
                  "solver.pool": ["solver.walk"]}


def _as_numbers(value: Any) -> float | tuple[float, ...] | None:
    """A parameter's value as the config reads it (a number as a float, a non-empty list of
    numbers as a tuple of floats), ``None`` when it is neither."""
    number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    if number(value):
        return float(value)
    if isinstance(value, list) and value and all(map(number, value)):
        return tuple(float(v) for v in value)
    return None


def read_override(text: str) -> tuple[str, Any]:
    """``--set KEY=VALUE``'s key and value (a TOML literal, else the text; ``None`` for
    ``KEY=``: the key's default), unchecked (:func:`jaxcfr.runs.config.parse_override`
    checks the form first)."""
    key, _, value = text.partition("=")
    if not value.strip():
        return key.strip(), None                   # KEY= : the key's default
    try:
        return key.strip(), tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return key.strip(), value.strip()
    except RecursionError:
        raise ConfigError(f"--set {text}: the value nests lists or tables too deeply") \
            from None


def check_file_keys(path, overrides: Sequence[str] = ()) -> None:
    """:func:`check_keys` of the TOML file at ``path`` (ConfigError for invalid TOML)."""
    raw = read_toml(path)
    check_keys(raw, str(path), overrides)


def read_toml(path) -> dict[str, Any]:
    """The TOML file at ``path`` (ConfigError, naming ``path`` as given, for invalid TOML),
    read bounded as every file a user names (:func:`jaxcfr._util.reading.read_bytes`: a
    path to a device or a pipe that never ends raises ``OSError``)."""
    data = read_bytes(path)
    try:
        return tomllib.loads(data.decode())           # (as tomllib.load decodes its bytes)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    except RecursionError:             # (tomllib recurses once per level of nesting)
        raise ConfigError(f"{path}: invalid TOML: lists or tables nested too "
                          "deeply") from None
