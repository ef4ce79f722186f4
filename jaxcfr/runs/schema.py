"""The keys a run config takes, checked without JAX: what ``jaxcfr train`` answers about a
misspelt key (in the file or a ``--set``) before anything heavy is imported.

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

from jaxcfr.solvers.names import PARAMETER_NAMES

__all__ = ["ConfigError", "SECTION_KEYS", "TOP_LEVEL_KEYS", "check_keys", "check_file_keys"]


class ConfigError(ValueError):
    """A config file or override is invalid (unknown key, wrong type, bad value)."""


#: ``[section]`` -> its keys (the solver's parameters, :data:`PARAMETER_NAMES`, besides).
SECTION_KEYS = {
    "game": ("name", "names", "sort_infosets", "cache", "abstraction", "bucketing"),
    "solver": ("algorithm", "iterations", "alternating", "combine", "sampling", "samples",
               "counts", "chance", "draws", "lock"),
    "run": ("eval_every", "checkpoint_every", "keep_checkpoints", "precision", "out_dir",
            "seed", "seeds", "chunk", "quiet", "plot"),
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


def check_file_keys(path, overrides: Sequence[str] = ()) -> None:
    """:func:`check_keys` of the TOML file at ``path`` (ConfigError for invalid TOML)."""
    with open(path, "rb") as f:
        try:
            raw = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
    check_keys(raw, str(path), overrides)
