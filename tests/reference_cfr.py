"""A slow, obviously-correct NumPy reference of the CFR family and of exact analytics.

Everything here walks the game tree recursively on the host (the games it is
used on are small) and keys every table by ``(player, infoset_key)``, exactly the
keys ``jaxcfr.lower`` stores in ``LoweredGame.infoset_keys``. It shares no code
with ``jaxcfr.solvers.solver`` / ``jaxcfr.kernels.passes`` /
``jaxcfr.solvers.analytics``: the update rules are written out again from their
documentation.

Per iteration ``t`` (1-based), for the players being updated (all at once when
simultaneous; player 0, then 1, ... when alternating, each seeing the regrets
already updated this iteration), with ``sigma_t = RM(R_{t-1} [+ P_{t-1}])``, the
counterfactual action values ``q`` and instantaneous regret ``r_t = q - sigma_t . q``::

    R_t = floor(discount_t(R_{t-1} + r_t))   discount: x * t^a / (t^a + 1), a = alpha if x > 0
                                             else beta (only with ``discount``);
                                             floor: max(., 0) (only with ``floor``)
    S_t = S_{t-1} + (t / 2^20)^gamma pi_own(I) * sigma_t
                                             (iteration t weighs t^gamma, in units of 2^20
                                             iterations; the same average as decaying
                                             S_{t-1} by ((t - 1) / t)^gamma: each row is
                                             normalised)
    P_t = r_t                                (the prediction, kept only with ``predictive``;
                                             0 otherwise)

Analytics: exact expected values, counterfactual / history / information-set
values, best responses by brute force over every pure strategy (vectorised over
terminal sequences) and by the textbook recursion, NashConv and exploitability,
and the value of a two-player zero-sum game by the sequence-form LP (SciPy).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Hashable

import numpy as np

from jaxcfr import CHANCE, TERMINAL, Game

__all__ = ["Node", "Tree", "PRESETS", "ReferenceCFR", "regret_matching", "normalise",
           "expected_values", "counterfactual_values", "history_values", "infoset_values",
           "best_response_value_recursive", "best_response_value_brute_force", "nash_conv",
           "sequence_form_value", "DifferentDepths", "profile_from_table", "table_from_profile",
           "random_profile", "uniform_profile"]


# -- the tree -----------------------------------------------------------------
@dataclasses.dataclass
class Node:
    kind: str                          # "terminal" | "chance" | "decision"
    path: tuple                        # action labels from the root
    player: int = -1                   # acting player (decision nodes)
    key: Hashable = None               # (player, infoset_key) at decision nodes
    actions: tuple = ()                # legal actions / chance outcomes, in order
    probs: tuple = ()                  # chance probabilities
    children: list = dataclasses.field(default_factory=list)
    returns: np.ndarray | None = None  # [P] at terminals


class Tree:
    """The whole game tree of ``game`` with its information sets.

    Attributes:
      root: the root :class:`Node`.
      infosets: ``{(player, key): actions}`` in first-met (pre-order) order.
      members: ``{(player, key): [Node, ...]}``.
      nodes: every node in pre-order.
    """

    def __init__(self, game: Game):
        self.num_players = int(game.num_players)
        self.infosets: dict[Hashable, tuple] = {}
        self.members: dict[Hashable, list[Node]] = {}
        self.nodes: list[Node] = []
        self.root = self._build(game.clone(), ())

    def _build(self, state: Game, path: tuple) -> Node:
        if state.is_terminal():
            node = Node("terminal", path, returns=np.asarray(state.terminal_returns(), float))
            self.nodes.append(node)
            return node
        if state.is_chance():
            outcomes = state.chance_outcomes()
            node = Node("chance", path, actions=tuple(a for a, _ in outcomes),
                        probs=tuple(float(p) for _, p in outcomes))
        else:
            player = state.player_to_act()
            assert player not in (CHANCE, TERMINAL)
            key = (player, state.infoset_key(player))
            actions = tuple(state.legal_actions())
            assert self.infosets.setdefault(key, actions) == actions
            node = Node("decision", path, player=player, key=key, actions=actions)
            self.members.setdefault(key, []).append(node)
        self.nodes.append(node)
        for a in node.actions:
            child = state.clone()
            child.step(a)
            node.children.append(self._build(child, path + (a,)))
        return node

    def player_infosets(self, player: int) -> list:
        return [k for k in self.infosets if k[0] == player]

    def node_at(self, path: tuple) -> Node:
        node = self.root
        for a in path:
            node = node.children[node.actions.index(a)]
        return node


# -- regret matching and profiles --------------------------------------------------
def regret_matching(regret: np.ndarray) -> np.ndarray:
    """Positive part normalised; uniform when nothing is positive."""
    positive = np.maximum(regret, 0.0)
    total = positive.sum()
    if total > 0:
        return positive / total
    return np.full(len(regret), 1.0 / len(regret))


def normalise(weights: np.ndarray) -> np.ndarray:
    total = np.maximum(weights, 0).sum()
    if total > 0:
        return np.maximum(weights, 0) / total
    return np.full(len(weights), 1.0 / len(weights))


def uniform_profile(tree: Tree) -> dict:
    return {k: np.full(len(a), 1.0 / len(a)) for k, a in tree.infosets.items()}


def random_profile(tree: Tree, rng: np.random.Generator, pure_fraction: float = 0.2) -> dict:
    """A random behaviour profile; some rows are pure and some have zero entries."""
    out = {}
    for k, acts in tree.infosets.items():
        x = rng.dirichlet(np.full(len(acts), 0.7))
        if rng.random() < pure_fraction:
            x = np.eye(len(acts))[rng.integers(len(acts))]
        out[k] = x
    return out


def profile_from_table(lowered, table: np.ndarray) -> dict:
    """``{(player, key): probs}`` from a ``[I, A]`` table of ``lowered`` (sink row dropped)."""
    table = np.asarray(table)
    return {key: np.asarray(table[r, :len(acts)], dtype=np.float64)
            for r, (key, acts) in enumerate(zip(lowered.infoset_keys, lowered.infoset_actions))}


def table_from_profile(lowered, profile: dict) -> np.ndarray:
    """The ``[I, A]`` table of ``lowered`` holding ``profile`` (sink row: slot 0 = 1)."""
    table = np.zeros((lowered.num_rows, lowered.max_actions))
    for r, (key, acts) in enumerate(zip(lowered.infoset_keys, lowered.infoset_actions)):
        table[r, :len(acts)] = profile[key]
    table[len(lowered.infoset_keys):, 0] = 1.0
    return table


# -- presets ---------------------------------------------------------------------
#: The published defaults of every preset, written out again (not read from jaxcfr).
#: LCFR and DCFR alternate: Brown & Sandholm (2019) run every variant with alternating
#: updates (so does OpenSpiel's discounted_cfr.py); vanilla CFR (Zinkevich et al. 2007)
#: is simultaneous.
PRESETS: dict[str, dict[str, Any]] = {
    "cfr": dict(floor=False, discount=False, predictive=False, alternating=False,
                alpha=1.0, beta=1.0, gamma=0.0),
    "cfr+": dict(floor=True, discount=False, predictive=False, alternating=True,
                 alpha=1.0, beta=1.0, gamma=1.0),
    "lcfr": dict(floor=False, discount=True, predictive=False, alternating=True,
                 alpha=1.0, beta=1.0, gamma=1.0),
    "dcfr": dict(floor=False, discount=True, predictive=False, alternating=True,
                 alpha=1.5, beta=0.0, gamma=2.0),
    "pcfr+": dict(floor=True, discount=False, predictive=True, alternating=True,
                  alpha=1.0, beta=1.0, gamma=2.0),
    "dcfr+": dict(floor=True, discount=True, predictive=False, alternating=True,
                  alpha=1.5, beta=0.0, gamma=4.0),
    "pdcfr+": dict(floor=True, discount=True, predictive=True, alternating=True,
                   alpha=2.3, beta=0.0, gamma=5.0),
}


# -- values ----------------------------------------------------------------------
def _walk(tree: Tree, node: Node, profile: dict, reach: np.ndarray, q: dict | None,
          own: dict | None, hist: dict | None) -> np.ndarray:
    """Expected values of ``node``; accumulates counterfactual action values ``q``.

    ``reach``: ``[P + 1]`` per-player reach (chance last).
    """
    if node.kind == "terminal":
        v = node.returns
    elif node.kind == "chance":
        v = np.zeros(tree.num_players)
        for p, child in zip(node.probs, node.children):
            r = reach.copy()
            r[-1] *= p
            v = v + p * _walk(tree, child, profile, r, q, own, hist)
    else:
        i = node.player
        sigma = profile[node.key]
        child_values = []
        for a, child in enumerate(node.children):
            r = reach.copy()
            r[i] *= sigma[a]
            child_values.append(_walk(tree, child, profile, r, q, own, hist))
        child_values = np.asarray(child_values)              # [A, P]
        v = sigma @ child_values
        if q is not None:
            cf = np.prod(np.delete(reach, i))
            q[node.key] = q.get(node.key, 0.0) + cf * child_values[:, i]
            if node.key in own:
                assert abs(own[node.key] - reach[i]) < 1e-12, "own reach differs in an infoset"
            own[node.key] = reach[i]
    if hist is not None:
        hist[node.path] = v
    return v


def expected_values(tree: Tree, profile: dict) -> np.ndarray:
    """``[P]`` expected payoff of every player under ``profile``."""
    return _walk(tree, tree.root, profile, np.ones(tree.num_players + 1), None, None, None)


def counterfactual_values(tree: Tree, profile: dict) -> tuple[dict, dict, np.ndarray]:
    """``(q, own, v)``: ``q[I][a] = sum_h pi_-i(h) v_i(h a)``, ``own[I] = pi_i(I)``, root values."""
    q: dict = {}
    own: dict = {}
    v = _walk(tree, tree.root, profile, np.ones(tree.num_players + 1), q, own, None)
    return q, own, v


def history_values(tree: Tree, profile: dict) -> dict:
    """``{path: [P] values}`` for every node."""
    hist: dict = {}
    _walk(tree, tree.root, profile, np.ones(tree.num_players + 1), None, None, hist)
    return hist


def _reaches(tree: Tree, profile: dict) -> dict:
    """``{path: [P + 1] reach}``."""
    out = {}

    def go(node, reach):
        out[node.path] = reach
        if node.kind == "chance":
            for p, child in zip(node.probs, node.children):
                r = reach.copy()
                r[-1] *= p
                go(child, r)
        elif node.kind == "decision":
            for a, child in enumerate(node.children):
                r = reach.copy()
                r[node.player] *= profile[node.key][a]
                go(child, r)

    go(tree.root, np.ones(tree.num_players + 1))
    return out


def infoset_values(tree: Tree, profile: dict) -> dict:
    """``{I: sum_h pi_-i(h) v_i(h) / sum_h pi_-i(h)}`` (0 where the others never reach I)."""
    hist = history_values(tree, profile)
    reach = _reaches(tree, profile)
    out = {}
    for key, members in tree.members.items():
        i = key[0]
        w = np.array([np.prod(np.delete(reach[h.path], i)) for h in members])
        v = np.array([hist[h.path][i] for h in members])
        out[key] = float(w @ v / w.sum()) if w.sum() > 0 else 0.0
    return out


# -- best responses ------------------------------------------------------------------
def best_response_value_recursive(tree: Tree, profile: dict, player: int) -> tuple[float, dict]:
    """Textbook best response: an information set's action maximises the sum over members.

    Perfect recall makes ``choice`` well founded: the information sets below a
    member's action are decided (recursively) before the set itself.
    """
    reach = _reaches(tree, profile)
    choice: dict = {}

    def value(node) -> float:
        if node.kind == "terminal":
            return float(node.returns[player])
        if node.kind == "chance":
            return sum(p * value(c) for p, c in zip(node.probs, node.children))
        if node.player != player:
            return sum(s * value(c) for s, c in zip(profile[node.key], node.children))
        return value(node.children[decide(node.key)])

    def decide(key) -> int:
        if key not in choice:
            totals = np.zeros(len(tree.infosets[key]))
            for h in tree.members[key]:
                w = np.prod(np.delete(reach[h.path], player))
                for a, c in enumerate(h.children):
                    totals[a] += w * value(c)
            choice[key] = int(np.argmax(totals))
        return choice[key]

    return value(tree.root), choice


def best_response_value_brute_force(tree: Tree, profile: dict, player: int,
                                    limit: int = 1 << 17) -> float:
    """Max over *every* pure strategy of ``player`` (a product over its information sets).

    A pure strategy's value is ``sum_z w_z u(z) [the strategy plays every own action
    on the path to z]``, with ``w_z`` the others' and chance's reach of leaf ``z``.
    """
    keys = tree.player_infosets(player)
    sizes = [len(tree.infosets[k]) for k in keys]
    count = int(np.prod(sizes, dtype=np.int64)) if keys else 1
    if count > limit:
        raise ValueError(f"{count} pure strategies: too many for brute force")
    column = {k: j for j, k in enumerate(keys)}
    leaves: list[tuple[float, list[tuple[int, int]]]] = []

    def go(node, w, seq):
        if node.kind == "terminal":
            leaves.append((w * node.returns[player], seq))
        elif node.kind == "chance":
            for p, c in zip(node.probs, node.children):
                go(c, w * p, seq)
        elif node.player != player:
            for s, c in zip(profile[node.key], node.children):
                go(c, w * s, seq)
        else:
            for a, c in enumerate(node.children):
                go(c, w, seq + [(column[node.key], a)])

    go(tree.root, 1.0, [])
    if not keys:
        return float(sum(w for w, _ in leaves))
    pure = np.array(list(itertools.product(*[range(s) for s in sizes])), dtype=np.int16)
    values = np.zeros(len(pure))
    for w, seq in leaves:
        if w == 0.0:
            continue
        ok = np.ones(len(pure), dtype=bool)
        for col, a in seq:
            ok &= pure[:, col] == a
        values += np.where(ok, w, 0.0)
    return float(values.max())


def nash_conv(tree: Tree, profile: dict, brute_force: bool = False) -> tuple[float, np.ndarray,
                                                                             np.ndarray]:
    """``(NashConv, values [P], best-response values [P])``."""
    values = expected_values(tree, profile)
    br = np.array([(best_response_value_brute_force(tree, profile, p) if brute_force else
                    best_response_value_recursive(tree, profile, p)[0])
                   for p in range(tree.num_players)])
    return float((br - values).sum()), values, br


# -- the CFR family --------------------------------------------------------------------
class ReferenceCFR:
    """One member of the CFR family on a :class:`Tree`, iteration by iteration.

    Args:
      preset: a key of :data:`PRESETS`; ``alternating``, ``alpha``, ``beta``, ``gamma``
        override its defaults.
      schedule: ``(gamma_drop, horizon)``: average as hyper-parameter schedules do (Zhang,
        McAleer & Sandholm 2024), the sum decayed every iteration,
        ``S_t = S_{t-1} ((t - 1) / t)^gamma_t + s_t`` with
        ``gamma_t = gamma - gamma_drop t / horizon`` (written as the paper's recursion,
        not as jaxcfr's weights).
    """

    def __init__(self, tree: Tree, preset: str, *, alternating: bool | None = None,
                 alpha: float | None = None, beta: float | None = None,
                 gamma: float | None = None, schedule: tuple[float, float] | None = None):
        cfg = dict(PRESETS[preset], schedule=schedule)
        for name, v in (("alternating", alternating), ("alpha", alpha), ("beta", beta),
                        ("gamma", gamma)):
            if v is not None:
                cfg[name] = v
        self.cfg = cfg
        self.tree = tree
        zeros = {k: np.zeros(len(a)) for k, a in tree.infosets.items()}
        self.regret = dict(zeros)
        self.strategy_sum = dict(zeros)
        self.prediction = dict(zeros)
        self.iteration = 0

    def current(self) -> dict:
        """The strategy the next iteration plays."""
        pred = self.cfg["predictive"]
        return {k: regret_matching(r + self.prediction[k] if pred else r)
                for k, r in self.regret.items()}

    def average(self) -> dict:
        return {k: normalise(s) for k, s in self.strategy_sum.items()}

    def step(self) -> None:
        cfg = self.cfg
        t = self.iteration + 1
        groups = ([list(range(self.tree.num_players))] if not cfg["alternating"]
                  else [[p] for p in range(self.tree.num_players)])
        weight = (t / 2.0 ** 20) ** cfg["gamma"]
        decay = 1.0
        if cfg["schedule"] is not None:
            drop, horizon = cfg["schedule"]
            weight, decay = 1.0, ((t - 1) / t) ** (cfg["gamma"] - drop * t / horizon)
        for group in groups:
            sigma = self.current()
            q, own, _ = counterfactual_values(self.tree, sigma)
            for key in self.tree.infosets:
                if key[0] not in group:
                    continue
                inst = q[key] - sigma[key] @ q[key]
                r = self.regret[key] + inst
                if cfg["discount"]:
                    pos = t ** cfg["alpha"] / (t ** cfg["alpha"] + 1)
                    neg = t ** cfg["beta"] / (t ** cfg["beta"] + 1)
                    r = r * np.where(r > 0, pos, neg)
                if cfg["floor"]:
                    r = np.maximum(r, 0.0)
                self.regret[key] = r
                self.strategy_sum[key] = (decay * self.strategy_sum[key]
                                          + weight * own[key] * sigma[key])
                if cfg["predictive"]:
                    self.prediction[key] = inst
        self.iteration = t

    def run(self, iterations: int) -> "ReferenceCFR":
        for _ in range(iterations):
            self.step()
        return self


# -- exact value of a two-player zero-sum game ------------------------------------------
def sequence_form_value(tree: Tree) -> float:
    """Player 0's equilibrium value by the sequence-form LP (Koller, Megiddo, von Stengel)."""
    from scipy.optimize import linprog

    assert tree.num_players == 2
    seqs = [{(): 0}, {(): 0}]                 # sequence -> column; () is the empty sequence
    parent_seq = [{}, {}]                     # infoset -> its parent sequence
    payoff: dict[tuple, float] = {}

    def go(node, w, last):
        if node.kind == "terminal":
            k = (last[0], last[1])
            payoff[k] = payoff.get(k, 0.0) + w * node.returns[0]
        elif node.kind == "chance":
            for p, c in zip(node.probs, node.children):
                go(c, w * p, last)
        else:
            i = node.player
            parent_seq[i].setdefault(node.key, last[i])
            for a, c in enumerate(node.children):
                s = (node.key, a)
                seqs[i].setdefault(s, len(seqs[i]))
                nl = list(last)
                nl[i] = s
                go(c, w, tuple(nl))

    go(tree.root, 1.0, ((), ()))
    n1, n2 = len(seqs[0]), len(seqs[1])
    a = np.zeros((n1, n2))
    for (s1, s2), v in payoff.items():
        a[seqs[0][s1], seqs[1][s2]] += v

    def constraints(i, n):
        rows = [np.eye(1, n, 0)[0]]           # x_empty = 1
        for key, ps in parent_seq[i].items():
            row = np.zeros(n)
            row[seqs[i][ps]] = -1
            for act in range(len(tree.infosets[key])):
                row[seqs[i][(key, act)]] = 1
            rows.append(row)
        rhs = np.zeros(len(rows))
        rhs[0] = 1
        return np.array(rows), rhs

    e, e_rhs = constraints(0, n1)
    f, f_rhs = constraints(1, n2)
    # max f_rhs . v  s.t.  F^T v - A^T x <= 0,  E x = e,  x >= 0,  v free
    m = f.shape[0]
    c = np.concatenate([np.zeros(n1), -f_rhs])
    a_ub = np.hstack([-a.T, f.T])
    a_eq = np.hstack([e, np.zeros((e.shape[0], m))])
    bounds = [(0, None)] * n1 + [(None, None)] * m
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n2), A_eq=a_eq, b_eq=e_rhs, bounds=bounds,
                  method="highs")
    assert res.success, res.message
    return float(-res.fun)


