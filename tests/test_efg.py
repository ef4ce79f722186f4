"""Tests of jaxcfr.efg: the Gambit .efg reader and writer."""

from __future__ import annotations

import random
import re
import time
from fractions import Fraction
from pathlib import Path

import pytest

import jaxcfr

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C
from jaxcfr import efg
from jaxcfr.efg import EfgError, EfgGame
from jaxcfr.game import CHANCE, TERMINAL, Game, GameError

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "efg"
# The fixtures this file owns (see fixtures/efg/README.md); other tests may add more files.
FIXTURE_FILES = [
    "authored_kuhn_poker.efg", "2smp.efg", "cent2.efg",
    "2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg",
    "stripped_down_poker.efg", "myerson.efg", "selten1975_fig1_horse.efg",
    "gilboa1997_fig1_absent_minded_driver.efg",
]
# Without perfect recall: Myerson's game and the absent-minded driver.
NO_PERFECT_RECALL = {"myerson.efg", "gilboa1997_fig1_absent_minded_driver.efg"}


def _shared_dir() -> Path | None:
    """``shared/efg`` beside the checkout (or under ``$JAXCFR_SHARED``), if it holds files."""
    c = C.SHARED_EFG
    return c if c.is_dir() and any(c.glob("*.efg")) else None


SHARED = _shared_dir()
SHARED_FILES = sorted(p.name for p in SHARED.glob("*.efg")) if SHARED else []
needs_shared = pytest.mark.skipif(SHARED is None, reason="shared/efg test data not found")


def _load(name: str) -> EfgGame:
    return efg.load(FIXTURES / name)


def _walk(game: Game):
    """Pre-order (state, history) over the whole tree, iteratively."""
    stack = [(game.clone(), ())]
    while stack:
        state, hist = stack.pop()
        yield state, hist
        if state.is_terminal():
            continue
        if state.is_chance():
            actions = [a for a, _ in state.chance_outcomes()]
        else:
            actions = state.legal_actions()
        for a in reversed(actions):
            child = state.clone()
            child.step(a)
            stack.append((child, hist + (a,)))


def _leaves(game: EfgGame) -> dict[tuple, tuple]:
    return {h: s.exact_returns() for s, h in _walk(game) if s.is_terminal()}


def _structure(game: Game, exact: bool) -> list[tuple]:
    """The tree in pre-order with information sets renumbered by first appearance."""
    numbers: dict = {}
    out = []
    for state, _ in _walk(game):
        if state.is_terminal():
            r = state.exact_returns() if exact else tuple(state.terminal_returns())
            out.append(("t", tuple(r)))
        elif state.is_chance():
            if exact:
                pairs = tuple((str(a), p) for a, p in state.exact_chance_outcomes())
            else:
                pairs = tuple((str(a), p) for a, p in state.chance_outcomes())
            out.append(("c", pairs))
        else:
            pl = state.player_to_act()
            key = (pl, state.infoset_key(pl))
            num = numbers.setdefault(key, len(numbers))
            out.append(("p", pl, num, tuple(str(a) for a in state.legal_actions())))
    return out


def _unlabelled(structure: list[tuple]) -> list[tuple]:
    """:func:`_structure` without the action labels."""
    out = []
    for x in structure:
        if x[0] == "p":
            out.append(x[:3] + (len(x[3]),))
        elif x[0] == "c":
            out.append(("c", tuple(p for _, p in x[1])))
        else:
            out.append(x)
    return out


# ---------------------------------------------------------------------------
# Loading real files
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_fixture_loads_and_validates(name):
    game = _load(name)
    assert isinstance(game, Game) and isinstance(game, EfgGame)
    assert game.nash_value() is None
    jaxcfr.validate(game)


def test_fixture_perfect_recall_as_documented():
    lowering = pytest.importorskip("jaxcfr.lowering.lower")
    for name in FIXTURE_FILES:
        if name in NO_PERFECT_RECALL:
            with pytest.raises(GameError) as info:
                lowering.lower(_load(name))
            assert info.value.rule in ("perfect-recall", "absent-minded"), name
        else:
            lowering.lower(_load(name))


def _same_tree(a, b) -> bool:
    fields = ("title", "comment", "player_names", "kind", "player", "infoset", "parent",
              "label", "outcome", "child_start", "children", "returns", "infosets", "outcomes")
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def test_fast_path_and_token_parser_agree():
    paths = [FIXTURES / n for n in FIXTURE_FILES]
    if SHARED is not None:
        paths += [SHARED / n for n in SHARED_FILES]
    for path in paths:
        text = path.read_text()
        fast = efg._parse_fast(text)
        assert fast is not None, path.name      # ordinary layout takes the fast path
        assert _same_tree(fast, efg._parse_tokens(text, str(path))), path.name


