"""jaxcfr.lower: tensor invariants, sizes, the exhaustive contract check, memory budget,
sort_infosets."""

from __future__ import annotations

import importlib
import pathlib
import re

import numpy as np
import pytest

import jaxcfr
from jaxcfr import CHANCE, TERMINAL, Game, GameError, MemoryBudgetError
from jaxcfr.lowering.lower import footprint_bytes, sort_infosets
from jaxcfr.tensors import CHANCE_NODE, DECISION, NO_PARENT, NO_PLAYER, TERMINAL_NODE

try:
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import cfr_cases as C

try:
    from tests import broken_games as bg
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "efg"
SHARED_EFG = C.SHARED_EFG

#: The Gambit files without perfect recall (PR = n in shared/efg/README.md).
NO_PERFECT_RECALL = ["e09", "gilboa1997_fig1_absent_minded_driver", "holdout", "myerson",
                     "noPR-action-AM", "noPR-action-selten-horse", "wichardt2008"]


def efg_module():
    return pytest.importorskip("jaxcfr.efg", reason="jaxcfr.efg is not there yet")


def fixture_files(perfect_recall: bool) -> list[str]:
    names = sorted(p.stem for p in FIXTURES.glob("*.efg"))
    return [n for n in names if (n not in NO_PERFECT_RECALL) == perfect_recall]


# --------------------------------------------------------------------------------------------
# A game given as a literal tree, for hand-made (broken) games
# --------------------------------------------------------------------------------------------

def T(*returns):
    """A terminal node."""
    return ("t", tuple(float(r) for r in returns))


def C(*outcomes):
    """A chance node: ``(label, probability, child)`` triples."""
    return ("c", outcomes)


def P(player, key, *moves):
    """A decision node of ``player`` with information-set key ``key``: ``(label, child)`` pairs."""
    return ("p", player, key, moves)


class TreeGame(Game):
    """A game written out as nested ``T`` / ``C`` / ``P`` tuples."""

    def __init__(self, tree, num_players: int = 2):
        self.node = tree
        self.num_players = num_players

    def clone(self):
        new = object.__new__(TreeGame)
        new.__dict__.update(self.__dict__)
        return new

    def is_terminal(self):
        return self.node[0] == "t"

    def is_chance(self):
        return self.node[0] == "c"

    def player_to_act(self):
        return {"t": TERMINAL, "c": CHANCE}.get(self.node[0], self.node[1])

    def chance_outcomes(self):
        return [(a, p) for a, p, _ in self.node[1]] if self.node[0] == "c" else None

    def legal_actions(self):
        return [a for a, _ in self.node[3]] if self.node[0] == "p" else []

    def step(self, action):
        kind = self.node[0]
        if kind == "t":
            raise GameError("game over", rule="illegal-action")
        children = {a: child for a, _, child in self.node[1]} if kind == "c" else \
            dict(self.node[3])
        if action not in children:
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        self.node = children[action]

    def terminal_returns(self):
        return self.node[1]

    def infoset_key(self, player):
        if self.node[0] == "p" and self.node[1] == player:
            return self.node[2]
        return ("not-acting", id(self.node))


class Chain(Game):
    """One player says "go" ``length - 1`` times or "stop": a path ``length`` moves deep."""

    num_players = 1

    def __init__(self, length: int):
        self.length, self.pos, self.done = length, 0, False

    def clone(self):
        new = object.__new__(Chain)
        new.length, new.pos, new.done = self.length, self.pos, self.done
        return new

    def is_terminal(self):
        return self.done

    def is_chance(self):
        return False

    def player_to_act(self):
        return TERMINAL if self.done else 0

    def legal_actions(self):
        if self.done:
            return []
        return ["go", "stop"] if self.pos < self.length - 1 else ["stop"]

    def step(self, action):
        if action not in self.legal_actions():
            raise GameError(f"illegal action {action!r}", rule="illegal-action")
        if action == "go":
            self.pos += 1
        else:
            self.done = True

    def terminal_returns(self):
        return (float(self.pos),)

    def infoset_key(self, player):
        return self.pos


