"""Re-solving at a public node of a public tree (issue 30, item 3; jaxcfr.subgames.public).

Oracles: the same subgame of the expanded history tree (``jaxcfr.expand_public``) with the
same gadget, built by the history-tree code (``jaxcfr.subgames.solving``): the gadget's
numbers (each opponent hand's mass and alternative against each augmented set's), the
gadget game's value and NashConv, and the re-solved strategy of every (public history,
hand) against its information set, after the same iterations in float64; the composed
profile's exploitability on the full public tree against the history pipeline's in the
history tree; the safety bound (never above the blueprint plus the bound) and unsafe
re-solving's known failure on a near-equilibrium blueprint of public Leduc.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr import GameError
from jaxcfr.game.public_expand import expand
from jaxcfr.lowering.public import lower_public
from jaxcfr.subgames import (Context, PublicSubgame, public_paths_after_chance,
                             public_paths_at_depth, resolve_subgames, subgame)
from jaxcfr.subgames.game import is_gadget_key
from jaxcfr.subgames.public import PublicContext, public_subgame
from jaxcfr_games.public_kuhn import PublicKuhn
from jaxcfr_games.public_leduc import PublicLeduc

LEDUC = "leduc_poker(tree='public')"
EPS = 1e-9


@pytest.fixture(scope="module")
def leduc():
    game = PublicLeduc(ranks=3)
    blueprint = jaxcfr.solve(game, "cfr", 7, precision="float64").to_profile()
    expanded = expand(game)
    history = jaxcfr.lower(expanded)
    return game, blueprint, expanded, history


def _deal(game, path):
    """A deal of two hands that no public outcome of ``path`` blocks (the history path's
    first move)."""
    shown = {x for x in path if isinstance(x, int) and not isinstance(x, bool)}
    cards = [h for h in game.hands(0) if h not in shown]
    return (cards[0], cards[1])


def _history_keyed(low, table, prefix, path):
    """``{(player, (hand, full public history)): row of table}`` of the public subgame's
    live rows below the gadget's moves ``prefix``."""
    live = low.live_rows()
    out = {}
    for row, key in enumerate(low.row_keys()):
        if key is None or not live[row]:
            continue
        player, (hand, hist) = key
        if hist[:len(prefix)] != prefix:
            continue
        n = len(low.infoset_actions[row])
        out[(player, (hand, tuple(path) + hist[len(prefix):]))] = np.asarray(table[row, :n])
    return out


CASES = [("resolve", ["call", "call", 2], None), ("resolve", ["raise", "call", 1], 1),
         ("resolve", ["call"], None), ("resolve", [], None), ("unsafe", ["call", "call", 2],
                                                             None),
         ("unsafe", ["raise"], None)]


@pytest.mark.parametrize("gadget, path, player", CASES)
def test_a_public_subgame_is_the_history_trees(leduc, gadget, path, player):
    game, blueprint, expanded, history = leduc
    sub = subgame(game, blueprint, path, gadget=gadget, player=player)
    assert isinstance(sub, PublicSubgame)
    sub.validate(64)
    low = lower_public(sub)
    hsub = subgame(expanded, blueprint, [_deal(game, path)] + list(path), gadget=gadget,
                   player=player)
    # the gadget's numbers: each augmented set is one opponent hand at the node
    g, hg = sub.gadget, hsub.gadget
    assert g.total == pytest.approx(hg.total, rel=1e-12)
    if gadget == "resolve":
        labels = list(game.hands(g.opponent))
        for c in range(hg.num_sets):
            root = int(hg.roots[np.flatnonzero(hg.component == c)[0]])
            hand = labels.index(history.history(root)[0][g.opponent])
            assert g.mass[hand] == pytest.approx(hg.mass[c], rel=1e-12)
            assert g.alternative[hand] == pytest.approx(hg.alternative[c], rel=1e-11, abs=1e-12)
        assert np.count_nonzero(g.mass) == hg.num_sets
    # the same game: value and NashConv after the same iterations, strategies row by row
    hlow = jaxcfr.lower(hsub)
    r = jaxcfr.solve(low, "cfr+", 40, precision="float64")
    rh = jaxcfr.solve(hlow, "cfr+", 40, precision="float64")
    np.testing.assert_allclose(r.final["values"], rh.final["values"], atol=1e-12)
    assert r.final["nash_conv"] == pytest.approx(rh.final["nash_conv"], abs=1e-12)
    ours = _history_keyed(low, r.average_strategy, g.prefix, path)
    theirs = {key: row for row, key in enumerate(hlow.infoset_keys) if not is_gadget_key(key[1])}
    assert set(ours) == set(theirs)
    average = np.asarray(rh.average_strategy)
    for key, row in theirs.items():
        np.testing.assert_allclose(ours[key], average[row, :len(ours[key])], atol=1e-9)


