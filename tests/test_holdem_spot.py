"""``holdem_spot`` as a public-tree game, against postflop-solver and against its own
history tree.

Oracles:

- postflop-solver on the river spot with full ranges (``peer_river_full.json.gz``,
  1,081 hands each, the public tree's ranked terminals): its strategy evaluates to its
  values and exploitability; ``postflop-dcfr`` has its exploitability within 1%.
- postflop-solver on a turn spot with small ranges (``peer_turn_small.json.gz``, from
  ``benchmarks/peers/holdem_turn_fixture.py``: river cards as public chance, a donk size, a
  weighted group): its strategy at every one of the 776 decision nodes evaluates in
  jaxcfr to its values and exploitability; ``postflop-dcfr`` follows it until exact ties
  part them (below), then converges alike.
- postflop-solver on the issue's river spot (``tests/fixtures/holdem/peer_river_readme.json.gz``,
  written by ``benchmarks/peers/holdem_river_fixture.py`` from the peer's driver): its final
  average strategy, read into jaxcfr's rows and evaluated on the public tree, has the
  peer's values, best-response values and exploitability; jaxcfr's ``postflop-dcfr`` on
  the same spot has the peer's exploitability after each of 200 iterations (both in
  float32) and a value inside the peer's bracket.
- postflop-solver on a flop spot (Td9d6h, small ranges, stack 40: 83,022 public nodes), run
  live through its ``postflop_strategy_dump`` (slow; skipped when ``$JAXCFR_PF_BENCH``
  names no peer build): its strategy after 10 iterations at every decision node of the
  merged tree evaluates to its values and exploitability; ``postflop-dcfr`` has its
  exploitability at iteration 10 and a value in its bracket after 60.
- The history tree of the same spot (:func:`jaxcfr.expand_public`): random profiles have
  the same values and best-response values through both evaluators (float64), on a river
  spot and a turn all-in spot (every runout dealt, weighted hands). A flop all-in spot
  (two cards to come) agrees as well, but its 1,980 runouts take seconds to lower, so it
  is checked in docs/holdem.md, not here.
"""

from __future__ import annotations

import functools
import gzip
import json
import pathlib

import numpy as np
import pytest

import jaxcfr
from jaxcfr.game import GameError
from jaxcfr_games.holdem.cards import card_str
from jaxcfr_games.holdem.spot import README_RANGES, HoldemSpot

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures" / "holdem"


@functools.cache
def peer(name: str = "peer_river_readme") -> dict:
    with gzip.open(FIXTURES / f"{name}.json.gz", "rt") as f:
        return json.load(f)


@functools.cache
def river():
    spot = jaxcfr.load_game("holdem_spot")          # the defaults are the peer's river spot
    return spot, jaxcfr.lower_public(spot)


def _decisions(lowered) -> dict:
    """``{history joined by ',': node}`` of every public decision node (dealt cards by
    name, as the peer's dumps write them)."""
    t = lowered.tensors
    return {",".join(card_str(x) if isinstance(x, int) else x
                     for x in lowered.history(int(n))): int(n)
            for n in np.flatnonzero(t.node_base >= 0)}


def test_the_spot_is_the_peers_tree_and_ranges():
    spot, lowered = river()
    assert isinstance(spot, jaxcfr.PublicGame) and isinstance(spot, HoldemSpot)
    assert [len(spot.hands(p)) for p in (0, 1)] == peer()["hands"] == [175, 252]
    assert lowered.num_nodes == 21 == len(spot.tree)
    nodes = _decisions(lowered)
    assert set(nodes) == set(peer()["strategies"])
    for path, node in nodes.items():
        assert list(lowered.node_actions[node]) == peer()["strategies"][path]["actions"]
    assert spot.legal_actions() == ["Check", "Bet(60)", "AllIn(200)"]
    assert sum(spot.hand_weights(1)) == 252
    # hands in the peer's order (its combination index), named as it names them
    assert list(spot.hands(0)) == list(peer()["strategies"][""]["hands"])


