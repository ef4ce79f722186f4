"""Chance fixed by sampling: games whose chance nodes each have one drawn outcome.

A game whose chance cannot be enumerated (``chance_outcomes()`` is ``None``) can still
be lowered once its chance is *drawn*: :class:`Determinized` answers every chance
node with the one outcome ``sample_chance(rng)`` draws there (probability 1), so the
walker (:func:`jaxcfr.lower`) enumerates every decision below it and checks the whole
contract as usual. :class:`EmpiricalChance` puts ``M`` such draws under one chance
root (probability ``1 / M`` each), so that information sets that several draws share
become one row: exact passes over it compute the chance-sampled (Monte Carlo)
counterfactual values of the draws, unbiased for the real game's.

Each draw ``j`` has its own ``random.Random(seeds[j])``; a chance node calls
``sample_chance`` on it the first time it is asked, and the walker asks every chance
node once, in its fixed order, so a draw is a function of its seed alone.

Example::

    >>> import jaxcfr
    >>> from jaxcfr.game.determinize import EmpiricalChance
    >>> game = jaxcfr.load_game("sampled_dice_poker(dice=2, sides=3)")
    >>> lowered = jaxcfr.lower(EmpiricalChance(game, seeds=[1, 2, 3]))
    >>> lowered.tensors.chance_prob[1:4]         # the three draws, 1/3 each
"""

from __future__ import annotations

import random
from typing import Any, Hashable, Sequence

from jaxcfr.game.contract import CHANCE, GameError, real_number, reraise_as_game_error
from jaxcfr.game.protocol import Game
from jaxcfr.game.wrapper import Wrapper

__all__ = ["Determinized", "EmpiricalChance", "draw_seed", "draw_prefix", "chance_below"]


def draw_seed(*parts: int) -> int:
    """A 63-bit seed from integers (run seed, step, draw), the same in every process."""
    import hashlib
    data = b"".join(int(p).to_bytes(8, "little", signed=True) for p in parts)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") >> 1


def draw_prefix(game: Any, seed: int) -> tuple[tuple, Any, random.Random]:
    """Draw the chance nodes from ``game``'s root to its first decision (or terminal)
    with ``Random(seed)``: ``(outcomes, state, rng)``, the state a clone past them and
    the generator ready for what follows (as :class:`Determinized` would have drawn).

    Raises:
      GameError: the game broke the contract or raised (``game-exception``), with the
        history drawn so far.
    """
    rng = random.Random(seed)
    state = game.clone()
    outcomes: list = []
    try:
        while state.is_chance() and not state.is_terminal():
            action, prob = state.sample_chance(rng)
            _check_drawn(prob, outcomes)
            outcomes.append(action)
            state.step(action)
    except Exception as exc:  # noqa: BLE001 - the game's own exceptions get a rule and history
        reraise_as_game_error(exc, tuple(outcomes))
    return tuple(outcomes), state, rng


def _check_drawn(prob: Any, history) -> float:
    """A drawn outcome's probability as a float in (0, 1], else ``chance-probability``."""
    p = real_number(prob)
    if p is None or not 0.0 < p <= 1.0:
        raise GameError(f"sample_chance() returned probability {prob!r} (must be a number in "
                        "(0, 1])", rule="chance-probability",
                        history=None if history is None else tuple(history))
    return p


def chance_below(state: Any, listed: bool = True) -> bool:
    """Whether a chance node lies in the subtree of ``state`` (a depth-first search that
    stops at the first); ``listed=False``: only chance nodes that cannot list their
    outcomes count (those :class:`Determinized` with ``enumerate_listed`` draws)."""
    stack = [state]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        if s.is_chance():
            if listed or s.chance_outcomes() is None:
                return True
            actions = [a for a, _ in s.chance_outcomes()]
        else:
            actions = s.legal_actions()
        for a in actions:
            child = s.clone()
            child.step(a)
            stack.append(child)
    return False


