"""The probes :func:`jaxcfr.validate` runs besides the per-node rules: what a random probe
can find out about contract rules no single node shows.

* :func:`check_sampling` (rule ``chance-sampling``): at an enumerable chance node whose
  game overrides ``sample_chance``, draws from it must be outcomes that
  ``chance_outcomes()`` lists, with the listed probability, and at the listed
  frequencies: :data:`CHANCE_DRAWS` draws (a ``Random`` seeded by the probe's seed and the
  node's number) are compared with the listed probabilities by Pearson's chi-square test
  (outcomes expected fewer than 5 times pooled), refused below a p-value of
  :data:`CHANCE_P_VALUE` (the Wilson-Hilferty approximation of the chi-square tail). With
  1,000 draws it finds a fair coin that comes up heads 60 % of the time (p ~ 3e-10), not
  one at 55 % (p ~ 2e-3). The sampled-chance trainer and the estimates draw with
  ``sample_chance``, the exact solvers use ``chance_outcomes()``: a game whose two
  disagree is two games.
* :func:`check_clone_future` (rule ``clone``): stepping clones must not change what the
  original does *later* (a random continuation from it, compared before and after), so
  a clone that shares a dict or list with its original (``copy.copy``) is caught even
  where the node itself looks unchanged; a cache the game fills as it goes passes. A
  continuation asks each node twice: a game that answers differently (legal actions in
  another order, other terminal returns) is ``nondeterministic``, not a bad clone.
* :class:`Transpositions` (rule ``transposition``): where a game says ``state_hash()``
  is a transposition key (``caches_transpositions()``), two histories with one hash must
  be the same state: the same node type, player, legal actions, every player's key, and
  the same keys and returns along a few random continuations (the same random numbers
  for both).
"""

from __future__ import annotations

import math
import random
from typing import Any, Sequence

from jaxcfr.game.contract import (CHANCE_NODE, DECISION, TERMINAL_NODE, GameError,
                                  NodeInfo, inspect_node, real_number)

__all__ = ["check_sampling", "overrides_sampling", "continuation", "check_clone_future",
           "Transpositions", "CHANCE_DRAWS", "CHANCE_P_VALUE", "CHANCE_NODES", "CONTINUATIONS",
           "CONTINUATION_MOVES", "TERMINAL_LOOKS"]

#: Draws of ``sample_chance`` per chance node tested.
CHANCE_DRAWS = 1000
#: A chance node whose draws fit ``chance_outcomes()`` worse than this p-value is refused.
CHANCE_P_VALUE = 1e-6
#: How many distinct chance nodes (the first the probe meets) are tested.
CHANCE_NODES = 8
#: Random continuations compared for two histories with one ``state_hash``.
CONTINUATIONS = 3
#: A continuation compares at most this many moves.
CONTINUATION_MOVES = 1000
#: At the terminal node that ends a continuation, ``terminal_returns()`` is asked this many
#: more times (each look is two calls): a game whose returns vary now and then is
#: told from a clone that shares what ``step`` changes.
TERMINAL_LOOKS = 4


# -- sample_chance against chance_outcomes ------------------------------------------------
def overrides_sampling(state: Any) -> bool:
    """Whether ``state``'s ``sample_chance`` is not :class:`jaxcfr.Game`'s own (which draws
    from ``chance_outcomes()`` and needs no test). Told by name: the protocol module
    imports this one (through ``Game.validate``)."""
    impl = getattr(type(state), "sample_chance", None)
    return (getattr(impl, "__module__", None), getattr(impl, "__qualname__", None)) != \
        ("jaxcfr.game.protocol", "Game.sample_chance")


