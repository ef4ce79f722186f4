"""Random-trajectory probe of the Game contract (the exhaustive check is in lowering).

Example::

    >>> import jaxcfr
    >>> jaxcfr.validate(jaxcfr.load_game("kuhn_poker"))   # returns None, or raises GameError
"""

from __future__ import annotations

import random
from typing import Any

from jaxcfr.game import contract, probes
from jaxcfr.game.contract import (CHANCE_NODE, DECISION, TERMINAL_NODE, GameError,
                             check_clone_independent, check_nash_value, check_protocol,
                             check_terminal_step_refused,
                             hashable_key, inspect_node, player_to_act_consistent, real_number,
                             reraise_as_game_error)

__all__ = ["validate", "validate_game_with", "probe_blind_spots", "DEFAULT_TRAJECTORIES",
           "DEEP_TRAJECTORIES", "QUICK_TRAJECTORIES", "QUICK_MOVES"]

DEFAULT_TRAJECTORIES = 256
#: On this many trajectories (the first), every node's clone check also compares what the
#: original does later (:func:`jaxcfr.game.probes.check_clone_future`).
DEEP_TRAJECTORIES = 8
#: ... at their first this many moves.
DEEP_MOVES = 64
#: :func:`probe_blind_spots`: trajectories, and the moves of each it follows at most (the
#: clone probe runs on the first two, at their first :data:`QUICK_CLONE_MOVES` moves).
QUICK_TRAJECTORIES = 8
QUICK_MOVES = 200
QUICK_CLONE_MOVES = 8


def validate(game) -> None:
    """Probe ``game`` on 256 seeded random trajectories; raise GameError on a violation."""
    validate_game_with(game, trajectories=DEFAULT_TRAJECTORIES, seed=0)


def validate_game_with(game, *, trajectories: int = DEFAULT_TRAJECTORIES,
                       seed: int = 0) -> None:
    """Walk ``trajectories`` random root-to-leaf paths and check every rule on the way.

    Checks node types, terminal returns (numbers, the same on every call) and refused
    ``step``, chance probabilities, decision-node action lists (hashable, no duplicates),
    information-set keys (hashable, equal to themselves), that every history sharing an
    information-set key reports the same ordered legal actions, ``nash_value()`` (two
    finite numbers or ``None``), and that stepping a clone leaves the original untouched
    (on the first :data:`DEEP_TRAJECTORIES` trajectories also what it does later: a dict
    shared by a ``copy.copy`` clone is caught). Where the game draws chance itself,
    ``sample_chance`` is tested against ``chance_outcomes()`` at the first chance nodes
    met (``chance-sampling``);
    where it declares ``caches_transpositions()``, histories with one ``state_hash()``
    must be the same state (``transposition``); :mod:`jaxcfr.game.probes` states both
    tests. An exception the game itself raises is reported as ``game-exception``. It is a
    probe, not a proof: :func:`jaxcfr.lower` checks every node, and perfect recall in the
    strong sense.

    Raises:
      GameError: naming the rule broken and the history (action path) where.
    """
    num_players = check_protocol(game)
    history: list[Any] = []
    try:
        check_nash_value(game, num_players)
        _probe(game, num_players, trajectories, seed, history)
    except GameError:
        raise                     # (the probe names each rule's history itself)
    except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule and history
        reraise_as_game_error(exc, tuple(history))


def _probe(game, num_players: int, trajectories: int, seed: int, history: list) -> None:
    """The trajectories of :func:`validate_game_with`; ``history`` is the current path."""
    rng = random.Random(seed)
    seen: dict[tuple[int, Any], tuple[tuple, tuple]] = {}  # (player, key) -> (actions, history)
    sampled: set[tuple] = set()                            # chance nodes whose draws were tested
    transpositions = probes.Transpositions(num_players, seed) \
        if game.caches_transpositions() else None
    for trajectory in range(trajectories):
        state = game.clone()
        history.clear()
        deep = trajectory < DEEP_TRAJECTORIES
        while True:
            info = inspect_node(state, num_players, history)
            player_to_act_consistent(state, info, history)
            if transpositions is not None:
                transpositions.check(state, history)
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
                if len(sampled) < probes.CHANCE_NODES and tuple(history) not in sampled and \
                        probes.overrides_sampling(state):
                    sampled.add(tuple(history))
                    probes.check_sampling(state, info, history, seed * 1_000_003 + len(sampled))
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
                if deep and len(history) < DEEP_MOVES:
                    probes.check_clone_future(state, action, num_players, history,
                                              seed * 7919 + len(history))
                state.step(action)
            except GameError as e:
                raise e.with_context(history=history)
            history.append(action)
            if len(history) > contract.MAX_TRAJECTORY_LENGTH:
                raise GameError(f"trajectory longer than {contract.MAX_TRAJECTORY_LENGTH} moves",
                                rule="termination", history=history[:20])



def probe_blind_spots(game, num_players: int, *, clones: bool = True,
                      transpositions: bool = True, sampling: bool = False,
                      seed: int = 0) -> None:
    """The probes of :mod:`jaxcfr.game.probes` that paths which skip :func:`validate` need,
    run where those paths start, on :data:`QUICK_TRAJECTORIES` short random trajectories:
    lowering walks the tree by cloning (``clones``: rule ``clone``) and memoises on
    ``state_hash()`` where the game says so (``transpositions``: rule ``transposition``);
    sampled chance draws with ``sample_chance`` (``sampling``: rule ``chance-sampling``,
    at the first chance nodes that also list their outcomes). Each gave wrong numbers
    without a word. Only those rules are raised here: anything else the trajectories meet
    is left to the path's own checks, which name it with its history.
    """
    rules = {"clone"} if clones and not getattr(type(game), "DRAWS_AS_WALKED", False) \
        else set()
    if transpositions and game.caches_transpositions():
        rules.add("transposition")
    if sampling:
        rules.add("chance-sampling")
    if not rules:
        return
    try:
        _quick(game, num_players, rules, seed)
    except GameError as e:
        if e.rule in rules:
            raise
    except Exception:  # noqa: BLE001 - the game's own errors: the path reports them
        pass


def _quick(game, num_players: int, rules: set, seed: int) -> None:
    rng = random.Random(seed)
    sampled: set[tuple] = set()
    transpositions = probes.Transpositions(num_players, seed) \
        if "transposition" in rules else None
    for trajectory in range(QUICK_TRAJECTORIES):
        state, history = game.clone(), []
        while len(history) < QUICK_MOVES:
            info = inspect_node(state, num_players, history)
            if transpositions is not None:
                transpositions.check(state, history)
            if info.kind == TERMINAL_NODE:
                break
            if info.kind == DECISION:
                action = rng.choice(info.actions)
            elif info.probs is not None:
                if "chance-sampling" in rules and len(sampled) < probes.CHANCE_NODES and \
                        tuple(history) not in sampled and probes.overrides_sampling(state):
                    sampled.add(tuple(history))
                    probes.check_sampling(state, info, history, seed * 1_000_003 + len(sampled))
                action = rng.choices(info.actions, weights=info.probs)[0]
            else:
                action = state.sample_chance(rng)[0]
            if "clone" in rules and trajectory < 2 and len(history) < QUICK_CLONE_MOVES:
                try:
                    probes.check_clone_future(state, action, num_players, history,
                                              seed * 7919 + len(history))
                except GameError as e:
                    if e.rule != "nondeterministic":    # the walk names where it varies
                        raise
            state.step(action)
            history.append(action)
