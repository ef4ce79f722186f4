"""The PublicGame contract, checked: the hands, every public node, random trajectories.

:func:`read_hands` reads and checks the hands once (labels, weights, cards, the
compatible pairs); :func:`inspect_public` checks one public state and returns what it
said (the lowering calls it at every node, :func:`validate_public` on random
trajectories). Every violation is a :class:`~jaxcfr.game.GameError` naming its rule and
the public history (the actions and outcomes from the root).

Rules: ``num-players``, ``hands``, ``hand-weights``, ``hand-cards``, ``deal`` (no
compatible pair of positive weight), ``node-type``, ``player``, ``legal-actions``,
``chance-outcomes``, ``chance-probability``, ``public-chance-sum`` (the outcomes that
block neither of two compatible hands do not sum to 1), ``outcome-cards``,
``terminal-value``, ``terminal-step`` (``step`` at a terminal did not raise
GameError), ``clone``, ``illegal-action``, ``trajectory-length``, ``game-exception``.
"""

from __future__ import annotations

import math
import random
from typing import Any, Callable, Hashable, NamedTuple, Sequence

import numpy as np

from jaxcfr.game.contract import (CHANCE, CHANCE_NODE, CHANCE_SUM_TOLERANCE, DECISION,
                                  MAX_TRAJECTORY_LENGTH, TERMINAL, TERMINAL_NODE, GameError)
from jaxcfr.game.public_values import Fold, PayoffTable, Showdown

__all__ = ["HandInfo", "PublicNode", "read_hands", "inspect_public", "validate_public",
           "MAX_PUBLIC_PLAYERS"]

#: The most players a PublicGame may have (dense terminal tables cost ``H^P`` each).
MAX_PUBLIC_PLAYERS = 8

_METHODS = ("hands", "hand_weights", "hand_cards", "is_terminal", "is_chance",
            "player_to_act", "legal_actions", "chance_outcomes", "outcome_cards", "step",
            "clone", "terminal_value")


class HandInfo(NamedTuple):
    """The players' hands, read and checked once (``H_p`` hands of player ``p``)."""
    labels: tuple                 # [P] tuple of H_p hashable labels
    weights: tuple                # [P] np.ndarray [H_p] float64 prior weights
    cards: tuple | None           # [P] tuple of H_p frozensets of ints; None: no cards
    compatible: np.ndarray        # [H0, ..., H_{P-1}] bool the hand tuples that can be
                                  #   dealt together ([H0, H1] for two players)
    deal_total: float             # Z = sum over compatible tuples of prod_p w_p (> 0)

    @property
    def num_players(self) -> int:
        return len(self.labels)

    def dealt(self) -> np.ndarray:
        """``[H0, ..., H_{P-1}]`` float64: ``compatible`` times the product of the
        weights (unnormalised deal probabilities)."""
        out = self.compatible.astype(np.float64)
        for p, w in enumerate(self.weights):
            shape = [1] * len(self.weights)
            shape[p] = len(w)
            out = out * w.reshape(shape)
        return out

    def blocked(self, cards: frozenset) -> tuple:
        """``[P]`` bool arrays ``[H_p]``: the hands that hold one of ``cards``."""
        if self.cards is None or not cards:
            return tuple(np.zeros(len(x), bool) for x in self.labels)
        return tuple(np.fromiter((bool(c & cards) for c in per), bool, len(per))
                     for per in self.cards)


class PublicNode(NamedTuple):
    """What :func:`inspect_public` read at one public state."""
    kind: int                     # DECISION / CHANCE_NODE / TERMINAL_NODE
    player: int                   # acting player; CHANCE or TERMINAL otherwise
    actions: tuple                # legal actions, or the chance outcomes
    probs: tuple | None           # chance probabilities (None elsewhere)
    blocked: tuple | None         # chance: per outcome, [P] bool [H_p] hands it blocks
    value: Any                    # terminal: Fold / Showdown / PayoffTable (None elsewhere)