@pytest.mark.parametrize("gadget", ["resolve", "unsafe"])
def test_composed_profiles_are_the_history_pipelines(leduc, gadget):
    """Every second-round public node of public Leduc re-solved (60 gadget games, stacked),
    composed and evaluated on the public tree: the history pipeline's composed profile's
    exploitability in the expanded history tree, its bound and its NashConvs."""
    game, blueprint, expanded, history = leduc
    paths = public_paths_after_chance(game, 1)
    assert len(paths) == 30                    # 5 betting lines x 6 board cards
    result = resolve_subgames(game, blueprint, paths, gadget=gadget, iterations=60,
                              precision="float64")
    hpaths = [[_deal(game, p)] + list(p) for p in paths]
    hresult = resolve_subgames(expanded, blueprint, hpaths, gadget=gadget, iterations=60,
                               precision="float64", context=Context(expanded, blueprint))
    assert len(result.subgames) == len(hresult.subgames) == (60 if gadget == "resolve" else 30)
    for key in ("exploitability", "nash_conv"):
        assert result.metrics[key] == pytest.approx(hresult.metrics[key], abs=1e-10)
        assert result.blueprint_metrics[key] == pytest.approx(hresult.blueprint_metrics[key],
                                                              abs=1e-12)
    if gadget == "resolve":
        assert result.bound == pytest.approx(hresult.bound, rel=1e-9)
        assert result.metrics["exploitability"] <= (result.blueprint_metrics["exploitability"]
                                                    + result.bound + EPS)
    else:
        assert result.bound is None
    # the composed profiles are one profile (the same keys either way), row by row
    full = result.lowered
    table, counts = hresult.profile.table(full)
    assert counts["found"] > 0
    live = full.live_rows()
    np.testing.assert_allclose(table[live], result.table[live], atol=1e-9)


def test_unsafe_resolving_raises_exploitability_safe_does_not():
    """From a near-equilibrium blueprint unsafe re-solving of every second-round node is
    exploited (the known failure, as on the history tree); the safe gadget stays within
    the blueprint's exploitability plus its bound."""
    game = PublicLeduc(ranks=3)
    blueprint = jaxcfr.solve(game, "cfr+", 400, precision="float64").to_profile()
    paths = public_paths_after_chance(game, 1)
    context = PublicContext(game, blueprint)
    safe = resolve_subgames(game, blueprint, paths, gadget="resolve", iterations=300,
                            precision="float64", context=context)
    unsafe = resolve_subgames(game, blueprint, paths, gadget="unsafe", iterations=300,
                              precision="float64", context=context)
    base = safe.blueprint_metrics["exploitability"]
    assert base < 0.01
    assert safe.metrics["exploitability"] <= base + safe.bound + EPS
    assert safe.bound < 0.01
    assert unsafe.metrics["exploitability"] > 3 * base + 0.01


