"""Random valid PublicGames for the public-tree tests.

:class:`RandomPublicGame` builds, from a seed, a small deck, each player's hands (all
of one size per player, 1 or 2 cards, a random subset of the possible ones, random
weights, some zero), and a random public tree: decisions of either player with 1 to 3
actions, public chance dealing a board card uniformly from the cards the hands and the
board do not hold (blocking the hands that hold it), or a public coin without cards,
and terminals of every operator (Fold, Showdown with ties, zero-sum PayoffTable).
With ``players`` above 2: each player's hands as above (a deck two cards larger per
extra player), decisions of any player, and terminals Fold and PayoffTable (general
sum: Showdown takes two players).

Example::

    game = RandomPublicGame(seed=3)
    jaxcfr.lower_public(game); jaxcfr.lower(jaxcfr.expand_public(game))
"""

from __future__ import annotations

import itertools
import random

import numpy as np

from jaxcfr.game import CHANCE, TERMINAL, Fold, GameError, PayoffTable, PublicGame, Showdown

__all__ = ["RandomPublicGame"]


class RandomPublicGame(PublicGame):
    """A random public game (see the module); ``node`` indexes the shared tree."""

    def __init__(self, seed: int, max_depth: int = 4, players: int = 2):
        rng = random.Random(seed)
        self.num_players = players
        self.deck = rng.randint(4, 6) + 2 * (players - 2)
        sizes = [rng.choice((1, 1, 2)), rng.choice((1, 2))] + \
            [rng.choice((1, 1, 2)) for _ in range(players - 2)]
        self._hands, self._weights = [], []
        for p in range(players):
            combos = list(itertools.combinations(range(self.deck), sizes[p]))
            rng.shuffle(combos)
            chosen = sorted(combos[:rng.randint(2, min(6, len(combos)))])
            self._hands.append(tuple(chosen))
            w = [rng.choice((0.0, 0.5, 1.0, 2.0, 3.0)) for _ in chosen]
            w[0] = 1.0
            self._weights.append(tuple(w))
        self._held = sum(sizes)
        self.tree: list[tuple] = []
        self._build(rng, max_depth, ())
        self.node = 0

    def _build(self, rng, depth: int, board: tuple) -> int:
        index = len(self.tree)
        self.tree.append(None)
        left = self.deck - self._held - len(board)
        r = rng.random()
        if depth == 0 or r < 0.2:
            self.tree[index] = ("t", self._terminal(rng))
        elif r < 0.35 and left >= 1:
            cards = [c for c in range(self.deck) if c not in board]
            p = 1.0 / left
            children = tuple((c, p, self._build(rng, depth - 1, board + (c,))) for c in cards)
            self.tree[index] = ("c", children, True)
        elif r < 0.45:
            probs = [rng.choice((1, 2, 3)) for _ in range(rng.randint(1, 3))]
            total = sum(probs)
            children = tuple((f"coin{k}", q / total, self._build(rng, depth - 1, board))
                             for k, q in enumerate(probs))
            self.tree[index] = ("c", children, False)
        else:
            player = rng.randrange(self.num_players)
            count = rng.randint(1, 3)
            children = tuple((f"a{k}", self._build(rng, depth - 1, board))
                             for k in range(count))
            self.tree[index] = ("d", player, children)
        return index

    def _terminal(self, rng):
        if self.num_players != 2:
            shape = tuple(len(h) for h in self._hands)
            if rng.randrange(2) == 0:
                return Fold(tuple(float(rng.randint(-3, 3)) for _ in shape))
            return PayoffTable(np.array([rng.randint(-4, 4) for _ in range(
                len(shape) * int(np.prod(shape)))], float).reshape((len(shape),) + shape))
        kind = rng.randrange(3)
        if kind == 0:
            x = float(rng.randint(-3, 3))
            return Fold((x, -x))
        if kind == 1:
            return Showdown(float(rng.randint(1, 4)),
                            tuple(tuple(float(rng.randint(0, 3)) for _ in self._hands[p])
                                  for p in range(2)))
        table = np.array([[rng.randint(-4, 4) for _ in self._hands[1]]
                          for _ in self._hands[0]], float)
        return PayoffTable(np.stack([table, -table]))

    # -- the protocol -----------------------------------------------------------
    def hands(self, player):
        return tuple("".join(map(str, h)) for h in self._hands[player])

    def hand_weights(self, player):
        return self._weights[player]

    def hand_cards(self, player):
        return self._hands[player]

    def is_terminal(self):
        return self.tree[self.node][0] == "t"

    def is_chance(self):
        return self.tree[self.node][0] == "c"

    def player_to_act(self):
        entry = self.tree[self.node]
        return {"t": TERMINAL, "c": CHANCE}.get(entry[0], entry[1] if entry[0] == "d" else 0)

    def legal_actions(self):
        entry = self.tree[self.node]
        return [a for a, _ in entry[2]] if entry[0] == "d" else []

    def chance_outcomes(self):
        entry = self.tree[self.node]
        return [(o, p) for o, p, _ in entry[1]] if entry[0] == "c" else None

    def outcome_cards(self, outcome):
        return (outcome,) if isinstance(outcome, int) else ()

    def step(self, action):
        entry = self.tree[self.node]
        if entry[0] == "d":
            nxt = dict(entry[2]).get(action)
        elif entry[0] == "c":
            nxt = {o: n for o, _, n in entry[1]}.get(action)
        else:
            nxt = None
        if nxt is None:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.node = nxt

    def clone(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def terminal_value(self):
        return self.tree[self.node][1]