# -- a game whose information sets hold nodes at different depths ---------------------------
class DifferentDepths(Game):
    """The game of ``tests/fixtures/efg/different_depths.efg``, as a Python Game.

    ::

        chance: c1 | c2 (1/2 each), seen by nobody
          player 0, set A (depth 1): L | R
            player 1 does not see L / R:
            c1 L: set B (depth 2): r: -1 | l: player 0, set C (depth 3): a: +2 | b: 0
            c1 R: set B (depth 2): l: -1 | r: +1
            c2 L: chance x (1/3) | y (2/3)
                    y: +1
                    x: set B (depth 3): r: -2 | l: player 0, set C (depth 4): a: -1 | b: +3
            c2 R: set B (depth 2): l: -1 | r: +2

    Payoffs to player 0 (player 1 gets the negation). Set B holds nodes at
    depths 2 and 3, set C at depths 3 and 4; both players have perfect recall.
    The value to player 0 is 3/10.
    """

    num_players = 2
    VALUE = 0.3
    _TERMINAL = {("c1", "L", "r"): -1, ("c1", "L", "l", "a"): 2, ("c1", "L", "l", "b"): 0,
                 ("c1", "R", "l"): -1, ("c1", "R", "r"): 1,
                 ("c2", "L", "y"): 1, ("c2", "L", "x", "r"): -2,
                 ("c2", "L", "x", "l", "a"): -1, ("c2", "L", "x", "l", "b"): 3,
                 ("c2", "R", "l"): -1, ("c2", "R", "r"): 2}

    def __init__(self):
        self.h: tuple = ()

    def clone(self):
        new = DifferentDepths()
        new.h = self.h
        return new

    def _node(self) -> str:
        h = self.h
        if h in self._TERMINAL:
            return "t"
        if h == () or h == ("c2", "L"):
            return "c"
        if len(h) == 1:
            return "A"
        if len(h) == 2 or h == ("c2", "L", "x"):
            return "B"
        return "C"

    def is_terminal(self):
        return self._node() == "t"

    def is_chance(self):
        return self._node() == "c"

    def player_to_act(self):
        return {"t": TERMINAL, "c": CHANCE, "A": 0, "B": 1, "C": 0}[self._node()]

    def chance_outcomes(self):
        if self.h == ():
            return [("c1", 0.5), ("c2", 0.5)]
        if self.h == ("c2", "L"):
            return [("x", 1 / 3), ("y", 2 / 3)]
        return None

    def legal_actions(self):
        return {"A": ["L", "R"], "B": ["l", "r"], "C": ["a", "b"]}.get(self._node(), [])

    def step(self, action):
        from jaxcfr import GameError
        node = self._node()
        if node == "t":
            raise GameError("the game is over", rule="illegal-action")
        legal = ([a for a, _ in self.chance_outcomes()] if node == "c" else self.legal_actions())
        if action not in legal:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.h = self.h + (action,)

    def terminal_returns(self):
        u = float(self._TERMINAL[self.h])
        return (u, -u)

    def infoset_key(self, player):
        node = self._node()
        if (node in ("A", "C") and player == 0) or (node == "B" and player == 1):
            return node
        return f"{player}|{len(self.h)}"