# --------------------------------------------------------------------------------------------
# Tensor invariants
# --------------------------------------------------------------------------------------------

def check_invariants(lowered: jaxcfr.LoweredGame, game: Game | None = None) -> None:
    """Every documented property of the tensors of a single (unstacked) lowered game."""
    t = lowered.tensors
    n, rows, a, p = lowered.num_nodes, lowered.num_rows, lowered.max_actions, lowered.num_players
    sink = rows - 1
    levels = lowered.level_start
    kind, parent = t.node_kind, t.parent

    # Shapes and dtypes.
    for name in ("parent", "parent_slot", "node_kind", "node_player", "node_infoset",
                 "edge_owner", "edge_index", "chance_prob"):
        assert getattr(t, name).shape == (n,), name
    assert t.payoff.shape == (n, p)
    assert t.legal_mask.shape == (rows, a)
    assert "abstraction_mask" not in type(t)._fields      # abstracted games lower smaller
    assert t.legal_mask.dtype == bool
    assert t.infoset_player.shape == t.infoset_rep.shape == (rows,)
    assert len(lowered.infoset_keys) == len(lowered.infoset_actions) == rows - 1

    # Depth order: contiguous levels, parents in the level above, sorted within a level.
    assert levels[0] == 0 and levels[1] == 1 and levels[-1] == n
    assert all(lo < hi for lo, hi in zip(levels[:-1], levels[1:]))
    assert parent[0] == NO_PARENT and (parent[1:] >= 0).all()
    for d in range(1, len(levels) - 1):
        par = parent[levels[d]:levels[d + 1]]
        assert (par >= levels[d - 1]).all() and (par < levels[d]).all()
        assert (np.diff(par) >= 0).all()
    assert lowered.depth == len(levels) - 2

    # Pre-order numbers: a permutation, parents before children.
    assert sorted(lowered.preorder.tolist()) == list(range(n))
    assert (lowered.preorder[parent[1:]] < lowered.preorder[1:]).all()

    # Node kinds, players and rows.
    assert set(np.unique(kind)) <= {DECISION, CHANCE_NODE, TERMINAL_NODE}
    assert (kind[parent[1:]] != TERMINAL_NODE).all()
    has_children = np.zeros(n, dtype=bool)
    has_children[parent[1:]] = True
    assert (has_children == (kind != TERMINAL_NODE)).all()
    decision = kind == DECISION
    assert (t.node_infoset[~decision] == sink).all()
    assert (t.node_infoset[decision] < sink).all()
    assert (t.infoset_player[t.node_infoset[decision]] == t.node_player[decision]).all()
    assert (t.node_player[kind == CHANCE_NODE] == p).all()
    assert (t.node_player[kind == TERMINAL_NODE] == -1).all()
    assert t.infoset_player[sink] == NO_PLAYER
    assert set(t.infoset_player[:sink].tolist()) <= set(range(p))

    # Edges: owner and (row, slot) of the parent's choice; chance / root edges in the sink.
    par = parent[1:]
    from_decision = kind[par] == DECISION
    assert t.edge_owner[0] == p and t.edge_index[0] == sink * a
    assert (t.edge_owner[1:][from_decision] == t.node_player[par][from_decision]).all()
    assert (t.edge_owner[1:][~from_decision] == p).all()
    expected = t.node_infoset[par].astype(np.int64) * a + t.parent_slot[1:]
    assert (t.edge_index[1:][from_decision] == expected[from_decision]).all()
    assert (t.edge_index[1:][~from_decision] == sink * a).all()
    assert t.legal_mask.reshape(-1)[t.edge_index[1:][from_decision]].all()
    # Slots: distinct per parent, below the parent's action count.
    pairs = set(zip(par.tolist(), t.parent_slot[1:].tolist()))
    assert len(pairs) == n - 1
    counts = np.bincount(par, minlength=n)
    dec_nodes = np.flatnonzero(decision)
    assert (counts[dec_nodes] == t.legal_mask[t.node_infoset[dec_nodes]].sum(axis=1)).all()

    # Chance probabilities: 1 below decisions, summing to 1 below every chance node.
    assert (t.chance_prob[1:][from_decision] == 1).all() and t.chance_prob[0] == 1
    chance_sums = np.zeros(n)
    np.add.at(chance_sums, par[~from_decision], t.chance_prob[1:][~from_decision])
    assert np.allclose(chance_sums[kind == CHANCE_NODE], 1.0, atol=1e-12)
    assert (t.chance_prob >= 0).all()

    # Legal masks match the host action lists; the sink has one slot.
    lengths = np.array([len(acts) for acts in lowered.infoset_actions])
    assert (t.legal_mask[:sink].sum(axis=1) == lengths).all()
    assert (t.legal_mask[:sink] == (np.arange(a)[None, :] < lengths[:, None])).all()
    assert t.legal_mask[sink].tolist() == [True] + [False] * (a - 1)
    assert t.legal_mask.any(axis=1).all()

    # Representatives are members; members are listed in pre-order.
    reps = t.infoset_rep[:sink]
    assert (kind[reps] == DECISION).all() and (t.node_infoset[reps] == np.arange(sink)).all()
    for row in range(min(sink, 50)):
        members = lowered.infoset_members(row)
        assert t.infoset_rep[row] in members
        assert (np.diff(lowered.preorder[members]) > 0).all()

    # Payoffs only at terminals.
    assert (t.payoff[kind != TERMINAL_NODE] == 0).all()
    assert np.isfinite(t.payoff).all()

    # Host tables: the histories lead to nodes with the stored keys and actions.
    if game is not None:
        for row in range(sink):
            node = int(t.infoset_rep[row])
            state = game.clone()
            for action in lowered.history(node):
                state.step(action)
            player, key = lowered.infoset_keys[row]
            assert state.player_to_act() == player
            assert state.infoset_key(player) == key
            assert tuple(state.legal_actions()) == lowered.infoset_actions[row]
            assert lowered.row_of(player, key) == row