def test_unusual_layout_falls_back_to_the_token_parser():
    tight = ('EFG 2 R"t"{"A""B"}"c"c""1"d"{"x"1/2"y"1/2}0 p""1 1"i"{"a""b"}0 '
             't""1"o"{1,-1,}t""0 p""1 1 0 t""2"q"{2 -2}t""1')
    loose = ('EFG 2 R "t" { "A" "B" } "c"\nc "" 1 "d" { "x" 1/2 "y" 1/2 } 0\n'
             'p "" 1 1 "i" { "a" "b" } 0\nt "" 1 "o" { 1, -1 }\nt "" 0\n'
             'p "" 1 1 0\nt "" 2 "q" { 2, -2 }\nt "" 1\n')
    assert efg._parse_fast(tight) is None
    assert efg._parse_fast(loose) is not None
    assert _same_tree(efg.loads(tight).tree, efg.loads(loose).tree)


def test_labels_with_braces_commas_and_quotes():
    text = ('EFG 2 R "t" { "A" "B" }\n""\n'
            'p "{n}" 1 1 "i,{j}" { "a}" "{b, \\"c\\"" } 0\n'
            't "" 1 "o{" { 1, -1 }\nt "" 0\n')
    game = efg.loads(text)
    assert game.legal_actions() == ["a}", '{b, "c"']
    assert game.tree.infosets[0].label == "i,{j}"
    assert game.tree.label[0] == "{n}"
    assert game.tree.outcomes[1].label == "o{"
    assert _same_tree(efg._parse_tokens(text, "x"), game.tree)


@needs_shared
@pytest.mark.parametrize("name", SHARED_FILES)
def test_every_shared_file_loads(name):
    game = efg.load(SHARED / name)
    assert game.tree.num_nodes > 0
    jaxcfr.validate(game)
    # Round trip: same tree, and the writer is stable.
    text = efg.dumps(game, gambit_labels=False)
    again = efg.loads(text)
    assert _structure(again, True) == _structure(game, True)
    assert efg.dumps(again, gambit_labels=False) == text
    # With Gambit-safe labels only labels may change.
    safe = efg.loads(efg.dumps(game))
    assert _unlabelled(_structure(safe, True)) == _unlabelled(_structure(game, True))


def _readme_table(path: Path) -> dict[str, dict[str, str]]:
    rows = {}
    header = None
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set(cells[0]) <= set("-: "):
            rows[cells[0]] = dict(zip(header, cells))
    return rows


@needs_shared
def test_shared_files_match_readme_properties():
    table = _readme_table(SHARED / "README.md")
    assert table, "README table not found"
    for name, row in table.items():
        game = efg.load(SHARED / name)
        assert game.num_players == int(row["pl"]), name
        has_chance = any(k == 1 for k in game.tree.kind)
        assert has_chance == (row["chance"] == "Y"), name


@needs_shared
def test_lowering_detects_imperfect_recall_as_the_readme_says():
    lowering = pytest.importorskip("jaxcfr.lowering.lower")
    table = _readme_table(SHARED / "README.md")
    for name, row in table.items():
        game = efg.load(SHARED / name)
        if row["PR"] == "Y":
            lowering.lower(game)
        else:
            with pytest.raises(GameError) as info:
                lowering.lower(game)
            assert info.value.rule in ("perfect-recall", "absent-minded"), name


def test_load_game_dispatches_efg_paths():
    game = jaxcfr.load_game(str(FIXTURES / "authored_kuhn_poker.efg"))
    assert isinstance(game, EfgGame)
    assert game.title.startswith("Kuhn poker")
    game = jaxcfr.load_game(FIXTURES / "stripped_down_poker.efg")
    assert game.player_names == ("Alice", "Bob")


def test_missing_file_is_a_game_error():
    with pytest.raises(GameError) as info:
        efg.load(FIXTURES / "no_such_file.efg")
    assert info.value.rule == "efg-file"


# ---------------------------------------------------------------------------
# Hand-checked contents
# ---------------------------------------------------------------------------

def _infoset_counts(game: EfgGame) -> list[int]:
    return [len(game.tree.infosets_of(p)) for p in range(game.num_players)]


@pytest.mark.parametrize("name, nodes, players, infosets, chance_infosets, terminals", [
    ("authored_kuhn_poker.efg", 55, 2, [6, 6], 1, 30),
    ("2smp.efg", 31, 2, [5, 5], 0, 16),
    ("cent2.efg", 31, 2, [4, 4], 3, 12),
    ("stripped_down_poker.efg", 11, 2, [2, 1], 1, 6),
    ("myerson.efg", 11, 2, [2, 1], 0, 6),
    ("selten1975_fig1_horse.efg", 9, 3, [1, 1, 1], 0, 5),
    ("gilboa1997_fig1_absent_minded_driver.efg", 5, 1, [1], 0, 3),
    ("2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg", 21, 2, [2, 3], 1, 12),
])
def test_counts(name, nodes, players, infosets, chance_infosets, terminals):
    game = _load(name)
    tree = game.tree
    assert tree.num_nodes == nodes == len(game.nodes())
    assert game.num_players == players
    assert _infoset_counts(game) == infosets
    assert len(tree.infosets_of(CHANCE)) == chance_infosets
    assert len(tree.returns) == terminals == sum(1 for s, _ in _walk(game) if s.is_terminal())


