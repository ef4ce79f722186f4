"""Node locks solved on the public tree with merged (suit-isomorphic) chance outcomes when
they keep the suit symmetry (``jaxcfr.api.locks.symmetric_lock``); the unmerged tree
otherwise, as before (docs/holdem.md "Node locking", "Locks on the merged tree").

Oracles: a lock that every merge's renaming maps to itself resolves on the merged tree to
the unmerged tree's lock at every information set read from each row (exactly); solved
there it gives the unmerged locked solve's profile (every information set of the unmerged
game), values, best-response values and NashConv to 1e-9 (float64), on the two-suit game
of tests/test_public_merged_profiles.py and on a hold'em turn; a lock that breaks the
symmetry (one card of a class, one suit of a class of hands, a probability off by 1e-12)
is not taken, is solved on the unmerged tree bit for bit as the unmerged game, and says
so on the command line.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import jaxcfr
from jaxcfr.api.locks import LockError, resolve_lock, symmetric_lock
from jaxcfr.lowering.public import lower_public
from jaxcfr_games.holdem.cards import card
from test_public_merged_profiles import TwoBoards

#: Symmetric: the same lock after both cards of a class, and at the root on both hands of
#: a rank (the swap of suits maps hand 2 to 3).
SYMMETRIC = {(("check", 2), None): {"bet": 1.0}, (("check", 3), None): {"bet": 1.0},
             ((), 2): {"check": 0.3, "bet": 0.7}, ((), 3): {"check": 0.3, "bet": 0.7}}


@pytest.fixture(scope="module")
def trees():
    return lower_public(TwoBoards(merge=False)), lower_public(TwoBoards())


def test_a_symmetric_lock_resolves_on_the_merged_rows(trees):
    plain, merged = trees
    got = symmetric_lock(merged, SYMMETRIC)
    want = resolve_lock(plain, SYMMETRIC)
    assert got is not None and got.mask.sum() < want.mask.sum()
    row_of = {key: r for r, key in enumerate(plain.infoset_keys)}
    keys, _, rows = merged.expanded_rows()
    for key, row in zip(keys, rows):               # every information set of the game
        r = row_of[key]
        assert got.mask[row] == want.mask[r]
        assert np.array_equal(got.strategy[row], want.strategy[r])
    assert resolve_lock(merged, SYMMETRIC).mask.sum() == got.mask.sum()


@pytest.mark.parametrize("lock", [
    {(("check", 3), None): {"bet": 1.0}},                  # below one card of the class
    {((), 2): {"check": 0.3, "bet": 0.7}},                 # above: hand 2, not hand 3
    {((), 2): {"check": 0.3, "bet": 0.7}, ((), 3): {"check": 0.3 + 1e-12,
                                                    "bet": 0.7 - 1e-12}},   # tolerance 0
])
def test_a_lock_that_breaks_the_symmetry_is_not_taken(trees, lock):
    _, merged = trees
    assert symmetric_lock(merged, lock) is None
    with pytest.raises(LockError, match="breaks the suit symmetry.*merges=False"):
        resolve_lock(merged, lock)


def test_without_a_renaming_of_the_outcome_no_lock_is_taken():
    # a merge whose renaming does not take its outcome to its representative says
    # nothing of the other steps: the check cannot be made
    assert symmetric_lock(lower_public(TwoBoards(renaming=False)), SYMMETRIC) is None


def test_a_lock_of_tables_is_the_unmerged_trees(trees):
    plain, merged = trees
    tables = resolve_lock(plain, SYMMETRIC)             # [I, A] of the unmerged tree
    assert symmetric_lock(merged, tables) is None
    assert symmetric_lock(plain, SYMMETRIC) is None     # nothing merged: public_lock's


def test_errors_are_the_unmerged_trees(trees):
    _, merged = trees
    with pytest.raises(LockError, match="'raise' is not a public action or outcome"):
        symmetric_lock(merged, {(("raise",), None): {"bet": 1.0}})
    with pytest.raises(LockError, match="sum to 2"):
        symmetric_lock(merged, {((), None): {"bet": 2.0}})
    with pytest.raises(LockError, match="sum to 2"):
        jaxcfr.solve_public(TwoBoards(), "cfr+", 2, lock={((), None): {"bet": 2.0}})


def _agree(a, b, tol=1e-9):
    pa, pb = a.profile(), b.profile()
    assert set(pa) == set(pb)
    assert max(abs(pa[k][x] - pb[k][x]) for k in pa for x in pa[k]) < tol
    for key in ("values", "best_response_values", "nash_conv", "exploitability"):
        assert np.allclose(a.final[key], b.final[key], rtol=0, atol=tol), key


def test_a_symmetric_lock_is_solved_merged_as_unmerged():
    a = jaxcfr.solve_public(TwoBoards(merge=False), "cfr+", 30, precision="float64",
                            lock=SYMMETRIC)
    b = jaxcfr.solve_public(TwoBoards(), "cfr+", 30, precision="float64", lock=SYMMETRIC)
    assert len(b.lowered.merged) == 6 and a.lowered.merged == ()
    _agree(a, b)
    assert b.strategy(0, 3, ("check", 3)) == {"check": 0.0, "bet": 1.0}
    assert b.strategy(0, 2, ()) == pytest.approx({"check": 0.3, "bet": 0.7}, abs=1e-15)


def test_a_lock_that_breaks_it_is_solved_unmerged_bit_for_bit():
    lock = {((), 2): {"check": 0.3, "bet": 0.7}, (("check", 3), None): {"bet": 1.0}}
    a = jaxcfr.solve_public(TwoBoards(merge=False), "cfr+", 10, precision="float64",
                            lock=lock)
    b = jaxcfr.solve_public(TwoBoards(), "cfr+", 10, precision="float64", lock=lock)
    assert b.lowered.merged == ()
    assert np.array_equal(a.average_strategy, b.average_strategy)
    assert a.final["values"] == b.final["values"]


# -- a hold'em turn (Td9d6h5d: clubs ~ spades) -------------------------------------------

TURN = ("holdem_spot(board='Td9d6h5d', ranges=('AA,KK,QQ,AKs,T9s', 'AA,KK,JJ,AQs,87s'), "
        "pot=100, stack=200, bets='60%, a', raises='2.5x'{})")
#: AA (a class: both suits) checks at the root; after a check-check, the rivers 2c and 2s
#: (one class) are locked alike, and KK after 2h (a card the swap fixes).
TURN_LOCK = {((), "AA"): {"Check": 1.0},
             ("Check, Check, 2c", "*"): {"Check": 0.5, "Bet(60)": 0.5},
             ("Check, Check, 2s", "*"): {"Check": 0.5, "Bet(60)": 0.5},
             ("Check, Check, 2h", "KK"): {"Check": 1.0}}


def test_a_symmetric_lock_on_a_turn_is_solved_merged_as_unmerged():
    a = jaxcfr.solve(TURN.format(", isomorphism=False"), "cfr+", 8, precision="float64",
                     lock=TURN_LOCK)
    b = jaxcfr.solve(TURN.format(""), "cfr+", 8, precision="float64", lock=TURN_LOCK)
    assert len(b.lowered.merged) == 91 and a.lowered.merged == ()
    _agree(a, b)
    assert b.strategy(0, "KsKh", ("Check", "Check", card("2h"))) == {
        "Check": 1.0, "Bet(60)": 0.0, "AllIn(200)": 0.0}


def test_a_lock_that_breaks_it_on_a_turn_is_solved_unmerged(tmp_path, capsys):
    from jaxcfr.cli import app
    lock = [{"history": [], "hand": "AsAh", "strategy": {"Check": 1}}]   # not AcAh
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock))
    a = jaxcfr.solve(TURN.format(", isomorphism=False"), "cfr+", 4, precision="float64",
                     lock=str(path))
    b = jaxcfr.solve(TURN.format(""), "cfr+", 4, precision="float64", lock=str(path))
    assert b.lowered.merged == ()
    assert np.array_equal(a.average_strategy, b.average_strategy)
    args = ["solve", TURN.format(""), "--iterations", "2", "--lock", str(path), "--json"]
    assert app.main(args) == 0
    assert "the lock breaks the suit symmetry: solved without isomorphism" in \
        capsys.readouterr().err
    path.write_text(json.dumps([{"history": [], "hand": "AA", "strategy": {"Check": 1}}]))
    assert app.main(args) == 0
    err = capsys.readouterr().err
    assert "suit symmetry" not in err and f"{b.lowered.num_nodes:,} public nodes" not in err
    assert "1,526 public nodes" in err


CONFIG = """
[game]
name = "{game}"

