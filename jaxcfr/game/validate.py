"""Random-trajectory probe of the Game contract (the exhaustive check is in lowering).

Example::

    >>> import jaxcfr
    >>> jaxcfr.validate(jaxcfr.load_game("kuhn_poker"))   # returns None, or raises GameError
"""

from __future__ import annotations

import random
from typing import Any

from jaxcfr.game import contract
from jaxcfr.game.contract import (CHANCE_NODE, DECISION, TERMINAL_NODE, GameError,
                             check_clone_independent, check_protocol,
                             check_terminal_step_refused, game_exception, hashable_key,
                             inspect_node, player_to_act_consistent, real_number)

__all__ = ["validate", "validate_game_with", "DEFAULT_TRAJECTORIES"]

DEFAULT_TRAJECTORIES = 256


def validate(game) -> None:
    """Probe ``game`` on 256 seeded random trajectories; raise GameError on a violation."""
    validate_game_with(game, trajectories=DEFAULT_TRAJECTORIES, seed=0)


def validate_game_with(game, *, trajectories: int = DEFAULT_TRAJECTORIES,
                       seed: int = 0) -> None:
    """Walk ``trajectories`` random root-to-leaf paths and check every rule on the way.

    Checks node types, terminal returns (numbers, the same on every call) and refused
    ``step``, chance probabilities, decision-node action lists (hashable, no duplicates),
    information-set keys (hashable, equal to themselves), that every history sharing an
    information-set key reports the same ordered legal actions, and that stepping a
    clone leaves the original untouched. An exception the game itself raises is reported
    as ``game-exception``. It is a probe, not a proof: :func:`jaxcfr.lower` checks every
    node, and perfect recall in the strong sense.

    Raises:
      GameError: naming the rule broken and the history (action path) where.
    """
    num_players = check_protocol(game)
    history: list[Any] = []
    try:
        _probe(game, num_players, trajectories, seed, history)
    except GameError:
        raise
    except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule and history
        err = game_exception(exc, tuple(history))
        if err is None:
            raise
        raise err from exc


def _probe(game, num_players: int, trajectories: int, seed: int, history: list) -> None:
    """The trajectories of :func:`validate_game_with`; ``history`` is the current path."""
    rng = random.Random(seed)
    seen: dict[tuple[int, Any], tuple[tuple, tuple]] = {}  # (player, key) -> (actions, history)
    for _ in range(trajectories):
        state = game.clone()
        history.clear()
        while True:
            info = inspect_node(state, num_players, history)
            player_to_act_consistent(state, info, history)
            if info.kind == TERMINAL_NODE:
                check_terminal_step_refused(state, history)
                break
            if info.kind == DECISION:
                key = hashable_key(state.infoset_key(info.player), history, info.player)
                first = seen.setdefault((info.player, key), (info.actions, tuple(history)))
                if first[0] != info.actions:
                    raise GameError(
                        f"legal actions {list(info.actions)} differ from {list(first[0])} "
                        f"at history {first[1]!r} in the same information set",
                        rule="infoset-actions", history=history, infoset=key)
                action = rng.choice(info.actions)
            elif info.kind == CHANCE_NODE and info.probs is not None:
                action = rng.choices(info.actions, weights=info.probs)[0]
            else:
                try:
                    action, prob = state.sample_chance(rng)
                except GameError as e:
                    raise e.with_context(history=history)
                p = real_number(prob)
                if p is None or not 0.0 < p <= 1.0:
                    raise GameError(f"sample_chance() returned probability {prob} "
                                    "(must be in (0, 1])", rule="chance-probability",
                                    history=history)
            try:
                check_clone_independent(state, info, action, num_players, history)
                state.step(action)
            except GameError as e:
                raise e.with_context(history=history)
            history.append(action)
            if len(history) > contract.MAX_TRAJECTORY_LENGTH:
                raise GameError(f"trajectory longer than {contract.MAX_TRAJECTORY_LENGTH} moves",
                                rule="termination", history=history[:20])