def test_kuhn_poker_header_and_root():
    game = _load("authored_kuhn_poker.efg")
    assert game.player_names == ("Player 1", "Player 2")
    assert game.comment.startswith("Standard 3-card Kuhn poker")
    assert game.is_chance() and game.player_to_act() == CHANCE
    outcomes = game.chance_outcomes()
    assert [a for a, _ in outcomes] == ["JQ", "JK", "QJ", "QK", "KJ", "KQ"]
    assert all(p == 1 / 6 for _, p in outcomes)
    assert game.exact_chance_outcomes()[0] == ("JQ", Fraction(1, 6))
    assert game.legal_actions() == []
    game.step("KQ")
    assert game.player_to_act() == 0 and game.legal_actions() == ["Check", "Bet"]
    game.step("Bet")
    assert game.player_to_act() == 1 and game.legal_actions() == ["Fold", "Call"]
    game.step("Call")
    assert game.is_terminal() and game.player_to_act() == TERMINAL
    assert game.terminal_returns() == (2.0, -2.0)
    assert game.exact_returns() == (Fraction(2), Fraction(-2))
    assert game.history == ("KQ", "Bet", "Call")
    with pytest.raises(GameError):
        game.step("Call")


def test_kuhn_infoset_keys_are_the_files_information_sets():
    game = _load("authored_kuhn_poker.efg")
    # "p "" 1 1 0" nodes reuse information set 1 of player 1: P1 holding J, two deals.
    a, b = game.clone(), game.clone()
    a.step("JQ")
    b.step("JK")
    assert a.infoset_key(0) == b.infoset_key(0) == ("p", 0, 1)
    # Player 2 does not move there: the file says nothing, so the key is per node.
    assert a.infoset_key(1) != b.infoset_key(1)
    a.step("Check")
    b.step("Check")
    assert a.infoset_key(1) == ("p", 1, 1) and b.infoset_key(1) == ("p", 1, 3)


def test_stepping_is_cheap_and_clones_are_independent():
    game = _load("stripped_down_poker.efg")
    child = game.clone()
    child.step("King")
    assert game.is_chance() and game.history == ()
    assert child.legal_actions() == ["Bet", "Fold"]
    with pytest.raises(GameError) as info:
        child.step("Raise")
    assert info.value.rule == "illegal-action"
    with pytest.raises(GameError):
        child.step(["unhashable"])


def test_nonterminal_outcomes_accumulate_2smp():
    leaves = _leaves(_load("2smp.efg"))
    F = Fraction
    # Stage 1 (H,H) carries "Match" (1,-1); stage 2 adds Match or Mismatch.
    assert leaves[("H", "H", "H", "H")] == (F(2), F(-2))
    assert leaves[("H", "H", "H", "T")] == (F(0), F(0))
    # Stage 1 (H,T) carries "Mismatch" (-1,1).
    assert leaves[("H", "T", "H", "H")] == (F(0), F(0))
    assert leaves[("H", "T", "T", "H")] == (F(-2), F(2))
    assert leaves[("T", "T", "T", "T")] == (F(2), F(-2))
    assert len(leaves) == 16
    assert all(sum(r) == 0 for r in leaves.values())


def test_nonterminal_outcomes_and_null_leaves():
    leaves = _leaves(_load("2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg"))
    F = Fraction
    assert leaves[("H", "A", "X")] == (F(1), F(-1))      # outcome on the P2 node, leaf "t 0"
    assert leaves[("H", "A", "Y")] == (F(-1), F(1))      # (1,-1) + (-2,2)
    assert leaves[("L", "A", "X")] == (F(0), F(0))       # no outcome anywhere on the path
    assert leaves[("L", "C", "X")] == (F(-1), F(1))
    assert leaves[("L", "C", "Y")] == (F(1), F(-1))      # (-1,1) + (2,-2)


@needs_shared
def test_nonterminal_variant_has_the_same_leaves_as_the_plain_game():
    plain = _leaves(efg.load(SHARED / "2_player_chance.efg"))
    fancy = _leaves(efg.load(
        SHARED / "2_player_chance_nonterm_outcomes_and_missing_term_outcomes.efg"))
    assert plain == fancy


def test_cent2_decimals_and_rationals_are_exact():
    game = _load("cent2.efg")
    assert game.title == "Centipede game. Two inning, with probability of altruists.  "
    assert game.exact_chance_outcomes() == [("1=rational", Fraction(19, 20)),
                                           ("1=altruist", Fraction(1, 20))]
    assert game.tree.outcomes[1] == ("Outcome 1", (Fraction(4, 5), Fraction(1, 5)))
    assert game.tree.outcomes[3].payoffs == (Fraction(16, 5), Fraction(4, 5))
    state = game.clone()
    for a in ("1=rational", "2=rational", "p", "t"):
        state.step(a)
    assert state.exact_returns() == (Fraction(2, 5), Fraction(8, 5))
    assert state.terminal_returns() == (0.4, 1.6)