def test_the_peers_strategy_evaluates_to_the_peers_numbers():
    spot, lowered = river()
    t = lowered.tensors
    table = np.zeros(t.legal_mask.shape)
    table[:, 0] = 1.0
    for path, node in _decisions(lowered).items():
        entry = peer()["strategies"][path]
        p = int(t.node_player[node])
        assert entry["player"] == p
        labels = spot.hands(p)
        assert set(entry["hands"]) == set(labels)
        base = int(t.node_base[node])
        for h, label in enumerate(labels):
            table[base + h, :len(entry["actions"])] = entry["hands"][label]
    ev = jaxcfr.evaluate_public(lowered, table, dtype="float32")      # as the solve below
    final = peer()["final"]
    np.testing.assert_allclose(ev["values"], final["values"], atol=2e-5)
    np.testing.assert_allclose(ev["best_response_values"], final["best_response_values"],
                               atol=2e-5)
    assert ev["exploitability"] == pytest.approx(final["exploitability"], abs=2e-5)


@functools.cache
def _postflop_run():
    _, lowered = river()
    return jaxcfr.solve_public(lowered, "postflop-dcfr", 200, eval_every=1, chunk=1)


def test_postflop_dcfr_follows_the_peers_trajectory():
    result = _postflop_run()
    ours = np.asarray([m["exploitability"] for m in result.metrics])
    theirs = np.asarray([e for _, e in peer()["trace"]])
    assert [m["iteration"] for m in result.metrics] == [i for i, _ in peer()["trace"]]
    # both float32: the same numbers up to rounding, iteration by iteration
    np.testing.assert_allclose(ours, theirs, rtol=2e-3, atol=2e-4)
    assert theirs[0] > 30 and theirs[-1] < 0.06          # a trajectory, not a constant


def test_the_value_lies_in_the_peers_bracket():
    final, theirs = _postflop_run().final, peer()["final"]
    bracket = final["exploitability"] + theirs["exploitability"]
    assert abs(final["values"][0] - theirs["values"][0]) <= bracket
    assert final["exploitability"] / 100 < 0.001                     # under 0.1% of the pot


# -- full ranges: 1,081 hands each, ranked terminals --------------------------------------------
def _peer_table(spot, lowered, strategies) -> np.ndarray:
    t = lowered.tensors
    table = np.zeros(t.legal_mask.shape)
    table[:, 0] = 1.0
    for path, node in _decisions(lowered).items():
        entry = strategies[path]
        p = int(t.node_player[node])
        base = int(t.node_base[node])
        for h, label in enumerate(spot.hands(p)):
            table[base + h, :len(entry["actions"])] = entry["hands"][label]
    return table


@pytest.mark.slow
def test_full_ranges_follow_the_peer():
    data = peer("peer_river_full")
    spot = HoldemSpot(ranges=(np.ones(1326), np.ones(1326)))
    lowered = jaxcfr.lower_public(spot)
    assert [len(spot.hands(p)) for p in (0, 1)] == data["hands"] == [1081, 1081]
    # float32: the program the solve below evaluates with (one compilation for both)
    ev = jaxcfr.evaluate_public(lowered, _peer_table(spot, lowered, data["strategies"]),
                                dtype="float32")
    final = data["final"]
    np.testing.assert_allclose(ev["values"], final["values"], atol=2e-4)
    assert ev["exploitability"] == pytest.approx(final["exploitability"], abs=2e-4)
    result = jaxcfr.solve_public(lowered, "postflop-dcfr", data["final"]["iterations"],
                                 eval_every=10, chunk=10)
    ours = [m["exploitability"] for m in result.metrics]
    theirs = [e for i, e in data["trace"] if i % 10 == 0]
    # float32 sums in another order (ranked terminals): 1% at most along the way
    np.testing.assert_allclose(ours, theirs, rtol=1e-2)


# -- a turn spot: river cards as public chance --------------------------------------------
@functools.cache
def turn():
    data = peer("peer_turn_small")
    spot = HoldemSpot(board=data["spot"]["board"], ranges=tuple(data["spot"]["ranges"]))
    return spot, jaxcfr.lower_public(spot), data


