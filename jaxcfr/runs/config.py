"""Run configs: TOML files loaded into frozen dataclasses, with ``--set`` overrides.

A config has three sections (every key optional except the game)::

    [game]
    name = "leduc_poker"            # a game string, or an .efg path (relative to this file)
    # names = ["kuhn_poker", ...]   # or several games, stacked into one batched run
                                    # (public trees, e.g. holdem_spot(...): a public stack)
    # boards = "river:Td9d6h5c"     # game.name a holdem_spot on many boards (a stack)
    # abstraction = "bet_menu(fractions=[1.0])"   # train an action abstraction (a list: a batch)
    # bucketing = "suit_isomorphism"              # train a bucketing (a list: a batch)

    [solver]
    algorithm = "cfr+"
    iterations = 2000
    # gamma = [1.0, 1.5, 2.0]       # the solver's parameters, by the names its parts
                                    # declare (README "Algorithms"); a list: a batch of
                                    # settings run by one compiled step

    [run]
    eval_every = 100
    checkpoint_every = 500

    # [resolve]                     # optional: then re-solve subgames of the trained profile
    # gadget = "maxmargin"
    # after_chance = 3              # or at = ["0,1,call,call,2"], at_depth, off_abstraction

Unknown keys and wrong types raise :class:`ConfigError` naming the key and the file.

A config is a file that may come from someone else: a ``module:Class`` game or
abstraction string in it (which imports and runs that module) is refused unless the
caller says ``trust_code=True`` (``--trust-code``); registered names, ``.efg`` paths and
``openspiel:`` strings are always read (:func:`jaxcfr.game.registry.check_trusted`).
Values given as overrides are the caller's own. A ``module:Class`` module is looked for
beside the config file too (and in the working directory).

Example::

    >>> from jaxcfr.runs import load_config
    >>> config = load_config("configs/leduc.toml", overrides=["solver.iterations=500"])
    >>> config.solver.iterations
    500
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import math
import os
import types
import typing
from pathlib import Path
from typing import Any, Sequence

from jaxcfr._util import arguments
from jaxcfr._util.arguments import (ArgumentError, nonnegative_int, one_of, plain_name,
                                    positive_float, positive_int)
from jaxcfr._util.precision import PRECISIONS
from jaxcfr._util.reading import read_bytes
from jaxcfr.api.solve import DeviceOptions, LoadOptions, SolveOptions
from jaxcfr.engine.runner import DEFAULT_CHUNK
from jaxcfr.engine.chance import (CHANCE_CHOICES, CHANCE_MODES, DEFAULT_DRAWS, Chance,
                                  sampled_chance_rules)
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import check_trusted, import_game_module, load_abstraction
from jaxcfr.solvers.estimators import Estimator, make_estimator
from jaxcfr.solvers.parameters import check_values
from jaxcfr.solvers.presets import make_solver, named_parameters, resolve_algorithm
from jaxcfr.solvers.solver import Solver
from jaxcfr.runs.schema import (ConfigError, SECTION_KEYS, TOP_LEVEL_KEYS, read_override,
                                read_toml)

__all__ = ["Config", "GameConfig", "SolverConfig", "RunConfig", "ResolveConfig", "ConfigError",
           "load_config", "config_from_dict", "parse_override", "to_toml", "COMPUTE_KEYS",
           "compute_keys", "key_default", "check_config", "config_spelling",
           "check_sampled_chance"]


#: Keys that change what is computed: a checkpoint only resumes under equal values (and
#: so do the solver's parameters, ``solver.<name>``: :func:`compute_keys`).
COMPUTE_KEYS = ("game.name", "game.names", "game.sort_infosets", "game.abstraction",
                "game.bucketing", "game.boards", "solver.algorithm",
                "solver.alternating", "solver.combine", "solver.sampling", "solver.samples",
                "solver.counts", "solver.walk",
                "solver.chance", "solver.draws", "run.precision", "run.seed", "run.seeds")


def compute_keys(*configs: dict[str, Any]) -> tuple[str, ...]:
    """:data:`COMPUTE_KEYS` and every solver parameter either TOML-shaped config sets."""
    names = {k for c in configs for k in c.get("solver", {}) if k in named_parameters()}
    return COMPUTE_KEYS + tuple(f"solver.{k}" for k in sorted(names))


def key_default(key: str) -> Any:
    """The default of a dotted config key (``solver.walk`` -> ``"levels"``), ``None`` for a
    key without one (a solver parameter, ``game.name``): what a config written before the
    key existed ran with."""
    section, _, field = key.partition(".")
    cls = _SECTIONS.get(section)
    f = next((f for f in dataclasses.fields(cls) if f.name == field), None) if cls else None
    return None if f is None or f.default is dataclasses.MISSING else f.default


# ConfigError: jaxcfr.runs.schema (the JAX-free key check raises it too)


#: A run's argument names (as :func:`jaxcfr.solve` takes them) -> their config keys.
_KEYS = {"algorithm": "solver.algorithm", "iterations": "solver.iterations",
         "alternating": "solver.alternating", "sampling": "solver.sampling",
         "samples": "solver.samples", "counts": "solver.counts", "walk": "solver.walk",
         "pool": "solver.pool", "chance": "solver.chance",
         "draws": "solver.draws", "seed": "run.seed", "seeds": "run.seeds",
         "eval_every": "run.eval_every", "chunk": "run.chunk", "precision": "run.precision",
         "hand_buckets": "run.hand_buckets",
         "games": "game.names", "abstraction": "game.abstraction"}


def config_spelling(name: str) -> str:
    """How a config spells a run's argument in messages (``sampling`` -> ``solver.sampling``;
    a solver parameter ``alpha`` -> ``solver.alpha``)."""
    if name in _KEYS:
        return _KEYS[name]
    return f"solver.{name}" if name in named_parameters() else name


#: The type of a solver parameter's key: a number, or a list of them (a batch).
_PARAMETER_TYPE = float | tuple[float, ...]


@dataclasses.dataclass(frozen=True)
class GameConfig:
    """``[game]``: one game string, or several (``names``) stacked into a batch; or one
    hold'em spot (``name``) on several ``boards`` (:mod:`jaxcfr.runs.boards`), a stack."""
    name: str | None = None                 # game string or .efg path
    names: tuple[str, ...] | None = None    # a batch of games of the same player count
    sort_infosets: bool = True              # Gambit's canonical row order
    cache: bool = True                      # load / store lowered games in the on-disk cache
    # an abstraction string (jaxcfr.load_abstraction) for every game, or a list of them for
    # game.name: one member per abstraction; the lifted profiles are evaluated in the full game
    abstraction: str | tuple[str, ...] | None = None
    # a bucketing string (information abstraction, jaxcfr.load_abstraction: suit_isomorphism,
    # rank_buckets(...)) for every member, or a list of them for game.name (a batch);
    # with game.abstraction too, each member is "abstraction + bucketing"
    bucketing: str | tuple[str, ...] | None = None
    # game.name (a holdem_spot) on each of these boards: a spec ("river:Td9d6h5c",
    # "turn:Td9d6h", "random:64", "Td9d6h5c2s,Td9d6h5c3s") or a list of boards; a stack
    boards: str | tuple[str, ...] | None = None

    @property
    def strings(self) -> tuple[str, ...]:
        """Every game string of the run (one unless batched; with ``boards``, the spot's
        string on each board)."""
        if self.boards is not None:
            from jaxcfr.runs.boards import board_members
            return board_members(self.name, self.boards)
        return self.names if self.names is not None else (self.name,)

    @property
    def members(self) -> tuple[tuple[str, str | None], ...]:
        """``(game string, abstraction string or None)`` per game of the run, in order (the
        abstraction string is ``"A + B"`` for an abstraction ``A`` and a bucketing ``B``)."""
        if isinstance(self.abstraction, tuple):
            return tuple((self.name, _joined(a, self.bucketing)) for a in self.abstraction)
        if isinstance(self.bucketing, tuple):
            return tuple((self.name, _joined(self.abstraction, b)) for b in self.bucketing)
        return tuple((s, _joined(self.abstraction, self.bucketing)) for s in self.strings)

    @property
    def batched(self) -> bool:
        """Whether the games are stacked (``names``, or a list of abstractions or bucketings)."""
        return self.names is not None or isinstance(self.abstraction, tuple) \
            or isinstance(self.bucketing, tuple) or self.boards is not None

    @property
    def abstracted(self) -> bool:
        """Whether the members are abstractions (lifted and evaluated in the full game)."""
        return self.abstraction is not None or self.bucketing is not None