def test_selten_escaped_quotes_in_description():
    game = _load("selten1975_fig1_horse.efg")
    assert 'to as "Selten\'s horse" owing' in game.comment
    assert 'is "unreasonable", but' in game.comment
    assert "\\" not in game.comment
    assert game.comment.count("\n") == 6
    assert game.player_names == ("Player 1", "Player 2", "Player 3")


def test_absent_minded_driver_infoset_spans_depths():
    game = _load("gilboa1997_fig1_absent_minded_driver.efg")
    nodes = [n for n in game.nodes() if n.kind == 0]
    assert [n.infoset for n in nodes] == [0, 0]
    root = game.clone()
    deeper = game.clone()
    deeper.step("B")
    assert root.infoset_key(0) == deeper.infoset_key(0)
    deeper.step("E")
    assert deeper.terminal_returns() == (4.0,)


def test_node_view():
    game = _load("stripped_down_poker.efg")
    root = game.tree.node(0)
    assert root.kind == 1 and root.parent == -1 and root.label == ""
    assert len(root.children) == 2
    leaf = game.tree.node(3)
    assert leaf.kind == 2 and leaf.returns == (Fraction(2), Fraction(-2)) and leaf.outcome == 1
    assert game.tree.infosets[1].label == "Alice has King"


def test_duplicate_and_empty_labels_are_made_unique():
    text = ('EFG 2 R "dups" { "" "" }\n""\n'
            'c "" 1 "" { "" 1/2 "" 1/2 } 0\n'
            'p "" 1 1 "" { "x" "x" "x_1" } 0\n'
            't "" 1 "a" { 1, -1 }\nt "" 1\nt "" 1\n'
            'p "" 1 1 "" { "x" "x" "x_1" } 0\n'
            't "" 1\nt "" 1\nt "" 1\n')
    game = efg.loads(text)
    assert game.player_names == ("_1", "_2")
    assert [a for a, _ in game.chance_outcomes()] == ["_1", "_2"]
    game.step("_2")
    assert game.legal_actions() == ["x_2", "x_3", "x_1"]
    assert game.tree.infosets[1].raw_actions == ("x", "x", "x_1")
    jaxcfr.validate(efg.loads(text))


def test_repeated_infoset_may_repeat_or_omit_its_actions():
    text = ('EFG 2 R "g" { "A" "B" }\n'
            'p "" 1 1 "i" { "a" "b" } 0\n'
            'p "" 2 7 "j" { "x" "y" } 0\nt "" 1 "o" { 1 2 }\nt "" 2 "o2" { 3 4 }\n'
            'p "" 2 7 0\nt "" 1 "o" { 1, 2 }\nt "" 0\n')
    game = efg.loads(text)
    assert _infoset_counts(game) == [1, 1]
    a, b = game.clone(), game.clone()
    a.step("a")
    b.step("b")
    assert a.infoset_key(1) == b.infoset_key(1) == ("p", 1, 7)
    assert game.comment == ""


def test_decimal_header_and_number_forms():
    text = ('EFG 2 D "d" { "A" "B" }\n'
            'c "" 1 "" { "a" .25 "b" 0.25 "c" 5e-1 } 0\n'
            't "" 1 "" { 1e3, -1.5E+2 }\nt "" 2 "" { +7/3 -2 }\nt "" 3 "" { 1., .5 }\n')
    game = efg.loads(text)
    assert [p for _, p in game.exact_chance_outcomes()] == [Fraction(1, 4)] * 2 + [Fraction(1, 2)]
    assert _leaves(game) == {("a",): (1000, -150), ("b",): (Fraction(7, 3), -2),
                             ("c",): (1, Fraction(1, 2))}


def test_large_payoffs_are_exact():
    text = ('EFG 2 R "big" { "A" "B" }\n""\n'
            't "" 1 "" { 10000000000000000001, -10000000000000000001 }\n')
    game = efg.loads(text)
    assert game.exact_returns() == (10 ** 19 + 1, -(10 ** 19 + 1))
    assert game.terminal_returns() == (1e19, -1e19)


def test_deep_tree_parses_and_dumps_without_recursion():
    depth = 5_000
    lines = ['EFG 2 R "chain" { "solo" }', '""']
    for k in range(depth):
        if k == 0:
            lines.append(f'p "" 1 {k + 1} "" {{ "stop" "go" }} 1 "step" {{ 1 }}')
        else:
            lines.append(f'p "" 1 {k + 1} "" {{ "stop" "go" }} 1')
        lines.append('t "" 0')
    lines.append('t "" 2 "end" { 1/2 }')
    game = efg.loads("\n".join(lines))
    assert game.tree.num_nodes == 2 * depth + 1
    deepest = game.tree.num_nodes - 1
    assert game.tree.returns[deepest] == (depth + Fraction(1, 2),)
    state = EfgGame(game.tree, deepest)
    assert len(state.history) == depth and set(state.history) == {"go"}
    text = efg.dumps(game)
    again = efg.loads(text)
    assert again.tree.returns[deepest] == (depth + Fraction(1, 2),)
    assert again.tree.kind == game.tree.kind


# ---------------------------------------------------------------------------
# Malformed input
# ---------------------------------------------------------------------------