@pytest.mark.slow
def test_the_peers_turn_strategy_evaluates_to_the_peers_numbers():
    spot, lowered, data = turn()
    assert [list(spot.hands(p)) for p in (0, 1)] == data["hands"]
    nodes = _decisions(lowered)
    assert set(nodes) == set(data["strategies"]) and len(nodes) == 776   # 44 river cards
    t = lowered.tensors
    table = np.zeros(t.legal_mask.shape)
    table[:, 0] = 1.0
    for path, node in nodes.items():
        entry = data["strategies"][path]
        assert entry["player"] == int(t.node_player[node])
        rows = np.asarray(entry["strategy"])
        base = int(t.node_base[node])
        table[base:base + len(rows), :rows.shape[1]] = rows
    ev = jaxcfr.evaluate_public(lowered, table, dtype="float32")      # as the solve below
    final = data["final"]
    np.testing.assert_allclose(ev["values"], final["values"], atol=5e-4)
    np.testing.assert_allclose(ev["best_response_values"], final["best_response_values"],
                               atol=5e-4)
    assert ev["exploitability"] == pytest.approx(final["exploitability"], abs=5e-4)


@pytest.mark.slow
def test_postflop_dcfr_on_the_turn_spot():
    """The same trajectory until the peer's float32 rounding breaks exact ties (a call and a
    fold worth exactly the same: jaxcfr makes their regrets 0, the peer leaves noise that
    regret matching then follows), from its third iteration on; then the same convergence."""
    _, lowered, data = turn()
    result = jaxcfr.solve_public(lowered, "postflop-dcfr", data["iterations"], eval_every=1,
                                 chunk=1)
    ours = [m["exploitability"] for m in result.metrics]
    np.testing.assert_allclose(ours[:2], data["trace"][:2], rtol=1e-4)
    final = result.final
    assert final["exploitability"] < 1.5 * data["final"]["exploitability"]
    bracket = final["exploitability"] + data["final"]["exploitability"]
    assert abs(final["values"][0] - data["final"]["values"][0]) <= bracket


# -- the history tree of the same spot ------------------------------------------------------
SMALL = {
    "river": dict(board="Td9d6h5c2s", ranges=("AA,T9s", "QQ,87s:0.5"), pot=10,
                  stack=25, bets="50%, a", raises="2x", river_donk=None),
    "turn all-in": dict(board="Td9d6h5c", ranges=("AdAc,KdKc", "QdQc:0.5,8s7s"), pot=10,
                        stack=30, bets="a", raises="", river_donk=None),
}


#: A small turn spot for the moves (not expanded here: the peer checks it).
TURN = dict(board="Td9d6h5c", ranges=("AA", "QQ:0.5,87s"), pot=10, stack=30, bets="50%",
            raises="", river_donk="33%")


@pytest.mark.parametrize("name", list(SMALL))
def test_the_expanded_spot_has_the_same_values(name):
    spot = HoldemSpot(**SMALL[name])
    public = jaxcfr.lower_public(spot)
    history = jaxcfr.lower(jaxcfr.expand_public(spot))
    index = {k: i for i, k in enumerate(history.infoset_keys)}
    keys, live = public.row_keys(), public.live_rows()
    assert sum(live[:len(keys)]) == len(index)        # one public row per information set
    rng = np.random.default_rng(0)
    for _ in range(1):
        h_table = rng.random(history.tensors.legal_mask.shape) * history.tensors.legal_mask
        p_table = np.asarray(public.tensors.legal_mask, float)
        for r, key in enumerate(keys):
            if live[r]:
                row = h_table[index[key]]
                p_table[r, :] = 0
                p_table[r, :len(row)] = row[:p_table.shape[1]]
        a = jaxcfr.evaluate_public(public, p_table)
        b = jaxcfr.evaluate(history, h_table, dtype="float64", normalise=True)
        np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-10)
        np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                                   rtol=0, atol=1e-10)


def test_a_turn_spot_deals_every_river_card():
    spot = HoldemSpot(**TURN)
    state = spot.clone()
    for action in ("Check", "Check"):
        state.step(action)
    assert state.is_chance() and state.player_to_act() == jaxcfr.CHANCE
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 48 and all(p == pytest.approx(1 / 44) for _, p in outcomes)
    state.step(0)                                        # the 2c
    assert state.board()[-1] == 0 and state.legal_actions() == ["Check", "Bet(5)"]
    spot.validate(trajectories=16)