REFERENCE_GAMES = ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)",
                   "liars_dice(dice=1, sides=3)", "goofspiel(cards=3)", "rock_paper_scissors"]


@pytest.mark.parametrize("name", REFERENCE_GAMES)
def test_invariants_reference_games(name):
    game = jaxcfr.load_game(name)
    check_invariants(jaxcfr.lower(game), game)
    check_invariants(jaxcfr.lower(game, sort_infosets=False), game)


@pytest.mark.parametrize("name", fixture_files(perfect_recall=True))
def test_invariants_efg_fixtures(name):
    efg = efg_module()
    game = efg.load(FIXTURES / f"{name}.efg")
    check_invariants(jaxcfr.lower(game), game)


def test_game_is_not_modified():
    game = jaxcfr.load_game("kuhn_poker")
    before = repr(game)
    jaxcfr.lower(game)
    assert repr(game) == before and game.is_chance()


# --------------------------------------------------------------------------------------------
# Sizes
# --------------------------------------------------------------------------------------------

def test_sizes_kuhn_and_leduc():
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker")).sizes()
    assert kuhn["nodes"] == 58 and kuhn["infosets"] == [6, 6]
    assert kuhn["max_actions"] == 2 and kuhn["depth"] == 5 and kuhn["bytes"] > 0
    leduc = jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    sizes = leduc.sizes()
    assert sizes["nodes"] == 9457
    assert sizes["infosets"] == [468, 468] and sum(sizes["infosets"]) == 936
    assert leduc.num_rows == 937
    assert set(sizes) >= {"nodes", "infosets", "max_actions", "depth", "bytes"}
    three = jaxcfr.lower(jaxcfr.load_game("kuhn_poker(players=3)"))
    assert three.num_players == 3 and three.infosets_per_player == (16, 16, 16)


