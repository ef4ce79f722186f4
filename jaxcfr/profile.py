"""Host-side strategy profiles keyed by information-set key and action label.

Example::

    >>> import jaxcfr
    >>> result = jaxcfr.solve("kuhn_poker", iterations=200)
    >>> result.profile.policy(0, "0")           # player 0 holding the lowest card: {action: prob}
"""

from __future__ import annotations

from typing import Any, Hashable

import numpy as np

from jaxcfr.lowering import LoweredGame

__all__ = ["Profile"]


class Profile:
    """A behaviour strategy for every player: ``{(player, key): {action: probability}}``.

    Args:
      keys: ``[I]`` (player, infoset key) per row.
      actions: ``[I]`` tuple of action labels per row (``legal_actions()`` order).
      probs: ``[I, A]`` probabilities (row ``r`` uses its first ``len(actions[r])`` slots).
    """

    def __init__(self, keys, actions, probs):
        self.keys = tuple(keys)
        self.actions = tuple(tuple(a) for a in actions)
        probs = np.asarray(probs, dtype=np.float64)
        self.probs = probs
        self._row = {k: i for i, k in enumerate(self.keys)}

    @classmethod
    def from_lowered(cls, lowered: LoweredGame, strategy: np.ndarray) -> "Profile":
        """Wrap a ``[I, A]`` strategy table of ``lowered`` (the sink row is dropped)."""
        strategy = np.asarray(strategy)
        num_real = len(lowered.infoset_keys)
        return cls(lowered.infoset_keys, lowered.infoset_actions, strategy[:num_real])

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, item) -> bool:
        return item in self._row

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