def test_bad_spots_and_moves_are_refused():
    with pytest.raises(ValueError, match=r"holdem_spot: range 'AA,KAs', at position 3"):
        HoldemSpot(ranges=("AA,KAs", README_RANGES[1]))
    with pytest.raises(ValueError, match="holdem_spot: IP's range has no hand the board"):
        HoldemSpot(ranges=("AA", "TsTc"), board="TsTc2d")
    with pytest.raises(GameError, match="no parameter 'stacks'"):
        jaxcfr.load_game("holdem_spot(stacks=100)")
    # weight vectors: as a range string's ':weight', from 0 to 1 (1.5 was taken; strings
    # raised numpy's words without the parameter)
    heavy = np.ones(1326)
    heavy[1000] = 1.5
    with pytest.raises(ValueError, match=r"holdem_spot: ranges\[1\]: a weight is from 0 to 1, "
                                         r"got 1\.5 for As8d \(entry 1000\)"):
        HoldemSpot(ranges=("AA", heavy))
    with pytest.raises(ValueError, match=r"ranges\[0\] must be a range string or 1,326 "
                                         r"weights from 0 to 1, got list$"):
        HoldemSpot(ranges=(["a"] * 1326, "AA"))
    spot = HoldemSpot(**TURN)
    with pytest.raises(GameError, match=r"illegal action 'Bet\(7\)'; legal: \['Check', "
                                        r"'Bet\(5\)'\]"):
        spot.clone().step("Bet(7)")
    state = spot.clone()
    state.step("Check")
    state.step("Check")
    with pytest.raises(GameError, match="not a card left to deal"):
        state.step(33)                                   # the Td is on the board


# -- the ranked terminals' fast paths against the dense products ----------------------------
def test_ranked_terminals_of_a_turn_spot_equal_the_dense_products():
    """A turn spot's ranked operators (one strength table per river card, gathered per
    terminal; folds and showdowns by running sums and card removal) give every node's
    counterfactual values of the dense ``[H, H]`` products (float64), for both players,
    also with a batch axis on the strategy."""
    from jaxcfr._util import precision
    from jaxcfr.kernels import public as kernels
    from jaxcfr.solvers.public import public_device_tensors
    spot = HoldemSpot(board="Td9d6h5c", ranges=("AA,KK,AKs,T9s,87s:0.5", "JJ-88,AQs,KQs,98s"),
                      pot=10, stack=30, bets="50%, a", raises="", river_donk=None)
    ranked = jaxcfr.lower_public(spot, terminals="ranked")
    dense = jaxcfr.lower_public(spot, terminals="dense")
    assert ranked.ranked and not dense.ranked and ranked.tensors.rank_order.shape[0] > 1
    rng = np.random.default_rng(3)
    legal = ranked.tensors.legal_mask
    table = rng.random(legal.shape + (2,)) * legal[..., None]
    table /= table.sum(axis=1, keepdims=True)
    with precision.scope(np.float64):
        out = []
        for lowered in (ranked, dense):
            t = public_device_tensors(lowered, np.float64)
            edge = kernels.edge_probabilities(t, lowered.structure, table)
            reach = kernels.reach_pass(t, lowered.structure, edge)
            out.append([np.asarray(kernels.terminal_values(t, lowered.structure, reach, i))
                        for i in range(2)])
    for a, b in zip(*out):
        assert np.abs(b).max() > 0
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    a, b = (jaxcfr.evaluate_public(x, table) for x in (ranked, dense))
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-10)