H = 'EFG 2 R "g" { "A" "B" }\n""\n'

BROKEN = [
    # name, text, rule, line, column, words that must appear in the message
    ("missing_open_brace", H + 'p "" 1 1 "i" "H" "T" } 0\n', "efg-syntax", 3, 14, ["'{'"]),
    ("missing_close_brace", H + 'p "" 1 1 "i" { "H" "T" 0\nt "" 1 "o" { 1, -1 }\nt "" 1\n',
     "efg-syntax", 3, 24, ["'}'", "'0'"]),
    ("bad_payoff", H + 't "" 1 "o" { 1x, -1 }\n', "efg-number", 3, 14, ["'1x'"]),
    ("bad_probability", H + 'c "" 1 "" { "a" 0.5.5 "b" 1/2 } 0\n', "efg-number", 3, 17,
     ["probability"]),
    ("zero_denominator", H + 't "" 1 "o" { 1/0, 0 }\n', "efg-number", 3, 14, ["denominator"]),
    ("unknown_node_type", H + 'x "" 0\n', "efg-syntax", 3, 1, ["'c', 'p' or 't'", "'x'"]),
    ("chance_sum_0.9", H + 'c "" 1 "" { "a" 1/2 "b" 0.4 } 0\nt "" 0\nt "" 0\n',
     "efg-chance-sum", 3, 11, ["9/10"]),
    ("negative_probability", H + 'c "" 1 "" { "a" -1/2 "b" 3/2 } 0\nt "" 0\nt "" 0\n',
     "efg-chance-prob", 3, 17, ["negative"]),
    ("outcome_undefined", H + 'p "" 1 1 "" { "a" "b" } 0\nt "" 1 "o" { 1, -1 }\nt "" 2\n',
     "efg-outcome-undefined", 5, 6, ["outcome 2"]),
    ("outcome_redefined", H + 'p "" 1 1 "" { "a" "b" } 0\nt "" 1 "o" { 1, -1 }\n'
     't "" 1 "o" { 2, -2 }\n', "efg-outcome-mismatch", 5, 6, ["outcome 1"]),
    ("null_outcome_with_payoffs", H + 't "" 0 "o" { 1, 1 }\n', "efg-outcome", 3, 8, ["0"]),
    ("too_few_payoffs", H + 't "" 1 "o" { 1 }\n', "efg-syntax", 3, 16, ["payoff", "'}'"]),
    ("too_many_payoffs", H + 't "" 1 "o" { 1, 2, 3 }\n', "efg-syntax", 3, 20, ["'}'", "'3'"]),
    ("player_out_of_range", H + 'p "" 3 1 "" { "a" } 0\nt "" 0\n', "efg-player", 3, 6,
     ["player number 3", "2 players"]),
    ("player_zero", H + 'p "" 0 1 "" { "a" } 0\nt "" 0\n', "efg-player", 3, 6, ["0"]),
    ("truncated", H + 'p "" 1 1 "" { "a" "b" } 0\nt "" 1 "o" { 1, -1 }\n', "efg-truncated",
     5, 1, ["end of file"]),
    ("truncated_mid_node", H + 'p "" 1 1 "" { "a" "b"', "efg-truncated", 3, 22,
     ["end of file"]),
    ("empty_file", "", "efg-truncated", 1, 1, ["EFG"]),
    ("trailing_tokens", H + 't "" 0\nt "" 0\n', "efg-trailing", 4, 1, ["end of file"]),
    ("infoset_different_actions", H + 'p "" 1 1 "" { "a" "b" } 0\np "" 2 1 "" { "x" } 0\n'
     't "" 0\np "" 2 1 "" { "y" } 0\nt "" 0\n', "efg-infoset-mismatch", 6, 13,
     ["['x']", "['y']"]),
    ("chance_infoset_different_probs", H + 'p "" 1 1 "" { "a" "b" } 0\n'
     'c "" 1 "" { "h" 1/2 "t" 1/2 } 0\nt "" 0\nt "" 0\n'
     'c "" 1 "" { "h" 1/3 "t" 2/3 } 0\nt "" 0\nt "" 0\n', "efg-infoset-mismatch", 7, 11,
     ["probabilities"]),
    ("infoset_renamed", H + 'p "" 1 1 "" { "a" "b" } 0\np "" 2 1 "i" { "x" } 0\nt "" 0\n'
     'p "" 2 1 "j" { "x" } 0\nt "" 0\n', "efg-infoset-mismatch", 6, 10, ["'i'", "'j'"]),
    ("outcome_renamed", H + 'p "" 1 1 "" { "a" "b" } 0\nt "" 1 "o" { 1, -1 }\n'
     't "" 1 "p" { 1, -1 }\n', "efg-outcome-mismatch", 5, 6, ["'o'", "'p'"]),
    ("infoset_used_before_defined", H + 'p "" 1 1 0\n', "efg-infoset-undefined", 3, 8,
     ["before it is defined"]),
    ("empty_action_list", H + 'p "" 1 1 "" { } 0\n', "efg-syntax", 3, 15, ["action label"]),
    ("comma_between_probabilities", H + 'c "" 1 "" { "a" 1/2, "b" 1/2 } 0\n', "efg-syntax",
     3, 20, ["','"]),
    ("missing_node_label", H + 'p 1 1 "" { "a" } 0\nt "" 0\n', "efg-syntax", 3, 3,
     ["node label"]),
    ("unterminated_string", H + 't "" 1 "o { 1, -1 }\n', "efg-string", 3, 8, ["unterminated"]),
    ("bad_version", 'EFG 3 R "g" { "A" }\nt "" 0\n', "efg-syntax", 1, 5, ["'3'"]),
    ("not_efg", 'NFG 1 R "g" { "A" }\n', "efg-syntax", 1, 1, ["'NFG'"]),
    ("no_players", 'EFG 2 R "g" { }\n""\nt "" 0\n', "efg-players", 1, 15, ["player"]),
    ("line_count_through_multiline_string",
     'EFG 2 R "g" { "A" "B" }\n"multi\nline \\" comment"\n\tx "" 0\n', "efg-syntax", 4, 2,
     ["'x'"]),
]


