"""Public trees: the same game as the history tree, exactly.

Oracles: the history tree of the same game (:func:`jaxcfr.expand_public`, lowered and
solved by the ordinary code) gives, in float64, the same regrets, strategy sums and
exploitability after every iteration, for every preset (alternating and simultaneous
updates); the public Kuhn and Leduc are ``kuhn_poker`` and ``leduc_poker`` (same
exploitability of the same profile through both evaluators); Kuhn's value is -1/18;
random public games agree with their expansions; every contract rule is reported.
"""

from __future__ import annotations

import functools
import json

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr._util import precision
from jaxcfr.game import GameError
from jaxcfr.game.public_expand import terminal_payoff
from jaxcfr.solvers.analytics import device_tensors
from jaxcfr.solvers.public import public_device_tensors, public_solver
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc
from jaxcfr_games.public_liars_dice import PublicLiarsDice
from tests.random_public_games import RandomPublicGame

F64 = np.float64


@functools.lru_cache(maxsize=None)
def _pair(game, terminals="dense"):
    """The public tree and the history tree of the same game, and the rows they share
    (``(public rows, history rows)``, the history tree's in its row order)."""
    public = jaxcfr.lower_public(game, terminals=terminals)
    history = jaxcfr.lower(jaxcfr.expand_public(game))
    index = {k: i for i, k in enumerate(history.infoset_keys)}
    keys = public.row_keys()
    live = public.live_rows()
    rows = np.array([i for i in range(len(keys)) if live[i]], np.int64)
    other = np.array([index[keys[i]] for i in rows], np.int64)
    return public, history, rows, other


_update = jax.jit(lambda solver, t, s, state, hp: solver.update(t, s, state, hp),
                  static_argnums=(0, 2))


def _both(game, solver, iterations, terminals="dense"):
    """Yield ``(public state, history state, public metrics, history metrics)`` after
    every iteration, both solved in float64 from zero."""
    public, history, _, _ = _pair(game, terminals)
    ps = public_solver(solver)
    with precision.scope(F64):
        pt = public_device_tensors(public, F64)
        ht = device_tensors(history, F64, sequence_form=False)
        hp = solver.hyperparams(F64)
        p_state, h_state = ps.init(pt, dtype=F64), solver.init(ht, dtype=F64)
        for _ in range(iterations):
            p_state = _update(ps, pt, public.structure, p_state, hp)
            h_state = _update(solver, ht, history.structure, h_state, hp)
            yield (p_state, h_state,
                   jaxcfr.evaluate_public(public, p_state.strategy_sum, tensors=pt),
                   jaxcfr.evaluate(history, h_state.strategy_sum, dtype="float64",
                                   normalise=True))


def _close(a, b, rel):
    a, b = np.asarray(a, F64), np.asarray(b, F64)
    scale = max(np.abs(b).max(initial=0.0), 1e-300)
    assert np.abs(a - b).max(initial=0.0) <= rel * scale, (np.abs(a - b).max(), scale)


def _check_same(game, name, iterations, terminals="dense"):
    _, _, rows, other = _pair(game, terminals)
    solver = jaxcfr.make_solver(name)
    for p_state, h_state, pm, hm in _both(game, solver, iterations, terminals):
        assert p_state.tables.keys() == h_state.tables.keys()
        for field in set(p_state.tables) - {"strategy_error"}:     # (rounding noise)
            _close(np.asarray(getattr(p_state, field))[rows],
                   np.asarray(getattr(h_state, field))[other], 1e-11)
        assert abs(pm["nash_conv"] - hm["nash_conv"]) <= 1e-12 * max(1.0, hm["nash_conv"])
        np.testing.assert_allclose(pm["values"], hm["values"], rtol=0, atol=1e-12)


def _presets(default):
    """Every preset, those not in ``default`` marked slow (the default set keeps a
    simultaneous, an alternating and a predictive one)."""
    return [n if n in default else pytest.param(n, marks=pytest.mark.slow)
            for n in jaxcfr.ALGORITHMS]


@pytest.mark.parametrize("name", _presets({"cfr", "cfr+", "pcfr+"}))
def test_kuhn_every_preset_matches_the_history_tree(name):
    _check_same(PublicKuhn(), name, 12)


@pytest.mark.parametrize("name", _presets({"dcfr"}))
def test_liars_dice_every_preset_matches_the_history_tree(name):
    _check_same(PublicLiarsDice(1, 2), name, 8)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cfr", "cfr+", "dcfr", "pcfr+"])
