"""Suit-isomorphic chance outcomes merged on the public tree (``holdem_spot(...,
isomorphism=True)``, ``PublicGame.chance_merges``, ``PublicTensors.merge_*``).

Oracles: in float64 a spot whose board and ranges are suit-symmetric, solved with and
without the merge, gives the same values and exploitability after every iteration (1e-12
relative) for cfr+ and postflop-dcfr, and the same average strategy at every row the
merged tree keeps (the representatives' subtrees and all above them); a spot with no
symmetry lowers to the same tensors and solves bit for bit the same. Read after a merged
card (``PublicLowered.locate``): every hand's strategy, hand values and grid equal the
representative's for the suit-renamed hand exactly, and the unmerged solve's to 1e-9;
the whole profile, read at every information set of the unmerged tree, evaluates there to
the merged solve's values and NashConv (1e-9).
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxcfr
from jaxcfr._util.arguments import ArgumentError
from jaxcfr.lowering.public import lower_public
from jaxcfr_games.holdem.cards import card
from jaxcfr_games.holdem.spot import HoldemSpot

TURN = dict(board="Td9d6h5d", ranges=("AA,KK,QQ,AKs,T9s", "AA,KK,JJ,AQs,87s"), pot=100,
            stack=200, bets="60%, a", raises="2.5x")


def _pair(**kw):
    return (lower_public(HoldemSpot(**kw, isomorphism=False)),
            lower_public(HoldemSpot(**kw, isomorphism=True)))


def _close(a, b, rel=1e-12):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.all(np.abs(a - b) <= rel * np.maximum(1.0, np.abs(a)))


@pytest.fixture(scope="module")
def turn():
    return _pair(**TURN)


@pytest.fixture(scope="module")
def solved(turn):
    """The turn spot solved unmerged and merged (cfr+, float64, evaluated every
    iteration)."""
    plain, merged = turn
    return (jaxcfr.solve_public(plain, "cfr+", 8, precision="float64", eval_every=1, chunk=1),
            jaxcfr.solve_public(merged, "cfr+", 8, precision="float64", eval_every=1, chunk=1))


def test_the_turn_spot_merges_clubs_with_spades(turn):
    plain, merged = turn
    # Td9d6h5d: clubs ~ spades; the river's 48 cards in 13 + 9 + 12 + 13 ... classes:
    # 13 club/spade pairs merge 13 cards per river chance node
    chance = int(np.sum(plain.node_kind == 1))
    assert len(merged.merged) == 13 * chance
    assert merged.num_nodes < plain.num_nodes
    reps = {merged.node_action[int(c)] for c in merged.tensors.merge_child}
    assert reps <= {4 * r for r in range(13)}                   # clubs represent spades
    assert {x for _, x in merged.merged} == {4 * r + 3 for r in range(13)}


@pytest.mark.parametrize("solver", ["cfr+", pytest.param("postflop-dcfr",
                                                          marks=pytest.mark.slow)])
def test_merged_solve_is_exact_every_iteration(turn, solved, solver):
    plain, merged = turn
    if solver == "cfr+":
        a, b = solved
    else:
        a = jaxcfr.solve_public(plain, solver, 8, precision="float64", eval_every=1, chunk=1)
        b = jaxcfr.solve_public(merged, solver, 8, precision="float64", eval_every=1, chunk=1)
    assert len(a.metrics) == len(b.metrics) == 8
    for x, y in zip(a.metrics, b.metrics):
        assert x["iteration"] == y["iteration"]
        assert _close(x["values"], y["values"])
        assert _close(x["best_response_values"], y["best_response_values"])
        assert _close(x["exploitability"], y["exploitability"])
    # the average strategy of every row the merged tree keeps
    index = {k: r for r, k in enumerate(plain.row_keys()) if k is not None}
    keys = [(r, k) for r, k in enumerate(merged.row_keys()) if k is not None]
    assert keys
    rows_b = np.asarray([r for r, _ in keys])
    rows_a = np.asarray([index[k] for _, k in keys])
    assert np.max(np.abs(a.average_strategy[rows_a] - b.average_strategy[rows_b])) < 1e-12
    # and the representatives' river rows are among them (the check has teeth there)
    river = [k for _, k in keys if any(isinstance(x, int) for x in k[1][1])]
    assert len(river) > 100


def _agree(plain, merged, solver, iterations):
    a = jaxcfr.solve_public(plain, solver, iterations, precision="float64", eval_every=1,
                            chunk=1)
    b = jaxcfr.solve_public(merged, solver, iterations, precision="float64", eval_every=1,
                            chunk=1)
    for x, y in zip(a.metrics, b.metrics, strict=True):
        assert _close(x["values"], y["values"])
        assert _close(x["best_response_values"], y["best_response_values"])
    return a, b


@pytest.mark.slow
def test_a_monotone_turn_merges_three_suits_exactly():
    # Td9d6d5d: clubs ~ hearts ~ spades (6 permutations, 3-cycles among them: the
    # direction of the hand renaming matters, unlike a single swap); per river chance
    # node 13 + 9 classes of 48 cards: 26 merged
    plain, merged = _pair(**dict(TURN, board="Td9d6d5d"))
    chance = int(np.sum(plain.node_kind == 1))
    assert len(merged.merged) == 26 * chance
    a, b = _agree(plain, merged, "cfr+", 6)
    assert np.isclose(a.final["values"][0], b.final["values"][0], rtol=1e-12, atol=0)


@pytest.mark.slow
def test_a_flop_merges_turn_and_river_cards_exactly():
    # Td9d6h: clubs ~ spades on the turn; after a club or spade turn card the river has
    # no symmetry left, after a diamond or heart one it keeps clubs ~ spades (nested)
    kw = dict(board="Td9d6h", ranges=("AA,KQs", "KK,QJs"), pot=100, stack=200, bets="a",
              raises="a")
    plain, merged = _pair(**kw)
    assert merged.num_nodes < plain.num_nodes
    a, b = _agree(plain, merged, "cfr+", 4)
    # read through a merged turn card and a river card renamed by its suit permutation
    keys, _, _ = merged.expanded_rows()
    assert set(keys) == {k for k in plain.infoset_keys if k is not None}
    history = ("Check", "Check", card("As"), "Check", "Check", card("Kc"))
    labels = plain.hands.labels[0]
    assert max(abs(b.strategy(0, h, history)[x] - p) for h in labels
               for x, p in a.strategy(0, h, history).items()) < 1e-9


def test_no_symmetry_is_unchanged_bit_for_bit():
    kw = dict(TURN, ranges=("AA,KK,QQ,AsKs", "AA,KK,JJ,AQs"))     # AsKs pins spades
    plain, merged = _pair(**kw)
    assert merged.merged == ()
    for f in plain.tensors._fields:
        assert np.array_equal(np.asarray(getattr(plain.tensors, f)),
                              np.asarray(getattr(merged.tensors, f))), f
    a = jaxcfr.solve_public(plain, "cfr+", 5, precision="float64")
    b = jaxcfr.solve_public(merged, "cfr+", 5, precision="float64")
    assert np.array_equal(a.average_strategy, b.average_strategy)
    assert np.array_equal(np.asarray(a.final["values"]), np.asarray(b.final["values"]))


def _swap_clubs_spades(lowered, player):
    """``[H]`` the position of each of ``player``'s hands with clubs and spades swapped."""
    cards = [frozenset(c) for c in lowered.hands.cards[player]]
    where = {c: h for h, c in enumerate(cards)}
    swap = {0: 3, 3: 0, 1: 1, 2: 2}
    return [where[frozenset(4 * (x // 4) + swap[x % 4] for x in c)] for c in cards]


def test_a_merged_card_reads_the_representative_renamed(turn, solved):
    plain, merged = turn
    a, b = solved
    assert b.lowered is merged and card("As") in {x for _, x in merged.merged}
    after = {c: ("Check", "Check", card(c)) for c in ("As", "Ac")}   # As is merged into Ac
    node = merged.locate(after["As"]).node
    assert node == merged.locate(after["Ac"]).node                  # the representative's
    for player, history in ((0, after["As"]),):       # (one player: one compile of values)
        rep = ("Check", "Check", card("Ac")) + history[3:]
        labels = merged.hands.labels[player]
        swap = _swap_clubs_spades(merged, player)
        for h, label in enumerate(labels):
            got = b.strategy(player, label, history)
            assert got == b.strategy(player, labels[swap[h]], rep)          # exactly
            want = a.strategy(player, label, history)
            assert max(abs(got[x] - want[x]) for x in want) < 1e-9
        hv, hw, hr = b.hand_values(history), a.hand_values(history), b.hand_values(rep)
        for k in ("ev", "action_ev", "reach", "strategy"):
            assert np.allclose(hv[k], hw[k], rtol=0, atol=1e-9, equal_nan=True), k
            assert np.array_equal(hv[k], hr[k][swap], equal_nan=True), k
        # the 13x13 grid and its per-hand export (CSV / JSON rows)
        from jaxcfr_games.holdem.grid import hand_grid
        gb, ga = hand_grid(b, history), hand_grid(a, history)
        assert gb.hands == ga.hands
        for k in ("reach", "strategy", "weights", "frequencies", "overall", "ev"):
            assert np.allclose(getattr(gb, k), getattr(ga, k), rtol=0, atol=1e-9,
                               equal_nan=True), k
        assert [r["hand"] for r in gb.rows()] == [r["hand"] for r in ga.rows()]
    # off the tree, the error names the step
    with pytest.raises(ArgumentError, match="is not a public action or outcome"):
        b.strategy(0, merged.hands.labels[0][0], ("Check", "Check", card("Td")))


@pytest.mark.slow
def test_the_merged_profile_is_exact_on_the_unmerged_tree(turn, solved):
    plain, merged = turn
    a, b = solved
    profile = b.to_profile()
    assert set(profile.keys) == {k for k in plain.infoset_keys if k is not None}
    table, counts = profile.table(plain)
    assert counts["missing"] == 0
    ev = jaxcfr.evaluate(plain, table, dtype="float64")
    for k in ("values", "best_response_values"):
        assert np.allclose(ev[k], b.final[k], rtol=0, atol=1e-9), k
    assert abs(float(ev["nash_conv"]) - float(b.final["nash_conv"])) < 1e-9
    other = a.to_profile()
    gap = max(float(np.max(np.abs(profile.probs[profile.row(*k)]
                                  - other.probs[other.row(*k)]))) for k in other.keys)
    assert gap < 1e-9
    # evaluated from the game (walked with every card): the same
    got = jaxcfr.evaluate_profile(profile, HoldemSpot(**TURN, isomorphism=True),
                                  precision="float64")
    assert np.allclose(got["values"], b.final["values"], rtol=0, atol=1e-9)


def test_the_game_string_takes_the_option_and_inspect_counts_the_merges(turn):
    _, merged = turn
    spot = jaxcfr.load_game("holdem_spot(board='Td9d6h5d', ranges=('AA,KK,QQ,AKs,T9s', "
                            "'AA,KK,JJ,AQs,87s'), bets='60%, a', raises='2.5x', "
                            "isomorphism=True)")
    low = lower_public(spot)
    assert low.merged == merged.merged
    assert low.sizes()["merged_outcomes"] == len(merged.merged)
    assert "merged_outcomes" not in lower_public(HoldemSpot(**TURN, isomorphism=False)).sizes()


def test_the_renaming_has_teeth(turn, monkeypatch):
    # the merge read through the identity instead of the suit renaming is off by chips
    import jaxcfr_games.holdem.spot as spot_module
    plain, _ = turn
    real = spot_module._Spot.merges

    def identity(self, board):
        return {m: (rep, tuple(np.arange(len(x)) for x in src))
                for m, (rep, src, _) in real(self, board).items()}
    monkeypatch.setattr(spot_module._Spot, "merges", identity)
    wrong = lower_public(HoldemSpot(**TURN, isomorphism=True))
    a = jaxcfr.solve_public(plain, "cfr+", 4, precision="float64")
    b = jaxcfr.solve_public(wrong, "cfr+", 4, precision="float64")
    assert np.max(np.abs(np.asarray(a.final["best_response_values"])
                         - np.asarray(b.final["best_response_values"]))) > 1e-3