def _fail(rule: str, message: str, history: Sequence[Any]):
    raise GameError(message, rule=rule, history=tuple(history))


def _call(fn: Callable, name: str, history: Sequence[Any], *args):
    """``fn(*args)``; an exception other than GameError becomes ``game-exception``."""
    try:
        return fn(*args)
    except GameError as e:
        if e.history is None:
            raise GameError(e.detail, rule=e.rule, history=tuple(history),
                            infoset=e.infoset) from e
        raise
    except Exception as e:  # noqa: BLE001 - the game's own failure, reported as such
        detail = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        raise GameError(f"the game raised {detail} in {name}()", rule="game-exception",
                        history=tuple(history)) from e


def _real(x) -> float | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def read_hands(game: Any) -> HandInfo:
    """Check the protocol's methods and the hands; return them (rules ``num-players``,
    ``hands``, ``hand-weights``, ``hand-cards``, ``deal``)."""
    missing = [m for m in _METHODS if not callable(getattr(game, m, None))]
    if missing:
        raise GameError(f"{type(game).__name__} does not implement the jaxcfr PublicGame "
                        f"protocol (missing {', '.join(missing)})", rule="protocol")
    P = getattr(game, "num_players", None)
    if isinstance(P, (bool, np.bool_)) or not isinstance(P, (int, np.integer)) or not \
            2 <= P <= MAX_PUBLIC_PLAYERS:
        _fail("num-players", f"a PublicGame has 2 to {MAX_PUBLIC_PLAYERS} players, "
              f"num_players is {P!r}", ())
    P = int(P)
    labels, weights, cards = [], [], []
    for p in range(P):
        hands = _call(game.hands, "hands", (), p)
        try:
            hands = tuple(hands)
        except TypeError:
            _fail("hands", f"hands({p}) is {hands!r}, not a sequence", ())
        if not hands:
            _fail("hands", f"hands({p}) is empty", ())
        if not all(_hashable(h) for h in hands) or len(set(hands)) != len(hands):
            _fail("hands", f"hands({p}) must be distinct hashable labels, got {list(hands)!r}"
                  [:300], ())
        labels.append(hands)
        raw = _call(game.hand_weights, "hand_weights", (), p)
        try:
            raw = list(raw)
        except TypeError:
            _fail("hand-weights", f"hand_weights({p}) is {raw!r}, not a sequence", ())
        w = [_real(x) for x in raw]
        if len(w) != len(hands) or any(x is None or x < 0 for x in w) or not sum(w) > 0:
            _fail("hand-weights", f"hand_weights({p}) must be {len(hands)} finite "
                  f"non-negative numbers, some positive; got {raw!r}"[:300], ())
        weights.append(np.asarray(w, np.float64))
        held = _call(game.hand_cards, "hand_cards", (), p)
        cards.append(held)
    if len({c is None for c in cards}) > 1:
        _fail("hand-cards", "hand_cards() must be None for every player or for none", ())
    card_sets = None
    sizes = tuple(len(x) for x in labels)
    if cards[0] is not None:
        card_sets = []
        for p in range(P):
            try:
                per = [tuple(c) for c in cards[p]]
            except TypeError:
                per = None
            if per is None or len(per) != len(labels[p]) or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
                    for c in per for x in c):
                _fail("hand-cards", f"hand_cards({p}) must be one tuple of int cards per "
                      f"hand ({len(labels[p])} hands), got {cards[p]!r}"[:300], ())
            card_sets.append(tuple(frozenset(int(x) for x in c) for c in per))
        card_sets = tuple(card_sets)
        compatible = np.ones(sizes, bool)
        for p in range(P):              # every two players' hands hold different cards
            for q in range(p + 1, P):
                pair = np.array([[not (a & b) for b in card_sets[q]] for a in card_sets[p]],
                                bool).reshape(sizes[p], sizes[q])
                shape = [1] * P
                shape[p], shape[q] = sizes[p], sizes[q]
                compatible = compatible & pair.reshape(shape)
    else:
        compatible = np.ones(sizes, bool)
    if P == 2:
        total = float((weights[0][:, None] * weights[1][None, :] * compatible).sum())
    else:
        total = float(HandInfo(tuple(labels), tuple(weights), None, compatible, 1.0)
                      .dealt().sum())
    if not total > 0:
        _fail("deal", "no tuple of hands of positive weight can be dealt together (every "
              "compatible tuple has a zero weight)", ())
    return HandInfo(tuple(labels), tuple(weights), card_sets, compatible, total)


