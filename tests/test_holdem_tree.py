"""The hold'em bet tree against postflop-solver's, exactly, and the bet-size parser.

Oracle: ``tests/fixtures/holdem/peer_trees.json.gz``, b-inary/postflop-solver's action
trees (commit 9d1509f) of 300 randomized spots (flop, turn and river; pot, stack, sizes per
street and player of every kind, donk sizes, the three thresholds), printed by
``benchmarks/peers/postflop_tree_dump.rs`` and written by
``benchmarks/peers/holdem_tree_fixture.py``: every node's history, each player's chips in and
the actions in order must be the same text, and a spot the peer refuses (a malformed size)
is refused here too. Hand-made cases check the parser's errors (the bad token's position)
and a few trees by hand.
"""

from __future__ import annotations

import gzip
import json
import math
import pathlib

import pytest

from jaxcfr_games.holdem import bets as B
from jaxcfr_games.holdem.cards import HoldemError

FIXTURE = pathlib.Path(__file__).resolve().parent / "fixtures" / "holdem" / "peer_trees.json.gz"


def _spots():
    with gzip.open(FIXTURE, "rt") as f:
        return json.load(f)["spots"]


SPOTS = _spots()


def config_of(line: str) -> B.TreeConfig:
    """The dumper's input line as a TreeConfig (the same strings through our parser)."""
    f = line.split("|")
    assert len(f) == 20
    per = [[(f[3 + 4 * s + 2 * p], f[4 + 4 * s + 2 * p]) for p in range(2)] for s in range(3)]
    bets = tuple(tuple(B.parse_sizes(per[s][p][0], False) for p in range(2)) for s in range(3))
    raises = tuple(tuple(B.parse_sizes(per[s][p][1], True) for p in range(2))
                   for s in range(3))
    donk = [None if x == "-" else B.parse_sizes(x, False) for x in (f[15], f[16])]
    return B.TreeConfig(B.STREETS.index(f[0]), int(f[1]), int(f[2]), bets, raises,
                        (None, donk[0], donk[1]), float(f[17]), float(f[18]), float(f[19]))


def test_the_fixture_covers_many_spots():
    built = [s for s in SPOTS if not s["output"][0].startswith("ERROR")]
    assert len(built) >= 250
    streets = {s["input"].split("|")[0] for s in built}
    assert streets == {"flop", "turn", "river"}
    text = "\n".join("\n".join(s["output"]) for s in built)
    for what in ("Raise(", "AllIn(", "C+D", "T-fold", "T-showdown"):
        assert what in text, what
    assert sum(len(s["output"]) for s in built) > 10000


@pytest.mark.parametrize("chunk", range(6))
def test_trees_match_the_peer_exactly(chunk):
    for i, spot in enumerate(SPOTS[chunk::6]):
        expected = spot["output"]
        if expected[0].startswith("ERROR"):
            with pytest.raises(HoldemError):
                config_of(spot["input"])
            continue
        tree = B.build_tree(config_of(spot["input"]))
        got = tree.dump()
        assert got == expected, (spot["input"], next(
            (g, e) for g, e in zip(got + [None] * len(expected), expected + [None] * len(got))
            if g != e))


def test_the_readme_river_spot_by_hand():
    config = B.tree_config("river", 100, 200, "60%, e, a", "2.5x", river_donk="50%",
                           add_allin=1.5, force_allin=0.15, merging=0.1)
    tree = B.build_tree(config)
    # 60% of 100 is 60; the geometric size over one street is all-in (200); raises 2.5x 60
    # = 150 leave 50 behind, less than 15% of the pot after a call (0.15 * 400 = 60): all-in
    assert tree.counts() == {"decision": 8, "chance": 0, "fold": 6, "showdown": 7}
    assert [str(a) for a in tree.nodes[0].actions] == ["Check", "Bet(60)", "AllIn(200)"]
    facing = tree.nodes[tree.nodes[0].children[1]]
    assert [str(a) for a in facing.actions] == ["Fold", "Call", "AllIn(200)"]


def test_turn_tree_has_chance_and_donk_nodes():
    config = B.tree_config("turn", 100, 1000, "50%", "", river_donk="33%")
    tree = B.build_tree(config)
    kinds = tree.counts()
    assert kinds["chance"] == 3              # check-check, bet-call and check-bet-call
    dump = tree.dump()
    # OOP called a bet on the turn: on the river it may donk 33% of the pot
    assert "C+D [Check, Bet(50), Call] bets=[50, 50] actions=[Check, Bet(66)]" in dump
    assert "C+D [Bet(50), Call] bets=[50, 50] actions=[Check, Bet(100)]" in dump


def test_rounding_is_rusts_half_away_from_zero():
    assert [B._round(x) for x in (0.5, 1.5, 2.5, -0.5, -2.5, 2.4999999999999996)] == \
        [1, 2, 3, -1, -3, 2]
    assert B._round(math.inf) == 2 ** 31 - 1 and B._round(math.nan) == 0


@pytest.mark.parametrize("text,raise_,expected", [
    ("0%", True, B.BetSize(B.POT, 0.0)), ("112.5%", False, B.BetSize(B.POT, 1.125)),
    ("3.5X", True, B.BetSize(B.PREV, 3.5)), ("123C", False, B.BetSize(B.ADD, 123, 0)),
    ("100C100R", True, B.BetSize(B.ADD, 100, 100)), ("e", False,
                                                     B.BetSize(B.GEOMETRIC, 0, math.inf)),
    ("E37.5%", True, B.BetSize(B.GEOMETRIC, 0, 0.375)), ("2e", True,
                                                         B.BetSize(B.GEOMETRIC, 2, math.inf)),
    ("A", False, B.BetSize(B.ALL_IN))])