@pytest.mark.parametrize("name, text, rule, line, column, words", BROKEN,
                         ids=[b[0] for b in BROKEN])
def test_malformed_input(name, text, rule, line, column, words):
    with pytest.raises(EfgError) as info:
        efg.loads(text, source="snippet.efg")
    err = info.value
    assert isinstance(err, GameError)
    assert (err.rule, err.line, err.column) == (rule, line, column), str(err)
    assert f"snippet.efg:{line}:{column}: " in str(err)
    for w in words:
        assert w in str(err), (w, str(err))


def test_error_names_the_file(tmp_path):
    path = tmp_path / "broken.efg"
    path.write_text(H + "t \"\" 7\n")
    with pytest.raises(EfgError) as info:
        efg.load(path)
    assert str(info.value).startswith(f"[efg-outcome-undefined] {path}:3:6: ")
    with pytest.raises(GameError):
        jaxcfr.load_game(str(path))


def test_mutated_files_raise_only_efg_errors():
    """Random damage to a real file: either it still parses or it raises EfgError."""
    text = (FIXTURES / "authored_kuhn_poker.efg").read_text()
    tokens = re.findall(r'"[^"]*"|\S+', text)
    rng = random.Random(1)
    pool = ["{", "}", ",", "0", "1", "-1", "1/2", "p", "c", "t", '"x"', "1/0", "3", "q", '"']
    for trial in range(400):
        toks = list(tokens)
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(toks))
            op = rng.random()
            if op < 0.4:
                del toks[k]
            elif op < 0.7:
                toks.insert(k, rng.choice(pool))
            else:
                toks[k] = rng.choice(pool)
        mutated = " ".join(toks)
        try:
            efg.loads(mutated)
        except EfgError as e:
            assert re.match(r"\[efg-[a-z-]+\] <string>:\d+:\d+: ", str(e)), str(e)
    for cut in range(0, len(text) - 1, 7):
        with pytest.raises(EfgError):
            efg.loads(text[:cut])


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", FIXTURE_FILES)
def test_round_trip_fixtures(name, tmp_path):
    game = _load(name)
    path = tmp_path / name
    efg.dump(game, path)
    again = efg.load(path)
    assert _structure(again, True) == _structure(game, True)
    assert again.title == game.title and again.comment == game.comment
    assert again.player_names == game.player_names
    assert _infoset_counts(again) == _infoset_counts(game)
    assert _leaves(again) == _leaves(game)
    assert [s.label for s in again.tree.infosets] == [s.label for s in game.tree.infosets]
    assert efg.dumps(again) == efg.dumps(game)


def test_dump_writes_actions_once_and_accumulates_outcomes():
    text = efg.dumps(_load("2smp.efg"))
    lines = text.splitlines()
    assert lines[0] == ('EFG 2 R "Two-stage matching pennies game" '
                        '{ "Player 1" "Player 2" }')
    assert lines[3] == 'p "" 1 1 "" { "H" "T" } 0'
    # Player 2's first information set: defined once, then referenced by number.
    assert lines.count('p "" 2 1 "" { "H" "T" } 0') == 1
    assert 'p "" 2 1 0' in lines
    # Payoff vectors (2,-2), (0,0), (-2,2): three outcomes, all on leaves.
    assert sorted(line for line in lines if line.startswith("t") and "{" in line) == [
        't "" 1 "" { 2, -2 }', 't "" 2 "" { 0, 0 }', 't "" 3 "" { -2, 2 }']


