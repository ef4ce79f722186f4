"""Host-side strategy profiles keyed by information-set key and action label.

A :class:`Profile` maps ``(player, infoset key)`` to a distribution over that
information set's actions (in ``legal_actions()`` order). It plays (``act``),
saves and loads (``.npz`` + ``.json``), exports to an OpenSpiel ``TabularPolicy``,
and turns back into a strategy table of a lowered game (``table``).

A profile trained on an abstracted game (:class:`jaxcfr.Abstracted`) is keyed by
the abstracted action order. :meth:`Profile.distribution` maps a row onto the
actions a state allows by label (lifting, README "Action abstraction"): actions the row does not
have get zero mass, the others are renormalised, and a row with no mass there is
uniform over all of the state's legal actions. So ``act`` plays an abstracted
profile in the full game, ``table`` / :func:`evaluate_profile` evaluate it there,
and :func:`jaxcfr.lift` turns it into a profile of the full game.

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("kuhn_poker", iterations=200)
    >>> result.profile.policy(0, "0|0|")            # {action: prob} of player 0 with card 0
    >>> result.profile.save("kuhn.npz")              # kuhn.npz + kuhn.json
    >>> jaxcfr.Profile.load("kuhn.npz").act(jaxcfr.load_game("kuhn_poker"), rng=0)
"""

from __future__ import annotations

import io
import json
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any, Hashable, Sequence

import numpy as np

from jaxcfr._util.atomic import atomic_write_bytes, atomic_write_text
from jaxcfr.game.contract import GameError
from jaxcfr.game.registry import check_trusted, loadable_hint, parse_game_string
from jaxcfr.kernels.numerics import normalise
from jaxcfr._util.serialize import jsonable
from jaxcfr.tensors import LoweredGame

__all__ = ["Profile", "evaluate_profile", "encode_label", "decode_label", "openspiel_counterpart",
           "symmetric_on"]

FORMAT = "jaxcfr-profile"
FORMAT_VERSION = 1


