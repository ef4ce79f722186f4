"""Information abstraction: information sets that share one row (bucketing).

A *bucketing* maps a player's information-set key to a bucket:
``bucket(player, key) -> Hashable``. :class:`Bucketed` wraps a game with one: it is
the bucketed game, a :class:`jaxcfr.Game` whose ``infoset_key(player)`` is the
bucket of the wrapped game's key, so that lowering gives every bucket one row and
the solvers train one strategy per bucket (card bucketing, suit isomorphism). The
tree itself is the wrapped game's: bucketing shrinks the rows, not the histories.

Rules, each a :class:`GameError` naming the rule:

* ``bucket-actions``: two information sets of one bucket have different legal
  actions (or the same in another order); the error names both information sets
  and the bucket. Checked at the first visit of every information set, so
  :func:`jaxcfr.lower` checks it exhaustively.
* ``bucket-key``: a bucket that is not hashable or not equal to itself.
* ``perfect-recall``: a bucket that makes a player forget what it knew (two
  members whose own earlier (bucket, action) sequences differ). Practical card
  abstractions do that on purpose (imperfect recall); lowering accepts it only
  when it is declared: ``Bucketed(game, bucketing, imperfect_recall=True)``, or a
  bucketing whose ``imperfect_recall`` attribute is true. Absent-mindedness (a path
  through one bucket twice) is refused either way. Under imperfect recall the
  solvers' regrets are the usual sums over a bucket's members, but a row's average
  strategy is weighted by one member's own reach (members' reaches differ), and a
  best response inside the bucketed game is a lower bound: its metrics are
  approximate. The lifted profile's metrics in the full game (perfect recall) are
  exact.

:func:`jaxcfr.lift` (``bucketing=``) gives every real information set its bucket's
strategy. :class:`BucketBy` (``bucket_by(function)``) is a bucketing from a function;
:func:`combine` puts an action abstraction and a bucketing into one object (the
string ``"bet_menu(...) + suit_isomorphism"``); :func:`abstract_game` wraps a game in
whatever an abstraction object is.

Example::

    >>> import jaxcfr
    >>> leduc = jaxcfr.load_game("leduc_poker")
    >>> small = jaxcfr.Bucketed(leduc, jaxcfr.load_abstraction("suit_isomorphism"))
    >>> sum(jaxcfr.lower(small).infosets_per_player), sum(jaxcfr.lower(leduc).infosets_per_player)
    (468, 936)
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Hashable, Protocol, runtime_checkable

from jaxcfr.game.abstraction import Abstracted
from jaxcfr.game.contract import GameError, check_protocol
from jaxcfr.game.strings import parse_reference
from jaxcfr.game.wrapper import Wrapper

__all__ = ["Bucketing", "Bucketed", "BucketBy", "bucket_by", "Composite", "combine",
           "abstract_game",
           "check_bucketing", "is_bucketing", "is_action_abstraction", "find_bucketing",
           "imperfect_recall_declared"]


@runtime_checkable
class Bucketing(Protocol):
    """Which bucket a player's information set falls in (a structural protocol).

    Optional attribute ``imperfect_recall`` (default false): the bucketing declares
    that its buckets may make a player forget what it knew.
    """

    def bucket(self, player: int, key: Hashable) -> Hashable:
        """The bucket of ``player``'s information set ``key`` (hashable; information
        sets of one bucket must have the same legal actions in the same order)."""


def is_bucketing(obj: Any) -> bool:
    """Whether ``obj`` has a ``bucket(player, key)`` method."""
    return callable(getattr(obj, "bucket", None))


def is_action_abstraction(obj: Any) -> bool:
    """Whether ``obj`` has an ``actions(state, player)`` method."""
    return callable(getattr(obj, "actions", None))


def check_bucketing(bucketing: Any) -> Any:
    """Return ``bucketing`` if it has a ``bucket(player, key)`` method, else ``TypeError``."""
    if not is_bucketing(bucketing):
        raise TypeError(f"{bucketing!r} is not a bucketing: it needs a method "
                        "bucket(player, key) returning the bucket of an information set")
    return bucketing


class _Memo:
    """What a bucketed game has learnt about its buckets (shared by a root and its clones).

    ``of``: ``(player, key) -> bucket``; ``first``: ``(player, bucket) -> (key, legal
    actions)`` of the first information set met in the bucket; ``checked``: the
    information sets whose legal actions were compared with their bucket's first.
    """

    __slots__ = ("of", "first", "checked")

    def __init__(self):
        self.of: dict = {}
        self.first: dict = {}
        self.checked: set = set()


class Bucketed(Wrapper):
    """``game`` with every information set replaced by its bucket (a :class:`jaxcfr.Game`).

    Every method but ``infoset_key`` is the wrapped game's (attributes outside the
    protocol are read from the wrapped state too); ``infoset_key(player)`` is
    ``bucketing.bucket(player, game.infoset_key(player))``. ``nash_value()`` is
    ``None`` (a lossy bucketing changes the game's value).

    Args:
      game: the root state (may itself be an :class:`jaxcfr.Abstracted` game: then the
        buckets' legal actions are the kept ones).
      bucketing: a :class:`Bucketing`.
      imperfect_recall: accept buckets that make a player forget (see the module
        docstring); also on when ``bucketing.imperfect_recall`` is true.
    """

    def __init__(self, game: Any, bucketing: Bucketing, *, imperfect_recall: bool = False):
        check_protocol(game)
        self.game = game
        self.bucketing = check_bucketing(bucketing)
        self.imperfect_recall = bool(imperfect_recall) or bool(
            getattr(bucketing, "imperfect_recall", False))
        self._memo = _Memo()

    def __getattr__(self, name: str) -> Any:
        if name in ("game", "bucketing", "imperfect_recall", "_memo"):
            raise AttributeError(name)
        return getattr(self.game, name)

    def __repr__(self) -> str:
        return f"Bucketed({self.game!r}, {self.bucketing!r})"

    @property
    def name(self) -> str:
        """``"<wrapped game's name> | <bucketing>"``."""
        inner = getattr(self.game, "name", "") or type(self.game).__name__
        return f"{inner} | {self.bucketing!r}"

    def clone(self) -> "Bucketed":
        new = _new(type(self))
        new.game = self.game.clone()
        new.bucketing = self.bucketing
        new.imperfect_recall = self.imperfect_recall
        new._memo = self._memo
        return new

    # -- forwarded (the rest: :class:`~jaxcfr.game.wrapper.Wrapper`) --------
    def tree_size(self):
        told = getattr(self.game, "tree_size", None)
        return told() if callable(told) else None

    def caches_transpositions(self) -> bool:
        return False            # state_hash reads the buckets: not a transposition key

    # -- the bucketing -----------------------------------------------------
    def infoset_key(self, player: int):
        key = self.game.infoset_key(player)
        memo = self._memo
        try:
            bucket = memo.of.get((player, key), _MISSING)
        except TypeError:                       # an unhashable key: the walk names it
            return key
        if bucket is _MISSING:
            bucket = self.bucketing.bucket(player, key)
            try:
                hash(bucket)
                ok = bucket == bucket
            except TypeError:
                ok = False
            if not ok:
                raise GameError(f"the bucket of player {player}'s information set {key!r} is "
                                f"{bucket!r}, which is not hashable or not equal to itself",
                                rule="bucket-key", infoset=key)
            memo.of[(player, key)] = bucket
        if (player, key) not in memo.checked and self._acts(player):
            self._check_actions(player, key, bucket)
        return bucket

    def _acts(self, player: int) -> bool:
        inner = self.game
        return not inner.is_terminal() and not inner.is_chance() \
            and inner.player_to_act() == player

    def _check_actions(self, player: int, key, bucket) -> None:
        memo = self._memo
        legal = tuple(self.game.legal_actions())
        first = memo.first.setdefault((player, bucket), (key, legal))
        if first[1] != legal:
            raise GameError(
                f"player {player}'s information sets {first[0]!r} and {key!r} are both in "
                f"bucket {bucket!r} but their legal actions differ: {list(first[1])} and "
                f"{list(legal)} (every information set of a bucket must have the same legal "
                "actions in the same order)", rule="bucket-actions", infoset=bucket)
        memo.checked.add((player, key))


_MISSING = object()
_new = object.__new__


class BucketBy:
    """A bucketing given by a function: ``bucket_by(function)`` (a :class:`Bucketing`).

    Args:
      function: ``function(player, key) -> bucket``, or its ``"module:name"`` (so that
        a string such as ``"bucket_by(function='mypkg.cards:bucket')"`` loads it).
      imperfect_recall: declare that the buckets may make a player forget.

    Example::

        >>> import jaxcfr
        >>> by_rank = jaxcfr.bucket_by(lambda player, key: key.replace("h", "s"))
        >>> jaxcfr.lower(jaxcfr.Bucketed(jaxcfr.load_game("leduc_poker"), by_rank)).num_rows
        289
    """

    def __init__(self, function: Callable[[int, Hashable], Hashable] | str,
                 imperfect_recall: bool = False):
        self.label = function if isinstance(function, str) else None
        if isinstance(function, str):
            function = _import_function(function)
        if not callable(function):
            raise ValueError(f"bucket_by needs a function (player, key) -> bucket, "
                             f"got {function!r}")
        self.function = function
        self.imperfect_recall = bool(imperfect_recall)

    def bucket(self, player: int, key: Hashable) -> Hashable:
        return self.function(player, key)

    def __repr__(self) -> str:
        name = self.label or getattr(self.function, "__qualname__", repr(self.function))
        flag = ", imperfect_recall=True" if self.imperfect_recall else ""
        return f"bucket_by({name}{flag})"


def bucket_by(function: Callable[[int, Hashable], Hashable] | str, *,
              imperfect_recall: bool = False) -> BucketBy:
    """A bucketing from ``function(player, key) -> bucket`` (see :class:`BucketBy`)."""
    return BucketBy(function, imperfect_recall=imperfect_recall)


def _import_function(text: str) -> Callable:
    """The function a ``"module:name"`` string names, read by the one parser of references
    (:func:`jaxcfr.game.strings.parse_reference`, which decides what a config may run)."""
    ref = parse_reference(text)
    if ref is None:
        raise ValueError(f"bucket_by: function {text!r} must be 'module:name' (dotted names on "
                         "both sides of one ':', no blanks)")
    try:
        target: Any = importlib.import_module(ref.module)
    except ImportError as e:
        raise ValueError(f"bucket_by: cannot import {ref.module!r}: {e}") from None
    for part in ref.attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ValueError(f"bucket_by: module {ref.module!r} has no {ref.attr!r}")
    return target


class Composite:
    """An action abstraction and a bucketing as one object (what :func:`combine` makes).

    It has ``actions`` (and ``translate`` when the action abstraction has it) from
    ``actions``, ``bucket`` and ``imperfect_recall`` from ``bucketing``.
    """

    def __init__(self, actions: Any, bucketing: Any):
        if not is_action_abstraction(actions):
            raise TypeError(f"{actions!r} is not an action abstraction (no actions method)")
        self.action_abstraction = actions
        self.bucketing = check_bucketing(bucketing)
        self.imperfect_recall = bool(getattr(bucketing, "imperfect_recall", False))
        if callable(getattr(actions, "translate", None)):
            self.translate = actions.translate

    def actions(self, state, player: int):
        return self.action_abstraction.actions(state, player)

    def bucket(self, player: int, key: Hashable) -> Hashable:
        return self.bucketing.bucket(player, key)

    def __repr__(self) -> str:
        return f"{self.action_abstraction!r} + {self.bucketing!r}"


def combine(*parts: Any) -> Any:
    """One abstraction object from parts: at most one action abstraction (``actions``) and
    at most one bucketing (``bucket``); a single part is returned as it is.

    Raises:
      TypeError: no part, a part that is neither, or two of one kind.
    """
    if not parts:
        raise TypeError("combine() needs an action abstraction, a bucketing, or one of each")
    if len(parts) == 1:
        part = parts[0]
        if not (is_action_abstraction(part) or is_bucketing(part)):
            raise TypeError(f"{part!r} is neither an action abstraction (actions(state, "
                            "player)) nor a bucketing (bucket(player, key))")
        return part
    actions = [p for p in parts if is_action_abstraction(p)]
    buckets = [p for p in parts if is_bucketing(p)]
    if len(parts) != 2 or len(actions) != 1 or len(buckets) != 1 or actions[0] is buckets[0]:
        raise TypeError(f"combine() takes one action abstraction and one bucketing, got "
                        f"{list(parts)!r}")
    return Composite(actions[0], buckets[0])


def abstract_game(game: Any, abstraction: Any = None, *, imperfect_recall: bool = False):
    """``game`` wrapped in ``abstraction``: :class:`jaxcfr.Abstracted` for an action
    abstraction, :class:`Bucketed` for a bucketing, ``Bucketed(Abstracted(...))`` for an
    object with both (:func:`combine`); ``game`` itself for ``None``."""
    if abstraction is None:
        return game
    acts, buckets = is_action_abstraction(abstraction), is_bucketing(abstraction)
    if not (acts or buckets):
        raise TypeError(f"{abstraction!r} is not an abstraction: it needs a method "
                        "actions(state, player) (an action abstraction) or bucket(player, "
                        "key) (a bucketing)")
    if acts:
        game = Abstracted(game, abstraction)
    if buckets:
        game = Bucketed(game, abstraction, imperfect_recall=imperfect_recall)
    return game


def find_bucketing(game: Any) -> Any:
    """The bucketing of the outermost :class:`Bucketed` around ``game`` (through
    :class:`jaxcfr.Abstracted` wrappers), or ``None``."""
    while isinstance(game, (Abstracted, Bucketed)):
        if isinstance(game, Bucketed):
            return game.bucketing
        game = game.game
    return None


def imperfect_recall_declared(game: Any) -> bool:
    """Whether a :class:`Bucketed` wrapper of ``game`` (or inside it, through
    :class:`jaxcfr.Abstracted` wrappers) declares imperfect recall: the only way past
    lowering's perfect-recall check."""
    while isinstance(game, (Abstracted, Bucketed)):
        if isinstance(game, Bucketed) and game.imperfect_recall:
            return True
        game = game.game
    return False
