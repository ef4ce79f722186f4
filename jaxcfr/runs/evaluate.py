"""Exact metrics of a saved :class:`~jaxcfr.Profile` on a game (``jaxcfr eval``).

Example::

    >>> from jaxcfr import Profile
    >>> from jaxcfr.runs import evaluate_profile
    >>> evaluate_profile(Profile.load("runs/kuhn/profile.npz"), "kuhn_poker")["exploitability"]
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxcfr.engine import Runner
from jaxcfr.game import Game
from jaxcfr.lowering import LoweredGame, lower
from jaxcfr.profile import Profile
from jaxcfr.registry import load_game
from jaxcfr.solvers import SolverState, cfr_plus

__all__ = ["evaluate_profile"]


def evaluate_profile(profile: Profile, game: str | Game | LoweredGame | None = None, *,
                     precision: str = "float32") -> dict[str, Any]:
    """Values, best-response values, NashConv / exploitability of ``profile`` in ``game``.

    Information sets the profile does not have play uniformly (``missing`` counts them).

    Args:
      game: a game string, Game or LoweredGame; default: the profile's recorded game.
    Returns:
      A dict like :meth:`jaxcfr.Runner.evaluate`'s (``values [P]``,
      ``best_response_values [P]``, ``nash_conv``, ``exploitability``, ``metric``,
      ``metric_name``) plus ``rows``, ``found``, ``missing`` and ``game``.
    """
    if game is None:
        if not profile.game:
            raise ValueError("the profile records no game: name the game to evaluate it on")
        game = profile.game
    name = game if isinstance(game, str) else getattr(game, "name", "") or type(game).__name__
    if isinstance(game, str):
        game = load_game(game)
    lowered = game if isinstance(game, LoweredGame) else lower(game, name=name)
    table, counts = profile.table(lowered)
    # The evaluation reads the *average* strategy: a state whose strategy sums are the
    # (already normalised) table evaluates exactly that table. Any solver would do;
    # CFR+ (the default algorithm) shares its compiled evaluation with CFR+ runs.
    runner = Runner(lowered, cfr_plus(), precision=precision)
    zeros = jnp.zeros(table.shape, runner.dtype)
    state = SolverState(zeros, jnp.asarray(table, runner.dtype), zeros,
                        jnp.zeros((), jnp.int32))
    out = runner.evaluate(state)
    out = {k: (v.tolist() if isinstance(v, np.ndarray) and v.ndim else
               (float(v) if isinstance(v, np.ndarray) else v)) for k, v in out.items()}
    out.update(counts)
    out["game"] = name
    return out