def test_leduc_matches_the_history_tree(name):
    _check_same(PublicLeduc(), name, 6)


@pytest.mark.parametrize("seed", [0] + [pytest.param(s, marks=pytest.mark.slow)
                                         for s in range(1, 4)])
def test_random_public_games_match_their_expansion(seed):
    game = RandomPublicGame(seed)
    game.validate()
    jaxcfr.validate(jaxcfr.expand_public(game))
    _check_same(game, "cfr", 4)                           # simultaneous, dense terminals
    _check_same(game, "pcfr+", 4, terminals="ranked")     # alternating, O(H) terminals


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dcfr"])
def test_ranked_terminals_match_the_history_tree(name):
    _check_same(PublicLeduc(ranks=4), name, 5, terminals="ranked")


def test_ranked_terminals_equal_dense_terminals_on_two_card_hands():
    """Card removal by inclusion-exclusion, with hands of two cards on both sides (the
    hand of the same two cards is taken off twice and added back)."""
    checked = 0
    for seed in range(40):
        game = RandomPublicGame(seed)
        if min(len(c) for p in range(2) for c in game.hand_cards(p)) < 2:
            continue
        dense = jaxcfr.lower_public(game, terminals="dense")
        ranked = jaxcfr.lower_public(game, terminals="ranked")
        t = ranked.tensors
        if not t.show_node.size or not (t.same < t.same.shape[1]).any():
            continue
        table = _random_profile(dense, seed)
        a, b = (jaxcfr.evaluate_public(x, table) for x in (dense, ranked))
        np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                                   rtol=0, atol=1e-12)
        np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-12)
        checked += 1
        if checked == 2:
            break
    assert checked >= 2


def test_ranked_terminals_keep_no_compatibility_table():
    """The ranked operators never read ``compat`` (``[H, H]``: on a full-range river
    4.7 MB of the tensors' 4.9 MB in float32), so a ranked lowering leaves it empty; the
    host's ``compatibility`` is the dense lowering's table (the device's values of both
    lowerings agree: the test above)."""
    dense = jaxcfr.lower_public(PublicKuhn(), terminals="dense")
    ranked = jaxcfr.lower_public(PublicKuhn(), terminals="ranked")
    assert ranked.tensors.compat.shape == (0, 0)
    h0, h1 = dense.structure.hands
    assert dense.tensors.compat.shape == (max(h0, h1),) * 2
    for lowered in (dense, ranked):
        np.testing.assert_array_equal(lowered.compatibility, dense.tensors.compat[:h0, :h1])


def _rows_reference(lowered) -> tuple[np.ndarray, np.ndarray]:
    """The rows' ``legal_mask [I, A]`` and ``infoset_player [I]`` built by hand: decision
    node ``n`` (in decision order) has one row per hand of its player, right after the
    previous decision's, with ``n``'s actions and player; the sink last, slot 0 alone and
    no player."""
    t, s = lowered.tensors, lowered.structure
    A = lowered.max_actions
    owner = [int(t.node_player[n]) for n in np.asarray(t.decision_node)]
    rows = sum(s.hands[p] for p in owner) + 1
    legal = np.zeros((rows, A), bool)
    legal[:, 0] = True
    player = np.full(rows, -1, np.int32)
    at = 0
    for n, p in zip(np.asarray(t.decision_node), owner):
        assert t.node_base[n] == at
        legal[at:at + s.hands[p], :len(lowered.node_actions[n])] = True
        player[at:at + s.hands[p]] = p
        at += s.hands[p]
    return legal, player