def test_kuhn_public_subgames():
    """Three-card Kuhn. After "pass" (player 0 acts again below) the gadget game equals the
    history tree's. After "bet" player 0 never acts again: the history tree's closure keeps
    each root its own augmented set (a finer split, one per deal), the public tree's sets
    are player 0's hands (its information at the node): both safe, not the same game."""
    game = PublicKuhn()
    blueprint = jaxcfr.solve(game, "cfr", 5, precision="float64").to_profile()
    sub = subgame(game, blueprint, ["pass"], gadget="resolve")
    hsub = subgame(expand(game), blueprint, [(0, 1), "pass"], gadget="resolve")
    a = jaxcfr.solve(lower_public(sub), "cfr", 25, precision="float64").final
    b = jaxcfr.solve(jaxcfr.lower(hsub), "cfr", 25, precision="float64").final
    assert a["nash_conv"] == pytest.approx(b["nash_conv"], abs=1e-12)
    assert sub.gadget.total == pytest.approx(hsub.gadget.total, rel=1e-12)
    sub = subgame(game, blueprint, ["bet"], gadget="resolve")
    hsub = subgame(expand(game), blueprint, [(0, 1), "bet"], gadget="resolve")
    assert np.count_nonzero(sub.gadget.mass) == 3 and hsub.gadget.num_sets == 6
    assert sub.gadget.total == pytest.approx(hsub.gadget.total, rel=1e-12)


def test_selection_of_public_nodes(leduc):
    game = leduc[0]
    assert public_paths_at_depth(game, 0) == [()]
    assert len(public_paths_at_depth(game, 1)) == 2
    with pytest.raises(ValueError, match="public chance events 1 .the private deal"):
        public_paths_after_chance(game, 3)


@pytest.mark.parametrize("path, rule", [(["call", "bet"], "subgame-path"),
                                        (["call", "call"], "subgame-path"),
                                        (["fold"], "subgame-path")])
def test_bad_public_paths_are_named(leduc, path, rule):
    game, blueprint = leduc[:2]
    with pytest.raises(GameError, match=rule):
        subgame(game, blueprint, path)


def test_what_public_trees_refuse(leduc):
    game, blueprint = leduc[:2]
    for gadget in ("maxmargin", "reach"):
        with pytest.raises(ValueError, match="picks? its augmented information set.*'resolve'"):
            subgame(game, blueprint, ["call", "call", 2], gadget=gadget)
    with pytest.raises(ValueError, match="depth_limit"):
        resolve_subgames(game, blueprint, [["call"]], depth_limit=2)
    with pytest.raises(ValueError, match="overlap"):
        resolve_subgames(game, blueprint, [["call"], ["call", "call", 2]], iterations=2)
    with pytest.raises(ValueError, match="none of the .* information sets"):
        subgame(game, jaxcfr.solve("kuhn_poker", "cfr", 2).profile, ["call"])
    # a blueprint that never raises first: nothing to re-solve for player 0 after it
    table = PublicContext(game, blueprint).table.copy()
    low = lower_public(game)
    base = int(low.tensors.node_base[0])
    table[base:base + 6] = 0.0
    table[base:base + 6, list(low.node_actions[0]).index("call")] = 1.0
    with pytest.raises(GameError, match="subgame-unreached"):
        subgame(game, table, ["raise"], gadget="resolve", player=0)
def test_the_resolve_command_takes_public_strings(leduc, tmp_path, capsys):
    from jaxcfr.cli.app import main
    blueprint = jaxcfr.solve(LEDUC, "cfr", 10, precision="float64").to_profile()
    blueprint.game = LEDUC
    blueprint.save(tmp_path / "bp")
    out = tmp_path / "composed"
    status = main(["resolve", LEDUC, str(tmp_path / "bp.npz"), "--at", "call,call,2",
                   "--at", "raise,call,3", "--iterations", "30", "--precision", "float64",
                   "--out", str(out), "--json", "--no-cache"])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    assert report["public_states"] == 2 and report["subgame_games"] == 4
    assert report["resolved"]["exploitability"] <= (report["blueprint"]["exploitability"]
                                                    + report["bound"] + EPS)
    assert jaxcfr.Profile.load(report["out"]).game == LEDUC
    assert main(["resolve", LEDUC, str(tmp_path / "bp.npz"), "--after-chance", "1",
                 "--gadget", "unsafe", "--iterations", "5", "--json", "--no-cache"]) == 0
    assert json.loads(capsys.readouterr().out)["public_states"] == 30
    assert main(["resolve", LEDUC, str(tmp_path / "bp.npz"), "--at", "call,bet"]) == 2
    assert "[subgame-path]" in capsys.readouterr().err
    assert main(["resolve", LEDUC, str(tmp_path / "bp.npz"), "--at", "call",
                 "--gadget", "maxmargin"]) == 2
    assert "gadget='resolve'" in capsys.readouterr().err