def check_sampling(state: Any, info: NodeInfo, history: Sequence[Any], seed: int) -> None:
    """Compare :data:`CHANCE_DRAWS` draws of ``state.sample_chance`` with ``info``'s listed
    outcomes (see the module docstring); raise ``chance-sampling`` on a mismatch."""
    listed = dict(zip(info.actions, info.probs))
    rng = random.Random(seed)
    counts = dict.fromkeys(info.actions, 0)
    for _ in range(CHANCE_DRAWS):
        try:
            action, prob = state.sample_chance(rng)
        except GameError as e:
            raise e.with_context(history=history)
        try:
            known = action in listed
        except TypeError:
            known = False
        if not known:
            raise GameError(f"sample_chance() drew {action!r}, which chance_outcomes() does not "
                            f"list ({list(info.actions)})", rule="chance-sampling",
                            history=history)
        p = real_number(prob)
        if p is None or not math.isclose(p, listed[action], rel_tol=1e-6, abs_tol=1e-12):
            raise GameError(f"sample_chance() drew {action!r} with probability {prob!r}, but "
                            f"chance_outcomes() lists it with {listed[action]!r}",
                            rule="chance-sampling", history=history)
        counts[action] += 1
    statistic, df, worst = _chi_square(counts, listed, CHANCE_DRAWS)
    if df < 1:
        return
    p_value = _chi_square_tail(statistic, df)
    if p_value < CHANCE_P_VALUE:
        action, seen, expected = worst
        raise GameError(
            f"sample_chance() does not draw what chance_outcomes() lists: over "
            f"{CHANCE_DRAWS} draws {action!r} came up {seen} times where {expected:.1f} were "
            f"expected (Pearson chi-square {statistic:.1f} on {df} degrees of freedom, p = "
            f"{p_value:.2g} < {CHANCE_P_VALUE:g}); the exact solvers use chance_outcomes(), "
            "sampled chance and the estimates use sample_chance()", rule="chance-sampling",
            history=history)


def _chi_square(counts: dict, probs: dict, n: int):
    """Pearson's statistic over bins expected >= 5 times (the others pooled), its degrees
    of freedom and the outcome that differs most: ``(statistic, df, (action, seen, expected))``."""
    bins, pooled_seen, pooled_expected = [], 0, 0.0
    worst, worst_term = None, -1.0
    for action, p in probs.items():
        expected = n * p
        if expected >= 5:
            bins.append((counts[action], expected))
        else:
            pooled_seen += counts[action]
            pooled_expected += expected
        term = (counts[action] - expected) ** 2 / expected if expected > 0 else \
            (math.inf if counts[action] else 0.0)
        if term > worst_term:
            worst, worst_term = (action, counts[action], expected), term
    if pooled_expected > 0:
        bins.append((pooled_seen, pooled_expected))
    statistic = sum((seen - expected) ** 2 / expected for seen, expected in bins)
    return statistic, len(bins) - 1, worst


