"""Public subgames re-solved on their merged (suit-isomorphic) tree where they keep the
symmetry (jaxcfr.subgames.symmetry; docs/subgames.md "Public subgames on the merged
tree").

Oracles: a subgame whose gadget (deal weights, masses, alternatives) is invariant under
every hand renaming of the merges below its node lowers merged, and its profile read back
at every history of the full game (through the merged outcomes) is the unmerged
subgame's, row for row, exactly (a symmetric table); re-solved (float64), the merged
re-solve gives the unmerged re-solve's composed profile, values and NashConv to 1e-12
(the merged tree sums a chance node's outcomes in another order, and the blueprint's
data were symmetric only to rounding: ~1e-16 apart, made exactly symmetric) on the
two-suit game of tests/test_public_merged_profiles.py, and to 1e-9 on a hold'em turn
(slow); a gadget that breaks the symmetry (the blueprint's range at the node or its
values below it) takes the unmerged path, says why, and gives bit for bit the result of
the re-solve with ``merges=False`` (today's path). The default set checks the lowering
and the composition on a small hold'em turn too (random symmetric gadget data, no solve),
and the ``resolve`` command's ``isomorphism`` line; the command on that turn is slow.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering.public import lower_public
from jaxcfr.subgames import resolve_subgames
from jaxcfr.subgames.gadgets import gadget_kind
from jaxcfr.subgames.public import PublicContext, PublicGadget, compose_public
from jaxcfr.subgames.symmetry import TOLERANCE, orbit_firsts, subgame_renamings, symmetrise
from test_public_merged_profiles import TwoBoards

SWAP = np.arange(6) ^ 1                      # the two suits swapped: hand h <-> h ^ 1


@pytest.fixture(scope="module")
def context():
    plain = lower_public(TwoBoards(merge=False))
    return PublicContext(TwoBoards(), np.asarray(plain.tensors.legal_mask, np.float64) / 2)


def _gadget(context, path, weights, mass, alternative):
    """A resolve gadget for player 0 at ``path``, its per-hand data given (no blueprint
    values computed: the default set stays small)."""
    mass = np.asarray(mass, np.float64)
    return PublicGadget(gadget_kind("resolve"), 0, 1, context.node(path), tuple(path),
                        tuple(np.asarray(w, np.float64) for w in weights), mass,
                        np.asarray(alternative, np.float64), float(mass.sum()), True, 0.0)


PAIRED = [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]    # symmetric: each suit pair alike
ALT = [0.3, 0.3, -0.2, -0.2, 0.7, 0.7]


def test_the_renamings_and_orbits_of_a_subgame():
    state = TwoBoards()
    state.step("bet")
    (sources,) = subgame_renamings(state)
    assert [list(x) for x in sources] == [list(SWAP)] * 2
    assert list(orbit_firsts([sources], 0, 6)) == [0, 0, 2, 2, 4, 4]
    state.step("call")
    state.step(0)                            # the first card: nothing merges below it
    assert subgame_renamings(state) == []
    # three hands in one orbit by two 2-cycles (a 3-cycle's group): one first hand
    assert list(orbit_firsts([((1, 0, 2),), ((0, 2, 1),)], 0, 3)) == [0, 0, 0]


def test_symmetrise_within_the_tolerance_and_not_beyond(context):
    g = _gadget(context, ["bet"], (PAIRED, PAIRED), PAIRED, ALT)
    renamings = [(SWAP, SWAP)]
    same, why = symmetrise(g, renamings, 0.0)
    assert why is None and all(np.array_equal(a, b) for a, b in zip(same.weights, g.weights))
    assert np.array_equal(same.alternative, g.alternative) and same.total == g.total
    near = _gadget(context, ["bet"], (PAIRED, PAIRED), PAIRED,
                   np.asarray(ALT) + [0, 1e-15, 0, 0, 0, 0])
    sym, why = symmetrise(near, renamings, TOLERANCE["float64"])
    assert why is None and np.array_equal(sym.alternative, ALT)
    sym, why = symmetrise(near, renamings, 0.0)
    assert sym is None and "alternative values" in why
    lopsided = np.array(PAIRED)
    lopsided[1] = 0.9                        # hand 1 weighs less than hand 0
    sym, why = symmetrise(_gadget(context, ["bet"], (lopsided, PAIRED), PAIRED, ALT),
                          renamings, TOLERANCE["float32"])
    assert sym is None and "player 0's deal weights" in why


def _mapped(merged, plain, table):
    """The merged subgame's ``table`` on the unmerged subgame's rows, by key."""
    keys, _, rows = merged.expanded_rows()
    at = dict(zip(keys, rows))
    out = np.zeros(plain.tensors.legal_mask.shape)
    for row, key in enumerate(plain.row_keys()):
        if key is not None:
            out[row] = table[at[key]]
    return out


def _composes_as_unmerged(context, g, seed=0):
    """``g``'s subgame lowers merged, its rows read back are the unmerged subgame's rows,
    and a random table of it composes into the full game exactly as that table read at
    every unmerged row does (re-solving one player, and both)."""
    sub = context.build(g)
    assert sub.merges and sub.unmerged is None
    merged = lower_public(sub)
    plain = lower_public(context.build(g, merges=False))
    assert merged.merged and not plain.merged and merged.num_nodes < plain.num_nodes
    keys, _, _ = merged.expanded_rows()
    assert set(keys) == {k for k in plain.row_keys() if k is not None}
    mask = np.asarray(merged.tensors.legal_mask, np.float64)
    table = np.random.default_rng(seed).random(mask.shape) * mask
    table /= np.maximum(table.sum(axis=1, keepdims=True), 1e-300)
    full, base = context.full, context.table
    for players in ((0,), (0, 1)):
        a = compose_public(full, base, [(merged, table, players, g.node, g.prefix)])
        b = compose_public(full, base, [(plain, _mapped(merged, plain, table), players,
                                         g.node, g.prefix)])
        assert np.array_equal(a, b) and not np.array_equal(a, base)
    return merged, plain


def test_a_symmetric_subgame_lowers_merged_and_composes_as_unmerged(context):
    _composes_as_unmerged(context, _gadget(context, ["bet"], (PAIRED, PAIRED), PAIRED, ALT))


def test_a_gadget_that_breaks_the_symmetry_walks_every_outcome(context):
    lopsided = np.array(ALT)
    lopsided[3] += 1e-3
    g = _gadget(context, ["bet"], (PAIRED, PAIRED), PAIRED, lopsided)
    sub = context.build(g)
    assert not sub.merges and "alternative values" in sub.unmerged
    assert not lower_public(sub).merged
    # below the first card nothing merges: no reason to give
    after = context.build(_gadget(context, ["check", 0], ([1.0] * 6, [1.0] * 6),
                                  [1.0] * 6, [0.0] * 6))
    assert not after.merges and after.unmerged is None


# -- a small hold'em turn (Td9d6h5d: clubs ~ spades; 26 river cards merged) ------------

SMALL = ("holdem_spot(board='Td9d6h5d', ranges=('AA,KK', 'AA,QQ'), pot=100, stack=100, "
         "bets='a', raises='a')")


@pytest.fixture(scope="module")
def small():
    game = jaxcfr.load_game(SMALL)
    plain = lower_public(game, merges=False)
    table = np.asarray(plain.tensors.legal_mask, np.float64)
    return PublicContext(game, table / np.maximum(table.sum(axis=1, keepdims=True), 1.0))


def _symmetric_data(context, path, seed):
    """Random per-hand data ``[H]`` for each player, alike on each orbit of the hand
    renamings of the merges below ``path``: weights, and the opponent's mass and
    alternative."""
    state = context.root.clone()
    for x in path:
        state.step(x)
    renamings = subgame_renamings(state)
    rng = np.random.default_rng(seed)
    sizes = [len(context.root.hands(q)) for q in range(context.root.num_players)]
    firsts = [orbit_firsts(renamings, q, n) for q, n in enumerate(sizes)]
    assert all(len(set(f)) < n for f, n in zip(firsts, sizes))   # some hands merge
    weights = tuple(rng.uniform(0.5, 1.0, n)[f] for f, n in zip(firsts, sizes))
    return weights, rng.uniform(0.5, 1.0, sizes[1])[firsts[1]], \
        rng.normal(0, 50, sizes[1])[firsts[1]], firsts


def test_a_symmetric_turn_subgame_lowers_merged_and_composes_as_unmerged(small):
    weights, mass, alternative, _ = _symmetric_data(small, ["Check"], 1)
    merged, plain = _composes_as_unmerged(
        small, _gadget(small, ["Check"], weights, mass, alternative), seed=1)
    assert len(merged.merged) == 26 and (merged.num_nodes, plain.num_nodes) == (357, 487)


def test_a_turn_gadget_that_breaks_the_symmetry_walks_every_outcome(small):
    weights, mass, alternative, firsts = _symmetric_data(small, ["Check"], 2)
    h = int(np.flatnonzero(firsts[0] != np.arange(len(firsts[0])))[0])
    lopsided = np.array(weights[0])
    lopsided[h] *= 1.5                       # one hand weighs more than its orbit's first
    sub = small.build(_gadget(small, ["Check"], (lopsided, weights[1]), mass, alternative))
    assert not sub.merges and "player 0's deal weights" in sub.unmerged
    assert not lower_public(sub).merged
    # within float32's tolerance (a float32 blueprint's rounding), not float64's
    near = np.array(alternative)
    near[h] *= 1 + 1e-7
    g = _gadget(small, ["Check"], weights, mass, near)
    assert small.build(g, tolerance=TOLERANCE["float32"]).merges
    assert "alternative values" in small.build(g, tolerance=TOLERANCE["float64"]).unmerged


# -- re-solved (slow: each compiles its solves) -----------------------------------------

@pytest.fixture(scope="module")
def blueprint():
    return jaxcfr.solve_public(lower_public(TwoBoards()), "cfr+", 30, precision="float64")


def _resolves(game, profile, at, **options):
    return [resolve_subgames(game, profile, at, precision="float64", merges=m, **options)
            for m in (True, False)]


def _agree(a, b, tol):
    assert a.profile.keys == b.profile.keys
    assert np.abs(a.profile.probs - b.profile.probs).max() <= tol
    for k in ("values", "best_response_values"):
        assert np.allclose(a.metrics[k], b.metrics[k], rtol=0, atol=tol), k
    assert abs(a.metrics["nash_conv"] - b.metrics["nash_conv"]) <= tol
    for x, y in zip(a.subgames, b.subgames):
        assert abs(x["nash_conv"] - y["nash_conv"]) <= tol


@pytest.mark.slow
@pytest.mark.parametrize("gadget", ["resolve", "unsafe"])
def test_a_symmetric_subgame_is_resolved_merged_as_unmerged(blueprint, gadget):
    a, b = _resolves(TwoBoards(), blueprint.to_profile(), [["bet"]], gadget=gadget,
                     iterations=20)
    assert all(s["merged"] == 3 and s["unmerged"] is None for s in a.subgames)
    assert all(not s["merged"] for s in b.subgames)
    assert all(x["nodes"] < y["nodes"] for x, y in zip(a.subgames, b.subgames))
    _agree(a, b, 1e-12)
    assert a.metrics["nash_conv"] > 1e-3                        # (not solved: teeth)


@pytest.mark.slow
def test_a_blueprint_that_breaks_the_symmetry_is_resolved_unmerged(blueprint):
    profile = blueprint.to_profile()
    probs = np.array(profile.probs)
    # player 1 folds hand 0 (not hand 1) to a bet after the bet-call and the card 2:
    # player 0's values below ["bet"] break the symmetry (its hand 0 blocks the folding
    # hand, its hand 1 does not), player 0's range there not
    probs[profile.row(1, (0, ("bet", "call", 2, "bet"))), :2] = (1.0, 0.0)
    lopsided = jaxcfr.Profile(profile.keys, profile.actions, probs)
    a, b = _resolves(TwoBoards(), lopsided, [["bet"]], iterations=10, batching="each")
    by = {s["player"]: s for s in a.subgames}
    assert not by[1]["merged"] and "player 0's alternative values" in by[1]["unmerged"]
    assert by[0]["merged"] and by[0]["unmerged"] is None       # its data are symmetric
    # player 1's rows come from the same unmerged re-solve: bit for bit
    full = a.lowered
    rows = [r for r, k in enumerate(full.row_keys()) if k is not None and k[0] == 1
            and k[1][1][:1] == ("bet",)]
    assert np.array_equal(a.table[rows], b.table[rows])
    # every subgame unmerged: bit for bit the merges=False re-solve
    probs[profile.row(0, (1, ())), :2] = (0.2, 0.8)          # hand 1 bets more than 0
    both = jaxcfr.Profile(profile.keys, profile.actions, probs)
    a, b = _resolves(TwoBoards(), both, [["bet"]], iterations=10, batching="each")
    assert not any(s["merged"] for s in a.subgames)
    assert "player 0's deal weights" in a.subgames[0]["unmerged"]
    assert np.array_equal(a.profile.probs, b.profile.probs)
    assert a.metrics == b.metrics


# -- a hold'em turn (Td9d6h5d: clubs ~ spades) -------------------------------------------

TURN = ("holdem_spot(board='Td9d6h5d', ranges=('AA,KK,QQ,AKs,T9s', 'AA,KK,JJ,AQs,87s'), "
        "pot=100, stack=200, bets='60%, a', raises='2.5x')")


@pytest.mark.slow
def test_a_turn_subgame_is_resolved_merged_as_unmerged():
    blueprint = jaxcfr.solve(TURN, "cfr+", 8, precision="float64")
    assert blueprint.lowered.merged
    context = PublicContext(TURN, blueprint.to_profile())
    a, b = (resolve_subgames(TURN, None, [["Check"]], iterations=8, precision="float64",
                             batching="each", merges=m, context=context)
            for m in (True, False))
    assert all(s["merged"] > 0 and s["unmerged"] is None for s in a.subgames)
    assert all(not s["merged"] for s in b.subgames)
    _agree(a, b, 1e-9)
    # AsAh bets at the root, AhAc not: player 0's range after a check breaks the
    # symmetry of player 0's re-solve (player 1's keeps it: its data are player 0's
    # prior, player 1's range and player 0's values below, all symmetric)
    profile = blueprint.to_profile()
    probs = np.array(profile.probs)
    probs[profile.row(0, ("AsAh", ())), :3] = (0.5, 0.5, 0.0)
    probs[profile.row(0, ("AhAc", ())), :3] = (1.0, 0.0, 0.0)
    lopsided = jaxcfr.Profile(profile.keys, profile.actions, probs)
    context = PublicContext(TURN, lopsided)
    a, b = (resolve_subgames(TURN, None, [["Check"]], iterations=4, precision="float64",
                             batching="each", merges=m, context=context)
            for m in (True, False))
    by = {s["player"]: s for s in a.subgames}
    assert not by[0]["merged"] and "player 0's deal weights" in by[0]["unmerged"]
    assert by[1]["merged"] > 0
    rows = [r for r, k in enumerate(a.lowered.row_keys()) if k is not None and k[0] == 0]
    assert np.array_equal(a.table[rows], b.table[rows])


# -- the resolve command names the merged games ----------------------------------------

def test_the_isomorphism_line_counts_merged_and_broken_games():
    from jaxcfr.cli.resolve import isomorphism_line
    why = "player 0's deal weights (its range at the node) differ between ..."
    assert isomorphism_line([{"merged": 26, "unmerged": None}] * 2) == (
        "2 of 2 gadget games on merged trees (suit isomorphism)")
    assert isomorphism_line([{"merged": 0, "unmerged": why}, {"merged": 26}]) == (
        "1 of 2 gadget games on merged trees (suit isomorphism); 1 break the suit symmetry "
        f"(every chance outcome walked): {why}")
    # a history tree's games, or nothing merged below the nodes: no line
    assert isomorphism_line([{"nodes": 3}, {"merged": 0, "unmerged": None}]) is None


@pytest.mark.slow
def test_the_resolve_command_reports_the_merged_games(tmp_path, capsys):
    from jaxcfr.cli.app import main
    blueprint = jaxcfr.solve(SMALL, "cfr+", 4, precision="float64")
    assert blueprint.lowered.merged
    profile = blueprint.to_profile()
    profile.game = SMALL
    profile.save(tmp_path / "bp")
    command = ["resolve", SMALL, str(tmp_path / "bp.npz"), "--at", "Check", "--iterations",
               "4", "--precision", "float64", "--batching", "one", "--no-cache"]
    assert main(command + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["subgame_games"] == 2 and report["merged_games"] == 2
    assert report["unmerged"] == []
    assert main(command) == 0
    assert ("isomorphism     2 of 2 gadget games on merged trees (suit isomorphism)"
            in capsys.readouterr().out)