def inspect_public(state: Any, hands: HandInfo, history: Sequence[Any],
                   memo: dict | None = None, alive: tuple | None = None) -> PublicNode:
    """Check the node-local rules at ``state`` and return what it said.

    ``alive``: ``[P]`` bool arrays ``[H_p]``, the hands earlier public outcomes did not
    block (default all): the chance-sum rule holds for the pairs of those.

    ``memo`` (optional, kept by the caller across nodes): terminal operators already
    checked, by identity, so that a game returning one shared operator object for many
    terminals is checked once and gets one checked object back (the lowering stores it
    once)."""
    terminal = bool(_call(state.is_terminal, "is_terminal", history))
    chance = bool(_call(state.is_chance, "is_chance", history))
    player = _call(state.player_to_act, "player_to_act", history)
    if terminal and chance:
        _fail("node-type", "is_terminal() and is_chance() are both true", history)
    actions = _call(state.legal_actions, "legal_actions", history)
    try:
        actions = tuple(actions)
    except TypeError:
        _fail("legal-actions", f"legal_actions() is {actions!r}, not a sequence", history)
    if terminal:
        if player != TERMINAL:
            _fail("player", f"player_to_act() is {player!r} at a terminal (must be TERMINAL)",
                  history)
        if actions:
            _fail("legal-actions", "legal_actions() must be empty at a terminal", history)
        value = _call(state.terminal_value, "terminal_value", history)
        if memo is None:
            return PublicNode(TERMINAL_NODE, TERMINAL, (), None, None,
                              _check_value(value, hands, history))
        seen = memo.get(id(value))
        if seen is None:            # (the raw object is kept: its id stays its own)
            seen = memo[id(value)] = (value, _check_value(value, hands, history))
        return PublicNode(TERMINAL_NODE, TERMINAL, (), None, None, seen[1])
    if chance:
        if player != CHANCE:
            _fail("player", f"player_to_act() is {player!r} at a chance node (must be CHANCE)",
                  history)
        if actions:
            _fail("legal-actions", "legal_actions() must be empty at a chance node", history)
        raw = _call(state.chance_outcomes, "chance_outcomes", history)
        try:
            pairs = [tuple(x) for x in raw]
        except TypeError:
            pairs = None
        if not pairs or any(len(x) != 2 for x in pairs):
            _fail("chance-outcomes", f"chance_outcomes() must be a non-empty list of "
                  f"(outcome, probability), got {raw!r}"[:300], history)
        outcomes = tuple(o for o, _ in pairs)
        if not all(_hashable(o) for o in outcomes) or len(set(outcomes)) != len(outcomes):
            _fail("chance-outcomes", "chance outcomes must be distinct hashable values",
                  history)
        probs = tuple(_real(p) for _, p in pairs)
        if any(p is None or p < 0 for p in probs):
            _fail("chance-probability", f"chance probabilities must be finite and "
                  f"non-negative, got {[p for _, p in pairs]!r}"[:300], history)
        blocked = []
        for o in outcomes:
            shown = _call(state.outcome_cards, "outcome_cards", history, o)
            try:
                shown = frozenset(shown)
            except TypeError:
                shown = None
            if shown is None or not all(isinstance(x, (int, np.integer)) and
                                        not isinstance(x, (bool, np.bool_)) for x in shown):
                _fail("outcome-cards", f"outcome_cards({o!r}) must be a tuple of int cards",
                      history)
            if shown and hands.cards is None:
                _fail("outcome-cards", f"outcome {o!r} shows cards {sorted(shown)} but "
                      "hand_cards() is None (no hand holds cards)", history)
            blocked.append(hands.blocked(frozenset(int(x) for x in shown)))
        _check_chance_sum(probs, blocked, hands, alive, history)
        return PublicNode(CHANCE_NODE, CHANCE, outcomes, probs, tuple(blocked), None)
    if isinstance(player, (bool, np.bool_)) or player not in range(hands.num_players):
        _fail("player", f"player_to_act() is {player!r} at a decision (must be 0 to "
              f"{hands.num_players - 1})", history)
    if not actions:
        _fail("legal-actions", "legal_actions() is empty at a decision", history)
    if not all(_hashable(a) for a in actions) or len(set(actions)) != len(actions):
        _fail("legal-actions", f"legal actions must be distinct hashable values, got "
              f"{list(actions)!r}"[:300], history)
    return PublicNode(DECISION, int(player), actions, None, None, None)