class TinyGame(Game):
    """Chance picks a biased coin; player 0 guesses; player 1 (who saw nothing) doubles.

    Uses float probabilities, int and odd string actions, and float payoffs.
    """

    num_players = 2
    title = 'Tiny "quoted" game'
    player_names = ("Guesser", "Doubler")

    def __init__(self):
        self.coin = None
        self.moves = ()

    def is_terminal(self):
        return self.coin is not None and len(self.moves) == 2

    def is_chance(self):
        return self.coin is None

    def player_to_act(self):
        if self.is_chance():
            return CHANCE
        return TERMINAL if self.is_terminal() else len(self.moves)

    def chance_outcomes(self):
        return [("heads", 0.3), ("tails", 0.7)] if self.coin is None else None

    def legal_actions(self):
        if self.is_chance() or self.is_terminal():
            return []
        return [1, 2] if not self.moves else ['say "x"', "a,b {c}"]

    def step(self, action):
        if self.is_terminal():
            raise GameError("game over", rule="terminal-step")
        if self.coin is None:
            self.coin = action
        else:
            self.moves += (action,)

    def clone(self):
        c = type(self)()
        c.coin, c.moves = self.coin, self.moves
        return c

    def terminal_returns(self):
        win = (self.moves[0] == 1) == (self.coin == "heads")
        v = (0.1 if win else -2.5) * (2 if self.moves[1] == "a,b {c}" else 1)
        return (v, -v)

    def infoset_key(self, player):
        if player == 0:
            return ("guess",)
        return ("double", self.moves[:1])


def test_round_trip_hand_written_game():
    game = TinyGame()
    text = efg.dumps(game)
    assert text.startswith('EFG 2 R "Tiny \\"quoted\\" game" { "Guesser" "Doubler" }\n')
    assert '"heads" 3/10 "tails" 7/10' in text
    again = efg.loads(text)
    assert _structure(again, False) == _structure(game, False)
    assert again.exact_chance_outcomes() == [("heads", Fraction(3, 10)),
                                             ("tails", Fraction(7, 10))]
    state = again.clone()
    for a in ("tails", "2", 'say "x"'):
        state.step(a)
    assert state.exact_returns() == (Fraction(1, 10), Fraction(-1, 10))
    jaxcfr.validate(again)


def test_float_probabilities_that_miss_one_are_fixed_up():
    class Thirds(TinyGame):
        def chance_outcomes(self):
            return [("a", 0.3333333333), ("b", 0.3333333333), ("c", 0.3333333334)] \
                if self.coin is None else None

        def legal_actions(self):
            return [] if self.is_chance() or self.is_terminal() else ["x"]

        def terminal_returns(self):
            return (1, -1)

    again = efg.loads(efg.dumps(Thirds()))
    probs = [p for _, p in again.exact_chance_outcomes()]
    assert sum(probs) == 1
    assert [float(p) for p in probs] == pytest.approx([0.3333333333, 0.3333333333, 0.3333333334])


def test_gambit_safe_labels():
    text = ('EFG 2 R "t" { "Pl\u00e9 1" "B" }\n""\n'
            'p "same" 1 1 "dup" { "call " "a  b" "tab\tx" "back\\\\slash" } 0\n'
            'p "same" 2 1 "dup" { "x" } 0\nt "" 1 "o" { 1, -1 }\n'
            'p "ok" 2 2 "dup" { "x" } 0\nt "" 1\nt "" 1\nt "" 1\n')
    game = efg.loads(text)
    assert game.legal_actions() == ["call ", "a  b", "tab\tx", "back\\\\slash"]
    safe = efg.loads(efg.dumps(game))
    assert safe.legal_actions() == ["call", "a b", "tab?x", "back//slash"]
    assert safe.player_names == ("Pl? 1", "B")
    assert safe.tree.label[:4] == ["", "", "", "ok"]       # "same" twice: dropped
    assert [s.label for s in safe.tree.infosets] == ["dup", "", ""]
    exact = efg.loads(efg.dumps(game, gambit_labels=False))
    assert exact.legal_actions() == game.legal_actions()
    assert exact.player_names == game.player_names


def test_dump_rejects_non_enumerable_chance():
    class Sampled(TinyGame):
        def chance_outcomes(self):
            return None

        def sample_chance(self, rng):
            return ("heads", 0.3)

    with pytest.raises(GameError) as info:
        efg.dumps(Sampled())
    assert info.value.rule == "chance-not-enumerable"


def test_dump_rejects_inconsistent_infosets():
    class Liar(TinyGame):
        def legal_actions(self):
            acts = super().legal_actions()
            return acts[::-1] if acts and self.coin == "tails" and not self.moves else acts

    with pytest.raises(GameError) as info:
        efg.dumps(Liar())
    assert info.value.rule == "infoset-actions"
    assert info.value.history == ("tails",)


def test_dump_of_reference_game_if_available():
    games = pytest.importorskip("games")
    registry = jaxcfr.registered_games()
    if "kuhn_poker" not in registry:
        pytest.skip("kuhn_poker is not registered")
    game = jaxcfr.load_game("kuhn_poker")
    again = efg.loads(efg.dumps(game))
    assert _structure(again, False) == _structure(game, False)
    assert games is not None


# ---------------------------------------------------------------------------
# Speed
# ---------------------------------------------------------------------------