def _joined(abstraction: str | None, bucketing: str | tuple | None) -> str | None:
    parts = [x for x in (abstraction, bucketing) if isinstance(x, str)]
    return " + ".join(parts) if parts else None


@dataclasses.dataclass(frozen=True)
class SolverConfig:
    """``[solver]``: the algorithm, its estimator and its parameters.

    The parameters are keys of ``[solver]`` named as the solver's parts declare them
    (``alpha = 2``, ``exploration = 0.4``, ``horizon = 5000``; a list: a batch of
    settings), held in :attr:`parameters` as ``(name, value)`` pairs.
    """
    algorithm: str = "cfr+"
    iterations: int = 1000
    alternating: bool | None = None         # None: the preset's default
    combine: str = "product"                # lists of several keys: "product" grid or "zip";
                                            # "members": one value per member of a stack
    sampling: str = "none"                  # the estimator: none (exact), chance, external,
                                            # outcome
    samples: int = 1                        # subtrees sampled per player and iteration
    counts: bool = False                    # run the samples as counts over the whole tree
    walk: str = "levels"                    # traversals one by one: "levels" or "depth" first
    pool: int | None = None                 # depth first: output slots a lane (absent: probed;
                                            # 0: the static bound); the same tables whatever
                                            # the pool (not a compute key)
    chance: str = "auto"                    # exact (lower the tree), sampled (the host draws
                                            # chance), auto: exact where it can be enumerated
    draws: int = DEFAULT_DRAWS              # chance draws per iteration under sampled chance
    lock: str | None = None                 # node locking: a lock file (JSON, as `jaxcfr solve
                                            # --lock` reads; relative to the config file)
    # the solver's parameters given, by name (each its own key in [solver])
    parameters: tuple[tuple[str, float | tuple[float, ...]], ...] = ()

    def given(self) -> dict[str, Any]:
        """The parameters given, by name (a list as a tuple)."""
        return dict(self.parameters)

    def __getattr__(self, name: str):
        """A parameter given, by its name (``config.solver.alpha``; ``None`` if not given)."""
        if name.startswith("_") or name not in named_parameters():
            raise AttributeError(f"SolverConfig has no attribute {name!r}")
        return dict(self.parameters).get(name)

    def hyperparams(self) -> dict[str, Any]:
        """The parameters given, lists expanded per ``combine`` (as lists)."""
        given = self.given()
        lists = {k: v for k, v in given.items() if isinstance(v, tuple)}
        if not lists:
            return given
        if self.combine in ("zip", "members"):
            return {k: (list(v) if isinstance(v, tuple) else v) for k, v in given.items()}
        names = list(lists)
        grid = list(itertools.product(*(lists[k] for k in names)))
        out = {k: v for k, v in given.items() if not isinstance(v, tuple)}
        for i, k in enumerate(names):
            out[k] = [point[i] for point in grid]
        return out

    def settings(self) -> list[dict[str, float]]:
        """The batch of varying hyper-parameter values, one dict per setting ([] if none)."""
        hp = self.hyperparams()
        lists = {k: v for k, v in hp.items() if isinstance(v, list)}
        if not lists:
            return []
        n = len(next(iter(lists.values())))
        return [{k: v[i] for k, v in lists.items()} for i in range(n)]


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """``[run]``: evaluation, checkpoints and where the artefacts go."""
    eval_every: int = 100            # evaluate the average profile every N iterations (and last)
    stop_at: float | None = None     # stop at the first evaluation whose metric is at or below
    checkpoint_every: int = 0        # checkpoint every N iterations; 0: only at the end / Ctrl-C
    keep_checkpoints: int = 3        # how many recent checkpoints to keep
    precision: str = "float32"       # or "float64"
    out_dir: str | None = None       # run directory; default runs/<config name>-<timestamp>
    seed: int = 0                    # PRNG seed of the sampling estimators
    seeds: tuple[int, ...] | None = None   # a batch of seeds: one member per seed
    chunk: int = DEFAULT_CHUNK       # iterations per compiled chunk
    hand_buckets: bool = True        # a public tree's hands padded to buckets (one program
                                     # for other boards of the bet tree; DeviceOptions)
    quiet: bool = False              # no progress output
    plot: bool = True                # write convergence.png (needs matplotlib)


