"""Action abstraction: keep a subset of every decision's legal actions (README, "Action
abstraction").

An :class:`Abstraction` names, at each decision node, the legal actions to keep:
``actions(state, player)`` returns a non-empty, duplicate-free subset of
``state.legal_actions()`` in an order that is the same at every history of an
information set. :class:`Abstracted` wraps a game with one: it is the smaller game,
a :class:`jaxcfr.Game` like any other whose ``legal_actions()`` are the kept actions
(in the abstraction's order), so the solvers need no knowledge of abstraction.
:class:`Identity` keeps everything: ``Abstracted(game, Identity())`` is ``game``.

Checks, each a :class:`GameError` naming the rule and the history:

* ``abstraction-empty``: nothing kept at a decision node;
* ``abstraction-duplicate``: an action kept twice (it would split its regret over
  two slots);
* ``abstraction-illegal``: a kept action that is not legal in the wrapped game;
* ``abstraction-step``: ``step`` with a legal action the abstraction dropped;
* ``abstraction-order``: two histories of one information set keep different
  actions or order them differently. :func:`jaxcfr.lower` sees every history of
  every information set, so it checks this rule exhaustively (the random probe of
  :func:`jaxcfr.validate` sees the kept actions as the game's legal actions and
  reports a clash it happens to visit as ``infoset-actions``).

Lowering ``Abstracted(game, abstraction)`` (or ``lower(game, abstraction=...)``,
the same thing) walks only the kept actions: the subtrees below dropped actions are
never enumerated. A profile trained on it is keyed by the abstracted action order;
:func:`jaxcfr.lift` maps it back to the full game.

*Action translation* (optional): an abstraction may also say how a dropped action
maps onto the kept ones, ``translate(state, player, action) -> [(kept action,
probability), ...]``, a distribution over ``actions(state, player)``. ``action`` is
any action of the game: usually one the abstraction dropped at ``state``, but also
one that is not legal there (lifting replays a real history on a translated one,
whose state may differ, e.g. in the pot). Lifting with translation
(:func:`jaxcfr.lift`, ``translate=True``) answers a real history that went through
dropped actions with the strategies of the histories it translates to;
:func:`check_translation` checks what ``translate`` returns (rule ``translation``),
and :func:`pseudo_harmonic` is Ganzfried and Sandholm's mapping for bet sizes.

Example::

    >>> import jaxcfr
    >>> from jaxcfr_games.nolimit_leduc import BetMenu
    >>> full = jaxcfr.load_game("nolimit_leduc")
    >>> small = jaxcfr.Abstracted(full, BetMenu(fractions=(1.0,)))
    >>> jaxcfr.lower(small).num_nodes < jaxcfr.lower(full).num_nodes
    True
"""

from __future__ import annotations

import functools
from typing import Any, Hashable, Protocol, Sequence, runtime_checkable

from jaxcfr.game.contract import GameError, check_protocol
from jaxcfr.game.protocol import same_action
from jaxcfr.game.wrapper import Wrapper

__all__ = ["Abstraction", "Identity", "Abstracted", "kept_actions", "unwrap",
           "check_abstraction", "describe", "has_translate", "check_translation",
           "pseudo_harmonic"]

#: How far translation probabilities may sum from 1.
TRANSLATION_TOLERANCE = 1e-9


@runtime_checkable
class Abstraction(Protocol):
    """Which legal actions to keep at a decision node (a structural protocol: any object
    with this method is one; subclassing is not needed)."""

    def actions(self, state: Any, player: int) -> Sequence[Hashable]:
        """The kept actions at ``state`` (a decision node of the wrapped game, where
        ``player`` acts): a non-empty, duplicate-free subset of ``state.legal_actions()``,
        in the same order at every history of an information set."""

    # Optional (not part of the structural check):
    # def translate(self, state, player, action) -> [(kept action, probability), ...]
    #     a distribution over actions(state, player) for any action of the game
    #     (see the module docstring); lifting with translation uses it.


def has_translate(abstraction: Any) -> bool:
    """Whether ``abstraction`` defines ``translate(state, player, action)``."""
    return callable(getattr(abstraction, "translate", None))


