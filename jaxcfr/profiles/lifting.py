"""Lifting: a profile of an abstracted game as a profile of the full game.

:func:`lift` maps a profile of an abstracted game (:class:`jaxcfr.Abstracted`) onto
every information set of the full game: dropped actions get zero mass, kept ones are
renormalised, and an information set whose kept actions carry no mass, or that the
abstracted game never reaches, is uniform over all its real legal actions.
:func:`lifted_row` lifts and evaluates exactly in the full game.

Example::

    >>> import jaxcfr
    >>> small = jaxcfr.Abstracted(jaxcfr.load_game("nolimit_leduc"),
    ...                           jaxcfr.load_abstraction("bet_menu(fractions=[1.0])"))
    >>> profile = jaxcfr.solve(small, "cfr+", 100).profile
    >>> full = jaxcfr.lift(profile, "nolimit_leduc")      # every real information set
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxcfr._util.serialize import jsonable
from jaxcfr.solvers.analytics import evaluate
from jaxcfr.game.abstraction import Abstracted, check_abstraction
from jaxcfr.game.registry import load_abstraction
from jaxcfr.lowering.lower import as_lowered
from jaxcfr.profiles.profile import Profile
from jaxcfr.tensors import LoweredGame

__all__ = ["lift", "lift_table", "lifted_row", "as_abstraction"]


def as_abstraction(abstraction: Any):
    """An abstraction object from an object or an abstraction string (:func:`load_abstraction`)."""
    if isinstance(abstraction, str):
        return load_abstraction(abstraction)
    return check_abstraction(abstraction)


def lift_table(profile: Profile, full: LoweredGame) -> tuple[np.ndarray, dict[str, int]]:
    """The lifted ``[I, A]`` strategy table of ``full`` and the row counts.

    Returns:
      ``(table, counts)``; ``counts`` = ``{"rows", "found", "missing"}``: information
      sets of the full game, those the profile has, and those it lacks (played uniformly).
    Raises:
      ValueError: the profile has information sets or actions the full game does not
        have (it is not a profile of an abstraction of this game).
    """
    if full.batch_size is not None:
        raise ValueError("lift() takes a single full game, not a stack")
    table, counts = profile.table(full)                     # Profile.distribution maps rows
    if counts["found"] != len(profile):
        known = set(full.infoset_keys)
        stray = next(k for k in profile.keys if k not in known)
        raise ValueError(f"the profile has {len(profile) - counts['found']} information set(s) "
                         f"the full game {full.name!r} does not have, e.g. player {stray[0]}'s "
                         f"{stray[1]!r}: it is not a profile of this game or an abstraction of it")
    return table, counts


def lift(profile: Profile, full_game) -> Profile:
    """A profile of the full game from a profile of an abstraction of it (README, "Action
    abstraction").

    Args:
      profile: e.g. ``jaxcfr.solve(lower(Abstracted(game, abstraction))).profile``,
        keyed by the abstracted action order.
      full_game: the full game: a game string, a Game or its LoweredGame (not an
        ``Abstracted`` one).
    Returns:
      A :class:`Profile` over every information set of the full game, in its legal
      action order: dropped actions 0, kept ones renormalised, uniform over all real
      legal actions where the kept ones carry no mass or the profile has no row.
    """
    if isinstance(full_game, Abstracted):
        raise ValueError("lift() needs the full game, not an Abstracted one "
                         "(pass Abstracted.game)")
    full = as_lowered(full_game)
    table, _ = lift_table(profile, full)
    return Profile.from_lowered(full, table)


def lifted_row(profile: Profile, small: LoweredGame, full: LoweredGame, *, abstraction: str,
               abstract_metric=None, precision: str = "float32"
               ) -> tuple[np.ndarray, dict[str, Any]]:
    """Lift ``profile`` (of ``small``, an abstraction of ``full``) and evaluate it exactly.

    Returns:
      ``(table, row)``: the lifted ``[I, A]`` table of ``full`` and the JSON row of
      :func:`format_table` / ``abstraction.json``: ``abstraction``, ``game`` (the full
      game's name), ``histories``, ``infosets``, ``max_actions`` (of the abstracted
      game), ``full_histories``, ``full_infosets``, ``full_max_actions``,
      ``unreached_infosets`` (played uniformly), ``metric_name``, ``abstract_metric``
      (inside the abstraction, as given), ``full_game_metric`` and ``full_game`` (every
      metric of :func:`jaxcfr.evaluate` for the lifted profile).
    """
    table, counts = lift_table(profile, full)
    metrics = jsonable(evaluate(full, table, dtype=precision))
    row = {"abstraction": abstraction, "game": full.name, "histories": small.num_nodes,
           "infosets": sum(small.infosets_per_player), "max_actions": small.max_actions,
           "full_histories": full.num_nodes, "full_infosets": counts["rows"],
           "full_max_actions": full.max_actions, "unreached_infosets": counts["missing"],
           "metric_name": metrics["metric_name"], "abstract_metric": abstract_metric,
           "full_game_metric": metrics["metric"], "full_game": metrics}
    return table, row