@dataclasses.dataclass(frozen=True)
class ResolveConfig:
    """``[resolve]`` (optional): after training, re-solve subgames of the trained profile
    (:func:`jaxcfr.subgames.resolve_subgames`) and write the composed profile. Name the
    subgames one way: ``at`` (paths, labels separated by commas), ``after_chance``,
    ``at_depth``, or ``off_abstraction`` (every subgame after an action ``game.abstraction``
    dropped)."""
    gadget: str = "resolve"                 # resolve, maxmargin, reach or unsafe
    algorithm: str = "cfr+"                 # the preset that re-solves
    iterations: int = 1000
    at: tuple[str, ...] | None = None       # paths, e.g. ["0,1,call,call,2"]
    after_chance: int | None = None         # every public state after the K-th chance event
    at_depth: int | None = None             # every public state at this depth
    off_abstraction: bool = False           # every subgame after a dropped action
    depth_limit: int | None = None          # cut the subgames this many moves down
    continuations: int = 1                  # the opponent's continuation strategies there
    batching: str = "auto"                  # auto, one or each


@dataclasses.dataclass(frozen=True)
class Config:
    """A whole run config. ``name`` defaults to the file's stem; ``source`` is the file."""
    game: GameConfig
    solver: SolverConfig = SolverConfig()
    run: RunConfig = RunConfig()
    resolve: ResolveConfig | None = None    # [resolve]: re-solve subgames after training
    name: str = "run"
    description: str = ""
    source: str = ""                 # not part of the TOML: where it was loaded from
    # not part of the TOML: (solver.lock, its bytes) read once (with_lock_read): a pipe
    # (/dev/stdin, <(...)) reads once, and the checks, the runner, the checkpoint's digest
    # and the run directory's copy all take these bytes
    lock_read: tuple[str, bytes] | None = dataclasses.field(default=None, repr=False,
                                                             compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The TOML-shaped dict (``None`` values omitted, tuples as lists; the solver's
        parameters each under its own key)."""
        out: dict[str, Any] = {"name": self.name}
        if self.description:
            out["description"] = self.description
        for section in ("game", "solver", "run", "resolve"):
            if getattr(self, section) is None:
                continue
            d = {}
            for f in dataclasses.fields(getattr(self, section)):
                v = getattr(getattr(self, section), f.name)
                if section == "solver" and f.name == "parameters":
                    d.update((k, list(x) if isinstance(x, tuple) else x) for k, x in v)
                elif v is not None:
                    d[f.name] = list(v) if isinstance(v, tuple) else v
            out[section] = d
        return out

    def lock_bytes(self) -> bytes | None:
        """``solver.lock``'s bytes: as read once (:func:`with_lock_read`), else read now;
        ``None`` for no lock. Raises ``OSError`` for a file that cannot be read."""
        if self.solver.lock is None:
            return None
        data = self.lock_read_bytes()
        return read_bytes(self.solver.lock) if data is None else data

    def replace(self, **sections) -> "Config":
        return dataclasses.replace(self, **sections)

    def make_solver(self) -> Solver:
        """The solver ``[solver]`` names: the preset, its update order, its estimator."""
        return make_solver(self.solver.algorithm, alternating=self.solver.alternating,
                           estimator=self.estimator(), spell=config_spelling)

    def options(self) -> SolveOptions:
        """The run as the option objects ``jaxcfr.solve`` builds (:class:`SolveOptions`):
        the solver, its parameter values (:meth:`run_parameters`, checked), chance, the
        precision, :class:`DeviceOptions` (``run.chunk``), :class:`LoadOptions`
        (``game.cache``) and the target (``run.stop_at``)."""
        solver = self.make_solver()
        return SolveOptions(solver, self.solver.iterations, self.run.eval_every,
                            solver.check_parameters(self.run_parameters(), config_spelling),
                            Chance(self.solver.chance, self.solver.draws), self.run.precision,
                            DeviceOptions(chunk=self.run.chunk,
                                          hand_buckets=self.run.hand_buckets),
                            LoadOptions(cache=self.game.cache), lock=self.lock(),
                            target=self.run.stop_at,
                            per_member=self.solver.combine == "members",
                            member_labels=self.member_labels())

    def lock(self) -> dict | None:
        """``solver.lock``'s entries (:func:`~jaxcfr.api.locks.read_lock_file` of the bytes
        read once), or ``None``."""
        if self.solver.lock is None:
            return None
        from jaxcfr.api.locks import read_lock_file
        return read_lock_file(self.solver.lock, data=self.lock_read_bytes())

    def lock_read_bytes(self) -> bytes | None:
        """The bytes :func:`with_lock_read` read of ``solver.lock``, or ``None``."""
        if self.lock_read is not None and self.lock_read[0] == self.solver.lock:
            return self.lock_read[1]
        return None

    def member_labels(self) -> tuple[str, ...] | None:
        """Further names of a stack's members that a lock file's ``member`` may use: the
        boards of ``game.boards``, else ``None``."""
        if self.game.boards is None:
            return None
        from jaxcfr.runs.boards import chosen_boards
        return chosen_boards(self.game.name, self.game.boards)

    def run_parameters(self) -> dict[str, Any]:
        """The solver's parameter values of the run, what :class:`jaxcfr.Runner` takes:
        those ``[solver]`` gives (lists expanded per ``solver.combine``) and the seed or,
        with ``run.seeds``, a batch of seeds crossed with the settings (settings outer,
        seeds inner)."""
        out = self.solver.hyperparams()
        if self.run.seeds is None:
            out["seed"] = self.run.seed
            return out
        seeds = list(self.run.seeds)
        n = max([len(v) for v in out.values() if isinstance(v, list)], default=1)
        out = {k: ([x for x in v for _ in seeds] if isinstance(v, list) else v)
               for k, v in out.items()}
        out["seed"] = seeds * n
        return out

    def estimator(self) -> Estimator:
        """The estimator ``solver.sampling`` / ``solver.samples`` name (``solver.counts``,
        ``solver.walk``, ``solver.pool``: how its traversals run)."""
        return make_estimator(self.solver.sampling, self.solver.samples, config_spelling,
                              self.solver.counts, self.solver.walk, self.solver.pool)

    def get(self, dotted: str) -> Any:
        section, _, key = dotted.partition(".")
        if section == "solver" and key in self.solver.given():
            return self.solver.given()[key]
        return getattr(getattr(self, section), key)


_SECTIONS = {"game": GameConfig, "solver": SolverConfig, "run": RunConfig,
             "resolve": ResolveConfig}
_TOP_LEVEL = {"name": str, "description": str}
# the keys the command line checks without JAX (jaxcfr.runs.schema) are these
if ({s: tuple(f.name for f in dataclasses.fields(c) if f.name != "parameters")
     for s, c in _SECTIONS.items()} != SECTION_KEYS or tuple(_TOP_LEVEL) != TOP_LEVEL_KEYS):
    raise ImportError("jaxcfr.runs.schema's keys differ from the config's dataclasses")


# -- loading ------------------------------------------------------------------
def load_config(path: str | os.PathLike, overrides: Sequence[str] = (), *,
                trust_code: bool = False) -> Config:
    """Read a TOML run config and apply ``overrides`` (``"section.key=value"`` strings).

    Relative ``.efg`` paths in the file are resolved against the file's directory;
    those given in overrides against the working directory. ``module:Class`` games and
    abstractions in the file are refused unless ``trust_code`` (see the module
    docstring); their modules are imported here, found beside the file too.

    Raises:
      ConfigError: unreadable TOML, an unknown key, a wrong type or a bad value
        (the message names the key and the file, or the override), or a ``module:Class``
        string in the file without ``trust_code``.
      FileNotFoundError: no such file.
    """
    path = Path(path)
    raw = read_toml(path)
    _resolve_paths(raw, path.resolve().parent)
    raw.setdefault("name", path.stem)
    return config_from_dict(raw, source=str(path), overrides=overrides, trust_code=trust_code,
                            folder=path.resolve().parent)


def config_from_dict(raw: dict[str, Any], *, source: str = "<dict>",
                     overrides: Sequence[str] = (), trust_code: bool = True,
                     folder: str | os.PathLike | None = None) -> Config:
    """Validate a TOML-shaped dict (and apply ``overrides``) into a :class:`Config`.

    ``trust_code=False``: the dict was read from ``source``, a file (see :func:`load_config`);
    ``folder``: where ``module:Class`` modules are looked for besides the working directory.
    """
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    given: dict[str, str] = {}                     # key -> the --set that gave its value
    for text in overrides:
        key, value = parse_override(text)
        section, _, field = key.partition(".")
        where = f"--set {text}"
        given[key] = where
        if value is None:                          # KEY= : back to the default
            if section in _SECTIONS and field:
                _field_type(section, field, where)       # (an unknown key fails here)
                raw.get(section, {}).pop(field, None)
            elif key in _TOP_LEVEL:
                raw.pop(key, None)
            else:
                raise ConfigError(f"{where}: unknown key {key!r}"
                                  f"{_did_you_mean(key, _all_keys())}")
            continue
        if section in _SECTIONS and field:
            hint = _field_type(section, field, where)   # unknown keys fail here
            _coerce(value, hint, f"{where}: {key}")      # so do wrong types
            if section == "game" and field in ("name", "names"):
                raw.setdefault("game", {}).pop("names" if field == "name" else "name", None)
                if field == "names":                     # a batch of its own: no boards
                    raw["game"].pop("boards", None)
                value = _resolve_value(value, Path.cwd())
            raw.setdefault(section, {})[field] = value
        elif key in _TOP_LEVEL:
            raw[key] = value
        else:
            raise ConfigError(f"{where}: unknown key {key!r}{_did_you_mean(key, _all_keys())}; "
                              f"expected SECTION.KEY with SECTION one of {', '.join(_SECTIONS)}")
    if "game.name" in given:
        given["game.names"] = given["game.name"]
    elif "game.names" in given:
        given["game.name"] = given["game.names"]
    return _build(raw, source, given, trust_code=trust_code, folder=folder)


def parse_override(text: str) -> tuple[str, Any]:
    """``"solver.iterations=500"`` -> ``("solver.iterations", 500)``.

    The value is read as a TOML literal (``500``, ``1.5``, ``true``, ``[1, 2]``,
    ``"text"``); anything that is not one is taken as a plain string. Nothing after the
    ``=`` (``"run.stop_at="``) gives ``None``: the key goes back to its default (TOML has
    no null, so no value a config can hold is ``None``).
    """
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {text}: expected KEY=VALUE, e.g. solver.iterations=500")
    return read_override(text)


def _resolve_value(value: Any, base: Path) -> Any:
    if isinstance(value, list):
        return [_resolve_value(v, base) for v in value]
    if isinstance(value, str) and value.strip().lower().endswith(".efg"):
        p = Path(value.strip()).expanduser()
        return str(p if p.is_absolute() else (base / p).resolve())
    return value


def _resolve_paths(raw: dict[str, Any], base: Path) -> None:
    game = raw.get("game")
    if isinstance(game, dict):
        for k in ("name", "names"):
            if k in game:
                game[k] = _resolve_value(game[k], base)
    solver = raw.get("solver")
    if isinstance(solver, dict) and isinstance(solver.get("lock"), str):   # a lock file
        p = Path(solver["lock"].strip()).expanduser()
        solver["lock"] = str(p if p.is_absolute() else (base / p).resolve())


def _keys_of(section: str) -> list[str]:
    """The keys of ``[section]`` (the solver's: its fields and every parameter name)."""
    fields = [f.name for f in dataclasses.fields(_SECTIONS[section]) if f.name != "parameters"]
    return fields + (list(named_parameters()) if section == "solver" else [])


def _all_keys() -> list[str]:
    """Every key a config takes, dotted (``solver.iterations``)."""
    return list(_TOP_LEVEL) + [f"{section}.{key}" for section in _SECTIONS
                               for key in _keys_of(section)]


def _did_you_mean(key: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _field_type(section: str, key: str, where: str):
    cls = _SECTIONS[section]
    hints = typing.get_type_hints(cls)
    if section == "solver" and key in named_parameters():
        return _PARAMETER_TYPE
    if key not in hints or (section == "solver" and key == "parameters"):
        known = _keys_of(section)
        hint = _did_you_mean(key, known)
        hint = hint.replace("mean ", f"mean {section}.") if hint else ""
        fields = [k for k in known if k not in named_parameters()]
        extra = (f", and the parameters of the algorithms' parts: "
                 f"{', '.join(named_parameters())}" if section == "solver" else "")
        raise ConfigError(f"{where}: unknown key {section}.{key}{hint}; the keys of [{section}] "
                          f"are {', '.join(fields)}{extra}")
    return hints[key]


def _build(raw: dict[str, Any], source: str, given: dict[str, str] | None = None, *,
           trust_code: bool = True, folder: str | os.PathLike | None = None) -> Config:
    top: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"{source}: [{key}] must be a table, got {_type(value)}")
            kwargs, parameters = {}, []
            for field, v in value.items():
                hint = _field_type(key, field, source)
                coerced = _coerce(v, hint, f"{source}: {key}.{field}")
                if hint is _PARAMETER_TYPE:
                    parameters.append((field, coerced))
                else:
                    kwargs[field] = coerced
            if parameters:
                kwargs["parameters"] = tuple(parameters)
            sections[key] = _SECTIONS[key](**kwargs)
            if key == "solver":
                sections[key] = _in_declared_order(sections[key])
        elif key in _TOP_LEVEL:
            if not isinstance(value, str):
                raise ConfigError(f"{source}: {key} must be a string, got {_type(value)}")
            top[key] = value
        else:
            known = list(_TOP_LEVEL) + list(_SECTIONS)
            raise ConfigError(f"{source}: unknown key {key!r}"
                              f"{_did_you_mean(key, known + _all_keys())} (the top level takes "
                              f"{', '.join(known)})")
    if "game" not in sections:
        raise ConfigError(f"{source}: missing [game] section (set game.name)")
    config = with_lock_read(Config(**sections, **top, source=source))
    _check_boards(config, source, given or {})
    _check_code(config, source, given or {}, trust_code, folder)
    _check_values(config, source, given or {})
    return config


def _in_declared_order(s: SolverConfig) -> SolverConfig:
    """``s`` with its parameters in the order the solver's parts declare them (the order of
    a grid's axes and of the members' labels, whatever the file's order), if the solver
    can be made (else as written: the value checks report why)."""
    try:
        solver = make_solver(s.algorithm, estimator=make_estimator(s.sampling, s.samples,
                                                                   counts=s.counts))
    except (ArgumentError, ValueError, TypeError):
        return s
    names = [p.name for p in solver.parameters]
    key = lambda item: names.index(item[0]) if item[0] in names else len(names)  # noqa: E731
    return dataclasses.replace(s, parameters=tuple(sorted(s.parameters, key=key)))


def _check_boards(c: Config, source: str, given: dict[str, str]) -> None:
    """``game.boards``: with one ``game.name``, a hold'em spot, no abstraction; a spec
    or list of boards that :func:`~jaxcfr.runs.boards.board_members` reads."""
    g = c.game
    if g.boards is None:
        return
    from jaxcfr.runs.boards import BoardsError, board_members

    def fail(msg, key="game.boards"):
        raise ConfigError(f"{given.get(key, source)}: {key}: {msg}")
    if g.names is not None:
        fail("boards go with one game.name (the spot played on every board), not game.names")
    if g.abstraction is not None or g.bucketing is not None:
        fail("a stack of boards is solved on its public trees, without game.abstraction or "
             "game.bucketing")
    try:
        board_members(g.name, g.boards)
    except BoardsError as e:
        fail(str(e), e.key)


def _check_code(c: Config, source: str, given: dict[str, str], trust_code: bool,
                folder: str | os.PathLike | None) -> None:
    """Refuse ``module:Class`` strings the file gave unless ``trust_code``; import the
    modules of those allowed, looking in ``folder`` too (see :func:`load_config`)."""
    g = c.game
    strings = [("game.names" if g.names is not None else "game.name", s, "game")
               for s in g.strings if s is not None]
    for key in ("abstraction", "bucketing"):
        value = getattr(g, key)
        strings += [(f"game.{key}", a, key) for a in (value if isinstance(value, tuple)
                                                      else (value,)) if a is not None]
    for key, text, what in strings:
        try:
            if key not in given:
                check_trusted(text, "the config", trust_code, what=what)
            import_game_module(text, () if folder is None else (folder,),
                               what="game" if what == "game" else "abstraction")
        except GameError as e:
            raise ConfigError(f"{given.get(key, source)}: {key}: {e}") from None


def members_rules(c: Config, lengths: dict[str, int], fail) -> None:
    """``solver.combine = "members"``: a stack of games (``game.names``, ``game.boards``;
    public trees, checked once lowered), every list (``lengths``: each parameter's count
    of values) one value per member, no seeds."""
    g = c.game
    if (g.names is None and g.boards is None) or g.abstracted:
        fail("solver.combine", "'members' gives each member of a stack of public trees "
             "(game.names or game.boards) its own value: this run has one game")
    members = len(g.strings)
    wrong = [(name, n) for name, n in lengths.items() if n != members]
    if wrong:
        name, n = wrong[0]
        fail(f"solver.{name}", f"{n} value{'s' * (n != 1)}; solver.combine = 'members' "
             f"needs one value per member: lists of {members} values (the stack's members)")
    if c.run.seeds is not None:
        fail("run.seeds", "a batch of seeds does not combine with solver.combine = "
             "'members' (one setting per member)")


def lock_rules(c: Config, fail) -> None:
    """``solver.lock``: a readable lock file, one game, full width, the lowered tree (the
    rows themselves are checked against the game once it is lowered)."""
    from jaxcfr.api.locks import read_lock_file
    from jaxcfr.solvers.locking import LockError
    try:
        read_lock_file(c.solver.lock, data=c.lock_read_bytes())
    except LockError as e:
        fail("solver.lock", str(e))
    if c.game.batched and (c.game.abstracted or (c.game.names is None
                                                 and c.game.boards is None)):
        fail("solver.lock", "node locking takes one game or a stack of public trees "
             "(game.names, game.boards), not a batch of abstractions")
    if c.solver.sampling != "none":
        fail("solver.lock", f"node locking needs a full-width estimator (solver.sampling = "
             f"\"none\"), not {c.solver.sampling!r}")
    if c.solver.chance == "sampled":
        fail("solver.lock", "node locking needs the lowered tree, not sampled chance")


def check_config(config: Config) -> Config:
    """Check the values of a config built in Python (``load_config`` checks its own); the
    config with its lock file read (:func:`with_lock_read`)."""
    config = with_lock_read(config)
    _check_values(config, config.source or "<config>", {})
    return config


def with_lock_read(c: Config) -> Config:
    """``c`` with ``solver.lock``'s bytes read, once (``Config.lock_read``); as it was
    without a lock, when they are read already, or when the file cannot be read (the
    value checks say why)."""
    if c.solver.lock is None or c.lock_read_bytes() is not None:
        return c
    try:
        data = read_bytes(c.solver.lock)
    except OSError:
        return c
    return dataclasses.replace(c, lock_read=(c.solver.lock, data))


def _type(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a float", str: "a string",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    """Check ``value`` against a field's type; ints are accepted for floats."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    options = typing.get_args(hint) if union else (hint,)
    for opt in options:
        if opt is type(None):
            continue
        if typing.get_origin(opt) is tuple:
            item = typing.get_args(opt)[0]
            if isinstance(value, list) and value and all(_is(v, item) for v in value):
                return tuple(item(v) for v in value)
            continue
        if _is(value, opt):
            return opt(value)
    want = " or ".join(_describe(o) for o in options if o is not type(None))
    raise ConfigError(f"{where}: expected {want}, got {_type(value)} {value!r}")


def _is(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _describe(kind: Any) -> str:
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        return "a non-empty list of " + {bool: "booleans", int: "integers", float: "numbers",
                                         str: "strings"}[item]
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}[kind]


def _check_values(c: Config, source: str, given: dict[str, str]) -> None:
    """The value rules (:mod:`jaxcfr._util.arguments`); an error names the file or the ``--set``."""
    def fail(key, msg):
        raise ConfigError(f"{given.get(key, source)}: {key}: {msg}")

    def rule(key, check, *args):
        try:
            check(key, c.get(key) if "." in key else getattr(c, key), *args)
        except ArgumentError as e:
            raise ConfigError(f"{given.get(key, source)}: {e}") from None

    g, s, r = c.game, c.solver, c.run
    rule("name", plain_name)
    if (g.name is None) == (g.names is None):
        fail("game.name", "set exactly one of game.name (one game) and game.names (a batch)")
    if isinstance(g.abstraction, tuple) and g.names is not None:
        fail("game.abstraction", "a list of abstractions needs one game.name (each abstraction "
             "of it is a member of the batch); give one abstraction for game.names")
    for text in (g.abstraction if isinstance(g.abstraction, tuple) else (g.abstraction,)):
        if text is not None:
            try:
                load_abstraction(text)
            except GameError as e:
                fail("game.abstraction", str(e))
    _bucketing_rules(g, fail)
    try:
        resolve_algorithm(s.algorithm, "solver.algorithm")
    except ValueError as e:
        fail("solver.algorithm", str(e).replace("unknown solver.algorithm", "unknown algorithm"))
    rule("solver.iterations", positive_int)
    try:
        solver = c.make_solver()
        check_values(solver.part_parameters, s.given(), config_spelling, solver._owner())
    except ArgumentError as e:
        _raise_config(e, given, source)
    if s.combine not in ("product", "zip", "members"):
        fail("solver.combine", f"must be 'product', 'zip' or 'members', got {s.combine!r}")
    lengths = {len(v) for v in s.given().values() if isinstance(v, tuple)}
    if s.combine == "zip" and len(lengths) > 1:
        fail("solver.combine", f"'zip' needs hyper-parameter lists of one length, got "
             f"{sorted(lengths)}")
    if s.combine == "members":
        members_rules(c, {name: len(v) for name, v in s.given().items()
                          if isinstance(v, tuple)}, fail)
    for key in ("run.eval_every", "run.keep_checkpoints", "run.chunk"):
        rule(key, positive_int)
    rule("solver.draws", arguments.draws)
    if s.lock is not None:
        lock_rules(c, fail)
    rule("run.checkpoint_every", nonnegative_int)
    if r.stop_at is not None:
        rule("run.stop_at", positive_float)
    rule("run.precision", one_of, PRECISIONS)
    rule("solver.chance", one_of, CHANCE_CHOICES)
    rule("run.seed", arguments.seed)
    if r.seeds is not None:
        rule("run.seeds", arguments.seeds)
    if CHANCE_MODES[s.chance].always_samples:
        check_sampled_chance(c, given)
    if c.resolve is not None:
        resolve_rules(c, fail, rule)


def _bucketing_rules(g: GameConfig, fail) -> None:
    """``game.bucketing``: bucketings, one list at most, members that combine."""
    if g.bucketing is None:
        return
    if isinstance(g.bucketing, tuple) and g.names is not None:
        fail("game.bucketing", "a list of bucketings needs one game.name (each bucketing of it "
             "is a member of the batch); give one bucketing for game.names")
    if isinstance(g.bucketing, tuple) and isinstance(g.abstraction, tuple):
        fail("game.bucketing", "give a list of abstractions or a list of bucketings, not both")
    for text in (g.bucketing if isinstance(g.bucketing, tuple) else (g.bucketing,)):
        try:
            made = load_abstraction(text)
        except GameError as e:
            fail("game.bucketing", str(e))
        if not callable(getattr(made, "bucket", None)):
            fail("game.bucketing", f"{text!r} is not a bucketing (it has no bucket(player, "
                 "key) method; action abstractions go in game.abstraction)")
    for _, member in g.members:
        try:
            load_abstraction(member)
        except GameError as e:
            fail("game.bucketing", str(e))


def resolve_rules(config: Config, fail, rule) -> None:
    """The values of ``[resolve]`` (``fail(key, message)`` / ``rule(key, check)`` report)."""
    from jaxcfr.subgames.gadgets import GADGETS
    from jaxcfr.subgames.solving import BATCHING
    r, g = config.resolve, config.game
    rule("resolve.gadget", one_of, GADGETS)
    rule("resolve.batching", one_of, BATCHING)
    try:
        resolve_algorithm(r.algorithm)
    except ValueError as e:
        fail("resolve.algorithm", str(e))
    for key in ("resolve.iterations", "resolve.continuations"):
        rule(key, positive_int)
    for key in ("resolve.after_chance", "resolve.depth_limit"):
        if config.get(key) is not None:
            rule(key, positive_int)
    if r.at_depth is not None:
        rule("resolve.at_depth", nonnegative_int)
    named = [k for k in ("at", "after_chance", "at_depth") if getattr(r, k) is not None]
    named += ["off_abstraction"] if r.off_abstraction else []
    if len(named) != 1:
        fail("resolve.at", "name the subgames one way: at (paths), after_chance, at_depth or "
             f"off_abstraction = true (got {', '.join(named) or 'none'})")
    if g.batched:
        fail("resolve", "re-solving takes one trained game (no batches of games or "
             "abstractions)")
    if r.off_abstraction and g.abstraction is None:
        fail("resolve.off_abstraction", "needs game.abstraction (the subgames after the actions "
             "it dropped are re-solved in the full game)")
    if CHANCE_MODES[config.solver.chance].always_samples:
        fail("resolve", "re-solving needs the lowered game (solver.chance = \"sampled\" "
             "trains without it)")


def _raise_config(e: ArgumentError, given: dict[str, str], source: str):
    """An argument rule's error as the config's, naming the file or the ``--set``."""
    raise ConfigError(f"{given.get(e.argument, source)}: {e}") from None


def check_sampled_chance(config: Config, given: dict[str, str] | None = None,
                         because: str = "") -> None:
    """:func:`~jaxcfr.engine.chance.sampled_chance_rules` for ``config`` (checked
    for ``solver.chance = "sampled"`` when the config is read, and when ``auto`` turns out
    to sample, ``because`` saying so); a conflict is a :class:`ConfigError` naming the key."""
    s, g, r = config.solver, config.game, config.run
    try:
        sampled_chance_rules(
            config_spelling, estimator=config.estimator(), seeds=r.seeds,
            parameters=s.hyperparams(),
            games=g.names is not None,
            abstraction=g.abstraction if g.abstraction is not None else g.bucketing,
            because=because)
    except ArgumentError as e:
        _raise_config(e, given or {}, config.source or "<config>")


# -- writing ------------------------------------------------------------------
def to_toml(config: Config) -> str:
    """The config as TOML text that :func:`load_config` reads back to an equal config."""
    d = config.to_dict()
    lines = []
    for key in ("name", "description"):
        if key in d:
            lines.append(f"{key} = {_toml_value(d[key])}")
    for section in ("game", "solver", "run", "resolve"):
        if section not in d:
            continue
        lines.append("")
        lines.append(f"[{section}]")
        for k, v in d[section].items():
            lines.append(f"{k} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def _toml_value(v: Any) -> str:
    import json
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)          # a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")
