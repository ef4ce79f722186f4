"""Profiles of a public tree whose chance outcomes are merged (suit isomorphism): every
reader maps a history through a merged outcome to its representative, the hands (and the
outcomes dealt later) renamed (``PublicLowered.locate``, ``expanded_rows``).

Oracles: the profile of a merged solve, read at every information set of the unmerged
tree and evaluated on the unmerged tree, has the merged solve's values, best-response
values and NashConv (1e-9, float64), and equals the unmerged solve's profile at every
information set (1e-9); the key set is exactly the unmerged tree's. A small two-street
card game (two suits, two public cards) checks the renaming of the card dealt after a
merged one, where hold'em needs a flop (slow); its counterpart without the renaming is
wrong, so the check has teeth.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxcfr
from jaxcfr.game import CHANCE, TERMINAL, Fold, PublicGame, Showdown
from jaxcfr.lowering.public import lower_public
from jaxcfr.profiles.profile import Profile, evaluate_profile, symmetric_on
from jaxcfr.solvers.analytics import evaluate


class TwoBoards(PublicGame):
    """Three ranks in two suits (card ``2 * rank + suit``); each player holds one card;
    two streets of public cards. Each round: player 0 checks or bets one chip, player 1
    folds or calls a bet; then a card is dealt (twice), then a showdown (a pair with a
    board card beats any rank). Swapping the suits fixes the game: at the first card,
    each odd card is merged into the even card of its rank, the hands and the second card
    renamed by the swap (``renaming=False``: the second card not renamed, which is wrong)."""

    __slots__ = ("merge", "renaming", "board", "node", "put", "folder")
    SIZE = 6

    def __init__(self, merge=True, renaming=True):
        self.merge, self.renaming = merge, renaming
        self.board, self.node, self.put, self.folder = (), "p0", 1.0, -1

    def hands(self, player):
        return tuple(range(self.SIZE))

    def hand_cards(self, player):
        return tuple((c,) for c in range(self.SIZE))

    def is_terminal(self):
        return self.node == "end"

    def is_chance(self):
        return self.node == "deal"

    def player_to_act(self):
        return {"p0": 0, "p1": 1, "deal": CHANCE, "end": TERMINAL}[self.node]

    def legal_actions(self):
        return {"p0": ["check", "bet"], "p1": ["fold", "call"]}.get(self.node, [])

    def chance_outcomes(self):
        if self.node != "deal":
            return None
        left = [c for c in range(self.SIZE) if c not in self.board]
        return [(c, 1.0 / (len(left) - 2)) for c in left]

    def outcome_cards(self, outcome):
        return (outcome,)

    def chance_merges(self):
        if self.node != "deal" or not self.merge or {b ^ 1 for b in self.board} != set(
                self.board):
            return None
        swap = tuple(h ^ 1 for h in range(self.SIZE))
        rename = {c: c ^ 1 for c in range(self.SIZE)}
        return {c: (c ^ 1, (swap, swap)) + ((rename,) if self.renaming else ())
                for c in range(1, self.SIZE, 2)}

    def _next_street(self):
        self.node = "deal" if len(self.board) < 2 else "end"

    def step(self, action):
        if self.node == "deal":
            self.board += (action,)
            self.node = "p0"
        elif self.node == "p0":
            if action == "check":
                self._next_street()
            else:
                self.node = "p1"
        elif action == "fold":
            self.node, self.folder = "end", 1
        else:
            self.put += 1.0
            self._next_street()

    def clone(self):
        new = TwoBoards.__new__(TwoBoards)
        for k in self.__slots__:
            setattr(new, k, getattr(self, k))
        return new

    def terminal_value(self):
        if self.folder == 1:
            lost = self.put - 1.0 if self.put > 1 else self.put
            return Fold((lost, -lost))
        ranks = {b // 2 for b in self.board}
        strength = tuple(float(h // 2 + 3 * (h // 2 in ranks)) for h in range(self.SIZE))
        return Showdown(self.put, (strength, strength))


@pytest.fixture(scope="module")
def trees():
    return lower_public(TwoBoards(merge=False)), lower_public(TwoBoards())


@pytest.fixture(scope="module")
def two(trees):
    plain, merged = trees
    a = jaxcfr.solve_public(plain, "cfr+", 30, precision="float64")
    b = jaxcfr.solve_public(merged, "cfr+", 30, precision="float64")
    return plain, merged, a, b


def _real_keys(lowered):
    return {k for k in lowered.infoset_keys if k is not None}


def symmetric_table(merged, seed=0):
    """A random ``[I, A]`` profile of ``merged`` whose rows above each merged chance
    outcome are symmetric under its hand renaming (as CFR keeps them)."""
    t = merged.tensors
    mask = np.asarray(t.legal_mask, np.float64)
    table = np.random.default_rng(seed).random(mask.shape) * mask + 1e-3 * mask
    table /= np.maximum(table.sum(axis=1, keepdims=True), 1e-300)
    for e, (n, _) in enumerate(merged.merged):
        a = int(t.parent[n])
        while a >= 0:
            base = int(t.node_base[a])
            if base >= 0:
                src = t.merge_source[e, int(t.node_player[a])]
                for h, g in enumerate(src[:6]):
                    table[base + max(h, g)] = table[base + min(h, g)]
            a = int(t.parent[a])
    return table


def test_a_symmetric_profile_read_on_the_unmerged_tree_has_its_values(trees):
    plain, merged = trees
    table = symmetric_table(merged)
    profile = Profile.from_lowered(merged, table)
    assert symmetric_on(profile, merged)
    full, counts = profile.table(plain)
    assert counts["missing"] == 0
    a = evaluate(merged, table, dtype="float64")
    b = evaluate(plain, full, dtype="float64")
    for k in ("values", "best_response_values"):
        assert np.allclose(a[k], b[k], rtol=0, atol=1e-12), k
    assert abs(float(a["nash_conv"]) - float(b["nash_conv"])) < 1e-12
    assert float(a["nash_conv"]) > 1e-2


def test_the_expanded_rows_are_the_unmerged_trees(trees):
    plain, merged = trees
    assert merged.merged and merged.num_nodes < plain.num_nodes
    keys, actions, rows = merged.expanded_rows()
    assert len(keys) == len(set(keys)) == len(_real_keys(plain))
    assert set(keys) == _real_keys(plain)
    # a key after a merged first card and a second card: read at the representative's
    # node, after the renamed second card, for the renamed hand
    key = (0, (3, ("check", 1, "check", 4)))   # hand 3, board 1 then 4
    row = rows[keys.index(key)]
    assert merged.infoset_keys[row] == (0, (2, ("check", 0, "check", 5)))


def test_the_mapped_profile_is_exact_on_the_unmerged_tree(two):
    plain, merged, a, b = two
    profile = b.to_profile()
    table, counts = profile.table(plain)
    assert counts["missing"] == 0 and counts["found"] == counts["rows"]
    ev = evaluate(plain, table, dtype="float64")
    for k in ("values", "best_response_values"):
        assert np.allclose(ev[k], b.final[k], rtol=0, atol=1e-9)
    assert abs(float(ev["nash_conv"]) - float(b.final["nash_conv"])) < 1e-9
    assert float(b.final["nash_conv"]) > 1e-3          # (not a solved game: teeth)
    # and it is the unmerged solve's profile, information set by information set
    other = a.to_profile()
    assert set(profile.keys) == set(other.keys)
    gap = max(np.max(np.abs(profile.distribution(p, k, other.actions[other.row(p, k)])
                            - other.distribution(p, k, other.actions[other.row(p, k)])))
              for p, k in other.keys)
    assert gap < 1e-9
    # the readers by history: strategy(), hand_values() and profile()
    history = ("check", 3, "check", 4)              # a merged first card, a second card
    for hand in range(6):
        s, t = b.strategy(0, hand, history), a.strategy(0, hand, history)
        assert s.keys() == t.keys() and max(abs(s[x] - t[x]) for x in s) < 1e-9
    hv, hw = b.hand_values(history), a.hand_values(history)
    for k in ("ev", "action_ev", "reach", "strategy"):
        assert np.allclose(hv[k], hw[k], rtol=0, atol=1e-9, equal_nan=True), k
    assert b.profile().keys() == a.profile().keys()


def test_without_the_renaming_the_mapping_is_wrong():
    wrong = lower_public(TwoBoards(renaming=False))
    plain = lower_public(TwoBoards(merge=False))
    keys, _, _ = wrong.expanded_rows()
    assert set(keys) != _real_keys(plain)


def test_evaluating_a_profile_on_a_merged_tree_checks_its_symmetry(trees):
    plain, merged = trees
    uniform = Profile.from_lowered(plain, np.asarray(plain.tensors.legal_mask, float))
    assert symmetric_on(uniform, merged)
    base = Profile.from_lowered(merged, symmetric_table(merged))
    probs = np.array(base.probs)
    probs[base.row(0, (1, ())), :2] = (1.0, 0.0)      # hand 1 at the root, not hand 0
    lopsided = Profile(base.keys, base.actions, probs)
    assert not symmetric_on(lopsided, merged)
    with pytest.raises(ValueError, match="not exactly the same on suit-isomorphic"):
        evaluate_profile(lopsided, merged, precision="float64")
    # the game itself is walked with every outcome: exact for any profile
    got = evaluate_profile(lopsided, TwoBoards(), precision="float64")
    want = evaluate(plain, lopsided.table(plain)[0], dtype="float64")
    assert np.allclose(got["values"], want["values"], rtol=0, atol=1e-12)
    sym = evaluate_profile(uniform, merged, precision="float64")
    assert np.allclose(sym["values"], evaluate(plain, uniform.table(plain)[0],
                                               dtype="float64")["values"], atol=1e-12)


def test_a_lock_below_a_merged_card_walks_every_outcome():
    lock = {(("check", 3), None): {"bet": 1.0}}
    a = jaxcfr.solve_public(TwoBoards(merge=False), "cfr+", 10, precision="float64",
                            lock=lock)
    b = jaxcfr.solve_public(TwoBoards(), "cfr+", 10, precision="float64", lock=lock)
    assert b.lowered.merged == ()
    assert np.array_equal(a.average_strategy, b.average_strategy)
    assert b.strategy(0, 2, ("check", 3)) == {"check": 0.0, "bet": 1.0}
    with pytest.raises(Exception, match="merges=False"):
        jaxcfr.solve_public(lower_public(TwoBoards()), "cfr+", 2, lock=lock)


def test_a_subgame_below_a_merged_card_is_resolved_on_every_outcome(two):
    from jaxcfr.subgames import resolve_subgames
    plain, merged, a, b = two
    at = [["check", 3], ["check", 0]]              # a merged card and its representative
    runs = [resolve_subgames(game, blueprint, at, iterations=10, precision="float64")
            for game, blueprint in ((TwoBoards(merge=False), b.to_profile()),
                                    (TwoBoards(), b.to_profile()),
                                    (TwoBoards(), b.average_strategy))]
    for other in runs[1:]:
        assert other.profile.keys == runs[0].profile.keys
        assert np.array_equal(other.profile.probs, runs[0].profile.probs)
        assert other.metrics["nash_conv"] == runs[0].metrics["nash_conv"]


def test_a_stack_keeps_each_members_merged_tree(trees):
    # (before 2026-12-06, late: every member walked every outcome; merged members were
    # refused. tests/test_public_stack_merged.py solves them.)
    from jaxcfr.lowering.public_stack import stack_public
    plain, merged = trees
    stack = stack_public([TwoBoards(), TwoBoards(merge=False)])
    assert [m.num_nodes for m in stack.members] == [merged.num_nodes, plain.num_nodes]
    assert len(stack.members[0].merged) == len(merged.merged) and not stack.members[1].merged
    walked = stack_public([TwoBoards(), TwoBoards(merge=False)], merges=False)
    assert all(not m.merged and m.num_nodes == plain.num_nodes for m in walked.members)
    assert len(stack_public([merged, plain]).members[0].merged) == len(merged.merged)


def test_the_cache_keeps_merged_and_unmerged_trees_apart(tmp_path):
    from jaxcfr.engine.loop import lower_public_reporting
    text = "holdem_spot(board='Td9d6h5d', ranges=('AA', 'KK'), bets='a', raises='a')"
    game = jaxcfr.load_game(text)
    got = []
    for merges in (True, False, True, False):
        report: dict = {}
        low = lower_public_reporting(game, text=text, cache=tmp_path, report=report,
                                     merges=merges)
        got.append((bool(low.merged), report["cache"].split(":")[0]))
    assert got == [(True, "stored"), (False, "stored"), (True, "hit"), (False, "hit")]