def test_the_rows_legal_actions_and_players_are_kept_per_decision():
    """Every hand of a public decision has its legal actions and player: the tensors keep
    them per decision (``decision_legal [D + 1, A]``, ``decision_player [D + 1]``,
    ``hand_count [P]``; on the README turn the rows' tables were 1.39 MB of its 2.81),
    and the rows' views derived from them (``legal_mask``, ``infoset_player``, on the
    host and on the device, one game or a stack's ``[B, ...]``) are the rows the lowering
    stored before, entry for entry, with their dtypes; no field has a row axis."""
    from jaxcfr.lowering.public_stack import stack_public, unstack_public_rows
    from jaxcfr_games.holdem.spot import HoldemSpot

    def spot(ranges):
        return HoldemSpot(board="Td9d6h5c2s", ranges=ranges, pot=10, stack=25,
                          bets="50%, a", raises="2x", river_donk=None)
    games = [spot(("AA,T9s", "QQ,87s:0.5")), PublicLiarsDice(1, 3), PublicLeduc()]
    for game in games:
        lowered = jaxcfr.lower_public(game)
        t = lowered.tensors
        legal, player = _rows_reference(lowered)
        assert t.row_shape == legal.shape == (lowered.num_rows, lowered.max_actions)
        assert all(np.shape(x)[:1] != (lowered.num_rows,) or np.size(x) == 0 for x in t)
        for view, want in ((t.legal_mask, legal), (t.infoset_player, player)):
            assert isinstance(view, np.ndarray) and view.dtype == want.dtype
            np.testing.assert_array_equal(view, want)
        d = public_device_tensors(lowered, np.float32)
        views = jax.jit(lambda d: (d.legal_mask, d.infoset_player))(d)
        for view, want in zip(views, (legal, player)):
            assert view.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(view), want)
        assert lowered.rows_per_player == tuple(int((player == p).sum())
                                                for p in range(lowered.num_players))
    stack = stack_public([spot(("AA,T9s", "QQ,87s:0.5")), spot(("KK", "QQ,JJ,87s"))])
    t = stack.tensors
    assert t.legal_mask.shape == (2,) + t.row_shape
    real = t.infoset_player >= 0
    assert (t.legal_mask[~real] == (np.arange(t.row_shape[1]) == 0)).all()
    for view, want in ((t.legal_mask, 0), (t.infoset_player[..., None], 1)):
        for b, (got, member) in enumerate(zip(unstack_public_rows(stack, view),
                                              stack.members)):
            ref = _rows_reference(member)[want]
            np.testing.assert_array_equal(got if want == 0 else got[:, 0], ref)


