"""Sizes before walking and the memory budget: the estimate covers what is allocated.

* the host's peak while lowering (tracemalloc: Python objects and NumPy buffers) is
  within the per-node part of :func:`jaxcfr.memory_footprint` (the fixed part aside);
* XLA's own memory analysis of the compiled step and evaluation is within the
  device part (the fixed part aside);
* reference games count their trees exactly and refuse parameters past
  ``LARGEST_TREE``, naming the range and why; the size probe and the displays.
"""

from __future__ import annotations

import io
import pathlib
import sys
import tracemalloc

import jax
import numpy as np
import pytest

import jaxcfr
from jaxcfr import GameError
from jaxcfr.lowering import budget
from jaxcfr.lowering.budget import MemoryFootprint
from jaxcfr.solvers.analytics import _metrics
from jaxcfr.cli.app import main
from jaxcfr.game import LARGEST_TREE
from jaxcfr.engine.loop import lower_reporting
from jaxcfr.runs.progress import Status

try:
    from tests import broken_games as bg
    from tests import cfr_cases as C
except ImportError:  # tests/ is not a package: pytest put it on sys.path
    import broken_games as bg
    import cfr_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "efg"


def variable(estimate: MemoryFootprint) -> tuple[int, int]:
    """``(lowering, device)`` without their fixed parts."""
    return (estimate.lowering - budget._LOWERING_FIXED, estimate.device - budget._DEVICE_FIXED)


def kept_bytes(lowered) -> int:
    """The ``LoweredGame``'s own host bytes, counted: its arrays' ``nbytes`` (tensors,
    pre-order, the labels' index) and the rows' tables (``sys.getsizeof``, shared objects
    once)."""
    seen: set[int] = set()

    def deep(x) -> int:
        if id(x) in seen:
            return 0
        seen.add(id(x))
        n = sys.getsizeof(x)
        if isinstance(x, (tuple, list)):
            n += sum(deep(v) for v in x)
        return n

    keys = lowered.infoset_keys                 # (an InfosetKeys: players and keys)
    return (lowered.nbytes + np.asarray(lowered.preorder).nbytes
            + lowered.node_action.index.nbytes + keys.players.nbytes + deep(keys.keys)
            + deep(lowered.infoset_actions))


@pytest.mark.parametrize("name", ["goofspiel(cards=5)", "leduc_poker", "kuhn_poker(players=4)",
                                  "liars_dice(sides=5)"])
def test_the_lowering_estimate_brackets_the_host_peak_and_what_is_kept(name):
    # the estimate covers the peak (Python objects and NumPy buffers) and the kept game's
    # counted bytes, and over-counts neither by much (the per-node figures are measured)
    game = jaxcfr.load_game(name)
    tracemalloc.start()
    try:
        lowered = jaxcfr.lower(game, workers=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    est = jaxcfr.memory_footprint(lowered.num_nodes, lowered.num_rows, lowered.max_actions,
                                 lowered.num_players)
    per_node = (peak / lowered.num_nodes, variable(est)[0] / lowered.num_nodes)
    assert peak <= variable(est)[0] <= 1.4 * peak, per_node
    kept = kept_bytes(lowered)
    assert lowered.nbytes < kept <= est.lowered <= 1.15 * kept, (kept, est.lowered)


@pytest.mark.parametrize("name, solver", [("kuhn_poker(players=3)", jaxcfr.cfr),
                                          ("leduc_poker", jaxcfr.cfr_plus)])
def test_the_device_estimate_covers_xla_memory_analysis(name, solver):
    runner = C.runner(name, solver())              # the runners test_solvers compiles too
    lowered = runner.lowered
    state, _ = runner.compile(runner.init())         # then the analyses below are cache hits
    with runner.scope():
        chunk = runner.chunk_program(state).compile().memory_analysis()
        table = runner._profile(state, True)
        metrics = _metrics.lower(runner._evaluation_tensors(), table,
                                 jax.numpy.asarray(lowered.br_rounds), structure=lowered.structure,
                                 games_batched=False, normalise=False,
                                 values=runner.evaluation_values).compile().memory_analysis()
    # the peak of a solve: arguments (tensors, state) and the larger of the temporaries
    need = (max(chunk.argument_size_in_bytes, metrics.argument_size_in_bytes)
            + chunk.output_size_in_bytes
            + max(chunk.temp_size_in_bytes, metrics.temp_size_in_bytes))
    est = jaxcfr.memory_footprint(lowered.num_nodes, lowered.num_rows, lowered.max_actions,
                                  lowered.num_players)
    assert need <= variable(est)[1], (need, variable(est)[1])


def test_the_budget_follows_available_memory(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXCFR_MEMORY_BUDGET", raising=False)
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemFree:         1000000 kB\n"
                       "MemAvailable:   12000000 kB\n")
    assert budget.default_memory_budget(str(meminfo)) == int(12_000_000 * 1024 * 0.5)
    assert budget.default_memory_budget(str(tmp_path / "none")) == 8 << 30
    assert budget.default_memory_budget() > 0                    # this machine's
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "3e9")
    assert budget.default_memory_budget(str(meminfo)) == 3_000_000_000


