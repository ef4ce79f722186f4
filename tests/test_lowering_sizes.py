"""The size refusal counts information-set rows, and indices widen past 2^31 (issue 32 item 3).

The wide index is checked at the index layer on a tiny tree with a huge action count
(``rows * A`` past 2^31 without allocating it); the row count on a real walk.
"""

import numpy as np
import pytest

import jaxcfr
from jaxcfr.lowering import lower as L
from jaxcfr.lowering.budget import MemoryBudgetError, footprint_bytes
from jaxcfr.tensors import CHANCE_NODE, DECISION, NO_PARENT, TERMINAL_NODE


def test_edge_index_dtype_widens_exactly_past_int32():
    assert L.edge_index_dtype(2, 2 ** 30 - 1) == np.int32
    assert L.edge_index_dtype(2, 2 ** 30) == np.int64
    assert L.edge_index_dtype(150_000_000, 14) == np.int32
    assert L.edge_index_dtype(160_000_000, 14) == np.int64


def test_edge_columns_past_two_to_the_31_row_slots():
    # root (decision, row 2) -> chance node (slot 1) -> terminal; root -> decision (row 1,
    # slot 0) -> terminal (slot A - 1); rows 0..2 and the sink 3, A = 2^30: 2^32 slots.
    a = 2 ** 30
    parent = np.array([NO_PARENT, 0, 0, 1, 2], np.int32)
    slot = np.array([0, 1, 0, 0, a - 1], np.int32)
    kind = np.array([DECISION, CHANCE_NODE, DECISION, TERMINAL_NODE, TERMINAL_NODE], np.int8)
    player = np.array([0, 2, 1, -1, -1], np.int32)
    infoset = np.array([2, 3, 1, 3, 3], np.int32)
    owner, index = L.edge_columns(parent, slot, kind, player, infoset, 2, a, 3)
    assert index.dtype == np.int64
    assert index.tolist() == [3 * a, 2 * a + 1, 2 * a, 3 * a, 1 * a + a - 1]
    assert owner.tolist() == [2, 0, 0, 2, 1]


def test_wide_indices_need_jax_x64_and_say_so():
    import jax
    if jax.config.read("jax_enable_x64"):
        pytest.skip("x64 is on here: the wide index is accepted")
    with pytest.raises(MemoryBudgetError, match=r"JAX_ENABLE_X64=1") as info:
        L._check_index_width(160_000_000, 14)
    assert "160,000,000 information-set rows x 14 actions" in str(info.value)
    L._check_index_width(150_000_000, 14)            # int32 still fits: no error


def test_walk_refuses_once_rows_push_the_known_size_over_the_budget():
    counted = jaxcfr.load_game("liars_dice(sides=5)")

    class Uncounted(type(counted)):       # its rows unknown before the walk
        def infoset_count(self):
            return None

    game = Uncounted(sides=5)
    full = jaxcfr.lower(game, workers=1)
    n, rows, a = full.num_nodes, full.num_rows, full.max_actions
    # the nodes alone fit; the nodes with all their rows do not
    budget = (footprint_bytes(n, 1, a, 2) + footprint_bytes(n, rows, a, 2)) // 2
    walked = []
    with pytest.raises(MemoryBudgetError) as info:
        jaxcfr.lower(game, workers=1, memory_budget=budget, progress=walked.append)
    message = str(info.value)
    assert f"{n:,} nodes" in message and "(the size estimate) and the rows found so far" \
        in message and "JAXCFR_MEMORY_BUDGET" in message
    # refused early in the walk (the old check, nodes so far, refused only after it)
    assert max(walked, default=0) <= n // 4
    # the game that counts its rows is refused before the walk
    walked.clear()
    with pytest.raises(MemoryBudgetError, match=f"{n:,} nodes and {rows - 1:,} information "
                       "sets, which needs about"):
        jaxcfr.lower(counted, workers=1, memory_budget=budget, progress=walked.append)
    assert walked == []