def check_translation(translated: Any, kept: Sequence, action: Any) -> tuple[tuple, ...]:
    """What ``translate`` returned, checked: ``((kept action, probability), ...)``.

    Args:
      translated: the return value of ``translate(state, player, action)``.
      kept: ``actions(state, player)`` at that state.
    Returns:
      The pairs with positive probability, each kept action once (probabilities of a
      repeated action added).
    Raises:
      GameError: ``translation`` (without a history; the caller adds it): not a list
        of pairs, an action that is not kept at the state, a probability that is
        negative or not finite, or probabilities that do not sum to 1.
    """
    def fail(why: str):
        raise GameError(f"translate(..., {action!r}) returned {translated!r}: {why}",
                        rule="translation")
    try:
        pairs = [(a, float(p)) for a, p in translated]
    except (TypeError, ValueError):
        fail("it must be a list of (kept action, probability) pairs")
    out: dict = {}
    for a, p in pairs:
        if not any(same_action(a, k) for k in kept):
            fail(f"{a!r} is not one of the kept actions {list(kept)}")
        if not p >= 0 or p == float("inf"):
            fail(f"probability {p!r} of {a!r} is not a finite non-negative number")
        if p > 0:
            out[a] = out.get(a, 0.0) + p
    total = sum(out.values())
    if not abs(total - 1.0) <= TRANSLATION_TOLERANCE:
        fail(f"the probabilities sum to {total!r}, not 1")
    return tuple(out.items())


def pseudo_harmonic(x: float, a: float, b: float) -> float:
    """Probability of mapping a bet ``x`` onto the smaller size ``a`` (the rest onto ``b``).

    Ganzfried and Sandholm's pseudo-harmonic mapping (IJCAI 2013),
    ``f(x) = (b - x)(1 + a) / ((b - a)(1 + x))`` for ``a <= x <= b``, with every size
    a fraction of the pot: ``f(a) = 1``, ``f(b) = 0``, and the same for every scale
    of the pot. ``x`` outside ``[a, b]`` is clipped (all mass on the nearer size).

    Example::

        >>> pseudo_harmonic(0.73, 0.5, 1.0) == 81 / 173
        True
    """
    if not a < b:
        raise ValueError(f"pseudo_harmonic needs a < b, got a={a!r}, b={b!r}")
    if x <= a:
        return 1.0
    if x >= b:
        return 0.0
    return (b - x) * (1 + a) / ((b - a) * (1 + x))


class Identity:
    """The abstraction that keeps every legal action, in the game's order."""

    def actions(self, state: Any, player: int) -> Sequence[Hashable]:
        return state.legal_actions()

    def __eq__(self, other) -> bool:
        return type(other) is Identity

    def __hash__(self) -> int:
        return hash(Identity)

    def __repr__(self) -> str:
        return "Identity()"


def describe(abstraction: Any) -> str:
    """How an abstraction prints in names, tables and reprs: its own ``repr`` when its class
    has one, else ``ClassName(field=value, ...)`` from its attributes (never
    ``<... object at 0x...>``)."""
    cls = type(abstraction)
    if cls.__repr__ is not object.__repr__:
        return repr(abstraction)
    fields = dict(getattr(abstraction, "__dict__", {}) or {})
    for klass in cls.__mro__:
        for slot in getattr(klass, "__slots__", ()):
            if isinstance(slot, str) and hasattr(abstraction, slot) and \
                    slot not in ("__dict__", "__weakref__"):
                fields.setdefault(slot, getattr(abstraction, slot))
    shown = ", ".join(f"{k}={v!r}" for k, v in fields.items() if not k.startswith("_"))
    return f"{cls.__name__}({shown})"


def check_abstraction(abstraction: Any) -> Any:
    """Return ``abstraction`` if it has an ``actions(state, player)`` method, else raise
    ``TypeError``."""
    if not callable(getattr(abstraction, "actions", None)):
        raise TypeError(f"{abstraction!r} is not an abstraction: it needs a method "
                        "actions(state, player) returning the kept legal actions")
    return abstraction


def kept_actions(abstraction: Abstraction, state: Any, player: int, legal: tuple) -> tuple:
    """The actions ``abstraction`` keeps at ``state``, checked against ``legal``.

    Args:
      state: a decision node of the wrapped game; ``player`` acts there.
      legal: ``tuple(state.legal_actions())``.
    Returns:
      The kept actions as a tuple (``legal`` itself when everything is kept, in order).
    Raises:
      GameError: ``abstraction-empty``, ``abstraction-duplicate`` or
        ``abstraction-illegal``, without a history (the caller adds it).
    """
    kept = tuple(abstraction.actions(state, player))
    if kept == legal:
        return legal
    if not kept:
        raise GameError(f"the abstraction kept no action (legal: {list(legal)})",
                        rule="abstraction-empty")
    try:
        unique = len(set(kept)) == len(kept)
        legal_set = set(legal)
        illegal = [a for a in kept if a not in legal_set]
    except TypeError:                       # an unhashable action is not a legal one
        raise GameError(f"the abstraction kept an unhashable action: {list(kept)}",
                        rule="abstraction-illegal") from None
    if not unique:
        raise GameError(f"the abstraction keeps an action twice: {list(kept)} (its regret "
                        "would be split over two slots)", rule="abstraction-duplicate")
    if illegal:
        raise GameError(f"the abstraction kept {illegal[0]!r}, which is not legal here "
                        f"(legal: {list(legal)})", rule="abstraction-illegal")
    return kept