class Profile:
    """A behaviour strategy for every player: ``{(player, key): {action: probability}}``.

    Args:
      keys: ``[I]`` (player, infoset key) per row.
      actions: ``[I]`` tuple of action labels per row (``legal_actions()`` order).
      probs: ``[I, A]`` probabilities (row ``r`` uses its first ``len(actions[r])`` slots).
      game: the game string the profile belongs to (optional, recorded by ``save``).
      game_source: the file ``game`` was read from (:meth:`load` sets it): such a string
        is only loaded without ``trust_code=True`` when it runs no unregistered code
        (:func:`jaxcfr.game.registry.check_trusted`).
    """

    def __init__(self, keys, actions, probs, *, game: str | None = None,
                 game_source: str | None = None):
        self.keys = tuple(keys)
        self.actions = tuple(tuple(a) for a in actions)
        probs = np.asarray(probs, dtype=np.float64)
        self.probs = probs
        self.game = game
        self.game_source = game_source
        self._row = {k: i for i, k in enumerate(self.keys)}

    @classmethod
    def from_lowered(cls, lowered: LoweredGame, strategy: np.ndarray) -> "Profile":
        """Wrap a ``[I, A]`` strategy table of ``lowered`` (the sink row is dropped; a
        public tree's rows are keyed ``(player, (hand label, public history))``, its
        padding rows dropped; one with merged (suit-isomorphic) chance outcomes gives
        every history of the unmerged tree, read from its representative's row:
        ``PublicLowered.expanded_rows``)."""
        strategy = np.asarray(strategy)
        if getattr(lowered, "merged", ()):
            keys, actions, rows = lowered.expanded_rows()
            return cls(keys, actions, strategy[rows], game=lowered.name or None)
        keys = lowered.infoset_keys
        real = [r for r, k in enumerate(keys) if k is not None]    # (a public tree's padding)
        if len(real) == len(keys):
            return cls(keys, lowered.infoset_actions, strategy[:len(keys)],
                       game=lowered.name or None)
        return cls([keys[r] for r in real], [lowered.infoset_actions[r] for r in real],
                   strategy[real], game=lowered.name or None)

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, item) -> bool:
        return item in self._row

    def __repr__(self) -> str:
        return f"Profile({len(self)} information sets, game={self.game!r})"

    def row(self, player: int, key: Hashable) -> int | None:
        """The row of ``player``'s information set ``key`` (``None`` if the profile lacks it)."""
        try:
            return self._row.get((player, key))
        except TypeError:                   # an unhashable key is no key of a profile
            return None

    def policy(self, player: int, key: Hashable, legal_actions=None) -> dict[Any, float]:
        """``{action: probability}`` at ``player``'s information set ``key``.

        An unseen key gets the uniform policy over ``legal_actions`` (required then).
        """
        row = self._row.get((player, key))
        if row is None:
            if legal_actions is None:
                raise KeyError(f"unknown information set {key!r} of player {player} "
                               "(pass legal_actions= for a uniform policy)")
            n = len(legal_actions)
            return {a: 1.0 / n for a in legal_actions}
        acts = self.actions[row]
        return dict(zip(acts, self.probs[row, :len(acts)].tolist()))

    def policy_strict(self, player: int, key: Hashable) -> dict[Any, float]:
        """Like :meth:`policy` but raises ``KeyError`` for an unseen key."""
        return self.policy(player, key)

    def items(self):
        """``((player, key), {action: prob})`` for every information set."""
        for (player, key) in self.keys:
            yield (player, key), self.policy(player, key)

    # -- playing -----------------------------------------------------------
    def distribution(self, player: int, key: Hashable, legal_actions: Sequence) -> np.ndarray:
        """Probabilities ``[len(legal_actions)]`` aligned with ``legal_actions``.

        Uniform for an unseen key. When the row's actions differ from ``legal_actions``
        (a profile of an abstracted game played in the full game, or the other way
        round) the row is mapped by action label, which is lifting (README, "Action
        abstraction"): an
        action the row lacks gets 0, the others are renormalised, and where they
        carry no mass the result is uniform over all of ``legal_actions``.

        Raises:
          ValueError: neither action set contains the other (not the same game).
        """
        legal = tuple(legal_actions)
        if not legal:
            raise ValueError(f"no legal actions at player {player}'s information set {key!r}")
        row = self._row.get((player, key))
        if row is None:
            return np.full(len(legal), 1.0 / len(legal))
        acts = self.actions[row]
        probs = self.probs[row, :len(acts)]
        if acts != legal:
            probs = _by_label(probs, acts, legal, player, key)
        return normalise(probs, np.ones(len(legal), dtype=bool))

    def act(self, state, rng=None):
        """Sample an action for the player to move at ``state`` (a :class:`jaxcfr.Game`).

        Args:
          state: a decision node (not chance, not terminal); it is not modified.
          rng: ``random.Random``, ``numpy.random.Generator``, an int seed, or ``None``
            (fresh entropy).
        Returns:
          One of ``state.legal_actions()``: drawn from the profile at the acting
          player's information set, uniformly when the profile has no such key.
        """
        if state.is_terminal() or state.is_chance():
            raise ValueError("act() needs a decision node (the state is "
                             f"{'terminal' if state.is_terminal() else 'a chance node'})")
        player = state.player_to_act()
        legal = list(state.legal_actions())
        probs = self.distribution(player, state.infoset_key(player), legal)
        if rng is None or isinstance(rng, (int, np.integer)):
            rng = np.random.default_rng(rng)
        u = rng.random()
        index = int(np.searchsorted(np.cumsum(probs), u * probs.sum(), side="right"))
        return legal[min(index, len(legal) - 1)]

    # -- lowered tables ----------------------------------------------------
    def table(self, lowered: LoweredGame) -> tuple[np.ndarray, dict[str, int]]:
        """A ``[I, A]`` strategy table of ``lowered`` (single game, or a public tree:
        :class:`~jaxcfr.lowering.public.PublicLowered`) from this profile.

        Rows whose key is not in the profile are uniform over their legal actions.
        Returns ``(table, counts)`` with ``counts`` = ``{"rows", "found", "missing"}``.
        Raises ``ValueError`` when a found row's action labels differ.
        """
        if lowered.batch_size is not None:
            raise ValueError("Profile.table() takes a single lowered game, not a stack")
        mask = np.asarray(lowered.tensors.legal_mask)
        table = normalise(np.zeros(mask.shape), mask)            # uniform
        found = 0
        rows = 0
        for r, infoset in enumerate(lowered.infoset_keys):
            if infoset is None:                     # a public tree's padding row
                continue
            rows += 1
            player, key = infoset
            row = self._row.get((player, key))
            if row is None:
                continue
            legal = tuple(lowered.infoset_actions[r])
            p = self.distribution(player, key, legal)
            table[r] = 0.0
            table[r, :len(p)] = p
            found += 1
        return table, {"rows": rows, "found": found, "missing": rows - found}

    # -- files -------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``<path>.npz`` (``probs``) and ``<path>.json`` (keys, labels, game).

        Keys and labels may be str, int, float, bool, None, bytes, or tuples of
        those (nested); tuples and bytes are tagged in the JSON. Returns the npz path.
        """
        hint = loadable_hint(self.game) if self.game else None
        if hint is not None:            # saved all the same: the strategies are worth keeping
            warnings.warn(f"Profile.save({os.fspath(path)!r}): {hint}", stacklevel=2)
        base = _base(path)
        base.parent.mkdir(parents=True, exist_ok=True)
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "game": self.game,
                "npz": base.name + ".npz",
                "keys": [[int(p), _encode_label_fast(k)] for p, k in self.keys],
                "actions": [[a if type(a) is str else _encode_label_fast(a) for a in acts]
                            for acts in self.actions]}
        text = json.dumps(meta)
        buf = io.BytesIO()
        np.savez(buf, probs=self.probs)
        atomic_write_bytes(base.with_name(base.name + ".npz"), buf.getvalue())
        atomic_write_text(base.with_name(base.name + ".json"), text)
        return base.with_name(base.name + ".npz")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Profile":
        """Read a profile written by :meth:`save` (give the ``.npz``, the ``.json`` or the stem)."""
        base = _base(path)
        json_path = base.with_name(base.name + ".json")
        npz_path = base.with_name(base.name + ".npz")
        if not json_path.is_file():
            if npz_path.is_file():
                raise FileNotFoundError(f"profile {npz_path} has no {json_path.name} beside it "
                                        "(its keys and action labels; Profile.save writes both)")
            raise FileNotFoundError(f"no profile {os.fspath(path)}")
        try:
            meta = json.loads(json_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{json_path}: not a valid profile sidecar: {e}") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise ValueError(f"{json_path} is not a jaxcfr profile")
        if meta.get("version") != FORMAT_VERSION:
            raise ValueError(f"{json_path}: profile format version {meta.get('version')!r}; "
                             f"this jaxcfr reads version {FORMAT_VERSION}")
        if not npz_path.is_file():
            raise FileNotFoundError(f"profile {json_path} has no {npz_path.name} beside it (its "
                                    "probabilities; Profile.save writes both)")
        try:
            with np.load(npz_path, allow_pickle=False) as z:
                probs = z["probs"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise ValueError(f"{npz_path} is not a readable profile: {e}") from None
        keys, actions = _read_labels(meta, json_path)
        if probs.ndim != 2 or not (np.issubdtype(probs.dtype, np.floating)
                                   or np.issubdtype(probs.dtype, np.integer)):
            raise ValueError(f"{npz_path}: probs must be a [rows, actions] table of numbers, "
                             f"got shape {probs.shape} of {probs.dtype}")
        if len(keys) != len(actions) or probs.shape[0] != len(keys):
            raise ValueError(f"{base}: {len(keys)} keys, {len(actions)} action lists and "
                             f"{probs.shape[0]} probability rows do not match")
        _check_rows(keys, actions, probs, npz_path)
        game = meta.get("game")
        if game is not None and not isinstance(game, str):
            raise ValueError(f"{json_path}: the profile's game must be a game string, got "
                             f"{game!r}")
        return cls(keys, actions, probs, game=game, game_source=str(json_path))

    def recorded_game(self, trust_code: bool = False) -> str:
        """The game string the profile records, checked for code it would run when it was
        read from a file (see ``game_source``).

        Raises:
          ValueError: the profile records no game; GameError: ``untrusted-code``.
        """
        if not self.game:
            raise ValueError("the profile records no game: name the game to evaluate it on")
        hint = loadable_hint(self.game)
        if hint is not None:
            raise ValueError(f"the profile records the game {self.game!r}: {hint}")
        if self.game_source is not None:
            check_trusted(self.game, self.game_source, trust_code)
        return self.game

    # -- OpenSpiel ---------------------------------------------------------
    def to_openspiel(self, pyspiel_game=None, game=None, *, trust_code: bool = False):
        """This profile as an OpenSpiel ``TabularPolicy`` (needs the ``openspiel`` extra).

        Args:
          pyspiel_game: a ``pyspiel.Game`` or an OpenSpiel game string; default: the
            OpenSpiel game of the profile's recorded game (an ``openspiel:`` game, Kuhn,
            Leduc or Liar's dice: :func:`openspiel_counterpart`).
          game: our root state or a game string of the same game; default: the
            profile's recorded game (:meth:`recorded_game`).
        See :func:`jaxcfr.game.openspiel.tabular_policy` for how the trees are paired.

        Example::

            >>> jaxcfr.solve("kuhn_poker", iterations=100).profile.to_openspiel()
        """
        from jaxcfr.game.openspiel import tabular_policy
        from jaxcfr.game.registry import load_game
        if game is None:
            if not self.game:
                raise ValueError("to_openspiel() needs game= (the profile records no game)")
            game = self.recorded_game(trust_code)
        from jaxcfr.lowering.public import PublicLowered, public_game_of
        public = public_game_of(game)
        if public is not None:              # keyed (player, (hand, public history))
            if isinstance(public, PublicLowered):
                raise ValueError("to_openspiel() of a public tree needs its PublicGame or game "
                                 "string (a lowered public tree cannot be expanded)")
            from jaxcfr.game.public_expand import expand
            if pyspiel_game is None:
                text = _history_text(game if isinstance(game, str) else self.game or "")
                pyspiel_game = openspiel_counterpart(text) if text else None
                if pyspiel_game is None:
                    raise ValueError(f"to_openspiel() needs pyspiel_game= for "
                                     f"{text or 'this public game'}: no OpenSpiel game is "
                                     "known to be the same game")
            # the expanded history tree, hands dealt seat by seat as OpenSpiel deals them:
            # its information-set keys are the profile's
            return tabular_policy(self, pyspiel_game, expand(public, deal="seat"))
        if pyspiel_game is None:
            text = game if isinstance(game, str) else self.game
            pyspiel_game = openspiel_counterpart(text) if text else None
            if pyspiel_game is None:
                raise ValueError(f"to_openspiel() needs pyspiel_game= for {text or 'this game'}"
                                 ": no OpenSpiel game is known to be the same game (known: "
                                 "openspiel:NAME, kuhn_poker, leduc_poker, liars_dice)")
        if isinstance(game, (str, os.PathLike)):
            game = load_game(game)
        return tabular_policy(self, pyspiel_game, game)

    # -- metrics -----------------------------------------------------------
    def evaluate(self, game=None, *, precision: str = "float32",
                 trust_code: bool = False) -> dict[str, Any]:
        """Exact metrics of this profile in ``game`` (see :func:`evaluate_profile`)."""
        return evaluate_profile(self, game, precision=precision, trust_code=trust_code)


def evaluate_profile(profile: Profile, game=None, *, precision: str = "float32",
                     trust_code: bool = False) -> dict[str, Any]:
    """Values, best-response values, NashConv / exploitability of ``profile`` in ``game``.

    Information sets the profile does not have play uniformly (``missing`` counts them);
    a non-empty profile that has none of the game's information sets is refused
    (``ValueError``: it was saved for another game).

    Args:
      game: a game string, Game or LoweredGame, or a public tree (a PublicGame, a lowered
        one, a game string naming one: evaluated on its public tree); default: the
        profile's recorded game
        (:meth:`Profile.recorded_game`: read from a file, it must run no unregistered
        code unless ``trust_code``).
    Returns:
      :func:`jaxcfr.evaluate`'s metrics for one game (``values [P]``, ...), as plain
      JSON values, plus ``rows``, ``found``, ``missing`` and ``game``.
    """
    from jaxcfr.solvers.analytics import evaluate
    from jaxcfr.lowering.lower import as_lowered
    from jaxcfr.lowering.public import PublicLowered, lower_public, public_game_of
    if game is None:
        game = profile.recorded_game(trust_code)
    name = game if isinstance(game, str) else getattr(game, "name", "") or type(game).__name__
    public = public_game_of(game)          # a public tree: keyed (player, (hand, history))
    if public is None:
        lowered = as_lowered(game)
    else:
        # a profile need not be suit-symmetric: a PublicGame is walked with every chance
        # outcome (exact for any profile); a tree lowered with merged outcomes evaluates
        # only a profile that is symmetric on it, exactly
        lowered = public if isinstance(public, PublicLowered) else lower_public(
            public, name=name, merges=False)
        if lowered.merged and not symmetric_on(profile, lowered):
            raise ValueError("the profile is not exactly the same on suit-isomorphic public "
                             "histories (a merged chance outcome's rows are not its "
                             "representative's renamed, or the rows above it are not "
                             "symmetric): a public tree lowered with merged chance outcomes "
                             "cannot evaluate it; give the PublicGame or its game string "
                             "(walked without merging), or lower it with merges=False")
    table, counts = profile.table(lowered)
    if len(profile) and counts["rows"] and not counts["found"]:
        raise ValueError(f"the profile has none of the {counts['rows']} information sets of "
                         f"{name}" + (f" (it was saved for {profile.game})" if profile.game
                                      else "") + ": evaluate it on its own game")
    out = jsonable(evaluate(lowered, table, dtype=precision))
    out.update(counts)
    out["game"] = name
    return out


def symmetric_on(profile: Profile, lowered) -> bool:
    """Whether the evaluation of ``profile`` on a public tree ``lowered`` whose chance
    outcomes are merged (suit isomorphism) is exact: every history of the unmerged tree
    that ``lowered`` reads from one row (``PublicLowered.expanded_rows``) has the same
    distribution, and above each merged outcome every row is that of the hand the
    outcome's renaming takes it to (``merge_source``: the reaches are symmetric), exactly.
    A history the profile lacks plays uniformly, as :meth:`Profile.table` plays it."""
    seen: dict[int, np.ndarray] = {}
    for (player, key), actions, row in zip(*lowered.expanded_rows()):
        p = profile.distribution(player, key, actions)
        first = seen.setdefault(int(row), p)
        if first is not p and not np.array_equal(first, p):
            return False
    table, _ = profile.table(lowered)
    t = lowered.tensors
    sizes = [len(x) for x in lowered.hands.labels]
    for e, (n, _) in enumerate(lowered.merged):
        a = int(t.parent[n])
        while a >= 0:
            base = int(t.node_base[a])
            if base >= 0:
                p = int(t.node_player[a])
                rows = table[base:base + sizes[p]]
                if not np.array_equal(rows, rows[t.merge_source[e, p, :sizes[p]]]):
                    return False
            a = int(t.parent[a])
    return True


def _history_text(text: str) -> str:
    """``text`` without its ``tree='public'`` (the history-tree game of the same name)."""
    try:
        name, params = parse_game_string(text.strip())
    except GameError:
        return ""
    params.pop("tree", None)
    if not params:
        return name
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"


def openspiel_counterpart(text: str) -> str | None:
    """The OpenSpiel game string of the same game as jaxcfr game string ``text``, when there
    is one (``openspiel:X``, Kuhn, Leduc with its default deck, Liar's dice), else ``None``.

    Example::

        >>> openspiel_counterpart("liars_dice(dice=2, sides=3)")
        'liars_dice(numdice=2,dice_sides=3)'
    """
    text = text.strip()
    if text.startswith("openspiel:"):
        return text[len("openspiel:"):]
    try:
        name, params = parse_game_string(text)
    except GameError:
        return None
    if name == "kuhn_poker" and set(params) <= {"players"}:
        return f"kuhn_poker(players={int(params.get('players', 2))})"
    if name == "leduc_poker" and params.get("ranks", 3) == 3 and params.get("suits", 2) == 2 \
            and tuple(params.get("raise_sizes", (2, 4))) == (2, 4):
        return "leduc_poker"
    if name == "liars_dice" and set(params) <= {"dice", "sides"}:
        return (f"liars_dice(numdice={int(params.get('dice', 1))},"
                f"dice_sides={int(params.get('sides', 6))})")
    return None


def _by_label(probs: np.ndarray, acts: tuple, legal: tuple, player: int, key) -> np.ndarray:
    """``probs`` over ``acts`` as weights over ``legal`` (0 for actions ``acts`` lacks)."""
    index = {a: i for i, a in enumerate(acts)}
    if not (index.keys() <= set(legal) or set(legal) <= index.keys()):
        raise ValueError(
            f"the profile's information set {key!r} of player {player} has actions "
            f"{list(acts)} but the state allows {list(legal)}: neither contains the other, "
            "so the profile is not one of this game or of an abstraction of it")
    return np.asarray([probs[index[a]] if a in index else 0.0 for a in legal])


# -- label encoding -------------------------------------------------------------
def encode_label(x: Any) -> Any:
    """A JSON value for a key or action label; tuples and bytes are tagged."""
    if isinstance(x, tuple):
        return {"tuple": [encode_label(v) for v in x]}
    if isinstance(x, bytes):
        return {"bytes": x.hex()}
    if isinstance(x, (bool, str)) or x is None:
        return x
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    raise TypeError(f"cannot save label {x!r} of type {type(x).__name__}: keys and actions "
                    "must be str, int, float, bool, None, bytes or tuples of those")


def _encode_label_fast(x: Any) -> Any:
    """:func:`encode_label` for one file's many labels, the same JSON values: strings and
    ints (most labels, and most entries of a tuple) without a call or a chain of
    ``isinstance`` each (the README turn's profile, 167,228 keys of a hand and a history
    and as many action lists: 2.3 CPU-s of its 3.1 to write went to encoding them, 1.2
    now)."""
    kind = type(x)
    if kind is str:
        return x
    if kind is tuple:
        return {"tuple": [v if type(v) is str or type(v) is int else _encode_label_fast(v)
                          for v in x]}
    return encode_label(x)


def decode_label(x: Any) -> Any:
    """Inverse of :func:`encode_label`."""
    if isinstance(x, dict):
        if set(x) == {"tuple"}:
            if not isinstance(x["tuple"], list):
                raise ValueError(f"a tagged tuple {{'tuple': [...]}} holds a list, got {x!r}")
            return tuple(decode_label(v) for v in x["tuple"])
        if set(x) == {"bytes"}:
            try:
                return bytes.fromhex(x["bytes"])
            except (TypeError, ValueError):
                raise ValueError(f"a tagged bytes label {{'bytes': HEX}} holds hexadecimal "
                                 f"digits, got {x!r}") from None
        raise ValueError(f"unknown tagged label {x!r}")
    if isinstance(x, list):
        raise ValueError(f"untagged list label {x!r} (tuples are written as {{'tuple': [...]}})")
    return x


#: How far a saved row's probabilities may sum from 1 (a float32 average strategy is
#: normalised to about 1e-7 a row; a hand-edited or altered row is refused).
ROW_SUM_TOLERANCE = 1e-4


def _read_labels(meta: dict, json_path: Path) -> tuple[list, list]:
    """The ``[I]`` keys ``(player, key)`` and ``[I]`` action tuples of a profile sidecar,
    each entry checked: a mistake names the file and the entry (``keys[3]``)."""
    lists = {}
    for field in ("keys", "actions"):
        value = meta.get(field)
        if not isinstance(value, list):
            raise ValueError(f"{json_path}: '{field}' must be a list, got "
                             f"{_short(value) if field in meta else 'nothing'}")
        lists[field] = value
    keys, seen = [], {}
    for i, entry in enumerate(lists["keys"]):
        if not (isinstance(entry, list) and len(entry) == 2):
            raise ValueError(f"{json_path}: keys[{i}] must be [player, key], got "
                             f"{_short(entry)}")
        player, label = entry
        if isinstance(player, bool) or not isinstance(player, int) or player < 0:
            raise ValueError(f"{json_path}: keys[{i}]: the player must be an index 0, 1, ..., "
                             f"got {_short(player)}")
        try:
            key = (player, decode_label(label))
            first = seen.setdefault(key, i)
        except (ValueError, TypeError) as e:             # bad hex, a tag, unhashable
            raise ValueError(f"{json_path}: keys[{i}]: {e}") from None
        if first != i:
            raise ValueError(f"{json_path}: keys[{i}] repeats keys[{first}] (player {player}, "
                             f"{_short(key[1])}): each information set has one row")
        keys.append(key)
    actions = []
    for i, acts in enumerate(lists["actions"]):
        if not isinstance(acts, list):
            raise ValueError(f"{json_path}: actions[{i}] must be a list of action labels, got "
                             f"{_short(acts)}")
        try:
            actions.append(tuple(decode_label(a) for a in acts))
        except (ValueError, TypeError) as e:
            raise ValueError(f"{json_path}: actions[{i}]: {e}") from None
    return keys, actions


def _check_rows(keys: list, actions: list, probs: np.ndarray, npz_path: Path) -> None:
    """Every row of ``probs`` ``[I, A]`` a distribution over its ``actions``: as wide as
    they are, finite, non-negative, summing to 1 (``ROW_SUM_TOLERANCE``); the first row
    that is not is named with its key."""
    counts = np.array([len(a) for a in actions], dtype=np.int64)          # [I]
    if counts.size and counts.max() > probs.shape[1]:
        r = int(np.argmax(counts))
        raise ValueError(f"{npz_path}: row {r} (player {keys[r][0]}, {_short(keys[r][1])}) "
                         f"has {counts[r]} actions but probs has {probs.shape[1]} columns")
    used = np.arange(probs.shape[1]) < counts[:, None]                     # [I, A]
    table = np.where(used, probs, 0.0).astype(np.float64)
    sums = table.sum(axis=1)                                               # [I]
    for what, bad in (("NaN or inf", ~np.isfinite(table).all(axis=1)),
                      ("a negative probability", (table < 0).any(axis=1)),
                      ("probabilities that do not sum to 1",
                       (counts > 0) & ~(np.abs(sums - 1.0) <= ROW_SUM_TOLERANCE))):
        if bad.any():
            r = int(np.argmax(bad))
            shown = dict(zip(actions[r], probs[r, :counts[r]].tolist()))
            raise ValueError(f"{npz_path}: row {r} (player {keys[r][0]}, {_short(keys[r][1])}) "
                             f"holds {what}: {_short(shown)}; a saved profile's rows are "
                             f"distributions over their actions (was the file edited?)")


def _short(value: Any, most: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= most else text[:most - 3] + "..."


def _base(path) -> Path:
    path = Path(path)
    return path.with_suffix("") if path.suffix in (".npz", ".json") else path
