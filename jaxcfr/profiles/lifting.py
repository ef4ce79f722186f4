"""Lifting: a profile of an abstracted game as a profile of the full game.

:func:`lift` maps a profile of an abstracted game onto every information set of the
full game, by one of two rules:

* *elimination* (the seed's rule, the only one for abstractions without
  ``translate``): dropped actions get zero mass, kept ones are renormalised, and an
  information set whose kept actions carry no mass, or that the abstracted game
  never reaches, is uniform over all its real legal actions;
* *translation* (``translate=True``, the default for abstractions that define
  ``translate``): an information set reached through dropped actions plays the
  strategy of the information set(s) its histories translate to, mixed by the
  translation probabilities (:mod:`jaxcfr.profiles.translation`).

A profile of a bucketed game (:class:`jaxcfr.Bucketed`) is lifted the same way,
``bucketing=`` (or an abstraction object that is a bucketing) saying which bucket
each real information set plays. :func:`lifted_row` lifts and evaluates exactly in
the full game, by both rules where both exist.

Example::

    >>> import jaxcfr
    >>> menu = jaxcfr.load_abstraction("bet_menu(fractions=[1.0])")
    >>> small = jaxcfr.Abstracted(jaxcfr.load_game("nolimit_leduc"), menu)
    >>> profile = jaxcfr.solve(small, "cfr+", 100).profile
    >>> full = jaxcfr.lift(profile, "nolimit_leduc", abstraction=menu)   # translated
    >>> seed = jaxcfr.lift(profile, "nolimit_leduc")                     # eliminated
    >>> leduc = jaxcfr.Bucketed(jaxcfr.load_game("leduc_poker"), jaxcfr.load_abstraction(
    ...     "suit_isomorphism"))
    >>> jaxcfr.lift(jaxcfr.solve(leduc, "cfr+", 100).profile, "leduc_poker",
    ...             bucketing="suit_isomorphism")                        # every real row
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from jaxcfr._util.serialize import jsonable
from jaxcfr.game.abstraction import Abstracted, check_abstraction, has_translate
from jaxcfr.game.bucketing import (Bucketed, Composite, check_bucketing, is_action_abstraction,
                                   is_bucketing)
from jaxcfr.game.registry import load_abstraction, load_game
from jaxcfr.lowering.lower import as_lowered
from jaxcfr.profiles.profile import Profile
from jaxcfr.profiles.translation import translated_table
from jaxcfr.solvers.analytics import evaluate
from jaxcfr.tensors import LoweredGame

__all__ = ["lift", "lift_table", "lifted_row", "as_abstraction", "lift_parts"]


def as_abstraction(abstraction: Any):
    """An abstraction object from an object or an abstraction string (:func:`load_abstraction`):
    an action abstraction, a bucketing, or both."""
    if isinstance(abstraction, str):
        return load_abstraction(abstraction)
    if is_bucketing(abstraction) and not is_action_abstraction(abstraction):
        return abstraction
    return check_abstraction(abstraction)


def lift_parts(abstraction: Any = None, bucketing: Any = None,
               translate: bool | None = None) -> tuple[Any, Any, bool]:
    """``(action abstraction or None, bucketing or None, translate)`` from :func:`lift`'s
    arguments (objects or strings; an abstraction that is a bucketing, or both, counts
    as such).

    Raises:
      ValueError: ``translate=True`` without an action abstraction that defines
        ``translate``, or two bucketings.
    """
    actions = None
    if abstraction is not None:
        abstraction = as_abstraction(abstraction)
        if isinstance(abstraction, Composite):
            actions = abstraction.action_abstraction
        elif is_action_abstraction(abstraction):
            actions = abstraction
        if is_bucketing(abstraction):
            if bucketing is not None:
                raise ValueError("lift() got two bucketings: the abstraction is one, and "
                                 "bucketing= another")
            bucketing = abstraction
    if isinstance(bucketing, str):
        bucketing = as_abstraction(bucketing)
    if bucketing is not None:
        check_bucketing(bucketing)
    can = actions is not None and has_translate(actions)
    if translate is None:
        translate = can
    elif translate and not can:
        raise ValueError("translate=True needs an action abstraction that defines "
                         f"translate(state, player, action); got {actions!r}" if actions is not
                         None else "translate=True needs the action abstraction "
                         "(abstraction=...)")
    return actions, bucketing, bool(translate)


def lift_table(profile: Profile, full: LoweredGame, *, abstraction: Any = None,
               bucketing: Any = None, translate: bool | None = None, game: Any = None
               ) -> tuple[np.ndarray, dict[str, int]]:
    """The lifted ``[I, A]`` strategy table of ``full`` and the row counts.

    Args:
      profile, abstraction, bucketing, translate: as :func:`lift`.
      full: the full game, lowered.
      game: the full game's root state (translation steps it); default
        ``load_game(full.name)``.
    Returns:
      ``(table, counts)``; ``counts`` = ``{"rows", "found", "translated", "missing"}``:
      information sets of the full game, those whose key (or bucket) the profile has,
      those that play a translated strategy, and those played uniformly.
    Raises:
      ValueError: the profile has information sets (or buckets) that the full game
        does not have (it is not a profile of an abstraction of this game).
      GameError: a translation or abstraction rule broken, naming the history.
    """
    if full.batch_size is not None:
        raise ValueError("lift() takes a single full game, not a stack")
    actions, bucketing, translate = lift_parts(abstraction, bucketing, translate)
    key_of = (lambda player, key: key) if bucketing is None else bucketing.bucket
    _check_keys(profile, full, key_of, bucketing)
    if translate:
        if game is None:
            game = _game_of(full)
        return translated_table(profile, full, game, actions, key_of=key_of)
    mask = np.asarray(full.tensors.legal_mask)
    table = mask / mask.sum(axis=1, keepdims=True)                   # uniform
    found = 0
    for r, (player, key) in enumerate(full.infoset_keys):
        k = key_of(player, key)
        if profile.row(player, k) is None:
            continue
        p = profile.distribution(player, k, tuple(full.infoset_actions[r]))
        table[r] = 0.0
        table[r, :len(p)] = p
        found += 1
    rows = len(full.infoset_keys)
    return table, {"rows": rows, "found": found, "translated": 0, "missing": rows - found}


def _check_keys(profile: Profile, full: LoweredGame, key_of, bucketing) -> None:
    known = {(p, key_of(p, k)) for p, k in full.infoset_keys}
    stray = [k for k in profile.keys if k not in known]
    if stray:
        what = "bucket(s)" if bucketing is not None else "information set(s)"
        hint = "" if bucketing is not None else (
            " (a profile of a bucketed game needs bucketing=)")
        raise ValueError(f"the profile has {len(stray)} {what} the full game {full.name!r} "
                         f"does not have, e.g. player {stray[0][0]}'s {stray[0][1]!r}: it is "
                         f"not a profile of this game or an abstraction of it{hint}")


def _game_of(full: LoweredGame):
    try:
        return load_game(full.name)
    except Exception as e:  # noqa: BLE001 - any failure: say what to pass
        raise ValueError(f"lifting with translation steps the full game's states, and "
                         f"{full.name!r} does not load as a game string ({e}): pass the game "
                         "itself (a Game or a game string), not its LoweredGame") from None


def lift(profile: Profile, full_game, *, abstraction: Any = None, bucketing: Any = None,
         translate: bool | None = None) -> Profile:
    """A profile of the full game from a profile of an abstraction of it (README, "Action
    abstraction").

    Args:
      profile: e.g. ``jaxcfr.solve(Abstracted(game, abstraction)).profile``, keyed by
        the abstracted action order (or by bucket, for a bucketed game).
      full_game: the full game: a game string, a Game or its LoweredGame (not an
        ``Abstracted`` or ``Bucketed`` one; translation needs the game itself, or a
        LoweredGame whose name is its game string).
      abstraction: the action abstraction the profile was trained on (an object or its
        string), needed to translate; a bucketing (or ``"A + B"``) counts as
        ``bucketing=``.
      bucketing: the bucketing the profile was trained on (an object or its string):
        every real information set plays its bucket's strategy.
      translate: ``True`` lifts by translation, ``False`` by elimination; ``None``
        (default): translation when the abstraction defines ``translate``.
    Returns:
      A :class:`Profile` over every information set of the full game, in its legal
      action order.
    """
    if isinstance(full_game, (Abstracted, Bucketed)):
        raise ValueError("lift() needs the full game, not an abstracted or bucketed one "
                         "(pass its .game)")
    full = as_lowered(full_game)
    game = None
    if isinstance(full_game, (str, os.PathLike)):
        game = load_game(full_game)
    elif not isinstance(full_game, LoweredGame):
        game = full_game
    table, _ = lift_table(profile, full, abstraction=abstraction, bucketing=bucketing,
                          translate=translate, game=game)
    return Profile.from_lowered(full, table)


def lifted_row(profile: Profile, small: LoweredGame, full: LoweredGame, *, abstraction: str,
               abstract_metric=None, precision: str = "float32", spec: Any = None,
               game: Any = None, imperfect_recall: bool | None = None,
               translate: bool | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Lift ``profile`` (of ``small``, an abstraction of ``full``) and evaluate it exactly.

    Args:
      abstraction: the abstraction's label (its string).
      spec: the abstraction object (action abstraction, bucketing or both); default
        ``load_abstraction(abstraction)`` when that parses, else elimination only.
      game: the full game's root state (for translation; default
        ``load_game(full.name)``).
      imperfect_recall: whether the bucketed game was trained with imperfect recall
        (recorded in the row; default: what the bucketing declares).
      translate: ``None``: by translation where the abstraction defines it (and by
        elimination too, for the row); ``False``: by elimination only.
    Returns:
      ``(table, row)``: the lifted ``[I, A]`` table of ``full`` by the default rule
      (translation where the abstraction defines it, else elimination) and the JSON
      row of :func:`format_table` / ``abstraction.json``: ``abstraction``, ``game``
      (the full game's name), ``histories``, ``infosets``, ``max_actions`` (of the
      abstracted game), ``full_histories``, ``full_infosets``, ``full_max_actions``,
      ``unreached_infosets`` (played uniformly), ``translated_infosets``,
      ``metric_name``, ``abstract_metric`` (inside the abstraction, as given),
      ``full_game_metric`` and ``full_game`` (every metric of :func:`jaxcfr.evaluate`
      for the lifted profile), ``rule`` (``"translation"`` or ``"elimination"``),
      ``elimination_metric`` and ``translation_metric`` (``None`` where there is no
      translation), ``imperfect_recall``.
    """
    if spec is None:
        try:
            spec = as_abstraction(abstraction)
        except Exception:  # noqa: BLE001 - a label that is no string of an abstraction
            spec = None
    actions, bucketing, translate = lift_parts(spec, translate=translate) \
        if spec is not None else (None, None, False)
    options = {"abstraction": actions, "bucketing": bucketing}
    by_rule = {}
    for rule in (["elimination", "translation"] if translate else ["elimination"]):
        table, counts = lift_table(profile, full, translate=rule == "translation",
                                   game=game, **options)
        by_rule[rule] = (table, counts, jsonable(evaluate(full, table, dtype=precision)))
    rule = "translation" if translate else "elimination"
    table, counts, metrics = by_rule[rule]
    row = {"abstraction": abstraction, "game": full.name, "histories": small.num_nodes,
           "infosets": sum(small.infosets_per_player), "max_actions": small.max_actions,
           "full_histories": full.num_nodes, "full_infosets": counts["rows"],
           "full_max_actions": full.max_actions, "unreached_infosets": counts["missing"],
           "translated_infosets": counts["translated"],
           "metric_name": metrics["metric_name"], "abstract_metric": abstract_metric,
           "full_game_metric": metrics["metric"], "full_game": metrics, "rule": rule,
           "elimination_metric": by_rule["elimination"][2]["metric"],
           "translation_metric": by_rule["translation"][2]["metric"] if translate else None,
           "imperfect_recall": bool(getattr(bucketing, "imperfect_recall", False)
                                    if imperfect_recall is None else imperfect_recall)}
    return table, row