def unwrap(game: Any) -> tuple[Any, Abstraction | None]:
    """``(inner game, abstraction)`` of an :class:`Abstracted` game; ``(game, None)``
    otherwise (one level: the inner game may be abstracted itself)."""
    if isinstance(game, Abstracted):
        return game.game, game.abstraction
    return game, None


class Abstracted(Wrapper):
    """``game`` restricted to the actions ``abstraction`` keeps (a :class:`jaxcfr.Game`).

    Every method but ``legal_actions`` is the wrapped game's: ``step``, ``clone``,
    ``infoset_key``, chance, returns... (attributes that are not part of the
    protocol are read from the wrapped state too). ``legal_actions()`` is the kept
    actions at a decision node, in the abstraction's order. ``nash_value()`` is the
    wrapped game's only under :class:`Identity`: an abstraction changes the game's
    value. ``history`` is the action path since the wrapper's root (for errors).

    Args:
      game: the root state of the full game (not modified; the wrapper steps a clone
        of whatever it is given only through ``clone``).
      abstraction: an :class:`Abstraction`.
    """

    def __init__(self, game: Any, abstraction: Abstraction):
        check_protocol(game)
        self.game = game
        self.abstraction = check_abstraction(abstraction)
        self._path = None       # (last action, the path before it): O(1) per step, any depth

    @property
    def history(self) -> tuple:
        """The actions since the wrapper's root (built when asked: errors)."""
        return _unwind(self._path)

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes the wrapper lacks: read them from the wrapped state.
        if name in ("game", "abstraction", "_path"):
            raise AttributeError(name)
        return getattr(self.game, name)

    def __repr__(self) -> str:
        return f"Abstracted({self.game!r}, {describe(self.abstraction)})"

    @property
    def name(self) -> str:
        """``"<full game's name> | <abstraction>"`` (the lowered game's default name)."""
        inner = getattr(self.game, "name", "") or type(self.game).__name__
        return f"{inner} | {describe(self.abstraction)}"

    def clone(self) -> "Abstracted":
        new = _new(type(self))
        new.game = self.game.clone()
        new.abstraction = self.abstraction
        new._path = self._path
        return new

    # -- forwarded (the rest: :class:`~jaxcfr.game.wrapper.Wrapper`) --------
    def state_hash(self) -> int:
        return self.game.state_hash()

    def caches_transpositions(self) -> bool:
        return self.game.caches_transpositions()

    def public_key(self):
        fn = getattr(self.game, "public_key", None)
        return fn() if callable(fn) else None

    def nash_value(self):
        return self.game.nash_value() if isinstance(self.abstraction, Identity) else None

    # -- the abstraction ---------------------------------------------------
    def legal_actions(self) -> list:
        inner = self.game
        legal = tuple(inner.legal_actions())
        if not legal or inner.is_terminal() or inner.is_chance():
            return list(legal)       # not a decision node (or an inner contract failure)
        try:
            return list(kept_actions(self.abstraction, inner, inner.player_to_act(), legal))
        except GameError as e:
            raise e.with_context(history=self.history) from None

    def step(self, action) -> None:
        inner = self.game
        if not inner.is_terminal() and not inner.is_chance():
            kept = self.legal_actions()
            if not any(same_action(action, a) for a in kept):
                raise GameError(f"action {action!r} is not one the abstraction keeps here "
                                f"(kept: {kept})", rule="abstraction-step",
                                history=functools.partial(_unwind, self._path))
        try:
            inner.step(action)
        except GameError as e:
            raise e.with_context(history=self.history) from None
        self._path = (action, self._path)


def _unwind(path) -> tuple:
    """The actions of a path of ``(action, previous path)`` cells, root first."""
    out = []
    while path is not None:
        out.append(path[0])
        path = path[1]
    return tuple(reversed(out))


_new = object.__new__