def _check_chance_sum(probs, blocked, hands: HandInfo, alive, history) -> None:
    """For every compatible pair of positive weight not blocked yet, the outcomes that
    block neither hand sum to 1 (rule ``public-chance-sum``): ``(1 - B0)^T diag(p) (1 - B1)``
    (for ``P`` players: every compatible tuple, the outcomes that block none of its hands)."""
    if hands.num_players != 2:
        return _check_chance_sum_n(probs, blocked, hands, alive, history)
    p = np.asarray(probs, np.float64)
    free0 = 1.0 - np.stack([b[0] for b in blocked]).astype(np.float64)     # [C, H0]
    free1 = 1.0 - np.stack([b[1] for b in blocked]).astype(np.float64)     # [C, H1]
    total = (free0 * p[:, None]).T @ free1                                 # [H0, H1]
    live = hands.compatible & (hands.weights[0][:, None] > 0) & (hands.weights[1][None, :] > 0)
    if alive is not None:
        live = live & alive[0][:, None] & alive[1][None, :]
    bad = live & ~(np.abs(total - 1.0) <= CHANCE_SUM_TOLERANCE)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        _fail("public-chance-sum", f"with hands {hands.labels[0][i]!r} and "
              f"{hands.labels[1][j]!r} the outcomes that block neither sum to "
              f"{total[i, j]:.12g}, not 1 (probabilities are given the hands: an outcome's "
              f"probability is its chance among those the hands do not block)", history)


def _check_chance_sum_n(probs, blocked, hands: HandInfo, alive, history) -> None:
    """:func:`_check_chance_sum` for ``P > 2`` players: ``sum_c p_c prod_p (1 - B_p[c])``
    over the hand tuples ``[H0, ..., H_{P-1}]``."""
    P = hands.num_players
    total = 0.0
    for k, pk in enumerate(probs):
        term = np.asarray(pk, np.float64)
        for p in range(P):
            shape = [1] * P
            shape[p] = -1
            term = term * (1.0 - blocked[k][p].astype(np.float64)).reshape(shape)
        total = total + term
    live = hands.dealt() > 0
    if alive is not None:
        for p in range(P):
            shape = [1] * P
            shape[p] = -1
            live = live & np.asarray(alive[p]).reshape(shape)
    bad = live & ~(np.abs(total - 1.0) <= CHANCE_SUM_TOLERANCE)
    if bad.any():
        where = tuple(map(int, np.argwhere(bad)[0]))
        held = ", ".join(repr(hands.labels[p][h]) for p, h in enumerate(where))
        _fail("public-chance-sum", f"with hands {held} the outcomes that block none sum to "
              f"{total[where]:.12g}, not 1 (probabilities are given the hands: an outcome's "
              f"probability is its chance among those the hands do not block)", history)