def _chi_square_tail(x: float, df: int) -> float:
    """``P(X >= x)`` for ``X ~ chi-square(df)``, by Wilson and Hilferty's cube-root normal
    approximation (good to a few per cent of the tail down to 1e-12 for df >= 1)."""
    if x <= 0:
        return 1.0
    z = ((x / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


# -- what a state does later ---------------------------------------------------------------
def continuation(state: Any, num_players: int, seed: int | None) -> list:
    """What ``state`` reports here (``seed`` ``None``) or along a random continuation from
    it (``Random(seed)`` picks actions and chance outcomes): per node, its type, player,
    actions, probabilities, returns and every player's key. ``state`` is stepped.

    A contract error (or any exception) on the way ends the list with its message: the
    probe's own trajectories report it with its history, here it is only compared.
    """
    rng = None if seed is None else random.Random(seed)
    out: list = []
    try:
        for _ in range(CONTINUATION_MOVES):
            try:
                info = inspect_node(state, num_players, ())
                for _ in range(TERMINAL_LOOKS if info.kind == TERMINAL_NODE else 0):
                    again = inspect_node(state, num_players, ())     # two calls each
                    if again.returns != info.returns:
                        raise GameError(f"terminal_returns() gave {list(info.returns)}, then "
                                        f"{list(again.returns)}", rule="nondeterministic")
            except GameError as e:
                if e.rule != "nondeterministic":
                    raise
                out.append(("nondeterministic", e.detail.partition(" at the same history")[0]
                            .partition(" (a game must")[0]))
                return out
            if info.kind != TERMINAL_NODE:
                again = tuple(state.legal_actions() if info.kind == DECISION else
                              (a for a, _ in state.chance_outcomes() or ()))
                if info.kind == DECISION and again != info.actions or \
                        info.kind == CHANCE_NODE and info.probs is not None and \
                        again != info.actions:
                    method = "legal_actions()" if info.kind == DECISION else \
                        "chance_outcomes()"
                    out.append(("nondeterministic", f"{method} listed {list(info.actions)} "
                                f"on one call and {list(again)} on another"))
                    return out
            keys = tuple(state.infoset_key(p) for p in range(num_players)) \
                if info.kind == DECISION else ()
            out.append((info.kind, info.player, info.actions, info.probs, info.returns, keys))
            if rng is None or info.kind == TERMINAL_NODE:
                return out
            if info.kind == CHANCE_NODE and info.probs is None:
                action = state.sample_chance(rng)[0]
            elif info.kind == CHANCE_NODE:
                action = rng.choices(info.actions, weights=info.probs)[0]
            else:
                action = info.actions[rng.randrange(len(info.actions))]
            state.step(action)
    except Exception as e:  # noqa: BLE001 - compared, not reported (see the docstring)
        out.append(("error", type(e).__name__, str(e)))
    return out


def check_clone_future(state: Any, action: Any, num_players: int, history: Sequence[Any],
                       seed: int) -> None:
    """Stepping clones must not change what ``state`` does later (rule ``clone``): a random
    continuation from a clone of ``state``, then a clone stepped with ``action``, then the
    same continuation again must report the same. A clone that shares a dict or list
    with its original (``copy.copy``) fails here the first time ``step`` writes to it;
    caches a game fills as it goes (and never changes what a state reports) pass."""
    before = continuation(state.clone(), num_players, seed)
    _check_deterministic(before, history)
    try:
        state.clone().step(action)
    except Exception as e:  # noqa: BLE001 - it steps fine before the continuation ran
        raise GameError(f"stepping a clone with {action!r} raised {type(e).__name__}: {e} after "
                        "a random continuation from another clone of this state (clones share "
                        "what step changes: clone() must return an independent copy)",
                        rule="clone", history=history) from None
    after = continuation(state.clone(), num_players, seed)
    if before != after:
        _check_deterministic(after, history)
        where = _first_difference(before, after)
        raise GameError(
            f"stepping clones changed what the original state does later: {where} moves into "
            f"one random continuation from it, {_show(before, where)} before, "
            f"{_show(after, where)} after (clone() must return an independent copy: copy.copy "
            "shares the state's dicts and lists, copy them too)", rule="clone",
            history=history)


def _check_deterministic(path: list, history: Sequence[Any]) -> None:
    """A continuation that met a node answering two calls differently is the game's own
    nondeterminism (rule ``nondeterministic``), not a clone's fault."""
    for where, node in enumerate(path):
        if node[0] == "nondeterministic":
            raise GameError(
                f"{node[1]}, {_where(where)} (a game must be deterministic: the same "
                "legal_actions() in the same order and the same terminal_returns() on every "
                "call; randomness belongs in chance nodes)", rule="nondeterministic",
                history=history)


def _where(moves: int) -> str:
    return "here" if moves == 0 else \
        f"{moves} move{'s' if moves > 1 else ''} into a random continuation from it"


def _first_difference(a: list, b: list) -> int:
    return next(i for i, (x, y) in enumerate(zip(a + [None], b + [None])) if x != y)


# -- transpositions -------------------------------------------------------------------------
class Transpositions:
    """The first history seen per ``state_hash()`` value, and the comparison of a later one
    (see the module docstring). ``limit``: hashes remembered at most."""

    def __init__(self, num_players: int, seed: int, limit: int = 10_000):
        self.num_players = num_players
        self.seed = seed
        self.limit = limit
        self.first: dict[Any, tuple[Any, tuple]] = {}

    def check(self, state: Any, history: Sequence[Any]) -> None:
        key = state.state_hash()
        try:
            first = self.first.get(key)
        except TypeError:
            raise GameError(f"state_hash() is not hashable: {key!r}", rule="transposition",
                            history=history) from None
        history = tuple(history)
        if first is None:
            if len(self.first) < self.limit:
                self.first[key] = (state.clone(), history)
            return
        other, other_history = first
        if other_history == history:
            return
        for c in range(CONTINUATIONS + 1):
            seed = None if c == 0 else self.seed * 7919 + c
            a = continuation(other.clone(), self.num_players, seed)
            b = continuation(state.clone(), self.num_players, seed)
            if a != b:
                where = _first_difference(a, b)
                what = "here" if where == 0 else f"{where} moves into a random continuation"
                raise GameError(
                    f"state_hash() is {key!r} here and at history {list(other_history)!r}, but "
                    f"the two states differ {what} ({_show(a, where)} there, {_show(b, where)} "
                    "here): caches_transpositions() says equal hashes are the same state, and "
                    "the walks that memoise on it would give wrong values",
                    rule="transposition", history=history)


def _show(path: list, where: int) -> str:
    if where >= len(path):
        return "the end"
    if path[where][0] == "error":
        return f"{path[where][1]}: {path[where][2]}"
    kind, player, actions, _, returns, keys = path[where]
    if kind == TERMINAL_NODE:
        return f"returns {list(returns)}"
    if kind == CHANCE_NODE:
        return f"a chance node with outcomes {list(actions)}"
    return f"player {player} to act with {list(actions)}, keys {list(keys)}"