def test_validate_says_when_a_game_is_too_large(monkeypatch, capsys):
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", str(100 << 20))
    assert main(["validate", "kuhn_poker(players=6)", "--trajectories", "8"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("conforms (8 trajectories, seed 0)")
    assert "too large to lower: 1,944,020 nodes need about" in out[1]
    assert "over the memory budget of 100.0 MiB" in out[1]
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", str(10 << 30))
    assert main(["validate", "kuhn_poker(players=6)", "--trajectories", "8"]) == 0
    assert "within the memory budget of 10.0 GiB" in capsys.readouterr().out


# -- reference games: exact sizes, parameter ranges ------------------------------------------
@pytest.mark.parametrize("name", ["kuhn_poker", "kuhn_poker(players=4)", "leduc_poker",
                                  "leduc_poker(ranks=4, suits=1)", "goofspiel(cards=4)",
                                  "liars_dice(sides=3)", "liars_dice(dice=2, sides=2)",
                                  str(FIXTURES / "different_depths.efg")])
def test_tree_size_is_exact(name):
    game = jaxcfr.load_game(name)
    size = jaxcfr.probe_size(game)
    lowered = jaxcfr.lower(game)
    assert size.exact and size.nodes == lowered.num_nodes == game.tree_size()
    if name.startswith("liars_dice"):       # it counts its information sets too
        assert size.rows == game.infoset_count() == lowered.num_rows - 1
        assert size.max_actions == lowered.max_actions
    else:
        assert size.rows == 0


def test_the_refusal_before_the_walk_counts_the_rows(monkeypatch):
    # liars_dice(sides=9): 42,467,257 nodes and 2,359,297 rows of 18 actions, counted by
    # the game; a budget between the estimate without its rows and with them
    game = jaxcfr.load_game("liars_dice(sides=9)")
    size = jaxcfr.probe_size(game)
    assert (size.nodes, size.rows, size.max_actions) == (42_467_257, 2_359_296, 18)
    without = budget.footprint_bytes(size.nodes, 0, 18, 2)
    with_rows = budget.footprint_bytes(size.nodes, size.rows + 1, 18, 2)
    assert with_rows > 1.1 * without

    def walked(*args, **kwargs):
        raise AssertionError("the walk started")

    monkeypatch.setattr(jaxcfr.lowering.lower, "walk", walked)
    monkeypatch.setattr(jaxcfr.lowering.parallel, "walk_parallel", walked)
    with pytest.raises(jaxcfr.MemoryBudgetError, match=r"42,467,257 nodes and 2,359,296 "
                       r"information sets, which needs about"):
        jaxcfr.lower(game, memory_budget=(without + with_rows) // 2)


@pytest.mark.parametrize("text, expected", [
    ("kuhn_poker(players=8)", r"players must be an integer in 2\.\.7, got 8: 8 players make a "
                              r"tree of 743,801,770 nodes"),
    ("goofspiel(cards=13)", r"cards must be an integer in 2\.\.7, got 13: 13 cards make"),
    ("liars_dice(dice=2, sides=5)", r"dice=2, sides=5 make a tree of 1,310,719,531 nodes.*"
                                    r"with dice=2, sides may be 2\.\.4"),
    ("liars_dice(dice=3)", r"with dice=3, sides must be 2"),
    ("liars_dice(dice=9, sides=2)", r"dice may be 1\.\.4"),
    ("liars_dice(sides=11)", r"sides may be 2\.\.10"),
    ("leduc_poker(ranks=40, suits=4)", r"160 cards make a tree of .* the deck may hold 3\.\.150"),
])
def test_parameters_past_what_can_be_solved_are_refused(text, expected):
    with pytest.raises(GameError, match=expected) as info:
        jaxcfr.load_game(text)
    assert f"{LARGEST_TREE:,}" in str(info.value)


def test_the_largest_allowed_parameters_fit():
    for text in ("kuhn_poker(players=7)", "goofspiel(cards=7)", "liars_dice(sides=10)",
                 "liars_dice(dice=2, sides=4)", "liars_dice(dice=4, sides=2)",
                 "leduc_poker(ranks=75, suits=2)"):
        assert jaxcfr.load_game(text).tree_size() <= LARGEST_TREE


# -- the size probe ------------------------------------------------------------------------
def test_the_probe_estimates_a_game_without_its_own_count():
    game = bg.Toy()                                  # no tree_size(): Knuth's probes
    size = jaxcfr.probe_size(game, seed=3)
    true = jaxcfr.lower(game).num_nodes
    assert not size.exact and size.probes == 256     # a small tree stops early
    assert abs(size.nodes - true) <= 3 * size.stderr + 1e-9, (size, true)
    assert size.max_actions == 2 and size.max_depth == 4
    assert "random-probe estimate" in size.describe()


def test_the_probe_is_unbiased_on_an_uneven_tree():
    # Liar's dice (3 sides, counted exactly as 1,147 nodes), probed without its count.
    class Probed(type(jaxcfr.load_game("liars_dice(sides=3)"))):
        def tree_size(self):
            return None

    size = jaxcfr.probe_size(Probed(sides=3), probes=4096, seed=1)
    assert abs(size.nodes - 1147) <= 3 * size.stderr


def test_the_probe_cannot_size_sampled_chance_nor_disturb_the_game():
    assert jaxcfr.probe_size(jaxcfr.load_game("sampled_dice_poker")) is None
    game = jaxcfr.load_game("leduc_poker")
    before = repr(game)
    jaxcfr.probe_size(game)
    assert repr(game) == before


# -- the display (lowering's news and progress go through the run's status line) ---------------
def test_the_status_line_shows_lowering_news_progress_and_sizes(monkeypatch):
    out = io.StringIO()
    status = Status(out, tty=False, every=0.0)
    monkeypatch.setattr(jaxcfr.engine.loop, "NEWS_AFTER", 0.0)       # as if slow
    lowered = lower_reporting("liars_dice(sides=4)", status, workers=1, cache=False)
    lines = out.getvalue().splitlines()
    assert lines[0] == "lowering liars_dice(sides=4) ..."
    assert any(line.startswith("8,181 nodes, about ") for line in lines)   # exact: tree_size()
    assert any("nodes/s" in line and line.startswith("lowering liars_dice(sides=4): ")
               for line in lines)
    assert lines[-1].startswith(f"lowered liars_dice(sides=4): {lowered.num_nodes:,} nodes")


def test_the_status_line_redraws_one_line_on_a_terminal():
    out = io.StringIO()
    status = Status(out, tty=True, redraw_every=0.0)
    hook = status.nodes("lowering x")
    for n in (4096, 8192):
        hook(n)
    status.close()
    text = out.getvalue()
    assert "\n" not in text.rstrip("\n") and text.endswith("\n")     # one line, redrawn
    assert "8192 nodes" in text.rsplit("\r", 1)[1]


def test_former_names_are_the_same_functions():
    # issue 29 item 7 renamed the size and memory estimates; the old spellings stay callable
    assert jaxcfr.estimate_size is jaxcfr.probe_size
    assert jaxcfr.memory_footprint is jaxcfr.memory_footprint
    assert set(jaxcfr.FORMER_NAMES) & set(jaxcfr.__all__) == set()