def test_sizes_parse_as_the_peers_tests_say(text, raise_, expected):
    assert B.parse_sizes(text, raise_) == (expected,)


@pytest.mark.parametrize("text", ["", "0", "1.23", "%", "+42%", "-30%", "x", "0x", "1x", "c",
                                  "12.3c", "10c10", "42cr", "c3r", "0c0r", "123c101r",
                                  "1c2r3", "12c3.4r", "0e", "2.7e", "101e", "3e7", "E%",
                                  "1e2e3", "bet", "1a", "a1", "٣%"])
def test_bad_sizes_are_refused_as_the_peer_refuses_them(text):
    with pytest.raises(HoldemError):
        B.parse_sizes("50%, " + text, True) if text else B.parse_sizes(",", True)


def test_errors_name_the_token_and_its_position():
    with pytest.raises(HoldemError, match=r"bets '60%, 2\.5x, a', at position 5: '2\.5x': a "
                                          "multiple of the previous bet is for raises only") as e:
        B.tree_config("river", 100, 200, "60%, 2.5x, a")
    assert e.value.position == 5
    with pytest.raises(HoldemError, match=r"raises \(turn\), IP '3x,  foo', at position 5"):
        B.tree_config("turn", 100, 200, "50%", {"turn": ("3x", "3x,  foo")})
    with pytest.raises(HoldemError, match="streets are flop, turn, river, got 'preflop'"):
        B.tree_config("flop", 100, 200, {"preflop": "50%"})
    with pytest.raises(HoldemError, match="pot must be a positive whole number of chips"):
        B.tree_config("river", 0, 200)
    with pytest.raises(HoldemError, match="merging must be a non-negative number"):
        B.tree_config("river", 100, 200, merging=-0.1)


def test_a_bet_tree_too_deep_or_too_large_is_refused(monkeypatch):
    # 1-chip raises behind a stack of 10,000: an internal RecursionError before (the build
    # recursed once per action of a line), thousands of actions deep
    with pytest.raises(HoldemError, match=r"a line of the bet tree is more than 200 actions "
                                          r"long \(stack 10000, pot 100; Check, Check, "
                                          r"Check, Check, Check, Bet\(1\), \.\.\.\)"):
        B.build_tree(B.tree_config("flop", 100, 10_000, "1c", "1c"))
    monkeypatch.setattr(B, "LARGEST_BET_TREE", 500)          # a README flop has 895 nodes
    monkeypatch.setattr(B, "BetNode", None)                 # refused before a node is built
    with pytest.raises(HoldemError, match=r"the bet tree has at least 5\d\d nodes, more than "
                                          r"500: the flop's betting has up to 4 actions at a "
                                          r"decision \(bets 60%, a, e; raises 2.5x\)"):
        B.build_tree(B.tree_config("flop", 100, 200, "60%, e, a", "2.5x"))


def _built_size(tree: B.BetTree) -> tuple:
    """What tree_size counts, read off the built tree: (nodes, nodes below 0, 1, 2 cards,
    the longest line, the most bets on a street's line, the most actions at a decision)."""
    dealt, bets, widest = [0, 0, 0], [0, 0, 0], [0, 0, 0]
    start = tree.config.street
    for n in tree.nodes:
        dealt[n.street - start] += 1
        line = 0                                       # bets since the street's last call
        for a in n.history:
            line = 0 if a.kind == B.CALL else line + (a.kind >= B.BET)
        bets[n.street] = max(bets[n.street], line)
        if n.kind == "decision":
            widest[n.street] = max(widest[n.street], len(n.actions))
    return (len(tree), tuple(dealt), max(len(n.history) for n in tree.nodes), tuple(bets),
            tuple(widest))


@pytest.mark.parametrize("chunk", range(2))
def test_the_count_is_the_built_trees_size(chunk):
    # tree_size counts each betting state once; its numbers are the built tree's, on the
    # peer's 300 randomized spots and on deep 1-chip trees
    configs = [config_of(s["input"]) for s in SPOTS[chunk::12]
               if not s["output"][0].startswith("ERROR")]
    configs += [B.tree_config("turn", 100, 20, "1c", "1c"),
                B.tree_config("flop", 100, 12, "1c, 50%", "1c2r, 2x", turn_donk="1c")][chunk:]
    for config in configs:
        size = B.tree_size(config)
        got = (size.nodes, size.dealt, size.longest, size.bets, size.widest)
        assert got == _built_size(B.build_tree(config)), config


def test_sizes_per_street_and_player():
    config = B.tree_config("flop", 100, 500, {"flop": ("33%", "75%"), "river": "e"},
                           {"turn": "3x"})
    assert config.bets[0] == ((B.BetSize(B.POT, 0.33),), (B.BetSize(B.POT, 0.75),))
    assert config.bets[1] == ((), ())
    assert config.raises[1][0] == (B.BetSize(B.PREV, 3.0),) and config.raises[0] == ((), ())
    assert str(config.bets[2][1][0]) == "e"