def test_a_config_trains_a_public_tree_then_resolves(tmp_path):
    from jaxcfr.runs import config_from_dict, train
    raw = {"name": "public_resolve", "game": {"name": "kuhn_poker(tree='public')"},
           "solver": {"algorithm": "cfr", "iterations": 10},
           "run": {"eval_every": 10, "precision": "float64", "plot": False, "quiet": True},
           "resolve": {"gadget": "resolve", "iterations": 50, "at": ["pass", "bet"]}}
    result = train(config_from_dict(raw), out_dir=str(tmp_path / "run"), log=lambda _: None)
    report = json.loads((result.run_dir / "resolve.json").read_text())
    assert report["public_states"] == 2 and len(report["subgames"]) == 4
    assert all(s["tree"] == "public" for s in report["subgames"])
    assert report["metrics"]["exploitability"] <= (report["blueprint_metrics"]["exploitability"]
                                                   + report["bound"] + EPS)
    assert jaxcfr.Profile.load(result.run_dir / "resolved.npz").game == \
        "kuhn_poker(tree='public')"


@pytest.mark.slow
def test_a_holdem_spot_resolves_with_ranked_terminals():
    """A hold'em river spot (175 + 252 hands, ranked showdowns): the resolve gadget game
    (its alternative a dense payoff table beside ranked folds and showdowns) has the same
    values lowered ranked as dense, and re-solving the nodes after the first action stays
    within the blueprint's exploitability plus the bound, in float64."""
    from jaxcfr.solvers.public import evaluate_public
    name = "holdem_spot"
    blueprint = jaxcfr.solve(name, "cfr+", 10, precision="float64").to_profile()
    context = PublicContext(name, blueprint)
    sub = public_subgame(name, blueprint, ["Check"], context=context)
    ranked, dense = lower_public(sub, terminals="ranked"), lower_public(sub, terminals="dense")
    assert ranked.ranked and not dense.ranked
    uniform = np.asarray(ranked.tensors.legal_mask, np.float64)
    a = evaluate_public(ranked, uniform)
    b = evaluate_public(dense, uniform)
    np.testing.assert_allclose(a["values"], b["values"], atol=1e-9)
    np.testing.assert_allclose(a["best_response_values"], b["best_response_values"], atol=1e-9)
    paths = [[x] for x in context.full.node_actions[0]]
    result = resolve_subgames(name, blueprint, paths, iterations=30, precision="float64",
                              context=context)
    assert len(result.subgames) == 2 * len(paths)
    assert result.metrics["exploitability"] <= (result.blueprint_metrics["exploitability"]
                                                + result.bound + EPS)


def test_three_player_unsafe_subgames_are_the_history_trees():
    """Three-player Kuhn: the unsafe subgame after "pass" equals the expanded history
    tree's (NashConv and values after the same iterations); safe gadgets are refused."""
    game = PublicKuhn(players=3)
    blueprint = jaxcfr.solve(game, "cfr", 10, precision="float64").to_profile()
    sub = subgame(game, blueprint, ["pass"], gadget="unsafe")
    hsub = subgame(expand(game), blueprint, [(0, 1, 2), "pass"], gadget="unsafe")
    assert sub.gadget.total == pytest.approx(hsub.gadget.total, rel=1e-12)
    a = jaxcfr.solve(lower_public(sub), "cfr", 20, precision="float64").final
    b = jaxcfr.solve(jaxcfr.lower(hsub), "cfr", 20, precision="float64").final
    np.testing.assert_allclose(a["values"], b["values"], atol=1e-12)
    assert a["nash_conv"] == pytest.approx(b["nash_conv"], abs=1e-12)
    with pytest.raises(ValueError, match="two-player zero-sum.*3 players.*unsafe"):
        subgame(game, blueprint, ["pass"], gadget="resolve")