def big_efg_text(cards: int = 8, depth: int = 12) -> str:
    """A generated game: chance deals one of ``cards`` to player 1, then ``depth``
    alternating binary moves seen by both players (player 2 never sees the card)."""
    lines = [f'EFG 2 R "generated {cards}x2^{depth}" {{ "P1" "P2" }}', '""',
             "c \"\" 1 \"deal\" { " + " ".join(f'"card {c}" 1/{cards}' for c in range(cards))
             + " } 0"]
    p1_sets: dict = {}
    p2_sets: dict = {}
    outcomes: dict = {}
    for card in range(cards):
        stack = [""]
        while stack:
            moves = stack.pop()
            if len(moves) == depth:
                value = Fraction((2 * card - cards + 1) * (1 + moves.count("a")), 4)
                num = outcomes.get(value)
                if num is None:
                    num = outcomes[value] = len(outcomes) + 1
                    lines.append(f't "" {num} "" {{ {value}, {-value} }}')
                else:
                    lines.append(f't "" {num}')
                continue
            pl = len(moves) % 2
            sets, key = (p1_sets, (card, moves)) if pl == 0 else (p2_sets, moves)
            num = sets.get(key)
            if num is None:
                num = sets[key] = len(sets) + 1
                lines.append(f'p "" {pl + 1} {num} "" {{ "a" "b" }} 0')
            else:
                lines.append(f'p "" {pl + 1} {num} 0')
            stack.append(moves + "b")
            stack.append(moves + "a")
    return "\n".join(lines) + "\n"


def test_parse_speed_on_a_generated_file():
    text = big_efg_text(8, 13)
    size_mb = len(text.encode()) / 1e6
    assert size_mb > 1.5
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        game = efg.loads(text)
        best = min(best, time.process_time() - start)
    assert game.tree.num_nodes == 1 + 8 * (2 ** 14 - 1)
    rate = size_mb / best
    print(f"\nparsed {size_mb:.2f} MB in {best:.2f} s CPU: {rate:.1f} MB/s")
    # A loose floor (shared CI machines are slow); the design target is > 5 MB/s.
    assert rate > 0.5


# ---------------------------------------------------------------------------
# Optional cross-check against Gambit itself (pip install pygambit)
# ---------------------------------------------------------------------------

def _gambit_view(g) -> list[tuple]:
    """Gambit's reading of a game, in the shape of :func:`_efg_view`."""
    players = list(g.players)
    names = [p.label for p in players]
    zero = tuple(Fraction(0) for _ in players)
    out, numbers = [], {}
    stack = [(g.root, zero)]
    while stack:
        node, acc = stack.pop()
        if node.outcome:
            acc = tuple(a + Fraction(str(node.outcome[p])) for a, p in zip(acc, players))
        if node.is_terminal:
            out.append(("t", acc))
            continue
        actions = list(node.infoset.actions)
        labels = tuple(a.label for a in actions)
        if node.player.is_chance:
            out.append(("c", labels, tuple(Fraction(str(a.prob)) for a in actions)))
        else:
            pl = names.index(node.player.label)
            num = numbers.setdefault((pl, node.infoset.number), len(numbers))
            out.append(("p", pl, num, labels))
        for child in reversed(list(node.children)):
            stack.append((child, acc))
    return out


def _efg_view(game: EfgGame) -> list[tuple]:
    tree = game.tree
    out, numbers = [], {}
    for i in range(tree.num_nodes):
        if tree.kind[i] == 2:
            out.append(("t", tree.returns[i]))
            continue
        s = tree.infosets[tree.infoset[i]]
        if tree.kind[i] == 1:
            out.append(("c", s.actions, s.probs))
        else:
            num = numbers.setdefault((s.player, s.number), len(numbers))
            out.append(("p", s.player, num, s.actions))
    return out


# Files that pygambit 16.7 itself refuses (it wants unique node / information-set labels).
GAMBIT_REFUSES = {"4cards.efg", "caro2.efg", "nim.efg", "holdout.efg"}


def test_gambit_reads_the_files_and_our_output_alike():
    gbt = pytest.importorskip("pygambit", reason="pygambit is not installed: it builds from "
                              "source, so it is in the gambit extra (pip install -e "
                              "'.[gambit]'), which CI installs")
    import io
    paths = [FIXTURES / n for n in FIXTURE_FILES]
    if SHARED is not None:
        paths += [SHARED / n for n in SHARED_FILES]
    paths.append(None)                     # the hand-written game, through dumps()
    for path in paths:
        if path is None:
            game = efg.loads(efg.dumps(TinyGame()))
            name = "TinyGame"
        else:
            game, name = efg.load(path), path.name
        ours = _efg_view(game)
        if path is not None and name not in GAMBIT_REFUSES:
            assert _gambit_view(gbt.read_efg(str(path))) == ours, name
        written = efg.dumps(game)           # Gambit-safe labels by default
        view = _gambit_view(gbt.read_efg(io.StringIO(written)))
        if name == "caro2.efg":             # its label "call " is trimmed for Gambit
            strip = [(v[0], v[1], v[2]) if v[0] == "p" else v for v in view]
            assert strip == [(v[0], v[1], v[2]) if v[0] == "p" else v for v in ours], name
        else:
            assert view == ours, name