def _openspiel_counts(name: str) -> tuple[int, list[int]]:
    """Nodes and information sets per player of an OpenSpiel game, by enumerating its tree."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game(name)
    keys = [set() for _ in range(game.num_players())]
    nodes = 0
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        nodes += 1
        if state.is_terminal():
            continue
        if state.is_chance_node():
            actions = [a for a, _ in state.chance_outcomes()]
        else:
            player = state.current_player()
            keys[player].add(state.information_state_string(player))
            actions = state.legal_actions()
        for action in actions:
            stack.append(state.child(action))
    return nodes, [len(k) for k in keys]


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_sizes_match_openspiel(name):
    nodes, infosets = _openspiel_counts(name)
    lowered = jaxcfr.lower(jaxcfr.load_game(name))
    assert lowered.num_nodes == nodes
    assert list(lowered.infosets_per_player) == infosets


def test_infoset_members_at_different_depths():
    efg = efg_module()
    path = FIXTURES / "different_depths.efg"
    if not path.exists():
        pytest.skip("different_depths.efg fixture missing")
    lowered = jaxcfr.lower(efg.load(path))
    depth_of = np.repeat(np.arange(len(lowered.level_start) - 1), np.diff(lowered.level_start))
    depths = {row: set(depth_of[lowered.infoset_members(row)].tolist())
              for row in range(lowered.num_rows - 1)}
    assert any(len(d) > 1 for d in depths.values())


# --------------------------------------------------------------------------------------------
# The exhaustive contract check
# --------------------------------------------------------------------------------------------

#: Where lowering names another rule than the random probe: it never samples chance,
#: and it tells absent-mindedness apart from other failures of perfect recall.
LOWERING_RULE = {"SamplingNotImplemented": "chance-not-enumerable",
                 "BadSampledProbability": "chance-not-enumerable",
                 "AbsentMinded": "absent-minded"}


def _lower_rejects(game, **kwargs) -> GameError:
    with pytest.raises(GameError) as info:
        jaxcfr.lower(game, **kwargs)
    return info.value


def test_toy_game_lowers():
    check_invariants(jaxcfr.lower(bg.Toy()), bg.Toy())


@pytest.mark.parametrize("cls", bg.BROKEN_GAMES + bg.BLIND_SPOTS, ids=lambda c: c.__name__)
def test_lower_rejects_broken_game(cls):
    err = _lower_rejects(cls())
    assert err.rule == LOWERING_RULE.get(cls.__name__, cls.RULE), str(err)
    assert err.history in cls.HISTORIES, str(err)
    assert f"[{err.rule}]" in str(err) and "history:" in str(err)


def test_every_contract_rule_is_checked_by_lowering():
    rules = {LOWERING_RULE.get(c.__name__, c.RULE) for c in bg.BROKEN_GAMES + bg.BLIND_SPOTS}
    assert rules >= {
        "node-type", "terminal-returns", "terminal-step", "chance-legal-actions",
        "chance-empty", "chance-outcomes", "chance-probability", "chance-sum",
        "chance-duplicate", "decision-chance-outcomes", "decision-empty",
        "decision-duplicate", "player", "infoset-actions", "infoset-key",
        "chance-not-enumerable", "perfect-recall", "absent-minded",
        "nondeterministic", "terminal-legal-actions", "action-hashable", "game-exception",
        "clone"}


@pytest.mark.parametrize("cls", [bg.NotAGame, bg.ZeroPlayers], ids=lambda c: c.__name__)
def test_lower_whole_game_failures(cls):
    err = _lower_rejects(cls())
    assert err.rule == cls.RULE and err.history is None


def test_lower_rejects_a_game_that_never_ends(monkeypatch):
    monkeypatch.setattr(importlib.import_module("jaxcfr.game.contract"),
                        "MAX_TRAJECTORY_LENGTH", 100)
    err = _lower_rejects(bg.NeverEnds())
    assert err.rule == "termination" and err.history == ("go",) * 20


def test_lower_rejects_the_sampled_chance_reference_game():
    err = _lower_rejects(jaxcfr.load_game("sampled_dice_poker(dice=2, sides=3)"))
    assert err.rule == "chance-not-enumerable" and err.history == ()


# A chance card seen by player 0 only, then player 0, player 1, player 0 again.
def _forgets(later_key):
    def p0_again(card, first):
        return P(0, later_key(card, first), ("u", T(1, -1)), ("v", T(-1, 1)))

    def after_first(card, first):
        return P(1, f"1|{first}", ("c", p0_again(card, first)), ("d", T(0, 0)))

    return TreeGame(C(*[(card, 0.5, P(0, f"0|{card}", *[(m, after_first(card, m))
                                                         for m in ("a", "b")]))
                        for card in ("x", "y")]))


def test_perfect_recall_rejects_forgetting_an_observation():
    # Player 0 forgets the card later (the key merges x and y): the two histories reach
    # the merged key through different own information sets.
    err = _lower_rejects(_forgets(lambda card, first: f"0|later|{first}"))
    assert err.rule == "perfect-recall"
    assert err.history == ("y", "a", "c") and err.infoset == "0|later|a"
    assert "perfect recall" in str(err) and "'0|later|a'" in str(err)


def test_perfect_recall_rejects_forgetting_an_own_action():
    err = _lower_rejects(_forgets(lambda card, first: f"0|later|{card}"))
    assert err.rule == "perfect-recall"
    assert err.history == ("x", "b", "c") and err.infoset == "0|later|x"


def test_perfect_recall_accepts_remembering_both():
    game = _forgets(lambda card, first: f"0|later|{card}|{first}")
    check_invariants(jaxcfr.lower(game), game)


def test_perfect_recall_rejects_forgetting_own_action_without_chance():
    game = TreeGame(P(0, "start", ("L", P(0, "again", ("l", T(1, -1)), ("r", T(0, 0)))),
                      ("R", P(0, "again", ("l", T(0, 0)), ("r", T(1, -1))))))
    err = _lower_rejects(game)
    assert err.rule == "perfect-recall" and err.history == ("R",) and err.infoset == "again"


def test_absent_minded_driver():
    # Gilboa's driver: the same information set at the first and the second exit.
    game = TreeGame(P(0, "I", ("exit", T(0)), ("continue", P(0, "I", ("exit", T(4)),
                                                               ("continue", T(1))))),
                    num_players=1)
    err = _lower_rejects(game)
    assert err.rule == "absent-minded" and err.history == ("continue",) and err.infoset == "I"
    assert "perfect recall" in str(err) and "absent-minded" in str(err)


def test_absent_minded_deeper_on_the_path():
    # The repeated information set comes back after an opponent move and a chance move.
    inner = P(0, "I", ("a", T(1, -1)), ("b", T(0, 0)))
    game = TreeGame(P(0, "I", ("a", P(1, "J", ("x", C(("h", 0.5, inner), ("t", 0.5, T(0, 0)))),
                                      ("y", T(0, 0)))),
                      ("b", T(0, 0))))
    err = _lower_rejects(game)
    assert err.rule == "absent-minded" and err.history == ("a", "x", "h")


@pytest.mark.parametrize("second", [["a", "c"], ["b", "a"], ["a"], ["a", "b", "c"]])
def test_keys_merging_different_action_lists(second):
    first = ["a", "b"]
    game = TreeGame(C(("x", 0.5, P(1, "k", *[(m, T(1, -1)) for m in first])),
                      ("y", 0.5, P(1, "k", *[(m, T(1, -1)) for m in second]))))
    err = _lower_rejects(game)
    assert err.rule == "infoset-actions" and err.history == ("y",) and err.infoset == "k"
    assert str(first) in str(err) and str(second) in str(err)


def test_same_key_for_different_players_is_fine():
    game = TreeGame(P(0, "k", ("a", P(1, "k", ("c", T(1, -1)), ("d", T(0, 0)))),
                      ("b", T(0, 0))))
    lowered = jaxcfr.lower(game)
    assert lowered.infosets_per_player == (1, 1)


def test_error_in_step_gets_the_history():
    class BadStep(bg.Toy):
        def step(self, action):
            if self.h == ("T", "b") and action == "hi":
                raise GameError("cannot", rule="custom")
            super().step(action)

    err = _lower_rejects(BadStep())
    assert err.rule == "custom" and err.history == ("T", "b", "hi")


def _shared_or_fixture(name: str) -> pathlib.Path | None:
    for folder in (SHARED_EFG, FIXTURES):
        path = folder / f"{name}.efg"
        if path.exists():
            return path
    return None


@pytest.mark.parametrize("name", NO_PERFECT_RECALL)
def test_efg_without_perfect_recall_is_rejected(name):
    efg = efg_module()
    path = _shared_or_fixture(name)
    if path is None:
        pytest.skip(f"{name}.efg is not available (shared/efg absent)")
    err = _lower_rejects(efg.load(path))
    assert err.rule in ("perfect-recall", "absent-minded")
    assert "perfect recall" in str(err)
    assert err.infoset is not None and repr(err.infoset) in str(err)


def test_efg_fixtures_without_perfect_recall_always_run():
    # At least two imperfect-recall files are kept in tests/fixtures so the check always runs.
    assert len(fixture_files(perfect_recall=False)) >= 2
    if SHARED_EFG.exists():
        for name in NO_PERFECT_RECALL:
            assert (SHARED_EFG / f"{name}.efg").exists()


# --------------------------------------------------------------------------------------------
# Deep trees, memory budget
# --------------------------------------------------------------------------------------------

def test_deep_chain_lowers_without_recursion():
    lowered = jaxcfr.lower(Chain(10_000))
    assert lowered.depth == 10_000 and lowered.num_nodes == 20_000
    assert lowered.infosets_per_player == (10_000,)
    t = lowered.tensors
    assert t.payoff[t.node_kind == TERMINAL_NODE].max() == 9_999
    assert len(lowered.history(lowered.num_nodes - 1)) == 10_000


def _nodes_in_message(err: Exception) -> int:
    match = re.search(r"for ([\d,]+) nodes", str(err))
    assert match, str(err)
    return int(match.group(1).replace(",", ""))


def test_memory_budget_fails_before_walking():
    game = jaxcfr.load_game("goofspiel(cards=6)")       # about a million nodes
    with pytest.raises(MemoryBudgetError) as info:
        jaxcfr.lower(game, memory_budget=1 << 20)
    err = info.value
    assert err.rule == "memory-budget" and isinstance(err, GameError)
    assert "memory budget of 1.0 MiB" in str(err)
    assert re.search(r"the game has 969,523 nodes, which needs about [\d.,]+ MiB", str(err)), \
        str(err)                                        # goofspiel counts its own tree


def test_memory_budget_fails_early_while_walking(monkeypatch):
    # Without a size estimate the walk itself stops within a few thousand nodes.
    monkeypatch.setattr(jaxcfr.lowering.lower, "probe_size", lambda game: None)
    game = jaxcfr.load_game("goofspiel(cards=6)")
    with pytest.raises(MemoryBudgetError) as info:
        jaxcfr.lower(game, memory_budget=1 << 20)
    err = info.value
    assert err.rule == "memory-budget" and isinstance(err, GameError)
    assert "MiB" in str(err) and "memory budget of 1.0 MiB" in str(err)
    assert _nodes_in_message(err) <= 20_000       # stopped within a few thousand nodes


def test_memory_budget_after_the_walk():
    # A small game whose estimate is checked again with its exact sizes at the end:
    # footprint_bytes is the whole need, so a budget one byte short of it fails.
    lowered = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    need = footprint_bytes(lowered.num_nodes, lowered.num_rows, lowered.max_actions, 2)
    with pytest.raises(MemoryBudgetError) as info:
        jaxcfr.lower(jaxcfr.load_game("kuhn_poker"), memory_budget=need - 1)
    assert _nodes_in_message(info.value) == 58
    jaxcfr.lower(jaxcfr.load_game("kuhn_poker"), memory_budget=need)


def test_memory_budget_environment_variable(monkeypatch):
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "50000")
    with pytest.raises(MemoryBudgetError):
        jaxcfr.lower(jaxcfr.load_game("leduc_poker"))
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "1e9")
    assert jaxcfr.lower(jaxcfr.load_game("leduc_poker")).num_nodes == 9457


# --------------------------------------------------------------------------------------------
# Canonical information-set order
# --------------------------------------------------------------------------------------------

def _first_member_preorder(lowered) -> np.ndarray:
    return np.array([lowered.preorder[lowered.infoset_members(r)].min()
                     for r in range(lowered.num_rows - 1)])


def check_canonical(lowered) -> None:
    owner = lowered.tensors.infoset_player[:-1]
    assert (np.diff(owner) >= 0).all()                     # grouped by player
    first = _first_member_preorder(lowered)
    for p in range(lowered.num_players):
        assert (np.diff(first[owner == p]) > 0).all()      # by first member, pre-order
    assert [k[0] for k in lowered.infoset_keys] == owner.tolist()


@pytest.mark.parametrize("name", ["reduction_generic_payoffs", "3_player"])
def test_canonical_order_on_efg_numbered_out_of_order(name):
    efg = efg_module()
    game = efg.load(FIXTURES / f"{name}.efg")
    lowered = jaxcfr.lower(game)
    check_canonical(lowered)
    check_invariants(lowered, game)
    # The file's own information-set numbers are not in this order: the sort is by the tree.
    expected = {"reduction_generic_payoffs": [("p", 0, 1), ("p", 0, 3), ("p", 0, 2),
                                              ("p", 1, 1), ("p", 1, 3), ("p", 1, 2)],
                "3_player": [("p", 0, 1), ("p", 0, 2), ("p", 1, 1), ("p", 1, 2),
                             ("p", 2, 2), ("p", 2, 1)]}[name]
    assert [key for _, key in lowered.infoset_keys] == expected


def test_unsorted_keeps_first_met_order():
    game = jaxcfr.load_game("kuhn_poker")
    unsorted = jaxcfr.lower(game, sort_infosets=False)
    first = _first_member_preorder(unsorted)
    assert (np.diff(first) > 0).all()                       # the order the walk met them
    owner = unsorted.tensors.infoset_player[:-1]
    assert (np.diff(owner) < 0).any()                       # players interleaved
    check_canonical(sort_infosets(unsorted))
    check_canonical(jaxcfr.lower(game))


@pytest.mark.parametrize("name", ["kuhn_poker(players=3)", "leduc_poker", "goofspiel(cards=3)"])
def test_sort_matches_lowering_and_is_idempotent(name):
    game = jaxcfr.load_game(name)
    lowered = jaxcfr.lower(game)
    resorted = sort_infosets(jaxcfr.lower(game, sort_infosets=False))
    twice = sort_infosets(lowered)
    for other in (resorted, twice):
        assert other.infoset_keys == lowered.infoset_keys
        assert other.infoset_actions == lowered.infoset_actions
        for a, b in zip(lowered.tensors, other.tensors):
            np.testing.assert_array_equal(a, b)
    check_canonical(lowered)


def test_sort_rejects_a_stacked_game():
    kuhn = jaxcfr.lower(jaxcfr.load_game("kuhn_poker"))
    with pytest.raises(ValueError):
        sort_infosets(jaxcfr.stack([kuhn, kuhn]))


def test_sort_uses_a_real_sort():
    import inspect
    source = inspect.getsource(sort_infosets)
    assert "np.lexsort" in source


def test_both_orders_give_the_same_solution():
    efg = efg_module()
    game = efg.load(FIXTURES / "reduction_generic_payoffs.efg")
    sorted_ = jaxcfr.lower(game)
    unsorted = jaxcfr.lower(game, sort_infosets=False)
    assert sorted_.infoset_keys != unsorted.infoset_keys
    a = jaxcfr.solve(sorted_, "cfr", 50)
    b = jaxcfr.solve(unsorted, "cfr", 50)
    for row, key in enumerate(sorted_.infoset_keys):
        other = unsorted.row_of(*key)
        np.testing.assert_allclose(a.average_strategy[row], b.average_strategy[other], atol=1e-6)
    np.testing.assert_allclose(a.final["values"], b.final["values"], atol=1e-6)


# --------------------------------------------------------------------------------------------
# Fixture upkeep: copy the imperfect-recall files used above when shared/efg is there
# --------------------------------------------------------------------------------------------

def test_fixture_copies_match_shared_files():
    if not SHARED_EFG.exists():
        pytest.skip("shared/efg absent")
    for path in FIXTURES.glob("*.efg"):
        shared = SHARED_EFG / path.name
        if shared.exists():
            assert shared.read_bytes() == path.read_bytes(), path.name


def test_numpy_integer_players_are_players():
    """A game keeping its state in NumPy arrays reports NumPy integers: the same game."""
    jaxcfr.validate(bg.NumpyPlayer())
    a, b = jaxcfr.lower(bg.NumpyPlayer()), jaxcfr.lower(bg.Toy())
    assert a.infoset_keys == b.infoset_keys
    for name in a.tensors._fields:
        np.testing.assert_array_equal(getattr(a.tensors, name), getattr(b.tensors, name))


@pytest.mark.parametrize("cls", [bg.StringReturns, bg.SharedHistory, bg.GameRaisesKeyError,
                                 bg.NaNInfosetKey, bg.UnhashableActions],
                         ids=lambda c: c.__name__)
def test_validate_and_lower_report_the_same_rule_and_history(cls):
    with pytest.raises(GameError) as by_validate:
        jaxcfr.validate(cls())
    err = _lower_rejects(cls())
    assert (err.rule, err.history) == (by_validate.value.rule, by_validate.value.history)


def test_a_game_exception_names_the_method_and_the_line():
    err = _lower_rejects(bg.GameRaisesKeyError())
    assert "KeyError: 'y'" in str(err) and "legal_actions()" in str(err)
    assert "broken_games.py:" in str(err)
    assert isinstance(err.__cause__, KeyError)          # --traceback shows the game's frame


def test_a_walk_told_of_imperfect_recall_accepts_forgetting_not_absent_mindedness():
    from jaxcfr.lowering.walk import walk
    with pytest.raises(GameError) as info:
        walk(bg.ForgetsOwnAction(), 2, None)
    assert info.value.rule == "perfect-recall"
    enum = walk(bg.ForgetsOwnAction(), 2, None, perfect_recall=False)
    assert enum.row_key.count("1|b/lo/again") == 1            # one row for both memories
    assert len(enum) > len(walk(bg.ForgetsOwnAction(), 2, None, cut_depth=3))
    with pytest.raises(GameError) as info:
        walk(bg.AbsentMinded(), 2, None, perfect_recall=False)
    assert info.value.rule == "absent-minded" and info.value.history in bg.AbsentMinded.HISTORIES
