"""How a run treats chance: the chance modes, objects as estimators are.

* :class:`ExactChance` lowers the whole tree (chance enumerated by the lowered game);
* :class:`SampledChance` has the host draw chance each iteration and lower what follows
  (:class:`jaxcfr.engine.sampled_chance.SampledChanceRunner`), and lowers the full game
  too, for exact metrics, where it can;
* :class:`AutoChance` lowers where chance can be enumerated and samples where it cannot.

Each mode decides for itself, from the game, whether the run is exact or sampled
(:meth:`ChanceMode.choose`): an exact solve never enters the sampled-chance room. Names
are the user's spelling only (``chance="sampled"``, ``--chance``, ``solver.chance``):
:func:`chance_mode` turns one into its object once, at the boundary (:data:`CHANCE_MODES`,
the one table of them). What sampled chance cannot be combined with is
:func:`sampled_chance_rules`, checked when the options are (a mode that always samples)
or once the game says a run samples (:meth:`ChanceMode.when_sampling`).

Example::

    >>> import jaxcfr
    >>> jaxcfr.Chance("sampled", draws=64)
    SampledChance(draws=64, workers=1)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, ClassVar

from jaxcfr._util import arguments
from jaxcfr._util.arguments import ArgumentError
from jaxcfr.engine.loop import lower_reporting
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import load_game
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.solvers.estimators import Estimator, Exact
from jaxcfr.solvers.parameters import single_setting
from jaxcfr.tensors import LoweredGame
from jaxcfr.engine import chance_options
from jaxcfr.engine.chance_options import DEFAULT_DRAWS   # chance samples per iteration

__all__ = ["ChanceMode", "ExactChance", "SampledChance", "AutoChance", "CHANCE_MODES",
           "CHANCE_CHOICES", "Chance", "chance_mode", "choose_chance", "sampled_chance_rules",
           "AUTO_SAMPLES", "DEFAULT_DRAWS"]

#: Why a run whose chance mode is ``auto`` samples (the end of its rules' messages).
AUTO_SAMPLES = "the game's chance is sampled: it cannot be enumerated"


@dataclasses.dataclass(frozen=True)
class ChanceMode:
    """How a run treats chance (a frozen value; subclasses are the modes).

    Attributes:
      draws: chance samples per iteration where the run samples chance.
      workers: processes lowering the draws the cache does not hold (1: the host thread).
    """
    draws: int = DEFAULT_DRAWS
    workers: int = 1
    #: The mode's name where users spell it (``chance="sampled"``, ``--chance``).
    name: ClassVar[str] = ""
    #: Every run of this mode samples chance: its rules are checked with the options.
    always_samples: ClassVar[bool] = False

    def choose(self, game, status=None, **lower_kwargs) -> tuple[LoweredGame | None, Any]:
        """How to train ``game``: ``(lowered, sampled)``.

        ``sampled`` is ``None`` for full-width training of ``lowered``; otherwise it is the
        game (root state) the host samples, and ``lowered`` the full game for exact
        evaluation or ``None`` (chance cannot be enumerated, or the full game is over the
        memory budget: the metrics are then estimates). ``game``: a game string, a Game
        or a LoweredGame; ``status`` and ``lower_kwargs``: as
        :func:`jaxcfr.engine.loop.lower_reporting`.
        """
        raise NotImplementedError

    def when_sampling(self, check: Callable[[str], None]) -> None:
        """The game turned out to be sampled: ``check(because)`` the sampled-chance rules
        if they were not checked with the options (``because`` says why it samples)."""


def _lower_unless_not_enumerable(game, status, lower_kwargs):
    """``(game lowered, None)`` (a LoweredGame as it is), or ``(None, the GameError)`` where
    its chance cannot be enumerated; any other error is raised."""
    if isinstance(game, LoweredGame):
        return game, None
    try:
        return lower_reporting(game, status, **lower_kwargs), None
    except GameError as e:
        if e.rule != "chance-not-enumerable":
            raise
        return None, e


@dataclasses.dataclass(frozen=True)
class ExactChance(ChanceMode):
    """Lower the whole tree: a game whose chance cannot be enumerated is an error."""
    name: ClassVar[str] = "exact"

    def choose(self, game, status=None, **lower_kwargs):
        lowered, e = _lower_unless_not_enumerable(game, status, lower_kwargs)
        if e is None:
            return lowered, None
        raise GameError(e.detail + "; sampled chance trains such a game (chance \"auto\" "
                        "or \"sampled\")", rule=e.rule, history=e.history,
                        infoset=e.infoset) from None


@dataclasses.dataclass(frozen=True)
class AutoChance(ChanceMode):
    """Lower where chance can be enumerated, sample where it cannot."""
    name: ClassVar[str] = "auto"

    def choose(self, game, status=None, **lower_kwargs):
        lowered, e = _lower_unless_not_enumerable(game, status, lower_kwargs)
        if e is None:
            return lowered, None
        return _not_enumerable(status), _root(game)

    def when_sampling(self, check):
        check(AUTO_SAMPLES)


@dataclasses.dataclass(frozen=True)
class SampledChance(ChanceMode):
    """The host draws chance and lowers what follows; the full game is lowered too, for
    exact metrics, where it can be (else the metrics are estimates)."""
    name: ClassVar[str] = "sampled"
    always_samples: ClassVar[bool] = True

    def choose(self, game, status=None, **lower_kwargs):
        if isinstance(game, LoweredGame):
            raise ArgumentError(
                "sampled chance needs the game itself (a game string or a Game), not a "
                "lowered game: the host draws its chance")
        try:
            lowered = lower_reporting(game, status, **lower_kwargs)
        except MemoryBudgetError:
            lowered = None                      # too large for exact metrics: estimates
        except GameError as e:
            if e.rule != "chance-not-enumerable":
                raise
            lowered = _not_enumerable(status)
        return lowered, _root(game)


def _not_enumerable(status) -> None:
    if status is not None:
        status.end("chance cannot be enumerated: the host samples it")
    return None


def _root(game):
    """The game the host samples: a game string loaded, a Game itself."""
    return load_game(os.fspath(game)) if isinstance(game, (str, os.PathLike)) else game


#: Chance mode name -> class: the one table of chance mode names (``chance=``,
#: ``--chance``, ``solver.chance``).
CHANCE_MODES: dict[str, type[ChanceMode]] = {
    "auto": AutoChance, "exact": ExactChance, "sampled": SampledChance}
#: The names users may give.
CHANCE_CHOICES = tuple(CHANCE_MODES)
# the command line reads the names without JAX (chance_options): the two lists are one
assert CHANCE_CHOICES == chance_options.CHANCE_CHOICES, (CHANCE_CHOICES,
                                                         chance_options.CHANCE_CHOICES)


def Chance(mode: str = "auto", draws: int = DEFAULT_DRAWS,  # noqa: N802 - a mode's spelling
           workers: int = 1) -> ChanceMode:
    """The chance mode named ``mode`` with its options (``jaxcfr.Chance("sampled",
    draws=64)``), unchecked: :func:`chance_mode` checks it where a run is set up."""
    cls = CHANCE_MODES.get(mode) if isinstance(mode, str) else None
    if cls is None:
        raise ArgumentError(f"unknown chance mode {mode!r}; choose one of "
                            f"{', '.join(CHANCE_CHOICES)}", argument="chance")
    return cls(draws, workers)


def chance_mode(chance: str | ChanceMode, *, draws=None, spell=str) -> ChanceMode:
    """A :class:`ChanceMode` from a name or a mode (``draws``: its thin spelling), checked;
    errors name the arguments as ``spell`` renders them."""
    if isinstance(chance, ChanceMode):
        if draws is not None and draws != chance.draws:
            raise ArgumentError(f"give {spell('draws')} in the chance mode or alone, not "
                                "both", argument=spell("draws"))
        out = chance
    else:
        name = arguments.one_of(spell("chance"), chance, CHANCE_CHOICES)
        out = CHANCE_MODES[name](DEFAULT_DRAWS if draws is None else draws)
    arguments.draws(spell("draws"), out.draws)
    arguments.positive_int(spell("workers"), out.workers)
    return out


def choose_chance(game, chance: str | ChanceMode = "auto", status=None, **lower_kwargs
                  ) -> tuple[LoweredGame | None, Any]:
    """:meth:`ChanceMode.choose` of the mode ``chance`` (a name or a mode)."""
    return chance_mode(chance).choose(game, status, **lower_kwargs)


def sampled_chance_rules(spell=str, *, estimator: Estimator | None = None, seeds=None,
                         parameters=None, games: bool = False,
                         abstraction=None, because: str = "") -> None:
    """What sampled chance cannot be combined with: the one statement of these rules, for
    every entry point (``jaxcfr.solve``, configs, the command line), checked when the mode
    always samples and again when ``auto`` turns out to sample (``because`` then says
    why, e.g. :data:`AUTO_SAMPLES`). ``parameters``: the run's parameter values (one
    setting: no lists); ``seeds``: a config's ``run.seeds``.

    Raises :class:`ArgumentError` naming the first conflicting argument as ``spell``
    renders it (``sampling``, ``--sampling``, ``solver.sampling``).
    """
    def fail(argument: str, message: str):
        raise ArgumentError(message + (f" ({because})" if because else ""),
                            argument=spell(argument))
    if estimator is not None and not isinstance(estimator, Exact):
        fail("sampling", f"sampled chance is chance-sampled CFR already: {spell('sampling')} "
             f"must be none, got {estimator.name!r} (Monte Carlo estimators run on the "
             f"lowered tree, with {spell('chance')} exact)")
    if seeds is not None:
        fail("seeds", f"sampled chance runs one seed at a time: give {spell('seed')}, not "
             f"{spell('seeds')}")
    single_setting(parameters or {}, spell, "sampled chance", because)
    if games:
        fail("games", f"sampled chance trains one game at a time: no batch of games "
             f"({spell('games')})")
    if abstraction is not None:
        fail("abstraction", f"sampled chance does not take {spell('abstraction')} yet")
