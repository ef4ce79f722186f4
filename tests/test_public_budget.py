"""Public trees and the memory budget, and the status line while one lowers.

Oracles: the footprint's count of the tensors is the lowered tensors' own byte count
(from above, within 10%), and its device part bounds XLA's memory analysis of the
compiled step; a budget under that count refuses the game, during the walk (before any
level is reported) or at its end, with the sizes, the need, the budget and how to raise
it, from :func:`jaxcfr.lower_public`, ``JAXCFR_MEMORY_BUDGET`` and :func:`jaxcfr.solve`;
a budget above it lowers the same game.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import jaxcfr
from jaxcfr.engine.loop import lower_public_reporting
from jaxcfr.lowering.budget import MemoryBudgetError
from jaxcfr.lowering.public import _tensor_bytes, public_footprint
from jaxcfr.runs.progress import Status

LEDUC = "leduc_poker(ranks=4, tree='public')"
SPOT = "holdem_spot(board='QhJd8c5s3h', ranges=('AA,AKs:0.5,72o', 'KK,QQ:0.5'))"


@pytest.mark.parametrize("game, terminals", [
    (LEDUC, "dense"), ("liars_dice(sides=3, tree='public')", "dense"),
    (SPOT, "ranked"), (SPOT, "dense"), ("kuhn_poker(tree='public')", "dense")])
def test_footprint_counts_the_tensors(game, terminals):
    lowered = jaxcfr.lower_public(jaxcfr.load_game(game), terminals=terminals)
    size = lowered.public_size
    assert size.rows == lowered.num_rows
    assert lowered.nbytes <= _tensor_bytes(size, 8) <= 1.1 * lowered.nbytes
    foot = public_footprint(size)
    assert foot.total == foot.lowering + foot.device
    assert foot.lowered >= lowered.nbytes


def test_device_part_bounds_the_compiled_step():
    lowered = jaxcfr.lower_public(jaxcfr.load_game(LEDUC))
    runner = jaxcfr.Runner(lowered, jaxcfr.cfr_plus())
    state, _ = runner.compile(runner.init())
    with runner.scope():
        m = runner.chunk_program(state).compile().memory_analysis()
    used = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
    foot = public_footprint(lowered.public_size, float_bytes=4)
    assert used <= foot.device - (256 << 20)


def _refusal(game, budget):
    with pytest.raises(MemoryBudgetError) as e:
        jaxcfr.lower_public(jaxcfr.load_game(game), memory_budget=budget)
    assert e.value.rule == "memory-budget"
    return str(e.value)


def test_a_budget_refuses_during_the_walk_or_at_its_end():
    game = jaxcfr.load_game(LEDUC)
    need = public_footprint(jaxcfr.lower_public(game).public_size).total
    walked = []
    with pytest.raises(MemoryBudgetError) as e:
        jaxcfr.lower_public(game, memory_budget=1 << 20, progress=walked.append)
    message = str(e.value)
    assert walked == []                      # refused after the root's level, not after all
    for part in ("1 public nodes", "8 hands", "met so far", "1.0 MiB",
                 "memory_budget=", "JAXCFR_MEMORY_BUDGET"):
        assert part in message, (part, message)
    # just under the game's need: the walk goes on to the end, then refuses it whole
    message = _refusal(LEDUC, need - 1)
    assert "in all" in message and f"{jaxcfr.lower_public(game).num_nodes:,} public" in message
    assert jaxcfr.lower_public(game, memory_budget=need).num_nodes > 1


def test_environment_budget_refuses_a_solve(monkeypatch):
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "1e6")
    with pytest.raises(MemoryBudgetError, match="over the memory budget of 976.6 KiB"):
        jaxcfr.solve("kuhn_poker(tree='public')", "cfr+", 2)
    monkeypatch.setenv("JAXCFR_MEMORY_BUDGET", "1e12")
    result = jaxcfr.solve("kuhn_poker(tree='public')", "cfr+", 2)
    assert result.lowered.num_nodes == 9 and np.isfinite(result.final["exploitability"])


def test_status_line_while_lowering():
    out = io.StringIO()
    lowered = lower_public_reporting(jaxcfr.load_game(LEDUC), Status(out, tty=False),
                                     name="leduc4")
    lines = out.getvalue().splitlines()
    assert lines[0] == "lowering leduc4 (public tree) ..."
    assert lines[-1].startswith(f"lowered leduc4: {lowered.num_nodes:,} public nodes, 8+8 "
                                f"hands, {sum(lowered.rows_per_player):,} rows (")
    # a lowered game is returned as it is, without a word
    out2 = io.StringIO()
    assert lower_public_reporting(lowered, Status(out2, tty=False)) is lowered
    assert out2.getvalue() == ""