[solver]
algorithm = "postflop-dcfr"
iterations = 20
lock = "{lock}"

[run]
eval_every = 10
chunk = 10
plot = false
"""


@pytest.mark.parametrize("hand,merged", [("AA", True), ("AsAh", False)])
def test_a_config_lock_is_solved_merged_when_it_keeps_the_symmetry(tmp_path, capsys, hand,
                                                                     merged):
    from jaxcfr.cli import app
    lock = [{"history": [], "hand": hand, "strategy": {"Check": 1}}]
    (tmp_path / "lock.json").write_text(json.dumps(lock))
    path = tmp_path / "turn.toml"
    path.write_text(CONFIG.format(game=TURN.format("").replace('"', "'"), lock="lock.json"))
    assert app.main(["train", str(path), "--out", str(tmp_path / "run"), "--json"]) == 0
    out = capsys.readouterr()
    assert ("the lock breaks the suit symmetry" in out.err) is not merged
    assert ("2,085 public nodes" in out.err) is not merged
    got = json.loads(out.out.strip().splitlines()[-1])["final"]
    want = jaxcfr.solve(TURN.format("" if merged else ", isomorphism=False"),
                        "postflop-dcfr", 20, device=jaxcfr.DeviceOptions(chunk=10),
                        lock=lock_of(lock))
    assert got["values"] == pytest.approx(want.final["values"], rel=1e-6)
    assert got["exploitability"] == pytest.approx(want.final["exploitability"], rel=1e-6)


def lock_of(entries):
    return {(tuple(e["history"]), e["hand"]): e["strategy"] for e in entries}


def test_a_monotone_turn_checks_every_permutation_of_three_suits():
    # Td9d6d5d: clubs, hearts and spades alike (3-cycles: a renaming taken the wrong way
    # would refuse the symmetric lock); the rivers 2c, 2h, 2s form one class
    spot = jaxcfr.load_game(TURN.format("").replace("Td9d6h5d", "Td9d6d5d"))
    merged = lower_public(spot)
    river = {("Check, Check, " + c, "*"): {"Check": 0.5, "Bet(60)": 0.5}
             for c in ("2c", "2h", "2s")}
    lock = {((), "AA"): {"Check": 1.0}, ((), "AKs"): {"Check": 0.5, "Bet(60)": 0.5}, **river}
    assert symmetric_lock(merged, lock) is not None
    del lock[("Check, Check, 2s", "*")]
    assert symmetric_lock(merged, lock) is None
    assert symmetric_lock(merged, {((), "AhAc"): {"Check": 1.0}}) is None
    assert symmetric_lock(merged, {((), "AhAc"): {"Check": 1.0}, ((), "AsAc"): {
        "Check": 1.0}, ((), "AsAh"): {"Check": 1.0}}) is not None


def _runner_notes(lock):
    """What ``make_runner`` says on the two-suit game under ``lock`` (the status's
    lines), and the LockError's message if it refuses the lock (else ``None``)."""
    import io

    from jaxcfr.api.runners import make_runner
    from jaxcfr.api.solve import SolveOptions
    from jaxcfr.runs.progress import make_status
    buf = io.StringIO()
    try:
        with make_status(quiet=False, stream=buf) as status:
            make_runner(TwoBoards(), SolveOptions.check(
                {"algorithm": "cfr+", "iterations": 2, "lock": lock}), status=status)
    except LockError as e:
        return buf.getvalue(), str(e)
    return buf.getvalue(), None


def test_a_lock_that_names_no_node_is_an_error_not_a_fallback_note():
    """A lock the merged tree cannot resolve is checked on the unmerged tree, and its
    error is the only thing said: no note that it 'breaks the suit symmetry' and is
    'solved without isomorphism' (2026-12-06: the note came first, then the error)."""
    said, error = _runner_notes({(("check", 2), None): {"bet": 1.0}})      # one card only
    assert error is None and "the lock breaks the suit symmetry: solved without" in said
    said, error = _runner_notes({(("raise",), None): {"bet": 1.0}})
    assert "'raise' is not a public action or outcome" in error
    assert "suit symmetry" not in said and "665 public nodes" in said     # checked unmerged