def _check_value(value, hands: HandInfo, history):
    sizes = tuple(len(x) for x in hands.labels)
    P = len(sizes)
    if isinstance(value, Fold):
        pay = [_real(x) for x in value.payoffs] if hasattr(value.payoffs, "__len__") else []
        if len(pay) != P or any(x is None for x in pay):
            _fail("terminal-value", f"Fold payoffs must be {P} finite numbers, got "
                  f"{value.payoffs!r}", history)
        return Fold(tuple(pay))
    if isinstance(value, Showdown) and P != 2:
        _fail("terminal-value", f"Showdown takes two players; this game has {P} (state its "
              "showdowns as a PayoffTable over the players' hand tuples)", history)
    if isinstance(value, Showdown):
        stake = _real(value.stake)
        try:
            strengths = tuple(np.asarray(s, np.float64) for s in value.strengths)
        except (TypeError, ValueError):
            strengths = ()
        if stake is None or len(strengths) != 2 or any(
                s.shape != (n,) or not np.isfinite(s).all() for s, n in zip(strengths, sizes)):
            _fail("terminal-value", f"Showdown needs a finite stake and 2 finite strength "
                  f"vectors of {sizes} hands", history)
        return Showdown(stake, strengths)
    if isinstance(value, PayoffTable):
        try:
            table = np.asarray(value.payoffs, np.float64)
        except (TypeError, ValueError):
            table = np.zeros(0)
        if table.shape != (P,) + sizes or not np.isfinite(table).all():
            _fail("terminal-value", f"PayoffTable payoffs must be finite, of shape "
                  f"{(P,) + sizes}, got shape {getattr(table, 'shape', None)}", history)
        return PayoffTable(table)
    _fail("terminal-value", f"terminal_value() must be a Fold, Showdown or PayoffTable, got "
          f"{value!r}"[:300], history)


def _snapshot(node: PublicNode) -> tuple:
    return node.kind, node.player, node.actions, node.probs


def validate_public(game: Any, trajectories: int = 256, seed: int = 0) -> None:
    """Probe the contract on ``trajectories`` random public trajectories from ``game``
    (uniform over the legal actions and the outcomes of positive probability); every
    node is checked by :func:`inspect_public`, the first step of each trajectory also on
    a clone (rule ``clone``), and ``step`` at every terminal must raise GameError."""
    hands = read_hands(game)
    rng = random.Random(seed)
    for _ in range(trajectories):
        state = _call(game.clone, "clone", ())
        history: list[Hashable] = []
        alive = tuple(np.ones(len(x), bool) for x in hands.labels)
        while True:
            node = inspect_public(state, hands, history, alive=alive)
            if node.kind == TERMINAL_NODE:
                try:
                    state.step(None)
                except GameError:
                    pass
                except Exception as e:  # noqa: BLE001
                    _fail("terminal-step", f"step() at a terminal raised {type(e).__name__} "
                          "(it must raise GameError)", history)
                else:
                    _fail("terminal-step", "step() at a terminal did not raise GameError",
                          history)
                break
            if node.kind == CHANCE_NODE:
                live = [o for o, p in zip(node.actions, node.probs) if p > 0] or \
                    list(node.actions)
                action = rng.choice(live)
                k = node.actions.index(action)
                alive = tuple(a & ~b for a, b in zip(alive, node.blocked[k]))
            else:
                action = rng.choice(node.actions)
            if not history:
                probe = _call(state.clone, "clone", history)
                if probe is state:
                    _fail("clone", "clone() returned the state itself", history)
                _call(probe.step, "step", history, action)
                if _snapshot(inspect_public(state, hands, history, alive=alive)) != \
                        _snapshot(node):
                    _fail("clone", f"stepping a clone with {action!r} changed the original",
                          history)
            _call(state.step, "step", history, action)
            history.append(action)
            if len(history) > MAX_TRAJECTORY_LENGTH:
                _fail("trajectory-length", f"a trajectory passed {MAX_TRAJECTORY_LENGTH:,} "
                      "moves without ending", history[:20])
