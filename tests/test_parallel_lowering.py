"""Parallel lowering gives exactly the serial walk's result: tensors, host tables and errors.

The tree is cut at every depth of the small games (so that information sets span
the parts, the top and the parts, and several depths), and at the automatic depth of
larger ones; contract violations must be reported with the serial walk's rule,
history and message whichever way the tree was cut.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import signal

import numpy as np
import pytest

import jaxcfr
from jaxcfr import GameError
from jaxcfr.lowering import lower
from jaxcfr.lowering import parallel
from jaxcfr.lowering import parts
from jaxcfr.lowering.budget import MemoryBudgetError

try:
    from tests import broken_games as bg
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "efg"
BIG = 1 << 40


def assert_same(a: jaxcfr.LoweredGame, b: jaxcfr.LoweredGame) -> None:
    """Every tensor (dtype, shape, values) and every host table equal."""
    for f in a.tensors._fields:
        x, y = getattr(a.tensors, f), getattr(b.tensors, f)
        assert x.dtype == y.dtype and x.shape == y.shape, f
        assert np.array_equal(x, y), f
    assert a.preorder.dtype == b.preorder.dtype and np.array_equal(a.preorder, b.preorder)
    for f in ("level_start", "num_players", "infoset_keys", "infoset_actions", "node_action",
              "nash_value", "constant_sum", "br_rounds", "name"):
        assert getattr(a, f) == getattr(b, f), f


def cut_enumeration(game, depth: int, abstraction=None, run: int | None = 1):
    """The parallel walk cut at ``depth`` with its jobs walked in this process: the
    merged enumeration, or ``None`` where the parallel walk falls back to the serial one.
    ``run``: jobs walked together as one part, at most (``None``: whole runs of
    consecutive jobs, :func:`jaxcfr.lowering.parallel.run_ends`)."""
    players = jaxcfr.game.contract.check_protocol(game)
    try:
        top = parallel.cut(game, players, abstraction, workers=2, size=None, depth=depth)
    except Exception:  # noqa: BLE001 - as walk_parallel: the serial walk reports it
        return None
    if not top.frontier:
        return top
    merge = parts.Merge(top, players)
    ends = parallel.run_ends(top.frontier)
    try:
        j = 0
        while j < len(top.frontier):
            c = ends[j] - j if run is None else min(run, ends[j] - j)
            items = [item for _, item in top.frontier[j:j + c]]
            data, _ = parallel.walk_job(items, top, players, abstraction)
            merge.add_part(parallel.loads(data))
            j += c
    except Exception:  # noqa: BLE001 - a worker's error or the merge's Mismatch
        return None
    return merge.finish()


def lower_cut(game, depth: int, run: int | None = 1
              ) -> tuple[jaxcfr.LoweredGame, jaxcfr.LoweredGame]:
    """``(unsorted, sorted)`` lowered games from the tree cut at ``depth``."""
    enum = cut_enumeration(game, depth, run=run)
    assert enum is not None, depth
    out = lower._build(enum, game, "")
    return out, lower.sort_infosets(out)


SMALL = ["kuhn_poker", "kuhn_poker(players=3)", str(FIXTURES / "different_depths.efg"),
         str(FIXTURES / "3_player.efg"), str(FIXTURES / "authored_kuhn_poker.efg"),
         "rock_paper_scissors", "goofspiel(cards=3)", "liars_dice(sides=2)"]


@pytest.mark.parametrize("name", SMALL)
def test_every_cut_depth_gives_the_serial_result(name):
    game = jaxcfr.load_game(name)
    unsorted = jaxcfr.lower(game, sort_infosets=False, workers=1, name="x")
    ordered = jaxcfr.lower(game, workers=1, name="x")
    # one job a part, whole runs of jobs (and two jobs a part on the smallest games)
    runs = (1, 2, None) if name in ("kuhn_poker", "liars_dice(sides=2)") else (1, None)
    for depth in range(1, ordered.depth + 2):
        for run in runs:
            a, b = lower_cut(game, depth, run)
            assert_same(unsorted, dataclasses.replace(a, name="x"))
            assert_same(ordered, dataclasses.replace(b, name="x"))


@pytest.mark.parametrize("name", ["leduc_poker", str(FIXTURES / "different_depths.efg"),
                                  "liars_dice(sides=4)"])
def test_worker_processes_give_the_serial_result(name):
    game = jaxcfr.load_game(name)
    serial = jaxcfr.lower(game, workers=1)
    logged = []
    both = jaxcfr.lower(game, workers=2, log=logged.append)
    assert any("subtrees below depth" in m for m in logged), logged   # it did run in parallel
    assert_same(serial, both)


class DropRaise:
    """Player 1 never raises (pruned: its rows list the kept actions only)."""

    def actions(self, state, player):
        acts = state.legal_actions()
        return [a for a in acts if a != "raise"] if player == 1 else acts


def test_an_abstraction_is_walked_alike():
    game = jaxcfr.load_game("leduc_poker")
    serial = jaxcfr.lower(game, abstraction=DropRaise(), workers=1, name="x")
    # rows hold the kept actions only: player 1 never lists a raise, and the tree shrinks
    assert all("raise" not in acts for (p, _), acts in zip(serial.infoset_keys,
                                                             serial.infoset_actions) if p == 1)
    assert serial.num_nodes < jaxcfr.lower(game, workers=1).num_nodes
    for depth in (1, 2, 3, 5):
        enum = cut_enumeration(game, depth, DropRaise())
        out = lower.sort_infosets(lower._build(enum, game, "x"))
        assert_same(serial, out)
    assert_same(serial, jaxcfr.lower(game, abstraction=DropRaise(), workers=2, name="x"))


def test_information_sets_spanning_depths_and_parts():
    # different_depths.efg: an information set has members at several depths; cut
    # between them, its members lie in the top and in a part.
    game = jaxcfr.load_game(str(FIXTURES / "different_depths.efg"))
    serial = jaxcfr.lower(game, workers=1, name="x")
    spans = [np.searchsorted(serial.level_start, serial.infoset_members(r), side="right") - 1
             for r in range(serial.num_rows - 1)]
    spans = [d for d in spans if len(set(d.tolist())) > 1]
    assert spans, "the fixture must have an information set spanning depths"
    for depth in sorted({int(x) for d in spans for x in d}):
        assert_same(serial, dataclasses.replace(lower_cut(game, depth)[1], name="x"))


# -- errors --------------------------------------------------------------------------
LOWERABLE_BROKEN = [cls for cls in bg.BROKEN_GAMES + bg.BLIND_SPOTS
                    if cls not in (bg.NeverEnds, bg.NotAGame, bg.ZeroPlayers)]


def _error(game, **kw) -> GameError:
    with pytest.raises(GameError) as info:
        jaxcfr.lower(game, **kw)
    return info.value


@pytest.mark.parametrize("cls", LOWERABLE_BROKEN, ids=lambda c: c.__name__)
def test_contract_violations_are_reported_as_in_the_serial_walk(cls):
    serial = _error(cls(), workers=1)
    both = _error(cls(), workers=2)
    assert (both.rule, both.history) == (serial.rule, serial.history)
    # the message is the same too, but where the game itself changes under the walk (its
    # returns change per call; its clones share a history, so the first walk's steps show)
    if both.rule not in ("nondeterministic", "clone"):
        assert str(both) == str(serial)
    for depth in range(1, 5):       # cut anywhere, the parallel walk gives no result
        assert cut_enumeration(cls(), depth) is None, depth


@pytest.mark.parametrize("name", ["gilboa1997_fig1_absent_minded_driver", "myerson"])
def test_efg_without_perfect_recall_reports_the_same_error(name):
    path = str(FIXTURES / f"{name}.efg")
    serial = _error(jaxcfr.load_game(path), workers=1)
    both = _error(jaxcfr.load_game(path), workers=2)
    assert str(both) == str(serial) and "perfect recall" in str(serial)
    for depth in range(1, 6):
        assert cut_enumeration(jaxcfr.load_game(path), depth) is None


def test_a_violation_between_two_parts_is_found_at_the_merge():
    # InconsistentActionOrder's clashing members lie below different coin outcomes: cut
    # at depth 1 each part is clean on its own, and only the merge sees the clash.
    game = bg.InconsistentActionOrder()
    top = parallel.cut(game, 2, None, workers=2, size=None, depth=1)
    assert len(top.frontier) == 2
    walked = [parallel.loads(parallel.walk_job([item], top, 2, None)[0])
              for _, item in top.frontier]
    merge = parts.Merge(top, 2)
    merge.add_part(walked[0])
    with pytest.raises(parts.Mismatch):
        merge.add_part(walked[1])


# -- progress, budget, failures ------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_progress_is_called_with_nodes_walked(workers, monkeypatch):
    monkeypatch.setattr(parallel, "POLL_SECONDS", 0.001)
    seen = []
    lowered = jaxcfr.lower(jaxcfr.load_game("liars_dice(sides=3)"), workers=workers,
                           progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == lowered.num_nodes
    if workers == 1:
        assert len(seen) >= lowered.num_nodes // 4096


def test_memory_budget_stops_the_parallel_walk(monkeypatch):
    monkeypatch.setattr(lower, "probe_size", lambda game: None)
    with pytest.raises(MemoryBudgetError):
        jaxcfr.lower(jaxcfr.load_game("liars_dice(sides=4)"), workers=2,
                     memory_budget=200_000)


class DiesInAWorker(bg.Toy):
    """A valid toy game whose step kills the process it runs in, unless that is the parent."""

    def __init__(self):
        super().__init__()
        self.parent_pid = os.getpid()

    def step(self, action):
        if os.getpid() != self.parent_pid and len(self.h) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        super().step(action)


def test_a_dead_worker_is_a_clear_error():
    """Which worker, how it died, that the walk can be retried; a one-line error on the
    command line, not an internal error (issue 18, item 4: this was a RuntimeError)."""
    from jaxcfr.cli.app import describe_error
    with pytest.raises(parallel.LoweringWorkerDied,
                       match=r"lowering worker [12] of 2 \(pid \d+\) died by signal 9 "
                             r"\(SIGKILL, out of memory\?\).*can be retried") as info:
        parallel.walk_parallel(DiesInAWorker(), 2, None, workers=2, size=None, budget=BIG,
                               cut_depth=1)
    assert describe_error(info.value).startswith("error: lowering worker")


class IdentityKeys(bg.Toy):
    """Information-set keys compared by identity (one cached object per key string)."""

    class Key:
        pass

    def infoset_key(self, player):
        text = super().infoset_key(player)
        return self.KEYS.setdefault(text, IdentityKeys.Key())

    KEYS: dict = {}


def test_keys_that_cannot_cross_processes_fall_back_to_one_process():
    serial = jaxcfr.lower(IdentityKeys(), workers=1)
    assert cut_enumeration(IdentityKeys(), 1) is None
    both = jaxcfr.lower(IdentityKeys(), workers=2)
    assert both.infoset_keys == serial.infoset_keys


def test_workers_resolution(monkeypatch):
    small = jaxcfr.probe_size(jaxcfr.load_game("kuhn_poker"))
    assert parallel.resolve_workers(None, small) == 1
    big = small._replace(nodes=10 * parallel.PARALLEL_MIN_NODES)
    monkeypatch.setenv("JAXCFR_LOWERING_WORKERS", "3")
    assert parallel.resolve_workers(None, big) == 3
    assert parallel.resolve_workers(5, small) == 5
    with pytest.raises(ValueError):
        parallel.resolve_workers(0, small)
    monkeypatch.setattr(parallel.multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert parallel.resolve_workers(4, big) == 1


# -- scaling: runs of jobs, keys found in bulk, many workers ---------------------------------
def test_runs_of_jobs_cover_the_frontier_in_order():
    """Workers take runs of consecutive jobs (no top node between them): many at first,
    one at the end, never across a top node."""
    game = jaxcfr.load_game("liars_dice(sides=4)")
    top = parallel.cut(game, 2, None, workers=16, size=None)
    jobs = top.frontier
    ends = parallel.run_ends(jobs)
    assert ends[-1] == len(jobs) and all(j < e for j, e in enumerate(ends))
    taken, j = [], 0
    while j < len(jobs):
        c = parallel.chunk(j, len(jobs), 2, ends)
        assert 1 <= c <= ends[j] - j
        assert len({before for before, _ in jobs[j:j + c]}) == 1
        taken.append(c)
        j += c
    assert sum(taken) == len(jobs) and max(taken) > 1 and taken[-1] == 1
    # a part of jobs with a top node between them is refused (the serial walk runs)
    split = next(j for j in range(len(jobs) - 1) if ends[j] == j + 1)
    merge = parts.Merge(top, 2)
    j = 0
    while j < split:
        merge.add_part(parallel.loads(parallel.walk_job([jobs[j][1]], top, 2, None)[0]))
        j += 1
    data = parallel.walk_job([jobs[split][1], jobs[split + 1][1]], top, 2, None)[0]
    with pytest.raises(parts.Mismatch):
        merge.add_part(parallel.loads(data))


def test_the_key_table_finds_what_a_dict_finds():
    import random
    from jaxcfr.lowering.rowkeys import KeyTable, decode, encode
    rng = random.Random(0)
    pool = ["".join(rng.choice("ab\x00\u00e9\ud800") for _ in range(rng.randint(0, 12)))
            for _ in range(300)]
    for _ in range(30):
        table, known = KeyTable(), {}
        for _ in range(8):
            pairs = list(dict.fromkeys((rng.randint(0, 2), k) for k in rng.sample(pool, 60)))
            keys, players = [k for _, k in pairs], np.array([p for p, _ in pairs])
            hashes, lengths, words = encode(keys)
            assert decode(lengths, words) == keys      # NULs, surrogates, non-ASCII
            rows = table.find(hashes, lengths, words, players)
            assert rows.tolist() == [known.get(pk, -1) for pk in pairs]
            new = np.flatnonzero(rows < 0)
            added = table.add(hashes[new], lengths[new], words[new], players[new])
            known.update(zip([pairs[i] for i in new.tolist()], added.tolist()))


class TupleKeys(jaxcfr.Game):
    """Liar's dice whose player 1 has tuple keys (player 0's stay strings)."""

    num_players = 2

    def __init__(self, inner):
        self.inner = inner

    def clone(self):
        return TupleKeys(self.inner.clone())

    def is_terminal(self):
        return self.inner.is_terminal()

    def is_chance(self):
        return self.inner.is_chance()

    def player_to_act(self):
        return self.inner.player_to_act()

    def chance_outcomes(self):
        return self.inner.chance_outcomes()

    def sample_chance(self, rng):
        return self.inner.sample_chance(rng)

    def legal_actions(self):
        return self.inner.legal_actions()

    def step(self, action):
        self.inner.step(action)

    def terminal_returns(self):
        return self.inner.terminal_returns()

    def infoset_key(self, player):
        key = self.inner.infoset_key(player)
        return (player, key) if player == 1 else key


@pytest.mark.parametrize("mix", ["exact", "colliding", "all-equal"])
def test_keys_found_in_bulk_or_by_dict_give_the_serial_result(mix, monkeypatch):
    """Str keys are found in bulk; other keys (here from the part after the top), and
    any hash collision (forced: 8 or 1 distinct mixed hashes), fall back to dicts."""
    from jaxcfr.lowering.rowkeys import KeyTable
    if mix != "exact":
        mask = 7 if mix == "colliding" else 0
        monkeypatch.setattr(KeyTable, "_mix", staticmethod(lambda hashes, players:
                                                           hashes & mask))
    dicts = []          # per merge: whether it ended finding rows by dict
    real = parts.Merge.finish
    monkeypatch.setattr(parts.Merge, "finish", lambda self: (dicts.append(self.keys is None),
                                                             real(self))[1])
    for game in (jaxcfr.load_game("liars_dice(sides=3)"),
                 TupleKeys(jaxcfr.load_game("liars_dice(sides=3)"))):
        unsorted = jaxcfr.lower(game, sort_infosets=False, workers=1, name="x")
        ordered = jaxcfr.lower(game, workers=1, name="x")
        for depth in range(1, 5):
            for run in (1, None):
                dicts.clear()
                a, b = lower_cut(game, depth, run)
                assert_same(unsorted, dataclasses.replace(a, name="x"))
                assert_same(ordered, dataclasses.replace(b, name="x"))
                # the dicts were used where they must be, and only there
                assert dicts == [isinstance(game, TupleKeys) or mix != "exact"], (depth, run)


def test_more_workers_than_cores():
    """16 workers (the GPU machine's cores) on any host: 8 jobs a worker at the cut,
    forked processes beyond the cores, the serial result."""
    game = jaxcfr.load_game("liars_dice(sides=4)")
    top = parallel.cut(game, 2, None, workers=16, size=jaxcfr.probe_size(game))
    assert len(top.frontier) >= 8 * 16
    serial = jaxcfr.lower(game, workers=1)
    logged = []
    both = jaxcfr.lower(game, workers=16, log=logged.append)
    assert any("with 16 processes" in m for m in logged), logged
    assert_same(serial, both)