def test_hand_values_read_the_host_compatibility():
    """The host's hand values (which weigh the opponent's reach by the compatibility) of
    a ranked lowering, whose device tensors keep no compatibility, are the dense one's."""
    from jaxcfr.solvers.public import hand_values_public
    dense = jaxcfr.lower_public(PublicKuhn(), terminals="dense")
    ranked = jaxcfr.lower_public(PublicKuhn(), terminals="ranked")
    table = _random_profile(dense, 3)
    node = int(np.flatnonzero(dense.tensors.node_base >= 0)[1])
    x, y = (hand_values_public(g, table, node) for g in (dense, ranked))
    assert np.isfinite(x["ev"]).all()
    np.testing.assert_allclose(x["reach"], y["reach"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(x["ev"], y["ev"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_ranked_fold_by_cards_is_the_gathered_fold_bit_for_bit(dtype, monkeypatch):
    """From ``FOLD_PRODUCT_FROM`` fold terminals on, a ranked fold adds a hand's cards by a
    product with the hands-by-cards matrix: the same numbers as the gather of each hand's
    terms, bit for bit (hands of two cards, of one, blocked, the hand of the same cards;
    both compiled), with a trailing batch axis too."""
    from jaxcfr.kernels import public as kernels
    from jaxcfr_games.holdem.spot import HoldemSpot
    lowered = jaxcfr.lower_public(HoldemSpot(ranges=("AA,AKs,KQo,T9s,65s", "AK,QQ,JTs,98s")),
                                  terminals="ranked")
    with precision.scope(dtype):
        t = public_device_tensors(lowered, np.dtype(dtype))
        H = int(t.same.shape[1])
        rng = np.random.default_rng(3)
        r = rng.random((5, H, 2)) * (rng.random((5, H, 1)) < 0.8)          # [T, H, b]
        r = jax.numpy.asarray(r, dtype)
        assert r.dtype == dtype
        out = {}
        for name, start in (("gather", 10 ** 9), ("product", 1)):
            monkeypatch.setattr(kernels, "FOLD_PRODUCT_FROM", start)
            fold = jax.jit(lambda t, r, i: kernels._ranked_fold(t, r, i))
            out[name] = [np.asarray(fold(t, r, i)) for i in (0, 1)]
    for a, b in zip(out["gather"], out["product"]):
        assert a.dtype == dtype
        assert np.array_equal(a, b)
        assert np.abs(a).max() > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ranked_terminals_by_chunks_are_the_whole_operators_bit_for_bit(dtype, monkeypatch):
    """The ranked folds and showdowns computed a chunk of terminals at a time (a flop's
    181,483 showdowns in chunks of 2^20 / H: ``RANKED_CHUNK_ENTRIES``) are the operators
    on all the terminals at once, bit for bit: here a turn's 486 folds (by the product
    with the hands-by-cards matrix) and 816 showdowns of 48 strength tables in chunks of
    ``RANKED_CHUNK_LEAST`` = 256 (the last padded), both players; both compiled. (Not
    with a trailing batch axis: XLA's CPU backend picks the running sums' product kernel
    by shape, and in float64 with a batch of 2 the 486 folds at once round differently
    from chunks of them, by one unit in the last place; and chunks of under 16 terminals
    round differently without one.)"""
    from jaxcfr.kernels import public as kernels
    from jaxcfr_games.holdem.spot import HoldemSpot
    lowered = jaxcfr.lower_public(HoldemSpot(board="Td9d6h5c"), terminals="ranked")
    with precision.scope(dtype):
        t = public_device_tensors(lowered, np.dtype(dtype))
        H = int(t.same.shape[1])
        rng = np.random.default_rng(5)
        for op, nodes in ((kernels._ranked_fold, t.fold_node), (kernels._ranked_showdown,
                                                                 t.show_node)):
            T = int(nodes.shape[0])
            assert T > 256 and T % 256
            r = rng.random((T, H)) * (rng.random((T, H)) < 0.8)                   # [T, H]
            r = jax.numpy.asarray(r, dtype)
            out = {}
            for name, least, entries in (("whole", 10 ** 9, 10 ** 9), ("chunks", 256, 1)):
                monkeypatch.setattr(kernels, "RANKED_CHUNK_LEAST", least)
                monkeypatch.setattr(kernels, "RANKED_CHUNK_ENTRIES", entries)
                f = jax.jit(lambda t, r, i: op(t, r, i))
                out[name] = [np.asarray(f(t, r, i)) for i in (0, 1)]
            for a, b in zip(out["whole"], out["chunks"]):
                assert a.shape == (T, H)
                assert np.array_equal(a, b)
                assert np.abs(a).max() > 0


@pytest.mark.parametrize("terminals", ["dense", "ranked"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_regrets_by_slot_are_the_rows_regrets_bit_for_bit(terminals, dtype):
    """``counterfactual_regrets`` (the exact estimator's input, computed by decision slot
    ``[D, A, H]`` and written into the rows once) is ``instantaneous_regret`` of the
    rows' action values, bit for bit: the same sums in the same order, another layout
    (ties, exact zeros and zero-probability actions included). Both sides compiled: op by
    op, outside a compiled program, the rounding of a multiply-add can differ."""
    from jaxcfr.kernels import public as kernels
    from jaxcfr.kernels.numerics import instantaneous_regret
    lowered = jaxcfr.lower_public(RandomPublicGame(2), terminals=terminals)
    s = lowered.structure
    table = _random_profile(lowered, 3)
    table[np.random.default_rng(4).random(table.shape) < 0.3] = 0   # zero probabilities
    table[:, 0] += table.sum(axis=1) == 0
    table /= table.sum(axis=1, keepdims=True)
    with precision.scope(dtype):
        t = public_device_tensors(lowered, dtype)
        strategy = jax.numpy.asarray(table, dtype)
        for players in ((0,), (1,), (0, 1)):
            def by_rows(t, x):
                q, own = kernels.counterfactual_action_values(t, s, x, players)
                return instantaneous_regret(q, x, t.legal_mask), own
            rows, own = jax.jit(by_rows)(t, strategy)
            regret, own2 = jax.jit(lambda t, x: kernels.counterfactual_regrets(
                t, s, x, players))(t, strategy)
            assert np.array_equal(np.asarray(regret), np.asarray(rows))
            assert np.array_equal(np.asarray(own2), np.asarray(own))
            assert np.asarray(regret).any()


def test_random_games_cover_every_operator_and_blocking():
    kinds, blocked = set(), False
    for seed in range(6):
        public = jaxcfr.lower_public(RandomPublicGame(seed))
        t = public.tensors
        kinds |= {k for k, n in (("fold", t.fold_node), ("show", t.show_node),
                                 ("table", t.table_node)) if n.size}
        blocked |= bool((t.alive == 0).any() and t.alive.shape[0] > 1)
    assert kinds == {"fold", "show", "table"} and blocked


def test_kuhn_value_is_minus_one_eighteenth():
    result = jaxcfr.solve_public(PublicKuhn(), "cfr+", 2000, precision="float64")
    assert abs(result.final["values"][0] + 1 / 18) < 1e-3
    assert result.final["exploitability"] < 1e-3
    assert result.final["exploitability"] >= 0


def _history_profile(history, public, table, key_of):
    """``table`` (a public profile ``[I, A]``) as a profile of ``history`` (a lowered
    reference game), row by row through ``key_of(public row key) -> history key``."""
    out = np.zeros(history.tensors.legal_mask.shape)
    out[-1, 0] = 1
    index = {k: i for i, k in enumerate(history.infoset_keys)}
    found = 0
    for i, key in enumerate(public.row_keys()):
        hkey = key_of(key)
        j = index.get(hkey)
        if j is not None:
            names = history.infoset_actions[j]
            acts = public.node_actions[_node_of_row(public, i)]
            for a, name in enumerate(acts):
                out[j, names.index(name)] = table[i, a]
            found += 1
    assert found == history.num_rows - 1
    return out


def _node_of_row(public, row):
    return int(public.tensors.decision_node[row // max(public.structure.hands)])


def _random_profile(lowered, seed):
    rng = np.random.default_rng(seed)
    x = rng.random(lowered.tensors.legal_mask.shape) * lowered.tensors.legal_mask
    return x / x.sum(axis=1, keepdims=True)


def test_public_kuhn_is_kuhn_poker():
    public = jaxcfr.lower_public(PublicKuhn())
    history = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    letter = {"pass": "p", "bet": "b"}
    table = _random_profile(public, 0)
    mapped = _history_profile(history, public, table, lambda k: (
        k[0], f"{k[0]}|{k[1][0]}|{''.join(letter[a] for a in k[1][1])}"))
    a = jaxcfr.evaluate_public(public, table)
    b = jaxcfr.evaluate(history, mapped, dtype="float64")
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("ranks", [3, pytest.param(5, marks=pytest.mark.slow)])
def test_public_leduc_is_leduc_poker(ranks):
    game = PublicLeduc(ranks=ranks)
    public = jaxcfr.lower_public(game)
    history = jaxcfr.lower(jaxcfr.load_game(f"leduc_poker(ranks={ranks})"))
    label = jaxcfr.load_game(f"leduc_poker(ranks={ranks})")._r.label
    letter = {"fold": "f", "call": "c", "raise": "r"}

    def key_of(k):
        p, (hand, path) = k
        bets = [""]
        board = None
        for x in path:
            if isinstance(x, int):
                board = x
                bets.append("")
            else:
                bets[-1] += letter[x]
        key = f"{p}|{label[hand]}|{bets[0]}"
        if board is not None:
            key += f"|{label[board]}|{bets[1]}"
        return (p, key)

    table = _random_profile(public, ranks)
    mapped = _history_profile(history, public, table, key_of)
    a = jaxcfr.evaluate_public(public, table)
    b = jaxcfr.evaluate(history, mapped, dtype="float64")
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-12)
    assert abs(a["exploitability"] - b["exploitability"]) <= 1e-12


def test_public_liars_dice_is_liars_dice():
    game = PublicLiarsDice(1, 3)
    public = jaxcfr.lower_public(game)
    history = jaxcfr.lower(jaxcfr.load_game("liars_dice(dice=1, sides=3)"))
    table = _random_profile(public, 7)
    mapped = _history_profile(history, public, table, lambda k: (
        k[0], f"{k[0]}|{k[1][0]}|" + "".join(" " + a for a in k[1][1])))
    a = jaxcfr.evaluate_public(public, table)
    b = jaxcfr.evaluate(history, mapped, dtype="float64")
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(a["values"], b["values"], rtol=0, atol=1e-12)


def _river():
    from jaxcfr_games.holdem.spot import HoldemSpot
    return HoldemSpot(board="QhJd8c5s3h", ranges=("AA,AKs:0.5,72o", "KK,QQ:0.5"))


def _turn():
    from jaxcfr_games.holdem.spot import HoldemSpot
    return HoldemSpot(board="Td9d6h5c", ranges=("AA,KK,T9s,87s,65s,AQo:0.5",
                                                 "QQ,JJ,A5s,KQs,76s,T8s"))


@pytest.mark.parametrize("make", [PublicKuhn, PublicLeduc, pytest.param(_river, id="river"),
                                  pytest.param(_turn, id="turn")])
def test_the_one_table_evaluation_is_the_whole_tables(make):
    """A flop's evaluation keeps one node table at a time (``kernels.public.metrics`` and
    ``best_response`` from ``lean_from`` ``[N, H]`` entries on: the edges taken per level
    from the rows, one player's reach at a time): forced (``lean_from=0``) on Kuhn, Leduc,
    a river and a turn with a merged chance level, float64, each player's value and
    best-response value are the whole tables' to 1e-12 (a root's sum over the hands can
    round otherwise in the last place: 7e-15 on the river), a best response the same
    byte for byte (player 1's); by default these small trees keep the whole tables.
    (Kuhn in the default set; Leduc, the river and the turn in tests/slow.txt.)"""
    from jaxcfr.kernels import public as kernels
    lowered = jaxcfr.lower_public(make())
    s = lowered.structure
    with precision.scope(np.float64):
        t = public_device_tensors(lowered, "float64")
        assert not kernels._lean(t, s, None) and kernels._lean(t, s, 0)
        legal = np.asarray(lowered.tensors.legal_mask)
        x = np.random.default_rng(3).random(legal.shape) * legal
        x = jax.numpy.asarray(x / np.maximum(x.sum(1, keepdims=True), 1e-300))
        metrics = jax.jit(kernels.metrics, static_argnames=("s", "lean_from"))
        whole, lean = (metrics(t, s, x, lean_from=k) for k in (1 << 62, 0))
        for a, b in zip(whole, lean):
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-12, atol=1e-12)
        assert np.abs(np.asarray(whole[1])).min() > 0
        best = jax.jit(kernels.best_response, static_argnames=("s", "player", "lean_from"))
        a, b = (np.asarray(best(t, s, x, 1, lean_from=k)) for k in (1 << 62, 0))
        assert a.tobytes() == b.tobytes()
        assert not np.array_equal(a, np.asarray(x))                  # (1's rows replaced)


@pytest.mark.parametrize("terminals", ["dense", "ranked"])
def test_a_best_response_earns_the_best_response_value(terminals):
    public = jaxcfr.lower_public(PublicLeduc(), terminals=terminals)
    table = _random_profile(public, 3)
    before = jaxcfr.evaluate_public(public, table)
    for player in (0, 1):
        best = jaxcfr.best_response_public(public, table, player)
        after = jaxcfr.evaluate_public(public, best)
        assert abs(after["values"][player] - before["best_response_values"][player]) <= 1e-12
        mine = public.tensors.infoset_player == player
        assert set(np.unique(best[mine])) <= {0.0, 1.0}
        np.testing.assert_allclose(best[~mine], table[~mine], rtol=0, atol=1e-15)


def test_public_tree_is_smaller_than_the_history_tree():
    public = jaxcfr.lower_public(PublicLeduc(ranks=5))
    history = jaxcfr.lower(jaxcfr.load_game("leduc_poker(ranks=5)"))
    assert public.num_nodes * 10 < history.num_nodes
    assert public.nbytes < history.nbytes


def test_terminal_payoff_operators():
    show = jaxcfr.game.Showdown(3.0, ((1.0, 2.0), (2.0, 0.0)))
    assert terminal_payoff(show, 0, 0) == (-3.0, 3.0)
    assert terminal_payoff(show, 1, 1) == (3.0, -3.0)
    assert terminal_payoff(show, 1, 0) == (0.0, 0.0)
    assert terminal_payoff(jaxcfr.game.Fold((2.0, -2.0)), 1, 0) == (2.0, -2.0)


# -- the contract ---------------------------------------------------------------------------
class _Broken(PublicKuhn):
    """Public Kuhn with one rule broken (``how``)."""

    def __init__(self, how):
        super().__init__()
        self.how = how

    def clone(self):
        new = _Broken(self.how)
        new._hist = self._hist
        return new

    def hands(self, player):
        return (0, 1, 1) if self.how == "hands" else super().hands(player)

    def hand_weights(self, player):
        return (1.0, -1.0, 1.0) if self.how == "hand-weights" else super().hand_weights(player)

    def hand_cards(self, player):
        return ((0,), (1,)) if self.how == "hand-cards" else super().hand_cards(player)

    def terminal_value(self):
        if self.how == "terminal-value":
            return jaxcfr.game.Showdown(1.0, ((1.0, 2.0), (0.0, 1.0, 2.0)))
        if self.how == "game-exception":
            raise KeyError("oops")
        return super().terminal_value()

    def legal_actions(self):
        acts = super().legal_actions()
        return acts + acts[:1] if self.how == "legal-actions" and acts else acts


class _BadChance(PublicLeduc):
    def chance_outcomes(self):
        out = super().chance_outcomes()
        return None if out is None else [(c, p * 1.01) for c, p in out]

    def clone(self):
        new = _BadChance.__new__(_BadChance)
        new._r, new._node, new._board = self._r, self._node, self._board
        return new


@pytest.mark.parametrize("how", ["hands", "hand-weights", "hand-cards", "terminal-value",
                                 "game-exception", "legal-actions"])
def test_each_broken_rule_is_named(how):
    with pytest.raises(GameError) as err:
        _Broken(how).validate()
    assert err.value.rule == how
    with pytest.raises(GameError) as err:
        jaxcfr.lower_public(_Broken(how))
    assert err.value.rule == how


def test_public_chance_that_does_not_sum_to_one_is_named_with_its_history():
    with pytest.raises(GameError) as err:
        jaxcfr.lower_public(_BadChance())
    assert err.value.rule == "public-chance-sum"
    assert err.value.history and err.value.history[-1] == "call"


def test_ranked_terminals_refuse_hands_of_three_cards():
    class Three(PublicKuhn):
        def hand_cards(self, player):
            return ((0, 3, 4), (1, 5, 6), (2, 7, 8))
    with pytest.raises(ValueError, match="at most two cards"):
        jaxcfr.lower_public(Three(), terminals="ranked")
    assert not jaxcfr.lower_public(Three()).ranked


def test_a_batch_of_settings_is_each_setting_solved_alone():
    batch = jaxcfr.solve_public(PublicKuhn(), "dcfr", 6, precision="float64",
                                alpha=[1.0, 2.0], gamma=[1.0, 3.0])
    for b, (alpha, gamma) in [(1, (2.0, 3.0))]:          # (one member: one compile less)
        one = jaxcfr.solve_public(PublicKuhn(), "dcfr", 6, precision="float64",
                                  alpha=alpha, gamma=gamma)
        _close(batch.average_strategy[..., b], one.average_strategy, 1e-12)
        assert abs(batch.final["nash_conv"][b] - one.final["nash_conv"]) <= 1e-12


def test_a_public_game_given_to_lower_says_where_it_goes():
    with pytest.raises(GameError, match="lower_public"):
        jaxcfr.lower(PublicKuhn())


def test_the_profile_is_keyed_by_player_hand_and_public_history():
    result = jaxcfr.solve_public(PublicKuhn(), "cfr+", 50)
    profile = result.profile()
    assert len(profile) == 12                      # Kuhn's information sets
    assert profile[(1, 2, ("pass",))] == result.strategy(1, 2, ("pass",))
    for dist in profile.values():
        assert abs(sum(dist.values()) - 1) < 1e-6


def test_solve_public_refuses_a_sampling_solver():
    with pytest.raises(ValueError):
        jaxcfr.solve_public(PublicKuhn(), jaxcfr.make_solver("cfr+", sampling="external"), 10)


# -- reachable by name ----------------------------------------------------------------------
def test_game_strings_take_tree_public():
    assert isinstance(jaxcfr.load_game("leduc_poker(ranks=4, tree='public')"), PublicLeduc)
    assert isinstance(jaxcfr.load_game("liars_dice(sides=3, tree='public')"), PublicLiarsDice)
    assert isinstance(jaxcfr.load_game("kuhn_poker(tree='public')"), PublicKuhn)
    assert type(jaxcfr.load_game("kuhn_poker(tree='history')")).__name__ == "KuhnPoker"
    with pytest.raises(GameError, match="no public tree"):
        jaxcfr.load_game("goofspiel(tree='public')")
    with pytest.raises(GameError, match="'history' or 'public'"):
        jaxcfr.load_game("kuhn_poker(tree='both')")


def test_the_command_line_solves_a_public_tree(capsys):
    from jaxcfr.cli import app
    capsys.readouterr()
    assert app.main(["solve", "kuhn_poker(tree='public')", "--algorithm", "cfr+",
                     "--iterations", "30", "--precision", "float64", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    history = jaxcfr.solve("kuhn_poker", "cfr+", 30, precision="float64")
    assert abs(out["nash_conv"] - history.final["nash_conv"]) <= 1e-12
    assert out["chance"] == "exact" and out["iterations_per_second"] > 0


def test_validate_probes_a_public_tree(capsys):
    from jaxcfr.cli import app
    capsys.readouterr()
    assert app.main(["validate", "leduc_poker(tree='public')", "--trajectories", "32"]) == 0
    assert "conforms as a public tree" in capsys.readouterr().out


def test_validate_says_whether_a_counted_spot_fits(monkeypatch, capsys):
    # a hold'em spot counts its public tree: validate says the least it needs by preset
    # against the budget (what a solve checks before the walk)
    from jaxcfr.cli import app
    from jaxcfr.lowering.budget import format_bytes
    from jaxcfr.lowering.public import least_public_size, public_footprint
    spot = "holdem_spot(board='QhJd8c5s', ranges=('AA,AKs:0.5,72o', 'KK,QQ:0.5'))"
    least = least_public_size(jaxcfr.load_game(spot))
    needs = [public_footprint(least, state_tables=k).total for k in (2, 3, 4)]
    assert needs[0] < needs[1] < needs[2]

    def said(budget):
        monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", str(budget))
        assert app.main(["validate", spot, "--trajectories", "8"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert len(out) == 2
        return out[1]
    capsys.readouterr()
    line = said(needs[2])
    assert line == (f"{spot}: {least.nodes:,} public nodes counted ({least.decisions:,} "
                    f"decisions, {least.terminals:,} terminals; up to 22 hands per player): "
                    f"at least {format_bytes(needs[0])} with postflop-dcfr, "
                    f"{format_bytes(needs[1])} with cfr+, {format_bytes(needs[2])} with "
                    f"pcfr+ (float32) to lower and solve, against the memory budget of "
                    f"{format_bytes(needs[2])}: within it")
    assert said(needs[1]).endswith(": pcfr+ refused before the walk")
    assert said(needs[0]).endswith(": cfr+, pcfr+ refused before the walk")
    line = said(needs[0] - 1)
    assert line.startswith(f"{spot}: too large to lower: {least.nodes:,} public nodes")
    assert line.endswith("a solve is refused before the walk (set "
                         "JAXCFR_MEMORY_BUDGET=BYTES to raise it)")
    assert app.main(["validate", "leduc_poker(tree='public')", "--trajectories", "8"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1        # not counted: not said


def test_inspect_lowers_a_public_tree(capsys):
    from jaxcfr.cli import app
    capsys.readouterr()
    assert app.main(["inspect", "leduc_poker(ranks=13, tree='public')", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["nodes"] == 1965 and out["hands"] == [26, 26] and out["tree"] == "public"


@pytest.mark.slow
def test_solve_takes_a_public_game_string_and_matches_the_history_tree():
    public = jaxcfr.solve("leduc_poker(ranks=4, tree='public')", "cfr+", 20,
                          precision="float64")
    history = jaxcfr.solve("leduc_poker(ranks=4)", "cfr+", 20, precision="float64")
    assert abs(public.final["exploitability"] - history.final["exploitability"]) <= 1e-12
    with pytest.raises(jaxcfr.ArgumentError, match="chance"):
        jaxcfr.solve("kuhn_poker(tree='public')", "cfr", 10, chance="sampled")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_players_reach_and_values_are_the_whole_tables_bit_for_bit(dtype):
    """The blocks path's memory-lean passes (``player_reach``, the value pass from the
    opponent's reach alone, its terminals and factors by level) give the numbers of the
    ``[N, P, H]`` reach table's, byte for byte, on a small hold'em river spot (ranked
    terminals) and Leduc (dense)."""
    from jaxcfr.kernels import public as kernels
    from jaxcfr_games.holdem.spot import HoldemSpot
    spot = HoldemSpot(board="Td9d6h5c2s", ranges=("AA,T9s,KQo", "QQ,87s:0.5,AK"), pot=10,
                      stack=25, bets="50%, a", raises="2x", river_donk=None)
    for game in (spot, PublicLeduc()):
        lowered = jaxcfr.lower_public(game)
        s = lowered.structure

        @jax.jit
        def both(t, strategy):
            edge = kernels.edge_probabilities(t, s, strategy)
            reach = kernels.reach_pass(t, s, edge)
            out = []
            for p in range(2):
                out.append((reach[:, p], kernels.player_reach(t, s, edge, p),
                            kernels.value_pass(t, s, edge, reach, p),
                            kernels.value_pass(t, s, edge, None, p,
                                               opponent=kernels.player_reach(t, s, edge,
                                                                             1 - p))))
            return out
        with precision.scope(dtype):
            t = public_device_tensors(lowered, dtype)
            strategy = jax.numpy.asarray(_random_profile(lowered, 1), dtype)
            assert strategy.dtype == dtype
            for whole, own, values, lean in both(t, strategy):
                assert np.asarray(whole).tobytes() == np.asarray(own).tobytes()
                assert np.asarray(values).tobytes() == np.asarray(lean).tobytes()
                assert np.abs(np.asarray(values)).max() > 0