def test_auto_terminals_are_ranked_where_dense_ones_would_be_large(monkeypatch):
    """``terminals="auto"`` below ``RANKED_FROM`` hands: dense, unless the folds and
    showdowns as ``[H, H]`` products exceed ``DENSE_ENTRIES_MOST`` entries (a flop's
    hundreds of thousands of terminals); then ranked, with the same values (float64)."""
    from jaxcfr.lowering import public as lowering
    spot = HoldemSpot(**TURN)
    dense = jaxcfr.lower_public(spot)
    assert not dense.ranked and max(dense.structure.hands) < lowering.RANKED_FROM
    terminals = len(dense.tensors.fold_node) + len(dense.tensors.show_node)
    monkeypatch.setattr(lowering, "DENSE_ENTRIES_MOST",
                        terminals * max(dense.structure.hands) ** 2 - 1)  # one entry over
    ranked = jaxcfr.lower_public(spot)
    assert ranked.ranked and ranked.tensors.compat.shape == (0, 0)
    table = np.asarray(dense.tensors.legal_mask, float)
    a, b = (jaxcfr.evaluate_public(x, table) for x in (ranked, dense))
    np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-10)
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("length", [1, 31, 32, 33, 100, 2163])
def test_the_running_sums_are_cumulative_sums(length):
    """The kernels' running sums (triangular products by blocks) are ``cumsum`` (float64),
    with a trailing batch axis, at lengths around the block's."""
    import jax.numpy as jnp
    from jaxcfr._util import precision
    from jaxcfr.kernels.public import _cumsum
    x = np.random.default_rng(length).random((3, length, 2))
    with precision.scope(np.float64):
        got = np.asarray(_cumsum(jnp.asarray(x)))
    np.testing.assert_allclose(got, np.cumsum(x, axis=1), rtol=1e-13)


# -- a flop spot: turn and river cards as public chance, against the peer's binary ----------
#: A flop spot small enough for a test (83,022 public nodes once the suit-isomorphic cards are
#: merged, 34 + 26 hands): the peer's example's sizes behind a stack of 40 (a geometric bet
#: and all-in; every all-in before the river runs the cards out). The full flop spots are
#: measured in benchmarks/bench_holdem.py (docs/holdem.md).
FLOP = dict(board="Td9d6h", ranges=("AA,KK,T9s,87s,65s,AQo:0.5", "QQ,JJ,A5s,KQs,76s,T8s"),
            pot=100, stack=40)


@functools.cache
def _flop_peer(iterations: int, trace: bool) -> dict | None:
    """The peer's flop solve after ``iterations`` (``postflop_strategy_dump``, built beside
    ``pf_bench``, which ``$JAXCFR_PF_BENCH`` names), or ``None`` without it."""
    import os
    import sys
    saved = list(sys.path)
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        from benchkit import postflop
    finally:
        sys.path[:] = saved
    dumper = postflop.dumper_beside(os.environ.get(postflop.ENV, ""))
    if not dumper:
        return None
    return postflop.strategy_dump(dumper, FLOP["board"], FLOP["ranges"], FLOP["pot"],
                                  FLOP["stack"], iterations, trace=trace)


@functools.cache
def _flop():
    spot = HoldemSpot(**FLOP)
    return spot, jaxcfr.lower_public(spot)


def _flop_data(iterations: int, trace: bool = False) -> dict:
    data = _flop_peer(iterations, trace)
    if data is None:
        pytest.skip("postflop-solver's postflop_strategy_dump is not built: set "
                    "$JAXCFR_PF_BENCH to pf_bench's path (docs/holdem.md, 'Building the peer')")
    return data


@pytest.mark.slow
def test_the_peers_flop_strategy_evaluates_to_the_peers_numbers():
    """The peer's average strategy after 10 iterations, read at every decision node of
    jaxcfr's merged tree (each class's representative card; the peer dumps every card),
    evaluates in jaxcfr (float32) to the peer's values, best responses and exploitability."""
    data = _flop_data(10)
    spot, lowered = _flop()
    assert [list(spot.hands(p)) for p in (0, 1)] == data["hands"]
    assert lowered.ranked                          # 34 hands, but 53,239 terminals: ranked
    nodes = _decisions(lowered)
    assert set(nodes) < set(data["strategies"]) and len(lowered.merged) > 0
    assert max(len(path.split(",")) for path in nodes) >= 6      # flop, turn card, river card
    t = lowered.tensors
    table = np.zeros(t.legal_mask.shape)
    table[:, 0] = 1.0
    for path, node in nodes.items():
        player, rows = data["strategies"][path]
        assert player == int(t.node_player[node])
        assert rows.shape == (len(spot.hands(player)), len(lowered.node_actions[node]))
        base = int(t.node_base[node])
        table[base:base + len(rows), :rows.shape[1]] = rows
    ev = jaxcfr.evaluate_public(lowered, table, dtype="float32")
    final = data["final"]
    assert final["exploitability"] > 1                     # far from converged: a real check
    np.testing.assert_allclose(ev["values"], final["values"], atol=5e-4)
    np.testing.assert_allclose(ev["best_response_values"], final["best_response_values"],
                               atol=5e-4)
    assert ev["exploitability"] == pytest.approx(final["exploitability"], abs=5e-4)