class Determinized(Wrapper):
    """``game`` with every chance node answered by one drawn outcome (probability 1).

    Decision nodes, terminals, keys and returns are the wrapped game's. The draw is made
    by ``game.sample_chance(rng)`` when the chance node is first asked for its outcomes;
    a clone made after that keeps it, one made before draws again (from the shared rng).
    ``drawn`` holds the probabilities the draws reported, along the path.

    With ``enumerate_listed=True`` only chance nodes that cannot list their outcomes are
    drawn; the others keep their listed outcomes (the expectation over them is exact).
    ``tally`` (a one-element list shared by every clone) counts the draws made.
    """

    __slots__ = ("game", "rng", "_outcome", "drawn", "enumerate_listed", "tally")
    #: Clones share the generator on purpose (a clone made before a draw draws again):
    #: :func:`jaxcfr.game.validate.probe_blind_spots` does not take that for a bad clone.
    DRAWS_AS_WALKED = True

    def __init__(self, game: Any, rng: random.Random, drawn: tuple = (), *,
                 enumerate_listed: bool = False, tally: list | None = None):
        self.game = game
        self.rng = rng
        self._outcome = None
        self.drawn = drawn
        self.enumerate_listed = enumerate_listed
        self.tally = [0] if tally is None else tally

    # (the rest: :class:`~jaxcfr.game.wrapper.Wrapper`)
    def chance_outcomes(self):
        if not self.game.is_chance():
            return self.game.chance_outcomes()
        if self.enumerate_listed and self._outcome is None:
            listed = self.game.chance_outcomes()
            if listed is not None:
                return listed
        if self._outcome is None:
            self.tally[0] += 1
            action, prob = self.game.sample_chance(self.rng)
            self._outcome = (action, _check_drawn(prob, None))
        return [(self._outcome[0], 1.0)]

    def sample_chance(self, rng):
        outcomes = self.chance_outcomes()
        return outcomes[0][0], 1.0

    def step(self, action: Hashable) -> None:
        if self.game.is_chance() and (self._outcome is not None or not self.enumerate_listed):
            if self._outcome is None or action != self._outcome[0]:
                raise GameError(f"{action!r} is not the drawn chance outcome",
                                rule="illegal-action")
            self.drawn = self.drawn + (self._outcome[1],)
        self.game.step(action)
        self._outcome = None

    def clone(self) -> "Determinized":
        out = Determinized(self.game.clone(), self.rng, self.drawn,
                           enumerate_listed=self.enumerate_listed, tally=self.tally)
        out._outcome = self._outcome
        return out

    def nash_value(self):
        return self.game.nash_value()

    def state_hash(self) -> int:
        return self.game.state_hash()

    def caches_transpositions(self) -> bool:
        """The wrapped game's: a memoised subtree shares the draws made below it, as the
        walks of the game itself do (:mod:`jaxcfr.profiles.host_values`)."""
        return self.game.caches_transpositions()

    def __repr__(self) -> str:
        return f"Determinized({self.game!r})"


class EmpiricalChance(Game):
    """A chance root over ``len(seeds)`` determinized copies of ``game``, ``1/M`` each.

    Outcome ``j`` (the integer ``j``) leads to ``Determinized(game, Random(seeds[j]))``
    with probability ``counts[j] / sum(counts)`` (``counts``: how many draws the seed
    stands for, 1 each by default). The root is a chance node even if ``game``'s root
    is not. With ``enumerate_listed``, draw ``j`` draws only its chance prefix
    (:func:`draw_prefix`) and the chance nodes below it that cannot list their outcomes;
    those that can keep their listed outcomes (as the sampled-chance trainer's draws).
    """

    __slots__ = ("game", "seeds", "counts", "enumerate_listed", "_inner")
    DRAWS_AS_WALKED = True              # its draws are Determinized (see there)

    def __init__(self, game: Any, seeds: Sequence[int], counts: Sequence[int] | None = None,
                 *, enumerate_listed: bool = False):
        if not len(seeds):
            raise ValueError("EmpiricalChance needs at least one seed")
        self.game = game
        self.seeds = tuple(int(s) for s in seeds)
        self.counts = None if counts is None else tuple(int(c) for c in counts)
        self.enumerate_listed = bool(enumerate_listed)
        if self.counts is not None and (len(self.counts) != len(self.seeds)
                                        or min(self.counts) < 1):
            raise ValueError("EmpiricalChance needs one positive count per seed")
        self._inner = None

    @property
    def num_players(self) -> int:
        return self.game.num_players

    def _root(self) -> bool:
        return self._inner is None

    def is_terminal(self) -> bool:
        return False if self._root() else self._inner.is_terminal()

    def is_chance(self) -> bool:
        return True if self._root() else self._inner.is_chance()

    def player_to_act(self) -> int:
        return CHANCE if self._root() else self._inner.player_to_act()

    def chance_outcomes(self):
        if self._root():
            if self.counts is None:
                p = 1.0 / len(self.seeds)
                return [(j, p) for j in range(len(self.seeds))]
            total = sum(self.counts)
            return [(j, c / total) for j, c in enumerate(self.counts)]
        return self._inner.chance_outcomes()

    def sample_chance(self, rng):
        if self._root():
            outcomes = self.chance_outcomes()
            j = rng.choices(range(len(outcomes)), [p for _, p in outcomes])[0]
            return outcomes[j]
        return self._inner.sample_chance(rng)

    def legal_actions(self):
        return [] if self._root() else self._inner.legal_actions()

    def step(self, action: Hashable) -> None:
        if self._root():
            if not isinstance(action, int) or not 0 <= action < len(self.seeds):
                raise GameError(f"{action!r} is not a draw (0..{len(self.seeds) - 1})",
                                rule="illegal-action")
            if self.enumerate_listed:
                _, state, rng = draw_prefix(self.game, self.seeds[action])
                self._inner = Determinized(state, rng, enumerate_listed=True)
            else:
                self._inner = Determinized(self.game.clone(), random.Random(self.seeds[action]))
            return
        self._inner.step(action)

    def clone(self) -> "EmpiricalChance":
        out = EmpiricalChance.__new__(EmpiricalChance)
        out.game, out.seeds, out.counts = self.game, self.seeds, self.counts
        out.enumerate_listed = self.enumerate_listed
        out._inner = None if self._inner is None else self._inner.clone()
        return out

    def terminal_returns(self):
        if self._root():
            raise GameError("the root is not terminal", rule="terminal-returns")
        return self._inner.terminal_returns()

    def infoset_key(self, player: int):
        if self._root():
            raise GameError("the root is a chance node", rule="infoset-key")
        return self._inner.infoset_key(player)

    def nash_value(self):
        return self.game.nash_value()

    def __repr__(self) -> str:
        return f"EmpiricalChance({self.game!r}, {len(self.seeds)} draws)"