@pytest.mark.slow
def test_postflop_dcfr_on_the_flop_spot():
    """jaxcfr's ``postflop-dcfr`` on the same flop for 60 iterations: the peer's
    exploitability at iteration 10 (to 1%: the trajectories part later, as on the turn
    above: exact ties), as close to equilibrium at the end (within 1.5 times the peer's),
    and a game value inside the peer's bracket (0.002 chips wide here)."""
    data = _flop_data(60, trace=True)
    _, lowered = _flop()
    result = jaxcfr.solve_public(lowered, "postflop-dcfr", 60, eval_every=10, chunk=10)
    ours = [m["exploitability"] for m in result.metrics]
    theirs = data["trace"][9::10]
    assert len(ours) == len(theirs) == 6 and theirs[0] > 1 > 0.01 > theirs[-1]
    assert ours[0] == pytest.approx(theirs[0], rel=1e-2)
    final = result.final
    assert final["exploitability"] < 1.5 * data["final"]["exploitability"]
    bracket = final["exploitability"] + data["final"]["exploitability"]
    assert abs(final["values"][0] - data["final"]["values"][0]) <= bracket


# -- the public tree counted before it is built (issue 31) ---------------------------------
@pytest.mark.parametrize("spot", [
    "holdem_spot(board='TdTh9c9s', ranges=('AA', 'KK'), stack=12, bets='1c', raises='1c')",
    "holdem_spot(board='TdTh9c9s', ranges=('AA', 'KK'), stack=12, bets='1c', raises='1c', "
    "isomorphism=False)",
    "holdem_spot(board='Td9d6h', ranges=('AA', 'KK'), stack=3, bets='1c', raises='', "
    "add_allin=0)"])
def test_the_public_tree_is_counted_before_it_is_built(spot):
    # the count (bet-tree lines times the cards dealt below them, suit-isomorphic cards
    # once) is the lowered tree's number of public nodes
    game = jaxcfr.load_game(spot)
    lowered = jaxcfr.lower_public(game)
    assert game._s.size.public_nodes(*game._s.repeats()) == len(lowered.tensors.parent)


def test_a_spot_past_the_public_limit_is_refused_before_it_is_built(monkeypatch):
    # 1-chip sizes behind a stack of 150 on the turn: 6.5 million public nodes, minutes of
    # lowering before; now refused while counting, nothing built, with the size and the
    # setting to change (the limit lowered here to keep the test small: stack 40 has
    # 160,593 public nodes)
    import jaxcfr_games.holdem.spot as S
    monkeypatch.setattr(S, "LARGEST_PUBLIC_TREE", 100_000)
    monkeypatch.setattr(S, "build_tree", lambda *a, **k: pytest.fail("built"))
    with pytest.raises(ValueError, match=(
            r"holdem_spot: the public tree has 160,593 nodes, more than 100,000 \(a bet tree "
            r"of 3,566 nodes; the river's lines repeated for 48 river cards \(suit-isomorphic "
            r"cards once\)\): the turn's betting has up to 4 actions at a decision \(bets 1c; "
            r"raises 1c\) and 19 bets and raises on one line, no raise cap, behind a stack of "
            r"40 \(0.4 pots\): give fewer sizes, larger raises, or chip raises with a cap "
            r"\('20c3r'\)")):
        HoldemSpot(board="Td9d6h5c", ranges=("AA", "KK"), stack=40, bets="1c", raises="1c")
    monkeypatch.setattr(S, "LARGEST_PUBLIC_TREE", 2_000)    # refused while counting
    with pytest.raises(ValueError, match=r"the public tree has at least 2,0\d\d nodes, more "
                                         r"than 2,000 \(a bet tree of at least \d+ nodes"):
        HoldemSpot(board="Td9d6h5c", ranges=("AA", "KK"), stack=40, bets="1c", raises="1c")
